"""The claims of seed 000, each checked with a claim form fixed from the seed's words.

The seed is Järvinen, Nyrhinen, Ding and Kojo, "Effect of IW and Initial RTO
changes", IETF 79, 2010 (``docs/seeds/000_ae80ce17cd677c8e.txt``). Every result
sentence of it is one finding here (F1 ... F41, in the seed's order), and the claims
ledger beside this module (``ledger.toml``, format in :mod:`tcplab.studies.ledger`)
quotes each sentence and names the finding and checks that test it. The verdict rules
(held, contradicted, inconclusive, not testable here) are the shared ones of
:mod:`tcplab.studies.findings`.

How the seed's words became forms (each size is a constant below, with its reason):

- a plain direction ("IW10 improves performance") is :class:`Directional` with a
  ``negligible`` band (:data:`SAME_REL` for times, :data:`SAME_INDEX` for indices and
  shares, :data:`RARE` for counts per run), so that "no effect" contradicts it;
- "no changes", "no effect", "the same", "similar" are :class:`Equivalent` with the
  same bands ("similar" with :data:`SLIGHT_REL`); "small" and "slightly" add an
  :class:`Equivalent` bound of :data:`SLIGHT_REL` to the direction;
- "clearly", "significantly" (read as a size) are a ``threshold`` of :data:`CLEAR_REL`;
- "mostly" is a share above :data:`MOSTLY`; "tends to" is :class:`Share` of
  :data:`TENDS`; "regardless of IW" is :class:`Every` over the IWs; "in some of the
  cases" is :class:`Share` of one configuration; "only" is :class:`Only`;
- "more controversial when e2e RTT is larger" is a :class:`Contrast`.

Scopes are the sentence's: the IW and IRTO slides are read on the seed's FIFO buffers
(its set-up slide lists "Buffer (FIFO) sizes"; RED and REDok appear only with the
one-way-delay slides), so RED/REDok runs of those claims are extension checks (ids
ending in ``x``), shown and never counted. The IW slide compares IW10 with IW3 at the
standard initial RTO of 3 s (RFC 2988: those results predate the IRTO study, "Initially
presented IW10 results in the last ICCRG meeting"); so do the one-way-delay slides.
Where the seed can be read two ways, both readings run as checks with ``reading`` set.

Example:
    >>> _scope_text({"link": ["edge"], "buffer": ["fifo-50"], "n_flows": [1, 2], "irto_s": [3.0]})
    'EDGE; FIFO 50; 1+1, 2+2 flows; IRTO 3 s'
    >>> Directional("below", negligible=SAME_REL).decide({"value": -0.004, "ci": [-0.006, -0.002], "n": 100})
    'contradicted'
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from tcplab.studies import findings as fnd
from tcplab.studies.findings import Contrast, Directional, Equivalent, Every, Form, Only, Share
from tcplab.studies.iw_irto.analysis import SEED_OWD_MAXIMA, effective_rtt, irto_effect
from tcplab.studies.iw_irto.setup import CONFIG, LINKS, NAME, RUN, SEED_STUDY, StudyParams, buffer_by_id

__all__ = ["SAME_REL", "SLIGHT_REL", "CLEAR_REL", "SAME_INDEX", "RARE", "MOSTLY", "TENDS", "MAX_MARGIN_REL",
           "RTT_SPLIT_S", "FIFO", "AQM", "FINDING_IDS", "evaluate_findings", "evaluate_one", "self_congested"]

# ---- sizes, each stated before any run ------------------------------------------------

#: A change of a time (elapsed time, one-way delay) under 2% of its reference value is
#: no change: the negligible band of plain directions and the margin of "no changes",
#: "no effect", "the same". tcplab's choice: the seed judges by eye on CDF plots whose
#: time axes span tens of seconds (EDGE) or seconds (HSPA, LTE); 2% is about a line's
#: width there.
SAME_REL = 0.02
#: "Slightly", "small", "similar": within 10% of the reference value (tcplab's choice;
#: the seed gives no number).
SLIGHT_REL = 0.10
#: "Clearly", "significantly" read as a size: more than 10%, where "slight" ends, so the
#: two words never describe the same change.
CLEAR_REL = 0.10
#: A change of Jain's index or of a goodput share (both in [0, 1]) under 0.01 is none:
#: a hundredth of the range (tcplab's choice).
SAME_INDEX = 0.01
#: A rate of events per run (RTOs, drops) or a share of runs under 0.03 is none: with
#: the seed's 100 replications a rate of 3 per 100 runs can go unseen (rule of three),
#: so "no RTOs" cannot mean less.
RARE = 0.03
#: "Mostly": more than half (0.51, so that exactly half of 16 configurations does not count).
MOSTLY = 0.5
MOSTLY_SHARE = 0.51
#: "Tends to": in at least half of the configurations.
TENDS = 0.5
#: The seed's maxima of the one-way delay: ours (the maximum over the replications)
#: within 10% of the seed's value (tcplab's choice: a maximum of 100 replications moves
#: by several percent between sets of replications).
MAX_MARGIN_REL = 0.10
#: The seed's split of its conclusions: an effective e2e RTT of 1 s.
RTT_SPLIT_S = 1.0

#: The seed's buffers of its set-up slide ("Buffer (FIFO) sizes"), and the AQMs of its
#: one-way-delay slides.
FIFO = ["fifo-bdp", "fifo-2bdp", "fifo-50"]
AQM = ["red", "redok"]
ALL_LINKS = ["edge", "hspa", "lte"]
ALL_N = [1, 2, 6, 18]
#: The seed's one-way-delay figures: one flow per burst on EDGE and six on HSPA (the
#: seed names no link; its REDok maxima place them, see ``analysis.SEED_OWD_MAXIMA``).
OWD_CASES = [("edge", 1), ("hspa", 6)]

#: Readings of the IW slide's "small" and "larger" numbers of flows.
R_SPLIT = "small = 1+1 and 2+2, larger = 6+6 and 18+18"
R_EXTREMES = "small = 1+1, larger = 18+18"
#: Readings of the first EDGE slide's flow counts.
R_FEW = "the slide's case is 1+1 and 2+2 (larger counts are its 'same trend' line)"
R_ALL_N = "every flow count"


@dataclass(frozen=True)
class Compare:
    """Two variants compared run by run: ``test`` vs ``ref`` of column ``factor``."""

    factor: str
    test: Any
    ref: Any
    label: str


IW = Compare("iw", 10, 3, "IW10 vs IW3")
IRTO = Compare("irto_s", 1.0, 3.0, "IRTO1 vs IRTO3")


# ---- helpers -------------------------------------------------------------------------


def _scope_text(where: dict[str, Sequence[Any]]) -> str:
    """Where in words."""
    parts = []
    if "link" in where:
        parts.append("/".join(LINKS[l].label for l in where["link"]))
    if "buffer" in where:
        link = LINKS["edge"]
        parts.append(", ".join(buffer_by_id(link, b).label for b in where["buffer"]))
    if "n_flows" in where:
        parts.append(", ".join(f"{n}+{n}" for n in where["n_flows"]) + " flows")
    if "iw" in where:
        parts.append(", ".join(f"IW{i}" for i in where["iw"]))
    if "irto_s" in where:
        parts.append(", ".join(f"IRTO {r:g} s" for r in where["irto_s"]))
    if "case" in where:
        parts.append(f"{len(where['case'])} link x flow-count cases")
    return "; ".join(parts)


def _sub(df: pd.DataFrame, where: dict[str, Sequence[Any]]) -> pd.DataFrame:
    for col, values in where.items():
        df = df[df[col].isin(list(values))]
    return df


def _runnable(rm: pd.DataFrame, where: dict[str, Sequence[Any]]) -> bool:
    """Every link of the scope was run (a check never narrows its scope to what ran)."""
    ran = set(rm["link"])
    return all(l in ran for l in where.get("link", ALL_LINKS))


def _rep_estimates(pairs: pd.DataFrame, by: Sequence[str], value: str = "diff") -> list[dict[str, Any]]:
    """Per group of ``by``: the mean over the group's configurations per replication, estimated."""
    out = []
    for key, part in pairs.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        cfg = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, key)}
        out.append({**cfg, **fnd.estimate(part.groupby("rep")[value].mean())})
    return out


def _paired(rm: pd.DataFrame, metric: str, cmp: Compare, where: dict[str, Sequence[Any]], relative: bool,
            by: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """Paired differences of ``metric`` (:func:`tcplab.studies.findings.paired`), per-config rows grouped by ``by``."""
    cols = list(dict.fromkeys([*RUN, metric, *where]))  # only what the pivot needs: much faster
    pairs, est, per = fnd.paired(rm[cols], metric, cmp.factor, cmp.test, cmp.ref, where, relative, unit=RUN)
    if by is not None and len(pairs):
        per = _rep_estimates(pairs, by)
    return pairs, est, per


def _level(rm: pd.DataFrame, metric: str, where: dict[str, Sequence[Any]],
           by: Sequence[str] = (*CONFIG, "iw", "irto_s")) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A per-run metric itself (no pairing): pooled per replication over the configurations, and per config."""
    sub = _sub(rm, where).dropna(subset=[metric])
    if not len(sub):
        return dict(fnd.estimate([])), []
    pooled = fnd.estimate(sub.groupby("rep")[metric].mean())
    per = _rep_estimates(sub.rename(columns={metric: "_v"}), list(by), "_v")
    return pooled, per


def _ratio(rm: pd.DataFrame, num: str, den: str, where: dict[str, Sequence[Any]],
           by: Sequence[str] = (*CONFIG, "iw", "irto_s")) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``sum(num) / sum(den)`` over the scope, bootstrapped over replications; and per config."""
    sub = _sub(rm, where)
    if not len(sub):
        return dict(fnd.estimate([])), []

    def one(part: pd.DataFrame) -> dict[str, Any]:
        g = part.groupby("rep")[[num, den]].sum()
        return _boot(g[num].to_numpy(float), g[den].to_numpy(float))

    per = []
    for key, part in sub.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        per.append({**{k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, key)}, **one(part)})
    return one(sub), per


def _boot(num: np.ndarray, den: np.ndarray) -> dict[str, Any]:
    r = fnd.bootstrap_ratio(num, den)
    if not r.get("exact"):
        r["interval"] = "bootstrap percentile over replications (2000 resamples, seed 0)"
    return r


def _diff_ratio(rm: pd.DataFrame, num: str, den: str, cmp: Compare, where: dict[str, Sequence[Any]]
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Share of an increase: ``sum(diff of num) / sum(diff of den)`` over the scope, bootstrapped."""
    a, _, _ = _paired(rm, num, cmp, where, relative=False)
    b, _, _ = _paired(rm, den, cmp, where, relative=False)
    if not len(a) or not len(b):
        return dict(fnd.estimate([])), []
    n = a.groupby("rep")["diff"].sum()
    d = b.groupby("rep")["diff"].sum().reindex(n.index)
    return _boot(n.to_numpy(float), d.to_numpy(float)), []


def _max_boot(values: dict[int, np.ndarray], fn: Callable[[dict[int, np.ndarray]], float], n_boot: int = 2000,
              seed: int = 0) -> dict[str, Any]:
    """A statistic of per-replication maxima (``fn``), with a bootstrap percentile interval over replications.

    ``values`` maps a variant to its per-replication maxima, aligned by replication, so
    a resample draws the same replications for every variant.
    """
    n = min(len(v) for v in values.values())
    value = fn(values)
    if n < 2:
        return {"value": value, "ci": [math.nan, math.nan], "n": n, "exact": False}
    if all(float(np.ptp(v)) == 0.0 for v in values.values()):
        return fnd.exact_estimate(value, n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boots = np.array([fn({k: v[i] for k, v in values.items()}) for i in idx])
    lo, hi = np.quantile(boots, [(1 - fnd.LEVEL) / 2, 1 - (1 - fnd.LEVEL) / 2])
    return {"value": value, "ci": [float(lo), float(hi)], "n": n, "exact": False,
            "interval": f"bootstrap percentile over replications ({n_boot} resamples, seed {seed})"}


def _per_rep_max(rm: pd.DataFrame, where: dict[str, Sequence[Any]], metric: str = "owd_max_s") -> np.ndarray:
    sub = _sub(rm, where).dropna(subset=[metric])
    return sub.groupby("rep")[metric].max().sort_index().to_numpy(float)


class _Builder:
    """Collects the checks of one finding.

    A check whose links were not all run is left out (its finding is ``not run`` when
    no check is left). A check whose scope is empty although its links ran (no
    configuration meets a condition the sentence names, such as self-congestion) is
    kept with the verdict ``not testable here``.
    """

    def __init__(self, rm: pd.DataFrame) -> None:
        self.rm = rm
        self.checks: list[dict[str, Any]] = []

    def _empty(self, cid: str, claim: str, form: Form, statistic: str, unit: str, where: dict[str, Sequence[Any]],
               reading: str | None, extension: bool) -> None:
        c = fnd.check(cid, claim, form, statistic, unit, dict(fnd.estimate([])), [], scope=_scope_text(where),
                      reading=reading, extension=extension,
                      note="no configuration of this run meets the scope's condition")
        c["verdict"], c["reps_needed"] = fnd.NOT_TESTABLE, None
        self.checks.append(c)

    def paired(self, cid: str, claim: str, form: Form, metric: str, what: str, cmp: Compare,
               where: dict[str, Sequence[Any]], *, relative: bool, unit: str = "", by: Sequence[str] | None = None,
               reading: str | None = None, extension: bool = False, note: str = "") -> None:
        if not _runnable(self.rm, where):
            return
        kind = "relative change" if relative else "difference"
        statistic = f"{kind} of {what}, {cmp.label}"
        unit = unit or ("fraction" if relative else "")
        pairs, est, per = _paired(self.rm, metric, cmp, where, relative, by)
        if not len(pairs):
            self._empty(cid, claim, form, statistic, unit, where, reading, extension)
            return
        self.checks.append(fnd.check(cid, claim, form, statistic, unit, est, per, scope=_scope_text(where),
                                     reading=reading, extension=extension, note=note, pairs=est.get("pairs"),
                                     configs=est.get("configs")))

    def level(self, cid: str, claim: str, form: Form, metric: str, what: str, unit: str,
              where: dict[str, Sequence[Any]], *, by: Sequence[str] = (*CONFIG, "iw", "irto_s"),
              reading: str | None = None, extension: bool = False, note: str = "") -> None:
        if not _runnable(self.rm, where):
            return
        est, per = _level(self.rm, metric, where, by)
        if not per:
            self._empty(cid, claim, form, what, unit, where, reading, extension)
            return
        self.checks.append(fnd.check(cid, claim, form, what, unit, est, per, scope=_scope_text(where),
                                     reading=reading, extension=extension, note=note))

    def ratio(self, cid: str, claim: str, form: Form, num: str, den: str, what: str,
              where: dict[str, Sequence[Any]], *, increase: Compare | None = None, reading: str | None = None,
              extension: bool = False, note: str = "") -> None:
        if not _runnable(self.rm, where):
            return
        est, per = (_diff_ratio(self.rm, num, den, increase, where) if increase else _ratio(self.rm, num, den, where))
        if not est.get("n"):
            self._empty(cid, claim, form, what, "fraction", where, reading, extension)
            return
        self.checks.append(fnd.check(cid, claim, form, what, "fraction", est, per, scope=_scope_text(where),
                                     reading=reading, extension=extension, note=note))

    def add(self, check: dict[str, Any]) -> None:
        self.checks.append(check)

    def finding(self, fid: str, claim: str) -> dict[str, Any]:
        return fnd.finding(fid, claim, self.checks)


# ---- the per-configuration conditions some sentences name ------------------------------


def self_congested(rm: pd.DataFrame) -> pd.DataFrame:
    """Per (link, buffer, N) at IRTO 3 s: does IW10 self-congest, i.e. add drops at the bottleneck?

    ``self_congested`` is the verdict of "IW10 drops more than IW3" on the
    configuration's own interval (:class:`Directional` above 0 with the :data:`RARE`
    band): ``held`` (IW10 self-congests), ``contradicted`` (it adds no drops: the
    seed's "low enough load") or ``inconclusive`` (neither; left out of both).
    """
    form = Directional("above", negligible=RARE)
    _, _, per = _paired(rm, "drops_total", IW, {"irto_s": [3.0]}, relative=False, by=CONFIG)
    return pd.DataFrame([{"link": c["link"], "buffer": c["buffer"], "n_flows": c["n_flows"],
                          "self_congested": form.decide(c)} for c in per], columns=CONFIG + ["self_congested"])


def _with_conditions(rm: pd.DataFrame) -> pd.DataFrame:
    """``rm`` with the columns the conditional sentences select on: ``case``, ``self_congested``,
    ``rtt_class`` (effective e2e RTT below or above 1 s) and ``irto_changes_runs``."""
    out = rm.copy()
    for c in ("link", "buffer", "digest"):  # plain Python strings group and pivot faster than Arrow's
        if c in out:
            out[c] = out[c].astype(object)
    out["case"] = out["link"].astype(str) + ":" + out["n_flows"].astype(str)
    if "drops_total" in out:
        out = out.merge(self_congested(out), on=CONFIG, how="left")
    if "owd_mean_s" in out:
        rtt = effective_rtt(out)
        rtt["rtt_class"] = np.where(rtt["eff_rtt_s"] < RTT_SPLIT_S, "below 1 s", "above 1 s")
        out = out.merge(rtt[CONFIG + ["iw", "rtt_class", "eff_rtt_s"]], on=CONFIG + ["iw"], how="left")
    if "digest" in out:
        out = out.merge(irto_effect(out), on=CONFIG + ["iw"], how="left")
    return out


# ---- the findings -----------------------------------------------------------------------

#: Every finding's id, in the seed's order (each is in ``findings.json``, evaluated or not run).
FINDING_IDS = [f"F{i}" for i in range(1, 42)]


def evaluate_findings(rm: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """Checks the seed's 41 result sentences on the per-run metrics; returns the ``findings.json`` document.

    Every check compares two variants run by run within a replication (the same start
    times: common random numbers), unless it reads a level (a count per run, a share);
    per replication it averages over the configurations in scope and takes a 95%
    Student-t interval over the replications (:mod:`tcplab.studies.findings`). A
    check whose links were not all run is left out, and a finding with no check left
    is ``not run``.
    """
    rm = _with_conditions(rm)
    out: list[dict[str, Any]] = []
    for build in _FINDINGS:
        out.append(build(rm))
    assert [f["id"] for f in out] == FINDING_IDS
    return fnd.document(NAME, SEED_STUDY, asdict(params), params.reps, params.links, fnd.METHOD, out)


def evaluate_one(rm: pd.DataFrame, fid: str) -> dict[str, Any]:
    """One finding alone (as :func:`evaluate_findings` computes it), for tests and exploration.

    Example:
        >>> evaluate_one(pd.DataFrame({"link": ["lte"], "buffer": ["red"], "n_flows": [1], "iw": [3], "irto_s": [3.0],
        ...                            "rep": [0]}), "F1")["verdict"]
        'not run'
    """
    return _FINDINGS[FINDING_IDS.index(fid)](_with_conditions(rm))


_FINDINGS: list[Callable[[pd.DataFrame], dict[str, Any]]] = []


def _register(fn: Callable[[pd.DataFrame], dict[str, Any]]) -> Callable[[pd.DataFrame], dict[str, Any]]:
    _FINDINGS.append(fn)
    return fn


def _iw_scope(buffers: Sequence[str], n: Sequence[int]) -> dict[str, Sequence[Any]]:
    return {"link": ALL_LINKS, "buffer": list(buffers), "n_flows": list(n), "irto_s": [3.0]}


ELAPSED = "the mean flow elapsed time of a run"

# IW slide ------------------------------------------------------------------------------


@_register
def _f1(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Directional("below", negligible=SAME_REL)
    for cid, reading, n in (("F1a", R_SPLIT, [1, 2]), ("F1b", R_EXTREMES, [1])):
        b.paired(cid, "IW10 lowers the mean elapsed time with few flows", form, "elapsed_mean_s", ELAPSED, IW,
                 _iw_scope(FIFO, n), relative=True, reading=reading)
    b.paired("F1x", "the same on RED and REDok (not the seed's IW runs)", form, "elapsed_mean_s", ELAPSED, IW,
             _iw_scope(AQM, [1, 2]), relative=True, extension=True)
    return b.finding("F1", "With small number of TCP flows, IW10 improves performance")


@_register
def _f2(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Share(Directional("above", negligible=SAME_REL), TENDS)
    for cid, reading, n in (("F2a", R_SPLIT, [6, 18]), ("F2b", R_EXTREMES, [18])):
        b.paired(cid, "IW10 raises the mean elapsed time with many flows, in at least half of the configurations",
                 form, "elapsed_mean_s", ELAPSED, IW, _iw_scope(FIFO, n), relative=True, reading=reading,
                 by=CONFIG)
    b.paired("F2x", "the same on RED and REDok", form, "elapsed_mean_s", ELAPSED, IW, _iw_scope(AQM, [6, 18]),
             relative=True, by=CONFIG, extension=True)
    return b.finding("F2", "With larger number of flows, IW10 tends to decrease performance")


@_register
def _f3(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Directional("above", threshold=CLEAR_REL))
    for cid, ref, reading in (("F3a", 6, "compared with 6+6 flows"), ("F3b", 1, "compared with 1+1 flows")):
        cmp = Compare("n_flows", 18, ref, f"18+18 vs {ref}+{ref} flows")
        b.paired(cid, "with 18+18 flows each burst takes more than 10% longer to move its 180 kB, for IW3 and for IW10",
                 form, "burst_time_s", "the burst completion time (first SYN to last completion, mean of the two "
                 "bursts)", cmp, {"link": ALL_LINKS, "buffer": FIFO, "irto_s": [3.0]}, relative=True, by=["iw"],
                 reading=reading)
    return b.finding("F3", "Regardless of IW, too many flows clearly results in suboptimal performance")


@_register
def _f4(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = _iw_scope(FIFO, ALL_N)
    b.paired("F4a", "IW10 raises the later burst's share of the goodput", Directional("above", negligible=SAME_INDEX),
             "later_share", "the later burst's goodput share (its mean per-flow goodput over both bursts')", IW, where,
             relative=False, unit="share", reading="the later burst gains")
    b.paired("F4b", "IW10 brings the two bursts' goodputs closer to equal", Directional("below", negligible=SAME_INDEX),
             "unfairness", "|later burst's goodput share - 0.5|", IW, where, relative=False, unit="share",
             reading="the bursts move closer to equal shares")
    b.paired("F4x", "the later burst's share on RED and REDok", Directional("above", negligible=SAME_INDEX),
             "later_share", "the later burst's goodput share", IW, _iw_scope(AQM, ALL_N), relative=False,
             unit="share", extension=True)
    return b.finding("F4", "Fairness for later starting traffic improves with IW10")


@_register
def _f5(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Directional("below", negligible=SAME_INDEX)
    for cid, burst in (("F5a", 1), ("F5b", 2)):
        b.paired(cid, f"IW10 lowers Jain's index within burst {burst}", form, f"jain_b{burst}",
                 f"Jain's index of per-flow goodput within burst {burst}", IW, _iw_scope(FIFO, [2, 6, 18]),
                 relative=False, unit="index")
    return b.finding("F5", "Fairness within both bursts worse with IW10")


# LTE IRTO slide --------------------------------------------------------------------------

LTE_FIFO = {"link": ["lte"], "buffer": ["fifo-bdp", "fifo-2bdp"]}


@_register
def _f6(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Equivalent(RARE))
    b.level("F6a", "no spurious RTO (data or SYN) on LTE, in every configuration and variant", form, "rto_spurious",
            "spurious RTOs per run", "RTOs/run", LTE_FIFO)
    b.level("F6x", "the same on LTE's RED and REDok", form, "rto_spurious", "spurious RTOs per run", "RTOs/run",
            {"link": ["lte"], "buffer": AQM}, extension=True)
    return b.finding("F6", "No spurious RTOs (LTE)")


@_register
def _f7(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    base = Directional("above", negligible=RARE)
    b.level("F7a", "RTOs occur with IW10 at 6+6 and 18+18 on LTE", Every(base), "rto_total", "RTOs per run", "RTOs/run",
            {**LTE_FIFO, "iw": [10], "n_flows": [6, 18]}, reading="RTOs occur there")
    b.level("F7b", "RTOs occur on LTE only with IW10 at 6+6 and 18+18", Only(base, {"iw": [10], "n_flows": [6, 18]}),
            "rto_total", "RTOs per run", "RTOs/run", LTE_FIFO, reading="RTOs occur only there")
    return b.finding("F7", "RTOs with IW10 when # of flows is 6+6 or 18+18 (LTE)")


@_register
def _f8(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    b.level("F8a", "the flow that completes last has no SYN timeout and no RTO of its first window (LTE, IW10, "
            "6+6 and 18+18)", Every(Equivalent(RARE)), "last_start_rto",
            "share of runs whose last-completing flow had a SYN timeout or an RTO of its first window", "share of runs",
            {**LTE_FIFO, "iw": [10], "n_flows": [6, 18]})
    return b.finding("F8", "But not in the beginning for the flow that completes last (not for the SYN nor the first "
                           "packet) (LTE)")


@_register
def _f9(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Equivalent(SAME_REL))
    b.paired("F9a", "IRTO1 leaves the mean elapsed time unchanged on LTE, in every configuration", form,
             "elapsed_mean_s", ELAPSED, IRTO, LTE_FIFO, relative=True)
    b.paired("F9b", "IRTO1 leaves the longest flow's elapsed time unchanged on LTE, in every configuration", form,
             "elapsed_max_s", "the longest flow's elapsed time", IRTO, LTE_FIFO, relative=True)
    b.paired("F9x", "the same on LTE's RED and REDok", form, "elapsed_mean_s", ELAPSED, IRTO,
             {"link": ["lte"], "buffer": AQM}, relative=True, extension=True)
    return b.finding("F9", "No changes: IRTO has no effect (LTE)")


# HSPA IRTO slide -------------------------------------------------------------------------

HSPA_FIFO = {"link": ["hspa"], "buffer": ["fifo-bdp", "fifo-2bdp"]}
R_OVER18 = "overloaded = 18+18"
R_OVER6 = "overloaded = 6+6 and 18+18"


@_register
def _f10(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    what = "the later burst's longest elapsed time"
    for (c1, c2), reading, n in ((("F10a", "F10b"), R_OVER18, [18]), (("F10c", "F10d"), R_OVER6, [6, 18])):
        where = {**HSPA_FIFO, "n_flows": n}
        b.paired(c1, "IRTO1 shortens the later burst's longest elapsed time", Directional("below", negligible=SAME_REL),
                 "elapsed_max_b2_s", what, IRTO, where, relative=True, reading=reading)
        b.paired(c2, "... by a small amount (within 10%)", Equivalent(SLIGHT_REL), "elapsed_max_b2_s", what, IRTO,
                 where, relative=True, reading=reading)
    return b.finding("F10", "When overloaded, small improvement for the longest cases among later starting traffic "
                            "(HSPA)")


@_register
def _f11(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    for cid, reading, n in (("F11a", R_OVER18, [18]), ("F11b", R_OVER6, [6, 18])):
        b.paired(cid, "IRTO1 lengthens the first burst's shortest elapsed time", Directional("above", negligible=SAME_REL),
                 "elapsed_min_b1_s", "the first burst's shortest elapsed time", IRTO, {**HSPA_FIFO, "n_flows": n},
                 relative=True, reading=reading)
    return b.finding("F11", "Opposite effect for the first starting burst (the shortest cases delayed) (HSPA, "
                            "overloaded)")


@_register
def _f12(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Equivalent(SAME_REL))
    where = {**HSPA_FIFO, "n_flows": [1, 2]}
    b.paired("F12a", "IRTO1 leaves the mean elapsed time unchanged, in every configuration", form, "elapsed_mean_s",
             ELAPSED, IRTO, where, relative=True)
    b.paired("F12b", "IRTO1 leaves the longest flow's elapsed time unchanged, in every configuration", form,
             "elapsed_max_s", "the longest flow's elapsed time", IRTO, where, relative=True)
    return b.finding("F12", "No changes due to IRTO1 with 1+1 or 2+2 flows (HSPA)")


# EDGE IRTO slides ------------------------------------------------------------------------

EDGE_LARGE = {"link": ["edge"], "buffer": ["fifo-50"]}
#: REDok's buffer on EDGE is also 50 packets, but the seed's large-buffer runs are FIFO
#: ("Large buffers with RED configuration were not tested"): REDok is an extension.
EDGE_REDOK = {"link": ["edge"], "buffer": ["redok"]}
EDGE_SMALL = {"link": ["edge"], "buffer": ["fifo-bdp", "fifo-2bdp"]}
EDGE_PACKET_S = LINKS["edge"].packet_time_s
HSPA_PACKET_S = LINKS["hspa"].packet_time_s


@_register
def _f13(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Directional("above", negligible=RARE)
    for cid, reading, n in (("F13a", R_FEW, [1, 2]), ("F13b", R_ALL_N, ALL_N)):
        b.paired(cid, "IRTO1 raises the number of RTOs (data + SYN) on EDGE's 50-packet FIFO", form, "rto_total",
                 "RTOs per run", IRTO, {**EDGE_LARGE, "n_flows": n}, relative=False, unit="RTOs/run", reading=reading)
    b.paired("F13x", "the same on EDGE's REDok (also 50 packets; not one of the seed's large-buffer runs)", form,
             "rto_total", "RTOs per run", IRTO, {**EDGE_REDOK, "n_flows": ALL_N}, relative=False, unit="RTOs/run",
             extension=True)
    return b.finding("F13", "With large buffer, number of RTOs increase (EDGE)")


@_register
def _f14(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Directional("above", threshold=MOSTLY)
    for n, tag, rn in (([1, 2], ("F14a", "F14b"), R_FEW), (ALL_N, ("F14c", "F14d"), R_ALL_N)):
        where = {**EDGE_LARGE, "n_flows": n}
        b.ratio(tag[0], "more than half of the RTOs with IRTO1 are spurious", form, "rto_spurious", "rto_total",
                "spurious RTOs / RTOs, IRTO1", {**where, "irto_s": [1.0]}, reading=f"{rn}; of the RTOs with IRTO1")
        b.ratio(tag[1], "more than half of the RTOs IRTO1 adds are spurious", form, "rto_spurious", "rto_total",
                "added spurious RTOs / added RTOs, IRTO1 - IRTO3", where, increase=IRTO,
                reading=f"{rn}; of the RTOs IRTO1 adds")
    return b.finding("F14", "Mostly spurious RTOs (EDGE, large buffer)")


@_register
def _f15(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Directional("above", negligible=SAME_REL)
    for n, tag, rn in (([1, 2], ("F15a", "F15b"), R_FEW), (ALL_N, ("F15c", "F15d"), R_ALL_N)):
        where = {**EDGE_LARGE, "n_flows": n}
        b.paired(tag[0], "IRTO1 lengthens the longest flow's elapsed time", form, "elapsed_max_s",
                 "the longest flow's elapsed time", IRTO, where, relative=True, reading=f"{rn}; longest elapsed time")
        b.paired(tag[1], "IRTO1 delays the last completion of the run", form, "last_done_s",
                 "the time of the run's last completion", IRTO, where, relative=True,
                 reading=f"{rn}; last completion")
    b.paired("F15x", "the longest flow on EDGE's REDok", form, "elapsed_max_s", "the longest flow's elapsed time", IRTO,
             {**EDGE_REDOK, "n_flows": ALL_N}, relative=True, extension=True)
    return b.finding("F15", "Completion of the longest flow is delayed (EDGE, large buffer)")


@_register
def _f16(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE_LARGE, "n_flows": [6, 18]}
    b.paired("F16a", "IRTO1 raises the number of RTOs at 6+6 and 18+18", Directional("above", negligible=RARE),
             "rto_total", "RTOs per run", IRTO, where, relative=False, unit="RTOs/run")
    b.ratio("F16b", "more than half of the RTOs with IRTO1 are spurious at 6+6 and 18+18",
            Directional("above", threshold=MOSTLY), "rto_spurious", "rto_total", "spurious RTOs / RTOs, IRTO1",
            {**where, "irto_s": [1.0]})
    b.paired("F16c", "IRTO1 lengthens the longest flow's elapsed time at 6+6 and 18+18",
             Directional("above", negligible=SAME_REL), "elapsed_max_s", "the longest flow's elapsed time", IRTO,
             where, relative=True)
    return b.finding("F16", "The same trend with larger number of flows (EDGE, large buffer)")


@_register
def _f17(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    b.level("F17a", "with IW10 the first burst's mean elapsed time is shorter than the later burst's",
            Directional("below", negligible=SAME_REL), "b1_vs_b2",
            "first burst's mean elapsed time / later burst's - 1, IW10", "fraction",
            {**EDGE_LARGE, "iw": [10]})
    b.paired("F17b", "IW10 lowers the later burst's goodput share (the first burst takes the advantage)",
             Directional("below", negligible=SAME_INDEX), "later_share", "the later burst's goodput share", IW,
             EDGE_LARGE, relative=False, unit="share")
    return b.finding("F17", "When IW10 in use, the first starting burst is able to take advantage and completes "
                            "unfairly early (EDGE, large buffer)")


@_register
def _f18(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    b.paired("F18a", "IRTO1 leaves the mean elapsed time unchanged in more than half of the configurations",
             Share(Equivalent(SAME_REL), MOSTLY_SHARE), "elapsed_mean_s", ELAPSED, IRTO, EDGE_SMALL, relative=True)
    return b.finding("F18", "Mostly the same regardless of IRTO (EDGE, BDP and 2·BDP FIFO)")


@_register
def _f19(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE_SMALL, "iw": [10]}
    b.paired("F19a", "with IW10, IRTO1 raises the later burst's goodput share", Directional("above", negligible=SAME_INDEX),
             "later_share", "the later burst's goodput share", IRTO, where, relative=False, unit="share",
             reading="the later burst gains")
    b.paired("F19b", "with IW10, IRTO1 brings the bursts' goodputs closer to equal",
             Directional("below", negligible=SAME_INDEX), "unfairness", "|later burst's goodput share - 0.5|", IRTO,
             where, relative=False, unit="share", reading="the bursts move closer to equal shares")
    return b.finding("F19", "IW10+IRTO1 becomes more fair (EDGE, BDP and 2·BDP FIFO)")


@_register
def _f20(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE_SMALL, "iw": [10]}
    b.paired("F20a", "with IW10, IRTO1 brings the later burst's first RTO sooner",
             Directional("below", negligible=EDGE_PACKET_S), "b2_first_rto_s",
             "the time from the later burst's first SYN to its first RTO (censored at its completion)", IRTO, where,
             relative=False, unit="s", note=f"negligible band: one EDGE packet time ({EDGE_PACKET_S:g} s)")
    b.paired("F20b", "... and that RTO is spurious: IRTO1 adds spurious RTOs to the later burst",
             Directional("above", negligible=RARE), "rto_spurious_b2", "the later burst's spurious RTOs per run", IRTO,
             where, relative=False, unit="RTOs/run")
    return b.finding("F20", "RTO occurred sooner for the later starting burst (a spurious one) (EDGE, IW10+IRTO1)")


# RED table slide -------------------------------------------------------------------------


@_register
def _f21(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    b.level("F21a", "REDok drops packets by its average (early or forced) on every link",
            Every(Directional("above", negligible=RARE)), "drops_red", "REDok's early + forced drops per run",
            "drops/run", {"link": ALL_LINKS, "buffer": ["redok"], "irto_s": [3.0]}, by=["link"])
    return b.finding("F21", "REDok: aggressive enough to respond to slow start")


# One-way delay slides ---------------------------------------------------------------------

OWD = "the mean one-way delay of a run's data packets"
OWD_MAX = "the maximum one-way delay of a run's data packets"
EDGE1 = {"link": ["edge"], "n_flows": [1], "irto_s": [3.0]}
HSPA6 = {"link": ["hspa"], "n_flows": [6], "irto_s": [3.0]}


@_register
def _f22(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE1, "buffer": ["fifo-2bdp", "red"]}
    b.paired("F22a", "IW10 raises the one-way delay of a single flow", Directional("above", negligible=SAME_REL),
             "owd_mean_s", OWD, IW, where, relative=True)
    b.paired("F22b", "... slightly (within 10%)", Equivalent(SLIGHT_REL), "owd_mean_s", OWD, IW, where, relative=True)
    return b.finding("F22", "IW10 slightly more aggressive (single flow, FIFO and RED)")


@_register
def _f23(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    cmp = Compare("buffer", "red", "fifo-2bdp", "RED vs FIFO 2·BDP")
    b.paired("F23a", "RED's one-way delay is within 10% of the FIFO's of the same size, for IW3 and IW10",
             Every(Equivalent(SLIGHT_REL)), "owd_mean_s", OWD, cmp, {**EDGE1, "buffer": ["red", "fifo-2bdp"]},
             relative=True, by=["iw"])
    b.ratio("F23b", "RED reacts too slowly: most of its drops are buffer overflows, as a FIFO's",
            Directional("above", threshold=MOSTLY), "drops_overflow", "drops_total", "overflow drops / drops, RED",
            {**EDGE1, "buffer": ["red"]})
    return b.finding("F23", "RED similar to FIFO behavior (too slow to react) (single flow)")


@_register
def _f24(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE1, "buffer": ["fifo-bdp"]}
    b.paired("F24a", "with a BDP FIFO, IW10 lengthens the single flow's elapsed time",
             Directional("above", negligible=SAME_REL), "elapsed_mean_s", ELAPSED, IW, where, relative=True)
    b.paired("F24b", "... because IW10 drops more of its own packets (self-congestion)",
             Directional("above", negligible=RARE), "drops_total", "bottleneck drops per run", IW, where,
             relative=False, unit="drops/run")
    return b.finding("F24", "With BDP IW10 hurts itself due to self-congestion (single flow)")


@_register
def _f25(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE1, "buffer": ["fifo-bdp"]}
    b.paired("F25a", "with a BDP FIFO, IW10 lowers the one-way delay", Directional("below", negligible=SAME_REL),
             "owd_mean_s", OWD, IW, where, relative=True)
    b.paired("F25b", "... slightly (within 10%)", Equivalent(SLIGHT_REL), "owd_mean_s", OWD, IW, where, relative=True)
    b.paired("F25c", "... except at the highest end: IW10's maximum delay is not lower (not below -2%)",
             Directional("above", threshold=-SAME_REL), "owd_max_s", OWD_MAX, IW, where, relative=True)
    return b.finding("F25", "Slightly smaller delays except for the highest end (single flow, BDP FIFO)")


@_register
def _f26(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EDGE1, "buffer": ["redok"]}
    form = Directional("above", negligible=SAME_REL)
    b.paired("F26a", "with REDok, IW10 still raises the maximum one-way delay", form, "owd_max_s", OWD_MAX, IW, where,
             relative=True, reading="the delay's maximum")
    b.paired("F26b", "with REDok, IW10 still raises the mean one-way delay", form, "owd_mean_s", OWD, IW, where,
             relative=True, reading="the delay's mean")
    return b.finding("F26", "Also REDok fails to control the delay increase IW10 imposes (single flow)")


def _maxima(b: _Builder, prefix: str, link: str, n: int) -> None:
    """Checks of the seed's REDok maxima: each value within :data:`MAX_MARGIN_REL`, and IW10's above IW3's."""
    where = {"link": [link], "n_flows": [n], "irto_s": [3.0], "buffer": ["redok"]}
    if not _runnable(b.rm, where):
        return
    per = {iw: _per_rep_max(b.rm, {**where, "iw": [iw]}) for iw in (10, 3)}
    if not all(len(v) for v in per.values()):
        return
    for cid, iw in ((f"{prefix}a", 10), (f"{prefix}b", 3)):
        seed = SEED_OWD_MAXIMA[(link, n, iw)]
        est = _max_boot({iw: per[iw]}, lambda v, iw=iw, seed=seed: float(v[iw].max()) - seed)
        b.add(fnd.check(cid, f"the maximum one-way delay with REDok and IW{iw} is the seed's {seed:g} s, within 10%",
                        Equivalent(round(MAX_MARGIN_REL * seed, 6)), f"maximum over the replications minus the seed's "
                        f"{seed:g} s, IW{iw}", "s", est, scope=_scope_text({**where, "iw": [iw]}),
                        measured_max_s=float(per[iw].max()), seed_max_s=seed))
    packet = LINKS[link].packet_time_s
    est = _max_boot(per, lambda v: float(v[10].max() - v[3].max()))
    b.add(fnd.check(f"{prefix}c", "IW10's maximum one-way delay with REDok is above IW3's",
                    Directional("above", negligible=packet), "maximum over the replications, IW10 - IW3", "s", est,
                    scope=_scope_text(where), note=f"negligible band: one {LINKS[link].label} packet time ({packet:g} s)"))


@_register
def _f27(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    _maxima(b, "F27", "edge", 1)
    return b.finding("F27", "Maximum values with REDok: IW10: 2.80s IW3: 2.06s (single flow)")


@_register
def _f28(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**HSPA6, "buffer": ["fifo-bdp", "fifo-2bdp", "red"]}
    b.paired("F28a", "with 6+6 flows IW10 lowers the one-way delay", Directional("below", negligible=SAME_REL),
             "owd_mean_s", OWD, IW, where, relative=True)
    b.paired("F28b", "... because IW10 drops more of its own packets (self-congestion)",
             Directional("above", negligible=RARE), "drops_total", "bottleneck drops per run", IW, where,
             relative=False, unit="drops/run")
    b.paired("F28c", "... and its delay is more bursty: a wider spread (99th minus 50th percentile)",
             Directional("above", negligible=HSPA_PACKET_S), "owd_spread_s",
             "the spread of a run's one-way delays (p99 - p50)", IW, where, relative=False, unit="s",
             note=f"negligible band: one HSPA packet time ({HSPA_PACKET_S:g} s)")
    return b.finding("F28", "IW10 less aggressive due to self-congestion ⇒ more bursty (6 flows, FIFO and RED)")


@_register
def _f29(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**HSPA6, "buffer": ["redok"]}
    b.ratio("F29a", "REDok regulates without heavy tail-drop: fewer than half of its drops are buffer overflows",
            Directional("below", threshold=MOSTLY), "drops_overflow", "drops_total", "overflow drops / drops, REDok",
            where)
    b.paired("F29b", "with REDok, IW10 raises the one-way delay by more than 10%",
             Directional("above", threshold=CLEAR_REL), "owd_mean_s", OWD, IW, where, relative=True,
             reading="significantly = by more than 10%")
    b.paired("F29c", "with REDok, IW10 raises the one-way delay", Directional("above", negligible=SAME_REL),
             "owd_mean_s", OWD, IW, where, relative=True, reading="significantly = beyond the noise")
    return b.finding("F29", "With REDok, traffic regulation works without heavy tail-drop ⇒ IW10 shows to be "
                            "significantly more aggressive (6 flows)")


@_register
def _f30(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    _maxima(b, "F30", "hspa", 6)
    return b.finding("F30", "Maximum values with REDok: IW10: 0.429s IW3: 0.296s (6 flows)")


# "One-Way Delay in Rest of Cases": every (link, N) but the two shown, IRTO 3 s unless IRTO is compared.


def _rest(rm: pd.DataFrame) -> list[str]:
    shown = {f"{l}:{n}" for l, n in OWD_CASES}
    return [c for c in sorted(set(rm["case"])) if c not in shown]


def _rest_where(rm: pd.DataFrame, **more: Sequence[Any]) -> dict[str, Sequence[Any]]:
    return {"link": ALL_LINKS, "case": _rest(rm), **more}


@_register
def _f31(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "self_congested" in rm:
        b.paired("F31a", "where IW10 self-congests, IW10 lowers the one-way delay", Directional("below", negligible=SAME_REL),
                 "owd_mean_s", OWD, IW, _rest_where(rm, irto_s=[3.0], self_congested=["held"]), relative=True,
                 note="self-congests: IW10 adds bottleneck drops (per configuration, held above 0 with a 0.03/run band)")
    return b.finding("F31", "Self-congestion ⇒ IW10 is less aggressive (rest of cases)")


@_register
def _f32(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "self_congested" in rm and _runnable(rm, {"link": ALL_LINKS}):
        where = _rest_where(rm, irto_s=[3.0], self_congested=["held"])
        n = len(_sub(rm, where).groupby(CONFIG).size())
        b.paired("F32a", "in some of those configurations IW10's maximum delay is not lower (not below -2%)",
                 Share(Directional("above", threshold=-SAME_REL), 1 / max(n, 1)), "owd_max_s", OWD_MAX, IW, where,
                 relative=True, by=CONFIG, note="some: at least one configuration")
    return b.finding("F32", "Except for the very highest end (in some of the cases)")


@_register
def _f33(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    for (c1, c2), reading, cond in ((("F33a", "F33b"), "low load = IW10 adds no drops", {"self_congested": ["contradicted"]}),
                                    (("F33c", "F33d"), "low load = 1+1 flows", {"n_flows": [1]})):
        if "self_congested" not in rm:
            continue
        where = _rest_where(rm, irto_s=[3.0], **cond)
        b.paired(c1, "at low load IW10 raises the one-way delay", Directional("above", negligible=SAME_REL),
                 "owd_mean_s", OWD, IW, where, relative=True, reading=reading)
        b.paired(c2, "... slightly (within 10%)", Equivalent(SLIGHT_REL), "owd_mean_s", OWD, IW, where, relative=True,
                 reading=reading)
    return b.finding("F33", "With low enough load, IW10 is slightly more aggressive (rest of cases)")


@_register
def _f34(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    b.paired("F34a", "IRTO1 shifts the one-way delay by at most 10%, in every configuration",
             Every(Equivalent(SLIGHT_REL)), "owd_mean_s", OWD, IRTO, _rest_where(rm), relative=True)
    return b.finding("F34", "IRTO1 only slightly \"shifts\" curves (rest of cases)")


@_register
def _f35(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Equivalent(SAME_REL))
    if "irto_changes_runs" in rm:
        b.paired("F35a", "where IRTO1 changes no run, the one-way delay does not shift (within 2%)", form, "owd_mean_s",
                 OWD, IRTO, _rest_where(rm, irto_changes_runs=[False]), relative=True,
                 reading="some effect = IRTO1 changes a run's packet trace")
    if _runnable(rm, {"link": ALL_LINKS}):
        _, _, per = _paired(rm, "elapsed_mean_s", IRTO, _rest_where(rm), relative=True)
        same = Equivalent(SAME_REL)
        keep = pd.DataFrame([{**{k: c[k] for k in (*CONFIG, "iw")}, "_same": same.decide(c) == fnd.HELD} for c in per])
        if len(keep):
            cond = rm.merge(keep, on=CONFIG + ["iw"], how="left")
            b.rm = cond
            b.paired("F35b", "where IRTO1 leaves the elapsed times unchanged (within 2%), the one-way delay does not "
                     "shift (within 2%)", form, "owd_mean_s", OWD, IRTO, _rest_where(cond, _same=[True]),
                     relative=True, reading="some effect = IRTO1 changes the elapsed times")
            b.rm = rm
    return b.finding("F35", "Only happening when IRTO1 has some effect in the first place")


@_register
def _f36(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "irto_changes_runs" in rm:
        b.paired("F36a", "where IRTO1 changes runs, the one-way delay shifts by under 2% on average",
                 Equivalent(SAME_REL), "owd_mean_s", OWD, IRTO, _rest_where(rm, irto_changes_runs=[True]),
                 relative=True)
    return b.finding("F36", "Quite insignificant in numbers (the IRTO1 shift)")


# Conclusions ------------------------------------------------------------------------------

EVERY = {"link": ALL_LINKS}


@_register
def _f37(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "rtt_class" in rm:
        where = {**EVERY, "rtt_class": ["below 1 s"]}
        b.paired("F37a", "where the effective RTT is below 1 s, IRTO1 lowers the mean elapsed time",
                 Directional("below", negligible=SAME_REL), "elapsed_mean_s", ELAPSED, IRTO, where, relative=True,
                 reading="better on average", note="effective RTT: mean one-way delay + ACK path propagation")
        b.paired("F37b", "where the effective RTT is below 1 s, IRTO1 is nowhere worse (each configuration below +2%)",
                 Every(Directional("below", threshold=SAME_REL)), "elapsed_mean_s", ELAPSED, IRTO, where,
                 relative=True, reading="never worse")
    return b.finding("F37", "Smaller initial RTO performs better when effective e2e RTT smaller than 1 second")


@_register
def _f38(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "rtt_class" in rm and _runnable(rm, EVERY):
        hi, _, _ = _paired(rm, "elapsed_mean_s", IRTO, {**EVERY, "rtt_class": ["above 1 s"]}, relative=True)
        lo, _, _ = _paired(rm, "elapsed_mean_s", IRTO, {**EVERY, "rtt_class": ["below 1 s"]}, relative=True)
        if len(hi) and len(lo):
            est = fnd.difference(hi.groupby("rep")["diff"].mean(), lo.groupby("rep")["diff"].mean())
            b.add(fnd.check("F38a", "IRTO1's effect on the mean elapsed time is worse where the effective RTT is above 1 s",
                            Contrast("above", negligible=SAME_REL),
                            "relative change of the mean elapsed time, IRTO1 vs IRTO3: above-1-s configurations minus "
                            "below-1-s ones", "fraction", est, scope="every link, buffer, flow count and IW",
                            reading="less beneficial at larger RTT"))
        else:
            b._empty("F38a", "IRTO1's effect is worse where the effective RTT is above 1 s", Contrast("above", negligible=SAME_REL),
                     "relative change of the mean elapsed time, IRTO1 vs IRTO3: above-1-s minus below-1-s", "fraction",
                     EVERY, "less beneficial at larger RTT", False)
        where = {**EVERY, "rtt_class": ["above 1 s"]}
        n = len(_sub(rm, where).groupby(CONFIG + ["iw"]).size())
        for cid, side, words in (("F38b", "above", "worse"), ("F38c", "below", "better")):
            b.paired(cid, f"where the effective RTT is above 1 s, IRTO1 is {words} in some configuration",
                     Share(Directional(side, negligible=SAME_REL), 1 / max(n, 1)), "elapsed_mean_s", ELAPSED, IRTO,
                     where, relative=True, by=CONFIG + ["iw"], reading="mixed: better in some cases, worse in others",
                     note="some: at least one configuration")
    return b.finding("F38", "More controversial when e2e RTT is larger")


@_register
def _f39(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    where = {**EVERY, "irto_s": [3.0]}
    b.paired("F39a", "IW10 lowers the mean elapsed time", Directional("below", negligible=SAME_REL), "elapsed_mean_s",
             ELAPSED, IW, where, relative=True)
    b.paired("F39b", "IW10 raises the one-way (queueing) delay", Directional("above", negligible=SAME_REL),
             "owd_mean_s", OWD, IW, where, relative=True)
    return b.finding("F39", "IW10, while improving elapsed times, imposes higher queuing delay than IW3")


@_register
def _f40(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    if "self_congested" in rm:
        b.paired("F40a", "where IW10 self-congests, IW3 has the higher one-way delay",
                 Directional("below", negligible=SAME_REL), "owd_mean_s", OWD, IW,
                 {**EVERY, "irto_s": [3.0], "self_congested": ["held"]}, relative=True)
    return b.finding("F40", "However, if self-congesting, IW3 is more aggressive in terms of queuing delay")


@_register
def _f41(rm: pd.DataFrame) -> dict[str, Any]:
    b = _Builder(rm)
    form = Every(Directional("above", negligible=SAME_REL))
    cases = [f"{l}:{n}" for l, n in OWD_CASES]
    b.paired("F41a", "with RED and with REDok, IW10 still raises the one-way delay", form, "owd_mean_s", OWD, IW,
             {"link": [l for l, _ in OWD_CASES], "buffer": AQM, "case": cases, "irto_s": [3.0]}, relative=True,
             by=["buffer"],
             reading="the seed's OWD cases (EDGE 1+1, HSPA 6+6)")
    b.paired("F41b", "with RED and with REDok, IW10 still raises the one-way delay", form, "owd_mean_s", OWD, IW,
             {**EVERY, "buffer": AQM, "irto_s": [3.0]}, relative=True, by=["buffer"], reading="every configuration")
    return b.finding("F41", "AQM (RED) failed to control the increase in the queuing delay")
