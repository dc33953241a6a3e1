"""Analysis of study ``iw-irto``: per-run metrics, per-configuration facts and summary tables.

The seed (``docs/seeds/000_ae80ce17cd677c8e.txt``) reads its results off CDFs of flow
elapsed time, fairness plots, RTO counts and CDFs of one-way delay. This module turns
the tasks' per-flow and per-run rows into one row per run (:func:`run_metrics`) with
every quantity the claims (:mod:`tcplab.studies.iw_irto.claims`) compare, plus two
per-configuration facts the seed's sentences condition on: the effective end-to-end
RTT (:func:`effective_rtt`) and whether the initial RTO changed a run at all
(:func:`irto_effect`).

Example:
    >>> rm = pd.DataFrame({"link": ["lte"] * 2, "buffer": ["red"] * 2, "n_flows": [1, 1], "iw": [3, 3],
    ...                    "irto_s": [3.0, 1.0], "rep": [0, 0], "digest": ["a", "a"], "owd_mean_s": [0.03, 0.03]})
    >>> irto_effect(rm)[["link", "iw", "irto_changes_runs"]].values.tolist()
    [['lte', 3, False]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies.findings import num
from tcplab.studies.iw_irto.setup import (CONFIG, LINKS, RUN, VARIANT, WIRED_DELAY_S, buffer_by_id, sort_rows,
                                          variant_label)

__all__ = ["run_metrics", "effective_rtt", "irto_effect", "summary_table", "owd_maxima", "SEED_OWD_MAXIMA"]

#: The seed's maxima of the one-way delay with REDok (its OWD slides), s, by (link,
#: flows per burst, IW). The seed names no link; the values place the single-flow case
#: on EDGE (2.80 s is above HSPA's largest possible delay, 81 ms + 100 x 6 ms) and the
#: 6-flow case on HSPA (0.429 s is below EDGE's smallest, 261 ms + 75 ms, plus a queue).
SEED_OWD_MAXIMA: dict[tuple[str, int, int], float] = {("edge", 1, 10): 2.80, ("edge", 1, 3): 2.06,
                                                      ("hspa", 6, 10): 0.429, ("hspa", 6, 3): 0.296}


def _column(df: pd.DataFrame, name: str, default: float = math.nan) -> pd.Series:
    return df[name] if name in df else pd.Series(default, index=df.index, dtype=float)


def run_metrics(flows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: elapsed times per burst, fairness, RTO counts and OWD summaries.

    Elapsed time is a flow's completion minus its SYN; all times in s.

    - ``elapsed_mean_s`` / ``elapsed_max_s``: mean and maximum (the longest flow) over
      all 2N flows; ``elapsed_{mean,max,min}_b{1,2}_s`` per burst.
    - ``burst_time_s``: per burst, its last completion minus its first SYN, averaged
      over the two bursts (the time a burst takes to move its 180 kB);
      ``last_done_s``: the last completion of the run.
    - ``jain_b1``, ``jain_b2``: Jain's index of per-flow goodput within a burst (NaN
      for N = 1); ``jain_within`` their mean; ``jain_between`` Jain's index of the two
      bursts' mean goodputs (symmetric: for the figures only).
    - ``later_share``: the later burst's mean per-flow goodput over the sum of both
      bursts' (0.5 = equal; directional); ``unfairness`` = ``|later_share - 0.5|``;
      ``b1_vs_b2``: burst 1's mean elapsed time relative to burst 2's, minus 1.
    - ``rto_total`` = data RTOs + SYN timeouts; ``rto_spurious`` the spurious ones
      (the retransmitted segment or SYN had not been lost); ``rto_spurious_b2`` those
      of the later burst.
    - ``b2_first_rto_s``: time from the later burst's first SYN to its first RTO (a
      SYN timeout fires the initial RTO after the SYN; a data RTO is read from the
      cwnd trace); a run in which the burst had none is censored at the burst's
      completion (``b2_rto_seen`` = 0).
    - ``last_start_rto``: 1 when the flow that completes last had a SYN timeout or an
      RTO of its first window.
    - From ``runs``: OWD summaries, bottleneck drops (``drops_total``,
      ``drops_red`` = early + forced), ``owd_spread_s`` = p99 - p50, the digest.

    Example:
        >>> f = pd.DataFrame({"link": ["lte"] * 2, "buffer": ["red"] * 2, "n_flows": [1, 1], "iw": [3, 3],
        ...     "irto_s": [3.0, 3.0], "rep": [0, 0], "flow": [0, 1], "burst": [1, 2], "start_s": [0.0, 1.0],
        ...     "completed_s": [1.0, 3.0], "elapsed_s": [1.0, 2.0], "goodput_bps": [3.0, 1.0], "rtos": [1, 0],
        ...     "spurious_rtos": [1, 0], "syn_retransmits": [0, 1], "spurious_syn_rtos": [0, 1],
        ...     "first_rto_s": [0.6, float("nan")], "first_window_rto": [1, 0]})
        >>> r = run_metrics(f, pd.DataFrame())
        >>> cols = ["elapsed_mean_s", "elapsed_max_s", "burst_time_s", "later_share", "rto_total", "rto_spurious_b2",
        ...         "b2_first_rto_s", "last_start_rto"]
        >>> r[cols].values.tolist()   # burst 2's SYN timed out 3 s after its SYN; the last flow had it
        [[1.5, 2.0, 1.5, 0.25, 2.0, 1.0, 3.0, 1.0]]
    """
    f = flows.copy()
    f["start_s"] = _column(f, "start_s")
    f["completed_s"] = _column(f, "completed_s")
    f["rto_total"] = f["rtos"] + f["syn_retransmits"]
    f["rto_spurious"] = f["spurious_rtos"] + f["spurious_syn_rtos"]
    f["rto_spurious_b2"] = np.where(f["burst"] == 2, f["rto_spurious"], 0)
    f["g2"] = f["goodput_bps"] ** 2
    # A flow's first RTO: a SYN timeout fires the initial RTO after the SYN; otherwise the first data RTO.
    first_data = _column(f, "first_rto_s")
    f["first_rto_abs"] = np.where(f["syn_retransmits"] > 0, f["start_s"] + f["irto_s"], first_data)
    f["start_rto"] = ((f["syn_retransmits"] > 0) | (_column(f, "first_window_rto", 0) > 0)).astype(float)
    per_burst = f.groupby(RUN + ["burst"], sort=False).agg(
        el_mean=("elapsed_s", "mean"), el_max=("elapsed_s", "max"), el_min=("elapsed_s", "min"),
        g_sum=("goodput_bps", "sum"), g2_sum=("g2", "sum"), g_n=("goodput_bps", "count"),
        g_mean=("goodput_bps", "mean"), first_start=("start_s", "min"), done=("completed_s", "max"),
        first_rto=("first_rto_abs", "min")).reset_index()
    per_burst["jain"] = np.where(per_burst["g_n"] >= 2,
                                 per_burst["g_sum"] ** 2 / (per_burst["g_n"] * per_burst["g2_sum"]), np.nan)
    per_burst["span"] = per_burst["done"] - per_burst["first_start"]
    per_burst["to_rto"] = per_burst["first_rto"] - per_burst["first_start"]
    wide = per_burst.pivot(index=RUN, columns="burst",
                           values=["el_mean", "el_max", "el_min", "jain", "g_mean", "span", "to_rto"])
    wide.columns = [f"{a}_b{b}" for a, b in wide.columns]
    per_run = f.groupby(RUN, sort=False).agg(
        elapsed_mean_s=("elapsed_s", "mean"), elapsed_max_s=("elapsed_s", "max"), last_done_s=("completed_s", "max"),
        rto_total=("rto_total", "sum"), rto_spurious=("rto_spurious", "sum"), rto_data=("rtos", "sum"),
        rto_syn=("syn_retransmits", "sum"), rto_spurious_b2=("rto_spurious_b2", "sum"),
        unfinished=("elapsed_s", lambda s: int(s.isna().sum())))
    last = f.loc[f.groupby(RUN, sort=False)["completed_s"].idxmax().dropna().astype(int)].set_index(RUN)["start_rto"]
    rm = per_run.join(wide).join(last.rename("last_start_rto")).reset_index()
    rm = rm.rename(columns={f"el_{s}_b{b}": f"elapsed_{s}_b{b}_s" for s in ("mean", "max", "min") for b in (1, 2)})
    for c in ("rto_total", "rto_spurious", "rto_spurious_b2"):
        rm[c] = rm[c].astype(float)
    rm["rto_genuine"] = rm["rto_total"] - rm["rto_spurious"]
    rm["jain_within"] = rm[["jain_b1", "jain_b2"]].mean(axis=1, skipna=False)
    g1, g2 = rm["g_mean_b1"], rm["g_mean_b2"]
    rm["jain_between"] = (g1 + g2) ** 2 / (2 * (g1 ** 2 + g2 ** 2))
    rm["later_ratio"] = g2 / g1
    rm["later_share"] = g2 / (g1 + g2)
    rm["unfairness"] = (rm["later_share"] - 0.5).abs()
    rm["b1_vs_b2"] = rm["elapsed_mean_b1_s"] / rm["elapsed_mean_b2_s"] - 1
    rm["burst_time_s"] = rm[["span_b1", "span_b2"]].mean(axis=1, skipna=False)
    # No RTO in the later burst: censored at the burst's completion (it came no sooner than that).
    rm["b2_rto_seen"] = rm["to_rto_b2"].notna().astype(float)
    rm["b2_first_rto_s"] = rm["to_rto_b2"].fillna(rm["span_b2"])
    rm = rm.drop(columns=["g_mean_b1", "g_mean_b2", "span_b1", "span_b2", "to_rto_b1", "to_rto_b2"])
    if len(runs):
        keep = [c for c in ("owd_max_s", "owd_p50_s", "owd_p99_s", "owd_mean_s", "drops_overflow", "drops_early",
                            "drops_forced", "occ_max_pkts", "sim_end_s", "digest") if c in runs]
        rm = rm.merge(runs[RUN + keep], on=RUN, how="left")
        if {"drops_overflow", "drops_early", "drops_forced"} <= set(rm):
            rm["drops_red"] = (rm["drops_early"] + rm["drops_forced"]).astype(float)
            rm["drops_total"] = (rm["drops_overflow"] + rm["drops_red"]).astype(float)
            rm["drops_overflow"] = rm["drops_overflow"].astype(float)
        if {"owd_p99_s", "owd_p50_s"} <= set(rm):
            rm["owd_spread_s"] = rm["owd_p99_s"] - rm["owd_p50_s"]
    return sort_rows(rm)


def effective_rtt(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and IW: the effective end-to-end RTT with the initial RTO of 3 s, s.

    The seed's conclusion splits its cases at an effective e2e RTT of 1 s without
    saying how it measured it. Here: the mean over replications of a run's mean
    one-way delay of data packets (propagation, serialization and queueing) plus the
    ACK path's propagation (11 ms + the wireless delay; ACKs meet no queue here).

    Example:
        >>> rm = pd.DataFrame({"link": ["edge"] * 2, "buffer": ["fifo-50"] * 2, "n_flows": [1, 1], "iw": [3, 3],
        ...                    "irto_s": [3.0, 3.0], "rep": [0, 1], "owd_mean_s": [0.9, 1.1]})
        >>> effective_rtt(rm)["eff_rtt_s"].round(3).tolist()   # 1.0 + 0.011 + 0.250
        [1.261]
    """
    sub = rm[rm["irto_s"] == 3.0]
    out = sub.groupby(CONFIG + ["iw"], sort=False)["owd_mean_s"].mean().rename("owd_mean_s").reset_index()
    back = out["link"].map(lambda l: WIRED_DELAY_S + LINKS[l].delay_s)
    out["eff_rtt_s"] = out["owd_mean_s"] + back
    return out


def irto_effect(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and IW: whether the initial RTO of 1 s changed any run at all.

    Runs are deterministic given their replication, so a replication whose delivery
    and drop trace digest is the same under both initial RTOs is unchanged by them;
    ``irto_changes_runs`` is true when some replication's digests differ.
    """
    wide = rm.pivot_table(index=CONFIG + ["iw", "rep"], columns="irto_s", values="digest", aggfunc="first")
    if 1.0 not in wide or 3.0 not in wide:
        return pd.DataFrame(columns=CONFIG + ["iw", "irto_changes_runs"])
    diff = (wide[1.0] != wide[3.0]).rename("irto_changes_runs")
    return diff.groupby(CONFIG + ["iw"], sort=False).any().reset_index()


def summary_table(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means with 95% Student-t intervals over replications."""
    rows = []
    for key, part in rm.groupby(CONFIG + VARIANT, sort=False):
        link, buf, n, iw, irto = key
        row: dict[str, Any] = {"link": LINKS[link].label, "buffer": buffer_by_id(LINKS[link], buf).label,
                               "flows": f"{n}+{n}", "variant": variant_label(iw, irto), "reps": len(part)}
        for col, name in (("elapsed_mean_b1_s", "elapsed b1 (s)"), ("elapsed_mean_b2_s", "elapsed b2 (s)"),
                          ("elapsed_max_s", "longest (s)"), ("jain_within", "Jain within"),
                          ("later_share", "later share"), ("rto_total", "RTOs/run"),
                          ("rto_spurious", "spurious/run"), ("owd_mean_s", "mean OWD (s)"), ("owd_max_s", "max OWD (s)")):
            if col not in part:
                continue
            est = stats.mean_ci(part[col])
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def owd_maxima(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The largest one-way delay over all replications (IRTO 3 s), beside the seed's REDok values.

    Example:
        >>> runs = pd.DataFrame({"link": ["hspa"] * 2, "buffer": ["redok"] * 2, "n_flows": [6, 6], "iw": [3, 3],
        ...                      "irto_s": [3.0, 3.0], "rep": [0, 1], "owd_max_s": [0.25, 0.3]})
        >>> owd_maxima(runs)[0]["max_owd_s"], owd_maxima(runs)[0]["seed_max_owd_s"]
        (0.3, 0.296)
    """
    out: list[dict[str, Any]] = []
    if not len(runs):
        return out
    sub = runs[(runs["irto_s"] == 3.0) & runs["n_flows"].isin([1, 6])]
    for (link, buf, n, iw), part in sub.groupby(["link", "buffer", "n_flows", "iw"], sort=False):
        out.append({"link": link, "buffer": buf, "n_flows": int(n), "iw": int(iw),
                    "max_owd_s": num(part["owd_max_s"].max()), "mean_of_run_maxima_s": num(part["owd_max_s"].mean()),
                    "seed_max_owd_s": SEED_OWD_MAXIMA.get((link, int(n), int(iw))) if buf == "redok" else None})
    return out
