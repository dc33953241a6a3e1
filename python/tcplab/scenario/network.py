"""The network of a scenario: queues, error models, links and topologies.

Queues and error models are tables tagged by ``kind`` (pydantic discriminated unions);
so are topologies (the dumbbell builder, an explicit graph). The core's resolved schema
(``crates/tcplab-core/src/scenario.rs``) is what each ``to_core`` returns: plain
integers in bit/s, nanoseconds and bytes.

References: seed 003 for the three drop-tail semantics (packet-slot, fixed-byte strict,
fixed-byte loose as dummynet); Floyd & Jacobson 1993 and ns-2 ``red.cc`` for RED;
Gilbert-Elliott and seed 004's time-series channel for Markov.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator

from tcplab import registry, units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError, near
from tcplab.scenario.quantities import Choice, Limit, Rate, Size, StrList, Time, TimeList

__all__ = [
    "DropTail", "Red", "Bernoulli", "Markov", "QueueSpec", "ErrorSpec",
    "Link", "Access", "Dumbbell", "GraphLink", "Graph", "Topology", "short_list",
]


def short_list(items: list[str], limit: int = 12) -> str:
    """Names for a message, shortened when there are many.

    Example:
        >>> short_list([f"s{i}" for i in range(20)], limit=3)
        's0, s1, s2, ... (20 in all)'
    """
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... ({len(items)} in all)"


# --------------------------------------------------------------------------------------
# Queues


class DropTail(Model):
    """Drop-tail FIFO (``kind = "drop_tail"``) in seed 003's three semantics.

    Example:
        >>> DropTail(limit="48pkt").to_core()
        {'kind': 'drop_tail', 'limit': {'packets': 48}, 'semantics': None, 'count_in_service': False}
        >>> DropTail(limit="40kB", semantics="byte_loose").semantics
        'byte_loose'
    """

    kind: Literal["drop_tail"] = "drop_tail"
    limit: Limit = fld(doc="Buffer limit: packets for `slot` (e.g. \"48pkt\"), bytes for the byte semantics (e.g. \"40kB\").")
    semantics: Optional[Annotated[str, Choice(lambda: ["slot", "byte_strict", "byte_loose"])]] = fld(
        None,
        "`slot`: drop if occupancy >= limit packets; `byte_strict`: drop if occupancy + packet >= limit bytes; "
        "`byte_loose`: drop if occupancy > limit bytes (dummynet).",
        default_doc="`slot` for a packet limit, `byte_strict` for a byte limit",
    )
    count_in_service: bool = fld(
        False, "Whether the packet being transmitted counts towards the occupancy (ns-2 DropTail: true)."
    )

    @model_validator(mode="after")
    def _semantics_match_the_limit(self) -> "DropTail":
        if self.semantics == "slot" and self.limit[0] != "packets":
            raise ScenarioError("limit", "semantics 'slot' needs a limit in packets",
                                value=units.format_limit(*self.limit), accepted="a packet count like '48pkt'")
        if self.semantics in ("byte_strict", "byte_loose") and self.limit[0] != "bytes":
            raise ScenarioError("limit", f"semantics '{self.semantics}' needs a limit in bytes",
                                value=units.format_limit(*self.limit), accepted="a size like '40kB'")
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::DropTail``."""
        return {
            "kind": self.kind,
            "limit": {self.limit[0]: self.limit[1]},
            "semantics": self.semantics,
            "count_in_service": self.count_in_service,
        }


class Red(Model):
    """RED with ns-2 semantics (``kind = "red"``; Floyd & Jacobson 1993, ns-2 red.cc).

    Thresholds are in packets (ns-2 ``thresh_``/``maxthresh_``); in ``queue_in_bytes``
    mode the core multiplies them by ``mean_pktsize``. Defaults are ns-2's, except
    ``q_weight`` (ns-2's automatic value is not supported).

    Example:
        >>> r = Red(limit="14pkt", q_weight=0.002, min_th=3, max_th=9, max_p=0.1, gentle=False, wait=False,
        ...         mean_pktsize="1500B")
        >>> core = r.to_core()
        >>> core["kind"], core["limit"], core["min_th"], core["mean_pktsize"]
        ('red', {'packets': 14}, 3.0, 1500)
    """

    kind: Literal["red"] = "red"
    limit: Limit = fld(doc="Physical buffer, in packets or bytes (ns-2 `limit_`).")
    count_in_service: bool = fld(False, "Whether the packet in service counts towards `limit`.")
    bytes: bool = fld(True, "Byte mode (ns-2 `bytes_`): drop probability scaled by size / mean_pktsize.")
    queue_in_bytes: bool = fld(True, "Average and thresholds in bytes (ns-2 `queue_in_bytes_`).")
    mean_pktsize: Size = fld(500, "Mean packet size (ns-2 `mean_pktsize_`).", ge=1)
    idle_pktsize: Optional[Size] = fld(None, "Packet size for the idle-time decay (ns-2 `idle_pktsize_`).",
                                       default_doc="`mean_pktsize`", ge=1)
    q_weight: float = fld(0.002, "EWMA weight w_q of the average queue.", ge=0.0, le=1.0)
    min_th: Optional[float] = fld(None, "Minimum threshold, packets (ns-2 `thresh_`).",
                                  default_doc="ns-2's automatic max(5, 0.005 s * link packets/s / 2)", ge=0.0)
    max_th: Optional[float] = fld(None, "Maximum threshold, packets (ns-2 `maxthresh_`).", default_doc="3 * min_th",
                                  ge=0.0)
    max_p: float = fld(0.1, "Drop probability at max_th (ns-2 `linterm_` = 1 / max_p).", ge=0.0, le=1.0)
    gentle: bool = fld(True, "Gentle RED: p rises from max_p to 1 between max_th and 2 max_th.")
    wait: bool = fld(True, "Wait between drops (ns-2 `wait_`).")
    idle_integer_m: bool = fld(False, "Truncate the idle count m to an integer, as ns-2 does.")

    @model_validator(mode="after")
    def _thresholds_are_ordered(self) -> "Red":
        if self.min_th is not None and self.max_th is not None and self.max_th <= self.min_th:
            raise ScenarioError("max_th", "must exceed min_th", value=self.max_th, accepted=f"a value above {self.min_th}")
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::Red`` (the link fills in its rate)."""
        core: dict[str, Any] = {
            "kind": self.kind, "limit": {self.limit[0]: self.limit[1]}, "count_in_service": self.count_in_service,
            "bytes": self.bytes, "queue_in_bytes": self.queue_in_bytes, "mean_pktsize": self.mean_pktsize,
            "idle_pktsize": self.idle_pktsize, "q_weight": self.q_weight, "max_p": self.max_p,
            "gentle": self.gentle, "wait": self.wait, "idle_integer_m": self.idle_integer_m,
        }
        for name in ("min_th", "max_th"):
            value = getattr(self, name)
            core[name] = None if value is None else float(value)
        return core


#: A queue: a table tagged by ``kind``.
QueueSpec = Annotated[Union[DropTail, Red], Field(discriminator="kind")]

# --------------------------------------------------------------------------------------
# Error models


class Bernoulli(Model):
    """Independent packet losses with probability ``per`` (``kind = "bernoulli"``).

    Example:
        >>> Bernoulli(per=0.01).to_core()
        {'kind': 'bernoulli', 'per': 0.01}
    """

    kind: Literal["bernoulli"] = "bernoulli"
    per: float = fld(doc="Packet error rate, a probability in [0, 1].", ge=0.0, le=1.0)

    def to_core(self) -> dict[str, Any]:
        """The core's ``ErrorConfig::Bernoulli``."""
        return {"kind": self.kind, "per": self.per}


MARKOV_FORMS: dict[str, tuple[str, ...]] = {
    "per_packet": ("p_gb", "p_bg"),
    "sojourn": ("mean_good", "mean_bad"),
    "time_series": ("good_min", "good_max", "bad_min", "bad_max"),
    "preset": ("name",),
}


class Markov(Model):
    """Two-state good/bad (Gilbert-Elliott) channel (``kind = "markov"``).

    ``form`` picks the parameterisation: ``per_packet`` (p_gb, p_bg),
    ``sojourn`` (exponential mean_good, mean_bad), ``time_series`` (seed 004: uniform
    good_min..good_max and bad_min..bad_max) or ``preset`` (seed 004's rows: low,
    medium, high, vhigh, huge).

    Example:
        >>> Markov(form="preset", name="medium").to_core()
        {'kind': 'markov', 'form': 'preset', 'name': 'medium'}
        >>> Markov(form="time_series", good_min="5s", good_max="15s", bad_min="100ms", bad_max="300ms").to_core()["bad_max"]
        300000000
    """

    kind: Literal["markov"] = "markov"
    form: Annotated[str, Choice(lambda: list(MARKOV_FORMS))] = fld(doc="Parameterisation.")
    p_gb: Optional[float] = fld(None, "per_packet: probability good -> bad after a packet.", ge=0.0, le=1.0)
    p_bg: Optional[float] = fld(None, "per_packet: probability bad -> good after a packet.", ge=0.0, le=1.0)
    mean_good: Optional[Time] = fld(None, "sojourn: mean good-state duration.")
    mean_bad: Optional[Time] = fld(None, "sojourn: mean bad-state duration.")
    good_min: Optional[Time] = fld(None, "time_series: shortest good state (gap between bursts).")
    good_max: Optional[Time] = fld(None, "time_series: longest good state.")
    bad_min: Optional[Time] = fld(None, "time_series: shortest bad state (burst length).")
    bad_max: Optional[Time] = fld(None, "time_series: longest bad state.")
    loss_good: float = fld(0.0, "Loss probability in the good state.", ge=0.0, le=1.0)
    loss_bad: float = fld(1.0, "Loss probability in the bad state.", ge=0.0, le=1.0)
    name: Optional[Annotated[str, Choice(lambda: ["low", "medium", "high", "vhigh", "huge"])]] = fld(
        None, "preset: seed 004 row."
    )

    @model_validator(mode="after")
    def _fields_match_the_form(self) -> "Markov":
        for f in MARKOV_FORMS[self.form]:
            if getattr(self, f) is None:
                raise ScenarioError(f, f"required by form '{self.form}'", value="(missing)",
                                    accepted=", ".join(MARKOV_FORMS[self.form]))
        others = {f for fs in MARKOV_FORMS.values() for f in fs} - set(MARKOV_FORMS[self.form])
        for f in sorted(others):
            if getattr(self, f) is not None:
                raise ScenarioError(f, f"does not apply to form '{self.form}'", value=getattr(self, f),
                                    accepted=", ".join(MARKOV_FORMS[self.form]))
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``ErrorConfig::Markov``."""
        core: dict[str, Any] = {"kind": self.kind, "form": self.form}
        core.update({f: getattr(self, f) for f in MARKOV_FORMS[self.form]})
        if self.form != "preset":
            core.update(loss_good=self.loss_good, loss_bad=self.loss_bad)
        return core


#: An error model: a table tagged by ``kind``.
ErrorSpec = Annotated[Union[Bernoulli, Markov], Field(discriminator="kind")]

# --------------------------------------------------------------------------------------
# Links and topologies


def _queue_core(queue: Any) -> dict[str, Any] | None:
    return queue.to_core() if queue is not None else None


class Link(Model):
    """One direction of a link: rate, propagation delay, queue, error model.

    Example:
        >>> Link(rate="2Mbps", delay="70ms").to_core()
        {'rate': 2000000, 'delay': 70000000, 'queue': None, 'error': None}
        >>> Link(preset="edge").to_core()["rate"], Link(preset="adsl1-down", delay="25ms").to_core()["delay"]
        (160000, 25000000)
    """

    preset: Optional[Annotated[str, Choice(lambda: list(registry.link_presets()))]] = fld(
        None, "A named link from the seeds (see `tcplab list`); `rate`/`delay` given here override it."
    )
    rate: Optional[Rate] = fld(None, "Transmission rate.", default_doc="the preset's (required without one)", ge=1)
    delay: Optional[Time] = fld(None, "One-way propagation delay.", default_doc="the preset's (required without one)")
    queue: Optional[QueueSpec] = fld(
        None, "Queue at the transmitting end.",
        default_doc='drop-tail, 1000 packets (`{ kind = "drop_tail", limit = "1000pkt" }`)',
    )
    error: Optional[ErrorSpec] = fld(None, "Error model applied as packets finish transmission.",
                                     default_doc="no losses")

    @model_validator(mode="after")
    def _rate_and_delay_from_the_preset(self) -> "Link":
        preset = registry.link_presets().get(self.preset) if self.preset else None
        for name in ("rate", "delay"):
            if getattr(self, name) is None:
                value = preset.get(name) if preset else None
                if value is None:
                    why = f"preset '{self.preset}' leaves it open" if preset else "no preset given"
                    raise ScenarioError(name, f"required ({why})", value="(missing)",
                                        accepted='a quantity with a unit, e.g. "2Mbps" / "70ms"')
                setattr(self, name, value)
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkParams``."""
        return {"rate": self.rate, "delay": self.delay, "queue": _queue_core(self.queue),
                "error": _queue_core(self.error)}


class Access(Model):
    """Access links of one side of a dumbbell (both directions).

    Example:
        >>> Access(rate="100Mbps", delay=["5ms", "10ms"]).to_core()
        {'rate': 100000000, 'delay': [5000000, 10000000], 'queue': None}
    """

    rate: Rate = fld(doc="Rate of every access link on this side.", ge=1)
    delay: TimeList = fld(doc="One propagation delay for every pair, or a list with one delay per pair.")
    queue: Optional[QueueSpec] = fld(None, "Queue of the access links.", default_doc="drop-tail, 1000 packets")

    def to_core(self) -> dict[str, Any]:
        """The core's ``AccessSpec``."""
        return {"rate": self.rate, "delay": self.delay, "queue": _queue_core(self.queue)}


class Dumbbell(Model):
    """The dumbbell builder (``kind = "dumbbell"``).

    N senders ``s0..s{N-1}`` reach router ``r0``; the ``bottleneck`` link goes from
    ``r0`` to ``r1``, which feeds receivers ``d0..d{N-1}``. Links are named
    ``bottleneck``, ``bottleneck_rev``, ``access_s{i}``, ``access_s{i}_rev``,
    ``access_d{i}`` and ``access_d{i}_rev``.

    Example:
        >>> d = Dumbbell(pairs=2, bottleneck=Link(rate="2Mbps", delay="70ms"),
        ...              sender_access=Access(rate="100Mbps", delay="11ms"),
        ...              receiver_access=Access(rate="100Mbps", delay="1ms"))
        >>> d.node_names()
        ['s0', 's1', 'r0', 'r1', 'd0', 'd1']
        >>> d.link_names()[:3]
        ['bottleneck', 'bottleneck_rev', 'access_s0']
    """

    kind: Literal["dumbbell"] = "dumbbell"
    pairs: int = fld(1, "Number of sender/receiver pairs.", ge=1, le=100_000)
    bottleneck: Link = fld(doc="The r0 -> r1 link (downstream).")
    bottleneck_reverse: Optional[Link] = fld(
        None, "The r1 -> r0 link.", default_doc="same rate and delay as `bottleneck`, default queue, no errors"
    )
    sender_access: Access = fld(doc="Sender access links, s_i <-> r0.")
    receiver_access: Access = fld(doc="Receiver access links, r1 <-> d_i.")

    @model_validator(mode="after")
    def _one_delay_per_pair(self) -> "Dumbbell":
        for side in ("sender_access", "receiver_access"):
            acc = getattr(self, side)
            if isinstance(acc.delay, list) and len(acc.delay) != self.pairs:
                raise ScenarioError(f"{side}.delay", f"needs one delay per pair ({self.pairs})",
                                    value=[units.format_time(d) for d in acc.delay])
        return self

    def node_names(self) -> list[str]:
        """Node names, senders first."""
        n = self.pairs
        return [f"s{i}" for i in range(n)] + ["r0", "r1"] + [f"d{i}" for i in range(n)]

    def link_names(self) -> list[str]:
        """Link names, as the core names them."""
        names = ["bottleneck", "bottleneck_rev"]
        for side in ("s", "d"):
            for i in range(self.pairs):
                names += [f"access_{side}{i}", f"access_{side}{i}_rev"]
        return names

    def to_core(self) -> dict[str, Any]:
        """The core's ``Topology::Dumbbell``."""
        rev = self.bottleneck_reverse
        return {
            "kind": self.kind,
            "pairs": self.pairs,
            "bottleneck": self.bottleneck.to_core(),
            "bottleneck_reverse": rev.to_core() if rev is not None else None,
            "sender_access": self.sender_access.to_core(),
            "receiver_access": self.receiver_access.to_core(),
        }


class GraphLink(Model):
    """A unidirectional link of an explicit graph.

    Example:
        >>> GraphLink(name="ab", from_="a", to="b", rate="10Mbps", delay="5ms").to_core()["from"]
        'a'
    """

    name: str = fld(doc="Link name, used by `[record]` and in the tables.")
    from_: str = fld(doc="Transmitting node.", alias="from")
    to: str = fld(doc="Receiving node.")
    rate: Rate = fld(doc="Transmission rate.", ge=1)
    delay: Time = fld(doc="One-way propagation delay.")
    queue: Optional[QueueSpec] = fld(None, "Queue at the transmitting end.", default_doc="drop-tail, 1000 packets")
    error: Optional[ErrorSpec] = fld(None, "Error model.", default_doc="no losses")

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkSpec`` (``LinkParams`` flattened in)."""
        return {
            "name": self.name, "from": self.from_, "to": self.to, "rate": self.rate, "delay": self.delay,
            "queue": _queue_core(self.queue), "error": _queue_core(self.error),
        }


class Graph(Model):
    """An explicit graph (``kind = "graph"``): nodes and unidirectional links.

    Example:
        >>> g = Graph(nodes=["a", "b"], links=[GraphLink(name="ab", from_="a", to="b", rate="1Mbps", delay="1ms")])
        >>> g.link_names()
        ['ab']
    """

    kind: Literal["graph"] = "graph"
    nodes: StrList = fld(doc="Node names.")
    links: list[GraphLink] = fld(doc="The links, as `[[topology.links]]` entries.")

    @model_validator(mode="after")
    def _names_are_unique_and_known(self) -> "Graph":
        if len(set(self.nodes)) != len(self.nodes):
            dup = next(n for n in self.nodes if self.nodes.count(n) > 1)
            raise ScenarioError("nodes", "duplicate node name", value=dup)
        seen: set[str] = set()
        known = set(self.nodes)
        for i, link in enumerate(self.links):
            if link.name in seen:
                raise ScenarioError(f"links[{i}].name", "duplicate link name", value=link.name)
            seen.add(link.name)
            for end, node in (("from", link.from_), ("to", link.to)):
                if node not in known:
                    raise ScenarioError(f"links[{i}].{end}", "unknown node", value=node,
                                        accepted=", ".join(self.nodes), suggestion=near(node, self.nodes))
        return self

    def node_names(self) -> list[str]:
        """Node names."""
        return list(self.nodes)

    def link_names(self) -> list[str]:
        """Link names."""
        return [link.name for link in self.links]

    def to_core(self) -> dict[str, Any]:
        """The core's ``Topology::Graph``."""
        return {"kind": self.kind, "nodes": list(self.nodes), "links": [lk.to_core() for lk in self.links]}


#: A topology: a table tagged by ``kind``.
Topology = Annotated[Union[Dumbbell, Graph], Field(discriminator="kind")]
