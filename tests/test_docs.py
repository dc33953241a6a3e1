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


ROOT = DOC.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A citation of a file outside the repository: the shared folder the project started from,
# or an absolute path on some machine (commands such as /usr/bin/time are not citations).
OUTSIDE = re.compile(r"(?<![\w.-])(?:\.\./)*shared/|(?<![\w.:/-])/(?:work|home|tmp|root|mnt|srv)/")


def test_docs_cite_no_path_outside_the_repository() -> None:
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in OUTSIDE.finditer(text):
            found.append(f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
        # Relative links must resolve inside the repository.
        for target in re.findall(r"\]\(([^)#\s]+)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.is_relative_to(ROOT.resolve()):
                found.append(f"{page.relative_to(ROOT)}: link {target} leaves the repository")
    assert not found, "\n".join(found)


def test_readme_demo_time_is_the_measured_one() -> None:
    """README.md states no time for `make demo` that docs/studies/all.md does not measure."""
    readme = (ROOT / "README.md").read_text()
    quick = readme[readme.index("## Quick start"):readme.index("## Using it")]
    measured = (ROOT / "docs" / "studies" / "all.md").read_text()
    measured = measured[measured.index("## `make demo`: measured"):]
    times = re.findall(r"\d+(?:\.\d+)?\s*(?:min(?:utes?)?(?:\s+\d+\s*s)?|s\b|seconds)", quick)
    assert all(t in measured for t in times), (times, "README.md's make demo time is not docs/studies/all.md's")
    assert "docs/studies/all.md" in quick


def _reachable_models(root: type, seen: set[type] | None = None) -> set[type]:
    """Every pydantic model a scenario file can contain below ``root``: field types, list items and union variants."""
    import typing

    from pydantic import BaseModel

    seen = set() if seen is None else seen

    def walk(tp: object) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in seen:
                seen.add(tp)
                for info in tp.model_fields.values():
                    walk(info.rebuild_annotation() if hasattr(info, "rebuild_annotation") else info.annotation)
            return
        for arg in typing.get_args(tp):
            walk(arg)

    walk(root)
    return seen


def test_every_table_a_scenario_can_hold_has_its_section() -> None:
    """The reference's sections cover every model reachable from a scenario, so a new queue,
    error model, topology or flow kind cannot be left out of docs/scenarios.md."""
    from tcplab.scenario import Scenario
    from tcplab.scenario.reference import SECTIONS

    documented = {model for _, model in SECTIONS}
    missing = sorted(m.__name__ for m in _reachable_models(Scenario) - documented)
    assert not missing, f"models with no section in docs/scenarios.md: {missing}"
