"""Output locations are bad input too: checked before anything runs; OS errors are one line."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tcplab.cli import main
from tcplab.scenario import EXAMPLE_TOML
from test_sweep import SLOW


def _scenario(tmp_path: Path) -> Path:
    f = tmp_path / "s.toml"
    f.write_text(EXAMPLE_TOML)
    return f


@pytest.mark.parametrize("command", ["run", "sweep", "study"])
def test_an_uncreatable_out_directory_is_refused_before_anything_runs(tmp_path: Path, capsys, command: str) -> None:
    if command == "run":
        args = ["run", str(_scenario(tmp_path))]
    elif command == "sweep":
        exp = tmp_path / "e.toml"
        exp.write_text(EXAMPLE_TOML + '\n[sweep]\n"tcp.iw" = [3, 10]\n')
        args = ["sweep", str(exp), "--jobs", "1", "--no-progress"]
    else:
        args = ["study", "iw-irto", "--reps", "2", "--no-progress"]
    started = time.monotonic()
    assert main(args + ["--out", "/proc/tcplab-out"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran: no summary, no progress
    assert captured.err == "error: --out /proc/tcplab-out: cannot create the directory: No such file or directory\n"
    assert time.monotonic() - started < 5


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path, capsys) -> None:
    target = tmp_path / "taken"
    target.write_text("not a directory")
    assert main(["run", str(_scenario(tmp_path)), "--out", str(target)]) == 2
    assert capsys.readouterr().err == f"error: --out {target}: exists and is not a directory\n"
    assert target.read_text() == "not a directory"


def test_the_check_leaves_nothing_behind_when_it_refuses(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE_TOML.replace("iw = 10", "iw = 0"))
    out = tmp_path / "new" / "dir"
    assert main(["run", str(bad), "--out", str(out)]) == 2
    assert not (tmp_path / "new").exists()


def _make_read_only(path: Path) -> None:
    """Read-only even for root: ``chattr +i`` (root ignores mode bits), else chmod."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i: cannot make a directory read-only")


def _make_writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    else:
        path.chmod(0o755)


def test_a_directory_made_read_only_mid_sweep_is_one_line_and_the_sweep_resumes(tmp_path: Path) -> None:
    exp_file = tmp_path / "slow.toml"
    exp_file.write_text(SLOW)
    out = tmp_path / "out"
    runs = out / "runs"
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(exp_file), "--jobs", "1", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len([p for p in runs.iterdir() if not p.name.startswith(".")]) >= 2:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the sweep finished before the directory could be made read-only"
    _make_read_only(runs)
    try:
        _, err = proc.communicate(timeout=120)
        kept = sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))
    finally:
        _make_writable(runs)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: cannot write the results: ") and str(runs) in lines[0], lines[0]
    assert 2 <= len(kept) < 24
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"({len(kept)} resumed)" in again.stdout
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 24 and flows["run_key"].is_unique
