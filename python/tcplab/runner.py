"""One simulation: ``tcplab.run(scenario, seed)`` (README.md, "Using it").

The scenario is validated and resolved in Python (:mod:`tcplab.scenario`), handed to
the core as JSON (``tcplab._core.run``, which releases the GIL while Rust runs) and
the columns that come back become a :class:`tcplab.results.RunResult` of pandas
DataFrames (columns documented in :mod:`tcplab.results`).

Example (needs the core's ``run``)::

    >>> import tcplab
    >>> r = tcplab.run("examples/hspa_iw10.toml", seed=1, trace=["cwnd"])  # doctest: +SKIP
    >>> r.flows[["name", "elapsed_s", "rtos"]]                              # doctest: +SKIP
"""

from __future__ import annotations

import copy
import json
import os
import time
import warnings
from pathlib import Path
from typing import Callable, Iterable

from tcplab import _core
from tcplab.results import RunResult
from tcplab.scenario import Record, Scenario, ScenarioError, load
from tcplab.scenario.errors import near

__all__ = ["run", "run_core", "core_has_run", "TRACES", "with_traces", "trace_names", "as_scenario", "CoreRunError",
           "ScenarioWarning"]

#: Names accepted by ``trace=`` and ``--trace``.
TRACES = ("cwnd", "queue", "owd", "drops", "packets")


class CoreRunError(ValueError):
    """The core rejected the scenario or failed while running it."""


def core_has_run() -> bool:
    """Whether the compiled core offers ``run`` (it lands after the front end).

    Example:
        >>> isinstance(core_has_run(), bool)
        True
    """
    return hasattr(_core, "run")


def as_scenario(scenario: Scenario | str | Path) -> Scenario:
    """A :class:`Scenario`, loading it when given a path.

    Example:
        >>> as_scenario(42)
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: expected a Scenario or the path of a scenario file; got 42; accepted: tcplab.Scenario(...), a str or a pathlib.Path
    """
    if isinstance(scenario, Scenario):
        return scenario
    if not isinstance(scenario, (str, os.PathLike)):
        raise ScenarioError("", "expected a Scenario or the path of a scenario file", value=scenario,
                            accepted="tcplab.Scenario(...), a str or a pathlib.Path")
    return load(scenario)


def trace_names(trace: str | Iterable[str] | None) -> list[str]:
    """The series named by ``trace=``: one name, a comma-separated string, or a list.

    Example:
        >>> trace_names("cwnd"), trace_names("cwnd,queue"), trace_names(["owd"]), trace_names(None)
        (['cwnd'], ['cwnd', 'queue'], ['owd'], [])
        >>> trace_names("cwdn")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: trace: unknown time series; got 'cwdn'; accepted: cwnd, queue, owd, drops, packets. Did you mean 'cwnd'?
    """
    if trace is None:
        return []
    names = [t.strip() for t in trace.split(",") if t.strip()] if isinstance(trace, str) else list(trace)
    for t in names:
        if t not in TRACES:
            raise ScenarioError("trace", "unknown time series", value=t, accepted=", ".join(TRACES),
                                suggestion=near(str(t), TRACES))
    return names


def with_traces(scenario: Scenario, trace: str | Iterable[str] | None) -> Scenario:
    """A copy of ``scenario`` that also records the named series.

    ``cwnd`` and ``drops`` switch those series on; ``queue`` records every link's
    queue unless ``[record] queue`` already names some; ``owd`` and ``packets`` record
    every flow unless ``[record] owd`` (``packets``) already names some.

    Example:
        >>> from tcplab.scenario import EXAMPLE_TOML
        >>> sc = with_traces(Scenario.from_toml(EXAMPLE_TOML), ["cwnd", "queue"])
        >>> sc.record.cwnd, sc.record.queue
        (True, ['*'])
    """
    names = trace_names(trace)
    if not names:
        return scenario
    sc = copy.deepcopy(scenario)
    rec = sc.record
    assert isinstance(rec, Record)
    if "cwnd" in names:
        rec.cwnd = True
    if "drops" in names:
        rec.drops = True
    if "queue" in names and not rec.queue:
        rec.queue = ["*"]
    if "owd" in names and not rec.owd:
        rec.owd = ["*"]
    if "packets" in names and not rec.packets:
        rec.packets = ["*"]
    return sc


#: ``progress(now_s, end_s)``: the simulated time so far and the latest end of the run, s.
ProgressFn = Callable[[float, float], None]


def run_core(core_json: str, seed: int, progress: ProgressFn | None = None) -> str:
    """Calls ``_core.run`` on a resolved scenario; errors become :class:`CoreRunError`.

    The run looks back at Python every 100 ms of wall time: Ctrl-C raises
    ``KeyboardInterrupt`` from here within about that, and ``progress`` (if given) is
    called with the simulated time so far and the run's latest end, in seconds.
    """
    if not core_has_run():
        raise RuntimeError("the compiled core has no run() yet (tcplab._core.run); rebuild the extension")
    try:
        out: str = _core.run(core_json, seed, progress) if progress is not None else _core.run(core_json, seed)
    except ValueError as e:
        raise CoreRunError(str(e)) from None
    return out


def run(scenario: Scenario | str | Path, seed: int = 0, trace: str | Iterable[str] | None = None,
        progress: ProgressFn | None = None) -> RunResult:
    """Runs one simulation and returns its tables.

    Args:
        scenario: a :class:`Scenario`, or the path of a scenario file.
        seed: master seed (same scenario + same seed = bit-identical results).
        trace: time series to record in addition to ``[record]``: any of
            ``cwnd``, ``queue``, ``owd``, ``drops``, ``packets`` (one name, a comma-separated
            string or a list).
        progress: called about every 100 ms of wall time with the simulated time so
            far and the run's latest end, both in seconds (the ``tcplab run``
            progress bar).

    Returns:
        A :class:`RunResult`; ``result.flows`` etc. are DataFrames.

    Raises:
        ScenarioError: the scenario is invalid, by the Python checks or the core's
            (every problem, nothing ran).
        KeyboardInterrupt: Ctrl-C during the run (nothing is returned).

    A scenario built in Python is checked by the core before it runs, as a file is
    (:meth:`Scenario.check_core`); what it accepts but probably did not mean is
    issued as a :class:`ScenarioWarning` (:meth:`Scenario.warnings`).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScenarioError("seed", "must be an integer in [0, 2^64)", value=seed)
    given = as_scenario(scenario)
    if isinstance(scenario, Scenario):  # a file was checked by the core as it was loaded
        given.check_core(seed)
    for w in given.warnings():
        warnings.warn(w.one_line(), ScenarioWarning, stacklevel=2)
    sc = with_traces(given, trace)
    core = sc.to_core(seed)
    text = json.dumps(core, sort_keys=True, separators=(",", ":"))
    t0 = time.perf_counter()
    out = run_core(text, seed, progress)
    wall_s = time.perf_counter() - t0  # the core reads no clock; the caller times it
    result = RunResult.from_core(out, scenario=core)
    result.meta["wall_s"] = wall_s
    return result


class ScenarioWarning(UserWarning):
    """A scenario that runs but is probably not what was meant (:meth:`Scenario.warnings`)."""
