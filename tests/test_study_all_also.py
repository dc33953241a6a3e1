"""``tcplab study all --also FILE``: a study file on the dashboard and in the aggregate beside the seeds.

One real run: a two-configuration study file of 2 s runs (``--only`` names it, so no
bundled study runs; a few seconds on 2 cores). The bad-file paths are refused before
anything runs.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from tcplab import studies
from tcplab.cli import main
from tcplab.studies import findings as fnd
from tcplab.studies import suite

TINY = """\
name = "tiny-file"
question = "Does CUBIC take a larger share of a 10 Mbit/s bottleneck than Reno?"
reps = 2
seed = 3

[scenario]
duration = "2s"
warmup = "0.5s"
topology = { kind = "dumbbell", pairs = 2, bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "drop_tail", limit = "50pkt" } }, sender_access = { rate = "100Mbps", delay = "1ms" }, receiver_access = { rate = "100Mbps", delay = "1ms" } }
flows = [
  { name = "a", src = "s0", dst = "d0", cc = { name = "reno" }, start_jitter = "200ms" },
  { name = "b", src = "s1", dst = "d1", cc = { name = "reno" }, start_jitter = "200ms" },
]

[[factors]]
name = "cc"
path = "flows[0].cc.name"
values = ["reno", "cubic"]

[[metrics]]
name = "share_a"
table = "flows"
column = "goodput_bps"
aggregate = "share"
part = { name = "a" }

[[claims]]
id = "C1"
text = "Flow a takes a larger share when it runs CUBIC than when it runs Reno"
form = "directional"
metric = "share_a"
compare = { factor = "cc", test = "cubic", ref = "reno" }
side = "above"
negligible = 0.02
"""


@pytest.fixture(scope="module")
def also_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    tmp = tmp_path_factory.mktemp("also")
    file = tmp / "tiny.toml"
    file.write_text(TINY)
    out = tmp / "res"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["study", "all", "--only", "tiny-file", "--also", str(file), "--reps-scale", "1.5",
                     "--jobs", "1", "--no-progress", "--out", str(out)])
    assert code == 0, buf.getvalue()
    return out, file, buf.getvalue()


def test_a_study_file_is_on_the_dashboard_and_in_the_aggregate_beside_the_seeds(
        also_dir: tuple[Path, Path, str]) -> None:
    out, file, printed = also_dir
    doc = json.loads((out / "findings.json").read_text())
    suite.validate(doc)
    # The seeds first (none ran: --only named the file), then the study file.
    assert [s["study"] for s in doc["studies"]] == [*studies.names(), "tiny-file"]
    assert all(s["status"] == "not run" and s["kind"] == suite.SEED for s in doc["studies"][:-1])
    entry = doc["studies"][-1]
    assert entry["kind"] == suite.STUDY_FILE and entry["status"] == "ok" and entry["seed"] is None
    assert entry["study_file"] == str(file) and entry["question"].startswith("Does CUBIC take a larger share")
    # Its own findings.json, finding by finding, with a working link into its report.
    own = json.loads((out / "tiny-file" / "findings.json").read_text())
    fnd.validate(own)
    assert own["replications"] == entry["replications"] == 3  # reps 2 x --reps-scale 1.5
    assert [(f["key"], f["verdict"], f["statistic"]) for f in entry["findings"]] == [
        (f"tiny-file/{f['id']}", f["verdict"], f["statistic"]) for f in own["findings"]]
    report = (out / "tiny-file" / "report.html").read_text()
    page, anchor = entry["findings"][0]["link"].split("#")
    assert page == "tiny-file/report.html" and f"id='{anchor}'" in report
    # Counted apart from the seeds' totals.
    assert doc["totals"]["findings"] == 0
    v = own["findings"][0]["verdict"]
    assert doc["file_totals"]["findings"] == 1 and doc["file_totals"][{"not testable here": "not_testable"}.get(v, v)] == 1
    # The dashboard: a section with the question in place of a seed, the finding linked, a thumbnail.
    index = (out / "index.html").read_text()
    section = index.split("id='study-tiny-file'")[1].split("<section>")[0]
    assert "Study file · <code>tiny-file</code>" in section and "<b>Question:</b> Does CUBIC" in section
    assert f"href='{entry['findings'][0]['link']}'" in section and "data:image/png;base64," in section
    assert "1 study file, 1 findings" in index.split("</title>")[0]
    assert f"tiny-file (study file {file}): ok; 1 findings: " in printed
    assert "also: 1 study file(s), 1 findings: " in printed


def test_a_study_file_alone_keeps_its_findings_when_the_aggregate_is_rebuilt(also_dir: tuple[Path, Path, str]) -> None:
    """Without ``also`` the aggregate lists the seeds only; with it, the file's findings come back from its directory."""
    from tcplab.studies import studyfile

    out, file, _ = also_dir
    assert [s["study"] for s in suite.aggregate(out)["studies"]] == studies.names()
    doc = suite.aggregate(out, also=[studyfile.load(file)])
    suite.validate(doc)
    assert doc["studies"][-1]["status"] == "ok" and len(doc["studies"][-1]["findings"]) == 1
    broken = json.loads(json.dumps(doc))
    broken["file_totals"]["held"] += 1
    with pytest.raises(ValueError, match="file_totals"):
        suite.validate(broken)


@pytest.mark.parametrize("edit, message", [
    (('metric = "share_a"\ncompare', 'metric = "shares"\ncompare'), "claims[0].metric: unknown metric"),
    (('values = ["reno", "cubic"]', 'values = ["reno", "cubik"]'), "cubik"),
    (('name = "tiny-file"', 'name = "satellite"'), "name 'satellite' is a registered study's"),
    (('name = "tiny-file"', 'name = "my study"'), "name 'my study' is not a plain directory name"),
])
def test_a_bad_study_file_is_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          edit: tuple[str, str], message: str) -> None:
    assert edit[0] in TINY
    file = tmp_path / "bad.toml"
    file.write_text(TINY.replace(*edit))
    out = tmp_path / "never"
    assert main(["study", "all", "--only", "satellite", "--also", str(file), "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and (str(file) in err or "bad.toml" in err)
    assert not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["study", "all", "--also", "missing.toml"], "--also: no such study file: missing.toml"),
    (["study", "all", "--only", "tiny-file"], "--only: unknown study(ies) tiny-file"),
    (["study", "satellite", "--also", "x.toml"], "--also: only `tcplab study all` accepts it"),
    (["study", "run", "x.toml", "--also", "y.toml"], "--also: not accepted by `tcplab study run`"),
])
def test_also_options_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                  message: str) -> None:
    out = tmp_path / "never"
    assert main(argv + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_two_files_with_one_name_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(TINY)
    b.write_text(TINY)
    out = tmp_path / "never"
    assert main(["study", "all", "--also", str(a), "--also", str(b), "--out", str(out)]) == 2
    assert f"name 'tiny-file' is also the name of {a}" in capsys.readouterr().err
    assert not out.exists()


def test_the_dashboard_with_a_study_file_renders_in_headless_chromium(also_dir: tuple[Path, Path, str],
                                                                      tmp_path: Path) -> None:
    from tcplab import chromium

    if chromium.find() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    out, _, _ = also_dir
    page = chromium.check_page(out / "index.html", screenshot=tmp_path / "dashboard.png")
    assert [i for i in page.ids if i.startswith("study-")] == [f"study-{n}" for n in [*studies.names(), "tiny-file"]]
    assert len(page.images) == 1 and all(w >= 200 and h >= 100 for w, h in page.images), page.images
