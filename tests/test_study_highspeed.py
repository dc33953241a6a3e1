"""Study highspeed (seed 002, issue 11): configurations from the scenario file at each
scale, common random numbers across protocols and mixes, the relative-throughput
analysis, and a tiny end-to-end run through the CLI (findings.json in the shared
format)."""

import json
from pathlib import Path

import pandas as pd

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import highspeed as H


def test_full_scale_is_the_seeds_and_the_reduced_scale_divides_by_ten() -> None:
    base = H.base_document()
    full = Scenario.from_dict(H.variant_document(base, "full", "cubic", "alone", 10, False)).to_core()
    bb = full["topology"]["backbone"]
    assert (bb["rate"], bb["delay"], bb["queue"]["limit"]) == (10**9, 15_000_000, {"bytes": 2_000_000})
    assert bb["error"] is None and full["topology"]["routers"] == 5
    long_c, short_c = full["workload"]["classes"]
    assert long_c["size"] == {"dist": "constant", "bytes": 4_700_000_000} and long_c["count"] == 10
    assert short_c["size"] == {"dist": "pareto", "mean": 1e6, "shape": 1.2} and short_c["count"] == 100
    assert (long_c["interarrival_mean"], short_c["interarrival_mean"]) == (120 * 10**9, 10**9)
    assert full["workload"]["rtt_mean"] == 130_000_000 and full["duration"] == 1800 * 10**9
    red = Scenario.from_dict(H.variant_document(base, "reduced", "areno", "mixed", 40, True)).to_core()
    bb = red["topology"]["backbone"]
    assert (bb["rate"], bb["queue"]["limit"], bb["error"]) == (10**8, {"bytes": 200_000},
                                                               {"kind": "bernoulli", "per": 1e-4})
    long_c, short_c = red["workload"]["classes"]
    assert long_c["size"]["bytes"] == 470_000_000 and short_c["size"]["mean"] == 1e5
    assert long_c["mix_fraction"] == short_c["mix_fraction"] == 0.5 and long_c["mix_cc"]["name"] == "reno"
    assert long_c["cc"]["name"] == "areno" and long_c["tcp"]["rcv_buffer"] == 6_400_000
    assert red["duration"] == 5400 * 10**9


def test_protocols_and_mixes_see_the_same_flows() -> None:
    """Per replication, every run has the same flows (names, paths, RTTs, starts, sizes),
    and the mixed runs of two protocols put the same flows on Reno."""
    base = H.base_document()
    spec = {"scale": "tiny", "n_long": 3, "loss": False, "rep": 0, "seed": 5, "base": base, "short": 8}
    runs = {(p, m): pd.DataFrame(H.simulate_run({**spec, "protocol": p, "mix": m})["flows"])
            for p, m in (("reno", "alone"), ("scalable", "alone"), ("scalable", "mixed"), ("areno", "mixed"))}
    ref = runs[("reno", "alone")]
    for df in runs.values():
        pd.testing.assert_frame_equal(df[["name", "cls", "hops", "rtt_s", "start_s", "bytes_target"]],
                                      ref[["name", "cls", "hops", "rtt_s", "start_s", "bytes_target"]])
    assert (runs[("scalable", "mixed")]["flow_cc"] == "reno").tolist() == (runs[("areno", "mixed")]["flow_cc"]
                                                                             == "reno").tolist()
    assert set(runs[("scalable", "alone")]["flow_cc"]) == {"scalable"}
    other = pd.DataFrame(H.simulate_run({**spec, "protocol": "reno", "mix": "alone", "rep": 1})["flows"])
    assert other["start_s"].tolist() != ref["start_s"].tolist()


def test_relative_throughput_is_per_flow_against_the_reno_run() -> None:
    """A hand-made case: flow a doubles its throughput, flow b keeps it: rel = (2 + 1) / 2."""
    key = {"n_long": 10, "loss": False, "rep": 0}
    rows = []
    for proto, mix, thr in (("reno", "alone", (10.0, 20.0)), ("cubic", "alone", (20.0, 20.0))):
        for name, t in zip(("long000", "long001"), thr):
            rows.append({"protocol": proto, "mix": mix, **key, "name": name, "cls": "long", "entry": 0, "exit": 1,
                         "hops": 1, "rtt_s": 0.1,
                         "flow_cc": proto, "start_s": 0.0, "bytes_target": 1, "bytes_delivered": 1, "completed": True,
                         "elapsed_s": 1.0, "throughput_bps": t, "span_s": 100.0})
    flows = pd.DataFrame(rows)
    links = pd.DataFrame([{"protocol": p, "mix": "alone", **key, "link": "bb0", "rate_bps": 100.0, "utilisation": u,
                           "tx_bytes": 1,
                           "drops": 0} for p, u in (("reno", 0.5), ("cubic", 0.6))])
    runs = pd.DataFrame([{"protocol": p, "mix": "alone", **key, "duration_s": 1800.0} for p in ("reno", "cubic")])
    out = H.analyse_runs(flows, links, runs)
    rm = out["run_metrics"]
    assert len(rm) == 1 and rm["rel_long"].iloc[0] == 1.5
    assert abs(rm["util_gain"].iloc[0] - 0.1) < 1e-12
    # Both flows cross bb0 over [0, 1] s: 2 x 8 bits / (100 bit/s x 1 s) in both runs.
    assert rm["util_active"].iloc[0] == rm["base_util_active"].iloc[0] == 0.16


def test_tiny_study_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "hs"
    code = main(["study", "highspeed", "--reps", "2", "--jobs", "1", "--out", str(out), "--scale", "tiny",
                 "--set", "protocols=scalable,areno", "--set", "loads=10", "--set", "loss=false",
                 "--set", "short=10"])
    assert code == 0
    doc = json.loads((out / "findings.json").read_text())
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == ["H1", "H2", "H3", "H4"]
    assert doc["findings"][0]["evaluated"] and doc["findings"][3]["evaluated"]
    rm = pd.read_parquet(out / "run_metrics.parquet")
    assert len(rm) == 2 * 2 * 2  # 2 protocols x 2 mixes x 2 replications
    assert (out / "report.html").is_file() and (out / "figures" / "tradeoff.png").is_file()
    assert _core.version()


def test_scale_option_is_checked_before_anything_runs(tmp_path: Path, capsys) -> None:
    """``--scale`` is ``--set scale=``: an unknown scale, or a study without one, exits 2."""
    assert main(["study", "highspeed", "--scale", "huge", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "scale" in err and "'huge'" in err and "reduced" in err
    assert main(["study", "iw-irto", "--scale", "full", "--out", str(tmp_path / "b")]) == 2
    assert "--scale: study iw-irto has no scale parameter; studies with one: highspeed" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
