"""Sweeps: a grid of parameters x replications, run in parallel and resumable.

An experiment file is a scenario plus a ``[sweep]`` table (see :data:`SWEEP_REFERENCE`).
Each (grid point, replication) is one independent task. Replication ``r`` uses seed
``seed + r`` at every grid point: common random numbers, so protocol variants see the
same flows, start times and losses (seed 002's "same set of flows").

Engines: a local process pool (``jobs`` workers, default the core count; ``jobs = 1``
runs in this process) or a Dask distributed cluster (``scheduler="tcp://HOST:PORT"``,
or ``"dask:local"`` for a ``LocalCluster`` of worker processes). Workers return the
core's summary tables (and the time series only when the scenario records them);
this process alone writes, so both engines write identical results.

Results directory:

- ``runs/<key>/``: one finished run (its tables as Parquet plus ``run.json``, which
  records each table's SHA-256), where ``key`` hashes the resolved scenario, the
  parameters and the seed. It is written under a temporary name and renamed into
  place, so a killed sweep leaves either a whole run or nothing; re-running the command
  skips the runs already there, after checking their files: a run whose file was
  truncated or damaged since (a crash of the machine, a full disk) is done again, with
  a one-line note. Ctrl-C stops the sweep at once ("interrupted: N of M runs kept;
  re-run to resume").
- ``flows.parquet``, ``udp.parquet``, ``queues.parquet``, ``links.parquet`` (and
  ``series_*.parquet`` when recorded): every finished run, with the parameters as
  columns plus ``point``, ``replication``, ``seed`` and ``run_key``.
- ``manifest.json``: the scenario, the grid, the replications and seeds, the tcplab
  version, the git revision when known, start and end times, and the failed runs.

A run that fails is reported with its parameters and seed; the others go on, and the
command exits with code 1.

Example:
    >>> exp = Experiment.from_toml(EXAMPLE_EXPERIMENT)
    >>> exp.params, exp.replications
    ({'tcp.iw': [3, 10], 'topology.bottleneck.queue.limit': ['20pkt', '48pkt']}, 2)
    >>> [(t.point, t.replication, t.seed) for t in exp.tasks()][:3]
    [(0, 0, 0), (0, 1, 1), (1, 0, 0)]
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from tcplab import _core
from tcplab.results import TABLES, RunResult, damage, digests, write_json_atomic, write_table_atomic
from tcplab.executor import Interrupted, Progress, dispatch, usable_jobs
from tcplab.runner import run_core
from tcplab.scenario import Scenario, ScenarioError, SweepTable, TomlLocator, parse_toml, read_text
from tcplab.scenario import located as _located
from tcplab.scenario.experiment import SWEEP_KEYS_TEXT
from tcplab.scenario.reference import sweep_reference

__all__ = ["Experiment", "Task", "SweepResult", "sweep", "load_experiment", "SWEEP_REFERENCE", "EXAMPLE_EXPERIMENT",
           "MAX_RUNS", "RANDOM_ELEMENTS", "identical_points", "identical_replications_warning"]

#: The ``[sweep]`` section of docs/scenarios.md (generated from :class:`SweepTable`).
SWEEP_REFERENCE = sweep_reference()

#: The most runs (grid points x replications) one sweep takes: each is a directory of
#: tables under ``runs/``, and the task list is held in memory.
MAX_RUNS = 100_000

EXAMPLE_EXPERIMENT = '''\
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "70ms", queue = { kind = "drop_tail", limit = "48pkt" } }
sender_access = { rate = "100Mbps", delay = "11ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }

[[flows]]
bytes = "180kB"

[sweep]
replications = 2
"tcp.iw" = [3, 10]
"topology.bottleneck.queue.limit" = ["20pkt", "48pkt"]
'''

@dataclass(frozen=True)
class Task:
    """One run of a sweep: grid point, replication, seed and the resolved scenario."""

    point: int
    replication: int
    seed: int
    params: dict[str, Any]
    core_json: str
    key: str


@dataclass
class Experiment:
    """A scenario plus its ``[sweep]`` grid, validated at every grid point.

    Attributes: ``base`` (the scenario document without ``[sweep]``), ``params``
    (path -> values, in file order), ``replications``, ``seed``, ``text`` and ``file``.
    """

    base: dict[str, Any]
    params: dict[str, list[Any]]
    replications: int = 1
    seed: int = 0
    text: str = ""
    file: str = "<string>"
    _scenarios: list[Scenario] = field(default_factory=list, repr=False)

    @classmethod
    def from_toml(cls, text: str, file: str = "<string>") -> "Experiment":
        """Parses an experiment file and validates the scenario at every grid point."""
        doc = parse_toml(text, file)
        sweep_doc = doc.pop("sweep", None)
        try:
            if sweep_doc is None:
                raise ScenarioError("sweep", "an experiment file needs a [sweep] table", accepted=SWEEP_KEYS_TEXT)
            if not isinstance(sweep_doc, dict):
                raise ScenarioError("sweep", "must be a table", value=sweep_doc)
            table = SweepTable.from_table(sweep_doc)
            replications, seed, params = table.replications, table.seed, table.params
        except ScenarioError as e:
            raise _located(e, text, file) from None
        exp = cls(base=doc, params=params, replications=replications, seed=seed, text=text, file=file)
        runs = exp.points() * replications
        if runs > MAX_RUNS:
            where = "sweep.replications" if replications > 1 else "sweep"
            raise _located(ScenarioError(where, f"the sweep would run {runs:,} runs ({exp.points():,} grid points x "
                                                f"{replications:,} replications)", value=replications,
                                         accepted=f"at most {MAX_RUNS:,} runs per sweep; split it into several "
                                                  "experiments"), text, file)
        exp._scenarios = [exp._scenario_at(point) for point in exp.grid()]
        return exp

    def points(self) -> int:
        """The number of grid points (the product of the parameters' value counts).

        Example:
            >>> Experiment(base={}, params={"a": [1, 2], "b": ["x", "y", "z"]}).points()
            6
        """
        return math.prod(len(v) for v in self.params.values())

    def grid(self) -> list[dict[str, Any]]:
        """Every grid point as ``{path: value}``, the last parameter varying fastest.

        Example:
            >>> Experiment(base={}, params={"a": [1, 2], "b": ["x", "y"]}).grid()
            [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
        """
        names = list(self.params)
        return [dict(zip(names, combo)) for combo in itertools.product(*self.params.values())]

    def scenario(self, point: int) -> Scenario:
        """The validated scenario of grid point ``point``."""
        if not self._scenarios:
            self._scenarios = [self._scenario_at(p) for p in self.grid()]
        return self._scenarios[point]

    def warnings(self) -> list[ScenarioError]:
        """The scenario's warnings (:meth:`Scenario.warnings`) at the first grid point, located in the file."""
        return [_located(w, self.text, self.file) for w in self.scenario(0).warnings()]

    def seeds(self) -> list[int]:
        """The seed of each replication (the same at every grid point)."""
        return [self.seed + r for r in range(self.replications)]

    def tasks(self) -> list[Task]:
        """Every run, grid point by grid point, replication by replication.

        A grid point's resolved scenario depends on the seed only through start jitter;
        without jitter it is resolved once and shared by the point's replications.
        """
        out = []
        for i, params in enumerate(self.grid()):
            sc = self.scenario(i)
            seeded = any(int(f.start_jitter) > 0 for f in sc.flows)
            core_json = canonical = ""
            for r, seed in enumerate(self.seeds()):
                if seeded or not core_json:
                    core_json = sc.to_core_json(seed)
                    canonical = json.dumps(json.loads(core_json), sort_keys=True)
                out.append(Task(i, r, seed, params, core_json, _run_key(canonical, params, seed)))
        return out

    def _scenario_at(self, params: dict[str, Any]) -> Scenario:
        doc = copy.deepcopy(self.base)
        for path, value in params.items():
            try:
                _set_path(doc, path, copy.deepcopy(value))
            except ScenarioError as e:
                raise _located(e.prefixed("sweep"), self.text, self.file) from None
        try:
            return Scenario.from_dict(doc).check_core(self.seed)
        except ScenarioError as e:
            locator = TomlLocator(self.text)
            for p in e.problems:
                paths = [_norm(p.path)]
                if p.problem.startswith("no route"):  # either end of the flow may be the swept one
                    paths.append(re.sub(r"\.(dst|client)$", lambda m: ".src" if m.group(1) == "dst" else ".server",
                                        paths[0]))
                swept = next((q for q in params for path in paths
                              if path == _norm(q) or path.startswith(_norm(q) + ".")), None)
                if swept is not None:
                    p.problem += f" (value from [sweep] {swept!r}, grid point {params})"
                    p.file, p.line = self.file, locator.line(f"sweep.{swept}")
            raise _located(e, self.text, self.file) from None


_INDEX = re.compile(r"^([^\[\]]*)((?:\[\d+\])*)$")


def _path_parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in path.split("."):
        m = _INDEX.match(piece)
        if m is None or (not m.group(1) and not m.group(2)):
            raise ScenarioError(path, "is not a parameter path", accepted="dotted keys with optional [index], like flows[0].bytes")
        if m.group(1):
            parts.append(int(m.group(1)) if m.group(1).isdigit() else m.group(1))
        parts += [int(i) for i in re.findall(r"\[(\d+)\]", m.group(2))]
    return parts


def _norm(path: str) -> str:
    return ".".join(str(p) for p in _path_parts(path)) if path else ""


def _set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Sets ``doc[path] = value``, creating missing tables; list items must exist."""
    parts = _path_parts(path)
    node: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(str(p) for p in parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise ScenarioError(path, f"index {part} does not exist ({where}: the scenario has {size} entries)")
            if last:
                node[part] = value
            else:
                node = node[part]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(path, f"{where} is not a table in the scenario")
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})


def run_key(core_json: str, params: dict[str, Any], seed: int) -> str:
    """The run's identity: a hash of the resolved scenario, the parameters and the seed.

    Example:
        >>> run_key("{}", {"tcp.iw": 3}, 1) == run_key("{}", {"tcp.iw": 3}, 1) != run_key("{}", {"tcp.iw": 3}, 2)
        True
    """
    blob = json.dumps({"scenario": json.loads(core_json), "params": params, "seed": seed}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _run_key(canonical: str, params: dict[str, Any], seed: int) -> str:
    """:func:`run_key` from the scenario already dumped with sorted keys (same key, less work).

    Example:
        >>> doc = '{"b": 1, "a": {"y": 2, "x": 1}}'
        >>> _run_key(json.dumps(json.loads(doc), sort_keys=True), {"p": [1]}, 3) == run_key(doc, {"p": [1]}, 3)
        True
    """
    blob = f'{{"params": {json.dumps(params, sort_keys=True)}, "scenario": {canonical}, "seed": {json.dumps(seed)}}}'
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def load_experiment(path: str | Path) -> Experiment:
    """Reads and validates an experiment file (a scenario plus ``[sweep]``)."""
    return Experiment.from_toml(read_text(path), str(path))


# --------------------------------------------------------------------------------------
# Execution


def execute(core_json: str, seed: int) -> str:
    """The task body, run by a worker: one core run, its JSON document back."""
    return run_core(core_json, seed)


@dataclass
class SweepResult:
    """What a sweep produced: its directory, tables and failed runs."""

    out: Path
    tables: dict[str, pd.DataFrame]
    failures: list[dict[str, Any]]
    ran: int
    skipped: int

    @property
    def flows(self) -> pd.DataFrame:
        """Every finished run's flows, with the parameters as columns."""
        return self.tables["flows"]


def _git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    rev = out.stdout.strip()
    return rev if out.returncode == 0 and rev else None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _finished_keys(runs_dir: Path, verify: bool = False) -> set[str]:
    """Keys of the finished runs under ``runs_dir``; with ``verify``, a run whose files are
    damaged (:func:`tcplab.results.damage`) is removed, with a one-line note, to run again."""
    if not runs_dir.is_dir():
        return set()
    for stale in runs_dir.glob(".tmp-*"):  # left by a killed sweep: never complete
        shutil.rmtree(stale, ignore_errors=True)
    keys = {p.name for p in runs_dir.iterdir() if (p / "run.json").is_file()}
    if verify:
        for key in sorted(keys):
            why = damage(runs_dir / key, "run.json")
            if why is not None:
                print(f"note: {runs_dir / key}: {why}; the run is done again", file=sys.stderr)
                shutil.rmtree(runs_dir / key, ignore_errors=True)
                keys.discard(key)
    return keys


def _store_run(runs_dir: Path, task: Task, doc: str) -> None:
    """Writes one finished run under a temporary name, then renames it into place."""
    result = RunResult.from_core(doc)
    tmp = runs_dir / f".tmp-{task.key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, df in result.tables().items():
        df.to_parquet(tmp / f"{name}.parquet", index=False)
    info = {"point": task.point, "replication": task.replication, "seed": task.seed,
            "params": task.params, "key": task.key, "meta": result.meta, "sha256": digests(tmp)}
    (tmp / "run.json").write_text(json.dumps(info, sort_keys=True, default=str))
    for p in tmp.iterdir():  # make the files durable before the rename publishes them
        with open(p, "rb") as fh:
            os.fsync(fh.fileno())
    try:
        os.rename(tmp, runs_dir / task.key)
    except OSError:  # already there (another process finished it): keep the first
        shutil.rmtree(tmp, ignore_errors=True)


def _param_column(values: list[Any]) -> list[Any]:
    if all(isinstance(v, (bool, int, float, str)) for v in values):
        kinds = {type(v) for v in values}
        if len(kinds) == 1 or kinds <= {int, float}:
            return values
    return [v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in values]


def collect(out: Path, tasks: list[Task]) -> dict[str, pd.DataFrame]:
    """Concatenates the finished runs of ``tasks`` into tables with parameter columns.

    Rows come in task order (grid point, then replication), whatever order the runs
    finished in, so every engine writes the same tables.
    """
    runs_dir = out / "runs"
    frames: dict[str, list[pd.DataFrame]] = {}
    for task in tasks:
        d = runs_dir / task.key
        if not (d / "run.json").is_file():
            continue
        for p in sorted(d.glob("*.parquet")):
            df = pd.read_parquet(p)
            extra = {"point": task.point, "replication": task.replication, "seed": task.seed, "run_key": task.key}
            for name, value in task.params.items():
                extra[name] = _param_column([value])[0] if not isinstance(value, (dict, list)) else json.dumps(value, sort_keys=True)
            head = pd.DataFrame({k: [v] * len(df) for k, v in extra.items()}, index=df.index)
            frames.setdefault(p.stem, []).append(pd.concat([head, df], axis=1))
    tables: dict[str, pd.DataFrame] = {}
    for name in list(TABLES) + sorted(set(frames) - set(TABLES)):
        parts = [f for f in frames.get(name, []) if len(f)]
        tables[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return tables


#: The scenario fields that put a random element in a run (docs/scenarios.md), as the
#: warning about identical replications names them. Without one, every replication of a
#: grid point is the same run: the seed only reaches the simulation through these.
RANDOM_ELEMENTS = (
    '`start_jitter` of a [[flows]] entry (a uniform random start delay per flow)',
    'a link\'s `error` (error = { kind = "bernoulli", per = ... } or kind = "markov")',
    'an rpc flow\'s `arrivals` with process = "poisson"',
    'a [workload] (flow classes drawn from the seed)',
)

_META = ("point", "replication", "seed", "run_key")


def identical_points(tables: dict[str, pd.DataFrame], params: list[str] | tuple[str, ...] = ()) -> list[int]:
    """Grid points whose replications (two or more) gave identical result tables.

    Every summary table (:data:`~tcplab.results.TABLES`) of a replication is compared,
    row by row, with the other replications' of the same point, leaving out the columns
    that name the run (point, replication, seed, run_key and the ``params``). Such a point
    has no random element: its replications are one sample repeated, and an interval over
    them says nothing (:func:`tcplab.studies.findings.estimate` reports the value as exact).

    Example:
        >>> f = pd.DataFrame({"point": [0, 0, 1, 1], "replication": [0, 1, 0, 1], "seed": [0, 1, 0, 1],
        ...                   "name": ["a"] * 4, "goodput_bps": [5.0, 5.0, 4.0, 4.5]})
        >>> identical_points({"flows": f})
        [0]
    """
    names = [n for n in TABLES if n in tables and len(tables[n]) and {"point", "replication"} <= set(tables[n])]
    runs: dict[tuple[int, int], dict[str, tuple[int, ...]]] = {}
    for name in names:
        df = tables[name]
        data = df.drop(columns=[c for c in (*_META, *params) if c in df])
        rows = pd.util.hash_pandas_object(data, index=False)
        for (point, rep), hashes in rows.groupby([df["point"], df["replication"]], sort=True):
            runs.setdefault((int(point), int(rep)), {})[name] = tuple(hashes)
    by_point: dict[int, set[tuple[tuple[int, ...], ...]]] = {}
    count: dict[int, int] = {}
    for (point, _), sig in runs.items():
        by_point.setdefault(point, set()).add(tuple(sig.get(n, ()) for n in names))  # no rows: ()
        count[point] = count.get(point, 0) + 1
    return sorted(p for p, sigs in by_point.items() if count[p] >= 2 and len(sigs) == 1)


def identical_replications_warning(tables: dict[str, pd.DataFrame], params: list[str] | tuple[str, ...] = ()) -> str | None:
    """The warning for grid points whose replications are identical (:func:`identical_points`), or None.

    Example:
        >>> f = pd.DataFrame({"point": [0, 0], "replication": [0, 1], "seed": [0, 1], "goodput_bps": [5.0, 5.0]})
        >>> identical_replications_warning({"flows": f}).split(";")[0]
        'replications are identical: this scenario has no random element'
    """
    same = identical_points(tables, params)
    if not same:
        return None
    flows = tables.get("flows")
    all_points = sorted({int(p) for df in tables.values() if len(df) and "point" in df for p in df["point"]})
    fix = ("; add one with " + ", ".join(RANDOM_ELEMENTS[:-1]) + " or " + RANDOM_ELEMENTS[-1]
           + " (docs/scenarios.md)")
    if same == all_points:
        return ("replications are identical: this scenario has no random element; every replication repeats the "
                "same run, so its figures are exact values, not intervals" + fix)
    labels = []
    for point in same:
        row = flows[flows["point"] == point].iloc[0] if flows is not None and "point" in flows and len(flows) else None
        shown = [f"{q}={row[q]}" for q in params if row is not None and q in row.index]
        labels.append(", ".join(shown) if shown else f"grid point {point}")
    return (f"replications are identical at {len(same)} of {len(all_points)} grid points ({'; '.join(labels)}): "
            "these points have no random element" + fix)


ProgressFn = Callable[[int, int], None]


def sweep(
    experiment: Experiment | str | Path,
    out: str | Path,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    report_failure: Callable[[Task, str], None] | None = None,
) -> SweepResult:
    """Runs (or resumes) every task of an experiment and writes the results directory.

    Args:
        experiment: an :class:`Experiment` or the path of an experiment file.
        out: results directory (created; finished runs already in it are skipped).
        jobs: local worker processes (default: the core count; 1 runs in-process).
            With ``scheduler="dask:local"``, the LocalCluster's worker count (at least 2).
        scheduler: ``None`` for the local pool, ``"tcp://HOST:PORT"`` for a Dask
            scheduler, ``"dask:local"`` for a local Dask cluster of processes.
        progress: show a progress bar (runs done, runs/s, ETA) on stderr.
        report_failure: called with (task, message) for each failed run; the default
            prints the parameters and the seed to stderr.
    """
    exp = experiment if isinstance(experiment, Experiment) else load_experiment(experiment)
    out = Path(out)
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    tasks = exp.tasks()
    done = _finished_keys(runs_dir, verify=True)
    todo = [t for t in tasks if t.key not in done]
    manifest_path = out / "manifest.json"
    try:
        previous = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    except ValueError:  # written atomically, but damaged since: the sessions before are forgotten
        print(f"note: {manifest_path} is not valid JSON; it is written anew", file=sys.stderr)
        previous = {}
    manifest: dict[str, Any] = {
        "scenario": exp.base,
        "scenario_toml": exp.text,
        "file": exp.file,
        "grid": exp.params,
        "replications": exp.replications,
        "seeds": exp.seeds(),
        "runs": len(tasks),
        "tcplab_version": _core.version(),
        "git_revision": _git_revision(),
        "started": previous.get("started", _now()),
        "sessions": previous.get("sessions", []) + [{"started": _now(), "skipped": len(tasks) - len(todo)}],
        "ended": None,
        "engine": scheduler or f"local:{usable_jobs(jobs)[0]}",
    }
    write_json_atomic(manifest, manifest_path)

    failures: list[dict[str, Any]] = []

    def failed(task: Task, message: str) -> None:
        failures.append({"point": task.point, "replication": task.replication, "seed": task.seed,
                         "params": task.params, "error": message})
        if report_failure is not None:
            report_failure(task, message)
        else:
            print(f"run failed: params {task.params} seed {task.seed}: {message}", file=sys.stderr)

    try:
        with Progress(len(tasks), done=len(tasks) - len(todo), enabled=progress, label="sweep") as bar:
            for task, doc, error in _execute_all(todo, jobs, scheduler):
                if error is not None:
                    failed(task, error)
                else:
                    assert doc is not None
                    try:
                        _store_run(runs_dir, task, doc)
                    except OSError:  # the results directory cannot be written: stop; finished runs stay
                        raise
                    except Exception as e:  # a malformed result document is a failed run
                        failed(task, f"{type(e).__name__}: {e}")
                bar.advance()
    except KeyboardInterrupt:  # Ctrl-C: every finished run is on disk; the next session resumes
        kept = len(_finished_keys(runs_dir) & {t.key for t in tasks})
        raise Interrupted(kept, len(tasks)) from None

    tables = collect(out, tasks)
    for name, df in tables.items():
        if len(df) or name in TABLES:
            write_table_atomic(df, out / f"{name}.parquet")
    manifest["ended"] = _now()
    manifest["failures"] = failures
    manifest["finished_runs"] = len(_finished_keys(runs_dir) & {t.key for t in tasks})
    write_json_atomic(manifest, manifest_path)
    return SweepResult(out, tables, failures, ran=len(todo), skipped=len(tasks) - len(todo))


def _execute_all(
    todo: list[Task], jobs: int | None, scheduler: str | None
) -> Iterator[tuple[Task, str | None, str | None]]:
    """Yields (task, result document or None, error message or None) as runs finish."""
    yield from dispatch(todo, execute, lambda t: (t.core_json, t.seed), lambda t: f"tcplab-run-{t.key}", jobs, scheduler)
