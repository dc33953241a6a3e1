"""TCP settings (``[tcp]``) and congestion control (``[cc]``) of a scenario.

A ``[tcp]`` table is a named profile plus per-knob overrides; unset knobs come from the
profile (``crates/tcplab-core/src/tcp/config.rs``, ``TcpSpec``). A flow's ``tcp`` table
wins over the scenario's, which wins over the profile. The core resolves the result and
rejects impossible combinations (e.g. ``min_rto`` above ``max_rto``); that message is
mapped back to the field that caused it (:func:`check_tcp_resolves`).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Optional

from pydantic import model_validator

from tcplab import _core, registry
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import UNSET, ScenarioError, near
from tcplab.scenario.quantities import Choice, InitialWindow, Params, Quantity, Size, Time

__all__ = ["TcpOptions", "CcOptions", "TCP_KINDS", "profile_value", "merge_cc", "check_tcp_resolves"]

# Core TcpSpec field -> quantity kind (or the plain type). The order is the core's.
TCP_KINDS: dict[str, str] = {
    "mss": "size",
    "header_bytes": "size",
    "iw": "iw",
    "initial_ssthresh": "size",
    "initial_rto": "time",
    "min_rto": "time",
    "max_rto": "time",
    "syn_retries": "int",
    "sack": "bool",
    "dupack_threshold": "int",
    "limited_transmit": "bool",
    "frto": "bool",
    "frto_variant": "str",
    "byte_counting": "bool",
    "abc_limit": "int",
    "delayed_ack": "bool",
    "delack_timeout": "time",
    "delack_segments": "int",
    "quickack": "bool",
    "daass": "bool",
    "rcv_buffer": "size",
    "window_scaling": "bool",
    "cbi_ssthresh_reuse": "bool",
    "fin_ignores_cwnd": "bool",
    "timestamps": "bool",
    "ecn": "bool",
    "prr": "str",
    "rack": "bool",
    "tlp": "bool",
    "dsack": "bool",
    "rtt_estimator": "str",
    "ssthresh_from_cwnd": "bool",
    "linux_cc": "bool",
}


def profile_value(profile: str, core_key: str) -> str:
    """A profile's value of one knob, as the reference shows it.

    Example:
        >>> profile_value("ns2-sack", "initial_rto"), profile_value("ns2-sack", "sack")
        ('3s', 'true')
    """
    try:
        v = registry.profile_config(profile)[core_key]
    except Exception:  # registry shape changed: the docs then just say "from the profile"
        return "?"
    kind = TCP_KINDS.get(core_key, "")
    if v is None:
        return "unbounded"
    if kind in Quantity.EXAMPLE and isinstance(v, int):
        return Quantity(kind).format(v)
    return json.dumps(v)


def _knob(core_key: str, doc: str, **kw: Any) -> Any:
    return fld(None, doc, default_doc=f"from the profile (linux: {profile_value('linux', core_key)})", **kw)


class TcpOptions(Model):
    """TCP settings: a profile plus per-knob overrides (``[tcp]`` or a flow's ``tcp``).

    Unset knobs (``None``) come from the profile; a flow's table wins over the
    scenario's ``[tcp]``, which wins over the profile (tcp/config.rs ``TcpSpec``).

    Example:
        >>> TcpOptions(profile="ns2-sack", iw=10, initial_rto="1s").to_core()
        {'profile': 'ns2-sack', 'iw': 10, 'initial_rto': 1000000000}
    """

    profile: Optional[Annotated[str, Choice(registry.profile_names)]] = fld(
        None, "Named profile that sets every knob together (see the table below).", default_doc="`linux`"
    )
    mss: Optional[Size] = _knob("mss", "Sender maximum segment size (payload).", ge=1)
    header_bytes: Optional[Size] = _knob("header_bytes", "IP + TCP header bytes added to every segment.")
    iw: Optional[InitialWindow] = _knob(
        "iw", "Initial window in segments (>= 1), or \"rfc3390\" for min(4*MSS, max(2*MSS, 4380 B)).")
    initial_ssthresh: Optional[Size] = _knob(
        "initial_ssthresh", "Initial ssthresh (unset: arbitrarily high, RFC 5681 §3.1).")
    initial_rto: Optional[Time] = _knob(
        "initial_rto", "Initial retransmission timeout, also for the SYN (RFC 6298 §2.1).", ge=1)
    min_rto: Optional[Time] = _knob("min_rto", "Lower bound on the RTO (RFC 6298 §2.4).")
    max_rto: Optional[Time] = _knob("max_rto", "Upper bound on the RTO.", ge=1)
    syn_retries: Optional[int] = _knob("syn_retries", "SYN retransmissions before the connection is abandoned.", ge=0)
    sack: Optional[bool] = _knob("sack", "SACK (RFC 2018) with RFC 6675 recovery; false means NewReno (RFC 6582).")
    dupack_threshold: Optional[int] = _knob("dupack_threshold", "Duplicate ACKs that trigger fast retransmit.", ge=1)
    limited_transmit: Optional[bool] = _knob("limited_transmit", "Limited Transmit (RFC 3042).")
    frto: Optional[bool] = _knob("frto", "F-RTO spurious-RTO detection (RFC 5682).")
    frto_variant: Optional[str] = _knob(
        "frto_variant", "Which F-RTO: 'rfc5682' (RFC 5682 section 2, basic) or 'linux' (tcp_process_loss, "
                        "SACK-enhanced, tcp_frto = 2).")
    byte_counting: Optional[bool] = _knob("byte_counting", "Appropriate Byte Counting (RFC 3465).")
    abc_limit: Optional[int] = _knob("abc_limit", "ABC slow-start limit L in segments (RFC 3465 §2.2).", ge=1)
    delayed_ack: Optional[bool] = _knob("delayed_ack", "Receiver delays ACKs (RFC 5681 §4.2).")
    delack_timeout: Optional[Time] = _knob("delack_timeout", "Delayed-ACK timer.")
    delack_segments: Optional[int] = _knob("delack_segments", "Full-sized segments that force an ACK.", ge=1)
    quickack: Optional[bool] = _knob(
        "quickack", "Linux receiver ACK timing: quick-ACK mode (tcp_incr_quickack), adaptive delayed-ACK "
                    "timeout (tcp_event_data_recv), and an immediate ACK for each segment that grows the "
                    "receive window (tcp_grow_window, with receive-buffer autotuning).")
    daass: Optional[bool] = _knob("daass", "No delayed ACKs during slow start (RFC 2760 §5.1).")
    rcv_buffer: Optional[Size] = _knob("rcv_buffer", "Receiver buffer, advertised as the window.", ge=1)
    window_scaling: Optional[bool] = _knob(
        "window_scaling", "Window scaling (RFC 7323); without it the window is at most 65535 B.")
    cbi_ssthresh_reuse: Optional[bool] = _knob(
        "cbi_ssthresh_reuse", "Reuse ssthresh across connections to a destination (RFC 2140).")
    fin_ignores_cwnd: Optional[bool] = _knob(
        "fin_ignores_cwnd", "Send the FIN regardless of cwnd (Linux; \"IW10 is really IW11\").")
    timestamps: Optional[bool] = _knob(
        "timestamps", "Timestamp option (RFC 7323): an RTT sample per ACK and Eifel undo of spurious timeouts "
                      "(RFC 3522); add its 12 B to header_bytes.")
    ecn: Optional[bool] = _knob(
        "ecn", "Request ECN on the SYN (RFC 3168 §6.1.1; Linux `tcp_ecn = 1`): ECT(0) on data, one window "
               "reduction per round trip on ECN-Echo. Receivers always accept (Linux `tcp_ecn = 2`); an ECN "
               "congestion control (dctcp) requests it regardless.")
    prr: Optional[Annotated[str, Choice(lambda: ["off", "crb", "ssrb", "linux"])]] = _knob(
        "prr", "Proportional Rate Reduction in SACK fast recovery and CWR (RFC 6937): `crb` / `ssrb` its two "
               "reduction bounds, `linux` Linux `tcp_cwnd_reduction` (RFC 9937); `off`: cwnd = ssthresh at once.")
    rack: Optional[bool] = _knob(
        "rack", "RACK time-based loss detection (RFC 8985 §6; Linux `tcp_recovery = 1`); needs SACK.")
    tlp: Optional[bool] = _knob("tlp", "Tail Loss Probe (RFC 8985 §7; Linux `tcp_early_retrans = 3`); needs SACK.")
    dsack: Optional[bool] = _knob("dsack", "Receiver reports duplicate segments with D-SACK (RFC 2883; Linux "
                                           "`tcp_dsack = 1`); RACK widens its reordering window on them.")
    rtt_estimator: Optional[Annotated[str, Choice(lambda: ["rfc6298", "linux"])]] = _knob(
        "rtt_estimator", "`rfc6298`: one timed segment per round trip, RTO >= min_rto; `linux`: "
                         "`tcp_rtt_estimator` (every ACK, mdev/mdev_max/rttvar, RTO = SRTT + 4 RTTVAR with that "
                         "term >= min_rto), and the RTO restarts when the first unacknowledged segment is resent "
                         "(`tcp_xmit_retransmit_queue`), where RFC 6298 restarts it only on an ACK of new data.")
    ssthresh_from_cwnd: Optional[bool] = _knob(
        "ssthresh_from_cwnd", "Loss and ECN reductions start from cwnd (Linux `tcp_reno_ssthresh` = cwnd/2) "
                              "instead of FlightSize (RFC 5681 §3.1 eq. 4).")
    linux_cc: Optional[bool] = _knob(
        "linux_cc", "Congestion controls compute as the Linux modules do where they depart from their RFCs: "
                    "ssthresh in whole segments (`tcp_reno_ssthresh`, `bictcp_recalc_ssthresh`), CUBIC's "
                    "Reno-friendly alpha kept at 3(1-beta)/(1+beta) (`bictcp_update`), and BBR sets cwnd "
                    "through recovery itself, without PRR (`tcp_cong_control`, "
                    "`bbr_set_cwnd_to_recover_or_restore`), with its ACK-aggregation allowance "
                    "(`bbr_update_ack_aggregation`); CUBIC's HyStart ACK-train threshold follows the "
                    "flow's pacing (`hystart_update`, `hystart_ack_delay`).")

    def to_core(self) -> dict[str, Any]:
        """The core's ``TcpSpec``, with only the fields that are set."""
        return {name: v for name in type(self).model_fields if (v := getattr(self, name)) is not None}


class CcOptions(Model):
    """A congestion control and its parameters (``[cc]`` or a flow's ``cc``).

    Example:
        >>> CcOptions(name="reno").to_core()
        {'name': 'reno', 'params': {}}
    """

    name: Optional[Annotated[str, Choice(registry.cc_names)]] = fld(
        None, "Registered congestion control (see `tcplab list`).", default_doc="`reno`"
    )
    params: Params = fld(doc="Parameters of the algorithm, as `name = number` (see `tcplab list`).", factory=dict,
                         default_doc="the algorithm's defaults")

    @model_validator(mode="after")
    def _parameters_belong_to_the_algorithm(self) -> "CcOptions":
        name = self.name or "reno"
        try:
            known = [p["name"] for p in registry.cc_entry(name)["params"]]
        except KeyError:  # pragma: no cover - name was checked against the registry
            return self
        for p in self.params:
            if p not in known:
                raise ScenarioError(
                    f"params.{p}", f"unknown parameter of congestion control '{name}'",
                    accepted=", ".join(known) or "(none: this algorithm has no parameters)", suggestion=near(p, known),
                )
        return self

    def to_core(self) -> dict[str, Any]:
        """The core's ``CcSpec``."""
        return {"name": self.name or "reno", "params": dict(self.params)}


def merge_cc(base: CcOptions, over: CcOptions | None) -> dict[str, Any]:
    """A flow's CC: its name wins; parameters merge when the name is the same.

    Example:
        >>> merge_cc(CcOptions(name="cubic", params={"beta": 0.8}), CcOptions(name="cubic", params={"c": 0.5}))["params"]
        {'beta': 0.8, 'c': 0.5}
    """
    if over is None:
        return base.to_core()
    name = over.name or base.name or "reno"
    params = dict(base.params) if name == (base.name or "reno") else {}
    params.update(over.params)
    return {"name": name, "params": params}


def check_tcp_resolves(
    spec: dict[str, Any], path: str, cache: dict[str, None], own_keys: list[str], base_keys: list[str] | None = None
) -> None:
    """Asks the core to resolve a TCP spec; maps its message to the field it names."""
    key = json.dumps(spec, sort_keys=True)
    if key in cache:
        return
    try:
        _core.resolve_tcp(key)
    except ValueError as e:
        msg = str(e)
        m = re.search(r"tcp\.(\w+)", msg)
        fieldname = m.group(1) if m else None
        where = path
        if fieldname:
            if fieldname in own_keys:
                where = f"{path}.{fieldname}"
            elif base_keys is not None and fieldname in base_keys:
                where = f"tcp.{fieldname}"
            else:
                where = f"{path}.{fieldname}"
        value: Any = spec.get(fieldname) if fieldname else UNSET
        kind = TCP_KINDS.get(fieldname or "", "")
        if kind in Quantity.EXAMPLE and isinstance(value, int):
            value = Quantity(kind).format(value)
        raise ScenarioError(where, f"rejected by the core: {msg}",
                            value=value if fieldname in spec else UNSET) from None
    cache[key] = None
