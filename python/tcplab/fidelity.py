"""``tcplab fidelity``: the simulator against real Linux TCP on the same scenario.

Each replication ``r`` runs the scenario once in the simulator (:func:`tcplab.run`,
seed ``r``) and once in the emulator (:func:`tcplab.emulate`, seed ``r``: the same
random substreams for losses, RED and UDP departures), both recording the cwnd series
and the queue series. Every metric is then computed the same way from both runs
(:func:`flow_metrics`, :func:`queue_metrics`) and compared:

- bulk TCP flows: goodput; the cwnd sawtooth (:func:`sawtooth`): peak, trough and
  period; loss episodes; time-weighted mean cwnd and smoothed RTT; retransmissions and
  retransmission timeouts;
- finite TCP flows: completion time (``elapsed_s``);
- the queues that hold packets (the link named ``bottleneck``, else every link whose
  queue ever held 2 packets or more): time-weighted mean and maximum occupancy, drops.

The table has one row per metric (and flow or link): the mean over replications of the
simulator (``sim``) and of the kernel (``kernel``), their standard deviations, and the
relative error ``(kernel - sim) / |sim|`` (NaN when the simulator's value is 0). The
report overlays the cwnd and queue series of the first replication.

Sawtooth definitions (the same for both; windows in bytes). A *loss episode* is a
maximal run of series rows in state recovery or loss (the kernel's Disorder counts as
open, its CWR as recovery: :mod:`tcplab-emu kernel.rs <tcplab>`); an open spell shorter
than :data:`MIN_OPEN_S` (2 ms, the kernel side's sampling interval) does not end it. The first episode
ends slow start and is excluded from peak and trough: the *peak* of episode k ≥ 2 is the
largest cwnd since the end of episode k-1, its *trough* the cwnd at the first open row
after it; the *period* is the mean time between the starts of episodes 2, 3, ...
With fewer than 3 episodes (e.g. BBR without losses) they are NaN.

Example:
    >>> import pandas as pd
    >>> s = pd.DataFrame({"t_s": [0, 1, 2, 3, 4, 5, 6, 7], "flow_id": [0] * 8,
    ...                   "cwnd_bytes": [10, 40, 20, 30, 15, 25, 12, 20],
    ...                   "srtt_s": [0.1] * 8, "state": ["open", "recovery", "open", "recovery", "open",
    ...                                                  "recovery", "open", "open"]})
    >>> st = sawtooth(s)
    >>> st["loss_episodes"], st["cwnd_peak_bytes"], st["cwnd_trough_bytes"], st["sawtooth_period_s"]
    (3, 27.5, 13.5, 2.0)
"""

from __future__ import annotations

import html
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from tcplab import __version__
from tcplab.results import RunResult, write_json_atomic, write_table_atomic
from tcplab.runner import as_scenario, run as run_sim
from tcplab.scenario import Scenario

__all__ = ["FidelityResult", "fidelity", "sawtooth", "flow_metrics", "queue_metrics", "compare", "TRACES"]

#: Series both runs record.
TRACES = ("cwnd", "queue")

#: Shortest open spell that ends a loss episode, seconds: the emulator's default
#: TCP_INFO sampling interval (``tcplab emulate --sample-interval``), so that both sides can see it.
MIN_OPEN_S = 0.002

_UNITS = {
    "goodput_bps": "bit/s", "cwnd_peak_bytes": "B", "cwnd_trough_bytes": "B", "sawtooth_period_s": "s",
    "loss_episodes": "episodes", "cwnd_mean_bytes": "B", "srtt_mean_s": "s", "retransmits": "segments", "rtos": "timeouts",
    "elapsed_s": "s", "occ_mean_pkts": "packets", "occ_max_pkts": "packets", "drops": "packets",
}


def _time_mean(t: np.ndarray, v: np.ndarray, end: float) -> float:
    """Time-weighted mean of a step function (value v[i] from t[i] to t[i+1], the last to ``end``)."""
    if len(t) == 0:
        return float("nan")
    edges = np.append(t, max(end, t[-1]))
    widths = np.diff(edges)
    total = widths.sum()
    return float((v * widths).sum() / total) if total > 0 else float(v[-1])


def sawtooth(series: pd.DataFrame, end_s: float | None = None) -> dict[str, float]:
    """Loss episodes, sawtooth peak/trough/period, mean cwnd and mean sRTT of one flow's
    cwnd series (columns ``t_s``, ``cwnd_bytes``, ``state``, ``srtt_s``); see the module
    docstring for the definitions."""
    s = series.sort_values("t_s", kind="stable")
    t = s["t_s"].to_numpy(float)
    cwnd = s["cwnd_bytes"].to_numpy(float)
    lossy = (s["state"].astype(str) != "open").to_numpy().copy()
    end = float(end_s) if end_s is not None else (float(t[-1]) if len(t) else 0.0)
    # Open spells shorter than the kernel's TCP_INFO sampling interval are invisible on
    # the kernel side (leaving recovery and re-entering it on the same ACK never shows
    # as open there): both sides count them as part of the episode.
    i = 0
    while i < len(lossy):
        if not lossy[i] and i > 0 and lossy[i - 1]:
            j = i
            while j < len(lossy) and not lossy[j]:
                j += 1
            if j < len(lossy) and t[j] - t[i] < MIN_OPEN_S:
                lossy[i:j] = True
            i = j
        else:
            i += 1
    starts = [i for i in range(len(lossy)) if lossy[i] and (i == 0 or not lossy[i - 1])]
    out: dict[str, float] = {"loss_episodes": len(starts)}
    peaks, troughs = [], []
    for k in range(1, len(starts)):
        prev_end = starts[k - 1]
        while prev_end < len(lossy) and lossy[prev_end]:
            prev_end += 1
        peaks.append(cwnd[prev_end:starts[k] + 1].max())
        after = starts[k]
        while after < len(lossy) and lossy[after]:
            after += 1
        if after < len(lossy):
            troughs.append(cwnd[after])
    nan = float("nan")
    out["cwnd_peak_bytes"] = float(np.mean(peaks)) if len(starts) >= 3 else nan
    out["cwnd_trough_bytes"] = float(np.mean(troughs)) if len(starts) >= 3 and troughs else nan
    out["sawtooth_period_s"] = float(np.mean(np.diff(t[starts[1:]]))) if len(starts) >= 3 else nan
    out["cwnd_mean_bytes"] = _time_mean(t, cwnd, end)
    srtt = s["srtt_s"].to_numpy(float)
    ok = ~np.isnan(srtt)
    out["srtt_mean_s"] = _time_mean(t[ok], srtt[ok], end) if ok.any() else nan
    return out


def flow_metrics(r: RunResult) -> pd.DataFrame:
    """One row per (TCP flow, metric): bulk flows' goodput and sawtooth, finite flows'
    completion time. Columns: ``flow``, ``kind``, ``metric``, ``value``."""
    rows = []
    end = float(r.meta.get("sim_end_s") or 0.0)
    cw = r.series.get("cwnd")
    for _, f in r.flows.iterrows():
        bulk = pd.isna(f["bytes_target"])
        name = str(f["name"])
        if bulk:
            rows.append((name, "bulk", "goodput_bps", float(f["goodput_bps"])))
            rows.append((name, "bulk", "retransmits", float(f["retransmits"])))
            rows.append((name, "bulk", "rtos", float(f["rtos"])))
            if cw is not None and len(cw):
                mine = cw[cw["flow_id"] == f["flow_id"]]
                if len(mine):
                    for k, v in sawtooth(mine, end).items():
                        rows.append((name, "bulk", k, float(v)))
        else:
            rows.append((name, "finite", "elapsed_s", float(f["elapsed_s"]) if pd.notna(f["elapsed_s"]) else math.nan))
    return pd.DataFrame(rows, columns=["flow", "kind", "metric", "value"])


def _queue_links(sim: RunResult, emu: RunResult) -> list[str]:
    names = list(sim.queues["link"].astype(str))
    if "bottleneck" in names:
        return ["bottleneck"]
    busy = set()
    for r in (sim, emu):
        q = r.queues
        busy |= set(q.loc[q["occ_max_pkts"] >= 2, "link"].astype(str))
    return [n for n in names if n in busy]


def queue_metrics(r: RunResult, links: Iterable[str]) -> pd.DataFrame:
    """Mean and maximum occupancy (packets) and drops of the named links' queues."""
    rows = []
    q = r.queues.set_index(r.queues["link"].astype(str))
    for name in links:
        row = q.loc[name]
        drops = float(row["drops_overflow"] + row["drops_early"] + row["drops_forced"] + row["drops_corruption"])
        rows += [(name, "queue", "occ_mean_pkts", float(row["occ_mean_pkts"])),
                 (name, "queue", "occ_max_pkts", float(row["occ_max_pkts"])),
                 (name, "queue", "drops", drops)]
    return pd.DataFrame(rows, columns=["flow", "kind", "metric", "value"])


def compare(sim: pd.DataFrame, kernel: pd.DataFrame) -> pd.DataFrame:
    """The fidelity table from per-replication metric rows of both sides (each with a
    ``rep`` column): means, standard deviations and the relative error."""
    keys = ["flow", "kind", "metric"]
    agg = {"mean": "mean", "sd": "std", "n": "count"}

    def summarise(df: pd.DataFrame, side: str) -> pd.DataFrame:
        g = df.groupby(keys, sort=False)["value"].agg(list(agg.values()))
        g.columns = [f"{side}_{k}" for k in agg]
        return g

    t = summarise(sim, "sim").join(summarise(kernel, "kernel"), how="outer").reset_index()
    t = t.rename(columns={"sim_mean": "sim", "kernel_mean": "kernel", "flow": "flow_or_link"})
    t["unit"] = t["metric"].map(_UNITS).fillna("")
    with np.errstate(divide="ignore", invalid="ignore"):
        t["rel_error"] = np.where(t["sim"].abs() > 0, (t["kernel"] - t["sim"]) / t["sim"].abs(), np.nan)
    cols = ["flow_or_link", "kind", "metric", "unit", "sim", "kernel", "rel_error", "sim_sd", "kernel_sd", "sim_n", "kernel_n"]
    return t[cols]


@dataclass
class FidelityResult:
    """The comparison: ``table`` (see :func:`compare`), the runs, and where it was written."""

    table: pd.DataFrame
    sims: list[RunResult]
    kernels: list[RunResult]
    out: Path | None = None
    report: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def fidelity(
    scenario: Scenario | str | Path,
    reps: int = 3,
    out: str | Path | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    **emulate_kw: Any,
) -> FidelityResult:
    """Runs the simulator and the emulator ``reps`` times each on ``scenario``; writes
    ``fidelity.parquet``, ``fidelity.json``, every run's tables (``runs/sim-<r>``,
    ``runs/kernel-<r>``) and ``report.html`` into ``out`` when given.

    Raises what :func:`tcplab.emulate` raises (a refusal happens before any run).
    """
    from tcplab.emulation import emulate

    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    sc = as_scenario(scenario)
    say = progress or (lambda _m: None)
    sims, kernels, srows, krows = [], [], [], []
    t0 = time.perf_counter()
    for rep in range(reps):
        say(f"replication {rep + 1}/{reps}: emulating (real time)")
        k = emulate(sc, seed=rep, trace=TRACES, **emulate_kw)
        say(f"replication {rep + 1}/{reps}: simulating")
        s = run_sim(sc, seed=rep, trace=TRACES)
        links = _queue_links(s, k)
        for res, rows in ((s, srows), (k, krows)):
            m = pd.concat([flow_metrics(res), queue_metrics(res, links)], ignore_index=True)
            m["rep"] = rep
            rows.append(m)
        sims.append(s)
        kernels.append(k)
    table = compare(pd.concat(srows, ignore_index=True), pd.concat(krows, ignore_index=True))
    emu_meta = [k.meta.get("emulation", {}) for k in kernels]
    meta = {
        "scenario": sc.name,
        "reps": reps,
        "tcplab": __version__,
        "wall_s": round(time.perf_counter() - t0, 3),
        "kernel": emu_meta[0].get("kernel") if emu_meta else None,
        "sched_error": [m.get("sched_error") for m in emu_meta],
        "behind": any(m.get("behind") for m in emu_meta),
        "loadavg": [m.get("loadavg") for m in emu_meta],
        "deviations": emu_meta[0].get("deviations", []) if emu_meta else [],
        # The sysctls the first kernel run wrote, per host namespace.
        "kernel_sysctls": emu_meta[0].get("sysctls") if emu_meta else None,
    }
    res = FidelityResult(table, sims, kernels, meta=meta)
    if out is not None:
        o = Path(out)
        o.mkdir(parents=True, exist_ok=True)
        write_table_atomic(table, o / "fidelity.parquet")
        write_json_atomic({"meta": meta, "rows": json.loads(table.to_json(orient="records"))}, o / "fidelity.json")
        for i, (s, k) in enumerate(zip(sims, kernels)):
            s.write(o / "runs" / f"sim-{i}")
            k.write(o / "runs" / f"kernel-{i}")
        res.out = o
        res.report = write_report(res, sc)
    return res


# --------------------------------------------------------------------------------------
# Report


def sysctls_html(sysctls: dict[str, dict[str, str]] | None) -> str:
    """The kernel's sysctls during the runs, one row per sysctl and one column per host
    namespace: the values the emulator wrote (``meta.emulation.sysctls``); every other
    sysctl kept the value a new network namespace starts with (the kernel's default for the
    per-namespace ``net.ipv4.tcp_*`` ones).

    Example:
        >>> "tcp_frto" in sysctls_html({"s0": {"net.ipv4.tcp_frto": "2"}})
        True
    """
    head = "<h2 id='sysctls'>Kernel sysctls during the runs</h2>"
    if not sysctls:
        return head + "<p>The kernel runs recorded no sysctls (stored before they were recorded).</p>"
    hosts = sorted(sysctls)
    names = sorted({k for h in hosts for k in sysctls[h]})
    rows = "".join("<tr><td><code>" + html.escape(n) + "</code></td>"
                   + "".join("<td>" + html.escape(str(sysctls[h].get(n, "–"))) + "</td>" for h in hosts) + "</tr>"
                   for n in names)
    cols = "".join(f"<th>{html.escape(h)}</th>" for h in hosts)
    return (head + "<p>Written by the emulator in each host's network namespace (– : not written on that host); "
            "every other sysctl kept the value a new namespace starts with (the kernel's default for the "
            "per-namespace net.ipv4.tcp_* ones).</p>"
            f"<table class='sysctls'><tr><th>sysctl</th>{cols}</tr>{rows}</table>")


def _overlay_figures(res: FidelityResult, fig_dir: Path) -> list[dict[str, Any]]:
    from tcplab.studies import reporting

    figs = []
    s, k = res.sims[0], res.kernels[0]
    cw_s, cw_k = s.series.get("cwnd"), k.series.get("cwnd")
    if cw_s is not None and cw_k is not None:
        for _, f in s.flows.iterrows():
            if not pd.isna(f["bytes_target"]):
                continue
            fid = f["flow_id"]
            a, b = cw_s[cw_s["flow_id"] == fid], cw_k[cw_k["flow_id"] == fid]
            fig, ax = reporting.figure(1, 1, 9, 3.4)
            ax = ax[0, 0]
            ax.step(a["t_s"], a["cwnd_bytes"] / 1460, where="post", label="simulator", lw=1.0)
            ax.step(b["t_s"], b["cwnd_bytes"] / 1460, where="post", label="Linux kernel", lw=1.0, alpha=0.8)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("cwnd (1460-byte segments)")
            ax.set_title(f"cwnd of {f['name']} ({f['cc']})")
            ax.legend(loc="upper right")
            stem = f"cwnd_{fid}"
            figs.append({"stem": stem, "section": "series", **reporting.save(fig, fig_dir, stem),
                         "caption": f"cwnd of flow {f['name']}, simulator against the kernel's TCP_INFO "
                                    "(replication 1)."})
    q_s, q_k = s.series.get("queue"), k.series.get("queue")
    if q_s is not None and q_k is not None:
        for link in _queue_links(s, k):
            a, b = q_s[q_s["link"] == link], q_k[q_k["link"] == link]
            fig, ax = reporting.figure(1, 1, 9, 3.0)
            ax = ax[0, 0]
            ax.step(a["t_s"], a["pkts"], where="post", label="simulator", lw=0.8)
            ax.step(b["t_s"], b["pkts"], where="post", label="Linux kernel", lw=0.8, alpha=0.8)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("queue (packets)")
            ax.set_title(f"queue of link {link}")
            ax.legend(loc="upper right")
            stem = f"queue_{link}"
            figs.append({"stem": stem, "section": "series", **reporting.save(fig, fig_dir, stem),
                         "caption": f"Occupancy of the queue of link {link} (replication 1)."})
    return figs


def write_report(res: FidelityResult, sc: Scenario) -> Path:
    """Writes ``report.html`` (table + overlays) into ``res.out``."""
    from tcplab.studies import reporting

    assert res.out is not None
    figs = _overlay_figures(res, res.out / "figures")
    m = res.meta
    sched = "; ".join(
        f"rep {i + 1}: p50 {reporting.fmt(e['p50_s'] * 1e6)} µs, p99 {reporting.fmt(e['p99_s'] * 1e6)} µs, "
        f"max {reporting.fmt(e['max_s'] * 1e6)} µs (load {html.escape(str(load))})"
        for i, (e, load) in enumerate(zip(m["sched_error"], m["loadavg"])) if e)
    warn = ("<p class='not'>The emulator fell behind its scheduling bound in at least one replication; "
            "kernel figures are flagged.</p>" if m["behind"] else "")
    shown = res.table.copy()
    shown["rel_error"] = shown["rel_error"].map(lambda v: "–" if pd.isna(v) else f"{v:+.1%}")
    intro = (f"<p>tcplab {html.escape(__version__)}; scenario <code>{html.escape(sc.name or '?')}</code>; "
             f"{m['reps']} replication(s) of each side; kernel {html.escape(str(m['kernel']))}; "
             f"{m['wall_s']} s wall.</p><p>Emulator scheduling error: {sched}.</p>{warn}"
             "<p>Relative error = (kernel − simulator) / |simulator|. Definitions: "
             "<code>python/tcplab/fidelity.py</code> and docs/emulation.md.</p>")
    dev = "".join(f"<li>{html.escape(d)}</li>" for d in m.get("deviations", []))
    body = ["<h2 id='table'>Simulator against the kernel</h2>", reporting.table_html(shown),
            f"<h2>Accepted deviations</h2><ul>{dev}</ul>" if dev else "",
            sysctls_html(m.get("kernel_sysctls")),
            reporting.figures_html(res.out, figs, {"series": "Series overlays"}),
            "<h2>Scenario</h2><pre>" + html.escape(sc.to_toml()) + "</pre>"]
    return reporting.write_page(res.out, f"Fidelity: {sc.name or 'scenario'}", intro, body)
