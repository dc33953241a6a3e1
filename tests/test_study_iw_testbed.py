"""Study iw-testbed (seed 001): set-up by path, common random numbers, batch collisions,
and a tiny end-to-end run through the CLI (figures, report, findings.json)."""

import doctest
import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from tcplab import _core
from tcplab.cli import main
from tcplab.scenario import Scenario
from tcplab.studies import findings as fnd
from tcplab.studies import iw_testbed as S


def test_configure_sets_the_grid_by_path_and_the_files_are_the_seeds_testbed() -> None:
    for link, rate, queue in (("64k", 64_000, 40), ("20m", 20_000_000, 500)):
        core = Scenario.from_dict(S.configure(S.base_scenario(link), "mix", 5, S.LINKS[link].loads[1], False, True,
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
        assert sum(f["arrivals"]["load"] for f in rpc) == pytest.approx(S.LINKS[link].loads[1])
        assert [f["group"] for f in core["flows"] if f["kind"] == "tcp"] == ["bg", "bg"]
        assert core["duration"] == 35_000_000_000


def test_arrivals_are_common_random_numbers_across_iw_and_sack() -> None:
    starts = []
    for iw, sack in (("iw3", True), ("iw10", False), ("mix", True)):
        d = S.configure(S.base_scenario("20m"), iw, 1, 0.5, sack, False, 0, 2, 1)
        doc = json.loads(_core.run(Scenario.from_dict(d).to_core_json(), 7))
        starts.append(doc["transactions"]["start_s"])
    assert len(starts[0]) > 50 and starts[0] == starts[1] == starts[2]


def test_batch_collisions_by_hand() -> None:
    # Batches 0 [0, 5], 1 [4, 9] overlap; 2 [20, inf) (unfinished) is alone; 3 [30, 31]
    # starts during 2's (endless) life, so both collide.
    s = np.array([0.0, 4.0, 20.0, 30.0])
    e = np.array([5.0, 9.0, np.nan, 31.0])
    dropped, collided = S.batch_overflow(s, e, np.array([0, 1, 2, 3]), np.array([0, 1, 0, 0]))
    assert dropped.tolist() == [False, True, False, False]
    assert collided.tolist() == [True, True, True, True]
    _, collided = S.batch_overflow(s[:2], np.array([3.0, 9.0]), np.array([0, 1]), np.zeros(2))
    assert collided.tolist() == [False, False]


def test_tiny_study_writes_figures_report_and_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "study"
    argv = ["study", "iw-testbed", "--reps", "2", "--jobs", "2", "--no-progress", "--out", str(out),
            "--set", "measure_64k_s=60", "--set", "measure_20m_s=2", "--set", "keep_txn_reps=1"]
    assert main(argv) == 0, capsys.readouterr().err
    doc = json.loads((out / "findings.json").read_text())
    fnd.validate(doc)
    assert [f["id"] for f in doc["findings"]] == [f"T{i}" for i in range(1, 8)]
    assert all(f["evaluated"] for f in doc["findings"])
    study = json.loads((out / "study.json").read_text())
    assert study["runs"] == 192 and not study["failures"]
    import pandas as pd

    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 192 and (runs["n_txn"] > 0).all()
    # T6's mechanism holds even in the tiny run: five IW10 bursts overflow 40 packets.
    t6a = next(c for f in doc["findings"] for c in f["checks"] if c["id"] == "T6a")
    assert t6a["statistic"]["value"] == 1.0
    for stem in ("uct_mean", "plr_64k", "fairness", "sack", "batches_64k", "qlen_20m_96", "cwnd_64k_bg"):
        assert (out / "figures" / f"{stem}.svg").is_file(), stem
    assert "T7" in (out / "report.html").read_text()


@pytest.mark.parametrize("name", ["tcplab.studies.iw_testbed", "tcplab.studies.iw_testbed_findings",
                                  "tcplab.studies.iw_testbed_report"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
