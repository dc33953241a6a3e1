"""Files and line numbers: reading a scenario file and locating a field's line.

``tomllib`` reports no line numbers for values, so :class:`TomlLocator` scans the
source text once, tracking ``[table]`` and ``[[array]]`` headers (with their running
indices) and ``key = value`` lines (dotted and quoted keys, keys of one-line inline
tables), and maps each dotted path (``flows[1].tcp.iw``) to the line that set it. A
path that was never written (a missing field) falls back to its nearest written
parent, e.g. the ``[[flows]]`` header. Multi-line strings are skipped. The dotted paths
are those of :class:`~tcplab.scenario.errors.ScenarioError`, which pydantic's ``loc``
is translated to (errors.py), so every error gets its line.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from tcplab.scenario.errors import ScenarioError

__all__ = ["TomlLocator", "parse_toml", "read_text", "located"]


def parse_toml(text: str, file: str = "<string>") -> dict[str, Any]:
    """``tomllib.loads`` with its error turned into a :class:`ScenarioError`.

    Example:
        >>> parse_toml("a = ", "x.toml")
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: x.toml:1: not valid TOML: Invalid value (at end of document)
    """
    text = text.removeprefix("\ufeff")  # a byte order mark, as read_text drops it
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        line = int(m.group(1)) if m else (text.count("\n") + 1 if "end of document" in str(e) else None)
        raise ScenarioError("", f"not valid TOML: {e}", file=file, line=line) from None
    except RecursionError:
        raise ScenarioError("", "not valid TOML: nested too deeply", file=file) from None


#: What a path that is not a regular file is, by its ``stat`` mode.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def read_text(path: str | Path) -> str:
    """A file's text as UTF-8, with unreadable files as :class:`ScenarioError`.

    The path must be a regular file: it is opened without blocking and checked before
    anything is read, so a FIFO or a device is refused at once instead of blocking.
    A UTF-8 byte order mark (which some Windows editors write) is dropped.

    Example:
        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> fifo = os.path.join(d, "s.toml"); os.mkfifo(fifo)
        >>> read_text(fifo)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tcplab.scenario.ScenarioError: /.../s.toml: cannot read the file: it is a FIFO (named pipe), not a regular file
        >>> bom = os.path.join(d, "b.toml"); _ = open(bom, "wb").write(b"\\xef\\xbb\\xbfname = 'x'\\n")
        >>> read_text(bom)
        "name = 'x'\\n"
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ScenarioError("", "expected the path of a scenario file", value=path, accepted="a str or pathlib.Path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ScenarioError("", f"cannot read the file: {e.strerror or e}", file=str(path)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise ScenarioError("", f"cannot read the file: it is {kind}, not a regular file", file=str(path))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read()
    except OSError as e:
        raise ScenarioError("", f"cannot read the file: {e.strerror or e}", file=str(path)) from None
    finally:
        os.close(fd)
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ScenarioError("", f"not UTF-8 text (byte {e.start})", file=str(path), line=line) from None


def located(e: ScenarioError, text: str, file: str) -> ScenarioError:
    """Sets the ``file`` and, from the text, the ``line`` of each of the error's problems;
    returns them as one error in the order of their lines (problems of the whole file first).

    Example:
        >>> e = ScenarioError.joined([ScenarioError("tcp.iw", "bad"), ScenarioError("name", "bad")])
        >>> print(located(e, 'name = 3\\n[tcp]\\niw = 0\\n', "s.toml"))
        s.toml:1: name: bad
        s.toml:3: tcp.iw: bad
    """
    locator: TomlLocator | None = None
    problems = e.problems
    for p in problems:
        p.others = []  # regrouped below, in line order
        p.file = file
        if p.line is None:
            locator = locator or TomlLocator(text)
            p.line = locator.line(p.path)
    return ScenarioError.joined(sorted(problems, key=lambda p: p.line or 0))

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

    An array of inline tables written over several lines (``links = [`` then one
    ``{ name = ... }`` per line) maps each element (``links[2]``) and its keys to the
    element's line.

    Example:
        >>> loc = TomlLocator('[tcp]\\niw = 0\\n[[flows]]\\nsrc = "s0"\\n[[flows]]\\ntcp = { iw = 3 }\\n')
        >>> loc.line("tcp.iw"), loc.line("flows[1].tcp.iw"), loc.line("flows[1].bytes")
        (2, 6, 5)
        >>> loc = TomlLocator('links = [\\n  { name = "a" },\\n  { name = "b", rate = "1Mbps" },  # b\\n]\\nx = 1\\n')
        >>> loc.line("links[0].name"), loc.line("links[1].rate"), loc.line("links[1]"), loc.line("x")
        (2, 3, 3, 5)
    """

    def __init__(self, text: str) -> None:
        self.paths: dict[str, int] = {}
        arrays: dict[str, int] = {}
        prefix = ""
        in_multiline: str | None = None
        in_array: _InlineArray | None = None
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if in_multiline is not None:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            if in_array is not None:
                in_array.feed(line, n, self.paths)
                if in_array.closed:
                    in_array = None
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
                elif rest.lstrip().startswith("[") and in_multiline is None:
                    array = _InlineArray(full)
                    array.feed(rest.lstrip()[1:], n, self.paths)
                    in_array = None if array.closed else array

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


_RE_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')


class _InlineArray:
    """An array value read line by line: which element each ``{`` opens, and where the
    array closes (strings and comments skipped)."""

    def __init__(self, path: str) -> None:
        self.path, self.element, self.depth, self.braces, self.closed = path, -1, 1, 0, False

    def feed(self, text: str, n: int, paths: dict[str, int]) -> None:
        code = _RE_STRING.sub('""', text).split("#", 1)[0]
        start = 0
        for i, ch in enumerate(code):
            if ch == "{":
                if self.braces == 0 and self.depth == 1:
                    self.element += 1
                    paths.setdefault(f"{self.path}[{self.element}]", n)
                    start = i
                self.braces += 1
            elif ch == "}":
                self.braces -= 1
                if self.braces == 0 and self.depth == 1:
                    for km in _RE_INLINE_KEY.finditer(code[start:i]):
                        paths.setdefault(_join(f"{self.path}[{self.element}]", km.group(1)), n)
            elif ch == "[" and self.braces == 0:
                self.depth += 1
            elif ch == "]" and self.braces == 0:
                self.depth -= 1
                if self.depth == 0:
                    self.closed = True
                    return


def _join(prefix: str, part: str) -> str:
    return f"{prefix}.{part}" if prefix else part
