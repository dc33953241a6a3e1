"""Study files (python/tcplab/studies/studyfile.py): every claim form through a study file on
scenarios whose answer is known, bad input refused with its field and line before anything
runs, an interrupted study resumed to the same findings, and the CLI's `study run` / `study new`.

The scenarios are tiny (a few simulated seconds at 10-20 Mbit/s), so each test takes seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tcplab.cli import main
from tcplab.executor import Interrupted
from tcplab.scenario import ScenarioError
from tcplab.studies import engine, findings as F, studyfile as S

#: Two symmetric bulk flows (the same CC, the same path) on a dumbbell; the factors set the
#: bottleneck's rate and the senders' access rate. With slow (3 Mbit/s) access the two flows
#: carry at most 6 Mbit/s, so the bottleneck's rate has no effect; with fast access goodput
#: follows the bottleneck's rate.
KNOWN = '''\
name = "known"
reps = {reps}

[scenario]
duration = "4s"
warmup = "1s"
topology = {{ kind = "dumbbell", pairs = 2, bottleneck = {{ rate = "10Mbps", delay = "5ms", queue = {{ kind = "drop_tail", limit = "40pkt" }} }}, sender_access = {{ rate = "100Mbps", delay = "1ms" }}, receiver_access = {{ rate = "100Mbps", delay = "1ms" }} }}
flows = [
  {{ name = "a", src = "s0", dst = "d0", cc = {{ name = "reno" }}, start_jitter = "50ms" }},
  {{ name = "b", src = "s1", dst = "d1", cc = {{ name = "reno" }}, start_jitter = "50ms" }},
]

[[factors]]
name = "rate"
path = "topology.bottleneck.rate"
values = ["10Mbps", "20Mbps"]
labels = ["slow", "fast"]

[[factors]]
name = "access"
path = "topology.sender_access.rate"
values = ["3Mbps", "100Mbps"]
labels = ["narrow", "wide"]
subsets = {{ all = ["narrow", "wide"] }}

[[factors]]
name = "twin"
path = "flows[1].cc.name"
values = ["reno", "reno"]
labels = ["x", "y"]

[[metrics]]
name = "goodput"
table = "flows"
column = "goodput_bps"
aggregate = "sum"
unit = "bit/s"

[[metrics]]
name = "share_a"
table = "flows"
column = "goodput_bps"
aggregate = "share"
part = {{ name = "a" }}

[[claims]]
id = "D1"
text = "A faster bottleneck raises goodput by more than half when access is wide"
form = "directional"
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
side = "above"
threshold = 0.5
scope = {{ access = "wide" }}

[[claims]]
id = "E1"
text = "Identical congestion controls: the twin factor changes nothing"
form = "equivalent"
metric = "goodput"
compare = {{ factor = "twin", test = "y", ref = "x", relative = true }}
margin = 0.01

[[claims]]
id = "E2"
text = "Two identical flows share the bottleneck equally"
form = "equivalent"
metric = "share_a"
baseline = 0.5
margin = 0.1
scope = {{ access = "wide", twin = "x" }}

[[claims]]
id = "X1"
text = "The bottleneck's rate changes goodput when access is wide"
form = "differs"
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
margin = 0.1
scope = {{ access = "wide" }}

[[claims]]
id = "K1"
text = "The bottleneck's rate matters more with wide access than with narrow"
form = "contrast"
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow" }}
between = {{ factor = "access", test = "wide", ref = "narrow" }}
side = "above"
threshold = 1e6

[[claims]]
id = "V1"
text = "A faster bottleneck raises goodput whatever the access"
form = "every"
base = "directional"
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
side = "above"
negligible = 0.02
scope = {{ access = "all", twin = "x" }}

[[claims]]
id = "V2"
text = "With wide access, a faster bottleneck raises goodput in every configuration"
form = "every"
base = "directional"
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
side = "above"
negligible = 0.02
scope = {{ access = "wide" }}

[[claims]]
id = "S1"
text = "In at least half of the access settings a faster bottleneck raises goodput"
form = "share"
base = "directional"
at_least = 0.5
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
side = "above"
negligible = 0.02
scope = {{ twin = "x" }}

[[claims]]
id = "O1"
text = "Only with wide access does a faster bottleneck raise goodput"
form = "only"
base = "directional"
only = {{ access = "wide" }}
metric = "goodput"
compare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}
side = "above"
negligible = 0.02
scope = {{ twin = "x" }}
'''

EXPECTED = {"D1": "held", "E1": "held", "E2": "held", "X1": "held", "K1": "held", "V1": "contradicted", "V2": "held",
            "S1": "held", "O1": "held"}


def _write(tmp_path: Path, reps: int = 4, text: str | None = None) -> Path:
    p = tmp_path / "known.toml"
    p.write_text(text if text is not None else KNOWN.format(reps=reps))
    return p


def _verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {f["id"]: f["verdict"] for f in doc["findings"]}


@pytest.fixture(scope="module")
def known_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, engine.StudyResult]:
    d = tmp_path_factory.mktemp("known")
    path = _write(d, reps=12)
    return path, S.run(path, d / "out", jobs=1, progress=False)


def test_every_claim_form_gives_the_known_verdict(known_run: tuple[Path, engine.StudyResult]) -> None:
    _, res = known_run
    assert _verdicts(res.findings) == EXPECTED
    kinds = {c["form"]["kind"] for f in res.findings["findings"] for c in f["checks"]}
    assert kinds == {"directional", "equivalence", "difference", "contrast", "every", "share", "only"}
    # identical congestion controls: every replication's difference is exactly 0
    e1 = next(f for f in res.findings["findings"] if f["id"] == "E1")["checks"][0]
    assert e1["statistic"]["exact"] and e1["statistic"]["value"] == 0.0


def test_outputs_match_a_bundled_study(known_run: tuple[Path, engine.StudyResult]) -> None:
    path, res = known_run
    out = res.out
    doc = json.loads((out / "findings.json").read_text())
    F.validate(doc)
    assert doc["study"] == "known" and doc["replications"] == 12 and doc["study_file"] == str(path)
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 8 * 12 and {"rate", "access", "twin", "rep", "seed", "goodput", "share_a"} <= set(runs)
    flows = pd.read_parquet(out / "flows.parquet")
    assert {"rate", "access", "twin", "rep", "name", "goodput_bps"} <= set(flows) and len(flows) == 2 * len(runs)
    html = (out / "report.html").read_text()
    for fid, verdict in EXPECTED.items():
        assert f"id='finding-{fid}'" in html and verdict in html
    assert (out / "figures" / "metric_goodput.svg").is_file() and (out / "study.json").is_file()


def test_an_inconclusive_claim_says_how_many_replications_would_settle_it(tmp_path: Path) -> None:
    text = KNOWN.format(reps=3).replace('margin = 0.1\nscope = {{ access = "wide", twin = "x" }}'.replace("{{", "{")
                                        .replace("}}", "}"), 'margin = 0.004\nscope = { access = "wide", twin = "x" }')
    sf = S.StudyFile.from_toml(text, str(tmp_path / "k.toml"))
    res = S.run(sf, tmp_path / "out", jobs=1, progress=False)
    e2 = next(f for f in res.findings["findings"] if f["id"] == "E2")
    assert e2["verdict"] == "inconclusive", e2["statistic"]
    needed = e2["checks"][0]["reps_needed"]
    assert needed is None or needed > 3
    assert "replications would settle it" in (res.out / "report.html").read_text()


@pytest.mark.parametrize("old, new, field", [
    ('aggregate = "share"', 'aggregate = "shares"', "metrics[1].aggregate"),
    ('column = "goodput_bps"\naggregate = "sum"', 'column = "goodput"\naggregate = "sum"', "metrics[0].column"),
    ('metric = "goodput"\ncompare = {{ factor = "rate", test = "fast", ref = "slow", relative = true }}\nside = "above"\n'
     'threshold = 0.5', 'metric = "goodput"\ncompare = {{ factor = "rate", test = "quick", ref = "slow", relative = true }}'
     '\nside = "above"\nthreshold = 0.5', "claims[0].compare.test"),
    ('form = "differs"', 'form = "differs"\nbogus = 1', "claims[3].bogus"),
    ('margin = 0.01', 'marginn = 0.01', "claims[1].marginn"),
    ('values = ["3Mbps", "100Mbps"]', 'values = ["3Mbps", "100"]', "topology.sender_access.rate"),
    ('scope = {{ access = "wide" }}', 'scope = {{ acess = "wide" }}', "claims[0].scope.acess"),
])
def test_a_bad_field_is_refused_with_its_name_and_line_before_anything_runs(tmp_path: Path, old: str, new: str,
                                                                           field: str) -> None:
    text = KNOWN.replace(old, new, 1)
    assert text != KNOWN, old
    path = _write(tmp_path, text=text.format(reps=2))
    with pytest.raises(ScenarioError) as err:
        S.load(path)
    problem = next(p for p in err.value.problems if field in p.path)
    assert problem.file == str(path) and problem.line is not None
    line = path.read_text().splitlines()[problem.line - 1]
    assert field.rsplit(".", 1)[-1].split("[")[0] in line or "values" in line, (problem.one_line(), line)
    out = tmp_path / "out"
    assert main(["study", "run", str(path), "--out", str(out), "--no-progress"]) == 2
    assert not out.exists()


def test_an_interrupted_study_resumes_to_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          known_run: tuple[Path, engine.StudyResult]) -> None:
    path, whole = known_run
    real = engine.execute

    def one_then_ctrl_c(*args: Any, **kwargs: Any) -> Any:
        for n, item in enumerate(real(*args, **kwargs)):
            if n == 3:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(engine, "execute", one_then_ctrl_c)
    with pytest.raises(Interrupted):
        S.run(path, tmp_path / "out", jobs=1, progress=False)
    monkeypatch.setattr(engine, "execute", real)
    again = S.run(path, tmp_path / "out", jobs=1, progress=False)
    assert again.skipped == 3 and again.ran == whole.ran - 3
    strip = lambda doc: {k: v for k, v in doc.items() if k != "study_file"}  # noqa: E731
    assert json.dumps(strip(again.findings), sort_keys=True) == json.dumps(strip(whole.findings), sort_keys=True)
    pd.testing.assert_frame_equal(again.tables["runs"], whole.tables["runs"])


def test_study_new_writes_a_file_that_runs_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["study", "new", "mine"]) == 0
    assert (tmp_path / "mine.toml").is_file()
    assert main(["study", "new", "mine"]) == 2  # never overwritten
    assert main(["study", "run", "mine.toml", "--reps", "3", "--jobs", "1", "--out", "o", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "C1 " in out and "report written to" in out
    F.validate(json.loads((tmp_path / "o" / "findings.json").read_text()))
    assert main(["study", "run", "mine.toml", "--reps", "1", "--out", "o"]) == 2
    assert main(["study", "run", "mine.toml", "--links", "x", "--out", "o"]) == 2
    assert main(["study", "run"]) == 2
    assert main(["study", "iw-irto", "mine.toml"]) == 2


def test_identical_replications_are_named_in_a_warning(tmp_path: Path) -> None:
    text = KNOWN.format(reps=2).replace(', start_jitter = "50ms"', "")
    res = S.run(S.StudyFile.from_toml(text, str(tmp_path / "k.toml")), tmp_path / "out", jobs=1, progress=False)
    assert res.findings["warnings"] and "replications are identical in 8 of 8" in res.findings["warnings"][0]


def test_the_reference_in_the_docs_is_the_generated_one() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "study-files.md").read_text()
    assert S.reference_markdown() in doc, "docs/study-files.md drifted: regenerate its tables (see its comment)"


BASE = '''\
duration = "3s"
topology = { kind = "dumbbell", pairs = 2, bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "drop_tail", limit = "30pkt" } }, sender_access = { rate = "100Mbps", delay = "1ms" }, receiver_access = { rate = "100Mbps", delay = "1ms" } }
flows = [
  { name = "a", src = "s0", dst = "d0", start_jitter = "50ms" },
  { name = "b", src = "s1", dst = "d1", start_jitter = "50ms" },
]
record = { owd = ["a"] }
'''

FROM_PATH = '''\
scenario = "base.toml"
reps = 3

[[factors]]
name = "limit"
path = "topology.bottleneck.queue.limit"
values = ["10pkt", "100pkt"]

[[metrics]]
name = "owd_p95"
table = "series_owd"
column = "owd_s"
aggregate = "p95"
where = { name = "a" }
unit = "s"

[[metrics]]
name = "utilisation"
table = "links"
column = "utilisation"
where = { link = "bottleneck" }

[[claims]]
id = "Q1"
text = "A ten times larger buffer raises flow a's 95th-percentile one-way delay"
form = "directional"
metric = "owd_p95"
compare = { factor = "limit", test = "100pkt", ref = "10pkt" }
side = "above"
threshold = 0.005
'''


def test_a_base_scenario_by_path_and_a_series_metric(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(BASE)
    (tmp_path / "s.toml").write_text(FROM_PATH)
    res = S.run(tmp_path / "s.toml", tmp_path / "out", jobs=1, progress=False)
    assert _verdicts(res.findings) == {"Q1": "held"}  # 90 more packets at 10 Mbit/s: ~108 ms more queueing
    runs = res.tables["runs"]
    assert runs["utilisation"].between(0.5, 1.0).all() and runs["owd_p95"].gt(0.012).all()
    # A series needs its [record]; an error in the base file is put on that file's line.
    (tmp_path / "base.toml").write_text(BASE.replace('record = { owd = ["a"] }\n', ""))
    with pytest.raises(ScenarioError) as err:
        S.load(tmp_path / "s.toml")
    assert err.value.path == "metrics[0].table" and err.value.line == 11
    (tmp_path / "base.toml").write_text(BASE.replace('duration = "3s"', "duration = 3"))
    with pytest.raises(ScenarioError) as err:
        S.load(tmp_path / "s.toml")
    assert err.value.file == str(tmp_path / "base.toml") and err.value.line == 1 and err.value.path == "duration"
