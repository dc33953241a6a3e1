"""`ScenarioError`: one located, actionable message for every invalid scenario.

Every failure of validation (a pydantic ``ValidationError``, a cross-field check, a
value the simulator core refuses) ends up as a :class:`ScenarioError` naming the file,
the line, the dotted field path (``flows[1].tcp.iw``), the value given and what is
accepted, with a "did you mean" for near misses. One error carries every problem found
(:attr:`ScenarioError.problems`, one line each), so a file's problems are reported
together rather than one per attempt. :func:`from_validation_error` translates
pydantic's errors: it walks the models along each error's ``loc`` (dropping the
discriminator tags pydantic inserts for ``kind`` unions), orders them as the file's
reader meets them (unknown keys of a table before its fields, fields in declaration
order), keeps one per field, and words each from the field's declaration (its
quantity, its range).
"""

from __future__ import annotations

import re

import difflib
import functools
import types
import typing
from typing import Any, Iterable

import annotated_types
from pydantic import BaseModel, ValidationError

__all__ = ["ScenarioError", "UNSET", "show", "near", "from_validation_error"]


class _Unset:
    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "UNSET"


#: Marks "no value given" (``None`` is a value a user can give in Python).
UNSET: Any = _Unset()


class ScenarioError(ValueError):
    """A scenario that cannot run, with where and why.

    Attributes: ``path`` (dotted field path, e.g. ``flows[0].tcp.iw``), ``problem``,
    ``value`` (the value given, if any), ``accepted`` (what would be accepted),
    ``suggestion`` (a near-miss name), ``file`` and ``line`` (when loaded from a file),
    ``context`` (what the path is relative to when the file holds several scenarios, e.g. a
    study file's ``configuration queue=fq_codel, cc_a=bbr``; shown before the path).
    Those describe the first problem; :attr:`problems` lists every problem found, this
    one first, and ``str()`` gives one line per problem.

    Example:
        >>> e = ScenarioError("tcp.iw", "must be at least 1", value=0, accepted="1, 2, ... or 'rfc3390'")
        >>> e.file, e.line = "s.toml", 7
        >>> str(e)
        "s.toml:7: tcp.iw: must be at least 1; got 0; accepted: 1, 2, ... or 'rfc3390'"
        >>> both = ScenarioError.joined([e, ScenarioError("cc.name", "unknown value", value="rneo")])
        >>> print(both)
        s.toml:7: tcp.iw: must be at least 1; got 0; accepted: 1, 2, ... or 'rfc3390'
        cc.name: unknown value; got 'rneo'
        >>> len(both.problems)
        2
    """

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        value: Any = UNSET,
        accepted: str | None = None,
        suggestion: str | None = None,
        file: str | None = None,
        line: int | None = None,
        context: str | None = None,
    ) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem
        self.value = value
        self.accepted = accepted
        self.suggestion = suggestion
        self.file = file
        self.line = line
        self.context = context
        #: The problems found besides this one, in reading order.
        self.others: list[ScenarioError] = []

    @property
    def problems(self) -> list["ScenarioError"]:
        """Every problem this error reports, this one first."""
        return [self, *self.others]

    @classmethod
    def joined(cls, errors: Iterable["ScenarioError"]) -> "ScenarioError":
        """One error that reports each of ``errors`` (flattened, in order); the first leads."""
        flat = list({id(p): p for e in errors for p in e.problems}.values())  # each problem once
        if not flat:
            raise ValueError("ScenarioError.joined needs at least one error")
        head = flat[0]
        head.others = [p for p in flat[1:] if p is not head]
        for p in head.others:
            p.others = []
        return head

    def prefixed(self, prefix: str) -> "ScenarioError":
        """Makes ``path`` absolute by putting ``prefix`` in front (in place, for every problem).

        Example:
            >>> ScenarioError("[2].iw", "bad").prefixed("flows").path
            'flows[2].iw'
        """
        for p in self.problems:
            p._prefix(prefix)
        return self

    def _prefix(self, prefix: str) -> None:
        if prefix:
            if not self.path:
                self.path = prefix
            elif self.path.startswith("["):
                self.path = prefix + self.path
            else:
                self.path = f"{prefix}.{self.path}"

    def __str__(self) -> str:
        return "\n".join(p.one_line() for p in self.problems)

    def one_line(self) -> str:
        """This problem (not the others) as one line: ``file:line: [context: ]path: problem; got ...; accepted: ...``.

        Example:
            >>> ScenarioError("warmup", "must be shorter than duration (2s)", value="3s", file="s.toml", line=4,
            ...               context="configuration warmup=long, duration=short").one_line()
            "s.toml:4: configuration warmup=long, duration=short: warmup: must be shorter than duration (2s); got '3s'"
        """
        loc = ""
        if self.file is not None:
            loc = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        if self.context:
            loc += f"{self.context}: "
        text = f"{loc}{self.path + ': ' if self.path else ''}{self.problem}"
        if self.value is not UNSET:
            text += f"; got {show(self.value)}"
        if self.accepted:
            text += f"; accepted: {self.accepted}"
        if self.suggestion:
            text += f". Did you mean '{self.suggestion}'?"
        return " ".join(text.splitlines())

    def __reduce__(self) -> Any:  # keyword-only arguments: pickle by state
        return (_rebuild, (self.path, self.problem, self.__dict__))


def _rebuild(path: str, problem: str, state: dict[str, Any]) -> ScenarioError:
    e = ScenarioError(path, problem)
    e.__dict__.update(state)
    return e


def show(value: Any) -> str:
    """A value as the message shows it: its repr, cut at 80 characters.

    Example:
        >>> show("70ms"), show(3)
        ("'70ms'", '3')
    """
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def near(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to a misspelt ``name``, if any is close enough.

    Example:
        >>> near("dumbell", ["dumbbell", "graph"]), near("zzz", ["dumbbell"])
        ('dumbbell', None)
    """
    close = difflib.get_close_matches(str(name), list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


# --------------------------------------------------------------------------------------
# pydantic errors -> ScenarioError


def _unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """Strips ``Annotated`` and ``Optional`` from a type; returns it and its metadata."""
    meta: list[Any] = []
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            args = typing.get_args(tp)
            tp, meta = args[0], meta + list(args[1:])
            continue
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
                continue
        return tp, meta


def _variants(tp: Any) -> dict[str, type[BaseModel]]:
    """The models of a ``kind``-tagged union, by tag."""
    out: dict[str, type[BaseModel]] = {}
    for arg in typing.get_args(tp):
        arg, _ = _unwrap(arg)
        if isinstance(arg, type) and issubclass(arg, BaseModel) and "kind" in arg.model_fields:
            out[str(arg.model_fields["kind"].default)] = arg
    return out


class _Located:
    """The result of walking a ``loc``: dotted path, reading order and the leaf field."""

    def __init__(self) -> None:
        self.path = ""
        self.order: list[tuple[int, Any]] = []
        self.field: Any = None  # FieldInfo of the last field crossed
        self.model: type[BaseModel] | None = None  # model owning that field / the extra key
        self.leaf_type: Any = None


def _walk(root: type[BaseModel], loc: tuple[Any, ...], extra: bool) -> _Located:
    out = _Located()
    tp: Any = root
    meta: list[Any] = []
    for i, part in enumerate(loc):
        tp, meta = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            fields = tp.model_fields
            by_alias = {(f.alias or n): n for n, f in fields.items()}
            out.model = tp
            if part in by_alias or part in fields:
                name = by_alias.get(part, part)
                info = fields[name]
                out.field = info
                out.order.append((1, list(fields).index(name)))
                out.path = f"{out.path}.{info.alias or name}" if out.path else str(info.alias or name)
                tp = info.rebuild_annotation() if hasattr(info, "rebuild_annotation") else info.annotation
                continue
            # An unknown key (extra_forbidden): read before the table's fields.
            out.order.append((0 if extra and i == len(loc) - 1 else 2, str(part)))
            out.path = f"{out.path}.{part}" if out.path else str(part)
            tp = None
            continue
        origin = typing.get_origin(tp)
        if origin in (list, tuple) and isinstance(part, int):
            out.order.append((1, part))
            out.path = f"{out.path}[{part}]"
            args = typing.get_args(tp)
            tp = args[0] if args else None
            continue
        if origin is dict:
            out.order.append((1, str(part)))
            out.path = f"{out.path}.{part}" if out.path else str(part)
            args = typing.get_args(tp)
            tp = args[1] if len(args) == 2 else None
            continue
        if origin in (typing.Union, types.UnionType):
            variants = _variants(tp)
            if isinstance(part, str) and part in variants:
                tp = variants[part]  # a discriminator tag: not part of the user's path
                continue
        # Anything else (an unexpected shape): keep the element verbatim.
        out.order.append((1, str(part)))
        out.path = f"{out.path}.{part}" if out.path else str(part)
        tp = None
    out.leaf_type = tp
    out.leaf_meta = meta  # type: ignore[attr-defined]
    return out


def _bounds(info: Any) -> tuple[float | None, float | None]:
    lo = hi = None
    for m in getattr(info, "metadata", []) or []:
        if isinstance(m, annotated_types.Ge):
            lo = m.ge  # type: ignore[assignment]
        elif isinstance(m, annotated_types.Le):
            hi = m.le  # type: ignore[assignment]
    return lo, hi


def _quantity_of(info: Any) -> Any:
    """The quantity annotation (see quantities.py) of a field, if it has one."""
    if info is None:
        return None
    ann = info.rebuild_annotation() if hasattr(info, "rebuild_annotation") else info.annotation
    _, meta = _unwrap(ann)
    for m in list(meta) + list(getattr(info, "metadata", []) or []):
        if hasattr(m, "format_bound"):
            return m
    return None


def bound_text(info: Any, bound: float) -> str:
    """A range bound as the user writes it (with its unit for quantities)."""
    q = _quantity_of(info)
    if q is not None and bound >= 0:
        return q.format_bound(int(bound))
    if isinstance(bound, int):
        return str(bound)
    return f"{bound:g}"


def range_text(info: Any, what: str) -> str:
    """``what`` with the field's declared range, e.g. ``an integer in [1, 100000]``."""
    lo, hi = _bounds(info)
    if lo is not None and hi is not None:
        return f"{what} in [{bound_text(info, lo)}, {bound_text(info, hi)}]"
    if lo is not None:
        return f"{what} >= {bound_text(info, lo)}"
    return what


def _lookup(data: Any, loc: tuple[Any, ...]) -> Any:
    """The value at ``loc`` in the input document (tags skipped), or UNSET."""
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(node, BaseModel) and isinstance(part, str) and hasattr(node, part):
            node = getattr(node, part)
        elif isinstance(node, dict) and isinstance(part, str) and node.get("kind", part) == part:
            continue  # a discriminator tag
        else:
            return UNSET
    return node


def _accepted_for_missing(info: Any, leaf_type: Any) -> str | None:
    q = _quantity_of(info)
    if q is not None:
        return q.accepted_text
    tp, _ = _unwrap(leaf_type)
    variants = _variants(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else {}
    if variants:
        return "a table with kind = " + " | ".join(variants)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "table"
    return None


def _translate(root: type[BaseModel], err: dict[str, Any], data: Any) -> list[tuple[list[tuple[int, Any]], ScenarioError]]:
    """Every problem one pydantic error stands for (a validator may report several), with its reading order."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), ScenarioError):
        where = _walk(root, tuple(err["loc"]), extra=False)
        out = []
        for n, p in enumerate(ctx["error"].problems):
            e = ScenarioError(p.path, p.problem, value=p.value, accepted=p.accepted, suggestion=p.suggestion)
            # A validator reports its problems in reading order, after the fields it checked.
            out.append((where.order + [(3, n)], e.prefixed(where.path)))
        return out
    return [_translate_one(root, err, data)]


def _translate_one(root: type[BaseModel], err: dict[str, Any], data: Any) -> tuple[list[tuple[int, Any]], ScenarioError]:
    kind = err["type"]
    loc = tuple(err["loc"])
    where = _walk(root, loc, extra=kind == "extra_forbidden")
    info = where.field
    given = err.get("input", UNSET)
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = where.path.rsplit(".", 1)[0] if "." in where.path else ""
        names = [f.alias or n for n, f in where.model.model_fields.items()] if where.model else []
        key = str(loc[-1])
        e = ScenarioError(key, "unknown field", accepted=", ".join(names), suggestion=near(key, names))
        return where.order, e.prefixed(parent)
    if kind == "missing":
        return where.order, ScenarioError(
            where.path, "is required (missing)", accepted=_accepted_for_missing(info, where.leaf_type)
        )
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        variants = list(_variants(_unwrap(where.leaf_type)[0]))
        if kind == "union_tag_not_found" and not isinstance(given, dict):
            return where.order, ScenarioError(where.path, "must be a table", value=given)
        if kind == "union_tag_not_found":
            e = ScenarioError("kind", "is required", accepted=", ".join(variants))
        else:
            tag = ctx.get("tag")
            e = ScenarioError("kind", "unknown kind", value=tag, accepted=", ".join(variants),
                              suggestion=near(str(tag), variants))
        return where.order + [(1, "kind")], e.prefixed(where.path)
    original = _lookup(data, loc)
    shown = original if original is not UNSET else given
    if kind == "literal_error" and loc and loc[-1] == "kind":
        # A table with a single kind so far (e.g. `mac`): word it as the tagged unions are.
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return where.order, ScenarioError(where.path, "unknown kind", value=shown, accepted=", ".join(expected),
                                          suggestion=near(str(shown), expected))
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return where.order, ScenarioError(where.path, "must be a table", value=shown)
    if kind == "list_type":
        return where.order, ScenarioError(where.path, "must be a list of tables (write [[...]] entries)", value=shown)
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return where.order, ScenarioError(where.path, "must be an integer", value=shown,
                                          accepted=range_text(info, "an integer"))
    if kind in ("float_type", "float_parsing"):
        return where.order, ScenarioError(where.path, "must be a number", value=shown,
                                          accepted=range_text(info, "a number"))
    if kind == "finite_number":
        return where.order, ScenarioError(where.path, "must be a finite number", value=shown,
                                          accepted=range_text(info, "a number"))
    if kind in ("bool_type", "bool_parsing"):
        return where.order, ScenarioError(where.path, "must be true or false", value=shown, accepted="true, false")
    if kind in ("string_type", "string_sub_type"):
        return where.order, ScenarioError(where.path, "must be a string", value=shown)
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return where.order, ScenarioError(where.path, f"must be at least {bound_text(info, bound)}", value=shown,
                                          accepted=range_text(info, "a value"))
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        return where.order, ScenarioError(where.path, f"must be at most {bound_text(info, bound)}", value=shown,
                                          accepted=range_text(info, "a value"))
    return where.order, ScenarioError(where.path, str(err.get("msg", kind)).removeprefix("Value error, "), value=shown)


def from_validation_error(root: type[BaseModel], exc: ValidationError, data: Any = UNSET) -> ScenarioError:
    """Every problem of ``exc`` as one :class:`ScenarioError`, in the order a reader of
    the file meets them, one per field (the first leads; :attr:`ScenarioError.problems`).

    ``root`` is the model that was validated, ``data`` its input (to show values as the
    user wrote them). A field that fails several ways (each member of a union, say)
    is reported once, by its first problem; so is a table and a field inside it.

    Example:
        >>> from pydantic import BaseModel, ConfigDict
        >>> class T(BaseModel):
        ...     model_config = ConfigDict(extra="forbid", strict=True)
        ...     iw: int = 1
        >>> try:
        ...     T.model_validate({"iww": 3})
        ... except ValidationError as exc:
        ...     print(from_validation_error(T, exc))
        iww: unknown field; accepted: iw. Did you mean 'iw'?
    """
    found: list[tuple[list[tuple[int, Any]], int, ScenarioError]] = []
    for n, err in enumerate(exc.errors(include_url=False)):
        for order, e in _translate(root, err, data):
            key = [(a, str(b)) if not isinstance(b, int) else (a, b) for a, b in order]
            found.append((key, n, e))
    ordered = sorted(found, key=functools.cmp_to_key(lambda a, b: -1 if _before(a[0], b[0]) else
                                                     (1 if _before(b[0], a[0]) else 0)))
    kept: list[tuple[int, ScenarioError]] = []
    for _, n, e in ordered:
        # Problems of one pydantic error (one validator's list) are distinct by construction.
        if not any(_overlap(e.path, k.path) and n != m for m, k in kept):
            kept.append((n, e))
    # A misspelt key (`nme`, "did you mean 'name'") also leaves its field missing: one problem.
    misspelt = {_sibling(e.path, e.suggestion) for _, e in kept if e.problem == "unknown field" and e.suggestion}
    kept = [(n, e) for n, e in kept if not (e.problem.startswith("is required") and e.path in misspelt)]
    assert kept
    return ScenarioError.joined(e for _, e in kept)


def _sibling(path: str, name: str | None) -> str:
    """The path of key ``name`` in the table that holds ``path``.

    Example:
        >>> _sibling("flows[0].nme", "name"), _sibling("nme", "name")
        ('flows[0].name', 'name')
    """
    parent = path.rsplit(".", 1)[0] if "." in path else ""
    return f"{parent}.{name}" if parent else str(name)


def _overlap(a: str, b: str) -> bool:
    """Whether one dotted path is the other or lies inside it (``flows[1]`` and ``flows[1].bytes``).

    Example:
        >>> _overlap("flows[1]", "flows[1].bytes"), _overlap("flows[1]", "flows[10]"), _overlap("", "tcp")
        (True, False, False)
    """
    if not a or not b:
        return a == b
    short, long_ = sorted((a, b), key=len)
    return long_ == short or long_.startswith(short + ".") or long_.startswith(short + "[")


def _before(a: list[tuple[int, Any]], b: list[tuple[int, Any]]) -> bool:
    for x, y in zip(a, b):
        if x == y:
            continue
        if x[0] != y[0]:
            return x[0] < y[0]
        if type(x[1]) is type(y[1]):
            return x[1] < y[1]
        return str(x[1]) < str(y[1])
    return len(a) < len(b)


# Users meet the error as ``tcplab.scenario.ScenarioError`` (its public home).
ScenarioError.__module__ = "tcplab.scenario"
