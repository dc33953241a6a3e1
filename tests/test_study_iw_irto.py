"""Study iw-irto (seed 000, ``docs/seeds/000_ae80ce17cd677c8e.txt``): tables of the seed, common random
numbers, determinism, resumption, the claims and their ledger, and a tiny end-to-end run through the CLI."""

import doctest
import importlib
import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab.cli import main
from tcplab.studies import engine, ledger
from tcplab.studies import iw_irto as S
from tcplab.studies.findings import VERDICTS, validate
from tcplab.studies.iw_irto import claims as C


# ---- the seed's numbers --------------------------------------------------------------


def test_bdp_table_reproduces_the_seeds_arithmetic() -> None:
    bdp = S.bdp_table().set_index("link")
    # rate x 2 x wireless one-way delay / 1500 B: 160e3*0.5/12000, 2e6*0.14/12000, 50e6*0.03/12000
    assert bdp.loc["EDGE", "bdp_exact_pkts"] == pytest.approx(6.667, abs=1e-3)
    assert bdp.loc["HSPA", "bdp_exact_pkts"] == pytest.approx(23.333, abs=1e-3)
    assert bdp.loc["LTE", "bdp_exact_pkts"] == pytest.approx(125.0)
    assert bdp["bdp_seed_pkts"].tolist() == [7, 24, 125]  # the seed's values (rounded up)
    for link in S.LINKS.values():
        assert link.bdp_pkts == math.ceil(link.bdp_exact - 1e-9)
    # With the 11 ms wired part counted both ways the products would differ: 522 ms x 160 kbit/s = 6.96 pkts.
    assert bdp.loc["EDGE", "bdp_with_wired_pkts"] == pytest.approx(6.96, abs=1e-3)
    assert bdp.loc["LTE", "base_rtt_ms"] == pytest.approx(52.0)


SEED_RED = {  # config, link: w_q, max_p, th_min, th_max, buffer (packets) -- the seed's table
    ("RED", "EDGE"): (0.002, 0.1, 3, 9, 14), ("RED", "HSPA"): (0.002, 0.1, 5, 20, 48),
    ("RED", "LTE"): (0.002, 0.1, 5, 20, 250), ("REDok", "EDGE"): (0.2, 0.65, 3, 40, 50),
    ("REDok", "HSPA"): (0.02, 0.65, 3, 50, 100), ("REDok", "LTE"): (0.001, 0.1, 5, 125, 400),
}


def test_red_parameters_are_the_seeds_in_ns2_byte_mode() -> None:
    table = S.red_table()
    got = {(r.config, r.link): (r.w_q, r.max_p, r.th_min, r.th_max, r.buffer_pkts) for r in table.itertuples()}
    assert got == SEED_RED
    for link in S.LINKS.values():
        for b in S.buffers(link):
            q = S.queue_config(link, b)
            if b.kind == "fifo":
                assert q == {"kind": "drop_tail", "limit": {"packets": b.packets}, "count_in_service": True}
                continue
            cfg = "RED" if b.id == "red" else "REDok"
            w_q, max_p, th_min, th_max, size = SEED_RED[(cfg, link.label)]
            assert (q["q_weight"], q["max_p"], q["min_th"], q["max_th"]) == (w_q, max_p, th_min, th_max)
            assert q["limit"] == {"bytes": size * 1500} and q["count_in_service"] is False
            assert q["bytes"] and q["queue_in_bytes"] and not q["gentle"] and not q["wait"]
            assert q["mean_pktsize"] == q["idle_pktsize"] == 1500


def test_thirteen_link_buffer_configurations() -> None:
    sizes = {l: [(b.id, b.packets) for b in S.buffers(S.LINKS[l])] for l in S.LINKS}
    assert sizes["edge"] == [("fifo-bdp", 7), ("fifo-2bdp", 14), ("fifo-50", 50), ("red", 14), ("redok", 50)]
    assert sizes["hspa"] == [("fifo-bdp", 24), ("fifo-2bdp", 48), ("red", 48), ("redok", 100)]
    assert sizes["lte"] == [("fifo-bdp", 125), ("fifo-2bdp", 250), ("red", 250), ("redok", 400)]
    params = S.StudyParams()
    assert len(params.configurations()) == 13 * 4 and params.n_runs() == 13 * 4 * 4 * 100


def test_scenario_matches_the_seed_setup() -> None:
    link = S.LINKS["edge"]
    starts = S.flow_starts(link, 6, seed=1, rep=0, offset_rtts=2.0, jitter_rtts=0.5)
    sc = S.scenario(link, S.buffer_by_id(link, "fifo-50"), 6, 3, 1.0, starts)
    topo = sc["topology"]
    assert topo["bottleneck"]["rate"] == 160_000 and topo["bottleneck"]["delay"] == 250_000_000
    assert topo["bottleneck_reverse"]["rate"] == 160_000 and topo["bottleneck_reverse"]["delay"] == 250_000_000
    assert topo["sender_access"]["delay"] == 11_000_000 and topo["receiver_access"]["delay"] == 0
    assert topo["pairs"] == 12 and len({(f["src"], f["dst"]) for f in sc["flows"]}) == 12
    assert sum(f["bytes"] for f in sc["flows"] if f["group"] == "burst1") == 180_000
    assert all(f["tcp"] == {"profile": "ns2-sack", "iw": 3, "initial_rto": 1_000_000_000} for f in sc["flows"])
    first = [f["start"] for f in sc["flows"] if f["group"] == "burst1"]
    later = [f["start"] for f in sc["flows"] if f["group"] == "burst2"]
    rtt_ns = 522_000_000
    assert max(first) < 0.5 * rtt_ns and 2 * rtt_ns <= min(later) < 2.5 * rtt_ns
    with pytest.raises(ValueError, match="do not split equally"):
        S.scenario(link, S.buffers(link)[0], 7, 3, 1.0, np.zeros((2, 7), dtype=np.int64))


# ---- common random numbers -----------------------------------------------------------


def test_start_times_are_common_random_numbers_across_variants() -> None:
    link = S.LINKS["hspa"]
    for rep in (0, 1):
        starts = S.flow_starts(link, 18, seed=7, rep=rep, offset_rtts=2.0, jitter_rtts=0.5)
        per_variant = {}
        for iw, irto in S.VARIANTS:
            for b in S.buffers(link):
                sc = S.scenario(link, b, 18, iw, irto, starts)
                per_variant[(iw, irto, b.id)] = [f["start"] for f in sc["flows"]]
        assert len({tuple(v) for v in per_variant.values()}) == 1
    # ... and the draws differ between replications, and do not depend on the flow count.
    a, b = S.start_fractions(7, 0), S.start_fractions(7, 1)
    assert not np.array_equal(a, b)
    s2 = S.flow_starts(link, 2, seed=7, rep=0, offset_rtts=2.0, jitter_rtts=0.5)
    s18 = S.flow_starts(link, 18, seed=7, rep=0, offset_rtts=2.0, jitter_rtts=0.5)
    assert np.array_equal(s2, s18[:, :2])


def test_simulated_start_times_are_identical_across_variants() -> None:
    out = S.simulate_block({"link": "hspa", "buffer": "red", "n_flows": 6, "reps": [0, 3], "seed": 3,
                            "offset_rtts": 2.0, "jitter_rtts": 0.5, "keep_owd": True})
    flows = pd.DataFrame(out["flows"])
    starts = flows.pivot_table(index=["rep", "flow"], columns=["iw", "irto_s"], values="start_s")
    assert starts.shape[1] == 4
    assert (starts.nunique(axis=1) == 1).all()  # every variant of a replication: the same starts
    assert starts.groupby("rep").first().iloc[:, 0].nunique() == 3  # replications differ
    runs = pd.DataFrame(out["runs"])
    assert sorted(runs["core_seed"].unique()) == [3, 4, 5]
    owd = pd.DataFrame(out["owd"])
    assert len(owd) and set(owd["burst"]) == {1, 2}
    # The per-run maximum equals the maximum of the recorded per-packet delays.
    mx = owd.groupby(["rep", "iw", "irto_s"])["owd_s"].max().astype(float)
    assert np.allclose(runs.set_index(["rep", "iw", "irto_s"])["owd_max_s"].loc[mx.index], mx, rtol=1e-6)


# ---- determinism and resumption ------------------------------------------------------


def _tables(d: Path) -> dict[str, pd.DataFrame]:
    return {t: pd.read_parquet(d / f"{t}.parquet") for t in ("flows", "runs", "owd", "run_metrics")}


def test_same_seed_same_tables_on_every_engine(tmp_path: Path) -> None:
    p = dict(reps=2, links=["lte"], block=1)
    a = S.run(tmp_path / "a", S.StudyParams(**p), jobs=1, progress=False, figures=False)
    b = S.run(tmp_path / "b", S.StudyParams(**p), jobs=2, progress=False, figures=False)
    ta, tb = _tables(tmp_path / "a"), _tables(tmp_path / "b")
    for name in ta:
        pd.testing.assert_frame_equal(ta[name], tb[name])
    assert a.findings["findings"] == b.findings["findings"]
    assert len(ta["flows"]) == 4 * 4 * 2 * sum(2 * n for n in S.FLOW_COUNTS)  # buffers x variants x reps x flows
    c = S.run(tmp_path / "c", S.StudyParams(**{**p, "seed": 2}), jobs=1, progress=False, figures=False)
    assert not _tables(tmp_path / "c")["flows"]["start_s"].equals(ta["flows"]["start_s"])
    assert c.ran == a.ran == b.ran


def test_resume_skips_finished_tasks(tmp_path: Path) -> None:
    params = S.StudyParams(reps=2, links=["lte"], block=1)
    first = S.run(tmp_path, params, jobs=1, progress=False, figures=False)
    before = _tables(tmp_path)
    tasks = sorted((tmp_path / "tasks").iterdir())
    shutil.rmtree(tasks[0])
    (tmp_path / "tasks" / ".tmp-stale-1").mkdir()  # as a killed run would leave
    again = S.run(tmp_path, params, jobs=1, progress=False, figures=False)
    assert (first.ran, first.skipped) == (len(tasks), 0)
    assert (again.ran, again.skipped) == (1, len(tasks) - 1)
    assert not (tmp_path / "tasks" / ".tmp-stale-1").exists()
    for name, df in _tables(tmp_path).items():
        pd.testing.assert_frame_equal(df, before[name])


def test_collected_rows_are_in_report_order(tmp_path: Path) -> None:
    S.run(tmp_path, S.StudyParams(reps=3, links=["lte"], block=2), jobs=1, progress=False, figures=False)
    flows = pd.read_parquet(tmp_path / "flows.parquet")
    pd.testing.assert_frame_equal(flows, S.sort_rows(flows, ["flow"]))


# ---- findings logic ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_all_links(tmp_path_factory: pytest.TempPathFactory) -> S.StudyResult:
    """Three replications of every link: every finding is evaluated (on far too little data)."""
    out = tmp_path_factory.mktemp("metrics")
    return S.run(out, S.StudyParams(reps=3, links=["edge", "hspa", "lte"], block=3), jobs=2, progress=False,
                 figures=False)


def _finding(doc: dict, fid: str) -> dict:
    return next(f for f in doc["findings"] if f["id"] == fid)


def _check(doc: dict, cid: str) -> dict:
    return next(c for f in doc["findings"] for c in f["checks"] if c["id"] == cid)


def _set_by_partner(rm: pd.DataFrame, factor: str, test: object, ref: object, metric: str, fn) -> pd.DataFrame:
    """``metric`` of the ``test`` runs := fn(the same replication's ``ref`` value), run by run."""
    out = rm.copy()
    key = [c for c in S.RUN if c != factor]
    ref_vals = out[out[factor] == ref].set_index(key)[metric]
    idx = out[factor] == test
    keys = pd.MultiIndex.from_frame(out.loc[idx, key])
    out.loc[idx, metric] = fn(ref_vals.reindex(keys).to_numpy())
    return out


def test_every_finding_is_in_the_document_and_the_ledger_matches(tiny_all_links: S.StudyResult) -> None:
    doc = tiny_all_links.findings
    validate(doc)
    assert [f["id"] for f in doc["findings"]] == S.FINDING_IDS
    assert all(f["verdict"] in VERDICTS for f in doc["findings"])   # every link ran: nothing is "not run"
    assert ledger.load("iw-irto").finding_problems(doc) == []
    assert doc["ledger"]["coverage"]["result_sentences"] == ledger.load("iw-irto").coverage()["result_sentences"]
    # Every threshold is the claims module's, stated before any run.
    form = _check(doc, "F27a")["form"]
    assert form == {"kind": "equivalence", "margin": pytest.approx(0.1 * 2.80)}
    assert _check(doc, "F3a")["form"]["base"] == {"kind": "directional", "side": "above", "threshold": C.CLEAR_REL,
                                                  "negligible": None}


def test_findings_react_to_the_data(tiny_all_links: S.StudyResult) -> None:
    rm = tiny_all_links.tables["run_metrics"]
    # IW10 twice as slow as IW3 in every run: "IW10 improves performance" is contradicted, "tends to decrease" holds.
    slow = _set_by_partner(rm, "iw", 10, 3, "elapsed_mean_s", lambda v: 2 * v)
    f1, f2 = C.evaluate_one(slow, "F1"), C.evaluate_one(slow, "F2")
    assert f1["verdict"] == "contradicted" and f2["verdict"] == "held"
    assert f1["checks"][0]["statistic"]["value"] == pytest.approx(1.0) and f1["checks"][0]["statistic"]["exact"]
    # A spurious RTO in every run of one LTE configuration contradicts "no spurious RTOs".
    one = rm.copy()
    lte = one.index[(one["link"] == "lte") & (one["buffer"] == "fifo-bdp") & (one["n_flows"] == 6)
                    & (one["iw"] == 10) & (one["irto_s"] == 1.0)]
    one.loc[lte, "rto_spurious"] = 1.0
    assert _check({"findings": [C.evaluate_one(one, "F6")]}, "F6a")["verdict"] == "contradicted"


def test_findings_of_links_not_run_say_not_run(tiny_all_links: S.StudyResult) -> None:
    rm = tiny_all_links.tables["run_metrics"]
    doc = S.evaluate_findings(rm[rm["link"] == "lte"], S.StudyParams(reps=3, links=["lte"]))
    validate(doc)
    verdicts = {f["id"]: f["verdict"] for f in doc["findings"]}
    assert list(verdicts) == S.FINDING_IDS                   # always present ...
    assert verdicts["F1"] == verdicts["F13"] == "not run"    # ... and not run when their links were not
    assert verdicts["F6"] != "not run" and verdicts["F9"] != "not run"
    assert all(c["verdict"] in VERDICTS for f in doc["findings"] for c in f["checks"])


# ---- defects of the first findings, each fixed (these failed before) ---------------------


def test_large_buffer_claims_are_edge_fifo_50_and_redok_is_an_extension(tiny_all_links: S.StudyResult) -> None:
    # The seed's EDGE "large buffer" is the 50-packet FIFO; REDok (also 50 packets) was counted as one.
    doc = tiny_all_links.findings
    for cid in ("F13a", "F13b", "F15a", "F15b", "F15c", "F15d", "F16a", "F16c"):
        c = _check(doc, cid)
        assert {r["buffer"] for r in c["per_config"]} == {"fifo-50"} and not c["extension"], cid
    for cid in ("F13x", "F15x"):
        c = _check(doc, cid)
        assert c["extension"] and {r["buffer"] for r in c["per_config"]} == {"redok"}
    # Whatever REDok does, the seed's verdict does not move.
    rm = tiny_all_links.tables["run_metrics"]
    flipped = rm.copy()
    redok = (flipped["link"] == "edge") & (flipped["buffer"] == "redok") & (flipped["irto_s"] == 1.0)
    flipped.loc[redok, "rto_total"] = 0.0
    after = {"findings": [C.evaluate_one(flipped, "F13")]}
    assert _check(after, "F13x")["verdict"] == "contradicted"
    assert _finding(after, "F13")["verdict"] == _finding(doc, "F13")["verdict"]


def test_later_burst_fairness_is_directional_not_a_symmetric_index(tiny_all_links: S.StudyResult) -> None:
    # IW3: the later burst gets 40% of the goodput; IW10: 60%. Jain's index between the bursts is the same
    # for both (the old check saw no change); the later burst's fairness did improve.
    rm = tiny_all_links.tables["run_metrics"].copy()
    rm["later_share"] = np.where(rm["iw"] == 10, 0.6, 0.4)
    rm["unfairness"] = (rm["later_share"] - 0.5).abs()
    doc = {"findings": [C.evaluate_one(rm, "F4")]}
    assert _check(doc, "F4a")["verdict"] == "held"           # the later burst gains
    assert _check(doc, "F4b")["verdict"] == "contradicted"   # no closer to equal: exactly as far
    assert _finding(doc, "F4")["readings"] == {"the bursts move closer to equal shares": "contradicted",
                                               "the later burst gains": "held"}


def test_no_effect_is_an_equivalence_claim_on_every_configuration(tiny_all_links: S.StudyResult) -> None:
    rm = tiny_all_links.tables["run_metrics"]
    same = _set_by_partner(rm, "irto_s", 1.0, 3.0, "elapsed_mean_s", lambda v: v)
    c = C.evaluate_one(same, "F9")["checks"][0]
    assert c["verdict"] == "held" and c["statistic"]["exact"]          # identical runs: an exact 0, not an interval
    # -10%, 0, +10% in the three replications: the interval holds 0, which the old check called "held";
    # it is far wider than the 2% margin, so too little data to say.
    noisy = same.copy()
    sel = noisy["irto_s"] == 1.0
    noisy.loc[sel, "elapsed_mean_s"] *= 1 + 0.1 * (noisy.loc[sel, "rep"] - 1)
    c = C.evaluate_one(noisy, "F9")["checks"][0]
    assert c["verdict"] == "inconclusive" and c["reps_needed"] is not None
    # One LTE configuration 10% slower with IRTO1, the rest identical: a pooled mean (+0.6%) would pass.
    one = same.copy()
    sel = (one["link"] == "lte") & (one["buffer"] == "fifo-2bdp") & (one["n_flows"] == 18) & (one["iw"] == 3) \
        & (one["irto_s"] == 1.0)
    one.loc[sel, "elapsed_mean_s"] *= 1.1
    c = C.evaluate_one(one, "F9")["checks"][0]
    assert abs(c["statistic"]["value"]) < C.SAME_REL and c["verdict"] == "contradicted"


def test_first_rtos_are_read_from_the_cwnd_trace() -> None:
    # EDGE, 50-packet FIFO, 6+6 flows, IW10, IRTO 1 s: the later burst's SYNs wait behind the first burst's
    # queue for more than 1 s and time out; some first windows time out too.
    out = S.simulate_block({"link": "edge", "buffer": "fifo-50", "n_flows": 6, "reps": [0, 1], "seed": 1,
                            "offset_rtts": 2.0, "jitter_rtts": 0.5, "keep_owd": False})
    flows = pd.DataFrame(out["flows"]).assign(link="edge", buffer="fifo-50", n_flows=6)
    f = flows[(flows["iw"] == 10) & (flows["irto_s"] == 1.0)]
    has = f["first_rto_s"].notna()
    assert (has == (f["rtos"] > 0)).all()                      # a time exactly when there was a data RTO
    assert (f.loc[has, "first_rto_s"] > f.loc[has, "established_s"]).all()
    assert f["first_window_rto"].isin([0, 1]).all() and f["first_window_rto"].sum() > 0
    assert (f.loc[f["first_window_rto"] == 1, "rtos"] > 0).all()
    rm = S.run_metrics(flows, pd.DataFrame())
    row = rm[(rm["iw"] == 10) & (rm["irto_s"] == 1.0)].iloc[0]
    assert row["b2_rto_seen"] == 1.0 and row["b2_first_rto_s"] <= 1.0 + 1e-9   # a SYN timeout 1 s after a SYN


def test_paired_statistic_pools_per_replication() -> None:
    rows = []
    for rep, (a, b) in enumerate([(1.0, 2.0), (1.0, 3.0), (2.0, 2.0)]):
        for iw, v in ((3, b), (10, a)):
            rows.append({"link": "hspa", "buffer": "red", "n_flows": 1, "iw": iw, "irto_s": 3.0, "rep": rep,
                         "elapsed_mean_s": v})
    _, est, per = C._paired(pd.DataFrame(rows), "elapsed_mean_s", C.IW, {}, relative=True)
    # relative differences: -0.5, -2/3, 0 -> mean -0.3889, t(0.975, 2) = 4.303
    diffs = np.array([-0.5, -2 / 3, 0.0])
    half = 4.302653 * diffs.std(ddof=1) / math.sqrt(3)
    assert est["value"] == pytest.approx(diffs.mean()) and est["n"] == 3
    assert est["ci"] == pytest.approx([diffs.mean() - half, diffs.mean() + half], rel=1e-5)
    assert len(per) == 1 and per[0]["n"] == 3


# ---- end to end through the CLI ------------------------------------------------------


def test_tiny_study_writes_figures_report_and_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    rc = main(["study", "iw-irto", "--reps", "3", "--links", "hspa", "--out", str(out), "--jobs", "2",
               "--no-progress", "--set", "block=2"])
    printed = capsys.readouterr().out
    assert rc == 0
    assert f"report written to {out / 'report.html'}" in printed
    for name in ("flows", "runs", "owd", "run_metrics", "summary"):
        assert len(pd.read_parquet(out / f"{name}.parquet")) > 0, name
    # figures: every one non-empty, PNG and SVG well-formed
    figs = sorted((out / "figures").glob("*.png"))
    stems = {p.stem for p in figs}
    assert stems == {"elapsed_hspa_fifo-bdp", "elapsed_hspa_fifo-2bdp", "elapsed_hspa_red", "elapsed_hspa_redok",
                     "fairness_hspa", "rtos_hspa", "owd_hspa_1flows", "owd_hspa_6flows"}
    for p in figs:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, p
        svg = p.with_suffix(".svg")
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg") and len(list(root.iter())) > 50, svg
    # report: references every figure file, has the findings, the ledger, the BDP arithmetic and a summary table
    report = (out / "report.html").read_text()
    for stem in stems:
        assert f"figures/{stem}.png" in report and f"figures/{stem}.svg" in report
    assert report.count("data:image/png;base64,") == len(stems)
    for needle in ("Findings of seed 000", "Claims ledger", ledger.load("iw-irto").coverage_text(),
                   "Bandwidth-delay products", "Summary table", "= 23.33 → 24 packets", "REDok"):
        assert needle in report
    # findings.json: every finding, with a verdict; the HSPA ones evaluated, the others not run
    doc = json.loads((out / "findings.json").read_text())
    validate(doc)
    assert doc["replications"] == 3 and doc["links"] == ["hspa"] and doc["level"] == 0.95
    assert [f["id"] for f in doc["findings"]] == S.FINDING_IDS
    hspa_only = {"F10", "F11", "F12", "F28", "F29", "F30"}
    for f in doc["findings"]:
        assert isinstance(f["claim"], str) and f["claim"]
        assert set(f["statistic"]) >= {"name", "value", "ci", "level", "n_replications"}
        if f["id"] in hspa_only:
            assert f["evaluated"] and f["verdict"] in VERDICTS
            for c in f["checks"]:
                st = c["statistic"]
                assert st["n_replications"] == 3 and len(st["ci"]) == 2 and c["criterion"]
        else:
            assert f["verdict"] == "not run" and f["checks"] == []
    # The ledger's ids match; what it names and this run left out are the checks of findings not run.
    problems = ledger.load("iw-irto").finding_problems(doc)
    not_run = {f["id"] for f in doc["findings"] if f["verdict"] == "not run"}
    assert all(p.startswith("check F") and p.split()[1].rstrip("abcdx") in not_run for p in problems), problems
    manifest = json.loads((out / "study.json").read_text())
    assert manifest["failures"] == [] and manifest["runs"] == 4 * 4 * 4 * 3 and manifest["timings"]["total_s"] > 0


@pytest.mark.parametrize("argv, message", [
    (["study", "iw-10"], "unknown study 'iw-10'"),
    (["study", "iw-irto", "--links", "edge,wifi"], "unknown link(s) wifi"),
    (["study", "iw-irto", "--set", "offset=3"], "expected KEY=VALUE with KEY one of"),
    (["study", "iw-irto", "--set", "block=x"], "block: expected int"),
    (["study", "iw-irto", "--reps", "1"], "at least 2 replications"),
    (["study", "iw-irto", "--scheduler", "http://x"], "unknown address"),
    (["study", "iw-irto", "--set", "jitter_rtts=-1"], "jitter_rtts must be"),
])
def test_bad_study_options_are_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            argv: list[str], message: str) -> None:
    out = tmp_path / "never"
    assert main(argv + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "tasks").exists() or not any((out / "tasks").iterdir())


@pytest.mark.parametrize("name", ["tcplab.studies", "tcplab.studies.engine", "tcplab.studies.iw_irto",
                                  "tcplab.studies.iw_irto.setup", "tcplab.studies.iw_irto.analysis",
                                  "tcplab.studies.iw_irto.claims", "tcplab.studies.iw_irto.study",
                                  "tcplab.studies.iw_irto.report"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_engine_reports_failures_per_task() -> None:
    tasks = [engine.BlockTask("ok", {"x": 2}, 1), engine.BlockTask("bad", {"y": 1}, 1)]
    got = {t.key: (r, e) for t, r, e in engine.execute(tasks, engine._square_block, jobs=1, progress=False)}
    assert got["ok"][0]["out"] == {"y": [4]} and got["ok"][1] is None
    assert got["bad"][0] is None and "KeyError" in got["bad"][1]
