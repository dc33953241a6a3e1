"""Every run can be interrupted, shows its progress, and loses nothing.

Ctrl-C (SIGINT) is sent to `tcplab run`, `tcplab sweep` and `tcplab study` in a
subprocess: each stops within about a second with one line and exit code 130; the
sweep and the study then resume and end with exactly the tables of an uninterrupted
session. A run file truncated by a crash is found on resume and done again. `--jobs`
beyond the machine's cores is capped with a note.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab.cli import main
from tcplab.executor import RunProgress, available_cores, usable_jobs
from tcplab.scenario import Scenario
from tcplab.sweeps import Experiment, sweep

TCPLAB = [sys.executable, "-m", "tcplab.cli"]

LONG = '''\
duration = "1000000000s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms" }
sender_access = { rate = "100Mbps", delay = "1ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
'''

#: Seconds from SIGINT to the process's end that the tests accept: the core looks for
#: signals every 100 ms of wall time, and the rest is Python's exit, with room for a
#: machine that other jobs keep busy.
SLACK = 3.0

#: The child takes SIGINT's default action whatever this process inherited: a shell that
#: starts the test suite in the background (`make test &`) leaves SIGINT ignored, and
#: Python keeps an ignored SIGINT ignored, as a user's own `nohup tcplab ... &` wants.
def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


INTERRUPTED = re.compile(r"^interrupted: (\d+) of (\d+) runs kept; re-run to resume$")


def _wait_for(predicate, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, "finished before it could be interrupted"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def _interrupt(proc: subprocess.Popen) -> tuple[float, str, str]:
    """Sends SIGINT; returns the seconds until the process ended, its stdout and stderr."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return time.monotonic() - t0, out, err


class _Stderr:
    """A process's stderr, read as it comes (a thread), for tests that wait for a line."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.chunks: list[bytes] = []
        self.fd = proc.stderr.fileno()  # type: ignore[union-attr]
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while chunk := os.read(self.fd, 65536):
            self.chunks.append(chunk)

    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")


@pytest.mark.timeout(60)
def test_ctrl_c_stops_a_long_run_within_a_second_after_its_progress_showed(tmp_path: Path) -> None:
    f = tmp_path / "long.toml"
    f.write_text(LONG)
    # FORCE_COLOR: rich draws the progress bar as on a terminal.
    proc = subprocess.Popen([*TCPLAB, "run", str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "FORCE_COLOR": "1"}, preexec_fn=_sigint_default)
    stderr = _Stderr(proc)
    _wait_for(lambda: "s of 1,000,000,000.0 s simulated" in stderr.text(), proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    took = time.monotonic() - t0
    out = proc.stdout.read()  # type: ignore[union-attr]
    stderr.thread.join(10)
    err = stderr.text()
    assert proc.returncode == 130 and out == b""
    assert took < SLACK, f"{took:.2f} s to stop"
    assert re.search(r"simulated \S* ?\d+:\d\d:\d\d wall, \S*(\d+ days|\d+:\d\d:\d\d) left", err), err
    last = err.strip().splitlines()[-1]
    assert re.search(r"interrupted: the run stopped at [\d,.]+ s of 1,000,000,000\.000 s simulated; nothing was "
                     r"written$", last), last
    assert "Traceback" not in err


def test_the_progress_callback_sees_simulated_time_go_forward() -> None:
    sc = Scenario.from_toml(LONG.replace("1000000000s", "300s"))
    seen: list[tuple[float, float]] = []
    tcplab.run(sc, progress=lambda now, end: seen.append((now, end)))
    assert seen, "a run of a few hundred milliseconds calls it at least once"
    assert all(end == 300.0 for _, end in seen)
    assert [now for now, _ in seen] == sorted(now for now, _ in seen) and 0 < seen[-1][0] <= 300
    with RunProgress(enabled=False) as bar:  # what tcplab run passes
        tcplab.run(sc, progress=bar)
    assert 0 < bar.now_s <= bar.end_s == 300.0


SWEEP = '''\
name = "ctrl-c"
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "10ms", queue = { kind = "drop_tail", limit = "100pkt" } }
sender_access = { rate = "1Gbps", delay = "1ms" }
receiver_access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
start_jitter = "100ms"
[sweep]
replications = 6
"tcp.iw" = [3, 10]
'''


def _kept(runs: Path) -> int:
    return len([p for p in runs.iterdir() if not p.name.startswith(".")]) if runs.is_dir() else 0


@pytest.mark.timeout(240)
def test_ctrl_c_during_a_sweep_keeps_finished_runs_in_one_line_and_the_resume_is_exact(tmp_path: Path) -> None:
    exp_file = tmp_path / "exp.toml"
    exp_file.write_text(SWEEP)
    out = tmp_path / "out"
    cmd = [*TCPLAB, "sweep", str(exp_file), "--jobs", "2", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    _wait_for(lambda: _kept(out / "runs") >= 1, proc, timeout=120)
    took, stdout, stderr = _interrupt(proc)
    lines = [line for line in stderr.splitlines() if not line.startswith("note: --jobs")]  # a 1-core machine
    assert proc.returncode == 130 and stdout == "" and len(lines) == 1, stderr
    m = INTERRUPTED.match(lines[0])
    assert m, stderr
    kept, total = int(m.group(1)), int(m.group(2))
    assert total == 12 and 1 <= kept < 12 and kept == _kept(out / "runs")
    assert took < SLACK, f"{took:.2f} s to stop the workers"
    # The workers are gone: nothing is written after the interrupt.
    time.sleep(0.5)
    assert _kept(out / "runs") == kept and not list((out / "runs").glob(".tmp-*"))
    resumed = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"12/12 runs finished ({kept} resumed)" in resumed.stdout
    clean = tmp_path / "clean"
    sweep(Experiment.from_toml(SWEEP), clean, jobs=1, progress=False)
    for table in ("flows", "links", "queues"):
        pd.testing.assert_frame_equal(pd.read_parquet(out / f"{table}.parquet"),
                                      pd.read_parquet(clean / f"{table}.parquet"))


STUDY = ["study", "iw-irto", "--reps", "8", "--links", "lte", "--set", "block=1", "--jobs", "1", "--no-progress"]


@pytest.mark.timeout(240)
def test_ctrl_c_during_a_study_keeps_finished_tasks_in_one_line_and_the_resume_is_exact(tmp_path: Path) -> None:
    from tcplab.studies import iw_irto as S

    out = tmp_path / "out"
    proc = subprocess.Popen([*TCPLAB, *STUDY, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_sigint_default)
    _wait_for(lambda: _kept(out / "tasks") >= 3, proc, timeout=120)
    took, stdout, stderr = _interrupt(proc)
    assert proc.returncode == 130 and stdout == "", stderr
    m = INTERRUPTED.match(stderr.strip())
    assert m and "\n" not in stderr.strip(), stderr
    kept, total = int(m.group(1)), int(m.group(2))
    params = S.StudyParams(reps=8, links=["lte"], block=1)
    plan = S.plan(params)
    finished = [json.loads((d / "task.json").read_text()) for d in (out / "tasks").iterdir() if not d.name.startswith(".")]
    assert total == sum(t.runs for t in plan) and kept == sum(t["runs"] for t in finished) < total
    assert took < SLACK, f"{took:.2f} s to stop"
    resumed = subprocess.run([*TCPLAB, *STUDY, "--out", str(out)], capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(plan) - len(finished)} task(s) run, {len(finished)} resumed" in resumed.stdout
    clean = tmp_path / "clean"
    S.run(clean, params, jobs=1, progress=False, figures=False)
    for table in ("flows", "runs", "owd", "run_metrics"):
        pd.testing.assert_frame_equal(pd.read_parquet(out / f"{table}.parquet"),
                                      pd.read_parquet(clean / f"{table}.parquet"))


SMALL = SWEEP.replace('duration = "60s"', 'duration = "2s"').replace("replications = 6", "replications = 2")


@pytest.mark.timeout(120)
def test_a_truncated_run_file_is_found_on_resume_and_the_run_done_again(tmp_path: Path, capsys) -> None:
    exp = Experiment.from_toml(SMALL)
    out = tmp_path / "out"
    sweep(exp, out, jobs=1, progress=False)
    before = pd.read_parquet(out / "flows.parquet")
    damaged = sorted((out / "runs").iterdir())[1]
    data = (damaged / "flows.parquet").read_bytes()
    (damaged / "flows.parquet").write_bytes(data[: len(data) // 2])  # as a crash of the machine can leave it
    capsys.readouterr()
    again = sweep(exp, out, jobs=1, progress=False)
    err = capsys.readouterr().err
    assert err == f"note: {damaged}: flows.parquet does not match its digest (truncated or corrupt); the run is done again\n"
    assert (again.ran, again.skipped) == (1, 3)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "flows.parquet"), before)
    # Runs stored before digests were recorded: their Parquet footer is checked.
    info = json.loads((damaged / "run.json").read_text())
    del info["sha256"]
    (damaged / "run.json").write_text(json.dumps(info))
    (damaged / "links.parquet").write_bytes(b"PAR1 not really")
    sweep(exp, out, jobs=1, progress=False)
    assert capsys.readouterr().err.startswith(f"note: {damaged}: links.parquet is not a readable Parquet file")


@pytest.mark.timeout(120)
def test_a_truncated_study_task_is_found_on_resume_and_done_again(tmp_path: Path, capsys) -> None:
    from tests.test_study_machine import Cubes

    from tcplab.studies import engine

    params = {"xs": [1, 2], "reps": 4}
    engine.run_study(Cubes(), tmp_path, params, jobs=1, progress=False)
    before = pd.read_parquet(tmp_path / "rows.parquet")
    task = sorted((tmp_path / "tasks").iterdir())[0]
    (task / "rows.parquet").write_bytes((task / "rows.parquet").read_bytes()[:40])
    capsys.readouterr()
    again = engine.run_study(Cubes(), tmp_path, params, jobs=1, progress=False)
    assert capsys.readouterr().err == (f"note: {task}: rows.parquet does not match its digest (truncated or corrupt); "
                                       "the task is done again\n")
    assert again.ran == 1
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "rows.parquet"), before)


@pytest.mark.timeout(120)
def test_jobs_beyond_the_cores_are_capped_with_a_note(tmp_path: Path, capsys) -> None:
    cores = available_cores()
    assert usable_jobs(cores + 10) == (cores, f"--jobs {cores + 10} is more than this machine's {cores} cores; "
                                              f"running {cores} workers")
    assert usable_jobs(cores) == (cores, None) and usable_jobs(None) == (cores, None)
    f = tmp_path / "exp.toml"
    f.write_text(SMALL)
    assert main(["sweep", str(f), "--jobs", str(cores + 10), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err == f"note: --jobs {cores + 10} is more than this machine's {cores} cores; running {cores} workers\n"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["engine"] == f"local:{cores}"
