"""Checking a seed's findings: paired confidence intervals and the ``findings.json`` format.

Every bundled study states its seed's findings as claims and checks each one on its own
data. The statistics are shared here, so that every study means the same thing by
"held".

**Paired comparisons.** Replication ``r`` of every configuration sees the same random
draws (common random numbers), so two variants (IW3 vs IW10, NewReno vs CUBIC, ...)
are compared run by run: :func:`paired` takes, for each replication, the difference
``test - ref`` (or ``(test - ref) / ref``) of a per-run metric in every configuration in
scope, averages those differences over the configurations (one value per
replication), and gives a Student-t interval over the replications
(:func:`estimate`). Replications are independent; configurations within one
replication share its draws, which is why they are pooled before the interval and
never counted as separate samples. A check holds when the interval lies on the
claimed side of 0 (:func:`below`, :func:`above`).

**The ``findings.json`` document** (:func:`document`; :func:`validate` checks it)::

    {"study": NAME, "seed_study": SEED FILE STEM, "level": 0.95,
     "replications": R, "links": [...], "params": {...}, "method": TEXT,
     "findings": [FINDING, ...], ...study-specific extras}

    FINDING = {"id", "claim", "held": true | false | null, "evaluated": bool,
               "criterion", "statistic": STATISTIC (the first check's), "checks": [CHECK, ...]}
    CHECK   = {"id", "claim", "criterion", "held": bool, "statistic": STATISTIC,
               "per_config": [{config columns..., "value", "ci", "n"}, ...], ...extras}
    STATISTIC = {"name", "unit", "value", "ci": [low, high], "level", "n_replications", ...}

A finding holds when every one of its checks holds; a finding with no check (its
links were not run) has ``held = null`` and ``evaluated = false``. NaN is written as
``null``.

Example:
    >>> import pandas as pd
    >>> rm = pd.DataFrame({"link": ["x"] * 6, "cc": ["a", "b"] * 3, "rep": [0, 0, 1, 1, 2, 2],
    ...                    "delay": [1.0, 2.0, 1.0, 2.1, 1.0, 1.9]})
    >>> pairs, est, per = paired(rm, "delay", "cc", "b", "a", {}, relative=False, unit=["link", "cc", "rep"])
    >>> round(est["value"], 3), est["n"], above(est)
    (1.0, 3, True)
    >>> c = check("H1a", "b delays more than a", "difference b - a; held if the CI is above 0",
    ...           "difference of delay, b - a", "s", est, above(est), per)
    >>> f = finding("H1", "b is slower", [c])
    >>> doc = document("demo", "999_x", {"reps": 3}, 3, ["x"], "paired", [f])
    >>> validate(doc); doc["findings"][0]["held"]
    True
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from tcplab import stats

__all__ = [
    "LEVEL",
    "METHOD",
    "estimate",
    "paired",
    "bootstrap_ratio",
    "below",
    "above",
    "count",
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
          "95% Student-t interval over replications unless a check says otherwise")


def estimate(values: Iterable[float]) -> dict[str, Any]:
    """Mean with a Student-t interval at :data:`LEVEL`: ``{"value", "ci", "n"}``.

    Example:
        >>> e = estimate([1.0, 2.0, 3.0])
        >>> e["value"], e["n"], [round(x, 3) for x in e["ci"]]   # 2 -+ 4.303 * 1 / sqrt(3)
        (2.0, 3, [-0.484, 4.484])
    """
    e = stats.mean_ci(np.asarray(list(values), dtype=float), LEVEL)
    return {"value": e.value, "ci": [e.low, e.high], "n": e.n}


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
        empty = {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}
        return pd.DataFrame(), empty, []
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
    ``seed``, so the interval is reproducible).

    Example:
        >>> r = bootstrap_ratio(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0]))
        >>> r["value"], r["ci"], r["n"]
        (0.5, [0.5, 0.5], 3)
    """
    n = len(num)
    total = float(den.sum())
    value = float(num.sum()) / total if total > 0 else math.nan
    if n < 2 or not total > 0:
        return {"value": value, "ci": [math.nan, math.nan], "n": n}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    dens = den[idx].sum(axis=1)
    ratios = np.where(dens > 0, num[idx].sum(axis=1) / np.where(dens > 0, dens, 1), np.nan)
    ratios = ratios[~np.isnan(ratios)]
    lo, hi = np.quantile(ratios, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2]) if len(ratios) else (math.nan, math.nan)
    return {"value": value, "ci": [float(lo), float(hi)], "n": n}


def below(est: dict[str, Any]) -> bool:
    """The interval lies entirely below 0 (and rests on at least 2 replications)."""
    return est["n"] >= 2 and est["ci"][1] < 0


def above(est: dict[str, Any]) -> bool:
    """The interval lies entirely above 0 (and rests on at least 2 replications)."""
    return est["n"] >= 2 and est["ci"][0] > 0


def count(per_config: list[dict[str, Any]], side: str) -> int:
    """Configurations whose own interval is ``below`` 0, ``above`` 0, or excludes 0 (``excl``)."""
    if side == "below":
        return sum(1 for c in per_config if c["n"] >= 2 and c["ci"][1] < 0)
    if side == "above":
        return sum(1 for c in per_config if c["n"] >= 2 and c["ci"][0] > 0)
    return sum(1 for c in per_config if c["n"] >= 2 and not (c["ci"][0] <= 0 <= c["ci"][1]) and c["value"] != 0)


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
        elif isinstance(v, (float, np.floating)):
            out[k] = num(v)
        elif isinstance(v, np.integer):
            out[k] = int(v)
        else:
            out[k] = v
    return out


def check(cid: str, claim: str, criterion: str, statistic: str, unit: str, est: dict[str, Any], held: bool,
          per_config: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """One check of a finding (see the module doc for the format).

    ``est`` is an estimate (``value``, ``ci``, ``n`` and optional extra keys, which are
    copied into the statistic); ``extra`` keys are added to the check itself.
    """
    return {"id": cid, "claim": claim, "criterion": criterion, "held": bool(held),
            "statistic": {"name": statistic, "unit": unit, "value": num(est["value"]), "ci": [num(v) for v in est["ci"]],
                          "level": LEVEL, "n_replications": int(est["n"]),
                          **{k: v for k, v in est.items() if k not in ("value", "ci", "n")}},
            "per_config": [clean(c) for c in (per_config or [])], **extra}


def finding(fid: str, claim: str, checks: list[dict[str, Any]],
            not_evaluated: str = "not evaluated: its links were not run") -> dict[str, Any]:
    """A finding: held when every check holds; ``held = None`` when it has no check."""
    evaluated = bool(checks)
    held = all(c["held"] for c in checks) if evaluated else None
    head = checks[0]["statistic"] if checks else {"name": None, "unit": None, "value": None, "ci": [None, None],
                                                  "level": LEVEL, "n_replications": 0}
    return {"id": fid, "claim": claim, "held": held, "evaluated": evaluated,
            "criterion": "held when every check below holds" if evaluated else not_evaluated,
            "statistic": head, "checks": checks}


def document(study: str, seed_study: str, params: dict[str, Any], replications: int, links: list[str],
             method: str, findings: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The ``findings.json`` document, keys in the order of the module doc."""
    return {"study": study, "seed_study": seed_study, "level": LEVEL, "replications": replications, "links": links,
            "params": params, "method": method, "findings": findings, **extra}


_STAT_KEYS = {"name", "unit", "value", "ci", "level", "n_replications"}


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
        for key in ("id", "claim", "held", "evaluated", "criterion", "statistic", "checks"):
            if key not in f:
                raise ValueError(f"{where}: missing {key!r}")
        if f["id"] in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(f["id"])
        if f["held"] not in (True, False, None) or f["evaluated"] != bool(f["checks"]):
            raise ValueError(f"{where}: held = {f['held']!r} and evaluated = {f['evaluated']!r} disagree with its checks")
        if f["evaluated"] and f["held"] != all(c["held"] for c in f["checks"]):
            raise ValueError(f"{where}: held must be true exactly when every check holds")
        for c in f["checks"]:
            cw = f"{where}, check {c.get('id')!r}"
            for key in ("id", "claim", "criterion", "held", "statistic", "per_config"):
                if key not in c:
                    raise ValueError(f"{cw}: missing {key!r}")
            if not isinstance(c["held"], bool):
                raise ValueError(f"{cw}: held must be true or false, got {c['held']!r}")
            st = c["statistic"]
            if not _STAT_KEYS <= set(st) or len(st["ci"]) != 2:
                raise ValueError(f"{cw}: statistic needs {', '.join(sorted(_STAT_KEYS))} with a 2-element ci")
            lo, hi = st["ci"]
            v = st["value"]
            # A bootstrap percentile interval need not contain the point estimate.
            bootstrap = "bootstrap" in str(st.get("interval", ""))
            if None not in (lo, hi, v) and not bootstrap and not lo <= v <= hi:
                raise ValueError(f"{cw}: value {v} outside its interval [{lo}, {hi}]")
