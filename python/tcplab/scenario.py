"""Scenarios: the TOML file format, its Python API and its validation (issue 3).

A scenario describes one experiment: a topology (the dumbbell builder or an explicit
graph of nodes and unidirectional links, each with a queue and an error model), the
default TCP settings (``[tcp]``: a profile plus per-knob overrides) and congestion
control (``[cc]``), the flows (``[[flows]]``; a ``count`` turns an entry into a flow
group spread over the sender/receiver pairs) and what to record (``[record]``).

This module implements the user-facing half of the contract in SPEC.md
("Scenario files"): quantities carry units (:mod:`tcplab.units`), every field has a
documented default, and an unknown field, a missing unit or an impossible value is
one :class:`ScenarioError` naming the file, the line, the field, the value given and
what is accepted, with a "did you mean" for near misses, before anything runs.
:meth:`Scenario.to_core` produces the resolved JSON schema of the core
(``crates/tcplab-core/src/scenario.rs``): plain integers in bit/s, nanoseconds and
bytes, enums tagged by ``kind``.

The schema lives in one place: each dataclass field carries a :class:`FieldSpec`
(kind, doc, constraints) in its metadata. The validator, the TOML writer and the
reference ``docs/scenarios.md`` (:func:`reference_markdown`) all read it.

Line numbers: ``tomllib`` reports none for values, so :class:`TomlLocator` scans the
source text once, tracking ``[table]`` and ``[[array]]`` headers (with their running
indices) and ``key = value`` lines (dotted and quoted keys, keys of one-line inline
tables), and maps each dotted path (``flows[1].tcp.iw``) to the line that set it. A
path that was never written (a missing field) falls back to its nearest written
parent, e.g. the ``[[flows]]`` header. Multi-line strings are skipped.

Example:
    >>> sc = Scenario.from_toml('''
    ... name = "hspa"
    ... [topology]
    ... kind = "dumbbell"
    ... bottleneck = { rate = "2Mbps", delay = "70ms", queue = { kind = "drop_tail", limit = "48pkt" } }
    ... sender_access = { rate = "100Mbps", delay = "11ms" }
    ... receiver_access = { rate = "100Mbps", delay = "1ms" }
    ... [tcp]
    ... profile = "ns2-sack"
    ... [[flows]]
    ... bytes = "180kB"
    ... ''')
    >>> core = sc.to_core()
    >>> core["topology"]["bottleneck"]["rate"], core["flows"][0]["bytes"]
    (2000000, 180000)
    >>> Scenario.from_toml(sc.to_toml()) == sc
    True
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Union

import numpy as np
import tomli_w

from tcplab import _core, registry, units

__all__ = [
    "ScenarioError",
    "FieldSpec",
    "DropTail",
    "Bernoulli",
    "Link",
    "Access",
    "Dumbbell",
    "GraphLink",
    "Graph",
    "TcpOptions",
    "CcOptions",
    "Interval",
    "TcpFlow",
    "UdpFlow",
    "Record",
    "Scenario",
    "TomlLocator",
    "load",
    "reference_markdown",
]

_UNSET: Any = object()


class ScenarioError(ValueError):
    """A scenario that cannot run, with where and why.

    Attributes: ``path`` (dotted field path, e.g. ``flows[0].tcp.iw``), ``problem``,
    ``value`` (the value given, if any), ``accepted`` (what would be accepted),
    ``suggestion`` (a near-miss name), ``file`` and ``line`` (when loaded from a file).

    Example:
        >>> e = ScenarioError("tcp.iw", "must be at least 1", value=0, accepted="1, 2, ... or 'rfc3390'")
        >>> e.file, e.line = "s.toml", 7
        >>> str(e)
        "s.toml:7: tcp.iw: must be at least 1; got 0; accepted: 1, 2, ... or 'rfc3390'"
    """

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        value: Any = _UNSET,
        accepted: str | None = None,
        suggestion: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem
        self.value = value
        self.accepted = accepted
        self.suggestion = suggestion
        self.file = file
        self.line = line

    def prefixed(self, prefix: str) -> "ScenarioError":
        """Makes ``path`` absolute by putting ``prefix`` in front (in place)."""
        if prefix:
            if not self.path:
                self.path = prefix
            elif self.path.startswith("["):
                self.path = prefix + self.path
            else:
                self.path = f"{prefix}.{self.path}"
        return self

    def __str__(self) -> str:
        loc = ""
        if self.file is not None:
            loc = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        text = f"{loc}{self.path + ': ' if self.path else ''}{self.problem}"
        if self.value is not _UNSET:
            text += f"; got {_show(self.value)}"
        if self.accepted:
            text += f"; accepted: {self.accepted}"
        if self.suggestion:
            text += f". Did you mean '{self.suggestion}'?"
        return text



def _fmt_default(value: float | None) -> str:
    """A parameter default for display; ``None`` (NaN in Rust) means "unset".

    Example:
        >>> _fmt_default(0.7), _fmt_default(None)
        ('0.7', 'unset')
    """
    return "unset" if value is None else f"{value:g}"

def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _near(name: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(str(name), list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


# --------------------------------------------------------------------------------------
# Field specifications: the schema, shared by the validator, the writer and the docs.

_QUANTITY_PARSERS: dict[str, Callable[[object], int]] = {
    "rate": units.parse_rate,
    "time": units.parse_time,
    "size": units.parse_size,
    "packets": units.parse_packets,
}
_QUANTITY_FORMATTERS: dict[str, Callable[[int], str]] = {
    "rate": units.format_rate,
    "time": units.format_time,
    "size": units.format_size,
    "packets": lambda n: f"{n}pkt",
}
_QUANTITY_EXAMPLE = {"rate": "2Mbps", "time": "70ms", "size": "180kB", "packets": "48pkt"}


@dataclass(frozen=True)
class FieldSpec:
    """How one scenario field is read, checked, written and documented.

    ``kind`` is one of: ``rate``, ``time``, ``size``, ``packets`` (quantities with
    units), ``limit`` (packets or bytes), ``time_list`` (a time or a list of times),
    ``int``, ``float``, ``bool``, ``str``, ``str_list``, ``str_or_list``, ``iw``,
    ``params``, ``table`` (a nested table of ``cls``), ``tagged`` (a table whose
    ``tag`` key picks one of ``variants``), ``table_list`` and ``tagged_list``.
    """

    kind: str
    doc: str
    toml: str | None = None
    required: bool = False
    default_doc: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    choices: Callable[[], list[str]] | None = None
    cls: Callable[[], type] | None = None
    variants: Callable[[], dict[str, type]] | None = None
    tag: str = "kind"
    default_tag: str | None = None


def _fld(
    kind: str,
    doc: str,
    default: Any = _UNSET,
    *,
    factory: Callable[[], Any] | None = None,
    **kw: Any,
) -> Any:
    spec = FieldSpec(kind, doc, required=default is _UNSET and factory is None, **kw)
    meta = {"spec": spec}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    if default is _UNSET:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


def _spec(f: dataclasses.Field[Any]) -> FieldSpec:
    spec: FieldSpec = f.metadata["spec"]
    return spec


def _toml_name(f: dataclasses.Field[Any]) -> str:
    return _spec(f).toml or f.name


def _kind_names(spec: FieldSpec) -> list[str]:
    assert spec.variants is not None
    return list(spec.variants())


def _coerce(spec: FieldSpec, value: Any, strict: bool) -> Any:
    """Checks and normalises one value; errors carry a path relative to the value.

    ``strict`` is the file mode: quantities must then be strings with units (plain
    numbers are "a value without a unit"). The Python API also accepts integers in the
    base unit (bit/s, nanoseconds, bytes, packets).
    """
    k = spec.kind
    if value is None:
        if spec.required:
            raise ScenarioError("", "is required")
        return None
    if k in _QUANTITY_PARSERS:
        return _quantity(k, spec, value, strict)
    if k == "limit":
        if isinstance(value, tuple) and len(value) == 2 and value[0] in ("packets", "bytes"):
            if isinstance(value[1], int) and not isinstance(value[1], bool) and value[1] >= 1:
                return value
        if not isinstance(value, str):
            raise ScenarioError(
                "", "a buffer limit needs a unit", value=value, accepted="a packet count like '48pkt' or a size like '40kB'"
            )
        try:
            lim = units.parse_limit(value)
        except units.UnitError as e:
            raise ScenarioError("", str(e), accepted="'48pkt' or a size like '40kB'") from None
        if lim[1] < 1:
            raise ScenarioError("", "a buffer limit must be at least 1", value=value)
        return lim
    if k == "time_list":
        if isinstance(value, list):
            if not value:
                raise ScenarioError("", "the list of delays is empty", value=value, accepted="a time like '11ms' or a non-empty list of times")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(_quantity("time", spec, v, strict))
                except ScenarioError as e:
                    raise e.prefixed(f"[{i}]") from None
            return out
        return _quantity("time", spec, value, strict)
    if k == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScenarioError("", "must be an integer", value=value, accepted=_range_text(spec, "an integer"))
        _check_range(spec, value)
        return value
    if k == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError("", "must be a number", value=value, accepted=_range_text(spec, "a number"))
        if value != value or value in (float("inf"), float("-inf")):
            raise ScenarioError("", "must be a finite number", value=value, accepted=_range_text(spec, "a number"))
        _check_range(spec, value)
        return float(value)
    if k == "bool":
        if not isinstance(value, bool):
            raise ScenarioError("", "must be true or false", value=value, accepted="true, false")
        return value
    if k == "str":
        if not isinstance(value, str):
            raise ScenarioError("", "must be a string", value=value)
        if spec.choices is not None:
            options = spec.choices()
            if value not in options:
                raise ScenarioError(
                    "", "unknown value", value=value, accepted=", ".join(options), suggestion=_near(value, options)
                )
        return value
    if k == "str_list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ScenarioError("", "must be a list of strings", value=value)
        return list(value)
    if k == "str_or_list":
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
        raise ScenarioError("", "must be a node name or a non-empty list of node names", value=value)
    if k == "iw":
        if value == "rfc3390":
            return value
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScenarioError(
                "", "the initial window must be at least 1 segment", value=value,
                accepted="an integer number of segments >= 1, or \"rfc3390\"",
            )
        return value
    if k == "params":
        if not isinstance(value, dict):
            raise ScenarioError("", "must be a table of parameter = number", value=value)
        out_p: dict[str, float | int | bool] = {}
        for pk, pv in value.items():
            if isinstance(pv, bool) or not isinstance(pv, (int, float)) or pv != pv:
                raise ScenarioError(str(pk), "a congestion-control parameter must be a number", value=pv)
            out_p[str(pk)] = pv
        return out_p
    if k == "table":
        assert spec.cls is not None
        cls = spec.cls()
        if isinstance(value, cls):
            return value
        return _from_dict(cls, value, strict)
    if k == "tagged":
        return _tagged(spec, value, strict)
    if k in ("table_list", "tagged_list"):
        if not isinstance(value, list):
            raise ScenarioError("", "must be a list of tables (write [[...]] entries)", value=value)
        out_l = []
        for i, item in enumerate(value):
            try:
                if k == "tagged_list":
                    out_l.append(_tagged(spec, item, strict))
                else:
                    assert spec.cls is not None
                    cls = spec.cls()
                    out_l.append(item if isinstance(item, cls) else _from_dict(cls, item, strict))
            except ScenarioError as e:
                raise e.prefixed(f"[{i}]") from None
        return out_l
    raise AssertionError(f"unknown field kind {k}")  # pragma: no cover


def _quantity(k: str, spec: FieldSpec, value: Any, strict: bool) -> int:
    parse = _QUANTITY_PARSERS[k]
    dim = "packet count" if k == "packets" else k
    if isinstance(value, str):
        try:
            n = parse(value)
        except units.UnitError as e:
            raise ScenarioError("", str(e)) from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError("", f"must be a {dim} with a unit", value=value, accepted=f"a string like '{_QUANTITY_EXAMPLE[k]}'")
    elif strict:
        raise ScenarioError(
            "", f"value without a unit; a {dim} is written with its unit", value=value,
            accepted=f"a string like '{_QUANTITY_EXAMPLE[k]}'",
        )
    elif isinstance(value, float) or value < 0:
        raise ScenarioError("", f"a {dim} given as a number must be a non-negative integer in its base unit", value=value)
    else:
        n = value
    _check_range(spec, n, shown=value)
    return n


def _range_text(spec: FieldSpec, what: str) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        return f"{what} in [{_min_text(spec)}, {_bound_text(spec, spec.maximum)}]"
    if spec.minimum is not None:
        return f"{what} >= {_min_text(spec)}"
    return what


def _check_range(spec: FieldSpec, n: float, shown: Any = _UNSET) -> None:
    shown = n if shown is _UNSET else shown
    if spec.minimum is not None and n < spec.minimum:
        raise ScenarioError("", f"must be at least {_min_text(spec)}", value=shown, accepted=_range_text(spec, "a value"))
    if spec.maximum is not None and n > spec.maximum:
        raise ScenarioError("", f"must be at most {_bound_text(spec, spec.maximum)}", value=shown, accepted=_range_text(spec, "a value"))


def _min_text(spec: FieldSpec) -> str:
    assert spec.minimum is not None
    return _bound_text(spec, spec.minimum)


def _bound_text(spec: FieldSpec, bound: float) -> str:
    if spec.kind in _QUANTITY_FORMATTERS and bound >= 0:
        return _QUANTITY_FORMATTERS[spec.kind](int(bound))
    return f"{bound:g}"


def _tagged(spec: FieldSpec, value: Any, strict: bool) -> Any:
    assert spec.variants is not None
    variants = spec.variants()
    if isinstance(value, tuple(variants.values())):
        return value
    if not isinstance(value, dict):
        raise ScenarioError("", "must be a table", value=value)
    tag = value.get(spec.tag, spec.default_tag)
    if tag is None:
        raise ScenarioError(spec.tag, "is required", accepted=", ".join(variants))
    if not isinstance(tag, str) or tag not in variants:
        raise ScenarioError(
            spec.tag, "unknown kind", value=tag, accepted=", ".join(variants),
            suggestion=_near(str(tag), variants),
        )
    rest = {k: v for k, v in value.items() if k != spec.tag}
    return _from_dict(variants[tag], rest, strict)


def _from_dict(cls: type, data: Any, strict: bool = True) -> Any:
    """Builds dataclass ``cls`` from a TOML table; errors are relative to ``data``."""
    if not isinstance(data, dict):
        raise ScenarioError("", "must be a table", value=data)
    flds = {_toml_name(f): f for f in dataclasses.fields(cls) if "spec" in f.metadata}
    for key in data:
        if key not in flds:
            raise ScenarioError(
                str(key), "unknown field", accepted=", ".join(flds), suggestion=_near(str(key), flds)
            )
    kwargs: dict[str, Any] = {}
    for tname, f in flds.items():
        spec = _spec(f)
        if tname in data:
            try:
                kwargs[f.name] = _coerce(spec, data[tname], strict)
            except ScenarioError as e:
                raise e.prefixed(tname) from None
        elif spec.required:
            raise ScenarioError(tname, "is required (missing)", accepted=_accepted_for(spec))
    return cls(**kwargs)


def _accepted_for(spec: FieldSpec) -> str:
    if spec.kind in _QUANTITY_EXAMPLE:
        return f"a {spec.kind} like '{_QUANTITY_EXAMPLE[spec.kind]}'"
    if spec.kind == "tagged" and spec.variants is not None:
        return "a table with kind = " + " | ".join(spec.variants())
    return spec.kind


class _Node:
    """Base of every schema dataclass: normalises its fields after construction."""

    def __post_init__(self) -> None:
        self._normalise()

    def _normalise(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if "spec" not in f.metadata:
                continue
            try:
                value = _coerce(_spec(f), getattr(self, f.name), strict=False)
            except ScenarioError as e:
                raise e.prefixed(_toml_name(f)) from None
            object.__setattr__(self, f.name, value)
        self._check()

    def _check(self) -> None:
        """Cross-field checks of one table (overridden where needed)."""

    def to_dict(self) -> dict[str, Any]:
        """The TOML table for this object: units restored, defaults left out."""
        out: dict[str, Any] = {}
        kind = getattr(type(self), "KIND", None)
        if kind is not None:
            out[getattr(type(self), "TAG", "kind")] = kind
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if "spec" not in f.metadata:
                continue
            value = getattr(self, f.name)
            spec = _spec(f)
            if value is None:
                continue
            if not spec.required:
                default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                if value == default and not (isinstance(value, _Node) and value.to_dict()):
                    continue
            shown = _to_toml_value(spec, value)
            if shown == {} and not spec.required:
                continue
            out[_toml_name(f)] = shown
        return out


def _to_toml_value(spec: FieldSpec, value: Any) -> Any:
    k = spec.kind
    if k in _QUANTITY_FORMATTERS:
        return _QUANTITY_FORMATTERS[k](value)
    if k == "limit":
        return units.format_limit(value[0], value[1])
    if k == "time_list":
        return [units.format_time(v) for v in value] if isinstance(value, list) else units.format_time(value)
    if isinstance(value, _Node):
        return value.to_dict()
    if isinstance(value, list):
        return [v.to_dict() if isinstance(v, _Node) else v for v in value]
    if isinstance(value, dict):
        return dict(value)
    return value


# --------------------------------------------------------------------------------------
# Queues and error models


@dataclass(kw_only=True)
class DropTail(_Node):
    """Drop-tail FIFO (``kind = "drop_tail"``) in seed 003's three semantics.

    Example:
        >>> DropTail(limit="48pkt").to_core()
        {'kind': 'drop_tail', 'limit': {'packets': 48}, 'semantics': None, 'count_in_service': False}
        >>> DropTail(limit="40kB", semantics="byte_loose").semantics
        'byte_loose'
    """

    KIND: ClassVar[str] = "drop_tail"
    limit: tuple[str, int] | str = _fld(
        "limit", "Buffer limit: packets for `slot` (e.g. \"48pkt\"), bytes for the byte semantics (e.g. \"40kB\")."
    )
    semantics: str | None = _fld(
        "str",
        "`slot`: drop if occupancy >= limit packets; `byte_strict`: drop if occupancy + packet >= limit bytes; "
        "`byte_loose`: drop if occupancy > limit bytes (dummynet).",
        None,
        default_doc="`slot` for a packet limit, `byte_strict` for a byte limit",
        choices=lambda: ["slot", "byte_strict", "byte_loose"],
    )
    count_in_service: bool = _fld(
        "bool", "Whether the packet being transmitted counts towards the occupancy (ns-2 DropTail: true).", False
    )

    def _check(self) -> None:
        assert isinstance(self.limit, tuple)
        if self.semantics == "slot" and self.limit[0] != "packets":
            raise ScenarioError(
                "limit", "semantics 'slot' needs a limit in packets", value=units.format_limit(*self.limit),
                accepted="a packet count like '48pkt'",
            )
        if self.semantics in ("byte_strict", "byte_loose") and self.limit[0] != "bytes":
            raise ScenarioError(
                "limit", f"semantics '{self.semantics}' needs a limit in bytes", value=units.format_limit(*self.limit),
                accepted="a size like '40kB'",
            )

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::DropTail``."""
        assert isinstance(self.limit, tuple)
        return {
            "kind": self.KIND,
            "limit": {self.limit[0]: self.limit[1]},
            "semantics": self.semantics,
            "count_in_service": self.count_in_service,
        }


@dataclass(kw_only=True)
class Bernoulli(_Node):
    """Independent packet losses with probability ``per`` (``kind = "bernoulli"``).

    Example:
        >>> Bernoulli(per=0.01).to_core()
        {'kind': 'bernoulli', 'per': 0.01}
    """

    KIND: ClassVar[str] = "bernoulli"
    per: float = _fld("float", "Packet error rate, a probability in [0, 1].", minimum=0.0, maximum=1.0)

    def to_core(self) -> dict[str, Any]:
        """The core's ``ErrorConfig::Bernoulli``."""
        return {"kind": self.KIND, "per": self.per}


@dataclass(kw_only=True)
class Red(_Node):
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

    KIND: ClassVar[str] = "red"
    limit: tuple[str, int] | str = _fld("limit", "Physical buffer, in packets or bytes (ns-2 `limit_`).")
    count_in_service: bool = _fld("bool", "Whether the packet in service counts towards `limit`.", False)
    bytes: bool = _fld("bool", "Byte mode (ns-2 `bytes_`): drop probability scaled by size / mean_pktsize.", True)
    queue_in_bytes: bool = _fld("bool", "Average and thresholds in bytes (ns-2 `queue_in_bytes_`).", True)
    mean_pktsize: int | str = _fld("size", "Mean packet size (ns-2 `mean_pktsize_`).", 500, minimum=1)
    idle_pktsize: int | str | None = _fld(
        "size", "Packet size for the idle-time decay (ns-2 `idle_pktsize_`).", None, default_doc="`mean_pktsize`",
        minimum=1,
    )
    q_weight: float = _fld("float", "EWMA weight w_q of the average queue.", 0.002, minimum=0.0, maximum=1.0)
    min_th: float | None = _fld(
        "float", "Minimum threshold, packets (ns-2 `thresh_`).", None,
        default_doc="ns-2's automatic max(5, 0.005 s * link packets/s / 2)", minimum=0.0,
    )
    max_th: float | None = _fld(
        "float", "Maximum threshold, packets (ns-2 `maxthresh_`).", None, default_doc="3 * min_th", minimum=0.0,
    )
    max_p: float = _fld("float", "Drop probability at max_th (ns-2 `linterm_` = 1 / max_p).", 0.1,
                        minimum=0.0, maximum=1.0)
    gentle: bool = _fld("bool", "Gentle RED: p rises from max_p to 1 between max_th and 2 max_th.", True)
    wait: bool = _fld("bool", "Wait between drops (ns-2 `wait_`).", True)
    idle_integer_m: bool = _fld("bool", "Truncate the idle count m to an integer, as ns-2 does.", False)

    def _check(self) -> None:
        if self.min_th is not None and self.max_th is not None and self.max_th <= self.min_th:
            raise ScenarioError("max_th", "must exceed min_th", value=self.max_th, accepted=f"a value above {self.min_th}")

    def to_core(self) -> dict[str, Any]:
        """The core's ``QueueConfig::Red`` (the link fills in its rate)."""
        assert isinstance(self.limit, tuple)
        core: dict[str, Any] = {
            "kind": self.KIND, "limit": {self.limit[0]: self.limit[1]}, "count_in_service": self.count_in_service,
            "bytes": self.bytes, "queue_in_bytes": self.queue_in_bytes, "mean_pktsize": self.mean_pktsize,
            "idle_pktsize": self.idle_pktsize, "q_weight": self.q_weight, "max_p": self.max_p,
            "gentle": self.gentle, "wait": self.wait, "idle_integer_m": self.idle_integer_m,
        }
        for name in ("min_th", "max_th"):
            value = getattr(self, name)
            core[name] = None if value is None else float(value)
        return core


_MARKOV_FORMS: dict[str, tuple[str, ...]] = {
    "per_packet": ("p_gb", "p_bg"),
    "sojourn": ("mean_good", "mean_bad"),
    "time_series": ("good_min", "good_max", "bad_min", "bad_max"),
    "preset": ("name",),
}


@dataclass(kw_only=True)
class Markov(_Node):
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

    KIND: ClassVar[str] = "markov"
    form: str = _fld("str", "Parameterisation.", choices=lambda: list(_MARKOV_FORMS))
    p_gb: float | None = _fld("float", "per_packet: probability good -> bad after a packet.", None,
                              minimum=0.0, maximum=1.0)
    p_bg: float | None = _fld("float", "per_packet: probability bad -> good after a packet.", None,
                              minimum=0.0, maximum=1.0)
    mean_good: int | str | None = _fld("time", "sojourn: mean good-state duration.", None)
    mean_bad: int | str | None = _fld("time", "sojourn: mean bad-state duration.", None)
    good_min: int | str | None = _fld("time", "time_series: shortest good state (gap between bursts).", None)
    good_max: int | str | None = _fld("time", "time_series: longest good state.", None)
    bad_min: int | str | None = _fld("time", "time_series: shortest bad state (burst length).", None)
    bad_max: int | str | None = _fld("time", "time_series: longest bad state.", None)
    loss_good: float = _fld("float", "Loss probability in the good state.", 0.0, minimum=0.0, maximum=1.0)
    loss_bad: float = _fld("float", "Loss probability in the bad state.", 1.0, minimum=0.0, maximum=1.0)
    name: str | None = _fld("str", "preset: seed 004 row.", None,
                            choices=lambda: ["low", "medium", "high", "vhigh", "huge"])

    def _check(self) -> None:
        for f in _MARKOV_FORMS[self.form]:
            if getattr(self, f) is None:
                raise ScenarioError(f, f"required by form '{self.form}'", value="(missing)",
                                    accepted=", ".join(_MARKOV_FORMS[self.form]))
        others = {f for fs in _MARKOV_FORMS.values() for f in fs} - set(_MARKOV_FORMS[self.form])
        for f in sorted(others):
            if getattr(self, f) is not None:
                raise ScenarioError(f, f"does not apply to form '{self.form}'", value=getattr(self, f),
                                    accepted=", ".join(_MARKOV_FORMS[self.form]))

    def to_core(self) -> dict[str, Any]:
        """The core's ``ErrorConfig::Markov``."""
        core: dict[str, Any] = {"kind": self.KIND, "form": self.form}
        core.update({f: getattr(self, f) for f in _MARKOV_FORMS[self.form]})
        if self.form != "preset":
            core.update(loss_good=self.loss_good, loss_bad=self.loss_bad)
        return core


def _queue_variants() -> dict[str, type]:
    return {"drop_tail": DropTail, "red": Red}


def _error_variants() -> dict[str, type]:
    return {"bernoulli": Bernoulli, "markov": Markov}


QueueSpec = DropTail | Red
ErrorSpec = Bernoulli | Markov

# --------------------------------------------------------------------------------------
# Topology


@dataclass(kw_only=True)
class Link(_Node):
    """One direction of a link: rate, propagation delay, queue, error model.

    Example:
        >>> Link(rate="2Mbps", delay="70ms").to_core()
        {'rate': 2000000, 'delay': 70000000, 'queue': None, 'error': None}
        >>> Link(preset="edge").to_core()["rate"], Link(preset="adsl1-down", delay="25ms").to_core()["delay"]
        (160000, 25000000)
    """

    preset: str | None = _fld(
        "str", "A named link from the seeds (see `tcplab list`); `rate`/`delay` given here override it.", None,
        choices=lambda: list(registry.link_presets()),
    )
    rate: int | str | None = _fld("rate", "Transmission rate.", None, default_doc="the preset's (required without one)",
                                  minimum=1)
    delay: int | str | None = _fld("time", "One-way propagation delay.", None,
                                   default_doc="the preset's (required without one)")
    queue: DropTail | Red | dict[str, Any] | None = _fld(
        "tagged", "Queue at the transmitting end.", None,
        default_doc='drop-tail, 1000 packets (`{ kind = "drop_tail", limit = "1000pkt" }`)',
        variants=_queue_variants,
    )
    error: Bernoulli | Markov | dict[str, Any] | None = _fld(
        "tagged", "Error model applied as packets finish transmission.", None,
        default_doc="no losses", variants=_error_variants,
    )

    def _check(self) -> None:
        preset = registry.link_presets().get(self.preset) if self.preset else None
        for name in ("rate", "delay"):
            if getattr(self, name) is None:
                value = preset.get(name) if preset else None
                if value is None:
                    why = f"preset '{self.preset}' leaves it open" if preset else "no preset given"
                    raise ScenarioError(name, f"required ({why})", value="(missing)",
                                        accepted='a quantity with a unit, e.g. "2Mbps" / "70ms"')
                object.__setattr__(self, name, value)

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkParams``."""
        return {
            "rate": self.rate,
            "delay": self.delay,
            "queue": self.queue.to_core() if isinstance(self.queue, _Node) else None,
            "error": self.error.to_core() if isinstance(self.error, _Node) else None,
        }


@dataclass(kw_only=True)
class Access(_Node):
    """Access links of one side of a dumbbell (both directions).

    Example:
        >>> Access(rate="100Mbps", delay=["5ms", "10ms"]).to_core()
        {'rate': 100000000, 'delay': [5000000, 10000000], 'queue': None}
    """

    rate: int | str = _fld("rate", "Rate of every access link on this side.", minimum=1)
    delay: int | str | list[int | str] = _fld(
        "time_list", "One propagation delay for every pair, or a list with one delay per pair."
    )
    queue: DropTail | Red | dict[str, Any] | None = _fld(
        "tagged", "Queue of the access links.", None, default_doc="drop-tail, 1000 packets", variants=_queue_variants
    )

    def to_core(self) -> dict[str, Any]:
        """The core's ``AccessSpec``."""
        return {
            "rate": self.rate,
            "delay": self.delay,
            "queue": self.queue.to_core() if isinstance(self.queue, _Node) else None,
        }


@dataclass(kw_only=True)
class Dumbbell(_Node):
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

    KIND: ClassVar[str] = "dumbbell"
    pairs: int = _fld("int", "Number of sender/receiver pairs.", 1, minimum=1, maximum=100_000)
    bottleneck: Link | dict[str, Any] = _fld("table", "The r0 -> r1 link (downstream).", cls=lambda: Link)
    bottleneck_reverse: Link | dict[str, Any] | None = _fld(
        "table", "The r1 -> r0 link.", None,
        default_doc="same rate and delay as `bottleneck`, default queue, no errors", cls=lambda: Link,
    )
    sender_access: Access | dict[str, Any] = _fld("table", "Sender access links, s_i <-> r0.", cls=lambda: Access)
    receiver_access: Access | dict[str, Any] = _fld("table", "Receiver access links, r1 <-> d_i.", cls=lambda: Access)

    def _check(self) -> None:
        for side in ("sender_access", "receiver_access"):
            acc = getattr(self, side)
            if isinstance(acc.delay, list) and len(acc.delay) != self.pairs:
                raise ScenarioError(
                    f"{side}.delay", f"needs one delay per pair ({self.pairs})",
                    value=[units.format_time(d) for d in acc.delay],
                )

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
        assert isinstance(self.bottleneck, Link) and isinstance(self.sender_access, Access)
        assert isinstance(self.receiver_access, Access)
        rev = self.bottleneck_reverse
        return {
            "kind": self.KIND,
            "pairs": self.pairs,
            "bottleneck": self.bottleneck.to_core(),
            "bottleneck_reverse": rev.to_core() if isinstance(rev, Link) else None,
            "sender_access": self.sender_access.to_core(),
            "receiver_access": self.receiver_access.to_core(),
        }


@dataclass(kw_only=True)
class GraphLink(_Node):
    """A unidirectional link of an explicit graph.

    Example:
        >>> GraphLink(name="ab", from_="a", to="b", rate="10Mbps", delay="5ms").to_core()["from"]
        'a'
    """

    name: str = _fld("str", "Link name, used by `[record]` and in the tables.")
    from_: str = _fld("str", "Transmitting node.", toml="from")
    to: str = _fld("str", "Receiving node.")
    rate: int | str = _fld("rate", "Transmission rate.", minimum=1)
    delay: int | str = _fld("time", "One-way propagation delay.")
    queue: DropTail | Red | dict[str, Any] | None = _fld(
        "tagged", "Queue at the transmitting end.", None, default_doc="drop-tail, 1000 packets", variants=_queue_variants
    )
    error: Bernoulli | Markov | dict[str, Any] | None = _fld(
        "tagged", "Error model.", None, default_doc="no losses", variants=_error_variants
    )

    def to_core(self) -> dict[str, Any]:
        """The core's ``LinkSpec`` (``LinkParams`` flattened in)."""
        return {
            "name": self.name,
            "from": self.from_,
            "to": self.to,
            **Link(rate=self.rate, delay=self.delay, queue=self.queue, error=self.error).to_core(),
        }


@dataclass(kw_only=True)
class Graph(_Node):
    """An explicit graph (``kind = "graph"``): nodes and unidirectional links.

    Example:
        >>> g = Graph(nodes=["a", "b"], links=[GraphLink(name="ab", from_="a", to="b", rate="1Mbps", delay="1ms")])
        >>> g.link_names()
        ['ab']
    """

    KIND: ClassVar[str] = "graph"
    nodes: list[str] = _fld("str_list", "Node names.")
    links: list[GraphLink] = _fld(
        "table_list", "The links, as `[[topology.links]]` entries.", cls=lambda: GraphLink
    )

    def _check(self) -> None:
        if len(set(self.nodes)) != len(self.nodes):
            dup = next(n for n in self.nodes if self.nodes.count(n) > 1)
            raise ScenarioError("nodes", "duplicate node name", value=dup)
        seen: set[str] = set()
        for i, link in enumerate(self.links):
            if link.name in seen:
                raise ScenarioError(f"links[{i}].name", "duplicate link name", value=link.name)
            seen.add(link.name)
            for end, node in (("from", link.from_), ("to", link.to)):
                if node not in self.nodes:
                    raise ScenarioError(
                        f"links[{i}].{end}", "unknown node", value=node, accepted=", ".join(self.nodes),
                        suggestion=_near(node, self.nodes),
                    )

    def node_names(self) -> list[str]:
        """Node names."""
        return list(self.nodes)

    def link_names(self) -> list[str]:
        """Link names."""
        return [link.name for link in self.links]

    def to_core(self) -> dict[str, Any]:
        """The core's ``Topology::Graph``."""
        return {"kind": self.KIND, "nodes": list(self.nodes), "links": [lk.to_core() for lk in self.links]}


def _topology_variants() -> dict[str, type]:
    return {"dumbbell": Dumbbell, "graph": Graph}


Topology = Union[Dumbbell, Graph]

# --------------------------------------------------------------------------------------
# TCP and congestion control


def _profile_default(core_key: str) -> str:
    return f"from the profile (linux: {_profile_value('linux', core_key)})"


def _profile_value(profile: str, core_key: str) -> str:
    try:
        v = registry.profile_config(profile)[core_key]
    except Exception:  # registry shape changed: the docs then just say "from the profile"
        return "?"
    spec = _TCP_KINDS.get(core_key)
    if v is None:
        return "unbounded"
    if spec in _QUANTITY_FORMATTERS and isinstance(v, int):
        return _QUANTITY_FORMATTERS[spec](v)
    return json.dumps(v)


# Core TcpSpec field -> field kind. The order is the core's.
_TCP_KINDS: dict[str, str] = {
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
    "byte_counting": "bool",
    "abc_limit": "int",
    "delayed_ack": "bool",
    "delack_timeout": "time",
    "delack_segments": "int",
    "daass": "bool",
    "rcv_buffer": "size",
    "window_scaling": "bool",
    "cbi_ssthresh_reuse": "bool",
    "fin_ignores_cwnd": "bool",
}


def _tcp(core_key: str, doc: str, **kw: Any) -> Any:
    return _fld(_TCP_KINDS[core_key], doc, None, default_doc=_profile_default(core_key), **kw)


@dataclass(kw_only=True)
class TcpOptions(_Node):
    """TCP settings: a profile plus per-knob overrides (``[tcp]`` or a flow's ``tcp``).

    Unset knobs (``None``) come from the profile; a flow's table wins over the
    scenario's ``[tcp]``, which wins over the profile (tcp/config.rs ``TcpSpec``).

    Example:
        >>> TcpOptions(profile="ns2-sack", iw=10, initial_rto="1s").to_core()
        {'profile': 'ns2-sack', 'iw': 10, 'initial_rto': 1000000000}
    """

    profile: str | None = _fld(
        "str", "Named profile that sets every knob together (see the table below).", None,
        default_doc="`linux`", choices=registry.profile_names,
    )
    mss: int | str | None = _tcp("mss", "Sender maximum segment size (payload).", minimum=1)
    header_bytes: int | str | None = _tcp("header_bytes", "IP + TCP header bytes added to every segment.")
    iw: int | str | None = _tcp("iw", "Initial window in segments (>= 1), or \"rfc3390\" for min(4*MSS, max(2*MSS, 4380 B)).")
    initial_ssthresh: int | str | None = _tcp("initial_ssthresh", "Initial ssthresh (unset: arbitrarily high, RFC 5681 §3.1).")
    initial_rto: int | str | None = _tcp("initial_rto", "Initial retransmission timeout, also for the SYN (RFC 6298 §2.1).", minimum=1)
    min_rto: int | str | None = _tcp("min_rto", "Lower bound on the RTO (RFC 6298 §2.4).")
    max_rto: int | str | None = _tcp("max_rto", "Upper bound on the RTO.", minimum=1)
    syn_retries: int | None = _tcp("syn_retries", "SYN retransmissions before the connection is abandoned.", minimum=0)
    sack: bool | None = _tcp("sack", "SACK (RFC 2018) with RFC 6675 recovery; false means NewReno (RFC 6582).")
    dupack_threshold: int | None = _tcp("dupack_threshold", "Duplicate ACKs that trigger fast retransmit.", minimum=1)
    limited_transmit: bool | None = _tcp("limited_transmit", "Limited Transmit (RFC 3042).")
    frto: bool | None = _tcp("frto", "F-RTO spurious-RTO detection (RFC 5682).")
    byte_counting: bool | None = _tcp("byte_counting", "Appropriate Byte Counting (RFC 3465).")
    abc_limit: int | None = _tcp("abc_limit", "ABC slow-start limit L in segments (RFC 3465 §2.2).", minimum=1)
    delayed_ack: bool | None = _tcp("delayed_ack", "Receiver delays ACKs (RFC 5681 §4.2).")
    delack_timeout: int | str | None = _tcp("delack_timeout", "Delayed-ACK timer.")
    delack_segments: int | None = _tcp("delack_segments", "Full-sized segments that force an ACK.", minimum=1)
    daass: bool | None = _tcp("daass", "No delayed ACKs during slow start (RFC 2760 §5.1).")
    rcv_buffer: int | str | None = _tcp("rcv_buffer", "Receiver buffer, advertised as the window.", minimum=1)
    window_scaling: bool | None = _tcp("window_scaling", "Window scaling (RFC 7323); without it the window is at most 65535 B.")
    cbi_ssthresh_reuse: bool | None = _tcp("cbi_ssthresh_reuse", "Reuse ssthresh across connections to a destination (RFC 2140).")
    fin_ignores_cwnd: bool | None = _tcp("fin_ignores_cwnd", "Send the FIN regardless of cwnd (Linux; \"IW10 is really IW11\").")

    def to_core(self) -> dict[str, Any]:
        """The core's ``TcpSpec``, with only the fields that are set."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = v
        return out


@dataclass(kw_only=True)
class CcOptions(_Node):
    """A congestion control and its parameters (``[cc]`` or a flow's ``cc``).

    Example:
        >>> CcOptions(name="reno").to_core()
        {'name': 'reno', 'params': {}}
    """

    name: str | None = _fld(
        "str", "Registered congestion control (see `tcplab list`).", None, default_doc="`reno`",
        choices=registry.cc_names,
    )
    params: dict[str, Any] = _fld(
        "params", "Parameters of the algorithm, as `name = number` (see `tcplab list`).", factory=dict,
        default_doc="the algorithm's defaults",
    )

    def _check(self) -> None:
        name = self.name or "reno"
        try:
            known = [p["name"] for p in registry.cc_entry(name)["params"]]
        except KeyError:  # pragma: no cover - name was checked against the registry
            return
        for p in self.params:
            if p not in known:
                raise ScenarioError(
                    f"params.{p}", f"unknown parameter of congestion control '{name}'",
                    accepted=", ".join(known) or "(none: this algorithm has no parameters)",
                    suggestion=_near(p, known),
                )

    def to_core(self) -> dict[str, Any]:
        """The core's ``CcSpec``."""
        return {"name": self.name or "reno", "params": dict(self.params)}


def _merge_cc(base: CcOptions, over: CcOptions | None) -> dict[str, Any]:
    """A flow's CC: its name wins; parameters merge when the name is the same."""
    if over is None:
        return base.to_core()
    name = over.name or base.name or "reno"
    params = dict(base.params) if name == (base.name or "reno") else {}
    params.update(over.params)
    return {"name": name, "params": params}


# --------------------------------------------------------------------------------------
# Flows


@dataclass(kw_only=True)
class Interval(_Node):
    """Inter-departure times of a UDP source (``dist`` = constant, normal, exponential).

    Example:
        >>> Interval(dist="normal", mean="20ms", sigma="1ms").to_core()
        {'dist': 'normal', 'mean': 20000000, 'sigma': 1000000}
    """

    dist: str = _fld("str", "Distribution.", "constant", choices=lambda: ["constant", "normal", "exponential"])
    mean: int | str = _fld("time", "Mean inter-departure time.", minimum=1)
    sigma: int | str | None = _fld("time", "Standard deviation (normal only; truncated at zero).", None, default_doc="required for `normal`")

    def _check(self) -> None:
        if self.dist == "normal" and self.sigma is None:
            raise ScenarioError("sigma", "is required when dist = \"normal\"", accepted="a time like '1ms'")
        if self.dist != "normal" and self.sigma is not None:
            raise ScenarioError("sigma", f"only applies to dist = \"normal\", not {self.dist!r}", value=units.format_time(int(self.sigma)))

    def to_core(self) -> dict[str, Any]:
        """The core's ``Interval``."""
        out: dict[str, Any] = {"dist": self.dist, "mean": self.mean}
        if self.dist == "normal":
            out["sigma"] = self.sigma
        return out


_FLOW_COMMON_DOC = {
    "name": "Label used in tables. With `count > 1`, flows are named `<name>.<j>`.",
    "group": "Group label for aggregation (e.g. a burst).",
    "src": "Sending node, or a list cycled over the group's flows.",
    "dst": "Receiving node, or a list cycled over the group's flows.",
    "count": "Number of flows this entry expands into (a flow group).",
    "start": "When the first flow of the entry starts.",
    "start_spacing": "Flow j of the group starts `j * start_spacing` after `start`.",
    "start_jitter": "Each flow's start is delayed by a uniform random time in [0, start_jitter], "
    "drawn from the run seed and the flow's position (so every variant of a sweep sees the same starts).",
    "stop": "When the source stops offering data.",
}


@dataclass(kw_only=True)
class TcpFlow(_Node):
    """A TCP flow or flow group (``kind = "tcp"``, the default in ``[[flows]]``).

    Example:
        >>> f = TcpFlow(group="burst1", count=6, bytes_total="180kB")
        >>> f.count, f.bytes_total
        (6, 180000)
    """

    KIND: ClassVar[str] = "tcp"
    name: str | None = _fld("str", _FLOW_COMMON_DOC["name"], None, default_doc="`flow<i>` (i = position among all flows)")
    group: str = _fld("str", _FLOW_COMMON_DOC["group"], "")
    src: str | list[str] | None = _fld("str_or_list", _FLOW_COMMON_DOC["src"], None, default_doc="dumbbell: `s<j mod pairs>`; required for a graph")
    dst: str | list[str] | None = _fld("str_or_list", _FLOW_COMMON_DOC["dst"], None, default_doc="dumbbell: `d<j mod pairs>`; required for a graph")
    count: int = _fld("int", _FLOW_COMMON_DOC["count"], 1, minimum=1, maximum=100_000)
    start: int | str = _fld("time", _FLOW_COMMON_DOC["start"], 0, default_doc='"0s"')
    start_spacing: int | str = _fld("time", _FLOW_COMMON_DOC["start_spacing"], 0, default_doc='"0s"')
    start_jitter: int | str = _fld("time", _FLOW_COMMON_DOC["start_jitter"], 0, default_doc='"0s"')
    bytes: int | str | None = _fld("size", "Bytes each flow transfers.", None, default_doc="unset: a bulk transfer that runs until `stop` or the end", minimum=1)
    bytes_total: int | str | None = _fld(
        "size", "Bytes of the whole group, split equally between its flows (the first flows take the remainder).",
        None, default_doc="unset", minimum=1,
    )
    stop: int | str | None = _fld("time", "When a bulk sender stops offering new data.", None, default_doc="the end of the run")
    cc: CcOptions | dict[str, Any] | None = _fld("table", "Congestion control for these flows.", None, default_doc="the scenario's `[cc]`", cls=lambda: CcOptions)
    tcp: TcpOptions | dict[str, Any] | None = _fld("table", "TCP overrides for these flows.", None, default_doc="the scenario's `[tcp]`", cls=lambda: TcpOptions)

    def _check(self) -> None:
        if self.bytes is not None and self.bytes_total is not None:
            raise ScenarioError("bytes_total", "give either bytes (per flow) or bytes_total (per group), not both", value=units.format_size(int(self.bytes_total)))
        if self.bytes_total is not None and int(self.bytes_total) < self.count:
            raise ScenarioError("bytes_total", f"must give each of the {self.count} flows at least one byte", value=units.format_size(int(self.bytes_total)))


@dataclass(kw_only=True)
class UdpFlow(_Node):
    """A UDP stream or group of streams (``kind = "udp"``), e.g. seed 003's voice.

    Example:
        >>> UdpFlow(src="s0", dst="d0", packet_size="186B",
        ...         interval=Interval(dist="normal", mean="20ms", sigma="1ms")).packet_size
        186
    """

    KIND: ClassVar[str] = "udp"
    name: str | None = _fld("str", _FLOW_COMMON_DOC["name"], None, default_doc="`flow<i>`")
    group: str = _fld("str", _FLOW_COMMON_DOC["group"], "")
    src: str | list[str] | None = _fld("str_or_list", _FLOW_COMMON_DOC["src"], None, default_doc="dumbbell: `s<j mod pairs>`; required for a graph")
    dst: str | list[str] | None = _fld("str_or_list", _FLOW_COMMON_DOC["dst"], None, default_doc="dumbbell: `d<j mod pairs>`; required for a graph")
    count: int = _fld("int", _FLOW_COMMON_DOC["count"], 1, minimum=1, maximum=100_000)
    start: int | str = _fld("time", _FLOW_COMMON_DOC["start"], 0, default_doc='"0s"')
    start_spacing: int | str = _fld("time", _FLOW_COMMON_DOC["start_spacing"], 0, default_doc='"0s"')
    start_jitter: int | str = _fld("time", _FLOW_COMMON_DOC["start_jitter"], 0, default_doc='"0s"')
    stop: int | str | None = _fld("time", _FLOW_COMMON_DOC["stop"], None, default_doc="the end of the run")
    packet_size: int | str = _fld("size", "IP packet size (seed 003 voice: \"186B\").", minimum=1, maximum=65535)
    interval: Interval | dict[str, Any] = _fld("table", "Inter-departure time distribution.", cls=lambda: Interval)


def _flow_variants() -> dict[str, type]:
    return {"tcp": TcpFlow, "udp": UdpFlow}


Flow = Union[TcpFlow, UdpFlow]

# --------------------------------------------------------------------------------------
# Recording and the scenario


@dataclass(kw_only=True)
class Record(_Node):
    """Which time series to record (per-flow, queue and link summaries always are).

    Example:
        >>> Record(cwnd=True, queue=["bottleneck"]).to_dict()
        {'cwnd': True, 'queue': ['bottleneck']}
    """

    cwnd: bool = _fld("bool", "cwnd, ssthresh, srtt, RTO and state of every TCP flow, at every change.", False)
    queue: list[str] = _fld("str_list", "Links whose queue occupancy is recorded at every change (`\"*\"` = all).", factory=list, default_doc="none")
    owd: list[str] = _fld("str_list", "Flows (names or groups; `\"*\"` = all) whose per-packet one-way delay is recorded.", factory=list, default_doc="none")
    drops: bool = _fld("bool", "Every drop event (time, link, flow, cause).", False)
    busy_sample_interval: int | str | None = _fld(
        "time", "Sampling interval of the \"queue non-empty\" utilisation of seed 001 (e.g. \"1s\").", None,
        default_doc="off", minimum=1,
    )


@dataclass(kw_only=True)
class Scenario(_Node):
    """A whole experiment; see the module docstring and ``docs/scenarios.md``.

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

    name: str = _fld("str", "Scenario name, copied into the results.", "")
    duration: int | str | None = _fld(
        "time", "Stop time.", None, default_doc="when every finite flow has completed (at most `max_duration`)", minimum=1
    )
    max_duration: int | str = _fld(
        "time", "Safety cap on simulated time when `duration` is unset.", 3600 * 10**9, default_doc='"3600s"', minimum=1
    )
    topology: Dumbbell | Graph | dict[str, Any] = _fld("tagged", "The network.", variants=_topology_variants)
    tcp: TcpOptions | dict[str, Any] = _fld("table", "Default TCP settings of every TCP flow.", factory=TcpOptions, default_doc="profile `linux`", cls=lambda: TcpOptions)
    cc: CcOptions | dict[str, Any] = _fld("table", "Default congestion control of every TCP flow.", factory=CcOptions, default_doc="`reno`", cls=lambda: CcOptions)
    flows: list[TcpFlow | UdpFlow] = _fld("tagged_list", "The flows and flow groups, as `[[flows]]` entries.", variants=_flow_variants, default_tag="tcp")
    record: Record | dict[str, Any] = _fld("table", "Time series to record.", factory=Record, default_doc="none", cls=lambda: Record)

    # ---- validation across tables

    def _check(self) -> None:
        if not self.flows:
            raise ScenarioError("flows", "at least one flow is required", accepted="one or more [[flows]] entries")
        topo = self.topology
        assert isinstance(topo, (Dumbbell, Graph))
        nodes = topo.node_names()
        names: dict[str, int] = {}
        groups: set[str] = set()
        for i, flow in enumerate(self.flows):
            for end in ("src", "dst"):
                value = getattr(flow, end)
                if value is None:
                    if isinstance(topo, Graph):
                        raise ScenarioError(f"flows[{i}].{end}", "is required when the topology is a graph", accepted=", ".join(nodes))
                    continue
                for j, node in enumerate([value] if isinstance(value, str) else value):
                    if node not in nodes:
                        where = f"flows[{i}].{end}" + ("" if isinstance(value, str) else f"[{j}]")
                        raise ScenarioError(where, "unknown node", value=node, accepted=_short_list(nodes), suggestion=_near(node, nodes))
            for name, src, dst in self._endpoints(i, flow):
                if name in names:
                    raise ScenarioError(f"flows[{i}].name", f"duplicate flow name (also made by flows[{names[name]}])", value=name)
                names[name] = i
                if src == dst:
                    raise ScenarioError(f"flows[{i}].dst", "a flow cannot go from a node to itself", value=dst)
            if flow.group:
                groups.add(flow.group)
            if flow.name and flow.count > 1:
                groups.add(flow.name)
        links = topo.link_names()
        for j, lk in enumerate(self.record.queue):  # type: ignore[union-attr]
            if lk != "*" and lk not in links:
                raise ScenarioError(f"record.queue[{j}]", "unknown link", value=lk, accepted="\"*\", " + _short_list(links), suggestion=_near(lk, links))
        for j, fl in enumerate(self.record.owd):  # type: ignore[union-attr]
            if fl != "*" and fl not in names and fl not in groups:
                options = sorted(groups) + list(names)
                raise ScenarioError(f"record.owd[{j}]", "unknown flow or group", value=fl, accepted="\"*\", " + _short_list(options), suggestion=_near(fl, options))

    def _endpoints(self, i: int, flow: TcpFlow | UdpFlow) -> list[tuple[str, str, str]]:
        """(name, src, dst) of every flow entry ``i`` expands into."""
        n = flow.count
        out = []
        pairs = self.topology.pairs if isinstance(self.topology, Dumbbell) else 1
        for j in range(n):
            if n == 1:
                name = flow.name or f"flow{self._first_index(i)}"
            else:
                name = f"{flow.name or flow.group or f'flow{self._first_index(i)}'}.{j}"
            src = _pick(flow.src, j, f"s{j % pairs}")
            dst = _pick(flow.dst, j, f"d{j % pairs}")
            out.append((name, src, dst))
        return out

    def _first_index(self, i: int) -> int:
        return sum(f.count for f in self.flows[:i])

    def validate(self) -> "Scenario":
        """Re-checks every field (after in-place edits) and the TCP settings of every flow.

        Raises :class:`ScenarioError`; returns ``self`` so calls can be chained.

        Example:
            >>> sc = Scenario.from_toml(EXAMPLE_TOML)
            >>> sc.tcp.iw = 0
            >>> sc.validate()
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: tcp.iw: the initial window must be at least 1 segment; got 0; accepted: an integer number of segments >= 1, or "rfc3390"
        """
        _renormalise(self)
        self._resolve_all_tcp()
        return self

    def _resolve_all_tcp(self) -> None:
        assert isinstance(self.tcp, TcpOptions)
        base = self.tcp.to_core()
        cache: dict[str, None] = {}
        _resolve_tcp_checked(base, "tcp", cache, list(base))
        for i, flow in enumerate(self.flows):
            if isinstance(flow, TcpFlow) and isinstance(flow.tcp, TcpOptions):
                over = flow.tcp.to_core()
                _resolve_tcp_checked({**base, **over}, f"flows[{i}].tcp", cache, list(over), base_keys=list(base))

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
        assert isinstance(self.tcp, TcpOptions) and isinstance(self.cc, CcOptions)
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
            sizes: list[int | None]
            if isinstance(flow, TcpFlow) and flow.bytes_total is not None:
                total = int(flow.bytes_total)
                sizes = [total // n + (1 if j < total % n else 0) for j in range(n)]
            elif isinstance(flow, TcpFlow) and flow.bytes is not None:
                sizes = [int(flow.bytes)] * n
            else:
                sizes = [None] * n
            for j, (name, src, dst) in enumerate(self._endpoints(i, flow)):
                start = int(flow.start) + j * int(flow.start_spacing) + int(offsets[j])
                common = {
                    "name": name,
                    "group": flow.group,
                    "src": src,
                    "dst": dst,
                    "start": start,
                    "stop": None if flow.stop is None else int(flow.stop),
                }
                if isinstance(flow, TcpFlow):
                    tcp = dict(base_tcp)
                    if isinstance(flow.tcp, TcpOptions):
                        tcp.update(flow.tcp.to_core())
                    cc_over = flow.cc if isinstance(flow.cc, CcOptions) else None
                    out.append({"kind": "tcp", **common, "bytes": sizes[j], "cc": _merge_cc(self.cc, cc_over), "tcp": tcp})
                else:
                    assert isinstance(flow.interval, Interval)
                    out.append({"kind": "udp", **common, "packet_bytes": int(flow.packet_size), "interval": flow.interval.to_core()})
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
        assert isinstance(self.topology, (Dumbbell, Graph)) and isinstance(self.record, Record)
        flows = self.expand_flows(seed)
        links = self.topology.link_names()
        rec = self.record
        queue = links if "*" in rec.queue else list(dict.fromkeys(rec.queue))
        owd: list[str] = []
        if "*" in rec.owd:
            owd = ["*"]
        else:
            for sel in rec.owd:
                owd += [
                    f["name"] for f in flows
                    if sel in (f["name"], f["group"]) or f["name"].rsplit(".", 1)[0] == sel
                ]
            owd = list(dict.fromkeys(owd))
        return {
            "name": self.name,
            "topology": self.topology.to_core(),
            "flows": flows,
            "duration": None if self.duration is None else int(self.duration),
            "max_duration": int(self.max_duration),
            "record": {
                "cwnd": rec.cwnd,
                "queue": queue,
                "owd": owd,
                "drops": rec.drops,
                "busy_sample_interval": None if rec.busy_sample_interval is None else int(rec.busy_sample_interval),
            },
        }

    def to_core_json(self, seed: int = 0) -> str:
        """:meth:`to_core` as canonical JSON (sorted keys), as ``_core.run`` takes it."""
        return json.dumps(self.to_core(seed), sort_keys=True, separators=(",", ":"))

    def to_toml(self) -> str:
        """The scenario as a TOML document that :meth:`from_toml` reads back equal."""
        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """Builds and validates a scenario from a parsed TOML document (strict units)."""
        sc: Scenario = _from_dict(cls, data, strict=True)
        sc._resolve_all_tcp()
        return sc

    @classmethod
    def from_toml(cls, text: str, file: str = "<string>") -> "Scenario":
        """Parses and validates TOML text; errors name ``file`` and the line.

        Example:
            >>> Scenario.from_toml('name = 3')
            Traceback (most recent call last):
            ...
            tcplab.scenario.ScenarioError: <string>:1: name: must be a string; got 3
        """
        data = parse_toml(text, file)
        if "sweep" in data:
            raise _located(
                ScenarioError("sweep", "a [sweep] table belongs in an experiment file; run it with `tcplab sweep`"),
                text, file,
            )
        try:
            return cls.from_dict(data)
        except ScenarioError as e:
            raise _located(e, text, file) from None

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Reads and validates a scenario file (see :func:`load`)."""
        return load(path)


def _pick(value: str | list[str] | None, j: int, default: str) -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    return value[j % len(value)]


def _short_list(items: list[str], limit: int = 12) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... ({len(items)} in all)"


def _renormalise(node: Any) -> None:
    """Re-runs normalisation bottom-up, so in-place edits are checked too."""
    if isinstance(node, _Node):
        for f in dataclasses.fields(node):  # type: ignore[arg-type]
            try:
                _renormalise(getattr(node, f.name))
            except ScenarioError as e:
                raise e.prefixed(_toml_name(f)) from None
        node._normalise()
    elif isinstance(node, list):
        for i, item in enumerate(node):
            try:
                _renormalise(item)
            except ScenarioError as e:
                raise e.prefixed(f"[{i}]") from None


def _resolve_tcp_checked(
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
        value = spec.get(fieldname) if fieldname else _UNSET
        if fieldname and fieldname in _TCP_KINDS and _TCP_KINDS[fieldname] in _QUANTITY_FORMATTERS and isinstance(value, int):
            value = _QUANTITY_FORMATTERS[_TCP_KINDS[fieldname]](value)
        raise ScenarioError(where, f"rejected by the core: {msg}", value=value if fieldname in spec else _UNSET) from None
    cache[key] = None


# --------------------------------------------------------------------------------------
# Files and line numbers


def parse_toml(text: str, file: str = "<string>") -> dict[str, Any]:
    """``tomllib.loads`` with its error turned into a :class:`ScenarioError`.

    Example:
        >>> parse_toml("a = ", "x.toml")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: x.toml:1: not valid TOML: Invalid value (at end of document)
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        line = int(m.group(1)) if m else (text.count("\n") + 1 if "end of document" in str(e) else None)
        raise ScenarioError("", f"not valid TOML: {e}", file=file, line=line) from None
    except RecursionError:
        raise ScenarioError("", "not valid TOML: nested too deeply", file=file) from None


def load(path: str | Path) -> Scenario:
    """Reads a scenario file, validating it completely.

    Errors are :class:`ScenarioError` with ``file`` and ``line`` set.
    """
    text = read_text(path)
    return Scenario.from_toml(text, str(path))


def read_text(path: str | Path) -> str:
    """A file's text as UTF-8, with unreadable files as :class:`ScenarioError`."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise ScenarioError("", f"cannot read the file: {e.strerror or e}", file=str(path)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ScenarioError("", f"not UTF-8 text (byte {e.start})", file=str(path), line=line) from None


def _located(e: ScenarioError, text: str, file: str) -> ScenarioError:
    e.file = file
    if e.line is None:
        e.line = TomlLocator(text).line(e.path)
    return e


_BARE_KEY = r"[A-Za-z0-9_-]+"
_KEY_PART = rf"(?:{_BARE_KEY}|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_DOTTED_KEY = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_RE_ARRAY_HEADER = re.compile(rf"^\[\[\s*({_DOTTED_KEY})\s*\]\]")
_RE_TABLE_HEADER = re.compile(rf"^\[\s*({_DOTTED_KEY})\s*\]")
_RE_KEY_VALUE = re.compile(rf"^({_DOTTED_KEY})\s*=(.*)$")
_RE_INLINE_KEY = re.compile(rf"({_BARE_KEY})\s*=")


def _split_key(dotted: str) -> list[str]:
    parts = re.findall(_KEY_PART, dotted)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


class TomlLocator:
    """Maps dotted field paths to the source lines that set them (see module doc).

    Example:
        >>> loc = TomlLocator('[tcp]\\niw = 0\\n[[flows]]\\nsrc = "s0"\\n[[flows]]\\ntcp = { iw = 3 }\\n')
        >>> loc.line("tcp.iw"), loc.line("flows[1].tcp.iw"), loc.line("flows[1].bytes")
        (2, 6, 5)
    """

    def __init__(self, text: str) -> None:
        self.paths: dict[str, int] = {}
        arrays: dict[str, int] = {}
        prefix = ""
        in_multiline: str | None = None
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if in_multiline is not None:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            if not line or line.startswith("#"):
                continue
            m = _RE_ARRAY_HEADER.match(line)
            if m:
                p = self._resolve(_split_key(m.group(1))[:-1], arrays)
                p = _join(p, _split_key(m.group(1))[-1])
                arrays[p] = arrays.get(p, -1) + 1
                prefix = f"{p}[{arrays[p]}]"
                self.paths.setdefault(prefix, n)
                self.paths.setdefault(p, n)
                continue
            m = _RE_TABLE_HEADER.match(line)
            if m:
                prefix = self._resolve(_split_key(m.group(1)), arrays)
                self.paths.setdefault(prefix, n)
                continue
            m = _RE_KEY_VALUE.match(line)
            if m:
                full = prefix
                for part in _split_key(m.group(1)):
                    full = _join(full, part)
                    self.paths.setdefault(full, n)
                rest = m.group(2)
                for quote in ('"""', "'''"):
                    if rest.count(quote) % 2 == 1:
                        in_multiline = quote
                if rest.lstrip().startswith("{"):
                    for km in _RE_INLINE_KEY.finditer(rest):
                        self.paths.setdefault(_join(full, km.group(1)), n)

    def _resolve(self, parts: list[str], arrays: dict[str, int]) -> str:
        p = ""
        for part in parts:
            p = _join(p, part)
            if p in arrays:
                p = f"{p}[{arrays[p]}]"
        return p

    def line(self, path: str) -> int | None:
        """The line that set ``path``, or of its nearest written parent, or None."""
        p = path
        while p:
            if p in self.paths:
                return self.paths[p]
            stripped = re.sub(r"\[\d+\]$", "", p)
            if stripped != p:
                p = stripped
                continue
            if "." not in p:
                break
            p = p.rsplit(".", 1)[0]
        return None


def _join(prefix: str, part: str) -> str:
    return f"{prefix}.{part}" if prefix else part


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


# --------------------------------------------------------------------------------------
# The reference documentation, generated from the schema


def _field_rows(cls: type) -> list[tuple[str, str, str, str]]:
    rows = []
    for f in dataclasses.fields(cls):
        if "spec" not in f.metadata:
            continue
        spec = _spec(f)
        kind = _kind_text(spec)
        if spec.required:
            default = "**required**"
        elif spec.default_doc is not None:
            default = spec.default_doc
        else:
            d = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            default = json.dumps(_to_toml_value(spec, d)) if d is not None else "unset"
        rows.append((f"`{_toml_name(f)}`", kind, default, spec.doc.replace("|", "\\|")))
    return rows


def _kind_text(spec: FieldSpec) -> str:
    k = spec.kind
    text = {
        "rate": 'rate (`"2Mbps"`)',
        "time": 'time (`"70ms"`)',
        "size": 'size (`"180kB"`)',
        "packets": 'packets (`"48pkt"`)',
        "limit": 'packets or size (`"48pkt"`, `"40kB"`)',
        "time_list": "time, or list of times",
        "int": "integer",
        "float": "number",
        "bool": "boolean",
        "str": "string",
        "str_list": "list of strings",
        "str_or_list": "string or list of strings",
        "iw": 'integer or `"rfc3390"`',
        "params": "table of numbers",
        "table": "table",
        "tagged": "table (by `kind`)",
        "table_list": "array of tables",
        "tagged_list": "array of tables (by `kind`)",
    }[k]
    if spec.choices is not None:
        text += ": " + ", ".join(f"`{c}`" for c in spec.choices())
    if spec.minimum is not None or spec.maximum is not None:
        text += "; " + _range_text(spec, "").strip()
    return text


def reference_markdown() -> str:
    """The scenario reference (``docs/scenarios.md``), generated from this schema.

    A test compares the committed file with this output, so the two cannot drift.
    """
    sections: list[tuple[str, str, type]] = [
        ("Top level", "The file's top-level keys.", Scenario),
        ("`[topology]` with `kind = \"dumbbell\"`", Dumbbell.__doc__ or "", Dumbbell),
        ("`[topology]` with `kind = \"graph\"`", Graph.__doc__ or "", Graph),
        ("`[[topology.links]]` (graph links)", GraphLink.__doc__ or "", GraphLink),
        ("Links: `bottleneck`, `bottleneck_reverse`", Link.__doc__ or "", Link),
        ("Access links: `sender_access`, `receiver_access`", Access.__doc__ or "", Access),
        ("Queue `kind = \"drop_tail\"`", DropTail.__doc__ or "", DropTail),
        ("Queue `kind = \"red\"`", Red.__doc__ or "", Red),
        ("Error model `kind = \"bernoulli\"`", Bernoulli.__doc__ or "", Bernoulli),
        ("Error model `kind = \"markov\"`", Markov.__doc__ or "", Markov),
        ("`[tcp]` and a flow's `tcp`", TcpOptions.__doc__ or "", TcpOptions),
        ("`[cc]` and a flow's `cc`", CcOptions.__doc__ or "", CcOptions),
        ("`[[flows]]` with `kind = \"tcp\"` (the default)", TcpFlow.__doc__ or "", TcpFlow),
        ("`[[flows]]` with `kind = \"udp\"`", UdpFlow.__doc__ or "", UdpFlow),
        ("A UDP flow's `interval`", Interval.__doc__ or "", Interval),
        ("`[record]`", Record.__doc__ or "", Record),
    ]
    out = [
        "# Scenario reference",
        "",
        "<!-- Generated by `python -m tcplab.scenario > docs/scenarios.md` from the validator's",
        "     schema (tcplab/scenario.py); tests/test_docs.py fails when this file drifts. -->",
        "",
        "A scenario file is TOML. Quantities carry units: rates `bps`, `kbps`, `Mbps`, `Gbps`",
        "(or `kbit/s`, ...); times `ns`, `us`, `ms`, `s`, `min`; sizes `B`, `kB`, `MB` (powers",
        "of 1000) and `KiB`, `MiB` (powers of 1024); packet counts `pkt`. A number without its",
        "unit, an unknown field or an impossible value is an error naming the file, the line,",
        "the field, the value and what is accepted, and nothing runs.",
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
    for title, doc, cls in sections:
        first = _doc_summary(doc)
        out += [f"## {title}", "", first, "", "| field | type | default | meaning |", "|---|---|---|---|"]
        out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in _field_rows(cls)]
        out.append("")
    out += ["## TCP profiles", "", "Values of every knob per profile (from the core's registry).", ""]
    profiles = registry.profile_names()
    out.append("| knob | " + " | ".join(f"`{p}`" for p in profiles) + " |")
    out.append("|---|" + "---|" * len(profiles))
    for key in _TCP_KINDS:
        out.append(f"| `{key}` | " + " | ".join(_profile_value(p, key) for p in profiles) + " |")
    out.append("")
    out += ["## Congestion controls", "", "| name | parameters | reference |", "|---|---|---|"]
    for c in registry.registry()["congestion_controls"]:
        params = ", ".join(f"`{p['name']}` ({p.get('unit', '')}, default {_fmt_default(p['default'])})" for p in c["params"]) or "none"
        out.append(f"| `{c['name']}` | {params} | {c['reference']} |")
    out.append("")
    from tcplab.sweeps import SWEEP_REFERENCE  # local import: sweep imports this module

    out += [SWEEP_REFERENCE.rstrip(), ""]
    return "\n".join(out)


def _doc_summary(doc: str) -> str:
    lines = []
    for line in doc.strip().splitlines():
        if line.strip().startswith("Example"):
            break
        lines.append(line.strip())
    return " ".join(" ".join(lines).split())


if __name__ == "__main__":  # pragma: no cover - documentation generator
    print(reference_markdown(), end="")
