"""Study ``iw-irto`` on the shared study machine: its :class:`Definition` and :func:`run`.

The set-up is :mod:`tcplab.studies.iw_irto.setup`, the per-run metrics
:mod:`tcplab.studies.iw_irto.analysis`, the checks of the seed's claims
:mod:`tcplab.studies.iw_irto.claims` (with the claims ledger ``ledger.toml`` beside
them) and the figures and page :mod:`tcplab.studies.iw_irto.report`. Batched,
resumable execution, ``findings.json`` and the report skeleton are the machine every
study shares (:mod:`tcplab.studies.engine`). The seed is
``docs/seeds/000_ae80ce17cd677c8e.txt``.

Example:
    >>> DEFINITION.name, DEFINITION.seed_study, DEFINITION.task_tables
    ('iw-irto', '000_ae80ce17cd677c8e', ('flows', 'runs', 'owd'))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult, TaskStore
from tcplab.studies.iw_irto.analysis import owd_maxima, run_metrics, summary_table
from tcplab.studies.iw_irto.claims import evaluate_findings
from tcplab.studies.iw_irto.setup import (NAME, RUN, SEED_STUDY, STUDY_VERSION, StudyParams, buffer_order, link_order,
                                          plan, simulate_block)

__all__ = ["Definition", "DEFINITION", "run", "collect"]


class Definition(engine.StudyDefinition):
    """Seed 000 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("flows", "runs", "owd")
    config_columns = (("link", "string"), ("buffer", "string"), ("n_flows", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        # A task's rows are already ordered by replication, variant (VARIANTS order) and
        # flow or packet, so concatenating tasks in this order gives report order.
        return (link_order(spec["link"]), buffer_order(spec["buffer"]), spec["n_flows"], spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        rm = run_metrics(tables["flows"], tables["runs"])
        summary = summary_table(rm)
        findings = evaluate_findings(rm, params)
        findings["seed_owd_maxima"] = owd_maxima(tables["runs"])
        return {"run_metrics": rm, "summary": summary}, findings

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.iw_irto import report  # matplotlib only when figures are drawn

        return report.render_figures(tables, tables["run_metrics"], fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.iw_irto import report

        return report.write_report(out, params, tables, tables["run_metrics"], tables["summary"], findings, figs,
                                   manifest)


DEFINITION = Definition()


def run(
    out: str | Path,
    params: StudyParams | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    figures: bool = True,
) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    Args:
        out: results directory; finished tasks already in ``out/tasks`` are skipped.
        params: the study definition (default: the seed's, 100 replications, all links).
        jobs, scheduler: as ``tcplab sweep`` (see :mod:`tcplab.studies.engine`).
        progress: show a progress bar on stderr.
        figures: render the figures (PNG + SVG) and embed them in the report.

    Example (a tiny run; the CLI is ``tcplab study iw-irto --reps 2 --links lte``)::

        >>> res = run("results/tiny", StudyParams(reps=2, links=["lte"]), jobs=1, progress=False)  # doctest: +SKIP
        >>> res.report                                                                              # doctest: +SKIP
        PosixPath('results/tiny/report.html')
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


def collect(store: TaskStore, tasks: list[BlockTask]) -> dict[str, pd.DataFrame]:
    """The finished tasks' tables concatenated in report order: ``flows``, ``runs``, ``owd``."""
    return engine.collect(DEFINITION, store, tasks)
