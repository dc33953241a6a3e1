"""Batched, resumable execution for bundled studies.

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

import concurrent.futures as cf
import hashlib
import json
import multiprocessing
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

__all__ = ["BlockTask", "TaskStore", "execute", "task_key", "check_scheduler", "Progress"]

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


def check_scheduler(scheduler: str | None) -> None:
    """Raises ``ValueError`` for a scheduler address ``tcplab sweep`` would refuse.

    Example:
        >>> check_scheduler("dask:local"); check_scheduler(None)
        >>> check_scheduler("http://x")
        Traceback (most recent call last):
        ...
        ValueError: unknown scheduler 'http://x'; accepted: tcp://HOST:PORT or dask:local
    """
    if scheduler is not None and not (scheduler == "dask:local" or scheduler.startswith("tcp://")):
        raise ValueError(f"unknown scheduler {scheduler!r}; accepted: tcp://HOST:PORT or dask:local")


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
        for task, result, error in _dispatch(tasks, fn, jobs, scheduler):
            bar.advance(task.runs)
            yield task, result, error


def _dispatch(
    tasks: list[BlockTask], fn: BlockFn, jobs: int | None, scheduler: str | None
) -> Iterator[tuple[BlockTask, dict[str, Any] | None, str | None]]:
    if not tasks:
        return
    if scheduler:
        yield from _dispatch_dask(tasks, fn, jobs, scheduler)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for task in tasks:
            try:
                yield task, _timed(fn, task.spec), None
            except Exception as e:
                yield task, None, f"{type(e).__name__}: {e}"
        return
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as pool:
        futures = {pool.submit(_timed, fn, t.spec): t for t in tasks}
        for fut in cf.as_completed(futures):
            task = futures[fut]
            try:
                yield task, fut.result(), None
            except Exception as e:
                yield task, None, f"{type(e).__name__}: {e}"


def _dispatch_dask(
    tasks: list[BlockTask], fn: BlockFn, jobs: int | None, scheduler: str
) -> Iterator[tuple[BlockTask, dict[str, Any] | None, str | None]]:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler == "dask:local":
        cluster = LocalCluster(
            n_workers=max(2, jobs or os.cpu_count() or 2), threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=40,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler, timeout=30)
    try:
        futures = {client.submit(_timed, fn, t.spec, key=f"tcplab-block-{t.key}", pure=False): t for t in tasks}
        for fut in as_completed(list(futures)):
            task = futures[fut]
            if fut.status == "error":
                exc = fut.exception()
                yield task, None, f"{type(exc).__name__}: {exc}"
            else:
                yield task, fut.result(), None
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class TaskStore:
    """Finished tasks on disk: ``<root>/tasks/<key>/<table>.parquet`` plus ``task.json``."""

    def __init__(self, root: str | Path) -> None:
        self.dir = Path(root) / "tasks"
        self.dir.mkdir(parents=True, exist_ok=True)

    def finished(self) -> set[str]:
        """Keys of complete tasks (stale temporary directories are removed)."""
        for stale in self.dir.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        return {p.name for p in self.dir.iterdir() if (p / "task.json").is_file()}

    def write(self, key: str, tables: dict[str, pd.DataFrame], info: dict[str, Any]) -> None:
        """Writes one task's tables and ``task.json`` under a temporary name, then renames."""
        tmp = self.dir / f".tmp-{key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name, df in tables.items():
            df.to_parquet(tmp / f"{name}.parquet", index=False)
        (tmp / "task.json").write_text(json.dumps(info, sort_keys=True, default=str))
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


class Progress:
    """A rich progress bar on stderr counting runs (runs/s, ETA), or nothing."""

    def __init__(self, total: int, enabled: bool = True, label: str = "study") -> None:
        self.total, self.done, self.enabled, self.label = total, 0, enabled, label
        self.started = time.monotonic()
        self._bar: Any = None

    def __enter__(self) -> "Progress":
        if self.enabled and self.total:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._bar = RichProgress(
                TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True, file=sys.stderr), transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, rate="")
        return self

    def advance(self, runs: int) -> None:
        """Counts ``runs`` more finished simulations."""
        self.done += runs
        if self._bar is not None:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            self._bar.update(self._task, advance=runs, rate=f"{self.done / elapsed:.0f} runs/s")

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
