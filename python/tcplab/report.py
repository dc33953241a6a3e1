"""``tcplab report DIR``: figures and a self-contained ``report.html``.

Reads a results directory, either one run (``tcplab run --out``: ``meta.json`` and the
tables) or a sweep (``tcplab sweep``: ``manifest.json`` and the tables with parameter
columns), and writes:

- ``figures/*.png``: CDFs of elapsed time per group and variant, goodput bars with
  95% CI whiskers, sweep curves with confidence envelopes (for numeric parameters),
  cwnd/ssthresh and queue time series and one-way-delay CDFs when recorded;
- ``report.html``: one file with the same figures embedded as base64 PNG, the scenario
  and the grid, and summary tables with confidence intervals (Student-t for means,
  bootstrap for medians; :mod:`tcplab.stats`). It loads nothing from the network.

A "variant" is one grid point: its parameters joined as ``path=value``.
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
from typing import Any

import pandas as pd

from tcplab import __version__, plots, stats

__all__ = ["ReportError", "ResultsDir", "write_report"]

_META_COLUMNS = {"point", "replication", "seed", "run_key"}


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


def _table_html(df: pd.DataFrame, digits: int = 4) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "–" if math.isnan(v) else f"{v:.{digits}g}"
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in row) + "</tr>" for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _figures(res: ResultsDir) -> list[tuple[str, str, Any]]:
    """(file stem, caption, Figure) for every figure the data supports."""
    figs: list[tuple[str, str, Any]] = []
    flows = res.tables["flows"].copy()
    flows["variant"] = res.variant(flows)
    by = ["variant", "group"] if res.kind == "sweep" else ["group"]
    if "elapsed_s" in flows and flows["elapsed_s"].notna().any():
        figs.append(("elapsed_cdf", "Elapsed time per flow (completion − start, handshake included), CDF per "
                     + " and ".join(by) + ".",
                     plots.cdf(flows, "elapsed_s", by=by, xlabel="elapsed time (s)", title="elapsed time")))
    if "goodput_bps" in flows and flows["goodput_bps"].notna().any():
        summary = stats.summarize(flows, "goodput_bps", by=by)
        summary["label"] = summary[by].astype(str).agg(" / ".join, axis=1).str.strip(" /")
        figs.append(("goodput_bars", "Mean goodput per flow with 95% Student-t confidence intervals.",
                     plots.bars_with_ci(summary, "label", ylabel="goodput (Mbit/s)", scale=1e-6, title="goodput")))
    for param in res.params:
        if param in flows and flows[param].nunique() > 1 and plots.numeric_values(flows[param].unique()) is not None:
            others = [p for p in res.params if p != param and p in flows and flows[param].nunique() > 1]
            for value, label, unit, scale in (("goodput_bps", "goodput", "Mbit/s", 1e-6), ("elapsed_s", "elapsed time", "s", 1.0)):
                if value in flows and flows[value].notna().any():
                    safe = param.replace(".", "_").replace("[", "_").replace("]", "")
                    figs.append((f"sweep_{safe}_{value}", f"Mean {label} against {param} with 95% confidence envelope.",
                                 plots.sweep_curve(flows, param, value, by=others or None, xlabel=param,
                                                   ylabel=f"{label} ({unit})", scale=scale)))
    first = _first_run(res)
    series_flows = res.tables["flows"]
    if first is not None and "point" in series_flows:
        series_flows = series_flows[series_flows["run_key"] == first]
    for name, caption in (("series_cwnd", "cwnd (solid) and ssthresh (dashed)"),
                          ("series_queue", "Queue occupancy"), ("series_owd", "One-way delay per packet, CDF")):
        df = res.tables.get(name)
        if df is None or not len(df):
            continue
        if first is not None and "run_key" in df:
            df = df[df["run_key"] == first]
        where = " (first run of the sweep)" if first is not None else ""
        if name == "series_cwnd":
            figs.append(("cwnd", caption + where + ".", plots.cwnd_series(df, series_flows)))
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
    out = []
    flows = res.tables["flows"].copy()
    flows["variant"] = res.variant(flows)
    by = (["variant"] if res.kind == "sweep" else []) + ["group"]
    for value, title in (("elapsed_s", "Elapsed time (s)"), ("goodput_bps", "Goodput per flow (bit/s)")):
        if value in flows and flows[value].notna().any():
            out.append((title, stats.summarize(flows, value, by=by)))
    counts = [c for c in ("retransmits", "rtos", "spurious_rtos", "syn_retransmits") if c in flows]
    if counts:
        out.append(("Retransmissions, RTOs (mean per flow)", flows.groupby(by, dropna=False)[counts].mean().reset_index()))
    run_cols = [c for c in ("run_key", "seed") if c in flows]
    if "goodput_bps" in flows and len(flows):
        jain = (flows.groupby(by + run_cols, dropna=False)["goodput_bps"].apply(stats.jain_index)
                .rename("jain").reset_index())
        out.append(("Jain's fairness index of goodput within each group (over runs)", stats.summarize(jain, "jain", by=by)))
    queues = res.tables.get("queues")
    if queues is not None and len(queues) and "enq_pkts" in queues:
        q = queues.assign(loss_rate=stats.loss_rate(queues), variant=res.variant(queues))
        busy = q[q["enq_pkts"] > 0]
        if len(busy):
            out.append(("Loss rate at each queue (over runs)", stats.summarize(busy, "loss_rate", by=(["variant"] if res.kind == "sweep" else []) + ["link"])))
    links = res.tables.get("links")
    if links is not None and len(links) and "utilisation" in links:
        lk = links.assign(variant=res.variant(links))
        lk = lk[lk["tx_pkts"] > 0] if "tx_pkts" in lk else lk
        if len(lk):
            out.append(("Link utilisation (over runs)", stats.summarize(lk, "utilisation", by=(["variant"] if res.kind == "sweep" else []) + ["link"])))
    udp = res.tables.get("udp")
    if udp is not None and len(udp) and "owd_max_s" in udp:
        out.append(("UDP one-way delay, max per flow (s)", stats.summarize(udp.assign(variant=res.variant(udp)), "owd_max_s", by=(["variant"] if res.kind == "sweep" else []) + ["name"])))
    return out


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f4f4f4}figure{display:inline-block;margin:1em;vertical-align:top;max-width:45em}
figure img{max-width:100%}figcaption{font-size:.85em;color:#444}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
"""


def write_report(results: str | Path, out: str | Path | None = None) -> Path:
    """Renders the figures (``figures/*.png``) and ``report.html``; returns the HTML path.

    Both are written to temporary files and moved into place, so an interrupted
    report never leaves a truncated file.
    """
    res = ResultsDir.read(results)
    target = Path(out) if out is not None else res.path / "report.html"
    fig_dir = res.path / "figures"
    fig_dir.mkdir(exist_ok=True)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>tcplab report: {html.escape(_title(res))}</title>"
             f"<style>{_CSS}</style></head><body>",
             f"<h1>tcplab report: {html.escape(_title(res))}</h1>",
             f"<p>{res.kind} results in <code>{html.escape(str(res.path))}</code>; tcplab {html.escape(__version__)}"
             + _provenance(res) + "</p>"]
    parts.append("<h2>Figures</h2>")
    for stem, caption, fig in _figures(res):
        png = plots.png_bytes(fig)
        _write_atomic(fig_dir / f"{stem}.png", png)
        parts.append(f"<figure><img alt='{html.escape(stem)}' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<h2>Summary tables</h2><p>Means with 95% Student-t intervals; medians with 95% bootstrap "
                 "(percentile method, 1000 resamples, seed 0) intervals.</p>")
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

