"""Study ``iw-testbed``: seed 001, IW10 vs IW3 on a Linux testbed, simulated and checked claim by claim.

Seed 001 is H.K. J. Chu and Y. Wang, "A testbed study on IW10 vs IW3"
(draft-ietf-tcpm-initcwnd-00, IETF 79, 2010; ``docs/seeds/001_ac085380cef1778f.txt``).
The package:

- :mod:`~tcplab.studies.iw_testbed.testbed`: the set-up (links, loads, IW variants,
  the grid, the scenario documents);
- :mod:`~tcplab.studies.iw_testbed.study`: the runs, their per-run metrics, the
  study's parameters and :func:`run`;
- :mod:`~tcplab.studies.iw_testbed.analysis`: derived per-run columns and the summary
  table;
- :mod:`~tcplab.studies.iw_testbed.claims`: the seed's claims as claim forms, checked
  on the runs (``findings.json``), with ``ledger.toml``, the claims ledger that maps
  every seed sentence to them;
- :mod:`~tcplab.studies.iw_testbed.report`: figures and ``report.html``;
- :mod:`~tcplab.studies.iw_testbed.emulate`: ``tcplab study iw-testbed --mode
  emulate``, a reduced grid with real Linux TCP.

``run``, ``StudyParams`` and the study's other entry points are those of
:mod:`~tcplab.studies.iw_testbed.study`, imported on first use (so importing the set-up
or the report imports no simulation code).

Example:
    >>> from tcplab.studies import iw_testbed
    >>> iw_testbed.StudyParams(reps=2).n_runs(), iw_testbed.NAME
    (216, 'iw-testbed')
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NAME", "SUMMARY", "StudyParams", "StudyResult", "run", "evaluate_findings", "DEFINITION"]


def __getattr__(name: str) -> Any:
    # PEP 562: the study module is imported when one of its names is first asked for.
    if name in __all__:
        return getattr(importlib.import_module("tcplab.studies.iw_testbed.study"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
