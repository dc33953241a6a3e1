"""Study highspeed (seed 002, ``docs/seeds/002_06d48414b99b3466.txt``): configurations from
the scenario file at each scale, common random numbers across protocols, mixes and the
runs without short-lived flows, the relative-throughput analysis, the claim forms of
the findings on hand-made metrics, and a tiny end-to-end run through the CLI
(findings.json in the shared format, its ids cross-checked against the claims ledger)."""

import doctest
import importlib
import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pytest

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import highspeed as H
from tcplab.studies import ledger
from tcplab.studies.highspeed import analysis, claims

IDENTITY = ["name", "cls", "hops", "rtt_s", "start_s", "bytes_target"]


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
    assert full["workload"]["rtt_mean"] == 130_000_000 and full["duration"] == H.DURATION_S * 10**9
    assert long_c["mode"] == short_c["mode"] == "sessions" and full["workload"]["rtt_reading"] == "equal_per_hop"
    red = Scenario.from_dict(H.variant_document(base, "reduced", "areno", "mixed", 40, True)).to_core()
    bb = red["topology"]["backbone"]
    assert (bb["rate"], bb["queue"]["limit"], bb["error"]) == (10**8, {"bytes": 200_000},
                                                               {"kind": "bernoulli", "per": 1e-4})
    long_c, short_c = red["workload"]["classes"]
    assert long_c["size"]["bytes"] == 470_000_000 and short_c["size"]["mean"] == 1e5
    assert long_c["mix_fraction"] == short_c["mix_fraction"] == 0.5 and long_c["mix_cc"]["name"] == "reno"
    assert long_c["cc"]["name"] == "areno" and long_c["tcp"]["rcv_buffer"] == 6_400_000
    assert red["duration"] == H.DURATION_S * 10**9
    files = Scenario.from_dict(H.variant_document(base, "reduced", "reno", "alone", 40, False, workload="files",
                                                  rtt="common_excess", delay="buffer")).to_core()
    assert files["duration"] == 5400 * 10**9 and files["workload"]["classes"][0]["mode"] == "files"
    assert files["workload"]["rtt_reading"] == "common_excess" and files["topology"]["backbone"]["delay"] == 10**6
    alone = Scenario.from_dict(H.variant_document(base, "reduced", "reno", "alone", 10, False, shorts=False)).to_core()
    assert [c["name"] for c in alone["workload"]["classes"]] == ["long"]


def test_protocols_mixes_and_the_runs_without_short_flows_see_the_same_flows() -> None:
    """Per replication, every run has the same flows (names, paths, RTTs, starts, sizes),
    the mixed runs of two protocols put the same flows on Reno, and a run without the
    short-lived class has the same long-lived flows."""
    base = H.base_document()
    spec = {"scale": "tiny", "n_long": 3, "loss": False, "shorts": True, "rep": 0, "seed": 5, "base": base, "short": 8}
    runs = {(p, m): pd.DataFrame(H.simulate_run({**spec, "protocol": p, "mix": m})["flows"])
            for p, m in (("reno", "alone"), ("scalable", "alone"), ("scalable", "mixed"), ("areno", "mixed"))}
    ref = runs[("reno", "alone")]
    for df in runs.values():
        pd.testing.assert_frame_equal(df[IDENTITY], ref[IDENTITY])
    assert (runs[("scalable", "mixed")]["flow_cc"] == "reno").tolist() == (runs[("areno", "mixed")]["flow_cc"]
                                                                             == "reno").tolist()
    assert set(runs[("scalable", "alone")]["flow_cc"]) == {"scalable"}
    other = pd.DataFrame(H.simulate_run({**spec, "protocol": "reno", "mix": "alone", "rep": 1})["flows"])
    assert other["start_s"].tolist() != ref["start_s"].tolist()
    lone = pd.DataFrame(H.simulate_run({**spec, "protocol": "reno", "mix": "alone", "shorts": False})["flows"])
    pd.testing.assert_frame_equal(lone[IDENTITY], ref.loc[ref["cls"] == "long", IDENTITY].reset_index(drop=True))


def test_relative_throughput_is_per_flow_against_the_reno_run() -> None:
    """A hand-made case: flow a doubles its throughput, flow b keeps it: rel = (2 + 1) / 2."""
    key = {"n_long": 10, "loss": False, "shorts": True, "rep": 0}
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
    out = analysis.analyse_runs(flows, links, runs)
    rm = out["run_metrics"].set_index("protocol")
    assert len(rm) == 2 and rm.loc["cubic", "rel_long"] == 1.5 and pd.isna(rm.loc["reno", "rel_long"])
    assert abs(rm.loc["cubic", "util_gain"] - 0.1) < 1e-12
    # Both flows cross bb0 over [0, 1] s: 2 x 8 bits / (100 bit/s x 1 s) in both runs.
    assert rm.loc["cubic", "util_active"] == rm.loc["cubic", "base_util_active"] == 0.16


# --------------------------------------------------------------------------------------
# The claim forms on hand-made per-run metrics

REPS = 6


def metrics(value: Callable[[str, str, int, bool, bool, int], dict[str, float]]) -> pd.DataFrame:
    """A full grid of per-run metrics (the default parameters' configurations, 6 replications),
    each row's metrics given by ``value(protocol, mix, n_long, loss, shorts, rep)``."""
    rows = []
    for rep in range(REPS):
        for p, m, n, loss, shorts, rtt in H.StudyParams().configurations():
            rows.append({"protocol": p, "mix": m, "n_long": n, "loss": loss, "shorts": shorts, "rtt": rtt, "rep": rep,
                         **value(p, m, n, loss, shorts, rep)})
    return pd.DataFrame(rows)


def neutral(p: str, m: str, n: int, loss: bool, shorts: bool, rep: int) -> dict[str, float]:
    """Every high-speed protocol gains 30% with a little replication noise; Reno is the baseline."""
    jitter = 0.01 * ((rep * 7 + n) % 5 - 2)
    base = {c: float("nan") for c in ("rel_long", "rel_short", "rel_long_h1", "rel_long_h2", "rel_long_h3-4",
                                      "rel_long_rtt_short", "rel_long_rtt_long", "reno_deg_long")}
    metrics_ = {"util_gain": 0.0, "util_active_gain": 0.0, "slope_rtt": -0.8 + jitter, "slope_hops": -0.2 + jitter,
                "jain": 0.8 + jitter, "spike_rate": float("nan")}
    if p != "reno":
        base.update({c: 1.3 + jitter for c in base if c != "reno_deg_long"})
        metrics_.update({"util_gain": 0.02 + jitter / 10, "util_active_gain": 0.1 + jitter})
        if m == "mixed":
            base["reno_deg_long"] = 0.98 + jitter
    return {**base, **metrics_}


def verdicts(rm: pd.DataFrame) -> dict[str, str]:
    doc = claims.evaluate_findings(rm, H.StudyParams())
    fnd.validate(doc)
    return {f["id"]: f["verdict"] for f in doc["findings"]}


def checks_of(rm: pd.DataFrame, fid: str, rtt: str = "equal_per_hop") -> dict[str, dict[str, Any]]:
    """The finding's checks under one RTT reading, by id."""
    doc = claims.evaluate_findings(rm, H.StudyParams())
    return {c["id"]: c for f in doc["findings"] if f["id"] == fid for c in f["checks"]
            if c["reading"] is None or c["reading"].split("; ")[0] == f"RTT {rtt}"}


def test_the_random_loss_case_and_cubic_are_outside_the_seeds_efficiency_claims() -> None:
    """"High-speed TCPs improve efficiency" is the seed's six protocols at its two loads
    without random loss. The first version pooled the random-loss case into every claim
    and counted CUBIC (absent from the seed's table) among "every high-speed TCP"."""
    def value(p, m, n, loss, shorts, rep):
        v = neutral(p, m, n, loss, shorts, rep)
        if (loss or p == "cubic") and p != "reno":
            v.update(util_gain=-0.5, util_active_gain=-0.5, rel_long=0.5)
        return v
    v = verdicts(metrics(value))
    assert v["H1"] == fnd.HELD
    assert v["X1"] == fnd.CONTRADICTED and v["X2"] == fnd.CONTRADICTED   # extensions, shown beside


def test_a_gain_inside_the_negligible_band_contradicts_improve_and_a_wide_interval_is_inconclusive() -> None:
    """Whole-run utilisation gains of 1e-4 of capacity with a tight interval contradict
    "improve efficiency" (the first version could only say "not held"); a gain whose
    interval straddles 0 is inconclusive, with the replications that would settle it."""
    def tiny_gain(p, m, n, loss, shorts, rep):
        return {**neutral(p, m, n, loss, shorts, rep), "util_gain": 0.0 if p == "reno" else 1e-4 * (1 + rep % 2)}
    h1 = checks_of(metrics(tiny_gain), "H1")
    assert h1["H1a"]["verdict"] == fnd.CONTRADICTED and h1["H1b"]["verdict"] == fnd.HELD
    assert h1["H1a"]["reading"] == "RTT equal_per_hop; whole-run utilisation"

    def noisy(p, m, n, loss, shorts, rep):
        return {**neutral(p, m, n, loss, shorts, rep),
                "util_active_gain": 0.0 if p == "reno" else 0.02 + 0.2 * (-1) ** rep}
    h1b = checks_of(metrics(noisy), "H1")["H1b"]
    assert h1b["verdict"] == fnd.INCONCLUSIVE and h1b["reps_needed"] > REPS


def test_only_short_hop_flows_improve_is_an_only_claim_over_every_hop_bin() -> None:
    """"Scalable: only short hop flows improve": 1-hop flows improve and every other bin
    does not. The first version held when the 3-4-hop interval merely failed to lie above
    0 (inconclusive counted as "does not improve") and never looked at 2 hops."""
    def far_unclear(p, m, n, loss, shorts, rep):
        v = neutral(p, m, n, loss, shorts, rep)
        if p == "scalable":
            v.update({"rel_long_h1": 1.5 + 0.01 * rep, "rel_long_h2": 1.0 + 0.001 * (rep % 2),
                      "rel_long_h3-4": 1.05 + 0.3 * (-1) ** rep})
        return v
    h3 = checks_of(metrics(far_unclear), "H3")
    assert h3["H3a"]["form"]["kind"] == "only" and h3["H3a"]["verdict"] == fnd.INCONCLUSIVE
    assert h3["H3b"]["verdict"] == fnd.CONTRADICTED      # short hop = 1 or 2 hops: 2-hop flows do not improve

    def far_improves(p, m, n, loss, shorts, rep):
        return {**far_unclear(p, m, n, loss, shorts, rep), **({"rel_long_h3-4": 1.4} if p == "scalable" else {})}
    assert checks_of(metrics(far_improves), "H3")["H3a"]["verdict"] == fnd.CONTRADICTED


def test_every_hop_count_must_improve_for_areno_and_hamilton() -> None:
    def one_bin_loses(p, m, n, loss, shorts, rep):
        v = neutral(p, m, n, loss, shorts, rep)
        if p == "htcp":
            v["rel_long_h3-4"] = 0.8 + 0.01 * rep
        return v
    h4 = checks_of(metrics(one_bin_loses), "H4")
    assert h4["H4a"]["verdict"] == fnd.HELD and h4["H4b"]["verdict"] == fnd.CONTRADICTED
    assert [c["verdict"] for c in h4["H4b"]["per_config"]] == [fnd.HELD, fnd.HELD, fnd.CONTRADICTED]


def test_a_finding_whose_runs_were_not_all_run_is_not_run_and_not_a_partial_verdict() -> None:
    """The first version evaluated a finding on whichever of its protocols had run."""
    rm = metrics(neutral)
    doc = claims.evaluate_findings(rm[rm["protocol"] != "compound"], H.StudyParams())
    by_id = {f["id"]: f for f in doc["findings"]}
    assert [f["id"] for f in doc["findings"]] == list(claims._ORDER)
    assert by_id["H2"]["verdict"] == fnd.NOT_RUN and by_id["H2"]["checks"] == []
    assert "Compound alone" in by_id["H2"]["criterion"]
    assert by_id["H4"]["verdict"] != fnd.NOT_RUN


def test_steeper_and_flatter_are_directional_on_the_slope_not_a_symmetric_index() -> None:
    """Scalable steeper (more negative slope) than Reno, AReno and H-TCP flatter: held on
    the slopes even though every protocol has the same Jain index."""
    def slopes(p, m, n, loss, shorts, rep):
        v = neutral(p, m, n, loss, shorts, rep)
        v["slope_rtt"] = v["slope_hops"] = {"scalable": -1.5, "areno": -0.3, "htcp": -0.4}.get(p, -0.8) + 0.001 * rep
        v["jain"] = 0.8
        return v
    v = verdicts(metrics(slopes))
    assert v["H5"] == fnd.HELD and v["H6"] == fnd.HELD and v["H12"] == fnd.HELD
    t2 = checks_of(metrics(slopes), "T2")
    assert t2["T2a"]["verdict"] == fnd.HELD and t2["T2c"]["verdict"] == fnd.CONTRADICTED   # Jain: no difference


def test_readings_are_reported_and_every_reading_enters_the_verdict() -> None:
    doc = claims.evaluate_findings(metrics(neutral), H.StudyParams())
    h1 = next(f for f in doc["findings"] if f["id"] == "H1")
    assert set(h1["readings"]) == {f"RTT {r}; {u}" for r in H.RTT_READINGS
                                   for u in ("whole-run utilisation", "active utilisation")}
    t3 = next(f for f in doc["findings"] if f["id"] == "T3")
    assert len(t3["readings"]) == 8 and len(t3["checks"]) == 8
    assert all(c["form"]["kind"] != "legacy" for f in doc["findings"] for c in f["checks"])


def test_every_finding_is_reported_under_both_rtt_readings() -> None:
    """Each finding has a verdict per RTT reading; a finding that holds under one and is
    contradicted under the other says it depends on the reading, and its verdict combines
    both (every reading enters the verdict)."""
    def scalable_steep_only_with_common_excess(rm: pd.DataFrame) -> pd.DataFrame:
        rm = rm.copy()
        on = (rm["protocol"] == "scalable") & (rm["rtt"] == "common_excess")
        rm.loc[on, "slope_rtt"] = rm.loc[on, "slope_rtt"] - 0.7
        rm.loc[on, "slope_hops"] = rm.loc[on, "slope_hops"] - 0.7
        return rm
    doc = claims.evaluate_findings(scalable_steep_only_with_common_excess(metrics(neutral)), H.StudyParams())
    fnd.validate(doc)
    by_id = {f["id"]: f for f in doc["findings"]}
    assert all(set(f["rtt_readings"]) == set(H.RTT_READINGS) for f in by_id.values() if f["evaluated"])
    h5 = by_id["H5"]
    assert h5["rtt_readings"] == {"equal_per_hop": fnd.CONTRADICTED, "common_excess": fnd.HELD}
    assert h5["rtt_dependent"] and h5["verdict"] == fnd.CONTRADICTED
    assert all(c["reading"].startswith("RTT ") for c in h5["checks"])
    assert not by_id["H1"]["rtt_dependent"]
    # One RTT reading run: the finding reports only it.
    one = claims.evaluate_findings(metrics(neutral).query("rtt == 'equal_per_hop'"), H.StudyParams())
    assert {f["id"]: f.get("rtt_readings") for f in one["findings"]}["H1"] == {"equal_per_hop": fnd.HELD}


def test_spikes_are_counted_with_hysteresis() -> None:
    import numpy as np

    q = np.array([0.0, 0.006, 0.004, 0.006, 0.0, 0.006, 0.0024, 0.006])
    assert analysis.count_spikes(q) == 3     # 0.004 is above the reset level: one spike, not two


# --------------------------------------------------------------------------------------
# End to end


def test_tiny_study_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "hs"
    code = main(["study", "highspeed", "--reps", "2", "--jobs", "1", "--out", str(out), "--scale", "tiny",
                 "--set", "protocols=scalable,areno", "--set", "loads=10", "--set", "loss=false",
                 "--set", "short=10", "--set", "duration=300", "--no-progress"])
    assert code == 0
    doc = json.loads((out / "findings.json").read_text())
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == list(claims._ORDER)
    assert ledger.load("highspeed").finding_problems(doc) == []
    by_id = {f["id"]: f for f in doc["findings"]}
    # Only the spike finding has all its runs here (Reno with and without short-lived flows).
    assert by_id["S1"]["evaluated"] and by_id["S1"]["verdict"] in fnd.VERDICTS
    assert {f["verdict"] for k, f in by_id.items() if k != "S1"} == {fnd.NOT_RUN}
    assert doc["ledger"]["coverage"]["checked"] > 0
    rm = pd.read_parquet(out / "run_metrics.parquet")
    # (Reno + 2 protocols x 2 mixes) with short-lived flows, Reno + 2 protocols without: 8 runs x 2 RTT readings
    # x 2 replications.
    assert len(rm) == 8 * 2 * 2 and set(rm["rtt"]) == set(H.RTT_READINGS)
    assert set(by_id["S1"]["rtt_readings"]) == set(H.RTT_READINGS)
    assert (out / "report.html").is_file() and (out / "figures" / "without_short.png").is_file()
    assert _core.version()


def test_scale_option_is_checked_before_anything_runs(tmp_path: Path, capsys) -> None:
    """``--scale`` is ``--set scale=``: an unknown scale, or a study without one, exits 2."""
    assert main(["study", "highspeed", "--scale", "huge", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "scale" in err and "'huge'" in err and "reduced" in err
    assert main(["study", "iw-irto", "--scale", "full", "--out", str(tmp_path / "b")]) == 2
    assert "--scale: study iw-irto has no scale parameter; studies with one: highspeed" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("name", ["tcplab.studies.highspeed", *(f"tcplab.studies.highspeed.{m}" for m in
                                                                ("setup", "study", "analysis", "claims", "report"))])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_report_does_not_import_the_study_module() -> None:
    """No import circle: the study definition imports the report, the report only the set-up."""
    src = (Path(H.__file__).parent / "report.py").read_text()
    assert "highspeed import setup" in src
    assert not any(f"highspeed import {m}" in src or f"highspeed.{m} import" in src for m in ("study", "claims"))
    assert "from tcplab.studies import highspeed\n" not in src and "import highspeed as" not in src



def test_heavy_load_loads_the_backbone() -> None:
    """Sessions keep the backbone loaded: at the tiny scale for 600 s, with the same short-lived
    sessions (common random numbers), 40 long-lived sessions load every backbone link at
    least as much as 10 do, the mean by 0.15 or more, and the four middle links (6 of the 20
    router pairs each) to 0.8 or more. Measured: mean 0.49 light, 0.75 heavy; middle links
    0.89-0.94 heavy. Revision 3's files left the whole-run mean at 0.046."""
    base = H.base_document()
    spec = {"scale": "tiny", "protocol": "reno", "mix": "alone", "loss": False, "shorts": True, "rep": 0, "seed": 1,
            "base": base, "short": 100, "duration": 600}
    light, heavy = (H.simulate_run({**spec, "n_long": n})["links"] for n in (10, 40))
    assert light["link"] == heavy["link"]
    util_l, util_h = dict(zip(light["link"], light["utilisation"])), dict(zip(heavy["link"], heavy["utilisation"]))
    assert all(util_h[k] >= util_l[k] for k in util_l), (util_l, util_h)
    assert sum(util_h.values()) / 8 >= sum(util_l.values()) / 8 + 0.15
    assert min(util_h[k] for k in ("bb1", "bb1_rev", "bb2", "bb2_rev")) >= 0.8, util_h
