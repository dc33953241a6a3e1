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

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from tcplab.executor import Progress, check_scheduler, dispatch

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
