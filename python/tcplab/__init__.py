"""tcplab: a laboratory for TCP congestion-control experiments.

The simulator is a deterministic Rust core (``tcplab._core``); this package is the
front end: scenario files, runs, sweeps, statistics, plots, reports and the CLI.

Example:
    >>> import tcplab
    >>> tcplab.__version__
    '0.1.0'
    >>> sc = tcplab.Scenario.from_toml(tcplab.scenario.EXAMPLE_TOML)
    >>> sc.to_core()["topology"]["bottleneck"]["delay"]
    70000000
    >>> built = tcplab.Scenario(
    ...     topology=tcplab.Dumbbell(bottleneck=tcplab.Link(preset="hspa"),
    ...                              sender_access=tcplab.Access(rate="100Mbps", delay="11ms"),
    ...                              receiver_access=tcplab.Access(rate="100Mbps", delay="1ms")),
    ...     flows=[tcplab.TcpFlow(bytes="180kB")])
    >>> built.to_core()["topology"]["bottleneck"]["rate"]
    2000000
"""

from __future__ import annotations

import importlib
from typing import Any

from tcplab import _core

__version__: str = _core.version()

# Public names and the module that defines each. They are imported on first use
# (PEP 562), so `import tcplab._core` and `tcplab bench` stay free of pandas and
# matplotlib, and sweep workers load only what they need.
_LAZY = {
    "Scenario": "tcplab.scenario",
    "ScenarioError": "tcplab.scenario",
    "load": "tcplab.scenario",
    # Every builder of a scenario table (tcplab.scenario.__all__ lists the same).
    **{name: "tcplab.scenario" for name in (
        "Dumbbell", "Graph", "GraphLink", "ParkingLot", "LotHost", "Link", "Access",
        "DropTail", "Red", "Codel", "FqCodel", "Pie", "Bernoulli", "Markov", "Dama", "Slacp", "SlacpChannel",
        "TcpOptions", "CcOptions", "TcpFlow", "UdpFlow", "RpcFlow", "Interval", "SizeDist", "Arrivals",
        "Workload", "FlowClass", "Record",
    )},
    "RunResult": "tcplab.results",
    "run": "tcplab.runner",
    "ScenarioWarning": "tcplab.runner",
    "sweep": "tcplab.sweeps",
    "emulate": "tcplab.emulation",
    "fidelity": "tcplab.fidelity",
}
_SUBMODULES = {"scenario", "stats", "units", "plots", "report", "results", "cli", "runner", "sweeps", "emulation"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"tcplab.{name}")
    else:
        raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["__version__", *_LAZY, "stats", "units", "scenario"]
