"""Analysis of study ``home-gateway``: summary tables, the fine sweep's shape, the time series.

The reference is seed 003 (``docs/seeds/003_c9c9fd5920f3a08e.txt``; Stewart et al.,
ACM MMSys 2011). Its "Detailed Simulation: Impact of Queue Size on Loss" slide sweeps
byte queues over [52 500, 67 500] B in 30 B steps and its summary says "Byte-based
queue sizes around integer multiples of TCP packet size correspond with lowest FB-Loose
loss & highest FB-Strict loss". This module measures that shape on the fine sweep's
voice-loss curves (:func:`fine_analysis`):

- where each curve has its extremum inside every 1500 B window centred on a multiple
  of the packet size (:func:`extremum_distance`; a window where the curve is flat has
  no extremum and is left out);
- the mean loss at limits closer to a multiple than a quarter packet against the mean
  at the others (:func:`band_halves`);
- the dominant period (:func:`dominant_period`) and the correlation of the FB-loose and
  FB-strict curves (:func:`curve_correlation`), tcplab's diagnostics.

Intervals are bootstrap percentiles over replications. Every bootstrap of one curve
with the same ``seed`` and the same number of replications draws the same resamples,
so statistics of the two TCPs (whose replication r shares its core seed) are resampled
together and their mean gets a proper interval (:func:`joint`).

It also reduces the time-series runs (ADSL1, 100 ms, 20 000 B; the seed's "Downstream
NewReno Behaviour" slide) to two numbers per run (:func:`series_stats`).

Example:
    >>> phase_distance(np.array([52_500.0, 52_800.0, 53_250.0]))
    array([  0., 300., 750.])
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies.home_gateway.config import (FINE_LINK, LINK_LABELS, PACKET_BYTES, SEMANTIC_LABELS, VARIANTS,
                                                StudyParams, voice_share)

__all__ = [
    "summary_table",
    "fine_curves",
    "owd_percentiles",
    "step_at",
    "series_stats",
    "periodogram",
    "dominant_period",
    "extremum_distance",
    "curve_correlation",
    "joint",
    "phase_distance",
    "band_halves",
    "fine_matrix",
    "candidate_periods",
    "fine_analysis",
    "periodicity_table",
]

#: Bootstrap resamples of the fine sweep's statistics (each with ``default_rng(0)``).
N_BOOT = 400


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means over replications with 95% Student-t half-widths."""
    cols = (("goodput_bps", "goodput (bit/s)"), ("voice_loss", "voice loss"), ("iowd_mean_s", "voice induced OWD (s)"),
            ("iowd_p95_s", "voice induced OWD p95 (s)"), ("voice_jitter_s", "voice jitter (s)"),
            ("q_mean_bytes", "queue mean (B)"), ("q_fill", "queue fill"), ("tcp_loss", "TCP packet loss"),
            ("voice_up_loss", "upstream voice loss"))
    cols = tuple((c, label) for c, label in cols if c in runs)
    keys = ["part", "link", "rtt_ms", "semantic", "limit", "cc"]
    if not len(runs):
        return pd.DataFrame()
    g = runs.groupby(keys, sort=False)
    mean, sd, n = g[[c for c, _ in cols]].mean(), g[[c for c, _ in cols]].std(ddof=1), g[[c for c, _ in cols]].count()
    tq = {k: stats.t_quantile(0.975, k - 1) if k >= 2 else math.nan for k in np.unique(n.to_numpy())}
    t = n.apply(lambda col: col.map(tq))
    half = t * sd / np.sqrt(n)
    out = mean.index.to_frame(index=False)
    out = pd.DataFrame({
        "part": out["part"], "link": out["link"].map(LINK_LABELS), "RTT (ms)": out["rtt_ms"].astype(int),
        "queue": out["semantic"].map(SEMANTIC_LABELS),
        "limit": [f"{int(l)} {'pkt' if s_ == 'slot' else 'B'}" for l, s_ in zip(out["limit"], out["semantic"])],
        "TCP": out["cc"].map({v.name: v.label for v in VARIANTS}), "reps": g.size().to_numpy()})
    for col, label in cols:
        out[label] = mean[col].to_numpy()
        out[label + " ±"] = half[col].to_numpy()
    return out


def fine_curves(runs: pd.DataFrame) -> pd.DataFrame:
    """The fine sweep per semantic, TCP and limit: mean voice loss, its 5th/95th percentiles over replications."""
    fine = runs[runs["part"] == "fine"]
    if not len(fine):
        return pd.DataFrame(columns=["semantic", "cc", "limit", "nominal_bytes", "loss_mean", "loss_p5", "loss_p95", "n"])
    g = fine.groupby(["semantic", "cc", "limit", "nominal_bytes"], sort=False)["voice_loss"]
    out = g.agg(loss_mean="mean", n="count").reset_index()
    out["loss_p5"] = g.quantile(0.05).to_numpy()
    out["loss_p95"] = g.quantile(0.95).to_numpy()
    return out[["semantic", "cc", "limit", "nominal_bytes", "loss_mean", "loss_p5", "loss_p95", "n"]]


def owd_percentiles(owd: pd.DataFrame, qs: Sequence[float] = (50, 90, 95, 99)) -> pd.DataFrame:
    """Percentiles of every downstream voice packet's induced one-way delay (40 000 B FB-loose), per link, RTT, TCP."""
    rows = []
    if not len(owd):
        return pd.DataFrame(columns=["link", "rtt_ms", "cc", "packets", "mean_s", *[f"p{int(q)}_s" for q in qs], "max_s"])
    for (link, rtt, cc), part in owd.groupby(["link", "rtt_ms", "cc"], sort=False):
        v = part["iowd_s"].to_numpy(np.float64)
        rows.append({"link": link, "rtt_ms": int(rtt), "cc": cc, "packets": len(v), "mean_s": float(v.mean()),
                     **{f"p{int(q)}_s": float(np.percentile(v, q)) for q in qs}, "max_s": float(v.max())})
    return pd.DataFrame(rows)


# ---- the time series ----------------------------------------------------------------------


def step_at(t: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """A step function (value ``v[i]`` from ``t[i]`` on) read at the times ``grid`` (``nan`` before ``t[0]``).

    Example:
        >>> step_at(np.array([1.0, 2.0]), np.array([10, 20]), np.array([0.5, 1.0, 1.5, 2.5]))
        array([nan, 10., 10., 20.])
    """
    i = np.searchsorted(t, grid, side="right") - 1
    out = v[np.clip(i, 0, None)].astype(float)
    out[i < 0] = np.nan
    return out


def series_stats(cwnd_t: np.ndarray, cwnd_bytes: np.ndarray, state: np.ndarray, queue_t: np.ndarray,
                 queue_bytes: np.ndarray, t0: float, t1: float, grid_s: float) -> dict[str, float]:
    """How a run's congestion window and downstream queue move together over ``[t0, t1)`` (s).

    - ``coupling_r``: Pearson correlation of the cwnd and the queue occupancy (bytes),
      both read as step functions on a ``grid_s`` grid. The queue's occupancy over the
      link rate is the induced queuing delay, so this is the correlation of the cwnd
      with the queuing delay.
    - ``backoffs``: the congestion window's reductions, counted as entries into
      recovery or loss (``state`` 0 -> 1 or 2; one per congestion event).

    Example:
        >>> t = np.arange(0.0, 10.0, 0.5)
        >>> saw = np.tile([1.0, 2.0, 3.0, 4.0], 5) * 10_000      # rises 4 steps, then halves
        >>> st = np.tile([1, 0, 0, 0], 5)                         # recovery at each fall
        >>> d = series_stats(t, saw, st, t, saw / 2, 1.0, 10.0, 0.01)
        >>> round(d["coupling_r"], 6), d["backoffs"]
        (1.0, 4.0)
    """
    grid = np.arange(t0, t1, grid_s)
    c = step_at(np.asarray(cwnd_t, float), np.asarray(cwnd_bytes, float), grid)
    q = step_at(np.asarray(queue_t, float), np.asarray(queue_bytes, float), grid)
    ok = ~(np.isnan(c) | np.isnan(q))
    r = math.nan
    if ok.sum() > 2 and np.ptp(c[ok]) > 0 and np.ptp(q[ok]) > 0:
        r = float(np.corrcoef(c[ok], q[ok])[0, 1])
    s = np.asarray(state)
    t = np.asarray(cwnd_t, float)
    entering = (s[1:] != 0) & (s[:-1] == 0) & (t[1:] >= t0) & (t[1:] < t1)
    return {"coupling_r": r, "backoffs": float(entering.sum())}


# ---- the fine sweep's shape --------------------------------------------------------------


def _detrend(curves: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Each curve minus its least-squares straight line over ``limits`` (a trend would leak into long periods)."""
    x = (limits - limits.mean()) / (np.ptp(limits) or 1.0)
    y = curves - curves.mean(axis=1, keepdims=True)
    slope = (y @ x) / float(x @ x)
    return y - slope[:, None] * x[None, :]


def periodogram(limits: np.ndarray, curves: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Amplitude of the sinusoid of each period in each linearly detrended curve: ``2/N |sum y e^{-2 pi i L / P}|``.

    ``curves`` is (k, N) over the N ``limits``; returns (k, len(periods)). A pure
    sinusoid of amplitude A whose cycles fit the span gives A.

    Example:
        >>> L = np.arange(0, 15_000, 30.0)
        >>> amp = periodogram(L, 0.01 * np.cos(2 * np.pi * L / 1500)[None, :], np.array([1000.0, 1500.0]))
        >>> np.round(amp, 4).tolist()
        [[0.0, 0.01]]
    """
    y = _detrend(np.atleast_2d(curves), limits)
    basis = np.exp(-2j * np.pi * limits[None, :] / periods[:, None])  # (P, N)
    return 2.0 / limits.size * np.abs(y @ basis.T)


def candidate_periods(limits: np.ndarray, packet: int = PACKET_BYTES) -> np.ndarray | None:
    """Periods searched: from packet/2.5 to half the span, 1 B apart; None when the sweep cannot resolve the packet.

    Example:
        >>> candidate_periods(np.arange(52_500, 67_501, 1500.0)) is None   # one point per packet
        True
    """
    step = float(np.min(np.diff(limits))) if limits.size > 1 else math.inf
    span = float(limits.max() - limits.min()) if limits.size > 1 else 0.0
    if step > packet / 4 or span < 2 * packet:
        return None
    return np.arange(max(packet / 2.5, 4 * step), span / 2 + 1, 1.0)


def _bootstrap(per_rep: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int
               ) -> tuple[float, list[float], np.ndarray]:
    """``statistic`` of the replication-mean curve, its 2.5/97.5 percentiles over resampled replications, and the
    resampled values themselves (NaN where undefined; resample i is the same draw for every call with the same
    ``seed``, ``n_boot`` and number of replications).

    ``statistic`` maps a (k, N) array of curves to k values (NaN: undefined for that curve).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(statistic(per_rep.mean(axis=0)[None, :])[0])
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, per_rep.shape[0], size=(n_boot, per_rep.shape[0]))
        boots = np.asarray(statistic(per_rep[idx].mean(axis=1)), dtype=float)
    ok = boots[~np.isnan(boots)]
    lo, hi = np.quantile(ok, [0.025, 0.975]) if len(ok) else (math.nan, math.nan)
    return value, [float(lo), float(hi)], boots


def _interval(n_boot: int, seed: int) -> str:
    return f"bootstrap percentile over replications ({n_boot} resamples, seed {seed})"


def dominant_period(limits: Sequence[float], per_rep: np.ndarray, packet: int = PACKET_BYTES, n_boot: int = N_BOOT,
                    seed: int = 0) -> dict[str, Any] | None:
    """The strongest period of the replication-mean curve, with a bootstrap interval over replications.

    ``per_rep`` is (replications, limits). The period is the peak of :func:`periodogram`
    (a 15 B grid, then 1 B around its peak); the interval is the 2.5/97.5 percentiles
    of the peak over ``n_boot`` resamples of the replications (``default_rng(seed)``).
    ``resolution`` = packet^2 / span is the periodogram's main-lobe half-width at the
    packet size. Returns None when the sweep cannot resolve a period of ``packet``
    (steps over packet/4, or a span under two packets).

    Example:
        >>> L = np.arange(52_500, 67_501, 30.0)
        >>> rng = np.random.default_rng(1)
        >>> reps = 0.02 + 0.004 * np.sin(2 * np.pi * L / 1500) + rng.normal(0, 0.004, (10, L.size))
        >>> d = dominant_period(L, reps)
        >>> abs(d["value"] - 1500) <= 15, d["ci"][0] <= 1500 <= d["ci"][1], d["resolution"]
        (True, True, 150.0)
    """
    L = np.asarray(limits, dtype=float)
    periods = candidate_periods(L, packet)
    if periods is None or per_rep.shape[0] < 2:
        return None
    coarse = periods[::15]
    basis = np.exp(-2j * np.pi * L[None, :] / coarse[:, None])
    fine_basis: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # coarse peak -> (periods, basis) around it

    def peaks(curves: np.ndarray) -> np.ndarray:
        y = _detrend(curves, L)
        best = coarse[np.argmax(np.abs(y @ basis.T), axis=1)]
        out = np.empty(len(curves))
        for b in np.unique(best):
            if b not in fine_basis:
                near = periods[(periods >= b - 15) & (periods <= b + 15)]
                fine_basis[b] = (near, np.exp(-2j * np.pi * L[None, :] / near[:, None]))
            near, nb = fine_basis[b]
            rows = best == b
            out[rows] = near[np.argmax(np.abs(y[rows] @ nb.T), axis=1)]
        return out

    value, ci, boots = _bootstrap(per_rep, peaks, n_boot, seed)
    amp = periodogram(L, per_rep.mean(axis=0)[None, :], np.array([value, float(packet), 2.0 * packet]))[0]
    return {"value": value, "ci": ci, "n": int(per_rep.shape[0]), "resolution": packet ** 2 / float(np.ptp(L)),
            "amplitude": float(amp[0]), "amplitude_at_packet": float(amp[1]), "amplitude_at_2_packets": float(amp[2]),
            "interval": _interval(n_boot, seed), "_boots": boots}


def _plateau_centres(L: np.ndarray, curves: np.ndarray, kind: str) -> np.ndarray:
    """Per curve, where it is largest (``max``) or smallest (``min``): the mean position of the tied points
    (the curves are step-like, so an extremum is often a plateau); NaN for a flat curve (no extremum)."""
    target = curves.max(axis=1, keepdims=True) if kind == "max" else curves.min(axis=1, keepdims=True)
    tied = np.isclose(curves, target, rtol=0, atol=1e-12)
    centre = (tied * L[None, :]).sum(axis=1) / tied.sum(axis=1)
    flat = np.ptp(curves, axis=1) <= 1e-12
    return np.where(flat, np.nan, centre)


def _windows(L: np.ndarray, packet: int) -> list[tuple[float, np.ndarray]]:
    """The windows [k x packet - packet/2, k x packet + packet/2) that lie inside the sweep, with their centres."""
    ks = [k for k in range(int(np.ceil((L.min() + packet / 2) / packet)), int(L.max() // packet) + 1)
          if k * packet + packet / 2 <= L.max() + 1e-9]
    return [(k * packet, (L >= k * packet - packet / 2) & (L < k * packet + packet / 2)) for k in ks]


def extremum_distance(limits: Sequence[float], per_rep: np.ndarray, kind: str, packet: int = PACKET_BYTES,
                      n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any] | None:
    """How far the curve's extrema lie from integer multiples of the packet size.

    For each multiple k x packet whose window [k x packet - packet/2, k x packet +
    packet/2) lies inside the sweep, the position of the replication-mean curve's
    maximum (``kind = "max"``) or minimum (``"min"``) in that window (the middle of a
    plateau); the statistic is the mean distance of those positions to k x packet,
    with a bootstrap interval over replications. A window where the curve is flat has
    no extremum and does not count (a flat window would otherwise put its "extremum"
    in its middle, on the multiple). Extrema placed at random would give packet/4 on
    average.

    Example:
        >>> L = np.arange(52_500, 67_501, 30.0)
        >>> spikes = np.where(np.mod(L, 1500) == 60, 1.0, 0.0)   # a spike 60 B after each multiple
        >>> extremum_distance(L, np.vstack([spikes, spikes]), "max")["value"]
        60.0
        >>> extremum_distance(L, np.zeros((2, L.size)), "max")["value"]   # flat everywhere: no extremum
        nan
    """
    L = np.asarray(limits, dtype=float)
    windows = _windows(L, packet)
    if len(windows) < 2 or per_rep.shape[0] < 2 or candidate_periods(L, packet) is None:
        return None

    def mean_distance(curves: np.ndarray) -> np.ndarray:
        d = np.array([np.abs(_plateau_centres(L[w], curves[:, w], kind) - centre) for centre, w in windows])
        counted = (~np.isnan(d)).sum(axis=0)
        return np.where(counted > 0, np.nansum(d, axis=0) / np.maximum(counted, 1), np.nan)

    value, ci, boots = _bootstrap(per_rep, mean_distance, n_boot, seed)
    mean = per_rep.mean(axis=0)[None, :]
    positions = [float(_plateau_centres(L[w], mean[:, w], kind)[0]) - c for c, w in windows]
    return {"value": value, "ci": ci, "n": int(per_rep.shape[0]), "windows": len(windows),
            "windows_with_extremum": int(sum(not math.isnan(x) for x in positions)),
            "offsets_B": [None if math.isnan(x) else round(x, 1) for x in positions],
            "random_expectation_B": packet / 4, "interval": _interval(n_boot, seed), "_boots": boots}


def curve_correlation(a_per_rep: np.ndarray, b_per_rep: np.ndarray, n_boot: int = N_BOOT, seed: int = 0
                      ) -> dict[str, Any]:
    """Pearson correlation of two replication-mean curves over the same limits, bootstrap over replications.

    Replication r of both curves ran with the same core seed, so they are resampled
    together. A flat curve (a resample without any loss) has no correlation (NaN).

    Example:
        >>> x = np.linspace(0, 10, 50)
        >>> a = np.vstack([np.sin(x), np.sin(x) + 0.01]); b = -a
        >>> round(curve_correlation(a, b)["value"], 6)
        -1.0
    """
    both = np.concatenate([a_per_rep, b_per_rep], axis=1)
    n = a_per_rep.shape[1]

    def corr(curves: np.ndarray) -> np.ndarray:
        a = curves[:, :n] - curves[:, :n].mean(axis=1, keepdims=True)
        b = curves[:, n:] - curves[:, n:].mean(axis=1, keepdims=True)
        den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)

    value, ci, boots = _bootstrap(both, corr, n_boot, seed)
    return {"value": value, "ci": ci, "n": int(a_per_rep.shape[0]), "interval": _interval(n_boot, seed),
            "_boots": boots}


def joint(ests: Sequence[dict[str, Any]], shift: float = 0.0) -> dict[str, Any]:
    """The mean of several bootstrapped statistics (minus ``shift``), with its own percentile interval.

    The estimates must come from bootstraps drawn alike (same ``seed``, ``n_boot`` and
    number of replications), so resample i is the same set of replications in each:
    the mean is taken resample by resample, never by averaging interval bounds.

    Example:
        >>> a = {"value": 1.0, "n": 3, "interval": "x", "_boots": np.array([0.0, 1.0, 2.0, 3.0])}
        >>> b = {"value": 3.0, "n": 3, "interval": "x", "_boots": np.array([2.0, 3.0, 4.0, np.nan])}
        >>> j = joint([a, b])
        >>> j["value"], j["n"], [round(x, 3) for x in j["ci"]]     # resample 4 is undefined in b: dropped
        (2.0, 3, [1.05, 2.95])
    """
    boots = np.mean(np.vstack([e["_boots"] for e in ests]), axis=0) - shift
    ok = boots[~np.isnan(boots)]
    lo, hi = np.quantile(ok, [0.025, 0.975]) if len(ok) else (math.nan, math.nan)
    return {"value": float(np.mean([e["value"] for e in ests])) - shift, "ci": [float(lo), float(hi)],
            "n": int(min(e["n"] for e in ests)), "interval": ests[0]["interval"] + ", resampled jointly"}


def phase_distance(limits: np.ndarray, packet: int = PACKET_BYTES) -> np.ndarray:
    """Distance (B) of each limit to the nearest integer multiple of ``packet``."""
    r = np.mod(limits, packet)
    return np.minimum(r, packet - r)


def band_halves(wide: pd.DataFrame, packet: int = PACKET_BYTES) -> tuple[pd.Series, pd.Series]:
    """Per replication: mean loss over the limits closer than packet/4 to a multiple of ``packet`` ("around" a
    multiple), and over the others (closer to a midpoint between two multiples). On a sweep in steps that
    divide the packet, each half holds half of the phases.

    Example:
        >>> L = np.array([52_500, 52_800, 52_950, 53_250, 53_700, 53_800])   # distances 0, 300, 450, 750, 300, 200
        >>> near, far = band_halves(pd.DataFrame([[1.0, 2.0, 10.0, 20.0, 3.0, 4.0]], columns=L))
        >>> near.tolist(), far.tolist()
        ([2.5], [15.0])
    """
    dist = phase_distance(wide.columns.to_numpy(dtype=float), packet)
    return wide.loc[:, dist < packet / 4].mean(axis=1), wide.loc[:, dist >= packet / 4].mean(axis=1)


def fine_matrix(runs: pd.DataFrame, semantic: str, cc: str | None) -> tuple[np.ndarray, pd.DataFrame]:
    """The fine sweep's voice loss as (replications x limits) for one semantic and TCP."""
    sub = runs[(runs["part"] == "fine") & (runs["semantic"] == semantic)]
    if cc is not None:
        sub = sub[sub["cc"] == cc]
    wide = sub.pivot_table(index="rep", columns="limit", values="voice_loss", aggfunc="mean")
    return wide.columns.to_numpy(dtype=float), wide


def fine_analysis(runs: pd.DataFrame, params: StudyParams, n_boot: int = N_BOOT) -> dict[str, Any]:
    """The fine sweep's shape, computed once: per byte semantic and TCP, the dominant period, the extremum
    distance and the per-replication band means; per TCP, the FB-loose/FB-strict correlation (each with
    ``n_boot`` bootstrap resamples of the replications, drawn alike)."""
    out: dict[str, Any] = {"curves": {}, "correlation": {}}
    if not (runs["part"] == "fine").any():
        return out
    share = voice_share(FINE_LINK, params.scenario_dir())
    out["voice_share"] = share
    out["period_with_voice_B"] = PACKET_BYTES / (1 - share)
    for v in VARIANTS:
        mats = {}
        for sem in ("byte_loose", "byte_strict"):
            L, wide = fine_matrix(runs, sem, v.name)
            if len(wide) < 2 or candidate_periods(L, PACKET_BYTES) is None:
                continue
            mats[sem] = wide
            per = wide.to_numpy()
            near, far = band_halves(wide)
            out["curves"][(sem, v.name)] = {
                "limits": L, "period": dominant_period(L, per, n_boot=n_boot),
                "extremum": extremum_distance(L, per, "min" if sem == "byte_loose" else "max", n_boot=n_boot),
                "near": near, "far": far}
        if len(mats) == 2 and mats["byte_loose"].index.equals(mats["byte_strict"].index) and \
                mats["byte_loose"].columns.equals(mats["byte_strict"].columns):
            out["correlation"][v.name] = curve_correlation(mats["byte_loose"].to_numpy(),
                                                           mats["byte_strict"].to_numpy(), n_boot=n_boot)
    return out


def periodicity_table(fa: dict[str, Any]) -> pd.DataFrame:
    """The fine sweep's shape per byte semantic and TCP (from :func:`fine_analysis`)."""
    rows = []
    for (sem, cc), c in fa.get("curves", {}).items():
        d, e = c["period"] or {}, c["extremum"] or {}
        corr = fa["correlation"].get(cc, {})
        rows.append({"semantic": sem, "cc": cc, "reps": d.get("n"), "period_B": d.get("value"),
                     "period_ci_low_B": (d.get("ci") or [None, None])[0], "period_ci_high_B": (d.get("ci") or [None, None])[1],
                     "resolution_B": d.get("resolution"), "period_with_voice_B": fa.get("period_with_voice_B"),
                     "amplitude": d.get("amplitude"), "amplitude_at_1500": d.get("amplitude_at_packet"),
                     "amplitude_at_3000": d.get("amplitude_at_2_packets"),
                     "extremum": "min" if sem == "byte_loose" else "max", "extremum_distance_B": e.get("value"),
                     "extremum_ci_low_B": (e.get("ci") or [None, None])[0],
                     "extremum_ci_high_B": (e.get("ci") or [None, None])[1],
                     "extremum_offsets_B": json.dumps(e.get("offsets_B")),
                     "loss_near_multiples": float(c["near"].mean()), "loss_far_from_multiples": float(c["far"].mean()),
                     "corr_loose_strict": corr.get("value")})
    return pd.DataFrame(rows)
