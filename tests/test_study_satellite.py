"""Study satellite (seed 004, issue 9): configurations from the scenario files, common
random numbers, the findings format, resumption, and a tiny end-to-end run through the CLI."""

import json
from pathlib import Path

import pandas as pd

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import satellite as S


def test_every_configuration_is_a_valid_scenario_of_the_seed() -> None:
    bases = S.base_documents()
    for slacp, base in bases.items():
        for dama in (*S.DAMA_MODES, S.RBDC_DIAGNOSTIC):
            for error in S.ERROR_MODELS:
                for n in S.WORKLOADS:
                    for variant in S.variants_of(n):
                        core = Scenario.from_dict(S.variant_document(base, dama, error, n, variant)).to_core()
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
            "base": S.base_documents()[False], "trace": False, "variants": ["reference", "enhanced"]}
    a, b = S.simulate_block(spec), S.simulate_block(spec)
    assert list(a["runs"]["digest"]) == list(b["runs"]["digest"])
    # Every variant of a replication runs with the replication's core seed; the Markov state
    # timeline depends on that seed alone, not on the traffic (net/error/markov.rs,
    # same_seed_same_losses_and_traffic_independent_timeline), so all see the same bursts.
    runs = pd.DataFrame(a["runs"])
    assert (runs.groupby("rep")["core_seed"].nunique() == 1).all()
    assert runs["core_seed"].tolist() == [7, 7, 8, 8]


def test_cbi_starts_from_the_previous_connections_ssthresh() -> None:
    spec = {"dama": "cra", "slacp": False, "error": "high", "n_flows": 1, "reps": [0, 2], "seed": 1,
            "base": S.base_documents()[False], "trace": False}
    runs = pd.DataFrame(S.simulate_block(spec)["runs"])
    for rep, part in runs.groupby("rep"):
        enh = part[part["variant"] == "enhanced"].iloc[0]
        cbi = part[part["variant"] == "enhanced+cbi"].iloc[0]
        assert cbi["initial_ssthresh_bytes"] == enh["final_ssthresh_bytes"]  # RFC 2140 temporal sharing


def test_tiny_study_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "sat"
    args = ["study", "satellite", "--reps", "2", "--set", "errors=none,huge", "--jobs", "1", "--out", str(out)]
    assert main(args) == 0
    doc = json.loads((out / "findings.json").read_text())
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == ["S1", "S2", "S3", "S4", "S5"]
    assert all(f["evaluated"] for f in doc["findings"])
    params = S.StudyParams(reps=2, errors="none,huge")
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == params.n_runs() - len(S.DAMA_MODES)  # the traces have their own tables
    assert int(runs["unfinished"].sum()) == 0
    assert len(pd.read_parquet(out / "trace_cwnd.parquet")) > 0
    for stem in ("elapsed_1mb", "elapsed_4x250kb", "elapsed_by_dama", "workloads", "overshoot_trace", "link_layer",
                 "rbdc_timeout"):
        assert (out / "figures" / f"{stem}.png").is_file()
    report = (out / "report.html").read_text()
    assert "seed 004" in report and "S5" in report
    manifest = json.loads((out / "study.json").read_text())
    assert manifest["tcplab_version"] == _core.version() and manifest["failures"] == []
    # A second run resumes every task and rewrites identical findings.
    assert main(args) == 0
    again = json.loads((out / "study.json").read_text())
    assert again["ran"] == 0 and again["skipped"] == manifest["tasks"]
    assert json.loads((out / "findings.json").read_text()) == doc


def test_docstring_examples() -> None:
    import doctest
    import importlib

    for name in ("tcplab.studies.satellite.configs", "tcplab.studies.satellite.report"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, name
