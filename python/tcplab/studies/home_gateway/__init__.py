"""Study ``home-gateway``: seed 003, a voice call behind a home gateway with a bulk TCP download.

Seed 003 is L. Stewart, D. Hayes, G. Armitage, M. Welzl and A. Petlund,
"Multimedia-unfriendly TCP congestion control and home gateway queue management",
ACM MMSys 2011 (the slides' text: ``docs/seeds/003_c9c9fd5920f3a08e.txt``). It asks how
the choice of TCP congestion control (NewReno or CUBIC), and the way a home gateway
counts its drop-tail queue (packet slots, "fixed-byte strict" or "fixed-byte loose"),
hurt a voice call that shares the broadband bottleneck. ``tcplab study home-gateway``
runs it on tcplab's simulator; ``docs/studies/home-gateway.md`` gives the set-up, the
choices the seed leaves open and the verdicts.

The package:

- :mod:`~tcplab.studies.home_gateway.config`: constants, :class:`StudyParams` and the
  scenario files ``examples/home-gateway/<link>.toml`` with the swept values set by path;
- :mod:`~tcplab.studies.home_gateway.study`: one simulation per configuration, the
  tasks, and :class:`~tcplab.studies.home_gateway.study.Definition` for the shared study
  machine (:mod:`tcplab.studies.engine`); :func:`run`;
- :mod:`~tcplab.studies.home_gateway.analysis`: tables, the fine sweep's shape, the
  time series;
- :mod:`~tcplab.studies.home_gateway.claims`: the seed's sentences as checks with claim
  forms; ``ledger.toml``: the claims ledger (every sentence of the seed, with its status);
- :mod:`~tcplab.studies.home_gateway.report`: figures and ``report.html``;
- :mod:`~tcplab.studies.home_gateway.emulate`: ``--mode emulate``, the simulator beside
  this host's real Linux TCP on a reduced grid.

Example:
    >>> p = StudyParams(reps=2, links=["adsl1"], rtts_ms=[100])
    >>> NAME, SEED_STUDY, p.links
    ('home-gateway', '003_c9c9fd5920f3a08e', ['adsl1'])
"""

from __future__ import annotations

from tcplab.studies.home_gateway.analysis import (band_halves, curve_correlation, dominant_period, extremum_distance,
                                                  fine_analysis, fine_matrix, joint, periodicity_table, periodogram,
                                                  phase_distance, series_stats)
from tcplab.studies.home_gateway.claims import THRESHOLDS, evaluate_findings
from tcplab.studies.home_gateway.config import (LINKS, NAME, PACKET_BYTES, SEED_STUDY, SEMANTIC_LABELS, SEMANTICS,
                                                VARIANTS, StudyParams, Variant, base_owd_s, base_scenario,
                                                bdp_packets, configure, link_rate, scenario_toml, voice_share)
from tcplab.studies.home_gateway.study import DEFINITION, RUN_COLUMNS, Definition, plan, run, run_row, simulate_block

__all__ = [
    "NAME", "SEED_STUDY", "LINKS", "PACKET_BYTES", "SEMANTICS", "SEMANTIC_LABELS", "VARIANTS", "Variant",
    "StudyParams", "bdp_packets", "base_scenario", "configure", "scenario_toml", "base_owd_s", "link_rate",
    "voice_share", "RUN_COLUMNS", "run_row", "simulate_block", "plan", "Definition", "DEFINITION", "run",
    "series_stats", "periodogram", "dominant_period", "extremum_distance", "curve_correlation", "joint",
    "phase_distance", "band_halves", "fine_matrix", "fine_analysis", "periodicity_table", "THRESHOLDS",
    "evaluate_findings",
]
