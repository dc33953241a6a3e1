"""The base of every scenario model: pydantic v2 settings, errors, and the TOML writer.

Every table of a scenario file is a :class:`Model`: ``extra="forbid"`` (an unknown key
is an error with a "did you mean"), ``strict=True`` (no silent coercion: ``"5"`` is not
an integer, ``1`` is not ``true``), non-finite floats refused. Construction from Python
and from a file share the validators; a file is validated with
``context={"strict_units": True}``, so its quantities must carry units; so are the
Python builders (``Link(delay="30ms")``: ``Link(delay=30)`` is refused rather than read
as 30 ns). Only :meth:`Model.revalidated`, which re-checks values already resolved to
base units, takes plain integers. Either way a failure is a :class:`ScenarioError`,
never a pydantic traceback.

Fields are declared with :func:`fld`, which is ``pydantic.Field`` plus the text that
documents a default computed elsewhere (``default_doc``, e.g. "from the profile"). The
declaration feeds validation, the JSON Schema (:mod:`.schema`) and the reference
(:mod:`.reference`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tcplab.scenario.errors import UNSET, ScenarioError, from_validation_error

__all__ = ["Model", "fld", "CONTEXT_FILE"]

#: Validation context of a file: quantities must be written with their units.
CONTEXT_FILE: dict[str, Any] = {"strict_units": True}


def fld(
    default: Any = UNSET,
    doc: str = "",
    *,
    factory: Any = None,
    default_doc: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    alias: str | None = None,
) -> Any:
    """A documented field: ``fld(default, doc, ge=..., default_doc=...)``.

    Leave ``default`` out for a required field. ``default_doc`` documents a default
    that the value ``None`` stands for (e.g. "the preset's").
    """
    extra: dict[str, Any] = {}
    if default_doc is not None:
        extra["x-default-doc"] = default_doc
    kw: dict[str, Any] = {"description": doc, "json_schema_extra": extra or None}
    if ge is not None:
        kw["ge"] = ge
    if le is not None:
        kw["le"] = le
    if alias is not None:
        kw["alias"] = alias
    if factory is not None:
        return Field(default_factory=factory, **kw)
    if default is UNSET:
        return Field(**kw)
    return Field(default, **kw)


class _ConstructionRaisesScenarioError(type(BaseModel)):  # type: ignore[misc]
    """Makes ``Model(...)`` validate as a file does (quantities need units) and raise
    :class:`ScenarioError` instead of pydantic's error.

    Done in the metaclass rather than in ``__init__``: a model with its own ``__init__``
    is validated through it, which would drop the validation context (the file's
    "quantities need units" rule) for nested tables.

    Example:
        >>> from tcplab.scenario import Link
        >>> Link(rate="2Mbps", delay=30)
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: delay: value without a unit; a time is written with its unit; got 30; accepted: a string like '70ms'
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise ScenarioError("", f"{cls.__name__}() takes its fields by name", value=args,
                                accepted=", ".join(f"{n}=..." for n in cls.model_fields))
        try:
            return cls.model_validate(kwargs, context=CONTEXT_FILE)
        except ValidationError as e:
            raise from_validation_error(cls, e, kwargs) from None


class Model(BaseModel, metaclass=_ConstructionRaisesScenarioError):
    """A table of a scenario file (see the module docstring)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        populate_by_name=True,
        regex_engine="python-re",
    )

    #: Tagged variants (``kind = "..."``) write their tag first in TOML.
    TAGGED: ClassVar[bool] = False

    @classmethod
    def from_document(cls, data: Any) -> Any:
        """Validates a parsed TOML document (quantities need units).

        Raises :class:`ScenarioError` with the dotted path of the first problem.
        """
        try:
            return cls.model_validate(data, context=CONTEXT_FILE)
        except ValidationError as e:
            raise from_validation_error(cls, e, data) from None

    def revalidated(self) -> Any:
        """A fresh, fully checked copy (after in-place edits), as the Python API would build it."""
        data = self.model_dump(by_alias=True, warnings=False)
        try:
            return type(self).model_validate(data)
        except ValidationError as e:
            raise from_validation_error(type(self), e, data) from None

    def to_dict(self) -> dict[str, Any]:
        """The TOML table for this object: units restored, defaults left out.

        Example:
            >>> from tcplab.scenario import DropTail
            >>> DropTail(limit="48pkt").to_dict()
            {'kind': 'drop_tail', 'limit': '48pkt'}
        """
        out: dict[str, Any] = {}
        fields = type(self).model_fields
        if "kind" in fields:
            out["kind"] = self.kind  # type: ignore[attr-defined]
        shown_all: dict[str, Any] | None = None
        for name, info in fields.items():
            if name == "kind":
                continue
            value = getattr(self, name)
            if value is None:
                continue
            key = info.alias or name
            if not info.is_required():
                default = info.get_default(call_default_factory=True)
                if value == default and not (isinstance(value, Model) and value.to_dict()):
                    continue
            if isinstance(value, Model):
                shown = value.to_dict()
            elif isinstance(value, list) and value and isinstance(value[0], Model):
                shown = [v.to_dict() for v in value]
            else:
                if shown_all is None:
                    shown_all = self.model_dump(mode="json", by_alias=True, warnings=False)
                shown = shown_all[key]
            if shown == {} and not info.is_required():
                continue
            out[key] = shown
        return out


