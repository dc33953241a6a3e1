"""Quantity and other value types of scenario fields, as pydantic annotations.

Each type here is an ``Annotated`` marker that gives pydantic three things at once:

- **validation**: a file and the Python builders (validated with
  ``context={"strict_units": True}``) must write quantities as strings with units
  (``"2Mbps"``, ``"70ms"``, ``"180kB"``, ``"48pkt"``), parsed exactly by
  :mod:`tcplab.units`; only the re-check of values already resolved
  (:meth:`~tcplab.scenario.base.Model.revalidated`) takes integers in the base unit
  (bit/s, nanoseconds, bytes, packets). Failures raise
  :class:`~tcplab.scenario.errors.ScenarioError` with the wording of the file format;
- **serialisation**: ``model_dump(mode="json")`` writes the value back with its unit,
  which is what :meth:`Model.to_dict` / ``to_toml`` emit;
- **a JSON Schema** of the TOML form (a string with a unit pattern), for editors.

Ranges are not here: they are declared on the field (``Field(ge=1)``) so that one
declaration feeds validation, the JSON Schema and ``docs/scenarios.md``.

Example:
    >>> from pydantic import BaseModel
    >>> class L(BaseModel):
    ...     rate: Rate
    >>> L(rate="2Mbps").rate, L(rate=2_000_000).model_dump(mode="json")
    (2000000, {'rate': '2Mbps'})
    >>> L.model_validate({"rate": 5}, context={"strict_units": True})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for L
    rate
      Value error, value without a unit; a rate is written with its unit; got 5; accepted: a string like '2Mbps' ...
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Callable

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema

from tcplab import units
from tcplab.scenario.errors import ScenarioError, near

__all__ = [
    "Quantity",
    "Rate",
    "Time",
    "Size",
    "Packets",
    "Limit",
    "TimeList",
    "InitialWindow",
    "NodeOrList",
    "StrList",
    "Params",
    "Choice",
    "unit_pattern",
]


def _strict(info: Any) -> bool:
    ctx = getattr(info, "context", None)
    return bool(ctx and ctx.get("strict_units"))


_NUMBER = r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def unit_pattern(unit_names: list[str]) -> str:
    """An ECMA-262 regular expression for a non-negative quantity in one of the units.

    Example:
        >>> import re
        >>> bool(re.match(unit_pattern(["ms", "s"]), "70ms")), bool(re.match(unit_pattern(["ms"]), "70"))
        (True, False)
    """
    alts = "|".join(re.escape(u) for u in sorted(unit_names, key=len, reverse=True))
    return rf"^\s*{_NUMBER}\s*(?:{alts})\s*$"


class _Checked:
    """Base of the types validated by one ``check(value, strict)`` function."""

    #: How ``docs/scenarios.md`` names the type.
    doc_type = "value"

    def check(self, value: Any, strict: bool) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_toml(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def validate(value: Any, info: Any) -> Any:
            return self.check(value, _strict(info))

        return core_schema.with_info_plain_validator_function(
            validate,
            serialization=core_schema.plain_serializer_function_ser_schema(self.to_toml, when_used="json"),
        )

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return self.json_schema()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# --------------------------------------------------------------------------------------
# Quantities with units


class Quantity:
    """A quantity with a unit: ``rate`` (bit/s), ``time`` (ns), ``size`` (B), ``packets``.

    The value is an ``int`` in the base unit; the field's range (``Field(ge=...)``) is
    checked by pydantic after parsing.
    """

    _PARSE: dict[str, Callable[[object], int]] = {
        "rate": units.parse_rate, "time": units.parse_time, "size": units.parse_size, "packets": units.parse_packets,
    }
    _FORMAT: dict[str, Callable[[int], str]] = {
        "rate": units.format_rate, "time": units.format_time, "size": units.format_size, "packets": lambda n: f"{n}pkt",
    }
    _UNITS: dict[str, dict[str, int]] = {
        "rate": units.RATE_UNITS, "time": units.TIME_UNITS, "size": units.SIZE_UNITS, "packets": units.PACKET_UNITS,
    }
    EXAMPLE = {"rate": "2Mbps", "time": "70ms", "size": "180kB", "packets": "48pkt"}
    _BASE = {"rate": "bit/s", "time": "ns", "size": "bytes", "packets": "packets"}

    def __init__(self, kind: str) -> None:
        assert kind in self._PARSE, kind
        self.kind = kind
        self.dimension = "packet count" if kind == "packets" else kind
        self.doc_type = f'{kind} (`"{self.EXAMPLE[kind]}"`)'
        self.accepted_text = f"a {kind} like '{self.EXAMPLE[kind]}'"

    def parse(self, value: Any, strict: bool) -> int:
        """The value in the base unit; :class:`ScenarioError` (relative path) otherwise."""
        if isinstance(value, str):
            try:
                return self._PARSE[self.kind](value)
            except units.UnitError as e:
                raise ScenarioError("", str(e)) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError("", f"must be a {self.dimension} with a unit", value=value,
                                accepted=f"a string like '{self.EXAMPLE[self.kind]}'")
        if strict:
            raise ScenarioError("", f"value without a unit; a {self.dimension} is written with its unit", value=value,
                                accepted=f"a string like '{self.EXAMPLE[self.kind]}'")
        if isinstance(value, float) or value < 0:
            raise ScenarioError(
                "", f"a {self.dimension} given as a number must be a non-negative integer in its base unit", value=value
            )
        return value

    def format(self, value: int) -> str:
        """The value written with its unit (``parse`` inverts it)."""
        return self._FORMAT[self.kind](value)

    def format_bound(self, value: int) -> str:
        """A range bound, written with its unit."""
        return self.format(value)

    def json_schema(self) -> dict[str, Any]:
        """The TOML form: a string with a unit."""
        return {
            "type": "string",
            "pattern": unit_pattern(list(self._UNITS[self.kind])),
            "examples": [self.EXAMPLE[self.kind]],
            "x-unit": f"{self.kind}: " + ", ".join(self._UNITS[self.kind]),
        }

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def validate(value: Any, info: Any) -> int:
            return self.parse(value, _strict(info))

        def serialise(value: Any) -> Any:
            return self.format(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else value

        return core_schema.with_info_before_validator_function(
            validate, handler(source),
            serialization=core_schema.plain_serializer_function_ser_schema(serialise, when_used="json"),
        )

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return self.json_schema()

    def __repr__(self) -> str:
        return f"Quantity({self.kind!r})"


RATE, TIME, SIZE, PACKETS = Quantity("rate"), Quantity("time"), Quantity("size"), Quantity("packets")

#: A rate in bit/s, written ``"2Mbps"``.
Rate = Annotated[int, RATE]
#: A time in integer nanoseconds, written ``"70ms"``.
Time = Annotated[int, TIME]
#: A size in bytes, written ``"180kB"``.
Size = Annotated[int, SIZE]
#: A packet count, written ``"48pkt"``.
Packets = Annotated[int, PACKETS]


class _LimitType(_Checked):
    """A buffer limit: ``("packets", n)`` from ``"48pkt"`` or ``("bytes", n)`` from a size."""

    doc_type = 'packets or size (`"48pkt"`, `"40kB"`)'
    accepted_text = "a packet count like '48pkt' or a size like '40kB'"

    def check(self, value: Any, strict: bool) -> tuple[str, int]:
        if isinstance(value, (tuple, list)) and len(value) == 2 and value[0] in ("packets", "bytes"):
            if isinstance(value[1], int) and not isinstance(value[1], bool) and value[1] >= 1:
                return (value[0], value[1])
        if not isinstance(value, str):
            raise ScenarioError("", "a buffer limit needs a unit", value=value, accepted=self.accepted_text)
        try:
            lim = units.parse_limit(value)
        except units.UnitError as e:
            raise ScenarioError("", str(e), accepted="'48pkt' or a size like '40kB'") from None
        if lim[1] < 1:
            raise ScenarioError("", "a buffer limit must be at least 1", value=value)
        return lim

    def to_toml(self, value: Any) -> Any:
        return units.format_limit(value[0], value[1]) if isinstance(value, tuple) else value

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "string",
            "pattern": unit_pattern(list(units.PACKET_UNITS) + list(units.SIZE_UNITS)),
            "examples": ["48pkt", "40kB"],
            "x-unit": "packets (pkt) or size: " + ", ".join(units.SIZE_UNITS),
        }


#: A buffer limit, ``("packets", n)`` or ``("bytes", n)``, written ``"48pkt"`` or ``"40kB"``.
Limit = Annotated[tuple[str, int], _LimitType()]


class _TimeListType(_Checked):
    """One time, or a non-empty list of times (one per dumbbell pair)."""

    doc_type = "time, or list of times"

    def check(self, value: Any, strict: bool) -> int | list[int]:
        if isinstance(value, list):
            if not value:
                raise ScenarioError("", "the list of delays is empty", value=value,
                                    accepted="a time like '11ms' or a non-empty list of times")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(TIME.parse(v, strict))
                except ScenarioError as e:
                    raise e.prefixed(f"[{i}]") from None
            return out
        return TIME.parse(value, strict)

    def to_toml(self, value: Any) -> Any:
        if isinstance(value, list):
            return [units.format_time(v) for v in value]
        return units.format_time(value) if isinstance(value, int) else value

    def json_schema(self) -> dict[str, Any]:
        one = TIME.json_schema()
        return {"anyOf": [one, {"type": "array", "items": one, "minItems": 1}]}


#: A delay, or one delay per pair: nanoseconds, written ``"11ms"`` or ``["5ms", "10ms"]``.
TimeList = Annotated[Any, _TimeListType()]


class _InitialWindowType(_Checked):
    doc_type = 'integer or `"rfc3390"`'

    def check(self, value: Any, strict: bool) -> int | str:
        if value == "rfc3390":
            return value
        accepted = "an integer number of segments >= 1, or \"rfc3390\""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ScenarioError("", "the initial window must be a number of segments", value=value, accepted=accepted)
        if isinstance(value, str):
            raise ScenarioError("", "unknown initial window", value=value, accepted=accepted,
                                suggestion="rfc3390" if near(value, ["rfc3390"]) else None)
        if isinstance(value, float):
            raise ScenarioError("", "the initial window must be a whole number of segments", value=value,
                                accepted=accepted)
        if value < 1:
            raise ScenarioError("", "the initial window must be at least 1 segment", value=value, accepted=accepted)
        return value

    def json_schema(self) -> dict[str, Any]:
        return {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "rfc3390"}]}


#: An initial window: segments (>= 1) or ``"rfc3390"`` (RFC 3390's byte formula).
InitialWindow = Annotated[Any, _InitialWindowType()]


class _NodeOrListType(_Checked):
    doc_type = "string or list of strings"

    def check(self, value: Any, strict: bool) -> str | list[str]:
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
        raise ScenarioError("", "must be a node name or a non-empty list of node names", value=value)

    def json_schema(self) -> dict[str, Any]:
        return {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]}


#: A node name, or a list of node names cycled over a flow group.
NodeOrList = Annotated[Any, _NodeOrListType()]


class _StrListType(_Checked):
    doc_type = "list of strings"

    def check(self, value: Any, strict: bool) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ScenarioError("", "must be a list of strings", value=value)
        return list(value)

    def json_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}


#: A list of names.
StrList = Annotated[list[str], _StrListType()]


class _ParamsType(_Checked):
    doc_type = "table of numbers"

    def check(self, value: Any, strict: bool) -> dict[str, float | int]:
        if not isinstance(value, dict):
            raise ScenarioError("", "must be a table of parameter = number", value=value)
        out: dict[str, float | int] = {}
        for key, v in value.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                raise ScenarioError(str(key), "a congestion-control parameter must be a number", value=v)
            out[str(key)] = v
        return out

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": {"type": "number"}}


#: Congestion-control parameters: ``name = number``.
Params = Annotated[dict[str, Any], _ParamsType()]


class Choice(_Checked):
    """A string from a list known at run time (a registry), e.g. profile or CC names.

    Example:
        >>> Choice(lambda: ["reno", "cubic"]).check("rneo", True)
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: unknown value; got 'rneo'; accepted: reno, cubic. Did you mean 'reno'?
    """

    def __init__(self, options: Callable[[], list[str]]) -> None:
        self.options = options

    @property
    def doc_type(self) -> str:  # type: ignore[override]
        return "string: " + ", ".join(f"`{c}`" for c in self.options())

    def check(self, value: Any, strict: bool) -> str:
        if not isinstance(value, str):
            raise ScenarioError("", "must be a string", value=value)
        options = self.options()
        if value not in options:
            raise ScenarioError("", "unknown value", value=value, accepted=", ".join(options),
                                suggestion=near(value, options))
        return value

    def json_schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.options())}
