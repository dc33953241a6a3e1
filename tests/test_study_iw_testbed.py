"""Study iw-testbed (seed 001): set-up by path, common random numbers, batch overlaps, the
claims on synthetic runs with known truth (one test per defect the claim forms fixed),
and a tiny end-to-end run through the CLI (figures, report, findings.json, ledger ids)."""

import copy
import doctest
import importlib
import json
import pkgutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import iw_testbed
from tcplab.studies import ledger
from tcplab.studies.iw_testbed import claims, study
from tcplab.studies.iw_testbed import testbed as T


def test_configure_sets_the_grid_by_path_and_the_files_are_the_seeds_testbed() -> None:
    for link, rate, queue in (("64k", 64_000, 40), ("20m", 20_000_000, 500)):
        core = Scenario.from_dict(T.configure(T.base_scenario(link), "mix", 5, T.LINKS[link].loads[1], False, True,
                                              10, 20, 5)).to_core()
        topo = core["topology"]
        assert topo["pairs"] == 4 and topo["bottleneck"]["rate"] == rate
        assert topo["bottleneck"]["queue"]["limit"] == {"packets": queue}
        assert topo["bottleneck"]["delay"] == topo["bottleneck_reverse"]["delay"] == 150_000_000  # RTT 300 ms
        rpc = [f for f in core["flows"] if f["kind"] == "rpc"]
        assert [f["tcp"]["iw"] for f in rpc] == [3, 10, 3, 10]
        assert all(f["batch"] == 5 and not f["tcp"]["sack"] and f["tcp"]["fin_ignores_cwnd"] for f in rpc)
        assert all(f["tcp"]["initial_rto"] == 3_000_000_000 and f["tcp"]["timestamps"] for f in rpc)
        assert all(f["cc"]["name"] == "cubic" and f["stop"] == 30_000_000_000 for f in rpc)
        assert sum(f["arrivals"]["load"] for f in rpc) == pytest.approx(T.LINKS[link].loads[1])
        assert [f["group"] for f in core["flows"] if f["kind"] == "tcp"] == ["bg", "bg"]
        assert core["duration"] == 35_000_000_000


def test_the_background_flows_keep_iw10_while_the_profile_starts_with_rfc_3390() -> None:
    # The linux-2.6 profile starts as the seed's 2.6 kernels did (RFC 3390's 3 segments at MSS 1448, a 3 s
    # initial RTO); the files give the long-lived flows IW10 in every variant (the study's documented choice),
    # and the transactions' IW comes from iw_mix. Exact: resolved integers.
    for link in T.LINKS:
        for iw, mix in T.IW_VARIANTS.items():
            core = Scenario.from_dict(T.configure(T.base_scenario(link), iw, 1, T.LINKS[link].loads[0], True, True,
                                                  10, 20, 5)).to_core()
            rpc = [f["tcp"] for f in core["flows"] if f["kind"] == "rpc"]
            bg = [f["tcp"] for f in core["flows"] if f["kind"] == "tcp"]
            assert [t["iw"] for t in rpc] == [mix[i % len(mix)] for i in range(4)], (link, iw)
            assert [t["iw"] for t in bg] == [10, 10], (link, iw)
            assert all(t["initial_rto"] == 3_000_000_000 for t in rpc + bg)
    # Without the files' overrides the profile's own start-up applies: RFC 3390's window (4380 B, 3 whole
    # segments of 1448 B) and 3 s.
    plain = _without_start_up(T.base_scenario("64k"))
    bg = [_resolved(f) for f in Scenario.from_dict(plain).to_core()["flows"] if f["kind"] == "tcp"]
    assert [(t["iw"], t["mss"], t["initial_rto"]) for t in bg] == [("rfc3390", 1448, 3_000_000_000)] * 2


def _resolved(flow: dict[str, Any]) -> dict[str, Any]:
    """A core flow's full TCP configuration (its profile with its overrides), as the core resolves it."""
    cfg: dict[str, Any] = json.loads(_core.resolve_tcp(json.dumps(flow["tcp"], sort_keys=True)))
    return cfg


def _without_start_up(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of a testbed document without its initial RTO and the long-lived flows' IW10."""
    d = copy.deepcopy(doc)
    del d["tcp"]["initial_rto"]
    for f in d["flows"]:
        if f.get("group") == "bg":
            f.pop("tcp", None)
    return d


def test_host_document_replaces_the_2_6_kernels_3s_initial_rto_set_or_not() -> None:
    from tcplab.studies.iw_testbed.emulate import host_document

    # The study's documents state 3 s; the host's kernel starts with 1 s and the change is reported.
    seed_doc = T.configure(T.base_scenario("20m"), "iw3", 1, 0.96, True, True, 5, 20, 5)
    host, changes = host_document(seed_doc, "6.18.4")
    assert host["tcp"]["profile"] == "linux" and host["tcp"]["initial_rto"] == "1s"
    assert any(c.startswith("tcp.initial_rto 3s -> 1s") for c in changes)
    assert {_resolved(f)["initial_rto"] for f in Scenario.from_dict(host).to_core()["flows"]} == {1_000_000_000}
    # A linux-2.6 document that leaves the initial RTO to the profile has the profile's 3 s, not 1 s: the
    # replacement is reported too (read before host_profile rewrites the profile to linux).
    bare = _without_start_up(T.base_scenario("20m"))
    assert {_resolved(f)["initial_rto"] for f in Scenario.from_dict(bare).to_core()["flows"]} == {3_000_000_000}
    host, changes = host_document(bare, "6.9.0")  # 6.9 still has the FIN exception the files ask for
    assert host["tcp"]["profile"] == "linux" and host["tcp"]["initial_rto"] == "1s"
    assert [c.split(":")[0] for c in changes] == ["tcp.profile linux-2.6 -> linux", "tcp.initial_rto 3s -> 1s"]
    assert "3 s -> 1 s initial RTO" in changes[0] and "IW10" in changes[0]
    assert {_resolved(f)["initial_rto"] for f in Scenario.from_dict(host).to_core()["flows"]} == {1_000_000_000}
    # A linux document already starts with the kernel's 1 s: nothing to replace.
    linux = copy.deepcopy(bare)
    linux["tcp"]["profile"] = "linux"
    assert host_document(linux, "6.9.0")[1] == []


def test_arrivals_are_common_random_numbers_across_iw_and_sack() -> None:
    starts = []
    for iw, sack in (("iw3", True), ("iw10", False), ("mix", True)):
        d = T.configure(T.base_scenario("20m"), iw, 1, 0.5, sack, False, 0, 2, 1)
        doc = json.loads(_core.run(Scenario.from_dict(d).to_core_json(), 7))
        starts.append(doc["transactions"]["start_s"])
    assert len(starts[0]) > 50 and starts[0] == starts[1] == starts[2]


def test_batch_overlaps_by_hand() -> None:
    # Batches 0 [0, 5], 1 [4, 9] overlap; 2 [20, inf) (unfinished) overlaps 3 [30, 31] and
    # 4 [40, 41]; 5 [9, 10] touches 1's end, which is no overlap.
    s = np.array([0.0, 4.0, 20.0, 30.0, 40.0, 9.0])
    e = np.array([5.0, 9.0, np.nan, 31.0, 41.0, 10.0])
    dropped, overlaps = study.batch_overflow(s, e, np.arange(6), np.array([0, 1, 0, 0, 0, 0]))
    assert dropped.tolist() == [False, True, False, False, False, False]
    assert overlaps.tolist() == [1, 1, 2, 1, 1, 0]


def test_the_mix_is_compared_with_the_same_clients_alone() -> None:
    # Defect (a): "IW3 in the mix" are clients 0 and 2; in the IW3-alone run the same two
    # clients must be measured, not all four.
    d = T.configure(T.base_scenario("20m"), "iw3", 1, 0.6, True, False, 0.5, 1.5, 1)
    doc = json.loads(_core.run(Scenario.from_dict(d).to_core_json(), 3))
    m, _ = study.run_metrics_of(doc, 0.5, 2.0)
    tr = pd.DataFrame({k: doc["transactions"][k] for k in ("app", "start_s", "uct_s")})
    tr = tr[(tr["start_s"] >= 0.5) & (tr["start_s"] < 2.0)]
    even = tr[tr["app"].isin(["rpc.0", "rpc.2"])]["uct_s"].mean()
    odd = tr[tr["app"].isin(["rpc.1", "rpc.3"])]["uct_s"].mean()
    assert m["uct_mean_c02_s"] == pytest.approx(even) and m["uct_mean_c13_s"] == pytest.approx(odd)
    assert m["uct_mean_c02_s"] != pytest.approx(m["uct_mean_iw3_s"])  # the four clients' mean differs


# --------------------------------------------------------------------------------------
# The claims on synthetic runs with known truth


@dataclass
class _Params:
    reps: int = 6
    links: list[str] = field(default_factory=lambda: ["64k", "20m"])


def synthetic(change: Callable[[dict[str, Any]], dict[str, Any]] | None = None, reps: int = 6) -> pd.DataFrame:
    """Every configuration, IW variant and SACK setting: flat metrics with a small spread over
    replications, then ``change(row)`` overrides."""
    rows = []
    for link, load, opens, bg in T.configurations(["64k", "20m"]):
        for iw in T.IW_VARIANTS:
            for sack in T.SACK:
                for rep in range(reps):
                    wiggle = 1 + 0.001 * rep
                    row = {"link": link, "load": load, "opens": opens, "bg": bg, "iw": iw, "sack": sack, "rep": rep,
                           "uct_mean_s": 2.0 * wiggle, "uct_mean_c02_s": 2.0 * wiggle, "uct_mean_c13_s": 2.0 * wiggle,
                           "uct_mean_iw3_s": 2.0 * wiggle, "uct_idle_s": 1.0, "uct_p50_s": 2.0, "uct_p99_s": 4.0,
                           "plr": 0.01 * wiggle, "occ_mean_pkts": 5.0, "qdelay_mean_s": 0.5, "qdelay_max_s": 7.5,
                           "hs_rtt_max_s": 5.0, "bg_goodput_bps": 1000.0 * wiggle if bg else np.nan,
                           "bg_retransmits": 10.0 if bg else np.nan, "n_batches": 100, "batches_dropped": 0,
                           "batches_isolated": 20, "isolated_dropped": 0, "batches_lt2": 50, "lt2_dropped": 0}
                    if change:
                        row.update(change(row))
                    rows.append(row)
    return pd.DataFrame(rows)


def checks_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for f in doc["findings"] for c in f["checks"]}


def test_defect_a_fairness_compares_clients_0_and_2_in_both_variants() -> None:
    # Clients 0 and 2 take 2.0 s in both variants; clients 1 and 3 take 4.0 s under IW3
    # alone (so the four clients' mean, uct_mean_iw3_s, is 3.0 s there).
    def change(row: dict[str, Any]) -> dict[str, Any]:
        return {"uct_mean_iw3_s": 3.0 if row["iw"] == "iw3" else 2.0}

    c = checks_of(claims.evaluate_findings(synthetic(change), _Params()))
    assert c["T3a"]["statistic"]["exact"] and c["T3a"]["statistic"]["value"] == 0.0
    assert c["T3a"]["verdict"] == "held"


def test_defect_b_the_20_mbit_background_runs_are_an_extension() -> None:
    # IW10 costs the background flows 30 % on 20 Mbit/s (a run the seed did not make) and
    # gains them 5 % on the seed's 64 kbit/s runs: the seed's claim holds, the extension not.
    def change(row: dict[str, Any]) -> dict[str, Any]:
        if not row["bg"] or row["iw"] != "iw10":
            return {}
        return {"bg_goodput_bps": row["bg_goodput_bps"] * (0.7 if row["link"] == "20m" else 1.05)}

    doc = claims.evaluate_findings(synthetic(change), _Params())
    c = checks_of(doc)
    per = c["T4a"]["per_config"]
    assert {p["link"] for p in per} == {"64k"} and all(p["opens"] == 5 for p in per)
    assert c["T4a"]["verdict"] == "held" and not c["T4a"]["extension"]
    assert c["T4x"]["verdict"] == "contradicted" and c["T4x"]["extension"]
    assert next(f for f in doc["findings"] if f["id"] == "T4")["verdict"] == "held"


def test_defect_c_more_obvious_under_high_load_is_a_contrast_between_loads() -> None:
    # IW10 helps the background flows by 10 % at 75 % and by 5 % at 97.5 %: better under
    # IW10, but less obvious under high load.
    def change(row: dict[str, Any]) -> dict[str, Any]:
        if not row["bg"] or row["iw"] != "iw10":
            return {}
        return {"bg_goodput_bps": row["bg_goodput_bps"] * (1.05 if row["load"] == 0.975 else 1.10)}

    c = checks_of(claims.evaluate_findings(synthetic(change), _Params()))
    assert c["T26a"]["verdict"] == "held"
    assert c["T26b"]["form"]["kind"] == "contrast" and c["T26b"]["verdict"] == "contradicted"


def test_defect_d_always_and_never_are_every_run_not_a_pooled_share() -> None:
    # One IW10 batch in one run of 48 did not overflow: the pooled share is 0.9998 but
    # "ALWAYS" is contradicted. One IW3 batch overlapping exactly one other overflowed:
    # "never, unless colliding with two others" is contradicted, "unless colliding" held.
    def change(row: dict[str, Any]) -> dict[str, Any]:
        if row["link"] != "64k" or row["opens"] != 5 or row["bg"]:
            return {}
        first = row["rep"] == 0 and row["sack"] and row["load"] == 0.75
        if row["iw"] == "iw10":
            return {"batches_dropped": 99 if first else 100}
        if row["iw"] == "iw3":
            return {"lt2_dropped": 1 if first else 0, "batches_dropped": 1 if first else 0}
        return {}

    doc = claims.evaluate_findings(synthetic(change), _Params())
    c = checks_of(doc)
    assert c["T6a"]["statistic"]["value"] > 0.999 and c["T6a"]["verdict"] == "contradicted"
    assert c["T6a"]["form"]["kind"] == "every" and len(c["T6a"]["per_config"]) == 2 * 2 * 6
    t7 = next(f for f in doc["findings"] if f["id"] == "T7")
    assert t7["readings"] == {"colliding: overlapping any other batch": "held",
                              "colliding: overlapping two or more other batches": "contradicted"}


def test_defect_e_equally_or_better_is_non_inferiority_with_a_stated_margin() -> None:
    def goodput(factor: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def change(row: dict[str, Any]) -> dict[str, Any]:
            return {"bg_goodput_bps": row["bg_goodput_bps"] * factor} if row["bg"] and row["iw"] == "iw10" else {}
        return change

    t4a = {f: checks_of(claims.evaluate_findings(synthetic(goodput(f)), _Params()))["T4a"] for f in (0.98, 0.90)}
    # 2 % worse is "equally" (inside the 5 % margin); 10 % worse is contradicted.
    assert {f: c["verdict"] for f, c in t4a.items()} == {0.98: "held", 0.90: "contradicted"}
    assert t4a[0.98]["form"] == {"kind": "directional", "side": "above", "threshold": -claims.EQUAL, "negligible": None}


def test_every_finding_is_present_and_not_run_without_its_configurations() -> None:
    runs = synthetic()
    doc = claims.evaluate_findings(runs[runs["link"] == "20m"], _Params(links=["20m"]))
    fnd.validate(doc)
    f = {x["id"]: x["verdict"] for x in doc["findings"]}
    assert list(f) == [f"T{i}" for i in range(1, 28)]
    assert f["T6"] == f["T13"] == f["T24"] == "not run" and f["T11"] != "not run"
    assert not any(c.get("form", {}).get("kind") == "legacy" for x in doc["findings"] for c in x["checks"])


def test_the_report_does_not_import_the_study() -> None:
    code = ("import sys, tcplab.studies.iw_testbed.report; "
            "assert 'tcplab.studies.iw_testbed.study' not in sys.modules, 'report imports the study'")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------------------
# A tiny run end to end


def test_tiny_study_writes_figures_report_and_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "study"
    argv = ["study", "iw-testbed", "--reps", "2", "--jobs", "2", "--no-progress", "--out", str(out),
            "--set", "measure_64k_s=60", "--set", "measure_20m_s=2", "--set", "keep_txn_reps=1"]
    assert main(argv) == 0, capsys.readouterr().err
    doc = json.loads((out / "findings.json").read_text())
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == [f"T{i}" for i in range(1, 28)]
    assert all(f["evaluated"] and f["verdict"] in fnd.VERDICTS for f in doc["findings"])
    assert ledger.load("iw-testbed").finding_problems(doc) == []
    assert doc["ledger"]["coverage"]["checked"] > 0
    study_doc = json.loads((out / "study.json").read_text())
    assert study_doc["runs"] == 216 and not study_doc["failures"]
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 216 and (runs["n_txn"] > 0).all()
    assert set(runs["load"]) == {0.3, 0.72, 0.96, 0.75, 0.975}
    # The idle testbed: 64 kbit/s gives IW3 and IW10 the same UCT; 20 Mbit/s saves IW10 2 RTTs.
    idle = runs.groupby(["link", "iw"])["uct_idle_s"].first()
    assert idle["64k", "iw3"] == idle["64k", "iw10"]
    assert idle["20m", "iw3"] - idle["20m", "iw10"] == pytest.approx(0.6, abs=0.01)
    # T6's mechanism holds even in the tiny run: five IW10 bursts overflow 40 packets.
    t6a = checks_of(doc)["T6a"]
    assert t6a["statistic"]["value"] == 1.0 and t6a["verdict"] == "held"
    for stem in ("uct_mean", "plr_64k", "fairness", "sack", "batches_64k", "qlen_20m_96", "cwnd_64k_bg"):
        assert (out / "figures" / f"{stem}.svg").is_file(), stem
    html = (out / "report.html").read_text()
    assert "T27" in html and "Claims ledger" in html


MODULES = ["tcplab.studies.iw_testbed"] + [f"tcplab.studies.iw_testbed.{m.name}"
                                           for m in pkgutil.iter_modules(iw_testbed.__path__)]


def test_the_package_has_its_modules() -> None:
    assert set(MODULES) >= {f"tcplab.studies.iw_testbed.{m}" for m in
                            ("testbed", "study", "analysis", "claims", "report", "emulate")}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
