"""Quantities with units, as scenario files write them (docs/scenarios.md).

The core takes plain SI integers (``scenario.rs``): rates in bit/s, times in integer
nanoseconds, sizes in bytes. This module turns the strings researchers write into
those integers, and back:

- rates: ``"2Mbps"``, ``"160kbps"``, ``"1Gbps"``, ``"256kbit/s"``, ``"9600bps"``;
- times: ``"70ms"``, ``"1s"``, ``"250us"`` (or ``"250µs"``), ``"1.5s"``, ``"2min"``;
- sizes: ``"180kB"`` (k = 1000), ``"28.8kB"``, ``"64KiB"`` (Ki = 1024), ``"1500B"``;
- packet counts: ``"48pkt"``;
- buffer limits: a size or a packet count (``"48pkt"`` or ``"40kB"``).

Numbers are parsed as exact decimals (``decimal.Decimal``), so ``"28.8kB"`` is exactly
28 800 bytes; a value that is not a whole number of the base unit (``"1.5B"``,
``"0.5ns"``) is an error rather than silently rounded. Unit symbols are
case-sensitive (``"mbps"`` would be milli-bits); a near miss gets a "did you mean".
Every error is a :class:`UnitError` (a ``ValueError``) naming the value and the
accepted units.

Example:
    >>> parse_rate("2Mbps"), parse_time("70ms"), parse_size("28.8kB")
    (2000000, 70000000, 28800)
    >>> parse_limit("48pkt"), parse_limit("64KiB")
    (('packets', 48), ('bytes', 65536))
    >>> format_rate(160_000), format_time(1_500_000_000), format_size(180_000)
    ('160kbps', '1.5s', '180kB')
"""

from __future__ import annotations

import difflib
import re
from decimal import Decimal, InvalidOperation
from typing import Literal

__all__ = [
    "UnitError",
    "RATE_UNITS",
    "TIME_UNITS",
    "SIZE_UNITS",
    "PACKET_UNITS",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_packets",
    "parse_limit",
    "format_rate",
    "format_time",
    "format_size",
    "format_limit",
]


class UnitError(ValueError):
    """A quantity string that cannot be parsed; the message says what is accepted.

    Example:
        >>> parse_rate("2 furlongs")
        Traceback (most recent call last):
        ...
        tcplab.units.UnitError: unknown rate unit 'furlongs' in '2 furlongs'; accepted: bps, kbps, Mbps, Gbps, Tbps, bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s
    """


#: Rate units, in bit/s.
RATE_UNITS: dict[str, int] = {
    "bps": 1,
    "kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
    "bit/s": 1,
    "kbit/s": 10**3,
    "Mbit/s": 10**6,
    "Gbit/s": 10**9,
    "Tbit/s": 10**12,
}
#: Time units, in nanoseconds.
TIME_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
#: Size units, in bytes (SI prefixes are powers of 1000, IEC ones of 1024).
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
#: Packet-count units.
PACKET_UNITS: dict[str, int] = {"pkt": 1}

# Common spellings that are refused, with what to write instead.
_HINTS: dict[str, str] = {
    "KB": "kB (1000 B) or KiB (1024 B)",
    "kb": "kB (bytes) or kbps (a rate)",
    "Kbps": "kbps",
    "mbps": "Mbps",
    "gbps": "Gbps",
    "MBps": "Mbps (bit/s); byte rates are not accepted",
    "b": "B (bytes)",
    "sec": "s",
    "msec": "ms",
    "usec": "us",
    "pkts": "pkt",
    "packets": "pkt",
    "p": "pkt",
}

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?P<unit>[^\s\d.+-][^\s]*)?\s*$")

Dimension = Literal["rate", "time", "size", "packet count"]


def _accepted(units: dict[str, int]) -> str:
    return ", ".join(units)


def _parse(text: object, units: dict[str, int], dimension: str) -> tuple[int, str]:
    """Parses ``text`` against one table of units; returns (base-unit int, unit)."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(
            f"a {dimension} must be a string with a unit, like "
            f"'{_example(dimension)}'; got {text!r} (accepted units: {_accepted(units)})"
        )
    m = _QUANTITY.match(text)
    if m is None:
        raise UnitError(
            f"cannot read {text!r} as a {dimension}: expected a number followed by a unit, "
            f"like '{_example(dimension)}' (accepted units: {_accepted(units)})"
        )
    unit = m.group("unit")
    if unit is None:
        raise UnitError(
            f"{dimension} {text!r} has no unit; write e.g. '{_example(dimension)}' "
            f"(accepted units: {_accepted(units)})"
        )
    if unit not in units:
        raise UnitError(
            f"unknown {dimension} unit '{unit}' in {text!r}; accepted: {_accepted(units)}"
            + _suggest(unit, units)
        )
    try:
        number = Decimal(m.group("num"))
    except InvalidOperation as e:  # pragma: no cover - the regex admits only valid numbers
        raise UnitError(f"cannot read the number in {text!r}") from e
    if number.is_signed() and number != 0:
        raise UnitError(f"a {dimension} cannot be negative; got {text!r}")
    if abs(number.adjusted()) > 30:
        raise UnitError(f"{dimension} {text!r} is out of range")
    value = number * units[unit]
    if value != value.to_integral_value():
        base = next(iter(units))
        raise UnitError(
            f"{dimension} {text!r} is not a whole number of {base} "
            f"(the core counts in integer {base})"
        )
    result = int(value)
    if result >= 2**64:
        raise UnitError(f"{dimension} {text!r} is out of range (at most 2^64-1 base units)")
    return result, unit


def _suggest(unit: str, units: dict[str, int]) -> str:
    if unit in _HINTS:
        return f". Did you mean {_HINTS[unit]}?"
    lowered = {u.lower(): u for u in units}
    if unit.lower() in lowered:
        return f". Did you mean '{lowered[unit.lower()]}'? (units are case-sensitive)"
    close = difflib.get_close_matches(unit, list(units), n=1, cutoff=0.6)
    return f". Did you mean '{close[0]}'?" if close else ""


def _example(dimension: str) -> str:
    return {"rate": "2Mbps", "time": "70ms", "size": "180kB", "packet count": "48pkt"}.get(
        dimension, "48pkt or 40kB"
    )


def parse_rate(text: object) -> int:
    """A rate in bit/s.

    Example:
        >>> parse_rate("256kbit/s"), parse_rate("1Gbps"), parse_rate("1.5Mbps")
        (256000, 1000000000, 1500000)
    """
    return _parse(text, RATE_UNITS, "rate")[0]


def parse_time(text: object) -> int:
    """A time or duration in integer nanoseconds.

    Example:
        >>> parse_time("250us"), parse_time("1.5s"), parse_time("0s")
        (250000, 1500000000, 0)
    """
    return _parse(text, TIME_UNITS, "time")[0]


def parse_size(text: object) -> int:
    """A size in bytes (kB = 1000 B, KiB = 1024 B).

    Example:
        >>> parse_size("180kB"), parse_size("64KiB"), parse_size("1500B")
        (180000, 65536, 1500)
    """
    return _parse(text, SIZE_UNITS, "size")[0]


def parse_packets(text: object) -> int:
    """A packet count.

    Example:
        >>> parse_packets("48pkt")
        48
    """
    return _parse(text, PACKET_UNITS, "packet count")[0]


def parse_limit(text: object) -> tuple[Literal["packets", "bytes"], int]:
    """A buffer limit: ``("packets", n)`` for ``"48pkt"``, ``("bytes", n)`` for a size.

    Example:
        >>> parse_limit("48pkt"), parse_limit("28.8kB")
        (('packets', 48), ('bytes', 28800))
    """
    both = {**PACKET_UNITS, **SIZE_UNITS}
    n, unit = _parse(text, both, "buffer limit")
    return ("packets", n) if unit in PACKET_UNITS else ("bytes", n)


def _format(value: int, units: list[tuple[str, int]]) -> str:
    """The largest unit that shows ``value`` exactly with at most 3 decimals."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnitError(f"expected a non-negative integer, got {value!r}")
    for name, mult in sorted(units, key=lambda u: -u[1]):
        q = Decimal(value) / Decimal(mult)
        if value >= mult and q == q.quantize(Decimal("0.001")):
            text = format(q.normalize(), "f")
            return f"{text}{name}"
    return f"{value}{units[0][0]}"


def format_rate(bps: int) -> str:
    """Formats bit/s with the largest exact unit; ``parse_rate`` inverts it.

    Example:
        >>> format_rate(2_000_000), format_rate(1_500), format_rate(7)
        ('2Mbps', '1.5kbps', '7bps')
    """
    return _format(bps, [("bps", 1), ("kbps", 10**3), ("Mbps", 10**6), ("Gbps", 10**9)])


def format_time(ns: int) -> str:
    """Formats nanoseconds with the largest exact unit; ``parse_time`` inverts it.

    Example:
        >>> format_time(70_000_000), format_time(250_000), format_time(0)
        ('70ms', '250us', '0ns')
    """
    return _format(ns, [("ns", 1), ("us", 10**3), ("ms", 10**6), ("s", 10**9)])


def format_size(nbytes: int) -> str:
    """Formats bytes readably and exactly; ``parse_size`` inverts it.

    The largest unit (SI or IEC) that divides the value wins; otherwise sizes of 10 kB
    and more use kB/MB/GB with at most two decimals, and the rest stay in bytes.

    Example:
        >>> format_size(28_800), format_size(1460), format_size(65536), format_size(6 * 2**20)
        ('28.8kB', '1460B', '64KiB', '6MiB')
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise UnitError(f"expected a non-negative integer, got {nbytes!r}")
    for name, mult in sorted(SIZE_UNITS.items(), key=lambda u: -u[1]):
        if nbytes >= mult and nbytes % mult == 0 and mult > 1:
            return f"{nbytes // mult}{name}"
    if nbytes >= 10_000:
        for name, mult in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
            q = Decimal(nbytes) / Decimal(mult)
            if nbytes >= mult and q == q.quantize(Decimal("0.01")):
                return f"{format(q.normalize(), 'f')}{name}"
    return f"{nbytes}B"


def format_limit(kind: str, n: int) -> str:
    """Formats a buffer limit; ``parse_limit`` inverts it.

    Example:
        >>> format_limit("packets", 48), format_limit("bytes", 40_000)
        ('48pkt', '40kB')
    """
    if kind == "packets":
        return f"{n}pkt"
    if kind == "bytes":
        return format_size(n)
    raise UnitError(f"unknown limit kind {kind!r}; accepted: packets, bytes")
