"""``tcplab study iw-testbed --mode emulate``: seed 001's testbed with real Linux TCP.

Seed 001 (Chu & Wang, IETF 79, 2010) measured IW3 against IW10 on a Linux testbed. Its
study (:mod:`tcplab.studies.iw_testbed.study`) simulates that testbed; this mode runs a
reduced grid of the same configurations through the emulator too, so that the report
shows simulation and real Linux side by side with the differences in numbers
(:mod:`tcplab.studies.emulated` explains the three engines).

**Reduced grid** (real time: an emulated run lasts as long as its scenario):

- 20 Mbit/s, 500 packets: 96 % load; 1 and 5 opens; without and with the 2 background
  flows; windows of 5 s warm-up, ``measure_20m_s`` (20 s) measured, 5 s drain
  (30 s per run);
- 64 kbit/s, 40 packets: 75 % load; single opens; no background; 20 s warm-up,
  ``measure_64k_s`` (120 s), 60 s drain (200 s per run);
- each with the IW variants of ``iw`` (IW3 and IW10), SACK on, ``reps`` replications.

With the defaults: 8 + 2 = 10 runs, about 11 minutes of real time.

**This kernel's scenario.** The study's files describe the seed's kernels (2.6.26 and
2.6.35). For the ``sim`` and ``kernel`` engines the study's scenario changes only where
this host's kernel cannot do what it asks (:func:`host_document`):

- ``tcp.profile`` ``linux-2.6`` -> ``linux``: this kernel has PRR, RACK-TLP and the
  per-ACK RTT estimator, which the seed's kernels lacked (:func:`emulated.host_profile`);
- ``tcp.initial_rto`` 3 s -> 1 s (the files' 3 s, which is also the ``linux-2.6``
  profile's own: a document that leaves it unset is read as 3 s): Linux's initial RTO
  is 1 s since 3.1 (``TCP_TIMEOUT_INIT``, RFC 6298 §2.1) and no knob changes it;
- ``tcp.fin_ignores_cwnd`` -> whether this kernel still has ``tcp_cwnd_test``'s FIN
  exception (removed in Linux 6.10; "IW10 is really IW11" is gone there).

Transactions count when their *scheduled* start falls in the window (the kernel's
client may connect up to a few ms late; its UCT is measured from the actual connect).

Example:
    >>> p = EmulateParams()
    >>> [c[:4] for c in p.configurations()][:3], p.n_runs()
    ([('20m', 0.96, 1, False), ('20m', 0.96, 1, False), ('20m', 0.96, 1, True)], 10)
    >>> host_document({"tcp": {"profile": "linux-2.6", "initial_rto": "3s", "fin_ignores_cwnd": True}}, "6.18.4")[0]["tcp"]
    {'profile': 'linux', 'initial_rto': '1s', 'fin_ignores_cwnd': False}

    A ``linux-2.6`` document that leaves the initial RTO to the profile has its 3 s, and
    it is reported replaced too:

    >>> doc, changes = host_document({"tcp": {"profile": "linux-2.6"}}, "6.18.4")
    >>> doc["tcp"]["initial_rto"], changes[1][:27]
    ('1s', 'tcp.initial_rto 3s -> 1s: L')
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
from tcplab.studies.iw_testbed import study as M
from tcplab.studies.iw_testbed import testbed as S
from tcplab.studies.engine import BlockTask, StudyResult

__all__ = ["EmulateParams", "METRICS", "host_document", "emulate_block", "plan", "run", "DEFINITION"]

STUDY_VERSION = 1
#: Per link: load, warm-up s, drain s (the measured window is a parameter). 64 kbit/s runs
#: single opens without background only (200 s each); 20 Mbit/s runs ``opens`` x ``bg``.
GRID = {"20m": (0.96, 5.0, 5.0), "64k": (0.75, 20.0, 60.0)}
SEED_KERNELS = "Linux 2.6.26 and 2.6.35 (seed 001)"

METRICS = (
    E.Metric("uct_mean_s", "mean UCT", "s", relative=True, tolerance=0.10),
    E.Metric("uct_p50_s", "median UCT", "s", relative=True, tolerance=0.10),
    E.Metric("uct_p90_s", "90th percentile UCT", "s", relative=True, tolerance=0.15),
    E.Metric("plr", "bottleneck packet loss rate", "fraction", relative=False, tolerance=0.01),
    E.Metric("retx_per_txn", "retransmissions per transaction", "segments", relative=False, tolerance=0.1),
    E.Metric("occ_mean_pkts", "mean bottleneck queue", "packets", relative=True, tolerance=0.15),
    E.Metric("bg_goodput_bps", "background goodput", "bit/s", relative=True, tolerance=0.10),
)


def _fin_exception(release: str) -> bool:
    """Whether Linux ``release`` still sends a last sub-MSS FIN segment beyond cwnd (before 6.10)."""
    parts = [int(x) for x in release.replace("-", ".").split(".")[:2] if x.isdigit()]
    return len(parts) == 2 and tuple(parts) < (6, 10)


def _profile_initial_rto(profile: str) -> str:
    """The initial RTO of TCP ``profile`` as a scenario duration (``"3s"`` for ``linux-2.6``), from the core's registry."""
    from tcplab.registry import profile_config

    return f"{profile_config(profile)['initial_rto'] / 1e9:g}s"


def host_document(doc: dict[str, Any], release: str) -> tuple[dict[str, Any], list[str]]:
    """The configuration as Linux ``release`` can run it, and what changed (see the module doc)."""
    # An initial RTO the document leaves unset is its profile's: 3 s on ``linux-2.6`` (the 2.6 kernels'
    # TCP_TIMEOUT_INIT, RFC 2988), 1 s on ``linux``. Read before host_profile rewrites the profile.
    profile_rto = _profile_initial_rto((doc.get("tcp") or {}).get("profile", "linux"))
    d, changes = E.host_profile(doc)
    tcp = d.setdefault("tcp", {})
    if tcp.get("initial_rto", profile_rto) != "1s":
        changes.append(f"tcp.initial_rto {tcp.get('initial_rto', profile_rto)} -> 1s: "
                       "Linux's initial RTO is fixed at 1 s since 3.1 "
                       "(TCP_TIMEOUT_INIT, RFC 6298 §2.1)")
        tcp["initial_rto"] = "1s"
    fin = _fin_exception(release)
    if bool(tcp.get("fin_ignores_cwnd", False)) != fin:
        changes.append(f"tcp.fin_ignores_cwnd {tcp.get('fin_ignores_cwnd', False)} -> {fin}: Linux {release} "
                       + ("still has" if fin else "no longer has (removed in 6.10)")
                       + " tcp_cwnd_test's exception for a last segment carrying the FIN")
        tcp["fin_ignores_cwnd"] = fin
    return d, changes


@dataclass
class EmulateParams:
    """A reduced grid of the study for emulation (see the module doc).

    Attributes:
        reps: replications (core seed ``seed + r``; one is the default, real time is scarce).
        links: ``20m`` and/or ``64k``.
        seed: master seed.
        iw: IW variants (of :data:`tcplab.studies.iw_testbed.testbed.IW_VARIANTS`).
        measure_20m_s, measure_64k_s: measured windows (s).
        opens, bg: the 20 Mbit/s link's open counts and background settings.
    """

    reps: int = 1
    links: list[str] = field(default_factory=lambda: list(GRID))
    seed: int = 1
    iw: list[str] = field(default_factory=lambda: ["iw3", "iw10"])
    measure_20m_s: float = 20.0
    measure_64k_s: float = 120.0
    opens: list[int] = field(default_factory=lambda: [1, 5])
    bg: list[bool] = field(default_factory=lambda: [False, True])

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 1:
            raise ValueError(f"reps must be an integer >= 1, got {self.reps!r}")
        unknown = [l for l in self.links if l not in GRID]
        if unknown or not self.links:
            raise ValueError(f"unknown link(s) {unknown or self.links!r}; accepted: {', '.join(GRID)}")
        self.links = [l for l in GRID if l in self.links]
        bad = [v for v in self.iw if v not in S.IW_VARIANTS]
        if bad or not self.iw:
            raise ValueError(f"iw: unknown variant(s) {bad or self.iw!r}; accepted: {', '.join(S.IW_VARIANTS)}")
        if not self.opens or any(o not in S.OPENS for o in self.opens):
            raise ValueError(f"opens must be a non-empty list of {S.OPENS}, got {self.opens!r}")
        if not self.bg or any(not isinstance(b, bool) for b in self.bg):
            raise ValueError(f"bg must be a non-empty list of booleans, got {self.bg!r}")
        for name in ("measure_20m_s", "measure_64k_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {v!r}")

    def window(self, link: str) -> tuple[float, float, float]:
        """(warm-up, measured, drain) seconds of ``link``."""
        _, warm, drain = GRID[link]
        return warm, float(self.measure_20m_s if link == "20m" else self.measure_64k_s), drain

    def configurations(self) -> list[tuple[str, float, int, bool, str]]:
        """(link, load, opens, bg, iw) in report order."""
        def grid(link: str) -> list[tuple[int, bool]]:
            return [(o, b) for o in self.opens for b in self.bg] if link == "20m" else [(1, False)]

        return [(l, GRID[l][0], o, bg, iw) for l in self.links for o, bg in grid(l) for iw in self.iw]

    def n_runs(self) -> int:
        """Emulated runs (each configuration also runs twice in the simulator)."""
        return len(self.configurations()) * self.reps

    def real_time_s(self) -> float:
        """Scenario seconds of all emulated runs (the real time they take, set-up aside)."""
        return sum(sum(self.window(c[0])) for c in self.configurations()) * self.reps


_RUN_COLS = ("rep", "engine", "core_seed", *M._RUN_INT, *M._RUN_FLOAT, "wall_s", "sched_p50_s", "sched_p99_s",
             "sched_max_s", "behind", "kernel_release", "deviations")


def emulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """One configuration on the three engines for replications ``spec["reps"]``: ``runs`` and ``txns`` columns."""
    from tcplab.scenario import Scenario

    warm, measure, drain = spec["window"]
    t0, t1 = warm, warm + measure
    seed_doc = S.configure(S.base_scenario(spec["link"]), spec["iw"], spec["opens"], spec["load"], True, spec["bg"],
                           warm, measure, drain)
    host_doc, _ = host_document(seed_doc, spec["kernel"])
    runs: dict[str, list[Any]] = {k: [] for k in _RUN_COLS}
    txns: dict[str, list[Any]] = {k: [] for k in ("rep", "engine", "uct_s", "start_s")}
    for rep in range(*spec["reps"]):
        core_seed = int(spec["seed"]) + rep
        docs = E.run_engines(Scenario.from_dict(seed_doc).to_core(core_seed), Scenario.from_dict(host_doc).to_core(core_seed),
                             core_seed)
        for eng, (doc, facts) in docs.items():
            tr = doc["transactions"]
            if "scheduled_s" in tr:  # the window by the schedule, not by the kernel client's wake-up
                doc = {**doc, "transactions": {**tr, "start_s": tr["scheduled_s"]}}
            m, tx = M.run_metrics_of(doc, t0, t1)
            row = {"rep": rep, "engine": eng, "core_seed": core_seed, **m, **facts}
            for k in _RUN_COLS:
                runs[k].append(row[k])
            n = len(tx["uct_s"])
            txns["rep"] += [rep] * n
            txns["engine"] += [eng] * n
            txns["uct_s"] += tx["uct_s"].tolist()
            txns["start_s"] += tx["start_s"].tolist()
    return {"runs": {k: np.asarray(v) for k, v in runs.items()},
            "txns": {k: np.asarray(v, dtype=np.float32 if k in ("uct_s", "start_s") else None) for k, v in txns.items()}}


def plan(params: EmulateParams) -> list[BlockTask]:
    """One task per configuration (all replications); the emulator runs them one at a time."""
    release = E.host_kernel()
    tasks = []
    for link, load, opens, bg, iw in params.configurations():
        spec = {"study": S.NAME, "mode": "emulate", "version": STUDY_VERSION, "link": link, "load": load,
                "opens": opens, "bg": bg, "iw": iw, "reps": [0, params.reps], "seed": int(params.seed),
                "window": list(params.window(link)), "kernel": release, "scenario": S.LINKS[link].file.read_text()}
        tasks.append(BlockTask(engine.task_key(spec), spec, params.reps))
    return tasks


CONFIG = ["link", "load", "opens", "bg", "iw"]


class Definition(E.EmulatedDefinition):
    """Seed 001's reduced grid, simulated and emulated (:mod:`tcplab.studies.emulated`)."""

    config = CONFIG
    metrics = METRICS

    name = S.NAME
    seed_study = S.SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("runs", "txns")
    config_columns = (("link", "string"), ("load", "float64"), ("opens", "int64"), ("bg", "bool"), ("iw", "string"))
    empty_columns = (*CONFIG, "rep", "engine")
    block = staticmethod(emulate_block)

    def plan(self, params: EmulateParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (list(GRID).index(spec["link"]), spec["opens"], spec["bg"], list(S.IW_VARIANTS).index(spec["iw"]))

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: EmulateParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies import reporting as R

        figs = super().render_figures(tables, fig_dir, params)
        txns = tables.get("txns", pd.DataFrame())
        if len(txns):
            keys = [k for k in CONFIG if k in txns]
            groups = list(txns.groupby(keys, sort=False))
            cols = min(4, len(groups))
            rows = math.ceil(len(groups) / cols)
            fig, axes = R.figure(rows, cols, 3.4 * cols, 2.8 * rows)
            for ax in list(axes.flat)[len(groups):]:
                ax.set_visible(False)
            for ax, (key, part) in zip(axes.flat, groups):
                for eng, style in (("seed-sim", ":"), ("sim", "--"), ("kernel", "-")):
                    u = part[(part["engine"] == eng) & (part["rep"] == 0)]["uct_s"].to_numpy(float)
                    R.step(ax, u[np.isfinite(u)], linestyle=style, label=eng)
                k = dict(zip(keys, key))
                ax.set_title(f"{k['link']}, {k['opens']} open, {'bg' if k['bg'] else 'no bg'}, {k['iw'].upper()}",
                             fontsize=8)
                ax.set_xlabel("UCT (s)")
            for row in axes:
                row[0].set_ylabel("CDF")
            axes[0][0].legend(fontsize=7)
            figs.append({"stem": "uct_cdf", "section": "uct", **R.save(fig, fig_dir, "uct_cdf"),
                         "caption": "UCT CDFs of replication 0, per configuration: the simulator with the seed's kernel "
                                    "settings (dotted), with this kernel's (dashed), and the real kernel (solid)."})
        return figs

    def write_report(self, out: Path, params: EmulateParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies import reporting as R

        runs = tables["runs"]
        release = str(runs.loc[runs["engine"] == "kernel", "kernel_release"].iloc[0]) if len(runs) else E.host_kernel()
        _, changes = host_document(S.configure(S.base_scenario(params.links[0]), params.iw[0], 1, 0.5, True, False,
                                               1, 1, 1), release)
        intro = ("<p>Chu and Wang, <i>A testbed study on IW10 vs IW3</i>, IETF 79, 2010, on a reduced grid: the "
                 "simulator and real Linux TCP, through the same emulated network (tcplab-core's link and queue "
                 "models, run in real time by <code>tcplab-emu</code>). "
                 + R.provenance(manifest, f"{params.n_runs()} emulated runs ({params.real_time_s():g} s of scenario "
                                          "time), each also simulated twice") + "</p>"
                 + R.nav(["runs.parquet", "txns.parquet", "comparison.parquet", "findings.json", "study.json"]))
        grid = ("<h2 id='setup'>Set-up</h2><p>Configurations (link, load, opens, background, IW): "
                + ", ".join(html.escape(f"{l} {load:g} {o}-open {'bg' if bg else 'no-bg'} {iw}")
                            for l, load, o, bg, iw in params.configurations())
                + f"; SACK on; {params.reps} replication(s). Windows (warm-up, measured, drain): "
                + "; ".join(f"{l}: {params.window(l)}" for l in params.links)
                + " s. Transactions count by their scheduled start. The full simulated study is "
                  "<code>tcplab study iw-testbed</code>.</p>")
        return R.write_page(out, "tcplab study iw-testbed --mode emulate: simulation and real Linux (seed 001)", intro, [
            grid, E.kernel_html(runs, changes, SEED_KERNELS),
            E.comparison_html(tables["comparison"], CONFIG, METRICS),
            R.findings_html(findings, "seed 001 (emulated)", "docs/emulation.md"),
            R.figures_html(out, figs, {"agreement": "Kernel against simulator", "uct": "User completion time"}),
            R.failures_html(manifest, ("link", "load", "opens", "bg", "iw")), R.parameters_html(manifest)])


DEFINITION = Definition()


def run(out: str | Path, params: EmulateParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the emulated grid into ``out``; always one run at a time in this process."""
    return engine.run_study(DEFINITION, out, params or EmulateParams(), jobs=1, scheduler=None, progress=progress,
                            figures=figures)
