"""Figures from result tables.

Every function takes DataFrames in the documented schema (:mod:`tcplab.results`,
plus parameter columns for sweeps) and returns a new ``matplotlib.figure.Figure``
drawn on the Agg canvas. Nothing touches pyplot's global state: figures are created
directly, styled inside ``matplotlib.rc_context`` (publication defaults: 300 dpi
output, readable fonts, light grid, colour-blind-safe cycle), and never registered
with a figure manager, so many can be drawn in parallel processes or threads.

Plots: CDFs per group/variant (:func:`cdf`), cwnd/ssthresh and queue occupancy time
series (:func:`cwnd_series`, :func:`queue_series`), one-way-delay CDFs
(:func:`owd_cdf`), bars with CI whiskers (:func:`bars_with_ci`) and parameter-sweep
curves with confidence envelopes (:func:`sweep_curve`).

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"elapsed_s": [1.0, 2.0, 3.0, 1.5], "group": ["a", "a", "b", "b"]})
    >>> fig = cdf(df, "elapsed_s", by=["group"], xlabel="elapsed time (s)")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['a', 'b']
    >>> len(png_bytes(fig)) > 1000
    True
"""

from __future__ import annotations

import base64
import io
from typing import Any, Iterable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab import stats, units

__all__ = [
    "STYLE",
    "new_figure",
    "cdf",
    "cwnd_series",
    "queue_series",
    "owd_cdf",
    "bars_with_ci",
    "sweep_curve",
    "numeric_values",
    "png_bytes",
    "png_base64",
]

#: Publication defaults, applied only while a figure is being built.
STYLE: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.4,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    # Okabe-Ito, distinguishable with the common colour-vision deficiencies.
    "axes.prop_cycle": matplotlib.cycler(
        color=["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
    ),
}


def new_figure(width: float = 5.0, height: float = 3.2) -> tuple[Figure, Any]:
    """A Figure with one Axes on an Agg canvas, styled with :data:`STYLE`."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    return fig, ax


def _label(key: Any, by: Sequence[str]) -> str:
    key = key if isinstance(key, tuple) else (key,)
    if len(by) == 1:
        return str(key[0]) if str(key[0]) else "(no group)"
    return ", ".join(f"{b}={k}" for b, k in zip(by, key))


def _groups(df: pd.DataFrame, by: Sequence[str] | None) -> list[tuple[str, pd.DataFrame]]:
    if not by:
        return [("all", df)]
    return [(_label(k, by), part) for k, part in df.groupby(list(by), sort=True, dropna=False)]


def cdf(
    df: pd.DataFrame, value: str, by: Sequence[str] | None = None, xlabel: str | None = None,
    title: str | None = None, logx: bool = False,
) -> Figure:
    """Empirical CDFs of ``value``, one step curve per group (e.g. group and variant)."""
    fig, ax = new_figure()
    with matplotlib.rc_context(STYLE):
        for label, part in _groups(df, by):
            xs, ps = stats.ecdf(part[value])
            if len(xs):
                ax.step(np.concatenate([[xs[0]], xs]), np.concatenate([[0.0], ps]), where="post", label=label)
        ax.set_xlabel(xlabel or value)
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        if logx:
            ax.set_xscale("log")
        if title:
            ax.set_title(title)
        if by:
            ax.legend(loc="lower right", frameon=False)
    return fig


def cwnd_series(series: pd.DataFrame, flows: pd.DataFrame | None = None, max_flows: int = 6) -> Figure:
    """cwnd (solid) and ssthresh (dashed) over time, in kB, for the first ``max_flows`` flows."""
    fig, ax = new_figure(6.0, 3.2)
    names = {}
    if flows is not None and "flow_id" in flows and "name" in flows:
        names = dict(zip(flows["flow_id"], flows["name"]))
    with matplotlib.rc_context(STYLE):
        for i, (fid, part) in enumerate(series.groupby("flow_id", sort=True)):
            if i >= max_flows:
                break
            part = part.sort_values("t_s")
            line = ax.step(part["t_s"], part["cwnd_bytes"] / 1e3, where="post", label=f"{names.get(fid, fid)} cwnd")[0]
            ss = part["ssthresh_bytes"].astype(float)
            ss = ss.where(ss < 1e15)  # "unbounded" is not drawn
            if ss.notna().any():
                ax.step(part["t_s"], ss / 1e3, where="post", linestyle="--", color=line.get_color(), alpha=0.7,
                        label=f"{names.get(fid, fid)} ssthresh")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("window (kB)")
        ax.set_title("cwnd and ssthresh")
        ax.legend(loc="upper right", frameon=False, ncols=2)
    return fig


def queue_series(series: pd.DataFrame, links: Iterable[str] | None = None) -> Figure:
    """Queue occupancy (packets) over time, one step curve per link."""
    fig, ax = new_figure(6.0, 3.0)
    wanted = set(links) if links is not None else None
    with matplotlib.rc_context(STYLE):
        for link, part in series.groupby("link", sort=True):
            if wanted is not None and link not in wanted:
                continue
            part = part.sort_values("t_s")
            ax.step(part["t_s"], part["pkts"], where="post", label=str(link))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue (packets)")
        ax.set_title("queue occupancy")
        ax.legend(loc="upper right", frameon=False)
    return fig


def owd_cdf(series: pd.DataFrame, flows: pd.DataFrame | None = None, by: str = "name") -> Figure:
    """CDF of per-packet one-way delay (ms), per flow (or per ``by`` column of ``flows``)."""
    df = series
    if flows is not None and by in flows and "flow_id" in flows:
        df = series.merge(flows[["flow_id", by]].drop_duplicates("flow_id"), on="flow_id", how="left")
    else:
        by = "flow_id"
    df = df.assign(owd_ms=df["owd_s"] * 1e3)
    return cdf(df, "owd_ms", by=[by], xlabel="one-way delay (ms)", title="one-way delay")


def bars_with_ci(
    summary: pd.DataFrame, label: str, value: str = "mean", low: str = "mean_low", high: str = "mean_high",
    ylabel: str | None = None, title: str | None = None, scale: float = 1.0,
) -> Figure:
    """Bars of ``value`` with whiskers from ``low`` to ``high`` (e.g. :func:`stats.summarize`)."""
    fig, ax = new_figure(max(4.0, 0.6 * len(summary) + 2.0), 3.2)
    with matplotlib.rc_context(STYLE):
        x = np.arange(len(summary))
        v = summary[value].astype(float).to_numpy() * scale
        lo = summary[low].astype(float).to_numpy() * scale
        hi = summary[high].astype(float).to_numpy() * scale
        err = np.vstack([np.nan_to_num(v - lo), np.nan_to_num(hi - v)])
        ax.bar(x, v, yerr=err, capsize=3, color=STYLE["axes.prop_cycle"].by_key()["color"][0], alpha=0.85)
        ax.set_xticks(x, [str(s) for s in summary[label]], rotation=30 if len(summary) > 4 else 0, ha="right" if len(summary) > 4 else "center")
        ax.set_ylabel(ylabel or value)
        if title:
            ax.set_title(title)
    return fig


def numeric_values(values: Iterable[Any]) -> list[float] | None:
    """Values as numbers for an axis: plain numbers, or quantities with one unit kind.

    Example:
        >>> numeric_values(["20pkt", "48pkt"]), numeric_values([3, 10]), numeric_values(["a"])
        ([20.0, 48.0], [3.0, 10.0], None)
    """
    vals = list(values)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in vals):
        return [float(v) for v in vals]
    for parse in (units.parse_packets, units.parse_size, units.parse_time, units.parse_rate):
        try:
            return [float(parse(v)) for v in vals]
        except units.UnitError:
            continue
    return None


def sweep_curve(
    df: pd.DataFrame, x: str, value: str, by: Sequence[str] | None = None, level: float = 0.95,
    xlabel: str | None = None, ylabel: str | None = None, title: str | None = None, scale: float = 1.0,
) -> Figure:
    """Mean of ``value`` against parameter ``x`` with a Student-t confidence envelope.

    ``x`` may hold numbers or quantities (``"20pkt"``); one curve per ``by`` group.
    """
    fig, ax = new_figure()
    with matplotlib.rc_context(STYLE):
        for label, part in _groups(df, by):
            rows = []
            for xv, sub in part.groupby(x, sort=False):
                est = stats.mean_ci(sub[value].astype(float) * scale, level)
                rows.append((xv, est.value, est.low, est.high))
            if not rows:
                continue
            xs = numeric_values([r[0] for r in rows])
            if xs is None:
                xs = list(range(len(rows)))
                ax.set_xticks(xs, [str(r[0]) for r in rows])
            order = np.argsort(xs)
            xs_a = np.asarray(xs)[order]
            m = np.asarray([r[1] for r in rows])[order]
            lo = np.asarray([r[2] for r in rows])[order]
            hi = np.asarray([r[3] for r in rows])[order]
            line = ax.plot(xs_a, m, marker="o", markersize=3, label=label)[0]
            ax.fill_between(xs_a, lo, hi, alpha=0.2, color=line.get_color(), linewidth=0)
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel or value)
        if title:
            ax.set_title(title)
        if by:
            ax.legend(frameon=False)
    return fig


def png_bytes(fig: Figure, dpi: int = 150) -> bytes:
    """The figure rendered as PNG."""
    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def png_base64(fig: Figure, dpi: int = 150) -> str:
    """The figure as a base64 PNG, for a ``data:`` URI."""
    return base64.b64encode(png_bytes(fig, dpi)).decode("ascii")
