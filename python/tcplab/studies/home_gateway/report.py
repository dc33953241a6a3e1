"""Figures and ``report.html`` of study ``home-gateway`` (seed 003; see :mod:`tcplab.studies.home_gateway`).

The reference is seed 003 (``docs/seeds/003_c9c9fd5920f3a08e.txt``; Stewart et al.,
ACM MMSys 2011); the figures follow its slides. This module reads the study's constants
(:mod:`~tcplab.studies.home_gateway.config`) and analysis
(:mod:`~tcplab.studies.home_gateway.analysis`) and is imported only by
:class:`tcplab.studies.home_gateway.study.Definition` when it draws.

Figures (PNG at 150 dpi and SVG, in ``figures/``), in the seed's order:

- ``goodput_ps_<link>``: downstream goodput against the PS queue length, one curve
  per minimum RTT and TCP (mean and 95% CI over replications), the BDP of each RTT
  marked;
- ``owd_cdf``: CDFs of the voice stream's induced one-way queuing delay with a
  40 000 B FB-loose queue, NewReno against CUBIC, per link (rows) and RTT (columns);
- ``voice_loss_<link>``: the proportion of downstream voice packets lost against the
  nominal queue size (PS n packets drawn at n x 1500 B), per semantic, TCP (rows) and
  RTT (columns);
- ``fine_sweep``: the fine sweep's loss curves (mean over replications) with their
  5%/95% envelope (the 5th and 95th percentiles over replications, dashed), the
  multiples of 1500 B marked;
- ``fine_period``: the periodogram of each fine-sweep curve and the curves folded
  modulo 1500 B (finding H3);
- ``h1_scatter``: per configuration, NewReno (x) against CUBIC (y): downstream queue,
  induced voice delay, voice loss (finding H1);
- ``timeseries_<semantic>``: cwnd and downstream queue occupancy of one run per TCP
  (ADSL1, 100 ms, 20 000 B or 13 packets; replication 0), 20 s of the run (findings H5, H6).

Figure files and the page skeleton are the shared ones (:mod:`tcplab.studies.reporting`).

Example:
    >>> _semantic_style("byte_loose")["color"]
    '#D55E00'
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies import reporting as R
from tcplab.studies.home_gateway import analysis as A
from tcplab.studies.home_gateway import config as S

__all__ = ["render_figures", "write_report"]

CC_COLOURS = {"newreno": "#0072B2", "cubic": "#D55E00"}
CC_STYLES = {"newreno": "--", "cubic": "-"}
RTT_COLOURS = ["#009E73", "#0072B2", "#CC79A7", "#000000", "#E69F00", "#56B4E9"]
SEM_COLOURS = {"slot": "#000000", "byte_strict": "#0072B2", "byte_loose": "#D55E00"}


def series_window(duration_s: float) -> tuple[float, float]:
    """The time-series window: from a third of the run, at most 20 s long ((20, 40) s for 60 s runs).

    Example:
        >>> series_window(60.0), series_window(12.0)
        ((20.0, 40.0), (4.0, 8.0))
    """
    lo = duration_s / 3
    return lo, lo + min(20.0, duration_s / 3)


def _semantic_style(sem: str) -> dict[str, Any]:
    return {"color": SEM_COLOURS[sem], "marker": {"slot": "s", "byte_strict": "^", "byte_loose": "o"}[sem]}


def _ctx() -> Any:
    import matplotlib

    from tcplab.plots import STYLE

    return matplotlib.rc_context(STYLE)


def _mean_ci(part: pd.DataFrame, by: str, col: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ms, hs = [], [], []
    for x, p in part.groupby(by, sort=True):
        e = stats.mean_ci(p[col] * scale)
        xs.append(x)
        ms.append(e.value)
        hs.append(e.high - e.value if e.n >= 2 else 0.0)
    return np.asarray(xs, float), np.asarray(ms, float), np.nan_to_num(np.asarray(hs, float))


def fig_goodput(runs: pd.DataFrame, link: str, params: S.StudyParams) -> Any:
    """Goodput vs PS queue length for one link."""
    ps = runs[(runs["part"] == "grid") & (runs["link"] == link) & (runs["semantic"] == "slot")]
    rate = S.link_rate(link, params.scenario_dir())
    fig, axes = R.figure(1, 1, 6.4, 4.4)
    ax = axes[0, 0]
    with _ctx():
        for i, rtt in enumerate(sorted(ps["rtt_ms"].unique())):
            colour = RTT_COLOURS[i % len(RTT_COLOURS)]
            for v in S.VARIANTS:
                part = ps[(ps["rtt_ms"] == rtt) & (ps["cc"] == v.name)]
                xs, ms, hs = _mean_ci(part, "limit", "goodput_bps", 1e-6)
                ax.errorbar(xs, ms, yerr=hs, color=colour, linestyle=CC_STYLES[v.name], marker=".", capsize=2,
                            label=f"{int(rtt)} ms {v.label}")
            bdp = S.bdp_packets(rate, rtt)
            if bdp <= ps["limit"].max():
                ax.axvline(bdp, color=colour, linestyle=":", linewidth=1.0)
                ax.text(bdp, 0.02, f" BDP {bdp:.3g}", color=colour, fontsize=7, rotation=90, va="bottom",
                        transform=ax.get_xaxis_transform())
        ax.axhline(rate * 1e-6, color="#888888", linewidth=0.8)
        ax.set_xlabel("PS queue length (packets, both directions)")
        ax.set_ylabel("downstream goodput (Mbit/s)")
        ax.set_ylim(0, rate * 1e-6 * 1.05)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=4, frameon=False, fontsize=7)
        ax.set_title(f"{S.LINK_LABELS[link]}: bulk TCP goodput vs PS queue length (mean, 95% CI; dotted: BDP; "
                     "grey: link rate)", fontsize=9)
    return fig


def fig_owd_cdf(owd: pd.DataFrame) -> Any:
    """Induced OWD CDFs with a 40 000 B FB-loose queue: rows = links, columns = RTTs."""
    links = [l for l in S.LINKS if (owd["link"] == l).any()]
    rtts = sorted(owd["rtt_ms"].unique())
    fig, axes = R.figure(len(links), len(rtts), 2.6 * len(rtts) + 0.6, 2.5 * len(links) + 0.6)
    with _ctx():
        for r, link in enumerate(links):
            for c, rtt in enumerate(rtts):
                ax = axes[r, c]
                sub = owd[(owd["link"] == link) & (owd["rtt_ms"] == rtt)]
                for v in S.VARIANTS:
                    vals = sub[sub["cc"] == v.name]["iowd_s"].to_numpy(np.float64) * 1e3
                    if not len(vals):
                        continue
                    p50, p95 = np.percentile(vals, [50, 95])
                    R.step(ax, vals, color=CC_COLOURS[v.name], linestyle=CC_STYLES[v.name],
                           label=f"{v.label}: p50 {p50:.0f}, p95 {p95:.0f} ms")
                ax.set_title(f"{S.LINK_LABELS[link]}, {int(rtt)} ms")
                ax.set_ylim(0, 1.02)
                ax.legend(loc="lower right", frameon=False, fontsize=7)
                if c == 0:
                    ax.set_ylabel("CDF")
                if r == len(links) - 1:
                    ax.set_xlabel("induced one-way delay (ms)")
        fig.suptitle("Downstream voice: induced one-way queuing delay, 40 000 B FB-loose queue (all replications)")
    return fig


def fig_voice_loss(runs: pd.DataFrame, link: str) -> Any:
    """Voice loss vs nominal queue size per semantic: rows = TCP, columns = RTT."""
    g = runs[(runs["part"] == "grid") & (runs["link"] == link)]
    rtts = sorted(g["rtt_ms"].unique())
    fig, axes = R.figure(len(S.VARIANTS), len(rtts), 2.6 * len(rtts) + 0.6, 5.4, sharex=True)
    with _ctx():
        for r, v in enumerate(S.VARIANTS):
            for c, rtt in enumerate(rtts):
                ax = axes[r, c]
                for sem in S.SEMANTICS:
                    part = g[(g["rtt_ms"] == rtt) & (g["cc"] == v.name) & (g["semantic"] == sem)]
                    xs, ms, hs = _mean_ci(part, "nominal_bytes", "voice_loss", 100.0)
                    st = _semantic_style(sem)
                    ax.errorbar(xs / 1000, ms, yerr=hs, color=st["color"], marker=st["marker"], markersize=3,
                                capsize=1.5, linewidth=1.0, label=S.SEMANTIC_LABELS[sem])
                ax.set_title(f"{v.label}, {int(rtt)} ms")
                if c == 0:
                    ax.set_ylabel("voice packets lost (%)")
                if r == len(S.VARIANTS) - 1:
                    ax.set_xlabel("nominal queue size (kB)")
                ax.set_ylim(bottom=0)
        axes[0, 0].legend(loc="upper right", frameon=False)
        fig.suptitle(f"{S.LINK_LABELS[link]}: proportion of downstream voice packets lost, per drop-tail semantic "
                     "(mean, 95% CI; PS n packets drawn at n x 1.5 kB)")
    return fig


def fig_fine_sweep(fine: pd.DataFrame, runs: pd.DataFrame) -> Any:
    """Fine-sweep loss curves with their 5%/95% envelopes; rows = semantics, columns = TCP."""
    fig, axes = R.figure(2, len(S.VARIANTS), 10.0, 6.0, sharex=True)
    ps = runs[(runs["part"] == "fine") & (runs["semantic"] == "slot")]
    with _ctx():
        for r, sem in enumerate(("byte_loose", "byte_strict")):
            for c, v in enumerate(S.VARIANTS):
                ax = axes[r, c]
                part = fine[(fine["semantic"] == sem) & (fine["cc"] == v.name)].sort_values("limit")
                colour = SEM_COLOURS[sem]
                L = part["limit"].to_numpy(float)
                for k in range(int(np.ceil(L.min() / S.PACKET_BYTES)), int(L.max() // S.PACKET_BYTES) + 1) if len(L) else []:
                    ax.axvline(k * S.PACKET_BYTES, color="#bbbbbb", linewidth=0.6, zorder=0)
                ax.plot(L, part["loss_mean"] * 100, color=colour, linewidth=1.0, label="mean")
                ax.plot(L, part["loss_p5"] * 100, color=colour, linewidth=0.7, linestyle="--", label="5% / 95%")
                ax.plot(L, part["loss_p95"] * 100, color=colour, linewidth=0.7, linestyle="--")
                if sem == "byte_loose" and len(ps):
                    xs, ms, hs = _mean_ci(ps[ps["cc"] == v.name], "nominal_bytes", "voice_loss", 100.0)
                    ax.errorbar(xs, ms, yerr=hs, color=SEM_COLOURS["slot"], marker="s", markersize=3, linestyle="none",
                                capsize=1.5, label="PS (n x 1500 B)")
                ax.set_title(f"{S.SEMANTIC_LABELS[sem]}, {v.label}")
                ax.set_ylim(bottom=0)
                if c == 0:
                    ax.set_ylabel("voice packets lost (%)")
                if r == 1:
                    ax.set_xlabel("queue limit (bytes); grey lines: multiples of 1500 B")
                ax.legend(loc="upper right", frameon=False, fontsize=7)
        step = int(np.diff(np.sort(fine["limit"].unique())).min()) if fine["limit"].nunique() > 1 else 0
        fig.suptitle(f"Fine sweep: ADSL1, {S.FINE_RTT_MS} ms, limits in {step} B "
                     f"steps; dashed: 5th/95th percentiles over {int(fine['n'].min())} replications")
    return fig


def fig_fine_period(runs: pd.DataFrame, params: S.StudyParams) -> Any:
    """Periodograms of the fine-sweep curves, and the curves folded by the packet size in the TCP share of the limit."""
    share = S.voice_share(S.FINE_LINK, params.scenario_dir())
    p_voice = S.PACKET_BYTES / (1 - share)
    fig, axes = R.figure(1, 3, 12.0, 3.6)
    with _ctx():
        for sem in ("byte_loose", "byte_strict"):
            for v in S.VARIANTS:
                L, wide = A.fine_matrix(runs, sem, v.name)
                if not len(wide):
                    continue
                periods = A.candidate_periods(L, S.PACKET_BYTES)
                label = f"{S.SEMANTIC_LABELS[sem]} {v.label}"
                style = {"color": SEM_COLOURS[sem], "linestyle": CC_STYLES[v.name], "linewidth": 1.0}
                if periods is not None:
                    amp = A.periodogram(L, wide.to_numpy().mean(axis=0, keepdims=True), periods)[0]
                    axes[0, 0].plot(periods, amp * 100, label=label, **style)
                mean = wide.mean(axis=0)
                phase = np.mod(L * (1 - share), S.PACKET_BYTES)
                folded = mean.groupby(np.floor(phase / 30) * 30).mean()
                axes[0, 1 if sem == "byte_loose" else 2].plot(folded.index, folded.to_numpy() * 100, label=v.label,
                                                               **style)
        ax = axes[0, 0]
        for p in (S.PACKET_BYTES, p_voice, 2 * S.PACKET_BYTES):
            ax.axvline(p, color="#999999", linewidth=0.7, linestyle=":")
        ax.set_xlabel(f"period (bytes); dotted: 1500, {p_voice:.0f} and 3000 B")
        ax.set_ylabel("amplitude (% of voice packets)")
        ax.set_title("Periodogram of the mean loss curve (detrended)")
        ax.legend(frameon=False, fontsize=7)
        for k, sem in ((1, "byte_loose"), (2, "byte_strict")):
            ax = axes[0, k]
            ax.set_xlabel(f"limit x (1 - voice share {share:.3f}) mod 1500 B")
            ax.set_ylabel("mean voice loss (%)")
            ax.set_title(f"{S.SEMANTIC_LABELS[sem]}, folded by the packet size")
            ax.legend(frameon=False, fontsize=7)
    return fig


def fig_h1_scatter(summary_runs: pd.DataFrame) -> Any:
    """Per configuration, NewReno (x) vs CUBIC (y) of the three H1 metrics."""
    g = summary_runs[summary_runs["part"] == "grid"]
    means = g.groupby(["link", "rtt_ms", "semantic", "limit", "cc"], sort=False)[
        ["q_mean_bytes", "iowd_mean_s", "voice_loss"]].mean().unstack("cc")
    fig, axes = R.figure(1, 3, 12.0, 4.0)
    metrics = (("q_mean_bytes", 1e-3, "mean downstream queue (kB)"), ("iowd_mean_s", 1e3, "mean induced voice OWD (ms)"),
               ("voice_loss", 100.0, "voice packets lost (%)"))
    with _ctx():
        for k, (col, scale, label) in enumerate(metrics):
            ax = axes[0, k]
            if (col, "newreno") not in means or (col, "cubic") not in means:
                continue
            x, y = means[(col, "newreno")] * scale, means[(col, "cubic")] * scale
            for link in S.LINKS:
                for sem in S.SEMANTICS:
                    sel = (means.index.get_level_values("link") == link) & (means.index.get_level_values("semantic") == sem)
                    if not sel.any():
                        continue
                    st = _semantic_style(sem)
                    ax.scatter(x[sel], y[sel], s=12, marker=st["marker"], facecolors=st["color"] if link == "adsl1" else "none",
                               edgecolors=st["color"], linewidths=0.8, label=f"{S.LINK_LABELS[link]} {S.SEMANTIC_LABELS[sem]}")
            hi = float(np.nanmax([x.max(), y.max()])) * 1.05 or 1.0
            ax.plot([0, hi], [0, hi], color="#888888", linewidth=0.8)
            ax.set_xlim(0, hi)
            ax.set_ylim(0, hi)
            ax.set_xlabel(f"NewReno: {label}")
            ax.set_ylabel(f"CUBIC: {label}")
        axes[0, 0].legend(frameon=False, fontsize=6, loc="upper left")
        fig.suptitle("Each point is one configuration (link, RTT, semantic, size), mean over replications; above the "
                     "diagonal: CUBIC worse (filled: ADSL1, open: ADSL2)")
    return fig


def fig_timeseries(cwnd: pd.DataFrame, queue: pd.DataFrame, sem: str, window: tuple[float, float]) -> Any:
    """cwnd and downstream queue occupancy over ``window`` (s) of one run per TCP."""
    lo, hi = window
    limit = S.SERIES_LIMITS[sem]
    fig, axes = R.figure(2 * len(S.VARIANTS), 1, 9.0, 7.0, sharex=True)
    with _ctx():
        for k, v in enumerate(S.VARIANTS):
            c = cwnd[(cwnd["semantic"] == sem) & (cwnd["cc"] == v.name)]
            q = queue[(queue["semantic"] == sem) & (queue["cc"] == v.name)]
            c = c[(c["t_s"] >= lo) & (c["t_s"] <= hi)]
            q = q[(q["t_s"] >= lo) & (q["t_s"] <= hi)]
            ax = axes[2 * k, 0]
            ax.step(c["t_s"], c["cwnd_bytes"] / 1000, where="post", color=CC_COLOURS[v.name], linewidth=0.9)
            ax.set_ylabel(f"{v.label}\ncwnd (kB)")
            ax = axes[2 * k + 1, 0]
            col, unit, cap = ("pkts", "packets", limit) if sem == "slot" else ("bytes", "kB", limit / 1000)
            vals = q[col] if sem == "slot" else q[col] / 1000
            ax.step(q["t_s"], vals, where="post", color="#555555", linewidth=0.6)
            ax.axhline(cap, color=SEM_COLOURS[sem], linewidth=0.8, linestyle="--")
            ax.set_ylabel(f"{v.label}\nqueue ({unit})")
        axes[-1, 0].set_xlabel("time (s)")
        lim = f"{limit} packets" if sem == "slot" else f"{limit:,} B"
        fig.suptitle(f"{S.SEMANTIC_LABELS[sem]} {lim}, ADSL1, {S.SERIES_RTT_MS} ms: bulk TCP cwnd and downstream queue "
                     "occupancy (waiting packets; dashed: the limit)")
    return fig


def render_figures(tables: dict[str, pd.DataFrame], fig_dir: Path, params: S.StudyParams) -> list[dict[str, Any]]:
    """Draws every figure as PNG and SVG into ``fig_dir``; returns their descriptions."""
    fig_dir.mkdir(parents=True, exist_ok=True)
    runs = tables["runs"]
    out: list[dict[str, Any]] = []

    def add(stem: str, section: str, fig: Any, caption: str) -> None:
        out.append({"stem": stem, "section": section, **R.save(fig, fig_dir, stem), "caption": caption})

    grid = runs[runs["part"] == "grid"]
    for link in params.links:
        if ((grid["link"] == link) & (grid["semantic"] == "slot")).any():
            add(f"goodput_ps_{link}", "goodput", fig_goodput(runs, link, params),
                f"{S.LINK_LABELS[link]}: downstream goodput of the bulk TCP flow against the PS queue length (both "
                "gateway directions), per minimum RTT (colour) and TCP (solid CUBIC, dashed NewReno); mean over "
                "replications with 95% CIs; dotted: each RTT's BDP.")
    if len(tables["owd"]):
        add("owd_cdf", "latency", fig_owd_cdf(tables["owd"]),
            "CDF of every downstream voice packet's induced one-way delay (OWD minus propagation and serialization) "
            "with a 40 000 B FB-loose queue, NewReno (dashed) against CUBIC (solid); percentiles in the legend.")
    if len(grid):
        add("h1_scatter", "latency", fig_h1_scatter(runs),
            "H1 per configuration: NewReno (x) against CUBIC (y) for the mean downstream queue, the mean induced voice "
            "delay and the voice loss; points above the diagonal are configurations where CUBIC does more damage.")
    for link in params.links:
        if (grid["link"] == link).any():
            add(f"voice_loss_{link}", "loss", fig_voice_loss(runs, link),
                f"{S.LINK_LABELS[link]}: proportion of downstream voice packets lost against the nominal queue size, "
                "per drop-tail semantic (PS plotted at n × 1500 B), TCP (rows) and minimum RTT (columns); 95% CIs.")
    fine = tables.get("fine_curves", pd.DataFrame())
    if len(fine):
        add("fine_sweep", "fine", fig_fine_sweep(fine, runs),
            "The fine sweep (ADSL1, 100 ms): downstream voice loss against the queue limit, mean over replications "
            "(solid) and the 5th/95th percentiles over replications (dashed); black squares: PS at 35..45 packets, "
            "drawn at n × 1500 B.")
        add("fine_period", "fine", fig_fine_period(runs, params),
            "H3: periodogram of each linearly detrended mean loss curve (dotted: 1500 B, 1500 B / (1 - the voice's share "
            "of the link) and 3000 B), and the curves folded by the packet size in the TCP share of the limit, "
            "limit × (1 - voice share) mod 1500 B.")
    cwnd, queue = tables.get("cwnd", pd.DataFrame()), tables.get("queue", pd.DataFrame())
    if len(cwnd):
        for sem in S.SEMANTICS:
            if (cwnd["semantic"] == sem).any():
                window = series_window(params.duration_s)
                add(f"timeseries_{sem}", "timeseries", fig_timeseries(cwnd, queue, sem, window),
                    f"{S.SEMANTIC_LABELS[sem]}: the bulk flow's cwnd and the downstream queue occupancy, "
                    f"{window[0]:g}–{window[1]:g} s of one run (replication 0) per TCP; findings H5 and H6 use "
                    "every replication.")
    return out


# --------------------------------------------------------------------------------------
# report.html


def _setup_html(params: S.StudyParams) -> str:
    links = []
    for link in params.links:
        text, doc = S.base_scenario(link, params.scenario_dir())
        from tcplab.scenario import Scenario

        core = Scenario.from_dict(doc).to_core()
        down, up = core["topology"]["bottleneck"]["rate"], core["topology"]["bottleneck_reverse"]["rate"]
        for rtt in params.rtts_ms:
            bdp = S.bdp_packets(down, rtt)
            links.append({"link": S.LINK_LABELS[link], "down (kbit/s)": down / 1000, "up (kbit/s)": up / 1000,
                          "min RTT (ms)": rtt, "BDP (packets of 1500 B)": round(bdp, 2),
                          "BDP (bytes)": round(bdp * S.PACKET_BYTES),
                          "1500 B packet time down (ms)": round(S.PACKET_BYTES * 8 / down * 1e3, 3)})
    variants = pd.DataFrame([{"TCP": v.label, "cc": json.dumps(v.cc), "tcp": json.dumps(v.tcp)} for v in S.VARIANTS])
    semantics = pd.DataFrame([
        {"semantic": "PS (slot)", "drop the arriving packet if": "packets queued (incl. the one in transmission) ≥ limit",
         "sizes": f"{params.ps_sizes()} packets"},
        {"semantic": "FB-strict (byte_strict)", "drop the arriving packet if": "bytes queued + packet ≥ limit",
         "sizes": f"{params.fb_sizes()} B"},
        {"semantic": "FB-loose (byte_loose, dummynet)", "drop the arriving packet if": "bytes queued > limit",
         "sizes": f"{params.fb_sizes()} B"}])
    fine = (f"FB-loose and FB-strict {S.FINE_RANGE[0]:,}..{S.FINE_RANGE[1]:,} B in {params.fine_step_bytes} B steps "
            f"and PS {S.FINE_PS[0]}..{S.FINE_PS[-1]} packets, on ADSL1 at {S.FINE_RTT_MS} ms, "
            f"{params.fine_replications()} replications" if params.has_fine() else "not run")
    return "\n".join([
        "<h2 id='setup'>Set-up</h2>",
        "<p>A dumbbell of two host pairs. Host A (<code>s0</code>) sends one bulk TCP flow downstream to C "
        "(<code>d0</code>); B (<code>s1</code>) and D (<code>d1</code>) hold a voice call both ways: 186 B packets with "
        "N(20 ms, 1 ms) gaps (truncated at 0). The ADSL line is <code>bottleneck</code> (downstream) and "
        "<code>bottleneck_rev</code> (upstream); each direction has the gateway's queue, the same semantic and size "
        "both ways, and half the minimum RTT of propagation delay. Access links: 100 Mbit/s, no delay. "
        f"Runs last {params.duration_s:g} s; the voice stops {S.VOICE_TAIL_S:g} s before the end, so every voice "
        "packet is delivered or dropped. Metrics are over the whole run.</p>",
        "<p>The configurations are the scenario files "
        + ", ".join(f"<code>{html.escape(str(params.scenario_dir() / (l + '.toml')))}</code>" for l in params.links)
        + " with the swept values set by path (<code>home_gateway.configure</code>); "
        "<code>home_gateway.scenario_toml(link, rtt_ms, semantic, limit, variant)</code> writes any configuration "
        "back as a file for <code>tcplab run</code>.</p>",
        "<h3>Links and bandwidth-delay products</h3>", R.table_html(pd.DataFrame(links)),
        "<h3>TCP variants</h3><p>NewReno as the seed's FreeBSD hosts ran it: the <code>linux-2.6</code> profile with SACK "
        "off (RFC 6582 recovery); CUBIC as Linux runs it. The seed's 2.6 kernels had no PRR (Linux 3.2) or RACK-TLP "
        "(4.4), so both use <code>linux-2.6</code>, the Linux profile without them. Everything else is that profile's "
        "(RFC 3390's IW, 3 segments at MSS 1460; a 3 s initial RTO; delayed ACKs every 2 segments or 40 ms; ABC; "
        "6 MiB receive buffer: the 2.6 kernels' start-up, before IW10 in 2.6.39 and the 1 s initial RTO in 3.1). "
        "The seed gives neither the IW nor the initial RTO.</p>", R.table_html(variants),
        "<h3>Drop-tail semantics</h3><p>Occupancy counts the packet in transmission, as dummynet does (it keeps a "
        "packet queued until its transmission time has elapsed).</p>", R.table_html(semantics),
        f"<h3>Sweeps</h3><p>Main grid: links {', '.join(S.LINK_LABELS[l] for l in params.links)} × minimum RTT "
        f"{params.rtts_ms} ms × the sizes above × both TCPs, {params.reps} replications. Fine sweep: {fine}. "
        f"Replication r runs with core seed {params.seed} + r for every configuration and TCP, so the voice departures "
        "are common random numbers.</p>",
    ])


def _extra_findings_html(tables: dict[str, pd.DataFrame], findings: dict[str, Any]) -> str:
    parts = []
    thresholds = findings.get("thresholds") or {}
    if thresholds:
        df = pd.DataFrame([{"name": k, "value": v["value"], "unit": v["unit"], "reason": v["reason"]}
                           for k, v in thresholds.items()])
        parts.append("<h3>Thresholds and margins, with their reasons (fixed from the seed's words before any run)</h3>"
                     + R.table_html(df))
    readings = findings.get("readings") or {}
    if readings:
        parts.append("<h3>Readings of the seed's words</h3><ul>"
                     + "".join(f"<li><i>{html.escape(k)}</i>: {html.escape(v)}</li>" for k, v in readings.items())
                     + "</ul>")
    owd = tables.get("owd_percentiles", pd.DataFrame())
    if len(owd):
        df = owd.copy()
        for c in [c for c in df.columns if c.endswith("_s")]:
            df[c.replace("_s", " (ms)")] = df.pop(c) * 1e3
        parts.append("<h3>Induced voice delay percentiles, 40 000 B FB-loose</h3>" + R.table_html(df))
    period = tables.get("periodicity", pd.DataFrame())
    if len(period):
        parts.append("<h3>Fine sweep: periods, extrema and bands (finding H3)</h3>" + R.table_html(period))
    return "\n".join(parts)


def write_report(out: Path, params: S.StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                 figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
    """Writes ``out/report.html`` (self-contained: figures embedded as PNG, linked to their files)."""
    title = "tcplab study home-gateway: drop-tail semantics, CUBIC vs NewReno and collateral damage to VoIP (seed 003)"
    runs = tables["runs"]
    intro = ("<p>Stewart, Hayes, Armitage, Welzl and Petlund, <i>Multimedia-unfriendly TCP congestion control and home "
             "gateway queue management</i>, ACM MMSys 2011 (testbed and ns-2), re-run on tcplab's simulator and checked "
             "sentence by sentence (claims ledger below). "
             + R.provenance(manifest, f"{params.n_runs()} runs ({len(runs)} finished)") + "</p>"
             + R.nav(["runs.parquet", "owd.parquet", "cwnd.parquet", "queue.parquet", "summary.parquet",
                      "fine_curves.parquet", "owd_percentiles.parquet", "periodicity.parquet", "findings.json",
                      "study.json"]))
    sections = {"goodput": "Goodput against the PS queue length", "latency": "Voice latency: NewReno against CUBIC",
                "loss": "Voice loss per semantic", "fine": "Fine sweep", "timeseries": "Time series"}
    summary = tables.get("summary", pd.DataFrame())
    grid_summary = summary[summary["part"] == "grid"].drop(columns="part") if len(summary) else summary
    summary_html = ("<h2 id='summary'>Summary table</h2><p class='small'>Main grid, per configuration and TCP: means "
                    "over replications; “±” is the half-width of the 95% Student-t interval. The fine sweep's curves "
                    "are in <code>fine_curves.parquet</code>.</p><details><summary>"
                    f"{len(grid_summary)} rows</summary>" + R.table_html(grid_summary) + "</details>")
    return R.write_page(out, title, intro, [
        _setup_html(params),
        R.findings_html(findings, "seed 003", "docs/studies/home-gateway.md", _extra_findings_html(tables, findings)),
        R.figures_html(out, figs, sections), summary_html,
        R.failures_html(manifest, ("part", "link", "rtt_ms", "semantic", "limits", "reps")), R.parameters_html(manifest)])
