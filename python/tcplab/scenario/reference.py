"""The scenario reference (``docs/scenarios.md``), generated from the models.

Each field's row (type, range, default, meaning) comes from its declaration: the
annotation (a quantity, a choice, a nested table, a ``kind``-tagged union), the
``Field`` constraints (``ge``/``le``), the default or its ``default_doc`` and the
description. The same texts feed the JSON Schema's hover documentation (schema.py), so
the editor and the page say the same thing. ``python -m tcplab.scenario`` prints it; a
test fails when the committed file drifts.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel

from tcplab import registry
from tcplab.scenario.errors import _unwrap, _variants, range_text
from tcplab.scenario.experiment import SweepTable
from tcplab.scenario.flows import Arrivals, Interval, RpcFlow, SizeDist, TcpFlow, UdpFlow
from tcplab.scenario.model import EXAMPLE_TOML, Scenario
from tcplab.scenario.network import (Access, Bernoulli, Codel, Dama, DropTail, Dumbbell, FqCodel, Graph, GraphLink, Jitter,
                                     Link, LotHost, Markov, ParkingLot, Pie, Red, Slacp, SlacpChannel)
from tcplab.scenario.record import Record
from tcplab.scenario.tcp import TCP_KINDS, CcOptions, TcpOptions, profile_value
from tcplab.scenario.workload import FlowClass, Workload

__all__ = ["reference_markdown", "field_type_text", "field_default_text", "documented_fields", "SECTIONS"]

#: The reference's sections: title and model, in reading order.
SECTIONS: list[tuple[str, type[BaseModel]]] = [
    ("Top level", Scenario),
    ("`[topology]` with `kind = \"dumbbell\"`", Dumbbell),
    ("`[topology]` with `kind = \"graph\"`", Graph),
    ("`[[topology.links]]` (graph links)", GraphLink),
    ("`[topology]` with `kind = \"parking_lot\"`", ParkingLot),
    ("`[[topology.hosts]]` (parking-lot hosts)", LotHost),
    ("Links: `bottleneck`, `bottleneck_reverse`, `backbone`, `backbone_reverse`", Link),
    ("Access links: `sender_access`, `receiver_access`", Access),
    ("A link's `jitter` (delay variation)", Jitter),
    ("Queue `kind = \"drop_tail\"`", DropTail),
    ("Queue `kind = \"red\"`", Red),
    ("Queue `kind = \"codel\"`", Codel),
    ("Queue `kind = \"fq_codel\"`", FqCodel),
    ("Queue `kind = \"pie\"`", Pie),
    ("Error model `kind = \"bernoulli\"`", Bernoulli),
    ("Error model `kind = \"markov\"`", Markov),
    ("MAC `kind = \"dama\"` (a link's `mac`)", Dama),
    ("Link layer `kind = \"slacp\"` (a link's `link_layer`)", Slacp),
    ("A SLACP channel (`link_layer.channels`)", SlacpChannel),
    ("`[tcp]` and a flow's `tcp`", TcpOptions),
    ("`[cc]` and a flow's `cc`", CcOptions),
    ("`[[flows]]` with `kind = \"tcp\"` (the default)", TcpFlow),
    ("`[[flows]]` with `kind = \"udp\"`", UdpFlow),
    ("A UDP flow's `interval`", Interval),
    ("`[[flows]]` with `kind = \"rpc\"` (request/response transactions)", RpcFlow),
    ("An rpc entry's `arrivals`", Arrivals),
    ("An rpc entry's `request_dist` and `response_dist`, a workload class's `size`", SizeDist),
    ("`[workload]` (generated flows, parking lot only)", Workload),
    ("`[[workload.classes]]`", FlowClass),
    ("`[record]`", Record),
]


def _fmt_default(value: float | None) -> str:
    """A parameter default for display; ``None`` (NaN in Rust) means "unset".

    Example:
        >>> _fmt_default(0.7), _fmt_default(None)
        ('0.7', 'unset')
    """
    return "unset" if value is None else f"{value:g}"


def documented_fields(model: type[BaseModel]) -> list[tuple[str, Any]]:
    """``(TOML name, FieldInfo)`` of a model's fields, without the ``kind`` tag."""
    return [(info.alias or name, info) for name, info in model.model_fields.items() if name != "kind"]


def _annotation(info: Any) -> Any:
    return info.rebuild_annotation() if hasattr(info, "rebuild_annotation") else info.annotation


def _marker(info: Any) -> Any:
    _, meta = _unwrap(_annotation(info))
    for m in meta:
        if hasattr(m, "doc_type"):
            return m
    return None


def field_type_text(info: Any) -> str:
    """How the reference names a field's type, with its range.

    Example:
        >>> field_type_text(Dumbbell.model_fields["pairs"])
        'integer; in [1, 100000]'
        >>> field_type_text(Link.model_fields["rate"])
        'rate (`"2Mbps"`); >= 1bps'
    """
    marker = _marker(info)
    tp, _ = _unwrap(_annotation(info))
    if marker is not None:
        text = marker.doc_type
    elif typing.get_origin(tp) in (list, tuple):
        item, _ = _unwrap(typing.get_args(tp)[0])
        text = "array of tables (by `kind`)" if _variants(item) else "array of tables"
    elif typing.get_origin(tp) in (typing.Union, types.UnionType) and _variants(tp):
        text = "table (by `kind`)"
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        text = "table"
    else:
        text = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(tp, "table")
    rng = range_text(info, "").strip()
    return f"{text}; {rng}" if rng else text


def toml_default(info: Any) -> Any:
    """A field's default as it is written in TOML (units restored), or None."""
    value = info.get_default(call_default_factory=True)
    if value is None:
        return None
    marker = _marker(info)
    if marker is not None and hasattr(marker, "format") and isinstance(value, int):
        return marker.format(value)
    if marker is not None and hasattr(marker, "to_toml"):
        return marker.to_toml(value)
    if isinstance(value, BaseModel):
        return value.to_dict()  # type: ignore[attr-defined]
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return [v.to_dict() for v in value]  # type: ignore[attr-defined]
    return value


def field_default_text(info: Any) -> str:
    """The reference's default column: **required**, a documented default, or the value."""
    if info.is_required():
        return "**required**"
    extra = info.json_schema_extra or {}
    if isinstance(extra, dict) and extra.get("x-default-doc"):
        return str(extra["x-default-doc"])
    value = toml_default(info)
    return "unset" if value is None else json.dumps(value)


def _rows(model: type[BaseModel]) -> list[str]:
    rows = []
    for name, info in documented_fields(model):
        doc = (info.description or "").replace("|", "\\|")
        rows.append(f"| `{name}` | {field_type_text(info)} | {field_default_text(info)} | {doc} |")
    return rows


def _doc_summary(doc: str) -> str:
    lines = []
    for line in doc.strip().splitlines():
        if line.strip().startswith("Example"):
            break
        lines.append(line.strip())
    return " ".join(" ".join(lines).split())


def _series_reference() -> list[str]:
    """The recorded series: what asks for each, its columns and what its rows mean
    (``tcplab.results.SERIES_DOC`` and ``COLUMNS``)."""
    from tcplab.results import COLUMNS, SERIES, SERIES_DOC

    out = ["## Recorded series", "",
           "Each series `[record]` asks for is the result's `series[\"<name>\"]` DataFrame and",
           "`series_<name>.parquet` in `tcplab run --out` and in a sweep's directory (with the",
           "sweep's parameter columns). Units are in the column names (`_s` seconds, `_ns`",
           "nanoseconds, `_bps` bit/s, `bytes` bytes); `flow_id` joins the `flows` and `udp` tables.",
           "", "| series | `[record]` | columns | rows |", "|---|---|---|---|"]
    for name in SERIES:
        field, doc = SERIES_DOC[name]
        cols = ", ".join(f"`{c}`" for c in COLUMNS[f"series_{name}"])
        out.append(f"| `{name}` | `{field}` | {cols} | {doc.replace('|', chr(92) + '|')} |")
    out.append("")
    return out


def sweep_reference() -> str:
    """The ``[sweep]`` section of the reference."""
    fields = SweepTable.model_fields
    rows = [f"| `{n}` | {field_type_text(fields[n])} | {field_default_text(fields[n])} | {fields[n].description} |"
            for n in ("replications", "seed")]
    rows.append(f"| any other key | list | | {fields['params'].description} |")
    return "\n".join([
        "## Experiment files: `[sweep]`",
        "",
        "An experiment file is a scenario plus a `[sweep]` table. Every key other than the",
        "reserved ones below is a parameter: a dotted path into the scenario (quote it, or",
        "write it as a dotted key) mapped to the list of values it takes. The grid is the full",
        "product of the lists; each grid point runs `replications` times.",
        "",
        "| field | type | default | meaning |",
        "|---|---|---|---|",
        *rows,
        "",
        "```toml",
        "[sweep]",
        "replications = 2",
        '"tcp.iw" = [3, 10]',
        '"topology.bottleneck.queue.limit" = ["20pkt", "48pkt"]',
        "```",
        "",
    ])


def reference_markdown() -> str:
    """The scenario reference (``docs/scenarios.md``), generated from the models.

    A test compares the committed file with this output, so the two cannot drift.
    """
    out = [
        "# Scenario reference",
        "",
        "<!-- Generated by `python -m tcplab.scenario > docs/scenarios.md` from the pydantic",
        "     models (python/tcplab/scenario/); tests/test_docs.py fails when this file drifts. -->",
        "",
        "A scenario file is TOML. Quantities carry units: rates `bps`, `kbps`, `Mbps`, `Gbps`",
        "(or `kbit/s`, ...); times `ns`, `us`, `ms`, `s`, `min`; sizes `B`, `kB`, `MB` (powers",
        "of 1000) and `KiB`, `MiB` (powers of 1024); packet counts `pkt`. A number without its",
        "unit, an unknown field or an impossible value is an error naming the file, the line,",
        "the field, the value and what is accepted, and nothing runs.",
        "",
        "`tcplab check FILE` and `tcplab run FILE` validate a file the same way (one code path),",
        "and both report every problem they find at once, one line each, with exit code 2:",
        "first every problem of a single field (unit, type, range, unknown key, a flow whose",
        "`stop` is not after its start, a CoDel `target` above its `interval`); when every",
        "field is well formed, every problem between tables (a flow naming an unknown node, a",
        "duplicate name) and then everything the simulator core refuses, checked by the core",
        "itself without running (a congestion-control parameter out of its range, such as",
        "CUBIC's `beta = 7`; no route between a flow's ends), each on the line that set the",
        "value. The file must be a regular file (a FIFO or a device is refused at once) in",
        "UTF-8; a byte order mark at its start is accepted. The Python builders",
        "(`tcplab.Link(...)` and the others) apply the same rules: `Link(delay=30)` is refused",
        "for its missing unit, as the file would be.",
        "",
        "Editors validate and complete scenario files as you type with the JSON Schema",
        "`schema/scenario.schema.json` (`tcplab schema` prints it); see the README.",
        "",
        "An experiment file (`tcplab sweep`) is a scenario plus a `[sweep]` table; see the end",
        "of this page.",
        "",
        "## Example",
        "",
        "```toml",
        EXAMPLE_TOML.rstrip(),
        "```",
        "",
    ]
    for title, model in SECTIONS:
        summary = "The file's top-level keys." if model is Scenario else _doc_summary(model.__doc__ or "")
        out += [f"## {title}", "", summary, "", "| field | type | default | meaning |", "|---|---|---|---|"]
        out += _rows(model)
        out.append("")
    out += [
        "## Default hosts of `[[flows]]` entries",
        "",
        "On a dumbbell, an entry that leaves `src` and `dst` unset spreads its flows over the",
        "pairs: its flow `j` goes from `s<j mod pairs>` to `d<j mod pairs>`. Each entry counts",
        "from `s0`/`d0` on its own, so two such entries share the first hosts. That is kept",
        "(every file resolves as it always has, and the bundled examples and studies rely on",
        "it), but when entries share hosts while some pairs carry no flow at all, `tcplab",
        "check` and `tcplab run` print a warning on the entry's line (`tcplab.run` issues a",
        "`tcplab.ScenarioWarning`) and name the idle pairs; give the entry `src` and `dst` (a",
        "name or a list cycled over its flows) to place its flows.",
        "",
        "```toml",
        "[topology]",
        "kind = \"dumbbell\"",
        "pairs = 4",
        "# ...",
        "[[flows]]        # s0 -> d0 and s1 -> d1",
        "count = 2",
        "[[flows]]        # warned: s0 -> d0 again while pairs 2 and 3 stay idle",
        "bytes = \"1MB\"",
        "[[flows]]        # placed explicitly",
        "src = \"s3\"",
        "dst = \"d3\"",
        "```",
        "",
    ]
    out += _series_reference()
    out += ["## TCP profiles", "", "Values of every knob per profile (from the core's registry).", ""]
    profiles = registry.profile_names()
    out.append("| knob | " + " | ".join(f"`{p}`" for p in profiles) + " |")
    out.append("|---|" + "---|" * len(profiles))
    for key in TCP_KINDS:
        out.append(f"| `{key}` | " + " | ".join(profile_value(p, key) for p in profiles) + " |")
    out.append("")
    out += ["## Congestion controls", "", "| name | parameters | reference |", "|---|---|---|"]
    for c in registry.registry()["congestion_controls"]:
        params = ", ".join(
            f"`{p['name']}` ({p.get('unit', '')}, default {_fmt_default(p['default'])})" for p in c["params"]
        ) or "none"
        out.append(f"| `{c['name']}` | {params} | {c['reference']} |")
    out.append("")
    out += [sweep_reference().rstrip(), ""]
    return "\n".join(out)
