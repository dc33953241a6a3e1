"""Study ``highspeed``: seed 002 (Shimonishi, Murase and Sanadidi, PFLDnet 2007), ``docs/seeds/002_06d48414b99b3466.txt``.

The package is the study; :mod:`.study` holds its set-up, worker, analysis and findings
for now, :mod:`.report` its figures and report.
"""

from tcplab.studies.highspeed.study import *  # noqa: F401,F403
from tcplab.studies.highspeed.study import StudyParams, run  # noqa: F401
