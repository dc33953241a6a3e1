"""The fidelity grid (docs/validation.md): grid.toml validation, the agreement rule, the table and
the report, and ``--sim-only`` against stored kernel runs.

These tests need no root: stored "kernel" runs are written by the simulator with other
seeds (so the two sides differ as a kernel's would), which exercises everything but the
emulator itself; tests/test_emulation.py runs a small grid on the real kernel.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab import run
from tcplab.cli import main
from tcplab.fidelity import TRACES
from tcplab.fidelity_grid import GRID_METRICS, agrees, load_grid, run_grid, summarise
from tcplab.scenario import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "examples" / "fidelity" / "loss-grid"


def small_grid(tmp_path: Path, reps: int = 3, ccs: str = '["reno", "cubic"]', extra: str = "") -> Path:
    """One 3-second grid scenario (1% loss) with ``ccs``."""
    d = tmp_path / "grid"
    d.mkdir()
    (d / "loss1.toml").write_text((GRID / "loss1.toml").read_text().replace('duration = "20s"', 'duration = "3s"'))
    (d / "grid.toml").write_text(f'name = "small"\nscenarios = ["loss1.toml"]\nccs = {ccs}\nreps = {reps}\n{extra}')
    return d


def fake_kernel_runs(grid_dir: Path, out: Path) -> None:
    """Stores, for every point and rep r, the simulator's run with seed 100 + r as the
    "kernel" run (different loss draws: a side that differs as a kernel's would)."""
    grid, points = load_grid(grid_dir)
    for p in points:
        for r in range(grid.reps):
            run(p.scenario, seed=100 + r, trace=TRACES).write(out / "kernel" / p.id / f"rep-{r}")


def test_shipped_grid_has_the_issues_points() -> None:
    grid, points = load_grid(GRID)
    assert grid.ccs == ["reno", "cubic", "bbr"] and grid.reps >= 5 and grid.tolerance == 0.05
    assert len(points) == 18
    losses = set()
    for p in points:
        core = p.scenario.to_core()
        link = core["topology"]["bottleneck"]
        losses.add((link["error"]["kind"], link["error"].get("per"), link["delay"]))
        assert link["rate"] == 10_000_000 and link["queue"]["kind"] == "drop_tail"
        assert core["flows"][0]["cc"]["name"] == p.cc
    assert {("bernoulli", per, 20_000_000) for per in (0.001, 0.01, 0.02, 0.05)} <= losses
    assert ("markov", None, 20_000_000) in losses and ("bernoulli", 0.01, 100_000_000) in losses


def test_options_off_grid_is_the_shipped_grid_with_the_earlier_kernel_options() -> None:
    """examples/fidelity/loss-grid-options-off: the same 18 points, with the options the first
    kernel runs had off (tcp_timestamps = 0, tcp_frto = 0, no quick-ACK model) on both sides;
    the shipped grid's points are the kernel's defaults (the linux profile)."""
    _, new = load_grid(GRID)
    _, old = load_grid(GRID.parent / "loss-grid-options-off")
    assert [p.id for p in old] == [p.id for p in new]
    for p, q in zip(old, new):
        a, b = p.scenario.to_core()["flows"][0]["tcp"], q.scenario.to_core()["flows"][0]["tcp"]
        assert (a["timestamps"], a["header_bytes"], a["mss"], a["frto"], a["quickack"]) == (False, 40, 1460, False, False)
        assert b.get("timestamps") in (None, True) and b.get("frto") in (None, True)


@pytest.mark.parametrize("line, where, says", [
    ('ccs = ["reno", "cubicc"]', "ccs[1]", "unknown congestion control"),
    ('scenarios = ["nope.toml"]', "scenarios[0]", "no such scenario file"),
    ("reps = 1", "reps", "greater than or equal to 2"),
    ("colour = 1", "colour", "accepted: name"),
    ("tcp = { frto = 3 }", "tcp.frto", "valid boolean"),
])
def test_bad_grid_files_are_named_with_their_line(tmp_path: Path, line: str, where: str, says: str) -> None:
    d = small_grid(tmp_path)
    text = (d / "grid.toml").read_text()
    key = line.split(" =")[0]
    kept = [ln for ln in text.splitlines() if not ln.startswith(key + " ")]
    (d / "grid.toml").write_text("\n".join(kept + [line]) + "\n")
    with pytest.raises(ScenarioError) as e:
        load_grid(d)
    msg = str(e.value)
    assert e.value.path == where and says in msg and "grid.toml:" in msg, msg
    assert e.value.line == len(kept) + 1, msg


def test_agreement_rule_takes_the_wider_of_tolerance_and_ci() -> None:
    assert agrees(100.0, 104.9, math.nan, 0.05) and not agrees(100.0, 105.1, math.nan, 0.05)
    assert agrees(100.0, 94.0, 6.5, 0.05) and not agrees(100.0, 93.0, 6.5, 0.05)


def test_summarise_gives_the_kernel_ci_and_the_relative_error() -> None:
    rows = []
    for r, (s, k) in enumerate([(10.0, 11.0), (10.0, 12.0), (10.0, 13.0)]):
        for side, v in (("sim", s), ("kernel", k)):
            rows.append({"point": "p-reno", "scenario": "p", "cc": "reno", "side": side, "rep": r,
                         "metric": "goodput_bps", "value": v})
    t = summarise(pd.DataFrame(rows), 0.05).iloc[0]
    # kernel mean 12, sd 1, n 3: half-width t(0.975, 2) / sqrt(3) = 4.3027 / 1.7321 = 2.484.
    assert t["kernel"] == 12.0 and t["rel_error"] == pytest.approx(0.2)
    assert t["kernel_high"] - t["kernel"] == pytest.approx(2.484, abs=1e-3)
    assert bool(t["agrees"])  # |12 - 10| = 2 <= 2.484
    # Paired by seed: errors +10%, +20%, +30%: mean +20%, half-width 4.3027 * 0.1 / sqrt(3).
    assert t["paired_rel_error"] == pytest.approx(0.2)
    assert t["paired_high"] - t["paired_rel_error"] == pytest.approx(0.2484, abs=1e-4)


def test_sim_only_against_stored_kernel_runs_writes_table_and_report(tmp_path: Path) -> None:
    d = small_grid(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(FileNotFoundError, match="kernel run"):
        run_grid(d, out, sim_only=True)
    fake_kernel_runs(d, out)
    res = run_grid(d, out, sim_only=True)
    assert res.meta["kernel_runs_this_call"] == 0
    t = res.table
    assert set(t["point"]) == {"loss1-reno", "loss1-cubic"} and set(t["metric"]) == set(GRID_METRICS)
    g = t[t["metric"] == "goodput_bps"]
    # Same scenario, other loss draws: the means differ, but not by much.
    assert (g["rel_error"].abs() > 0).all() and (g["rel_error"].abs() < 0.5).all(), g.to_string()
    assert (g["kernel_low"] < g["kernel"]).all() and (g["kernel"] < g["kernel_high"]).all()
    for p in ("loss1-reno", "loss1-cubic"):
        runs = res.per_run[(res.per_run["point"] == p) & (res.per_run["metric"] == "goodput_bps")]
        sim = runs.loc[runs["side"] == "sim", "value"].to_numpy()
        again = [run(load_grid(d)[1][0 if p.endswith("reno") else 1].scenario, seed=r).flows["goodput_bps"].iloc[0]
                 for r in range(3)]
        np.testing.assert_allclose(sim, again)  # the simulator side uses seeds 0..reps-1
    html = (out / "report.html").read_text()
    assert "points agree" in html and "grid_goodput.png" in html
    assert (out / "figures" / "grid_goodput.svg").is_file() and (out / "grid.json").is_file()


def test_report_shows_the_kernel_sysctls_of_the_runs(tmp_path: Path) -> None:
    # The emulator records the sysctls it wrote in every kernel run's
    # meta.emulation.sysctls (per host namespace); the grid keeps the first run's as
    # meta.kernel_sysctls and the report shows them.
    import json

    d = small_grid(tmp_path, reps=2, ccs='["reno"]')
    out = tmp_path / "out"
    fake_kernel_runs(d, out)
    wrote = {"s0": {"net.ipv4.tcp_frto": "2", "net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_sack": "1"},
             "d0": {"net.ipv4.tcp_sack": "1", "net.ipv4.tcp_rmem": "4096 131072 6291456"}}
    meta_file = out / "kernel" / "loss1-reno" / "rep-0" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta.setdefault("emulation", {})["sysctls"] = wrote
    meta_file.write_text(json.dumps(meta))
    res = run_grid(d, out, sim_only=True)
    assert res.meta["kernel_sysctls"] == wrote
    assert json.loads((out / "grid.json").read_text())["meta"]["kernel_sysctls"] == wrote
    html = (out / "report.html").read_text()
    assert "Kernel sysctls during the runs" in html
    for host, values in wrote.items():
        assert f"<th>{host}</th>" in html
        for name, value in values.items():
            assert f"<code>{name}</code>" in html and f"<td>{value}</td>" in html
    # tcp_rmem was written on the receiver only: the sender's cell says so.
    row = html.split("<code>net.ipv4.tcp_rmem</code>")[1].split("</tr>")[0]
    assert row.count("<td>–</td>") == 1
    # Runs stored before sysctls were recorded: the report says there are none.
    del meta["emulation"]["sysctls"]
    meta_file.write_text(json.dumps(meta))
    run_grid(d, out, sim_only=True)
    assert "recorded no sysctls" in (out / "report.html").read_text()


def test_cli_grid_sim_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = small_grid(tmp_path, reps=2, ccs='["reno"]')
    out = tmp_path / "out"
    assert main(["fidelity", str(d), "--sim-only", "--out", str(out)]) == 2
    assert "kernel run(s) missing" in capsys.readouterr().err
    fake_kernel_runs(d, out)
    assert main(["fidelity", str(d), "--sim-only", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "loss1-reno" in text and "points agree" in text and "report written to" in text
    shutil.rmtree(out / "kernel")
    sc = d / "loss1.toml"
    assert main(["fidelity", str(sc), "--sim-only", "--out", str(out)]) == 2
    assert "applies to grids only" in capsys.readouterr().err


def test_open_spells_shorter_than_the_kernel_sampling_interval_do_not_end_an_episode() -> None:
    from tcplab.fidelity import sawtooth

    # Recovery at 1.0 s, open for 0.5 ms at 1.2 s (exit and re-entry on one ACK), open
    # again at 1.5 s for 0.1 s, recovery at 1.6 s: 2 episodes, not 3.
    s = pd.DataFrame({"t_s": [0.0, 1.0, 1.2, 1.2005, 1.5, 1.6, 1.7], "cwnd_bytes": [10.0] * 7,
                      "srtt_s": [0.1] * 7,
                      "state": ["open", "recovery", "open", "recovery", "open", "recovery", "open"]})
    assert sawtooth(s)["loss_episodes"] == 2


def test_against_a_stored_summary_and_with_the_path_lateness(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # A summary as docs/fidelity/ keeps them: grid.json of a (faked) kernel side.
    import json

    from tcplab.fidelity_grid import compare_stored

    d = small_grid(tmp_path, reps=2, ccs='["reno"]')
    out = tmp_path / "out"
    fake_kernel_runs(d, out)
    res = run_grid(d, out, sim_only=True)
    summary = out / "grid.json"
    plain, lateness = compare_stored(d, summary, within=0.03)
    assert lateness == {} and list(plain["metric"]) == ["goodput_bps", "retransmits", "cwnd_mean_bytes"]
    # The same seeds as the grid's own simulator side: the same means.
    same = res.table.set_index("metric").loc[list(plain["metric"]), "sim"].to_numpy()
    np.testing.assert_allclose(plain["sim"].to_numpy(), same)
    # A summary without one of the counted rows: refused, naming it.
    partial = tmp_path / "partial.json"
    doc = json.loads(summary.read_text())
    partial.write_text(json.dumps({**doc, "rows": [r for r in doc["rows"] if r["metric"] != "retransmits"]}))
    with pytest.raises(ValueError, match="no kernel row for loss1-reno retransmits"):
        compare_stored(d, partial, within=0.03)
    # The faked runs recorded no lateness: refused, naming the congestion control.
    with pytest.raises(ValueError, match="no emulator lateness recorded .* for reno"):
        compare_stored(d, summary, within=0.03, path_lateness=True)
    doc = json.loads(summary.read_text())
    for s in doc["meta"]["sched_error"]:
        s["mean_s"] = 200e-6 if s["rep"] == 0 else 400e-6
    summary.write_text(json.dumps(doc))
    late, lateness = compare_stored(d, summary, within=0.03, path_lateness=True)
    assert lateness == {"reno": pytest.approx(300e-6)}  # the median of the two runs
    # 4 x 300 us more per round trip on average (44 ms base): Reno's window and rate fall.
    g = lambda t: t.set_index("metric").loc["goodput_bps", "sim"]  # noqa: E731
    assert g(late) < g(plain)
    # The command line: the table, the count, the reading, the file.
    assert main(["fidelity", str(d), "--against", str(summary), "--within", "0.03", "--path-lateness",
                 "--out", str(tmp_path / "ag")]) == 0
    text = capsys.readouterr().out
    assert "of 3 pairs inside (within 3%" in text and "reno 300.0 us" in text
    assert json.loads((tmp_path / "ag" / "against.json").read_text())["meta"]["lateness_s"] == lateness
    # Bad input, refused before anything runs.
    for argv, says in ((["--path-lateness"], "apply with --against"), (["--against", str(summary), "--within", "3"],
                       "give a fraction between 0 and 1"), (["--against", str(tmp_path / "none.json")], "no such file"),
                       (["--against", str(d / "grid.toml")], "--against"),
                       (["--against", str(summary), "--sim-only"], "exclude each other")):
        assert main(["fidelity", str(d), *argv]) == 2
        assert says in capsys.readouterr().err
