"""A fidelity grid: many scenarios x congestion controls, simulator against the kernel.

``tcplab fidelity DIR`` where ``DIR`` holds a ``grid.toml`` (docs/validation.md; the shipped grid is
``examples/fidelity/loss-grid/``)::

    name = "loss-grid"
    scenarios = ["loss1.toml", "loss5.toml"]   # scenario files next to grid.toml
    ccs = ["reno", "cubic", "bbr"]             # each scenario runs with each of these
    reps = 5                                   # kernel runs (and simulator seeds) per point
    tolerance = 0.05                           # relative goodput tolerance

Every *point* (scenario, congestion control) runs ``reps`` times on the real kernel
through the emulator (:func:`tcplab.emulate`, seeds 0 .. reps-1) and with the same seeds
in the simulator, so both sides draw the same random losses. The kernel is not
deterministic, so each kernel metric is a mean with a 95% Student-t interval
(:func:`tcplab.stats.mean_ci`). The metrics per run are those of
:func:`tcplab.fidelity.flow_metrics` for the scenario's one bulk flow: goodput,
retransmissions, RTOs (the kernel's ``tcpi_total_rto``), recovery episodes (runs of
recovery/loss states in the cwnd series) and the time-weighted mean cwnd.

A point *agrees* when ``|kernel - sim| <= max(tolerance * |sim|, CI half-width)`` on
goodput, the issue's criterion: within 5%, or within the kernel's 95% interval where
that is wider.

Kernel runs are kept under ``OUT/kernel/<point>/rep-<r>/`` and reused: re-running
resumes, and ``sim_only=True`` recomputes the simulator side against the stored kernel
runs (after a model change) without touching the kernel. Where only a grid's summary
(``grid.json``, as kept in ``docs/fidelity/``) is at hand, :func:`compare_stored` re-runs
the simulator side against its kernel means; with ``path_lateness`` it also puts the
emulator's measured lateness into the simulated path (:func:`with_access_lateness`), the
second reading of docs/validation.md, "The emulated path's delay variation".

Example:
    >>> agrees(sim=10.0, kernel=10.4, half_width=0.1, tolerance=0.05)
    True
    >>> agrees(sim=10.0, kernel=11.0, half_width=0.5, tolerance=0.05)
    False
    >>> agrees(sim=10.0, kernel=11.0, half_width=1.2, tolerance=0.05)
    True
"""

from __future__ import annotations

import html
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tcplab import __version__
from tcplab.fidelity import TRACES, flow_metrics, sysctls_html
from tcplab.results import RunResult, write_json_atomic, write_table_atomic
from tcplab.runner import run as run_sim
from tcplab.scenario import Scenario, load
from tcplab.scenario.errors import ScenarioError
from tcplab.scenario.locate import located, parse_toml, read_text
from tcplab.scenario.tcp import CcOptions
from tcplab.stats import mean_ci

__all__ = ["Grid", "GridResult", "GRID_METRICS", "load_grid", "is_grid", "run_grid", "agrees", "compare_stored",
           "with_access_lateness", "lateness_by_cc"]

#: The metrics the grid compares, with their units and the labels the report shows.
GRID_METRICS: dict[str, tuple[str, str]] = {
    "goodput_bps": ("bit/s", "goodput"),
    "retransmits": ("segments", "retransmissions"),
    "rtos": ("timeouts", "RTOs"),
    "loss_episodes": ("episodes", "recovery episodes"),
    "cwnd_mean_bytes": ("B", "time-weighted mean cwnd"),
}

GRID_FILE = "grid.toml"


class Grid(BaseModel):
    """``grid.toml``: the points of a fidelity grid (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("grid", description="Grid name, shown in the report.")
    scenarios: list[str] = Field(min_length=1, description="Scenario files, relative to grid.toml.")
    ccs: list[str] = Field(min_length=1, description="Congestion controls each scenario runs with.")
    reps: int = Field(5, ge=2, le=100, description="Kernel runs (and simulator seeds) per point; 2 or more for a CI.")
    tolerance: float = Field(0.05, gt=0.0, lt=1.0, description="Relative goodput tolerance.")
    tcp: dict[str, Any] = Field(default_factory=dict,
                                description="TCP knobs set on every scenario of the grid (a variant of another grid's "
                                            "points, e.g. with the options an earlier kernel run had off).")


@dataclass
class GridPoint:
    """One scenario with one congestion control."""

    id: str
    scenario_file: str
    cc: str
    scenario: Scenario


def is_grid(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a ``grid.toml``."""
    p = Path(path)
    return p.is_dir() and (p / GRID_FILE).is_file()


def load_grid(path: str | Path) -> tuple[Grid, list[GridPoint]]:
    """Reads ``DIR/grid.toml`` and every scenario it names, validating all of them.

    Raises:
        ScenarioError: a bad field of grid.toml (named, with its value and what is
            accepted) or of a scenario file (with its file and line).
    """
    from tcplab import registry

    d = Path(path)
    gfile = d / GRID_FILE
    text = read_text(gfile)
    doc = parse_toml(text, str(gfile))

    def bad(where: str, problem: str, value: Any, accepted: str | None = None) -> ScenarioError:
        return located(ScenarioError(where, problem, value=value, accepted=accepted), text, str(gfile))

    try:
        grid = Grid.model_validate(doc)
    except ValidationError as e:
        err = e.errors()[0]
        where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"]).lstrip(".") or "(file)"
        accepted = ", ".join(f"{k} ({f.description})" for k, f in Grid.model_fields.items()) \
            if err["type"] == "extra_forbidden" else None
        raise bad(where, err["msg"], err.get("input"), accepted) from None
    known = set(registry.cc_names())
    for i, cc in enumerate(grid.ccs):
        if cc not in known:
            raise bad(f"ccs[{i}]", "unknown congestion control", cc, ", ".join(sorted(known)))
    for i, f in enumerate(grid.scenarios):
        if not (d / f).is_file():
            raise bad(f"scenarios[{i}]", f"no such scenario file in {d}", f)
    points = []
    for f in grid.scenarios:
        base = load(d / f)
        if grid.tcp:
            try:
                tcp = type(base.tcp).model_validate({**base.tcp.model_dump(exclude_none=True), **grid.tcp})
            except ValidationError as e:
                err = e.errors()[0]
                raise bad("tcp." + ".".join(str(x) for x in err["loc"]), err["msg"], err.get("input")) from None
            base = base.model_copy(update={"tcp": tcp})
        for cc in grid.ccs:
            sc = base.model_copy(update={"cc": CcOptions(name=cc)})
            points.append(GridPoint(f"{Path(f).stem}-{cc}", f, cc, sc))
    return grid, points


def agrees(sim: float, kernel: float, half_width: float, tolerance: float) -> bool:
    """The grid's agreement rule (module docstring); a NaN half-width counts as 0."""
    hw = 0.0 if not math.isfinite(half_width) else half_width
    return abs(kernel - sim) <= max(tolerance * abs(sim), hw)


@dataclass
class GridResult:
    """``table``: one row per (point, metric); ``per_run``: one row per (point, side, rep, metric)."""

    grid: Grid
    table: pd.DataFrame
    per_run: pd.DataFrame
    out: Path
    report: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def _bulk_metrics(r: RunResult) -> dict[str, float]:
    m = flow_metrics(r)
    m = m[(m["kind"] == "bulk") & m["metric"].isin(list(GRID_METRICS))]
    if m["flow"].nunique() != 1:
        raise ValueError("a grid scenario must have exactly one bulk TCP flow")
    return dict(zip(m["metric"], m["value"].astype(float)))


def _kernel_dir(out: Path, point: GridPoint, rep: int) -> Path:
    return out / "kernel" / point.id / f"rep-{rep}"


def run_grid(
    path: str | Path,
    out: str | Path,
    *,
    sim_only: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    **emulate_kw: Any,
) -> GridResult:
    """Runs (or resumes) the grid in ``path`` into ``out``; see the module docstring.

    ``progress(done, total, message)`` is called around every kernel run. With
    ``sim_only`` every kernel run must already be stored under ``out``.

    Raises:
        FileNotFoundError: ``sim_only`` and a kernel run is missing (named).
        What :func:`tcplab.emulate` raises (a refusal comes before any run).
    """
    from tcplab.emulation import emulate

    grid, points = load_grid(path)
    o = Path(out)
    todo = [(p, r) for p in points for r in range(grid.reps) if not (_kernel_dir(o, p, r) / "meta.json").is_file()]
    if sim_only and todo:
        p, r = todo[0]
        raise FileNotFoundError(f"--sim-only: {len(todo)} kernel run(s) missing, first {_kernel_dir(o, p, r)}")
    say = progress or (lambda _d, _t, _m: None)
    t0 = time.perf_counter()
    for i, (p, r) in enumerate(todo):
        say(i, len(todo), f"kernel {p.id} rep {r + 1}/{grid.reps}")
        k = emulate(p.scenario, seed=r, trace=TRACES, **emulate_kw)
        k.write(_kernel_dir(o, p, r))  # meta.json last: a run counts once complete
    say(len(todo), len(todo), "simulating")
    rows, sched = [], []
    for p in points:
        for r in range(grid.reps):
            k = RunResult.read(_kernel_dir(o, p, r))
            e = k.meta.get("emulation") or {}
            sched.append({"point": p.id, "rep": r, **(e.get("sched_error") or {}), "behind": bool(e.get("behind"))})
            s = run_sim(p.scenario, seed=r, trace=TRACES)
            for side, res in (("sim", s), ("kernel", k)):
                for metric, v in _bulk_metrics(res).items():
                    rows.append({"point": p.id, "scenario": Path(p.scenario_file).stem, "cc": p.cc, "side": side,
                                 "rep": r, "metric": metric, "value": v})
    per_run = pd.DataFrame(rows)
    table = summarise(per_run, grid.tolerance)
    first = RunResult.read(_kernel_dir(o, points[0], 0)).meta.get("emulation", {})
    kernels = {first.get("kernel")}
    meta = {"grid": grid.name, "reps": grid.reps, "tolerance": grid.tolerance, "tcplab": __version__,
            "kernel": sorted(str(k) for k in kernels)[0], "kernel_runs_this_call": len(todo),
            # The sysctls the first point's first kernel run wrote, per host namespace.
            "kernel_sysctls": first.get("sysctls"),
            "wall_s": round(time.perf_counter() - t0, 1), "sched_error": sched,
            "behind": [f"{s['point']} rep {s['rep']}" for s in sched if s["behind"]]}
    o.mkdir(parents=True, exist_ok=True)
    write_table_atomic(table, o / "grid.parquet")
    write_table_atomic(per_run, o / "grid_runs.parquet")
    write_json_atomic({"meta": meta, "rows": json.loads(table.to_json(orient="records"))}, o / "grid.json")
    res = GridResult(grid, table, per_run, o, meta=meta)
    res.report = write_grid_report(res)
    return res


def with_access_lateness(sc: Scenario, mean_s: float) -> Scenario:
    """``sc`` with an exponential delay variation of mean ``mean_s`` on every access link,
    both directions (a dumbbell's ``sender_access`` and ``receiver_access``).

    The emulator measures how late it hands each packet to a host
    (``meta.emulation.sched_error.mean_s``); its reads from a host are taken to be as
    late (tcplab's assumption: they are not measured). The variation keeps packet order,
    as the emulator does.

    Example:
        >>> _, pts = load_grid("examples/fidelity/loss-grid")
        >>> with_access_lateness(pts[0].scenario, 27.7e-6).to_core()["topology"]["sender_access"]["jitter"]
        {'dist': 'exponential', 'mean': 27700}

    Raises:
        ValueError: the scenario's topology is not a dumbbell.
    """
    from tcplab.scenario.network import Dumbbell, Jitter

    topo = sc.topology
    if not isinstance(topo, Dumbbell):
        raise ValueError(f"path lateness needs a dumbbell (access links on both sides); topology is {topo.kind!r}")
    j = Jitter(dist="exponential", mean=f"{round(mean_s * 1e9)}ns")
    topo = topo.model_copy(update={"sender_access": topo.sender_access.model_copy(update={"jitter": j}),
                                   "receiver_access": topo.receiver_access.model_copy(update={"jitter": j})})
    return sc.model_copy(update={"topology": topo})


def lateness_by_cc(sched_error: list[dict[str, Any]]) -> dict[str, float]:
    """Per congestion control (the point id's last part), the median over its kernel runs
    of the emulator's mean lateness per packet, s.

    Example:
        >>> lateness_by_cc([{"point": "loss1-bbr", "mean_s": 2e-5}, {"point": "loss5-bbr", "mean_s": 4e-5},
        ...                 {"point": "loss5-bbr", "mean_s": 9e-5}, {"point": "loss1-reno", "mean_s": 6e-5}])
        {'bbr': 4e-05, 'reno': 6e-05}
    """
    by: dict[str, list[float]] = {}
    for s in sched_error:
        if s.get("mean_s") is not None:
            by.setdefault(s["point"].rsplit("-", 1)[1], []).append(float(s["mean_s"]))
    return {cc: float(np.median(v)) for cc, v in by.items()}


#: The metrics :func:`compare_stored` counts (goodput, retransmissions, mean cwnd).
COUNTED = ("goodput_bps", "retransmits", "cwnd_mean_bytes")


def compare_stored(path: str | Path, summary: str | Path, *, within: float, path_lateness: bool = False,
                   progress: Callable[[int, int, str], None] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
    """The simulator side of grid ``path`` (seeds 0 .. reps-1) against the kernel means of a
    stored grid summary (``grid.json``), for the points the summary has.

    Returns one row per (point, metric) of :data:`COUNTED`: the kernel's mean and 95%
    interval from the summary, the simulator's mean and sd now, the relative error
    ``(kernel - sim) / |sim|`` and ``inside`` (:func:`agrees` with ``within``); and the
    lateness applied per congestion control (empty without ``path_lateness``).

    Raises:
        ValueError: the summary is not a grid summary, or shares no point with the grid.
    """
    ref = json.loads(Path(summary).read_text())
    if not isinstance(ref, dict) or not isinstance(ref.get("rows"), list):
        raise ValueError(f"{summary}: not a grid summary (expected an object with 'rows', as grid.json)")
    kern = {(r["point"], r["metric"]): r for r in ref["rows"]}
    grid, points = load_grid(path)
    todo = [p for p in points if (p.id, COUNTED[0]) in kern]
    if not todo:
        raise ValueError(f"{summary}: none of the grid's points ({', '.join(p.id for p in points)}) is in it")
    gaps = [f"{p.id} {m}" for p in todo for m in COUNTED if (p.id, m) not in kern]
    if gaps:
        raise ValueError(f"{summary}: no kernel row for {', '.join(gaps)}")
    lateness = lateness_by_cc((ref.get("meta") or {}).get("sched_error") or []) if path_lateness else {}
    missing = sorted({p.cc for p in todo} - set(lateness)) if path_lateness else []
    if missing:
        raise ValueError(f"{summary}: no emulator lateness recorded (meta.sched_error) for {', '.join(missing)}")
    say = progress or (lambda _d, _t, _m: None)
    rows = []
    for i, p in enumerate(todo):
        say(i, len(todo), f"simulating {p.id}")
        sc = with_access_lateness(p.scenario, lateness[p.cc]) if path_lateness else p.scenario
        vals: dict[str, list[float]] = {}
        for r in range(grid.reps):
            for m, v in _bulk_metrics(run_sim(sc, seed=r, trace=TRACES)).items():
                vals.setdefault(m, []).append(v)
        for m in COUNTED:
            k, s = kern[(p.id, m)], float(np.mean(vals[m]))
            half = k["kernel_high"] - k["kernel"] if k.get("kernel_high") is not None else math.nan
            rows.append({"point": p.id, "cc": p.cc, "metric": m, "unit": GRID_METRICS[m][0], "kernel": k["kernel"],
                         "kernel_low": k.get("kernel_low"), "kernel_high": k.get("kernel_high"), "sim": s,
                         "sim_sd": float(np.std(vals[m], ddof=1)), "rel_error": (k["kernel"] - s) / abs(s) if s else math.nan,
                         "inside": agrees(s, k["kernel"], half, within)})
    say(len(todo), len(todo), "done")
    return pd.DataFrame(rows), lateness


def summarise(per_run: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """The grid table from per-run metrics: per (point, metric) the simulator's mean and
    sd, the kernel's mean and 95% interval, the relative error ``(kernel - sim) / |sim|``,
    the same error paired by seed (mean of the per-run errors, with its 95% interval)
    and, for goodput, whether the point agrees."""
    out = []
    for (point, metric), g in per_run.groupby(["point", "metric"], sort=False):
        s = g.loc[g["side"] == "sim", "value"].to_numpy(float)
        k = mean_ci(g.loc[g["side"] == "kernel", "value"])
        sim = float(np.mean(s))
        half = (k.high - k.value) if math.isfinite(k.high) else math.nan
        rel = (k.value - sim) / abs(sim) if sim != 0 else math.nan
        # Paired by seed (both sides drew the same losses first): the mean of the
        # per-run relative differences, a sharper view of a systematic offset.
        by_rep = g.pivot_table(index="rep", columns="side", values="value")
        ok = by_rep["sim"] != 0
        paired = mean_ci(((by_rep["kernel"] - by_rep["sim"]) / by_rep["sim"].abs())[ok])
        out.append({"point": point, "scenario": g["scenario"].iloc[0], "cc": g["cc"].iloc[0], "metric": metric,
                    "unit": GRID_METRICS[metric][0], "sim": sim, "sim_sd": float(np.std(s, ddof=1)) if len(s) > 1 else math.nan,
                    "kernel": k.value, "kernel_low": k.low, "kernel_high": k.high, "kernel_n": k.n, "rel_error": rel,
                    "paired_rel_error": paired.value, "paired_low": paired.low, "paired_high": paired.high,
                    "agrees": agrees(sim, k.value, half, tolerance) if metric == "goodput_bps" else None})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------
# Report


def goodput_figure(table: pd.DataFrame, fig_dir: Path, stem: str = "grid_goodput") -> dict[str, str]:
    """Simulator against kernel goodput for every point: one panel per congestion
    control, kernel means with their 95% intervals as error bars."""
    from tcplab.studies import reporting

    g = table[table["metric"] == "goodput_bps"]
    ccs = list(dict.fromkeys(g["cc"]))
    fig, axes = reporting.figure(1, len(ccs), 4.0 * len(ccs), 3.6)
    for ax, cc in zip(axes[0], ccs):
        t = g[g["cc"] == cc]
        x = np.arange(len(t))
        ax.bar(x - 0.2, t["sim"] / 1e6, width=0.4, label="simulator", color="#4C72B0")
        err = np.vstack([(t["kernel"] - t["kernel_low"]) / 1e6, (t["kernel_high"] - t["kernel"]) / 1e6])
        ax.bar(x + 0.2, t["kernel"] / 1e6, width=0.4, yerr=err, capsize=3, label="Linux kernel (95% CI)",
               color="#DD8452")
        for xi, ok in zip(x, t["agrees"]):
            if not ok:
                ax.annotate("×", (xi, 0), xytext=(0, -14), textcoords="offset points", ha="center", color="#C44E52")
        ax.set_xticks(x, t["scenario"], rotation=30, ha="right", fontsize=8)
        ax.set_title(cc)
        ax.set_ylabel("goodput (Mbit/s)")
    axes[0][0].legend(loc="upper right", fontsize=8)
    return reporting.save(fig, fig_dir, stem)


def write_grid_report(res: GridResult) -> Path:
    """``report.html``: the agreement summary, the goodput figure and the table."""
    from tcplab.studies import reporting

    figs = [{"stem": "grid_goodput", "section": "grid", **goodput_figure(res.table, res.out / "figures"),
             "caption": "Goodput per grid point: simulator mean over the seeds against the kernel mean with its "
                        "95% Student-t interval; × marks a point outside both the tolerance and the interval."}]
    g = res.table[res.table["metric"] == "goodput_bps"]
    m = res.meta
    p99 = [s.get("p99_s") for s in m["sched_error"] if s.get("p99_s") is not None]
    intro = (f"<p>tcplab {html.escape(__version__)}; grid <code>{html.escape(res.grid.name)}</code>: "
             f"{len(g)} points x {res.grid.reps} runs per side; kernel {html.escape(str(m['kernel']))}. "
             f"<b>{int(g['agrees'].sum())}/{len(g)} points agree</b> on goodput (|kernel − simulator| ≤ "
             f"max({res.grid.tolerance:.0%} of the simulator's, the kernel's 95% CI half-width)); "
             f"mean |error| {reporting.fmt(100 * g['rel_error'].abs().mean())}%, largest "
             f"{reporting.fmt(100 * g['rel_error'].abs().max())}%.</p>"
             + (f"<p>Emulator scheduling error p99 over the kernel runs: median "
                f"{reporting.fmt(1e6 * float(np.median(p99)))} µs, worst {reporting.fmt(1e6 * max(p99))} µs.</p>" if p99 else "")
             + ("<p class='not'>The emulator fell behind in: " + html.escape(", ".join(m["behind"])) + "</p>"
                if m["behind"] else ""))
    wide = res.table.pivot_table(index=["scenario", "cc"], columns="metric", values=["sim", "kernel"], sort=False)
    shown = pd.DataFrame(index=wide.index)
    for metric, (unit, label) in GRID_METRICS.items():
        scale = 1e6 if metric == "goodput_bps" else (1460 if metric == "cwnd_mean_bytes" else 1)
        u = "Mbit/s" if metric == "goodput_bps" else ("seg" if metric == "cwnd_mean_bytes" else unit)
        shown[f"{label} sim ({u})"] = wide[("sim", metric)] / scale
        shown[f"{label} kernel ({u})"] = wide[("kernel", metric)] / scale
    gi = g.set_index(["scenario", "cc"])
    shown["goodput error"] = gi["rel_error"].map(lambda v: f"{v:+.1%}")
    shown["paired by seed (95% CI)"] = [f"{v:+.1%} [{lo:+.1%}, {hi:+.1%}]" for v, lo, hi in
                                        zip(gi["paired_rel_error"], gi["paired_low"], gi["paired_high"])]
    shown["agrees"] = gi["agrees"].map({True: "yes", False: "NO"})
    body = [reporting.figures_html(res.out, figs, {"grid": "Goodput"}),
            "<h2 id='table'>Per point (means over the runs)</h2>", reporting.table_html(shown.reset_index()),
            "<p>Full table with intervals: <code>grid.parquet</code> / <code>grid.json</code>; every run's "
            "metrics: <code>grid_runs.parquet</code>; kernel runs: <code>kernel/</code>.</p>",
            sysctls_html(m.get("kernel_sysctls"))
            + "<p>(From the first point's first kernel run; every point's run records its own in "
              "<code>kernel/&lt;point&gt;/rep-&lt;r&gt;/meta.json</code>.)</p>"]
    return reporting.write_page(res.out, f"Fidelity grid: {res.grid.name}", intro, body)
