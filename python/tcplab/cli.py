"""The ``tcplab`` command (README.md, "Using it"): run, emulate, fidelity, sweep, study, check, list, report.

Exit codes: 0 ok; 1 a run failed, or writing its results failed (an OS error such as
permission denied or a full disk, reported in one line with the path and the reason);
2 bad input (an invalid scenario, experiment or option, or an output directory that
cannot be created or written); 130 interrupted (Ctrl-C). Input and output directories
are checked completely before anything runs or is written, so bad input leaves no
partial output; sweeps and studies keep every finished run and resume when re-run, and
Ctrl-C says so in one line ("interrupted: N of M runs kept; re-run to resume").

Example:
    >>> main(["list", "--json"]) == 0  # doctest: +ELLIPSIS
    {...
    True
"""

from __future__ import annotations

import argparse
import json
import math
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

from tcplab import __version__, registry, units
from tcplab.runner import TRACES, CoreRunError, ScenarioWarning, core_has_run, run as run_scenario
from tcplab.executor import Interrupted, RunProgress, check_scheduler, usable_jobs
from tcplab.outputs import OutputError, check_output_dir, describe_os_error
from tcplab.scenario import Scenario, ScenarioError, load
from tcplab.scenario.reference import _fmt_default

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_RUN_FAILED, EXIT_BAD_INPUT = 0, 1, 2
#: Ctrl-C (SIGINT): 128 + 2, as a shell reports a command that SIGINT stopped.
EXIT_INTERRUPTED = 128 + signal.SIGINT


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 for usage errors (its default) and no SystemExit leak."""



def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (used by ``--help``)."""
    p = _Parser(
        prog="tcplab",
        description="tcplab: TCP congestion-control experiments on a deterministic packet-level simulator.",
        epilog="Exit codes: 0 ok, 1 a run failed, 2 bad input, 130 interrupted (Ctrl-C). Scenario reference: "
               "docs/scenarios.md.",
    )
    p.add_argument("--version", action="version", version=f"tcplab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("run", help="run one scenario and print its per-flow summary",
                       description="Run one simulation of SCENARIO.toml, print a per-flow summary table and, "
                                   "with --out, write its tables as Parquet.")
    r.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file (see docs/scenarios.md)")
    r.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="master seed, an integer in [0, 2^64) (default: 0); same scenario + seed = same results")
    r.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="directory for flows/udp/queues/links[/series_*].parquet, meta.json and scenario.json "
                        "(default: write nothing)")
    r.add_argument("--trace", type=_traces, default=[], metavar="LIST",
                   help=f"comma-separated time series to record on top of [record]: {','.join(TRACES)} "
                        "(default: none)")
    r.add_argument("--no-progress", action="store_true",
                   help="do not show the progress bar (simulated time, time left) that a run longer than 2 s shows "
                        "on a terminal (default: shown)")

    e = sub.add_parser("emulate", help="run one scenario with real Linux TCP through tcplab's own link models",
                       description="Emulate SCENARIO.toml in real time: every host is a network namespace running the "
                                   "kernel's TCP, and every packet crosses the scenario's links through the simulator's "
                                   "own queue, error and link models (docs/emulation.md). Prints the same per-flow "
                                   "summary as `run` and, with --out, writes the same tables. Needs root (or "
                                   "CAP_NET_ADMIN + CAP_SYS_ADMIN) and /dev/net/tun; exit 2 says what is missing.")
    e.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file (see docs/scenarios.md)")
    e.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="master seed for the models' random substreams (losses, RED, UDP departures) (default: 0)")
    e.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="directory for the tables, meta.json and scenario.json (default: write nothing)")
    e.add_argument("--trace", type=_traces, default=[], metavar="LIST",
                   help=f"comma-separated time series to record on top of [record]: {','.join(TRACES)} (default: none)")
    e.add_argument("--sample-interval", type=_time_arg, default="2ms", metavar="TIME",
                   help="TCP_INFO sampling interval of the cwnd series, at most 5ms (default: 2ms)")
    e.add_argument("--late-bound", type=_time_arg, default="1ms", metavar="TIME",
                   help="flag the run when the p99 scheduling error exceeds this (default: 1ms)")
    e.add_argument("--no-realtime", action="store_true",
                   help="do not ask for SCHED_FIFO priority for the packet loop (default: ask)")

    fd = sub.add_parser("fidelity", help="run simulator and real Linux TCP on one scenario (or a grid) and compare them",
                        description="Run SCENARIO.toml --reps times in the simulator and in the emulator (same seeds), "
                                    "and write a table of every metric (sim, kernel, relative error) and report.html "
                                    "with the cwnd and queue series overlaid. Given a directory holding grid.toml "
                                    "(e.g. examples/fidelity/loss-grid), run every scenario x congestion control "
                                    "point of the grid instead (its reps come from grid.toml; kernel runs are kept "
                                    "and reused, so re-running resumes).")
    fd.add_argument("scenario", metavar="SCENARIO.toml|GRID_DIR", help="scenario file, or a directory with grid.toml")
    fd.add_argument("--sim-only", action="store_true",
                    help="grid only: recompute the simulator side against the kernel runs already in --out")
    fd.add_argument("--against", type=Path, default=None, metavar="GRID.json",
                    help="grid only: re-run the simulator side against the kernel means of a stored grid summary "
                         "(e.g. docs/fidelity/loss-grid-defaults.json); no kernel runs")
    fd.add_argument("--within", type=float, default=None, metavar="FRACTION",
                    help="with --against: a pair counts as inside when within this fraction of the simulator's "
                         "mean or the kernel's 95%% interval (default: the grid's tolerance)")
    fd.add_argument("--path-lateness", action="store_true",
                    help="with --against: give the simulated access links the emulator's measured lateness per "
                         "packet (median over each congestion control's kernel runs) as an exponential delay "
                         "variation")
    fd.add_argument("--reps", type=_positive, default=3, metavar="N", help="replications of each side (default: 3)")
    fd.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="results directory (default: results/fidelity-<scenario file stem>)")
    fd.add_argument("--no-realtime", action="store_true", help="do not ask for SCHED_FIFO for the packet loop")

    s = sub.add_parser("sweep", help="run an experiment's grid x replications (resumable)",
                       description="Run every grid point x replication of EXPERIMENT.toml (a scenario plus a "
                                   "[sweep] table). Finished runs in --out are skipped, so re-running resumes.")
    s.add_argument("experiment", metavar="EXPERIMENT.toml", help="experiment file (scenario + [sweep])")
    s.add_argument("--jobs", type=_positive, default=None, metavar="N",
                   help="worker processes (default: the core count; 1 runs in this process; with "
                        "--scheduler dask:local, the number of Dask workers, at least 2)")
    s.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="run on Dask: tcp://HOST:PORT of a scheduler, or dask:local for a local cluster of "
                        "worker processes (default: a local process pool)")
    s.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="results directory (default: results/<experiment file stem>)")
    s.add_argument("--no-progress", action="store_true", help="do not show the progress bar (default: shown)")

    from tcplab import studies

    st = sub.add_parser("study", help="run a bundled study of a seed, or your own study file (tables, figures, "
                                      "report.html, findings.json)",
                        description="Run (or resume) a bundled study: every configuration of its seed x replications, "
                                    "then its tables (Parquet), figures (PNG + SVG), findings.json and report.html. "
                                    "Finished tasks in --out are skipped, so re-running resumes and re-renders. "
                                    f"Studies: {', '.join(studies.names())}. `tcplab study run FILE.toml` runs a "
                                    "study file (base scenario, factors, metrics, claims; examples/studies/) the same "
                                    "way; `tcplab study new NAME` writes a commented starting file that runs as it is.")
    st.add_argument("name", metavar="NAME", help=f"study name: {', '.join(studies.names())}; or all: every study "
                                                 "into --out/<study>/, then index.html (dashboard) and findings.json; "
                                                 "or run (a study file) or new (write one)")
    st.add_argument("file", nargs="?", default=None, metavar="FILE",
                    help="study run: the study file (FILE.toml); study new: the name (or path) of the file to write")
    st.add_argument("--reps", type=_positive, default=None, metavar="N",
                    help="replications per configuration, at least 2 (default: the study's; "
                         + "; ".join(f"{x.name}: {x.default_reps}" for x in studies.STUDIES.values()) + ")")
    st.add_argument("--links", type=_names, default=None, metavar="LIST",
                    help="comma-separated links to run (default: all of the study's; "
                         + "; ".join(f"{x.name}: {','.join(x.links)}" for x in studies.STUDIES.values()) + ")")
    st.add_argument("--jobs", type=_positive, default=None, metavar="N",
                    help="worker processes (default: the core count; 1 runs in this process; with "
                         "--scheduler dask:local, the number of Dask workers, at least 2)")
    st.add_argument("--scheduler", default=None, metavar="ADDR",
                    help="run on Dask: tcp://HOST:PORT of a scheduler, or dask:local for a local cluster of "
                         "worker processes (default: a local process pool)")
    st.add_argument("--out", type=Path, default=None, metavar="DIR", help="results directory (default: results/NAME)")
    st.add_argument("--set", dest="params", action="append", default=[], metavar="KEY=VALUE",
                    help="a study parameter, repeatable ("
                         + "; ".join(f"{x.name}: {', '.join(p.name for p in x.params)}" for x in studies.STUDIES.values())
                         + "; see `tcplab list` and docs/studies/)")
    st.add_argument("--scale", default=None, metavar="SCALE",
                    help="the grid's scale, the same as --set scale=SCALE ("
                         + "; ".join(f"{x.name}: {p.doc}, default {p.default}" for x in studies.STUDIES.values()
                                     for p in x.params if p.name == "scale") + ")")
    st.add_argument("--no-progress", action="store_true", help="do not show the progress bar (default: shown)")
    st.add_argument("--mode", choices=("simulate", "emulate"), default="simulate",
                    help="simulate (default): the study's full grid in the simulator; emulate: a reduced grid that fits "
                         "real time, run in the simulator and with this machine's kernel TCP through the emulator "
                         "(root; one run at a time; --reps default 1), reported side by side ("
                         + ", ".join(x.name for x in studies.STUDIES.values() if x.emulate_runner) + "); "
                         "study run FILE.toml --mode emulate: every configuration x replication on real Linux and "
                         "in the simulator, the claims judged on real Linux (into results/NAME-emulate)")
    st.add_argument("--reps-scale", type=float, default=1.0, metavar="F",
                    help="study all: multiply every study's replications by F (at least 2 remain; default: 1); "
                         "an --also study file's `reps` too")
    st.add_argument("--preset", default=None, metavar="NAME",
                    help="study all: every study's reduced size NAME (tiny: CI size; demo: make demo's, the studies "
                         "together in under 5 minutes on 2 cores); default: the studies' defaults. A study file "
                         "has no presets: it runs at its own `reps` (times --reps-scale) whatever the preset")
    st.add_argument("--only", type=_names, default=None, metavar="LIST",
                    help="study all: run only these studies (the dashboard still lists every one); --also study "
                         "files always run, and their names may be listed here, so --only NAME --also NAME.toml "
                         "runs the study file alone beside the seeds")
    st.add_argument("--also", action="append", default=[], metavar="FILE",
                    help="study all: also run this study file (tcplab study run's format; repeatable) into "
                         "--out/<its name>/ with --jobs and --scheduler, after the bundled studies, and show its "
                         "findings on the dashboard and in findings.json beside the seeds'; every file is checked "
                         "before anything runs")
    st.add_argument("--emulate", action="store_true",
                    help="study all: also run the emulated subset of each study that has an emulate mode, into "
                         "--out/<study>/emulate (real Linux TCP, real time, needs root)")

    c = sub.add_parser("check", help="validate a scenario, experiment or study file without running it",
                       description="Validate SCENARIO.toml (or an experiment file with [sweep], or a study file "
                                   "with [[factors]]) exactly as `run` (or `sweep`, or `study run`) does, the "
                                   "simulator's own checks included (for a study file, under every factor "
                                   "combination, each problem named with its combination), and report every "
                                   "problem at once, one line each with its file line (exit 2); with --json, print "
                                   "the resolved scenario as the core receives it (a study file: every "
                                   "configuration's).")
    c.add_argument("file", metavar="FILE.toml", help="scenario, experiment or study file")
    c.add_argument("--json", action="store_true", help="print the resolved core JSON (default: just 'ok')")
    c.add_argument("--seed", type=_seed, default=0, metavar="N", help="seed used to resolve start jitter (default: 0)")

    ls = sub.add_parser("list", help="list congestion controls, TCP profiles, queues, error models, ...",
                        description="List everything selectable by name, with parameters, units and defaults, "
                                    "from the simulator's registry.")
    ls.add_argument("--json", action="store_true", help="print the registry as JSON (default: tables)")

    rp = sub.add_parser("report", help="render plots and report.html from saved results",
                        description="Render figures and a self-contained report.html from a results directory "
                                    "written by `tcplab run --out` or `tcplab sweep`.")
    rp.add_argument("dir", type=Path, metavar="DIR", help="results directory")
    rp.add_argument("--out", type=Path, default=None, metavar="FILE",
                    help="where to write the report (default: DIR/report.html)")
    rp.add_argument("--cwnd-flows", type=_names, default=None, metavar="NAME[,NAME...]",
                    help="flows (names or groups) the cwnd figure draws (default: every flow with a cwnd series, "
                         "up to 8; the caption names the ones left out)")

    sc_ = sub.add_parser("schema", help="print the JSON Schema of scenario files (for editors)",
                         description="Print the JSON Schema of scenario and experiment files. Save it and point "
                                     "Taplo / Even Better TOML at it for completion, hover docs and checks as you "
                                     "type (see the README); schema/scenario.schema.json is the same file. With "
                                     "--study, the schema of study files (schema/study.schema.json; "
                                     "docs/study-files.md).")
    sc_.add_argument("--study", action="store_true",
                     help="print the schema of study files (tcplab study run FILE.toml) instead")

    b = sub.add_parser("bench", help="run the standard performance scenarios",
                       description="Run the standard benchmark scenarios and report wall seconds (the simulation "
                                   "alone) and its set-up part, events/s and bottleneck packets per wall-second of "
                                   "the run, bottleneck packets per CPU-second of the run (CPU time does not depend on "
                                   "what other cores run), events per bottleneck packet, drops, bytes of state per "
                                   "flow and peak RSS.")
    b.add_argument("--json", action="store_true",
                   help="one JSON object per line with keys scenario, wall_s, setup_s, sim_s, events, events_per_s, "
                        "bottleneck_pkts, bottleneck_pkts_per_s, drops, bytes_per_flow, bytes_per_idle_flow, "
                        "peak_rss_mb, cpu_s, bottleneck_pkts_per_cpu_s, events_per_bottleneck_pkt, timer_events, "
                        "pkt_hops, pkt_hops_per_s (default: a table)")
    b.add_argument("--scenario", action="append", default=None, metavar="NAME",
                   help="run only this scenario (repeatable; default: the standard rows). Besides the listed rows, "
                        "any dumbbell-{N}x10G-{S}s (N Reno flows at 10 Gbit/s for S seconds) is accepted")
    b.add_argument("--large", action="store_true",
                   help="also run the large rows (dumbbell-100000x10G-1s: 5-20 s and ~0.9 GB of memory)")
    b.add_argument("--emulate", action="store_true",
                   help="benchmark the emulator instead (real time, needs root): scheduling error at 20 Mbit/s and "
                        "throughput up to 1 Gbit/s of 1500-byte packets (scenarios timing-20M, tput-100M, tput-200M, "
                        "tput-500M, tput-1G)")
    return p


def _int_at_least(text: str, low: int, high: int | None = None) -> int:
    """An integer argument in [low, high); argparse reports the ArgumentTypeError."""
    try:
        n = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < low or (high is not None and n >= high):
        bound = f"in [{low}, 2^64)" if high == 2**64 else f"at least {low}"
        raise argparse.ArgumentTypeError(f"must be {bound}, got {n}")
    return n


def _seed(text: str) -> int:
    return _int_at_least(text, 0, 2**64)


def _positive(text: str) -> int:
    return _int_at_least(text, 1)


def _names(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of names")
    return names


def _time_arg(text: str) -> str:
    try:
        units.parse_time(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _traces(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    for t in names:
        if t not in TRACES:
            raise argparse.ArgumentTypeError(f"unknown trace {t!r}; accepted: {', '.join(TRACES)}")
    return names


def _err(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _warn_about(sc: Any) -> None:
    """Prints a scenario's warnings (:meth:`Scenario.warnings`), one line each, on stderr."""
    for w in sc.warnings():
        print(f"warning: {w.one_line()}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help/--version (0) or a usage error (2)
        return int(e.code) if isinstance(e.code, int) else EXIT_BAD_INPUT
    handler = {"run": _cmd_run, "emulate": _cmd_emulate, "fidelity": _cmd_fidelity, "sweep": _cmd_sweep, "study": _cmd_study, "check": _cmd_check, "list": _cmd_list,
               "report": _cmd_report, "bench": _cmd_bench, "schema": _cmd_schema}
    try:
        return handler[args.command](args)
    except Interrupted as e:  # Ctrl-C in a sweep or a study: what finished is on disk
        print(str(e), file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ScenarioError as e:  # every problem of the file, one line each
        for problem in e.problems:
            _err(problem.one_line())
        return EXIT_BAD_INPUT
    except OutputError as e:
        _err(str(e))
        return EXIT_BAD_INPUT
    except OSError as e:  # writing results failed after the checks (disk full, permissions, ...)
        _err(f"cannot write the results: {describe_os_error(e)}")
        return EXIT_RUN_FAILED


def _cmd_schema(args: argparse.Namespace) -> int:
    from tcplab.scenario import json_schema_text, study_json_schema_text

    sys.stdout.write(study_json_schema_text() if args.study else json_schema_text())
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    sc = load(args.scenario)  # validates fully (as `check` does) before anything runs or is written
    _warn_about(sc)
    if args.out is not None:
        check_output_dir(args.out)
    if _core_missing():
        return EXIT_RUN_FAILED
    bar = RunProgress(enabled=not args.no_progress, label=Path(args.scenario).name, open_end=sc.duration is None)
    try:
        with warnings.catch_warnings(), bar:  # the warnings are printed above, with the file's lines
            warnings.simplefilter("ignore", ScenarioWarning)
            result = run_scenario(sc, seed=args.seed, trace=args.trace, progress=bar)
    except KeyboardInterrupt:
        upto = "up to " if sc.duration is None else ""
        print(f"interrupted: the run stopped at {bar.now_s:,.3f} s of {upto}{bar.end_s:,.3f} s simulated; nothing "
              "was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except CoreRunError as e:
        _err(f"{args.scenario}: the simulator rejected the scenario: {e}")
        return EXIT_BAD_INPUT
    except Exception as e:  # a failure inside the run (e.g. a panic in the core)
        _err(f"{args.scenario}: the run failed: {type(e).__name__}: {e}")
        return EXIT_RUN_FAILED
    _print_run(result, str(args.scenario))
    if args.out is not None:
        result.write(args.out)
        print(f"tables written to {args.out}")
    return EXIT_OK


def _cmd_emulate(args: argparse.Namespace) -> int:
    from tcplab.emulation import EmulationFailed, EmulationRefused, EmulatorNotFound, emulate

    sc = load(args.scenario)  # validates fully before anything runs or is written
    if args.out is not None:
        check_output_dir(args.out)
    try:
        result = emulate(sc, seed=args.seed, trace=args.trace, sample_interval=args.sample_interval,
                         late_bound=args.late_bound, realtime=not args.no_realtime)
    except (EmulationFailed, EmulationRefused, EmulatorNotFound) as e:
        return _emulation_error(e, args.scenario)
    _print_run(result, f"{args.scenario} (emulated, Linux {result.meta.get('emulation', {}).get('kernel', '?')})")
    _print_emulation(result.meta)
    if args.out is not None:
        result.write(args.out)
        print(f"tables written to {args.out}")
    return EXIT_OK


def _print_emulation(meta: dict[str, Any]) -> None:
    """The emulator's timing line, and a warning on stderr when it fell behind."""
    e = meta.get("emulation") or {}
    s = e.get("sched_error") or {}
    if not s:
        return
    us = lambda v: f"{v * 1e6:.0f} µs"  # noqa: E731
    print(f"emulator scheduling error over {s.get('count')} packets: p50 {us(s['p50_s'])}, p99 {us(s['p99_s'])}, "
          f"max {us(s['max_s'])} (load average {e.get('loadavg')}; SCHED_FIFO {'on' if e.get('realtime_priority') else 'off'})")
    for d in e.get("deviations") or []:
        print(f"note: {d}")
    if e.get("behind"):
        _err(f"WARNING: the emulator fell behind: p99 scheduling error {us(s['p99_s'])} exceeds the bound "
             f"{us(s['late_bound_s'])}; these results are flagged (meta.emulation.behind, column emu_behind)")


def _cmd_fidelity(args: argparse.Namespace) -> int:
    from tcplab.emulation import EmulationFailed, EmulationRefused, EmulatorNotFound
    from tcplab.fidelity import fidelity
    from tcplab.fidelity_grid import is_grid

    if is_grid(args.scenario):
        return _fidelity_grid(args)
    if args.sim_only:
        _err(f"--sim-only: {args.scenario} is not a grid directory (no grid.toml); it applies to grids only")
        return EXIT_BAD_INPUT
    sc = load(args.scenario)
    out = args.out or Path("results") / f"fidelity-{Path(args.scenario).stem}"
    check_output_dir(out)
    try:
        res = fidelity(sc, reps=args.reps, out=out, realtime=not args.no_realtime, quiet=True,
                       progress=lambda m: print(m, file=sys.stderr, flush=True))
    except (EmulationFailed, EmulationRefused, EmulatorNotFound) as e:
        return _emulation_error(e, args.scenario)
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{args.scenario}: simulator vs Linux {res.meta.get('kernel')} ({args.reps} rep(s))")
    for c in ("flow/link", "metric", "unit", "sim", "kernel", "rel. error"):
        t.add_column(c, justify="left" if c in ("flow/link", "metric", "unit") else "right")
    for _, r in res.table.iterrows():
        rel = "-" if pd_isna(r["rel_error"]) else f"{r['rel_error']:+.1%}"
        t.add_row(str(r["flow_or_link"]), str(r["metric"]), str(r["unit"]), _fmt(r["sim"], 4), _fmt(r["kernel"], 4), rel)
    Console(width=None if sys.stdout.isatty() else 132).print(t)
    for e in res.meta.get("sched_error") or []:
        if e:
            print(f"emulator scheduling error: p50 {e['p50_s'] * 1e6:.0f} µs, p99 {e['p99_s'] * 1e6:.0f} µs, "
                  f"max {e['max_s'] * 1e6:.0f} µs")
    if res.meta.get("behind"):
        _err("WARNING: the emulator fell behind its scheduling bound in at least one replication")
    print(f"table: {out / 'fidelity.parquet'}; report written to {res.report}")
    return EXIT_OK


def _emulation_error(e: Exception, scenario: str, kept: str = "") -> int:
    """One line on stderr for an emulation error and the exit code it maps to: a
    refusal is bad input (2, nothing was created), a signal 128 + its number, any other
    failure 1. ``kept`` is appended where work done so far survives."""
    from tcplab.emulation import EmulationInterrupted, EmulationRefused, EmulatorNotFound

    if isinstance(e, EmulationRefused):
        _err(f"{scenario}: {e}")
        return EXIT_BAD_INPUT
    if isinstance(e, EmulatorNotFound):
        _err(str(e))
        return EXIT_RUN_FAILED
    if isinstance(e, EmulationInterrupted):
        _err(f"{e}{kept}")
        return 128 + e.signum
    _err(f"{scenario}: the emulation failed: {e}{kept}")
    return EXIT_RUN_FAILED


def _fidelity_grid(args: argparse.Namespace) -> int:
    """``tcplab fidelity GRID_DIR``: every point of a fidelity grid (tcplab.fidelity_grid)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    from tcplab.emulation import EmulationFailed, EmulationRefused, EmulatorNotFound
    from tcplab.fidelity_grid import GRID_METRICS, load_grid, run_grid

    grid, points = load_grid(args.scenario)  # bad input is reported before anything runs
    if args.against is not None:
        if args.sim_only:
            _err("--sim-only and --against exclude each other: --against re-runs the simulator side against a "
                 "stored summary, --sim-only against the kernel runs in --out")
            return EXIT_BAD_INPUT
        return _fidelity_against(args, grid)
    if args.path_lateness or args.within is not None:
        _err("--path-lateness and --within apply with --against GRID.json only")
        return EXIT_BAD_INPUT
    out = args.out or Path("results") / f"fidelity-{grid.name}"
    check_output_dir(out)
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} kernel runs"),
                  TimeRemainingColumn(), console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task("kernel", total=None)

        def progress(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, description=message)
            if not console.is_terminal:
                print(f"[{done}/{total}] {message}", file=sys.stderr, flush=True)

        try:
            res = run_grid(args.scenario, out, sim_only=args.sim_only, progress=progress,
                           realtime=not args.no_realtime, quiet=True)
        except FileNotFoundError as e:
            _err(str(e))
            return EXIT_BAD_INPUT
        except (EmulationFailed, EmulationRefused, EmulatorNotFound) as e:
            return _emulation_error(e, args.scenario, f" (finished kernel runs are kept in {out}; re-run to resume)")
    g = res.table[res.table["metric"] == "goodput_bps"].set_index("point")
    t = Table(title=f"{grid.name}: simulator vs Linux {res.meta.get('kernel')} ({grid.reps} runs per side and point)")
    cols = ["point"] + [f"{GRID_METRICS[m][1]} sim/kernel" for m in GRID_METRICS] + ["goodput error", "agrees"]
    for c in cols:
        t.add_column(c, justify="left" if c == "point" else "right")
    wide = res.table.set_index(["point", "metric"])
    for p in g.index:
        cells = []
        for m in GRID_METRICS:
            s, k = wide.loc[(p, m), "sim"], wide.loc[(p, m), "kernel"]
            scale = 1e6 if m == "goodput_bps" else (1460 if m == "cwnd_mean_bytes" else 1)
            cells.append(f"{_fmt(s / scale, 3)} / {_fmt(k / scale, 3)}")
        t.add_row(p, *cells, f"{g.loc[p, 'rel_error']:+.1%}", "yes" if g.loc[p, "agrees"] else "NO")
    Console(width=None if sys.stdout.isatty() else 160).print(t)
    print(f"units: goodput Mbit/s, cwnd segments of 1460 B; {int(g['agrees'].sum())}/{len(g)} points agree "
          f"(within {grid.tolerance:.0%} or the kernel's 95% CI)")
    if res.meta["behind"]:
        _err(f"WARNING: the emulator fell behind in {len(res.meta['behind'])} kernel run(s): {', '.join(res.meta['behind'])}")
    print(f"table: {out / 'grid.parquet'}; report written to {res.report}")
    return EXIT_OK


def _fidelity_against(args: argparse.Namespace, grid: Any) -> int:
    """``tcplab fidelity GRID_DIR --against GRID.json``: the simulator side now against a
    stored summary's kernel means (tcplab.fidelity_grid.compare_stored)."""
    from rich.console import Console
    from rich.table import Table

    from tcplab.fidelity_grid import GRID_METRICS, compare_stored

    within = grid.tolerance if args.within is None else args.within
    if not 0 < within < 1:
        _err(f"--within: {within} is not accepted; give a fraction between 0 and 1 (e.g. 0.03)")
        return EXIT_BAD_INPUT
    if not args.against.is_file():
        _err(f"--against: {args.against}: no such file (a grid summary, grid.json)")
        return EXIT_BAD_INPUT
    try:
        table, lateness = compare_stored(args.scenario, args.against, within=within, path_lateness=args.path_lateness,
                                         progress=lambda d, t, m: print(f"[{d}/{t}] {m}", file=sys.stderr, flush=True))
    except (ValueError, json.JSONDecodeError, KeyError) as e:
        _err(f"--against {args.against}: {e}")
        return EXIT_BAD_INPUT
    reading = ("the path with the emulator's lateness: exponential delay variation on every access link, mean "
               + ", ".join(f"{cc} {1e6 * v:.1f} us" for cc, v in lateness.items())) if lateness else "the scenarios as written"
    t = Table(title=f"{grid.name}: the simulator now ({reading}) against {args.against}")
    for c in ("point", "metric", "kernel [95% CI]", "sim", "error", "inside"):
        t.add_column(c, justify="left" if c in ("point", "metric") else "right")
    for r in table.itertuples():
        label, unit = GRID_METRICS[r.metric][1], GRID_METRICS[r.metric][0]
        ci = f" [{_fmt(r.kernel_low, 1)}, {_fmt(r.kernel_high, 1)}]" if r.kernel_low is not None else ""
        t.add_row(r.point, f"{label} ({unit})", f"{_fmt(float(r.kernel), 1)}{ci}", _fmt(r.sim, 1), f"{r.rel_error:+.1%}",
                  "yes" if r.inside else "NO")
    Console(width=None if sys.stdout.isatty() else 160).print(t)
    print(f"{int(table['inside'].sum())} of {len(table)} pairs inside (within {within:.0%} of the simulator's mean or "
          f"the kernel's 95% interval); error = (kernel - sim) / sim")
    if args.out is not None:
        from tcplab.results import write_json_atomic

        args.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic({"meta": {"against": str(args.against), "within": within, "lateness_s": lateness},
                           "rows": json.loads(table.to_json(orient="records"))}, args.out / "against.json")
        print(f"table: {args.out / 'against.json'}")
    return EXIT_OK


def pd_isna(v: Any) -> bool:
    return _is_na(v)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.{digits}f}"
    try:
        import pandas as pd

        if pd.isna(v):
            return "-"
    except (TypeError, ValueError):
        pass
    return str(v)


def _print_run(result: Any, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 132)
    t = Table(title=f"{title}: flows (seed {result.meta.get('seed', '?')})")
    summary = result.summary("flows")  # the columns and units RunResult._repr_html_ shows too
    for head in summary.columns:
        t.add_column(head, justify="right" if head not in ("name", "group", "cc") else "left")
    for row in summary.itertuples(index=False):
        t.add_row(*[_fmt(v) for v in row])
    console.print(t)
    if len(result.udp):
        u = Table(title="UDP flows")
        usum = result.summary("udp")
        for head in usum.columns:
            u.add_column(head, justify="left" if head in ("name", "group") else "right")
        for row in usum.itertuples(index=False):
            u.add_row(*[_fmt(v, 2) for v in row])
        console.print(u)
    tx = result.transactions
    if len(tx):
        w = Table(title="Transactions (request/response), per application and server IW; UCT in s")
        wcols = ["app", "IW", "count", "finished", "UCT mean", "UCT p50", "UCT p90", "UCT max", "rexmit/txn",
                 "drops/txn"]
        for c in wcols:
            w.add_column(c, justify="left" if c == "app" else "right")
        for (app, iw), part in tx.groupby(["app", "iw_segments"], sort=False):
            uct = part["uct_s"].dropna()
            q = uct.quantile([0.5, 0.9]) if len(uct) else None
            w.add_row(str(app), str(iw), str(len(part)), str(len(uct)), _fmt(uct.mean() if len(uct) else None, 3),
                      _fmt(None if q is None else float(q.iloc[0]), 3), _fmt(None if q is None else float(q.iloc[1]), 3),
                      _fmt(uct.max() if len(uct) else None, 3), _fmt(float(part["retransmits"].mean()), 2),
                      _fmt(float(part["drops"].mean()), 2))
        console.print(w)
    m = result.meta
    if m.get("mode") == "emulate":
        console.print(f"emulated {_fmt(m.get('sim_end_s'))} s in real time ({_fmt(m.get('wall_s'))} s wall with set-up "
                      f"and clean-up); {m.get('events', '?')} model events")
        return
    console.print(f"simulated {_fmt(m.get('sim_end_s'))} s, {m.get('events', '?')} events in "
                  f"{_fmt(m.get('wall_s'))} s wall; digest {m.get('digest', '?')}")


def _is_na(v: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _cmd_sweep(args: argparse.Namespace) -> int:
    from tcplab.sweeps import identical_replications_warning, load_experiment, sweep

    exp = load_experiment(args.experiment)  # every grid point validated (as `check` does) before anything runs
    _warn_about(exp)
    if _core_missing():
        return EXIT_RUN_FAILED
    if not _scheduler_ok(args.scheduler):
        return EXIT_BAD_INPUT
    out = args.out or Path("results") / Path(args.experiment).stem
    check_output_dir(out)
    _note_jobs(args)
    result = sweep(exp, out, jobs=args.jobs, scheduler=args.scheduler, progress=not args.no_progress)
    total = result.ran + result.skipped
    print(f"{total - len(result.failures)}/{total} runs finished ({result.skipped} resumed); results in {out}")
    same = identical_replications_warning(result.tables, list(exp.params))
    if same:
        print(f"warning: {same}", file=sys.stderr)
    if result.failures:
        _err(f"{len(result.failures)} run(s) failed; see {out / 'manifest.json'}")
        return EXIT_RUN_FAILED
    return EXIT_OK


def _note_jobs(args: argparse.Namespace) -> None:
    """Says, in one line, when ``--jobs`` asks for more workers than the machine has cores
    (they are capped to the cores: :func:`tcplab.executor.usable_jobs`)."""
    if args.scheduler is None or args.scheduler == "dask:local":
        _, note = usable_jobs(args.jobs)
        if note:
            print(f"note: {note}", file=sys.stderr)


def _core_missing() -> bool:
    """True, after saying so, when this build of the simulator core cannot run scenarios."""
    if core_has_run():
        return False
    _err("this build of the simulator core has no run() yet; rebuild the extension")
    return True


def _scheduler_ok(scheduler: str | None) -> bool:
    """Checks ``--scheduler`` with the executor's rule; reports a bad address."""
    try:
        check_scheduler(scheduler)
    except ValueError:
        _err(f"--scheduler: unknown address {scheduler!r}; accepted: tcp://HOST:PORT or dask:local")
        return False
    return True


def _reps_ok(reps: int | None) -> bool:
    """A simulated study's ``--reps`` (None: the study's default) gives confidence intervals.

    Example:
        >>> _reps_ok(None), _reps_ok(6)
        (True, True)
    """
    if reps is not None and reps < 2:
        _err(f"--reps: at least 2 replications are needed for confidence intervals, got {reps}")
        return False
    return True


def _cmd_study_all(args: argparse.Namespace) -> int:
    """``tcplab study all``: every registered study, the aggregate findings.json and the dashboard's path."""
    from tcplab import studies
    from tcplab.studies import suite

    from tcplab.studies import studyfile

    for flag, value in (("--reps", args.reps), ("--links", args.links), ("--set", args.params or None)):
        if value is not None:
            _err(f"{flag}: not accepted by `tcplab study all` (it runs every study at its own settings); "
                 "use --preset NAME and --reps-scale F, or `tcplab study NAME`")
            return EXIT_BAD_INPUT
    if not (args.reps_scale > 0 and math.isfinite(args.reps_scale)):
        _err(f"--reps-scale: expected a number > 0, got {args.reps_scale}")
        return EXIT_BAD_INPUT
    # Every --also file is read and checked (every field, every configuration's scenario) before anything runs;
    # a bad one is a ScenarioError, reported by main() with the file, line and field (exit 2).
    also = []
    for path in args.also:
        if not Path(path).is_file():
            _err(f"--also: no such study file: {path}")
            return EXIT_BAD_INPUT
        also.append(studyfile.load(path))
    try:
        suite.check_also(also)
    except ValueError as e:
        _err(str(e))
        return EXIT_BAD_INPUT
    file_names = [sf.study_name for sf in also]
    unknown = [n for n in args.only or [] if n not in studies.STUDIES and n not in file_names]
    if unknown:
        _err(f"--only: unknown study(ies) {', '.join(unknown)}; accepted: {', '.join(studies.names() + file_names)}")
        return EXIT_BAD_INPUT
    only = None if args.only is None else [n for n in args.only if n in studies.STUDIES]
    presets = sorted({p for s in studies.STUDIES.values() for p in s.presets})
    if args.preset is not None and args.preset not in presets:
        _err(f"--preset: unknown preset {args.preset!r}; accepted: {', '.join(presets)}")
        return EXIT_BAD_INPUT
    if not _scheduler_ok(args.scheduler):
        return EXIT_BAD_INPUT
    if _core_missing():
        return EXIT_RUN_FAILED
    out = args.out or Path("results") / "all"
    check_output_dir(out)
    _note_jobs(args)
    res = suite.run_all(out, preset=args.preset, reps_scale=args.reps_scale, jobs=args.jobs, scheduler=args.scheduler,
                        progress=not args.no_progress, only=only, emulate=args.emulate, also=also)
    for s in res.findings["studies"]:
        is_file = s.get("kind") == suite.STUDY_FILE
        what = f"study file {s['study_file']}" if is_file else f"seed {s['seed']}"
        if s["status"] == "not run":
            print(f"{s['study']} ({what}): not run")
            continue
        counts = {v: sum(1 for f in s["findings"] if f["verdict"] == v and not f.get("extension"))
                  for v in suite.VERDICTS}
        wall = "-" if s["wall_s"] is None else f"{s['wall_s']:.1f} s"
        ext = sum(1 for f in s["findings"] if f.get("extension"))
        print(f"{s['study']} ({what}): {s['status']}; {len(s['findings']) - ext} {'' if is_file else 'seed '}findings"
              + (f" (and {ext} extension{'s' if ext != 1 else ''})" if ext else "") + ": "
              + ", ".join(f"{n} {v}" for v, n in counts.items()) + f"; {wall} wall")
        if s["status"] == "failed":
            _err(f"{s['study']}: {s['error']}")
        if s["emulation"].get("error"):
            _err(f"{s['study']}, emulated subset: {s['emulation']['error']}")
    t = res.findings["totals"]
    print(f"all: {t['findings']} seed findings: {t['held']} held, {t['contradicted']} contradicted, "
          f"{t['inconclusive']} inconclusive, {t['not_testable']} not testable here, {t['not_run']} not run; "
          f"{t['result_sentences']} seed result sentences: {t['sentences_checked']} checked, "
          f"{t['sentences_not_testable']} not testable, {t['sentences_setup']} set-up; {res.wall_s:.1f} s wall")
    ft = res.findings.get("file_totals")
    if ft:
        print(f"also: {ft['studies']} study file(s), {ft['findings']} findings: {ft['held']} held, "
              f"{ft['contradicted']} contradicted, {ft['inconclusive']} inconclusive, {ft['not_run']} not run")
    print(f"findings: {out / 'findings.json'}")
    print(f"dashboard: {res.index.resolve()}")
    failed = [s for s in res.findings["studies"]
              if s["status"] == "failed" or s.get("failed_tasks") or s["emulation"].get("error")]
    return EXIT_RUN_FAILED if failed else EXIT_OK


def _cmd_study(args: argparse.Namespace) -> int:
    """``tcplab study NAME``: validates every option, runs the study, prints the verdicts and the report path."""
    from tcplab import studies

    if args.name in ("run", "new"):
        return _cmd_study_file(args)
    if args.file is not None:
        _err(f"unexpected argument {args.file!r}: `tcplab study {args.name}` takes no file (a study file runs with "
             "`tcplab study run FILE.toml`)")
        return EXIT_BAD_INPUT
    if args.name == "all":
        return _cmd_study_all(args)
    for flag, given in (("--preset", args.preset is not None), ("--only", args.only is not None),
                        ("--emulate", args.emulate), ("--also", bool(args.also)),
                        ("--reps-scale", args.reps_scale != 1.0)):
        if given:
            _err(f"{flag}: only `tcplab study all` accepts it; `tcplab study {args.name}` takes --reps, --links, --set")
            return EXIT_BAD_INPUT
    try:
        study = studies.get(args.name)
    except KeyError as e:
        _err(str(e.args[0]))
        return EXIT_BAD_INPUT
    links = args.links or (list(study.emulate_links or study.links) if getattr(args, "mode", "") == "emulate"
                           else study.links)
    unknown = [l for l in links if l not in study.links]
    if unknown:
        _err(f"--links: unknown link(s) {', '.join(unknown)} for study {study.name}; accepted: {', '.join(study.links)}")
        return EXIT_BAD_INPUT
    if not _scheduler_ok(args.scheduler):
        return EXIT_BAD_INPUT
    emulate = getattr(args, "mode", "simulate") == "emulate"
    if emulate and study.emulate_runner is None:
        _err(f"--mode emulate: study {study.name} has no emulate mode; studies with one: "
             + ", ".join(s.name for s in studies.STUDIES.values() if s.emulate_runner))
        return EXIT_BAD_INPUT
    if not emulate and not _reps_ok(args.reps):
        return EXIT_BAD_INPUT
    known = {p.name: p for p in (study.emulate_params if emulate else study.params)}
    params = {}
    if getattr(args, "scale", None) is not None:
        if "scale" not in known:
            _err(f"--scale: study {study.name} has no scale parameter; studies with one: "
                 + ", ".join(x.name for x in studies.STUDIES.values() if any(p.name == "scale" for p in x.params)))
            return EXIT_BAD_INPUT
        args.params = [f"scale={args.scale}", *args.params]
    for item in args.params:
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in known:
            _err(f"--set {item!r}: expected KEY=VALUE with KEY one of {', '.join(known)}")
            return EXIT_BAD_INPUT
        try:
            params[key.strip()] = known[key.strip()].parse(value.strip())
        except ValueError as e:
            _err(f"--set {e}")
            return EXIT_BAD_INPUT
    if _core_missing():
        return EXIT_RUN_FAILED
    out = args.out or Path("results") / study.name
    check_output_dir(out)
    if not emulate:
        _note_jobs(args)
    try:
        if emulate:
            result = study.emulate(out, reps=args.reps, links=links, progress=not args.no_progress, **params)
        else:
            result = study.run(out, reps=args.reps, links=links, jobs=args.jobs, scheduler=args.scheduler,
                               progress=not args.no_progress, **params)
    except ValueError as e:  # a parameter the study refuses (nothing ran)
        _err(f"{study.name}: {e}")
        return EXIT_BAD_INPUT
    except RuntimeError as e:
        _err(f"{study.name}: {e}")
        return EXIT_RUN_FAILED
    return _print_study(result, out)


def _print_study(result: Any, out: Path, reps_needed: bool = False) -> int:
    """Prints a finished study's verdicts (with ``reps_needed``, the replications that would
    settle each inconclusive one), its timings and paths; returns the exit code."""
    for f in result.findings["findings"]:
        st = f["statistic"]
        interval = ("exact" if st.get("exact") else f"[{_fmt(st['ci'][0])}, {_fmt(st['ci'][1])}]")
        stat = "" if not f["evaluated"] else (f": {st['name']} = {_fmt(st['value'])} {interval}, "
                                              f"n = {st['n_replications']}")
        ext = " (extension)" if f.get("extension") else ""
        need = [c.get("reps_needed") for c in f["checks"] if c["verdict"] == "inconclusive"]
        settle = ""
        if reps_needed and f["verdict"] == "inconclusive":
            n = max((x for x in need if x), default=None)
            settle = (f" (about {n} replications would settle it)" if n else
                      " (no number of replications would settle it at the observed effect)")
        print(f"{f['id']} {f['verdict']}{ext}: {f['claim']}{stat}{settle}")
    if result.findings.get("ledger"):
        from tcplab.studies.ledger import coverage_text

        print(f"claims ledger: {coverage_text(result.findings['ledger']['coverage'])}")
    t = result.timings
    print(f"{result.ran} task(s) run, {result.skipped} resumed; simulation {t.get('simulate_s')} s, "
          f"total {t.get('total_s')} s wall")
    print(f"findings: {out / 'findings.json'}")
    print(f"report written to {result.report}")
    if result.failures:
        _err(f"{len(result.failures)} task(s) failed; see {out / 'study.json'}")
        return EXIT_RUN_FAILED
    return EXIT_OK


def _cmd_study_file(args: argparse.Namespace) -> int:
    """``tcplab study run FILE.toml`` (python/tcplab/studies/studyfile.py) and ``tcplab study new NAME``."""
    from tcplab.studies import studyfile

    for flag, given in (("--links", args.links is not None), ("--set", bool(args.params)),
                        ("--scale", args.scale is not None), ("--mode", args.mode != "simulate" and args.name == "new"),
                        ("--preset", args.preset is not None), ("--only", args.only is not None),
                        ("--emulate", args.emulate), ("--reps-scale", args.reps_scale != 1.0),
                        ("--also", bool(args.also))):
        if given:
            _err(f"{flag}: not accepted by `tcplab study {args.name}`; it takes "
                 + ("--reps, --jobs, --scheduler, --mode, --out, --no-progress" if args.name == "run" else "only NAME"))
            return EXIT_BAD_INPUT
    if args.file is None:
        _err(f"`tcplab study {args.name}` needs " + ("the study file: tcplab study run FILE.toml" if args.name == "run"
                                                     else "a name: tcplab study new NAME"))
        return EXIT_BAD_INPUT
    if args.name == "new":
        path = Path(args.file if args.file.endswith(".toml") else args.file + ".toml")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", path.stem):
            _err(f"study new: the name {path.stem!r} may hold only letters, digits, '.', '_' and '-'")
            return EXIT_BAD_INPUT
        if path.exists():
            _err(f"study new: {path} exists; choose another name (nothing was written)")
            return EXIT_BAD_INPUT
        try:
            path.write_text(studyfile.TEMPLATE.format(name=path.stem))
        except OSError as e:
            _err(f"study new: cannot write {path}: {describe_os_error(e)}")
            return EXIT_BAD_INPUT
        print(f"wrote {path}; run it with: tcplab study run {path}")
        return EXIT_OK
    sf = studyfile.load(args.file)  # every field and every configuration's scenario, before anything runs
    emulate = args.mode == "emulate"
    if not _reps_ok(args.reps):
        return EXIT_BAD_INPUT
    if emulate and (args.jobs is not None or args.scheduler is not None):
        _err("--mode emulate runs one emulation at a time in this process (real time: two at once would share the "
             "cores and disturb each other's timing); leave out --jobs and --scheduler")
        return EXIT_BAD_INPUT
    if not _scheduler_ok(args.scheduler):
        return EXIT_BAD_INPUT
    if _core_missing():
        return EXIT_RUN_FAILED
    if emulate:
        from tcplab.emulation import EmulationFailed, EmulatorNotFound

        try:
            studyfile.check_emulable(sf)  # every configuration, before anything runs
        except (EmulatorNotFound, EmulationFailed) as e:
            _err(f"--mode emulate: {e}")
            return EXIT_RUN_FAILED
    out = args.out or Path("results") / (sf.study_name + ("-emulate" if emulate else ""))
    check_output_dir(out)
    if not emulate:
        _note_jobs(args)
    try:
        result = studyfile.run(sf, out, reps=args.reps, jobs=args.jobs, scheduler=args.scheduler,
                               progress=not args.no_progress, mode=args.mode)
    except RuntimeError as e:
        _err(f"{sf.study_name}: {e}")
        return EXIT_RUN_FAILED
    for w in result.findings.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    return _print_study(result, out, reps_needed=True)


def _cmd_check(args: argparse.Namespace) -> int:
    from tcplab.scenario import parse_toml, read_text
    from tcplab.sweeps import Experiment

    text = read_text(args.file)
    doc = parse_toml(text, str(args.file))
    if "sweep" in doc:  # the validation of `tcplab sweep`
        exp = Experiment.from_toml(text, str(args.file))
        _warn_about(exp)
        if args.json:
            print(json.dumps([json.loads(t.core_json) for t in exp.tasks()], indent=2))
        else:
            print(f"ok: {exp.points()} grid points x {exp.replications} replications")
        return EXIT_OK
    if "factors" in doc:  # a study file: the validation of `tcplab study run`, every configuration
        from tcplab.studies import studyfile

        sf = studyfile.StudyFile.from_toml(text, str(args.file))
        configs = sf.configurations()
        if args.json:
            print(json.dumps([{"configuration": c,
                               "scenario": Scenario.from_dict(sf.scenario_doc(c)).to_core(args.seed)}
                              for c in configs], indent=2))
        else:
            print(f"ok: {len(configs)} configurations x {sf.reps} replications")
        return EXIT_OK
    sc = Scenario.from_toml(text, str(args.file))  # the validation of `tcplab run` (load)
    _warn_about(sc)
    print(json.dumps(sc.to_core(args.seed), indent=2) if args.json else "ok")
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    from tcplab import studies

    reg = dict(registry.registry())
    # Studies live in Python (tcplab.studies); the rest comes from the Rust registry.
    reg["studies"] = [
        {"name": st.name, "summary": f"seed {st.seed}: {st.summary}", "default reps": st.default_reps,
         "links": ", ".join(st.links),
         "parameters (default)": ", ".join(f"{p.name} ({p.default})" for p in st.params)}
        for st in studies.STUDIES.values()
    ]
    # Quantities in the units a scenario file uses.
    reg["link_presets"] = [
        {**p, "rate": units.format_rate(p["rate"]),
         "delay": "set it in the scenario" if p["delay"] is None else units.format_time(p["delay"])}
        for p in reg.get("link_presets", [])
    ]
    from tcplab.scenario.network import ErrorSpec, QueueSpec

    # Queue defaults and error-model presets as a scenario file writes them ("100ms", not 100000000).
    reg["queues"] = [{**q, "defaults": _in_units(QueueSpec, q["name"], q["defaults"])} if q.get("defaults") else q
                     for q in reg.get("queues", [])]
    reg["error_models"] = [
        {**e, "presets": [{**pr, "params": _in_units(ErrorSpec, e["name"], pr["params"])} for pr in e["presets"]]}
        if e.get("presets") else e for e in reg.get("error_models", [])
    ]
    from tcplab.emulation import kernel_info

    kinfo = kernel_info()
    offered = kinfo["available_congestion_control"]
    reg["kernel_congestion_controls"] = [
        {"name": cc["name"], "in this kernel": "yes" if cc["name"] in offered else "no",
         "summary": f"tcplab emulate can run it (Linux {kinfo['release']})" if cc["name"] in offered
         else "not offered by this kernel (net.ipv4.tcp_available_congestion_control)"}
        for cc in reg.get("congestion_controls", [])
    ] + [{"name": n, "in this kernel": "yes", "summary": "kernel only (not in the simulator)"}
         for n in offered if n not in {cc["name"] for cc in reg.get("congestion_controls", [])}]
    if args.json:
        print(json.dumps(reg, indent=2, sort_keys=True))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 132)
    t = Table(title="Congestion controls (scenario: \\[cc] name = ..., params = { ... })")
    for c in ("name", "parameters (unit, default)", "summary", "reference"):
        t.add_column(c)
    for cc in reg.get("congestion_controls", []):
        params = "\n".join(
            f"{p['name']} ({p.get('unit') or '-'}, default {_fmt_default(p['default'])}): {p.get('doc', '')}" for p in cc["params"]
        ) or "none"
        t.add_row(cc["name"], params, cc.get("summary", ""), cc.get("reference", ""))
    console.print(t)

    profiles = reg.get("tcp_profiles", [])
    if profiles:
        from tcplab.scenario.tcp import TCP_KINDS as _TCP_KINDS, profile_value as _profile_value

        pt = Table(title="TCP profiles (\\[tcp] profile = ...; every knob can be overridden)")
        pt.add_column("knob")
        for p in profiles:
            pt.add_column(p["name"])
        knobs = list(_TCP_KINDS) + [k for k in profiles[0]["config"] if k not in _TCP_KINDS]
        for k in knobs:
            pt.add_row(k, *[_profile_value(p["name"], k) if k in _TCP_KINDS else json.dumps(p["config"].get(k)) for p in profiles])
        console.print(pt)
        for p in profiles:
            console.print(f"  [bold]{p['name']}[/bold]: {p.get('summary', '')}")

    titles = {"queues": "Queue disciplines (queue = { kind = ... })", "error_models": "Error models (error = { kind = ... })",
              "macs": "MACs (a link's mac = { kind = ... })", "link_layers": "Link layers (a link's link_layer = { kind = ... })",
              "link_presets": "Link presets", "studies": "Studies (tcplab study NAME)",
              "kernel_congestion_controls": "Congestion controls of this machine's kernel (tcplab emulate)"}
    for key, value in reg.items():
        if key in ("congestion_controls", "tcp_profiles") or not isinstance(value, list):
            continue
        gt = Table(title=titles.get(key, key.replace("_", " ").capitalize()))
        cols = [c for c in ("name", "summary", "reference") if any(c in e for e in value)]
        extra = sorted({k for e in value for k in e} - set(cols))
        for c in cols + extra:
            gt.add_column(c)
        for e in value:
            gt.add_row(*[str(e.get(c, "")) if not isinstance(e.get(c), (list, dict)) else json.dumps(e.get(c)) for c in cols + extra])
        console.print(gt)
    for key in ("link_presets", "studies"):
        if key not in reg:
            console.print(f"{titles[key]}: none registered in this build")
    return EXIT_OK


def _in_units(spec: Any, kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """A queue's or error model's values from the core (ns, bytes, packets) as a scenario file writes them.

    The scenario model of that ``kind`` (a member of ``spec``, the tagged union of the
    file format) reads them and writes them back with units; a key it does not know is
    shown as the core gave it.

    Example:
        >>> from tcplab.scenario.network import QueueSpec
        >>> _in_units(QueueSpec, "codel", {"interval": 100_000_000, "target": 5_000_000, "limit": 1000})
        {'interval': '100ms', 'target': '5ms', 'limit': '1000pkt'}
    """
    from typing import get_args

    model = next(m for m in get_args(get_args(spec)[0]) if m.model_fields["kind"].default == kind)
    shown = model.model_validate({k: v for k, v in values.items() if k in model.model_fields}).model_dump(mode="json")
    return {k: shown.get(k, v) for k, v in values.items()}


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.emulate:
        return _bench_emulate(args)
    from tcplab import _core

    names = args.scenario or list(_core.bench_scenarios())
    if args.large:
        names += [n for n in _core.bench_large_scenarios() if n not in names]
    for name in names:
        try:
            _core.bench_check(name)
        except ValueError as e:
            _err(f"--scenario: {e}")
            return EXIT_BAD_INPUT
    rows = []
    for name in names:
        # A fresh interpreter per scenario that imports only the extension (~11 MB),
        # so peak_rss_mb measures the simulation, not this CLI's pandas and matplotlib.
        code = "import sys, tcplab._core as c; print(c.bench(sys.argv[1]))"
        proc = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            _err(f"benchmark {name!r} failed: {proc.stderr.strip()}")
            return EXIT_RUN_FAILED
        line = proc.stdout.strip()
        if args.json:
            print(line, flush=True)
        rows.append(json.loads(line))
    if not args.json:
        from rich.console import Console
        from rich.table import Table

        t = Table(title="tcplab bench")
        for col in ("scenario", "wall (s)", "set-up (s)", "simulated (s)", "events/s", "bottleneck pkts/s",
                    "bottleneck pkts/CPU-s", "events/bottleneck pkt", "drops", "B/flow", "peak RSS (MB)"):
            t.add_column(col, justify="right")
        for r in rows:
            rss, per_cpu, per_pkt = r["peak_rss_mb"], r["bottleneck_pkts_per_cpu_s"], r["events_per_bottleneck_pkt"]
            t.add_row(r["scenario"], f"{r['wall_s']:.3f}", f"{r['setup_s']:.3f}", f"{r['sim_s']:.1f}",
                      f"{r['events_per_s']:,.0f}", f"{r['bottleneck_pkts_per_s']:,.0f}",
                      "-" if per_cpu is None else f"{per_cpu:,.0f}", "-" if per_pkt is None else f"{per_pkt:.2f}",
                      str(r["drops"]), f"{r['bytes_per_flow']:,.0f}", "-" if rss is None else f"{rss:.1f}")
        Console().print(t)
    return EXIT_OK


def _bench_emulate(args: argparse.Namespace) -> int:
    from tcplab.emulation import BENCH, EmulationFailed, EmulationRefused, EmulatorNotFound, bench

    names = args.scenario or list(BENCH)
    for name in names:
        if name not in BENCH:
            _err(f"--scenario: unknown emulation benchmark {name!r}; accepted: {', '.join(BENCH)}")
            return EXIT_BAD_INPUT
    rows = []
    try:
        for name in names:
            row = bench([name])[0]
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    except EmulationRefused as e:
        _err(str(e))
        return EXIT_BAD_INPUT
    except (EmulationFailed, EmulatorNotFound) as e:
        _err(str(e))
        return EXIT_RUN_FAILED
    if not args.json:
        from rich.console import Console
        from rich.table import Table

        t = Table(title="tcplab bench --emulate (1500-byte packets, one bulk CUBIC flow)")
        for col in ("scenario", "link (Mbit/s)", "goodput (Mbit/s)", "utilisation", "pkts/s", "sched p50 (µs)",
                    "p99 (µs)", "max (µs)", "behind", "load average"):
            t.add_column(col, justify="right")
        for r in rows:
            t.add_row(r["scenario"], f"{r['link_bps'] / 1e6:.0f}", f"{r['goodput_bps'] / 1e6:.1f}",
                      f"{r['utilisation']:.3f}", f"{r['pkts_per_s']:,.0f}", f"{r['sched_p50_s'] * 1e6:.0f}",
                      f"{r['sched_p99_s'] * 1e6:.0f}", f"{r['sched_max_s'] * 1e6:.0f}", str(r["behind"]), r["loadavg"])
        Console().print(t)
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from tcplab.report import ReportError, write_report

    if Path(args.dir).is_dir():
        check_output_dir(args.dir, option="DIR")  # figures are written into DIR/figures
    if args.out is not None:
        check_output_dir(Path(args.out).parent, option="--out")
    try:
        path = write_report(args.dir, args.out, cwnd_flows=args.cwnd_flows)
    except ReportError as e:
        _err(str(e))
        return EXIT_BAD_INPUT
    print(f"report written to {path}")
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
