"""The published JSON Schemas (scenario and study files): in sync with the models, and checked
by a real client (Taplo) and, where the `jsonschema` package is installed, by a validator."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tcplab.cli import main
from tcplab.scenario import json_schema, json_schema_text, parse_toml, study_json_schema, study_json_schema_text

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "scenario.schema.json"
STUDY_SCHEMA = ROOT / "schema" / "study.schema.json"
# Every scenario and experiment file; a fidelity grid's grid.toml lists scenario files and is
# validated by tcplab.fidelity_grid instead (.taplo.toml excludes it); a study file
# (examples/studies/) has its own schema (a rule of .taplo.toml).
STUDY_FILES = sorted((ROOT / "examples" / "studies").glob("*.toml"))
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.toml") if p.name != "grid.toml" and p not in STUDY_FILES)


def test_checked_in_schema_matches_the_models() -> None:
    assert SCHEMA.read_text() == json_schema_text(), (
        "schema/scenario.schema.json is stale: regenerate it with `.venv/bin/tcplab schema > schema/scenario.schema.json`"
    )


def test_cli_prints_the_schema(capsys) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema()


def test_hover_docs_carry_type_unit_range_and_default() -> None:
    defs = json_schema()["$defs"]
    rate = defs["Link"]["properties"]["rate"]
    assert "Transmission rate." in rate["description"] and ">= 1bps" in rate["description"]
    assert "Default: the preset's" in rate["description"] and rate["type"] == "string"
    pairs = defs["Dumbbell"]["properties"]["pairs"]
    assert (pairs["minimum"], pairs["maximum"], pairs["default"]) == (1, 100_000, 1)
    assert json_schema()["properties"]["max_duration"]["default"] == "3600s"
    assert defs["DropTail"]["required"][0] == "kind"


def _taplo() -> str | None:
    local = ROOT / ".tools" / "node_modules" / ".bin" / "taplo"
    return str(local) if local.exists() else shutil.which("taplo")


def _lint(taplo: str, files: list[Path], schema: Path = SCHEMA) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [taplo, "lint", "--no-auto-config", "--colors", "never", "--schema", schema.as_uri(), *map(str, files)],
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_taplo_accepts_every_example_and_rejects_a_broken_copy(tmp_path: Path) -> None:
    taplo = _taplo()
    if taplo is None:
        pytest.skip("Taplo's CLI is not installed (`make tools` installs @taplo/cli with npm)")
    assert EXAMPLES
    ok = _lint(taplo, EXAMPLES)
    assert ok.returncode == 0, ok.stderr[-2000:]
    source = ROOT / "examples" / "hspa_bursts.toml"
    text = source.read_text()
    assert 'delay = "70ms"' in text
    broken = tmp_path / "broken.toml"
    broken.write_text(text.replace('delay = "70ms"', "delay = 70"))  # a delay without its unit
    bad = _lint(taplo, [broken])
    assert bad.returncode != 0 and "schema validation failed" in bad.stderr and "broken.toml" in bad.stderr
    misspelt = tmp_path / "misspelt.toml"
    misspelt.write_text(text + "\n[cc]\nnmae = \"reno\"\n")  # an unknown key
    bad = _lint(taplo, [misspelt])
    assert bad.returncode != 0 and "'nmae' was unexpected" in bad.stderr


def test_the_projects_taplo_config_maps_examples_to_the_schema() -> None:
    taplo = _taplo()
    if taplo is None:
        pytest.skip("Taplo's CLI is not installed (`make tools` installs @taplo/cli with npm)")
    proc = subprocess.run([taplo, "lint", "--colors", "never"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    excluded = len(sorted((ROOT / "examples").rglob("grid.toml")))
    assert STUDY_FILES and f"found files total={len(EXAMPLES) + len(STUDY_FILES) + excluded} excluded={excluded}" \
        in proc.stderr


# --------------------------------------------------------------------------------------
# Study files (python/tcplab/studies/studyfile.py; docs/study-files.md)

#: (name, edit of the example, the path a validator blames, text on a line Taplo marks): a broken copy each.
BROKEN_STUDIES = [
    ("unknown-claim-form", ('form = "equivalent"', 'form = "equivalnet"'), ["claims", 0, "form"],
     'form = "equivalnet"'),
    ("factor-without-path", ('path = "flows[0].cc.name"\n', ""), ["factors", 1], 'name = "cc_a"'),
    ("unitless-delay-in-the-scenario", ('delay = "18ms"', "delay = 18"),
     ["scenario", "topology", "bottleneck", "delay"], "delay = 18,"),
    ("unknown-metric-table", ('table = "links"', 'table = "link"'), ["metrics", 2, "table"], 'table = "link"'),
]


def test_checked_in_study_schema_matches_the_models() -> None:
    assert STUDY_SCHEMA.read_text() == study_json_schema_text(), (
        "schema/study.schema.json is stale: regenerate it with "
        "`.venv/bin/tcplab schema --study > schema/study.schema.json`"
    )


def test_cli_prints_the_study_schema(capsys) -> None:
    assert main(["schema", "--study"]) == 0
    assert json.loads(capsys.readouterr().out) == study_json_schema()


def test_study_schema_has_hover_docs_and_embeds_the_scenario_schema() -> None:
    s = study_json_schema()
    props, defs = s["properties"], s["$defs"]
    assert props["reps"]["minimum"] == 2 and props["reps"]["default"] == 10
    assert "Replications of every configuration" in props["reps"]["description"]
    assert "Type: integer; in [2, 100000]." in props["reps"]["description"]
    path = defs["Factor"]["properties"]["path"]["description"]
    assert "The scenario path it sets" in path and "Default: **required**." in path
    assert set(defs["Factor"]["required"]) == {"name", "path", "values"}
    assert defs["Claim"]["properties"]["form"]["enum"] == ["directional", "equivalent", "differs", "contrast", "every",
                                                           "share", "only"]
    assert defs["Claim"]["additionalProperties"] is False and s["additionalProperties"] is False
    # The inline scenario is the scenario schema (without [sweep]); a string is a scenario file's path.
    scenario = json_schema()
    assert props["scenario"]["then"] == {"$ref": "#/$defs/Scenario"}
    assert props["scenario"]["type"] == ["object", "string"] and "string (a path)" in props["scenario"]["description"]
    assert defs["Scenario"]["properties"] == {k: v for k, v in scenario["properties"].items() if k != "sweep"}
    assert all(defs[k] == v for k, v in scenario["$defs"].items() if k != "SweepValues")


def _study_copies(folder: Path) -> list[tuple[str, Path, list, str]]:
    """The broken copies of the example study, written into ``folder``."""
    text = (ROOT / "examples" / "studies" / "fq-codel-fairness.toml").read_text()
    out = []
    for name, (old, new), where, marked in BROKEN_STUDIES:
        assert old in text, old
        f = folder / f"{name}.toml"
        f.write_text(text.replace(old, new, 1))
        out.append((name, f, where, marked))
    return out


def _by_path(text: str) -> str:
    """A study file's text with its inline ``[scenario]`` replaced by a scenario file's path."""
    return text.split("[scenario]", 1)[0] + 'scenario = "base.toml"\n\n[[factors]]' + text.split("[[factors]]", 1)[1]


def test_taplo_accepts_the_study_example_and_rejects_broken_copies(tmp_path: Path) -> None:
    """One `taplo lint` with the project's .taplo.toml, over a copy of its layout: the study
    files (the examples, one with its scenario by path, the broken copies) against the study
    schema, each broken copy marked on its bad line; a scenario file beside them still
    against the scenario schema."""
    taplo = _taplo()
    if taplo is None:
        pytest.skip("Taplo's CLI is not installed (`make tools` installs @taplo/cli with npm)")
    assert STUDY_FILES
    shutil.copy(ROOT / ".taplo.toml", tmp_path)
    shutil.copytree(ROOT / "schema", tmp_path / "schema")
    studies = tmp_path / "examples" / "studies"
    studies.mkdir(parents=True)
    for f in STUDY_FILES:
        shutil.copy(f, studies)
    inline = next(f for f in STUDY_FILES if "[scenario]" in f.read_text())
    (studies / "by-path.toml").write_text(_by_path(inline.read_text()))
    broken = _study_copies(studies)
    scenario = (ROOT / "examples" / "hspa_bursts.toml").read_text()
    (tmp_path / "examples" / "scenario.toml").write_text(scenario)
    (tmp_path / "examples" / "broken-scenario.toml").write_text(scenario.replace('delay = "70ms"', "delay = 70"))
    proc = subprocess.run([taplo, "lint", "--colors", "never"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    failed = set(re.findall(r'schema validation failed path="([^"]+)"', proc.stderr))
    assert failed == {str(f) for _, f, _, _ in broken} | {str(tmp_path / "examples" / "broken-scenario.toml")}, \
        proc.stderr[-3000:]
    for name, f, _, marked in broken:
        lines = {int(n) for n in re.findall(rf"{re.escape(str(f))}:(\d+):\d+", proc.stderr)}
        at = [n for n, line in enumerate(f.read_text().splitlines(), 1) if marked in line]
        assert len(at) == 1 and at[0] in lines, (name, at, sorted(lines))


def test_jsonschema_accepts_the_study_example_and_rejects_broken_copies(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(STUDY_SCHEMA.read_text()))
    for f in STUDY_FILES:
        doc = parse_toml(f.read_text(), str(f))
        assert list(validator.iter_errors(doc)) == [], f
        if "[scenario]" in f.read_text():  # an inline scenario, given by path instead
            assert list(validator.iter_errors(parse_toml(_by_path(f.read_text())))) == [], f
    for name, f, where, _ in _study_copies(tmp_path):
        errors = list(validator.iter_errors(parse_toml(f.read_text(), str(f))))
        assert [list(e.absolute_path) for e in errors] == [where], (name, [e.message for e in errors])
