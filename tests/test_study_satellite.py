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
            "base": C.base_documents()[False], "trace": False, "variants": list(C.variants_of(1, iw4=True))}
    runs = pd.DataFrame(C.simulate_block(spec)["runs"])
    for rep, part in runs.groupby("rep"):
        v = part.set_index("variant")
        for enh in ("enhanced", "enhanced-iw4"):  # each CBI variant reuses its own Enhanced transfer's ssthresh
            assert v.loc[enh + "+cbi", "initial_ssthresh_bytes"] == v.loc[enh, "final_ssthresh_bytes"]  # RFC 2140
    # The second reading of the initial window: 4 segments of 1410 B instead of RFC 3390's 4380 B.
    core = Scenario.from_dict(C.variant_document(C.base_documents()[False], "cra", "none", 1, "enhanced-iw4")).to_core()
    assert core["flows"][0]["tcp"]["iw"] == 4


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
    assert len(runs) == params.n_runs() - len(C.DAMA_MODES)  # the traces have their own tables
    assert int(runs["unfinished"].sum()) == 0
    assert len(pd.read_parquet(out / "trace_cwnd.parquet")) > 0
    for stem in ("elapsed_1mb", "elapsed_4x250kb", "elapsed_by_dama", "workloads", "overshoot_drops",
                 "overshoot_trace", "link_layer", "rbdc_timeout"):
        assert (out / "figures" / f"{stem}.png").is_file()
    report = (out / "report.html").read_text()
    assert "seed 004" in report and "S14" in report and "Claims ledger" in report
    # Every finding again under the seed's literal initial window of 4 segments.
    [iw4] = doc["setup_readings"]
    assert [f["id"] for f in iw4["findings"]] == list(claims.FINDING_IDS) and "Second reading" in report
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
