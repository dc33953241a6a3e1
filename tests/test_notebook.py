"""docs/tutorial.ipynb, the Jupyter starting point, runs from top to bottom on this build.

The notebook is executed by nbclient in a fresh kernel (ipykernel's native ``python3``
kernel, which is the interpreter running this test: the project's .venv), exactly as a
user's Jupyter runs it; any cell that raises fails the test. Its runs are a few
simulated seconds on a 10 Mbit/s link (about 2 s of wall time for the whole notebook).
"""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "tutorial.ipynb"


def _outputs(nb: nbformat.NotebookNode) -> str:
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            texts.append(out.get("text", ""))
            for mime in ("text/plain", "text/html"):
                texts.append(str(out.get("data", {}).get(mime, "")))
    return "\n".join(texts)


def test_tutorial_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), (
        "docs/tutorial.ipynb is stored with outputs; clear them (they go stale with the code)")
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = _outputs(nb)
    # The run's HTML summary (RunResult._repr_html_) names the flows with their units.
    assert "tcplab run: cubic-vs-bbr" in text and "goodput (Mbit/s)" in text and "bbr" in text
    # The cwnd figure came out as a PNG.
    assert any("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))
    # The sweep without a random element is flagged.
    assert "replications are identical: this scenario has no random element" in text
