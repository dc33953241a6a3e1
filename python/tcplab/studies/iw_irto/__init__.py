"""Study ``iw-irto``: seed 000 (IW 3 -> 10 and initial RTO 3 s -> 1 s over EDGE/HSPA/LTE).

The seed is I. Järvinen, A. Nyrhinen, A. Y. Ding and M. Kojo, "Effect of IW and
Initial RTO changes", IETF 79, Beijing, 2010, an ns-2 study with TCP SACK; its text is
``docs/seeds/000_ae80ce17cd677c8e.txt`` and the study's page is
``docs/studies/iw-irto.md``. The package:

- :mod:`~tcplab.studies.iw_irto.setup`: links, buffers, workload, scenarios, the
  block of runs and :class:`StudyParams`;
- :mod:`~tcplab.studies.iw_irto.analysis`: per-run metrics and per-configuration facts;
- :mod:`~tcplab.studies.iw_irto.claims`: one finding per result sentence of the seed,
  with the claims ledger ``ledger.toml`` beside it (:mod:`tcplab.studies.ledger`);
- :mod:`~tcplab.studies.iw_irto.report`: figures and ``report.html``;
- :mod:`~tcplab.studies.iw_irto.study`: the study on the shared machine and :func:`run`.

``tcplab study iw-irto`` finds :func:`run` and :class:`StudyParams` here.

Example:
    >>> StudyParams(reps=4, links=["lte"]).n_runs()
    256
    >>> len(FINDING_IDS), FINDING_IDS[0], FINDING_IDS[-1]
    (41, 'F1', 'F41')
"""

from __future__ import annotations

from tcplab.studies.iw_irto.analysis import effective_rtt, irto_effect, owd_maxima, run_metrics, summary_table
from tcplab.studies.iw_irto.claims import FINDING_IDS, evaluate_findings, self_congested
from tcplab.studies.iw_irto.setup import (CONFIG, FLOW_COUNTS, LINKS, NAME, RED_TABLE, RUN, SEED_STUDY, SUMMARY,
                                          VARIANT, VARIANTS, Buffer, RedSetting, StudyParams, WirelessLink, bdp_table,
                                          buffer_by_id, buffers, first_rtos, flow_starts, plan, queue_config,
                                          red_table, scenario, simulate_block, sort_rows, start_fractions,
                                          variant_label)
from tcplab.studies.iw_irto.study import DEFINITION, Definition, collect, run
from tcplab.studies.engine import StudyResult

__all__ = [
    "NAME", "SEED_STUDY", "SUMMARY", "WirelessLink", "Buffer", "RedSetting", "LINKS", "RED_TABLE", "FLOW_COUNTS",
    "VARIANTS", "CONFIG", "VARIANT", "RUN", "StudyParams", "StudyResult", "buffers", "buffer_by_id", "queue_config",
    "bdp_table", "red_table", "start_fractions", "flow_starts", "scenario", "first_rtos", "simulate_block", "plan",
    "sort_rows", "variant_label", "run_metrics", "effective_rtt", "irto_effect", "summary_table", "owd_maxima",
    "FINDING_IDS", "evaluate_findings", "self_congested", "Definition", "DEFINITION", "run", "collect",
]
