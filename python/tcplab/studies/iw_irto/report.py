"""Figures and ``report.html`` of study ``iw-irto`` (seed 000, ``docs/seeds/000_ae80ce17cd677c8e.txt``).

Figures (PNG at 150 dpi and SVG, in ``figures/``), in the seed's layout:

- ``elapsed_<link>_<buffer>``: CDFs of flow elapsed time, one panel per flow count and
  burst, with the four TCP variants overlaid (colour = IW, line style = IRTO).
- ``fairness_<link>``: Jain's index within burst 1 and within burst 2, and the later
  burst's goodput share (0.5 = equal), mean over replications with 95% Student-t
  whiskers, per buffer and N.
- ``rtos_<link>``: RTOs per run (data + SYN), stacked genuine / spurious.
- ``owd_<link>_<N>flows``: CDFs of the one-way delay of every data packet (IRTO 3 s),
  FIFO vs RED (left) and FIFO vs REDok (right), IW3 dashed and IW10 solid; the
  maximum of each curve is marked and written in the legend.

Figure files, CDF thinning and the page skeleton are the shared ones
(:mod:`tcplab.studies.reporting`); this module adds the seed's figures, the set-up
section (BDP arithmetic, buffers) and the REDok OWD maxima. It reads only the set-up
(:mod:`tcplab.studies.iw_irto.setup`) and what its caller passes; the study module
imports it, never the other way round.

Example:
    >>> xs, ps = ecdf_points(np.arange(10_000.0), max_points=100)
    >>> len(xs) <= 100, float(xs[-1]), float(ps[-1])
    (True, 9999.0, 1.0)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies.iw_irto import setup as S
from tcplab.studies import reporting as R
from tcplab.studies.reporting import CDF_POINTS, ecdf_points
from tcplab.studies.reporting import figure as _figure, save as _save, step as _step

__all__ = ["render_figures", "write_report", "ecdf_points", "CDF_POINTS"]

IW_COLOURS = {3: "#0072B2", 10: "#D55E00"}
IRTO_STYLES = {3.0: "-", 1.0: "--"}
BUFFER_COLOURS = {"fifo-bdp": "#555555", "fifo-2bdp": "#000000", "fifo-50": "#000000", "red": "#009E73",
                  "redok": "#CC79A7"}


def _legend_variants(fig: Any) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=IW_COLOURS[iw], linestyle=IRTO_STYLES[irto], label=S.variant_label(iw, irto))
               for iw, irto in S.VARIANTS]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False)


def fig_elapsed(flows: pd.DataFrame, link: S.WirelessLink, buf: S.Buffer) -> Any:
    """Elapsed-time CDFs for one link and buffer: rows = flow counts, columns = bursts."""
    import matplotlib

    from tcplab.plots import STYLE

    sub = flows[(flows["link"] == link.name) & (flows["buffer"] == buf.id)]
    counts = [n for n in S.FLOW_COUNTS if (sub["n_flows"] == n).any()]
    fig, axes = _figure(len(counts), 2, 8.0, 2.1 * len(counts) + 0.8, sharex="row")
    with matplotlib.rc_context(STYLE):
        for r, n in enumerate(counts):
            for c, burst in enumerate((1, 2)):
                ax = axes[r, c]
                part = sub[(sub["n_flows"] == n) & (sub["burst"] == burst)]
                for iw, irto in S.VARIANTS:
                    v = part[(part["iw"] == iw) & (part["irto_s"] == irto)]["elapsed_s"].to_numpy()
                    _step(ax, v, color=IW_COLOURS[iw], linestyle=IRTO_STYLES[irto], linewidth=1.2)
                ax.set_title(f"{n}+{n} flows, {'first' if burst == 1 else 'later'} burst")
                ax.set_ylim(0, 1.02)
                ax.set_ylabel("CDF")
                if r == len(counts) - 1:
                    ax.set_xlabel("elapsed time (s)")
        _legend_variants(fig)
        fig.suptitle(f"{link.label}, {buf.label}: flow elapsed times")
    return fig


def _bars(ax: Any, groups: Sequence[int], data: pd.DataFrame, metric: str, bottom_metric: str | None = None) -> None:
    width = 0.8 / len(S.VARIANTS)
    for k, (iw, irto) in enumerate(S.VARIANTS):
        xs, means, lo, hi = [], [], [], []
        for g, n in enumerate(groups):
            v = data[(data["n_flows"] == n) & (data["iw"] == iw) & (data["irto_s"] == irto)][metric]
            e = stats.mean_ci(v)
            xs.append(g - 0.4 + width * (k + 0.5))
            means.append(e.value)
            lo.append(e.value - e.low if e.n >= 2 else 0.0)
            hi.append(e.high - e.value if e.n >= 2 else 0.0)
        err = np.nan_to_num(np.array([lo, hi]))
        ax.bar(xs, np.nan_to_num(means), width=width * 0.95, color=IW_COLOURS[iw],
               alpha=1.0 if irto == 3.0 else 0.55, hatch=None if irto == 3.0 else "//", edgecolor="white",
               linewidth=0.3, yerr=err, capsize=1.5, error_kw={"elinewidth": 0.7})
    ax.set_xticks(range(len(groups)), [f"{n}+{n}" for n in groups])


def _legend_bars(fig: Any) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=IW_COLOURS[iw], alpha=1.0 if irto == 3.0 else 0.55, hatch=None if irto == 3.0 else "//",
                     edgecolor="white", label=S.variant_label(iw, irto)) for iw, irto in S.VARIANTS]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False)


def fig_fairness(rm: pd.DataFrame, link: S.WirelessLink) -> Any:
    """Jain's index within each burst and the later burst's goodput share, with 95% CIs, per buffer and N."""
    import matplotlib

    from tcplab.plots import STYLE

    sub = rm[rm["link"] == link.name]
    bufs = [b for b in S.buffers(link) if (sub["buffer"] == b.id).any()]
    fig, axes = _figure(3, len(bufs), 2.6 * len(bufs) + 0.6, 7.0, sharey=True)
    rows = (("jain_b1", "within the first burst", [n for n in S.FLOW_COUNTS if n > 1]),
            ("jain_b2", "within the later burst", [n for n in S.FLOW_COUNTS if n > 1]),
            ("later_share", "later burst's goodput share", list(S.FLOW_COUNTS)))
    with matplotlib.rc_context(STYLE):
        for r, (metric, what, groups) in enumerate(rows):
            for c, b in enumerate(bufs):
                ax = axes[r, c]
                _bars(ax, groups, sub[sub["buffer"] == b.id], metric)
                ax.set_ylim(0, 1.05)
                if metric == "later_share":  # equal shares
                    ax.axhline(0.5, color="#999999", linewidth=0.6, linestyle=":")
                if r == 0:
                    ax.set_title(b.label)
                if c == 0:
                    ax.set_ylabel(what if metric == "later_share" else f"Jain {what}")
                if r == 2:
                    ax.set_xlabel("flows per burst")
        _legend_bars(fig)
        fig.suptitle(f"{link.label}: fairness (Jain's index within a burst; later burst's share of the two bursts' mean "
                     "goodput, 0.5 = equal; mean and 95% CI over replications)")
    return fig


def fig_rtos(rm: pd.DataFrame, link: S.WirelessLink) -> Any:
    """RTOs per run (data + SYN timeouts), stacked genuine (bottom) and spurious (top, hatched)."""
    import matplotlib
    from matplotlib.patches import Patch

    from tcplab.plots import STYLE

    sub = rm[rm["link"] == link.name]
    bufs = [b for b in S.buffers(link) if (sub["buffer"] == b.id).any()]
    fig, axes = _figure(1, len(bufs), 2.6 * len(bufs) + 0.6, 3.4, sharey=True)
    width = 0.8 / len(S.VARIANTS)
    with matplotlib.rc_context(STYLE):
        for c, b in enumerate(bufs):
            ax = axes[0, c]
            part = sub[sub["buffer"] == b.id]
            for k, (iw, irto) in enumerate(S.VARIANTS):
                xs, gen, spu, err_hi = [], [], [], []
                for g, n in enumerate(S.FLOW_COUNTS):
                    v = part[(part["n_flows"] == n) & (part["iw"] == iw) & (part["irto_s"] == irto)]
                    xs.append(g - 0.4 + width * (k + 0.5))
                    gen.append(float(v["rto_genuine"].mean()) if len(v) else 0.0)
                    spu.append(float(v["rto_spurious"].mean()) if len(v) else 0.0)
                    e = stats.mean_ci(v["rto_total"])
                    err_hi.append(e.high - e.value if e.n >= 2 else 0.0)
                colour = IW_COLOURS[iw]
                alpha = 1.0 if irto == 3.0 else 0.55
                ax.bar(xs, gen, width=width * 0.95, color=colour, alpha=alpha, edgecolor="white", linewidth=0.3)
                ax.bar(xs, spu, bottom=gen, width=width * 0.95, color="white", edgecolor=colour, hatch="xxxx",
                       linewidth=0.6, yerr=[np.zeros(len(xs)), np.nan_to_num(err_hi)], capsize=1.5,
                       error_kw={"elinewidth": 0.7})
            ax.set_xticks(range(len(S.FLOW_COUNTS)), [f"{n}+{n}" for n in S.FLOW_COUNTS])
            ax.set_title(b.label)
            ax.set_xlabel("flows per burst")
            if c == 0:
                ax.set_ylabel("RTOs per run (data + SYN)")
        handles = [Patch(facecolor=IW_COLOURS[iw], alpha=1.0 if irto == 3.0 else 0.55, label=S.variant_label(iw, irto))
                   for iw, irto in S.VARIANTS]
        handles.append(Patch(facecolor="white", edgecolor="#333333", hatch="xxxx", label="spurious (top of each bar)"))
        fig.legend(handles=handles, loc="outside lower center", ncols=5, frameon=False)
        fig.suptitle(f"{link.label}: RTOs per run, genuine (solid) and spurious (hatched); whisker: 95% CI of the total")
    return fig


def _owd_pairs(link: S.WirelessLink) -> list[tuple[str, str]]:
    """(FIFO, AQM) buffer ids of the two OWD panels: FIFO 2·BDP vs RED, largest FIFO vs REDok."""
    fifo_big = "fifo-50" if link.name == "edge" else "fifo-2bdp"
    return [("fifo-2bdp", "red"), (fifo_big, "redok")]


def fig_owd(owd: pd.DataFrame, link: S.WirelessLink, n: int) -> tuple[Any, list[dict[str, Any]]]:
    """OWD CDFs of every data packet for N+N flows, IRTO 3 s; returns the figure and the maxima."""
    import matplotlib

    from tcplab.plots import STYLE

    sub = owd[(owd["link"] == link.name) & (owd["n_flows"] == n) & (owd["irto_s"] == 3.0)]
    fig, axes = _figure(1, 2, 9.0, 3.6, sharey=True)
    maxima = []
    with matplotlib.rc_context(STYLE):
        for c, (fifo, aqm) in enumerate(_owd_pairs(link)):
            ax = axes[0, c]
            for bid in (fifo, aqm):
                b = S.buffer_by_id(link, bid)
                for iw in (3, 10):
                    v = sub[(sub["buffer"] == bid) & (sub["iw"] == iw)]["owd_s"].to_numpy(np.float64)
                    if not len(v):
                        continue
                    mx = float(v.max())
                    maxima.append({"link": link.name, "n_flows": n, "buffer": bid, "iw": iw, "max_owd_s": mx,
                                   "packets": int(len(v))})
                    colour = BUFFER_COLOURS[bid]
                    _step(ax, v, color=colour, linestyle="-" if iw == 10 else "--",
                          label=f"{b.label} IW{iw} (max {mx:.3g} s)")
                    ax.plot([mx], [1.0], marker="o" if iw == 10 else "s", color=colour, markersize=4)
            ax.set_title(f"{S.buffer_by_id(link, fifo).label} vs {S.buffer_by_id(link, aqm).label}")
            ax.set_xlabel("one-way delay (s)")
            ax.set_ylim(0, 1.04)
            if c == 0:
                ax.set_ylabel("CDF")
            ax.legend(loc="lower right", frameon=False, fontsize=7)
        fig.suptitle(f"{link.label}, {n}+{n} flows: one-way delay of every data packet (IRTO 3 s; "
                     "IW10 solid, IW3 dashed; markers: maxima)")
    return fig, maxima


def render_figures(tables: dict[str, pd.DataFrame], rm: pd.DataFrame, fig_dir: Path,
                   params: S.StudyParams) -> list[dict[str, Any]]:
    """Draws every figure as PNG and SVG into ``fig_dir``; returns their descriptions."""
    fig_dir.mkdir(parents=True, exist_ok=True)
    flows, owd = tables["flows"], tables["owd"]
    out: list[dict[str, Any]] = []
    for name in params.links:
        link = S.LINKS[name]
        for b in S.buffers(link):
            stem = f"elapsed_{name}_{b.id}"
            out.append({"stem": stem, "section": "elapsed", **_save(fig_elapsed(flows, link, b), fig_dir, stem),
                        "caption": f"{link.label}, {b.label}: CDF of flow elapsed time (SYN to last byte), per flow "
                                   "count and burst; colour IW (blue 3, vermilion 10), line IRTO (solid 3 s, dashed 1 s)."})
    for name in params.links:
        link = S.LINKS[name]
        stem = f"fairness_{name}"
        out.append({"stem": stem, "section": "fairness", **_save(fig_fairness(rm, link), fig_dir, stem),
                    "caption": f"{link.label}: Jain's fairness index of per-flow goodput within each burst, and the later "
                               "burst's share of the two bursts' mean per-flow goodput (0.5 = equal, dotted); bars are "
                               "means over replications, whiskers 95% Student-t CIs."})
    for name in params.links:
        link = S.LINKS[name]
        stem = f"rtos_{name}"
        out.append({"stem": stem, "section": "rtos", **_save(fig_rtos(rm, link), fig_dir, stem),
                    "caption": f"{link.label}: RTOs per run (data RTOs plus SYN timeouts), genuine below and spurious "
                               "(hatched) above; spurious = the retransmitted segment or SYN had not been lost."})
    for name in params.links:
        link = S.LINKS[name]
        for n in S.OWD_FLOW_COUNTS:
            stem = f"owd_{name}_{n}flows"
            fig, maxima = fig_owd(owd, link, n)
            out.append({"stem": stem, "section": "owd", **_save(fig, fig_dir, stem), "maxima": maxima,
                        "caption": f"{link.label}, {n}+{n} flows: CDF of the one-way delay of every delivered data "
                                   "packet over all replications, IRTO 3 s; maxima marked and given in the legend."})
    return out


# --------------------------------------------------------------------------------------
# report.html

def _findings_html(findings: dict[str, Any]) -> str:
    from tcplab.report import _table_html

    maxima = findings.get("seed_owd_maxima") or []
    seeded = [m for m in maxima if m.get("seed_max_owd_s") is not None]
    extra = ("<h3>Maximum one-way delays against the seed's REDok values</h3>" + _table_html(pd.DataFrame(seeded))
             if seeded else "")
    return R.findings_html(findings, "seed 000", "docs/studies/iw-irto.md", extra)


def _setup_html(params: S.StudyParams) -> str:
    from tcplab.report import _table_html

    bdp = S.bdp_table()
    buf_rows = []
    for name in params.links:
        link = S.LINKS[name]
        for b in S.buffers(link):
            q = S.queue_config(link, b)
            buf_rows.append({"link": link.label, "buffer": b.label, "packets": b.packets,
                             "queue (core JSON)": json.dumps(q, separators=(",", ":"))})
    rtts = ", ".join(f"{S.LINKS[l].label} {S.LINKS[l].base_rtt_s * 1e3:.0f} ms" for l in params.links)
    return "\n".join([
        "<h2 id='setup'>Set-up</h2>",
        "<p>Dumbbell: each sender reaches router r0 over an 11 ms, 100 Mbit/s access link; r0 → r1 is the wireless "
        "bottleneck; receivers sit on r1 behind 100 Mbit/s links with no delay. The reverse bottleneck carries the "
        "ACKs at the same rate and delay through a 1000-packet drop-tail queue. Packets are 1500 B (MSS 1460 + 40 B). "
        "TCP: profile <code>ns2-sack</code> (SACK, min RTO 1 s, no delayed ACKs), Reno, IW ∈ {3, 10}, initial RTO ∈ "
        "{3 s, 1 s}; the SYN handshake is modelled and its RTT sample seeds the RTO.</p>",
        "<h3>Bandwidth-delay products</h3>",
        "<p>The seed's BDPs are rate × 2 × wireless one-way delay / 1500 B, rounded up; the 11 ms wired part is not "
        "counted (with it the products would be the last column). The study uses the seed's values.</p>",
        _table_html(bdp),
        "<h3>Buffers</h3>",
        "<p>FIFOs are ns-2 DropTail: the arriving packet is dropped when <code>length + 1 ≥ qlim_</code>, i.e. the "
        "packet on the wire counts (<code>count_in_service = true</code>). RED is ns-2 byte mode (bytes_ = "
        "queue_in_bytes_ = true, gentle_ = wait_ = false, mean_pktsize_ = idle_pktsize_ = 1500, linterm_ = 1/max_p, "
        "ns-2's integer idle count); its physical limit is ns-2's <code>qlen ≥ qlim_ · mean_pktsize_</code> on the "
        "waiting bytes.</p>",
        _table_html(S.red_table()),
        "<details><summary>Every buffer as run</summary>" + _table_html(pd.DataFrame(buf_rows)) + "</details>",
        "<h3>Workload</h3>",
        f"<p>Burst 1: N ∈ {{1, 2, 6, 18}} flows of 180 000 / N bytes. Burst 2: the same, starting "
        f"{params.offset_rtts:g} base RTTs later ({rtts}). Each flow's start is delayed by U·{params.jitter_rtts:g} "
        f"base RTTs, U ~ uniform[0, 1) from <code>numpy.random.default_rng([{params.seed}, r])</code> for replication r "
        f"(common random numbers: the same draws for every TCP variant and buffer); the core seed of replication r is "
        f"{params.seed} + r. {params.reps} replications per configuration.</p>",
    ])


def write_report(out: Path, params: S.StudyParams, tables: dict[str, pd.DataFrame], rm: pd.DataFrame,
                 summary: pd.DataFrame, findings: dict[str, Any], figs: list[dict[str, Any]],
                 manifest: dict[str, Any]) -> Path:
    """Writes ``out/report.html`` (self-contained: figures embedded as PNG, linked to their files)."""
    title = "tcplab study iw-irto: IW 3 → 10 and initial RTO 3 s → 1 s over EDGE/HSPA/LTE (seed 000)"
    flows = tables["flows"]
    unfinished = int(flows["elapsed_s"].isna().sum()) if len(flows) else 0
    intro = ("<p>Järvinen, Nyrhinen, Ding and Kojo, <i>Effect of IW and Initial RTO changes</i>, IETF 79, 2010 "
             "(ns-2 TCP SACK), reproduced on tcplab's simulator. "
             + R.provenance(manifest, f"{params.n_runs()} runs ({len(flows)} flows, {unfinished} unfinished)") + "</p>"
             + R.nav(["flows.parquet", "runs.parquet", "owd.parquet", "run_metrics.parquet", "summary.parquet",
                      "findings.json", "study.json"]))
    titles = {"elapsed": "Elapsed times", "fairness": "Fairness", "rtos": "RTOs, genuine and spurious",
              "owd": "One-way delay"}
    summary_html = ("<h2 id='summary'>Summary table</h2><p class='small'>Per configuration and TCP variant, means over "
                    "replications; “±” is the half-width of the 95% Student-t interval. Elapsed times are per-burst "
                    "means of flow elapsed time; “longest” is the run's slowest flow; RTOs include SYN timeouts.</p>"
                    + R.table_html(summary))
    return R.write_page(out, title, intro, [
        _setup_html(params), _findings_html(findings), R.figures_html(out, figs, titles), summary_html,
        R.failures_html(manifest, ("link", "buffer", "n_flows", "reps")), R.parameters_html(manifest)])
