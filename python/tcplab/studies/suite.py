"""``tcplab study all``: every registered study, one aggregate ``findings.json``, one dashboard.

:func:`run_all` runs each study of the registry (:data:`tcplab.studies.STUDIES`, in its
order) into ``DIR/<study>/`` with the shared study machine, so each one resumes as
``tcplab study NAME`` does (finished tasks in ``DIR/<study>/tasks`` are skipped). One
progress display (:class:`tcplab.executor.ProgressGroup`) counts the studies and shows
the running study's bar below. A study that fails is recorded and the others still
run. Then it writes:

- ``DIR/findings.json``: every study's findings in one schema (:func:`aggregate`,
  :data:`SCHEMA`), made to be compared between releases (:func:`diff`);
- ``DIR/all.json``: what ran (settings, wall times, failures), rewritten after each study;
- ``DIR/index.html``: the dashboard (:mod:`tcplab.studies.dashboard`).

Nothing here knows a study by name: a study appears in the dashboard and the aggregate
as soon as it is registered.

**Study files beside the seeds** (``tcplab study all --also FILE``): ``also`` is a list of
loaded study files (:mod:`tcplab.studies.studyfile`, every field and configuration
checked before anything runs; :func:`check_also` refuses a name that is not a plain
directory name or is taken). Each runs after the registered studies into
``DIR/<name>/`` at its own ``reps`` times ``reps_scale`` (at least 2; a preset has no
meaning for a file) and is listed after the seeds, with ``kind`` ``study file``, its
``question`` and ``study_file`` path in place of a seed and citation. Its findings are
counted in ``file_totals``, never in ``totals`` (which counts the seeds' own findings, so
that two releases' seed totals stay comparable).

**The aggregate ``findings.json``** (schema :data:`SCHEMA`)::

    {"schema": "tcplab-findings/2", "tcplab_version", "git_revision", "generated",
     "preset", "reps_scale", "wall_s", "reference": REFERENCE,
     "totals": TOTALS, "file_totals": TOTALS (of the study files; optional),
     "studies": [STUDY, ...]}                 # registry order, then the study files

    TOTALS  = {"studies", "findings" (the seeds' own: extensions are not counted),
               "checked" (evaluated), "held", "contradicted", "inconclusive", "not_testable",
               "not_run", "extensions", "result_sentences", "sentences_checked",
               "sentences_not_testable", "sentences_setup"}

    STUDY   = {"study", "kind": "seed" | "study file", "seed" (null for a study file),
               "question" (a study file's), "study_file" (its path), "citation", "setup",
               "status": "ok" | "failed" | "not run",
               "error", "replications", "links", "params", "wall_s", "tasks_run",
               "tasks_resumed", "failed_tasks", "report", "timings" (the study's own
               simulate_s, analysis_s, figures_s, report_s, total_s), "findings": [FINDING, ...],
               "coverage": the ledger's counts (tcplab.studies.ledger) or null,
               "not_testable": [{"id", "text", "reason"}, ...], "emulation": EMULATION}
    FINDING = {"key": "STUDY/ID", "id", "claim", "verdict", "evaluated", "extension",
               "statistic": STATISTIC, "link": "STUDY/report.html#finding-ID",
               "readings": {READING: verdict} (optional), "reference_verdict": verdict | null,
               "checks": [{"id", "claim", "verdict", "extension", "reading", "reps_needed",
                           "statistic"}, ...]}
    REFERENCE = {"path", "git_revision", "generated", "preset", "totals"} of the full-size
                reference run the verdicts are shown beside (docs/studies/reference-findings.json;
                docs/studies/reference.md says how it was made), or null
    EMULATION = {"status": "run" | "not run", "available": the study has an emulate mode,
                 "error", "scope", "source", "findings": [FINDING, ...], "differences": [ROW, ...]}

``verdict`` is ``held``, ``contradicted``, ``inconclusive`` or ``not testable here``
(:data:`tcplab.studies.findings.VERDICTS`), or ``not run``; STATISTIC is the study's (:mod:`tcplab.studies.findings`): ``name``,
``unit``, ``value``, ``ci``, ``level``, ``n_replications``. Finding keys are unique, so
two documents are compared finding by finding (:func:`diff`; from a shell or a CI job,
``python -m tcplab.studies.suite OLD/findings.json NEW/findings.json`` prints the changes
and exits with 1 when a verdict changed).

**Emulated subsets.** A study that also ran an emulated subset (``--mode emulate``:
real Linux TCP through the same link models) shows it beside its simulation when its
output has either

- an ``"emulation"`` object in its ``findings.json``: ``{"scope": one line, "findings":
  [FINDING in the findings.json format, evaluated on the kernel runs], "differences":
  [{"metric", "unit", "simulated", "emulated", "difference", ...config columns}]}``, or
- a findings document of its own at ``DIR/<study>/emulate/findings.json`` (its optional
  ``differences`` key as above), which is what ``tcplab study NAME --mode emulate --out
  DIR/NAME/emulate`` writes; its ``comparison.parquet`` (one row per configuration,
  replication and metric, with the engines ``sim`` and ``kernel`` side by side) is then
  summarised per metric as the differences (:func:`differences_of`).

Otherwise the study's emulation status is ``not run``.

Example:
    >>> old = {"studies": [{"study": "s", "findings": [{"key": "s/F1", "verdict": "inconclusive"}]}]}
    >>> new = {"studies": [{"study": "s", "findings": [{"key": "s/F1", "verdict": "held"},
    ...                                                 {"key": "s/F2", "verdict": "held"}]}]}
    >>> for line in diff(old, new): print(line)
    s/F1 changed from inconclusive to held
    s/F2 is new (held)
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tcplab.executor import Interrupted, ProgressGroup
from tcplab.studies import findings as fnd

if TYPE_CHECKING:
    from tcplab.studies.studyfile import StudyFile

__all__ = ["SCHEMA", "VERDICTS", "StudyOutcome", "SuiteResult", "run_all", "aggregate", "validate", "diff",
           "emulation_of", "differences_of", "has_emulation", "check_also", "file_reps", "main", "SEED", "STUDY_FILE"]

#: The aggregate document's schema name; bumped when its shape changes.
SCHEMA = "tcplab-findings/2"

#: The verdicts a finding may have in the aggregate (the four of
#: :data:`tcplab.studies.findings.VERDICTS`, and ``not run``).
VERDICTS: tuple[str, ...] = (*fnd.VERDICTS, fnd.NOT_RUN)

#: The full-size reference run whose verdicts the dashboard shows beside a run's own
#: (``tcplab study all`` at every study's default replications; docs/studies/reference.md).
REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "studies" / "reference-findings.json"

#: An aggregate entry's ``kind``: a registered study of a seed, or a study file (``--also``).
SEED = "seed"
STUDY_FILE = "study file"
#: A study file's name is its directory under ``DIR``: a plain name, none of the suite's own files.
_DIR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_RESERVED = ("findings.json", "all.json", "index.html")


@dataclass
class StudyOutcome:
    """How one study of ``tcplab study all`` went."""

    name: str
    status: str  # "ok", "failed" or "not run"
    settings: dict[str, Any] = field(default_factory=dict)
    wall_s: float | None = None
    tasks_run: int = 0
    tasks_resumed: int = 0
    failed_tasks: int = 0
    error: str | None = None
    #: With ``emulate``: wall time and error of the study's emulated subset.
    emulate_wall_s: float | None = None
    emulate_error: str | None = None
    #: ``seed`` (a registered study) or ``study file`` (``--also``), with the file's path.
    kind: str = SEED
    file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able (for ``all.json``)."""
        return dict(self.__dict__)


@dataclass
class SuiteResult:
    """What :func:`run_all` wrote: the directory, the dashboard, the aggregate and each study's outcome."""

    out: Path
    index: Path
    findings: dict[str, Any]
    outcomes: list[StudyOutcome]
    wall_s: float


def check_also(also: Sequence["StudyFile"]) -> None:
    """Refuses study files that cannot sit beside the registered studies in one directory.

    A study file's name (its ``name``, or the file's stem) is its directory under the
    suite's ``DIR`` and its findings' key prefix, so it must be a plain name
    (letters, digits, ``.``, ``_``, ``-``), none of the registered studies' names, none of
    the suite's own files, and unique among the files.

    Raises:
        ValueError: naming the file, the name and what is accepted.

    Example:
        >>> from tcplab.studies.studyfile import StudyFile, TEMPLATE
        >>> check_also([StudyFile.from_toml(TEMPLATE.format(name="satellite"), "mine.toml")])
        Traceback (most recent call last):
        ...
        ValueError: --also mine.toml: name 'satellite' is a registered study's; give the file another `name`
    """
    from tcplab import studies

    seen: dict[str, str] = {}
    for sf in also:
        name, file = sf.study_name, sf._file
        if not _DIR_NAME.match(name) or name in _RESERVED:
            raise ValueError(f"--also {file}: name {name!r} is not a plain directory name; accepted: letters, digits, "
                             "'.', '_' and '-', starting with a letter or digit, other than " + ", ".join(_RESERVED))
        if name in studies.STUDIES:
            raise ValueError(f"--also {file}: name {name!r} is a registered study's; give the file another `name`")
        if name in seen:
            raise ValueError(f"--also {file}: name {name!r} is also the name of {seen[name]}; give one of them "
                             "another `name`")
        seen[name] = file


def file_reps(sf: "StudyFile", reps_scale: float = 1.0) -> int:
    """A study file's replications under ``tcplab study all``: its ``reps`` x ``reps_scale``, at least 2
    (the rule of :meth:`tcplab.studies.Study.settings`; a preset has no meaning for a file).

    Example:
        >>> from tcplab.studies.studyfile import StudyFile, TEMPLATE
        >>> sf = StudyFile.from_toml(TEMPLATE.format(name="demo"))
        >>> sf.reps, file_reps(sf, 0.5), file_reps(sf, 0.01)
        (6, 3, 2)
    """
    if not reps_scale > 0:
        raise ValueError(f"reps_scale must be > 0, got {reps_scale}")
    return max(2, round(sf.reps * reps_scale))


def run_all(out: str | Path, preset: str | None = None, reps_scale: float = 1.0, jobs: int | None = None,
            scheduler: str | None = None, progress: bool = True, only: Sequence[str] | None = None,
            emulate: bool = False, also: Sequence["StudyFile"] = ()) -> SuiteResult:
    """Runs (or resumes) every registered study into ``out/<study>/``, then the aggregate and dashboard.

    Args:
        out: the results directory.
        preset: a size every study may define (:attr:`tcplab.studies.Study.presets`:
            ``tiny`` for CI, ``demo`` for ``make demo``); ``None`` runs the defaults.
        reps_scale: multiplies each study's replications (at least 2 remain).
        jobs, scheduler: the engine, as for ``tcplab study``.
        progress: one progress display on stderr.
        only: run only these registered studies (the others are listed as ``not run``;
            an empty list runs none of them). ``None``: every one.
        emulate: after its simulation, run each study's emulated subset (its emulate mode,
            :func:`has_emulation`; real time, needs root) into ``out/<study>/emulate``;
            studies without one are unchanged.
        also: study files (loaded and checked, :func:`tcplab.studies.studyfile.load`),
            run after the registered studies into ``out/<name>/`` at :func:`file_reps`
            replications, and listed after them (module doc).

    Raises:
        KeyError: a name in ``only`` is not registered.
        ValueError: ``reps_scale`` is not positive, or a study file's name is refused
            (:func:`check_also`); nothing has run.
    """
    from tcplab import studies

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [studies.get(n).name for n in only] if only is not None else studies.names()
    plan = {name: studies.get(name).settings(preset, reps_scale) for name in chosen}  # refuses bad values first
    check_also(also)
    files = {sf.study_name: sf for sf in also}
    t0 = time.perf_counter()
    outcomes: list[StudyOutcome] = [StudyOutcome(name, "not run", plan.get(name, {})) for name in studies.names()]
    outcomes += [StudyOutcome(name, "not run", {"reps": file_reps(sf, reps_scale)}, kind=STUDY_FILE, file=sf._file)
                 for name, sf in files.items()]
    with ProgressGroup(len(chosen) + len(files), enabled=progress, label="study all", unit="studies") as group:
        for outcome in outcomes:
            if outcome.kind == STUDY_FILE:
                _run_file(out, files[outcome.name], outcome, jobs, scheduler, progress, group)
                _write_manifest(out, preset, reps_scale, outcomes, time.perf_counter() - t0)
                continue
            if outcome.name not in plan:
                continue
            study = studies.get(outcome.name)
            group.status(study.name)
            _recorded(outcome, f"study {study.name}",
                      lambda: study.run(out / study.name, jobs=jobs, scheduler=scheduler, progress=progress,
                                        **outcome.settings))
            if emulate and has_emulation(study):
                group.status(f"{study.name}, emulated subset (real time)")
                t_emu = time.perf_counter()
                try:
                    study.emulate(out / study.name / "emulate", progress=progress)  # type: ignore[attr-defined]
                except (RuntimeError, ValueError, OSError) as e:  # e.g. not root: the simulation still counts
                    outcome.emulate_error = f"{type(e).__name__}: {e}"
                outcome.emulate_wall_s = round(time.perf_counter() - t_emu, 3)
            group.status(f"{study.name} done")
            group.advance()
            _write_manifest(out, preset, reps_scale, outcomes, time.perf_counter() - t0)
    wall = round(time.perf_counter() - t0, 3)
    doc = aggregate(out, outcomes, preset=preset, reps_scale=reps_scale, wall_s=wall, also=also)
    from tcplab.studies import dashboard, engine

    engine.write_json(doc, out / "findings.json")
    index = dashboard.write(out, doc)
    _write_manifest(out, preset, reps_scale, outcomes, time.perf_counter() - t0)
    return SuiteResult(out, index, doc, outcomes, wall)


def _recorded(outcome: StudyOutcome, what: str, run: Callable[[], Any]) -> None:
    """Runs one study (``run()``, a :class:`tcplab.studies.engine.StudyResult`) and records
    its status, task counts and wall time in ``outcome``. Ctrl-C propagates, naming
    ``what`` (the studies before it are complete, its finished runs kept); any other
    failure is recorded, and the suite goes on to the next study and the dashboard."""
    t0 = time.perf_counter()
    try:
        res = run()
    except Interrupted as e:
        e.of = what
        raise
    except (RuntimeError, ValueError, OSError) as e:
        outcome.status, outcome.error = "failed", f"{type(e).__name__}: {e}"
    else:
        outcome.status = "ok"
        outcome.tasks_run, outcome.tasks_resumed, outcome.failed_tasks = res.ran, res.skipped, len(res.failures)
    outcome.wall_s = round(time.perf_counter() - t0, 3)


def _run_file(out: Path, sf: "StudyFile", outcome: StudyOutcome, jobs: int | None, scheduler: str | None,
              progress: bool, group: ProgressGroup) -> None:
    """Runs (or resumes) one study file of ``also`` into ``out/<name>/``; its outcome is recorded in ``outcome``."""
    from tcplab.studies import studyfile

    group.status(f"{outcome.name} (study file)")
    _recorded(outcome, f"study file {outcome.file}",
              lambda: studyfile.run(sf, out / outcome.name, reps=outcome.settings["reps"], jobs=jobs,
                                    scheduler=scheduler, progress=progress))
    group.status(f"{outcome.name} done")
    group.advance()


def _write_manifest(out: Path, preset: str | None, reps_scale: float, outcomes: list[StudyOutcome],
                    wall_s: float) -> None:
    from tcplab.studies import engine

    engine.write_json({"preset": preset, "reps_scale": reps_scale, "wall_s": round(wall_s, 3),
                       "studies": [o.as_dict() for o in outcomes]}, out / "all.json")


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _finding(study: str, f: dict[str, Any], report: str | None) -> dict[str, Any]:
    """One finding of a study's ``findings.json`` in the aggregate's shape."""
    from tcplab.studies.reporting import finding_anchor

    out = {"key": f"{study}/{f['id']}", "id": f["id"], "claim": f.get("claim", ""), "verdict": f["verdict"],
           "evaluated": bool(f.get("evaluated")), "extension": bool(f.get("extension")), "statistic": f.get("statistic"),
           "link": f"{report}#{finding_anchor(f['id'])}" if report else None,
           "checks": [{"id": c["id"], "claim": c.get("claim", ""), "verdict": c["verdict"],
                       "extension": bool(c.get("extension")), "reading": c.get("reading"),
                       "reps_needed": c.get("reps_needed"), "statistic": c.get("statistic")} for c in f.get("checks", [])]}
    if f.get("readings"):
        out["readings"] = dict(f["readings"])
    return out


def _totals(entries: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The aggregate's totals: the seeds' own findings by verdict, extensions apart, and the ledgers' coverage."""
    every = [f for e in entries for f in e["findings"] if not f.get("extension")]
    covs = [e.get("coverage") or {} for e in entries]
    return {"studies": len(entries), "findings": len(every), "checked": sum(bool(f["evaluated"]) for f in every),
            "held": sum(f["verdict"] == fnd.HELD for f in every),
            "contradicted": sum(f["verdict"] == fnd.CONTRADICTED for f in every),
            "inconclusive": sum(f["verdict"] == fnd.INCONCLUSIVE for f in every),
            "not_testable": sum(f["verdict"] == fnd.NOT_TESTABLE for f in every),
            "not_run": sum(f["verdict"] == fnd.NOT_RUN for f in every),
            "extensions": sum(bool(f.get("extension")) for e in entries for f in e["findings"]),
            "result_sentences": sum(c.get("result_sentences", 0) for c in covs),
            "sentences_checked": sum(c.get("checked", 0) for c in covs),
            "sentences_not_testable": sum(c.get("not_testable", 0) for c in covs),
            "sentences_setup": sum(c.get("setup", 0) for c in covs)}


def reference_verdicts(path: Path | None = None) -> tuple[dict[str, str], dict[str, Any] | None]:
    """The verdicts of the full-size reference run by finding key, and where they come from.

    Returns ``({}, None)`` when there is no reference document (or it does not parse).
    """
    path = REFERENCE if path is None else path
    doc = _read_json(path)
    if doc is None or doc.get("schema") != SCHEMA:
        return {}, None
    verdicts = {f["key"]: f["verdict"] for s in doc.get("studies", []) for f in s.get("findings", [])}
    try:
        shown = str(path.resolve().relative_to(REFERENCE.parents[2]))
    except ValueError:
        shown = str(path)
    return verdicts, {"path": shown, "git_revision": doc.get("git_revision"), "generated": doc.get("generated"),
                      "preset": doc.get("preset"), "totals": doc.get("totals")}


def differences_of(path: Path) -> list[dict[str, Any]]:
    """Per metric, the simulator against the kernel, from an emulate-mode ``comparison.parquet``.

    Rows: ``metric`` (its label when the table has one), ``unit``, ``runs`` (configuration
    x replication pairs), the means of ``sim`` and ``kernel``, of their ``difference``
    (kernel - sim) and, where the table has it, of the ``relative`` difference. Empty
    when the file is missing or has no ``metric``, ``sim`` and ``kernel`` columns.
    """
    import math

    import pandas as pd

    if not path.is_file():
        return []
    comp = pd.read_parquet(path)
    if not {"metric", "sim", "kernel"} <= set(comp.columns):
        return []
    rows = []
    for metric, part in comp.groupby("metric", sort=False):
        sim, kernel = part["sim"].astype(float), part["kernel"].astype(float)
        diff = part["difference"].astype(float) if "difference" in part else kernel - sim
        row = {"metric": str(part["label"].iloc[0]) if "label" in part else str(metric),
               "unit": str(part["unit"].iloc[0]) if "unit" in part else "", "runs": int(len(part)),
               "simulated (mean)": sim.mean(), "emulated (mean)": kernel.mean(), "difference (mean)": diff.mean()}
        if "relative" in part:
            row["relative (mean)"] = part["relative"].astype(float).mean()
        rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return rows


def has_emulation(study: Any) -> bool:
    """Whether a registered study has an emulate mode (``tcplab study NAME --mode emulate``).

    Example:
        >>> from tcplab import studies
        >>> has_emulation(studies.get("satellite"))
        False
    """
    return getattr(study, "emulate_runner", None) is not None


def emulation_of(study_dir: Path, findings: dict[str, Any] | None) -> dict[str, Any]:
    """The emulated subset of a study's output, in the aggregate's shape (module doc, "Emulated subsets").

    Example:
        >>> emulation_of(Path("/nonexistent"), {"findings": []})["status"]
        'not run'
    """
    name = study_dir.name
    source, emu = None, None
    if findings and isinstance(findings.get("emulation"), dict):
        source, emu = f"{name}/findings.json#emulation", findings["emulation"]
    else:
        doc = _read_json(study_dir / "emulate" / "findings.json")
        if doc is not None:
            source, emu = f"{name}/emulate/findings.json", doc
            if not emu.get("differences"):
                emu = {**emu, "differences": differences_of(study_dir / "emulate" / "comparison.parquet")}
    if emu is None:
        return {"status": "not run", "scope": None, "source": None, "findings": [], "differences": []}
    # The emulated subset's own report, when it has one, is the target of its findings' links.
    report = study_dir / "emulate" / "report.html"
    link = f"{name}/emulate/report.html" if report.is_file() else None
    return {"status": "run", "scope": emu.get("scope"), "source": source,
            "findings": [_finding(name, f, link) for f in emu.get("findings", [])],
            "differences": list(emu.get("differences") or [])}


def aggregate(out: str | Path, outcomes: Sequence[StudyOutcome] | None = None, preset: str | None = None,
              reps_scale: float = 1.0, wall_s: float | None = None, reference: Path | None = None,
              also: Sequence["StudyFile"] = ()) -> dict[str, Any]:
    """The aggregate ``findings.json`` of ``out`` (every registered study, registry order, then ``also``).

    Studies without a ``findings.json`` under ``out`` appear with ``status`` ``not run``
    (or ``failed``, with the error, when ``outcomes`` says so) and no findings. Each
    finding carries the verdict of the full-size reference run (``reference``, default
    :data:`REFERENCE`) as ``reference_verdict`` (none for a study file's: the reference
    run has none). ``also``: the study files of ``tcplab study all --also``, read from
    ``out/<name>/`` (module doc, "Study files beside the seeds").
    """
    from tcplab import __version__, studies
    from tcplab.studies import engine

    out = Path(out)
    ref_verdicts, ref_info = reference_verdicts(reference)
    by_name = {o.name: o for o in outcomes or []}
    entries = []
    for study in studies.STUDIES.values():
        d = out / study.name
        doc = _read_json(d / "findings.json")
        manifest = _read_json(d / "study.json") or {}
        outcome = by_name.get(study.name)
        status = outcome.status if outcome else ("ok" if doc is not None else "not run")
        if status == "ok" and doc is None:
            status = "failed"
        report = f"{study.name}/report.html" if (d / "report.html").is_file() else None
        timings = manifest.get("timings") or {}
        found = [_finding(study.name, f, report) for f in (doc or {}).get("findings", [])]
        for f in found:
            f["reference_verdict"] = ref_verdicts.get(f["key"])
        led = (doc or {}).get("ledger") or {}
        entries.append({
            "study": study.name, "kind": SEED, "seed": study.seed, "citation": study.citation, "setup": study.summary,
            "status": status, "error": outcome.error if outcome else None,
            "replications": (doc or {}).get("replications"), "links": (doc or {}).get("links"),
            "params": manifest.get("params"),
            "wall_s": outcome.wall_s if outcome and outcome.wall_s is not None else timings.get("total_s"),
            "tasks_run": manifest.get("ran"), "tasks_resumed": manifest.get("skipped"),
            "failed_tasks": len(manifest.get("failures") or []), "report": report,
            "timings": {k: timings[k] for k in ("simulate_s", "analysis_s", "figures_s", "report_s", "total_s")
                        if k in timings},
            "findings": found, "coverage": led.get("coverage"),
            "not_testable": list((led.get("coverage") or {}).get("not_testable_reasons") or []),
            "emulation": {**emulation_of(d, doc), "available": has_emulation(study),
                          "error": outcome.emulate_error if outcome else None},
        })
    files = [_file_entry(out, sf, by_name.get(sf.study_name)) for sf in also]
    doc = {"schema": SCHEMA, "tcplab_version": __version__, "git_revision": engine.git_revision(),
           "generated": engine.now(), "preset": preset, "reps_scale": reps_scale, "wall_s": wall_s,
           "reference": ref_info, "totals": _totals(entries), "studies": entries + files}
    if files:
        doc["file_totals"] = _file_totals(files)
    return doc


def _file_entry(out: Path, sf: "StudyFile", outcome: StudyOutcome | None) -> dict[str, Any]:
    """A study file's entry in the aggregate: the shape of a seed's, with its question and path for a seed."""
    name = sf.study_name
    d = out / name
    doc = _read_json(d / "findings.json")
    manifest = _read_json(d / "study.json") or {}
    status = outcome.status if outcome else ("ok" if doc is not None else "not run")
    if status == "ok" and doc is None:
        status = "failed"
    report = f"{name}/report.html" if (d / "report.html").is_file() else None
    timings = manifest.get("timings") or {}
    factors = "; ".join(f"{f.name}: {', '.join(f.labels or [])}" for f in sf.factors)
    setup = (f"{len(sf.configurations())} configurations ({factors}), {len(sf.metrics)} metric(s), "
             f"{len(sf.claims)} claim(s); study file {sf._file}")
    return {
        "study": name, "kind": STUDY_FILE, "seed": None, "question": sf.question, "study_file": sf._file,
        "citation": None, "setup": setup, "status": status, "error": outcome.error if outcome else None,
        "replications": (doc or {}).get("replications"), "links": None, "params": manifest.get("params"),
        "wall_s": outcome.wall_s if outcome and outcome.wall_s is not None else timings.get("total_s"),
        "tasks_run": manifest.get("ran"), "tasks_resumed": manifest.get("skipped"),
        "failed_tasks": len(manifest.get("failures") or []), "report": report,
        "timings": {k: timings[k] for k in ("simulate_s", "analysis_s", "figures_s", "report_s", "total_s")
                    if k in timings},
        "findings": [dict(_finding(name, f, report), reference_verdict=None) for f in (doc or {}).get("findings", [])],
        "coverage": None, "not_testable": [],
        "emulation": {"status": "not run", "scope": None, "source": None, "findings": [], "differences": [],
                      "available": False, "error": None},
    }


def _file_totals(entries: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The study files' findings by verdict (``file_totals``): :func:`_totals` without the ledgers' sentences."""
    return {k: v for k, v in _totals(entries).items() if not k.startswith(("sentences_", "result_"))}


def validate(doc: dict[str, Any]) -> None:
    """Raises ``ValueError`` naming the first place where an aggregate document breaks :data:`SCHEMA`.

    Example:
        >>> validate({"schema": "tcplab-findings/0"})
        Traceback (most recent call last):
        ...
        ValueError: findings.json: schema 'tcplab-findings/0', expected 'tcplab-findings/2'
    """
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"findings.json: schema {doc.get('schema')!r}, expected {SCHEMA!r}")
    missing = sorted({"totals", "studies", "generated", "preset", "reps_scale"} - set(doc))
    if missing:
        raise ValueError(f"findings.json: missing key(s) {', '.join(missing)}")
    keys: set[str] = set()
    for s in doc["studies"]:
        need = ("study", "seed", "citation", "setup", "status", "findings", "emulation", "wall_s", "report")
        if s.get("kind") == STUDY_FILE:
            need += ("question", "study_file")
        for k in need:
            if k not in s:
                raise ValueError(f"findings.json: study {s.get('study')!r}: missing {k!r}")
        if s["status"] not in ("ok", "failed", "not run"):
            raise ValueError(f"findings.json: study {s['study']!r}: status {s['status']!r}, "
                             "expected ok, failed or not run")
        for f in s["findings"]:
            where = f"findings.json: finding {f.get('key')!r}"
            if f.get("key") != f"{s['study']}/{f.get('id')}" or f["key"] in keys:
                raise ValueError(f"{where}: key must be STUDY/ID and unique")
            keys.add(f["key"])
            if f.get("verdict") not in VERDICTS:
                raise ValueError(f"{where}: verdict {f.get('verdict')!r}; expected one of {', '.join(VERDICTS)}")
    seeds = [s for s in doc["studies"] if s.get("kind") != STUDY_FILE]
    files = [s for s in doc["studies"] if s.get("kind") == STUDY_FILE]
    want = _totals(seeds)
    if doc["totals"] != want:
        raise ValueError(f"findings.json: totals {doc['totals']} disagree with the findings ({want})")
    if files or "file_totals" in doc:
        want = _file_totals(files)
        if doc.get("file_totals") != want:
            raise ValueError(f"findings.json: file_totals {doc.get('file_totals')} disagree with the study files' "
                             f"findings ({want})")


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What changed between two aggregate documents, one line per finding (verdicts only).

    Lines say ``STUDY/ID changed from A to B``, ``STUDY/ID is new (V)`` or ``STUDY/ID was
    removed (was V)``, in the new document's order (removed ones last).
    """
    def verdicts(doc: dict[str, Any]) -> dict[str, str]:
        return {f["key"]: f["verdict"] for s in doc.get("studies", []) for f in s.get("findings", [])}

    a, b = verdicts(old), verdicts(new)
    lines = []
    for key, v in b.items():
        if key not in a:
            lines.append(f"{key} is new ({v})")
        elif a[key] != v:
            lines.append(f"{key} changed from {a[key]} to {v}")
    lines += [f"{key} was removed (was {v})" for key, v in a.items() if key not in b]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m tcplab.studies.suite OLD.json NEW.json``: prints :func:`diff`; exit 1 on any change, 2 on bad input."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m tcplab.studies.suite OLD/findings.json NEW/findings.json", file=sys.stderr)
        return 2
    docs = []
    for path in args:
        try:
            doc = json.loads(Path(path).read_text())
            validate(doc)
        except (OSError, ValueError) as e:
            print(f"error: {path}: {e}", file=sys.stderr)
            return 2
        docs.append(doc)
    lines = diff(*docs)
    for line in lines:
        print(line)
    if not lines:
        print(f"no verdict changed ({docs[1]['totals']['findings']} findings)")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
