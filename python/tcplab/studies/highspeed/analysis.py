"""Analysis of study ``highspeed``: per-flow relative throughput, utilisation, slopes and RTT spikes.

The metrics follow seed 002 (``docs/seeds/002_06d48414b99b3466.txt``):

- the seed's **relative throughput** (first formula): for each flow i of a run with a
  high-speed protocol, throughput(i) / throughput(i in the all-Reno run of the same case
  and replication), averaged over the flows; the **Reno degradation** (second
  formula) is the same ratio for the Reno flows of a mixed run;
- **link utilisation** of the 8 backbone links, over the whole run and while
  long-lived flows are active (:func:`active_utilisation`);
- **throughput vs distance** (the seed's "Fairness (1)"): per run, the least-squares
  slope of log throughput against log base RTT, and against hop count, over the
  long-lived flows (:func:`log_slope`); Jain's index of their throughputs (Jain, Chiu
  and Hawe, DEC-TR-301, 1984);
- **RTT spikes** (the seed's "RTT of a flow; an example"): excursions of a flow's
  queueing delay above a threshold (:func:`count_spikes`).

The thresholds of the spike count and the RTT bands of the "long flow (300msec RTT)"
and "short flow (30ms RTT)" are tcplab's choices, stated here with their reasons.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab.studies.highspeed.setup import CASE, HOP_BINS, MIN_SPAN_S, RUN

__all__ = [
    "SPIKE_THRESHOLD_S", "SPIKE_RESET_S", "SHORT_RTT_MAX_S", "LONG_RTT_MIN_S",
    "count_spikes", "spike_rows", "active_utilisation", "log_slope", "jain", "compact_flows", "analyse_runs",
]

#: A spike starts when a packet's queueing delay (its one-way delay minus the flow's
#: minimum) reaches this, s: a third of one backbone buffer's drain time (2 MB at
#: 1 Gbit/s = 16 ms, the same at every scale). tcplab's choice; the seed gives none.
SPIKE_THRESHOLD_S = 0.005
#: ... and ends when the queueing delay falls below this, s (hysteresis: jitter around
#: the threshold is not counted as many spikes).
SPIKE_RESET_S = 0.0025
#: The seed's "short flow (30ms RTT)" and "long flow (300msec RTT)" as bands of base
#: RTT, a factor 2 either side of each value (tcplab's choice: this workload's RTTs are
#: drawn from a distribution, so few flows sit exactly at 30 or 300 ms), s.
SHORT_RTT_MAX_S = 0.060
LONG_RTT_MIN_S = 0.150


def count_spikes(delay_s: np.ndarray, threshold_s: float = SPIKE_THRESHOLD_S,
                 reset_s: float = SPIKE_RESET_S) -> int:
    """Spikes in a series of queueing delays: upward crossings of ``threshold_s`` after the
    series was below ``reset_s`` (or at its start).

    Example:
        >>> count_spikes(np.array([0.0, 0.006, 0.004, 0.007, 0.001, 0.009, 0.0]))   # 0.004 does not reset
        2
        >>> count_spikes(np.array([0.0, 0.001]))
        0
    """
    above = delay_s >= threshold_s
    below = delay_s < reset_s
    n, high = 0, False
    # Only the samples where the state can change matter: walk them in order.
    for i in np.flatnonzero(above | below):
        if above[i] and not high:
            n, high = n + 1, True
        elif below[i]:
            high = False
    return n


def spike_rows(owd: dict[str, list[Any]], names: Sequence[str], flow_names: Sequence[str]) -> dict[str, list[Any]]:
    """Per recorded flow: its spike count and the span of its samples, from the core's ``owd`` series.

    ``names`` are the recorded flows' names; ``flow_names`` the run's flow table names
    (the series' ``flow_id`` indexes them). The queueing delay of a packet is its one-way
    delay minus the flow's minimum one-way delay.

    Example:
        >>> owd = {"t_s": [1.0, 2.0, 3.0, 4.0], "flow_id": [0, 0, 0, 0], "owd_s": [0.05, 0.06, 0.05, 0.051]}
        >>> spike_rows(owd, ["a"], ["a", "b"])
        {'name': ['a'], 'spikes': [1], 'span_s': [3.0], 'samples': [4], 'q99_s': [0.0097...]}
    """
    fid = np.asarray(owd.get("flow_id", []), dtype=np.int64)
    t = np.asarray(owd.get("t_s", []), dtype=float)
    d = np.asarray(owd.get("owd_s", []), dtype=float)
    out: dict[str, list[Any]] = {"name": [], "spikes": [], "span_s": [], "samples": [], "q99_s": []}
    index = {n: i for i, n in enumerate(flow_names)}
    for name in names:
        if name not in index:
            continue
        on = fid == index[name]
        q = d[on] - d[on].min() if on.any() else d[on]
        out["name"].append(name)
        out["spikes"].append(count_spikes(q))
        out["span_s"].append(float(t[on][-1] - t[on][0]) if on.sum() > 1 else 0.0)
        out["samples"].append(int(on.sum()))
        out["q99_s"].append(float(np.quantile(q, 0.99)) if len(q) else math.nan)
    return out


def _union_length(intervals: list[tuple[float, float]]) -> float:
    """Total length of the union of intervals.

    Example:
        >>> _union_length([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (7.0, 7.0)])
        4.0
    """
    total, end = 0.0, -math.inf
    for a, b in sorted(intervals):
        if b <= end or b <= a:
            continue
        total += b - max(a, end)
        end = b
    return total


def active_utilisation(run_flows: pd.DataFrame, rate_bps: float, end_s: float, routers: int = 5) -> float:
    """Backbone utilisation by long-lived flows while they are active, over the 8 links.

    Link ``bb{i}`` (r_i -> r_{i+1}) carries the data of flows with ``entry <= i < exit``,
    ``bb{i}_rev`` those with ``exit <= i < entry``. For each link, its long-lived flows'
    delivered bits are divided by its rate times the length of the union of their
    active spans (start to completion, or to ``end_s``); the result pools the links:
    ``sum(bits) / sum(rate x active time)``. A protocol that moves the same files
    faster keeps the links busier while there is demand, which the whole-run
    utilisation (fixed by the offered bytes once every file completes) cannot show.

    Example:
        >>> f = pd.DataFrame({"cls": ["long"] * 3, "entry": [0, 1, 1], "exit": [2, 2, 2], "start_s": [0.0, 5.0, 25.0],
        ...                   "elapsed_s": [10.0, math.nan, math.nan], "bytes_delivered": [125, 250, 0]})
        >>> # (the third flow was drawn to start after the end, 20 s: it never ran)
        >>> # bb0: flow 0, 1000 bits over 10 s; bb1: both, 3000 bits over [0, 20]: 4000 / (1000 x 30)
        >>> round(active_utilisation(f, 1000.0, 20.0), 4)
        0.1333
    """
    long_f = run_flows[run_flows["cls"] == "long"]
    ends = np.where(long_f["elapsed_s"].notna(), long_f["start_s"] + long_f["elapsed_s"].fillna(0.0), end_s)
    # Flows drawn to start after the end of the run never ran: empty spans.
    spans = list(zip(np.minimum(long_f["start_s"].to_numpy(), end_s), np.minimum(ends, end_s)))
    bits = (8 * long_f["bytes_delivered"]).to_numpy()
    entry, exit_ = long_f["entry"].to_numpy(), long_f["exit"].to_numpy()
    num = den = 0.0
    for i in range(routers - 1):
        for on in ((entry <= i) & (i < exit_), (exit_ <= i) & (i < entry)):
            if on.any():
                num += float(bits[on].sum())
                den += rate_bps * _union_length([spans[j] for j in np.flatnonzero(on)])
    return float(num / den) if den > 0 else math.nan


def log_slope(x: np.ndarray, y: np.ndarray, log_x: bool = True) -> float:
    """Least-squares slope of ``ln y`` against ``ln x`` (or against ``x``); NaN with fewer
    than 3 points or one distinct ``x``.

    Against log RTT it is the exponent k of throughput ~ RTT^k (Reno's is about -1 with
    independent losses: Mathis et al., CCR 1997); against hop count, the relative change
    of throughput per hop.

    Example:
        >>> round(log_slope(np.array([0.03, 0.1, 0.3]), np.array([100.0, 30.0, 10.0])), 3)   # ~ 1/RTT
        -1.0
        >>> math.isnan(log_slope(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]), log_x=False))
        True
    """
    ok = (y > 0) & np.isfinite(y) & ((x > 0) if log_x else np.isfinite(x))
    x, y = x[ok], y[ok]
    if len(x) < 3 or len(np.unique(x)) < 2:
        return math.nan
    xs = np.log(x) if log_x else x
    return float(np.polyfit(xs, np.log(y), 1)[0])


def jain(x: np.ndarray) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one takes all.

    Example:
        >>> jain(np.array([1.0, 1.0])), jain(np.array([1.0, 0.0, 0.0, 0.0]))
        (1.0, 0.25)
    """
    x = x[np.isfinite(x)]
    s2 = float((x ** 2).sum())
    return float(x.sum() ** 2 / (len(x) * s2)) if len(x) and s2 > 0 else math.nan


def _mean(s: pd.Series) -> float:
    return float(s.mean()) if len(s) else math.nan


def compact_flows(flows: pd.DataFrame) -> pd.DataFrame:
    """The flows table in compact dtypes, for the analysis (same values).

    With sessions a run holds about 90,000 objects, so the default study (636 runs)
    has 57 M flow rows: about 11 GB in the task tables' dtypes (int64 and strings),
    and the join of every flow with its baseline flow (``relative``) needs as much
    again; the machine the reference ran on (24 GB) ran out of memory there. Here the
    repeated strings become categoricals (the congestion controls share one set of
    categories, so ``flow_cc == protocol`` compares) and the small integers int16.

    Example:
        >>> f = pd.DataFrame({"protocol": ["reno", "areno"], "flow_cc": ["reno", "reno"], "mix": ["alone", "mixed"],
        ...                   "rtt": ["equal_per_hop"] * 2, "cls": ["long", "short"], "name": ["a", "b"],
        ...                   "n_long": [10, 10], "rep": [0, 1], "entry": [0, 1], "exit": [2, 3], "hops": [2, 2]})
        >>> c = compact_flows(f)
        >>> (c["flow_cc"] == c["protocol"]).tolist(), str(c["hops"].dtype), c.equals(f)
        ([True, False], 'int16', False)
        >>> c.astype(f.dtypes.to_dict()).equals(f)
        True
    """
    if not len(flows):
        return flows
    ccs = pd.CategoricalDtype(sorted(set(flows["protocol"].unique()) | set(flows["flow_cc"].unique())))
    dtypes: dict[str, Any] = {"protocol": ccs, "flow_cc": ccs,
                              **dict.fromkeys(("mix", "rtt", "cls", "name"), "category"),
                              **dict.fromkeys(("n_long", "rep", "entry", "exit", "hops"), "int16")}
    return flows.astype({c: t for c, t in dtypes.items() if c in flows})


def analyse_runs(flows: pd.DataFrame, links: pd.DataFrame, runs: pd.DataFrame,
                 spikes: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """The derived tables.

    - ``relative``: one row per flow of a non-baseline run whose throughput can be
      compared (it started at least :data:`MIN_SPAN_S` before the end): its
      throughput, the same flow's in the all-Reno run of the same case and replication
      (``base_bps``), ``ratio`` = the two's quotient, ``role``: ``hs`` (a flow on the
      protocol under test) or ``reno`` (a Reno flow of a mixed run), its hop bin and
      RTT band (``short``: base RTT <= :data:`SHORT_RTT_MAX_S`, ``long``: >=
      :data:`LONG_RTT_MIN_S`, else ``mid``).
    - ``run_metrics``: one row per run, baselines included (their relative metrics are
      empty): the seed's relative throughput of long-lived protocol flows
      (``rel_long``), of short-lived ones (``rel_short``), of all (``rel_all``), per hop
      bin (``rel_long_h1``, ``rel_long_h2``, ``rel_long_h3-4``) and per RTT band
      (``rel_long_rtt_short``, ``rel_long_rtt_long``); the Reno degradation (second
      formula, mixed runs: ``reno_deg_long``, ``reno_deg_all``); the mean backbone
      utilisation over the run and while long-lived flows are active (``util``,
      ``util_active``) and their differences from the baseline (``util_gain``,
      ``util_active_gain``); the throughput-vs-distance slopes of the long-lived
      flows (``slope_rtt``, per ln s of RTT; ``slope_hops``, per hop) and their Jain
      index (``jain``); short-flow transfer times (``short_s``, ``short_reno_s``,
      ``short_base_s``); and, where one-way delays were recorded, RTT spikes per
      minute per flow (``spike_rate``).
    - ``link_util``: utilisation per backbone link and run.

    Example:
        >>> analyse_runs(pd.DataFrame(), pd.DataFrame(), pd.DataFrame())["run_metrics"].empty
        True
    """
    if not len(flows):
        return {"relative": pd.DataFrame(), "run_metrics": pd.DataFrame(), "link_util": links}
    # Tables written before the RTT readings were a run dimension ran today's default.
    flows, links, runs = (t if "rtt" in t else t.assign(rtt="equal_per_hop") for t in (flows, links, runs))
    if spikes is not None and len(spikes) and "rtt" not in spikes:
        spikes = spikes.assign(rtt="equal_per_hop")
    ends = runs.set_index(RUN)["duration_s"]
    end = flows.merge(runs[RUN + ["duration_s"]], on=RUN, how="left")["duration_s"].to_numpy()
    flows = flows.assign(comparable=(flows["start_s"].to_numpy() <= end - MIN_SPAN_S))
    baseline = (flows["protocol"] == "reno") & (flows["mix"] == "alone")
    base = flows[baseline][CASE + ["name", "throughput_bps", "elapsed_s"]].rename(
        columns={"throughput_bps": "base_bps", "elapsed_s": "base_elapsed_s"})
    rel = flows[~baseline].merge(base, on=CASE + ["name"], how="inner")
    rel = rel[rel["comparable"] & (rel["base_bps"] > 0)].copy()
    rel["ratio"] = rel["throughput_bps"] / rel["base_bps"]
    rel["role"] = pd.Categorical(np.where(rel["flow_cc"] == rel["protocol"], "hs", "reno"))
    rel["hop_bin"] = pd.Categorical(rel["hops"].map(HOP_BINS))
    rel["rtt_band"] = pd.Categorical(np.select([rel["rtt_s"] <= SHORT_RTT_MAX_S, rel["rtt_s"] >= LONG_RTT_MIN_S],
                                               ["short", "long"], "mid"))

    util = links.groupby(RUN, sort=False)["utilisation"].mean().rename("util").reset_index()
    rate = float(links["rate_bps"].iloc[0])
    rows = []
    rel_by_run = {k: g for k, g in rel.groupby(RUN, sort=False)}
    spike_by_run = ({k: g for k, g in spikes.groupby(RUN, sort=False)}
                    if spikes is not None and len(spikes) else {})
    for key, run_f in flows.groupby(RUN, sort=False):
        row: dict[str, Any] = dict(zip(RUN, key))
        row["util_active"] = active_utilisation(run_f, rate, float(ends.loc[key]))
        lf = run_f[(run_f["cls"] == "long") & run_f["comparable"]]
        thr = lf["throughput_bps"].to_numpy(dtype=float)
        row["slope_rtt"] = log_slope(lf["rtt_s"].to_numpy(dtype=float), thr)
        row["slope_hops"] = log_slope(lf["hops"].to_numpy(dtype=float), thr, log_x=False)
        row["jain"] = jain(thr)
        part = rel_by_run.get(key)
        if part is not None:
            hs, reno = part[part["role"] == "hs"], part[part["role"] == "reno"]
            hs_long = hs[hs["cls"] == "long"]
            row["rel_long"] = _mean(hs_long["ratio"])
            row["rel_short"] = _mean(hs.loc[hs["cls"] == "short", "ratio"])
            row["rel_all"] = _mean(hs["ratio"])
            for b in sorted(set(HOP_BINS.values())):
                row[f"rel_long_h{b}"] = _mean(hs_long.loc[hs_long["hop_bin"] == b, "ratio"])
            for band in ("short", "long"):
                row[f"rel_long_rtt_{band}"] = _mean(hs_long.loc[hs_long["rtt_band"] == band, "ratio"])
            row["reno_deg_long"] = _mean(reno.loc[reno["cls"] == "long", "ratio"])
            row["reno_deg_all"] = _mean(reno["ratio"])
            sh = part[part["cls"] == "short"]
            row["short_s"] = _mean(sh.loc[sh["role"] == "hs", "elapsed_s"])
            row["short_reno_s"] = _mean(sh.loc[sh["role"] == "reno", "elapsed_s"])
            row["short_base_s"] = _mean(sh["base_elapsed_s"])
        sp = spike_by_run.get(key)
        span = float(sp["span_s"].sum()) if sp is not None else 0.0
        row["spike_rate"] = 60.0 * float(sp["spikes"].sum()) / span if span > 0 else math.nan
        rows.append(row)
    rm = pd.DataFrame(rows).merge(util, on=RUN, how="left")
    for c in ("rel_long", "rel_short", "rel_all", "rel_long_h1", "rel_long_h2", "rel_long_h3-4", "rel_long_rtt_short",
              "rel_long_rtt_long", "reno_deg_long", "reno_deg_all", "short_s", "short_reno_s", "short_base_s"):
        if c not in rm:
            rm[c] = math.nan
    base_util = rm[(rm["protocol"] == "reno") & (rm["mix"] == "alone")][CASE + ["util", "util_active"]].rename(
        columns={"util": "base_util", "util_active": "base_util_active"})
    rm = rm.merge(base_util, on=CASE, how="left")
    rm["util_gain"] = rm["util"] - rm["base_util"]
    rm["util_active_gain"] = rm["util_active"] - rm["base_util_active"]
    return {"relative": rel.drop(columns=["comparable"]).reset_index(drop=True), "run_metrics": rm, "link_util": links}
