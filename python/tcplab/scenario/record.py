"""What a run records beyond its summary tables (``[record]``).

Per-flow, queue and link summaries are always recorded; the time series here are
opt-in because they grow with the number of packets. The two that follow packets,
per-flow goodput at an interval (``throughput_interval``) and the per-packet event
trace (``packets``), are recorded by the core's ``metrics/recorder.rs``; goodput counts
the bytes a receiver delivers in order to its application (RFC 9293 §3.10.7.4), the
"TCP throughput" of RFC 6349 §2.3, not the bytes on the wire.
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
        >>> Record.from_document({"throughput_interval": "100ms", "packets": ["bulk"]}).to_dict()
        {'throughput_interval': '100ms', 'packets': ['bulk']}
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
    throughput_interval: Optional[Time] = fld(
        None, "Interval of the per-flow goodput series `series_throughput` (e.g. \"100ms\"): for every TCP and "
        "UDP flow, the bytes delivered in order to the receiving application in each interval (k*iv, (k+1)*iv] "
        "from time 0, and goodput_bps = bytes * 8 / interval; a flow's rows sum to its bytes_delivered.",
        default_doc="off", ge=1,
    )
    packets: StrList = fld(
        doc="TCP and UDP flows (names or groups; `\"*\"` = all) whose every packet event is recorded in "
        "`series_packets`: enqueue, drop (with its cause), transmit (start of serialization) on each link, "
        "receive (at the TCP receiver or UDP sink) and ack (an ACK at the TCP sender).",
        factory=list, default_doc="none",
    )
