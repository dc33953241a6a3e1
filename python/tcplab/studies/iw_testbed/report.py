"""Figures and ``report.html`` of the ``iw-testbed`` study (seed 001, Chu and Wang, IETF 79, 2010).

The seed is ``docs/seeds/001_ac085380cef1778f.txt``; the study is
:mod:`tcplab.studies.iw_testbed.study`. This module imports only the set-up
(:mod:`tcplab.studies.iw_testbed.testbed`): the study passes it the tables.

Figures (PNG + SVG in ``figures/``), after the seed's slides:

- ``uct_mean``: average UCT per link, load and open count (the light load first),
  IW3 / IW10 / mix, with 95 % whiskers over replications (SACK on, no background
  flows): "Average User Completion Time".
- ``uct_cdf_20m_5open``: UCT CDFs at 72 % and 96 % load on 20 Mbit/s with 5 opens
  (SACK on, no background): "UCT Comparison (20Mbps, 5-open)".
- ``qlen_20m_96``: bottleneck queue over time at 96 %, 5 opens, IW3 vs IW10
  (replication 0): "IW3's qlen, IW10's qlen, 96 % load".
- ``plr_64k``: PLR per IW variant, single open 97.5 %, 5 opens 75 % and 97.5 %:
  "PLR comparison (64Kbps)".
- ``fairness``: mean UCT of clients 0 and 2 under IW3 alone and in the mix (where their
  servers are IW3), and of clients 1 and 3 in the mix (IW10) and under IW10 alone.
- ``cwnd_64k_bg``: cwnd/ssthresh of the two long-lived flows, 64 kbit/s, 75 %, 5 opens,
  IW3 vs IW10 (replication 0).
- ``bg_goodput``: background goodput per configuration, IW3 vs IW10 vs mix.
- ``sack``: mean UCT with and without SACK for IW3 and IW10.
- ``batches_64k``: share of 5-open batches that overflowed, by how many other batches
  overlap them (none, at most one, any).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies import reporting as R
from tcplab.studies.iw_testbed import testbed as S

__all__ = ["render_figures", "write_report"]

COLOURS = {"iw3": "#1f77b4", "iw10": "#d62728", "mix": "#2ca02c"}
LABELS = {"iw3": "IW3", "iw10": "IW10", "mix": "IW3+IW10"}


def _ci(values: pd.Series) -> tuple[float, float]:
    v = values.replace([np.inf], np.nan).dropna().to_numpy(float)
    if not len(v):
        return np.nan, np.nan
    e = stats.mean_ci(v)
    return e.value, (e.high - e.value) if e.n >= 2 else 0.0


def _groups(link: str) -> list[tuple[float, int]]:
    """(load, opens) of a link's runs without background, in report order: the light load first."""
    return [(S.LINKS[link].light_load, 1)] + [(ld, o) for ld in S.LINKS[link].loads for o in S.OPENS]


def _fig(figs: list[dict[str, Any]], fig: Any, fig_dir: Path, stem: str, section: str, caption: str) -> None:
    figs.append({"stem": stem, "section": section, "caption": caption, **R.save(fig, fig_dir, stem)})


def render_figures(tables: dict[str, pd.DataFrame], fig_dir: Path, params: Any) -> list[dict[str, Any]]:
    """Draws the study's figures; returns their descriptions."""
    runs, txns, series = tables["runs"], tables.get("txns", pd.DataFrame()), tables.get("series", pd.DataFrame())
    figs: list[dict[str, Any]] = []
    if not len(runs):
        return figs
    base = runs[runs["sack"] & ~runs["bg"]]

    # Average UCT ---------------------------------------------------------------------
    links = [l for l in S.LINKS if l in set(runs["link"])]
    fig, axes = R.figure(1, len(links), 5.2 * len(links), 3.6)
    for ax, link in zip(axes[0], links):
        part = base[base["link"] == link]
        groups = _groups(link)
        x = np.arange(len(groups))
        for k, iw in enumerate(S.IW_VARIANTS):
            vals = [_ci(part[(part["load"] == ld) & (part["opens"] == o) & (part["iw"] == iw)]["uct_mean_s"])
                    for ld, o in groups]
            ax.bar(x + (k - 1) * 0.27, [v[0] for v in vals], 0.27, yerr=[v[1] for v in vals], color=COLOURS[iw],
                   label=LABELS[iw], capsize=2)
        ax.set_xticks(x, [f"{ld:.1%}\n{'5 opens' if o == 5 else 'single'}" for ld, o in groups])
        ax.set_title(S.LINKS[link].label)
        ax.set_ylabel("mean UCT (s)")
        ax.legend(fontsize=7)
    _fig(figs, fig, fig_dir, "uct_mean", "uct", "Average user completion time per link, load and open count (SACK on, "
         "no background flows); whiskers: 95% Student-t intervals over replications.")

    # UCT CDFs, 20 Mbit/s, 5 opens -----------------------------------------------------------
    if len(txns) and "20m" in links:
        t = txns[(txns["link"] == "20m") & (txns["opens"] == 5) & txns["sack"] & ~txns["bg"]]
        if len(t):
            fig, axes = R.figure(1, 2, 10, 3.6)
            for ax, load in zip(axes[0], S.LINKS["20m"].loads):
                for iw in S.IW_VARIANTS:
                    u = t[(t["load"] == load) & (t["iw_variant"] == iw)]["uct_s"].to_numpy(float)
                    R.step(ax, np.where(np.isnan(u), np.inf, u), color=COLOURS[iw], label=LABELS[iw])
                ax.set_xscale("log")
                ax.set_xlabel("UCT (s)")
                ax.set_ylabel("CDF")
                ax.set_title(f"20 Mbit/s, 5 opens, {load:.0%} load")
                ax.legend(fontsize=7)
            _fig(figs, fig, fig_dir, "uct_cdf_20m_5open", "uct", "UCT CDFs on 20 Mbit/s with 5 simultaneous opens (SACK "
                 f"on, no background), replications 0..{params.keep_txn_reps - 1} pooled.")

    # Queue over time, 20 Mbit/s 96 % ----------------------------------------------------------
    if len(series) and "20m" in links:
        s = series[(series["link"] == "20m") & (series["load"] == 0.96) & (series["opens"] == 5) & series["sack"]
                   & ~series["bg"] & (series["what"] == "queue_pkts")]
        if len(s):
            fig, axes = R.figure(1, 2, 10, 3.2, sharey=True)
            for ax, iw in zip(axes[0], ("iw3", "iw10")):
                p = s[s["iw_variant"] == iw]
                ax.plot(p["t_s"], p["value"], color=COLOURS[iw], lw=0.6)
                ax.set_title(f"{LABELS[iw]}: queue, 20 Mbit/s, 96%, 5 opens")
                ax.set_xlabel("time (s)")
                ax.set_ylabel("packets queued")
            _fig(figs, fig, fig_dir, "qlen_20m_96", "queue", "Bottleneck queue occupancy (packets waiting) over time, "
                 "20 Mbit/s at 96% load with 5 opens, SACK on, no background, replication 0, sampled on a 1201-point grid.")

    # PLR, 64 kbit/s --------------------------------------------------------------------------
    if "64k" in links:
        p = runs[(runs["link"] == "64k") & ~runs["bg"]]
        cases = [(0.975, 1), (0.75, 5), (0.975, 5)]
        fig, axes = R.figure(1, 1, 6, 3.4)
        ax = axes[0][0]
        x = np.arange(len(cases))
        for k, iw in enumerate(S.IW_VARIANTS):
            vals = [_ci(p[(p["load"] == ld) & (p["opens"] == o) & (p["iw"] == iw)]["plr"]) for ld, o in cases]
            ax.bar(x + (k - 1) * 0.27, [v[0] for v in vals], 0.27, yerr=[v[1] for v in vals], color=COLOURS[iw],
                   label=LABELS[iw], capsize=2)
        ax.set_xticks(x, [f"{'single' if o == 1 else '5 opens'}, {ld:.1%}" for ld, o in cases])
        ax.set_ylabel("PLR at the router")
        ax.legend(fontsize=7)
        _fig(figs, fig, fig_dir, "plr_64k", "plr", "Packet loss rate at the 64 kbit/s router (no background flows, "
             "pooled over SACK on and off), the seed's three cases.")

    # Fairness in the mix -----------------------------------------------------------------------
    fig, axes = R.figure(1, len(links), 5.2 * len(links), 3.4)
    for ax, link in zip(axes[0], links):
        part = runs[(runs["link"] == link) & runs["sack"] & ~runs["bg"]]
        groups = _groups(link)
        x = np.arange(len(groups))
        bars = (("iw3", "uct_mean_c02_s", "clients 0, 2: IW3 alone", "#1f77b4"),
                ("mix", "uct_mean_c02_s", "clients 0, 2: IW3 in mix", "#9ecae1"),
                ("mix", "uct_mean_c13_s", "clients 1, 3: IW10 in mix", "#fc9272"),
                ("iw10", "uct_mean_c13_s", "clients 1, 3: IW10 alone", "#d62728"))
        for k, (iw, col, label, colour) in enumerate(bars):
            vals = [_ci(part[(part["load"] == ld) & (part["opens"] == o) & (part["iw"] == iw)][col]) for ld, o in groups]
            ax.bar(x + (k - 1.5) * 0.2, [v[0] for v in vals], 0.2, yerr=[v[1] for v in vals], color=colour, label=label,
                   capsize=2)
        ax.set_xticks(x, [f"{ld:.1%}\n{'5 opens' if o == 5 else 'single'}" for ld, o in groups])
        ax.set_title(S.LINKS[link].label)
        ax.set_ylabel("mean UCT (s)")
        ax.legend(fontsize=7)
    _fig(figs, fig, fig_dir, "fairness", "fairness", "Fairness: mean UCT of clients 0 and 2 under IW3 alone and in the "
         "50/50 mix (where their servers are IW3), and of clients 1 and 3 in the mix (IW10) and under IW10 alone: the "
         "same clients and arrivals in each pair (SACK on, no background).")

    # Long-lived flows -----------------------------------------------------------------------------
    if len(series) and "64k" in links:
        s = series[(series["link"] == "64k") & (series["load"] == 0.75) & (series["opens"] == 5) & series["sack"]
                   & series["bg"]]
        if len(s) and (s["what"] != "queue_pkts").any():
            fig, axes = R.figure(1, 2, 10, 3.4, sharey=True)
            for ax, iw in zip(axes[0], ("iw3", "iw10")):
                p = s[s["iw_variant"] == iw]
                for k, style in ((0, "-"), (1, "--")):
                    for what, colour in (("cwnd", "#333333"), ("ssthresh", "#ff7f0e")):
                        q = p[p["what"] == f"bg{k}_{what}_bytes"]
                        ax.plot(q["t_s"], q["value"] / 1448, style, color=colour, lw=0.7, label=f"flow {k} {what}")
                ax.set_title(f"long-lived flows under {LABELS[iw]}")
                ax.set_xlabel("time (s)")
                ax.set_ylabel("segments")
                ax.legend(fontsize=6)
            _fig(figs, fig, fig_dir, "cwnd_64k_bg", "bg", "cwnd and ssthresh of the two long-lived flows, 64 kbit/s, 75% "
                 "load, 5 opens, SACK on, replication 0 (an unbounded ssthresh is not drawn).")
    p = runs[runs["bg"] & runs["sack"]]
    if len(p):
        fig, axes = R.figure(1, len(links), 5.2 * len(links), 3.4)
        for ax, link in zip(axes[0], links):
            part = p[p["link"] == link]
            groups = [(ld, o) for ld in S.LINKS[link].loads for o in S.OPENS]
            x = np.arange(len(groups))
            for k, iw in enumerate(S.IW_VARIANTS):
                vals = [_ci(part[(part["load"] == ld) & (part["opens"] == o) & (part["iw"] == iw)]["bg_goodput_bps"]
                            / 1e3) for ld, o in groups]
                ax.bar(x + (k - 1) * 0.27, [v[0] for v in vals], 0.27, yerr=[v[1] for v in vals], color=COLOURS[iw],
                       label=LABELS[iw], capsize=2)
            ax.set_xticks(x, [f"{ld:.1%}\n{'5 opens' if o == 5 else 'single'}" for ld, o in groups])
            ax.set_title(S.LINKS[link].label)
            ax.set_ylabel("background goodput (kbit/s)")
            ax.legend(fontsize=7)
        _fig(figs, fig, fig_dir, "bg_goodput", "bg", "Summed goodput of the two long-lived flows, per configuration "
             "(SACK on); whiskers: 95% intervals over replications.")

    # SACK ------------------------------------------------------------------------------------------
    fig, axes = R.figure(1, len(links), 5.2 * len(links), 3.4)
    for ax, link in zip(axes[0], links):
        part = runs[(runs["link"] == link) & ~runs["bg"] & runs["iw"].isin(["iw3", "iw10"])]
        combos = [("iw3", True), ("iw3", False), ("iw10", True), ("iw10", False)]
        groups = _groups(link)
        x = np.arange(len(groups))
        for k, (iw, sack) in enumerate(combos):
            vals = [_ci(part[(part["load"] == ld) & (part["opens"] == o) & (part["iw"] == iw) & (part["sack"] == sack)]
                        ["uct_mean_s"]) for ld, o in groups]
            ax.bar(x + (k - 1.5) * 0.2, [v[0] for v in vals], 0.2, yerr=[v[1] for v in vals], color=COLOURS[iw],
                   alpha=1.0 if sack else 0.45, hatch=None if sack else "//",
                   label=f"{LABELS[iw]} {'SACK' if sack else 'NewReno'}", capsize=2)
        ax.set_xticks(x, [f"{ld:.1%}\n{'5 opens' if o == 5 else 'single'}" for ld, o in groups])
        ax.set_title(S.LINKS[link].label)
        ax.set_ylabel("mean UCT (s)")
        ax.legend(fontsize=6)
    _fig(figs, fig, fig_dir, "sack", "sack", "Mean UCT with SACK and without (NewReno), IW3 and IW10, no background.")

    # Batches (T6) ------------------------------------------------------------------------------------
    if "64k" in links:
        p = runs[(runs["link"] == "64k") & (runs["opens"] == 5) & ~runs["bg"]]
        if len(p):
            fig, axes = R.figure(1, 1, 6, 3.2)
            ax = axes[0][0]
            x = np.arange(3)
            for k, iw in enumerate(S.IW_VARIANTS):
                q = p[p["iw"] == iw]
                shares = [q[num].sum() / max(q[den].sum(), 1) for num, den in
                          (("isolated_dropped", "batches_isolated"), ("lt2_dropped", "batches_lt2"),
                           ("batches_dropped", "n_batches"))]
                ax.bar(x + (k - 1) * 0.27, shares, 0.27, color=COLOURS[iw], label=LABELS[iw])
            ax.set_xticks(x, ["overlapping no other", "overlapping at most one", "all batches"])
            ax.set_ylabel("share with a drop")
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=7)
            _fig(figs, fig, fig_dir, "batches_64k", "batches", "64 kbit/s, 5 simultaneous opens, no background, 75 % "
                 "and 97.5 %: share of batches with at least one dropped packet, for batches whose life (first open to "
                 "last response) overlaps no other batch, at most one other, and all batches (T6, T7).")
    return figs


def _setup_html(params: Any) -> str:
    rows = "".join(
        f"<tr><td class='l'>{l.label}</td><td>{l.light_load:.0%} (single opens, no background; tcplab's choice), "
        f"{', '.join(f'{x:.1%}' for x in l.loads)} (the seed's)</td><td>{l.warmup_s:g}</td>"
        f"<td>{params.measure_s(name):g}</td><td>{l.drain_s:g}</td></tr>"
        for name, l in S.LINKS.items() if name in params.links)
    return (
        "<h2 id='setup'>Set-up</h2><p>Dumbbell of 4 client/server pairs, 150 ms each way (RTT 300 ms); the bottleneck "
        "in both directions is 64 kbit/s with a 40-packet drop-tail queue or 20 Mbit/s with 500 packets. Transactions: "
        "a 200 B request and a 15 kB response over a new connection each, Poisson arrivals at the offered load "
        "(rate = load × C / (8 × opens × W), W = 15 000 + 11 × 52 = 15 572 B on the wire), split over the 4 clients. "
        "IW3, IW10 or the 50/50 mix per client (clients 0 and 2 IW3, 1 and 3 IW10); single or 5 simultaneous opens; "
        "SACK on or off; with or without two long-lived CUBIC flows (the seed ran them on 64 kbit/s with 5 opens; the "
        "other background runs are tcplab's additions, checked only as extensions). TCP: profile "
        "<code>linux-2.6</code> (no PRR or RACK-TLP, as in 2.6 kernels), CUBIC, the FIN "
        "quirk, and the 2.6 kernels' initial RTO of 3 s and timestamps (per-ACK RTT, Eifel undo, 52 B headers). "
        "Scenario files: <code>examples/iw-testbed/</code>; choices and deviations: "
        "<code>docs/studies/iw-testbed.md</code>.</p>"
        "<table><thead><tr><th class='l'>link</th><th>loads</th><th>warm-up (s)</th><th>window (s)</th>"
        f"<th>drain (s)</th></tr></thead><tbody>{rows}</tbody></table>")


def write_report(out: Path, params: Any, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                 figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
    """Writes ``out/report.html`` (self-contained: figures embedded as PNG, linked to their files)."""
    title = "tcplab study iw-testbed: IW10 vs IW3 testbed, web transactions and long-lived flows (seed 001)"
    runs = tables["runs"]
    n_txn = int(runs["n_txn"].sum()) if len(runs) else 0
    unfinished = int((runs["n_txn"] - runs["n_finished"]).sum()) if len(runs) else 0
    intro = ("<p>Chu and Wang, <i>A testbed study on IW10 vs IW3</i>, IETF 79, 2010 (Linux testbed), reproduced on "
             "tcplab's simulator. " + R.provenance(manifest, f"{params.n_runs()} runs ({n_txn} transactions in the "
                                                             f"windows, {unfinished} unfinished)") + "</p>"
             + R.nav(["runs.parquet", "txns.parquet", "series.parquet", "summary.parquet", "findings.json",
                      "study.json"]))
    titles = {"uct": "User completion time", "queue": "Queue occupancy", "plr": "Packet loss rate",
              "fairness": "Fairness in the mix", "bg": "Long-lived flows", "sack": "SACK", "batches": "Batches (T6, T7)"}
    summary_html = ("<h2 id='summary'>Summary table</h2><p class='small'>Per configuration and TCP variant, means over "
                    "replications; “±” is the half-width of the 95% Student-t interval. UCT percentiles count an "
                    "unfinished transaction as infinite (then the cell is left out of the mean).</p>"
                    + R.table_html(tables["summary"]))
    return R.write_page(out, title, intro, [
        _setup_html(params), R.findings_html(findings, "seed 001", "docs/studies/iw-testbed.md"),
        R.figures_html(out, figs, titles), summary_html,
        R.failures_html(manifest, ("link", "load", "opens", "bg", "reps")), R.parameters_html(manifest)])
