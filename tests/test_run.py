"""tcplab.run and `tcplab run` on the real simulator: tables, determinism, files, examples."""

import json
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab.cli import main
from tcplab.results import COLUMNS, RunResult
from tcplab.scenario import EXAMPLE_TOML, Scenario
from tcplab.sweeps import load_experiment

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"



def test_run_returns_documented_tables() -> None:
    r = tcplab.run(Scenario.from_toml(EXAMPLE_TOML), seed=1, trace=["cwnd", "queue", "owd"])
    for table in ("flows", "udp", "transactions", "queues", "links"):
        df = getattr(r, table)
        assert list(df.columns[: len(COLUMNS[table])]) == list(COLUMNS[table]), table
    flow = r.flows.iloc[0]
    # 180 kB over 2 Mbit/s needs at least 180e3*8/2e6 = 0.72 s of serialisation.
    assert flow["bytes_delivered"] == 180_000 and flow["elapsed_s"] > 0.72
    assert flow["elapsed_s"] == pytest.approx(flow["completed_s"] - flow["start_s"])
    assert set(r.series) >= {"cwnd", "queue", "owd"}
    assert set(r.series["queue"]["link"]) <= set(r.links["link"])
    assert set(r.series["cwnd"]["state"]) <= {"open", "recovery", "loss"}
    assert r.meta["seed"] == 1 and r.meta["digest"]


GOODPUT = """\
name = "goodput"
duration = "2s"

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "drop_tail", limit = "10pkt" } }
sender_access = { rate = "1Gbps", delay = "1ms" }
receiver_access = { rate = "1Gbps", delay = "0ms" }

[tcp]
profile = "linux"

[[flows]]
name = "bulk"

[[flows]]
name = "short"
bytes = "50kB"
start = "500ms"

[record]
throughput_interval = "100ms"
packets = ["bulk"]
"""


def test_goodput_and_packet_series_are_tables_and_parquet_files(tmp_path: Path, capsys) -> None:
    """`[record] throughput_interval` and `packets` come back as ``series["throughput"]``
    and ``series["packets"]`` with their documented columns, and `tcplab run --out`
    writes them as Parquet that reads back equal."""
    f = tmp_path / "goodput.toml"
    f.write_text(GOODPUT)
    assert main(["run", str(f), "--seed", "1", "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    r = RunResult.read(tmp_path / "out")
    tp, pk = r.series["throughput"], r.series["packets"]
    assert list(tp.columns) == list(COLUMNS["series_throughput"])
    assert list(pk.columns) == list(COLUMNS["series_packets"])
    again = tcplab.run(f, seed=1)
    pd.testing.assert_frame_equal(again.series["packets"], pk)
    pd.testing.assert_frame_equal(again.series["throughput"], tp)
    # Every flow's intervals sum to its bytes delivered; the 2 s run has 20 intervals
    # for the bulk flow, and the short flow's rows start with its start's interval.
    for name, n in tp.groupby("flow")["bytes"].sum().items():
        assert n == int(r.flows.loc[r.flows["name"] == name, "bytes_delivered"].iloc[0]), name
    assert (tp["flow"] == "bulk").sum() == 20 and tp.loc[tp["flow"] == "short", "t_s"].min() == pytest.approx(0.6)
    assert (tp["goodput_bps"] == tp["bytes"] * 8 / tp["interval_s"]).all()
    # The trace follows only the bulk flow; its drops are the bottleneck's (10-packet
    # queue, two flows), all overflows, and at most the queue's count (the short flow
    # loses packets too); with every flow traced they are exactly that count.
    assert set(pk["flow"]) == {"bulk"} and set(pk["event"]) == {"enqueue", "transmit", "receive", "ack", "drop"}
    assert (pk["t_s"] == pk["t_ns"] * 1e-9).all() and pk["t_ns"].is_monotonic_increasing
    assert set(pk.loc[pk["event"].isin(["receive", "ack"]), "link"].isna()) == {True}
    drops = pk[pk["event"] == "drop"]
    assert set(drops["link"]) == {"bottleneck"} and set(drops["cause"]) == {"overflow"}
    assert len(drops) <= int(r.queues.loc[r.queues["link"] == "bottleneck", "drops_overflow"].iloc[0])
    everything = tcplab.run(Scenario.from_toml(GOODPUT.replace('packets = ["bulk"]', 'packets = ["*"]\ndrops = true')), seed=1)
    all_drops = everything.series["packets"].query("event == 'drop'")
    assert len(all_drops) == int(everything.queues["drops_overflow"].sum()) == everything.meta["drops"]
    # The drop series names each dropped data segment by its sequence number, as the
    # packet trace does (the ACK direction has none).
    ds = everything.series["drops"]
    assert list(ds.columns) == ["t_s", "link", "flow_id", "cause", "seq"] and len(ds) == len(all_drops) > 0
    data = all_drops["direction"] == "data"
    assert ds["seq"].isna().tolist() == (~data).tolist()
    assert ds.loc[data.to_numpy(), "seq"].tolist() == all_drops.loc[data, "seq"].tolist()


def test_a_result_shows_itself_in_a_notebook_with_units() -> None:
    text = EXAMPLE_TOML.replace("[[flows]]", '[[flows]]\nname = "web"\ncount = 2', 1)
    r = tcplab.run(Scenario.from_toml(text), seed=4)
    html_text = r._repr_html_()
    name = Scenario.from_toml(text).name
    assert f"tcplab run: {name or '(unnamed scenario)'}" in html_text and "seed 4" in html_text
    assert f"{r.meta['sim_end_s']:.6g} s simulated" in html_text
    for flow in ("web.0", "web.1"):
        assert f"<td>{flow}</td>" in html_text
    for head in ("start (s)", "elapsed (s)", "delivered (B)", "goodput (Mbit/s)"):
        assert f"<th>{head}</th>" in html_text
    # Goodput is shown in Mbit/s: the first flow's value, scaled.
    assert f"<td>{r.flows['goodput_bps'].iloc[0] / 1e6:.4g}</td>" in html_text


def test_same_seed_same_digest_other_seed_other_starts() -> None:
    sc = Scenario.from_toml(EXAMPLE_TOML + 'count = 3\nstart_jitter = "100ms"\n')
    a, b, c = tcplab.run(sc, seed=5), tcplab.run(sc, seed=5), tcplab.run(sc, seed=6)
    assert a.meta["digest"] == b.meta["digest"]
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert list(a.flows["start_s"]) != list(c.flows["start_s"])


def test_linux_bbr_digest_pins_the_ack_aggregation_allowance() -> None:
    # The loss grid's 1 % point with BBR on the `linux` profile, seed 0. With Linux's
    # quantisation budget (cc/bbr.rs: whole packets, rounded up to even, +2 in the 1.25
    # phase) cwnd seldom binds on this path: BBR's pacing does, so the allowance
    # (bbr_update_ack_aggregation, on with linux_cc) shows mostly in cwnd: the
    # time-weighted mean cwnd is 102,223 B with it and 100,084 B with
    # extra_acked_gain = 0. Earlier digests: before paced segments left in GSO bursts
    # (tcp/gso.rs, `tcp_tso_autosize`), ffff6f600e15c5db for both (102,384 and
    # 100,033 B: the allowance left the packet trace as it was); before BBR took its
    # min_rtt and first pacing rate from the handshake's RTT (bbr_init; cc/bbr.rs
    # `on_established`), 32efd2fb629fb086 for both (103,692 and 101,174 B); before the receiver
    # timed its autotuning by its timestamp RTT and provisioned its buffer at each
    # out-of-order arrival (tcp/quickack.rs), 100496c631be5cbb for both (104,384 and
    # 101,785 B) and 6639e534a815eaac (CUBIC); before Linux's pacing
    # gap in payload bytes (tcp_update_skb_after_send), 75ed1b00d5b453b1 for both
    # (102,807 and 100,123 B); with the budget in
    # bytes (draft-00), 586ab7473b61896f (allowance) and f5cfc29415d5359f (without);
    # before the receiver's window-growth quick ACKs (tcp/quickack.rs): c04a63cae453eb93,
    # 719cf7a3b6c2ab96 and 8b7178e6c4bd123d (CUBIC); before the recovery restart on the
    # ACK ending the last one: 52e473d7c8852265 and b88439530cd2880d; before the
    # receiver offered Linux's window and RACK's recovery stopped waiting for a
    # timeout's high_seq: 62592942e688a128, 1cc454c1e7bc304e and a0799360a2257c69.
    # CUBIC: 6639e534a815eaac with Linux's own arithmetic (cc/cubic_linux.rs); before
    # it, 390caa4b648bf6bb (unchanged by the budget). Pinned so that a change is
    # deliberate.
    from tcplab.fidelity_grid import TRACES, _bulk_metrics
    from tcplab.scenario import load
    from tcplab.scenario.tcp import CcOptions

    sc = load(EXAMPLES / "fidelity" / "loss-grid" / "loss1.toml")

    def run(name: str, **params: float) -> tuple[str, float]:
        cc = CcOptions(name=name, params=params) if params else CcOptions(name=name)
        r = tcplab.run(sc.model_copy(update={"cc": cc}), seed=0, trace=TRACES)
        return str(r.meta["digest"]), _bulk_metrics(r)["cwnd_mean_bytes"]

    digest, cwnd = run("bbr")
    digest0, cwnd0 = run("bbr", extra_acked_gain=0.0)
    assert (digest, digest0) == ("d2b19c24f1d79b7b", "106f708c39bf4fea")
    assert (round(cwnd), round(cwnd0)) == (102_223, 100_084)  # the allowance: +1.48 segments
    assert run("cubic")[0] == "fcf9a8e475c49a73"


def test_write_and_read_back(tmp_path: Path) -> None:
    r = tcplab.run(Scenario.from_toml(EXAMPLE_TOML), seed=2, trace=["cwnd"])
    r.write(tmp_path)
    back = RunResult.read(tmp_path)
    pd.testing.assert_frame_equal(back.flows, r.flows, check_dtype=False)
    assert back.meta == json.loads(json.dumps(r.meta))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_cli_run_prints_the_summary_and_writes_tables(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(EXAMPLE_TOML)
    assert main(["run", str(scenario), "--seed", "3", "--out", str(tmp_path / "out"), "--trace", "cwnd,drops"]) == 0
    out = capsys.readouterr().out
    assert "flow0" in out and "elapsed" in out
    assert (tmp_path / "out" / "flows.parquet").is_file() and (tmp_path / "out" / "series_cwnd.parquet").is_file()
    assert main(["report", str(tmp_path / "out")]) == 0
    assert "data:image/png;base64," in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.parametrize("path", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_every_example_runs(path: str, tmp_path: Path) -> None:
    f = EXAMPLES / path
    if "[sweep]" in f.read_text():
        exp = load_experiment(f)
        result = tcplab.sweep(exp, tmp_path / "sweep", jobs=1, progress=False)
        assert not result.failures and len(result.flows) > 0
    else:
        r = tcplab.run(f, seed=1)
        assert len(r.flows) + len(r.udp) + len(r.transactions) > 0
        assert (r.flows["bytes_delivered"] > 0).all()
        if 'kind = "rpc"' in f.read_text():
            # Every transaction of a run that stops when all are done has closed.
            assert len(r.transactions) > 0 and (r.transactions["state"] == "closed").all()
            assert (r.transactions["uct_s"] > 0).all()


def test_transactions_table_from_the_core() -> None:
    """The core's transactions (an rpc entry in core JSON) arrive as the documented table."""
    import json

    from tcplab import _core
    from tcplab.results import RunResult

    core = Scenario.from_toml(EXAMPLE_TOML).to_core()
    core["flows"] = [{"kind": "rpc", "name": "web", "group": "g", "server": "s0", "client": "d0",
                      "request": {"dist": "constant", "bytes": 200}, "response": {"dist": "constant", "bytes": 15_000},
                      "arrivals": {"process": "times", "at": [0, 1_000_000_000]}, "batch": 2,
                      "tcp": {"profile": "linux", "iw": 10, "fin_ignores_cwnd": True}}]
    r = RunResult.from_core(_core.run(json.dumps(core), 1))
    t = r.transactions
    assert list(t.columns[: len(COLUMNS["transactions"])]) == list(COLUMNS["transactions"])
    assert t["txn_id"].tolist() == [0, 1, 2, 3] and t["batch"].tolist() == [0, 0, 1, 1]
    assert (t["state"] == "closed").all() and (t["bytes_delivered"] == 15_000).all()
    # 2 Mbit/s, RTT 2 x (70 + 12) ms = 164 ms: IW10 with the FIN quirk sends 15 kB in one
    # flight, so UCT = 2 RTT + the 11 packets' serialization at 2 Mbit/s (about 60 ms).
    assert ((t["uct_s"] > 0.328) & (t["uct_s"] < 0.328 + 0.15)).all(), t["uct_s"].tolist()
