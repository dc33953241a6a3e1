"""Emulation mode with real kernel TCP (docs/emulation.md): accuracy, semantics, safety.

These tests run the real emulator (``tcplab-emu``): network namespaces, TUN devices and
the host's kernel TCP. They need root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), /dev/net/tun
and iproute2; elsewhere each skips with the reason. Every run is seconds of real time;
the whole file stays well under the 2-minute budget (about 40 s here).

Tolerances and why:
- reno goodput: within 3% of the capacity the model allows, 10 Mbit/s x 1460/1500 (the
  payload share of a 1500-byte packet): the queue (100 packets) is larger than the BDP
  (25 packets) so the link never idles after slow start, which costs well under 1% of 6 s;
- first flight and drop-tail patterns: exact counts (they are decided by the models and
  the kernel's initcwnd, not by timing: the burst lasts 0.2 ms against 80 ms of
  serialization per packet);
- scheduling error: the measurement must be complete and ordered; its size is bounded
  loosely (p99 < 2 ms) because the machine is shared; the stall hook proves a late
  emulator is measured and flagged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from tcplab.cli import main
from tcplab.emulation import EmulationRefused, emulate, emulator_path
from tcplab.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]


def _why_not() -> str | None:
    if not sys.platform.startswith("linux"):
        return "emulation needs Linux"
    status = Path("/proc/self/status").read_text()
    caps = int(next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), 16)
    if not caps & (1 << 12) or not caps & (1 << 21):
        return "emulation needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run as root)"
    if not os.path.exists("/dev/net/tun"):
        return "emulation needs /dev/net/tun"
    if shutil.which("ip") is None:
        return "emulation needs iproute2's ip"
    cc = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if "reno" not in cc:
        return "the kernel offers no reno congestion control"
    return None


REASON = _why_not()
needs_kernel = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def dumbbell(rate: str, delay: str, queue: str, flows: str, *, pairs: int = 1, duration: str | None = "6s",
             extra: str = "") -> Scenario:
    dur = f'duration = "{duration}"\n' if duration else ""
    return Scenario.from_toml(f"""
name = "emu-test"
{dur}{extra}
[topology]
kind = "dumbbell"
pairs = {pairs}
bottleneck = {{ rate = "{rate}", delay = "{delay}", queue = {queue} }}
sender_access = {{ rate = "100Mbps", delay = "1ms" }}
receiver_access = {{ rate = "100Mbps", delay = "1ms" }}
{flows}
""")


def ours() -> set[str]:
    """The emulator's namespaces on this machine (any owner)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tcplab-")}


def of_pid(pid: int) -> set[str]:
    return {n for n in ours() if n.startswith(f"tcplab-{pid}-")}


@needs_kernel
def test_the_binary_is_built() -> None:
    assert emulator_path().is_file()


@needs_kernel
def test_reno_bulk_goodput_is_within_3_percent_of_the_model_capacity() -> None:
    sc = dumbbell("10Mbps", "10ms", '{ kind = "drop_tail", limit = "100pkt" }',
                  '[cc]\nname = "reno"\n[[flows]]\nname = "bulk"')
    r = emulate(sc, seed=1, quiet=True, trace=["drops"])
    capacity = 10e6 * 1460 / 1500
    goodput = float(r.flows.loc[0, "goodput_bps"])
    assert abs(goodput - capacity) / capacity < 0.03, (goodput, capacity, r.meta["emulation"])
    e = r.meta["emulation"]
    # Every packet the models saw was wire-sized: nothing merged segments.
    assert e["oversize_pkts"] == 0 and e["unroutable_pkts"] == 0
    assert r.queues.loc[r.queues["link"] == "bottleneck", "drops_overflow"].item() >= 0
    # A dropped segment's seq is read from its header less the ISN: every drop is a
    # data segment inside what was delivered, and the first overflow burst drops whole
    # segments of the kernel's MSS (1448: its default timestamps take 12 bytes of 1460)
    # apart (the slow-start burst overflows every other segment or so).
    seq = r.series["drops"]["seq"]
    assert seq.notna().all() and (seq >= 1).all() and (seq <= r.flows.loc[0, "bytes_delivered"]).all(), seq.tolist()
    gaps = seq.head(10).diff().dropna().astype(int)
    assert len(gaps) and ((gaps > 0) & (gaps % 1448 == 0)).all(), seq.head(10).tolist()
    assert not of_pid(int(e["namespaces"][0].split("-")[1]))


@needs_kernel
def test_goodput_series_comes_from_the_sinks_reads() -> None:
    """`[record] throughput_interval` in emulate mode: the sink bins the bytes its
    application reads on the simulator's grid. A reno bulk flow on 10 Mbit/s saturates
    the link once slow start's overshoot is recovered (the first 1.5 s: when the hole
    is filled, the data queued behind it is read at once, above the ceiling). From
    then on the median 500 ms interval lies within 1% of 10e6 x 1460/1500 (a read
    landing a few ms either side of a boundary moves about 1% of an interval) and the
    mean within 3% (as the reno test above; a later loss's recovery moves single
    intervals). The intervals sum to the bytes read, at most the kernel's in-order
    count (`bytes_delivered`, which includes bytes still in the socket at the end)."""
    sc = dumbbell("10Mbps", "10ms", '{ kind = "drop_tail", limit = "100pkt" }',
                  '[cc]\nname = "reno"\n[[flows]]\nname = "bulk"\n[record]\nthroughput_interval = "500ms"',
                  duration="4s")
    r = emulate(sc, seed=1, quiet=True)
    tp = r.series["throughput"]
    capacity = 10e6 * 1460 / 1500
    assert list(tp["t_s"]) == pytest.approx([0.5 * (i + 1) for i in range(8)]) and set(tp["flow"]) == {"bulk"}
    steady = tp["goodput_bps"].iloc[3:]
    assert abs(steady.median() - capacity) / capacity < 0.01, list(tp["goodput_bps"])
    assert abs(steady.mean() - capacity) / capacity < 0.03, list(tp["goodput_bps"])
    delivered = int(r.flows.loc[0, "bytes_delivered"])
    assert 0.98 * delivered <= tp["bytes"].sum() <= delivered


def test_the_packet_trace_is_refused_in_emulate_mode_before_anything_starts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    try:
        emulator_path()
    except FileNotFoundError:
        pytest.skip("tcplab-emu is not built")
    text = (ROOT / "examples" / "fidelity" / "reno.toml").read_text().replace("[record]", '[record]\npackets = ["*"]')
    f = tmp_path / "traced.toml"
    f.write_text(text)
    before = ours() if REASON is None else set()
    assert main(["emulate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "record.packets" in err and "not recorded in emulate mode" in err and "accepted: []" in err
    with pytest.raises(EmulationRefused, match="record.packets"):
        emulate(f, quiet=True)
    if REASON is None:
        assert ours() == before


@needs_kernel
def test_first_flight_is_the_route_initcwnd() -> None:
    flows = """
[[flows]]
name = "iw3"
src = "s0"
dst = "d0"
bytes = "100kB"
tcp = { iw = 3 }
[[flows]]
name = "iw10"
src = "s1"
dst = "d1"
bytes = "100kB"
tcp = { iw = 10 }
"""
    sc = dumbbell("10Mbps", "20ms", '{ kind = "drop_tail", limit = "100pkt" }', flows, pairs=2, duration=None,
                  extra='max_duration = "20s"')
    r = emulate(sc, seed=1, quiet=True)
    got = dict(zip(r.flows["name"], r.flows["first_flight_pkts"]))
    assert got == {"iw3": 3, "iw10": 10}
    assert r.flows["completed_s"].notna().all()
    assert (r.flows["bytes_delivered"] == 100_000).all()


@needs_kernel
@pytest.mark.parametrize("semantics,limit,delivered", [("slot", "5pkt", 6), ("byte_strict", "5000B", 5),
                                                      ("byte_loose", "5000B", 7)])
def test_drop_tail_semantics_on_a_crafted_burst(semantics: str, limit: str, delivered: int) -> None:
    # 20 datagrams of 1000 B, 10 us apart (a burst of 0.2 ms), into a 100 kbit/s link
    # (80 ms per packet). The first goes straight into service; then
    # slot 5 pkt: 5 wait (occupancy >= 5 drops)                       -> 6 delivered;
    # byte_strict 5000 B: 4 wait (4000 + 1000 >= 5000 drops the 5th)   -> 5;
    # byte_loose 5000 B: 6 wait (5000 > 5000 is false, 6000 > 5000 is) -> 7.
    # The simulator must agree, packet for packet.
    queue = f'{{ kind = "drop_tail", limit = "{limit}", semantics = "{semantics}" }}'
    flows = """
[[flows]]
kind = "udp"
name = "burst"
packet_size = "1000B"
interval = { dist = "constant", mean = "10us" }
stop = "199us"
"""
    sc = dumbbell("100kbps", "5ms", queue, flows, duration="1s")
    r = emulate(sc, seed=1, quiet=True, trace=["drops"])
    udp = r.udp.iloc[0]
    assert udp["pkts_sent"] == 20
    assert udp["pkts_delivered"] == delivered
    q = r.queues.set_index("link").loc["bottleneck"]
    assert q["drops_overflow"] == 20 - delivered
    from tcplab import run

    s = run(sc, seed=1, trace=["drops"])
    assert s.udp.loc[0, "pkts_delivered"] == delivered
    assert s.queues.set_index("link").loc["bottleneck", "drops_overflow"] == 20 - delivered
    # The drops name the datagrams: the last 20 - delivered, read from their payload in
    # emulate mode, from the simulator's own numbering in the simulator.
    lost = list(range(delivered, 20))
    assert r.series["drops"]["seq"].tolist() == lost == s.series["drops"]["seq"].tolist()


BULK_20M = ('{ kind = "drop_tail", limit = "100pkt" }', '[cc]\nname = "cubic"\n[[flows]]\nname = "bulk"')


@needs_kernel
def test_the_scheduling_error_is_measured_and_a_late_run_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    sc = dumbbell("20Mbps", "10ms", *BULK_20M, duration="3s")
    # A run on a loaded machine (other builds or emulations on its 2 cores; seen at load
    # averages from 1.4 to 5) can fall behind. Whatever the load, the flag must say so
    # exactly when the 99th percentile exceeds the late bound; the clean-run bound is
    # checked on the first of up to three runs that kept time.
    clean = None
    for _ in range(3):
        r = emulate(sc, seed=1, quiet=True)
        e = r.meta["emulation"]
        s = e["sched_error"]
        # One measurement per packet handed to a host.
        assert s["count"] == e["packets_out"] + e["host_drops"] > 3000
        assert 0 <= s["p50_s"] <= s["p99_s"] <= s["max_s"]
        assert e["behind"] == (s["p99_s"] > s["late_bound_s"]) == bool(r.flows["emu_behind"].all())
        assert r.flows["emu_behind"].nunique() == 1
        if not e["behind"]:
            clean = r
            break
    if clean is None:
        # On an idle machine three late runs are a fault, not load.
        assert float(str(e["loadavg"]).split()[0]) >= 1.0, (s, e["loadavg"])
        warnings.warn(f"three emulations fell behind (load {e['loadavg']}); the clean-run bound was not checked")
    else:
        e = clean.meta["emulation"]
        assert e["sched_error"]["p99_s"] < 2e-3, (e["sched_error"], e["loadavg"])
    # Stall the packet loop for 300 ms after 1 s, as a descheduled emulator would be.
    # The saturated bottleneck finishes a packet every 0.6 ms (1500 B at 20 Mbit/s), so
    # one falls due within 0.6 ms of the stall's start and leaves >= 299.4 ms late; the
    # ~500 due during the stall are all late, far more than 1% of ~5000.
    late = emulate(sc, seed=1, quiet=True, late_bound="100us", extra_args=["--stall-at-ms", "1000", "--stall-for-ms", "300"])
    le = late.meta["emulation"]
    assert le["sched_error"]["max_s"] >= 0.3 - 0.0006
    assert le["behind"] and late.flows["emu_behind"].all() and late.links["emu_behind"].all()
    from tcplab.cli import _print_emulation

    _print_emulation(late.meta)
    assert "WARNING: the emulator fell behind" in capsys.readouterr().err


def _start_binary(tmp: Path, duration: str = "30s") -> subprocess.Popen[bytes]:
    sc = dumbbell("10Mbps", "10ms", *BULK_20M, duration=duration)
    path = tmp / "scenario.json"
    path.write_text(json.dumps(sc.to_core(0)))
    return subprocess.Popen([str(emulator_path()), "run", "--scenario", str(path), "--out", str(tmp / "out.json")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for_namespaces(pid: int, n: int = 2, timeout: float = 10.0) -> set[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        names = of_pid(pid)
        if len(names) >= n:
            return names
        time.sleep(0.05)
    raise AssertionError(f"the emulator (pid {pid}) did not create its namespaces")


@needs_kernel
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_clean_up(tmp_path: Path, sig: signal.Signals) -> None:
    proc = _start_binary(tmp_path)
    try:
        _wait_for_namespaces(proc.pid)
        time.sleep(0.5)  # traffic is flowing
        proc.send_signal(sig)
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + sig, proc.stderr.read().decode() if proc.stderr else ""
    assert not of_pid(proc.pid)


@needs_kernel
def test_sigterm_to_tcplab_emulate_is_passed_on_and_cleaned_up(tmp_path: Path) -> None:
    toml = tmp_path / "long.toml"
    toml.write_text((ROOT / "examples" / "fidelity" / "reno.toml").read_text())
    proc = subprocess.Popen([sys.executable, "-m", "tcplab.cli", "emulate", str(toml)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 30
        names: set[str] = set()
        while time.monotonic() < end and len(names) < 2:
            names = {n for n in ours() if n.split("-")[1].isdigit() and _parent(int(n.split("-")[1])) == proc.pid}
            time.sleep(0.05)
        assert len(names) == 2, "tcplab emulate did not start the emulator"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 128 + signal.SIGTERM, err
    assert "removed its namespaces" in err
    assert not names & ours()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


@needs_kernel
def test_after_sigkill_the_next_run_reclaims_the_stale_namespaces(tmp_path: Path) -> None:
    proc = _start_binary(tmp_path)
    try:
        stale = _wait_for_namespaces(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert of_pid(proc.pid) == stale  # SIGKILL leaves them behind...
    sc = dumbbell("10Mbps", "10ms", *BULK_20M, duration="1s")
    r = emulate(sc, seed=0, quiet=True)
    assert not of_pid(proc.pid)  # ...and the next run removes them
    assert stale <= set(r.meta["emulation"]["reclaimed_stale"])


@needs_kernel
def test_two_emulations_at_once_do_not_collide(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _start_binary(tmp_path / "a", duration="3s")
    b = _start_binary(tmp_path / "b", duration="3s")
    assert a.wait(timeout=30) == 0 and b.wait(timeout=30) == 0
    for p, d in ((a, tmp_path / "a"), (b, tmp_path / "b")):
        doc = json.loads((d / "out.json").read_text())
        assert doc["flows"]["goodput_bps"][0] > 5e6  # both got their own 10 Mbit/s link
        assert not of_pid(p.pid)


@needs_kernel
def test_without_privileges_exit_2_says_what_is_missing_and_leaves_nothing() -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to drop privileges")
    sc = dumbbell("10Mbps", "10ms", *BULK_20M, duration="1s")
    before = ours()
    binary = emulator_path()
    # As user nobody with no capabilities; the scenario comes on stdin.
    proc = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                           "--bounding-set=-all", str(binary), "run", "--scenario", "-"],
                          input=json.dumps(sc.to_core(0)), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "CAP_NET_ADMIN" in proc.stderr and "CAP_SYS_ADMIN" in proc.stderr
    assert "nothing was created" in proc.stderr
    assert ours() == before


def test_a_scenario_the_kernel_cannot_run_is_refused_before_anything_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = ROOT / "examples" / "fidelity" / "reno.toml"
    text = toml.read_text().replace('name = "reno"', 'name = "compound"')
    bad = tmp_path / "compound.toml"
    bad.write_text(text)
    before = ours() if REASON is None else set()
    try:
        emulator_path()
    except FileNotFoundError:
        pytest.skip("tcplab-emu is not built")
    assert main(["emulate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "cc 'compound' is not offered by this kernel" in err and "tcp_available_congestion_control" in err
    ns2 = tmp_path / "ns2.toml"
    ns2.write_text(toml.read_text().replace("[cc]", '[tcp]\nprofile = "ns2-sack"\n\n[cc]'))
    assert main(["emulate", str(ns2)]) == 2
    err = capsys.readouterr().err
    assert "tcp.initial_rto = 3s" in err and "tcp.limited_transmit = false" in err
    with pytest.raises(EmulationRefused, match="compound"):
        emulate(bad, quiet=True)
    if REASON is None:
        assert ours() == before


def test_list_shows_the_kernels_congestion_controls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    reg = json.loads(capsys.readouterr().out)
    offered = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    rows = {r["name"]: r["in this kernel"] for r in reg["kernel_congestion_controls"]}
    assert {n for n, v in rows.items() if v == "yes"} == set(offered)
    assert rows.get("compound") == "no"  # a simulator-only algorithm


@needs_kernel
def test_fidelity_writes_the_table_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "examples" / "fidelity" / "reno.toml").read_text().replace('duration = "30s"', 'duration = "3s"')
    sc = tmp_path / "reno3s.toml"
    sc.write_text(text)
    out = tmp_path / "fid"
    assert main(["fidelity", str(sc), "--reps", "1", "--out", str(out)]) == 0
    import pandas as pd

    t = pd.read_parquet(out / "fidelity.parquet")
    row = t[(t["metric"] == "goodput_bps")].iloc[0]
    # Both sides fill the 10 Mbit/s link within 3 s: the relative error is small.
    assert abs(row["rel_error"]) < 0.05, t.to_string()
    assert {"occ_mean_pkts", "drops", "cwnd_mean_bytes", "loss_episodes"} <= set(t["metric"])
    html = (out / "report.html").read_text()
    assert "Simulator against the kernel" in html and "cwnd_0.png" in html and "queue_bottleneck.png" in html
    assert (out / "runs" / "kernel-0" / "flows.parquet").is_file() and (out / "runs" / "sim-0" / "flows.parquet").is_file()
    assert "report written to" in capsys.readouterr().out


@needs_kernel
def test_fidelity_grid_runs_the_kernel_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The loss grid's 1% point, 2 s, reno, 2 runs per side (docs/validation.md).
    d = tmp_path / "grid"
    d.mkdir()
    src = ROOT / "examples" / "fidelity" / "loss-grid" / "loss1.toml"
    (d / "loss1.toml").write_text(src.read_text().replace('duration = "20s"', 'duration = "2s"'))
    (d / "grid.toml").write_text('name = "t"\nscenarios = ["loss1.toml"]\nccs = ["reno"]\nreps = 2\n')
    out = tmp_path / "out"
    assert main(["fidelity", str(d), "--out", str(out)]) == 0
    import pandas as pd

    t = pd.read_parquet(out / "grid.parquet")
    g = t[t["metric"] == "goodput_bps"].iloc[0]
    # 2 s at 1% loss: a few losses each; both sides are Mathis-limited near 3-5 Mbit/s.
    assert 1e6 < g["kernel"] < 10e6 and abs(g["rel_error"]) < 0.5, t.to_string()
    assert (out / "kernel" / "loss1-reno" / "rep-1" / "meta.json").is_file()
    # Re-running resumes: no kernel run is repeated.
    capsys.readouterr()
    assert main(["fidelity", str(d), "--out", str(out)]) == 0
    import json

    assert json.loads((out / "grid.json").read_text())["meta"]["kernel_runs_this_call"] == 0


RPC_FLOWS = """
[[flows]]
kind = "rpc"
name = "web"
server = "s0"
client = "d0"
request = "300B"
response = "15kB"
arrivals = { process = "periodic", interval = "250ms" }
stop = "2s"
tcp = { iw = 3 }
[[flows]]
kind = "rpc"
name = "burst"
server = "s1"
client = "d1"
request = "200B"
response = "15kB"
arrivals = { process = "poisson", rate = 2.0 }
batch = 2
stop = "2s"
"""


@needs_kernel
def test_rpc_transactions_follow_the_simulators_schedule_and_windows() -> None:
    # Two applications on their own pairs: periodic IW3 and Poisson IW10 (the linux
    # profile's) opening 2 connections per arrival. The schedule is drawn with the
    # simulator's own generators, so ids, batches and sizes are equal; start times
    # differ only by the client's wake-up error (see below; UCT is measured from
    # the actual connect, so a late start does not bias it). The first flight is the route's initcwnd, exactly: 15 kB is 11
    # segments, so IW3 sends 3 and IW10 sends 10 (Linux 6.18 has no FIN exception: the
    # scenario's fin_ignores_cwnd = false is native). Completion: the periodic
    # transactions meet an empty network (handshake, request, 3 + 6 + 2 segments over
    # ~2 RTTs of 44 ms); the kernel's UCT is within 5% of the simulator's (measured
    # 1.2-1.9%: 182.0-183.5 ms against 180.0 ms). The web pair shares the bottleneck
    # with the burst pair, so a web transaction's UCT depends on where the bursts fall
    # (201 ms instead of 180 ms where one overlaps). A client that wakes late on a
    # loaded machine moves a burst in or out of a web transaction (a one-off 210 ms
    # against 180 ms in CI): those transactions are not the same experiment and are
    # left out of the comparison. Of the others, the median and three in four must
    # agree: the client and server threads run at normal priority, so a loaded host
    # also delays single responses (+12 ms with 5 busy loops on 2 cores, none late).
    import numpy as np

    from tcplab import run

    sc = dumbbell("10Mbps", "20ms", '{ kind = "drop_tail", limit = "50pkt" }', RPC_FLOWS, pairs=2, duration="3s")
    s = run(sc, seed=4)
    m = s.transactions
    # The timing bound is checked on the first of up to three runs that keeps it (as the
    # scheduling-error test does). In CI at load average 1.1-1.5 a run's web UCTs were
    # 1.9-6.6 % off, three of eight above 5 % (responses delayed by 10-12 ms, the
    # threads' wake-ups): load, not the model. If no run keeps it, the host must be
    # loaded and the median must still be within 10 %: one extra round trip (a wrong
    # window, a connect waiting for the previous transaction) is +24 % or more.
    for _ in range(3):
        r = emulate(sc, seed=4, quiet=True)
        e = r.transactions
        assert len(e) == len(m) >= 10
        for col in ("txn_id", "app", "batch", "request_bytes", "response_bytes"):
            assert (e[col].to_numpy() == m[col].to_numpy()).all(), col
        assert (e["scheduled_s"] - m["start_s"]).abs().max() < 1e-9
        # Never early (a connect waits for its time); late only by the client's wake-up
        # error. Typically < 0.1 ms; a loaded machine stretches single ones (28.8 ms while
        # cargo built on both cores; 169 ms for 3 of 18 at load average 5). The median
        # catches a systematic delay (a connect waiting for the previous transaction would
        # be ~1 UCT, 180 ms, late); the max only a wedged client.
        late = e["start_s"] - m["start_s"]
        assert (late >= 0).all() and late.median() < 2e-3 and late.max() < 1.0, late.to_numpy()
        assert (e["state"] == "closed").all() and (e["bytes_delivered"] == e["response_bytes"]).all()
        ff = dict(zip(e["app"], e["first_flight_pkts"]))
        assert ff == {"web": 3, "burst": 10}, e[["app", "first_flight_pkts"]]
        web_e = e[e["app"] == "web"]
        web_s = m[m["app"] == "web"]
        uct_e = (web_e["completed_s"] - web_e["start_s"]).to_numpy()
        uct_s = (web_s["completed_s"] - web_s["start_s"]).to_numpy()
        spans = [(min(a0, b0), max(a1, b1)) for a0, a1, b0, b1 in
                 zip(e["start_s"], e["completed_s"], m["start_s"], m["completed_s"])]
        moved = [(lo, hi) for (lo, hi), d in zip(spans, late) if d > 1e-3]
        web = (e["app"] == "web").to_numpy()
        same = np.array([not any(lo < mhi and mlo < hi for mlo, mhi in moved)
                         for (lo, hi), w in zip(spans, web) if w])
        assert same.sum() >= 4, (late.to_numpy(), same)
        rel = abs(uct_e - uct_s) / uct_s
        if np.median(rel[same]) < 0.05 and (rel[same] < 0.05).mean() >= 0.75:
            break
    else:
        load = r.meta["emulation"]["loadavg"]
        # On an idle machine three runs outside the bound are a fault, not load.
        assert float(str(load).split()[0]) >= 1.0, (uct_e, uct_s, same, load)
        assert np.median(rel[same]) < 0.10, (uct_e, uct_s, same, load)
        warnings.warn(f"three RPC emulations outside the 5 % UCT bound (load {load}); the median was within 10 %")
    assert not of_pid(int(r.meta["emulation"]["namespaces"][0].split("-")[1]))


@needs_kernel
def test_home_gateway_emulate_mode_puts_sim_and_kernel_side_by_side(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # One PS queue, both TCPs, 5 s per run (10 s of real time). The voice departures are
    # drawn from the same seed on every engine, so the kernel's voice counts equal the
    # simulator's exactly; the report names this host's kernel.
    out = tmp_path / "hg"
    code = main(["study", "home-gateway", "--mode", "emulate", "--out", str(out), "--no-progress",
                 "--set", "duration_s=5", "--set", "ps_limits=13", "--set", "fb_limits="])
    assert code in (0, 1), capsys.readouterr().err  # 1: a check not held (agreement is measured, not assumed)
    import pandas as pd

    from tcplab.studies import findings as F

    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["engine"].unique()) == ["kernel", "seed-sim", "sim"] and len(runs) == 6
    by = runs.set_index(["cc", "engine"])
    for cc in ("newreno", "cubic"):
        assert by.loc[(cc, "kernel"), "voice_sent"] == by.loc[(cc, "sim"), "voice_sent"] >= 190  # 4 s at 20 ms
        assert by.loc[(cc, "kernel"), "goodput_bps"] > 0.5e6  # the 1.5 Mbit/s line carried the bulk flow
    comp = pd.read_parquet(out / "comparison.parquet")
    assert {"goodput_bps", "voice_loss", "iowd_mean_s"} <= set(comp["metric"])
    assert len(comp) == 2 * 7  # one row per TCP and metric: only configurations that ran
    F.validate(json.loads((out / "findings.json").read_text()))
    html = (out / "report.html").read_text()
    release = Path("/proc/sys/kernel/osrelease").read_text().strip()
    assert "Simulation and real Linux, side by side" in html and f"Linux {release}" in html
    assert not {n for n in ours() if n.split("-")[1].isdigit() and int(n.split("-")[1]) == os.getpid()}


@needs_kernel
def test_iw_testbed_emulate_mode_counts_the_same_transactions(tmp_path: Path) -> None:
    # One 20 Mbit/s configuration (IW10, 5 opens, no background) with a 2 s window: 12 s
    # of real time. Transactions are drawn by the simulator's generators and counted by
    # their scheduled start, so every engine counts the same ones.
    from tcplab.studies.iw_testbed import emulate as M

    p = M.EmulateParams(links=["20m"], iw=["iw10"], opens=[5], bg=[False], measure_20m_s=2.0)
    res = M.run(tmp_path / "iwt", p, progress=False)
    runs = res.tables["runs"].set_index("engine")
    assert runs.loc["kernel", "n_txn"] == runs.loc["sim", "n_txn"] == runs.loc["seed-sim", "n_txn"] > 100
    assert runs.loc["kernel", "n_finished"] >= 0.95 * runs.loc["kernel", "n_txn"]
    html = (tmp_path / "iwt" / "report.html").read_text()
    assert "tcp.initial_rto 3s -&gt; 1s" in html and "uct_cdf.png" in html and "sim_vs_kernel.png" in html


def test_emulate_mode_is_refused_for_a_study_without_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "iw-irto", "--mode", "emulate", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "study iw-irto has no emulate mode" in err and "home-gateway, iw-testbed" in err
    assert main(["study", "home-gateway", "--mode", "emulate", "--set", "fine_reps=2", "--out", str(tmp_path / "y")]) == 2
    assert "ps_limits" in capsys.readouterr().err  # emulate mode takes its own parameters


STUDY_FILE = """
name = "tiny-emu"
question = "Does CUBIC get more goodput than Reno on a 10 Mbit/s path with 1 % loss?"
reps = 2

[scenario]
duration = "2s"

[scenario.topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "drop_tail", limit = "50pkt" }, error = { kind = "bernoulli", per = 0.01 } }
sender_access = { rate = "100Mbps", delay = "1ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }

[scenario.tcp]
profile = "linux"

[[scenario.flows]]
name = "bulk"
cc = { name = "reno" }

[[factors]]
name = "cc"
path = "flows[0].cc.name"
values = ["reno", "cubic"]

[[metrics]]
name = "goodput"
table = "flows"
column = "goodput_bps"
aggregate = "mean"
unit = "bit/s"

[[claims]]
id = "C1"
text = "CUBIC gets more goodput than Reno."
form = "directional"
side = "above"
metric = "goodput"
compare = { factor = "cc", test = "cubic", ref = "reno", relative = true }
"""


@needs_kernel
def test_a_study_file_in_emulate_mode_judges_its_claims_on_real_linux(tmp_path: Path, capsys) -> None:
    """`tcplab study run FILE --mode emulate`: each replication on both engines with the same
    seed; the claim's statistic is the kernel's paired relative difference, not the
    simulator's; the side-by-side table holds both. 4 emulated runs of 2 s."""
    import pandas as pd

    f = tmp_path / "tiny.toml"
    f.write_text(STUDY_FILE)
    out = tmp_path / "out"
    assert main(["study", "run", str(f), "--mode", "emulate", "--no-progress", "--out", str(out)]) == 0
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs.groupby(["cc", "engine"]).size().items()) == [
        (("cubic", "kernel"), 2), (("cubic", "sim"), 2), (("reno", "kernel"), 2), (("reno", "sim"), 2)]
    kernel = runs[runs.engine == "kernel"].pivot(index="rep", columns="cc", values="goodput")
    sim = runs[runs.engine == "sim"].pivot(index="rep", columns="cc", values="goodput")
    assert (runs.loc[runs.engine == "kernel", "kernel_release"] != "").all()
    doc = json.loads((out / "findings.json").read_text())
    value = doc["findings"][0]["checks"][0]["statistic"]["value"]
    assert doc["mode"] == "emulate"
    assert value == pytest.approx(((kernel.cubic - kernel.reno) / kernel.reno).mean(), rel=1e-9)
    assert value != pytest.approx(((sim.cubic - sim.reno) / sim.reno).mean(), rel=1e-9)
    comp = pd.read_parquet(out / "comparison.parquet").set_index("cc")
    assert comp.loc["reno", "kernel"] == pytest.approx(kernel.reno.mean())
    assert comp.loc["cubic", "sim"] == pytest.approx(sim.cubic.mean())
    assert "side by side" in (out / "report.html").read_text()


@needs_kernel
def test_a_study_file_the_kernel_cannot_run_is_refused_with_its_configuration(tmp_path: Path, capsys) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(STUDY_FILE.replace('values = ["reno", "cubic"]', 'values = ["reno", "cubic", "scalable"]'))
    out = tmp_path / "out"
    assert main(["study", "run", str(f), "--mode", "emulate", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "configuration cc=scalable: --mode emulate: this kernel cannot run it" in err and "cc=cubic" not in err
    assert not out.exists()
    assert main(["study", "run", str(f), "--mode", "emulate", "--jobs", "2", "--out", str(out)]) == 2
