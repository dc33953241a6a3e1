"""Studies against real Linux: a study's configurations run in the simulator and, with
``--mode emulate``, through the emulator with the host's kernel TCP (docs/emulation.md; seed 003
puts its testbed and NS-2 side by side the same way).

A study's emulate mode is a reduced grid that fits real time (one emulated run lasts as
long as its scenario). Every configuration runs on three engines, with the same core
seed, so the models' draws (arrivals, sizes, voice departures, losses) are the same:

- ``seed-sim``: the simulator on the study's own scenario, as the seed's hosts ran it
  (their Linux 2.6 kernels: e.g. a 3 s initial RTO and the FIN quirk in seed 001);
- ``sim``: the simulator on the scenario the host kernel can run (``tcplab-emu check``
  accepts it): the study's scenario with the knobs this kernel cannot apply set to
  what it does (the study lists each such change);
- ``kernel``: the emulator on that same scenario: real kernel TCP through tcplab-core's
  own link and queue models.

``kernel`` against ``sim`` is the simulator's error against a real stack on identical
input (:func:`comparison`, :func:`agreement_findings`); ``sim`` against ``seed-sim`` is
what the kernel generation changes (the seed's 2.6 kernels against this host's), which
the emulator cannot show because it only has this host's kernel.

Emulations run one at a time in the study's process (``jobs = 1``): two at once would
share the 2 cores and disturb each other's timing. Each run's scheduling error (p99)
and whether the emulator fell behind are kept in the ``runs`` table.

Example:
    >>> m = Metric("uct_mean_s", "mean UCT", "s", relative=True, tolerance=0.1)
    >>> runs = pd.DataFrame({"cfg": ["a", "a", "a", "b", "b", "b"], "rep": [0] * 6,
    ...                      "engine": ["seed-sim", "sim", "kernel"] * 2, "uct_mean_s": [1.5, 1.0, 1.05, 2.5, 2.0, 2.2]})
    >>> c = comparison(runs, ["cfg"], [m])
    >>> c[["cfg", "sim", "kernel", "difference", "relative"]].round(3).values.tolist()
    [['a', 1.0, 1.05, 0.05, 0.05], ['b', 2.0, 2.2, 0.2, 0.1]]
    >>> f = agreement_findings(c, [m])
    >>> round(f[0]["checks"][0]["statistic"]["value"], 6), f[0]["checks"][0]["verdict"]   # mean of 5% and 10%; CI too wide
    (0.075, 'inconclusive')
"""

from __future__ import annotations

import copy
import html
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab.studies import engine
from tcplab.studies import findings as F

__all__ = ["ENGINES", "ENGINE_LABELS", "Metric", "run_engines", "sim_facts", "kernel_facts", "comparison", "agreement_findings",
           "comparison_html", "kernel_html", "render_scatter", "host_kernel"]

ENGINES = ("seed-sim", "sim", "kernel")
ENGINE_LABELS = {"seed-sim": "simulator, seed's kernel settings", "sim": "simulator, this kernel's settings",
                 "kernel": "real Linux (emulated network)"}


@dataclass(frozen=True)
class Metric:
    """A per-run metric compared between the simulator and the kernel.

    ``relative``: the difference is stated relative to the simulator's value (else
    absolute, for metrics that are often 0, such as loss rates); ``tolerance``: the
    agreement a check asks for, in the difference's unit (a fraction when relative).
    """

    column: str
    label: str
    unit: str
    relative: bool
    tolerance: float


def host_profile(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``doc`` with the seeds' ``linux-2.6`` profile replaced by ``linux`` (kernel 6.x), and the note.

    The emulator runs this host's kernel, which has PRR (Linux 3.2), RACK-TLP (4.4), the
    per-ACK RTT estimator and cwnd-based reductions: the ``sim`` engine models it with
    the profile that has them. The switch also changes the start-up wherever ``doc``
    leaves it to the profile: RFC 3390's initial window (3 segments at MSS 1448 and
    1460) becomes IW10 (Linux 2.6.39) and the 3 s initial RTO (RFC 2988) becomes 1 s
    (Linux 3.1, RFC 6298), as this kernel starts; the note says so. ``doc`` is a
    scenario document (TOML tables as dicts).

    Example:
        >>> doc, notes = host_profile({"tcp": {"profile": "linux-2.6", "sack": False}})
        >>> doc, notes[0][:32]
        ({'tcp': {'profile': 'linux', 'sack': False}}, 'tcp.profile linux-2.6 -> linux: ')
        >>> "RFC 3390's 3 segments -> IW10" in notes[0], "3 s -> 1 s initial RTO" in notes[0]
        (True, True)
    """
    d = copy.deepcopy(doc)
    tcp = d.get("tcp") or {}
    if tcp.get("profile") != "linux-2.6":
        return d, []
    tcp["profile"] = "linux"
    return d, ["tcp.profile linux-2.6 -> linux: this kernel has PRR (Linux 3.2) and RACK-TLP (4.4), "
               "which the seed's 2.6 kernels lacked; it also starts as this kernel does where the scenario "
               "leaves the start-up to the profile: RFC 3390's 3 segments -> IW10 (Linux 2.6.39) and a "
               "3 s -> 1 s initial RTO (Linux 3.1, RFC 6298)"]


def host_kernel() -> str:
    """This host's kernel release (``/proc/sys/kernel/osrelease``)."""
    from tcplab.emulation import kernel_info

    return str(kernel_info()["release"])


def run_engines(seed_core: dict[str, Any], host_core: dict[str, Any], core_seed: int
                ) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Runs one configuration on the three engines: ``{engine: (result document, run facts)}``.

    ``seed_core`` and ``host_core`` are resolved core scenarios (``Scenario.to_core``);
    the facts are the wall time and, for the kernel, the emulator's scheduling error
    (p50/p99/max, s), whether it fell behind, the kernel release and the deviations
    the emulator accepted (joined by `` | ``).
    """
    from tcplab import _core
    from tcplab.emulation import emulate_core

    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for engine, core in (("seed-sim", seed_core), ("sim", host_core)):
        t0 = time.perf_counter()
        doc = json.loads(_core.run(json.dumps(core), core_seed))
        out[engine] = (doc, sim_facts(time.perf_counter() - t0))
    doc, wall = emulate_core(host_core, core_seed, quiet=True)
    out["kernel"] = (doc, kernel_facts(doc, wall))
    return out


def sim_facts(wall_s: float) -> dict[str, Any]:
    """A simulated run's facts, in the columns of :func:`kernel_facts` (no scheduling error).

    Example:
        >>> sim_facts(0.5)["sched_p99_s"], sim_facts(0.5)["behind"]
        (nan, False)
    """
    return {"wall_s": wall_s, "sched_p50_s": math.nan, "sched_p99_s": math.nan, "sched_max_s": math.nan,
            "behind": False, "kernel_release": "", "deviations": ""}


def kernel_facts(doc: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """An emulated run's facts from its result document (``meta.emulation``): the wall time,
    the emulator's scheduling error (p50/p99/max, s), whether it fell behind, the kernel
    release and the deviations the emulator accepted (joined by `` | ``)."""
    e = doc["meta"]["emulation"]
    s = e["sched_error"]
    return {"wall_s": wall_s, "sched_p50_s": s["p50_s"], "sched_p99_s": s["p99_s"], "sched_max_s": s["max_s"],
            "behind": bool(e["behind"]), "kernel_release": str(e.get("kernel", "")),
            "deviations": " | ".join(e.get("deviations", []))}


def comparison(runs: pd.DataFrame, config: Sequence[str], metrics: Sequence[Metric]) -> pd.DataFrame:
    """Per configuration, replication and metric: the three engines side by side.

    Columns: ``config...``, ``rep``, ``metric``, ``label``, ``unit``, ``seed-sim``,
    ``sim``, ``kernel``, ``difference`` (kernel - sim), ``relative`` ((kernel - sim) /
    sim; NaN when sim is 0) and ``generation`` (sim - seed-sim).
    """
    keys = [*config, "rep"]
    rows = []
    # Only the combinations that ran (a pivot table would add every cross product of the keys).
    cols = [m.column for m in metrics if m.column in runs]
    wide = runs.set_index([*keys, "engine"])[cols].unstack("engine")
    for idx in wide.index:
        key = dict(zip(keys, idx if isinstance(idx, tuple) else (idx,)))
        for m in metrics:
            v = {e: float(wide.loc[idx, (m.column, e)]) if (m.column, e) in wide.columns else math.nan for e in ENGINES}
            if all(math.isnan(x) for x in v.values()):
                continue
            diff = v["kernel"] - v["sim"]
            rel = diff / abs(v["sim"]) if v["sim"] not in (0.0,) and math.isfinite(v["sim"]) else math.nan
            rows.append({**key, "metric": m.column, "label": m.label, "unit": m.unit, **v, "difference": diff,
                         "relative": rel, "generation": v["sim"] - v["seed-sim"]})
    return pd.DataFrame(rows)


def agreement_findings(comp: pd.DataFrame, metrics: Sequence[Metric], fid: str = "E1") -> list[dict[str, Any]]:
    """One finding, "the simulator reproduces the real kernel", with a check per metric.

    Statistic: the mean over configurations (and replications) of the kernel's
    difference from the simulator (relative or absolute, per :class:`Metric`), with a
    Student-t interval over them, judged as an equivalence claim
    (:class:`tcplab.studies.findings.Equivalent`) with the metric's tolerance as its
    margin: held when the whole interval lies within ± the tolerance, contradicted
    when it lies wholly outside, inconclusive otherwise. A finite
    difference is required: runs where either side is infinite or undefined are left
    out and counted (``left_out``).
    """
    checks = []
    for i, m in enumerate(metrics, start=1):
        part = comp[comp["metric"] == m.column]
        col = "relative" if m.relative else "difference"
        vals = part[col].to_numpy(dtype=float)
        ok = np.isfinite(vals)
        est = F.estimate(vals[ok]) if ok.sum() else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}
        unit = "fraction" if m.relative else m.unit
        what = "(kernel - sim) / sim" if m.relative else "kernel - sim"
        per = [{k: r[k] for k in part.columns if k not in ("metric", "label", "unit", "generation")}
               | {"value": r[col], "ci": [math.nan, math.nan], "n": 1} for _, r in part.iterrows()]
        checks.append(F.check(
            f"{fid}{chr(ord('a') + i - 1)}", f"The simulator reproduces the kernel's {m.label} within ±{m.tolerance:g} {unit}",
            F.Equivalent(m.tolerance), f"mean {what}, {m.label}", unit, est, per,
            scope=f"{what} of the {m.label} per configuration and replication, on the same scenario and core seed",
            left_out=int((~ok).sum())))
    return [F.finding(fid, "The simulator reproduces real Linux TCP on the same emulated network (same models, same "
                           "draws), metric by metric", checks, not_run="not evaluated: nothing was emulated")]


def comparison_html(comp: pd.DataFrame, config: Sequence[str], metrics: Sequence[Metric]) -> str:
    """The side-by-side section: per metric, a table of the three engines and the differences."""
    from tcplab.studies.reporting import fmt, table_html

    parts = ["<h2 id='side-by-side'>Simulation and real Linux, side by side</h2>",
             "<p class='small'>Every configuration ran with the same core seed on three engines: "
             + "; ".join(f"<b>{e}</b> = {html.escape(l)}" for e, l in ENGINE_LABELS.items())
             + ". <i>difference</i> = kernel - sim, <i>relative</i> = (kernel - sim) / sim: the simulator's error "
               "against a real stack on identical input. <i>generation</i> = sim - seed-sim: what the kernel "
               "generation changes in the simulator.</p>"]
    summary = []
    for m in metrics:
        part = comp[comp["metric"] == m.column]
        if not len(part):
            continue
        rel = part["relative"].to_numpy(float)
        dif = part["difference"].to_numpy(float)
        summary.append({"metric": m.label, "unit": m.unit, "seed-sim (mean)": part["seed-sim"].mean(),
                        "sim (mean)": part["sim"].mean(), "kernel (mean)": part["kernel"].mean(),
                        "kernel - sim (mean)": np.nanmean(dif) if np.isfinite(dif).any() else math.nan,
                        "relative (mean)": np.nanmean(rel[np.isfinite(rel)]) if np.isfinite(rel).any() else math.nan,
                        "|relative| (max)": np.nanmax(np.abs(rel[np.isfinite(rel)])) if np.isfinite(rel).any() else math.nan,
                        "configs": len(part)})
    if summary:
        parts.append("<h3>Summary over the configurations</h3>" + table_html(pd.DataFrame(summary)))
    for m in metrics:
        part = comp[comp["metric"] == m.column]
        if not len(part):
            continue
        t = part[[*config, "rep", "seed-sim", "sim", "kernel", "difference", "relative", "generation"]]
        d = t["difference"].to_numpy(float)
        d = d[np.isfinite(d)]
        span = f"kernel - sim from {fmt(float(d.min()))} to {fmt(float(d.max()))}" if len(d) else "no finite difference"
        parts.append(f"<details><summary>{html.escape(m.label)} ({html.escape(m.unit)}), per configuration: "
                     f"{span}</summary>{table_html(t)}</details>")
    return "\n".join(parts)


def kernel_html(runs: pd.DataFrame, deviations: Sequence[str], seed_kernels: str) -> str:
    """Which kernels each engine stands for, the changes made for this kernel (``deviations``,
    plus what the emulator accepted, from the runs' ``deviations`` column), and the emulator's timing."""
    from tcplab.studies.reporting import fmt

    k = runs[runs["engine"] == "kernel"]
    accepted = sorted({d for cell in (k["deviations"] if "deviations" in k else []) for d in str(cell).split(" | ") if d})
    deviations = [*deviations, *(f"accepted by the emulator (the kernel does this regardless): {d}" for d in accepted)]
    release = html.escape(str(k["kernel_release"].iloc[0])) if len(k) and "kernel_release" in k else "?"
    items = "".join(f"<li>{html.escape(d)}</li>" for d in deviations)
    timing = ""
    if len(k):
        timing = (f"<p>Emulator timing over {len(k)} runs: scheduling error p99 from {fmt(float(k['sched_p99_s'].min()) * 1e6)}"
                  f" to {fmt(float(k['sched_p99_s'].max()) * 1e6)} µs, max {fmt(float(k['sched_max_s'].max()) * 1e3)} ms; "
                  f"{int(k['behind'].sum())} run(s) fell behind the late bound (1 ms p99) and are flagged in "
                  f"<code>runs.parquet</code>; real time {fmt(float(k['wall_s'].sum()))} s in total.</p>")
    return (f"<h2 id='kernels'>Kernels</h2><p>The seed's testbed ran {html.escape(seed_kernels)}. The emulated runs use "
            f"<b>this host's kernel, Linux {release}</b>: the emulator has no other. The <b>seed-sim</b> engine is the "
            f"simulator on the study's own scenario (the seed's kernel settings); <b>sim</b> and <b>kernel</b> run the "
            f"scenario this kernel can run, which differs from the study's in:</p><ul>{items or '<li>nothing</li>'}</ul>"
            + timing)


def render_scatter(comp: pd.DataFrame, metrics: Sequence[Metric], fig_dir: Path, stem: str, section: str
                   ) -> list[dict[str, Any]]:
    """One panel per metric: the kernel's value against the simulator's, per configuration, with y = x."""
    from tcplab.studies import reporting

    ms = [m for m in metrics if len(comp[comp["metric"] == m.column])]
    if not ms:
        return []
    cols = min(3, len(ms))
    rows = math.ceil(len(ms) / cols)
    fig, axes = reporting.figure(rows, cols, 3.6 * cols, 3.2 * rows)
    for ax, m in zip(axes.flat, ms):
        part = comp[comp["metric"] == m.column]
        x, y = part["sim"].to_numpy(float), part["kernel"].to_numpy(float)
        fin = np.isfinite(x) & np.isfinite(y)
        ax.scatter(x[fin], y[fin], s=18, label="sim (this kernel's settings)")
        xs, ys = part["seed-sim"].to_numpy(float), part["kernel"].to_numpy(float)
        fs = np.isfinite(xs) & np.isfinite(ys)
        ax.scatter(xs[fs], ys[fs], s=14, marker="x", label="seed-sim")
        both = np.concatenate([x[fin], y[fin], xs[fs]]) if fin.any() or fs.any() else np.array([0.0, 1.0])
        lo, hi = float(np.min(both)), float(np.max(both))
        pad = (hi - lo) * 0.05 or abs(hi) * 0.05 or 1.0
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=0.8)
        ax.set_xlabel(f"simulator, {m.unit}")
        ax.set_ylabel(f"kernel, {m.unit}")
        ax.set_title(m.label, fontsize=9)
    for ax in list(axes.flat)[len(ms):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    files = reporting.save(fig, fig_dir, stem)
    return [{"stem": stem, "section": section, **files,
             "caption": "Real Linux against the simulator, per configuration (dots: the same scenario; crosses: the "
                        "simulator with the seed's kernel settings); on the grey line they agree."}]


class EmulatedDefinition(engine.StudyDefinition):
    """What every study's ``--mode emulate`` definition shares: the run count, the
    side-by-side analysis (:func:`comparison`, the ``E1`` agreement finding) and the
    scatter figure. A study's mode sets :attr:`config` (its configuration columns),
    :attr:`metrics` and :attr:`comparison_unit`, and adds its set-up and report.
    """

    #: The agreement finding is tcplab's, not the seed's: no claims ledger.
    ledger = False
    #: Columns that name a configuration in the ``runs`` table.
    config: Sequence[str] = ()
    #: The metrics compared between the simulator and the kernel.
    metrics: Sequence[Metric] = ()
    #: What one compared row is, for ``findings.json``'s description.
    comparison_unit: str = "configuration and replication"

    def n_runs(self, params: Any) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: Any) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        comp = comparison(tables["runs"], self.config, self.metrics)
        doc = F.document(self.name, self.seed_study, asdict(params), params.reps, params.links,
                         "simulator and real Linux on the same scenario, core seed and emulated network; per "
                         + self.comparison_unit, agreement_findings(comp, self.metrics), mode="emulate")
        return {"comparison": comp}, doc

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: Any) -> list[dict[str, Any]]:
        return render_scatter(tables["comparison"], self.metrics, fig_dir, "sim_vs_kernel", "agreement")
