"""The published JSON Schemas of scenario and experiment files, and of study files, for editors.

``tcplab schema`` prints the first and ``schema/scenario.schema.json`` is a checked-in
copy; ``tcplab schema --study`` prints the second (:func:`study_json_schema`, which embeds
the first for a study's ``[scenario]``), checked in as ``schema/study.schema.json`` (tests
fail when they drift). With Taplo / Even Better TOML (a ``#:schema`` directive at
the top of a file, or ``.taplo.toml``), an editor then completes keys, shows each
field's meaning, unit, range and default on hover, and underlines bad fields.

The schema describes the **file** form: quantities are strings with units. It is pydantic's
``model_json_schema`` of :class:`~tcplab.scenario.Scenario`, post-processed for TOML:
``null`` alternatives removed (TOML has no null: leaving a key out means "unset"),
``kind``-tagged unions written as ``if kind = X then X`` (so an editor flags the bad
field, not the whole table),
defaults written as in TOML, the ``kind`` tag required where the file must give it,
each description extended with the type, range and default of the reference
(reference.py), and an optional ``[sweep]`` table (experiment files).

Example:
    >>> s = json_schema()
    >>> s["properties"]["topology"]["allOf"][0]
    {'if': {'properties': {'kind': {'const': 'dumbbell'}}, 'required': ['kind']}, 'then': {'$ref': '#/$defs/Dumbbell'}}
    >>> "kind" in s["$defs"]["UdpFlow"]["required"], "kind" in s["$defs"]["TcpFlow"].get("required", [])
    (True, False)
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tcplab.scenario.model import Scenario
from tcplab.scenario.reference import field_default_text, field_type_text, toml_default
from tcplab.scenario.experiment import SweepTable

__all__ = ["json_schema", "json_schema_text", "study_json_schema", "study_json_schema_text", "SCHEMA_ID",
           "STUDY_SCHEMA_ID"]

SCHEMA_ID = "https://tcplab.dev/schema/scenario.schema.json"
STUDY_SCHEMA_ID = "https://tcplab.dev/schema/study.schema.json"
#: The ``[[flows]]`` variant a missing ``kind`` selects.
_DEFAULT_TAGGED = {"TcpFlow"}


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model reachable from ``root``, by class name (the schema's ``$defs`` keys)."""
    import typing

    from tcplab.scenario.errors import _unwrap

    seen: dict[str, type[BaseModel]] = {}

    def visit(tp: Any) -> None:
        tp, _ = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp.__name__ in seen:
                return
            seen[tp.__name__] = tp
            for info in tp.model_fields.values():
                visit(info.rebuild_annotation())
            return
        for arg in typing.get_args(tp):
            visit(arg)

    visit(root)
    return seen


def _drop_null(node: Any) -> Any:
    """Removes ``null`` alternatives everywhere (TOML has no null)."""
    if isinstance(node, list):
        return [_drop_null(x) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: _drop_null(v) for k, v in node.items()}
    for key in ("anyOf", "oneOf"):
        alts = node.get(key)
        if isinstance(alts, list):
            kept = [a for a in alts if a != {"type": "null"}]
            if len(kept) != len(alts):
                if len(kept) == 1:
                    node.pop(key)
                    merged = dict(kept[0])
                    merged.update(node)
                    node = merged
                else:
                    node[key] = kept
    node.pop("ge", None)
    node.pop("le", None)
    return node


def _by_kind(node: Any, defs: dict[str, Any]) -> Any:
    """Rewrites ``oneOf`` over ``kind``-tagged tables as ``if kind = X then X's schema``.

    With ``oneOf``, a validator can only say that a table matches none of the variants;
    selecting the variant by its tag first lets an editor point at the bad field itself.
    """
    if isinstance(node, list):
        return [_by_kind(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: _by_kind(v, defs) for k, v in node.items()}
    alts = node.get("oneOf")
    if isinstance(alts, list) and alts and all(isinstance(a, dict) and set(a) == {"$ref"} for a in alts):
        tags: list[tuple[str, str, str]] = []
        for a in alts:
            name = a["$ref"].rsplit("/", 1)[-1]
            kind = defs.get(name, {}).get("properties", {}).get("kind", {}).get("const")
            if kind is None:
                return node
            tags.append((kind, a["$ref"], name))
        node.pop("oneOf")
        node.pop("discriminator", None)
        default = next((k for k, _, n in tags if n in _DEFAULT_TAGGED), None)
        node["type"] = "object"
        node.setdefault("properties", {})["kind"] = {"enum": [k for k, _, _ in tags]}
        if default is None:
            node["required"] = ["kind"]
        node["allOf"] = [
            {"if": {"properties": {"kind": {"const": k}}, **({} if k == default else {"required": ["kind"]})},
             "then": {"$ref": ref}}
            for k, ref, _ in tags
        ]
    return node


def _describe(model: type[BaseModel], props: dict[str, Any], types: dict[str, str] | None = None) -> None:
    """Each field's hover text: its doc, type (``types`` names those the reference's rules
    do not) and default; its ``default`` as written in TOML."""
    for name, info in model.model_fields.items():
        key = info.alias or name
        prop = props.get(key)
        if prop is None:
            continue
        if name == "kind":
            prop["description"] = f"Selects this table's variant: `{info.default}`."
            continue
        prop.pop("x-default-doc", None)
        prop.pop("x-unit", None)
        kind = (types or {}).get(name) or field_type_text(info)
        parts = [info.description or "", f"Type: {kind}.", f"Default: {field_default_text(info)}."]
        prop["description"] = "\n\n".join(p for p in parts if p)
        prop.pop("default", None)
        if not info.is_required():
            value = toml_default(info)
            if value is not None and value != {} and value != []:
                prop["default"] = value


def _model_schema(root: type[BaseModel], types: dict[str, str] | None = None) -> dict[str, Any]:
    """``root``'s JSON Schema post-processed for TOML (module doc): no ``null``, ``kind``
    unions as ``if``/``then``, hover descriptions with type and default (``types``: see
    :func:`_describe`), ``kind`` required."""
    schema = root.model_json_schema(by_alias=True, mode="validation")
    schema = _drop_null(schema)
    defs = schema.setdefault("$defs", {})
    schema = _by_kind(schema, defs)
    defs = schema["$defs"]
    for name, model in _models(root).items():
        target = schema if model is root else defs.get(name)
        if target is None:
            continue
        _describe(model, target.get("properties", {}), types)
        if "kind" in model.model_fields and name not in _DEFAULT_TAGGED:
            req = target.setdefault("required", [])
            if "kind" not in req:
                req.insert(0, "kind")
    return schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of scenario and experiment files."""
    schema = _model_schema(Scenario)
    defs = schema["$defs"]
    sweep = SweepTable.model_fields
    defs["SweepValues"] = {
        "anyOf": [
            {"type": "array", "minItems": 1},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/SweepValues"}},
        ]
    }
    schema["properties"]["sweep"] = {
        "type": "object",
        "description": "Experiment files only (`tcplab sweep`): the grid and its replications. Every key other "
        "than `replications` and `seed` is a parameter path into the scenario mapped to its values.",
        "properties": {
            "replications": {"type": "integer", "minimum": 1, "default": 1, "description": sweep["replications"].description},
            "seed": {"type": "integer", "minimum": 0, "default": 0, "description": sweep["seed"].description},
        },
        "additionalProperties": {"$ref": "#/$defs/SweepValues"},
    }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "tcplab scenario"
    schema["description"] = (
        "A tcplab scenario file (tcplab run) or experiment file (tcplab sweep). Reference: docs/scenarios.md."
    )
    return schema


def json_schema_text() -> str:
    """:func:`json_schema` as the checked-in file's text (sorted keys, 2-space indent)."""
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def study_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of study files (``tcplab study run FILE.toml``).

    Generated from :class:`tcplab.studies.studyfile.StudyFile` as the scenario schema is
    from :class:`Scenario`; an inline ``[scenario]`` table is checked by the scenario
    schema (its definitions are embedded, the scenario itself as ``$defs/Scenario``,
    without ``[sweep]``), a string is the path of a scenario file. A metric's ``table``
    and ``aggregate`` are listed as the loader accepts them.

    Example:
        >>> s = study_json_schema()
        >>> s["properties"]["scenario"]["then"], s["$defs"]["Scenario"]["properties"]["topology"]["allOf"][0]["then"]
        ({'$ref': '#/$defs/Scenario'}, {'$ref': '#/$defs/Dumbbell'})
        >>> s["$defs"]["Claim"]["properties"]["form"]["enum"][:3]
        ['directional', 'equivalent', 'differs']
    """
    from tcplab.studies import studyfile

    schema = _model_schema(studyfile.StudyFile, studyfile.FIELD_TYPES)
    defs = schema["$defs"]
    scenario = _model_schema(Scenario)
    clash = sorted(set(defs) & (set(scenario["$defs"]) | {"Scenario"}))
    if clash:  # a study model named like a scenario model: the embedded definitions would collide
        raise RuntimeError(f"study and scenario schema definitions share names: {', '.join(clash)}")
    defs.update(scenario.pop("$defs"))
    scenario["title"] = "tcplab scenario"
    scenario["description"] = "The base scenario of a study file (docs/scenarios.md)."
    defs["Scenario"] = scenario
    base = schema["properties"]["scenario"]
    schema["properties"]["scenario"] = {
        "description": base["description"],
        "type": ["object", "string"],
        # `if`/`then` rather than `anyOf`, so an editor points at the bad field of the table.
        "if": {"type": "object"},
        "then": {"$ref": "#/$defs/Scenario"},
    }
    metric = defs["Metric"]["properties"]
    metric["table"]["enum"] = list(studyfile.METRIC_TABLES)
    metric["aggregate"]["anyOf"] = [{"enum": list(studyfile.AGGREGATES[:-1])},
                                    {"pattern": studyfile._PERCENTILE.pattern}]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = STUDY_SCHEMA_ID
    schema["title"] = "tcplab study file"
    schema["description"] = (
        "A tcplab study file (tcplab study run): a base scenario, factors, replications, metrics and claims. "
        "Reference: docs/study-files.md."
    )
    return schema


def study_json_schema_text() -> str:
    """:func:`study_json_schema` as the checked-in file's text (sorted keys, 2-space indent)."""
    return json.dumps(study_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
