"""The network of a scenario: queues, error models, links and topologies.

Queues and error models are tables tagged by ``kind`` (pydantic discriminated unions);
so are topologies (the dumbbell builder, an explicit graph). The core's resolved schema
(``crates/tcplab-core/src/scenario.rs``) is what each ``to_core`` returns: plain
integers in bit/s, nanoseconds and bytes.

References: seed 003 for the three drop-tail semantics (packet-slot, fixed-byte strict,
fixed-byte loose as dummynet); Floyd & Jacobson 1993 and ns-2 ``red.cc`` for RED;
Gilbert-Elliott and seed 004's time-series channel for Markov; ETSI EN 301 790 (DVB-RCS)
and CNES OpenSAND's defaults for the DAMA MAC; seed 004 (Kojo, FDPW 2005) for the SLACP
link layer (``crates/tcplab-core/src/net/mac/dama.rs``, ``net/linklayer/slacp.rs``);
RFC 3393 (one-way delay variation) for a link's ``jitter`` (``net/jitter.rs``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, model_validator

from tcplab import registry, units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError, near
from tcplab.scenario.quantities import Choice, Limit, Packets, Rate, Size, StrList, Time, TimeList

__all__ = [
    "DropTail", "Red", "Codel", "FqCodel", "Pie", "Bernoulli", "Markov", "QueueSpec", "ErrorSpec", "Dama", "MacSpec",
    "SlacpChannel", "Slacp", "LinkLayerSpec", "Jitter", "Link", "Access", "Dumbbell", "GraphLink", "Graph", "LotHost", "ParkingLot",
    "Topology", "short_list",
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
    ecn: bool = fld(False, "Mark ECN-capable packets CE instead of early (and forced) drops (RFC 3168 §5); "
                           "with max_p = 1 and min_th = max_th this is DCTCP's step marking at K (RFC 8257 §3.1).")

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
        if self.ecn:  # only when set: the resolved form (and run keys) of classic RED stay as they were
            core["ecn"] = True
        for name in ("min_th", "max_th"):
            value = getattr(self, name)
            core[name] = None if value is None else float(value)
        return core


_MS = 1_000_000


def _check_target(q: Any) -> Any:
    """CoDel's ``target`` is a fraction of its ``interval`` (RFC 8289 §4.4: 5-10%); above it CoDel never drops.

    Example:
        >>> FqCodel(target="200ms", interval="100ms")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: target: must not exceed interval (100ms); got '200ms'; accepted: a time up to 100ms (RFC 8289 §4.4: 5-10% of interval)
    """
    if int(q.target) > int(q.interval):
        limit = units.format_time(int(q.interval))
        raise ScenarioError("target", f"must not exceed interval ({limit})", value=units.format_time(int(q.target)),
                            accepted=f"a time up to {limit} (RFC 8289 §4.4: 5-10% of interval)")
    return q


class Codel(Model):
    """CoDel (``kind = "codel"``; RFC 8289), with Linux ``tc qdisc codel`` defaults.

    Example:
        >>> Codel().to_core()
        {'kind': 'codel', 'limit': 1000, 'target': 5000000, 'interval': 100000000, 'ecn': False, 'ce_threshold': None, 'mtu': 1514}
        >>> Codel(target="2ms", ecn=True).to_core()["target"]
        2000000
    """

    kind: Literal["codel"] = "codel"
    limit: Packets = fld(1000, "Queue limit; arrivals beyond it are tail-dropped (Linux default).", ge=1)
    target: Time = fld(5 * _MS, "Acceptable standing sojourn time, at most `interval` (RFC 8289 §4.4: 5-10% of "
                                "it).", ge=1)
    interval: Time = fld(100 * _MS, "Window the sojourn time must stay above target before CoDel drops, and the "
                                    "base of its control law interval/sqrt(count) (RFC 8289 §4.3).", ge=1)
    ecn: bool = fld(False, "Mark ECN-capable packets CE instead of dropping them (Linux default off).")
    ce_threshold: Optional[Time] = fld(None, "Mark ECN-capable packets CE whenever their sojourn exceeds this "
                                             "(Linux `ce_threshold`).", default_doc="off")
    mtu: Size = fld(1514, "No drop while the backlog is at most this (RFC 8289 MAXPACKET; Linux `psched_mtu`).",
                    ge=1)

    @model_validator(mode="after")
    def _target_within_interval(self) -> "Codel":
        return _check_target(self)

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::Codel`` (``net/queue/codel.rs``)."""
        return {"kind": self.kind, "limit": self.limit, "target": self.target, "interval": self.interval,
                "ecn": self.ecn, "ce_threshold": self.ce_threshold, "mtu": self.mtu}


class FqCodel(Model):
    """FQ-CoDel (``kind = "fq_codel"``; RFC 8290), with Linux ``tc qdisc fq_codel`` defaults.

    Flows are hashed into ``flows`` queues with a hash keyed by the run seed (so a run
    is reproducible), served by deficit round robin with new/old flow lists, each
    queue under its own CoDel.

    Example:
        >>> core = FqCodel(flows=64).to_core()
        >>> core["kind"], core["limit"], core["flows"], core["quantum"], core["ecn"]
        ('fq_codel', 10240, 64, 1514, True)
    """

    kind: Literal["fq_codel"] = "fq_codel"
    limit: Packets = fld(10240, "Packets in the whole qdisc before the fattest flow is trimmed (Linux default).",
                         ge=1)
    flows: int = fld(1024, "Number of flow queues (hash buckets).", ge=1, le=65536)
    quantum: Size = fld(1514, "DRR quantum (Linux `psched_mtu`; Linux minimum 256 B).", ge=256)
    target: Time = fld(5 * _MS, "CoDel target sojourn time per queue, at most `interval` (RFC 8290 §5.2.3; "
                                "RFC 8289 §4.4).", ge=1)
    interval: Time = fld(100 * _MS, "CoDel interval per queue (RFC 8290 §5.2.3).", ge=1)
    ecn: bool = fld(True, "Mark ECN-capable packets CE instead of dropping (Linux default on).")
    ce_threshold: Optional[Time] = fld(None, "Mark ECN-capable packets whose sojourn exceeds this "
                                             "(Linux `ce_threshold`).", default_doc="off")
    drop_batch_size: int = fld(64, "Most packets dropped from the fattest flow per overflow (Linux default).", ge=1)
    mtu: Size = fld(1514, "CoDel never drops while the qdisc holds at most this (Linux `psched_mtu`).", ge=1)

    @model_validator(mode="after")
    def _target_within_interval(self) -> "FqCodel":
        return _check_target(self)

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::FqCodel`` (``net/queue/fq_codel.rs``)."""
        return {"kind": self.kind, "limit": self.limit, "flows": self.flows, "quantum": self.quantum,
                "target": self.target, "interval": self.interval, "ecn": self.ecn,
                "ce_threshold": self.ce_threshold, "drop_batch_size": self.drop_batch_size, "mtu": self.mtu}


class Pie(Model):
    """PIE (``kind = "pie"``; RFC 8033), with Linux ``tc qdisc pie`` defaults.

    Example:
        >>> core = Pie().to_core()
        >>> core["target"], core["tupdate"], core["alpha"], core["beta"]
        (15000000, 15000000, 0.125, 1.25)
    """

    kind: Literal["pie"] = "pie"
    limit: Packets = fld(1000, "Queue limit; arrivals beyond it are tail-dropped (Linux default).", ge=1)
    target: Time = fld(15 * _MS, "Target queueing delay (RFC 8033 QDELAY_REF).", ge=1)
    tupdate: Time = fld(15 * _MS, "Interval between drop-probability updates (RFC 8033 T_UPDATE).", ge=1)
    alpha: float = fld(0.125, "Weight of the delay error, Hz (RFC 8033; Linux alpha 2 = 2/16).", ge=0.0, le=2.0)
    beta: float = fld(1.25, "Weight of the delay trend, Hz (RFC 8033; Linux beta 20 = 20/16).", ge=0.0, le=2.0)
    ecn: bool = fld(False, "Mark ECN-capable packets CE instead of dropping while p <= 10% (Linux default off).")
    bytemode: bool = fld(False, "Scale the drop probability by packet size / MTU (Linux default off).")
    dq_rate_estimator: bool = fld(False, "Estimate the delay from the departure rate (Little's law) instead of "
                                         "packet timestamps (Linux default off since 5.1).")

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::Pie`` (``net/queue/pie.rs``)."""
        return {"kind": self.kind, "limit": self.limit, "target": self.target, "tupdate": self.tupdate,
                "alpha": self.alpha, "beta": self.beta, "ecn": self.ecn, "bytemode": self.bytemode,
                "dq_rate_estimator": self.dq_rate_estimator}


#: A queue: a table tagged by ``kind``.
QueueSpec = Annotated[Union[DropTail, Red, Codel, FqCodel, Pie], Field(discriminator="kind")]

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
# Medium access

#: Fields of a DAMA table that apply to some modes only.
DAMA_MODE_FIELDS: dict[str, tuple[str, ...]] = {
    "allocation_delay": ("rbdc", "vbdc"),
    "cra_rate": ("cra",),
    "rbdc_max": ("rbdc",),
    "rbdc_timeout": ("rbdc",),
}


class Dama(Model):
    """DVB-RCS-like demand-assigned multiple access (``mac = { kind = "dama", ... }``).

    The transmitter sends only in the slots the MAC allocates: superframes of slots,
    capacity granted per superframe. ``cra``: a constant rate; ``rbdc``: the terminal
    requests its arrival rate every superframe, granted one allocation delay later,
    persisting until a timeout unless refreshed; ``vbdc``: it requests the volume in
    its buffer not yet requested, granted one allocation delay later. Defaults: OpenSAND
    (26.5 ms superframes, RBDC timeout 12 superframes), 53 B slots (8 per superframe at
    128 kbit/s), allocation delay 2 x 250 ms + 2 superframes (``docs/studies/satellite.md``).

    Example:
        >>> Dama(mode="vbdc").to_core()["superframe"], Dama(mode="rbdc", rbdc_timeout="1s").to_core()["rbdc_timeout"]
        (26500000, 1000000000)
        >>> Dama(mode="cra", rbdc_max="64kbps")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: rbdc_max: applies to mode 'rbdc' only, not 'cra'; got '64kbps'; accepted: leave it out for mode 'cra'
    """

    kind: Literal["dama"] = "dama"
    mode: Annotated[str, Choice(lambda: ["cra", "rbdc", "vbdc"])] = fld(
        doc="Capacity category: `cra` (constant rate), `rbdc` (rate-based dynamic), `vbdc` (volume-based dynamic)."
    )
    superframe: Time = fld(26_500_000, "Superframe duration: allocations and requests happen once per superframe "
                           "(OpenSAND `return_up_carrier_duration`).", default_doc='"26.5ms"', ge=1)
    slot_size: Size = fld(53, "Link-layer payload of one slot; a superframe holds floor(superframe / slot time) "
                          "slots at the link rate.", default_doc='"53B"', ge=1, le=65535)
    allocation_delay: Optional[Time] = fld(
        None, "rbdc, vbdc: from sending a request to the superframe it takes effect in, rounded up to whole "
        "superframes (request up, NCC processing, plan down).",
        default_doc='"553ms" (2 x 250 ms + 2 superframes; 21 superframes)', ge=1)
    cra_rate: Optional[Rate] = fld(None, "cra: the constant rate allocated.",
                                   default_doc="the slot grid's maximum (the link rate with the defaults)", ge=1)
    rbdc_max: Optional[Rate] = fld(None, "rbdc: the largest rate granted.",
                                   default_doc="the slot grid's maximum (the link rate with the defaults)", ge=1)
    rbdc_timeout: Optional[Time] = fld(None, "rbdc: a grant not refreshed by a request for this long expires "
                                       "(rounded up to whole superframes).",
                                       default_doc='"318ms" (12 superframes, OpenSAND `rbdc_timeout`)', ge=1)

    @model_validator(mode="after")
    def _fields_match_the_mode(self) -> "Dama":
        for name, modes in DAMA_MODE_FIELDS.items():
            value = getattr(self, name)
            if value is not None and self.mode not in modes:
                shown = _dama_quantity(name, value)
                only = " and ".join(f"'{m}'" for m in modes)
                raise ScenarioError(name, f"applies to mode {only} only, not '{self.mode}'", value=shown,
                                    accepted=f"leave it out for mode '{self.mode}'")
        return self

    def check_link_rate(self, rate: int) -> None:
        """Checks the slot grid against the link's rate (paths relative to the link).

        Example:
            >>> Dama(mode="cra", cra_rate="200kbps").check_link_rate(128_000)
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: mac.cra_rate: exceeds what the slot grid carries (8 slots of 53B per 26.5ms superframe); got '200kbps'; accepted: at most 128kbps
        """
        slot_ns = -(-int(self.slot_size) * 8 * 10**9 // rate)
        slots = int(self.superframe) // slot_ns
        if slots == 0:
            raise ScenarioError("mac.superframe", f"is shorter than one slot ({units.format_size(int(self.slot_size))} "
                                f"at {units.format_rate(rate)} take {units.format_time(slot_ns)})",
                                value=units.format_time(int(self.superframe)),
                                accepted=f"at least {units.format_time(slot_ns)}")
        max_rate = slots * int(self.slot_size) * 8 * 10**9 // int(self.superframe)
        for name in ("cra_rate", "rbdc_max"):
            value = getattr(self, name)
            if value is not None and int(value) > max_rate:
                raise ScenarioError(f"mac.{name}", f"exceeds what the slot grid carries ({slots} slots of "
                                    f"{units.format_size(int(self.slot_size))} per "
                                    f"{units.format_time(int(self.superframe))} superframe)",
                                    value=units.format_rate(int(value)), accepted=f"at most {units.format_rate(max_rate)}")

    def to_core(self) -> dict[str, Any]:
        """The core's ``MacConfig::Dama``."""
        return {"kind": self.kind, "mode": self.mode, "superframe": self.superframe, "slot_bytes": self.slot_size,
                "allocation_delay": self.allocation_delay, "cra_rate": self.cra_rate, "rbdc_max": self.rbdc_max,
                "rbdc_timeout": self.rbdc_timeout}


def _dama_quantity(name: str, value: int) -> str:
    return units.format_rate(value) if name in ("cra_rate", "rbdc_max") else units.format_time(value)


#: A MAC: a table tagged by ``kind`` (one kind so far).
MacSpec = Dama

# --------------------------------------------------------------------------------------
# Link layers


class SlacpChannel(Model):
    """A logical channel of SLACP: its own IP queue, sequence space, priority, ARQ/FEC switches.

    Example:
        >>> SlacpChannel(name="voice", priority=0, arq=False, fec=False).to_core()
        {'name': 'voice', 'priority': 0, 'arq': False, 'fec': False}
        >>> SlacpChannel(name="x", arq=False)
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: fec: needs arq = true (redundancy is added to retransmissions only); got True; accepted: false when arq = false
    """

    name: str = fld(doc="Channel name, used by the link layer's `map`.")
    priority: int = fld(0, "Lower is served first (ties in declaration order).", ge=0, le=255)
    arq: bool = fld(True, "Retransmissions and in-order delivery; without, frames are sent once and delivered as they arrive.")
    fec: bool = fld(True, "Incremental RS(255, k) redundancy on retransmitted blocks (needs `arq`).")

    @model_validator(mode="after")
    def _fec_needs_arq(self) -> "SlacpChannel":
        if self.fec and not self.arq:
            raise ScenarioError("fec", "needs arq = true (redundancy is added to retransmissions only)", value=True,
                                accepted="false when arq = false")
        if not self.name:
            raise ScenarioError("name", "must not be empty", value=self.name)
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``ChannelSpec``."""
        return {"name": self.name, "priority": self.priority, "arq": self.arq, "fec": self.fec}


def _default_channels() -> list[SlacpChannel]:
    return [SlacpChannel(name="default")]


class Slacp(Model):
    """SLACP, seed 004's TCP-friendly link layer (``link_layer = { kind = "slacp", ... }``).

    Partially reliable in-order ARQ (cumulative ACKs with selective repeat, no sender
    timer, an ACK timer at the receiver), incremental RS(255, k) redundancy on
    retransmitted blocks, priority to retransmissions and link ACKs, one unsent frame per
    channel (the backlog stays in the IP queue, `queue`, one per channel), logical
    channels with their own priority and ARQ/FEC switches. Link ACKs travel on the
    reverse link. Defaults other than the MAC buffer are tcplab's choices
    (``docs/studies/satellite.md``).

    Example:
        >>> core = Slacp(persistence=2, channels=[{"name": "bulk"}, {"name": "rt", "arq": False, "fec": False}],
        ...              map={"voice": "rt"}).to_core()
        >>> core["mac_buffer"], core["persistence"], [c["name"] for c in core["channels"]], core["map"]
        (14400, 2, ['bulk', 'rt'], {'voice': 'rt'})
    """

    kind: Literal["slacp"] = "slacp"
    mac_buffer: Size = fld(14_400, "The MAC buffer the link layer fills only while it has room (seed 004: 14.4 kB "
                           "with SLACP).", default_doc='"14.4kB"', ge=1)
    persistence: int = fld(3, "Retransmission rounds before a frame is given up (TCP then recovers it).", ge=0, le=1000)
    ack_timer: Time = fld(200_000_000, "Receiver ACK timer: the latest ACK is repeated when no frame arrives for "
                          "this long.", default_doc='"200ms"', ge=1)
    ack_repeats: int = fld(10, "Idle ACK repeats when no frame waits above a gap (unlimited while one does).",
                           ge=0, le=1000)
    fec_ratio: float = fld(0.25, "Redundancy per resent frame: round r of a block resending m frames adds "
                           "ceil(r * fec_ratio * m) redundancy frames.", ge=0.01, le=8.0)
    fec_max_block: int = fld(32, "Largest FEC block (k), frames.", ge=1, le=128)
    header_size: Size = fld(4, "Bytes a data or redundancy frame adds to its payload.", default_doc='"4B"', ge=0, le=64)
    ack_size: Size = fld(40, "Bytes of a link ACK.", default_doc='"40B"', ge=1, le=1500)
    channels: list[SlacpChannel] = fld(doc="The logical channels; unmapped flows use the first.",
                                       factory=_default_channels,
                                       default_doc='one channel, `{ name = "default" }` (ARQ and FEC on)')
    map: dict[str, str] = fld(doc="Flow or group name -> channel name.", factory=dict, default_doc="every flow on "
                              "the first channel")

    @model_validator(mode="after")
    def _channels_are_named_once(self) -> "Slacp":
        if not 1 <= len(self.channels) <= 16:
            raise ScenarioError("channels", "needs 1 to 16 channels", value=len(self.channels),
                                accepted="1 to 16 channel tables")
        names = [c.name for c in self.channels]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise ScenarioError(f"channels[{i}].name", "duplicate channel name", value=n)
        for flow, channel in self.map.items():
            if channel not in names:
                raise ScenarioError(f"map.{flow}", "unknown channel", value=channel, accepted=", ".join(names),
                                    suggestion=near(channel, names))
        return self

    def to_core(self, flow_map: dict[str, str] | None = None) -> dict[str, Any]:
        """The core's ``LinkLayerConfig::Slacp`` (``flow_map``: the map with groups expanded)."""
        return {"kind": self.kind, "mac_buffer": self.mac_buffer, "persistence": self.persistence,
                "ack_timer": self.ack_timer, "ack_repeats": self.ack_repeats, "fec_ratio": float(self.fec_ratio),
                "fec_max_block": self.fec_max_block, "header_bytes": self.header_size, "ack_bytes": self.ack_size,
                "channels": [c.to_core() for c in self.channels],
                "map": dict(self.map if flow_map is None else flow_map)}


#: A link layer: a table tagged by ``kind`` (one kind so far).
LinkLayerSpec = Slacp

# --------------------------------------------------------------------------------------
# Links and topologies


def _queue_core(queue: Any) -> dict[str, Any] | None:
    return queue.to_core() if queue is not None else None


class Jitter(Model):
    """Delay variation added to a link's propagation delay, per packet; packets keep
    their order (``dist`` = uniform, exponential).

    Example:
        >>> Jitter(dist="exponential", mean="30us").to_core()
        {'dist': 'exponential', 'mean': 30000}
        >>> Jitter(dist="uniform", low="0us", high="100us").to_core()
        {'dist': 'uniform', 'low': 0, 'high': 100000}
    """

    dist: Annotated[str, Choice(lambda: ["uniform", "exponential"])] = fld(
        doc="Distribution of the extra delay. A packet whose draw would bring it before the one ahead arrives "
        "with that one instead (no reordering).")
    mean: Optional[Time] = fld(None, "Mean extra delay (exponential only).", default_doc="required for `exponential`")
    low: Optional[Time] = fld(None, "Least extra delay (uniform only).", default_doc="required for `uniform`")
    high: Optional[Time] = fld(None, "Greatest extra delay (uniform only; at least `low`).",
                               default_doc="required for `uniform`")

    @model_validator(mode="after")
    def _fields_of_the_distribution(self) -> "Jitter":
        owner = {"mean": "exponential", "low": "uniform", "high": "uniform"}
        for name, dist in owner.items():
            value = getattr(self, name)
            if dist == self.dist and value is None:
                raise ScenarioError(name, f'is required when dist = "{dist}"', accepted="a time like '30us'")
            if dist != self.dist and value is not None:
                raise ScenarioError(name, f'only applies to dist = "{dist}", not {self.dist!r}',
                                    value=units.format_time(int(value)))
        if self.dist == "uniform" and int(self.high) < int(self.low):  # type: ignore[arg-type]
            raise ScenarioError("high", f"is below low ({units.format_time(int(self.low))})",  # type: ignore[arg-type]
                                value=units.format_time(int(self.high)), accepted="high >= low")  # type: ignore[arg-type]
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``JitterConfig``."""
        out: dict[str, Any] = {"dist": self.dist}
        for name in ("mean", "low", "high"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


_JITTER_DOC = ("Delay variation added to `delay` on every packet, order kept (an emulator's or host's late "
               "hand-off; not netem's reordering jitter).")


def _layers_core(core: dict[str, Any], mac: Any, link_layer: Any, jitter: Any = None) -> dict[str, Any]:
    """Adds a link's MAC, link layer and delay variation to its core table when they are set."""
    if jitter is not None:
        core["jitter"] = jitter.to_core()
    if mac is not None:
        core["mac"] = mac.to_core()
    if link_layer is not None:
        core["link_layer"] = link_layer.to_core()
    return core


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
    jitter: Optional[Jitter] = fld(None, _JITTER_DOC, default_doc="none")
    mac: Optional[MacSpec] = fld(None, "Medium access gating the transmitter (DVB-RCS-like DAMA).",
                                 default_doc="none: the transmitter sends whenever it has a packet")
    link_layer: Optional[LinkLayerSpec] = fld(None, "Link-layer protocol on this direction (SLACP); its ACKs use the "
                                              "reverse link.", default_doc="none: IP packets go straight to `queue`")

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
        if self.mac is not None:
            self.mac.check_link_rate(int(self.rate))  # type: ignore[arg-type]
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkParams`` (``mac`` and ``link_layer`` only when set)."""
        core = {"rate": self.rate, "delay": self.delay, "queue": _queue_core(self.queue),
                "error": _queue_core(self.error)}
        return _layers_core(core, self.mac, self.link_layer, self.jitter)


class Access(Model):
    """Access links of one side of a dumbbell (both directions).

    Example:
        >>> Access(rate="100Mbps", delay=["5ms", "10ms"]).to_core()
        {'rate': 100000000, 'delay': [5000000, 10000000], 'queue': None}
    """

    rate: Rate = fld(doc="Rate of every access link on this side.", ge=1)
    delay: TimeList = fld(doc="One propagation delay for every pair, or a list with one delay per pair.")
    queue: Optional[QueueSpec] = fld(None, "Queue of the access links.", default_doc="drop-tail, 1000 packets")
    jitter: Optional[Jitter] = fld(None, _JITTER_DOC + " On every access link of this side, both directions.",
                                   default_doc="none")

    def to_core(self) -> dict[str, Any]:
        """The core's ``AccessSpec``."""
        return _layers_core({"rate": self.rate, "delay": self.delay, "queue": _queue_core(self.queue)}, None, None,
                            self.jitter)


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

    def layered_links(self) -> list[tuple[str, Any]]:
        """``(path, link)`` of the links with a link layer (paths relative to ``topology``)."""
        pairs = [("bottleneck", self.bottleneck), ("bottleneck_reverse", self.bottleneck_reverse)]
        return [(p, lk) for p, lk in pairs if lk is not None and lk.link_layer is not None]

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
    queue: Optional[QueueSpec] = fld(None, "Queue at the transmitting end (with a link layer: its IP queue, one per "
                                     "channel).", default_doc="drop-tail, 1000 packets")
    error: Optional[ErrorSpec] = fld(None, "Error model.", default_doc="no losses")
    jitter: Optional[Jitter] = fld(None, _JITTER_DOC, default_doc="none")
    mac: Optional[MacSpec] = fld(None, "Medium access gating the transmitter (DVB-RCS-like DAMA).",
                                 default_doc="none: the transmitter sends whenever it has a packet")
    link_layer: Optional[LinkLayerSpec] = fld(None, "Link-layer protocol on this direction (SLACP); its ACKs use the "
                                              "reverse link.", default_doc="none: IP packets go straight to `queue`")

    @model_validator(mode="after")
    def _mac_fits_the_rate(self) -> "GraphLink":
        if self.mac is not None:
            self.mac.check_link_rate(int(self.rate))
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkSpec`` (``LinkParams`` flattened in; ``mac`` and ``link_layer`` only when set)."""
        core = {
            "name": self.name, "from": self.from_, "to": self.to, "rate": self.rate, "delay": self.delay,
            "queue": _queue_core(self.queue), "error": _queue_core(self.error),
        }
        return _layers_core(core, self.mac, self.link_layer, self.jitter)


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
        for i, link in enumerate(self.links):
            if link.link_layer is not None and not any(r.from_ == link.to and r.to == link.from_ for r in self.links):
                raise ScenarioError(f"links[{i}].link_layer", f"needs a reverse link from '{link.to}' to "
                                    f"'{link.from_}' to carry its ACKs", value=link.link_layer.kind,
                                    accepted=f"a [[topology.links]] entry with from = \"{link.to}\" and to = "
                                             f"\"{link.from_}\"")
        return self

    def layered_links(self) -> list[tuple[str, Any]]:
        """``(path, link)`` of the links with a link layer (paths relative to ``topology``)."""
        return [(f"links[{i}]", lk) for i, lk in enumerate(self.links) if lk.link_layer is not None]

    def node_names(self) -> list[str]:
        """Node names."""
        return list(self.nodes)

    def link_names(self) -> list[str]:
        """Link names."""
        return [link.name for link in self.links]

    def to_core(self) -> dict[str, Any]:
        """The core's ``Topology::Graph``."""
        return {"kind": self.kind, "nodes": list(self.nodes), "links": [lk.to_core() for lk in self.links]}


class LotHost(Model):
    """A host of a parking lot, hung off one router by its own access links.

    Example:
        >>> LotHost(name="a", router=0, delay="7ms").to_core()
        {'name': 'a', 'router': 0, 'delay': 7000000}
    """

    name: str = fld(doc="Node name (its access links are `acc_<name>` and `acc_<name>_rev`).")
    router: int = fld(doc="Index of the router it hangs off, 0-based.", ge=0, le=63)
    delay: Time = fld(doc="One-way propagation delay of its access links (both directions).")

    def to_core(self) -> dict[str, Any]:
        """The core's ``HostSpec``."""
        return {"name": self.name, "router": self.router, "delay": self.delay}


class ParkingLot(Model):
    """A parking lot (``kind = "parking_lot"``, seed 002: "parking lot with 5 routers,
    1 Gbps links with 2 MB buffer (15 msec)").

    Routers ``r0..r{N-1}`` lie on a line; backbone link ``bb{i}`` runs r_i -> r_{i+1}
    and ``bb{i}_rev`` back, so 5 routers give the seed's 8 backbone links and a flow
    from r_a to r_b crosses |a - b| of them. Each host (listed in ``hosts``, or made by
    a ``[workload]``) hangs off one router by ``acc_<host>`` (host -> router) and
    ``acc_<host>_rev`` (router -> host), both with the host's delay
    (core ``crates/tcplab-core/src/net/topology.rs``).

    Example:
        >>> lot = ParkingLot(routers=3, backbone=Link(rate="1Gbps", delay="15ms"), access_rate="10Gbps",
        ...                  hosts=[LotHost(name="a", router=0, delay="1ms"), LotHost(name="b", router=2, delay="1ms")])
        >>> lot.node_names()
        ['r0', 'r1', 'r2', 'a', 'b']
        >>> lot.link_names()[:4], lot.link_names()[-1]
        (['bb0', 'bb0_rev', 'bb1', 'bb1_rev'], 'acc_b_rev')
    """

    kind: Literal["parking_lot"] = "parking_lot"
    routers: int = fld(5, "Routers on the line (seed 002: 5, so 8 backbone links).", ge=2, le=64)
    backbone: Link = fld(doc="Every r_i -> r_{i+1} backbone link (seed 002: 1 Gbit/s, 15 ms, 2 MB buffer).")
    backbone_reverse: Optional[Link] = fld(None, "Every r_{i+1} -> r_i backbone link.",
                                           default_doc="the same as `backbone`")
    access_rate: Rate = fld(doc="Rate of every access link (both directions); make it faster than the backbone so "
                            "the backbone holds the bottlenecks.", ge=1)
    access_queue: Optional[QueueSpec] = fld(None, "Queue of every access link.", default_doc="drop-tail, 1000 packets")
    hosts: list[LotHost] = fld(doc="Hosts given explicitly, as `[[topology.hosts]]` entries.", factory=list,
                               default_doc="none (a `[workload]` adds two per generated flow)")

    @model_validator(mode="after")
    def _hosts_fit_the_lot(self) -> "ParkingLot":
        seen = {f"r{i}" for i in range(self.routers)}
        for i, h in enumerate(self.hosts):
            if h.router >= self.routers:
                raise ScenarioError(f"hosts[{i}].router", f"the lot has {self.routers} routers", value=h.router,
                                    accepted=f"0 to {self.routers - 1}")
            if h.name in seen:
                raise ScenarioError(f"hosts[{i}].name", "duplicate node name", value=h.name)
            seen.add(h.name)
        return self

    def layered_links(self) -> list[tuple[str, Any]]:
        """``(path, link)`` of the links with a link layer (paths relative to ``topology``)."""
        pairs = [("backbone", self.backbone), ("backbone_reverse", self.backbone_reverse)]
        return [(p, lk) for p, lk in pairs if lk is not None and lk.link_layer is not None]

    def node_names(self) -> list[str]:
        """Node names: routers, then the listed hosts."""
        return [f"r{i}" for i in range(self.routers)] + [h.name for h in self.hosts]

    def link_names(self) -> list[str]:
        """Link names, as the core names them: backbone, then the listed hosts' access links."""
        names = [n for i in range(self.routers - 1) for n in (f"bb{i}", f"bb{i}_rev")]
        return names + [n for h in self.hosts for n in (f"acc_{h.name}", f"acc_{h.name}_rev")]

    def to_core(self) -> dict[str, Any]:
        """The core's ``Topology::ParkingLot``."""
        rev = self.backbone_reverse
        return {
            "kind": self.kind,
            "routers": self.routers,
            "backbone": self.backbone.to_core(),
            "backbone_reverse": rev.to_core() if rev is not None else None,
            "access_rate": self.access_rate,
            "access_queue": _queue_core(self.access_queue),
            "hosts": [h.to_core() for h in self.hosts],
        }


#: A topology: a table tagged by ``kind``.
Topology = Annotated[Union[Dumbbell, Graph, ParkingLot], Field(discriminator="kind")]
