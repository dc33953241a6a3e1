"""The whole scenario: the top-level table, cross-table checks, and the core's JSON.

:class:`Scenario` ties the tables together (topology, ``[tcp]``, ``[cc]``,
``[[flows]]``, ``[record]``), checks what no single table can (flows name existing
nodes, names are unique, ``[record]`` names existing links and flows, the core accepts
every TCP configuration), expands flow groups and produces the resolved scenario of the
core (``crates/tcplab-core/src/scenario.rs``) with :meth:`Scenario.to_core`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import tomli_w
from pydantic import PrivateAttr, model_validator

from tcplab import _core, units
from tcplab.scenario.base import Model, fld
from tcplab.scenario.corecheck import core_problems
from tcplab.scenario.errors import ScenarioError, near
from tcplab.scenario.flows import Flow, RpcFlow, TcpFlow, UdpFlow
from tcplab.scenario.locate import located, parse_toml, read_text
from tcplab.scenario.network import (  # noqa: F401 (doc examples)
    Access, DropTail, Dumbbell, Graph, Link, ParkingLot, Topology, short_list,
)
from tcplab.scenario.quantities import Time
from tcplab.scenario.record import Record
from tcplab.scenario.tcp import CcOptions, TcpOptions, check_tcp_resolves, merge_cc
from tcplab.scenario.workload import Workload

__all__ = ["Scenario", "load", "EXAMPLE_TOML"]

EXAMPLE_TOML = '''\
name = "hspa-iw10"

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "2Mbps", delay = "70ms", queue = { kind = "drop_tail", limit = "48pkt" } }
sender_access = { rate = "100Mbps", delay = "11ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }

[tcp]
profile = "ns2-sack"
iw = 10

[[flows]]
bytes = "180kB"
'''
"""A small valid scenario, used in examples and docs."""


def _pick(value: str | list[str] | None, j: int, default: str) -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    return value[j % len(value)]


class Scenario(Model):
    """A whole experiment; see the package docstring and ``docs/scenarios.md``.

    Build it from a file (:func:`load`, :meth:`from_toml`) or in Python:

    Example:
        >>> sc = Scenario(
        ...     name="edge",
        ...     topology=Dumbbell(bottleneck=Link(rate="160kbps", delay="250ms",
        ...                                       queue=DropTail(limit="7pkt")),
        ...                       sender_access=Access(rate="100Mbps", delay="11ms"),
        ...                       receiver_access=Access(rate="100Mbps", delay="0ms")),
        ...     tcp=TcpOptions(profile="ns2-sack", iw=10),
        ...     flows=[TcpFlow(group="burst1", count=2, bytes_total="180kB")],
        ... )
        >>> [(f["name"], f["bytes"]) for f in sc.to_core()["flows"]]
        [('burst1.0', 90000), ('burst1.1', 90000)]
    """

    name: str = fld("", "Scenario name, copied into the results.")
    duration: Optional[Time] = fld(
        None, "Stop time.", default_doc="when every finite flow has completed (at most `max_duration`)", ge=1
    )
    warmup: Optional[Time] = fld(
        None, "Start of the measurement window: throughput, utilisation, queue occupancy and drops in the "
        "summary tables cover [warmup, duration] (columns window_start_s, window_end_s). Needs `duration`.",
        default_doc='"0s" (the window starts with the run)',
    )
    max_duration: Time = fld(3600 * 10**9, "Safety cap on simulated time when `duration` is unset.",
                             default_doc='"3600s"', ge=1)
    topology: Topology = fld(doc="The network.")
    tcp: TcpOptions = fld(doc="Default TCP settings of every TCP flow.", factory=TcpOptions,
                          default_doc="profile `linux`")
    cc: CcOptions = fld(doc="Default congestion control of every TCP flow.", factory=CcOptions, default_doc="`reno`")
    flows: list[Flow] = fld(doc="The flows and flow groups, as `[[flows]]` entries.", factory=list,
                            default_doc="none (then a `[workload]` is required)")
    workload: Optional[Workload] = fld(None, "Flows generated from the run seed on a `parking_lot` topology "
                                       "(seed 002's short- and long-lived flows).", default_doc="none")
    record: Record = fld(doc="Time series to record.", factory=Record, default_doc="none")

    #: ``(text, file)`` of the scenario file this came from, to locate warnings.
    _source: Optional[tuple[str, str]] = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal tables; where a scenario was read from does not count."""
        if not isinstance(other, Scenario):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    # ---- validation across tables

    @model_validator(mode="after")
    def _tables_agree(self) -> "Scenario":
        problems: list[ScenarioError] = []
        note = problems.append
        if self.warmup is not None and (self.duration is None or self.warmup >= self.duration):
            shown = "unset" if self.duration is None else units.format_time(int(self.duration))
            note(ScenarioError("warmup", f"must be shorter than duration ({shown})",
                               value=units.format_time(int(self.warmup)), accepted="a time below `duration`"))
        if not self.flows and self.workload is None:
            note(ScenarioError("flows", "at least one flow is required",
                               accepted="one or more [[flows]] entries, or a [workload]"))
        topo = self.topology
        workload_ok = self._check_workload(note)
        nodes = self._node_names()
        known = set(nodes)
        names: dict[str, int] = {}
        groups: set[str] = set()
        for i, flow in enumerate(self.flows):
            ends_ok = True
            for end in ("src", "dst"):
                value = getattr(flow, end)
                key = type(flow).model_fields[end].alias or end  # rpc entries say server / client
                if value is None:
                    if isinstance(topo, (Graph, ParkingLot)):
                        note(ScenarioError(f"flows[{i}].{key}", f"is required when the topology is a {topo.kind}",
                                           accepted=", ".join(nodes)))
                        ends_ok = False
                    continue
                for j, node in enumerate([value] if isinstance(value, str) else value):
                    if node not in known:
                        where = f"flows[{i}].{key}" + ("" if isinstance(value, str) else f"[{j}]")
                        note(ScenarioError(where, "unknown node", value=node, accepted=short_list(nodes),
                                           suggestion=near(node, nodes)))
                        ends_ok = False
            for name, src, dst in self._endpoints(i, flow):
                if name in names:
                    note(ScenarioError(f"flows[{i}].name", f"duplicate flow name (also made by flows[{names[name]}])",
                                       value=name))
                    break
                names[name] = i
                if ends_ok and src == dst:
                    key = type(flow).model_fields["dst"].alias or "dst"
                    note(ScenarioError(f"flows[{i}].{key}", "a flow cannot go from a node to itself", value=dst))
                    break
            if isinstance(flow, RpcFlow):
                self._check_rpc(i, flow, note)
            if flow.group:
                groups.add(flow.group)
            if flow.name and flow.count > 1:
                groups.add(flow.name)
        for name in self.workload.flow_names() if self.workload is not None and workload_ok else []:
            if name in names:
                note(ScenarioError(f"flows[{names[name]}].name", "clashes with a flow the [workload] generates",
                                   value=name))
            names[name] = -1
        links = self._link_names()
        link_set = set(links)
        for j, lk in enumerate(self.record.queue):
            if lk != "*" and lk not in link_set:
                note(ScenarioError(f"record.queue[{j}]", "unknown link", value=lk, accepted="\"*\", " + short_list(links),
                                   suggestion=near(lk, links)))
        for j, fl in enumerate(self.record.owd):
            if fl != "*" and fl not in names and fl not in groups:
                options = sorted(groups) + list(names)
                note(ScenarioError(f"record.owd[{j}]", "unknown flow or group", value=fl,
                                   accepted="\"*\", " + short_list(options), suggestion=near(fl, options)))
        # The packet trace follows TCP and UDP flows; an rpc application's transactions
        # are flows of their own that the core numbers as it creates them.
        traceable = {n: i for n, i in names.items() if i < 0 or not isinstance(self.flows[i], RpcFlow)}
        traceable_groups = {f.group for f in self.flows if f.group and not isinstance(f, RpcFlow)} | {
            f.name for f in self.flows if f.name and f.count > 1 and not isinstance(f, RpcFlow)}
        for j, fl in enumerate(self.record.packets):
            if fl == "*" or fl in traceable or fl in traceable_groups:
                continue
            options = sorted(traceable_groups) + list(traceable)
            rpc = fl in names or fl in groups
            note(ScenarioError(f"record.packets[{j}]", "an rpc application's packets are not traced" if rpc
                               else "unknown flow or group", value=fl, accepted="\"*\", " + short_list(options),
                               suggestion=None if rpc else near(fl, options)))
        tcp_ok = self._resolve_all_tcp(note)
        if tcp_ok:
            self._check_link_layers(names, groups, note)
        if problems:
            raise ScenarioError.joined(problems)
        return self

    def _check_workload(self, note: Callable[[ScenarioError], None]) -> bool:
        """A ``[workload]`` needs a parking lot whose longest path leaves room for its mean RTT.

        Returns whether the workload (if any) can be expanded into hosts and flows.
        """
        w, topo = self.workload, self.topology
        if w is None:
            return True
        if not isinstance(topo, ParkingLot):
            note(ScenarioError("workload", "needs a parking-lot topology (its flows attach to the lot's routers)",
                               value=f"topology.kind = \"{topo.kind}\"", accepted='topology.kind = "parking_lot"'))
            return False
        rev = topo.backbone_reverse or topo.backbone
        hop = (int(topo.backbone.delay) + int(rev.delay)) // 2  # type: ignore[arg-type]
        floor = 2 * (topo.routers - 1) * hop
        ok = True
        if w.rtt_reading == "common_excess":
            mean_floor = 2 * hop * (topo.routers + 1) / 3
            if int(w.rtt_mean) <= mean_floor:
                note(ScenarioError("workload.rtt_mean", "with rtt_reading = \"common_excess\" it must exceed the "
                                   "mean propagation floor over the router pairs",
                                   value=units.format_time(int(w.rtt_mean)),
                                   accepted=f"more than {units.format_time(round(mean_floor))}"))
                ok = False
        elif int(w.rtt_mean) <= floor:
            note(ScenarioError("workload.rtt_mean", f"must exceed the longest path's propagation floor, 2 x "
                               f"{topo.routers - 1} hops x {units.format_time(hop)}", value=units.format_time(
                                   int(w.rtt_mean)), accepted=f"more than {units.format_time(floor)}"))
            ok = False
        if self.duration is None and any(c.mode == "sessions" for c in w.classes):
            note(ScenarioError("duration", "a workload class with mode = \"sessions\" fetches objects until the "
                               "duration", value="unset", accepted="a duration, e.g. \"1800s\""))
            ok = False
        hosts = set(topo.node_names())
        for h in w.host_names():
            if h in hosts:
                note(ScenarioError("topology.hosts", "a listed host clashes with one the [workload] generates", value=h))
                return False
        return ok

    def _node_names(self) -> list[str]:
        """Every node, including the hosts a ``[workload]`` generates."""
        extra = self.workload.host_names() if self.workload is not None else []
        return self.topology.node_names() + extra

    def _link_names(self) -> list[str]:
        """Every link, including the access links a ``[workload]`` generates."""
        extra = self.workload.link_names() if self.workload is not None else []
        return self.topology.link_names() + extra

    def _check_rpc(self, i: int, flow: RpcFlow, note: Callable[[ScenarioError], None]) -> None:
        """What an ``rpc`` entry needs from the rest of the scenario: an end, and the load's link."""
        arr = flow.arrivals
        if arr.process != "times" and flow.stop is None and self.duration is None:
            note(ScenarioError(f"flows[{i}].stop", f"arrivals of process = \"{arr.process}\" never end: give the "
                               "entry a stop time or the scenario a duration", accepted="a time like '300s'"))
        if arr.load is not None:
            link = arr.link or "bottleneck"
            links = self._link_names()
            if link not in links:
                note(ScenarioError(f"flows[{i}].arrivals.link", "no such link to measure the offered load against",
                                   value=link, accepted=short_list(links), suggestion=near(link, links)))

    def _largest_packet(self) -> int:
        """The largest IP packet any flow sends: MSS + headers (TCP, rpc) or the packet size (UDP)."""
        base = self.tcp.to_core()
        sizes = [0]
        for flow in self.flows:
            if isinstance(flow, (TcpFlow, RpcFlow)):
                spec = {**base, **(flow.tcp.to_core() if flow.tcp is not None else {})}
                cfg = json.loads(_core.resolve_tcp(json.dumps(spec, sort_keys=True)))
                sizes.append(int(cfg["mss"]) + int(cfg["header_bytes"]))
            else:
                sizes.append(int(flow.packet_size))
        return max(sizes)

    def _check_link_layers(self, names: dict[str, int], groups: set[str], note: Callable[[ScenarioError], None]) -> None:
        """A link layer's map names existing flows or groups; its MAC buffer holds the largest frame."""
        layered = self.topology.layered_links()
        if not layered:
            return
        largest = self._largest_packet()
        for path, link in layered:
            ll = link.link_layer
            for key in ll.map:
                if key in names and names[key] >= 0 and isinstance(self.flows[names[key]], RpcFlow):
                    note(ScenarioError(f"topology.{path}.link_layer.map.{key}",
                                       "names an rpc entry: its transactions ride the first channel",
                                       value=key, accepted="tcp or udp flows and groups"))
                elif key not in names and key not in groups:
                    options = sorted(groups) + list(names)
                    note(ScenarioError(f"topology.{path}.link_layer.map.{key}", "unknown flow or group", value=key,
                                       accepted=short_list(options), suggestion=near(key, options)))
            frame = largest + int(ll.header_size)
            if int(ll.mac_buffer) < frame:
                note(ScenarioError(f"topology.{path}.link_layer.mac_buffer",
                                   f"cannot hold the largest frame ({frame} B: a {largest} B packet and a "
                                   f"{int(ll.header_size)} B header)", value=units.format_size(int(ll.mac_buffer)),
                                   accepted=f"at least {units.format_size(frame)}"))

    @staticmethod
    def _expand_link_layer_maps(topology: dict[str, Any], flows: list[dict[str, Any]]) -> None:
        """Rewrites each link layer's map from flow or group names to the core's flow names."""
        tables = topology.get("links") or [topology.get("bottleneck"), topology.get("bottleneck_reverse")]
        for table in tables:
            ll = (table or {}).get("link_layer")
            if not ll:
                continue
            expanded: dict[str, str] = {}
            for key, channel in ll["map"].items():
                for f in flows:
                    if f.get("kind") == "rpc":
                        continue  # transactions ride the first channel
                    if key in (f["name"], f["group"]) or f["name"].rsplit(".", 1)[0] == key:
                        expanded[f["name"]] = channel
            ll["map"] = expanded

    def _endpoints(self, i: int, flow: Any) -> list[tuple[str, str, str]]:
        """(name, src, dst) of every flow entry ``i`` expands into."""
        n = flow.count
        pairs = self.topology.pairs if isinstance(self.topology, Dumbbell) else 1
        first = self._first_index(i)
        if n == 1:
            names = [flow.name or f"flow{first}"]
        else:
            stem = flow.name or flow.group or f"flow{first}"
            names = [f"{stem}.{j}" for j in range(n)]
        return [(names[j], _pick(flow.src, j, f"s{j % pairs}"), _pick(flow.dst, j, f"d{j % pairs}")) for j in range(n)]

    def _first_index(self, i: int) -> int:
        return sum(f.count for f in self.flows[:i])

    def _resolve_all_tcp(self, note: Callable[[ScenarioError], None]) -> bool:
        """Asks the core to resolve every TCP configuration; notes each refusal. True when all resolve."""
        base = self.tcp.to_core()
        cache: dict[str, None] = {}
        seen: set[str] = set()
        ok = True

        def check(spec: dict[str, Any], path: str, own: list[str], base_keys: list[str] | None = None) -> None:
            nonlocal ok
            try:
                check_tcp_resolves(spec, path, cache, own, base_keys=base_keys)
            except ScenarioError as e:
                ok = False
                if e.one_line() not in seen:  # a [tcp] problem every flow inherits is reported once
                    seen.add(e.one_line())
                    note(e)

        check(base, "tcp", list(base))
        for i, flow in enumerate(self.flows):
            if isinstance(flow, (TcpFlow, RpcFlow)) and flow.tcp is not None:
                over = flow.tcp.to_core()
                check({**base, **over}, f"flows[{i}].tcp", list(over), base_keys=list(base))
        for i, c in enumerate(self.workload.classes if self.workload is not None else []):
            if c.tcp is not None:
                over = c.tcp.to_core()
                check({**base, **over}, f"workload.classes[{i}].tcp", list(over), base_keys=list(base))
        return ok

    def validate(self) -> "Scenario":  # type: ignore[override]
        """Re-checks every field (after in-place edits) and normalises them in place.

        Raises :class:`ScenarioError`; returns ``self`` so calls can be chained.

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> sc.tcp.iw = 0
            >>> sc.validate()
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: tcp.iw: the initial window must be at least 1 segment; got 0; accepted: an integer number of segments >= 1, or "rfc3390"
        """
        fresh = self.revalidated()
        for name in type(self).model_fields:
            object.__setattr__(self, name, getattr(fresh, name))
        return self

    # ---- conversions

    def expand_flows(self, seed: int = 0) -> list[dict[str, Any]]:
        """The flows as the core sees them: groups expanded, TCP and CC resolved.

        Start jitter is drawn from ``numpy.random.default_rng([seed, entry, 0x5A])``, so
        it depends only on the seed and the entry's position (common random numbers).

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> [(f["name"], f["src"], f["start"]) for f in sc.expand_flows()]
            [('flow0', 's0', 0)]
        """
        out: list[dict[str, Any]] = []
        base_tcp = self.tcp.to_core()
        for i, flow in enumerate(self.flows):
            n = flow.count
            jitter = int(flow.start_jitter)
            offsets = (
                np.random.default_rng([seed, i, 0x5A]).integers(0, jitter, size=n, endpoint=True).tolist()
                if jitter > 0
                else [0] * n
            )
            stop = None if flow.stop is None else int(flow.stop)
            if isinstance(flow, (TcpFlow, RpcFlow)):
                tcp = {**base_tcp, **(flow.tcp.to_core() if flow.tcp is not None else {})}
                cc = merge_cc(self.cc, flow.cc)
            if isinstance(flow, TcpFlow):
                sizes = flow.sizes()
            elif isinstance(flow, UdpFlow):
                interval = flow.interval.to_core()
            for j, (name, src, dst) in enumerate(self._endpoints(i, flow)):
                start = int(flow.start) + j * int(flow.start_spacing) + int(offsets[j])
                if isinstance(flow, RpcFlow):
                    request, response = flow.sizes_core()
                    iw = flow.iw_of(j)
                    out.append({"kind": "rpc", "name": name, "group": flow.group, "server": src, "client": dst,
                                "start": start, "stop": stop, "request": request, "response": response,
                                "arrivals": flow.arrivals.to_core(n), "batch": flow.batch,
                                "cc": dict(cc, params=dict(cc["params"])),
                                "tcp": dict(tcp) if iw is None else {**tcp, "iw": iw}})
                    continue
                common = {"name": name, "group": flow.group, "src": src, "dst": dst, "start": start, "stop": stop}
                if isinstance(flow, TcpFlow):
                    out.append({"kind": "tcp", **common, "bytes": sizes[j], "cc": dict(cc, params=dict(cc["params"])),
                                "tcp": dict(tcp)})
                else:
                    out.append({"kind": "udp", **common, "packet_bytes": int(flow.packet_size),
                                "interval": dict(interval)})
        return out

    def to_core(self, seed: int = 0) -> dict[str, Any]:
        """The resolved scenario in the core's serde schema (scenario.rs), as a dict.

        ``seed`` only matters for flows with ``start_jitter``.

        Example:
            >>> core = Scenario.from_toml(EXAMPLE_TOML).to_core()
            >>> sorted(core)
            ['duration', 'flows', 'max_duration', 'name', 'record', 'topology']
        """
        self.validate()
        flows = self.expand_flows(seed)
        links = self._link_names()
        rec = self.record
        queue = links if "*" in rec.queue else list(dict.fromkeys(rec.queue))
        owd = self._selected_flows(rec.owd, flows)
        packets = self._selected_flows(rec.packets, [f for f in flows if f["kind"] != "rpc"])
        topology = self.topology.to_core()
        self._expand_link_layer_maps(topology, flows)
        return {
            "name": self.name,
            "topology": topology,
            "flows": flows,
            "duration": None if self.duration is None else int(self.duration),
            "max_duration": int(self.max_duration),
            **({} if self.warmup is None else {"warmup": int(self.warmup)}),
            **({} if self.workload is None else {"workload": self.workload.to_core(self.cc, self.tcp.to_core())}),
            "record": {
                "cwnd": rec.cwnd,
                "queue": queue,
                "owd": owd,
                "drops": rec.drops,
                "busy_sample_interval": None if rec.busy_sample_interval is None else int(rec.busy_sample_interval),
                # Only when set, so that the resolved scenario (and the keys of stored
                # sweep and study runs that hash it) of every other scenario is unchanged.
                **({} if rec.throughput_interval is None else {"throughput_interval": int(rec.throughput_interval)}),
                **({"packets": packets} if packets else {}),
            },
        }

    def _selected_flows(self, selectors: list[str], flows: list[dict[str, Any]]) -> list[str]:
        """The core's flow names that ``selectors`` (flow names, groups, ``"*"``) pick
        among the expanded ``flows`` and the ``[workload]``'s flows, in order, once each.

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> sc._selected_flows(["*"], []), sc._selected_flows(["flow0", "flow0"], sc.expand_flows())
            (['*'], ['flow0'])
        """
        if "*" in selectors:
            return ["*"]
        out: list[str] = []
        for sel in selectors:
            out += [f["name"] for f in flows if sel in (f["name"], f["group"]) or f["name"].rsplit(".", 1)[0] == sel]
        if self.workload is not None:
            for sel in selectors:
                out += [n for n in self.workload.flow_names() if sel == n]
        return list(dict.fromkeys(out))

    def to_core_json(self, seed: int = 0) -> str:
        """:meth:`to_core` as canonical JSON (sorted keys), as ``_core.run`` takes it."""
        return json.dumps(self.to_core(seed), sort_keys=True, separators=(",", ":"))

    def to_toml(self) -> str:
        """The scenario as a TOML document that :meth:`from_toml` reads back equal.

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> Scenario.from_toml(sc.to_toml()) == sc
            True
        """
        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """Builds and validates a scenario from a parsed TOML document (strict units)."""
        sc: Scenario = cls.from_document(data)
        return sc

    @classmethod
    def from_toml(cls, text: str, file: str = "<string>") -> "Scenario":
        """Parses and validates TOML text, with the core's checks too (:meth:`check_core`);
        every problem is reported, each naming ``file`` and its line.

        This is the one validation of a scenario file: ``tcplab check``, ``tcplab run``
        and :func:`load` all come through here, so what one accepts the others do.

        Example:
            >>> Scenario.from_toml('name = 3\\n[[flows]]\\nbytes = 5\\n')
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: <string>: topology: is required (missing); accepted: a table with kind = dumbbell | graph | parking_lot
            <string>:1: name: must be a string; got 3
            <string>:3: flows[0].bytes: value without a unit; a size is written with its unit; got 5; accepted: a string like '180kB'
        """
        data = parse_toml(text, file)
        if "sweep" in data:
            raise located(
                ScenarioError("sweep", "a [sweep] table belongs in an experiment file; run it with `tcplab sweep`"),
                text, file,
            )
        try:
            sc = cls.from_dict(data).check_core()
        except ScenarioError as e:
            raise located(e, text, file) from None
        sc._source = (text, file)
        return sc

    def check_core(self, seed: int = 0) -> "Scenario":
        """Asks the simulator core to check the scenario as a run would, without running it.

        The core refuses what only it knows (a congestion control's parameter out of its
        range, no route between a flow's ends, ...); every such problem is raised as one
        :class:`ScenarioError` on the field that set the value (:mod:`.corecheck`).
        Returns ``self``.

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> sc.cc = CcOptions(name="bbr", params={"cycle_start": 9})
            >>> sc.check_core()
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: cc.params.cycle_start: not accepted by congestion control 'bbr'; got 9; accepted: 0..=7
        """
        problems = core_problems(self, seed)
        if problems:
            raise ScenarioError.joined(problems)
        return self

    def warnings(self) -> list[ScenarioError]:
        """What runs but is probably not what was meant, one problem each (located when
        the scenario came from a file). Today: ``[[flows]]`` entries that leave ``src``
        or ``dst`` unset on a dumbbell take the pairs from ``s0``/``d0`` again, each
        entry on its own, so two such entries share hosts; when some pairs then carry
        no flow at all, that is reported (docs/scenarios.md, "Flows").

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML.replace("pairs = 1", "pairs = 4") + '[[flows]]\\nbytes = "1kB"\\n')
            >>> [w.one_line() for w in sc.warnings()]  # doctest: +NORMALIZE_WHITESPACE
            ['<string>:16: flows[1]: its flows take the default hosts from s0/d0 again, so they share s0/d0 with
              flows[0] while pairs 1, 2, 3 carry no flow; set src and dst to spread them (e.g. src = "s1", dst = "d1")']
        """
        topo = self.topology
        if not isinstance(topo, Dumbbell):
            return []
        pairs = topo.pairs
        used: set[int] = set()
        for flow in self.flows:  # pairs named explicitly
            for end in (flow.src, flow.dst):
                for node in [end] if isinstance(end, str) else (end or []):
                    if node[:1] in "sd" and node[1:].isdigit():
                        used.add(int(node[1:]))
        by_default: list[tuple[int, set[int]]] = []
        for i, flow in enumerate(self.flows):
            if flow.src is None or flow.dst is None:
                mine = {j % pairs for j in range(min(flow.count, pairs))}
                by_default.append((i, mine))
                used |= mine
        unused = sorted(set(range(pairs)) - used)
        out: list[ScenarioError] = []
        taken: dict[int, int] = {}
        for i, mine in by_default:
            shared = sorted(k for k in mine if k in taken)
            if shared and unused:
                hosts = ", ".join(f"s{k}/d{k}" for k in shared[:3]) + (", ..." if len(shared) > 3 else "")
                others = ", ".join(f"flows[{j}]" for j in sorted({taken[k] for k in shared}))
                spare = ", ".join(str(k) for k in unused[:5]) + (", ..." if len(unused) > 5 else "")
                out.append(ScenarioError(
                    f"flows[{i}]", f"its flows take the default hosts from s0/d0 again, so they share {hosts} with "
                    f"{others} while pairs {spare} carry no flow; set src and dst to spread them "
                    f"(e.g. src = \"s{unused[0]}\", dst = \"d{unused[0]}\")"))
            for k in mine:
                taken.setdefault(k, i)
        if self._source is not None:
            text, file = self._source
            out = [located(w, text, file) for w in out]
        return out

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Reads and validates a scenario file (see :func:`load`)."""
        return load(path)


def load(path: str | Path) -> Scenario:
    """Reads a scenario file, validating it completely.

    Errors are :class:`ScenarioError` with ``file`` and ``line`` set.
    """
    text = read_text(path)
    return Scenario.from_toml(text, str(path))
