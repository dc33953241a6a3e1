"""Study home-gateway (seed 003, issue 12): the scenario files, the configurations the study
derives from them, the queue semantics as run, common random numbers, the periodicity
detector, the findings logic, and a tiny end-to-end run through the CLI (with a
headless-Chromium rendering check of report.html when Chromium is installed)."""

import doctest
import importlib
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab.cli import main
from tcplab.scenario import Scenario, load
from tcplab.studies import findings as F
from tcplab.studies import home_gateway as S

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "home-gateway"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


# ---- the scenario files and the configurations -----------------------------------------


@pytest.mark.parametrize("link, down, up", [("adsl1", 1_500_000, 256_000), ("adsl2", 24_000_000, 1_000_000)])
def test_scenario_files_are_ordinary_scenarios_of_the_seed(link: str, down: int, up: int,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / f"{link}.toml"
    core = load(path).to_core()
    topo = core["topology"]
    assert (topo["bottleneck"]["rate"], topo["bottleneck_reverse"]["rate"]) == (down, up)
    assert topo["bottleneck"]["delay"] == topo["bottleneck_reverse"]["delay"] == 50_000_000  # 100 ms min RTT
    for side in ("bottleneck", "bottleneck_reverse"):
        assert topo[side]["queue"] == {"kind": "drop_tail", "limit": {"bytes": 40_000}, "semantics": "byte_loose",
                                       "count_in_service": True}
    voice = [f for f in core["flows"] if f["kind"] == "udp"]
    assert [(f["src"], f["dst"]) for f in voice] == [("s1", "d1"), ("d1", "s1")]
    assert all(f["packet_bytes"] == 186 and f["interval"] == {"dist": "normal", "mean": 20_000_000,
                                                              "sigma": 1_000_000} for f in voice)
    bulk = core["flows"][0]
    assert (bulk["src"], bulk["dst"], bulk["bytes"]) == ("s0", "d0", None)
    assert bulk["cc"]["name"] == "reno" and bulk["tcp"] == {"profile": "linux-2.6", "sack": False}
    assert main(["check", str(path)]) == 0 and capsys.readouterr().out.strip() == "ok"


def test_configure_sets_every_swept_value_by_path() -> None:
    _, base = S.base_scenario("adsl2")
    for sem, limit, want in (("slot", 37, {"packets": 37}), ("byte_strict", 52_530, {"bytes": 52_530}),
                             ("byte_loose", 10_000, {"bytes": 10_000})):
        for v in S.VARIANTS:
            core = Scenario.from_dict(S.configure(base, 24, sem, limit, v.name, 30.0)).to_core()
            topo = core["topology"]
            for side in ("bottleneck", "bottleneck_reverse"):
                assert topo[side]["delay"] == 12_000_000  # 24 ms / 2
                assert topo[side]["queue"] == {"kind": "drop_tail", "limit": want, "semantics": sem,
                                               "count_in_service": True}
            bulk = core["flows"][0]
            assert bulk["cc"]["name"] == v.cc["name"] and bulk["tcp"] == v.tcp
            assert core["duration"] == 30 * 10**9
            assert [f["stop"] for f in core["flows"][1:]] == [29 * 10**9] * 2
    assert base["topology"]["bottleneck"]["delay"] == "50ms"  # the base document is not modified
    with pytest.raises(ValueError, match="unknown drop-tail semantic 'red'"):
        S.configure(base, 24, "red", 1, "cubic", 30.0)


def test_scenario_toml_runs_with_tcplab_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.toml"
    path.write_text(S.scenario_toml("adsl1", 200, "slot", 13, "cubic", duration_s=8.0))
    assert main(["run", str(path), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "voice_down" in out and "cubic" in out


def test_study_options_refuse_bad_values() -> None:
    for kwargs, message in (({"reps": 1}, "reps must be an integer >= 2"), ({"links": ["adsl3"]}, "unknown link"),
                            ({"rtts_ms": [1]}, "rtts_ms must be integers >= 2"), ({"fine_reps": 1}, "fine_reps"),
                            ({"duration_s": 1.0}, "duration_s"), ({"scenarios": "/nonexistent"}, "has no adsl1.toml")):
        with pytest.raises(ValueError, match=message):
            S.StudyParams(**kwargs)


# ---- runs: accounting, semantics as run, common random numbers ----------------------------


@pytest.fixture(scope="module")
def block_runs() -> pd.DataFrame:
    text, _ = S.base_scenario("adsl1")
    frames = []
    for sem, limits in (("slot", [7, 30]), ("byte_strict", [12_000, 40_000]), ("byte_loose", [12_000, 40_000])):
        out = S.simulate_block({"part": "grid", "rtt_ms": 100, "semantic": sem, "limits": limits, "reps": [0, 2],
                                "seed": 5, "duration_s": 15.0, "scenario": text, "keep_owd": False})
        frames.append(pd.DataFrame(out["runs"]).assign(semantic=sem))
    return pd.concat(frames, ignore_index=True)


def test_voice_accounting_and_the_owd_floor(block_runs: pd.DataFrame) -> None:
    r = block_runs
    # The voice stops 1 s before the end, so every packet is delivered or dropped.
    assert (r["voice_sent"] == r["voice_delivered"] + r["voice_lost"]).all()
    assert np.allclose(r["voice_loss"], r["voice_lost"] / r["voice_sent"])
    # Floor: 50 ms + 186 B at 1.5 Mbit/s (992 us) + 2 x 186 B at 100 Mbit/s (14.88 us) = 51.02176 ms.
    assert np.allclose(r["owd_base_s"], 0.05102176, atol=1e-9)
    assert (r["iowd_p50_s"] >= 0).all() and (r["iowd_max_s"] >= r["iowd_p99_s"]).all()
    # 14 s of N(20 ms, 1 ms) gaps: 700 +- a few packets per direction.
    assert r["voice_sent"].between(690, 710).all() and r["voice_up_sent"].between(690, 710).all()


def test_queues_hold_what_their_semantic_allows(block_runs: pd.DataFrame) -> None:
    # Waiting bytes (q_max_bytes) never exceed what the rule admits, counting the packet in service:
    #   FB-strict: waiting + in service + arriving < limit  -> waiting < limit;
    #   FB-loose:  admitted while waiting + in service <= limit -> waiting <= limit + 1500 B;
    #   PS: at most limit packets including the one in service -> waiting <= (limit - 1) x 1500 B.
    for row in block_runs.itertuples():
        if row.semantic == "byte_strict":
            assert row.q_max_bytes < row.limit
        elif row.semantic == "byte_loose":
            assert row.q_max_bytes <= row.limit + 1500
        else:
            assert row.q_max_bytes <= (row.limit - 1) * 1500
    # ...and the loose rule overshoots the limit where the strict one never reaches it.
    loose = block_runs[block_runs["semantic"] == "byte_loose"]
    assert (loose["q_max_bytes"] > loose["limit"]).any()


def test_both_tcps_see_the_same_voice_departures(block_runs: pd.DataFrame) -> None:
    # Common random numbers: a replication's voice stream is the same draw for both TCPs and every queue.
    sent = block_runs.pivot_table(index=["semantic", "limit", "rep"], columns="cc", values="voice_sent")
    assert (sent["newreno"] == sent["cubic"]).all()
    per_rep = block_runs.groupby("rep")["voice_sent"].nunique()
    assert (per_rep == 1).all() and block_runs.groupby("rep")["voice_sent"].first().nunique() == 2
    digests = block_runs.groupby(["semantic", "limit", "rep"])["digest"].nunique()
    assert (digests == 2).all()  # ...while the two TCPs' runs differ


def test_same_spec_same_runs() -> None:
    text, _ = S.base_scenario("adsl1")
    spec = {"part": "fine", "rtt_ms": 100, "semantic": "byte_loose", "limits": [52_500, 52_530], "reps": [0, 2],
            "seed": 1, "duration_s": 8.0, "scenario": text, "keep_owd": False}
    a, b = S.simulate_block(spec), S.simulate_block(spec)
    pd.testing.assert_frame_equal(pd.DataFrame(a["runs"]), pd.DataFrame(b["runs"]))


# ---- H3's periodicity detector ------------------------------------------------------------


def _sawtooth(L: np.ndarray, period: float) -> np.ndarray:
    return np.mod(L, period) / period


@pytest.mark.parametrize("period, holds", [(1500.0, True), (3000.0, False), (1250.0, False)])
def test_dominant_period_finds_a_sawtooth_and_tells_a_wrong_period(period: float, holds: bool) -> None:
    L = np.arange(52_500, 67_501, 30.0)
    rng = np.random.default_rng(7)
    per_rep = 0.02 + 0.004 * _sawtooth(L, period) + rng.normal(0, 0.006, (12, L.size))
    d = S.dominant_period(L, per_rep)
    assert abs(d["value"] - period) <= d["resolution"], d
    within = d["ci"][0] >= 1500 - d["resolution"] and d["ci"][1] <= 1500 + d["resolution"]
    assert within is holds
    assert d["resolution"] == pytest.approx(1500 ** 2 / 15_000)


def test_dominant_period_needs_a_sweep_that_resolves_the_packet() -> None:
    coarse = np.arange(52_500, 67_501, 1500.0)  # one point per packet: no period of 1500 B is visible
    assert S.dominant_period(coarse, np.ones((3, coarse.size))) is None
    short = np.arange(52_500, 54_000, 30.0)  # less than two packets of span
    assert S.dominant_period(short, np.ones((3, short.size))) is None


def test_near_and_far_bands() -> None:
    L = np.array([52_500, 52_800, 52_950, 53_250, 53_700, 53_800])
    # distances to the nearest multiple of 1500: 0, 300, 450, 750, 300, 200
    assert S._phase_distance(L).tolist() == [0, 300, 450, 750, 300, 200]
    wide = pd.DataFrame([[1.0, 2.0, 10.0, 20.0, 3.0, 4.0]], columns=L)
    near, far = S._band_means(wide)
    assert near.tolist() == [2.5] and far.tolist() == [15.0]


# ---- the findings logic ---------------------------------------------------------------------


TINY = ["--reps", "2", "--links", "adsl1", "--set", "rtts_ms=100", "--set", "ps_step=30", "--set", "fb_step_bytes=90000",
        "--set", "fine_step_bytes=300", "--set", "duration_s=10"]
TINY_PARAMS = dict(reps=2, links=["adsl1"], rtts_ms=[100], ps_step=30, fb_step_bytes=90_000, fine_step_bytes=300,
                   duration_s=10.0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One tiny study through the CLI (2 replications, ADSL1 at 100 ms, 3 sizes per semantic, a 300 B fine sweep)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("hg") / "study"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["study", "home-gateway", *TINY, "--out", str(out), "--jobs", "1", "--no-progress"])
    assert rc == 0
    return out, buf.getvalue()


def _check(doc: dict, cid: str) -> dict:
    return next(c for f in doc["findings"] for c in f["checks"] if c["id"] == cid)


def test_findings_react_to_the_data(tiny: tuple[Path, str]) -> None:
    out, _ = tiny
    params = S.StudyParams(**TINY_PARAMS)
    runs = pd.read_parquet(out / "runs.parquet")

    def evaluate(df: pd.DataFrame) -> dict:
        return S.evaluate_findings(df, params, S.fine_analysis(df, params, n_boot=40))

    # Swap the two TCPs: H1a must flip.
    swapped = runs.copy()
    swapped["cc"] = swapped["cc"].map({"newreno": "cubic", "cubic": "newreno"})
    a, b = evaluate(runs), evaluate(swapped)
    assert _check(a, "H1a")["statistic"]["value"] > 0 and _check(b, "H1a")["held"] is False
    # Make FB-loose lose every voice packet: H2a and H2b must hold.
    lossy = runs.copy()
    lossy.loc[lossy["semantic"] == "byte_loose", "voice_loss"] = 1.0
    doc = evaluate(lossy)
    assert _check(doc, "H2a")["held"] and _check(doc, "H2b")["held"]
    # A fine sweep whose FB-loose loss is lowest, and FB-strict loss highest, at the multiples of 1500 B:
    # every H3 check holds (periods, anti-correlation, extrema near the multiples).
    fine = runs["part"] == "fine"
    rng = np.random.default_rng(0)
    bump = 0.01 * (S._phase_distance(runs.loc[fine, "limit"].to_numpy(float)) / 750.0)
    planted = runs.copy()
    planted.loc[fine, "voice_loss"] = 0.02 + np.where(runs.loc[fine, "semantic"] == "byte_loose", bump, -bump) \
        + rng.normal(0, 1e-4, fine.sum())
    h3 = next(f for f in evaluate(planted)["findings"] if f["id"] == "H3")
    assert [c["held"] for c in h3["checks"]] == [True] * 7, [(c["id"], c["statistic"]["value"]) for c in h3["checks"]]
    # ...and the same curves shifted by half a packet put the extrema between the multiples: H3f and H3g fail.
    shifted = runs.copy()
    bump = 0.01 * (S._phase_distance(runs.loc[fine, "limit"].to_numpy(float) + 750) / 750.0)
    shifted.loc[fine, "voice_loss"] = 0.02 + np.where(runs.loc[fine, "semantic"] == "byte_loose", bump, -bump) \
        + rng.normal(0, 1e-4, fine.sum())
    doc = evaluate(shifted)
    assert not _check(doc, "H3f")["held"] and not _check(doc, "H3g")["held"] and _check(doc, "H3e")["held"]
    # Without a fine sweep, H2's fine checks and H3 are not evaluated (held = null).
    grid_only = evaluate(runs[runs["part"] != "fine"])
    assert next(f for f in grid_only["findings"] if f["id"] == "H3")["held"] is None
    assert [c["id"] for c in next(f for f in grid_only["findings"] if f["id"] == "H2")["checks"]] == ["H2a"]


# ---- end to end through the CLI -------------------------------------------------------------


def test_tiny_study_writes_figures_tables_report_and_findings(tiny: tuple[Path, str], tmp_path: Path) -> None:
    out, printed = tiny
    assert f"report written to {out / 'report.html'}" in printed
    for h in ("H1", "H2", "H3", "H4"):
        assert re.search(rf"^{h} (held|NOT reproduced|not evaluated):", printed, re.M), h
    runs = pd.read_parquet(out / "runs.parquet")
    params = S.StudyParams(**TINY_PARAMS)
    assert len(runs) == params.n_runs() and (runs["part"] == "series").sum() == 6
    for name in ("owd", "cwnd", "queue", "summary", "fine_curves", "owd_percentiles", "periodicity"):
        assert len(pd.read_parquet(out / f"{name}.parquet")) > 0, name
    stems = {p.stem for p in (out / "figures").glob("*.png")}
    assert stems == {"goodput_ps_adsl1", "owd_cdf", "h1_scatter", "voice_loss_adsl1", "fine_sweep", "fine_period",
                     "timeseries_slot", "timeseries_byte_strict", "timeseries_byte_loose"}
    for stem in stems:
        png = (out / "figures" / f"{stem}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, stem
        assert len(list(ET.parse(out / "figures" / f"{stem}.svg").getroot().iter())) > 50, stem
    report = (out / "report.html").read_text()
    for stem in stems:
        assert f"figures/{stem}.png" in report and f"figures/{stem}.svg" in report
    for needle in ("Findings of seed 003", "Links and bandwidth-delay products", "FB-loose (byte_loose, dummynet)",
                   "Summary table", "Induced voice delay percentiles"):
        assert needle in report, needle
    doc = json.loads((out / "findings.json").read_text())
    F.validate(doc)
    assert [f["id"] for f in doc["findings"]] == ["H1", "H2", "H3", "H4"] and doc["replications"] == 2
    assert all(f["evaluated"] for f in doc["findings"])
    manifest = json.loads((out / "study.json").read_text())
    assert manifest["failures"] == [] and manifest["runs"] == params.n_runs()
    if CHROMIUM:
        _render_in_chromium(out / "report.html", tmp_path, len(stems))
    # Resume (into a copy, without figures): nothing left to run, the same tables and findings.
    copy = tmp_path / "copy"
    shutil.copytree(out / "tasks", copy / "tasks")
    again = S.run(copy, params, jobs=1, progress=False, figures=False)
    assert (again.ran, again.skipped) == (0, manifest["tasks"])
    assert again.findings["findings"] == doc["findings"]
    pd.testing.assert_frame_equal(pd.read_parquet(copy / "runs.parquet"), runs)


def _render_in_chromium(report: Path, tmp_path: Path, n_images: int) -> None:
    probe = report.with_name("probe.html")  # next to the report, so its figures/ links resolve
    probe.write_text(report.read_text().replace(
        "</body>",
        "<script>window.addEventListener('load',()=>{const s=[...document.images].map(i=>i.naturalWidth+'x'+i.naturalHeight);"
        "const p=document.createElement('pre');p.id='sizes';p.textContent=['SIZES',s.join(','),'END'].join('|');"
        "document.body.appendChild(p);});</script></body>"))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r"SIZES\|([0-9x,]*)\|END", out.stdout)
    assert m, f"no sizes in the DOM; chromium stderr: {out.stderr[-2000:]}"
    sizes = [tuple(map(int, s.split("x"))) for s in m.group(1).split(",") if s]
    assert len(sizes) == n_images and all(w > 100 and h > 100 for w, h in sizes), sizes


@pytest.mark.parametrize("argv, message", [
    (["study", "home-gateway", "--links", "adsl1,vdsl"], "unknown link(s) vdsl"),
    (["study", "home-gateway", "--set", "rtts_ms=fast"], "rtts_ms: expected comma-separated integers"),
    (["study", "home-gateway", "--set", "fine_reps=1"], "fine_reps must be 0"),
])
def test_bad_options_are_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      argv: list[str], message: str) -> None:
    out = tmp_path / "never"
    assert main(argv + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "tasks").exists() or not any((out / "tasks").iterdir())


@pytest.mark.parametrize("name", ["tcplab.studies.home_gateway", "tcplab.studies.home_gateway_report"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
