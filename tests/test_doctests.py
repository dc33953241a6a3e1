"""Runs the docstring examples of every tcplab module, so documented examples stay true."""

import doctest
import importlib

import pytest

MODULES = ["__init__", "units", "registry", "scenario", "stats", "results", "runner", "sweeps", "executor", "plots", "report", "cli"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module("tcplab" if name == "__init__" else f"tcplab.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in tcplab.{name}"
