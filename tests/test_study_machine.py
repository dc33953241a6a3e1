"""The machine every bundled study shares (tcplab.studies.engine, findings, reporting):
a toy study through run_study (resume, report order, failures), paired CIs worked by hand,
and the findings.json format check."""

import doctest
import importlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tcplab.studies import engine, findings as F, reporting


def _cube_block(spec: dict[str, Any]) -> dict[str, Any]:
    """Toy block function: rows (rep, y = x^3 + rep) for the task's replications; x = 13 fails."""
    if spec["x"] == 13:
        raise ValueError("unlucky x")
    reps = list(range(*spec["reps"]))
    return {"rows": {"rep": reps, "y": [spec["x"] ** 3 + r for r in reps]}}


class Cubes(engine.StudyDefinition):
    name, seed_study, version = "cubes", "none", 1
    task_tables = ("rows",)
    config_columns = (("kind", "string"), ("x", "int64"))
    empty_columns = ("kind", "x", "rep", "y")
    block = staticmethod(_cube_block)

    def plan(self, params: dict[str, Any]) -> list[engine.BlockTask]:
        tasks = []
        for x in params["xs"]:
            for first in range(0, params["reps"], 2):
                spec = {"kind": "odd" if x % 2 else "even", "x": x, "reps": [first, min(first + 2, params["reps"])]}
                tasks.append(engine.BlockTask(engine.task_key(spec), spec, spec["reps"][1] - first))
        return tasks[::-1]  # deliberately not report order

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (spec["x"], spec["reps"][0])

    def analyse(self, tables: dict[str, pd.DataFrame], params: dict[str, Any]) -> tuple[dict, dict]:
        rows = tables["rows"]
        summary = rows.groupby("x", as_index=False)["y"].mean()
        return {"summary": summary}, F.document(self.name, self.seed_study, params, params["reps"], [], F.METHOD, [])

    def n_runs(self, params: dict[str, Any]) -> int:
        return len(params["xs"]) * params["reps"]


def test_run_study_orders_resumes_and_reports_failures(tmp_path: Path) -> None:
    params = {"xs": [3, 1, 2], "reps": 5}
    first = engine.run_study(Cubes(), tmp_path, params, jobs=1, progress=False)
    rows = pd.read_parquet(tmp_path / "rows.parquet")
    # report order (x, then replication) whatever the plan's order; configuration columns typed
    assert rows[["x", "rep"]].values.tolist() == [[x, r] for x in (1, 2, 3) for r in range(5)]
    assert rows["y"].tolist() == [x ** 3 + r for x in (1, 2, 3) for r in range(5)]
    assert str(rows["kind"].dtype) == "string" and rows["x"].dtype == np.int64
    assert pd.read_parquet(tmp_path / "summary.parquet")["y"].tolist() == [3.0, 10.0, 29.0]
    assert (first.ran, first.skipped) == (9, 0) and first.failures == []
    manifest = json.loads((tmp_path / "study.json").read_text())
    assert manifest["runs"] == 15 and manifest["tasks"] == 9 and manifest["params"] == params
    F.validate(json.loads((tmp_path / "findings.json").read_text()))
    # Resume: a removed task is the only one re-run, and the tables come out identical.
    victim = sorted((tmp_path / "tasks").iterdir())[0]
    import shutil

    shutil.rmtree(victim)
    again = engine.run_study(Cubes(), tmp_path, params, jobs=1, progress=False)
    assert (again.ran, again.skipped) == (1, 8)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "rows.parquet"), rows)
    # A failing task is reported with its spec; the others are written.
    bad = engine.run_study(Cubes(), tmp_path / "bad", {"xs": [13, 2], "reps": 2}, jobs=1, progress=False)
    assert len(bad.failures) == 1 and bad.failures[0]["spec"]["x"] == 13 and "unlucky" in bad.failures[0]["error"]
    assert pd.read_parquet(tmp_path / "bad" / "rows.parquet")["x"].unique().tolist() == [2]
    with pytest.raises(RuntimeError, match="no task finished"):
        engine.run_study(Cubes(), tmp_path / "none", {"xs": [13], "reps": 2}, jobs=1, progress=False)


def test_paired_interval_by_hand() -> None:
    # Two configurations (a, b) x 3 replications; test - ref per run:
    #   rep 0: a 1.0, b 3.0 -> mean 2.0; rep 1: a 2.0, b 2.0 -> 2.0; rep 2: a 0.0, b 2.0 -> 1.0
    # pooled: mean 5/3, sd = sqrt(((1/3)^2 * 2 + (2/3)^2) / 2) = 0.57735, t(0.975, 2) = 4.302653
    rows = []
    diffs = {("a", 0): 1.0, ("b", 0): 3.0, ("a", 1): 2.0, ("b", 1): 2.0, ("a", 2): 0.0, ("b", 2): 2.0}
    for (cfg, rep), d in diffs.items():
        rows += [{"cfg": cfg, "v": "ref", "rep": rep, "m": 10.0}, {"cfg": cfg, "v": "test", "rep": rep, "m": 10.0 + d}]
    pairs, est, per = F.paired(pd.DataFrame(rows), "m", "v", "test", "ref", {}, relative=False, unit=["cfg", "v", "rep"])
    half = 4.302653 * 0.5773503 / math.sqrt(3)
    assert est["value"] == pytest.approx(5 / 3) and est["n"] == 3 and est["configs"] == 2 and est["pairs"] == 6
    assert est["ci"] == pytest.approx([5 / 3 - half, 5 / 3 + half], rel=1e-5)
    assert [c["cfg"] for c in per] == ["a", "b"] and per[0]["value"] == pytest.approx(1.0)
    # relative: (test - ref) / ref = d / 10
    _, rel, _ = F.paired(pd.DataFrame(rows), "m", "v", "test", "ref", {"cfg": ["a"]}, relative=True,
                         unit=["cfg", "v", "rep"])
    assert rel["value"] == pytest.approx(0.1) and rel["configs"] == 1
    # A variant missing from the scope: nothing to pair.
    _, none, per = F.paired(pd.DataFrame(rows), "m", "v", "test", "nope", {}, relative=False, unit=["cfg", "v", "rep"])
    assert none["n"] == 0 and per == [] and F.Directional("above").decide(none) == F.INCONCLUSIVE


def test_findings_document_format_is_checked() -> None:
    est = {"value": 0.2, "ci": [0.1, 0.3], "n": 4}
    ok = F.check("X1a", "claim", F.Directional("above"), "stat", "s", est, [{"cfg": "a", "value": np.float64("nan"),
                                                                           "ci": [np.nan, 1.0], "n": np.int64(3)}])
    assert ok["per_config"] == [{"cfg": "a", "value": None, "ci": [None, 1.0], "n": 3, "exact": False,
                                 "verdict": "inconclusive"}]
    no = F.check("X1b", "claim", F.Directional("below"), "stat", "s", est)
    doc = F.document("t", "seed", {}, 4, ["l"], F.METHOD, [F.finding("X1", "c", [ok, no]), F.finding("X2", "d", [])])
    F.validate(doc)
    assert [f["verdict"] for f in doc["findings"]] == ["contradicted", "not run"]
    json.dumps(doc, allow_nan=False)  # strict JSON: no NaN anywhere
    broken = json.loads(json.dumps(doc))
    broken["findings"][0]["verdict"] = "held"
    with pytest.raises(ValueError, match="not the combination of its checks' verdicts"):
        F.validate(broken)
    broken = json.loads(json.dumps(doc))
    broken["findings"][0]["checks"][0]["statistic"]["value"] = 0.5
    with pytest.raises(ValueError, match="outside its interval"):
        F.validate(broken)
    broken = json.loads(json.dumps(doc))
    broken["findings"][1]["id"] = "X1"
    with pytest.raises(ValueError, match="duplicate id"):
        F.validate(broken)


def test_saved_figures_are_byte_identical_for_the_same_data(tmp_path: Path) -> None:
    def draw(d: Path) -> dict[str, str]:
        fig, axes = reporting.figure(1, 1, 3.0, 2.0)
        reporting.step(axes[0, 0], np.arange(100.0), color="k")
        return reporting.save(fig, d, "cdf")

    a, b = draw(tmp_path / "a"), draw(tmp_path / "b")
    assert a == {"png": "figures/cdf.png", "svg": "figures/cdf.svg"}
    for fmt in ("png", "svg"):
        assert (tmp_path / "a" / f"cdf.{fmt}").read_bytes() == (tmp_path / "b" / f"cdf.{fmt}").read_bytes()


def test_figures_drawn_by_the_figure_processes_are_the_same_files(tmp_path: Path) -> None:
    # reporting.parallel_saves: the figures go to 2 spawned processes (pickled); the
    # files exist when the block ends and equal those saved in this process. A worker's
    # error reaches the caller at the block's end.
    def draw(d: Path, n: int) -> dict[str, str]:
        fig, axes = reporting.figure(2, 2, 5.0, 4.0)
        for k, ax in enumerate(axes.flat):
            reporting.step(ax, np.arange(100.0 * (k + n)), color="k")
            ax.set_title(f"panel {k}")
        return reporting.save(fig, d, f"cdf{n}")

    here = [draw(tmp_path / "here", n) for n in range(3)]
    with reporting.parallel_saves(2):
        pooled = [draw(tmp_path / "pool", n) for n in range(3)]
        assert reporting._POOL["executor"] is not None, "the figures went to the pool"
    assert pooled == here
    for n in range(3):
        for fmt in ("png", "svg"):
            assert (tmp_path / "pool" / f"cdf{n}.{fmt}").read_bytes() == (tmp_path / "here" / f"cdf{n}.{fmt}").read_bytes()
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(OSError):
        with reporting.parallel_saves(2):
            draw(tmp_path / "file", 0)
    assert reporting._POOL["workers"] == 0, "the pool is closed after an error"


@pytest.mark.parametrize("name", ["tcplab.studies.engine", "tcplab.studies.findings", "tcplab.studies.reporting"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
