"""The published JSON Schema: in sync with the models, and checked by a real client (Taplo)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tcplab.cli import main
from tcplab.scenario import json_schema, json_schema_text

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "scenario.schema.json"
# Every scenario and experiment file; a fidelity grid's grid.toml lists scenario files and is
# validated by tcplab.fidelity_grid instead, and a study file (examples/studies/) by
# tcplab.studies.studyfile (.taplo.toml excludes both).
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


def _lint(taplo: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [taplo, "lint", "--no-auto-config", "--colors", "never", "--schema", SCHEMA.as_uri(), *map(str, files)],
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
    excluded = len(sorted((ROOT / "examples").rglob("grid.toml"))) + len(STUDY_FILES)
    assert f"found files total={len(EXAMPLES) + excluded} excluded={excluded}" in proc.stderr
