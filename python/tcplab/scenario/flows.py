"""The flows of a scenario (``[[flows]]``): TCP transfers, UDP streams and
request/response applications.

An entry with ``count > 1`` is a flow group, expanded by
:meth:`tcplab.scenario.Scenario.expand_flows` over the sender/receiver pairs. Entries
are tagged by ``kind``; a missing ``kind`` means ``"tcp"``.

An ``rpc`` entry (:class:`RpcFlow`) is an application that opens a new TCP connection
per transaction, sends a request and receives a response, as netperf's ``TCP_CRR``
(core ``crates/tcplab-core/src/app/``): its transactions arrive by a Poisson process
(at a rate, or at an offered load of a link), periodically or at listed times, one or
``batch`` at a time, and each is a row of the ``transactions`` table.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Discriminator, Tag, model_validator

from tcplab import units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError
from tcplab.scenario.quantities import Choice, NodeOrList, Size, Time
from tcplab.scenario.tcp import CcOptions, TcpOptions

__all__ = ["Interval", "TcpFlow", "UdpFlow", "SizeDist", "Arrivals", "RpcFlow", "Flow", "response_wire_bytes",
           "rate_for_load"]


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

    def latest_start(self) -> int:
        """The latest time, ns, any flow of the entry can start: the last one's, with the whole jitter.

        Example:
            >>> TcpFlow(count=3, start="1s", start_spacing="2s", start_jitter="10ms").latest_start()
            5010000000
        """
        return int(self.start) + (self.count - 1) * int(self.start_spacing) + int(self.start_jitter)

    @model_validator(mode="after")
    def _stop_after_every_start(self) -> Any:
        stop = getattr(self, "stop", None)
        if stop is not None and int(stop) <= self.latest_start():
            last = self.latest_start()
            what, who = ("start", "the flow") if last == int(self.start) else (
                f"the latest start of its flows ({units.format_time(last)}: start + (count - 1) x start_spacing "
                "+ start_jitter)", "a flow")
            raise ScenarioError("stop", f"must come after {what}; otherwise {who} would send nothing",
                                value=units.format_time(int(stop)),
                                accepted=f"a time after {units.format_time(last)}, or no stop")
        return self


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
    stop: Optional[Time] = fld(None, "When a bulk sender stops offering new data; after the entry's last start "
                                     "(`start + (count - 1) * start_spacing + start_jitter`).",
                               default_doc="the end of the run")
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
            >>> TcpFlow(count=4, bytes_total="10B").sizes()
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
    stop: Optional[Time] = fld(None, "When the source stops offering data; after the entry's last start.",
                               default_doc="the end of the run")
    packet_size: Size = fld(doc="IP packet size (seed 003 voice: \"186B\").", ge=1, le=65535)
    interval: Interval = fld(doc="Inter-departure time distribution.")


class SizeDist(Model):
    """A message size drawn from a distribution (``dist`` = uniform, exponential, pareto).

    Draws are whole bytes, ``max(1, ceil(x))`` for the continuous distributions (core
    ``app/sizes.rs``).

    Example:
        >>> SizeDist(dist="pareto", mean="15kB", shape=1.5).to_core()
        {'dist': 'pareto', 'mean': 15000.0, 'shape': 1.5}
        >>> SizeDist(dist="uniform", mean="1kB")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: min: is required when dist = "uniform"; accepted: a size like '1kB'
    """

    dist: Annotated[str, Choice(lambda: ["uniform", "exponential", "pareto"])] = fld(
        doc="Distribution: `uniform` (integers from `min` to `max`), `exponential` (`mean`), `pareto` "
            "(`mean`, `shape`; scale = mean (shape - 1)/shape, as ns-2).")
    min: Optional[Size] = fld(None, "Smallest size (uniform).", default_doc="required for `uniform`", ge=1)
    max: Optional[Size] = fld(None, "Largest size (uniform).", default_doc="required for `uniform`", ge=1)
    mean: Optional[Size] = fld(None, "Mean size (exponential, pareto).", default_doc="required for `exponential`, "
                               "`pareto`", ge=1)
    shape: Optional[float] = fld(None, "Pareto shape; above 1 for a finite mean (seed 002's flows: 1.2).",
                                 default_doc="required for `pareto`", ge=1.000001, le=100)

    @model_validator(mode="after")
    def _parameters_of_the_distribution(self) -> "SizeDist":
        needs = {"uniform": ("min", "max"), "exponential": ("mean",), "pareto": ("mean", "shape")}[self.dist]
        for name in ("min", "max", "mean", "shape"):
            value = getattr(self, name)
            if name in needs and value is None:
                accepted = "a number above 1" if name == "shape" else "a size like '1kB'"
                raise ScenarioError(name, f"is required when dist = \"{self.dist}\"", accepted=accepted)
            if name not in needs and value is not None:
                shown = value if name == "shape" else units.format_size(int(value))
                raise ScenarioError(name, f"does not apply to dist = \"{self.dist}\"", value=shown)
        if self.dist == "uniform" and int(self.max) < int(self.min):  # type: ignore[arg-type]
            raise ScenarioError("max", f"must not be below min ({units.format_size(int(self.min))})",  # type: ignore[arg-type]
                                value=units.format_size(int(self.max)))  # type: ignore[arg-type]
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``SizeDist``."""
        if self.dist == "uniform":
            return {"dist": "uniform", "min": self.min, "max": self.max}
        out: dict[str, Any] = {"dist": self.dist, "mean": float(self.mean)}  # type: ignore[arg-type]
        if self.dist == "pareto":
            out["shape"] = self.shape
        return out


class Arrivals(Model):
    """When an ``rpc`` entry's transactions start (``process`` = poisson, periodic, times).

    ``poisson`` takes either ``rate`` or ``load``. With ``load`` the rate is
    ``load * C / (8 * batch * W)`` arrivals/s, ``C`` the rate of ``link`` in bit/s and
    ``W = E[S] + H * E[ceil(S / MSS)]`` the mean bytes of one response on the wire,
    headers included (``H`` = the server's `header_bytes`; the FIN rides on the last
    segment; SYN-ACKs and pure ACKs are not counted), split equally over the entry's
    clients. Seed 001 at 20 Mbit/s, load 0.96, 15 kB responses, MSS 1460 B, 40 B of
    headers: ``W = 15 000 + 40 * ceil(15 000 / 1460) = 15 000 + 40 * 11 = 15 440 B``;
    ``rate = 0.96 * 20 000 000 / (8 * 15 440) = 155.44`` transactions/s; with
    ``batch = 5``, 31.09 arrivals/s; over ``count = 4`` clients, 7.77 arrivals/s each.
    At 64 kbit/s and load 0.75: ``0.75 * 64 000 / (8 * 15 440) = 0.3886``
    transactions/s, one batch of 5 every 12.9 s.

    Example:
        >>> Arrivals(load=0.96).to_core(4)
        {'process': 'poisson', 'load': 0.24}
        >>> Arrivals(process="periodic", interval="2s").to_core(1)
        {'process': 'periodic', 'interval': 2000000000}
        >>> Arrivals(rate=2.0, load=0.5)
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: load: give either rate or load, not both; got 0.5
    """

    process: Annotated[str, Choice(lambda: ["poisson", "periodic", "times"])] = fld(
        "poisson", "Arrival process: `poisson` (exponential gaps), `periodic` (every `interval` from the entry's "
                   "`start`), `times` (at the listed times).")
    rate: Optional[float] = fld(None, "Poisson arrivals per second of the whole entry (split equally over its "
                                      "`count` clients); each arrival opens `batch` transactions.",
                                default_doc="unset (give `rate` or `load`)", ge=1e-9, le=1e9)
    load: Optional[float] = fld(None, "Offered load of the whole entry as a fraction of `link`'s rate: the "
                                      "responses' bytes on the wire, headers included, per second (split "
                                      "equally over the entry's clients).",
                                default_doc="unset (give `rate` or `load`)", ge=1e-9, le=100)
    link: Optional[str] = fld(None, "The link whose rate `load` refers to.", default_doc='"bottleneck"')
    interval: Optional[Time] = fld(None, "Time between arrivals (periodic).", default_doc="required for `periodic`",
                                   ge=1)
    at: Optional[list[Time]] = fld(None, "Arrival times, in order (times).", default_doc="required for `times`")

    @model_validator(mode="after")
    def _parameters_of_the_process(self) -> "Arrivals":
        if self.process == "poisson":
            if self.rate is not None and self.load is not None:
                raise ScenarioError("load", "give either rate or load, not both", value=self.load)
            if self.rate is None and self.load is None:
                raise ScenarioError("rate", "a poisson process needs rate (arrivals/s) or load (fraction of the link)",
                                    accepted="rate = 2.0, or load = 0.75")
            if self.link is not None and self.load is None:
                raise ScenarioError("link", "only applies with load", value=self.link)
        needs = {"poisson": ("rate", "load", "link"), "periodic": ("interval",), "times": ("at",)}[self.process]
        for name in ("rate", "load", "link", "interval", "at"):
            value = getattr(self, name)
            if name not in needs and value is not None:
                raise ScenarioError(name, f"does not apply to process = \"{self.process}\"")
            if name in needs and self.process != "poisson" and value is None:
                accepted = "a time like '2s'" if name == "interval" else "a list of times like ['0s', '5s']"
                raise ScenarioError(name, f"is required when process = \"{self.process}\"", accepted=accepted)
        if self.at is not None:
            if not self.at:
                raise ScenarioError("at", "the list of arrival times is empty", accepted="one or more times")
            for j in range(1, len(self.at)):
                if self.at[j] < self.at[j - 1]:
                    raise ScenarioError(f"at[{j}]", f"arrival times must be in order (after "
                                        f"{units.format_time(int(self.at[j - 1]))})",
                                        value=units.format_time(int(self.at[j])))
        return self

    def to_core(self, clients: int) -> dict[str, Any]:
        """The core's ``ArrivalSpec`` for one of ``clients`` clients (rate and load split equally)."""
        out: dict[str, Any] = {"process": self.process}
        if self.process == "poisson":
            if self.rate is not None:
                out["rate"] = self.rate / clients
            else:
                out["load"] = self.load / clients  # type: ignore[operator]
                if self.link is not None:
                    out["link"] = self.link
        elif self.process == "periodic":
            out["interval"] = self.interval
        else:
            out["at"] = list(self.at or [])
        return out


class RpcFlow(_FlowEntry):
    """Request/response transactions over a new TCP connection each (``kind = "rpc"``).

    The client (``client``, default ``d<j>``) connects, sends the request and reads
    the response the server (``server``, default ``s<j>``) sends back; then both
    close. The server's ``tcp`` settings (IW, SACK, profile) govern the response, so
    responses cross a dumbbell's bottleneck downstream. With ``count > 1`` the entry
    is one application per client/server pair, named ``<name>.<j>``, sharing the
    entry's ``rate``/``load`` equally; ``iw_mix`` gives client ``j``'s server the
    initial window ``iw_mix[j mod len]`` (seed 001's IW3+IW10 mix is ``iw_mix = [3, 10]``
    over 4 pairs: the mix is per client, as the testbed set IW per route).

    Example:
        >>> f = RpcFlow(count=4, arrivals=Arrivals(load=0.96), batch=5, iw_mix=[3, 10])
        >>> f.sizes_core(), f.iw_of(1)
        (({'dist': 'constant', 'bytes': 200}, {'dist': 'constant', 'bytes': 15000}), 10)
    """

    kind: Literal["rpc"] = "rpc"
    src: Optional[NodeOrList] = fld(None, "Server: accepts the connections and sends the responses; a list is "
                                          "cycled over the entry's clients.",
                                    default_doc="dumbbell: `s<j mod pairs>`; required for a graph", alias="server")
    dst: Optional[NodeOrList] = fld(None, "Client: opens a connection per transaction and receives the response; a "
                                          "list is cycled over the entry's clients.",
                                    default_doc="dumbbell: `d<j mod pairs>`; required for a graph", alias="client")
    count: int = fld(1, "Number of clients (one application each, over the pairs).", ge=1, le=100_000)
    start: Time = fld(0, "When arrivals begin.", default_doc='"0s"')
    start_spacing: Time = fld(0, "Client j's arrivals begin `j * start_spacing` after `start`.", default_doc='"0s"')
    stop: Optional[Time] = fld(None, "No arrival at or after this time (transactions under way continue); after "
                                     "the entry's last start.",
                               default_doc="the end of the run (then `duration` is required, except for "
                                           "`process = \"times\"`)")
    request: Optional[Size] = fld(None, "Request size, client to server (seed 001: 200 B).",
                                  default_doc='"200B" (unless `request_dist`)', ge=1)
    response: Optional[Size] = fld(None, "Response size, server to client (seed 001: 15 kB, the largest IW10 "
                                         "burst).", default_doc='"15kB" (unless `response_dist`)', ge=1)
    request_dist: Optional[SizeDist] = fld(None, "Draw request sizes from this distribution instead of `request`.",
                                           default_doc="unset: every request is `request`")
    response_dist: Optional[SizeDist] = fld(None, "Draw response sizes from this distribution instead of "
                                                  "`response`.", default_doc="unset: every response is `response`")
    arrivals: Arrivals = fld(doc="The arrival process.")
    batch: int = fld(1, "Transactions opened at once per arrival (seed 001: 5 simultaneous opens, as a browser).",
                     ge=1, le=1000)
    iw_mix: Optional[list[int]] = fld(None, "Initial windows (segments) cycled over the entry's clients: client j's "
                                            "server uses `iw_mix[j mod len]` (a per-client mix).",
                                      default_doc="unset: `tcp.iw` for every client")
    cc: Optional[CcOptions] = fld(None, "Congestion control of both hosts.", default_doc="the scenario's `[cc]`")
    tcp: Optional[TcpOptions] = fld(None, "TCP overrides of both hosts (the server's govern the response).",
                                    default_doc="the scenario's `[tcp]`")

    @model_validator(mode="after")
    def _sizes_and_windows(self) -> "RpcFlow":
        for name in ("request", "response"):
            if getattr(self, f"{name}_dist") is not None and getattr(self, name) is not None:
                raise ScenarioError(f"{name}_dist", f"give either {name} (constant) or {name}_dist, not both")
        if self.iw_mix is not None:
            if not self.iw_mix:
                raise ScenarioError("iw_mix", "the list of initial windows is empty", accepted="e.g. [3, 10]")
            for j, iw in enumerate(self.iw_mix):
                if isinstance(iw, bool) or iw < 1:
                    raise ScenarioError(f"iw_mix[{j}]", "the initial window must be at least 1 segment", value=iw)
            if self.tcp is not None and self.tcp.iw is not None:
                raise ScenarioError("iw_mix", "give either iw_mix or tcp.iw, not both")
        return self

    def iw_of(self, j: int) -> int | None:
        """The initial window of client ``j``'s server from ``iw_mix`` (``None``: unset)."""
        return None if self.iw_mix is None else self.iw_mix[j % len(self.iw_mix)]

    def sizes_core(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The core's request and response ``SizeDist``."""
        def size(dist: SizeDist | None, constant: int | None, default: int) -> dict[str, Any]:
            return dist.to_core() if dist else {"dist": "constant", "bytes": int(constant or default)}

        return size(self.request_dist, self.request, 200), size(self.response_dist, self.response, 15_000)


def response_wire_bytes(response: int, mss: int = 1460, header_bytes: int = 40) -> int:
    """Bytes on the wire of one response of ``response`` payload bytes: ``W`` of the load arithmetic.

    ``W = S + H * ceil(S / MSS)``; the FIN rides on the last data segment.

    Example:
        >>> response_wire_bytes(15_000)   # 15 000 + 40 x 11
        15440
    """
    return response + header_bytes * -(-response // mss)


def rate_for_load(load: float, link_bps: int, wire_bytes: float, batch: int = 1) -> float:
    """Arrivals per second that offer ``load`` of a ``link_bps`` link: ``load * C / (8 * batch * W)``.

    Example:
        >>> round(rate_for_load(0.96, 20_000_000, 15_440), 2), round(rate_for_load(0.75, 64_000, 15_440, 5), 5)
        (155.44, 0.07772)
    """
    return load * link_bps / (8 * batch * wire_bytes)


def _flow_kind(value: Any) -> str | None:
    """The tag of a ``[[flows]]`` entry: its ``kind``, ``"tcp"`` when absent."""
    if isinstance(value, dict):
        kind = value.get("kind", "tcp")
        return kind if isinstance(kind, str) else repr(kind)
    return getattr(value, "kind", None)


#: A ``[[flows]]`` entry, tagged by ``kind`` (default ``"tcp"``).
Flow = Annotated[
    Union[Annotated[TcpFlow, Tag("tcp")], Annotated[UdpFlow, Tag("udp")], Annotated[RpcFlow, Tag("rpc")]],
    Discriminator(_flow_kind),
]
