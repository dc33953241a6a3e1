"""Workload generators (``[workload]``): classes of TCP flows drawn from the run seed.

Seed 002 (Shimonishi, Murase & Sanadidi, "Assessing interactions among legacy and
high-speed TCPs", PFLDnet 2007) describes its flows by laws, not lists: "100
short-lived flows, 1-40 long-lived flows; short-lived: 1MB file (Pareto), 1sec
inter-arrival time (exponential); long-lived: 4.7GB file (fixed), 2min inter-arrival
time (exponential); average round trip delay of a flow = 130msec (exponential)".

A ``[workload]`` needs a ``parking_lot`` topology. The core
(``crates/tcplab-core/src/app/workload.rs``) expands each class into hosts and plain
``tcp`` flows before the simulation is built; its module header states the draws:
each flow's path (an ordered pair of distinct routers, uniform), its base RTT (a
shifted exponential with the class-independent mean ``rtt_mean`` and the floor of
its backbone hops), its mix key and its size come from the flow's own substream,
start times from the class's Poisson arrivals. Nothing drawn depends on the
congestion control or the mix, so every protocol run sees the same flows (common
random numbers), and the first 10 flows of a 40-flow class are those of a 10-flow
class.

Sessions (``mode = "sessions"``): ``count`` is then the number of sessions. A session
is one source (one host pair, one path, one RTT, one mix key) that fetches objects for
the whole run: object starts are a Poisson process from time 0 with mean gap
``interarrival_mean`` (gaps between starts, the seed's "inter-arrival time"; an object
does not wait for the previous one to finish), each object's size is drawn from its
own substream, and objects arrive until the scenario's ``duration`` (required). So the
same sessions, objects and gaps come for every protocol.

RTT readings (``rtt_reading``): ``equal_per_hop`` (default) gives every hop count the
mean ``rtt_mean``; ``common_excess`` draws every flow's excess from one exponential
law, mean ``rtt_mean`` minus the mean backbone floor, so the RTT grows with the hop
count and only the mean over all flows is ``rtt_mean``. Seed 002 says only "Average
round trip delay of a flow = 130msec (exponential)"; both are readings of it.

Names: flow ``k`` of class ``c`` is ``<c><k:03>`` (e.g. ``long007``) in group
``<c>_h<hops>``; its hosts are ``<c><k:03>_s`` and ``<c><k:03>_d``, so its access
links are ``acc_<c><k:03>_s[_rev]`` and ``acc_<c><k:03>_d[_rev]``. In a session class,
object ``j`` of session ``k`` is the flow ``<c><k:03>.<j:04>`` (e.g. ``short007.0003``),
and every object of a session uses the session's hosts ``<c><k:03>_s`` and
``<c><k:03>_d``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import model_validator

from tcplab import units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError
from tcplab.scenario.flows import SizeDist
from tcplab.scenario.quantities import Size, Time
from tcplab.scenario.tcp import CcOptions, TcpOptions, merge_cc

__all__ = ["FlowClass", "Workload"]

_NAME = re.compile(r"^[A-Za-z0-9-]+$")


class FlowClass(Model):
    """A class of generated flows (``[[workload.classes]]``).

    Example:
        >>> c = FlowClass(name="long", count=2, bytes="4.7GB", interarrival_mean="120s")
        >>> c.flow_names()
        ['long000', 'long001']
        >>> FlowClass(name="short", count=1, size=SizeDist(dist="pareto", mean="1MB", shape=1.2),
        ...           interarrival_mean="1s").size_core()
        {'dist': 'pareto', 'mean': 1000000.0, 'shape': 1.2}
    """

    name: str = fld(doc="Name prefix of the class's flows and hosts (letters, digits and '-').")
    count: int = fld(doc="Number of flows, or of sessions with `mode = \"sessions\"` (seed 002: 100 short-lived, "
                     "1 to 40 long-lived).", ge=1, le=10_000)
    mode: Literal["files", "sessions"] = fld("files", "`files`: `count` flows in one Poisson stream for the class. "
                                            "`sessions`: `count` sources, each fetching objects (a size draw, then "
                                            "an exponential gap between object starts) until the run's `duration`.")
    bytes: Optional[Size] = fld(None, "Fixed size of every flow (seed 002's long-lived flows: \"4.7GB\").",
                                default_doc="unset: give `size`", ge=1)
    size: Optional[SizeDist] = fld(None, "Random size of each flow, e.g. `{ dist = \"pareto\", mean = \"1MB\", "
                                   "shape = 1.2 }` (seed 002's short-lived flows).", default_doc="unset: give `bytes`")
    interarrival_mean: Time = fld(doc="Mean of the exponential inter-arrival time (a Poisson process from time 0; "
                                  "per session with `mode = \"sessions\"`; seed 002: 1 s short, 2 min long).", ge=1)
    cc: Optional[CcOptions] = fld(None, "Congestion control of the class's flows.", default_doc="the scenario's `[cc]`")
    tcp: Optional[TcpOptions] = fld(None, "TCP overrides for the class's flows.", default_doc="the scenario's `[tcp]`")
    mix_fraction: float = fld(0.0, "Fraction of the class's flows that run `mix_cc` instead (the round(f N) flows "
                              "with the smallest per-flow mix keys, so the same flows in every run).", ge=0, le=1)
    mix_cc: Optional[CcOptions] = fld(None, "Congestion control of the mixed-in flows.", default_doc="`reno`")

    @model_validator(mode="after")
    def _one_size_and_a_plain_name(self) -> "FlowClass":
        if not _NAME.match(self.name):
            raise ScenarioError("name", "must be letters, digits and '-'", value=self.name,
                                accepted="a name like 'long' or 'short-1'")
        if (self.bytes is None) == (self.size is None):
            shown = "neither" if self.bytes is None else units.format_size(int(self.bytes)) + " and a size"
            raise ScenarioError("bytes", "give exactly one of bytes (fixed) or size (a distribution)", value=shown)
        return self

    def source_names(self) -> list[str]:
        """Names of the class's sources (its flows, or its sessions), which name their hosts."""
        return [f"{self.name}{k:03}" for k in range(self.count)]

    def flow_names(self) -> list[str]:
        """Names of the class's flows known before the draw: every file, or each session's first object.

        Example:
            >>> FlowClass(name="s", count=2, bytes="1MB", interarrival_mean="1s", mode="sessions").flow_names()
            ['s000.0000', 's001.0000']
        """
        if self.mode == "sessions":
            return [f"{n}.0000" for n in self.source_names()]
        return self.source_names()

    def size_core(self) -> dict[str, Any]:
        """The core's ``SizeDist`` of the class."""
        if self.bytes is not None:
            return {"dist": "constant", "bytes": int(self.bytes)}
        return self.size.to_core()  # type: ignore[union-attr]

    def to_core(self, base_cc: CcOptions, base_tcp: dict[str, Any]) -> dict[str, Any]:
        """The core's ``FlowClass``, with the scenario's ``[cc]`` and ``[tcp]`` resolved in."""
        return {
            "name": self.name,
            "count": self.count,
            "mode": self.mode,
            "size": self.size_core(),
            "interarrival_mean": int(self.interarrival_mean),
            "cc": merge_cc(base_cc, self.cc),
            "tcp": {**base_tcp, **(self.tcp.to_core() if self.tcp is not None else {})},
            "mix_fraction": float(self.mix_fraction),
            "mix_cc": merge_cc(CcOptions(name="reno"), self.mix_cc),
        }


class Workload(Model):
    """Generated flows on a parking lot (``[workload]``; module docstring).

    Example:
        >>> w = Workload(classes=[FlowClass(name="long", count=1, bytes="4.7GB", interarrival_mean="120s")])
        >>> int(w.rtt_mean), w.host_names()
        (130000000, ['long000_s', 'long000_d'])
    """

    rtt_mean: Time = fld(130_000_000, "Mean base RTT of a generated flow, the same for every hop count: each flow's "
                         "RTT is its backbone floor (2 x hops x backbone delay) plus an exponential excess, split "
                         "equally over its four access-link traversals (seed 002: 130 ms).", default_doc='"130ms"',
                         ge=1)
    rtt_reading: Literal["equal_per_hop", "common_excess"] = fld(
        "equal_per_hop", "How `rtt_mean` is read. `equal_per_hop`: the mean RTT of every hop count is `rtt_mean` "
        "(the excess's mean is `rtt_mean` minus the flow's floor). `common_excess`: every flow's excess has the "
        "mean `rtt_mean` minus the mean floor over all router pairs, so the RTT grows with the hop count and "
        "the mean over all flows is `rtt_mean` (seed 002's \"130msec (exponential)\" admits both).")
    classes: list[FlowClass] = fld(doc="The flow classes, as `[[workload.classes]]` entries.")

    @model_validator(mode="after")
    def _unique_class_names(self) -> "Workload":
        if not self.classes:
            raise ScenarioError("classes", "at least one class is required", accepted="[[workload.classes]] entries")
        seen: set[str] = set()
        for i, c in enumerate(self.classes):
            if c.name in seen:
                raise ScenarioError(f"classes[{i}].name", "duplicate class name", value=c.name)
            seen.add(c.name)
        return self

    def flow_names(self) -> list[str]:
        """Names of every generated flow."""
        return [n for c in self.classes for n in c.flow_names()]

    def host_names(self) -> list[str]:
        """Names of every generated host (source, then destination, per flow)."""
        return [h for c in self.classes for n in c.source_names() for h in (f"{n}_s", f"{n}_d")]

    def link_names(self) -> list[str]:
        """Names of the generated hosts' access links."""
        return [lk for h in self.host_names() for lk in (f"acc_{h}", f"acc_{h}_rev")]

    def to_core(self, base_cc: CcOptions, base_tcp: dict[str, Any]) -> dict[str, Any]:
        """The core's ``WorkloadSpec``."""
        return {"rtt_mean": int(self.rtt_mean), "rtt_reading": self.rtt_reading, "classes": [c.to_core(base_cc, base_tcp) for c in self.classes]}
