"""The simulator core's own checks, run without running, with each refusal traced to its field.

The Python models check units, ranges and references between tables; the core
(``crates/tcplab-core``) checks what only it knows: a congestion control's parameters
(CUBIC's ``beta`` in (0, 1)), a queue's or an error model's configuration, a route
between every flow's ends. :func:`core_problems` asks it (``tcplab._core.validate``:
the core builds the simulation exactly as a run would, reports every problem, runs
nothing) and turns each message into a :class:`ScenarioError` whose path is the
scenario-file field that set the value, so the locator (:mod:`.locate`) finds its line.

A core message names what the core sees: an expanded flow (``flows[7] ('b.1')``,
counted after flow groups are expanded) or a link by name (``link 'access_s3'``).
:func:`field_of` maps these back: a flow to the ``[[flows]]`` entry that made it, a
congestion-control parameter to the flow's ``cc`` table or to ``[cc]``, whichever set
it, a link to the table that configures it (``topology.sender_access`` for every
``access_s<i>``).

Example:
    >>> from tcplab.scenario import Scenario, CcOptions, EXAMPLE_TOML
    >>> sc = Scenario.from_toml(EXAMPLE_TOML)
    >>> sc.cc = CcOptions(name="cubic", params={"beta": 7})
    >>> [str(e) for e in core_problems(sc)]
    ["cc.params.beta: not accepted by congestion control 'cubic'; got 7; accepted: 0 < beta < 1"]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tcplab import _core
from tcplab.scenario.errors import UNSET, ScenarioError
from tcplab.scenario.network import Dumbbell, Graph, ParkingLot

if TYPE_CHECKING:  # pragma: no cover
    from tcplab.scenario.model import Scenario

__all__ = ["core_problems", "field_of"]

_FLOW = re.compile(r"^flows\[(\d+)\] \('(?:.*?)'\)(?=[.:])")
_LINK = re.compile(r"^link '(.*?)'(?: (queue|error|link_layer|mac)\b:?)? ?")
_CC_PARAM = re.compile(r"^cc '([\w-]+)' params: (\w+) = (.*?); accepted: (.*)$")
_CC_PARAMS = re.compile(r"^cc '([\w-]+)' params: (.*)$")
_FIELD = re.compile(r"^\.([A-Za-z_][\w.]*?)(?::\s*| (?=must|\()|$)")
_LEADING_PATH = re.compile(r"^((?:topology|record|workload|warmup|duration|max_duration)(?:\.[A-Za-z_]\w*|\[\d+\])*)")
_CORE_TO_FILE = {"packet_bytes": "packet_size"}


def core_problems(sc: "Scenario", seed: int = 0) -> list[ScenarioError]:
    """Every problem the core finds in ``sc`` (resolved with ``seed``), as located-ready errors.

    Empty when the core would run it. Start jitter and a ``[workload]`` depend on the
    seed; every other check does not.
    """
    problems: dict[str, ScenarioError] = {}
    for message in _core.validate(sc.to_core_json(seed), seed):
        e = field_of(sc, message)
        problems.setdefault(e.one_line(), e)  # the flows of one group share their problems
    return list(problems.values())


def field_of(sc: "Scenario", message: str) -> ScenarioError:
    """The core's ``message`` as a :class:`ScenarioError` on the field that set the value.

    Example:
        >>> from tcplab.scenario import Scenario, EXAMPLE_TOML
        >>> sc = Scenario.from_toml(EXAMPLE_TOML)
        >>> str(field_of(sc, "link 'bottleneck' queue: drop-tail limit must be at least 1"))
        'topology.bottleneck.queue.limit: drop-tail limit must be at least 1'
        >>> str(field_of(sc, "flows[0] ('flow0'): no route between 's0' and 'd0'"))
        "flows[0].dst: no route between 's0' and 'd0'"
    """
    message = " ".join(message.split())
    m = _FLOW.match(message)
    if m:
        return _flow_problem(sc, int(m.group(1)), message[m.end():])
    m = _LINK.match(message)
    if m:
        return _link_problem(sc, m.group(1), m.group(2), message[m.end():])
    m = _LEADING_PATH.match(message)
    path = m.group(1) if m else ""
    return ScenarioError(path, message)


def _entry_of(sc: "Scenario", k: int) -> int | None:
    """The ``[[flows]]`` entry that expands into the core's flow ``k`` (None: a [workload] flow)."""
    first = 0
    for i, flow in enumerate(sc.flows):
        if k < first + flow.count:
            return i
        first += flow.count
    return None


def _flow_problem(sc: "Scenario", k: int, rest: str) -> ScenarioError:
    i = _entry_of(sc, k)
    if i is None:
        return ScenarioError("workload", f"a generated flow: {rest.lstrip('.: ')}")
    flow = sc.flows[i]
    entry = f"flows[{i}]"
    if rest.startswith(":"):
        detail = rest[1:].strip()
        if detail.startswith("no route") or "same node" in detail:  # on the destination's line
            alias = type(flow).model_fields["dst"].alias or "dst"
            return ScenarioError(f"{entry}.{alias}", detail)
        t = re.match(r"^tcp\.(\w+)", detail)
        if t:
            own = flow.tcp is not None and getattr(flow.tcp, t.group(1), None) is not None
            return ScenarioError(f"{entry}.tcp.{t.group(1)}" if own else f"tcp.{t.group(1)}", detail)
        return ScenarioError(entry, detail)
    f = _FIELD.match(rest)
    if not f:
        return ScenarioError(entry, rest.strip())
    field, detail = f.group(1), rest[f.end():].strip() or rest.strip()
    if field == "cc":
        return _cc_problem(sc, i, detail)
    head, _, tail = field.partition(".")
    field = ".".join([_CORE_TO_FILE.get(head, head), *([tail] if tail else [])])
    if field == "bytes" and getattr(flow, "bytes", None) is None and getattr(flow, "bytes_total", None) is not None:
        field = "bytes_total"
    return ScenarioError(f"{entry}.{field}", detail)


def _cc_problem(sc: "Scenario", i: int, detail: str) -> ScenarioError:
    """A congestion control's refusal, on the ``params`` key (or ``name``) of the table that set it."""
    flow = sc.flows[i]
    own = getattr(flow, "cc", None)
    m = _CC_PARAM.match(detail)
    if m:
        algo, param, value, accepted = m.groups()
        if own is not None and param in own.params:
            path = f"flows[{i}].cc.params.{param}"
        elif param in sc.cc.params and (own is None or own.name in (None, sc.cc.name)):
            path = f"cc.params.{param}"
        else:
            path = f"flows[{i}].cc" if own is not None else "cc"
        return ScenarioError(path, f"not accepted by congestion control '{algo}'", value=_number(value),
                             accepted=accepted)
    m = _CC_PARAMS.match(detail)
    table = f"flows[{i}].cc" if own is not None else "cc"
    if m:
        return ScenarioError(f"{table}.params", f"congestion control '{m.group(1)}': {m.group(2)}")
    return ScenarioError(f"{table}.name" if "unknown congestion control" in detail else table, detail)


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text if text else UNSET


def _link_problem(sc: "Scenario", name: str, part: str | None, detail: str) -> ScenarioError:
    """A link's refusal, on the field of the table that configures the link (``topology....``)."""
    if part and detail.startswith("."):  # "link 'x' mac.slot_bytes must ...": the part was split off
        detail = part + detail
    key = None
    m = re.match(r"^([\w-]+)\.(\w+)", detail)  # "fq_codel.target ...", "error.per ...", "mac.slot_bytes ..."
    if m:
        key = m.group(2)
        if part is None and m.group(1) in ("mac", "link_layer"):
            part = m.group(1)
    else:
        m = re.match(r"^drop-tail (?:byte )?(limit|semantics)\b", detail)
        key = m.group(1) if m else None
    table = _link_table(sc, name, part or "")
    path = table
    if part and not table.endswith("access_queue"):
        path = f"{path}.{part}"
    if key:
        path = f"{path}.{key}"
    return ScenarioError(path, detail)


def _link_table(sc: "Scenario", name: str, part: str) -> str:
    """The path of the table that sets link ``name``'s ``part`` (queue, error, mac, ...)."""
    topo = sc.topology
    if isinstance(topo, Dumbbell):
        if name == "bottleneck":
            return "topology.bottleneck"
        if name == "bottleneck_rev":
            return "topology.bottleneck_reverse" if topo.bottleneck_reverse is not None else "topology.bottleneck"
        if name.startswith("access_s"):
            return "topology.sender_access"
        if name.startswith("access_d"):
            return "topology.receiver_access"
    if isinstance(topo, Graph):
        for j, link in enumerate(topo.links):
            if link.name == name:
                return f"topology.links[{j}]"
    if isinstance(topo, ParkingLot):
        if re.fullmatch(r"bb\d+", name):
            return "topology.backbone"
        if re.fullmatch(r"bb\d+_rev", name):
            return "topology.backbone_reverse" if topo.backbone_reverse is not None else "topology.backbone"
        if name.startswith("acc_"):
            return "topology.access_queue" if part == "queue" else "topology.access_rate"
    return "topology"
