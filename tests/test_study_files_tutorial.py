"""docs/study-files-tutorial.md stays true to examples/studies/fq-codel-fairness.toml.

Every TOML excerpt of the tutorial is a piece of the example (comments aside), the
excerpts together are the whole example, and the errors it shows for its two mistakes are
the ones the loader gives today. (The run outputs it pastes are a measured record; the
verdicts are re-checked by tests/test_studyfile.py's own runs.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcplab.scenario import ScenarioError
from tcplab.studies.studyfile import StudyFile

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "study-files-tutorial.md"
EXAMPLE = ROOT / "examples" / "studies" / "fq-codel-fairness.toml"


def _code(text: str) -> list[str]:
    """The lines of a TOML text without comments and blank lines."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line) if not line.lstrip().startswith("#") else ""
        if line.strip():
            out.append(line.rstrip())
    return out


def test_every_toml_excerpt_is_the_example_and_together_they_are_all_of_it() -> None:
    example = _code(EXAMPLE.read_text())
    blocks = [_code(b) for b in re.findall(r"```toml\n(.*?)```", TUTORIAL.read_text(), re.S)]
    assert len(blocks) >= 10
    covered: set[int] = set()
    for block in blocks:
        starts = [i for i in range(len(example) - len(block) + 1) if example[i:i + len(block)] == block]
        assert starts, f"not a piece of {EXAMPLE.name}:\n" + "\n".join(block)
        covered |= set(range(starts[0], starts[0] + len(block)))
    assert covered == set(range(len(example))), [example[i] for i in sorted(set(range(len(example))) - covered)]


@pytest.mark.parametrize("old, new", [
    ('side = "below"\nnegligible = 0.01\nscope = { cc_a = "bbr" }', 'side = "lower"\nnegligible = 0.01\nscope = { cc_a = "bbr" }'),
    ('scope = { queue = "fq_codel", cc_a = "bbr" }', 'scope = { queue = "fq-codel", cc_a = "bbr" }'),
])
def test_the_mistakes_shown_give_the_errors_shown(old: str, new: str) -> None:
    text = EXAMPLE.read_text()
    assert old in text
    with pytest.raises(ScenarioError) as e:
        StudyFile.from_toml(text.replace(old, new), "fq-codel-fairness.toml")
    tutorial = TUTORIAL.read_text()
    for problem in e.value.problems:
        assert f"error: {problem.one_line()}\n" in tutorial, problem.one_line()
