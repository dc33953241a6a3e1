"""tcplab: a laboratory for TCP congestion-control experiments.

The simulator is a deterministic Rust core (``tcplab._core``); this package is the
front end: scenario files, runs, sweeps, statistics, plots, reports and the CLI.

Example:
    >>> import tcplab
    >>> tcplab.__version__
    '0.1.0'
"""

from tcplab import _core

__version__: str = _core.version()

__all__ = ["__version__"]
