"""``tcplab study home-gateway --mode emulate``: seed 003's home gateway with real Linux TCP.

Seed 003 (Stewart et al., ACM MMSys 2011; ``docs/seeds/003_c9c9fd5920f3a08e.txt``) put its
FreeBSD/Linux testbed and NS-2 side by side ("Testbed & NS-2"). Here the simulator and this host's real kernel TCP run the same configurations
through the same emulated ADSL line (tcplab-core's link and drop-tail models, in real
time), and the report shows them side by side with the differences in numbers
(:mod:`tcplab.studies.emulated` explains the three engines).

**Reduced grid** (real time: an emulated run lasts ``duration_s``, 30 s by default):
ADSL1 (``--links`` may add ADSL2), minimum RTT 100 ms (``rtts_ms``), PS queues of
``ps_limits`` packets (13, 40), FB-strict and FB-loose of ``fb_limits`` bytes (20 000,
60 000), both directions, ``count_in_service``; NewReno and CUBIC; ``reps``
replications. Defaults: 6 queues x 2 TCPs = 12 runs, about 6 minutes.

**Kernels.** The seed's hosts ran FreeBSD NewReno and Linux 2.6 CUBIC; the study's
NewReno is Linux's ``reno`` with SACK off (RFC 6582 recovery), and the emulated runs use
this host's kernel for both. ``seed-sim`` runs the study's scenario (profile
``linux-2.6``, the seed's kernels, with RFC 3390's IW and a 3 s initial RTO); ``sim`` the same with profile
``linux`` (kernel 6.x: PRR, RACK-TLP, per-ACK RTT estimator, IW10 and a 1 s initial RTO;
:func:`emulated.host_profile`), the model of the
kernel the emulator runs; the kernel's accepted deviations (behaviour the simulator's profile does not model,
from ``meta.emulation.deviations``) are listed in the report.

Example:
    >>> p = EmulateParams()
    >>> p.configurations()[:2], p.n_runs()
    ([('adsl1', 100, 'slot', 13), ('adsl1', 100, 'slot', 40)], 12)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab.studies import emulated as E
from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult
from tcplab.studies.home_gateway import config as S
from tcplab.studies.home_gateway.study import RUN_COLUMNS, run_row

__all__ = ["EmulateParams", "METRICS", "emulate_block", "plan", "run", "DEFINITION"]

#: 3: the ``seed-sim`` engine's ``linux-2.6`` profile starts with RFC 3390's IW and a 3 s initial RTO.
STUDY_VERSION = 3
SEED_KERNELS = "FreeBSD (NewReno) and Linux 2.6 (CUBIC) hosts (seed 003)"

METRICS = (
    E.Metric("goodput_bps", "bulk goodput", "bit/s", relative=True, tolerance=0.05),
    E.Metric("voice_loss", "downstream voice loss", "fraction", relative=False, tolerance=0.01),
    E.Metric("iowd_mean_s", "mean induced voice OWD", "s", relative=True, tolerance=0.15),
    E.Metric("iowd_p95_s", "95th percentile induced voice OWD", "s", relative=True, tolerance=0.15),
    E.Metric("q_mean_bytes", "mean downstream queue", "B", relative=True, tolerance=0.15),
    E.Metric("retransmits", "bulk retransmissions", "segments", relative=True, tolerance=0.25),
    E.Metric("voice_up_loss", "upstream voice loss", "fraction", relative=False, tolerance=0.01),
)


@dataclass
class EmulateParams:
    """A reduced grid of the study for emulation (see the module doc)."""

    reps: int = 1
    links: list[str] = field(default_factory=lambda: ["adsl1"])
    seed: int = 1
    rtts_ms: list[int] = field(default_factory=lambda: [100])
    duration_s: float = 30.0
    ps_limits: list[int] = field(default_factory=lambda: [13, 40])
    fb_limits: list[int] = field(default_factory=lambda: [20_000, 60_000])

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 1:
            raise ValueError(f"reps must be an integer >= 1, got {self.reps!r}")
        unknown = [l for l in self.links if l not in S.LINKS]
        if unknown or not self.links:
            raise ValueError(f"unknown link(s) {unknown or self.links!r}; accepted: {', '.join(S.LINKS)}")
        self.links = [l for l in S.LINKS if l in self.links]
        if not self.rtts_ms or any(isinstance(r, bool) or not isinstance(r, int) or r < 2 for r in self.rtts_ms):
            raise ValueError(f"rtts_ms must be integers >= 2 (ms), got {self.rtts_ms!r}")
        if not (isinstance(self.duration_s, (int, float)) and math.isfinite(self.duration_s) and self.duration_s >= 5):
            raise ValueError(f"duration_s must be at least 5 s, got {self.duration_s!r}")
        if any(not isinstance(x, int) or x < 1 for x in self.ps_limits):
            raise ValueError(f"ps_limits must be packet counts >= 1, got {self.ps_limits!r}")
        if any(not isinstance(x, int) or x < 1500 for x in self.fb_limits):
            raise ValueError(f"fb_limits must be byte counts >= 1500, got {self.fb_limits!r}")
        if not self.ps_limits and not self.fb_limits:
            raise ValueError("ps_limits and fb_limits are both empty: nothing to run")

    def configurations(self) -> list[tuple[str, int, str, int]]:
        """(link, rtt_ms, semantic, limit) in report order."""
        return [(l, r, sem, lim) for l in self.links for r in self.rtts_ms for sem in S.SEMANTICS
                for lim in (self.ps_limits if sem == "slot" else self.fb_limits)]

    def n_runs(self) -> int:
        """Emulated runs: configurations x 2 TCPs x reps (each also simulated twice)."""
        return len(self.configurations()) * len(S.VARIANTS) * self.reps

    def real_time_s(self) -> float:
        return self.n_runs() * float(self.duration_s)


_RUN_COLS = (*RUN_COLUMNS, "engine", "wall_s", "sched_p50_s", "sched_p99_s", "sched_max_s", "behind",
             "kernel_release", "deviations")


def emulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """One (link, RTT, semantic, limit) with both TCPs on the three engines: ``runs`` columns."""
    from tcplab.scenario import Scenario

    _, base = S.base_scenario(spec["link"])
    runs: dict[str, list[Any]] = {k: [] for k in _RUN_COLS}
    for rep in range(*spec["reps"]):
        core_seed = int(spec["seed"]) + rep
        for v in S.VARIANTS:
            doc = S.configure(base, spec["rtt_ms"], spec["semantic"], spec["limit"], v.name, spec["duration_s"],
                              record={"owd": ["voice_down"]})
            core = Scenario.from_dict(doc).to_core(core_seed)
            host_core = Scenario.from_dict(E.host_profile(doc)[0]).to_core(core_seed)
            base_owd = S.base_owd_s(core, S.VOICE_BYTES)
            for eng, (out, facts) in E.run_engines(core, host_core, core_seed).items():
                row, _ = run_row(out, spec["semantic"], int(spec["limit"]), v.name, rep, core_seed, base_owd)
                row.update(engine=eng, **facts)
                for k in _RUN_COLS:
                    runs[k].append(row[k])
    return {"runs": {k: np.asarray(v) for k, v in runs.items()}}


def plan(params: EmulateParams) -> list[BlockTask]:
    """One task per queue configuration (both TCPs, all replications)."""
    release = E.host_kernel()
    tasks = []
    for link, rtt, sem, limit in params.configurations():
        spec = {"study": S.NAME, "mode": "emulate", "version": STUDY_VERSION, "link": link, "rtt_ms": rtt,
                "semantic": sem, "limit": limit, "reps": [0, params.reps], "seed": int(params.seed),
                "duration_s": float(params.duration_s), "kernel": release,
                "scenario": S.base_scenario(link)[0]}
        tasks.append(BlockTask(engine.task_key(spec), spec, params.reps * len(S.VARIANTS)))
    return tasks


CONFIG = ["link", "rtt_ms", "semantic", "limit", "cc"]


class Definition(E.EmulatedDefinition):
    """Seed 003's reduced grid, simulated and emulated (:mod:`tcplab.studies.emulated`)."""

    config = CONFIG
    metrics = METRICS
    comparison_unit = "configuration, TCP and replication"

    name = S.NAME
    seed_study = S.SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("runs",)
    config_columns = (("link", "string"), ("rtt_ms", "int64"), ("semantic", "string"))
    empty_columns = (*CONFIG, "rep", "engine")
    block = staticmethod(emulate_block)

    def plan(self, params: EmulateParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (S.LINKS.index(spec["link"]), spec["rtt_ms"], S.SEMANTICS.index(spec["semantic"]), spec["limit"])

    def write_report(self, out: Path, params: EmulateParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies import reporting as R

        runs = tables["runs"]
        notes = E.host_profile({"tcp": {"profile": "linux-2.6"}})[1]
        intro = ("<p>Stewart et al., <i>Multimedia-unfriendly TCP congestion control and home gateway queue "
                 "management</i>, ACM MMSys 2011, on a reduced grid: the simulator and real Linux TCP through the same "
                 "emulated ADSL line (tcplab-core's link and drop-tail models, run in real time by "
                 "<code>tcplab-emu</code>), as the seed put its testbed beside NS-2. "
                 + R.provenance(manifest, f"{params.n_runs()} emulated runs ({params.real_time_s():g} s of scenario "
                                          "time), each also simulated twice") + "</p>"
                 + R.nav(["runs.parquet", "comparison.parquet", "findings.json", "study.json"]))
        setup = ("<h2 id='setup'>Set-up</h2><p>Configurations (link, RTT, queue, limit): "
                 + ", ".join(html.escape(f"{S.LINK_LABELS[l]} {r} ms {S.SEMANTIC_LABELS[s]} {lim}")
                             for l, r, s, lim in params.configurations())
                 + f"; NewReno and CUBIC; {params.duration_s:g} s per run; {params.reps} replication(s). The full "
                   "simulated study is <code>tcplab study home-gateway</code>.</p>")
        return R.write_page(out, "tcplab study home-gateway --mode emulate: simulation and real Linux (seed 003)", intro, [
            setup, E.kernel_html(runs, notes, SEED_KERNELS), E.comparison_html(tables["comparison"], CONFIG, METRICS),
            R.findings_html(findings, "seed 003 (emulated)", "docs/emulation.md"),
            R.figures_html(out, figs, {"agreement": "Kernel against simulator"}),
            R.failures_html(manifest, ("link", "rtt_ms", "semantic", "limit")), R.parameters_html(manifest)])


DEFINITION = Definition()


def run(out: str | Path, params: EmulateParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the emulated grid into ``out``; always one run at a time in this process."""
    return engine.run_study(DEFINITION, out, params or EmulateParams(), jobs=1, scheduler=None, progress=progress,
                            figures=figures)
