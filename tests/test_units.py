"""Unit parsing and formatting (tcplab.units): hand-checked values and properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplab import units
from tcplab.units import UnitError


@pytest.mark.parametrize(
    "text, parse, expected",
    [
        ("2Mbps", units.parse_rate, 2_000_000),
        ("160kbps", units.parse_rate, 160_000),
        ("1Gbps", units.parse_rate, 1_000_000_000),
        ("256kbit/s", units.parse_rate, 256_000),
        ("1.5Mbps", units.parse_rate, 1_500_000),
        ("70ms", units.parse_time, 70_000_000),
        ("1s", units.parse_time, 1_000_000_000),
        ("250us", units.parse_time, 250_000),
        ("250µs", units.parse_time, 250_000),
        ("1.5s", units.parse_time, 1_500_000_000),
        ("2min", units.parse_time, 120_000_000_000),
        (" 11 ms ", units.parse_time, 11_000_000),
        ("180kB", units.parse_size, 180_000),
        ("28.8kB", units.parse_size, 28_800),  # exact decimal: not 28799 from float error
        ("14.4kB", units.parse_size, 14_400),
        ("64KiB", units.parse_size, 65_536),
        ("1500B", units.parse_size, 1_500),
        ("1e3B", units.parse_size, 1_000),
        ("48pkt", units.parse_packets, 48),
    ],
)
def test_parses_the_units_scenarios_use(text: str, parse, expected: int) -> None:
    assert parse(text) == expected


def test_limits_say_which_kind() -> None:
    assert units.parse_limit("48pkt") == ("packets", 48)
    assert units.parse_limit("40kB") == ("bytes", 40_000)


@pytest.mark.parametrize(
    "text, parse, fragment",
    [
        ("2", units.parse_rate, "has no unit"),
        (2, units.parse_rate, "must be a string with a unit"),
        ("-2Mbps", units.parse_rate, "cannot be negative"),
        ("2mbps", units.parse_rate, "Did you mean Mbps"),
        ("180KB", units.parse_size, "kB (1000 B) or KiB"),
        ("1.5B", units.parse_size, "not a whole number of B"),
        ("0.5ns", units.parse_time, "not a whole number of ns"),
        ("70 mss", units.parse_time, "unknown time unit 'mss'"),
        ("fast", units.parse_rate, "expected a number followed by a unit"),
        ("48pkts", units.parse_packets, "Did you mean pkt"),
        ("1e40bps", units.parse_rate, "out of range"),
        ("20000000000s", units.parse_time, "out of range"),
    ],
)
def test_bad_quantities_say_what_is_accepted(text, parse, fragment: str) -> None:
    with pytest.raises(UnitError, match=None) as info:
        parse(text)
    assert fragment in str(info.value)


naturals = st.integers(min_value=0, max_value=2**63)


@given(naturals)
def test_rate_round_trip(n: int) -> None:
    assert units.parse_rate(units.format_rate(n)) == n


@given(naturals)
def test_time_round_trip(n: int) -> None:
    assert units.parse_time(units.format_time(n)) == n


@given(naturals)
def test_size_round_trip(n: int) -> None:
    assert units.parse_size(units.format_size(n)) == n


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(units.SIZE_UNITS)))
def test_integer_with_any_size_unit(n: int, unit: str) -> None:
    assert units.parse_size(f"{n}{unit}") == n * units.SIZE_UNITS[unit]


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(units.TIME_UNITS)))
def test_integer_with_any_time_unit(n: int, unit: str) -> None:
    assert units.parse_time(f"{n}{unit}") == n * units.TIME_UNITS[unit]


@settings(max_examples=500)
@given(st.one_of(st.text(max_size=30), st.from_regex(r"[-+]?[0-9.eE]{0,8}[A-Za-zµ/]{0,6}", fullmatch=True)))
def test_random_strings_never_crash(text: str) -> None:
    for parse in (units.parse_rate, units.parse_time, units.parse_size, units.parse_packets, units.parse_limit):
        try:
            value = parse(text)
        except UnitError:
            continue
        assert value is not None and (isinstance(value, int) or isinstance(value, tuple))
