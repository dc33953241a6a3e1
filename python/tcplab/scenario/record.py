"""What a run records beyond its summary tables (``[record]``).

Per-flow, queue and link summaries are always recorded; the time series here are
opt-in because they grow with the number of packets.
"""

from __future__ import annotations

from typing import Optional

from tcplab.scenario.base import Model, fld
from tcplab.scenario.quantities import StrList, Time

__all__ = ["Record"]


class Record(Model):
    """Which time series to record (per-flow, queue and link summaries always are).

    Example:
        >>> Record(cwnd=True, queue=["bottleneck"]).to_dict()
        {'cwnd': True, 'queue': ['bottleneck']}
    """

    cwnd: bool = fld(False, "cwnd, ssthresh, srtt, RTO and state of every TCP flow, at every change.")
    queue: StrList = fld(doc="Links whose queue occupancy is recorded at every change (`\"*\"` = all).",
                         factory=list, default_doc="none")
    owd: StrList = fld(doc="Flows (names or groups; `\"*\"` = all) whose per-packet one-way delay is recorded.",
                       factory=list, default_doc="none")
    drops: bool = fld(False, "Every drop event (time, link, flow, cause).")
    busy_sample_interval: Optional[Time] = fld(
        None, "Sampling interval of the \"queue non-empty\" utilisation of seed 001 (e.g. \"1s\").",
        default_doc="off", ge=1,
    )
