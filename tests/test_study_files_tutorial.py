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


@pytest.mark.timeout(300)
def test_the_pasted_verdicts_are_the_ones_the_example_gives_today(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Step 8's verdict lines are what `tcplab study run` prints for the example now, digit
    for digit: a change to the model that moves a statistic makes this fail, and the
    tutorial's outputs are then re-run and pasted again (its steps 8-12)."""
    from tcplab.cli import main

    step8 = TUTORIAL.read_text().split("## 8. Run it", 1)[1].split("```", 2)[1]
    pasted = [line for line in step8.splitlines() if re.match(r"C\d+ ", line)]
    assert len(pasted) == 7, step8
    assert main(["study", "run", str(EXAMPLE), "--jobs", "2", "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if re.match(r"C\d+ ", line)]
    assert printed == pasted
