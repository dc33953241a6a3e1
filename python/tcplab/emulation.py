"""Emulation mode from Python: ``tcplab.emulate(scenario, seed)`` and ``tcplab emulate``.

The scenario is validated and resolved exactly as for :func:`tcplab.run` and handed, as
the core's JSON, to the emulator binary ``tcplab-emu`` (``crates/tcplab-emu``). That
binary runs the host's real kernel TCP in network namespaces through tcplab-core's
link, queue and error models in real time (docs/emulation.md) and returns the
simulator's own result document, so the same :class:`tcplab.results.RunResult` tables
come back, plus ``meta["emulation"]``: the scheduling error (p50/p99/max), the kernel,
the namespaces used and every accepted deviation.

The binary is found, in order, at ``$TCPLAB_EMU``, next to this interpreter (``make
install`` copies it into the virtualenv's ``bin``), or under ``target/{ci,release}/``
of the source tree.

Example (needs root, /dev/net/tun and the binary)::

    >>> import tcplab
    >>> r = tcplab.emulate("examples/fidelity/reno.toml", seed=1, trace=["cwnd"])  # doctest: +SKIP
    >>> r.meta["emulation"]["sched_error"]["p99_s"] < 1e-3                          # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from tcplab import units
from tcplab.results import RunResult
from tcplab.runner import as_scenario, with_traces
from tcplab.scenario import Scenario

__all__ = ["emulate", "emulate_core", "check_core", "emulator_path", "kernel_info", "bench", "bench_scenario", "BENCH", "EmulationRefused",
           "EmulationFailed", "EmulationInterrupted", "EmulatorNotFound"]


class EmulationRefused(ValueError):
    """The kernel cannot run the scenario as asked, or privileges are missing (exit 2).

    Nothing was created on the machine.
    """


class EmulationFailed(RuntimeError):
    """The emulation started but failed, or was interrupted (its namespaces were removed)."""


class EmulationInterrupted(EmulationFailed):
    """A signal (Ctrl-C, SIGTERM) stopped the emulation; its namespaces were removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}; the emulator removed its namespaces")
        self.signum = signum


class EmulatorNotFound(FileNotFoundError):
    """The ``tcplab-emu`` binary is not built (``make install`` builds it)."""


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def emulator_path() -> Path:
    """The ``tcplab-emu`` binary to run (see the module docstring for the search order).

    Raises:
        EmulatorNotFound: none was found; the message says how to build it.
    """
    env = os.environ.get("TCPLAB_EMU")
    candidates = [Path(env)] if env else []
    candidates.append(Path(sys.executable).parent / "tcplab-emu")
    root = _repo_root()
    candidates += [root / "target" / p / "tcplab-emu" for p in ("ci", "release")]
    which = shutil.which("tcplab-emu")
    if which:
        candidates.append(Path(which))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise EmulatorNotFound(
        "the emulator binary tcplab-emu is not built; run `make install` (or `cargo build --profile ci -p tcplab-emu`)"
        " or set TCPLAB_EMU to its path"
    )


def kernel_info() -> dict[str, Any]:
    """This machine's kernel release, the congestion controls it offers, and what is
    missing for an emulation (read from /proc; no binary needed).

    Example:
        >>> info = kernel_info()
        >>> sorted(info)
        ['available_congestion_control', 'release']
    """

    def read(p: str) -> str:
        try:
            return Path(p).read_text().strip()
        except OSError:
            return ""

    return {
        "release": read("/proc/sys/kernel/osrelease"),
        "available_congestion_control": read("/proc/sys/net/ipv4/tcp_available_congestion_control").split(),
    }


def _wait_forwarding_signals(proc: subprocess.Popen[bytes]) -> int:
    """Waits for the emulator; a Ctrl-C or SIGTERM here is passed on to it and the wait
    continues while it removes its namespaces (it never gets SIGKILLed from here)."""
    forwarded: list[int] = []
    old = None
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        def forward(signum: int, _frame: Any) -> None:
            forwarded.append(signum)
            proc.send_signal(signum)

        old = signal.signal(signal.SIGTERM, forward)
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:
                # The terminal sent SIGINT to the whole process group; make sure the
                # emulator has it, then keep waiting for its clean-up.
                forwarded.append(signal.SIGINT)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
    finally:
        if in_main and old is not None:
            signal.signal(signal.SIGTERM, old)
        if forwarded and proc.returncode is not None:
            raise EmulationInterrupted(forwarded[0])


def emulate(
    scenario: Scenario | str | Path,
    seed: int = 0,
    trace: Iterable[str] | None = None,
    *,
    sample_interval: str | int = "2ms",
    late_bound: str | int = "1ms",
    realtime: bool = True,
    quiet: bool = False,
    extra_args: Iterable[str] = (),
) -> RunResult:
    """Runs one emulation (real time, real kernel TCP) and returns its tables.

    Args:
        scenario: a :class:`Scenario`, or the path of a scenario file.
        seed: master seed: the models' random substreams (losses, RED) and the UDP
            sources' departure times are drawn as in the simulator.
        trace: time series to record in addition to ``[record]`` (as :func:`tcplab.run`).
        sample_interval: TCP_INFO sampling interval for the cwnd series (at most 5 ms).
        late_bound: the run is flagged (``meta.emulation.behind``, column
            ``emu_behind``) when the p99 scheduling error exceeds it.
        realtime: run the packet loop at SCHED_FIFO priority where allowed.
        quiet: do not pass the emulator's progress lines to stderr.
        extra_args: more ``tcplab-emu run`` arguments (e.g. the ``--stall-at-ms`` test hook).

    Raises:
        ScenarioError: the scenario is invalid.
        EmulationRefused: the kernel cannot run it, or privileges are missing (exit 2).
        EmulationFailed: the run failed or was interrupted (namespaces removed).
        EmulatorNotFound: the binary is not built.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2^64), got {seed!r}")
    sample_ns = sample_interval if isinstance(sample_interval, int) else units.parse_time(sample_interval)
    bound_ns = late_bound if isinstance(late_bound, int) else units.parse_time(late_bound)
    if not 1_000 <= sample_ns <= 5_000_000:
        raise ValueError(f"sample_interval must be in [1us, 5ms], got {units.format_time(sample_ns)}")
    sc = with_traces(as_scenario(scenario), trace)
    core = sc.to_core(seed)
    doc, wall = emulate_core(core, seed, sample_ns=sample_ns, late_bound_ns=bound_ns, realtime=realtime, quiet=quiet,
                             extra_args=extra_args)
    result = RunResult.from_core(doc, scenario=core)
    result.meta["wall_s"] = wall
    return result


def check_core(core: dict[str, Any]) -> None:
    """Asks the emulator whether this host's kernel can run a resolved core scenario
    (``tcplab-emu check``: refusals only, nothing is started).

    Raises:
        EmulationRefused: the kernel cannot run it as asked; one reason per line.
        EmulationFailed: the emulator failed otherwise.
        EmulatorNotFound: the binary is not built.
    """
    proc = subprocess.run([str(emulator_path()), "check", "--scenario", "-"], input=json.dumps(core, sort_keys=True),
                          capture_output=True, text=True, timeout=60, check=False)
    message = "\n".join(line.removeprefix("tcplab-emu: error: ") for line in proc.stderr.splitlines()).strip()
    if proc.returncode == 2:
        raise EmulationRefused(message)
    if proc.returncode != 0:
        raise EmulationFailed(message or f"tcplab-emu check exited with status {proc.returncode}")


def emulate_core(core: dict[str, Any], seed: int = 0, *, sample_ns: int = 2_000_000, late_bound_ns: int = 1_000_000,
                 realtime: bool = True, quiet: bool = False, extra_args: Iterable[str] = ()) -> tuple[dict[str, Any], float]:
    """Runs the emulator on a resolved core scenario (``Scenario.to_core``) and returns the
    raw result document (the simulator's format, as ``tcplab._core.run`` returns it) and
    the wall time in seconds. :func:`emulate` is this plus the scenario front end and the
    tables; studies call it directly, as they call ``_core.run``.

    Raises:
        EmulationRefused, EmulationFailed, EmulationInterrupted, EmulatorNotFound: as :func:`emulate`.
    """
    binary = emulator_path()
    with tempfile.TemporaryDirectory(prefix="tcplab-emu-") as tmp:
        scen = Path(tmp) / "scenario.json"
        out = Path(tmp) / "result.json"
        scen.write_text(json.dumps(core, sort_keys=True))
        cmd = [str(binary), "run", "--seed", str(seed), "--scenario", str(scen), "--out", str(out),
               "--sample-interval-us", str(max(1, sample_ns // 1000)), "--late-bound-us", str(max(1, late_bound_ns // 1000))]
        if not realtime:
            cmd.append("--no-realtime")
        if quiet:
            cmd.append("--quiet")
        cmd += list(extra_args)
        t0 = time.perf_counter()
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
            code = _wait_forwarding_signals(proc)
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        wall = time.perf_counter() - t0
        message = "\n".join(line.removeprefix("tcplab-emu: error: ") for line in stderr.splitlines()
                            if not line.startswith("tcplab-emu: ") or line.startswith("tcplab-emu: error: "))
        if not quiet:
            for line in stderr.splitlines():
                if line.startswith("tcplab-emu: ") and not line.startswith("tcplab-emu: error: "):
                    print(line, file=sys.stderr)
        if code == 2:
            raise EmulationRefused(message.strip())
        if code > 128 and code - 128 in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            raise EmulationInterrupted(code - 128)
        if code != 0:
            raise EmulationFailed(message.strip() or f"tcplab-emu exited with status {code}")
        doc: dict[str, Any] = json.loads(out.read_text())
    return doc, wall


#: Emulation benchmark scenarios (``tcplab bench --emulate``): name -> (bottleneck rate,
#: real seconds). One bulk CUBIC flow of 1500-byte packets over a dumbbell with a
#: 5 ms, 1000-packet bottleneck and 10 Gbit/s access links, so that the bottleneck is
#: the only link the model makes busy: a utilisation near 1 means the emulator kept up.
BENCH = {"timing-20M": ("20Mbps", 10), "tput-100M": ("100Mbps", 5), "tput-200M": ("200Mbps", 5),
         "tput-500M": ("500Mbps", 5), "tput-1G": ("1Gbps", 5)}


def bench_scenario(name: str) -> Scenario:
    """The benchmark scenario ``name`` of :data:`BENCH`.

    Example:
        >>> bench_scenario("tput-100M").to_core()["topology"]["bottleneck"]["rate"]
        100000000
    """
    rate, seconds = BENCH[name]
    return Scenario.from_toml(f"""
name = "emu-bench-{name}"
duration = "{seconds}s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "5ms", queue = {{ kind = "drop_tail", limit = "1000pkt" }} }}
sender_access = {{ rate = "10Gbps", delay = "0ms" }}
receiver_access = {{ rate = "10Gbps", delay = "0ms" }}
[cc]
name = "cubic"
[[flows]]
name = "bulk"
""")


def bench(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Runs the emulation benchmark; one row per scenario: the link rate, goodput,
    bottleneck utilisation and packets per second, the scheduling error and the load
    average the run saw."""
    rows = []
    for name in names or BENCH:
        r = emulate(bench_scenario(name), seed=0, quiet=True)
        e = r.meta["emulation"]
        s = e["sched_error"]
        b = r.links.set_index("link").loc["bottleneck"]
        rows.append({
            "scenario": name, "link_bps": int(b["rate_bps"]), "goodput_bps": float(r.flows.loc[0, "goodput_bps"]),
            "utilisation": float(b["utilisation"]), "pkts_per_s": float(b["tx_pkts"]) / float(r.meta["sim_end_s"]),
            "sched_p50_s": s["p50_s"], "sched_p99_s": s["p99_s"], "sched_max_s": s["max_s"], "behind": e["behind"],
            "loadavg": e["loadavg"], "realtime": e["realtime_priority"],
        })
    return rows
