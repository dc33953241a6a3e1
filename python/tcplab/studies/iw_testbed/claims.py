"""Seed 001's claims, stated as claim forms and checked on the ``iw-testbed`` runs (``findings.json``).

Seed 001 is H.K. J. Chu and Y. Wang, "A testbed study on IW10 vs IW3" (IETF 79, 2010;
``docs/seeds/001_ac085380cef1778f.txt``). Each finding tests one result sentence of
the seed, in the seed's words, in the seed's order; ``ledger.toml`` beside this file
maps every sentence of the seed to these findings, or says why it is not testable or
only describes the set-up. The verdict rules are :mod:`tcplab.studies.findings`'.

**Pairing.** Replication ``r`` of every IW variant and SACK setting sees the same
arrivals (common random numbers), so variants are compared run by run: per replication
the difference (or relative difference) is averaged over the configurations in scope
and a 95 % Student-t interval is formed over the replications. Comparisons across loads
or open counts (different arrival draws) pair by replication index only; the interval
is still over independent replications.

**Configurations.** A configuration is one test the seed could run: link, load, open
count, background flows, SACK setting. A sentence's scope is the configurations its
slide names; a sentence that names none (the "Key Findings") covers every
configuration the seed ran (:func:`tcplab.studies.iw_testbed.testbed.seed_ran`: no
background on both links at every load, background only on 64 kbit/s with 5 opens),
the light load included. Runs the seed did not make (background flows on 20 Mbit/s or
with single opens on 64 kbit/s) enter only checks marked ``extension``.

**Words to numbers** (fixed before any run; each constant says why):
:data:`EQUAL`, :data:`NEGLIGIBLE`, :data:`SLIGHT`, :data:`SERIOUS`, :data:`MUCH`,
:data:`LOT`, :data:`ORDER`, :data:`DOMINATED`, :data:`TENDS`, :data:`OFTEN`,
:data:`MANY_S`, :data:`ALL_SHARE`, :data:`NONE_SHARE`, :data:`HALF_RTT_S`.

Example (two replications of one configuration, IW10 lowering the UCT by a tenth):
    >>> runs = _toy_runs()
    >>> doc = evaluate_findings(runs, _ToyParams())
    >>> f = {x["id"]: x for x in doc["findings"]}
    >>> f["T2"]["verdict"], f["T6"]["verdict"], len(doc["findings"])
    ('held', 'not run', 27)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from tcplab.studies import findings as fnd
from tcplab.studies.iw_testbed.analysis import derived
from tcplab.studies.iw_testbed.testbed import LINKS, NAME, RTT_S, SEED_STUDY, seed_ran

__all__ = ["evaluate_findings", "EQUAL", "NEGLIGIBLE", "SLIGHT", "SERIOUS", "MUCH", "LOT", "ORDER", "DOMINATED",
           "TENDS", "OFTEN", "MANY_S", "ALL_SHARE", "NONE_SHARE", "HALF_RTT_S", "UCT_LONG_S", "THRESHOLDS"]

#: "Equally", "at least not hurt", "no more damage", "lost (its) advantage", "offsets":
#: within 5 % of the reference (relative). tcplab's choice, the seed gives no number: the
#: smallest margin the default run resolves (a 64 kbit/s run's mean UCT and background
#: goodput carry 95 % intervals of about +-2-3 %).
EQUAL = 0.05
#: "Lower" with no size: an effect inside +-1 % of the mean UCT counts as none (tcplab's
#: choice: below anything a bar chart of means, as the seed's, shows).
NEGLIGIBLE = 0.01
#: "Slightly", "only by a small percentage": under 10 % of the mean UCT (tcplab's choice).
SLIGHT = 0.10
#: "Serious" (a fairness problem), "limited" (a loss): a serious loss raises IW3's mean UCT
#: by 20 % or more, twice the "slight" bound (tcplab's choice).
SERIOUS = 0.20
#: "Much better": a UCT at least 20 % lower (the same size as "serious", tcplab's choice).
MUCH = 0.20
#: "A lot higher", ">>": a ratio of at least 2.
LOT = 2.0
#: ">>" read as "an order of magnitude": a ratio of at least 10.
ORDER = 10.0
#: "Dominated by": more than half of the mean UCT.
DOMINATED = 0.5
#: "Tends to": in at least half of the configurations in scope (more often than not).
TENDS = 0.5
#: "Often": in at least half of the configurations in scope (tcplab's choice).
OFTEN = 0.5
#: "Many secs": at least 3 s, ten times the 300 ms RTT (tcplab's choice).
MANY_S = 3.0
#: "ALWAYS overflow": every batch of a run. A run's share of batches is k/n with n under
#: 1000 batches per run, so a run with one batch that did not overflow has a share below
#: 0.999 (the metric's resolution).
ALL_SHARE = 0.999
#: "Never overflow": no batch of a run (a share below 0.001, as above).
NONE_SHARE = 0.001
#: "IW3/3RTTs vs IW10/1RTT": the UCT difference is 2 RTTs within half an RTT (the claim
#: counts whole round trips).
HALF_RTT_S = RTT_S / 2
#: "UCT > 70secs".
UCT_LONG_S = 70.0

THRESHOLDS = {"equal": EQUAL, "negligible": NEGLIGIBLE, "slight": SLIGHT, "serious": SERIOUS, "much": MUCH,
              "lot_ratio": LOT, "order_ratio": ORDER, "dominated_share": DOMINATED, "tends_share": TENDS,
              "often_share": OFTEN, "many_s": MANY_S, "all_share": ALL_SHARE, "none_share": NONE_SHARE,
              "half_rtt_s": HALF_RTT_S, "uct_long_s": UCT_LONG_S}

CONFIG = ["link", "load", "opens", "bg"]
RUN = CONFIG + ["iw", "sack", "rep"]
#: The columns of a configuration in a check's per-configuration table.
PER = CONFIG + ["sack"]

Keep = Callable[[str, float, int, bool], bool]


# --------------------------------------------------------------------------------------
# Scopes


def _seed(l: str, load: float, o: int, bg: bool) -> bool:
    return seed_ran(l, load, o, bg)


def _heavy(l: str, load: float) -> bool:
    return load == LINKS[l].loads[1]


def _lower(l: str, load: float) -> bool:
    return load == LINKS[l].loads[0]


def _light(l: str, load: float) -> bool:
    return load == LINKS[l].light_load


def _mask(df: pd.DataFrame, f: Callable[[str, float], bool]) -> pd.Series:
    """Per row, ``f(link, load)``."""
    return pd.Series([bool(f(l, ld)) for l, ld in zip(df["link"], df["load"])], index=df.index, dtype=bool)


def _select(r: pd.DataFrame, keep: Keep) -> pd.DataFrame:
    """The rows whose configuration ``keep(link, load, opens, bg)`` accepts."""
    if not len(r):
        return r
    ok = {c for c in r[CONFIG].drop_duplicates().itertuples(index=False, name=None) if keep(*c)}
    return r[np.fromiter((c in ok for c in r[CONFIG].itertuples(index=False, name=None)), bool, len(r))]


def _one(link: str, load: float | None = None, opens: int | None = None, bg: bool = False) -> Keep:
    """The configurations of one link (and load, open count), without or with background."""
    def keep(l: str, ld: float, o: int, b: bool) -> bool:
        return l == link and (load is None or ld == load) and (opens is None or o == opens) and b == bg
    return keep


# --------------------------------------------------------------------------------------
# Estimates


def _nan_est() -> dict[str, Any]:
    return {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}


def _pairs(sub: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, relative: bool,
           unit: Sequence[str] = RUN) -> pd.DataFrame:
    """Per pair (same configuration and replication), ``test - ref`` of ``metric`` (``diff``)."""
    if not len(sub):
        return pd.DataFrame()
    pairs, _, _ = fnd.paired(sub, metric, factor, test, ref, {}, relative, unit=list(unit))
    if len(pairs):
        pairs = pairs[np.isfinite(pairs["diff"].astype(float))]
    return pairs


def _pool(rows: pd.DataFrame, by: Sequence[str], col: str = "diff") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per replication, the mean of ``col`` over every row; and the same per group of ``by``."""
    if not len(rows):
        return _nan_est(), []
    est = fnd.estimate(rows.groupby("rep")[col].mean())
    by = [b for b in by if b in rows]
    est["configs"] = int(rows.groupby(by).ngroups) if by else 1
    per = []
    for key, part in rows.groupby(by, sort=False) if by else [((), rows)]:
        key = key if isinstance(key, tuple) else (key,)
        cfg = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, key)}
        per.append({**cfg, **fnd.estimate(part.groupby("rep")[col].mean())})
    return est, per


def _contrast(pairs: pd.DataFrame, hi: pd.Series, lo: pd.Series) -> dict[str, Any]:
    """Per replication, the mean ``diff`` where ``hi`` minus the mean where ``lo``."""
    if not len(pairs) or not hi.any() or not lo.any():
        return _nan_est()
    a = pairs[hi].groupby("rep")["diff"].mean()
    b = pairs[lo].groupby("rep")["diff"].mean()
    est = fnd.difference(a, b)
    est.update({"high": fnd.num(a.mean()), "low": fnd.num(b.mean())})
    return est


def _shift(est: dict[str, Any], by: float) -> dict[str, Any]:
    """The estimate minus ``by`` (value and interval)."""
    out = dict(est)
    out["value"] = est["value"] - by
    out["ci"] = [x - by for x in est["ci"]]
    return out


def _ratio(num: pd.DataFrame, den: pd.DataFrame, metric: str) -> pd.Series:
    """Per replication, the mean of ``metric`` over ``num``'s rows over the mean over ``den``'s."""
    r = num.groupby("rep")[metric].mean() / den.groupby("rep")[metric].mean()
    return r.replace([np.inf, -np.inf], np.nan).dropna()


def _finding(fid: str, claim: str, checks: list[dict[str, Any] | None]) -> dict[str, Any]:
    return fnd.finding(fid, claim, [c for c in checks if c is not None])


# --------------------------------------------------------------------------------------
# The findings, in the seed's order


def _key_findings(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slide "Key Findings": T1-T5."""
    out = []
    seed = _select(r, _seed)

    # T1: "IW10 tends to cause higher PLR than IW3, and in case of extreme load, a lot higher PLR"
    checks: list[dict[str, Any] | None] = []
    pairs = _pairs(seed, "plr", "iw", "iw10", "iw3", relative=False)
    if len(pairs):
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            "T1a", "IW10 tends to cause higher PLR than IW3", fnd.Share(fnd.Directional("above"), TENDS),
            "difference of bottleneck PLR, IW10 - IW3", "fraction", est, per,
            scope="every configuration the seed ran (both links, every load, single and 5 opens, its background runs, "
                  "SACK on and off)", note=f"'tends to': in at least {TENDS:.0%} of them"))
        heavy = _select(seed, lambda l, ld, o, b: _heavy(l, ld))
        per_link = []
        for link in [l for l in LINKS if l in set(heavy["link"])]:
            h = heavy[heavy["link"] == link]
            rat = _ratio(h[h["iw"] == "iw10"], h[h["iw"] == "iw3"], "plr")
            per_link.append({"link": link, "load": LINKS[link].loads[1], **fnd.estimate(rat)})
        if per_link:
            all_rat = _ratio(heavy[heavy["iw"] == "iw10"], heavy[heavy["iw"] == "iw3"], "plr")
            checks.append(fnd.check(
                "T1b", "In case of extreme load, IW10 causes a lot higher PLR than IW3",
                fnd.Every(fnd.Directional("above", threshold=LOT)), "PLR ratio, IW10 / IW3, at the extreme load",
                "ratio", fnd.estimate(all_rat), per_link, reading="a lot higher: ratio",
                scope="each link at its extreme load (96 % and 97.5 %), per replication the mean PLR of IW10 over "
                      "that of IW3 across the seed's configurations at that load (opens, background, SACK)",
                note=f"'a lot higher': a ratio of at least {LOT:g}, on every link"))
        named = _select(pairs, lambda l, ld, o, b: not _light(l, ld))
        est = _contrast(named, _mask(named, _heavy), _mask(named, _lower))
        checks.append(fnd.check(
            "T1c", "The PLR excess of IW10 over IW3 is larger under extreme load than under the lower load",
            fnd.Contrast("above"), "PLR excess (IW10 - IW3) at the extreme load minus at the lower load", "fraction",
            est, reading="a lot higher: the excess grows with the load",
            scope="the seed's configurations at each link's two named loads (72/96 %, 75/97.5 %)"))
    out.append(_finding("T1", "IW10 tends to cause higher PLR than IW3, and in case of extreme load, a lot higher PLR",
                        checks))

    # T2: "Regardless of PLR, IW10 always seemed to improve, or at least not hurt UCT"
    checks = []
    pairs = _pairs(seed, "uct_mean_s", "iw", "iw10", "iw3", relative=True)
    if len(pairs):
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            "T2a", "IW10 always improved, or at least did not hurt, UCT",
            fnd.Every(fnd.Directional("below", threshold=EQUAL)), "relative change of mean UCT, IW10 vs IW3",
            "fraction", est, per, scope="every configuration the seed ran, each on its own interval",
            note=f"'at least not hurt': not worse by {EQUAL:.0%} or more (non-inferiority)"))
    out.append(_finding("T2", "Regardless of PLR, IW10 always seemed to improve, or at least not hurt UCT", checks))

    # T3: "No serious fairness problem was detected"
    checks = []
    pairs = _pairs(seed, "uct_mean_c02_s", "iw", "mix", "iw3", relative=True)
    if len(pairs):
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            "T3a", "No serious fairness problem: IW3's UCT is not seriously worse when mixed with IW10",
            fnd.Every(fnd.Directional("below", threshold=SERIOUS)),
            "relative change of the mean UCT of clients 0 and 2, mix (their servers IW3) vs IW3 alone", "fraction",
            est, per, scope="every configuration the seed ran, each on its own interval; the same clients (0 and 2) "
                            "and arrivals in both variants",
            note=f"'serious': IW3's UCT up by {SERIOUS:.0%} or more"))
    out.append(_finding("T3", "No serious fairness problem was detected", checks))

    # T4: "Long lived flows seemed to perform equally or better under IW10 than IW3"
    checks = []
    bg_seed = _select(r, lambda l, ld, o, b: b and seed_ran(l, ld, o, b))
    bg_ext = _select(r, lambda l, ld, o, b: b and not seed_ran(l, ld, o, b))
    for cid, sub, ext in (("T4a", bg_seed, False), ("T4x", bg_ext, True)):
        pairs = _pairs(sub, "bg_goodput_bps", "iw", "iw10", "iw3", relative=True)
        if not len(pairs):
            continue
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            cid, "Long-lived flows perform equally or better under IW10 than under IW3"
                 + (" (on the runs the seed did not make)" if ext else ""),
            fnd.Directional("above", threshold=-EQUAL),
            "relative change of the 2 background flows' goodput, IW10 vs IW3", "fraction", est, per, extension=ext,
            scope=("the seed's cross-traffic runs: 64 kbit/s, 5 simultaneous opens, 75 % and 97.5 % load, SACK on and "
                   "off" if not ext else "background runs the seed did not make: 20 Mbit/s, and 64 kbit/s with single "
                                         "opens"),
            note=f"'equally or better': not worse by {EQUAL:.0%} or more (non-inferiority)"))
    out.append(_finding("T4", "Long lived flows seemed to perform equally or better under IW10 than IW3", checks))

    # T5: "SACK is not required for IW10 to perform"
    checks = []
    unit = CONFIG + ["tcp", "rep"]
    pairs = _pairs(seed, "uct_mean_s", "tcp", "iw10/nosack", "iw3/sack", relative=True, unit=unit)
    if len(pairs):
        est, per = _pool(pairs, CONFIG)
        checks.append(fnd.check(
            "T5a", "IW10 without SACK still improves UCT over IW3 with SACK", fnd.Directional("below"),
            "relative change of mean UCT, IW10 without SACK vs IW3 with SACK", "fraction", est, per,
            reading="IW10 without SACK still beats IW3 with SACK", scope="every configuration the seed ran, pooled"))
        pairs = _pairs(seed, "uct_mean_s", "tcp", "iw10/nosack", "iw10/sack", relative=True, unit=unit)
        est, per = _pool(pairs, CONFIG)
        checks.append(fnd.check(
            "T5b", "Without SACK, IW10's UCT is at most slightly worse", fnd.Directional("below", threshold=SLIGHT),
            "relative change of IW10's mean UCT, without vs with SACK", "fraction", est, per,
            reading="IW10 barely needs SACK", scope="every configuration the seed ran, pooled",
            note=f"'not required': losing SACK costs IW10 less than {SLIGHT:.0%} of its UCT"))
    out.append(_finding("T5", "SACK is not required for IW10 to perform", checks))
    return out


def _batch_rows(sub: pd.DataFrame, num: str, den: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per run, the exact share ``num / den`` (runs with no batch counted are left out)."""
    rows = sub[sub[den] > 0] if len(sub) else sub
    if not len(rows):
        return _nan_est(), []
    share = rows[num].astype(float) / rows[den].astype(float)
    per = [{"load": float(x["load"]), "sack": bool(x["sack"]), "rep": int(x["rep"]), "batches": int(x[den]),
            "overflowed": int(x[num]), **fnd.exact_estimate(s, 1)} for (_, x), s in zip(rows.iterrows(), share)]
    est = fnd.estimate(pd.Series(share.to_numpy(), index=rows["rep"].to_numpy()).groupby(level=0).mean())
    est.update(batches=int(rows[den].sum()), overflowed=int(rows[num].sum()))
    return est, per


def _slow_link(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slide "Slow link tests (64Kbps, 40 buffers)": T6-T10."""
    out = []
    five = _select(r, _one("64k", opens=5))
    five = five[five["load"].isin(LINKS["64k"].loads)] if len(five) else five
    scope = "64 kbit/s, 5 simultaneous opens, no background, 75 % and 97.5 % load, SACK on and off; each run"

    # T6: "Five IW10 bursts ALWAYS overflow router buffer"
    checks = []
    est, per = _batch_rows(five[five["iw"] == "iw10"] if len(five) else five, "batches_dropped", "n_batches")
    if per:
        checks.append(fnd.check(
            "T6a", "Five IW10 bursts always overflow the router buffer",
            fnd.Every(fnd.Directional("above", threshold=ALL_SHARE)),
            "share of IW10 batches (5 transactions opened together) with a packet dropped, per run", "fraction", est,
            per, scope=scope, note=f"'ALWAYS': every batch of every run (a share above {ALL_SHARE:g})"))
    out.append(_finding("T6", "Five IW10 bursts ALWAYS overflow router buffer", checks))

    # T7: "Five IW3 bursts never overflow router buffer (unless colliding with two other ...)"
    checks = []
    iw3 = five[five["iw"] == "iw3"] if len(five) else five
    for cid, num, den, reading, words in (
            ("T7a", "lt2_dropped", "batches_lt2", "colliding: overlapping two or more other batches",
             "overlapping at most one other batch"),
            ("T7b", "isolated_dropped", "batches_isolated", "colliding: overlapping any other batch",
             "overlapping no other batch")):
        est, per = _batch_rows(iw3, num, den)
        if per:
            checks.append(fnd.check(
                cid, "Five IW3 bursts never overflow the router buffer unless colliding with two other bursts",
                fnd.Every(fnd.Directional("below", threshold=NONE_SHARE)),
                f"share of IW3 batches {words} (first open to last response) with a packet dropped, per run",
                "fraction", est, per, reading=reading, scope=scope,
                note=f"'never': no such batch in any run (a share below {NONE_SHARE:g})"))
    out.append(_finding("T7", "Five IW3 bursts never overflow router buffer (unless colliding with two other Poisson "
                              "arriving bursts)", checks))

    slow = _select(r, lambda l, ld, o, b: l == "64k" and seed_ran(l, ld, o, b))
    scope64 = "every 64 kbit/s configuration the seed ran, every IW variant and SACK setting"

    # T8: "Very long RTT (upto many secs)"
    checks = []
    if len(slow):
        peak = slow.groupby(["rep"])["hs_rtt_max_s"].max()
        _, per = _pool(slow.groupby(PER + ["rep"], as_index=False)["hs_rtt_max_s"].max(), PER, "hs_rtt_max_s")
        checks.append(fnd.check(
            "T8a", "Round-trip times on the slow link reach many seconds",
            fnd.Directional("above", threshold=MANY_S),
            "longest handshake round trip (SYN to established, SYN not retransmitted) in any slow-link run", "s",
            fnd.estimate(peak), per, reading="measured on handshakes", scope=scope64,
            note=f"'many secs': at least {MANY_S:g} s"))
        # A second reading, added after the first full-size run: a handshake whose SYN-ACK
        # waits longer than the 3 s initial RTO always has its SYN retransmitted, so T8a's
        # samples cannot exceed 3 s. A packet's round trip is the 300 ms path plus the
        # queueing delay it meets; the largest is the path plus the largest queue.
        tmp = slow.assign(rtt_max=RTT_S + slow["qdelay_max_s"])
        _, per = _pool(tmp.groupby(PER + ["rep"], as_index=False)["rtt_max"].max(), PER, "rtt_max")
        checks.append(fnd.check(
            "T8b", "Round-trip times on the slow link reach many seconds",
            fnd.Directional("above", threshold=MANY_S),
            "300 ms plus the largest bottleneck queueing delay (queue bytes over the rate) in any slow-link run", "s",
            fnd.estimate(tmp.groupby("rep")["rtt_max"].max()), per, reading="a packet meeting the largest queue",
            scope=scope64, note=f"'many secs': at least {MANY_S:g} s"))
    out.append(_finding("T8", "Very long RTT (upto many secs)", checks))

    # T9: "queuing delay upto 7.5secs (40 packets)"
    checks = []
    if len(slow):
        peak = slow.groupby("rep")["qdelay_max_s"].max()
        full = 40 * LINKS["64k"].packet_time_s()
        tmp = slow.assign(excess=slow["qdelay_max_s"] - full)
        _, per = _pool(tmp.groupby(PER + ["rep"], as_index=False)["excess"].max(), PER, "excess")
        checks.append(fnd.check(
            "T9a", "The queueing delay reaches 7.5 s (a full 40-packet queue)",
            fnd.Equivalent(LINKS["64k"].packet_time_s()),
            "largest bottleneck queue (bytes) over the link rate in any slow-link run, minus 7.5 s", "s",
            _shift(fnd.estimate(peak), full), per, scope=scope64,
            note=f"margin: one full packet's transmission time ({LINKS['64k'].packet_time_s():g} s), the metric's "
                 "resolution"))
    out.append(_finding("T9", "queuing delay upto 7.5secs (40 packets)", checks))

    # T10: "Five-simultaneous-open tests the worst case"
    checks = []
    both = _select(r, lambda l, ld, o, b: l == "64k" and not b and ld in LINKS["64k"].loads)
    for cid, metric, rel, reading, stat, unit in (
            ("T10a", "plr", False, "worst for loss (PLR)", "difference of PLR, 5 opens - single open", "fraction"),
            ("T10b", "uct_mean_s", True, "worst for UCT", "relative change of mean UCT, 5 opens vs single open",
             "fraction")):
        pairs = _pairs(both, metric, "opens", 5, 1, relative=rel)
        if not len(pairs):
            continue
        est, per = _pool(pairs, ["load", "iw", "sack"])
        checks.append(fnd.check(
            cid, "Five simultaneous opens are the worst case (worse than single opens)",
            fnd.Every(fnd.Directional("above")), stat, unit, est, per, reading=reading,
            scope="64 kbit/s, no background, 75 % and 97.5 %, every IW variant and SACK setting, each on its own "
                  "interval; paired by replication index (the open counts draw different arrivals)"))
    out.append(_finding("T10", "Five-simultaneous-open tests the worst case", checks))
    return out


def _share_check(cid: str, claim: str, sub: pd.DataFrame, col: str, stat: str, scope: str, note: str,
                 by: Sequence[str] = ("iw", "sack")) -> dict[str, Any] | None:
    if not len(sub):
        return None
    est, per = _pool(sub, list(by), col)
    return fnd.check(cid, claim, fnd.Every(fnd.Directional("above", threshold=DOMINATED)), stat, "fraction", est, per,
                     scope=scope, note=note)


def _uct_slides(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slides "Average User Completion Time", "UCT Comparison (20Mbps, 5-open)" and "UCT for
    Higher Load Slow Links": T11-T19."""
    out = []
    light20 = _select(r, lambda l, ld, o, b: l == "20m" and _light(l, ld) and o == 1 and not b)
    light64 = _select(r, lambda l, ld, o, b: l == "64k" and _light(l, ld) and o == 1 and not b)
    lightnote = ("the seed's 'lightly loaded' tests give no load: tcplab runs 30 %, single opens, no background, "
                 "SACK on and off, every IW variant")

    # T11: "Faster links (left): UCT is dominated by RTTs"
    out.append(_finding("T11", "Faster links (left): UCT is dominated by RTTs", [_share_check(
        "T11a", "On the 20 Mbit/s link at light load, round trips are most of the UCT", light20, "rtt_share",
        "share of the mean UCT that is the idle transfer's round trips ((idle UCT - serialization) / UCT)",
        "20 Mbit/s, light load; each IW variant and SACK setting on its own interval; " + lightnote,
        f"'dominated': more than {DOMINATED:.0%}")]))

    # T12: "IW3/3RTTs vs IW10/1RTT, RTT=300ms"
    checks = []
    pairs = _pairs(light20, "uct_mean_s", "iw", "iw3", "iw10", relative=False)
    if len(pairs):
        est, per = _pool(pairs, ["sack"])
        two = 2 * RTT_S
        checks.append(fnd.check(
            "T12a", "IW3 needs 2 more round trips than IW10 (3 against 1): UCT difference 2 x 300 ms",
            fnd.Equivalent(HALF_RTT_S), "mean UCT, IW3 - IW10, minus 2 RTTs (0.6 s)", "s", _shift(est, two),
            [_shift(p, two) for p in per], scope="20 Mbit/s, light load, SACK on and off; " + lightnote,
            note=f"margin: half an RTT ({HALF_RTT_S:g} s), the claim counts whole round trips"))
    out.append(_finding("T12", "IW3/3RTTs vs IW10/1RTT, RTT=300ms", checks))

    # T13: "Lightly loaded slow links (right): UCT is dominated by serialization delay"
    out.append(_finding("T13", "Lightly loaded slow links (right): UCT is dominated by serialization delay",
                        [_share_check("T13a", "On the 64 kbit/s link at light load, serialization is most of the UCT",
                                      light64, "serial_share",
                                      "share of the mean UCT that is the response's serialization (1.95 s / UCT)",
                                      "64 kbit/s, light load; each IW variant and SACK setting on its own interval; "
                                      + lightnote, f"'dominated': more than {DOMINATED:.0%}")]))

    # T14: "IW10's UCT is only slightly lower than IW3's"
    checks = []
    pairs = _pairs(light64, "uct_mean_s", "iw", "iw10", "iw3", relative=True)
    if len(pairs):
        est, per = _pool(pairs, ["sack"])
        scope = "64 kbit/s, light load, SACK on and off, pooled; " + lightnote
        checks.append(fnd.check(
            "T14a", "On lightly loaded slow links IW10's UCT is lower than IW3's",
            fnd.Directional("below", negligible=NEGLIGIBLE), "relative change of mean UCT, IW10 vs IW3", "fraction",
            est, per, scope=scope, note=f"an effect inside +-{NEGLIGIBLE:.0%} is none"))
        checks.append(fnd.check(
            "T14b", "... only slightly lower", fnd.Directional("above", threshold=-SLIGHT),
            "relative change of mean UCT, IW10 vs IW3", "fraction", est, per, scope=scope,
            note=f"'only slightly': less than {SLIGHT:.0%} lower"))
    out.append(_finding("T14", "IW10's UCT is only slightly lower than IW3's", checks))

    # T15: "Under heavy load IW10 lost UCT advantage due to high PLR"
    checks = []
    cmp20 = _select(r, lambda l, ld, o, b: l == "20m" and o == 5 and not b and ld in LINKS["20m"].loads)
    pairs = _pairs(cmp20, "uct_mean_s", "iw", "iw10", "iw3", relative=True)
    scope = "20 Mbit/s, 5 opens, no background, SACK on and off"
    if len(pairs):
        hi = pairs["load"] == LINKS["20m"].loads[1]
        est, per = _pool(pairs[hi], ["load", "sack"])
        checks.append(fnd.check(
            "T15a", "Under heavy load (96 %) IW10 has no UCT advantage left",
            fnd.Directional("above", threshold=-EQUAL), "relative change of mean UCT, IW10 vs IW3, at 96 %", "fraction",
            est, per, reading="lost: no advantage left", scope=scope + ", 96 %",
            note=f"no advantage: IW10 not better by {EQUAL:.0%} or more"))
        checks.append(fnd.check(
            "T15b", "IW10's UCT advantage shrinks from 72 % to 96 % load", fnd.Contrast("above"),
            "relative UCT change IW10 vs IW3 at 96 % minus at 72 %", "fraction", _contrast(pairs, hi, ~hi),
            reading="lost: the advantage shrinks", scope=scope + ", 72 % and 96 %"))
        plr = _pairs(cmp20[cmp20["load"] == LINKS["20m"].loads[1]], "plr", "iw", "iw10", "iw3", relative=False)
        est, per = _pool(plr, ["load", "sack"])
        checks.append(fnd.check(
            "T15c", "... due to high PLR: IW10's PLR is higher than IW3's at 96 %", fnd.Directional("above"),
            "difference of PLR, IW10 - IW3, at 96 %", "fraction", est, per, scope=scope + ", 96 %"))
    out.append(_finding("T15", "Under heavy load IW10 lost UCT advantage due to high PLR", checks))

    # T16: "IW10 UCT exhibits long tails"
    checks = []
    for cid, metric, rel, reading, stat in (
            ("T16a", "uct_p99_s", True, "long tail: a higher 99th percentile",
             "relative change of the UCT's 99th percentile, IW10 vs IW3"),
            ("T16b", "tail_ratio", False, "long tail: a higher 99th percentile relative to the median",
             "difference of p99 / median UCT, IW10 - IW3")):
        pairs = _pairs(cmp20, metric, "iw", "iw10", "iw3", relative=rel)
        if len(pairs):
            est, per = _pool(pairs, ["load", "sack"])
            checks.append(fnd.check(
                cid, "IW10's UCT has a longer tail than IW3's", fnd.Directional("above"), stat,
                "fraction" if rel else "ratio", est, per, reading=reading,
                scope=scope + ", the slide's 72 % and 96 %, pooled"))
    out.append(_finding("T16", "IW10 UCT exhibits long tails", checks))

    # T17: "Dominated by queuing delay at higher load (75% single open)"
    higher64 = _select(r, _one("64k", load=LINKS["64k"].loads[0], opens=1))
    out.append(_finding("T17", "Dominated by queuing delay at higher load (75% single open)", [_share_check(
        "T17a", "At 75 % load with single opens on 64 kbit/s, queueing is most of the UCT", higher64, "queue_share",
        "share of the mean UCT beyond the idle transfer's ((UCT - idle UCT) / UCT)",
        "64 kbit/s, 75 %, single opens, no background; each IW variant and SACK setting on its own interval",
        f"'dominated': more than {DOMINATED:.0%}")]))

    # T18: "IW10's longer average qlen offsets its round trip saving"
    checks = []
    scope = "64 kbit/s, 75 %, single opens, no background, SACK on and off, pooled"
    pairs = _pairs(higher64, "occ_mean_pkts", "iw", "iw10", "iw3", relative=False)
    if len(pairs):
        est, per = _pool(pairs, ["sack"])
        checks.append(fnd.check(
            "T18a", "IW10's average queue is longer than IW3's", fnd.Directional("above"),
            "difference of the mean bottleneck queue, IW10 - IW3", "packets", est, per, scope=scope))
        pairs = _pairs(higher64, "uct_mean_s", "iw", "iw10", "iw3", relative=True)
        est, per = _pool(pairs, ["sack"])
        checks.append(fnd.check(
            "T18b", "... which offsets its round-trip saving: IW10's UCT is no better than IW3's",
            fnd.Directional("above", threshold=-EQUAL), "relative change of mean UCT, IW10 vs IW3", "fraction", est,
            per, reading="offsets: no net gain", scope=scope,
            note=f"no net gain: IW10 not better by {EQUAL:.0%} or more"))
        checks.append(fnd.check(
            "T18c", "... which offsets its round-trip saving: IW10's UCT equals IW3's", fnd.Equivalent(EQUAL),
            "relative change of mean UCT, IW10 vs IW3", "fraction", est, per, reading="offsets: cancels out",
            scope=scope, note=f"equal: within +-{EQUAL:.0%}"))
    out.append(_finding("T18", "IW10's longer average qlen offsets its round trip saving", checks))

    # T19: "IW10 performed much better when mixed with IW3 because they were subject to the
    # same (smaller) queue"
    checks = []
    pairs = _pairs(higher64, "uct_mean_c13_s", "iw", "mix", "iw10", relative=True)
    if len(pairs):
        est, per = _pool(pairs, ["sack"])
        checks.append(fnd.check(
            "T19a", "IW10 performs much better mixed with IW3 than alone", fnd.Directional("below", threshold=-MUCH),
            "relative change of the mean UCT of clients 1 and 3, mix (their servers IW10) vs IW10 alone", "fraction",
            est, per, reading="much better than IW10 alone", scope=scope,
            note=f"'much better': at least {MUCH:.0%} lower"))
        mix = higher64[higher64["iw"] == "mix"]
        inner = mix.assign(diff=(mix["uct_mean_c13_s"] - mix["uct_mean_c02_s"]) / mix["uct_mean_c02_s"])
        est, per = _pool(inner, ["sack"])
        checks.append(fnd.check(
            "T19b", "In the mix, IW10 performs much better than IW3", fnd.Directional("below", threshold=-MUCH),
            "relative UCT difference in the mix, clients 1 and 3 (IW10) vs clients 0 and 2 (IW3)", "fraction", est,
            per, reading="much better than IW3 in the mix", scope=scope,
            note=f"'much better': at least {MUCH:.0%} lower"))
        pairs = _pairs(higher64, "occ_mean_pkts", "iw", "mix", "iw10", relative=False)
        est, per = _pool(pairs, ["sack"])
        checks.append(fnd.check(
            "T19c", "... because the mix's queue is smaller than IW10's alone", fnd.Directional("below"),
            "difference of the mean bottleneck queue, mix - IW10 alone", "packets", est, per, scope=scope))
    out.append(_finding("T19", "IW10 performed much better when mixed with IW3 because they were subject to the same "
                               "(smaller) queue", checks))
    return out


PLR_CASES = ((0.975, 1), (0.75, 5), (0.975, 5))


def _plr_slide(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slide "PLR comparison (64Kbps)": T20-T21."""
    out = []
    cases = _select(r, lambda l, ld, o, b: l == "64k" and not b and (ld, o) in PLR_CASES)
    scope = ("the slide's three cases on 64 kbit/s without background: single open at 97.5 %, 5 opens at 75 % and at "
             "97.5 %")

    # T20: "IW10 > IW3+IW10 > IW3, simultaneous opens >> single open"
    checks = []
    for cid, test, ref in (("T20a", "iw10", "mix"), ("T20b", "mix", "iw3")):
        pairs = _pairs(cases, "plr", "iw", test, ref, relative=False)
        if len(pairs):
            est, per = _pool(pairs, ["load", "opens", "sack"])
            name = {"iw10": "IW10", "mix": "IW3+IW10", "iw3": "IW3"}
            checks.append(fnd.check(
                cid, f"PLR: {name[test]} > {name[ref]}", fnd.Every(fnd.Directional("above")),
                f"difference of PLR, {name[test]} - {name[ref]}", "fraction", est, per,
                scope=scope + ", SACK on and off; each on its own interval"))
    for cid, load, reading, ratio, ext in (("T20c", 0.975, ">>: at least twice", LOT, False),
                                          ("T20d", 0.975, ">>: an order of magnitude", ORDER, False),
                                          ("T20x", 0.75, None, LOT, True)):
        sub = _select(r, _one("64k", load=load))
        five, one = sub[sub["opens"] == 5], sub[sub["opens"] == 1]
        if not (len(five) and len(one)):
            continue
        per = [{"iw": iw, **fnd.estimate(_ratio(five[five["iw"] == iw], one[one["iw"] == iw], "plr"))}
               for iw in ("iw3", "mix", "iw10")]
        checks.append(fnd.check(
            cid, f"PLR: simultaneous opens >> single open, at {load:.1%} load", fnd.Directional("above",
                                                                                              threshold=ratio),
            f"PLR ratio, 5 opens / single open, at {load:.1%}", "ratio", fnd.estimate(_ratio(five, one, "plr")), per,
            reading=reading, extension=ext,
            scope=(f"64 kbit/s, no background, {load:.1%}, per replication the mean PLR over every IW variant and SACK "
                   "setting; " + ("the slide's only load with both open counts" if not ext else
                                  "single opens at 75 % are not on the slide")),
            note=f"a ratio of at least {ratio:g}"))
    out.append(_finding("T20", "IW10 > IW3+IW10 > IW3, simultaneous opens >> single open", checks))

    # T21: "UCT > 70secs caused by multiple rounds of queuing delay"
    checks = []
    if len(cases):
        est, per = _pool(cases, ["load", "opens"], "uct_mean_s")
        share = fnd.Share(fnd.Directional("above", threshold=UCT_LONG_S), 1 / 3)
        checks.append(fnd.check(
            "T21a", "UCT exceeds 70 s", share, "mean UCT (finished transactions)", "s", est, per,
            scope=scope + ", mean over IW variants and SACK settings per replication",
            note="in at least one of the slide's three cases (the slide says it once)"))
        long_cases = {(p["load"], p["opens"]) for p in per if share.base.decide(p) == fnd.HELD}
        rounds = cases[[(ld, o) in long_cases for ld, o in zip(cases["load"], cases["opens"])]]
        rounds = rounds.assign(rounds=rounds["uct_mean_s"] / rounds["qdelay_mean_s"])
        # With no case above 70 s the check has nothing to judge (inconclusive, and T21a says why).
        est, per = _pool(rounds, ["load", "opens"], "rounds")
        checks.append(fnd.check(
            "T21b", "... caused by multiple rounds of queueing delay", fnd.Every(fnd.Directional("above", threshold=2)),
            "mean UCT over the mean queueing delay of one pass through the bottleneck queue", "ratio", est, per,
            scope="the cases of T21a whose mean UCT exceeds 70 s (a rule fixed before the runs)",
            note="'multiple rounds': the UCT spans at least 2 mean queueing delays"))
    out.append(_finding("T21", "UCT > 70secs caused by multiple rounds of queuing delay", checks))
    return out


def _fairness(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slide "Faireness – RPC flows": T22-T23."""
    out = []
    seed = _select(r, _seed)
    pairs = _pairs(seed, "uct_mean_c02_s", "iw", "mix", "iw3", relative=True)
    stat = "relative change of the mean UCT of clients 0 and 2, mix (their servers IW3) vs IW3 alone"

    # T22: "IW3 only suffered limited performance (UCT) loss when competing against IW10 in
    # light to median loads, but not at high load (why?)"
    checks = []
    if len(pairs):
        heavy = _mask(pairs, _heavy)
        est, per = _pool(pairs[~heavy], PER)
        checks.append(fnd.check(
            "T22a", "In light to median loads, IW3 suffers only a limited UCT loss in the mix",
            fnd.Directional("below", threshold=SERIOUS), stat, "fraction", est, per,
            scope="every configuration the seed ran at the light load and each link's lower named load (72 %, 75 %), "
                  "pooled; the same clients and arrivals in both variants",
            note=f"'limited': IW3's UCT up by less than {SERIOUS:.0%}"))
        est, per = _pool(pairs[heavy], PER)
        checks.append(fnd.check(
            "T22b", "... but not at high load: there IW3 suffers no loss", fnd.Directional("below", threshold=EQUAL),
            stat, "fraction", est, per, reading="no loss at high load",
            scope="every configuration the seed ran at each link's heavy load (96 %, 97.5 %), pooled",
            note=f"no loss: not worse by {EQUAL:.0%} or more"))
        checks.append(fnd.check(
            "T22c", "... but not at high load: IW3's loss is smaller at high load", fnd.Contrast("below"),
            "IW3's relative UCT change in the mix at the heavy load minus at the light and lower loads", "fraction",
            _contrast(pairs, heavy, ~heavy), reading="a smaller loss at high load",
            scope="every configuration the seed ran, heavy against light and lower loads"))
    out.append(_finding("T22", "IW3 only suffered limited performance (UCT) loss when competing against IW10 in light "
                               "to median loads, but not at high load (why?)", checks))

    # T23: "IW3's UCT often improved when mixed with IW10 under heavy load"
    checks = []
    if len(pairs):
        heavy = _mask(pairs, _heavy)
        est, per = _pool(pairs[heavy], PER)
        checks.append(fnd.check(
            "T23a", "Under heavy load, IW3's UCT often improves when mixed with IW10",
            fnd.Share(fnd.Directional("below"), OFTEN), stat, "fraction", est, per,
            scope="every configuration the seed ran at each link's heavy load (96 %, 97.5 %), each on its own interval",
            note=f"'often': in at least {OFTEN:.0%} of them"))
    out.append(_finding("T23", "IW3's UCT often improved when mixed with IW10 under heavy load", checks))
    return out


def _cross_traffic(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slides "IW10's Impact to Cross (long-lived) Traffic" and "Comparison of Impacts to Cross
    Traffic": T24-T26."""
    out = []
    bg_seed = _select(r, lambda l, ld, o, b: b and seed_ran(l, ld, o, b))
    at75 = bg_seed[bg_seed["load"] == LINKS["64k"].loads[0]] if len(bg_seed) else bg_seed

    # T24: "IW10 doesn't seem to cause any more damage to other long lived flows than IW3"
    checks = []
    scope = "64 kbit/s, 75 %, 5 simultaneous opens, 2 long-lived flows, SACK on and off, pooled"
    for cid, metric, form, reading, stat, note in (
            ("T24a", "bg_goodput_bps", fnd.Directional("above", threshold=-EQUAL), "damage: lower goodput",
             "relative change of the background flows' goodput, IW10 vs IW3",
             f"no more damage: goodput not lower by {EQUAL:.0%} or more"),
            ("T24b", "bg_retransmits", fnd.Directional("below", threshold=EQUAL), "damage: more losses",
             "relative change of the background flows' retransmissions, IW10 vs IW3",
             f"no more damage: not {EQUAL:.0%} or more retransmissions")):
        pairs = _pairs(at75, metric, "iw", "iw10", "iw3", relative=True)
        if len(pairs):
            est, per = _pool(pairs, ["sack"])
            checks.append(fnd.check(cid, "IW10 causes no more damage to long-lived flows than IW3", form, stat,
                                    "fraction", est, per, reading=reading, scope=scope, note=note))
    out.append(_finding("T24", "IW10 doesn't seem to cause any more damage to other long lived flows than IW3", checks))

    pairs = _pairs(bg_seed, "bg_goodput_bps", "iw", "iw10", "iw3", relative=True)
    stat = "relative change of the 2 background flows' goodput, IW10 vs IW3"
    scope = "the seed's cross-traffic runs: 64 kbit/s, 5 simultaneous opens, 75 % and 97.5 %, SACK on and off"

    # T25: "Sometimes it's the other around as shown above and next slide"
    checks = []
    if len(pairs):
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            "T25a", "Sometimes long-lived flows do better under IW10 than under IW3",
            fnd.Share(fnd.Directional("above"), 1 / len(per)), stat, "fraction", est, per,
            scope=scope + ", each on its own interval", note="'sometimes': in at least one configuration"))
    out.append(_finding("T25", "Sometimes it's the other around as shown above and next slide", checks))

    # T26: "Background flows performed better under IW10 than IW3 (more obvious under high
    # load (right graph))"
    checks = []
    if len(pairs):
        est, per = _pool(pairs, PER)
        checks.append(fnd.check(
            "T26a", "Background flows perform better under IW10 than under IW3", fnd.Directional("above"), stat,
            "fraction", est, per, scope=scope + ", pooled"))
        hi = pairs["load"] == LINKS["64k"].loads[1]
        checks.append(fnd.check(
            "T26b", "... more obviously under high load", fnd.Contrast("above"),
            "background goodput change IW10 vs IW3 at 97.5 % minus at 75 %", "fraction", _contrast(pairs, hi, ~hi),
            scope=scope))
    out.append(_finding("T26", "Background flows performed better under IW10 than IW3 (more obvious under high load "
                               "(right graph))", checks))
    return out


def _sack(r: pd.DataFrame) -> list[dict[str, Any]]:
    """Slide "Is SACK required for IW10 to Perform?": T27."""
    checks = []
    seed = _select(r, _seed)
    pairs = _pairs(seed[seed["iw"].isin(["iw3", "iw10"])] if len(seed) else seed, "uct_mean_s", "sack", False, True,
                   relative=True)
    if len(pairs):
        est, per = _pool(pairs, ["iw"])
        scope = ("every configuration the seed ran (the Google testbed's are not given), pooled per IW variant; IW10 "
                 "and IW3 each on its own interval")
        stat = "relative change of mean UCT, without SACK vs with SACK"
        checks.append(fnd.check("T27a", "SACK helps reduce UCT, for both IW10 and IW3", fnd.Every(fnd.Directional(
            "above")), stat, "fraction", est, per, scope=scope))
        checks.append(fnd.check(
            "T27b", "... but only by a small percentage", fnd.Every(fnd.Directional("below", threshold=SLIGHT)),
            stat, "fraction", est, per, scope=scope, note=f"'a small percentage': under {SLIGHT:.0%}"))
    return [_finding("T27", "SACK does help reducing UCT but only by a small percentage for both IW10 and IW3", checks)]


def evaluate_findings(runs: pd.DataFrame, params: Any) -> dict[str, Any]:
    """Checks T1-T27 on the per-run table; returns the ``findings.json`` document.

    Every finding is present; one whose configurations were not run has verdict ``not run``.
    """
    r = derived(runs) if len(runs) else runs.assign(tcp=[])
    out = (_key_findings(r) + _slow_link(r) + _uct_slides(r) + _plr_slide(r) + _fairness(r) + _cross_traffic(r)
           + _sack(r))
    order = {f"T{i}": i for i in range(1, 28)}
    out.sort(key=lambda f: order[f["id"]])
    params_doc = asdict(params) if hasattr(params, "__dataclass_fields__") else dict(params)
    return fnd.document(NAME, SEED_STUDY, params_doc, params.reps, list(params.links), fnd.METHOD, out,
                        thresholds=THRESHOLDS)


# --------------------------------------------------------------------------------------
# A toy table for the examples


@dataclass
class _ToyParams:
    reps: int = 2
    links: list[str] = field(default_factory=lambda: ["20m"])


def _toy_runs() -> pd.DataFrame:
    """Two replications of 20 Mbit/s at 72 % with 5 opens: IW10's UCT 10 % below IW3's."""
    rows = []
    for rep in (0, 1):
        for iw, uct in (("iw3", 1.0), ("iw10", 0.9), ("mix", 0.95)):
            for sack in (True, False):
                u = uct * (1 + 0.01 * rep)
                rows.append({"link": "20m", "load": 0.72, "opens": 5, "bg": False, "iw": iw, "sack": sack, "rep": rep,
                             "uct_mean_s": u, "uct_mean_c02_s": u, "uct_mean_c13_s": u, "uct_idle_s": 0.6,
                             "uct_p50_s": u, "uct_p99_s": 2 * u, "plr": 0.01 if iw == "iw10" else 0.0,
                             "occ_mean_pkts": 5.0, "qdelay_mean_s": 0.01, "bg_goodput_bps": math.nan,
                             "bg_retransmits": math.nan, "hs_rtt_max_s": 0.3, "qdelay_max_s": 0.1})
    return pd.DataFrame(rows)
