"""Study satellite (seed 004, ``docs/seeds/004_af47799115785341.txt``): configurations from the
scenario files, common random numbers, the overshoot measure, the claims (four verdicts, claim
forms, the ledger), resumption, and a tiny end-to-end run through the CLI."""

from __future__ import annotations

import ast
import doctest
import importlib
import json
from pathlib import Path

import pandas as pd
import pytest

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import ledger
from tcplab.studies.satellite import analysis, claims
from tcplab.studies.satellite import configs as C

PACKAGE = Path(C.__file__).resolve().parent
MODULES = ("tcplab.studies.satellite", "tcplab.studies.satellite.configs", "tcplab.studies.satellite.analysis",
           "tcplab.studies.satellite.claims", "tcplab.studies.satellite.report")


def test_every_configuration_is_a_valid_scenario_of_the_seed() -> None:
    bases = C.base_documents()
    for slacp, base in bases.items():
        for dama in (*C.DAMA_MODES, C.RBDC_DIAGNOSTIC):
            for error in C.ERROR_MODELS:
                for n in C.WORKLOADS:
                    for variant in C.variants_of(n):
                        core = Scenario.from_dict(C.variant_document(base, dama, error, n, variant)).to_core()
                        ret = core["topology"]["links"][0]
                        assert ret["rate"] == 128_000 and ret["delay"] == 250_000_000
                        assert core["topology"]["links"][1]["rate"] == 512_000
                        assert ret["mac"]["mode"] == dama.split("-")[0]
                        # The seed's buffers: 28.8 kB without SLACP, 14.4 kB MAC buffer (+ 14.4 kB IP queue) with it.
                        assert ret["queue"]["limit"] == {"bytes": 14_400 if slacp else 28_800}
                        assert ("link_layer" in ret) == slacp
                        if slacp:
                            assert ret["link_layer"]["mac_buffer"] == 14_400
                        assert (ret["error"] is None) == (error == "none")
                        assert sum(f["bytes"] for f in core["flows"]) == 1_000_000 and len(core["flows"]) == n
                        tcp = core["flows"][0]["tcp"]
                        assert tcp["mss"] == 1410 and tcp["profile"] == ("reference" if variant == "reference" else "enhanced")
                        assert tcp.get("daass", True) == (variant != "enhanced-daass")


def test_replications_share_the_error_series_and_runs_repeat() -> None:
    spec = {"dama": "vbdc", "slacp": False, "error": "huge", "n_flows": 1, "reps": [0, 2], "seed": 7,
            "base": C.base_documents()[False], "trace": False, "variants": ["reference", "enhanced"]}
    a, b = C.simulate_block(spec), C.simulate_block(spec)
    assert list(a["runs"]["digest"]) == list(b["runs"]["digest"])
    # Every variant of a replication runs with the replication's core seed; the Markov state
    # timeline depends on that seed alone, not on the traffic (net/error/markov.rs,
    # same_seed_same_losses_and_traffic_independent_timeline), so all see the same bursts.
    runs = pd.DataFrame(a["runs"])
    assert (runs.groupby("rep")["core_seed"].nunique() == 1).all()
    assert runs["core_seed"].tolist() == [7, 7, 8, 8]


def test_cbi_starts_from_the_previous_connections_ssthresh() -> None:
    spec = {"dama": "cra", "slacp": False, "error": "high", "n_flows": 1, "reps": [0, 2], "seed": 1,
            "base": C.base_documents()[False], "trace": False, "variants": list(C.variants_of(1, rfc3390=True))}
    runs = pd.DataFrame(C.simulate_block(spec)["runs"])
    for rep, part in runs.groupby("rep"):
        v = part.set_index("variant")
        for enh in ("enhanced", "enhanced-rfc3390"):  # each CBI variant reuses its own Enhanced transfer's ssthresh
            assert v.loc[enh + "+cbi", "initial_ssthresh_bytes"] == v.loc[enh, "final_ssthresh_bytes"]  # RFC 2140


def test_enhanced_tcp_starts_with_the_seeds_4_segments_and_rfc_3390s_4380_b_is_the_second_reading() -> None:
    # The seed: "Initial window of 4 segments (RFC 3390)". The enhanced profile sends 4 segments
    # (5640 B at MSS 1410); RFC 3390's byte formula min(4 MSS, max(2 MSS, 4380 B)) caps the window
    # at 4380 B, 3 whole segments at this MSS (4 only for MSS <= 1095 B), set as an override.
    base = C.base_documents()[False]
    first_flight = {}
    for variant in ("enhanced", "enhanced-rfc3390"):
        core = C.core_scenario(base, "cra", "none", 1, variant)
        assert core["flows"][0]["tcp"].get("iw") == (None if variant == "enhanced" else "rfc3390")
        core["record"].update({"owd": ["*"]})
        doc = json.loads(_core.run(json.dumps(core), 1))
        # The first flight: data segments that reached the gateway before the first ACK could return.
        first = doc["series"]["owd"]["t_s"][0]
        first_flight[variant] = sum(t < first + 0.5 for t in doc["series"]["owd"]["t_s"])
    assert first_flight == {"enhanced": 4, "enhanced-rfc3390": 3}


def test_the_overshoot_counts_every_flows_slow_start_losses() -> None:
    # Four Enhanced flows over RBDC without SLACP or errors: the grant lapses between windows, so
    # one flow's overshoot drops come more than 1 s apart (a time-gap rule counted 1 segment here).
    # Counted by each flow's own slow start, the overshoot is every flow's, and only CBI's reused
    # ssthresh (which ends slow start before the buffer overflows) brings it to none.
    spec = {"dama": "rbdc", "slacp": False, "error": "none", "n_flows": 4, "reps": [0, 1], "seed": 1,
            "base": C.base_documents()[False], "trace": False}
    runs = pd.DataFrame(C.simulate_block(spec)["runs"]).set_index("variant")
    assert runs.loc["enhanced", "overshoot_drops"] > 10
    assert runs.loc["enhanced", "overshoot_s"] > 0
    spec = {**spec, "n_flows": 1, "variants": ["enhanced", "enhanced+cbi"]}
    runs = pd.DataFrame(C.simulate_block(spec)["runs"]).set_index("variant")
    assert runs.loc["enhanced", "overshoot_drops"] > 10 and runs.loc["enhanced+cbi", "overshoot_drops"] == 0


def test_the_probes_burst_falls_where_it_was_drawn_and_the_delay_is_the_one_asked_for() -> None:
    # The allocation-delay probe (check S4c): one bad state of exactly the drawn length at exactly
    # the drawn time; a frame is lost if its airtime (90.625 ms at 128 kbit/s on CRA) meets it.
    rep, seed = 3, 1
    start, length = C.burst_of(seed, rep)
    t_b, t_e = start / 1e3, (start + length) / 1e3
    base = C.base_documents()[False]
    core = C.core_scenario(base, "vbdc", C.BURST, 1, "reference", 42, (start, length))
    assert core["topology"]["links"][0]["mac"]["allocation_delay"] == 42 * C.SUPERFRAME_US * 1000
    core = C.core_scenario(base, "cra", C.BURST, 1, "enhanced", None, (start, length))
    core["record"].update({"drops": True})
    doc = json.loads(_core.run(json.dumps(core), seed + rep))
    lost = [t for t, c in zip(doc["series"]["drops"]["t_s"], doc["series"]["drops"]["cause"]) if c == "corruption"]
    first = [t for t in lost if t < t_b + 15]
    assert first and all(t_b < t < t_e + C.AIRTIME_S + 1e-9 for t in first)   # drops are timed at the last bit
    # The next burst comes one good period later, after the 15 s horizon of the measure.
    assert all(t > 2 * t_b + (t_e - t_b) for t in lost[len(first):]) and t_b > C.HORIZON_S
    spec = {"probe": "recovery", "design": "early", "dama": "rbdc", "slacp": True, "error": C.BURST, "n_flows": 1,
            "alloc_delay_sf": 11, "reps": [rep, rep + 1], "seed": seed, "base": C.base_documents()[True], "trace": False,
            "variants": list(C.RECOVERY_VARIANTS)}
    rec = pd.DataFrame(C.simulate_block(spec)["recovery"])
    assert rec["variant"].tolist() == list(C.RECOVERY_VARIANTS) and (rec["burst_start_s"] == t_b).all()
    assert (rec["rate_pre_pps"] > 0).all() and rec["recovery_s"].between(0, C.HORIZON_S - C.WINDOW_S).all()


def test_realised_per_of_every_preset_follows_the_channel_model() -> None:
    """The study's channel probe against the channel model's closed form, per preset.

    Reference: 1 - E[(good - 90.625 ms)+] / E[cycle] (:func:`configs.channel_model`, the
    core's ``expected_frame_loss``): a busy CRA return link sends 1450 B frames back to back,
    and a frame is lost if any part of its airtime meets a bad state. 4 runs x 5 000 s = 20 000 s
    per preset; the realised PER's relative sd over 20 000 s is 1.3% for Low and under 1% for the
    others (``crates/tcplab-core/tests/error_airtime.rs``), so the tolerance of 8% is 6 sd for
    Low. The seed's "Avg PER" column is not reached: its lower bound lies above the realised
    value of every preset (its own burst durations do not give it; ``docs/studies/satellite.md``).
    """
    base = C.base_documents()[False]
    for name in C.LOSSY_ERRORS:
        spec = {"probe": "channel", "dama": "cra", "slacp": False, "error": name, "n_flows": 0,
                "duration_s": C.CHANNEL_S, "reps": [0, C.CHANNEL_REPS], "seed": 1, "trace": False, "base": base}
        ch = pd.DataFrame(C.simulate_block(spec)["channel"])
        per = ch["frames_lost"].sum() / ch["frames"].sum()
        model = C.channel_model(name)
        assert ch["frames"].sum() > 0.99 * C.CHANNEL_REPS * C.CHANNEL_S / C.AIRTIME_S   # the link stayed busy
        assert abs(per / model["frame_loss"] - 1) < 0.08, (name, per, model)
        seed_low = float(C.SEED_ERROR_TABLE[name][0].split("-")[0].rstrip("%")) / 100
        assert per < seed_low, (name, per, seed_low)


def _tiny_run(tmp_path: Path) -> tuple[Path, list[str], dict]:
    out = tmp_path / "sat"
    args = ["study", "satellite", "--reps", "2", "--set", "errors=none,huge", "--jobs", "1", "--out", str(out)]
    assert main(args) == 0
    return out, args, json.loads((out / "findings.json").read_text())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict]:
    return _tiny_run(tmp_path_factory.mktemp("satellite"))


def test_tiny_study_through_the_cli(tiny: tuple[Path, list[str], dict]) -> None:
    out, args, doc = tiny
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == list(claims.FINDING_IDS)
    assert all(f["evaluated"] for f in doc["findings"])
    params = C.StudyParams(reps=2, errors="none,huge")
    runs = pd.read_parquet(out / "runs.parquet")
    recovery = pd.read_parquet(out / "recovery.parquet")
    channel = pd.read_parquet(out / "channel.parquet")
    # The traces, the allocation-delay probe and the channel probe have their own tables.
    assert len(runs) + len(recovery) + len(channel) == params.n_runs() - len(C.DAMA_MODES)
    assert len(recovery) == len(params.recovery_configurations()) * len(C.RECOVERY_VARIANTS) * 2 * 2
    assert int(runs["unfinished"].sum()) == 0
    assert len(pd.read_parquet(out / "trace_cwnd.parquet")) > 0
    for stem in ("elapsed_1mb", "elapsed_4x250kb", "elapsed_by_dama", "workloads", "overshoot_drops",
                 "overshoot_trace", "link_layer", "rbdc_timeout", "recovery"):
        assert (out / "figures" / f"{stem}.png").is_file()
    report = (out / "report.html").read_text()
    assert "seed 004" in report and "S14" in report and "Claims ledger" in report
    # Every finding again under RFC 3390's initial window of 4380 B.
    [alt] = doc["setup_readings"]
    assert alt["name"] == claims.RFC3390_READING and "4380 B" in alt["name"]
    assert [f["id"] for f in alt["findings"]] == list(claims.FINDING_IDS) and "Second reading" in report
    manifest = json.loads((out / "study.json").read_text())
    assert manifest["tcplab_version"] == _core.version() and manifest["failures"] == []
    # A second run resumes every task and rewrites identical findings.
    assert main(args) == 0
    again = json.loads((out / "study.json").read_text())
    assert again["ran"] == 0 and again["skipped"] == manifest["tasks"]
    assert json.loads((out / "findings.json").read_text()) == doc


def test_the_ledger_names_exactly_the_findings_of_the_run(tiny: tuple[Path, list[str], dict]) -> None:
    _, _, doc = tiny
    assert ledger.load("satellite").finding_problems(doc) == []
    assert doc["ledger"]["coverage"]["checked"] > 0


def test_verdicts_are_the_four_and_every_check_has_a_claim_form(tiny: tuple[Path, list[str], dict]) -> None:
    # The first findings format had binary "held"/"not held" checks (form "legacy"), which
    # could not tell a contradicted claim from too little data.
    _, _, doc = tiny
    kinds = {"directional", "contrast", "equivalence", "every", "share", "only"}
    for f in doc["findings"]:
        assert f["verdict"] in (*fnd.VERDICTS, fnd.NOT_RUN) and "held" not in f
        for c in f["checks"]:
            assert c["form"]["kind"] in kinds, (c["id"], c["form"])
            assert c["verdict"] in fnd.VERDICTS
            assert (c["reps_needed"] is not None) <= (c["verdict"] == fnd.INCONCLUSIVE)
    source = (PACKAGE / "claims.py").read_text()
    for legacy in ("legacy_check", "fnd.above", "fnd.below", "fnd.count", "not_evaluated"):
        assert legacy not in source


def test_sizes_the_seed_words_ask_for_are_stated_as_thresholds(tiny: tuple[Path, list[str], dict]) -> None:
    # "Improving TCP performance significantly" and "performs very poorly" were plain signs before.
    _, _, doc = tiny
    checks = {c["id"]: c for f in doc["findings"] for c in f["checks"]}
    assert checks["S3c"]["form"]["threshold"] == -claims.SIGNIFICANT_REL
    assert checks["S6a"]["form"]["threshold"] == claims.VERY_POOR_REL
    assert checks["S10a"]["form"]["kind"] == "share"          # "in some test cases"
    assert checks["S2a"]["form"]["kind"] == "contrast"        # "in particular when ..."
    assert checks["S8b"]["form"]["kind"] == "every"
    # Error-free runs are deterministic: exact values, not zero-width intervals over n samples.
    assert all(r["exact"] for r in checks["S8a"]["per_config"])


def test_the_allocation_delay_reading_of_s4_is_a_contrast_per_mode_and_step(tiny: tuple[Path, list[str], dict]) -> None:
    # "Longer capacity allocation delay -> slower error recovery", read with the delay varied
    # directly: every step (11 -> 21 -> 42 superframes) of RBDC and VBDC, margin stated up front.
    out, _, doc = tiny
    # S4c: the seed's 1 MB, burst at 20-35 s; S4d (a second reading): 3 MB, burst at 60-90 s.
    s4 = next(f for f in doc["findings"] if f["id"] == "S4")
    for cid in ("S4c", "S4d"):
        c = next(c for c in s4["checks"] if c["id"] == cid)
        assert c["form"]["kind"] == "every" and c["form"]["base"]["kind"] == "contrast"
        assert c["form"]["base"]["negligible"] == claims.NEGLIGIBLE_RECOVERY_S and c["statistic"]["unit"] == "s"
        assert [r["comparison"] for r in c["per_config"]] == [
            "RBDC 21 vs 11 superframes", "RBDC 42 vs 21 superframes", "VBDC 21 vs 11 superframes",
            "VBDC 42 vs 21 superframes"]
        assert c["reading"] in s4["readings"]
        assert cid in next(s for s in ledger.load("satellite").sentences if s.id == "c04").checks
    assert len(s4["readings"]) == 4
    assert doc["recovery"] and doc["per_table"] and len(doc["per_table"]) == 1   # errors=none,huge: Huge only
    assert (out / "figures" / "recovery.png").is_file()


def test_extensions_are_shown_and_never_decide_a_verdict(tiny: tuple[Path, list[str], dict]) -> None:
    # The RBDC 1 s diagnostic and CBI / no DAASS beyond the seed's reduced set are tcplab's.
    _, _, doc = tiny
    by_id = {f["id"]: f for f in doc["findings"]}
    assert by_id["X1"]["extension"] and not any(by_id[f]["extension"] for f in claims.FINDING_IDS if f != "X1")
    for fid, ext in (("S10", {"S10d"}), ("S11", {"S11c", "S11d"}), ("S12", {"S12d", "S12e"})):
        f = by_id[fid]
        assert {c["id"] for c in f["checks"] if c["extension"]} == ext
        assert f["verdict"] == fnd.combine(c["verdict"] for c in f["checks"] if not c["extension"])


def test_every_finding_is_present_when_its_configurations_were_not_run(tiny: tuple[Path, list[str], dict]) -> None:
    out, _, _ = tiny
    rm = analysis.run_metrics(pd.read_parquet(out / "runs.parquet"))
    doc = claims.evaluate_findings(rm[rm["error"] == "none"], C.StudyParams(reps=2, errors="none"))
    fnd.validate(doc)
    by_id = {f["id"]: f for f in doc["findings"]}
    assert list(by_id) == list(claims.FINDING_IDS)
    assert by_id["S3"]["verdict"] == by_id["S6"]["verdict"] == by_id["S4"]["verdict"] == fnd.NOT_RUN
    assert [c["id"] for c in by_id["S7"]["checks"]] == ["S7c"]   # the lossy readings need a lossy model


def test_no_module_of_the_study_imports_the_package_that_imports_it() -> None:
    # The report used to import the study module that imported it (a circle); now the package's
    # __init__ imports its modules and none of them imports a name from __init__ (submodules only).
    submodules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    for path in PACKAGE.glob("*.py"):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "tcplab.studies.satellite":
                assert {a.name for a in node.names} <= submodules, f"{path.name}: {ast.unparse(node)}"
            if isinstance(node, ast.ImportFrom) and node.module == "tcplab.studies":
                assert all(a.name != "satellite" for a in node.names), path.name


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name


def test_the_probes_are_switched_with_set() -> None:
    """``--set`` reaches every switch of :class:`StudyParams` (trace, rfc3390, recovery, channel, rbdc_diagnostic)."""
    from tcplab.studies import get

    study = get("satellite")
    params = {p.name: p for p in study.params}
    switches = {"rbdc_diagnostic", "trace", "rfc3390", "recovery", "channel"}
    assert switches <= set(params)
    off = {name: params[name].parse("false") for name in switches}
    assert off == {name: False for name in switches}
    assert params["recovery"].parse("True") is True
    with pytest.raises(ValueError, match="recovery: expected true or false, got 'no'"):
        params["recovery"].parse("no")
    # With every probe off only the seed's grid is left.
    plain = C.plan(C.StudyParams(reps=2, errors="none", **off))
    full = C.plan(C.StudyParams(reps=2, errors="none"))
    assert 0 < len(plain) < len(full)


#: Seed 004's simplest findings written again as a study file (docs/study-files.md, "One machine").
STUDY_FILE = Path(__file__).resolve().parents[1] / "examples" / "studies" / "satellite-enhanced-slacp.toml"


def test_the_study_file_gives_the_bundled_study_s_statistics(tiny: tuple[Path, list[str], dict], tmp_path: Path
                                                             ) -> None:
    """The study file's checks S1a-S3c against the bundled study's, on the tiny run's grid (errors none and huge,
    2 replications, seed 1): the same statistic, interval and verdict, to 1e-9.

    The two share the engine, the simulator and :mod:`tcplab.studies.findings`; this test
    finds whether the file's scenarios, seeds, metric and claims are the study's.
    """
    from tcplab.studies import studyfile

    _, args, doc = tiny
    assert args[args.index("--set") + 1] == "errors=none,huge" and args[args.index("--reps") + 1] == "2"
    text = STUDY_FILE.read_text()
    # The tiny run's error models: none and huge (so "high" is huge alone).
    for old, new in (('  { kind = "markov", form = "preset", name = "low" },\n', ""),
                     ('  { kind = "markov", form = "preset", name = "medium" },\n', ""),
                     ('  { kind = "markov", form = "preset", name = "high" },\n', ""),
                     ('  { kind = "markov", form = "preset", name = "vhigh" },\n', ""),
                     ('labels = ["none", "low", "medium", "high", "vhigh", "huge"]', 'labels = ["none", "huge"]'),
                     ('high_errors = ["high", "vhigh", "huge"]', 'high_errors = ["huge"]')):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    sf = studyfile.StudyFile.from_toml(text, str(STUDY_FILE))
    assert sf.seed == 1 and len(sf.configurations()) == 2 * 3 * 2 * 2 * 2
    res = studyfile.run(sf, tmp_path / "file", reps=2, jobs=2, progress=False, figures=False)
    assert not res.failures
    bundled = {c["id"]: c for f in doc["findings"] for c in f["checks"]}
    mine = {f["id"]: f for f in res.findings["findings"]}
    assert sorted(mine) == ["S1a", "S1b", "S3a", "S3b", "S3c"]
    for cid, f in mine.items():
        (c,) = f["checks"]
        b = bundled[cid]
        assert c["verdict"] == b["verdict"] == f["verdict"], cid
        st, bt = c["statistic"], b["statistic"]
        assert st["n_replications"] == bt["n_replications"] == 2, cid
        assert st["value"] == pytest.approx(bt["value"], abs=1e-9, rel=1e-9), cid
        assert st["ci"] == pytest.approx(bt["ci"], abs=1e-9, rel=1e-9), cid
        # The same form; a share needs as many configurations as claims.py's most(n) (at_least 0.51 for n < 99).
        assert c["form"]["kind"] == b["form"]["kind"], cid
        if c["form"]["kind"] == "share":
            assert c["criterion"].rsplit("(", 1)[1] == b["criterion"].rsplit("(", 1)[1], cid
        else:
            assert c["form"] == b["form"], cid
