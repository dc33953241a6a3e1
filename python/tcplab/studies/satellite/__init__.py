"""Study ``satellite``: seed 004 end to end, on tcplab's DAMA and SLACP models.

Seed 004 is M. Kojo, "On Efficient and TCP/IP Friendly Link Layers for Wireless WANs",
FDPW 2005 (``docs/seeds/004_af47799115785341.txt``). ``tcplab study satellite`` runs it;
``docs/studies/satellite.md`` gives the set-up, the choices the seed leaves open and the
verdicts.

The package:

- :mod:`.configs`: the set-up: configurations (scenario files swept by path), the
  worker that runs a block of them, the plan, :class:`StudyParams`;
- :mod:`.analysis`: per-run metrics, the summary table and the paired estimates;
- :mod:`.claims`: the seed's claims as checks (:mod:`tcplab.studies.findings` claim
  forms), with every threshold and margin stated; ``ledger.toml`` maps every sentence
  of the seed to them (:mod:`tcplab.studies.ledger`);
- :mod:`.report`: figures and ``report.html``.

This module ties them to the shared study machine (:func:`tcplab.studies.engine.run_study`).

Example:
    >>> DEFINITION.name, DEFINITION.seed_study, StudyParams(reps=2, errors="none").errors
    ('satellite', '004_af47799115785341', ['none'])
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult
from tcplab.studies.satellite import analysis, claims, report
from tcplab.studies.satellite.configs import (BURST, DAMA_MODES, DAMA_ORDER, ERROR_MODELS, NAME, RBDC_DIAGNOSTIC, RUN,
                                              SEED_STUDY, STUDY_VERSION, VARIANTS, WORKLOADS, StudyParams,
                                              base_documents, plan, simulate_block, variant_document, variants_of)

__all__ = ["NAME", "DAMA_MODES", "ERROR_MODELS", "VARIANTS", "WORKLOADS", "RBDC_DIAGNOSTIC", "StudyParams",
           "StudyResult", "Definition", "DEFINITION", "run", "base_documents", "variant_document", "variants_of",
           "simulate_block", "plan"]


class Definition(engine.StudyDefinition):
    """Seed 004 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("runs", "trace_cwnd", "trace_queue", "trace_drops", "recovery", "channel")
    config_columns = (("dama", "string"), ("slacp", "bool"), ("error", "string"), ("n_flows", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        errors = (*ERROR_MODELS, BURST)
        return (("grid", "recovery", "channel").index(spec.get("probe", "grid")), spec["trace"], spec["n_flows"],
                DAMA_ORDER.index(spec["dama"]), spec["slacp"], errors.index(spec["error"]),
                spec.get("design", ""), spec.get("alloc_delay_sf", 0), spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def params_dict(self, params: StudyParams) -> dict[str, Any]:
        return asdict(params)

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        rm = analysis.run_metrics(tables["runs"])
        rec, chan = tables.get("recovery"), tables.get("channel")
        derived = {"run_metrics": rm, "summary": analysis.summary_table(rm),
                   "per_table": analysis.per_table(rm, chan, params.errors)}
        return derived, claims.evaluate_findings(rm, params, rec, derived["per_table"])

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        return report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        return report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    The CLI is ``tcplab study satellite [--reps N] [--jobs J] [--scheduler ADDR] [--out DIR]``.
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)
