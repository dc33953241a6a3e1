"""Checking a seed's claims: claim forms, four verdicts, and the ``findings.json`` format.

Every bundled study states its seed's result sentences as claims (its claims ledger,
:mod:`tcplab.studies.ledger`) and checks each claim on its own data. The rules that
turn data into a verdict live here, once, so every study means the same thing by
"held".

**Paired comparisons.** Replication ``r`` of every configuration sees the same random
draws (common random numbers), so two variants (IW3 vs IW10, NewReno vs CUBIC, ...)
are compared run by run: :func:`paired` takes, for each replication, the difference
``test - ref`` (or ``(test - ref) / ref``) of a per-run metric in every configuration in
scope, averages those differences over the configurations (one value per
replication), and gives a Student-t interval over the replications
(:func:`estimate`). Configurations within one replication share its draws, which is
why they are pooled before the interval and never counted as separate samples.

**Exact values.** When every replication gives the same value (a deterministic
configuration, or a count that is 0 in every run) :func:`estimate` marks the
estimate ``exact``: it is a value, not an interval of zero width resting on n
independent samples, and the verdict compares the value itself.

**Four verdicts** (:data:`VERDICTS`): ``held``, ``contradicted``, ``inconclusive`` and
``not testable here``. A check's *form* is fixed from the seed's words before any run
and decides its verdict:

- :class:`Directional` ("X raises Y"; "much" with a size stated up front as
  ``threshold``): held when the interval lies on the claimed side of ``threshold``;
  contradicted when it lies on the other side, or wholly inside the ``negligible``
  band stated with the claim; inconclusive otherwise.
- :class:`Contrast` ("more obvious under high load", "a trend"): a directional claim
  on the difference of an effect between two conditions, per replication.
- :class:`Equivalent` ("no effect", "the same", "regardless of"): two one-sided tests
  with a ``margin`` stated up front: held when the interval lies inside
  ``[-margin, margin]``, contradicted when it lies wholly outside, inconclusive
  otherwise. A wider interval can only move a verdict towards inconclusive, never
  towards held. (The 95% interval is used, i.e. each one-sided test at 2.5%; stricter
  than the textbook 90% TOST interval.) :class:`Differs` ("X and Y interact
  differently") is its complement.
- Quantifiers over the configurations in scope, each configuration judged by a base
  form on its own interval: :class:`Every` ("always", "every"), :class:`Share`
  ("often", "mostly": at least a stated share), :class:`Only` ("only X": X holds and
  the others are contradicted).

A finding is contradicted if any of its checks is, held if all of them hold, and
inconclusive otherwise (:func:`finding`); checks marked ``extension`` (cases the seed
did not run) are shown beside it and never enter its verdict. Every inconclusive
check carries ``reps_needed``: the replications that would make its interval clear
the decision boundary at the observed effect, assuming the interval's half-width
shrinks as 1/sqrt(n) (:func:`reps_needed`). Where the seed can be read two ways, each
check names its ``reading`` and the finding reports its verdict per reading.

**The ``findings.json`` document** (:func:`document`; :func:`validate` checks it)::

    {"study": NAME, "seed_study": SEED FILE STEM, "level": 0.95,
     "replications": R, "links": [...], "params": {...}, "method": TEXT,
     "findings": [FINDING, ...], "ledger": LEDGER (optional), ...study-specific extras}

    FINDING = {"id", "claim", "verdict", "evaluated": bool, "extension": bool,
               "criterion", "statistic": STATISTIC (the first check whose verdict is the finding's),
               "checks": [CHECK, ...],
               "readings": {READING: verdict, ...} (when checks name readings)}
    CHECK   = {"id", "claim", "form": {"kind", ...}, "criterion", "verdict",
               "statistic": STATISTIC, "per_config": [{config columns..., "value", "ci", "n",
               "exact", "verdict"}, ...], "reps_needed": int | null, "reading": str | null,
               "extension": bool, ...extras}
    STATISTIC = {"name", "unit", "value", "ci": [low, high], "level", "n_replications",
                 "exact": bool, ...}

``verdict`` is one of :data:`VERDICTS`, or ``not run`` for a finding whose
configurations were not part of this run (for example ``--links lte``). NaN is
written as ``null``.

Example:
    >>> import pandas as pd
    >>> rm = pd.DataFrame({"link": ["x"] * 6, "cc": ["a", "b"] * 3, "rep": [0, 0, 1, 1, 2, 2],
    ...                    "delay": [1.0, 2.0, 1.0, 2.1, 1.0, 1.9]})
    >>> pairs, est, per = paired(rm, "delay", "cc", "b", "a", {}, relative=False, unit=["link", "cc", "rep"])
    >>> round(est["value"], 3), est["n"]
    (1.0, 3)
    >>> c = check("H1a", "b delays more than a", Directional("above"), "difference of delay, b - a", "s", est, per)
    >>> c["verdict"], c["criterion"]
    ('held', 'held when the 95% interval lies above 0 s; contradicted when it lies below 0 s')
    >>> f = finding("H1", "b is slower", [c])
    >>> doc = document("demo", "999_x", {"reps": 3}, 3, ["x"], "paired", [f])
    >>> validate(doc); doc["findings"][0]["verdict"]
    'held'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from tcplab import stats

__all__ = [
    "LEVEL",
    "METHOD",
    "VERDICTS",
    "HELD",
    "CONTRADICTED",
    "INCONCLUSIVE",
    "NOT_TESTABLE",
    "NOT_RUN",
    "Form",
    "Directional",
    "Contrast",
    "Equivalent",
    "Differs",
    "Every",
    "Share",
    "Only",
    "estimate",
    "exact_estimate",
    "difference",
    "paired",
    "bootstrap_ratio",
    "reps_needed",
    "combine",
    "check",
    "finding",
    "document",
    "validate",
    "num",
    "clean",
]

#: Confidence level of every interval in ``findings.json``.
LEVEL = 0.95

#: The default ``method`` text of a findings document.
METHOD = ("paired by replication (common random numbers); pooled over configurations per replication, "
          "95% Student-t interval over replications unless a check says otherwise; identical replications are "
          "reported as exact values")

HELD = "held"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
#: The four verdicts of a check or finding, in the order reports list them.
VERDICTS = (HELD, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE)
#: Not a verdict: the finding's configurations were not part of this run.
NOT_RUN = "not run"

_NAN_EST = {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}


# --------------------------------------------------------------------------------------
# Estimates


def exact_estimate(value: float, n: int) -> dict[str, Any]:
    """An exact value seen in all ``n`` replications (no interval is implied).

    Example:
        >>> exact_estimate(0.0, 5)
        {'value': 0.0, 'ci': [0.0, 0.0], 'n': 5, 'exact': True}
    """
    return {"value": float(value), "ci": [float(value), float(value)], "n": int(n), "exact": True}


def estimate(values: Iterable[float]) -> dict[str, Any]:
    """Mean with a Student-t interval at :data:`LEVEL`: ``{"value", "ci", "n", "exact"}``.

    NaNs are dropped. When there are at least two values and all are equal, the result
    is an exact value (:func:`exact_estimate`), never a zero-width interval.

    Example:
        >>> e = estimate([1.0, 2.0, 3.0])
        >>> e["value"], e["n"], e["exact"], [round(x, 3) for x in e["ci"]]   # 2 -+ 4.303 * 1 / sqrt(3)
        (2.0, 3, False, [-0.484, 4.484])
        >>> estimate([0.25, 0.25, 0.25])["exact"]
        True
    """
    a = np.asarray(list(values), dtype=float)
    a = a[~np.isnan(a)]
    if len(a) >= 2 and float(np.ptp(a)) == 0.0:
        return exact_estimate(float(a[0]), len(a))
    e = stats.mean_ci(a, LEVEL)
    return {"value": e.value, "ci": [e.low, e.high], "n": e.n, "exact": False}


def difference(a: pd.Series, b: pd.Series) -> dict[str, Any]:
    """Per replication ``a - b`` (two per-replication series, aligned on their index), estimated.

    The statistic of a :class:`Contrast`: an effect in one condition minus the same
    effect in another, replication by replication.

    Example:
        >>> difference(pd.Series([1.0, 2.0, 3.0]), pd.Series([0.5, 0.5, 1.5]))["value"]
        1.1666666666666667
    """
    d = (a - b).dropna()
    return estimate(d) if len(d) else dict(_NAN_EST)


def paired(df: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, where: dict[str, Sequence[Any]],
           relative: bool, unit: Sequence[str], rep: str = "rep",
           ) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """Paired differences ``test - ref`` (or relative to ``ref``) of ``metric`` per replication.

    Args:
        df: one row per run.
        metric: the per-run column compared.
        factor: the column that tells the two variants apart; ``test`` and ``ref`` are
            two of its values.
        where: restricts the rows: ``{column: accepted values}``.
        relative: divide each difference by the ``ref`` value.
        unit: the columns that identify a run (configuration, variant and ``rep``).
        rep: the replication column.

    Returns:
        The per-pair table (``unit`` without ``factor``, plus ``diff``); the pooled
        estimate (per replication, the mean difference over every configuration in
        scope; Student-t over replications; with ``pairs`` and ``configs`` counts);
        and one estimate per configuration.
    """
    sub = df
    for col, values in where.items():
        sub = sub[sub[col].isin(list(values))]
    index = [c for c in unit if c != factor]
    wide = sub.pivot_table(index=index, columns=factor, values=metric, aggfunc="first")
    if test not in wide.columns or ref not in wide.columns:
        return pd.DataFrame(), dict(_NAN_EST), []
    d = wide[test] - wide[ref]
    if relative:
        d = d / wide[ref]
    pairs = d.rename("diff").reset_index().dropna(subset=["diff"])
    config = [c for c in index if c != rep]
    pooled = estimate(pairs.groupby(rep)["diff"].mean())
    pooled["pairs"] = int(len(pairs))
    pooled["configs"] = int(pairs.groupby(config).ngroups) if len(pairs) and config else (1 if len(pairs) else 0)
    per_config = []
    if config:
        for key, part in pairs.groupby(config, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            cfg = dict(zip(config, key))
            e = estimate(part["diff"])
            per_config.append({**{k: (v.item() if hasattr(v, "item") else v) for k, v in cfg.items()}, **e})
    return pairs, pooled, per_config


def bootstrap_ratio(num: np.ndarray, den: np.ndarray, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """``sum(num) / sum(den)`` over replications with a bootstrap percentile interval.

    Replications are resampled with replacement ``n_boot`` times (generator seeded with
    ``seed``, so the interval is reproducible). When every replication has the same
    ratio, the result is exact.

    Example:
        >>> r = bootstrap_ratio(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0]))
        >>> r["value"], r["ci"], r["n"], r["exact"]
        (0.5, [0.5, 0.5], 3, True)
    """
    n = len(num)
    total = float(den.sum())
    value = float(num.sum()) / total if total > 0 else math.nan
    if n < 2 or not total > 0:
        return {"value": value, "ci": [math.nan, math.nan], "n": n, "exact": False}
    with np.errstate(divide="ignore", invalid="ignore"):
        each = num / den
    if np.all(np.isfinite(each)) and float(np.ptp(each)) == 0.0:
        return exact_estimate(value, n)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    dens = den[idx].sum(axis=1)
    ratios = np.where(dens > 0, num[idx].sum(axis=1) / np.where(dens > 0, dens, 1), np.nan)
    ratios = ratios[~np.isnan(ratios)]
    lo, hi = np.quantile(ratios, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2]) if len(ratios) else (math.nan, math.nan)
    return {"value": value, "ci": [float(lo), float(hi)], "n": n, "exact": False, "interval": "bootstrap percentile"}


def reps_needed(est: dict[str, Any], boundary: float) -> int | None:
    """Replications that would make ``est``'s interval clear ``boundary`` at the observed effect.

    The interval's half-width on the boundary's side is assumed to shrink as
    1/sqrt(n) with the effect unchanged: ``n' = ceil(n * (half / |value - boundary|)^2)``.
    ``None`` when the value sits on the boundary (no number of replications would do)
    or the estimate has no interval.

    Example:
        >>> reps_needed({"value": 1.0, "ci": [-1.0, 3.0], "n": 4}, 0.0)   # half-width 2, effect 1: 4 x 4
        16
        >>> reps_needed({"value": 0.0, "ci": [-1.0, 1.0], "n": 4}, 0.0) is None
        True
    """
    v, (lo, hi), n = est.get("value"), est.get("ci") or [None, None], est.get("n") or 0
    if v is None or lo is None or hi is None or n < 2 or any(map(math.isnan, (v, lo, hi))):
        return None
    d = abs(v - boundary)
    if d == 0:
        return None
    half = (v - lo) if v > boundary else (hi - v)
    if half <= 0:
        return n
    return max(n + 1, math.ceil(n * (half / d) ** 2))


# --------------------------------------------------------------------------------------
# Claim forms


def _ok(est: dict[str, Any]) -> bool:
    """The estimate can be judged: an exact value, or an interval over >= 2 replications."""
    v = est.get("value")
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return False
    if est.get("exact"):
        return True
    lo, hi = est.get("ci") or [None, None]
    return (est.get("n") or 0) >= 2 and lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi))


def _q(x: float, unit: str) -> str:
    return f"{x:g} {unit}".strip()


class Form:
    """A claim form: how an estimate (and per-configuration estimates) become a verdict."""

    kind = "form"

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        raise NotImplementedError

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        """Replications that would settle an inconclusive verdict (see :func:`reps_needed`)."""
        return None

    def describe(self, unit: str) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind}
        for k, v in vars(self).items():
            d[k] = v.as_dict() if isinstance(v, Form) else v
        return d


@dataclass(frozen=True)
class Directional(Form):
    """"X raises Y" (``side="above"``) or "X lowers Y" (``side="below"``).

    ``threshold`` is the size the seed's words ask for ("much": a size or ratio stated
    up front; 0 for a plain direction). ``negligible`` (optional, stated with the
    claim) is a band around 0 inside which an effect counts as none.

    Example:
        >>> f = Directional("below", negligible=0.02)
        >>> f.decide({"value": -0.1, "ci": [-0.2, -0.05], "n": 10})
        'held'
        >>> f.decide({"value": 0.1, "ci": [0.05, 0.2], "n": 10})
        'contradicted'
        >>> f.decide({"value": 0.0, "ci": [-0.01, 0.01], "n": 10})   # wholly negligible
        'contradicted'
        >>> f.decide({"value": -0.1, "ci": [-0.3, 0.1], "n": 3})
        'inconclusive'
        >>> f.decide({"value": -0.1, "ci": [-0.1, -0.1], "n": 3, "exact": True})
        'held'
    """

    side: Literal["above", "below"]
    threshold: float = 0.0
    negligible: float | None = None
    kind = "directional"

    def __post_init__(self) -> None:
        if self.side not in ("above", "below"):
            raise ValueError(f"Directional.side: expected 'above' or 'below', got {self.side!r}")
        if self.negligible is not None and not self.negligible > 0:
            raise ValueError(f"Directional.negligible: expected a margin > 0, got {self.negligible!r}")

    def _beyond(self, x: float) -> bool:
        return x > self.threshold if self.side == "above" else x < self.threshold

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        if not _ok(est):
            return INCONCLUSIVE
        neg = self.negligible
        if est.get("exact"):
            v = est["value"]
            if neg is not None and abs(v) < neg:
                return CONTRADICTED
            return HELD if self._beyond(v) else CONTRADICTED
        lo, hi = est["ci"]
        if neg is not None and -neg < lo and hi < neg:
            return CONTRADICTED
        near, far = (lo, hi) if self.side == "above" else (hi, lo)
        if self._beyond(near):
            return HELD
        if not self._beyond(far) and far != self.threshold:
            return CONTRADICTED
        return INCONCLUSIVE

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        if est.get("exact"):
            return None
        return reps_needed(est, self.threshold)

    def describe(self, unit: str) -> str:
        where = "above" if self.side == "above" else "below"
        other = "below" if self.side == "above" else "above"
        text = (f"held when the 95% interval lies {where} {_q(self.threshold, unit)}; contradicted when it lies "
                f"{other} {_q(self.threshold, unit)}")
        if self.negligible is not None:
            text += f" or wholly inside the negligible band ±{_q(self.negligible, unit)}"
        return text


@dataclass(frozen=True)
class Contrast(Directional):
    """"More obvious under high load", "a trend": a directional claim on a difference of effects.

    The statistic is, per replication, the effect in one condition minus the effect in
    another (:func:`difference`).

    Example:
        >>> Contrast("above").describe("fraction")
        'contrast: held when the 95% interval lies above 0 fraction; contradicted when it lies below 0 fraction'
    """

    kind = "contrast"

    def describe(self, unit: str) -> str:
        return "contrast: " + super().describe(unit)


@dataclass(frozen=True)
class Equivalent(Form):
    """"No effect", "the same", "regardless of": two one-sided tests with a stated margin.

    Example:
        >>> f = Equivalent(0.05)
        >>> f.decide({"value": 0.01, "ci": [-0.02, 0.04], "n": 20})
        'held'
        >>> f.decide({"value": 0.2, "ci": [0.1, 0.3], "n": 20})
        'contradicted'
        >>> f.decide({"value": 0.01, "ci": [-0.2, 0.22], "n": 2})      # too little data never holds
        'inconclusive'
    """

    margin: float
    kind = "equivalence"

    def __post_init__(self) -> None:
        if not self.margin > 0:
            raise ValueError(f"{type(self).__name__}.margin: expected a margin > 0, got {self.margin!r}")

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        if not _ok(est):
            return INCONCLUSIVE
        m = self.margin
        if est.get("exact"):
            return HELD if abs(est["value"]) <= m else CONTRADICTED
        lo, hi = est["ci"]
        if -m <= lo and hi <= m:
            return HELD
        if lo > m or hi < -m:
            return CONTRADICTED
        return INCONCLUSIVE

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        if est.get("exact") or not _ok(est):
            return None
        v = est["value"]
        return reps_needed(est, math.copysign(self.margin, v) if v != 0 else self.margin)

    def describe(self, unit: str) -> str:
        return (f"equivalence (two one-sided tests): held when the 95% interval lies inside ±{_q(self.margin, unit)}; "
                f"contradicted when it lies wholly outside")


@dataclass(frozen=True)
class Differs(Form):
    """"X and Y differ" ("interact differently"), either way: the complement of :class:`Equivalent`.

    Held when the interval lies wholly outside ``[-margin, margin]``; contradicted when
    it lies inside (the two are equivalent within the margin); inconclusive otherwise.

    Example:
        >>> f = Differs(0.05)
        >>> f.decide({"value": -0.2, "ci": [-0.3, -0.1], "n": 5}), f.decide({"value": 0.04, "ci": [0.0, 0.1], "n": 5})
        ('held', 'inconclusive')
        >>> f.decide({"value": 0.0, "ci": [0.0, 0.0], "n": 5, "exact": True})
        'contradicted'
    """

    margin: float
    kind = "difference"

    # The margin's check and the replications that would settle the verdict are
    # Equivalent's: both decide by where the interval lies against ±margin.
    __post_init__ = Equivalent.__post_init__
    needed = Equivalent.needed

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        if not _ok(est):
            return INCONCLUSIVE
        m = self.margin
        if est.get("exact"):
            return HELD if abs(est["value"]) > m else CONTRADICTED
        lo, hi = est["ci"]
        if lo > m or hi < -m:
            return HELD
        if -m <= lo and hi <= m:
            return CONTRADICTED
        return INCONCLUSIVE

    def describe(self, unit: str) -> str:
        m = _q(self.margin, unit)
        return (f"difference either way: held when the 95% interval lies wholly outside ±{m}; contradicted when it "
                f"lies inside ±{m}")


def _per_verdicts(base: Form, per_config: Sequence[dict[str, Any]]) -> list[str]:
    return [base.decide(c) for c in per_config]


@dataclass(frozen=True)
class Every(Form):
    """"Always", "every": each configuration in scope, on its own interval, by ``base``.

    Held when every configuration holds, contradicted when any is contradicted.

    Example:
        >>> f = Every(Directional("above"))
        >>> per = [{"value": 1.0, "ci": [0.5, 1.5], "n": 5}, {"value": 0.2, "ci": [-0.1, 0.5], "n": 5}]
        >>> f.decide({}, per), f.decide({}, per[:1])
        ('inconclusive', 'held')
    """

    base: Form
    kind = "every"

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        vs = _per_verdicts(self.base, per_config)
        if not vs:
            return INCONCLUSIVE
        if CONTRADICTED in vs:
            return CONTRADICTED
        return HELD if all(v == HELD for v in vs) else INCONCLUSIVE

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        ns = [self.base.needed(c) for c, v in zip(per_config, _per_verdicts(self.base, per_config)) if v == INCONCLUSIVE]
        return max((n for n in ns if n is not None), default=None)

    def describe(self, unit: str) -> str:
        return f"in every configuration in scope, each on its own interval: {self.base.describe(unit)}"


@dataclass(frozen=True)
class Share(Form):
    """"Often", "mostly": at least ``at_least`` (a fraction) of the configurations hold by ``base``.

    Held when that many hold; contradicted when so many are contradicted that the share
    can no longer be reached; inconclusive otherwise.

    Example:
        >>> f = Share(Directional("above"), 0.5)
        >>> ok = {"value": 1.0, "ci": [0.5, 1.5], "n": 5}
        >>> bad = {"value": -1.0, "ci": [-1.5, -0.5], "n": 5}
        >>> f.decide({}, [ok, bad]), f.decide({}, [bad, bad, ok])
        ('held', 'contradicted')
    """

    base: Form
    at_least: float
    kind = "share"

    def __post_init__(self) -> None:
        if not 0 < self.at_least <= 1:
            raise ValueError(f"Share.at_least: expected a fraction in (0, 1], got {self.at_least!r}")

    def _need(self, n: int) -> int:
        return math.ceil(self.at_least * n - 1e-12)

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        vs = _per_verdicts(self.base, per_config)
        if not vs:
            return INCONCLUSIVE
        need = self._need(len(vs))
        if sum(v == HELD for v in vs) >= need:
            return HELD
        if sum(v != CONTRADICTED for v in vs) < need:
            return CONTRADICTED
        return INCONCLUSIVE

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        ns = [self.base.needed(c) for c, v in zip(per_config, _per_verdicts(self.base, per_config)) if v == INCONCLUSIVE]
        ns = sorted(n for n in ns if n is not None)
        held = sum(v == HELD for v in _per_verdicts(self.base, per_config))
        missing = self._need(len(per_config)) - held
        return ns[missing - 1] if 0 < missing <= len(ns) else None

    def describe(self, unit: str) -> str:
        return (f"in at least {self.at_least:.0%} of the configurations in scope, each on its own interval: "
                f"{self.base.describe(unit)}")


@dataclass(frozen=True)
class Only(Form):
    """"Only X": the configurations matching ``where`` hold by ``base``, and every other is contradicted.

    ``where`` maps configuration columns to the accepted values (as in :func:`paired`).

    Example:
        >>> f = Only(Directional("above", negligible=0.05), {"hops": [1]})
        >>> per = [{"hops": 1, "value": 0.5, "ci": [0.3, 0.7], "n": 5},
        ...        {"hops": 4, "value": 0.0, "ci": [-0.02, 0.02], "n": 5}]
        >>> f.decide({}, per), f.decide({}, [per[0], {**per[1], "ci": [0.1, 0.3], "value": 0.2}])
        ('held', 'contradicted')
    """

    base: Form
    where: dict[str, list[Any]] = field(default_factory=dict)
    kind = "only"

    def _inside(self, c: dict[str, Any]) -> bool:
        return all(c.get(k) in v for k, v in self.where.items())

    def decide(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> str:
        inside = [self.base.decide(c) for c in per_config if self._inside(c)]
        outside = [self.base.decide(c) for c in per_config if not self._inside(c)]
        if not inside or not outside:
            return INCONCLUSIVE
        if CONTRADICTED in inside or HELD in outside:
            return CONTRADICTED
        if all(v == HELD for v in inside) and all(v == CONTRADICTED for v in outside):
            return HELD
        return INCONCLUSIVE

    def needed(self, est: dict[str, Any], per_config: Sequence[dict[str, Any]] = ()) -> int | None:
        ns = [self.base.needed(c) for c in per_config if self.base.decide(c) == INCONCLUSIVE]
        return max((n for n in ns if n is not None), default=None)

    def describe(self, unit: str) -> str:
        scope = ", ".join(f"{k} in {v}" for k, v in self.where.items())
        return (f"only where {scope}: those configurations hold and every other is contradicted, each on its own "
                f"interval: {self.base.describe(unit)}")


def combine(verdicts: Iterable[str]) -> str:
    """A finding's verdict from its checks': contradicted if any is, held if all are, else inconclusive.

    Example:
        >>> combine(["held", "held"]), combine(["held", "inconclusive"]), combine(["inconclusive", "contradicted"])
        ('held', 'inconclusive', 'contradicted')
        >>> combine([])
        'not testable here'
    """
    vs = list(verdicts)
    if not vs:
        return NOT_TESTABLE
    if CONTRADICTED in vs:
        return CONTRADICTED
    if all(v == NOT_TESTABLE for v in vs):
        return NOT_TESTABLE
    return HELD if all(v == HELD for v in vs) else INCONCLUSIVE


# --------------------------------------------------------------------------------------
# Checks, findings and the document


def num(v: Any) -> float | None:
    """A JSON number: a float, or ``None`` for NaN and non-numbers."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def clean(c: dict[str, Any]) -> dict[str, Any]:
    """A per-configuration row made JSON-safe: NaN -> None, numpy scalars -> Python."""
    out = {}
    for k, v in c.items():
        if k == "ci":
            out[k] = [num(x) for x in v]
        elif isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (float, np.floating)):
            out[k] = num(v)
        elif isinstance(v, np.integer):
            out[k] = int(v)
        else:
            out[k] = v
    return out


def check(cid: str, claim: str, form: Form, statistic: str, unit: str, est: dict[str, Any],
          per_config: Sequence[dict[str, Any]] | None = None, *, scope: str = "", reading: str | None = None,
          extension: bool = False, note: str = "", **extra: Any) -> dict[str, Any]:
    """One check of a claim, decided by ``form`` (see the module doc for the format).

    ``est`` is the pooled estimate (``value``, ``ci``, ``n``, ``exact`` and optional extra
    keys, copied into the statistic); ``per_config`` the per-configuration estimates
    (each gets its own verdict by the base form); ``scope`` says, in words, which
    configurations the check covers; ``extension`` marks a case the seed did not run
    (shown, never part of the finding's verdict); ``extra`` keys are added to the check.
    """
    per_config = list(per_config or [])
    verdict = form.decide(est, per_config)
    base = getattr(form, "base", form)
    rows = [clean({**c, "exact": bool(c.get("exact", False)), "verdict": base.decide(c)}) for c in per_config]
    criterion = form.describe(unit) + (f"; scope: {scope}" if scope else "") + (f"; {note}" if note else "")
    if isinstance(form, Share) and per_config:
        criterion += f" ({form._need(len(per_config))} of the {len(per_config)} configurations)"
    return {"id": cid, "claim": claim, "form": form.as_dict(), "criterion": criterion, "verdict": verdict,
            "statistic": {"name": statistic, "unit": unit, "value": num(est.get("value")),
                          "ci": [num(v) for v in est.get("ci", [math.nan, math.nan])],
                          "level": LEVEL, "n_replications": int(est.get("n") or 0), "exact": bool(est.get("exact")),
                          **{k: v for k, v in est.items() if k not in ("value", "ci", "n", "exact")}},
            "per_config": rows, "reps_needed": form.needed(est, per_config) if verdict == INCONCLUSIVE else None,
            "reading": reading, "extension": bool(extension), **extra}


def finding(fid: str, claim: str, checks: list[dict[str, Any]], *, extension: bool = False,
            not_run: str = "not evaluated: its configurations were not run",
            not_testable: str | None = None) -> dict[str, Any]:
    """A finding: its verdict combines its checks' (:func:`combine`); extension checks are left out.

    With no checks the verdict is ``not testable here`` when ``not_testable`` gives the
    reason, and ``not run`` otherwise (its configurations were not part of this run).

    Example:
        >>> c1 = {"id": "a", "verdict": "held", "extension": False, "reading": None, "statistic": {}}
        >>> c2 = {"id": "b", "verdict": "contradicted", "extension": True, "reading": None, "statistic": {}}
        >>> finding("F1", "x", [c1, c2])["verdict"]      # the extension is shown, not counted
        'held'
        >>> finding("F2", "y", [])["verdict"], finding("F3", "z", [], not_testable="a production trial")["verdict"]
        ('not run', 'not testable here')
    """
    own = [c for c in checks if not c.get("extension")]
    evaluated = bool(own)
    if evaluated:
        verdict = combine(c["verdict"] for c in own)
        criterion = "contradicted if any check below is, held if all hold, inconclusive otherwise"
    elif not_testable:
        verdict, criterion = NOT_TESTABLE, f"not testable here: {not_testable}"
    else:
        verdict, criterion = NOT_RUN, not_run
    # The headline is the first check that decided the verdict (a contradicted check for a
    # contradicted finding), so the statistic shown beside a verdict is the one behind it.
    decisive = next((c for c in own if c["verdict"] == verdict), own[0]) if own else None
    head = decisive["statistic"] if decisive else {"name": None, "unit": None, "value": None, "ci": [None, None],
                                                   "level": LEVEL, "n_replications": 0, "exact": False}
    out = {"id": fid, "claim": claim, "verdict": verdict, "evaluated": evaluated, "extension": bool(extension),
           "criterion": criterion, "statistic": head, "checks": checks}
    readings = sorted({c["reading"] for c in own if c.get("reading")})
    if readings:
        out["readings"] = {r: combine(c["verdict"] for c in own if c.get("reading") in (None, r)) for r in readings}
        out["reading_dependent"] = len(set(out["readings"].values())) > 1
    return out


def document(study: str, seed_study: str, params: dict[str, Any], replications: int, links: list[str],
             method: str, findings: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The ``findings.json`` document, keys in the order of the module doc."""
    return {"study": study, "seed_study": seed_study, "level": LEVEL, "replications": replications, "links": links,
            "params": params, "method": method, "findings": findings, **extra}


_STAT_KEYS = {"name", "unit", "value", "ci", "level", "n_replications"}
_FINDING_VERDICTS = set(VERDICTS) | {NOT_RUN}


def validate(doc: dict[str, Any]) -> None:
    """Raises ``ValueError`` naming the first place where ``doc`` breaks the format.

    Example:
        >>> validate({"study": "x"})
        Traceback (most recent call last):
        ...
        ValueError: findings.json: missing key(s) findings, level, links, method, params, replications, seed_study
    """
    missing = sorted({"study", "seed_study", "level", "replications", "links", "params", "method", "findings"} - set(doc))
    if missing:
        raise ValueError(f"findings.json: missing key(s) {', '.join(missing)}")
    seen = set()
    for f in doc["findings"]:
        where = f"findings.json: finding {f.get('id')!r}"
        for key in ("id", "claim", "verdict", "evaluated", "criterion", "statistic", "checks"):
            if key not in f:
                raise ValueError(f"{where}: missing {key!r}")
        if f["id"] in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(f["id"])
        if f["verdict"] not in _FINDING_VERDICTS:
            raise ValueError(f"{where}: verdict {f['verdict']!r} is not one of {', '.join(sorted(_FINDING_VERDICTS))}")
        own = [c for c in f["checks"] if not c.get("extension")]
        if f["evaluated"] != bool(own):
            raise ValueError(f"{where}: evaluated = {f['evaluated']!r} disagrees with its checks")
        if own and f["verdict"] != combine(c["verdict"] for c in own):
            raise ValueError(f"{where}: verdict {f['verdict']!r} is not the combination of its checks' verdicts")
        for c in f["checks"]:
            cw = f"{where}, check {c.get('id')!r}"
            for key in ("id", "claim", "criterion", "verdict", "statistic", "per_config"):
                if key not in c:
                    raise ValueError(f"{cw}: missing {key!r}")
            if c["verdict"] not in VERDICTS:
                raise ValueError(f"{cw}: verdict {c['verdict']!r} is not one of {', '.join(VERDICTS)}")
            st = c["statistic"]
            if not _STAT_KEYS <= set(st) or len(st["ci"]) != 2:
                raise ValueError(f"{cw}: statistic needs {', '.join(sorted(_STAT_KEYS))} with a 2-element ci")
            lo, hi = st["ci"]
            v = st["value"]
            # A bootstrap percentile interval need not contain the point estimate.
            bootstrap = "bootstrap" in str(st.get("interval", ""))
            if None not in (lo, hi, v) and not bootstrap and not lo <= v <= hi:
                raise ValueError(f"{cw}: value {v} outside its interval [{lo}, {hi}]")
