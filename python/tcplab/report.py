"""``tcplab report DIR``: figures and a self-contained ``report.html``.

Reads a results directory, either one run (``tcplab run --out``: ``meta.json`` and the
tables) or a sweep (``tcplab sweep``: ``manifest.json`` and the tables with parameter
columns), and writes:

- ``figures/*.png``: CDFs of elapsed time per group and variant, goodput bars with
  95% CI whiskers, sweep curves with confidence envelopes (for numeric parameters),
  cwnd/ssthresh and queue time series and one-way-delay CDFs when recorded;
- ``report.html``: one file with the same figures embedded as base64 PNG, the scenario
  and the grid, and summary tables with confidence intervals. It loads nothing from
  the network.

**Intervals are over replications, never over flows** (:func:`over_replications`).
The flows of one run share its queue and its random draws, so they are not independent
samples: each replication gives one value per variant and group (the mean over the
group's flows in that run), and the 95% Student-t interval is taken over those values,
with the estimate the bundled studies use (:func:`tcplab.studies.findings.estimate`),
which reports a value that is the same in every replication as *exact* rather than as
an interval of zero width. A scenario without a random element gives identical
replications; the report (and ``tcplab sweep``) says so, and names the fields that add
one (:func:`tcplab.sweeps.identical_replications_warning`).

A "variant" is one grid point: its parameters joined as ``path=value``. A flow's
"group" is its ``group``, or its congestion control when it has none, so CUBIC and BBR
flows are never pooled into one figure.

Example:
    >>> flows = pd.DataFrame({"replication": [0, 0, 1, 1, 2, 2], "group": ["a"] * 6,
    ...                       "goodput_bps": [1.0, 3.0, 2.0, 4.0, 3.0, 5.0]})
    >>> row = over_replications(flows, "goodput_bps", ["group"]).iloc[0]
    >>> int(row["replications"]), float(row["mean"]), round(float(row["mean_low"]), 3)   # per run: 2, 3, 4
    (3, 3.0, 0.516)
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from tcplab import __version__, plots, stats
from tcplab.studies.findings import LEVEL, estimate
from tcplab.sweeps import identical_replications_warning

__all__ = ["ReportError", "ResultsDir", "write_report", "per_replication", "over_replications", "flow_groups",
           "MAX_CWND_FLOWS"]

#: The cwnd figure draws at most this many flows unless told which (``--cwnd-flows``).
MAX_CWND_FLOWS = 8


class ReportError(ValueError):
    """The directory holds no results that can be reported."""


@dataclass
class ResultsDir:
    """The tables and descriptions found in a results directory."""

    path: Path
    kind: str  # "run" or "sweep"
    tables: dict[str, pd.DataFrame]
    info: dict[str, Any]
    params: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: str | Path) -> "ResultsDir":
        """Loads a run or sweep directory; raises :class:`ReportError` otherwise."""
        d = Path(path)
        if (d / "manifest.json").is_file():
            kind, info = "sweep", _read_json(d / "manifest.json")
        elif (d / "meta.json").is_file():
            kind, info = "run", _read_json(d / "meta.json")
            scenario = d / "scenario.json"
            if scenario.is_file():
                info = {**info, "scenario": _read_json(scenario)}
        else:
            raise ReportError(f"{d}: no manifest.json (sweep) or meta.json (run); not a results directory")
        tables: dict[str, pd.DataFrame] = {}
        for p in sorted(d.glob("*.parquet")):
            try:
                tables[p.stem] = pd.read_parquet(p)
            except Exception as e:  # a damaged file is bad input, not a crash
                raise ReportError(f"{p}: cannot read the table: {e}") from None
        if "flows" not in tables:
            raise ReportError(f"{d}: flows.parquet is missing")
        params = list(info.get("grid", {})) if kind == "sweep" else []
        return cls(d, kind, tables, info, params)

    def variant(self, df: pd.DataFrame) -> pd.Series:
        """The variant label of each row (its parameters), or "" for a single run."""
        cols = [p for p in self.params if p in df.columns]
        if not cols:
            return pd.Series([""] * len(df), index=df.index, dtype="string")
        return df[cols].astype(str).apply(lambda r: ", ".join(f"{c}={v}" for c, v in zip(cols, r)), axis=1)


def _read_json(p: Path) -> dict[str, Any]:
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ReportError(f"{p}: cannot read: {e}") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{p}: expected a JSON object")
    return doc


def flow_groups(flows: pd.DataFrame) -> pd.Series:
    """Each flow's group for the report: its ``group``, or its congestion control when it has none.

    Example:
        >>> flow_groups(pd.DataFrame({"group": ["", "web", None], "cc": ["cubic", "bbr", "bbr"]})).tolist()
        ['cubic', 'web', 'bbr']
    """
    group = flows["group"].astype("string").fillna("") if "group" in flows else pd.Series("", index=flows.index, dtype="string")
    if "cc" in flows:
        group = group.where(group != "", flows["cc"].astype("string").fillna(""))
    return group


def per_replication(df: pd.DataFrame, value: str, by: Sequence[str], agg: Any = "mean") -> pd.DataFrame:
    """One value per replication and ``by`` group: ``agg`` (default the mean) of ``value`` over its rows.

    A single run (no ``replication`` column) is one replication. NaN values (a flow that
    did not complete has no elapsed time) are left out of the mean; a group whose values
    are all NaN in a replication gives NaN there, which :func:`over_replications` drops.

    Example:
        >>> df = pd.DataFrame({"replication": [0, 0, 1, 1], "g": ["a", "a", "a", "a"], "v": [1.0, 3.0, 5.0, 5.0]})
        >>> per_replication(df, "v", ["g"]).values.tolist()
        [['a', 0, 2.0], ['a', 1, 5.0]]
    """
    keys = list(by) + (["replication"] if "replication" in df else [])
    if not keys:
        return pd.DataFrame({value: [df[value].agg(agg)]})
    return df.groupby(keys, sort=True, dropna=False)[value].agg(agg).reset_index()


def over_replications(df: pd.DataFrame, value: str, by: Sequence[str], agg: Any = "mean",
                      median: bool = False) -> pd.DataFrame:
    """Per ``by`` group: the mean over replications of the per-replication ``agg`` of ``value``
    (:func:`per_replication`) with its 95% Student-t interval over replications
    (:func:`tcplab.studies.findings.estimate`).

    Columns: the ``by`` columns, ``replications``, ``mean``, ``mean_low``, ``mean_high``,
    ``exact`` (every replication gave the same value: no interval; ``mean_low`` =
    ``mean_high`` = ``mean``) and, with ``median``, ``median``: the median over every row
    of the group (flows of all replications), a description of their spread with no
    interval.

    Hand-worked (the module example): goodputs (1, 3), (2, 4), (3, 5) in three
    replications give 2, 3, 4; mean 3, s = 1, t(0.975, 2) = 4.3027, half-width
    4.3027 / sqrt(3) = 2.484: [0.516, 5.484], n = 3 (not n = 6 flows).
    """
    per = per_replication(df, value, by, agg)
    groups = [((), per)] if not by else list(per.groupby(list(by), sort=True, dropna=False))
    rows = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        e = estimate(part[value])
        row = {**dict(zip(by, key)), "replications": e["n"], "mean": e["value"], "mean_low": e["ci"][0],
               "mean_high": e["ci"][1], "exact": e["exact"]}
        if median:
            mask = pd.Series(True, index=df.index)
            for b, k in zip(by, key):
                mask &= (df[b].isna() if pd.isna(k) else df[b] == k)
            row["median"] = float(df.loc[mask, value].median())
        rows.append(row)
    cols = list(by) + ["replications", "mean", "mean_low", "mean_high", "exact"] + (["median"] if median else [])
    return pd.DataFrame(rows, columns=cols)


def _interval_text(row: Any) -> str:
    """The interval column of a summary table: ``[low, high]``, exact, or why there is none."""
    if bool(row["exact"]):
        return f"exact (the same in all {int(row['replications'])} replications)"
    if int(row["replications"]) < 2:
        return "none (one replication)"
    return f"[{row['mean_low']:.4g}, {row['mean_high']:.4g}]"


def _display(summary: pd.DataFrame) -> pd.DataFrame:
    """A :func:`over_replications` table as the report shows it: the interval as text."""
    out = summary.drop(columns=["mean_low", "mean_high", "exact"])
    out.insert(out.columns.get_loc("mean") + 1, f"{LEVEL:.0%} CI over replications",
               [_interval_text(r) for _, r in summary.iterrows()])
    return out.rename(columns={"median": "median over flows"})


def _table_html(df: pd.DataFrame, digits: int = 4) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "–" if math.isnan(v) else f"{v:.{digits}g}"
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in row) + "</tr>" for row in df.itertuples(index=False))
    # A wide table scrolls inside the page instead of running off its right edge.
    return f"<div style='overflow-x:auto'><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"


def _flows(res: ResultsDir) -> pd.DataFrame:
    """The flows table with ``variant`` and the report's ``group`` (:func:`flow_groups`)."""
    flows = res.tables["flows"].copy()
    flows["variant"] = res.variant(flows)
    flows["group"] = flow_groups(flows)
    return flows


def _by(res: ResultsDir, last: str) -> list[str]:
    return (["variant"] if res.kind == "sweep" else []) + [last]


def _cwnd_choice(res: ResultsDir, chosen: Sequence[str] | None) -> tuple[list[int], list[str], int]:
    """The flows the cwnd figure draws (flow ids), the names it leaves out, and how many had a series.

    Without ``chosen``: every flow with a cwnd series, up to :data:`MAX_CWND_FLOWS` in flow
    order. ``chosen`` names flows or groups; a name that matches no flow with a series
    is bad input (:class:`ReportError`, naming the accepted names).
    """
    series = res.tables.get("series_cwnd")
    if series is None or not len(series):
        return [], [], 0
    flows = res.tables["flows"]
    first = _first_run(res)
    if first is not None and "run_key" in series:
        series = series[series["run_key"] == first]
        flows = flows[flows["run_key"] == first]
    ids = sorted(int(i) for i in series["flow_id"].unique())
    names = dict(zip(flows["flow_id"].astype(int), flows["name"].astype(str))) if "name" in flows else {}
    groups = dict(zip(flows["flow_id"].astype(int), flow_groups(flows).astype(str))) if len(flows) else {}
    if chosen:
        picked = []
        for want in chosen:
            hit = [i for i in ids if names.get(i) == want or groups.get(i) == want]
            if not hit:
                flow_names = sorted({names.get(i, str(i)) for i in ids})
                listed = ", ".join(flow_names[:20]) + (f" and {len(flow_names) - 20} more" if len(flow_names) > 20 else "")
                group_names = ", ".join(sorted({groups[i] for i in ids if groups.get(i)}))
                raise ReportError(f"--cwnd-flows: no flow or group {want!r} has a cwnd series; accepted: the flows "
                                  f"{listed}" + (f", or the groups {group_names}" if group_names else ""))
            picked += [i for i in hit if i not in picked]
        shown = sorted(picked)
    else:
        shown = ids[:MAX_CWND_FLOWS]
    left = [names.get(i, str(i)) for i in ids if i not in shown]
    return shown, left, len(ids)


def _cwnd_caption(shown: list[int], left: list[str], total: int, where: str) -> str:
    if not left:
        return f"cwnd (solid) and ssthresh (dashed) of every flow with a cwnd series ({total}){where}."
    listed = ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else "")
    return (f"cwnd (solid) and ssthresh (dashed) of {len(shown)} of the {total} flows with a cwnd series{where}; "
            f"left out: {listed}. Choose the flows (names or groups) with "
            f"`tcplab report DIR --cwnd-flows NAME,NAME` (write_report(..., cwnd_flows=[...])).")


def _figures(res: ResultsDir, cwnd_flows: Sequence[str] | None = None) -> list[tuple[str, str, Any]]:
    """(file stem, caption, Figure) for every figure the data supports."""
    figs: list[tuple[str, str, Any]] = []
    flows = _flows(res)
    by = _by(res, "group")
    if "elapsed_s" in flows and flows["elapsed_s"].notna().any():
        figs.append(("elapsed_cdf", "Elapsed time per flow (completion − start, handshake included), CDF over the "
                     "flows of every replication, per " + " and ".join(by) + ".",
                     plots.cdf(flows, "elapsed_s", by=by, xlabel="elapsed time (s)", title="elapsed time")))
    if "goodput_bps" in flows and flows["goodput_bps"].notna().any():
        summary = over_replications(flows, "goodput_bps", by)
        summary["label"] = summary[by].astype(str).agg(" / ".join, axis=1).str.strip(" /")
        figs.append(("goodput_bars", "Mean goodput per flow, per " + " and ".join(by) + f", with {LEVEL:.0%} "
                     "Student-t intervals over replications (one value per replication: the mean over the group's "
                     "flows); no whisker where the value is exact (the same in every replication) or there is one "
                     "replication.",
                     plots.bars_with_ci(summary, "label", xlabel="goodput (Mbit/s)", scale=1e-6, title="goodput")))
    params = [p for p in res.params if p in flows]
    for param in params:
        if flows[param].nunique() > 1 and plots.numeric_values(flows[param].unique()) is not None:
            others = [p for p in params if p != param and flows[p].nunique() > 1]
            for value, label, unit, scale in (("goodput_bps", "goodput", "Mbit/s", 1e-6), ("elapsed_s", "elapsed time", "s", 1.0)):
                if value in flows and flows[value].notna().any():
                    per = per_replication(flows, value, params + ["group"])
                    safe = param.replace(".", "_").replace("[", "_").replace("]", "")
                    figs.append((f"sweep_{safe}_{value}", f"Mean {label} per flow against {param}, per "
                                 + ", ".join(others + ["group"]) + f", with the {LEVEL:.0%} Student-t envelope over "
                                 "replications (one value per replication: the mean over the group's flows).",
                                 plots.sweep_curve(per, param, value, by=others + ["group"], xlabel=param,
                                                   ylabel=f"{label} ({unit})", scale=scale)))
    first = _first_run(res)
    series_flows = res.tables["flows"]
    if first is not None and "point" in series_flows:
        series_flows = series_flows[series_flows["run_key"] == first]
    where = " (first run of the sweep)" if first is not None else ""
    for name, caption in (("series_cwnd", ""), ("series_queue", "Queue occupancy"),
                          ("series_owd", "One-way delay per packet, CDF")):
        df = res.tables.get(name)
        if df is None or not len(df):
            continue
        if first is not None and "run_key" in df:
            df = df[df["run_key"] == first]
        if name == "series_cwnd":
            shown, left, total = _cwnd_choice(res, cwnd_flows)
            title = "cwnd and ssthresh" + (f": {len(shown)} of {total} flows" if left else "")
            figs.append(("cwnd", _cwnd_caption(shown, left, total, where),
                         plots.cwnd_series(df[df["flow_id"].isin(shown)], series_flows, title=title)))
        elif name == "series_queue":
            figs.append(("queue", caption + where + ".", plots.queue_series(df)))
        else:
            figs.append(("owd_cdf", caption + where + ".", plots.owd_cdf(df, series_flows)))
    return figs


def _first_run(res: ResultsDir) -> str | None:
    flows = res.tables["flows"]
    if "run_key" in flows and len(flows):
        return str(flows.sort_values(["point", "replication"])["run_key"].iloc[0])
    return None


def _summaries(res: ResultsDir) -> list[tuple[str, pd.DataFrame]]:
    """(title with unit, table) of every summary; intervals over replications (:func:`over_replications`)."""
    out = []
    flows = _flows(res)
    by = _by(res, "group")
    if "elapsed_s" in flows and flows["elapsed_s"].notna().any():
        out.append(("Elapsed time per flow (s)", _display(over_replications(flows, "elapsed_s", by, median=True))))
    if "goodput_bps" in flows and flows["goodput_bps"].notna().any():
        mbps = flows.assign(goodput_mbps=flows["goodput_bps"] * 1e-6)
        out.append(("Goodput per flow (Mbit/s)", _display(over_replications(mbps, "goodput_mbps", by, median=True))))
    counts = [c for c in ("retransmits", "rtos", "spurious_rtos", "syn_retransmits") if c in flows]
    if counts:
        out.append(("Retransmitted segments, RTOs (mean per flow over every replication; counts)",
                    flows.groupby(by, dropna=False)[counts].mean().reset_index()))
    if "goodput_bps" in flows and len(flows):
        jain = over_replications(flows, "goodput_bps", by, agg=stats.jain_index)
        if flows["group"].nunique() > 1:  # the fairness between the groups too (CUBIC against BBR, say)
            every = flows.assign(group="(all flows)")
            jain = pd.concat([jain, over_replications(every, "goodput_bps", by, agg=stats.jain_index)],
                             ignore_index=True)
        out.append(("Jain's fairness index of goodput within each group (dimensionless; one index per replication)",
                    _display(jain)))
    queues = res.tables.get("queues")
    if queues is not None and len(queues) and "enq_pkts" in queues:
        q = queues.assign(loss_rate=stats.loss_rate(queues), variant=res.variant(queues))
        busy = q[q["enq_pkts"] > 0]
        if len(busy):
            out.append(("Loss rate at each queue (fraction of arrivals)",
                        _display(over_replications(busy, "loss_rate", _by(res, "link")))))
    links = res.tables.get("links")
    if links is not None and len(links) and "utilisation" in links:
        lk = links.assign(variant=res.variant(links))
        lk = lk[lk["tx_pkts"] > 0] if "tx_pkts" in lk else lk
        if len(lk):
            out.append(("Link utilisation (fraction of the window)",
                        _display(over_replications(lk, "utilisation", _by(res, "link")))))
    udp = res.tables.get("udp")
    if udp is not None and len(udp) and "owd_max_s" in udp:
        u = udp.assign(variant=res.variant(udp), owd_max_ms=udp["owd_max_s"] * 1e3)
        out.append(("UDP one-way delay, max per flow (ms)", _display(over_replications(u, "owd_max_ms", _by(res, "name")))))
    return out


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f4f4f4}figure{display:inline-block;margin:1em;vertical-align:top;max-width:45em}
figure img{max-width:100%}figcaption{font-size:.85em;color:#444}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
.warning{background:#fff4e5;border-left:4px solid #E69F00;padding:.5em 1em}
"""


def write_report(results: str | Path, out: str | Path | None = None, cwnd_flows: Sequence[str] | None = None) -> Path:
    """Renders the figures (``figures/*.png``) and ``report.html``; returns the HTML path.

    ``cwnd_flows`` names the flows (or groups) the cwnd figure draws; by default it draws
    every flow with a cwnd series, up to :data:`MAX_CWND_FLOWS`, and its caption names
    the ones left out. Both files are written to temporary files and moved into place,
    so an interrupted report never leaves a truncated file.
    """
    res = ResultsDir.read(results)
    _cwnd_choice(res, cwnd_flows)  # a name that matches no flow is refused before anything is written
    target = Path(out) if out is not None else res.path / "report.html"
    fig_dir = res.path / "figures"
    fig_dir.mkdir(exist_ok=True)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>tcplab report: {html.escape(_title(res))}</title>"
             f"<style>{_CSS}</style></head><body>",
             f"<h1>tcplab report: {html.escape(_title(res))}</h1>",
             f"<p>{res.kind} results in <code>{html.escape(str(res.path))}</code>; tcplab {html.escape(__version__)}"
             + _provenance(res) + "</p>"]
    same = identical_replications_warning(res.tables, res.params) if res.kind == "sweep" else None
    if same:
        parts.append(f"<p class='warning' id='identical-replications'><strong>Warning:</strong> {html.escape(same)}.</p>")
    parts.append("<h2>Figures</h2>")
    for stem, caption, fig in _figures(res, cwnd_flows):
        png = plots.png_bytes(fig)
        _write_atomic(fig_dir / f"{stem}.png", png)
        parts.append(f"<figure><img alt='{html.escape(stem)}' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<h2>Summary tables</h2><p>Each interval is over replications: one value per replication and "
                 "group (the mean over the group's flows in that run, or the run's own figure for a queue or a link), "
                 f"a {LEVEL:.0%} Student-t interval over those values. The flows of one run share its queue and its "
                 "random draws, so they are never counted as separate samples. A value that is the same in every "
                 "replication is exact and has no interval. A flow's group is its <code>group</code>, or its "
                 "congestion control when it has none. The median over flows describes their spread "
                 "(no interval).</p>")
    for title, df in _summaries(res):
        parts.append(f"<h3>{html.escape(title)}</h3>{_table_html(df)}")
    if res.kind == "sweep":
        grid = res.info.get("grid", {})
        parts.append("<h2>Grid</h2>" + _table_html(pd.DataFrame({"parameter": list(grid), "values": [json.dumps(v) for v in grid.values()]})))
        parts.append(f"<p>{res.info.get('replications', '?')} replications per grid point, seeds {html.escape(str(res.info.get('seeds')))} "
                     "(common random numbers: replication r uses the same seed at every grid point).</p>")
        failures = res.info.get("failures") or []
        if failures:
            parts.append("<h3>Failed runs</h3>" + _table_html(pd.DataFrame(failures)))
        parts.append("<h2>Scenario</h2><pre>" + html.escape(res.info.get("scenario_toml", json.dumps(res.info.get("scenario"), indent=2))) + "</pre>")
    else:
        meta = {k: v for k, v in res.info.items() if k != "scenario"}
        parts.append("<h2>Run</h2>" + _table_html(pd.DataFrame({"field": list(meta), "value": [str(v) for v in meta.values()]})))
        if "scenario" in res.info:
            parts.append("<h2>Scenario (as resolved for the simulator)</h2><pre>" + html.escape(json.dumps(res.info["scenario"], indent=2)) + "</pre>")
    parts.append("</body></html>")
    _write_atomic(target, "\n".join(parts).encode("utf-8"))
    return target


def _title(res: ResultsDir) -> str:
    if res.kind == "sweep":
        scenario = res.info.get("scenario") or {}
        return str(scenario.get("name") or Path(str(res.info.get("file", res.path))).stem)
    return str(res.info.get("name") or res.path.name)


def _provenance(res: ResultsDir) -> str:
    bits = []
    if res.info.get("git_revision"):
        bits.append(f"git {html.escape(str(res.info['git_revision'])[:12])}")
    for k in ("started", "ended"):
        if res.info.get(k):
            bits.append(f"{k} {html.escape(str(res.info[k]))}")
    if res.kind == "run":
        for k in ("seed", "digest"):
            if k in res.info:
                bits.append(f"{k} {html.escape(str(res.info[k]))}")
    return ("; " + "; ".join(bits)) if bits else ""


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

