"""The CLI contract: --help everywhere, exit codes, and no crash or partial output on bad input."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplab.cli import build_parser, main
from tcplab.scenario import EXAMPLE_TOML

COMMANDS = ["run", "sweep", "check", "list", "report"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_defaults(command: str, capsys) -> None:
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: tcplab" in text
    for action in build_parser()._subparsers._group_actions[0].choices[command]._actions:  # type: ignore[union-attr]
        if action.option_strings and action.dest != "help":
            assert action.help and ("default" in action.help), f"{command} {action.option_strings} lacks a default"


def test_top_level_help_and_usage_errors(capsys) -> None:
    assert main(["--help"]) == 0
    assert main([]) == 2
    assert main(["run", "x.toml", "--seed", "-1"]) == 2
    assert main(["run", "x.toml", "--trace", "cwnd,bogus"]) == 2
    assert "unknown trace 'bogus'" in capsys.readouterr().err


def test_list_prints_the_registry(capsys) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("reno", "ns2-sack", "drop_tail", "bernoulli", "initial_rto"):
        assert word in out


def test_list_shows_queue_defaults_and_error_presets_with_units(capsys) -> None:
    import json

    assert main(["list", "--json"]) == 0
    reg = json.loads(capsys.readouterr().out)
    queues = {q["name"]: q.get("defaults", {}) for q in reg["queues"]}
    # RFC 8289 / RFC 8290: target 5 ms, interval 100 ms; RFC 8033: target and tupdate 15 ms.
    assert queues["codel"]["interval"] == "100ms" and queues["codel"]["target"] == "5ms"
    assert queues["codel"]["limit"] == "1000pkt" and queues["fq_codel"]["interval"] == "100ms"
    assert queues["pie"]["target"] == "15ms" and queues["pie"]["tupdate"] == "15ms"
    markov = next(e for e in reg["error_models"] if e["name"] == "markov")
    low = next(p for p in markov["presets"] if p["name"] == "low")["params"]
    assert (low["bad_min"], low["good_max"]) == ("60ms", "30s")  # seed 004's "low" row
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert '"100ms"' in text and "100000000" not in text and "15000000" not in text


def test_invalid_scenario_exits_2_with_located_message_and_writes_nothing(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE_TOML.replace("iw = 10", "iw = 0"))
    out = tmp_path / "out"
    assert main(["run", str(bad), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"{bad}:12: tcp.iw:" in captured.err
    assert not out.exists()


def test_check_accepts_examples(capsys) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples"
    for f in sorted(examples.glob("*.toml")):
        assert main(["check", str(f)]) == 0, f
    assert "ok" in capsys.readouterr().out


fuzz = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@fuzz
@given(st.binary(max_size=300))
def test_random_bytes_exit_2_without_output(tmp_path: Path, capsys, data: bytes) -> None:
    f = tmp_path / "fuzz.toml"
    f.write_bytes(data)
    out = tmp_path / "fuzz-out"
    code = main(["run", str(f), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.startswith("error: ")
    assert not out.exists()


toml_scalars = st.one_of(
    st.integers(-10, 10**6).map(str), st.booleans().map(lambda b: str(b).lower()),
    st.sampled_from(['"2Mbps"', '"70ms"', '"48pkt"', '"-1s"', '"dumbbell"', '"drop_tail"', '"s0"', '"reno"', "[]", "{}", '"x"']),
)
toml_keys = st.sampled_from(["name", "kind", "pairs", "rate", "delay", "limit", "iw", "bytes", "count", "src", "queue", "bogus"])
tables = st.sampled_from(["", "[topology]", "[topology.bottleneck]", "[tcp]", "[cc]", "[[flows]]", "[record]", "[sweep]"])
lines = st.one_of(tables, st.tuples(toml_keys, toml_scalars).map(lambda kv: f"{kv[0]} = {kv[1]}"))


@fuzz
@given(st.lists(lines, max_size=25), st.sampled_from(["run", "sweep", "check"]))
def test_random_toml_exit_2_without_output(tmp_path: Path, capsys, doc: list[str], command: str) -> None:
    f = tmp_path / "fuzz.toml"
    f.write_text("\n".join(doc) + "\n")
    out = tmp_path / "fuzz-out"
    args = [command, str(f)] + (["--out", str(out)] if command != "check" else [])
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.startswith("error: "), (code, captured)
    assert not out.exists()


def test_bench_json_prints_one_object_per_scenario_with_the_documented_keys() -> None:
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tcplab.cli", "bench", "--json", "--scenario", "dumbbell-10x100M-60s"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    row = json.loads(lines[0])
    keys = {"scenario", "wall_s", "setup_s", "sim_s", "events", "events_per_s", "bottleneck_pkts",
            "bottleneck_pkts_per_s", "drops", "bytes_per_flow", "bytes_per_idle_flow", "peak_rss_mb", "cpu_s",
            "bottleneck_pkts_per_cpu_s", "events_per_bottleneck_pkt", "timer_events"}
    assert keys <= set(row)
    # One event per packet per hop on the drop-tail links (sim/fixed_rate.rs): about 4.6 per bottleneck packet.
    assert row["events_per_bottleneck_pkt"] == pytest.approx(row["events"] / row["bottleneck_pkts"])
    assert row["events_per_bottleneck_pkt"] < 5
    assert 0 <= row["timer_events"] < row["events"]
    if row["cpu_s"] is not None:
        assert 0 < row["cpu_s"] and row["bottleneck_pkts_per_cpu_s"] == pytest.approx(row["bottleneck_pkts"] / row["cpu_s"])
    assert row["scenario"] == "dumbbell-10x100M-60s" and row["sim_s"] == pytest.approx(60.0, abs=1e-9)
    assert 0 <= row["setup_s"] < row["wall_s"]
    # Ten idle flows hold a few kB each; running, their scoreboards grow with the window.
    assert 0 < row["bytes_per_idle_flow"] < 4096 and row["bytes_per_idle_flow"] <= row["bytes_per_flow"]
    # The bottleneck is 100 Mbit/s for 60 s: at most 100e6 * 60 / 8 / 1500 = 500,000 packets.
    assert 450_000 < row["bottleneck_pkts"] <= 500_000
    assert row["peak_rss_mb"] is None or row["peak_rss_mb"] < 100


def test_bench_rejects_an_unknown_scenario_naming_the_accepted_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--scenario", "dumbbell-0x10G-2s"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown benchmark scenario 'dumbbell-0x10G-2s'" in err
    assert "dumbbell-10000x10G-2s" in err and "dumbbell-{N}x10G-{S}s" in err
