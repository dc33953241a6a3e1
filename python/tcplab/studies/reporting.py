"""The report skeleton every bundled study shares: figure files and ``report.html``.

Figures are drawn on matplotlib ``Figure`` objects (never pyplot's global state) with
:data:`tcplab.plots.STYLE`, and saved by :func:`save` as PNG (150 dpi) and SVG into
``figures/``. SVGs carry no date and a fixed hash salt, so the same data give
byte-identical files. A figure description (what a study's ``render_figures``
returns) is ``{"stem", "section", "png", "svg", "caption", ...}``.

``report.html`` is one self-contained page (:func:`write_page`):

1. the title, the seed's citation and a provenance line (:func:`provenance`);
2. a navigation line with the study's files (:func:`nav`);
3. the study's own set-up section;
4. the findings (:func:`findings_html`): a verdict table, then every check with its
   statistic, criterion and per-configuration table;
5. the figures, grouped by section, embedded as PNG and linked to their files
   (:func:`figures_html`);
6. the study's summary table, failed tasks (:func:`failures_html`) and parameters
   (:func:`parameters_html`).

CDF curves are drawn through at most :data:`CDF_POINTS` rank-spaced points of the
empirical CDF (the error is below 1/CDF_POINTS in probability) so that SVG files stay
small; the maxima are exact.

Example:
    >>> xs, ps = ecdf_points(np.arange(10_000.0), max_points=100)
    >>> len(xs) <= 100, float(xs[-1]), float(ps[-1])
    (True, 9999.0, 1.0)
    >>> verdict("inconclusive")
    "<span class='inconc'>inconclusive</span>"
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import multiprocessing
import pickle
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from tcplab import __version__, stats

__all__ = ["CDF_POINTS", "EXTRA_CSS", "ecdf_points", "figure", "step", "save", "parallel_saves", "fmt", "verdict", "stat_text",
           "finding_anchor", "findings_html", "ledger_html", "VERDICT_CLASS", "figures_html", "failures_html", "parameters_html", "provenance", "nav",
           "table_html", "write_page"]

CDF_POINTS = 800

EXTRA_CSS = """
.held{color:#0a0;font-weight:bold}.contra{color:#c00;font-weight:bold}.inconc{color:#4a6fa5;font-weight:bold}
.na{color:#888}
details{margin:.5em 0 1em 1em}summary{cursor:pointer}td.l,th.l{text-align:left}
.small{font-size:.85em;color:#444}
"""


# --------------------------------------------------------------------------------------
# Figures


def ecdf_points(x: Sequence[float] | np.ndarray, max_points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF (NaNs dropped) thinned to at most ``max_points`` rank-spaced points.

    The first and last points (the minimum and the maximum) are always kept.

    Example:
        >>> ecdf_points([3.0, 1.0, 2.0])
        (array([1., 2., 3.]), array([0.33333333, 0.66666667, 1.        ]))
    """
    xs, ps = stats.ecdf(x)
    if len(xs) > max_points:
        idx = np.unique(np.linspace(0, len(xs) - 1, max_points).round().astype(int))
        xs, ps = xs[idx], ps[idx]
    return xs, ps


def figure(rows: int, cols: int, width: float, height: float, **kw: Any) -> tuple[Any, np.ndarray]:
    """A constrained-layout figure with a ``rows`` x ``cols`` array of axes (``subplots`` kwargs)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from tcplab.plots import STYLE

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(rows, cols, squeeze=False, **kw)
    return fig, axes


def step(ax: Any, values: np.ndarray, **kw: Any) -> None:
    """Draws the empirical CDF of ``values`` as a step curve starting at probability 0."""
    xs, ps = ecdf_points(values)
    if len(xs):
        ax.step(np.concatenate([[xs[0]], xs]), np.concatenate([[0.0], ps]), where="post", **kw)


#: The open figure pool: ``{"workers", "executor", "pending"}`` (see :func:`parallel_saves`).
_POOL: dict[str, Any] = {"workers": 0, "executor": None, "pending": []}


@contextlib.contextmanager
def parallel_saves(workers: int) -> Iterator[None]:
    """Inside the block, :func:`save` hands each figure (pickled) to one of ``workers``
    processes, started with the first figure, and returns at once; leaving the block
    waits for every file and re-raises the first error. Layout and drawing dominate a
    study's figure time (a figure of 8 panels takes about 2.5 s to save and 1 s to
    build), so the saves run side by side while this process builds the next figure:
    iw-irto's 25 figures took 33.7 s instead of 58.7 s on 2 cores. With ``workers`` < 2,
    or inside a daemon process (which may not start processes), saves stay here. The
    files are byte for byte the same either way.
    """
    if workers < 2 or multiprocessing.current_process().daemon or _POOL["workers"]:
        yield
        return
    _POOL.update(workers=workers, executor=None, pending=[])
    ok = False
    try:
        yield
        ok = True
    finally:
        ex, pending = _POOL["executor"], _POOL["pending"]
        _POOL.update(workers=0, executor=None, pending=[])
        if ex is not None:
            ex.shutdown(wait=True, cancel_futures=not ok)
            if ok:
                for f in pending:
                    f.result()  # re-raises a worker's error


def _save_pickled(payload: bytes, fig_dir: str, stem: str) -> None:
    """A figure process's job: draw the pickled figure into ``fig_dir``."""
    _save_here(pickle.loads(payload), Path(fig_dir), stem)


def save(fig: Any, fig_dir: Path, stem: str) -> dict[str, str]:
    """Saves ``fig`` as ``fig_dir/stem.png`` and ``.svg``; returns ``{"png": path, "svg": path}`` relative to the report.

    Inside :func:`parallel_saves` the figure is drawn by a figure process, and its
    files exist once the block has ended.
    """
    if _POOL["workers"]:
        if _POOL["executor"] is None:
            _POOL["executor"] = ProcessPoolExecutor(max_workers=_POOL["workers"],
                                                    mp_context=multiprocessing.get_context("spawn"))
        job: Future[None] = _POOL["executor"].submit(_save_pickled, pickle.dumps(fig), str(fig_dir), stem)
        _POOL["pending"].append(job)
        return {fmt_: f"figures/{stem}.{fmt_}" for fmt_ in ("png", "svg")}
    return _save_here(fig, fig_dir, stem)


def _save_here(fig: Any, fig_dir: Path, stem: str) -> dict[str, str]:
    import matplotlib

    from tcplab.plots import STYLE
    from tcplab.report import _write_atomic

    paths = {}
    for fmt_ in ("png", "svg"):
        buf = io.BytesIO()
        with matplotlib.rc_context({**STYLE, "svg.hashsalt": "tcplab", "svg.fonttype": "none"}):
            fig.savefig(buf, format=fmt_, dpi=150, metadata={"Date": None} if fmt_ == "svg" else None)
        _write_atomic(fig_dir / f"{stem}.{fmt_}", buf.getvalue())
        paths[fmt_] = f"figures/{stem}.{fmt_}"
        # The first save laid the figure out; the second draws it where it is. A layout
        # engine would redo the layout at every save, and that pass (text extents of
        # every tick label) costs more than drawing on figures with many panels.
        fig.set_layout_engine("none")
    return paths


# --------------------------------------------------------------------------------------
# HTML pieces


def table_html(df: pd.DataFrame, digits: int = 4) -> str:
    """An HTML table of ``df`` in the report's style."""
    from tcplab.report import _table_html

    return _table_html(df, digits)


def fmt(v: Any, digits: int = 3) -> str:
    """A number with ``digits`` significant digits; ``–`` for None and NaN.

    Example:
        >>> fmt(0.123456), fmt(None), fmt(float("nan")), fmt(7)
        ('0.123', '–', '–', '7')
    """
    if v is None:
        return "–"
    if isinstance(v, float):
        return "–" if np.isnan(v) else f"{v:.{digits}g}"
    return str(v)


def verdict(v: str | None) -> str:
    """The coloured verdict of a finding or check (one of :data:`tcplab.studies.findings.VERDICTS`, or ``not run``).

    "Inconclusive" (not enough data) is drawn in a neutral colour, not as a failure.
    """
    text = v or "not run"
    cls = VERDICT_CLASS.get(text, "na")
    return f"<span class='{cls}'>{html.escape(text)}</span>"


#: CSS class of each verdict (shared with the dashboard).
VERDICT_CLASS = {"held": "held", "contradicted": "contra", "inconclusive": "inconc", "not testable here": "na",
                 "not run": "na"}


def stat_text(st: dict[str, Any]) -> str:
    """``name = value unit, 95% CI [low, high], n replications`` of a statistic (exact values say so)."""
    lo, hi = st.get("ci") or [None, None]
    head = f"{html.escape(str(st.get('name')))} = <b>{fmt(st.get('value'))}</b> {html.escape(str(st.get('unit') or ''))}"
    if st.get("exact"):
        return head + f", exact (identical in all {st.get('n_replications')} replications)"
    return head + f", 95% CI [{fmt(lo)}, {fmt(hi)}], {st.get('n_replications')} replications"


def finding_anchor(fid: str) -> str:
    """The HTML id of finding ``fid``'s section in ``report.html`` (``report.html#finding-F4c``).

    Example:
        >>> finding_anchor("F4c"), finding_anchor("H 1/a")
        ('finding-F4c', 'finding-H-1-a')
    """
    return "finding-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in str(fid))


def _check_note(c: dict[str, Any]) -> str:
    bits = []
    if c.get("reading"):
        bits.append(f"reading: <i>{html.escape(c['reading'])}</i>")
    if c.get("extension"):
        bits.append("<b>extension</b> (a case the seed did not run; not part of the verdict)")
    if c.get("verdict") == "inconclusive":
        n = c.get("reps_needed")
        bits.append(f"about {n} replications would settle it at the observed effect" if n else
                    "no number of replications would settle it at the observed effect")
    return (" [" + "; ".join(bits) + "]") if bits else ""


def ledger_html(ledger: dict[str, Any] | None, findings: dict[str, Any]) -> str:
    """The claims ledger: the coverage line, then every result sentence with its status and verdicts."""
    from tcplab.studies.ledger import coverage_text

    if not ledger:
        return ""
    from tcplab.studies.findings import combine

    verdicts = {f["id"]: f["verdict"] for f in findings["findings"]}
    check_verdicts = {c["id"]: c["verdict"] for f in findings["findings"] for c in f["checks"]}
    rows = []
    for s in ledger["sentences"]:
        if s["status"] == "context":
            continue
        if s["status"] == "checked":
            what = ", ".join(f"<a href='#{finding_anchor(fid)}'>{html.escape(fid)}</a> {verdict(verdicts.get(fid))}"
                             for fid in s["findings"])
            named = [check_verdicts[c] for c in s.get("checks", []) if c in check_verdicts]
            if named:
                # The sentence is tested by these checks of the finding: their own combined verdict.
                what += (f"<br><span class='small'>this sentence's checks ({html.escape(', '.join(s['checks']))}): "
                         f"{verdict(combine(named))}</span>")
        elif s["status"] == "not testable":
            what = f"{verdict('not testable here')}: {html.escape(s['reason'])}"
        else:
            what = "<span class='na'>describes the set-up</span>"
        rows.append(f"<tr><td class='l'>{html.escape(s['id'])}</td><td class='l'>{html.escape(s.get('slide') or '')}</td>"
                    f"<td class='l'>“{html.escape(s['text'])}”</td><td class='l'>{what}</td></tr>")
    ext = "".join(f"<li>{html.escape(', '.join(x['findings'] + x['checks']))}: {html.escape(x['why'])}</li>"
                  for x in ledger.get("extensions", []))
    return (f"<h2 id='ledger'>Claims ledger</h2><p><b>{html.escape(coverage_text(ledger['coverage']))}</b> "
            f"<span class='small'>(ledger <code>{html.escape(str(ledger.get('path') or ''))}</code>; the seed's "
            "titles, motivation and questions are listed there as context and not counted).</span></p>"
            "<table><thead><tr><th class='l'>id</th><th class='l'>slide</th><th class='l'>seed sentence (verbatim)</th>"
            "<th class='l'>checked by / status</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            + (f"<p>Extensions (tcplab's own checks, not counted as the seed's):</p><ul>{ext}</ul>" if ext else ""))


def findings_html(findings: dict[str, Any], seed: str, doc: str, extra: str = "") -> str:
    """The findings section: the ledger, a verdict table, then every check with its per-configuration table.

    ``seed`` names the seed ("seed 000"), ``doc`` the study's documentation page (empty
    for a study file, whose claims have no page beyond the file), and ``extra`` is
    appended (HTML).
    """
    parts = [f"<h2 id='findings'>Findings of {html.escape(seed)}, checked</h2>",
             f"<p class='small'>{html.escape(findings['method'])}. Verdicts: {verdict('held')} (the interval lies on "
             f"the claimed side, or inside an equivalence margin), {verdict('contradicted')} (it lies on the other side, "
             f"or outside the margin), {verdict('inconclusive')} (not enough data: the interval straddles the "
             f"boundary), {verdict('not testable here')}. A finding is contradicted if any of its checks is, held if "
             f"all hold." + (f" <code>{html.escape(doc)}</code> explains every contradicted claim." if doc else "")
             + "</p>"]
    rows = []
    for f in findings["findings"]:
        tag = " <span class='small'>(extension)</span>" if f.get("extension") else ""
        readings = "".join(f"<br><span class='small'>{html.escape(r)}: {verdict(v)}</span>"
                           for r, v in (f.get("readings") or {}).items())
        rows.append(f"<tr><td class='l'><a href='#{finding_anchor(f['id'])}'>{html.escape(f['id'])}</a></td>"
                    f"<td class='l'>{html.escape(f['claim'])}{tag}</td>"
                    f"<td class='l'>{verdict(f['verdict'])}{readings}</td>"
                    f"<td class='l'>{stat_text(f['statistic']) if f['evaluated'] else '–'}</td></tr>")
    parts.append(f"<table><thead><tr><th>id</th><th class='l'>{html.escape(seed)} finding</th><th>verdict</th>"
                 "<th class='l'>headline statistic</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    parts.append(ledger_html(findings.get("ledger"), findings))
    for f in findings["findings"]:
        # The id is the anchor the dashboard of ``tcplab study all`` links each finding to.
        parts.append(f"<h3 id='{finding_anchor(f['id'])}'>{html.escape(f['id'])}: {html.escape(f['claim'])} — "
                     f"{verdict(f['verdict'])}</h3>")
        if not f["checks"]:
            parts.append(f"<p class='small'>{html.escape(f['criterion'])}</p>")
        for c in f["checks"]:
            more = {k: v for k, v in c.items() if k not in ("id", "claim", "criterion", "verdict", "statistic",
                                                            "per_config", "form", "reading", "extension", "reps_needed")}
            parts.append(f"<p><b>{html.escape(c['id'])}</b> {html.escape(c['claim'])}: {verdict(c['verdict'])}"
                         f"{_check_note(c)}. {stat_text(c['statistic'])}.<br><span class='small'>Criterion: "
                         f"{html.escape(c['criterion'])}" + (f"; {html.escape(json.dumps(more))}" if more else "")
                         + "</span></p>")
            if c["per_config"]:
                df = pd.DataFrame(c["per_config"])
                if "ci" in df:
                    df["ci_low"] = [x[0] for x in df["ci"]]
                    df["ci_high"] = [x[1] for x in df["ci"]]
                    df = df.drop(columns=["ci"])
                df = df.dropna(axis=1, how="all")
                parts.append(f"<details><summary>{len(df)} configurations</summary>{table_html(df)}</details>")
    if extra:
        parts.append(extra)
    return "\n".join(parts)


def figures_html(out: Path, figs: list[dict[str, Any]], sections: dict[str, str]) -> str:
    """The figures, grouped under ``sections`` (section key -> heading), embedded as PNG."""
    parts = ["<h2 id='figures'>Figures</h2>"]
    for section, heading in sections.items():
        items = [f for f in figs if f["section"] == section]
        if not items:
            continue
        parts.append(f"<h3>{heading}</h3>")
        for f in items:
            png = (out / f["png"]).read_bytes()
            parts.append(f"<figure><a href='{html.escape(f['svg'])}'><img alt='{html.escape(f['stem'])}' "
                         f"src='data:image/png;base64,{base64.b64encode(png).decode()}'></a>"
                         f"<figcaption>{html.escape(f['caption'])} Files: <a href='{html.escape(f['png'])}'>"
                         f"{html.escape(f['png'])}</a>, <a href='{html.escape(f['svg'])}'>{html.escape(f['svg'])}</a>."
                         "</figcaption></figure>")
    return "\n".join(parts)


def failures_html(manifest: dict[str, Any], spec_keys: Sequence[str]) -> str:
    """The failed tasks (their configuration from ``spec_keys`` and the error), or nothing."""
    failures = manifest.get("failures") or []
    if not failures:
        return ""
    return "<h2>Failed tasks</h2>" + table_html(pd.DataFrame(
        [{"task": f["task"], "config": json.dumps({k: f["spec"][k] for k in spec_keys if k in f["spec"]}),
          "error": f["error"]} for f in failures]))


def parameters_html(manifest: dict[str, Any]) -> str:
    """The study's parameters as run."""
    return "<h2>Parameters</h2><pre>" + html.escape(json.dumps(manifest.get("params"), indent=2)) + "</pre>"


def provenance(manifest: dict[str, Any], runs_text: str) -> str:
    """tcplab version, git revision, start time, engine, ``runs_text`` and wall times."""
    t = manifest.get("timings", {})
    return (f"tcplab {html.escape(__version__)}; git {html.escape(str(manifest.get('git_revision') or '?')[:12])}; "
            f"started {html.escape(str(manifest.get('started')))}; engine {html.escape(str(manifest.get('engine')))}; "
            f"{runs_text}; simulation "
            f"{t.get('simulate_s', '?')} s wall ({manifest.get('ran')} tasks run, {manifest.get('skipped')} resumed).")


def nav(files: Sequence[str]) -> str:
    """The navigation line: the sections and the study's files."""
    return ("<p><a href='#setup'>Set-up</a> · <a href='#findings'>Findings</a> · <a href='#figures'>Figures</a> · "
            "<a href='#summary'>Summary table</a> · files: " + ", ".join(f"<code>{html.escape(f)}</code>" for f in files)
            + "</p>")


def write_page(out: Path, title: str, intro: str, body: Sequence[str]) -> Path:
    """Writes ``out/report.html``: the title, ``intro`` (HTML) and the ``body`` parts, atomically."""
    from tcplab.report import _CSS, _write_atomic

    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}{EXTRA_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", intro, *[b for b in body if b], "</body></html>"]
    path = out / "report.html"
    _write_atomic(path, "\n".join(parts).encode("utf-8"))
    return path
