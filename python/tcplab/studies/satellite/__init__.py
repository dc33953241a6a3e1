"""Study ``satellite``: seed 004 (Kojo, FDPW 2005), ``docs/seeds/004_af47799115785341.txt``.

The package is the study; :mod:`.configs` holds its configurations, worker and analysis
for now, :mod:`.report` its figures and report.
"""

from tcplab.studies.satellite.configs import *  # noqa: F401,F403
from tcplab.studies.satellite.configs import RBDC_DIAGNOSTIC, StudyParams, run, variants_of  # noqa: F401
