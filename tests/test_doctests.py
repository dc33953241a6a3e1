"""Runs the docstring examples of every tcplab module, so documented examples stay true.

The study machinery and every study package are collected by walking
``tcplab.studies``, so a new study module is covered without being listed here.
"""

import doctest
import importlib
import pkgutil

import pytest

import tcplab.studies

MODULES = ["__init__", "units", "registry", "scenario", "stats", "results", "runner", "sweeps", "executor", "plots", "report", "cli",
           "scenario.errors", "scenario.locate", "scenario.corecheck", "scenario.model", "scenario.flows",
           "scenario.network", "scenario.quantities", "scenario.tcp", "scenario.base", "scenario.experiment", "scenario.schema",
           "fidelity", "fidelity_grid"]
STUDY_MODULES = sorted(m.name for m in pkgutil.walk_packages(tcplab.studies.__path__, "tcplab.studies."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module("tcplab" if name == "__init__" else f"tcplab.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in tcplab.{name}"


@pytest.mark.parametrize("name", ["tcplab.studies", *STUDY_MODULES])
def test_study_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
