"""Seed 002's claims as checks: forms, scopes, thresholds and readings, fixed from the seed's words.

Every result sentence of ``docs/seeds/002_06d48414b99b3466.txt`` is mapped by the
claims ledger (``ledger.toml`` beside this module) to the findings below, or to a reason
it is not tested. Each finding states its claim in the seed's words; its checks use the
claim forms of :mod:`tcplab.studies.findings`:

- a quantifier over named protocols or hop counts ("High-speed TCPs", "all flows ...
  regardless of hop counts") is :class:`~tcplab.studies.findings.Every` over them; "only
  short hop flows" is :class:`~tcplab.studies.findings.Only`; a comparison ("more
  steep", "bit milder", "Compound vs. BIC, ...") is a
  :class:`~tcplab.studies.findings.Directional` on a paired difference; "Not very good
  situation" (an effect that short-lived flows change) is a
  :class:`~tcplab.studies.findings.Contrast` of with and without;
- **scope**: the configurations the sentence's slide names. A slide that names a load
  ("heavy load condition (40 long-lived flows)") is checked at that load; one that
  names none, at both loads the seed ran without random loss (10 and 40 long-lived
  flows), pooled per replication (the mean of the per-run metric over the two loads).
  The random-loss case, whose results the seed does not state, and CUBIC, which its
  conclusion table does not list, are extensions (X1, X2);
- every threshold and negligible band is a constant below with its reason, fixed
  before the full-size run (H2's band was added after the CI run at ``tiny`` scale;
  ``docs/studies/highspeed.md`` says why). Where the seed can be read two ways, both
  readings are checks (``reading=``) and the finding reports a verdict per reading.

Statistics are paired by replication (common random numbers: every run of a
replication sees the same flows): per replication, the per-run metric of one
protocol minus that of another (or of Reno), averaged over the loads in scope; then a
95% Student-t interval over replications (:func:`tcplab.studies.findings.estimate`).
The seed's relative throughput is tested as ``ratio - 1``. Long-lived flows carry the
per-flow throughput and friendliness claims: the seed gives short-lived flows their
own slides (file transfer time).

Example:
    >>> sorted(FINDINGS)[:3], len(FINDINGS)
    (['H1', 'H10', 'H11'], 20)
    >>> evaluate_findings(pd.DataFrame(), None)["findings"][0]["verdict"]
    'not run'
"""

from __future__ import annotations

import math
from dataclasses import asdict, is_dataclass
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from tcplab.studies import findings as fnd
from tcplab.studies.highspeed.setup import LABELS, NAME, PROTOCOLS, RTT_READINGS, SEED_STUDY

__all__ = [
    "NEGLIGIBLE_REL", "NEGLIGIBLE_UTIL", "NEGLIGIBLE_SLOPE", "NEGLIGIBLE_JAIN", "FRIENDLY_FLOOR", "MANY_SPIKES",
    "SEED_PROTOCOLS", "DELAY_BASED", "LOSS_BASED", "TABLE", "FINDINGS", "evaluate_findings", "summary_rows",
]

# --------------------------------------------------------------------------------------
# Thresholds, each with its reason (tcplab's choices where the seed gives no size)

#: A relative throughput (or a difference of two) within +-0.05 of Reno's throughput is
#: no change: tcplab's choice, the seed gives no size. Unit: fraction of the flow's
#: throughput under Reno.
NEGLIGIBLE_REL = 0.05
#: A utilisation difference within +-0.005 of a link's capacity (5 Mbit/s at 1 Gbit/s)
#: is no change: tcplab's choice.
NEGLIGIBLE_UTIL = 0.005
#: Throughput-vs-distance slopes (ln throughput per ln RTT, or per hop) that differ by
#: less than 0.05 are equally steep: over the seed's 30 ms to 300 ms (Fairness (2)) a
#: slope of 0.05 moves the long-to-short throughput ratio by 10^0.05 = 12%; per hop, by
#: about 5%. tcplab's choice.
NEGLIGIBLE_SLOPE = 0.05
#: Jain's index differences under 0.02 (of its 0..1 range) are no difference: tcplab's choice.
NEGLIGIBLE_JAIN = 0.02
#: "Friendly to Reno": the Reno flows keep at least 95% of the throughput they have
#: among Reno flows only (the seed's second formula >= 0.95): tcplab's choice.
FRIENDLY_FLOOR = -0.05
#: "Many spikes": at least twice the spike rate seen without short-lived flows
#: (tcplab's choice: the seed shows one trace and gives no count).
MANY_SPIKES = 2.0

#: The high-speed protocols of the seed's conclusion table (CUBIC is tcplab's addition).
SEED_PROTOCOLS = ("highspeed", "scalable", "bic", "htcp", "compound", "areno")
#: Protocols that use delay: AReno ("adaptive window increase using delay information",
#: the seed) and Compound (its delay-based window: Tan et al., INFOCOM 2006).
DELAY_BASED = ("compound", "areno")
LOSS_BASED = ("highspeed", "scalable", "bic", "htcp")
#: The seed's loads without random loss; its heavy load.
LOADS = (10, 40)
HEAVY = (40,)

#: The seed's conclusion table: column -> the rows marked X (the others are blank).
TABLE = {
    "Per-flow throughput": ("highspeed", "scalable", "bic"),
    "Per-flow fairness": ("htcp", "areno"),
    "Efficient link utilization": ("highspeed", "scalable", "bic", "htcp", "areno"),
    "Friendliness to Reno": ("compound", "areno"),
}

#: Finding id -> the claim in the seed's words (with the slide it is on).
FINDINGS = {
    "H1": "High-speed TCPs improve efficiency (Efficiency improvement (1): overall utilization of 8 backbone links)",
    "H2": "Compound is bit milder (its utilisation gain is below every other high-speed TCP's)",
    "H3": "Scalable: only short hop flows improve (throughput improvement vs. hop-count)",
    "H4": "AReno and Hamilton: all flows improve regardless of hop counts",
    "H5": "Scalable: more steep (per-flow throughput vs. distance, heavy load)",
    "H6": "AReno and Hamilton: more flat (per-flow throughput vs. distance, heavy load)",
    "H7": "Allocate more resource on long flows: AReno, Hamilton, Compound",
    "H8": "Allocate more resource on short flows: BIC, HSTCP, Scalable",
    "H9": "Friendliness-efficiency tradeoff: Compound vs. BIC, Scalable, HSTCP, Hamilton",
    "H10": "AReno is friendly to Reno (Both friendliness and efficiency: AReno; AReno's aim: Improve friendliness "
           "to Reno)",
    "H11": "AReno is efficient (Both friendliness and efficiency: AReno; AReno's aim: Scalable to high-speed network)",
    "H12": "AReno improves RTT-fairness: its throughput depends less on RTT than Reno's (AReno's aim: Improve "
           "RTT-fairness)",
    "T1": "Conclusion table, per-flow throughput: X for HighSpeed, Scalable, BIC",
    "T2": "Conclusion table, per-flow fairness: X for Hamilton, AReno",
    "T3": "Conclusion table, efficient link utilization: X for HighSpeed, Scalable, BIC, Hamilton, AReno",
    "T4": "Conclusion table, friendliness to Reno: X for Compound, AReno",
    "S1": "Many spikes due to slow-start of short-lived flows (RTT of a flow, with vs. without short-lived flows)",
    "S2": "Not very good situation for delay-based protocols (with short-lived flows)",
    "X1": "Extension: CUBIC, which the seed's table does not list, improves per-flow throughput and link "
          "utilisation and is friendly to Reno (the criteria of T1, T3 and T4)",
    "X2": "Extension: with random loss (10 long-lived flows) every high-speed TCP improves per-flow throughput",
}
#: Findings that are tcplab's, not the seed's.
EXTENSIONS = ("X1", "X2")

#: Report order.
_ORDER = ("H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "H10", "H11", "H12", "T1", "T2", "T3", "T4",
          "S1", "S2", "X1", "X2")

#: Efficiency readings: the per-run metric, its unit and negligible band. The seed
#: measures efficiency both as link utilisation ("Overall utilization of 8 backbone
#: links") and as per-flow relative throughput ("Efficiency improvement (2), (3)").
#: Utilisation is read over the whole run (the seed's words) and while long-lived
#: flows are active (tcplab's: over the whole run it is fixed by the offered bytes once
#: every file completes).
UTIL_READINGS = {"whole-run utilisation": "util_gain", "active utilisation": "util_active_gain"}
EFF_READINGS = {"relative throughput": "rel_long", **UTIL_READINGS}
_UNITS = {"rel_long": "fraction of Reno's throughput", "util_gain": "fraction of link capacity",
          "util_active_gain": "fraction of link capacity", "reno_deg_long": "fraction of Reno's throughput",
          "slope_rtt": "ln(throughput) per ln(RTT)", "slope_hops": "ln(throughput) per hop", "jain": "index"}
_NEGLIGIBLE = {"rel_long": NEGLIGIBLE_REL, "util_gain": NEGLIGIBLE_UTIL, "util_active_gain": NEGLIGIBLE_UTIL,
               "reno_deg_long": NEGLIGIBLE_REL, "slope_rtt": NEGLIGIBLE_SLOPE, "slope_hops": NEGLIGIBLE_SLOPE,
               "jain": NEGLIGIBLE_JAIN}
#: Metrics compared against Reno as ``metric - 1`` (a ratio to Reno) or ``metric - Reno's`` (absolute).
_RATIO = ("rel_long", "reno_deg_long")
_DISTANCE = {"RTT": "slope_rtt", "hops": "slope_hops"}
#: Per-run differences of two metrics (H7, H8), taken within each run before pooling.
_DIFFERENCES = (("rel_long_rtt_long", "rel_long_rtt_short"), ("rel_long", "rel_short"))


# --------------------------------------------------------------------------------------
# Per-replication series


def _label(p: str) -> str:
    return LABELS.get(p, p)


class Runs:
    """The per-run metrics grouped once by run (protocol, mix, load, loss, shorts), each group indexed by replication.

    Example:
        >>> rm = pd.DataFrame({"protocol": ["a"] * 4, "mix": ["alone"] * 4, "n_long": [10, 40, 10, 40],
        ...                    "loss": [False] * 4, "shorts": [True] * 4, "rep": [0, 0, 1, 1], "m": [1.0, 3.0, 2.0, 2.0]})
        >>> sorted(Runs(rm).groups)
        [('a', 'alone', 10, False, True), ('a', 'alone', 40, False, True)]
    """

    def __init__(self, rm: pd.DataFrame) -> None:
        self.columns = set(rm.columns) if len(rm) else set()
        self.groups: dict[tuple[str, str, int, bool, bool], pd.DataFrame] = {}
        if len(rm):
            for (p, m, n, lo, sh), g in rm.groupby(["protocol", "mix", "n_long", "loss", "shorts"], sort=False):
                self.groups[(str(p), str(m), int(n), bool(lo), bool(sh))] = g.set_index("rep")


def _series(rm: Runs | pd.DataFrame, metric: str, protocol: str, mix: str = "alone", loads: Sequence[int] = LOADS,
            loss: bool = False, shorts: bool = True) -> pd.Series:
    """Per replication, the mean of ``metric`` over the runs of ``protocol`` in scope (one per load).

    Example:
        >>> rm = pd.DataFrame({"protocol": ["a"] * 4, "mix": ["alone"] * 4, "n_long": [10, 40, 10, 40],
        ...                    "loss": [False] * 4, "shorts": [True] * 4, "rep": [0, 0, 1, 1], "m": [1.0, 3.0, 2.0, 2.0]})
        >>> _series(rm, "m", "a").tolist()
        [2.0, 2.0]
    """
    runs = rm if isinstance(rm, Runs) else Runs(rm)
    if metric not in runs.columns:
        return pd.Series(dtype=float)
    parts = [g[metric] for n in loads if (g := runs.groups.get((protocol, mix, int(n), loss, shorts))) is not None]
    if not parts:
        return pd.Series(dtype=float)
    return pd.concat(parts).astype(float).groupby(level=0).mean().dropna()


def _vs_reno(rm: Runs, metric: str, protocol: str, loads: Sequence[int] = LOADS, mix: str = "alone",
             loss: bool = False, shorts: bool = True) -> pd.Series:
    """``protocol``'s gain over Reno per replication: ``metric - 1`` for a ratio to Reno,
    else ``metric`` minus the Reno baseline's (``util_gain`` is already a difference)."""
    s = _series(rm, metric, protocol, mix, loads, loss, shorts)
    if metric in _RATIO:
        return s - 1.0
    if metric in ("util_gain", "util_active_gain"):
        return s
    return s - _series(rm, metric, "reno", "alone", loads, loss, shorts)


def _est(s: pd.Series) -> dict[str, Any]:
    s = s.replace([math.inf, -math.inf], math.nan).dropna()
    return fnd.estimate(s) if len(s) else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}


# --------------------------------------------------------------------------------------
# Check helpers


def _rank(v: str) -> int:
    return {fnd.CONTRADICTED: 0, fnd.INCONCLUSIVE: 1, fnd.HELD: 2}.get(v, 1)


def _weakest(base: fnd.Form, per: list[dict[str, Any]]) -> dict[str, Any]:
    """The configuration nearest to failing ``base`` (for the headline statistic of a quantifier)."""
    def key(c: dict[str, Any]) -> tuple[int, float]:
        lo, hi = c["ci"]
        side, thr = getattr(base, "side", "above"), getattr(base, "threshold", 0.0)
        margin = (lo - thr) if side == "above" else (thr - hi)
        return _rank(base.decide(c)), (margin if margin == margin else -math.inf)
    return min(per, key=key) if per else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}


def _config_name(c: dict[str, Any]) -> str:
    """A per-configuration row in words: ``{"protocol": "htcp", "versus": "reno"}`` -> ``H-TCP vs Reno``."""
    words = {"protocol": _label, "versus": lambda v: f"vs {_label(v)}", "hops": lambda v: f"{v} hop(s)",
             "n_long": lambda v: f"{v} long-lived", "shorts": lambda v: "with short-lived flows" if v else "without"}
    return " ".join(words.get(k, str)(v) for k, v in c.items() if k not in ("value", "ci", "n", "exact"))


def _quantified(cid: str, claim: str, form: fnd.Form, statistic: str, unit: str, per: list[dict[str, Any]],
                scope: str, reading: str | None = None, note: str = "", **extra: Any) -> dict[str, Any]:
    """A check quantified over configurations: the headline is the weakest configuration."""
    base = getattr(form, "base", form)
    if isinstance(form, fnd.Only):
        inside = [all(c.get(k) in v for k, v in form.where.items()) for c in per]
        outside = [c for c, i in zip(per, inside) if not i and base.decide(c) != fnd.CONTRADICTED]
        head = outside[0] if outside else _weakest(base, [c for c, i in zip(per, inside) if i])
    else:
        head = _weakest(base, per)
    name = f"{statistic}; shown: {_config_name(head)}" if per else statistic
    return fnd.check(cid, claim, form, name, unit, head, per, scope=scope, reading=reading, note=note, **extra)


def _per(keys: Iterable[Any], column: str, series: Callable[[Any], pd.Series]) -> list[dict[str, Any]]:
    return [{column: k, **_est(series(k))} for k in keys]


def _pairs(xs: Sequence[str], ys: Sequence[str], series: Callable[[str, str], pd.Series]) -> list[dict[str, Any]]:
    return [{"protocol": x, "versus": y, **_est(series(x, y))} for x in xs for y in ys]


def _loads_text(loads: Sequence[int]) -> str:
    return " and ".join(str(n) for n in loads) + " long-lived flows, no random loss"


# --------------------------------------------------------------------------------------
# Which configurations a finding needs


Need = tuple[str, str, int, bool, bool]


def _need(protocols: Iterable[str], mix: str = "alone", loads: Sequence[int] = LOADS, loss: bool = False,
          shorts: bool = True) -> set[Need]:
    """The runs (protocol, mix, load, loss, shorts) a check needs, the Reno baseline included."""
    out = {("reno", "alone", n, loss, shorts) for n in loads}
    return out | {(p, mix, n, loss, shorts) for p in protocols for n in loads}


def _missing(rm: Runs, need: set[Need]) -> list[Need]:
    return sorted(need - set(rm.groups))


def _not_run_text(missing: list[Need]) -> str:
    shown = ", ".join(f"{_label(p)} {m} ({n} long-lived{', random loss' if lo else ''}"
                      f"{'' if s else ', no short-lived flows'})" for p, m, n, lo, s in missing[:4])
    more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
    return f"not run: its configurations were not all run (missing {shown}{more})"


# --------------------------------------------------------------------------------------
# The findings


def _h1_h2(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    scope = f"{', '.join(map(_label, SEED_PROTOCOLS))} alone vs Reno alone; {_loads_text(LOADS)}, pooled"
    h1, h2 = [], []
    rivals = [p for p in SEED_PROTOCOLS if p != "compound"]
    for i, (reading, m) in enumerate(UTIL_READINGS.items()):
        h1.append(_quantified(
            f"H1{'ab'[i]}", f"every high-speed TCP of the seed raises the {reading} of the 8 backbone links over Reno",
            fnd.Every(fnd.Directional("above", negligible=NEGLIGIBLE_UTIL)), f"{reading} with the protocol - with Reno",
            _UNITS[m], _per(SEED_PROTOCOLS, "protocol", lambda p: _vs_reno(rm, m, p)), scope, reading=reading))
        h2.append(_quantified(
            f"H2{'ab'[i]}", f"Compound's {reading} gain over Reno is below every other high-speed TCP's",
            fnd.Every(fnd.Directional("below", negligible=NEGLIGIBLE_UTIL)),
            f"{reading} gain, Compound - the other protocol", _UNITS[m],
            [{"versus": r, **_est(_vs_reno(rm, m, "compound") - _vs_reno(rm, m, r))} for r in rivals],
            scope, reading=reading,
            note="'bit' asks for a small difference, not a size; a difference inside the utilisation band is none"))
    return {"H1": h1, "H2": h2}


def _h3_h4(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    bins = ("1", "2", "3-4")
    base = fnd.Directional("above", negligible=NEGLIGIBLE_REL)
    unit = _UNITS["rel_long"]

    def per(p: str) -> list[dict[str, Any]]:
        return _per(bins, "hops", lambda b: _series(rm, f"rel_long_h{b}", p) - 1.0)

    scope = (f"long-lived flows of the protocol alone vs the same flows under Reno, by hop count; "
             f"{_loads_text(LOADS)}, pooled")
    h3 = [_quantified(f"H3{'ab'[i]}", f"with Scalable only {label} flows improve (relative throughput above 1)",
                      fnd.Only(base, {"hops": list(inside)}), "relative throughput - 1", unit, per("scalable"), scope,
                      reading=f"short hop = {label}")
          for i, (label, inside) in enumerate((("1 hop", ("1",)), ("1 or 2 hops", ("1", "2"))))]
    h4 = [_quantified(f"H4{'ab'[i]}", f"with {_label(p)} flows of every hop count improve (relative throughput above 1)",
                      fnd.Every(base), "relative throughput - 1", unit, per(p), scope)
          for i, p in enumerate(("areno", "htcp"))]
    return {"H3": h3, "H4": h4}


def _slope_diff(rm: Runs, metric: str, p: str, q: str) -> pd.Series:
    return _series(rm, metric, p, loads=HEAVY) - _series(rm, metric, q, loads=HEAVY)


def _h5_h6(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    scope = "long-lived flows, each protocol alone and Reno alone, 40 long-lived flows, no random loss"
    note = ("slope of ln(throughput) against ln(base RTT) or hop count over the run's long-lived flows; "
            "a more negative slope is steeper (throughput falls faster with distance)")
    h5, h6 = [], []
    for j, (dist, m) in enumerate(_DISTANCE.items()):
        unit = _UNITS[m]
        steep = fnd.Directional("below", negligible=NEGLIGIBLE_SLOPE)
        flat = fnd.Directional("above", negligible=NEGLIGIBLE_SLOPE)
        h5.append(_quantified(f"H5{'ab'[j]}", f"Scalable's throughput falls faster with {dist} than Reno's", steep,
                              f"slope vs {dist}, Scalable - Reno", unit,
                              [{"versus": "reno", **_est(_slope_diff(rm, m, "scalable", "reno"))}], scope,
                              reading=f"vs Reno, distance = {dist}", note=note))
        h5.append(_quantified(f"H5{'cd'[j]}", f"Scalable's throughput falls faster with {dist} than AReno's and H-TCP's",
                              fnd.Every(steep), f"slope vs {dist}, Scalable - the other protocol", unit,
                              [{"versus": q, **_est(_slope_diff(rm, m, "scalable", q))} for q in ("areno", "htcp")],
                              scope, reading=f"vs each other, distance = {dist}", note=note))
        h6.append(_quantified(f"H6{'ab'[j]}", f"AReno's and H-TCP's throughput falls slower with {dist} than Reno's",
                              fnd.Every(flat), f"slope vs {dist}, the protocol - Reno", unit,
                              _per(("areno", "htcp"), "protocol", lambda p: _slope_diff(rm, m, p, "reno")), scope,
                              reading=f"vs Reno, distance = {dist}", note=note))
        h6.append(_quantified(f"H6{'cd'[j]}", f"AReno's and H-TCP's throughput falls slower with {dist} than Scalable's",
                              fnd.Every(flat), f"slope vs {dist}, the protocol - Scalable", unit,
                              _per(("areno", "htcp"), "protocol", lambda p: _slope_diff(rm, m, p, "scalable")), scope,
                              reading=f"vs each other, distance = {dist}", note=note))
    return {"H5": h5, "H6": h6}


def _h7_h8(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    readings = {
        "long/short = base RTT": ("rel_long_rtt_long", "rel_long_rtt_short",
                                  "long-lived flows with base RTT >= 150 ms vs <= 60 ms (the seed's 300 ms and 30 ms, "
                                  "a factor 2 either side)"),
        "long/short = long-lived/short-lived": ("rel_long", "rel_short", "long-lived vs short-lived flows"),
    }
    out: dict[str, list[dict[str, Any]]] = {"H7": [], "H8": []}
    for fid, protocols, side, more in (("H7", ("areno", "htcp", "compound"), "above", "long"),
                                       ("H8", ("bic", "highspeed", "scalable"), "below", "short")):
        for i, (reading, (a, b, what)) in enumerate(readings.items()):
            def diff(p: str, a: str = a, b: str = b) -> pd.Series:
                return _series(rm, f"{a}-{b}", p)
            out[fid].append(_quantified(
                f"{fid}{'ab'[i]}", f"{', '.join(map(_label, protocols))} raise the {more} flows' throughput relative to "
                f"Reno more than the {'short' if more == 'long' else 'long'} flows'",
                fnd.Every(fnd.Directional(side, negligible=NEGLIGIBLE_REL)),
                "relative throughput of long flows - of short flows", _UNITS["rel_long"],
                _per(protocols, "protocol", diff),
                f"{what}, each protocol alone vs Reno alone; {_loads_text(LOADS)}, pooled", reading=reading))
    return out


def _friendly(rm: Runs, p: str) -> pd.Series:
    return _vs_reno(rm, "reno_deg_long", p, mix="mixed")


def _h9_h10(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    rivals = ("bic", "scalable", "highspeed", "htcp")
    fscope = f"long-lived Reno flows of the mixed runs vs the same flows in the all-Reno run; {_loads_text(LOADS)}, pooled"
    escope = f"each protocol alone vs Reno alone; {_loads_text(LOADS)}, pooled"
    h9 = [_quantified("H9a", "Reno flows keep more throughput beside Compound than beside BIC, Scalable, HighSpeed "
                             "and H-TCP",
                      fnd.Every(fnd.Directional("above", negligible=NEGLIGIBLE_REL)),
                      "Reno relative throughput (second formula), with Compound - with the other", _UNITS["reno_deg_long"],
                      [{"versus": r, **_est(_friendly(rm, "compound") - _friendly(rm, r))} for r in rivals], fscope)]
    h10 = [fnd.check("H10a", "Reno flows keep at least 95% of their throughput beside AReno",
                     fnd.Directional("above", threshold=FRIENDLY_FLOOR), "Reno relative throughput (second formula) - 1",
                     _UNITS["reno_deg_long"], _est(_friendly(rm, "areno")),
                     [{"n_long": n, **_est(_vs_reno(rm, "reno_deg_long", "areno", loads=(n,), mix="mixed"))}
                      for n in LOADS], scope=fscope, reading="friendly = Reno keeps at least 95%"),
           _quantified("H10b", "Reno flows keep more throughput beside AReno than beside HighSpeed, Scalable, BIC "
                               "and H-TCP",
                       fnd.Every(fnd.Directional("above", negligible=NEGLIGIBLE_REL)),
                       "Reno relative throughput (second formula), with AReno - with the other", _UNITS["reno_deg_long"],
                       [{"versus": r, **_est(_friendly(rm, "areno") - _friendly(rm, r))} for r in LOSS_BASED], fscope,
                       reading="friendly = friendlier than the loss-based high-speed TCPs")]
    h11 = []
    for i, (reading, m) in enumerate(EFF_READINGS.items()):
        neg = _NEGLIGIBLE[m]
        h9.append(_quantified(f"H9{'bcd'[i]}",
                              f"Compound is less efficient ({reading}) than BIC, Scalable, HighSpeed and H-TCP",
                              fnd.Every(fnd.Directional("below", negligible=neg)),
                              f"{reading} gain over Reno, Compound - the other", _UNITS[m],
                              [{"versus": r, **_est(_vs_reno(rm, m, "compound") - _vs_reno(rm, m, r))} for r in rivals],
                              escope, reading=f"efficiency = {reading}"))
        h11.append(fnd.check(f"H11{'abc'[i]}", f"AReno is efficient: it raises the {reading} over Reno",
                             fnd.Directional("above", negligible=neg), f"{reading} gain over Reno", _UNITS[m],
                             _est(_vs_reno(rm, m, "areno")),
                             [{"n_long": n, **_est(_vs_reno(rm, m, "areno", loads=(n,)))} for n in LOADS],
                             scope=escope, reading=f"efficiency = {reading}"))
    h12 = [fnd.check("H12a", "AReno's throughput falls slower with RTT than Reno's",
                     fnd.Directional("above", negligible=NEGLIGIBLE_SLOPE), "slope vs RTT, AReno - Reno",
                     _UNITS["slope_rtt"], _est(_vs_reno(rm, "slope_rtt", "areno")),
                     [{"n_long": n, **_est(_vs_reno(rm, "slope_rtt", "areno", loads=(n,)))} for n in LOADS],
                     scope=f"long-lived flows, AReno alone vs Reno alone; {_loads_text(LOADS)}, pooled",
                     note="slope of ln(throughput) against ln(base RTT) over the run's long-lived flows")]
    return {"H9": h9, "H10": h10, "H11": h11, "H12": h12}


def _table(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    specs = {
        # column: [(metric reading name or None, metric, loads, mix, "marks" form base)]
        "T1": [(None, "rel_long", LOADS, "alone", fnd.Directional("above", negligible=NEGLIGIBLE_REL))],
        "T2": [("fairness = flatness vs RTT", "slope_rtt", HEAVY, "alone",
                fnd.Directional("above", negligible=NEGLIGIBLE_SLOPE)),
               ("fairness = Jain's index", "jain", HEAVY, "alone", fnd.Directional("above", negligible=NEGLIGIBLE_JAIN))],
        "T3": [(f"utilisation = {r}", m, LOADS, "alone", fnd.Directional("above", negligible=NEGLIGIBLE_UTIL))
               for r, m in UTIL_READINGS.items()],
        "T4": [(None, "reno_deg_long", LOADS, "mixed", fnd.Directional("above", threshold=FRIENDLY_FLOOR))],
    }
    what = {"rel_long": "relative throughput of long-lived flows - 1",
            "slope_rtt": "slope of ln(throughput) vs ln(RTT), the protocol - Reno",
            "jain": "Jain's index of long-lived flows' throughput, the protocol - Reno",
            "util_gain": "whole-run utilisation gain over Reno", "util_active_gain": "active utilisation gain over Reno",
            "reno_deg_long": "Reno relative throughput (second formula) - 1"}
    for fid, (column, marked) in zip(("T1", "T2", "T3", "T4"), TABLE.items()):
        blank = [p for p in SEED_PROTOCOLS if p not in marked]
        checks = []
        letters = iter("abcdefgh")
        for reading, m, loads, mix, base in specs[fid]:
            scope = (f"{'Reno flows of the mixed runs' if mix == 'mixed' else 'each protocol alone'} vs Reno alone; "
                     f"{_loads_text(loads)}" + (", pooled" if len(loads) > 1 else ""))
            gain = (lambda p, m=m, loads=loads, mix=mix: _vs_reno(rm, m, p, loads=loads, mix=mix))
            tag = f"; {reading}" if reading else ""
            checks.append(_quantified(
                f"{fid}{next(letters)}", f"{column}: every protocol marked X ({', '.join(map(_label, marked))}) has it",
                fnd.Every(base), what[m], _UNITS[m], _per(marked, "protocol", gain), scope,
                reading=f"X marks the property{tag}"))
            checks.append(_quantified(
                f"{fid}{next(letters)}", f"{column}: every protocol marked X beats every blank one "
                f"({', '.join(map(_label, blank))})",
                fnd.Every(fnd.Directional("above", negligible=_NEGLIGIBLE[m])),
                f"{what[m].split(',')[0].replace(' - 1', '')}, the X protocol - the blank one", _UNITS[m],
                _pairs(marked, blank, lambda x, y, gain=gain: gain(x) - gain(y)), scope,
                reading=f"X ranks above the blanks{tag}"))
        out[fid] = checks
    return out


def _s1_s2(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    scope = "10 long-lived flows, no random loss; with the seed's 100 short-lived flows vs without any"
    with_ = _series(rm, "spike_rate", "reno", loads=(10,))
    without = _series(rm, "spike_rate", "reno", loads=(10,), shorts=False)
    ratio = with_ / without
    s1 = [fnd.check("S1a", "RTT spikes on long-lived flows are at least twice as frequent with short-lived flows as "
                    "without", fnd.Directional("above", threshold=MANY_SPIKES),
                    "spike rate with short-lived flows / without", "ratio", _est(ratio), [],
                    scope=f"Reno alone, the first three long-lived flows' one-way delays; {scope}",
                    note="spike rule: tcplab.studies.highspeed.analysis.count_spikes",
                    spikes_per_minute_with_short_lived=fnd.clean(_est(with_)),
                    spikes_per_minute_without=fnd.clean(_est(without)))]

    def delta(p: str) -> pd.Series:
        return (_series(rm, "rel_long", p, loads=(10,)) - _series(rm, "rel_long", p, loads=(10,), shorts=False))

    loss_based = sum(delta(q) for q in LOSS_BASED) / len(LOSS_BASED)
    s2 = [_quantified("S2a", "short-lived flows lower the delay-based protocols' relative throughput",
                      fnd.Every(fnd.Contrast("below", negligible=NEGLIGIBLE_REL)),
                      "relative throughput with short-lived flows - without", _UNITS["rel_long"],
                      _per(DELAY_BASED, "protocol", delta),
                      f"long-lived flows, each protocol alone vs Reno alone; {scope}",
                      reading="worse with short-lived flows"),
          _quantified("S2b", "short-lived flows lower the delay-based protocols' relative throughput more than the "
                             "loss-based ones' (HighSpeed, Scalable, BIC, H-TCP)",
                      fnd.Every(fnd.Contrast("below", negligible=NEGLIGIBLE_REL)),
                      "change with short-lived flows, the protocol - the loss-based protocols' mean",
                      _UNITS["rel_long"], _per(DELAY_BASED, "protocol", lambda p: delta(p) - loss_based),
                      f"long-lived flows, each protocol alone vs Reno alone; {scope}",
                      reading="worse with short-lived flows than loss-based protocols")]
    return {"S1": s1, "S2": s2}


def _extensions(rm: Runs) -> dict[str, list[dict[str, Any]]]:
    scope = f"CUBIC vs Reno; {_loads_text(LOADS)}, pooled"
    x1 = [fnd.check("X1a", "CUBIC improves per-flow throughput (as T1a)",
                    fnd.Directional("above", negligible=NEGLIGIBLE_REL), "relative throughput of long-lived flows - 1",
                    _UNITS["rel_long"], _est(_vs_reno(rm, "rel_long", "cubic")), scope=scope),
          fnd.check("X1b", "CUBIC raises active utilisation (as T3c)",
                    fnd.Directional("above", negligible=NEGLIGIBLE_UTIL),
                    "active utilisation gain over Reno", _UNITS["util_active_gain"],
                    _est(_vs_reno(rm, "util_active_gain", "cubic")), scope=scope),
          fnd.check("X1c", "CUBIC is friendly to Reno (as T4a)", fnd.Directional("above", threshold=FRIENDLY_FLOOR),
                    "Reno relative throughput (second formula) - 1", _UNITS["reno_deg_long"],
                    _est(_friendly(rm, "cubic")), scope=scope)]
    hs = PROTOCOLS[1:]
    x2 = [_quantified("X2a", "with random loss, every high-speed TCP improves per-flow throughput over Reno",
                      fnd.Every(fnd.Directional("above", negligible=NEGLIGIBLE_REL)),
                      "relative throughput of long-lived flows - 1", _UNITS["rel_long"],
                      _per(hs, "protocol", lambda p: _vs_reno(rm, "rel_long", p, loads=(10,), loss=True)),
                      "each protocol alone vs Reno alone; 10 long-lived flows with random loss")]
    return {"X1": x1, "X2": x2}


#: Finding id -> the runs it needs (all must have run for it to be evaluated).
_NEEDS: dict[str, set[Need]] = {
    "H1": _need(SEED_PROTOCOLS), "H2": _need(SEED_PROTOCOLS),
    "H3": _need(("scalable",)), "H4": _need(("areno", "htcp")),
    "H5": _need(("scalable", "areno", "htcp"), loads=HEAVY), "H6": _need(("scalable", "areno", "htcp"), loads=HEAVY),
    "H7": _need(("areno", "htcp", "compound")), "H8": _need(("bic", "highspeed", "scalable")),
    "H9": _need(("compound", "bic", "scalable", "highspeed", "htcp")) | _need(
        ("compound", "bic", "scalable", "highspeed", "htcp"), mix="mixed"),
    "H10": _need(("areno",) + LOSS_BASED, mix="mixed"),
    "H11": _need(("areno",)), "H12": _need(("areno",)),
    "T1": _need(SEED_PROTOCOLS), "T2": _need(SEED_PROTOCOLS, loads=HEAVY), "T3": _need(SEED_PROTOCOLS),
    "T4": _need(SEED_PROTOCOLS, mix="mixed"),
    "S1": _need((), loads=(10,)) | _need((), loads=(10,), shorts=False),
    "S2": _need(DELAY_BASED + LOSS_BASED, loads=(10,)) | _need(DELAY_BASED + LOSS_BASED, loads=(10,), shorts=False),
    "X1": _need(("cubic",)) | _need(("cubic",), mix="mixed"),
    "X2": _need(PROTOCOLS[1:], loads=(10,), loss=True),
}


def _rtt_tag(rtt: str | None, reading: str | None) -> str | None:
    """A check's reading with the RTT reading it ran under.

    Example:
        >>> _rtt_tag("common_excess", None), _rtt_tag("equal_per_hop", "efficiency = whole run")
        ('RTT common_excess', 'RTT equal_per_hop; efficiency = whole run')
        >>> _rtt_tag(None, "x")
        'x'
    """
    if rtt is None:
        return reading
    return f"RTT {rtt}" + (f"; {reading}" if reading else "")


def _readings_within_rtt(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The finding's verdict per reading: a check without a reading of its own counts in
    every reading of its RTT reading (as :func:`tcplab.studies.findings.finding` does
    for a study with one RTT reading).

    Example:
        >>> cs = [{"reading": "RTT a", "verdict": "held"}, {"reading": "RTT a; x", "verdict": "contradicted"},
        ...       {"reading": "RTT b", "verdict": "held"}]
        >>> _readings_within_rtt(cs)["readings"]
        {'RTT a; x': 'contradicted', 'RTT b': 'held'}
    """
    own = [c for c in checks if not c.get("extension") and c.get("reading")]
    rtts = sorted({c["reading"].split("; ", 1)[0] for c in own})
    out: dict[str, str] = {}
    for r in rtts:
        mine = [c for c in own if c["reading"].split("; ", 1)[0] == r]
        subs = sorted({c["reading"] for c in mine if "; " in c["reading"]})
        for sub in subs or [r]:
            out[sub] = fnd.combine(c["verdict"] for c in mine if c["reading"] in (r, sub))
    if not out:
        return {}
    return {"readings": out, "reading_dependent": len(set(out.values())) > 1}


def evaluate_findings(rm: pd.DataFrame, params: Any) -> dict[str, Any]:
    """Checks seed 002's claims on the per-run metrics; returns the ``findings.json`` document.

    ``rm`` is :func:`tcplab.studies.highspeed.analysis.analyse_runs`'s ``run_metrics``.
    Every finding of :data:`FINDINGS` is present; one whose runs were not all part of
    this invocation is ``not run``.
    """
    # Every finding is evaluated under each RTT reading that was run (the run dimension
    # ``rtt``; setup.RTT_READINGS) and its checks name it (``reading="RTT <r>"``, or
    # ``"RTT <r>; <the check's own reading>"``), so the finding reports a verdict per
    # RTT reading (``rtt_readings``) and says whether it depends on it (``rtt_dependent``).
    readings = ([r for r in RTT_READINGS if (rm["rtt"] == r).any()] if len(rm) and "rtt" in rm else []) or [None]
    per_reading: dict[str | None, tuple[dict[str, list[dict[str, Any]]], Runs]] = {}
    for r in readings:
        sub = rm[rm["rtt"] == r] if r is not None else rm
        runs = Runs(sub.assign(**{f"{a}-{b}": sub[a] - sub[b] for a, b in _DIFFERENCES if a in sub and b in sub})
                    if len(sub) else sub)
        checks: dict[str, list[dict[str, Any]]] = {}
        if len(sub):
            for part in (_h1_h2, _h3_h4, _h5_h6, _h7_h8, _h9_h10, _table, _s1_s2, _extensions):
                checks.update(part(runs))
        per_reading[r] = (checks, runs)
    findings = []
    for fid in _ORDER:
        own: list[dict[str, Any]] = []
        by_rtt: dict[str, str] = {}
        missing_all: list[Need] = []
        for r, (checks, runs) in per_reading.items():
            missing = _missing(runs, _NEEDS[fid])
            if missing:
                missing_all += missing
                continue
            tagged = [{**c, "reading": _rtt_tag(r, c.get("reading"))} for c in checks.get(fid, [])]
            own += tagged
            if r is not None:
                by_rtt[r] = fnd.finding(fid, FINDINGS[fid], tagged, extension=fid in EXTENSIONS)["verdict"]
        f = fnd.finding(fid, FINDINGS[fid], own, extension=fid in EXTENSIONS,
                        not_run=_not_run_text(sorted(set(missing_all))) if missing_all else "not run")
        if by_rtt:
            f["rtt_readings"] = by_rtt
            f["rtt_dependent"] = len(set(by_rtt.values())) > 1
            f.update(_readings_within_rtt(own))
        findings.append(f)
    p = asdict(params) if is_dataclass(params) and not isinstance(params, type) else dict(params or {})
    doc = fnd.document(NAME, SEED_STUDY, p, int(p.get("reps", 0)), ["lot"], fnd.METHOD, findings)
    doc["thresholds"] = {"negligible_relative_throughput": NEGLIGIBLE_REL, "negligible_utilisation": NEGLIGIBLE_UTIL,
                         "negligible_slope": NEGLIGIBLE_SLOPE, "negligible_jain": NEGLIGIBLE_JAIN,
                         "friendly_floor": FRIENDLY_FLOOR, "many_spikes_ratio": MANY_SPIKES}
    doc["summary"] = summary_rows(rm)
    return doc


def summary_rows(rm: pd.DataFrame) -> list[dict[str, Any]]:
    """Per protocol, mix and case, means over replications: the numbers behind the figures.

    Example:
        >>> summary_rows(pd.DataFrame())
        []
    """
    rows: list[dict[str, Any]] = []
    if not len(rm):
        return rows
    cols = [c for c in ("rel_long", "rel_short", "reno_deg_long", "util", "util_gain", "util_active",
                        "util_active_gain", "slope_rtt", "slope_hops", "jain", "short_s", "short_reno_s",
                        "spike_rate") if c in rm]
    rm = rm if "rtt" in rm else rm.assign(rtt="equal_per_hop")
    for (rtt, sh, n, loss, p, m), part in rm.groupby(["rtt", "shorts", "n_long", "loss", "protocol", "mix"],
                                                     sort=False):
        rows.append({"protocol": p, "mix": m, "n_long": int(n), "loss": bool(loss), "shorts": bool(sh), "rtt": rtt,
                     "runs": int(len(part)), **{c: fnd.num(part[c].mean()) for c in cols}})
    return rows
