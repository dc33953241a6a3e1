"""Seed 001's findings, checked on the ``iw-testbed`` runs (``findings.json``).

Every check compares variants run by run: replication ``r`` of every IW variant and
SACK setting sees the same arrivals (common random numbers), so the difference is
taken per replication, averaged over the configurations in the check's scope, and a
95 % Student-t interval is formed over the replications
(:func:`tcplab.studies.findings.paired`). Checks across loads or open counts (which
draw different arrivals) pair by replication index only; the interval is still over
independent replications. The thresholds that turn "much", "small" or "serious"
into numbers are stated in each check's criterion and in ``docs/studies/iw-testbed.md``.

Findings (seed 001's "Key findings" and slides):

- T1: IW10 causes a higher PLR than IW3, and a much higher one under extreme load.
- T2: IW10 improves UCT or at least does not hurt it; under heavy load on the
  20 Mbit/s link it loses its advantage and shows long tails.
- T3: no serious fairness problem between IW3 and IW10 in the mix; IW3's UCT often
  improves when mixed with IW10 under heavy load.
- T4: long-lived flows perform equally or better under IW10 than under IW3.
- T5: SACK is not required for IW10 to perform; IW10 without SACK beats IW3 with SACK.
- T6: on 64 kbit/s with 5 simultaneous opens, five IW10 bursts always overflow the
  40-packet buffer; five IW3 bursts never do unless they collide with other arrivals.
- T7: PLR orders IW10 > mix > IW3, and simultaneous opens >> single open.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies import findings as fnd

__all__ = ["evaluate_findings", "summary_table", "MUCH_HIGHER", "SERIOUS", "SMALL", "EQUAL_MARGIN"]

#: "Much higher" / ">>": a ratio of at least 2.
MUCH_HIGHER = 2.0
#: A "serious" fairness problem: IW3's mean UCT in the mix more than 20 % above IW3 alone.
SERIOUS = 0.20
#: A "small" SACK gain: below 10 % of the mean UCT.
SMALL = 0.10
#: "Equally or better": not worse by more than 5 %.
EQUAL_MARGIN = 0.05

RUN = ["link", "load", "opens", "bg", "iw", "sack", "rep"]
S_LABEL = {"64k": "64 kbit/s", "20m": "20 Mbit/s"}


def _with_tcp(runs: pd.DataFrame) -> pd.DataFrame:
    """Adds ``tcp`` = ``<iw>/<sack|nosack>`` (one factor for cross-variant pairs)."""
    r = runs.copy()
    r["tcp"] = r["iw"].astype(str) + "/" + np.where(r["sack"].astype(bool), "sack", "nosack")
    return r


def _paired(runs: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, where: dict[str, Sequence[Any]],
            relative: bool, unit: Sequence[str] = RUN) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    return fnd.paired(runs, metric, factor, test, ref, where, relative, unit=list(unit))


def _high(link: str) -> float:
    from tcplab.studies.iw_testbed import LINKS

    return LINKS[link].loads[1]


def _low(link: str) -> float:
    from tcplab.studies.iw_testbed import LINKS

    return LINKS[link].loads[0]


def _loads(runs: pd.DataFrame, which: str) -> list[float]:
    return sorted({(_high if which == "high" else _low)(l) for l in set(runs["link"])})


def _diff_of_diffs(runs: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, split: str, hi: Sequence[Any],
                   lo: Sequence[Any], where: dict[str, Sequence[Any]], relative: bool) -> dict[str, Any]:
    """Per replication: (mean test-ref difference where ``split`` in ``hi``) minus (where in ``lo``)."""
    unit = [c for c in RUN if c != split] + [split]
    pairs, _, _ = _paired(runs, metric, factor, test, ref, where, relative, unit=unit)
    if not len(pairs):
        return {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}
    a = pairs[pairs[split].isin(list(hi))].groupby("rep")["diff"].mean()
    b = pairs[pairs[split].isin(list(lo))].groupby("rep")["diff"].mean()
    d = (a - b).dropna()
    est = fnd.estimate(d)
    est.update({"high": fnd.num(a.mean()), "low": fnd.num(b.mean())})
    return est


def _ratio(runs: pd.DataFrame, metric: str, split: str, num_vals: Sequence[Any], den_vals: Sequence[Any],
           where: dict[str, Sequence[Any]]) -> dict[str, Any]:
    """``sum(metric | split in num) / sum(metric | split in den)`` over replications, bootstrap CI."""
    sub = runs
    for col, vals in where.items():
        sub = sub[sub[col].isin(list(vals))]
    num = sub[sub[split].isin(list(num_vals))].groupby("rep")[metric].mean()
    den = sub[sub[split].isin(list(den_vals))].groupby("rep")[metric].mean()
    idx = num.index.intersection(den.index)
    r = fnd.bootstrap_ratio(num.loc[idx].to_numpy(float), den.loc[idx].to_numpy(float))
    r["interval"] = "bootstrap percentile over replications (2000 resamples, seed 0)"
    return r


def _chk(cid: str, claim: str, criterion: str, statistic: str, unit: str, est: dict[str, Any], held: bool,
         per: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return fnd.legacy_check(cid, claim, criterion, statistic, unit, est, held, per, **extra)


def evaluate_findings(runs: pd.DataFrame, params: Any) -> dict[str, Any]:
    """Checks T1-T7 on the per-run table; returns the ``findings.json`` document."""
    r = _with_tcp(runs)
    links = [l for l in ("64k", "20m") if l in set(r["link"])]
    out: list[dict[str, Any]] = []
    nobg = {"bg": [False]}

    # T1 ------------------------------------------------------------------------------
    checks = []
    if links:
        _, est, per = _paired(r, "plr", "iw", "iw10", "iw3", nobg, relative=False)
        checks.append(_chk(
            "T1a", "IW10 causes a higher packet loss rate at the router than IW3",
            "bottleneck PLR per run (drops / packets offered), difference IW10 - IW3 (same replication, same SACK), "
            "pooled over every link, load and open count without background flows; held if the 95% CI is above 0",
            "difference of PLR, IW10 - IW3", "fraction", est, fnd.above(est), per,
            configs_above_zero=fnd.count(per, "above"), configs_below_zero=fnd.count(per, "below")))
        hi, lo = _loads(r, "high"), _loads(r, "low")
        est = _diff_of_diffs(r, "plr", "iw", "iw10", "iw3", "load", hi, lo, nobg, relative=False)
        checks.append(_chk(
            "T1b", "The PLR excess of IW10 is larger under extreme load",
            "per replication: mean PLR difference IW10 - IW3 at each link's higher load (97.5% / 96%) minus the same "
            "at its lower load (75% / 72%), pooled over links, open counts and SACK, no background flows; held if the "
            "95% CI is above 0", "increase of the PLR difference from the lower to the higher load", "fraction",
            est, fnd.above(est)))
    out.append(fnd.finding("T1", "IW10 causes a higher PLR than IW3, and a much higher one under extreme load", checks))

    # T2 ------------------------------------------------------------------------------
    checks = []
    if links:
        _, est, per = _paired(r, "uct_mean_s", "iw", "iw10", "iw3", {}, relative=True)
        checks.append(_chk(
            "T2a", "IW10 improves the mean UCT, or at least does not hurt it",
            "mean UCT of the window's finished transactions per run, relative change IW10 vs IW3 (same replication), "
            "pooled over every configuration; held if the 95% CI is below 0 (configurations where IW10 is "
            "significantly worse are counted beside)", "relative change of mean UCT, IW10 vs IW3", "fraction", est,
            fnd.below(est), per, configs_better=fnd.count(per, "below"), configs_worse=fnd.count(per, "above")))
    if "20m" in links:
        est = _diff_of_diffs(r, "uct_mean_s", "iw", "iw10", "iw3", "load", [0.96], [0.72],
                             {"link": ["20m"], "opens": [5]}, relative=True)
        checks.append(_chk(
            "T2b", "On 20 Mbit/s with 5 opens, IW10 loses its UCT advantage under heavy load",
            "per replication: relative change of mean UCT IW10 vs IW3 at 96% load minus the same at 72% (20 Mbit/s, "
            "5 opens, pooled over SACK and background); held if the 95% CI is above 0 (the gain shrinks)",
            "change of the relative UCT gain from 72% to 96% load", "fraction", est, fnd.above(est)))
        _, est, per = _paired(r, "uct_p99_s", "iw", "iw10", "iw3", {"link": ["20m"], "load": [0.96], "opens": [5]},
                              relative=True)
        checks.append(_chk(
            "T2c", "On 20 Mbit/s at 96% load with 5 opens, IW10's UCT has longer tails",
            "99th percentile of UCT per run (unfinished = infinite), relative change IW10 vs IW3, pooled over SACK "
            "and background; held if the 95% CI is above 0", "relative change of the UCT p99, IW10 vs IW3",
            "fraction", est, fnd.above(est), per))
    out.append(fnd.finding("T2", "IW10 improves UCT or at least does not hurt it; under heavy load on the 20 Mbit/s "
                                 "link it loses its advantage and shows long tails", checks))

    # T3 ------------------------------------------------------------------------------
    checks = []
    if links:
        lo = _loads(r, "low")
        _, est, per = _paired(r, "uct_mean_iw3_s", "iw", "mix", "iw3", {"load": lo}, relative=True)
        checks.append(_chk(
            "T3a", "Under light to medium load, IW3 suffers no serious UCT loss when mixed with IW10",
            "mean UCT of the IW3 clients (0 and 2), relative change in the mix vs IW3 alone (the same clients and "
            f"arrivals), at each link's lower load, pooled over opens, SACK, background; held if the 95% CI's upper "
            f"bound is below +{SERIOUS:.0%} (a 'serious' loss)", "relative change of IW3's mean UCT, mix vs alone",
            "fraction", est, bool(est["n"] >= 2 and est["ci"][1] < SERIOUS), per,
            configs_worse=fnd.count(per, "above"), configs_better=fnd.count(per, "below")))
        hi = _loads(r, "high")
        _, est, per = _paired(r, "uct_mean_iw3_s", "iw", "mix", "iw3", {"load": hi}, relative=True)
        checks.append(_chk(
            "T3b", "Under heavy load, IW3's UCT improves when mixed with IW10",
            "as T3a at each link's higher load; held if the 95% CI is below 0", "relative change of IW3's mean UCT, "
            "mix vs alone", "fraction", est, fnd.below(est), per, configs_better=fnd.count(per, "below"),
            configs_worse=fnd.count(per, "above")))
    out.append(fnd.finding("T3", "No serious fairness problem between IW3 and IW10 in the mix; IW3's UCT often improves "
                                 "when mixed with IW10 under heavy load", checks))

    # T4 ------------------------------------------------------------------------------
    checks = []
    if links and r["bg"].any():
        _, est, per = _paired(r, "bg_goodput_bps", "iw", "iw10", "iw3", {"bg": [True]}, relative=True)
        checks.append(_chk(
            "T4a", "Long-lived flows perform equally or better under IW10 than under IW3",
            "summed goodput of the 2 background flows per run, relative change IW10 vs IW3 (same replication), pooled "
            f"over every configuration with background; held if the 95% CI's lower bound is above -{EQUAL_MARGIN:.0%}",
            "relative change of background goodput, IW10 vs IW3", "fraction", est,
            bool(est["n"] >= 2 and est["ci"][0] > -EQUAL_MARGIN), per,
            configs_better=fnd.count(per, "above"), configs_worse=fnd.count(per, "below")))
        for cid, link in (("T4a-64k", "64k"), ("T4a-20m", "20m")):
            if link not in links:
                continue
            _, est, per = _paired(r, "bg_goodput_bps", "iw", "iw10", "iw3", {"bg": [True], "link": [link]},
                                  relative=True)
            checks.append(_chk(
                cid, f"As T4a, on {S_LABEL[link]} alone", f"as T4a, restricted to {S_LABEL[link]}",
                "relative change of background goodput, IW10 vs IW3", "fraction", est,
                bool(est["n"] >= 2 and est["ci"][0] > -EQUAL_MARGIN), per,
                configs_better=fnd.count(per, "above"), configs_worse=fnd.count(per, "below")))
        if "64k" in links:
            _, est, per = _paired(r, "bg_goodput_bps", "iw", "iw10", "iw3",
                                  {"bg": [True], "link": ["64k"], "opens": [5], "load": [0.975]}, relative=True)
            checks.append(_chk(
                "T4b", "On 64 kbit/s with 5 opens, background flows do better under IW10, most visibly at high load",
                "as T4a at 64 kbit/s, 5 opens, 97.5% load (pooled over SACK); held if the 95% CI is above 0",
                "relative change of background goodput, IW10 vs IW3", "fraction", est, fnd.above(est), per))
    out.append(fnd.finding("T4", "Long-lived flows perform equally or better under IW10 than under IW3", checks))

    # T5 ------------------------------------------------------------------------------
    checks = []
    if links:
        _, est, per = _paired(r, "uct_mean_s", "tcp", "iw10/nosack", "iw3/sack", {}, relative=True,
                              unit=["link", "load", "opens", "bg", "tcp", "rep"])
        checks.append(_chk(
            "T5a", "IW10 without SACK beats IW3 with SACK",
            "mean UCT per run, relative change IW10 without SACK vs IW3 with SACK (same replication), pooled over "
            "every configuration; held if the 95% CI is below 0", "relative change of mean UCT, IW10/NewReno vs "
            "IW3/SACK", "fraction", est, fnd.below(est), per, configs_better=fnd.count(per, "below"),
            configs_worse=fnd.count(per, "above")))
        ests = {}
        for iw in ("iw10", "iw3"):
            _, e, _ = _paired(r, "uct_mean_s", "sack", False, True, {"iw": [iw]}, relative=True)
            ests[iw] = e
        e10 = ests["iw10"]
        e10 = {**e10, "iw3_value": fnd.num(ests["iw3"]["value"]), "iw3_ci": [fnd.num(x) for x in ests["iw3"]["ci"]]}
        held = all(e["n"] >= 2 and e["ci"][1] < SMALL for e in ests.values())
        checks.append(_chk(
            "T5b", "SACK reduces UCT by a small percentage only, for IW10 and for IW3",
            "mean UCT per run, relative change without SACK vs with SACK, for IW10 (statistic) and IW3 (iw3_value, "
            f"iw3_ci), pooled over every configuration; held if both CIs' upper bounds are below +{SMALL:.0%}",
            "relative change of mean UCT without SACK, IW10", "fraction", e10, held))
    out.append(fnd.finding("T5", "SACK is not required for IW10 to perform; IW10 without SACK beats IW3 with SACK",
                           checks))

    # T6 ------------------------------------------------------------------------------
    checks = []
    sub = r[(r["link"] == "64k") & (r["opens"] == 5) & (~r["bg"])]
    if len(sub):
        def share(part: pd.DataFrame, num: str, den: str) -> tuple[float, int, int]:
            n, d = int(part[num].sum()), int(part[den].sum())
            return (n / d if d else math.nan), n, d

        per = []
        for (load, iw), part in sub[sub["iw"].isin(["iw3", "iw10"])].groupby(["load", "iw"]):
            s_all = share(part, "batches_dropped", "n_batches")
            s_iso = share(part, "isolated_dropped", "batches_isolated")
            col = part["batches_dropped"].sum() - part["isolated_dropped"].sum()
            ncol = part["n_batches"].sum() - part["batches_isolated"].sum()
            per.append(fnd.clean({"load": float(load), "iw": iw, "batches": s_all[2], "overflowed": s_all[1],
                                  "isolated": s_iso[2], "isolated_overflowed": s_iso[1],
                                  "colliding": int(ncol), "colliding_overflowed": int(col),
                                  "value": s_all[0], "ci": [math.nan, math.nan], "n": int(part["rep"].nunique())}))
        p10 = sub[sub["iw"] == "iw10"]
        s10, k10, n10 = share(p10, "batches_dropped", "n_batches")
        est = {"value": s10, "ci": [s10, s10], "n": int(p10["rep"].nunique()), "overflowed": k10, "batches": n10,
               "interval": "a count over every batch (no sampling interval)"}
        checks.append(_chk(
            "T6a", "Five simultaneous IW10 bursts always overflow the 40-packet buffer",
            "share of IW10 batches (5 transactions opened together; 64 kbit/s, 5 opens, no background, both loads and "
            "SACK settings) with at least one packet dropped; held if every batch (>= 99%) overflowed",
            "share of IW10 batches that overflowed", "fraction", est, bool(n10 > 0 and s10 >= 0.99), per))
        p3 = sub[sub["iw"] == "iw3"]
        s3, k3, n3 = share(p3, "isolated_dropped", "batches_isolated")
        est = {"value": s3, "ci": [s3, s3], "n": int(p3["rep"].nunique()), "overflowed": k3, "batches": n3,
               "interval": "a count over every isolated batch (no sampling interval)"}
        checks.append(_chk(
            "T6b", "Five simultaneous IW3 bursts never overflow the buffer unless they collide with other arrivals",
            "share of IW3 batches whose life (first open to last response) overlaps no other batch's, with at least "
            "one packet dropped (same scope as T6a); held if none overflowed and there was at least one such batch",
            "share of isolated IW3 batches that overflowed", "fraction", est, bool(n3 > 0 and k3 == 0), per))
    out.append(fnd.finding("T6", "On 64 kbit/s with 5 simultaneous opens, five IW10 bursts always overflow the 40-packet "
                                 "buffer; five IW3 bursts never do unless they collide with other arrivals", checks))

    # T7 ------------------------------------------------------------------------------
    checks = []
    if "64k" in links:
        scope = {"link": ["64k"], "bg": [False]}
        _, est, per = _paired(r, "plr", "iw", "iw10", "mix", scope, relative=False)
        checks.append(_chk(
            "T7a", "PLR: IW10 > mix", "bottleneck PLR per run, difference IW10 - mix (same replication), 64 kbit/s, "
            "no background, pooled over loads, opens and SACK; held if the 95% CI is above 0",
            "difference of PLR, IW10 - mix", "fraction", est, fnd.above(est), per))
        _, est, per = _paired(r, "plr", "iw", "mix", "iw3", scope, relative=False)
        checks.append(_chk(
            "T7b", "PLR: mix > IW3", "as T7a, mix - IW3; held if the 95% CI is above 0",
            "difference of PLR, mix - IW3", "fraction", est, fnd.above(est), per))
        for cid, load, label in (("T7c", 0.75, "75%"), ("T7d", 0.975, "97.5%")):
            ratio = _ratio(r, "plr", "opens", [5], [1], {**scope, "load": [load]})
            checks.append(_chk(
                cid, f"PLR: simultaneous opens >> single open, at {label} load",
                "mean PLR with 5 opens / mean PLR with single opens, per replication over every IW variant and SACK "
                f"setting (64 kbit/s, {label} load, no background); held if the bootstrap CI's lower bound is above "
                f"{MUCH_HIGHER:g}", f"PLR ratio, 5 opens / single open, {label}", "ratio", ratio,
                bool(ratio["n"] >= 2 and not math.isnan(ratio["ci"][0]) and ratio["ci"][0] > MUCH_HIGHER)))
    out.append(fnd.finding("T7", "PLR orders IW10 > mix > IW3, and simultaneous opens >> single open", checks))

    params_doc = asdict(params) if hasattr(params, "__dataclass_fields__") else dict(params)
    return fnd.document("iw-testbed", "001_ac085380cef1778f", params_doc, params.reps, params.links, fnd.METHOD, out,
                        thresholds={"much_higher_ratio": MUCH_HIGHER, "serious_fairness": SERIOUS,
                                    "small_sack_gain": SMALL, "equal_margin": EQUAL_MARGIN})


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means over replications with 95 % half-widths."""
    rows = []
    cols = (("uct_mean_s", "UCT mean (s)"), ("uct_p50_s", "UCT p50 (s)"), ("uct_p99_s", "UCT p99 (s)"),
            ("plr", "PLR"), ("busy_fraction", "qlen>0 share"), ("bg_goodput_bps", "bg goodput (bit/s)"),
            ("retx_per_txn", "rexmit/txn"), ("n_txn", "txns/run"))
    for key, part in runs.groupby(["link", "load", "opens", "bg", "iw", "sack"], sort=False):
        link, load, opens, bg, iw, sack = key
        row: dict[str, Any] = {"link": link, "load": load, "opens": int(opens), "bg": bool(bg), "iw": iw,
                               "sack": bool(sack), "reps": len(part),
                               "unfinished": int((part["n_txn"] - part["n_finished"]).sum())}
        for col, name in cols:
            v = part[col].replace([np.inf], np.nan)
            if v.isna().all():
                continue
            est = stats.mean_ci(v.dropna().to_numpy(float))
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
