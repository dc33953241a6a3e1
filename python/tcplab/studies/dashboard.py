"""The dashboard of ``tcplab study all``: ``DIR/index.html``, every seed's findings on one page.

:func:`write` renders the aggregate document (:mod:`tcplab.studies.suite`) as one
self-contained page: inline CSS, thumbnails embedded as PNG data URIs, no script and
no network; the links (each finding's section of its study's report, the reports
themselves, ``findings.json``) are relative, so the page works opened as a file and
after the directory is moved.

Layout:

1. title and provenance (tcplab version, git revision, time, preset, replication
   scale, total wall time);
2. the totals: the seeds' findings by verdict (held, contradicted, inconclusive, not
   testable here) and the ledgers' coverage of the seeds' result sentences; then one
   row per study with its counts, wall time and tasks run / resumed;
3. one section per study (registry order): seed and name, the citation, the set-up in
   one line and what this run used (replications, links), one thumbnail figure (the
   study's :attr:`~tcplab.studies.Study.thumbnail`, else the first figure of its
   report), and a table of its findings: id (linked to the finding's section of the
   report), claim, verdict, the full-size reference run's verdict beside it, headline
   statistic with its confidence interval; the ledger's coverage line and the result
   sentences it cannot test, with the reasons; then its emulated subset (verdicts and
   sim-vs-kernel differences) or "emulation not run";
4. one section per study file of ``tcplab study all --also`` (after the seeds): its name,
   its question in place of a seed and citation, its file, configurations and claims,
   a thumbnail and the same findings table (no reference verdict: the reference run has
   none). Their findings are totalled on their own line, apart from the seeds'.

Example:
    >>> stat_line({"name": "rel. change of T", "unit": "", "value": -0.1234, "ci": [-0.2, -0.05],
    ...            "level": 0.95, "n_replications": 10})
    'rel. change of T = <b>-0.123</b>, 95% CI [-0.2, -0.05], n = 10'
    >>> stat_line(None)
    '–'
"""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path
from typing import Any

__all__ = ["write", "render", "thumbnail_png", "stat_line", "THUMB_WIDTH"]

#: Width of an embedded thumbnail, pixels (the study's figure is scaled down to it).
THUMB_WIDTH = 480

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:80em;color:#222;line-height:1.4;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:right;vertical-align:top}th{background:#f4f4f4}td.l,th.l{text-align:left}
.held{color:#0a0;font-weight:bold}.contra{color:#c00;font-weight:bold}.inconc{color:#4a6fa5;font-weight:bold}
.na{color:#888}
.small{font-size:.85em;color:#444}.cite{font-style:italic}
.seed{display:flex;gap:1.5em;align-items:flex-start;flex-wrap:wrap}.seed .text{flex:1 1 38em;min-width:28em}
.seed figure{margin:0;flex:0 0 auto;width:min(100%,480px)}.seed img{width:100%;border:1px solid #ddd}
figcaption{font-size:.8em;color:#444}.totals td{font-size:1.05em}.big{font-size:1.6em;font-weight:bold}
.failed{background:#fee;padding:.3em .6em;border-left:3px solid #c00}
"""


def stat_line(st: dict[str, Any] | None) -> str:
    """``name = value unit, 95% CI [low, high], n = R`` (HTML), or ``–`` without a statistic."""
    from tcplab.studies.reporting import fmt

    if not st or st.get("value") is None and not st.get("name"):
        return "–"
    lo, hi = st.get("ci") or [None, None]
    unit = f" {html.escape(str(st['unit']))}" if st.get("unit") else ""
    level = st.get("level") or 0.95
    return (f"{html.escape(str(st.get('name')))} = <b>{fmt(st.get('value'))}</b>{unit}, "
            f"{round(level * 100)}% CI [{fmt(lo)}, {fmt(hi)}], n = {st.get('n_replications')}")


def _verdict(v: str | None) -> str:
    from tcplab.studies.reporting import verdict

    return verdict(v)


def _first_report_figure(report: Path) -> str | None:
    """The stem of the first figure embedded in ``report.html`` (its ``alt`` text)."""
    try:
        m = re.search(r"<img alt='([^']+)'", report.read_text(errors="replace"))
    except OSError:
        return None
    return html.unescape(m.group(1)) if m else None


def thumbnail_png(study_dir: Path, stem: str = "") -> tuple[bytes, str] | None:
    """The study's thumbnail, scaled to :data:`THUMB_WIDTH` pixels wide: (PNG bytes, figure file).

    ``stem`` names ``figures/<stem>.png``; when empty or missing, the first figure of
    ``report.html`` is used, then the first PNG under ``figures/``; ``None`` when the
    study has no figure.
    """
    fig_dir = study_dir / "figures"
    candidates = [stem, _first_report_figure(study_dir / "report.html")]
    paths = [fig_dir / f"{c}.png" for c in candidates if c] + sorted(fig_dir.glob("*.png"))
    path = next((p for p in paths if p.is_file()), None)
    if path is None:
        return None
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        if im.width > THUMB_WIDTH:
            im = im.resize((THUMB_WIDTH, max(1, round(im.height * THUMB_WIDTH / im.width))), Image.LANCZOS)
        buf = io.BytesIO()
        im.save(buf, format="PNG", optimize=True)
    return buf.getvalue(), f"figures/{path.name}"


def _findings_table(findings: list[dict[str, Any]], reference: bool = True) -> str:
    rows = []
    for f in findings:
        ident = html.escape(f["id"])
        link = f"<a href='{html.escape(f['link'])}'>{ident}</a>" if f.get("link") else ident
        tag = " <span class='small'>(extension: tcplab's, not the seed's)</span>" if f.get("extension") else ""
        readings = "".join(f"<br><span class='small'>{html.escape(r)}: {_verdict(v)}</span>"
                           for r, v in (f.get("readings") or {}).items())
        ref = f"<td class='l'>{_verdict(f.get('reference_verdict')) if f.get('reference_verdict') else '–'}</td>" \
            if reference else ""
        rows.append(f"<tr><td class='l'>{link}</td><td class='l'>{html.escape(f['claim'])}{tag}</td>"
                    f"<td class='l'>{_verdict(f['verdict'])}{readings}</td>{ref}"
                    f"<td class='l'>{stat_line(f['statistic']) if f['evaluated'] else '–'}</td></tr>")
    ref_head = "<th class='l'>full-size reference</th>" if reference else ""
    return ("<table><thead><tr><th class='l'>id</th><th class='l'>finding</th><th class='l'>verdict (this run)</th>"
            f"{ref_head}<th class='l'>headline statistic</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _coverage_html(s: dict[str, Any]) -> str:
    """The ledger's coverage line and the result sentences it cannot test, with the reasons."""
    from tcplab.studies.ledger import coverage_text

    cov = s.get("coverage")
    if not cov:
        return "<p class='small'>No claims ledger.</p>"
    items = "".join(f"<li>“{html.escape(x['text'])}”: {html.escape(x['reason'])}</li>" for x in s.get("not_testable") or [])
    return (f"<p><b>Claims ledger:</b> {html.escape(coverage_text(cov))}.</p>"
            + (f"<details><summary>not testable here ({len(s.get('not_testable') or [])})</summary><ul class='small'>"
               f"{items}</ul></details>" if items else ""))


def _differences_table(rows: list[dict[str, Any]]) -> str:
    from tcplab.studies.reporting import fmt

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    body = "".join("<tr>" + "".join(f"<td class='l'>{html.escape(fmt(r.get(c)))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return ("<table><thead><tr>" + "".join(f"<th class='l'>{html.escape(c)}</th>" for c in cols)
            + "</tr></thead><tbody>" + body + "</tbody></table>")


def _emulation_html(s: dict[str, Any]) -> str:
    emu = s.get("emulation") or {}
    if emu.get("status") != "run":
        name = html.escape(s["study"])
        why = (f" It failed: {html.escape(str(emu['error']))}." if emu.get("error") else
               f" Run it with <code>tcplab study {name} --mode emulate --out DIR/{name}/emulate</code> or "
               "<code>tcplab study all --emulate</code> (root, real time)." if emu.get("available") else
               " This study has no emulate mode.")
        return ("<p class='small'><b>Emulation</b> (real Linux TCP through the same link models): emulation not run."
                + why + "</p>")
    parts = [f"<h3>Emulated subset (real Linux TCP)</h3><p class='small'>{html.escape(emu.get('scope') or '')} "
             f"Source: <code>{html.escape(emu.get('source') or '')}</code>.</p>"]
    if emu.get("findings"):
        parts.append(_findings_table(emu["findings"], reference=False))
    if emu.get("differences"):
        parts.append("<p class='small'>Simulation vs kernel:</p>" + _differences_table(emu["differences"]))
    return "\n".join(parts)


def _count(s: dict[str, Any], verdict: str) -> int:
    return sum(1 for f in s["findings"] if f["verdict"] == verdict and not f.get("extension"))


def _wall(v: Any) -> str:
    return "–" if v is None else f"{float(v):.1f} s"


def _or_dash(v: Any) -> str:
    return "–" if v is None else str(v)


def _phases(t: dict[str, Any]) -> str:
    """The study's simulation and figure-rendering wall times (its ``study.json``)."""
    if "simulate_s" not in t:
        return "–"
    return f"{float(t['simulate_s']):.1f} s / {float(t.get('figures_s') or 0.0):.1f} s"


def _is_file(s: dict[str, Any]) -> bool:
    """Whether an aggregate entry is a study file's (``--also``), not a seed's."""
    return s.get("kind") == "study file"


def _study_html(out: Path, s: dict[str, Any], thumbnail: str) -> str:
    name = html.escape(s["study"])
    is_file = _is_file(s)
    runs = []
    if s.get("replications") is not None:
        runs.append(f"{s['replications']} replications")
    if s.get("links"):
        runs.append("links " + ", ".join(html.escape(str(x)) for x in s["links"]))
    if s.get("wall_s") is not None:
        runs.append(f"{_wall(s['wall_s'])} wall")
    if is_file:
        head = [f"<h2 id='study-{name}'>Study file · <code>{name}</code></h2>",
                f"<p><b>Question:</b> {html.escape(s.get('question') or '(none stated in the file)')}</p>",
                f"<p><b>Set-up:</b> {html.escape(s['setup'])}.</p>"]
    else:
        head = [f"<h2 id='study-{name}'>Seed {html.escape(s['seed'])} · <code>{name}</code></h2>",
                f"<p class='cite'>{html.escape(s['citation'] or '(no citation registered)')}</p>",
                f"<p><b>Set-up:</b> {html.escape(s['setup'])}.</p>"]
    if runs:
        head.append(f"<p class='small'>This run: {'; '.join(runs)}. "
                    + (f"<a href='{html.escape(s['report'])}'>Full report</a> · " if s.get("report") else "")
                    + f"<a href='{name}/findings.json'>findings.json</a></p>")
    if s["status"] == "failed":
        head.append(f"<p class='failed'>The study failed: {html.escape(str(s.get('error') or 'no findings.json'))}</p>")
    elif s["status"] == "not run":
        how = f"tcplab study run {html.escape(str(s.get('study_file')))}" if is_file else f"tcplab study {name}"
        head.append(f"<p class='small'>Not run here (<code>{how}</code> runs it).</p>")
    if is_file:
        body = ((_findings_table(s["findings"], reference=False) if s["findings"] else "")
                + "<p class='small'>A study file's claims are its own, fixed in the file before any run; it has no "
                  "seed and no claims ledger, and is not counted in the seeds' totals.</p>")
    else:
        body = (_findings_table(s["findings"]) if s["findings"] else "") + _coverage_html(s)
    thumb = ""
    study_dir = out / s["study"]
    t = thumbnail_png(study_dir, thumbnail)
    if t is not None:
        png, rel = t
        href = html.escape(f"{s['study']}/{rel}")
        thumb = (f"<figure><a href='{html.escape(s['report'] or href)}'><img alt='{name} thumbnail' "
                 f"src='data:image/png;base64,{base64.b64encode(png).decode()}'></a>"
                 f"<figcaption>{html.escape(rel)}</figcaption></figure>")
    return ("<section>" + "".join(head) + f"<div class='seed'><div class='text'>{body}"
            f"{'' if is_file else _emulation_html(s)}</div>"
            + thumb + "</div></section>")


def render(out: str | Path, doc: dict[str, Any]) -> str:
    """The dashboard page (HTML text) for the aggregate document ``doc`` of directory ``out``."""
    from tcplab import studies

    out = Path(out)
    t = doc["totals"]
    prov = (f"tcplab {html.escape(str(doc.get('tcplab_version')))}; git "
            f"{html.escape(str(doc.get('git_revision') or '?')[:12])}; generated {html.escape(str(doc.get('generated')))}; "
            f"preset {html.escape(str(doc.get('preset') or 'none (study defaults)'))}; replications × "
            f"{doc.get('reps_scale')}; total {_wall(doc.get('wall_s'))} wall.")
    totals = ("<table class='totals'><tr><th>studies</th><th>seed findings</th><th>held</th><th>contradicted</th>"
              "<th>inconclusive (not enough data)</th><th>not testable here</th><th>not run</th>"
              "<th>seed result sentences</th></tr>"
              f"<tr><td class='big'>{t['studies']}</td><td class='big'>{t['findings']}</td>"
              f"<td class='big held'>{t['held']}</td><td class='big contra'>{t['contradicted']}</td>"
              f"<td class='big inconc'>{t['inconclusive']}</td><td class='big na'>{t['not_testable']}</td>"
              f"<td class='big na'>{t['not_run']}</td>"
              f"<td class='l'>{t['result_sentences']}: {t['sentences_checked']} checked, "
              f"{t['sentences_not_testable']} not testable, {t['sentences_setup']} set-up</td></tr></table>")
    ref = doc.get("reference")
    ref_line = ("<p class='small'>Full-size reference verdicts (beside each finding) come from "
                f"<code>{html.escape(str(ref['path']))}</code>, git {html.escape(str(ref.get('git_revision') or '?')[:12])}, "
                f"generated {html.escape(str(ref.get('generated')))}.</p>" if ref else
                "<p class='small'>No full-size reference run is recorded.</p>")
    ft = doc.get("file_totals")
    if ft:
        totals += (f"<p><b>Study files</b> (<code>--also</code>, not counted above): {ft['studies']} with "
                   f"{ft['findings']} findings: <span class='held'>{ft['held']} held</span>, "
                   f"<span class='contra'>{ft['contradicted']} contradicted</span>, "
                   f"<span class='inconc'>{ft['inconclusive']} inconclusive</span>, {ft['not_run']} not run.</p>")
    rows = []
    for s in doc["studies"]:
        name = html.escape(s["study"])
        emu = "–" if _is_file(s) else "run" if (s.get("emulation") or {}).get("status") == "run" else "not run"
        seed = "study file" if _is_file(s) else html.escape(s["seed"])
        rows.append(f"<tr><td class='l'><a href='#study-{name}'>{name}</a></td><td>{seed}</td>"
                    f"<td class='l'>{html.escape(s['status'])}</td>"
                    f"<td>{sum(not f.get('extension') for f in s['findings'])}</td>"
                    f"<td>{_count(s, 'held')}</td><td>{_count(s, 'contradicted')}</td><td>{_count(s, 'inconclusive')}</td>"
                    f"<td>{_count(s, 'not testable here')}</td>"
                    f"<td>{_wall(s.get('wall_s'))}</td><td>{_phases(s.get('timings') or {})}</td>"
                    f"<td>{_or_dash(s.get('tasks_run'))} / {_or_dash(s.get('tasks_resumed'))}</td>"
                    f"<td class='l'>{emu}</td></tr>")
    per_study = ("<table><thead><tr><th class='l'>study</th><th>seed</th><th class='l'>status</th><th>findings</th>"
                 "<th>held</th><th>contradicted</th><th>inconclusive</th><th>not testable here</th><th>wall time</th>"
                 "<th>simulation / figures</th>"
                 "<th>tasks run / resumed</th><th class='l'>emulation</th></tr></thead><tbody>"
                 + "".join(rows) + "</tbody></table>")
    thumbs = {s.name: s.thumbnail for s in studies.STUDIES.values()}
    sections = [_study_html(out, s, thumbs.get(s["study"], "")) for s in doc["studies"]]
    title = f"tcplab study all: {t['studies']} seed studies, {t['findings']} seed findings"
    if ft:
        title += f"; {ft['studies']} study file{'s' if ft['studies'] != 1 else ''}, {ft['findings']} findings"
    return "\n".join([
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p class='small'>{prov} Aggregate: <a href='findings.json'>findings.json</a> "
        "(one schema for every study; compare two releases finding by finding).</p>",
        "<h2 id='totals'>Totals</h2>", totals, ref_line, per_study,
        f"<p class='small'>A check is {_verdict('held')} when its confidence interval lies on the claimed side (or inside "
        f"the equivalence margin stated with a \u201cno effect\u201d claim), {_verdict('contradicted')} when it lies on "
        f"the other side (or outside the margin), and {_verdict('inconclusive')} when the run was too small to tell: "
        "the report gives the replications that would settle it. A finding is contradicted if any of its checks is and "
        "held if all hold. Extensions are tcplab's own checks and are not counted. Each id links to the section of the "
        "study's report that explains it.</p>",
        *sections, "</body></html>"])


def write(out: str | Path, doc: dict[str, Any]) -> Path:
    """Writes ``out/index.html`` atomically; returns its path."""
    from tcplab.report import _write_atomic

    path = Path(out) / "index.html"
    _write_atomic(path, render(out, doc).encode("utf-8"))
    return path
