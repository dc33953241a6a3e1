"""Study ``highspeed``: seed 002 (Shimonishi, Murase and Sanadidi, PFLDnet 2007), ``docs/seeds/002_06d48414b99b3466.txt``.

The package is the study: :mod:`.setup` (the scenario, its sweep and the parameters),
:mod:`.study` (the worker, the plan and the study definition), :mod:`.analysis` (the
metrics), :mod:`.claims` (the seed's claims as checks; ``ledger.toml`` maps every
sentence of the seed to them) and :mod:`.report` (figures and ``report.html``).
``docs/studies/highspeed.md`` describes the set-up and the verdicts.
"""

from tcplab.studies.highspeed.setup import (CASES, DURATION_S, LABELS, NAME, PROTOCOLS, RTT_READINGS,  # noqa: F401
                                            SCALES, SUMMARY, StudyParams, base_document, variant_document)
from tcplab.studies.highspeed.study import DEFINITION, StudyResult, plan, run, simulate_run  # noqa: F401

__all__ = ["NAME", "SUMMARY", "PROTOCOLS", "LABELS", "SCALES", "CASES", "DURATION_S", "RTT_READINGS", "StudyParams", "StudyResult",
           "base_document", "variant_document", "simulate_run", "plan", "run", "DEFINITION"]
