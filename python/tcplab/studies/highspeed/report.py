"""Figures and ``report.html`` of the ``highspeed`` study (seed 002, ``docs/seeds/002_06d48414b99b3466.txt``).

Figures (``figures/*.png`` and ``.svg``), after the seed's slides; every figure but
``spikes`` and ``without_short`` uses the runs with the seed's short-lived flows:

- ``link_util``: utilisation of each of the 8 backbone links per protocol (alone);
- ``rel_vs_rtt``: per-flow relative throughput (first formula) of long-lived flows
  against their base RTT, one panel per load;
- ``rel_vs_hops``: the same against hop count;
- ``throughput_cdf``: CDF of per-flow throughput of long-lived flows, heavy load (40);
- ``reno_degradation``: Reno flows' relative throughput (second formula) in mixed runs,
  against RTT and hop count, per coexisting protocol;
- ``short_times``: mean transfer time of short-lived flows, protocol flows alone and
  Reno flows mixed, against the all-Reno baseline;
- ``tradeoff``: efficiency (relative throughput of protocol flows, alone) against
  friendliness (Reno flows' relative throughput, mixed), one point per protocol;
- ``slopes``: the throughput-vs-distance slopes (against ln RTT and hop count) of
  each protocol alone, heavy load (the seed's "Fairness (1)");
- ``without_short``: relative throughput of long-lived flows with and without the
  short-lived flows, and the RTT spikes of Reno's long-lived flows in both (the seed's
  "RTT of a flow; an example").

This module imports only :mod:`tcplab.studies.highspeed.setup` of the study (the study
definition imports this module, not the other way round).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab.studies import reporting as R
from tcplab.studies.highspeed import setup as H

__all__ = ["render_figures", "write_report"]

_COLORS = {"reno": "#7f7f7f", "highspeed": "#1f77b4", "scalable": "#ff7f0e", "bic": "#2ca02c", "cubic": "#d62728",
           "htcp": "#9467bd", "compound": "#8c564b", "areno": "#e377c2"}
#: Base-RTT bins of the per-RTT figures, s.
RTT_EDGES = np.array([0.0, 0.06, 0.1, 0.15, 0.2, 0.3, 10.0])
RTT_LABELS = ["<60", "60-100", "100-150", "150-200", "200-300", ">300"]


def _protocols(df: pd.DataFrame) -> list[str]:
    return [p for p in H.PROTOCOLS[1:] if p in set(df["protocol"])]


def _case_label(n: int, loss: bool) -> str:
    return f"{n} long-lived" + (", random loss" if loss else "")


def render_figures(tables: dict[str, pd.DataFrame], fig_dir: Path, params: H.StudyParams) -> list[dict[str, Any]]:
    """Draws the figures; returns their descriptions (see :mod:`tcplab.studies.reporting`)."""
    rel, rm, lu, flows = tables["relative"], tables["run_metrics"], tables["link_util"], tables["flows"]
    if not len(rm):
        return []
    # The seed's runs (with short-lived flows); the runs without them have their own figure.
    rm_all = rm
    rel, rm, lu, flows = (t[t["shorts"]] for t in (rel, rm, lu, flows))
    figs: list[dict[str, Any]] = []
    cases = params.cases()
    protos = _protocols(rm)

    # Backbone utilisation per link ----------------------------------------------------
    fig, axes = R.figure(1, len(cases), 4.6 * len(cases), 3.4, sharey=True)
    links = [f"bb{i}{s}" for i in range(4) for s in ("", "_rev")]
    for c, (n, loss) in enumerate(cases):
        ax = axes[0, c]
        part = lu[(lu["n_long"] == n) & (lu["loss"] == loss) & (lu["mix"] == "alone")]
        ps = ["reno"] + protos
        w = 0.8 / len(ps)
        for j, p in enumerate(ps):
            u = part[part["protocol"] == p].groupby("link")["utilisation"].mean().reindex(links)
            ax.bar(np.arange(len(links)) + j * w, u.to_numpy(), w, color=_COLORS[p], label=H.LABELS[p])
        ax.set_xticks(np.arange(len(links)) + 0.4 - w / 2, links, rotation=60, fontsize=7)
        ax.set_title(_case_label(n, loss))
    axes[0, 0].set_ylabel("utilisation")
    axes[0, 0].legend(fontsize=6, ncol=2)
    active = rm[rm["mix"] == "alone"].groupby("protocol")["util_active"].mean()
    base_active = rm["base_util_active"].mean()
    figs.append({"stem": "link_util", "section": "eff", **R.save(fig, fig_dir, "link_util"),
                 "caption": "Utilisation of each backbone link over the run (each protocol alone; mean over "
                            "replications). bb{i} runs r_i -> r_{i+1}, bb{i}_rev back. Over the whole run it is fixed by "
                            "the offered bytes once every file completes; the utilisation while long-lived flows are "
                            f"active is Reno {base_active:.3f}, "
                            + ", ".join(f"{H.LABELS[p]} {active.get(p, float('nan')):.3f}" for p in protos) + "."})

    hs_long = rel[(rel["role"] == "hs") & (rel["cls"] == "long") & (rel["mix"] == "alone")]
    # Relative throughput vs RTT and vs hops -------------------------------------------
    for stem, col, xs, xlabels, xtitle in (
            ("rel_vs_rtt", "rtt_bin", RTT_LABELS, RTT_LABELS, "base RTT (ms)"),
            ("rel_vs_hops", "hop_bin", ["1", "2", "3-4"], ["1", "2", "3-4"], "backbone hops")):
        df = hs_long.assign(rtt_bin=pd.cut(hs_long["rtt_s"], RTT_EDGES, labels=RTT_LABELS))
        fig, axes = R.figure(1, len(cases), 4.6 * len(cases), 3.4, sharey=True)
        for c, (n, loss) in enumerate(cases):
            ax = axes[0, c]
            part = df[(df["n_long"] == n) & (df["loss"] == loss)]
            for p in protos:
                m = part[part["protocol"] == p].groupby(col, observed=False)["ratio"].mean().reindex(xs)
                ax.plot(np.arange(len(xs)), m.to_numpy(), "o-", color=_COLORS[p], label=H.LABELS[p])
            ax.axhline(1.0, color="k", lw=0.6)
            ax.set_xticks(np.arange(len(xs)), xlabels, fontsize=7)
            ax.set_xlabel(xtitle)
            ax.set_title(_case_label(n, loss))
        axes[0, 0].set_ylabel("relative throughput vs Reno")
        axes[0, 0].legend(fontsize=6, ncol=2)
        figs.append({"stem": stem, "section": "eff", **R.save(fig, fig_dir, stem),
                     "caption": "Seed 002's relative throughput (throughput of flow i with the protocol / with Reno, "
                                f"averaged over flows) of long-lived flows, each protocol alone, by {xtitle}."})

    # CDF of per-flow throughput, heavy load --------------------------------------------
    heavy = 40 if 40 in params.loads else params.loads[0]
    part = flows[(flows["n_long"] == heavy) & (~flows["loss"]) & (flows["mix"] == "alone") & (flows["cls"] == "long")]
    if len(part):
        fig, axes = R.figure(1, 1, 5.5, 3.6)
        ax = axes[0, 0]
        for p in ["reno"] + protos:
            v = part.loc[part["protocol"] == p, "throughput_bps"].to_numpy() / 1e6
            R.step(ax, v, color=_COLORS[p], label=H.LABELS[p])
        ax.set_xlabel("per-flow throughput (Mbit/s)")
        ax.set_ylabel("CDF")
        ax.legend(fontsize=7)
        figs.append({"stem": "throughput_cdf", "section": "fair", **R.save(fig, fig_dir, "throughput_cdf"),
                     "caption": f"CDF of long-lived flows' throughput, {heavy} long-lived flows, each protocol alone, "
                                "every replication."})

    # Reno degradation -----------------------------------------------------------------
    reno = rel[(rel["role"] == "reno") & (rel["cls"] == "long")]
    if len(reno):
        reno = reno.assign(rtt_bin=pd.cut(reno["rtt_s"], RTT_EDGES, labels=RTT_LABELS))
        fig, axes = R.figure(1, 2, 9.5, 3.4, sharey=True)
        for ax, col, xs, xtitle in ((axes[0, 0], "rtt_bin", RTT_LABELS, "base RTT (ms)"),
                                    (axes[0, 1], "hop_bin", ["1", "2", "3-4"], "backbone hops")):
            for p in protos:
                m = reno[reno["protocol"] == p].groupby(col, observed=False)["ratio"].mean().reindex(xs)
                ax.plot(np.arange(len(xs)), m.to_numpy(), "o-", color=_COLORS[p], label=H.LABELS[p])
            ax.axhline(1.0, color="k", lw=0.6)
            ax.set_xticks(np.arange(len(xs)), xs, fontsize=7)
            ax.set_xlabel(xtitle)
        axes[0, 0].set_ylabel("Reno flows' relative throughput")
        axes[0, 0].legend(fontsize=6, ncol=2)
        figs.append({"stem": "reno_degradation", "section": "friend", **R.save(fig, fig_dir, "reno_degradation"),
                     "caption": "Seed 002's second formula: throughput of Reno flow i coexisting with the protocol / "
                                "coexisting with Reno only, averaged over the long-lived Reno flows of the mixed runs "
                                "(every case), indexed by the coexisting protocol."})

    # Short-flow transfer times --------------------------------------------------------
    fig, axes = R.figure(1, 1, 6.0, 3.4)
    ax = axes[0, 0]
    x = np.arange(len(protos))
    a = [rm[(rm["protocol"] == p) & (rm["mix"] == "alone")]["short_s"].mean() for p in protos]
    b = [rm[(rm["protocol"] == p) & (rm["mix"] == "mixed")]["short_reno_s"].mean() for p in protos]
    base = rm["short_base_s"].mean()
    ax.bar(x - 0.2, a, 0.4, label="protocol flows (alone)")
    ax.bar(x + 0.2, b, 0.4, label="Reno flows (mixed)")
    ax.axhline(base, color="k", lw=0.8, label="all-Reno baseline")
    ax.set_xticks(x, [H.LABELS[p] for p in protos], fontsize=7)
    ax.set_ylabel("mean transfer time (s)")
    ax.legend(fontsize=7)
    figs.append({"stem": "short_times", "section": "short", **R.save(fig, fig_dir, "short_times"),
                 "caption": "Mean transfer time of the short-lived flows (every case and replication)."})

    # Trade-off chart (the no-loss loads, as findings H9 and H10) -------------------------
    fig, axes = R.figure(1, 1, 5.0, 4.0)
    ax = axes[0, 0]
    noloss = rm[~rm["loss"]]
    for p in protos:
        eff = noloss[(noloss["protocol"] == p) & (noloss["mix"] == "alone")]["rel_long"].mean()
        fr = noloss[(noloss["protocol"] == p) & (noloss["mix"] == "mixed")]["reno_deg_long"].mean()
        ax.plot([fr], [eff], "o", color=_COLORS[p], ms=8)
        ax.annotate(H.LABELS[p], (fr, eff), fontsize=8, xytext=(4, 4), textcoords="offset points")
    ax.axhline(1.0, color="k", lw=0.5)
    ax.axvline(1.0, color="k", lw=0.5)
    ax.set_xlabel("friendliness: long Reno flows' relative throughput (mixed)")
    ax.set_ylabel("efficiency: long protocol flows' relative throughput (alone)")
    figs.append({"stem": "tradeoff", "section": "friend", **R.save(fig, fig_dir, "tradeoff"),
                 "caption": "The seed's efficiency/friendliness trade-off, 10 and 40 long-lived flows without random "
                            "loss: up is more efficient, right is friendlier (1 = as with Reno)."})

    # Throughput vs distance: slopes, heavy load ------------------------------------------
    heavy = rm[(rm["n_long"] == 40) & ~rm["loss"] & (rm["mix"] == "alone")]
    if len(heavy):
        fig, axes = R.figure(1, 2, 9.5, 3.4)
        ps = ["reno"] + protos
        for ax, col, xtitle in ((axes[0, 0], "slope_rtt", "slope of ln(throughput) vs ln(base RTT)"),
                                (axes[0, 1], "slope_hops", "slope of ln(throughput) per hop")):
            for j, p in enumerate(ps):
                v = heavy.loc[heavy["protocol"] == p, col].dropna().to_numpy()
                ax.plot(v, np.full(len(v), j), "o", color=_COLORS[p], alpha=0.6, ms=4)
                if len(v):
                    ax.plot([v.mean()], [j], "|", color="k", ms=12)
            ax.axvline(0.0, color="k", lw=0.5)
            ax.set_yticks(np.arange(len(ps)), [H.LABELS[p] for p in ps], fontsize=7)
            ax.set_xlabel(xtitle)
        figs.append({"stem": "slopes", "section": "fair", **R.save(fig, fig_dir, "slopes"),
                     "caption": "Per-flow throughput against distance, 40 long-lived flows, each protocol alone: the "
                                "least-squares slope over each run's long-lived flows (one dot per replication, bar = "
                                "mean). More negative is steeper (findings H5, H6, T2)."})

    # Without short-lived flows -------------------------------------------------------------
    ten = rm_all[(rm_all["n_long"] == 10) & ~rm_all["loss"] & (rm_all["mix"] == "alone")]
    if len(ten) and (~ten["shorts"]).any():
        fig, axes = R.figure(1, 2, 9.5, 3.4)
        ax = axes[0, 0]
        x = np.arange(len(protos))
        for k_, (sh, label) in enumerate(((True, "with short-lived flows"), (False, "without"))):
            v = [ten[(ten["protocol"] == p) & (ten["shorts"] == sh)]["rel_long"].mean() for p in protos]
            ax.bar(x + (k_ - 0.5) * 0.4, v, 0.4, label=label)
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xticks(x, [H.LABELS[p] for p in protos], fontsize=7)
        ax.set_ylabel("relative throughput, long-lived flows")
        ax.legend(fontsize=7)
        ax = axes[0, 1]
        reno = ten[ten["protocol"] == "reno"]
        for k_, sh in enumerate((True, False)):
            v = reno.loc[reno["shorts"] == sh, "spike_rate"].dropna().to_numpy()
            ax.plot(np.full(len(v), k_), v, "o", color=_COLORS["reno"])
        ax.set_xticks([0, 1], ["with short-lived flows", "without"])
        ax.set_xlim(-0.5, 1.5)
        ax.set_ylabel("RTT spikes per minute per flow (Reno)")
        figs.append({"stem": "without_short", "section": "short", **R.save(fig, fig_dir, "without_short"),
                     "caption": "10 long-lived flows, no random loss, each protocol alone, with and without the 100 "
                                "short-lived flows (findings S1, S2). Left: relative throughput of the long-lived flows "
                                "(each against Reno in the same set-up). Right: spikes of the first three long-lived "
                                "flows' queueing delay (rises above 5 ms after falling below 2.5 ms), per minute, one "
                                "dot per replication."})
    return figs


def write_report(out: Path, params: H.StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                 figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
    """Writes ``out/report.html``."""
    k = H.SCALES[params.scale]
    title = "tcplab study highspeed: legacy and high-speed TCPs on a parking lot (seed 002)"
    intro = ("<p>H. Shimonishi, T. Murase, M. Sanadidi, <i>Assessing interactions among legacy and high-speed TCPs</i>, "
             "PFLDnet 2007, checked on tcplab's simulator. "
             + R.provenance(manifest, f"{params.n_runs()} runs") + "</p>"
             + R.nav(["flows.parquet", "links.parquet", "runs.parquet", "relative.parquet", "run_metrics.parquet",
                      "link_util.parquet", "spikes.parquet", "findings.json", "study.json"]))
    setup = (f"<h2 id='setup'>Set-up</h2><p>Scale <b>{params.scale}</b> (rates, buffers and sizes / {k}): a parking lot "
             f"of 5 routers, 8 backbone links of {1000 // k} Mbit/s, 15 ms, {2000 // k} kB drop-tail buffers; per case "
             f"{params.short} short-lived flows (Pareto, shape 1.2, mean {1000 // k} kB, 1 s exponential "
             f"inter-arrivals) and 10 or 40 long-lived flows ({4700 // k} MB, 2 min exponential inter-arrivals); "
             "each flow's base RTT is a shifted exponential of mean 130 ms above its backbone floor; random loss "
             f"{H.LOSS_PER_FULL * k * k:g} per packet per backbone link. Mixed runs put half of each class on Reno "
             "(the same flows every time). With 10 long-lived flows and no random loss, Reno and every protocol "
             "also run alone without the short-lived flows (the seed's \"RTT of a flow; an example\"). "
             "<code>docs/studies/highspeed.md</code> gives every choice the seed leaves open.</p>")
    summary = pd.DataFrame(findings.get("summary") or [])
    summary_html = ("<h2 id='summary'>Summary table</h2><p class='small'>Per protocol and mix, means over runs.</p>"
                    + (R.table_html(summary) if len(summary) else ""))
    sections = {"eff": "Efficiency", "fair": "Fairness", "friend": "Friendliness to Reno",
                "short": "Short-lived flows"}
    return R.write_page(out, title, intro, [
        setup, R.findings_html(findings, "seed 002", "docs/studies/highspeed.md"), R.figures_html(out, figs, sections),
        summary_html, R.failures_html(manifest, ("protocol", "mix", "n_long", "loss", "shorts", "rep")),
        R.parameters_html(manifest)])
