"""The flows of a scenario (``[[flows]]``): TCP transfers and UDP streams.

An entry with ``count > 1`` is a flow group, expanded by
:meth:`tcplab.scenario.Scenario.expand_flows` over the sender/receiver pairs. Entries
are tagged by ``kind``; a missing ``kind`` means ``"tcp"``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Discriminator, Tag, model_validator

from tcplab import units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError
from tcplab.scenario.quantities import Choice, NodeOrList, Size, Time
from tcplab.scenario.tcp import CcOptions, TcpOptions

__all__ = ["Interval", "TcpFlow", "UdpFlow", "Flow"]


class Interval(Model):
    """Inter-departure times of a UDP source (``dist`` = constant, normal, exponential).

    Example:
        >>> Interval(dist="normal", mean="20ms", sigma="1ms").to_core()
        {'dist': 'normal', 'mean': 20000000, 'sigma': 1000000}
    """

    dist: Annotated[str, Choice(lambda: ["constant", "normal", "exponential"])] = fld("constant", "Distribution.")
    mean: Time = fld(doc="Mean inter-departure time.", ge=1)
    sigma: Optional[Time] = fld(None, "Standard deviation (normal only; truncated at zero).",
                                default_doc="required for `normal`")

    @model_validator(mode="after")
    def _sigma_only_for_normal(self) -> "Interval":
        if self.dist == "normal" and self.sigma is None:
            raise ScenarioError("sigma", "is required when dist = \"normal\"", accepted="a time like '1ms'")
        if self.dist != "normal" and self.sigma is not None:
            raise ScenarioError("sigma", f"only applies to dist = \"normal\", not {self.dist!r}",
                                value=units.format_time(int(self.sigma)))
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``Interval``."""
        out: dict[str, Any] = {"dist": self.dist, "mean": self.mean}
        if self.dist == "normal":
            out["sigma"] = self.sigma
        return out


class _FlowEntry(Model):
    """Fields every ``[[flows]]`` entry has: naming, endpoints, count and start times."""

    name: Optional[str] = fld(None, "Label used in tables. With `count > 1`, flows are named `<name>.<j>`.",
                              default_doc="`flow<i>` (i = position among all flows)")
    group: str = fld("", "Group label for aggregation (e.g. a burst).")
    src: Optional[NodeOrList] = fld(None, "Sending node, or a list cycled over the group's flows.",
                                    default_doc="dumbbell: `s<j mod pairs>`; required for a graph")
    dst: Optional[NodeOrList] = fld(None, "Receiving node, or a list cycled over the group's flows.",
                                    default_doc="dumbbell: `d<j mod pairs>`; required for a graph")
    count: int = fld(1, "Number of flows this entry expands into (a flow group).", ge=1, le=100_000)
    start: Time = fld(0, "When the first flow of the entry starts.", default_doc='"0s"')
    start_spacing: Time = fld(0, "Flow j of the group starts `j * start_spacing` after `start`.", default_doc='"0s"')
    start_jitter: Time = fld(
        0, "Each flow's start is delayed by a uniform random time in [0, start_jitter], drawn from the run seed and "
        "the flow's position (so every variant of a sweep sees the same starts).", default_doc='"0s"',
    )


class TcpFlow(_FlowEntry):
    """A TCP flow or flow group (``kind = "tcp"``, the default in ``[[flows]]``).

    Example:
        >>> f = TcpFlow(group="burst1", count=6, bytes_total="180kB")
        >>> f.count, f.bytes_total
        (6, 180000)
    """

    kind: Literal["tcp"] = "tcp"
    bytes: Optional[Size] = fld(None, "Bytes each flow transfers.",
                                default_doc="unset: a bulk transfer that runs until `stop` or the end", ge=1)
    bytes_total: Optional[Size] = fld(
        None, "Bytes of the whole group, split equally between its flows (the first flows take the remainder).",
        default_doc="unset", ge=1,
    )
    stop: Optional[Time] = fld(None, "When a bulk sender stops offering new data.", default_doc="the end of the run")
    cc: Optional[CcOptions] = fld(None, "Congestion control for these flows.", default_doc="the scenario's `[cc]`")
    tcp: Optional[TcpOptions] = fld(None, "TCP overrides for these flows.", default_doc="the scenario's `[tcp]`")

    @model_validator(mode="after")
    def _one_way_to_give_the_size(self) -> "TcpFlow":
        if self.bytes is not None and self.bytes_total is not None:
            raise ScenarioError("bytes_total", "give either bytes (per flow) or bytes_total (per group), not both",
                                value=units.format_size(int(self.bytes_total)))
        if self.bytes_total is not None and int(self.bytes_total) < self.count:
            raise ScenarioError("bytes_total", f"must give each of the {self.count} flows at least one byte",
                                value=units.format_size(int(self.bytes_total)))
        return self

    def sizes(self) -> list[int | None]:
        """Bytes of each flow of the group (``None``: bulk).

        Example:
            >>> TcpFlow(count=4, bytes_total=10).sizes()
            [3, 3, 2, 2]
        """
        n = self.count
        if self.bytes_total is not None:
            total = int(self.bytes_total)
            return [total // n + (1 if j < total % n else 0) for j in range(n)]
        return [None if self.bytes is None else int(self.bytes)] * n


class UdpFlow(_FlowEntry):
    """A UDP stream or group of streams (``kind = "udp"``), e.g. seed 003's voice.

    Example:
        >>> UdpFlow(src="s0", dst="d0", packet_size="186B",
        ...         interval=Interval(dist="normal", mean="20ms", sigma="1ms")).packet_size
        186
    """

    kind: Literal["udp"] = "udp"
    stop: Optional[Time] = fld(None, "When the source stops offering data.", default_doc="the end of the run")
    packet_size: Size = fld(doc="IP packet size (seed 003 voice: \"186B\").", ge=1, le=65535)
    interval: Interval = fld(doc="Inter-departure time distribution.")


def _flow_kind(value: Any) -> str | None:
    """The tag of a ``[[flows]]`` entry: its ``kind``, ``"tcp"`` when absent."""
    if isinstance(value, dict):
        kind = value.get("kind", "tcp")
        return kind if isinstance(kind, str) else repr(kind)
    return getattr(value, "kind", None)


#: A ``[[flows]]`` entry, tagged by ``kind`` (default ``"tcp"``).
Flow = Annotated[
    Union[Annotated[TcpFlow, Tag("tcp")], Annotated[UdpFlow, Tag("udp")]],
    Discriminator(_flow_kind),
]
