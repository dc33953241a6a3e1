"""Where runs execute: in this process, a local process pool, or a Dask cluster.

One dispatcher serves sweeps (one task per simulation) and bundled studies (one task
per block of simulations), so ``--jobs`` and ``--scheduler`` mean the same everywhere:

- ``scheduler=None``: a local pool of ``jobs`` worker processes (default: the core
  count; ``jobs = 1`` runs in this process);
- ``scheduler="dask:local"``: a ``distributed.LocalCluster`` of ``max(2, jobs)`` worker
  processes;
- ``scheduler="tcp://HOST:PORT"``: an existing Dask scheduler.

Functions sent to workers must be importable module-level callables.

Example:
    >>> items = [1, 2, 3]
    >>> sorted((i, r) for i, r, err in dispatch(items, pow, lambda i: (i, 2), lambda i: f"sq-{i}", jobs=1))
    [(1, 1), (2, 4), (3, 9)]
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import multiprocessing
import os
import sys
import time
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

__all__ = ["check_scheduler", "dispatch", "Progress", "ProgressGroup"]


def check_scheduler(scheduler: str | None) -> None:
    """Raises ``ValueError`` for a scheduler address that is not accepted.

    Example:
        >>> check_scheduler("dask:local"); check_scheduler(None)
        >>> check_scheduler("http://x")
        Traceback (most recent call last):
        ...
        ValueError: unknown scheduler 'http://x'; accepted: tcp://HOST:PORT or dask:local
    """
    if scheduler is not None and not (scheduler == "dask:local" or scheduler.startswith("tcp://")):
        raise ValueError(f"unknown scheduler {scheduler!r}; accepted: tcp://HOST:PORT or dask:local")


def dispatch(
    items: list[T],
    fn: Callable[..., Any],
    args: Callable[[T], tuple[Any, ...]],
    key: Callable[[T], str],
    jobs: int | None = None,
    scheduler: str | None = None,
) -> Iterator[tuple[T, Any, str | None]]:
    """Runs ``fn(*args(item))`` for every item; yields (item, result, None) or
    (item, None, error message) as each finishes, in completion order.

    ``key(item)`` names the Dask task (unique per item).
    """
    check_scheduler(scheduler)
    if not items:
        return
    if scheduler:
        yield from _dispatch_dask(items, fn, args, key, jobs, scheduler)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for item in items:
            try:
                yield item, fn(*args(item)), None
            except Exception as e:  # a failed run is reported, the rest continue
                yield item, None, f"{type(e).__name__}: {e}"
        return
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx) as pool:
        futures = {pool.submit(fn, *args(item)): item for item in items}
        try:
            for fut in cf.as_completed(futures):
                item = futures[fut]
                try:
                    yield item, fut.result(), None
                except Exception as e:
                    yield item, None, f"{type(e).__name__}: {e}"
        finally:  # the consumer stopped early (e.g. its results cannot be written): drop queued runs
            for fut in futures:
                fut.cancel()


def _dispatch_dask(
    items: list[T],
    fn: Callable[..., Any],
    args: Callable[[T], tuple[Any, ...]],
    key: Callable[[T], str],
    jobs: int | None,
    scheduler: str,
) -> Iterator[tuple[T, Any, str | None]]:
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
        futures = {client.submit(fn, *args(item), key=key(item), pure=False): item for item in items}
        for fut in as_completed(list(futures)):
            item = futures[fut]
            if fut.status == "error":
                exc = fut.exception()
                yield item, None, f"{type(exc).__name__}: {exc}"
            else:
                yield item, fut.result(), None
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: The display that :class:`Progress` bars opened inside ``with ProgressGroup(...)`` share.
_GROUP: contextvars.ContextVar["ProgressGroup | None"] = contextvars.ContextVar("tcplab_progress_group", default=None)


def _rich_display() -> Any:
    """A rich progress display on stderr: label, bar, done/total, unit, rate, elapsed, ETA."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.progress import Progress as RichProgress

    return RichProgress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[unit]}"),
        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=Console(stderr=True, file=sys.stderr), transient=False,
    )


class ProgressGroup:
    """One display for several runs in a row (``tcplab study all``): a row counting the
    parts (e.g. studies) and, below it, the row of every :class:`Progress` bar opened
    inside the ``with`` block, instead of one display per bar.

    Example:
        >>> with ProgressGroup(2, enabled=False, label="all", unit="studies") as group:
        ...     with Progress(3, enabled=False, label="a") as bar:
        ...         bar.advance(3)
        ...     group.advance()
        >>> group.done
        1
    """

    def __init__(self, total: int, enabled: bool = True, label: str = "all", unit: str = "parts") -> None:
        self.total, self.done, self.enabled, self.label, self.unit = total, 0, enabled, label, unit
        self.display: Any = None
        self._token: Any = None

    def __enter__(self) -> "ProgressGroup":
        if self.enabled:
            self.display = _rich_display()
            self.display.__enter__()
            self._task = self.display.add_task(self.label, total=self.total, unit=self.unit, rate="")
            self._token = _GROUP.set(self)
        return self

    def status(self, text: str) -> None:
        """Shows ``text`` (e.g. the running study, or its phase) in the group's row."""
        if self.display is not None:
            self.display.update(self._task, description=f"{self.label}: {text}")

    def advance(self, parts: int = 1) -> None:
        """Counts ``parts`` more finished parts."""
        self.done += parts
        if self.display is not None:
            self.display.update(self._task, advance=parts)

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _GROUP.reset(self._token)
        if self.display is not None:
            self.display.__exit__(*exc)


class Progress:
    """A rich progress bar on stderr (runs done, runs/s, ETA), or nothing when disabled.

    ``done`` counts runs finished before this session (a resumed sweep), so the bar
    starts there and the rate counts only this session's runs.

    Example:
        >>> with Progress(10, done=4, enabled=False, label="sweep") as bar:
        ...     bar.advance(); bar.advance(3)
        >>> bar.done, bar.ran
        (8, 4)
    """

    def __init__(self, total: int, done: int = 0, enabled: bool = True, label: str = "runs") -> None:
        self.total, self.done, self.ran = total, done, 0
        self.enabled, self.label = enabled, label
        self.started = time.monotonic()
        self._bar: Any = None
        self._owned = True

    def __enter__(self) -> "Progress":
        if self.enabled and self.total:
            group = _GROUP.get()
            self._owned = group is None or group.display is None  # inside a group: a row of its display
            self._bar = _rich_display() if self._owned else group.display
            if self._owned:
                self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, completed=self.done, unit="runs", rate="")
        return self

    def advance(self, runs: int = 1) -> None:
        """Counts ``runs`` more finished simulations."""
        self.done += runs
        self.ran += runs
        if self._bar is not None:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            self._bar.update(self._task, advance=runs, rate=f"{self.ran / elapsed:.1f} runs/s")

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None and self._owned:
            self._bar.__exit__(*exc)
