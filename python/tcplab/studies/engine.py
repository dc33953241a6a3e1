"""The machine every bundled study shares: planning, running, resuming, writing tables.

A study is three things, and only these live in its own module (see
``docs/architecture.md``, "Bundled studies"):

1. its **set-up**: the configurations, built as ordinary scenarios, and a plan of
   :class:`BlockTask` s (:meth:`StudyDefinition.plan`) executed by a module-level
   block function (:attr:`StudyDefinition.block`);
2. its **analysis**: the tables derived from the tasks' tables
   (:meth:`StudyDefinition.analyse`), figures and report;
3. its **findings**: checks of the seed's claims, in the format of
   :mod:`tcplab.studies.findings`.

:func:`run_study` does the rest for every study: it plans, skips tasks already
finished in ``out/tasks``, runs the others on the chosen engine, stores each task's
tables as it finishes, concatenates them in report order, writes every table as
Parquet, ``findings.json``, the figures, ``report.html`` (skeleton in
:mod:`tcplab.studies.reporting`) and ``study.json`` (parameters, engine, wall times,
failures).

Batched, resumable execution
----------------------------

A study runs thousands of short simulations (about a millisecond each in the core), so
one task per simulation, as :mod:`tcplab.sweeps` does, would spend most of its time in
Python: pickling, scheduling, one Parquet directory per run. Here a :class:`BlockTask`
is a block of runs (e.g. one configuration x a block of replications x every TCP
variant). A worker calls a study's top-level block function, which builds the core
JSON itself, calls ``tcplab._core.run`` directly and reduces each result to the small
columns the study needs; only those columns travel back.

Engines and their options are those of ``tcplab sweep``:

- ``jobs``: local worker processes (default: the core count; ``jobs = 1`` runs in this
  process). With ``scheduler="dask:local"``, the LocalCluster's worker count (at
  least 2).
- ``scheduler``: ``None`` for the local process pool, ``"tcp://HOST:PORT"`` for a Dask
  scheduler, ``"dask:local"`` for a local Dask cluster of worker processes.

Resumability: :class:`TaskStore` writes each finished task's tables (Parquet) under a
temporary directory name and renames it to ``tasks/<key>/`` once complete, so a killed
study leaves whole tasks or nothing; a re-run skips the keys already present. This
process alone writes, so every engine writes identical files.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> tasks = [BlockTask(key=f"k{i}", spec={"x": i}, runs=1) for i in range(3)]
    >>> results = {t.key: r for t, r, err in execute(tasks, _square_block, jobs=1, progress=False)}
    >>> results["k2"]["out"]["y"]
    [4]
    >>> store = TaskStore(tempfile.mkdtemp())
    >>> store.write("k2", {"out": pd.DataFrame(results["k2"]["out"])}, {"wall_s": 0.0})
    >>> sorted(store.finished()), store.read("k2", "out")["y"].tolist()
    (['k2'], [4])
"""

from __future__ import annotations

import abc
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from tcplab.executor import Interrupted, Progress, check_scheduler, dispatch
from tcplab.results import damage, digests
from tcplab.studies import reporting

__all__ = ["BlockTask", "TaskStore", "execute", "task_key", "check_scheduler", "Progress", "StudyDefinition",
           "StudyResult", "run_study", "attach_ledger", "collect", "task_frame", "write_table", "write_json", "git_revision", "now"]

#: A block function: task spec in, ``{table name: {column: values}}`` out.
BlockFn = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class BlockTask:
    """One unit of work: a JSON-able ``spec`` for the block function, ``runs`` simulations."""

    key: str
    spec: dict[str, Any]
    runs: int


def task_key(spec: dict[str, Any]) -> str:
    """A task's identity: a hash of its JSON spec (same spec, same key).

    Example:
        >>> task_key({"a": 1, "b": [2]}) == task_key({"b": [2], "a": 1}) != task_key({"a": 2, "b": [2]})
        True
    """
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _timed(fn: BlockFn, spec: dict[str, Any]) -> dict[str, Any]:
    """Runs the block function and adds its wall time (``_wall_s``) to the result."""
    t0 = time.perf_counter()
    out = fn(spec)
    out["_wall_s"] = time.perf_counter() - t0
    return out


def _square_block(spec: dict[str, Any]) -> dict[str, Any]:
    """A trivial block function for the examples: ``y = x^2``."""
    return {"out": {"y": [spec["x"] ** 2]}}


def execute(
    tasks: list[BlockTask],
    fn: BlockFn,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    label: str = "study",
) -> Iterator[tuple[BlockTask, dict[str, Any] | None, str | None]]:
    """Runs ``fn(task.spec)`` for every task; yields (task, result or None, error or None).

    Results come back as tasks finish (in any order). ``fn`` must be a module-level
    function so that worker processes can import it. The progress bar counts runs
    (``task.runs``), not tasks.
    """
    check_scheduler(scheduler)
    total = sum(t.runs for t in tasks)
    with Progress(total, enabled=progress, label=label) as bar:
        for task, result, error in dispatch(tasks, _timed, lambda t: (fn, t.spec), lambda t: f"tcplab-block-{t.key}",
                                            jobs, scheduler):
            bar.advance(task.runs)
            yield task, result, error


class TaskStore:
    """Finished tasks on disk: ``<root>/tasks/<key>/<table>.parquet`` plus ``task.json``."""

    def __init__(self, root: str | Path) -> None:
        self.dir = Path(root) / "tasks"
        self.dir.mkdir(parents=True, exist_ok=True)

    def finished(self, verify: bool = False) -> set[str]:
        """Keys of complete tasks (stale temporary directories are removed); with ``verify``,
        a task whose files are damaged (:func:`tcplab.results.damage`) is removed, with a
        one-line note, to run again."""
        for stale in self.dir.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        keys = {p.name for p in self.dir.iterdir() if (p / "task.json").is_file()}
        for key in sorted(keys) if verify else ():
            why = damage(self.dir / key, "task.json")
            if why is not None:
                print(f"note: {self.dir / key}: {why}; the task is done again", file=sys.stderr)
                shutil.rmtree(self.dir / key, ignore_errors=True)
                keys.discard(key)
        return keys

    def write(self, key: str, tables: dict[str, pd.DataFrame], info: dict[str, Any]) -> None:
        """Writes one task's tables and ``task.json`` under a temporary name, then renames."""
        tmp = self.dir / f".tmp-{key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name, df in tables.items():
            df.to_parquet(tmp / f"{name}.parquet", index=False)
        (tmp / "task.json").write_text(json.dumps({**info, "sha256": digests(tmp)}, sort_keys=True, default=str))
        for p in tmp.iterdir():  # durable before the rename publishes the task
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())
        try:
            os.rename(tmp, self.dir / key)
        except OSError:  # already there: keep the first
            shutil.rmtree(tmp, ignore_errors=True)

    def read(self, key: str, table: str) -> pd.DataFrame:
        """One table of a finished task (empty when the task produced none)."""
        p = self.dir / key / f"{table}.parquet"
        return pd.read_parquet(p) if p.is_file() else pd.DataFrame()

    def info(self, key: str) -> dict[str, Any]:
        """The ``task.json`` of a finished task."""
        doc: dict[str, Any] = json.loads((self.dir / key / "task.json").read_text())
        return doc


# --------------------------------------------------------------------------------------
# Writing


def write_table(df: pd.DataFrame, path: Path) -> None:
    """Writes ``df`` as Parquet atomically (a temporary file renamed into place)."""
    from tcplab.results import write_table_atomic

    write_table_atomic(df, path)


def write_json(obj: Any, path: Path) -> None:
    """Writes ``obj`` as JSON atomically."""
    from tcplab.results import write_json_atomic

    write_json_atomic(obj, path)


def git_revision() -> str | None:
    """The git revision of the checked-out tcplab, or ``None`` outside a repository."""
    try:
        out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------------------
# A study's definition, and the driver that runs it


class StudyDefinition(abc.ABC):
    """What a study supplies to :func:`run_study`: set-up, analysis, findings, figures, report.

    Class attributes:
        name: the study's registered name (``tcplab study NAME``).
        seed_study: the stem of the seed file it reproduces.
        version: bumped when a change alters what a task computes, so that old task
            files are not reused (put it in every task spec).
        task_tables: the tables that block functions return, in output order.
        config_columns: ``(column, dtype)`` of the task-spec keys copied in front of
            every row of a task's tables (the task's configuration).
        empty_columns: columns of a task table that no task produced.
        block: the module-level block function run by workers (a ``staticmethod``).
        ledger: attach the study's claims ledger (:mod:`tcplab.studies.ledger`) to its
            ``findings.json``; off for modes whose findings are not the seed's (the
            emulated subset's agreement finding).

    Example:
        >>> class Squares(StudyDefinition):
        ...     name, seed_study, task_tables = "squares", "none", ("out",)
        ...     config_columns = (("x", "int64"),)
        ...     block = staticmethod(_square_block)
        ...     def plan(self, params): return [BlockTask(f"k{x}", {"x": x}, 1) for x in params["xs"]]
        ...     def order(self, spec): return (spec["x"],)
        ...     def analyse(self, tables, params):
        ...         return {}, {"findings": [], "total": int(tables["out"]["y"].sum())}
        ...     def n_runs(self, params): return len(params["xs"])
        >>> import tempfile
        >>> res = run_study(Squares(), tempfile.mkdtemp(), {"xs": [1, 2, 3]}, jobs=1, progress=False)
        >>> res.tables["out"].values.tolist(), res.findings["total"], (res.ran, res.skipped)
        ([[1, 1], [2, 4], [3, 9]], 14, (3, 0))
    """

    name: str = ""
    seed_study: str = ""
    version: int = 1
    task_tables: tuple[str, ...] = ()
    config_columns: tuple[tuple[str, str], ...] = ()
    empty_columns: tuple[str, ...] = ()
    block: BlockFn
    ledger: bool = True

    @abc.abstractmethod
    def plan(self, params: Any) -> list[BlockTask]:
        """The study's tasks (heaviest first helps the process pool balance)."""

    @abc.abstractmethod
    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        """A task's place in report order; tables are concatenated in this order."""

    @abc.abstractmethod
    def analyse(self, tables: dict[str, pd.DataFrame], params: Any) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        """Derived tables (written as Parquet, in order) and the ``findings.json`` document."""

    @abc.abstractmethod
    def n_runs(self, params: Any) -> int:
        """Simulations in the study (for the manifest and the report)."""

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: Any) -> list[dict[str, Any]]:
        """Draws the figures into ``fig_dir``; returns their descriptions (see :mod:`reporting`)."""
        return []

    def write_report(self, out: Path, params: Any, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path | None:
        """Writes ``out/report.html``; returns its path (``None``: no report)."""
        return None

    def params_dict(self, params: Any) -> dict[str, Any]:
        """The parameters as JSON for the manifest."""
        return asdict(params) if is_dataclass(params) and not isinstance(params, type) else dict(params)


@dataclass
class StudyResult:
    """What :func:`run_study` produced: paths, tables, findings, failures and wall times."""

    out: Path
    report: Path | None
    findings: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    failures: list[dict[str, Any]]
    timings: dict[str, float]
    ran: int
    skipped: int


def task_frame(definition: StudyDefinition, spec: dict[str, Any], cols: dict[str, Any]) -> pd.DataFrame:
    """A task's table: its configuration columns (from ``spec``) followed by ``cols``.

    Example:
        >>> class D: config_columns = (("link", "string"), ("n", "int64"))
        >>> task_frame(D(), {"link": "lte", "n": 2}, {"y": [1.5, 2.5]}).to_dict("list")
        {'link': ['lte', 'lte'], 'n': [2, 2], 'y': [1.5, 2.5]}
    """
    n = len(next(iter(cols.values()))) if cols else 0
    head = pd.DataFrame({c: pd.Series([spec[c]] * n, dtype=dtype) for c, dtype in definition.config_columns})
    return pd.concat([head, pd.DataFrame(cols)], axis=1)


def collect(definition: StudyDefinition, store: TaskStore, tasks: list[BlockTask]) -> dict[str, pd.DataFrame]:
    """The finished tasks' tables concatenated in report order (:meth:`StudyDefinition.order`)."""
    ordered = sorted(tasks, key=lambda t: definition.order(t.spec))
    out: dict[str, pd.DataFrame] = {}
    for name in definition.task_tables:
        parts = [store.read(t.key, name) for t in ordered]
        parts = [p for p in parts if len(p)]
        out[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(definition.empty_columns))
    return out


def attach_ledger(study: str, findings: dict[str, Any]) -> None:
    """Adds the study's claims ledger (:mod:`tcplab.studies.ledger`), when it has one, to its findings document."""
    from tcplab.studies import ledger

    if ledger.ledger_path(study).is_file():
        findings["ledger"] = ledger.load(study).as_json()


def run_study(
    definition: StudyDefinition,
    out: str | Path,
    params: Any,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    figures: bool = True,
) -> StudyResult:
    """Runs (or resumes) a study and writes its tables, figures, findings and report.

    Args:
        definition: the study.
        out: results directory; finished tasks already in ``out/tasks`` are skipped.
        params: the study's parameters (passed to every method of ``definition``).
        jobs, scheduler: the engine (see the module doc).
        progress: show a progress bar on stderr.
        figures: render the figures.

    Raises:
        RuntimeError: no task finished (the first error is named).
    """
    check_scheduler(scheduler)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    started = now()
    store = TaskStore(out)
    tasks = definition.plan(params)
    done = store.finished(verify=True)
    todo = [t for t in tasks if t.key not in done]
    failures: list[dict[str, Any]] = []
    try:
        for task, result, error in execute(todo, definition.block, jobs=jobs, scheduler=scheduler, progress=progress,
                                           label=definition.name):
            if error is not None or result is None:
                failures.append({"task": task.key, "spec": task.spec, "error": error})
                continue
            tables = {name: task_frame(definition, task.spec, cols) for name, cols in result.items()
                      if not name.startswith("_")}
            store.write(task.key, tables, {"spec": task.spec, "wall_s": result.get("_wall_s"), "runs": task.runs})
    except KeyboardInterrupt:  # Ctrl-C: every finished task is on disk; the next session resumes
        kept = store.finished()
        raise Interrupted(sum(t.runs for t in tasks if t.key in kept), sum(t.runs for t in tasks)) from None
    t_sim = time.perf_counter()

    finished = store.finished()
    if not any(t.key in finished for t in tasks):
        first = failures[0]["error"] if failures else "nothing ran"
        raise RuntimeError(f"{definition.name}: no task finished ({len(failures)} failed; first error: {first})")
    tables = collect(definition, store, [t for t in tasks if t.key in finished])
    for name, df in tables.items():
        write_table(df, out / f"{name}.parquet")
    derived, findings = definition.analyse(tables, params)
    if definition.ledger:
        attach_ledger(definition.name, findings)
    for name, df in derived.items():
        write_table(df, out / f"{name}.parquet")
    tables = {**tables, **derived}
    write_json(findings, out / "findings.json")
    t_analysis = time.perf_counter()

    # Figures are drawn on this machine's cores even when a scheduler ran the tasks.
    with reporting.parallel_saves(jobs if jobs and not scheduler else os.cpu_count() or 1):
        figs = definition.render_figures(tables, out / "figures", params) if figures else []
    t_figs = time.perf_counter()
    task_walls = [store.info(t.key).get("wall_s") or 0.0 for t in tasks if t.key in finished]
    timings = {"simulate_s": round(t_sim - t_start, 3), "analysis_s": round(t_analysis - t_sim, 3),
               "figures_s": round(t_figs - t_analysis, 3), "task_wall_sum_s": round(float(sum(task_walls)), 3)}
    from tcplab import _core

    manifest = {
        "study": definition.name, "seed_study": definition.seed_study, "params": definition.params_dict(params),
        "version": definition.version, "tcplab_version": _core.version(), "git_revision": git_revision(),
        "started": started, "engine": scheduler or f"local:{jobs or os.cpu_count() or 1}", "tasks": len(tasks),
        "ran": len(todo), "skipped": len(tasks) - len(todo), "runs": definition.n_runs(params), "failures": failures,
        "timings": timings,
    }
    report = definition.write_report(out, params, tables, findings, figs, manifest)
    timings["report_s"] = round(time.perf_counter() - t_figs, 3)
    timings["total_s"] = round(time.perf_counter() - t_start, 3)
    manifest["ended"] = now()
    write_json(manifest, out / "study.json")
    return StudyResult(out, report, findings, tables, failures, timings, ran=len(todo), skipped=len(tasks) - len(todo))
