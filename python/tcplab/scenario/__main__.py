"""``python -m tcplab.scenario``: prints the scenario reference (docs/scenarios.md)."""

from tcplab.scenario.reference import reference_markdown

print(reference_markdown(), end="")
