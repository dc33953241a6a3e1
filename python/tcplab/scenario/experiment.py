"""The ``[sweep]`` table of an experiment file (``tcplab sweep``).

An experiment file is a scenario plus a ``[sweep]`` table: ``replications``, ``seed``,
and any other key is a parameter path into the scenario (``"tcp.iw"``) mapped to the
non-empty list of values it takes. TOML reads a dotted key as nested tables, so the
table is flattened back to paths before validation (:func:`sweep_paths`).
"""

from __future__ import annotations

from typing import Any, Iterator

from pydantic import model_validator

from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import ScenarioError, near

__all__ = ["SweepTable", "sweep_paths", "SWEEP_KEYS_TEXT", "RESERVED"]

SWEEP_KEYS_TEXT = "replications, seed, and parameter paths like \"tcp.iw\" = [3, 10]"
#: The keys of ``[sweep]`` that are not parameters.
RESERVED = ("replications", "seed")


class SweepTable(Model):
    """The grid and replications of an experiment (``[sweep]``).

    Example:
        >>> t = SweepTable.from_document({"replications": 2, "params": {"tcp.iw": [3, 10]}})
        >>> t.replications, t.seed, t.params
        (2, 0, {'tcp.iw': [3, 10]})
    """

    replications: int = fld(1, "Runs per grid point (a sweep runs at most 100,000 runs: grid points x "
                               "replications).", ge=1, le=100_000)
    seed: int = fld(0, "Replication r runs with seed `seed + r` at every grid point (common random numbers).",
                    ge=0, le=2**63 - 1)
    params: dict[str, Any] = fld(
        doc="A parameter path (`\"tcp.iw\"`, `\"topology.bottleneck.queue.limit\"`, `\"flows[0].bytes\"`) and its "
        "values, written as in the scenario (with units).", factory=dict,
    )

    @model_validator(mode="after")
    def _each_parameter_has_values(self) -> "SweepTable":
        for key, value in self.params.items():
            if not isinstance(value, list) or not value:
                raise ScenarioError(key, "a swept parameter takes a non-empty list of values", value=value,
                                    accepted="a list like [3, 10]", suggestion=near(key, RESERVED))
        if not self.params:
            raise ScenarioError("", "names no parameter to sweep", accepted=SWEEP_KEYS_TEXT)
        return self

    @classmethod
    def from_table(cls, doc: dict[str, Any]) -> "SweepTable":
        """Validates a parsed ``[sweep]`` table; error paths start with ``sweep``."""
        reserved: dict[str, Any] = {}
        params: dict[str, Any] = {}
        for key, value in sweep_paths(doc):
            (reserved if key in RESERVED else params)[key] = value
        try:
            return cls.from_document({**reserved, "params": params})
        except ScenarioError as e:
            e.path = e.path.removeprefix("params.").removeprefix("params")
            raise e.prefixed("sweep") from None


def sweep_paths(doc: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of every leaf of a ``[sweep]`` table.

    Example:
        >>> list(sweep_paths({"tcp": {"iw": [3]}, "replications": 2}))
        [('tcp.iw', [3]), ('replications', 2)]
    """
    for key, value in doc.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and path not in RESERVED:
            yield from sweep_paths(value, path)
        else:
            yield path, value
