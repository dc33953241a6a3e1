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
    "numeric_axis",
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


def cwnd_series(series: pd.DataFrame, flows: pd.DataFrame | None = None, title: str = "cwnd and ssthresh") -> Figure:
    """cwnd (solid) and ssthresh (dashed) over time, in kB, for every flow in ``series``.

    Every flow of ``series`` is drawn (choose them before: :func:`tcplab.report.write_report`
    takes ``cwnd_flows`` and says in the caption which it left out); the legend sits
    outside the axes, so it hides no curve.

    Example:
        >>> s = pd.DataFrame({"t_s": [0.0, 1.0] * 3, "flow_id": [0, 0, 1, 1, 2, 2], "cwnd_bytes": [1460, 2920] * 3,
        ...                   "ssthresh_bytes": [float("inf")] * 6})
        >>> fig = cwnd_series(s, pd.DataFrame({"flow_id": [0, 1, 2], "name": ["a", "b", "c"]}))
        >>> [t.get_text() for t in fig.legends[0].get_texts()]
        ['a', 'b', 'c']
    """
    n = int(series["flow_id"].nunique()) if len(series) else 0
    fig, ax = new_figure(6.5 if n <= 4 else 7.5, 3.2)
    names = {}
    if flows is not None and "flow_id" in flows and "name" in flows:
        names = dict(zip(flows["flow_id"], flows["name"]))
    with matplotlib.rc_context(STYLE):
        colours = STYLE["axes.prop_cycle"].by_key()["color"]
        styles = ["-", "-.", ":"]
        for i, (fid, part) in enumerate(series.groupby("flow_id", sort=True)):
            part = part.sort_values("t_s")
            # Eight colours, then the same colours with another line style: no two flows look alike.
            colour, style = colours[i % len(colours)], styles[(i // len(colours)) % len(styles)]
            ax.step(part["t_s"], part["cwnd_bytes"] / 1e3, where="post", color=colour, linestyle=style,
                    label=str(names.get(fid, fid)))
            ss = part["ssthresh_bytes"].astype(float)
            ss = ss.where(ss < 1e15)  # "unbounded" is not drawn
            if ss.notna().any():
                ax.step(part["t_s"], ss / 1e3, where="post", linestyle="--", color=colour, alpha=0.6, linewidth=0.9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("window (kB)")
        ax.set_title(title)
        if n:
            fig.legend(loc="outside right upper", frameon=False, ncols=1 if n <= 12 else 2,
                       title="solid: cwnd\ndashed: ssthresh", title_fontsize=8)
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
    xlabel: str | None = None, title: str | None = None, scale: float = 1.0,
) -> Figure:
    """Horizontal bars of ``value`` with whiskers from ``low`` to ``high``, one row per label.

    The labels (variant and group, often long) are written horizontally on their own
    rows, a row 0.3 in (22 pt) high for an 8 pt font, so they never overlap. A NaN bound
    (one replication) or an exact value draws no whisker.

    Example:
        >>> s = pd.DataFrame({"l": ["a", "b"], "mean": [1.0, 2.0], "mean_low": [0.5, 2.0], "mean_high": [1.5, 2.0]})
        >>> [t.get_text() for t in bars_with_ci(s, "l").axes[0].get_yticklabels()]
        ['a', 'b']
    """
    n = len(summary)
    fig, ax = new_figure(6.0, max(2.0, 0.3 * n + 1.0))
    with matplotlib.rc_context(STYLE):
        y = np.arange(n)
        v = summary[value].astype(float).to_numpy() * scale
        lo = summary[low].astype(float).to_numpy() * scale
        hi = summary[high].astype(float).to_numpy() * scale
        ax.barh(y, v, height=0.7, color=STYLE["axes.prop_cycle"].by_key()["color"][0], alpha=0.85)
        wide = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
        if wide.any():
            ax.errorbar(v[wide], y[wide], xerr=np.vstack([v[wide] - lo[wide], hi[wide] - v[wide]]), fmt="none",
                        ecolor="#222222", capsize=3, linewidth=1.0)
        ax.set_yticks(y, [str(s) for s in summary[label]])
        ax.invert_yaxis()  # the first row on top, as in the table
        ax.set_xlabel(xlabel or value)
        ax.grid(axis="y", visible=False)
        if title:
            ax.set_title(title)
    return fig


#: Quantities on a sweep axis: the parser, the axis unit and the scale from the parser's base unit.
_AXIS_UNITS = ((units.parse_packets, "pkt", 1.0), (units.parse_size, "kB", 1e-3), (units.parse_time, "ms", 1e-6),
               (units.parse_rate, "Mbit/s", 1e-6))


def numeric_axis(values: Iterable[Any]) -> tuple[list[float], str] | None:
    """Values as numbers for an axis, with the axis unit: plain numbers (unit ""), or
    quantities of one kind (packets; sizes in kB; times in ms; rates in Mbit/s).

    Example:
        >>> numeric_axis(["20pkt", "48pkt"]), numeric_axis(["10ms", "1s"]), numeric_axis([3, 10]), numeric_axis(["a"])
        (([20.0, 48.0], 'pkt'), ([10.0, 1000.0], 'ms'), ([3.0, 10.0], ''), None)
    """
    vals = list(values)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in vals):
        return [float(v) for v in vals], ""
    for parse, unit, scale in _AXIS_UNITS:
        try:
            return [float(parse(v)) * scale for v in vals], unit
        except units.UnitError:
            continue
    return None


def numeric_values(values: Iterable[Any]) -> list[float] | None:
    """Values as numbers for an axis (:func:`numeric_axis` without the unit).

    Example:
        >>> numeric_values(["20pkt", "48pkt"]), numeric_values([3, 10]), numeric_values(["a"])
        ([20.0, 48.0], [3.0, 10.0], None)
    """
    axis = numeric_axis(values)
    return None if axis is None else axis[0]


def sweep_curve(
    df: pd.DataFrame, x: str, value: str, by: Sequence[str] | None = None, level: float = 0.95,
    xlabel: str | None = None, ylabel: str | None = None, title: str | None = None, scale: float = 1.0,
) -> Figure:
    """Mean of ``value`` against parameter ``x`` with a Student-t confidence envelope.

    ``x`` may hold numbers or quantities (``"20pkt"``, ``"10ms"``: drawn in the unit of
    :func:`numeric_axis`, which the axis label names); one curve per ``by`` group.
    """
    fig, ax = new_figure()
    unit = ""
    with matplotlib.rc_context(STYLE):
        for label, part in _groups(df, by):
            rows = []
            for xv, sub in part.groupby(x, sort=False):
                est = stats.mean_ci(sub[value].astype(float) * scale, level)
                rows.append((xv, est.value, est.low, est.high))
            if not rows:
                continue
            axis = numeric_axis([r[0] for r in rows])
            if axis is None:
                xs = list(range(len(rows)))
                ax.set_xticks(xs, [str(r[0]) for r in rows])
            else:
                xs, unit = axis
            order = np.argsort(xs)
            xs_a = np.asarray(xs)[order]
            m = np.asarray([r[1] for r in rows])[order]
            lo = np.asarray([r[2] for r in rows])[order]
            hi = np.asarray([r[3] for r in rows])[order]
            line = ax.plot(xs_a, m, marker="o", markersize=3, label=label)[0]
            ax.fill_between(xs_a, lo, hi, alpha=0.2, color=line.get_color(), linewidth=0)
        ax.set_xlabel((xlabel or x) + (f" ({unit})" if unit else ""))
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
