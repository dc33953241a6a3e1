"""Runs the docstring examples of every tcplab module, so documented examples stay true."""

import doctest
import importlib

import pytest

MODULES = ["__init__", "units", "registry", "scenario", "stats", "results", "runner", "sweeps", "executor", "plots", "report", "cli",
           "scenario.errors", "scenario.locate", "scenario.corecheck", "scenario.model", "scenario.flows",
           "scenario.network", "scenario.quantities", "scenario.tcp", "scenario.base", "scenario.experiment"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module("tcplab" if name == "__init__" else f"tcplab.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in tcplab.{name}"
