"""Statistics over replications and flows.

- Confidence intervals: Student-t for means (the t quantile is computed here from the
  regularized incomplete beta function, Numerical Recipes §6.4, so scipy is not
  needed), and the bootstrap percentile method for medians and other percentiles,
  with a seeded ``numpy.random.Generator`` so a report is reproducible.
- Empirical CDFs, Jain's fairness index (Jain, Chiu, Hawe 1984:
  ``J = (sum x)^2 / (n * sum x^2)``).
- Seed 002's relative throughput, computed flow by flow across paired runs:
  ``R = (1/N) * sum_i T_i(test) / T_i(reference)`` where flow ``i`` is the same flow
  (same name, same seed) in the two runs (common random numbers).
- Loss rate at a queue and link utilisation.

A report's summaries take one value per replication and an interval over replications
(:func:`tcplab.report.over_replications`, with the studies' :func:`tcplab.studies.findings.estimate`):
the flows of one run are not independent samples.

Example:
    >>> round(t_quantile(0.975, 4), 4)
    2.7764
    >>> est = mean_ci([1, 2, 3, 4, 5])
    >>> round(est.value, 4), round(est.low, 4), round(est.high, 4)
    (3.0, 1.0368, 4.9632)
    >>> round(jain_index([1, 2, 3]), 6)
    0.857143
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "Estimate",
    "t_quantile",
    "t_cdf",
    "mean_ci",
    "percentile_ci",
    "median_ci",
    "ecdf",
    "jain_index",
    "paired_ratios",
    "relative_throughput",
    "loss_rate",
    "utilisation",
]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval (``low``, ``high``) and sample size."""

    value: float
    low: float
    high: float
    n: int
    level: float = 0.95


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t with ``df`` degrees of freedom.

    ``P(T <= t) = 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2`` for t >= 0.

    Example:
        >>> round(t_cdf(0.0, 3), 12), round(t_cdf(12.7062, 1), 4)
        (0.5, 0.975)
    """
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (inverse of :func:`t_cdf`, by bisection).

    Cached by ``(p, df)``: a study asks for the same few quantiles thousands of times,
    and each bisection costs about a millisecond.

    Example:
        >>> [round(t_quantile(0.975, df), 3) for df in (1, 2, 10, 30)]
        [12.706, 4.303, 2.228, 2.042]
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def _clean(x: Iterable[float]) -> np.ndarray:
    arr = np.asarray(list(x) if not isinstance(x, (np.ndarray, pd.Series)) else x, dtype=float)
    return arr[~np.isnan(arr)]


def mean_ci(x: Iterable[float], level: float = 0.95) -> Estimate:
    """Mean with a Student-t confidence interval (NaNs dropped; n < 2 gives NaN bounds).

    Hand-worked: x = 1..5, mean 3, s = sqrt(2.5) = 1.5811, se = s/sqrt(5) = 0.7071,
    t(0.975, 4) = 2.7764, half-width = 1.9632.

    Example:
        >>> mean_ci([2.0, 2.0, 2.0])
        Estimate(value=2.0, low=2.0, high=2.0, n=3, level=0.95)
    """
    a = _clean(x)
    n = len(a)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, level)
    m = float(a.mean())
    if n < 2:
        return Estimate(m, math.nan, math.nan, n, level)
    half = t_quantile(0.5 + level / 2.0, n - 1) * float(a.std(ddof=1)) / math.sqrt(n)
    return Estimate(m, m - half, m + half, n, level)


def percentile_ci(
    x: Iterable[float], q: float, level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> Estimate:
    """The ``q``-th percentile (0-100) with a bootstrap percentile-method interval.

    The resamples come from ``numpy.random.default_rng(seed)``, so the interval is
    reproducible.

    Example:
        >>> est = percentile_ci(range(1, 101), 50)
        >>> est.value, est.low <= 50.5 <= est.high
        (50.5, True)
    """
    a = _clean(x)
    n = len(a)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, level)
    value = float(np.percentile(a, q))
    if n < 2:
        return Estimate(value, math.nan, math.nan, n, level)
    rng = np.random.default_rng(seed)
    samples = a[rng.integers(0, n, size=(n_boot, n))]
    stats = np.percentile(samples, q, axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return Estimate(value, float(low), float(high), n, level)


def median_ci(x: Iterable[float], level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> Estimate:
    """Median with a bootstrap interval (see :func:`percentile_ci`)."""
    return percentile_ci(x, 50.0, level, n_boot, seed)


def ecdf(x: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values and F(x_i) = i/n (NaNs dropped).

    Example:
        >>> xs, ps = ecdf([3, 1, 2])
        >>> xs.tolist(), [round(float(p), 3) for p in ps]
        ([1.0, 2.0, 3.0], [0.333, 0.667, 1.0])
    """
    a = np.sort(_clean(x))
    return a, np.arange(1, len(a) + 1) / max(len(a), 1)


def jain_index(x: Iterable[float]) -> float:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)``, in [1/n, 1]; NaN if all zero.

    Example:
        >>> jain_index([5, 5, 5, 5]), jain_index([1, 0, 0, 0])
        (1.0, 0.25)
    """
    a = _clean(x)
    sq = float((a * a).sum())
    if len(a) == 0 or sq == 0.0:
        return math.nan
    return float(a.sum()) ** 2 / (len(a) * sq)


def paired_ratios(
    test: pd.DataFrame,
    reference: pd.DataFrame,
    on: Sequence[str] = ("seed", "name"),
    value: str = "goodput_bps",
) -> pd.DataFrame:
    """Flow-by-flow ratios test/reference, pairing rows that agree on ``on``.

    Rows without a partner are left out; a zero reference gives NaN (and is then
    ignored by :func:`relative_throughput`).

    Example:
        >>> t = pd.DataFrame({"seed": [0, 0], "name": ["a", "b"], "goodput_bps": [2.0, 3.0]})
        >>> r = pd.DataFrame({"seed": [0, 0], "name": ["a", "b"], "goodput_bps": [1.0, 6.0]})
        >>> paired_ratios(t, r)["ratio"].tolist()
        [2.0, 0.5]
    """
    keys = [k for k in on if k in test.columns and k in reference.columns]
    if not keys:
        raise ValueError(f"no pairing column among {list(on)} in both tables")
    m = test[keys + [value]].merge(reference[keys + [value]], on=keys, suffixes=("_test", "_ref"), validate="one_to_one")
    ref = m[f"{value}_ref"].astype(float)
    m["ratio"] = m[f"{value}_test"].astype(float) / ref.where(ref != 0.0)
    return m


def relative_throughput(
    test: pd.DataFrame,
    reference: pd.DataFrame,
    on: Sequence[str] = ("seed", "name"),
    value: str = "goodput_bps",
) -> float:
    """Seed 002's relative throughput: the mean over flows of T_i(test) / T_i(reference).

    The same formula gives Reno's degradation when ``test`` is Reno coexisting with
    high-speed flows and ``reference`` Reno coexisting with Reno.

    Example:
        >>> t = pd.DataFrame({"seed": [0, 0], "name": ["a", "b"], "goodput_bps": [2.0, 3.0]})
        >>> r = pd.DataFrame({"seed": [0, 0], "name": ["a", "b"], "goodput_bps": [1.0, 6.0]})
        >>> relative_throughput(t, r)   # (2/1 + 3/6) / 2
        1.25
    """
    ratios = paired_ratios(test, reference, on, value)["ratio"].dropna()
    return float(ratios.mean()) if len(ratios) else math.nan


_DROP_COLUMNS = ("drops_overflow", "drops_early", "drops_forced", "drops_corruption")


def loss_rate(queues: pd.DataFrame) -> pd.Series:
    """Packet loss rate per queue row: drops / arrivals.

    Arrivals are the enqueued packets plus the ones refused by the queue (overflow,
    early, forced); corruption drops happen after the queue, so they are counted in
    the drops but already in ``enq_pkts``.

    Example:
        >>> q = pd.DataFrame({"enq_pkts": [90], "drops_overflow": [10], "drops_early": [0],
        ...                   "drops_forced": [0], "drops_corruption": [5]})
        >>> loss_rate(q).tolist()   # (10 + 5) / (90 + 10)
        [0.15]
    """
    refused = queues[["drops_overflow", "drops_early", "drops_forced"]].sum(axis=1)
    drops = refused + queues["drops_corruption"]
    arrivals = (queues["enq_pkts"] + refused).astype(float)
    return (drops / arrivals.where(arrivals > 0)).rename("loss_rate")


def utilisation(links: pd.DataFrame, duration_s: float | None = None) -> pd.Series:
    """Link utilisation: the core's column, or ``tx_bytes * 8 / (rate * duration)``.

    Both cover the run's measurement window: ``tx_bytes`` counts the window, so
    ``duration_s`` should be its length (``window_end_s - window_start_s``).

    Example:
        >>> links = pd.DataFrame({"rate_bps": [1000], "tx_bytes": [100], "utilisation": [0.8]})
        >>> utilisation(links).tolist(), utilisation(links, duration_s=1.0).tolist()
        ([0.8], [0.8])
    """
    if duration_s is None:
        return links["utilisation"].astype(float).rename("utilisation")
    return (links["tx_bytes"] * 8.0 / (links["rate_bps"] * duration_s)).astype(float).rename("utilisation")
