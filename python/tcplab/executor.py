"""Where runs execute: in this process, a local process pool, or a Dask cluster.

One dispatcher serves sweeps (one task per simulation) and bundled studies (one task
per block of simulations), so ``--jobs`` and ``--scheduler`` mean the same everywhere:

- ``scheduler=None``: a local pool of ``jobs`` worker processes (default: the core
  count; ``jobs = 1`` runs in this process);
- ``scheduler="dask:local"``: a ``distributed.LocalCluster`` of ``max(2, jobs)`` worker
  processes;
- ``scheduler="tcp://HOST:PORT"``: an existing Dask scheduler.

Functions sent to workers must be importable module-level callables.

Ctrl-C: the pool's workers ignore SIGINT (the terminal sends it to every process of the
job), so this process alone handles it: it stops the workers at once, keeps what
finished and raises ``KeyboardInterrupt``; callers that can resume turn it into
:class:`Interrupted` ("interrupted: N of M runs kept; re-run to resume", exit code 130).
In this process (``jobs = 1``) a run stops within about 100 ms (the core looks at
Python's signals every 100 ms of wall time, ``tcplab.runner.run_core``).

``jobs`` beyond the machine's cores is capped to them (:func:`usable_jobs`): more
processes than cores only share them, and each run then takes as much longer.

Example:
    >>> items = [1, 2, 3]
    >>> sorted((i, r) for i, r, err in dispatch(items, pow, lambda i: (i, 2), lambda i: f"sq-{i}", jobs=1))
    [(1, 1), (2, 4), (3, 9)]
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import contextvars
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

__all__ = ["check_scheduler", "dispatch", "Progress", "ProgressGroup", "RunProgress", "Interrupted", "usable_jobs",
           "available_cores"]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep or a study; ``kept`` of its ``total`` runs are on disk.

    Example:
        >>> str(Interrupted(12, 40))
        'interrupted: 12 of 40 runs kept; re-run to resume'
        >>> str(Interrupted(3, 9, of="study satellite"))
        'interrupted: 3 of 9 runs of study satellite kept; re-run to resume'
    """

    def __init__(self, kept: int, total: int, of: str = "") -> None:
        super().__init__(kept, total, of)
        self.kept, self.total, self.of = kept, total, of

    def __str__(self) -> str:
        of = f" of {self.of}" if self.of else ""
        return f"interrupted: {self.kept} of {self.total} runs{of} kept; re-run to resume"


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one).

    Example:
        >>> available_cores() >= 1
        True
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def usable_jobs(jobs: int | None) -> tuple[int, str | None]:
    """The worker processes to start for ``jobs`` (None: one per core), and a one-line
    note when ``jobs`` was capped to the cores.

    Example:
        >>> n = available_cores()
        >>> usable_jobs(None) == (n, None), usable_jobs(1)
        (True, (1, None))
        >>> usable_jobs(n + 10)[1] == f"--jobs {n + 10} is more than this machine's {n} cores; running {n} workers"
        True
    """
    cores = available_cores()
    if jobs is None:
        return cores, None
    if jobs > cores:
        return cores, f"--jobs {jobs} is more than this machine's {cores} cores; running {cores} workers"
    return jobs, None


def _ignore_sigint() -> None:
    """A pool worker's initializer: Ctrl-C is for the parent process to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _children_ignore_sigint() -> Iterator[None]:
    """While worker processes are started: SIGINT ignored, which they inherit from their
    start on (Python leaves an ignored SIGINT ignored), so Ctrl-C never prints a
    worker's traceback. Only the main thread can change signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Stops a pool's workers now, runs under way included (their results are dropped)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # CPython keeps them here
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(5)


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
    jobs, _ = usable_jobs(jobs)
    if jobs == 1:
        for item in items:
            try:
                yield item, fn(*args(item)), None
            except Exception as e:  # a failed run is reported, the rest continue
                yield item, None, f"{type(e).__name__}: {e}"
        return
    ctx = multiprocessing.get_context("spawn")
    with _children_ignore_sigint():  # the workers start (on submit) ignoring SIGINT
        pool = cf.ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx, initializer=_ignore_sigint)
        futures = {pool.submit(fn, *args(item)): item for item in items}
    finished = False
    try:
        for fut in cf.as_completed(futures):
            item = futures[fut]
            try:
                yield item, fut.result(), None
            except Exception as e:
                yield item, None, f"{type(e).__name__}: {e}"
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # Ctrl-C, or the consumer stopped early (e.g. its results cannot be written)
            _stop_workers(pool)


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
            n_workers=max(2, usable_jobs(jobs)[0]), threads_per_worker=1, processes=True,
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


class RunProgress:
    """One run's progress on stderr: simulated time of the run's end, wall time and time left.

    Pass it as ``progress=`` to :func:`tcplab.run` (the core calls it about every
    100 ms of wall time with the simulated time and the run's latest end, in seconds).
    The bar appears only once the run has taken ``after`` seconds of wall time, and only
    on a terminal; ``now_s`` keeps the last simulated time seen either way. The time
    left assumes the simulation keeps its pace so far (simulated seconds per wall
    second). With ``open_end`` (no ``duration``: the run ends when its flows complete)
    the end shown is ``max_duration``, an upper bound, and so is the time left.

    Example:
        >>> with RunProgress(enabled=False) as bar:
        ...     bar(1.5, 10.0); bar(3.0, 10.0)
        >>> bar.now_s, bar.end_s
        (3.0, 10.0)
        >>> wall_clock(59.4), wall_clock(3 * 3600 + 62), wall_clock(90 * 86400)
        ('0:00:59', '3:01:02', '90 days')
    """

    def __init__(self, enabled: bool = True, after: float = 2.0, label: str = "run", open_end: bool = False) -> None:
        self.enabled, self.after, self.label, self.open_end = enabled, after, label, open_end
        self.now_s = 0.0
        self.end_s = 0.0
        self.started = time.monotonic()
        self._bar: Any = None

    def __enter__(self) -> "RunProgress":
        self.started = time.monotonic()
        return self

    def __call__(self, now_s: float, end_s: float) -> None:
        self.now_s, self.end_s = now_s, end_s
        wall = time.monotonic() - self.started
        if not (self.enabled and wall >= self.after):
            return
        pace = now_s / wall if wall > 0 else 0.0  # simulated seconds per wall second
        fields = {"wall": wall_clock(wall), "left": wall_clock((end_s - now_s) / pace) if pace > 0 else "?"}
        if self._bar is None:
            self._open(fields)
        if self._bar is not None:
            self._bar.update(self._task, completed=now_s, total=end_s, **fields)

    def _open(self, fields: dict[str, str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn
        from rich.progress import Progress as RichProgress

        console = Console(stderr=True, file=sys.stderr)
        if not console.is_terminal:
            self.enabled = False
            return
        upto = "up to " if self.open_end else ""
        self._bar = RichProgress(
            TextColumn("{task.description}"), BarColumn(),
            TextColumn(f"{{task.completed:,.1f}} s of {upto}{{task.total:,.1f}} s simulated"),
            TextColumn("{task.fields[wall]} wall, " + ("at most " if self.open_end else "") + "{task.fields[left]} left"),
            console=console, transient=False,
        )
        self._task = self._bar.add_task(self.label, total=self.end_s or None, completed=self.now_s, **fields)
        self._bar.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def wall_clock(seconds: float) -> str:
    """A wall time as ``H:MM:SS``, or in days beyond 100 hours."""
    if seconds >= 100 * 3600:
        return f"{seconds / 86400:,.0f} days"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
