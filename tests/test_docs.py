"""docs/scenarios.md is generated from the validator's schema and must not drift."""

import re
from pathlib import Path

from tcplab.scenario import Scenario, reference_markdown
from tcplab.sweeps import Experiment

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"


def test_reference_is_up_to_date() -> None:
    assert DOC.read_text() == reference_markdown(), (
        "docs/scenarios.md is stale: regenerate it with `.venv/bin/python -m tcplab.scenario > docs/scenarios.md`"
    )


def test_toml_blocks_in_the_reference_validate() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 2
    scenario = blocks[0]
    Scenario.from_toml(scenario, "docs/scenarios.md")
    for block in blocks[1:]:
        if block.lstrip().startswith("[sweep]"):
            Experiment.from_toml(scenario + "\n" + block, "docs/scenarios.md")


def test_every_field_of_the_schema_is_documented() -> None:
    from tcplab.scenario.reference import SECTIONS, documented_fields

    text = DOC.read_text()
    for _, model in SECTIONS:
        for name, _info in documented_fields(model):
            assert f"| `{name}` |" in text, (model.__name__, name)


def test_every_recorded_series_is_documented_with_its_columns() -> None:
    from tcplab.results import COLUMNS, SERIES

    text = DOC.read_text()
    for name in SERIES:
        rows = [line for line in text.splitlines() if line.startswith(f"| `{name}` | `")]
        assert any(all(f"`{c}`" in row for c in COLUMNS[f"series_{name}"]) for row in rows), name
