"""``tcplab study all``: every registered study in the dashboard and the aggregate findings.json,
the dashboard rendered in headless Chromium, emulated subsets, diffs, presets and option checks.

One real study runs (``satellite`` at its ``tiny`` preset, ~15 s on 2 cores); the others
are listed as not run, which is what every registered study must survive. ``make demo``
runs them all (docs/studies/all.md has its measured time).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tcplab import chromium, studies
from tcplab.cli import main
from tcplab.studies import dashboard, suite
from tcplab.studies import findings as fnd

RUN = "satellite"


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("all") / "res"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["study", "all", "--preset", "tiny", "--only", RUN, "--jobs", "2", "--no-progress",
                     "--out", str(out)])
    assert code == 0, buf.getvalue()
    return out, buf.getvalue()


def test_every_registered_study_appears_in_the_aggregate_and_the_dashboard(suite_dir: tuple[Path, str]) -> None:
    out, printed = suite_dir
    doc = json.loads((out / "findings.json").read_text())
    suite.validate(doc)
    assert [s["study"] for s in doc["studies"]] == studies.names()
    index = (out / "index.html").read_text()
    for study in studies.STUDIES.values():
        assert f"id='study-{study.name}'" in index, study.name
        assert study.citation and study.citation.split(",")[0] in index, study.name
        entry = next(s for s in doc["studies"] if s["study"] == study.name)
        assert entry["seed"] == study.seed and entry["setup"] == study.summary
        assert entry["status"] == ("ok" if study.name == RUN else "not run")
        assert entry["emulation"]["status"] == "not run"
    assert index.count("emulation not run") == len(studies.names())
    for study in studies.STUDIES.values():  # says how to run it, or that the study has no emulate mode
        section = index.split(f"id='study-{study.name}'")[1].split("<section>")[0]
        hint = f"tcplab study {study.name} --mode emulate" if suite.has_emulation(study) else "has no emulate mode"
        assert hint in section, study.name
    # The study that ran: every finding of its own findings.json, with verdict, statistic and a working link.
    own = json.loads((out / RUN / "findings.json").read_text())
    fnd.validate(own)
    entry = next(s for s in doc["studies"] if s["study"] == RUN)
    assert [f["id"] for f in entry["findings"]] == [f["id"] for f in own["findings"]]
    assert [f["verdict"] for f in entry["findings"]] == [f["verdict"] for f in own["findings"]]
    assert [f["statistic"] for f in entry["findings"]] == [f["statistic"] for f in own["findings"]]
    report = (out / RUN / "report.html").read_text()
    for f in entry["findings"]:
        page, anchor = f["link"].split("#")
        assert page == f"{RUN}/report.html" and f"id='{anchor}'" in report, f["link"]
        assert f"href='{f['link']}'" in index
        assert f"{RUN}/{f['id']}" == f["key"]
    t = doc["totals"]
    seeds_own = [f for f in own["findings"] if not f.get("extension")]
    assert t["findings"] == len(seeds_own) == sum(t[k] for k in ("held", "contradicted", "inconclusive",
                                                                  "not_testable", "not_run"))
    assert t["checked"] == sum(f["evaluated"] for f in seeds_own)
    assert entry["tasks_run"] > 0 and entry["wall_s"] > 0 and entry["failed_tasks"] == 0
    assert 0 < entry["timings"]["simulate_s"] <= entry["timings"]["total_s"]
    assert f"all: {t['findings']} seed findings: {t['held']} held, {t['contradicted']} contradicted" in printed
    assert f"dashboard: {(out / 'index.html').resolve()}" in printed
    # Self-contained: no remote resource, and the only image is embedded.
    assert not re.search(r"(src|href)=['\"](https?:)?//", index)
    assert re.findall(r"<img [^>]*src='([^']{0,22})", index) == ["data:image/png;base64,"]


@pytest.mark.skipif(chromium.find() is None, reason="chromium is not installed (apt-get install chromium)")
def test_dashboard_renders_in_headless_chromium(suite_dir: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = suite_dir
    page = chromium.check_page(out / "index.html", screenshot=tmp_path / "dashboard.png")
    assert len(page.images) == 1 and all(w >= 200 and h >= 100 for w, h in page.images), page.images
    assert [i for i in page.ids if i.startswith("study-")] == [f"study-{n}" for n in studies.names()]
    png = (tmp_path / "dashboard.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


def test_an_emulated_subset_is_shown_beside_the_simulation(suite_dir: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = suite_dir
    copy = tmp_path / "res"
    shutil.copytree(out, copy)
    own = json.loads((copy / RUN / "findings.json").read_text())
    flipped = fnd.CONTRADICTED if own["findings"][0]["verdict"] != fnd.CONTRADICTED else fnd.HELD
    emu_finding = dict(own["findings"][0], verdict=flipped)
    emu_finding["checks"] = [dict(c, verdict=flipped) for c in emu_finding["checks"]]
    own["emulation"] = {"scope": "reduced grid in real time", "findings": [emu_finding],
                        "differences": [{"metric": "elapsed_s", "unit": "s", "simulated": 1.0, "emulated": 1.25,
                                         "difference": 0.25}]}
    (copy / RUN / "findings.json").write_text(json.dumps(own))
    doc = suite.aggregate(copy)
    suite.validate(doc)
    emu = next(s for s in doc["studies"] if s["study"] == RUN)["emulation"]
    assert emu["status"] == "run" and emu["source"] == f"{RUN}/findings.json#emulation"
    assert emu["findings"][0]["verdict"] == flipped
    index = dashboard.render(copy, doc)
    assert "Emulated subset (real Linux TCP)" in index and "reduced grid in real time" in index
    assert "<td class='l'>1.25</td>" in index and "<td class='l'>elapsed_s</td>" in index
    assert index.count("emulation not run") == len(studies.names()) - 1
    # The other convention: the emulated subset's own findings document.
    (copy / RUN / "emulate").mkdir()
    (copy / RUN / "emulate" / "findings.json").write_text(json.dumps({"findings": [emu_finding]}))
    del own["emulation"]
    (copy / RUN / "findings.json").write_text(json.dumps(own))
    emu = next(s for s in suite.aggregate(copy)["studies"] if s["study"] == RUN)["emulation"]
    assert emu["status"] == "run" and emu["source"] == f"{RUN}/emulate/findings.json"
    # `tcplab study NAME --mode emulate` writes comparison.parquet (config, rep, metric, engines side by side):
    # summarised per metric. Hand-worked: sim 1.0 and 2.0, kernel 1.05 and 2.2 -> means 1.5, 1.625, diff 0.125.
    pd.DataFrame({"link": ["a", "b"], "rep": [0, 0], "metric": ["uct_mean_s"] * 2, "label": ["mean UCT"] * 2,
                  "unit": ["s"] * 2, "seed-sim": [1.5, 2.5], "sim": [1.0, 2.0], "kernel": [1.05, 2.2],
                  "difference": [0.05, 0.2], "relative": [0.05, 0.1], "generation": [-0.5, -0.5]}
                 ).to_parquet(copy / RUN / "emulate" / "comparison.parquet")
    emu = next(s for s in suite.aggregate(copy)["studies"] if s["study"] == RUN)["emulation"]
    assert emu["differences"] == [{"metric": "mean UCT", "unit": "s", "runs": 2, "simulated (mean)": 1.5,
                                   "emulated (mean)": 1.625, "difference (mean)": 0.125,
                                   "relative (mean)": pytest.approx(0.075)}]


def test_two_aggregates_are_compared_finding_by_finding(suite_dir: tuple[Path, str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = suite_dir
    old = json.loads((out / "findings.json").read_text())
    new = json.loads(json.dumps(old))
    f = next(s for s in new["studies"] if s["study"] == RUN)["findings"][0]
    before = f["verdict"]
    f["verdict"] = fnd.CONTRADICTED if before != fnd.CONTRADICTED else fnd.HELD
    assert suite.diff(old, new) == [f"{f['key']} changed from {before} to {f['verdict']}"]
    assert suite.diff(old, old) == []
    with pytest.raises(ValueError, match="totals"):
        suite.validate(new)
    # From a shell: the same lines, exit 1 on a change, 0 without.
    new["totals"] = suite._totals(new["studies"])
    suite.validate(new)
    (tmp_path / "new.json").write_text(json.dumps(new))
    assert suite.main([str(out / "findings.json"), str(tmp_path / "new.json")]) == 1
    assert capsys.readouterr().out.splitlines() == suite.diff(old, new)
    assert suite.main([str(out / "findings.json")] * 2) == 0
    assert suite.main([str(out / "findings.json"), str(tmp_path / "missing.json")]) == 2


def test_every_study_registers_a_citation_and_tiny_and_demo_presets_it_accepts() -> None:
    """``make demo`` and CI run every study at these sizes; a study added without them would run at full size."""
    assert "all" not in studies.names()  # `tcplab study all` is the suite
    for study in studies.STUDIES.values():
        assert study.citation, study.name
        assert {"tiny", "demo"} <= set(study.presets), study.name
        names = {p.name for p in study.params} | {"reps", "links"}
        for preset in ("tiny", "demo"):
            kw = study.settings(preset)
            assert set(kw) <= names, (study.name, preset, set(kw) - names)
            assert kw["reps"] >= 2 and set(kw.get("links", study.links)) <= set(study.links)


@pytest.mark.parametrize("argv, message", [
    (["study", "all", "--reps", "3"], "--reps: not accepted by `tcplab study all`"),
    (["study", "all", "--set", "seed=2"], "--set: not accepted by `tcplab study all`"),
    (["study", "all", "--preset", "huge"], "--preset: unknown preset 'huge'; accepted: demo, tiny"),
    (["study", "all", "--only", "satellite,iw-10"], "--only: unknown study(ies) iw-10"),
    (["study", "all", "--reps-scale", "0"], "--reps-scale: expected a number > 0, got 0.0"),
    (["study", "satellite", "--preset", "tiny"], "--preset: only `tcplab study all` accepts it"),
    (["study", "satellite", "--emulate"], "--emulate: only `tcplab study all` accepts it"),
])
def test_bad_options_are_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      argv: list[str], message: str) -> None:
    out = tmp_path / "never"
    assert main(argv + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("name", ["tcplab.studies.suite", "tcplab.studies.dashboard", "tcplab.chromium"])
def test_docstring_examples(name: str) -> None:
    import doctest

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_progress_bars_inside_a_group_share_its_one_display(capsys: pytest.CaptureFixture[str]) -> None:
    """rich allows one live display at a time: a bar opening its own inside the group would raise LiveError."""
    from tcplab.executor import Progress, ProgressGroup

    with ProgressGroup(2, label="study all", unit="studies") as group:
        for name in ("first-study", "second-study"):
            group.status(name)
            with Progress(3, label=name) as bar:
                assert bar._bar is group.display
                bar.advance(3)
            group.advance()
    assert group.done == 2
    err = capsys.readouterr().err
    assert "first-study" in err and "second-study" in err and "3/3" in err and "2/2" in err


def test_a_failing_study_is_recorded_and_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "res"
    out.mkdir()
    (out / RUN).write_text("a file where the study's directory should be")
    assert main(["study", "all", "--preset", "tiny", "--only", RUN, "--no-progress", "--out", str(out)]) == 1
    assert f"{RUN}: FileExistsError" in capsys.readouterr().err
    doc = json.loads((out / "findings.json").read_text())
    suite.validate(doc)
    entry = next(s for s in doc["studies"] if s["study"] == RUN)
    assert entry["status"] == "failed" and entry["findings"] == [] and "FileExistsError" in entry["error"]
    assert "The study failed: FileExistsError" in (out / "index.html").read_text()
    manifest = json.loads((out / "all.json").read_text())
    assert [s["status"] for s in manifest["studies"] if s["name"] == RUN] == ["failed"]


def test_reference_verdicts_are_shown_beside_the_run_and_ledger_coverage_per_seed(suite_dir: tuple[Path, str],
                                                                                   tmp_path: Path) -> None:
    out, _ = suite_dir
    doc = json.loads((out / "findings.json").read_text())
    # A reference document whose first finding has another verdict than this run's.
    ref = json.loads(json.dumps(doc))
    entry = next(s for s in ref["studies"] if s["study"] == RUN)
    first = entry["findings"][0]
    other = fnd.CONTRADICTED if first["verdict"] != fnd.CONTRADICTED else fnd.HELD
    first["verdict"] = other
    ref["git_revision"] = "0123456789abcdef"
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    again = suite.aggregate(out, reference=tmp_path / "ref.json")
    suite.validate(again)
    assert again["reference"]["git_revision"] == "0123456789abcdef"
    got = next(s for s in again["studies"] if s["study"] == RUN)["findings"]
    assert got[0]["reference_verdict"] == other
    assert [f["reference_verdict"] for f in got[1:]] == [f["verdict"] for f in entry["findings"][1:]]
    page = dashboard.render(out, again)
    assert "full-size reference" in page and "0123456789ab" in page
    section = page.split(f"id='study-{RUN}'")[1].split("<section>")[0]
    assert f"<span class='{'contra' if other == fnd.CONTRADICTED else 'held'}'>{other}</span>" in section
    # The ledger's coverage line is shown per seed (the study attached its ledger to findings.json).
    from tcplab.studies.ledger import coverage_text, load

    cov = next(s for s in again["studies"] if s["study"] == RUN)["coverage"]
    assert cov == load(RUN).coverage() and coverage_text(cov) in section
    # Without a reference document, the page says so.
    none = suite.aggregate(out, reference=tmp_path / "missing.json")
    assert none["reference"] is None and "No full-size reference run is recorded" in dashboard.render(out, none)


def test_the_kept_reference_is_a_valid_full_size_aggregate_of_every_study() -> None:
    """docs/studies/reference-findings.json: every registered study, at its default replications."""
    doc = json.loads(suite.REFERENCE.read_text())
    suite.validate(doc)
    assert doc["preset"] is None and doc["reps_scale"] == 1.0 and len(doc["git_revision"] or "") == 40
    assert [s["study"] for s in doc["studies"]] == studies.names()
    for s in doc["studies"]:
        assert s["status"] == "ok" and s["replications"] == studies.get(s["study"]).default_reps, s["study"]
        assert not any(f["verdict"] == "not run" for f in s["findings"]), s["study"]
