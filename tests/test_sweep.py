"""Sweeps: grid, common random numbers, local pool vs Dask, resume after SIGKILL, manifest."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tcplab.scenario import ScenarioError
from tcplab.sweeps import EXAMPLE_EXPERIMENT, Experiment, sweep

JITTERED = EXAMPLE_EXPERIMENT.replace('bytes = "180kB"', 'bytes = "180kB"\ncount = 3\nstart_jitter = "200ms"')


def test_grid_seeds_and_keys() -> None:
    exp = Experiment.from_toml(JITTERED)
    tasks = exp.tasks()
    assert len(tasks) == 2 * 2 * 2
    assert {t.seed for t in tasks if t.replication == 1} == {1}  # common random numbers
    assert len({t.key for t in tasks}) == len(tasks)
    # The same replication sees the same flow start times at every grid point.
    starts = {(t.point, t.replication): [f["start"] for f in json.loads(t.core_json)["flows"]] for t in tasks}
    assert starts[(0, 1)] == starts[(3, 1)] != starts[(0, 0)]


def test_bad_sweep_values_are_located_at_the_sweep_key() -> None:
    text = EXAMPLE_EXPERIMENT.replace('"tcp.iw" = [3, 10]', '"tcp.iw" = [3, 0]')
    with pytest.raises(ScenarioError) as info:
        Experiment.from_toml(text, "exp.toml")
    e = info.value
    assert e.path == "tcp.iw" and e.line == 12 and "[sweep] 'tcp.iw'" in str(e)
    with pytest.raises(ScenarioError, match="non-empty list"):
        Experiment.from_toml(EXAMPLE_EXPERIMENT.replace("[3, 10]", "3"))
    with pytest.raises(ScenarioError, match="index 4 does not exist"):
        Experiment.from_toml(EXAMPLE_EXPERIMENT + '"flows[4].bytes" = ["1kB"]\n')


def read_tables(d: Path) -> dict[str, pd.DataFrame]:
    return {t: pd.read_parquet(d / f"{t}.parquet") for t in ("flows", "queues", "links", "udp")}


def test_results_have_parameters_as_columns_and_a_manifest(tmp_path: Path) -> None:
    result = sweep(Experiment.from_toml(JITTERED), tmp_path, jobs=1, progress=False)
    flows = read_tables(tmp_path)["flows"]
    assert len(flows) == 8 * 3 and {"tcp.iw", "topology.bottleneck.queue.limit", "seed", "replication", "run_key"} <= set(flows.columns)
    assert sorted(flows["tcp.iw"].unique()) == [3, 10]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["grid"] == {"tcp.iw": [3, 10], "topology.bottleneck.queue.limit": ["20pkt", "48pkt"]}
    assert manifest["seeds"] == [0, 1] and manifest["ended"] and manifest["failures"] == []
    assert manifest["tcplab_version"] and "git_revision" in manifest
    # Re-running skips everything and writes the same tables.
    again = sweep(Experiment.from_toml(JITTERED), tmp_path, jobs=1, progress=False)
    assert (again.ran, again.skipped) == (0, 8) and result.ran == 8
    pd.testing.assert_frame_equal(read_tables(tmp_path)["flows"], flows)


def test_goodput_and_packet_series_are_sweep_tables(tmp_path: Path) -> None:
    """The two packet series land in the sweep's outputs like the other series, with
    the parameters as columns."""
    text = EXAMPLE_EXPERIMENT.replace("[sweep]", '[record]\nthroughput_interval = "200ms"\npackets = ["*"]\n\n[sweep]')
    sweep(Experiment.from_toml(text), tmp_path, jobs=1, progress=False)
    tp = pd.read_parquet(tmp_path / "series_throughput.parquet")
    pk = pd.read_parquet(tmp_path / "series_packets.parquet")
    flows = read_tables(tmp_path)["flows"]
    assert {"tcp.iw", "replication", "run_key", "goodput_bps", "flow"} <= set(tp.columns)
    assert {"tcp.iw", "run_key", "event", "seq"} <= set(pk.columns)
    delivered = tp.groupby("run_key")["bytes"].sum()
    assert delivered.to_dict() == flows.groupby("run_key")["bytes_delivered"].sum().to_dict()
    assert set(pk["run_key"]) == set(flows["run_key"])


def test_local_pool_and_dask_local_cluster_give_identical_tables(tmp_path: Path) -> None:
    exp = Experiment.from_toml(JITTERED)
    sweep(exp, tmp_path / "pool", jobs=2, progress=False)
    sweep(exp, tmp_path / "dask", jobs=2, scheduler="dask:local", progress=False)
    pool, dask = read_tables(tmp_path / "pool"), read_tables(tmp_path / "dask")
    for name in pool:
        pd.testing.assert_frame_equal(pool[name], dask[name], obj=name)
    assert len(pool["flows"]) == 24


SLOW = '''
name = "slow"
duration = "100s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "10ms", queue = { kind = "drop_tail", limit = "100pkt" } }
sender_access = { rate = "1Gbps", delay = "1ms" }
receiver_access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
start_jitter = "100ms"
[sweep]
replications = 12
"tcp.iw" = [3, 10]
'''


def test_sigkill_part_way_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    exp_file = tmp_path / "slow.toml"
    exp_file.write_text(SLOW)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(exp_file), "--jobs", "1", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = len([p for p in (out / "runs").glob("*") if not p.name.startswith(".")]) if (out / "runs").is_dir() else 0
        if done >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the sweep finished before it could be killed; make SLOW slower"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_with = len([p for p in (out / "runs").iterdir() if not p.name.startswith(".")])
    assert 3 <= killed_with < 24
    assert subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 24 and flows["run_key"].is_unique
    assert sorted(zip(flows["tcp.iw"], flows["replication"])) == sorted((iw, r) for iw in (3, 10) for r in range(12))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"][-1]["skipped"] == killed_with
    # The resumed results equal an uninterrupted sweep's.
    clean = tmp_path / "clean"
    sweep(Experiment.from_toml(SLOW), clean, jobs=2, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(clean / "flows.parquet"), flows)


NO_ROUTE_EXPERIMENT = """
name = "partly-unroutable"
[topology]
kind = "graph"
nodes = ["a", "r", "c"]
[[topology.links]]
name = "a_r"
from = "a"
to = "r"
rate = "10Mbps"
delay = "2ms"
[[topology.links]]
name = "r_a"
from = "r"
to = "a"
rate = "10Mbps"
delay = "2ms"
[[flows]]
kind = "tcp"
src = "a"
dst = "r"
bytes = "10kB"
[sweep]
"flows[0].dst" = ["r", "c"]
replications = 2
"""


def test_a_failing_run_is_reported_with_its_parameters_and_seed_and_the_rest_continue(tmp_path: Path,
                                                                                     monkeypatch, capsys) -> None:
    # Every value the core refuses is refused before the sweep starts (see the next
    # test), so a run that fails is one that breaks while it runs: here, at dst = "c".
    import tcplab.sweeps as sweeps

    real = sweeps.execute

    def breaks_at_c(core_json: str, seed: int) -> str:
        if json.loads(core_json)["flows"][0]["dst"] == "c":
            raise RuntimeError("the run broke")
        return real(core_json, seed)

    monkeypatch.setattr(sweeps, "execute", breaks_at_c)
    exp = Experiment.from_toml(NO_ROUTE_EXPERIMENT.replace('nodes = ["a", "r", "c"]', 'nodes = ["a", "r", "c"]\n'
                               '[[topology.links]]\nname = "r_c"\nfrom = "r"\nto = "c"\nrate = "10Mbps"\ndelay = "2ms"\n'
                               '[[topology.links]]\nname = "c_r"\nfrom = "c"\nto = "r"\nrate = "10Mbps"\ndelay = "2ms"'))
    out = tmp_path / "out"
    result = sweep(exp, out, jobs=1, progress=False)
    assert "the run broke" in capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(result.failures) == len(manifest["failures"]) == 2
    for f in manifest["failures"]:
        assert f["params"] == {"flows[0].dst": "c"} and f["seed"] in (0, 1) and "the run broke" in f["error"]
    flows = pd.read_parquet(out / "flows.parquet")
    assert sorted(flows["seed"]) == [0, 1] and set(flows["flows[0].dst"]) == {"r"}


@pytest.mark.timeout(60)
def test_a_grid_point_the_core_refuses_is_refused_before_anything_runs(tmp_path: Path) -> None:
    # Node c is isolated: no route at the dst = "c" point. The core's own check finds it
    # up front and names the [sweep] line that set the value; nothing is written.
    exp_file = tmp_path / "exp.toml"
    exp_file.write_text(NO_ROUTE_EXPERIMENT)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tcplab.cli", "sweep", str(exp_file), "--jobs", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    line = NO_ROUTE_EXPERIMENT.splitlines().index('"flows[0].dst" = ["r", "c"]') + 1
    assert proc.stderr.splitlines() == [
        f"error: {exp_file}:{line}: flows[0].dst: no route between 'a' and 'c' (value from [sweep] 'flows[0].dst', "
        "grid point {'flows[0].dst': 'c'})"]
    assert not out.exists()
    check = subprocess.run([sys.executable, "-m", "tcplab.cli", "check", str(exp_file)], capture_output=True, text=True,
                           timeout=60)
    assert (check.returncode, check.stderr) == (2, proc.stderr)

def _sweep_and_report(tmp_path: Path, text: str, capsys) -> tuple[str, str]:
    """Runs ``tcplab sweep`` then ``tcplab report`` on an experiment; (sweep's stderr, report.html)."""
    from tcplab.cli import main

    exp = tmp_path / "exp.toml"
    exp.write_text(text)
    out = tmp_path / "out"
    assert main(["sweep", str(exp), "--out", str(out), "--jobs", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert main(["report", str(out)]) == 0
    return err, (out / "report.html").read_text()


WARNING = "replications are identical: this scenario has no random element"


def test_identical_replications_are_flagged_in_the_sweep_and_the_report(tmp_path: Path, capsys) -> None:
    # The example dumbbell has no start jitter, no error model, no random workload: each
    # replication is the same run.
    err, report = _sweep_and_report(tmp_path, EXAMPLE_EXPERIMENT, capsys)
    assert f"warning: {WARNING}" in err and "start_jitter" in err and "error" in err
    assert WARNING in report and "start_jitter" in report
    assert "exact (the same in all 2 replications)" in report


def test_replications_with_a_random_element_are_not_flagged(tmp_path: Path, capsys) -> None:
    err, report = _sweep_and_report(tmp_path, JITTERED, capsys)
    assert "identical" not in err and "identical" not in report


def test_identical_replications_are_located_at_their_grid_points(tmp_path: Path) -> None:
    from tcplab.sweeps import identical_points, identical_replications_warning

    text = JITTERED.replace('"tcp.iw" = [3, 10]\n', "").replace(
        '"topology.bottleneck.queue.limit" = ["20pkt", "48pkt"]', '"flows[0].start_jitter" = ["0s", "200ms"]')
    exp = Experiment.from_toml(text)
    result = sweep(exp, tmp_path, jobs=1, progress=False)
    assert identical_points(result.tables, list(exp.params)) == [0]
    note = identical_replications_warning(result.tables, list(exp.params))
    assert note is not None and note.startswith("replications are identical at 1 of 2 grid points "
                                                "(flows[0].start_jitter=0s): these points have no random element")


def test_the_fields_the_warning_names_exist_in_the_scenario_format() -> None:
    from tcplab.scenario import Arrivals, Bernoulli, Link, Markov, RpcFlow, Scenario, TcpFlow
    from tcplab.sweeps import RANDOM_ELEMENTS

    text = " ".join(RANDOM_ELEMENTS)
    for field, model in (("start_jitter", TcpFlow), ("error", Link), ("arrivals", RpcFlow), ("process", Arrivals),
                         ("workload", Scenario)):
        assert field in text and field in model.model_fields, (field, model.__name__)
    for kind in (Bernoulli, Markov):
        assert f'"{kind.model_fields["kind"].default}"' in text
    assert '"poisson"' in text and Arrivals(process="poisson", rate=1.0).process == "poisson"
