"""Your own study in one file: ``tcplab study run FILE.toml`` (``examples/studies/``).

A study file states a question and answers it the way a bundled study does
(``docs/architecture.md``, "Bundled studies"), without writing a package:

- ``scenario``: the base scenario, an inline table or the path of a scenario file
  (relative to the study file), in the format of ``docs/scenarios.md``;
- ``[[factors]]``: scenario paths and their values, crossed into configurations as
  ``tcplab sweep`` crosses its ``[sweep]`` keys (values are set by
  :func:`tcplab.sweeps._set_path`), each value with a label, and optional named
  ``subsets`` of labels that a claim's scope may name;
- ``reps`` and ``seed``: replication ``r`` of every configuration runs with seed
  ``seed + r`` (common random numbers, as in :mod:`tcplab.sweeps`);
- ``[[metrics]]``: one number per run from a result table (:data:`tcplab.results.TABLES`
  or a recorded ``series_*``): a column, a filter on the rows (``where``), and an
  aggregate (:data:`AGGREGATES`);
- ``[[claims]]``: the claim forms of the bundled studies' ledgers
  (:mod:`tcplab.studies.findings`): ``directional``, ``equivalent``, ``differs``,
  ``contrast`` and the quantifiers ``every``, ``share`` and ``only`` over a ``base``
  form, each on a metric, either paired between two values of a factor (``compare``)
  or on the metric's level, within a ``scope`` stated as factor values.

Everything else is the shared machine's: :class:`FileStudy` is a
:class:`tcplab.studies.engine.StudyDefinition`, so the runs are resumable tasks on a
process pool or Dask (:func:`tcplab.studies.engine.run_study`); the verdicts, the
replications needed for inconclusive ones and ``findings.json`` are
:mod:`tcplab.studies.findings`'; ``report.html`` is built from
:mod:`tcplab.studies.reporting`. Bad input is a :class:`tcplab.scenario.ScenarioError`
naming the file, the line (:class:`tcplab.scenario.TomlLocator`), the field, the value
and what is accepted, raised before anything runs; every configuration's scenario is
checked, and a problem of some configurations only names the factor values it needs
(``configuration queue=fq_codel, cc_a=bbr``, :meth:`StudyFile.configurations_text`).
``tcplab check FILE.toml`` runs the same checks, and ``schema/study.schema.json``
(:func:`tcplab.scenario.schema.study_json_schema`) lets an editor check the file's shape.

Example:
    >>> sf = StudyFile.from_toml(TEMPLATE.format(name="demo"), "demo.toml")
    >>> [f.name for f in sf.factors], [m.name for m in sf.metrics], [c.id for c in sf.claims]
    (['cc'], ['goodput_share'], ['C1'])
    >>> len(sf.configurations()), sf.reps
    (2, 6)
"""

from __future__ import annotations

import copy
import html
import itertools
import json
import math
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import pandas as pd
from pydantic import model_validator

from tcplab.results import COLUMNS, SERIES, TABLES
from tcplab.scenario import Scenario, ScenarioError, TomlLocator, located, parse_toml, read_text
from tcplab.scenario.base import Model, fld
from tcplab.scenario.errors import near
from tcplab.scenario.quantities import Choice
from tcplab.studies import engine
from tcplab.studies import findings as F
from tcplab.studies.engine import BlockTask, StudyResult

__all__ = ["StudyFile", "Factor", "Metric", "Claim", "FileStudy", "RunParams", "load", "run", "metric_value",
           "simulate_block", "identical_warning", "side_by_side", "check_emulable", "reference_markdown", "TEMPLATE", "AGGREGATES", "FORMS", "STUDY_VERSION"]

#: Bumped when a task's results change, so old task files are not reused.
STUDY_VERSION = 1
#: Replications per task (a task is one configuration x a block of replications), so
#: raising ``--reps`` reuses the blocks already run.
BLOCK = 5

#: The tables a metric may read: the summary tables and the recorded series.
METRIC_TABLES = tuple(TABLES) + tuple(f"series_{s}" for s in SERIES)
#: The ``[record]`` key each series needs (docs/scenarios.md, "[record]").
_SERIES_RECORD = {"series_cwnd": "cwnd", "series_queue": "queue", "series_owd": "owd", "series_drops": "drops",
                  "series_throughput": "throughput_interval", "series_packets": "packets"}
#: The aggregates of a metric over the rows it selects in one run.
AGGREGATES = ("mean", "median", "sum", "min", "max", "std", "count", "jain", "share", "pNN (a percentile, p0..p100)")
_PERCENTILE = re.compile(r"^p(100|\d{1,2}(\.\d+)?)$")
#: The claim forms (:mod:`tcplab.studies.findings`), and the base forms of the quantifiers.
FORMS = ("directional", "equivalent", "differs", "contrast", "every", "share", "only")
BASE_FORMS = ("directional", "equivalent", "differs")
#: Columns of the runs table besides the factors and metrics.
RUN_META = ("rep", "seed", "events", "digest")
#: ``--mode emulate``: every replication runs on both engines, the simulator (``sim``) and
#: real Linux TCP through the emulator (``kernel``, docs/emulation.md), on the same
#: scenario and seed; these columns follow :data:`RUN_META` in the runs table.
ENGINES = ("sim", "kernel")
EMULATE_META = ("engine", "wall_s", "sched_p99_s", "behind", "kernel_release")
#: Keys of a task's spec, which a factor may not be named.
_SPEC_KEYS = ("study", "version", "scenario", "reps", "metrics", "factors")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Scalar = str | int | float | bool
Selection = str | list[str]


# --------------------------------------------------------------------------------------
# The file's tables


class Factor(Model):
    """A ``[[factors]]`` entry: a scenario path and the values it takes, each with a label."""

    name: str = fld(doc="The factor's name: its column in the tables, and its key in a claim's scope.")
    path: str = fld(doc="The scenario path it sets, as a `[sweep]` key: `\"flows[0].cc.name\"`, "
                        "`\"topology.bottleneck.queue\"`.")
    values: list[Any] = fld(doc="The values, written as in the scenario (with units); tables allowed.")
    labels: list[str] | None = fld(None, "A label per value (default: the value itself; for a table its `kind`).")
    subsets: dict[str, list[str]] = fld(doc="Named subsets of the labels, usable in a scope.", factory=dict)

    @model_validator(mode="after")
    def _labelled(self) -> "Factor":
        problems = []
        if not _NAME.match(self.name) or self.name in RUN_META + _SPEC_KEYS:
            problems.append(ScenarioError("name", "must be a name (letters, digits, _) other than "
                                          + ", ".join(RUN_META + _SPEC_KEYS), value=self.name))
        if not self.values:
            problems.append(ScenarioError("values", "needs at least one value", accepted="a list like [3, 10]"))
        if self.labels is None:
            self.labels = _default_labels(self.values)
        elif len(self.labels) != len(self.values):
            problems.append(ScenarioError("labels", f"needs one label per value ({len(self.values)})",
                                          value=self.labels))
        if len(set(self.labels)) != len(self.labels):
            problems.append(ScenarioError("labels", "two values have the same label; give `labels`",
                                          value=self.labels))
        for sub, members in self.subsets.items():
            bad = [m for m in members if m not in self.labels]
            if bad or sub in self.labels or not members:
                problems.append(ScenarioError(f"subsets.{sub}", "must be a non-empty list of this factor's labels, "
                                              "named unlike any label", value=members,
                                              accepted=", ".join(self.labels)))
        if problems:
            raise ScenarioError.joined(problems)
        return self

    def select(self, sel: Selection) -> list[str] | None:
        """The labels a scope's value names (labels, or a subset's name); ``None`` if unknown.

        Example:
            >>> Factor(name="q", path="x", values=[1, 2, 3], subsets={"low": ["1", "2"]}).select(["low", "3"])
            ['1', '2', '3']
        """
        out: list[str] = []
        for s in [sel] if isinstance(sel, str) else sel:
            if s in (self.labels or []):
                out.append(s)
            elif s in self.subsets:
                out += self.subsets[s]
            else:
                return None
        return list(dict.fromkeys(out))


def _default_labels(values: list[Any]) -> list[str]:
    """A label per value: a scalar as written, a table by its ``kind`` (JSON when kinds repeat).

    Example:
        >>> _default_labels([3, "cubic", True, {"kind": "codel"}])
        ['3', 'cubic', 'true', 'codel']
    """
    kinds = [v.get("kind") for v in values if isinstance(v, dict)]
    out = []
    for v in values:
        if isinstance(v, bool):
            out.append("true" if v else "false")
        elif isinstance(v, dict) and v.get("kind") and kinds.count(v.get("kind")) == 1:
            out.append(str(v["kind"]))
        elif isinstance(v, (dict, list)):
            out.append(json.dumps(v, sort_keys=True))
        else:
            out.append(str(v))
    return out


class Metric(Model):
    """A ``[[metrics]]`` entry: one number per run from a result table."""

    name: str = fld(doc="The metric's name: its column in the runs table, and what a claim names.")
    table: str = fld(doc="The table it reads: " + ", ".join(METRIC_TABLES) + " (series need their `[record]`).")
    column: str = fld(doc="The column aggregated (docs/scenarios.md; python/tcplab/results.py lists them).")
    aggregate: str = fld("mean", "How the selected rows become one number: " + ", ".join(AGGREGATES) + ".")
    where: dict[str, Scalar | list[Scalar]] = fld(doc="Keep only rows whose column has one of these values "
                                                      "(series with a flow_id also have the flow's `name` and "
                                                      "`group`).", factory=dict)
    part: dict[str, Scalar | list[Scalar]] = fld(doc="`share` only: the rows of the numerator, among those kept.",
                                                 factory=dict)
    unit: str = fld("", "The unit shown with the metric's values.")

    @model_validator(mode="after")
    def _known(self) -> "Metric":
        problems = []
        if not _NAME.match(self.name):
            problems.append(ScenarioError("name", "must be a name (letters, digits, _)", value=self.name))
        if self.table not in METRIC_TABLES:
            problems.append(ScenarioError("table", "unknown table", value=self.table,
                                          accepted=", ".join(METRIC_TABLES), suggestion=near(self.table, METRIC_TABLES)))
            raise ScenarioError.joined(problems)
        cols = list(COLUMNS[self.table]) + (["name", "group"] if "flow_id" in COLUMNS[self.table] else [])
        for where, col in [("column", self.column), *((f"where.{k}", k) for k in self.where),
                           *((f"part.{k}", k) for k in self.part)]:
            if col not in cols:
                problems.append(ScenarioError(where, f"no such column in table {self.table}", value=col,
                                              accepted=", ".join(cols), suggestion=near(col, cols)))
        if not (self.aggregate in AGGREGATES[:-1] or _PERCENTILE.match(self.aggregate)):
            problems.append(ScenarioError("aggregate", "unknown aggregate", value=self.aggregate,
                                          accepted=", ".join(AGGREGATES), suggestion=near(self.aggregate, AGGREGATES)))
        elif (self.aggregate == "share") != bool(self.part):
            problems.append(ScenarioError("part", "is given with aggregate = \"share\", and only with it",
                                          value=self.part or None))
        if problems:
            raise ScenarioError.joined(problems)
        return self


class Compare(Model):
    """A paired comparison: per replication and configuration, ``test - ref`` of a factor."""

    factor: str = fld(doc="The factor whose two values are compared.")
    test: str = fld(doc="The label (value) compared.")
    ref: str = fld(doc="The label it is compared with.")
    relative: bool = fld(False, "Divide each difference by the `ref` value (a relative difference).")


class Between(Model):
    """A contrast's two conditions: the effect under ``test`` minus the effect under ``ref``."""

    factor: str = fld(doc="The factor whose two values are the conditions.")
    test: str = fld(doc="The condition whose effect comes first.")
    ref: str = fld(doc="The condition whose effect is subtracted.")


class Claim(Model):
    """A ``[[claims]]`` entry: a sentence, its claim form and its parameters, fixed before any run."""

    id: str = fld(doc="The claim's id (its finding's id in findings.json and the report).")
    text: str = fld(doc="The sentence claimed.")
    form: Annotated[str, Choice(lambda: list(FORMS))] = fld(doc="The claim form (python/tcplab/studies/findings.py).")
    metric: str = fld(doc="The metric (a `[[metrics]]` name).")
    base: Optional[Annotated[str, Choice(lambda: list(BASE_FORMS))]] = fld(
        None, "every / share / only: the form each configuration is judged by.")
    side: Optional[Annotated[str, Choice(lambda: ["above", "below"])]] = fld(
        None, "directional, contrast: the claimed side.")
    threshold: float = fld(0.0, "directional, contrast: the size the words ask for (0: a plain direction).")
    negligible: float | None = fld(None, "directional, contrast: a band around 0 that counts as no effect.")
    margin: float | None = fld(None, "equivalent, differs: the margin.")
    at_least: float | None = fld(None, "share: the fraction of configurations that must hold.")
    only: dict[str, Selection] | None = fld(None, "only: the configurations that hold (factor values); every "
                                                  "other must be contradicted.")
    compare: Compare | None = fld(None, "Paired difference between two values of a factor (default: the "
                                        "metric's level).")
    between: Between | None = fld(None, "contrast: the two conditions whose effects are subtracted.")
    baseline: float = fld(0.0, "Without `compare`: the statistic is the metric minus this.")
    scope: dict[str, Selection] = fld(doc="The configurations the claim covers, as factor values "
                                          "(default: all).", factory=dict)

    @model_validator(mode="after")
    def _complete(self) -> "Claim":
        kind = self.base if self.form in ("every", "share", "only") else self.form
        need: list[tuple[str, Any, str]] = []
        if self.form in ("every", "share", "only"):
            need.append(("base", self.base, ", ".join(BASE_FORMS)))
        if kind in ("directional", "contrast"):
            need.append(("side", self.side, "above, below"))
        if kind in ("equivalent", "differs"):
            need.append(("margin", self.margin, "a number > 0"))
        if self.form == "share":
            need.append(("at_least", self.at_least, "a fraction in (0, 1]"))
        if self.form == "only":
            need.append(("only", self.only, "a table of factor values, e.g. { queue = \"drop_tail\" }"))
        if self.form == "contrast":
            need.append(("between", self.between, "{ factor = ..., test = ..., ref = ... }"))
        problems = [ScenarioError(k, f"is required for form = \"{self.form}\"", accepted=acc)
                    for k, v, acc in need if v is None]
        if self.margin is not None and not self.margin > 0:
            problems.append(ScenarioError("margin", "must be > 0", value=self.margin))
        if self.negligible is not None and not self.negligible > 0:
            problems.append(ScenarioError("negligible", "must be > 0", value=self.negligible))
        if self.at_least is not None and not 0 < self.at_least <= 1:
            problems.append(ScenarioError("at_least", "must be a fraction in (0, 1]", value=self.at_least))
        if problems:
            raise ScenarioError.joined(problems)
        return self

    def claim_form(self, where: dict[str, list[str]]) -> F.Form:
        """The :mod:`findings` form; ``where`` is the resolved ``only`` selection."""
        def simple(kind: str) -> F.Form:
            if kind == "directional":
                return F.Directional(self.side or "above", self.threshold, self.negligible)
            if kind == "contrast":
                return F.Contrast(self.side or "above", self.threshold, self.negligible)
            if kind == "equivalent":
                return F.Equivalent(float(self.margin or 0))
            return F.Differs(float(self.margin or 0))

        if self.form == "every":
            return F.Every(simple(self.base or ""))
        if self.form == "share":
            return F.Share(simple(self.base or ""), float(self.at_least or 1))
        if self.form == "only":
            return F.Only(simple(self.base or ""), where)
        return simple(self.form)


class StudyFile(Model):
    """A study file (module doc): base scenario, factors, replications, metrics and claims."""

    name: str = fld("", "The study's name (default: the file's stem).")
    question: str = fld("", "The question the study answers, in words.")
    scenario: dict[str, Any] | str = fld(doc="The base scenario: an inline table, or a scenario file's path "
                                             "relative to this file.")
    reps: int = fld(10, "Replications of every configuration (at least 2, for intervals).", ge=2, le=100_000)
    seed: int = fld(0, "Replication r runs with seed `seed + r` in every configuration (common random numbers).",
                    ge=0, le=2**63 - 1)
    factors: list[Factor] = fld(doc="The factors, crossed into configurations, as `[[factors]]` entries.")
    metrics: list[Metric] = fld(doc="The metrics, one number per run each, as `[[metrics]]` entries.")
    claims: list[Claim] = fld(doc="The claims, as `[[claims]]` entries.", factory=list)

    # Set by :meth:`from_toml`: where the file and its base scenario came from.
    _file: str = "<string>"
    _text: str = ""
    _base: dict[str, Any] = {}

    @model_validator(mode="after")
    def _consistent(self) -> "StudyFile":
        problems: list[ScenarioError] = []
        factors = {f.name: f for f in self.factors}
        if not self.factors:
            problems.append(ScenarioError("factors", "needs at least one factor",
                                          accepted="[[factors]] entries with name, path and values"))
        seen: dict[str, str] = {}
        for i, f in enumerate(self.factors):
            if f.name in seen:
                problems.append(ScenarioError(f"factors[{i}].name", "duplicate name", value=f.name))
            seen[f.name] = "factor"
        paths = [f.path for f in self.factors]
        for i, p in enumerate(paths):
            if p in paths[:i]:
                problems.append(ScenarioError(f"factors[{i}].path", "another factor sets this path", value=p))
        metrics = [m.name for m in self.metrics]
        for i, m in enumerate(self.metrics):
            if m.name in seen:
                problems.append(ScenarioError(f"metrics[{i}].name", f"duplicate name (a {seen[m.name]} has it)",
                                              value=m.name))
            seen[m.name] = "metric"
        ids = [c.id for c in self.claims]

        def selection(where: str, sel: dict[str, Selection]) -> None:
            for k, v in sel.items():
                if k not in factors:
                    problems.append(ScenarioError(f"{where}.{k}", "unknown factor", accepted=", ".join(factors),
                                                  suggestion=near(k, factors)))
                elif factors[k].select(v) is None:
                    problems.append(ScenarioError(f"{where}.{k}", "unknown value", value=v,
                                                  accepted=_accepted(factors[k])))

        for i, c in enumerate(self.claims):
            at = f"claims[{i}]"
            if c.id in ids[:i]:
                problems.append(ScenarioError(f"{at}.id", "duplicate id", value=c.id))
            if c.metric not in metrics:
                problems.append(ScenarioError(f"{at}.metric", "unknown metric", value=c.metric,
                                              accepted=", ".join(metrics), suggestion=near(c.metric, metrics)))
            selection(f"{at}.scope", c.scope)
            if c.only is not None:
                selection(f"{at}.only", c.only)
            for key, cmp in (("compare", c.compare), ("between", c.between)):
                if cmp is None:
                    continue
                if cmp.factor not in factors:
                    problems.append(ScenarioError(f"{at}.{key}.factor", "unknown factor", value=cmp.factor,
                                                  accepted=", ".join(factors), suggestion=near(cmp.factor, factors)))
                    continue
                for side in ("test", "ref"):
                    if getattr(cmp, side) not in (factors[cmp.factor].labels or []):
                        problems.append(ScenarioError(f"{at}.{key}.{side}", f"not a value of factor {cmp.factor}",
                                                      value=getattr(cmp, side), accepted=_accepted(factors[cmp.factor],
                                                                                                    subsets=False)))
                if cmp.factor in c.scope:
                    problems.append(ScenarioError(f"{at}.scope.{cmp.factor}", f"the scope may not restrict the "
                                                  f"factor that `{key}` varies"))
            if c.between is not None and c.form != "contrast":
                problems.append(ScenarioError(f"{at}.between", "is given with form = \"contrast\" only"))
            if c.compare and c.between and c.compare.factor == c.between.factor:
                problems.append(ScenarioError(f"{at}.between.factor", "must differ from compare.factor",
                                              value=c.between.factor))
            if c.form == "only" and c.only and c.compare and c.compare.factor in c.only:
                problems.append(ScenarioError(f"{at}.only.{c.compare.factor}", "may not name the compared factor"))
        if problems:
            raise ScenarioError.joined(problems)
        return self

    # ----------------------------------------------------------------------------------
    # Reading

    @classmethod
    def from_toml(cls, text: str, file: str = "<string>") -> "StudyFile":
        """Parses and validates a study file, every configuration's scenario included.

        Errors name the file and the line; a problem caused by a factor's value is put
        on that factor's line.
        """
        doc = parse_toml(text, file)
        try:
            sf: StudyFile = cls.from_document(doc)
        except ScenarioError as e:
            raise located(e, text, file) from None
        sf._file, sf._text = file, text
        if isinstance(sf.scenario, str):
            spath = Path(file).parent / sf.scenario
            if not spath.is_file():
                raise located(ScenarioError("scenario", "no such scenario file", value=sf.scenario,
                                            accepted=f"a path relative to {Path(file).name}, or an inline "
                                                     "[scenario] table"), text, file)
            base_text = read_text(spath)
            Scenario.from_toml(base_text, str(spath))  # the base alone, its errors on its own lines
            sf._base = parse_toml(base_text, str(spath))
        else:
            sf._base = sf.scenario
        sf._check_record()
        sf._check_configurations()
        return sf

    def _check_record(self) -> None:
        record = self._base.get("record") or {}
        problems = [ScenarioError(f"metrics[{i}].table", f"needs [record] {_SERIES_RECORD[m.table]} in the "
                                  "scenario", value=m.table)
                    for i, m in enumerate(self.metrics) if m.table in _SERIES_RECORD
                    and not record.get(_SERIES_RECORD[m.table])]
        if problems:
            raise located(ScenarioError.joined(problems), self._text, self._file)

    def _check_configurations(self) -> None:
        """Validates every configuration's scenario (the simulator's checks included) and
        reports every distinct problem once, with the configurations it occurs in
        (:meth:`configurations_text`): a value valid alone but not with another factor's is
        reported with that combination.
        """
        locator = TomlLocator(self._text)
        inline = not isinstance(self.scenario, str)
        found: dict[str, tuple[ScenarioError, list[dict[str, str]]]] = {}
        for config in self.configurations():
            try:
                doc = self.scenario_doc(config)
            except ScenarioError as e:
                problems = located(e, self._text, self._file).problems
            else:
                try:
                    Scenario.from_dict(doc).check_core(self.seed)
                    continue
                except ScenarioError as e:
                    problems = e.problems
                for p in problems:
                    i = next((i for i, f in enumerate(self.factors)
                              if p.path == f.path or p.path.startswith((f.path + ".", f.path + "["))), None)
                    if i is not None:
                        p.problem += f" (value from factor {self.factors[i].name!r} = {config[self.factors[i].name]!r})"
                        p.file, p.line = self._file, locator.line(f"factors[{i}].values")
                    elif inline:
                        p.path = f"scenario.{p.path}" if p.path else "scenario"
                        p.file, p.line = self._file, locator.line(p.path)
                    else:
                        p.file = str(Path(self._file).parent / str(self.scenario))
            for p in problems:
                p.others = []
                found.setdefault(p.one_line(), (p, []))[1].append(config)
        if found:
            for p, configs in found.values():
                p.context = self.configurations_text(configs)
            raise ScenarioError.joined(sorted((p for p, _ in found.values()),
                                              key=lambda p: (p.file != self._file, p.line or 0)))

    def configurations_text(self, configs: list[dict[str, str]]) -> str | None:
        """The configurations ``configs`` in words: the factor values they share, when they
        are every configuration with those values (the other factors do not matter);
        ``None`` when they are every configuration (a problem of the base scenario).

        Example:
            >>> sf = StudyFile.from_toml(TEMPLATE.format(name="demo"))
            >>> sf.configurations_text([{"cc": "reno"}]), sf.configurations_text(sf.configurations())
            ('configuration cc=reno', None)
        """
        shared = {f.name: configs[0][f.name] for f in self.factors if all(c[f.name] == configs[0][f.name]
                                                                          for c in configs)}
        if len(configs) == math.prod(len(f.labels or []) for f in self.factors if f.name not in shared):
            return "configuration " + ", ".join(f"{k}={v}" for k, v in shared.items()) if shared else None
        first = ", ".join(f"{k}={v}" for k, v in configs[0].items())
        more = len(configs) - 1
        return f"configuration {first}" + (f" (and {more} more configuration{'s' * (more > 1)})" if more else "")

    # ----------------------------------------------------------------------------------
    # Configurations

    def configurations(self) -> list[dict[str, str]]:
        """Every configuration, ``{factor: label}``, the last factor varying fastest (as sweeps' grid)."""
        names = [f.name for f in self.factors]
        return [dict(zip(names, combo)) for combo in itertools.product(*(f.labels or [] for f in self.factors))]

    def scenario_doc(self, config: dict[str, str]) -> dict[str, Any]:
        """The scenario document of one configuration (the base with each factor's value set)."""
        from tcplab.sweeps import _set_path

        doc = copy.deepcopy(self._base)
        for i, f in enumerate(self.factors):
            value = f.values[(f.labels or []).index(config[f.name])]
            try:
                _set_path(doc, f.path, copy.deepcopy(value))
            except ScenarioError as e:
                raise ScenarioError(f"factors[{i}].path", e.problem, value=f.path) from None
        return doc

    def selection(self, sel: dict[str, Selection]) -> dict[str, list[str]]:
        """A scope (factor values, labels or subset names) as ``{factor: [labels]}``."""
        factors = {f.name: f for f in self.factors}
        return {k: factors[k].select(v) or [] for k, v in sel.items()}

    @property
    def study_name(self) -> str:
        return self.name or Path(self._file).stem


def _accepted(f: Factor, subsets: bool = True) -> str:
    return ", ".join([*(f.labels or []), *(f.subsets if subsets else [])])


def load(path: str | Path) -> StudyFile:
    """Reads and validates a study file (nothing runs)."""
    return StudyFile.from_toml(read_text(path), str(path))


# --------------------------------------------------------------------------------------
# Runs: the worker


def _rows(df: pd.DataFrame, sel: dict[str, Any]) -> pd.Series:
    keep = pd.Series(True, index=df.index)
    for col, values in sel.items():
        vals = values if isinstance(values, list) else [values]
        keep &= df[col].isin(vals) | df[col].astype(str).isin([str(v) for v in vals])
    return keep


def metric_value(tables: dict[str, pd.DataFrame], m: dict[str, Any]) -> float:
    """One run's value of metric ``m`` (a :class:`Metric` as a dict) from its tables.

    Example:
        >>> flows = pd.DataFrame({"name": ["a", "b"], "cc": ["bbr", "cubic"], "goodput_bps": [30e6, 10e6]})
        >>> m = {"table": "flows", "column": "goodput_bps", "aggregate": "share", "where": {}, "part": {"cc": "bbr"}}
        >>> metric_value({"flows": flows}, m), metric_value({"flows": flows}, {**m, "aggregate": "jain", "part": {}})
        (0.75, 0.8)
    """
    df = tables.get(m["table"])
    if df is None or not len(df):
        return 0.0 if m["aggregate"] == "count" else math.nan
    df = df[_rows(df, m.get("where") or {})]
    agg = m["aggregate"]
    if agg == "count":
        return float(len(df))
    x = pd.to_numeric(df[m["column"]], errors="coerce").astype(float)
    if agg == "share":
        total = float(x.sum())
        return float(x[_rows(df, m["part"])].sum()) / total if total else math.nan
    a = x.dropna().to_numpy()
    if not len(a):
        return math.nan
    if agg == "jain":
        from tcplab.stats import jain_index

        return jain_index(a)
    if agg.startswith("p") and _PERCENTILE.match(agg):
        return float(np.percentile(a, float(agg[1:])))
    return float({"mean": np.mean, "median": np.median, "sum": np.sum, "min": np.min, "max": np.max,
                  "std": lambda v: np.std(v, ddof=1) if len(v) > 1 else math.nan}[agg](a))


def _named(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Series with a ``flow_id`` get the flow's ``name`` and ``group`` (for a metric's ``where``)."""
    ids = pd.concat([t[["flow_id", "name", "group"]] for t in (tables.get("flows"), tables.get("udp"))
                     if t is not None and len(t)], ignore_index=True) if any(
        t is not None and len(t) for t in (tables.get("flows"), tables.get("udp"))) else None
    out = dict(tables)
    for k, t in tables.items():
        if k.startswith("series_") and ids is not None and "flow_id" in t and len(t):
            out[k] = t.drop(columns=[c for c in ("name", "group") if c in t]).merge(ids, on="flow_id", how="left")
    return out


#: The summary tables kept beside the runs table (the series stay in the workers).
KEPT_TABLES = ("flows", "udp", "queues", "links", "transactions")


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: replications ``spec["reps"]`` of one configuration; its runs' metrics and tables.

    ``spec`` holds ``scenario`` (the configuration's scenario document), ``reps``
    ([first, stop)), ``seed`` and ``metrics`` (:class:`Metric` dicts).
    """
    from tcplab.results import RunResult
    from tcplab.runner import run_core
    from tcplab.studies.emulated import kernel_facts, sim_facts

    sc = Scenario.from_dict(spec["scenario"])
    emulate = spec.get("mode") == "emulate"
    meta_cols = (*RUN_META, *EMULATE_META) if emulate else RUN_META
    runs: dict[str, list[Any]] = {k: [] for k in (*meta_cols, *(m["name"] for m in spec["metrics"]))}
    kept: dict[str, list[pd.DataFrame]] = {k: [] for k in KEPT_TABLES}
    first, stop = spec["reps"]
    for rep in range(first, stop):
        seed = int(spec["seed"]) + rep
        for eng in ENGINES if emulate else ("sim",):
            if eng == "kernel":
                from tcplab.emulation import emulate_core

                core = sc.to_core(seed)
                doc, wall = emulate_core(core, seed, quiet=True)
                facts = kernel_facts(doc, wall)
                res = RunResult.from_core(doc, scenario=core)
            else:
                t0 = time.perf_counter()
                res = RunResult.from_core(run_core(sc.to_core_json(seed), seed))
                facts = sim_facts(time.perf_counter() - t0)
            tables = _named(res.tables())
            for k, v in (("rep", rep), ("seed", seed), ("events", int(res.meta.get("events", 0))),
                         ("digest", str(res.meta.get("digest", ""))), ("engine", eng), *facts.items()):
                if k in runs:
                    runs[k].append(v)
            for m in spec["metrics"]:
                runs[m["name"]].append(metric_value(tables, m))
            for k in KEPT_TABLES:
                if len(tables[k]):
                    kept[k].append(tables[k].assign(rep=rep, **({"engine": eng} if emulate else {})))
    out: dict[str, Any] = {"runs": runs}
    factors = set(spec.get("factors", ()))
    for k, parts in kept.items():
        if parts:
            # A result column named like a factor (flows' `cc`) is kept as `flows.cc`: the
            # factor's column comes first in every table (engine.task_frame).
            df = pd.concat(parts, ignore_index=True).rename(columns=lambda c: f"{k}.{c}" if c in factors else c)
            out[k] = {c: df[c].tolist() for c in ["rep", *[c for c in df.columns if c != "rep"]]}
    return out


# --------------------------------------------------------------------------------------
# Claims: statistics and checks


def _filter(df: pd.DataFrame, where: dict[str, list[str]]) -> pd.DataFrame:
    for k, v in where.items():
        df = df[df[k].isin(v)]
    return df


def _per_config(df: pd.DataFrame, value: str, keys: list[str]) -> list[dict[str, Any]]:
    out = []
    if not keys:
        return out
    for key, part in df.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        out.append({**{k: str(v) for k, v in zip(keys, key)}, **F.estimate(part[value])})
    return out


def claim_statistic(sf: StudyFile, claim: Claim, runs: pd.DataFrame
                    ) -> tuple[dict[str, Any], list[dict[str, Any]], str, str]:
    """The claim's pooled estimate, per-configuration estimates, statistic name and unit.

    Paired (``compare``): :func:`tcplab.studies.findings.paired`, configurations pooled
    within a replication. Level: the metric minus ``baseline``, per replication its mean
    over the configurations in scope. Contrast: per replication, the effect under
    ``between.test`` minus the effect under ``between.ref`` (:func:`findings.difference`).
    """
    factors = [f.name for f in sf.factors]
    metric = next(m for m in sf.metrics if m.name == claim.metric)
    scope = sf.selection(claim.scope)
    unit = metric.unit
    df = _filter(runs, scope)
    cmp = claim.compare
    if cmp is not None:
        pairs, est, per = F.paired(df, claim.metric, cmp.factor, cmp.test, cmp.ref, {}, relative=cmp.relative,
                                   unit=[*factors, "rep"])
        name = (f"{'relative ' if cmp.relative else ''}difference of {claim.metric}, {cmp.factor} {cmp.test} - "
                f"{cmp.ref}")
        unit = "fraction" if cmp.relative else unit
        value = "diff"
        others = [f for f in factors if f != cmp.factor]
    else:
        pairs = df.assign(diff=df[claim.metric] - claim.baseline)
        name = claim.metric + (f" - {claim.baseline:g}" if claim.baseline else "")
        value, others = "diff", factors
        est = F.estimate(pairs.groupby("rep")[value].mean()) if len(pairs) else F.estimate([])
        per = _per_config(pairs, value, others)
    if claim.form == "contrast" and claim.between is not None:
        b = claim.between
        if not len(pairs):
            return F.estimate([]), [], name, unit
        a = pairs[pairs[b.factor].astype(str) == b.test].groupby("rep")[value].mean()
        r = pairs[pairs[b.factor].astype(str) == b.ref].groupby("rep")[value].mean()
        est = F.difference(a, r)
        rest = [f for f in others if f != b.factor]
        per = []
        if rest:
            ta = pairs[pairs[b.factor].astype(str) == b.test].set_index([*rest, "rep"])[value]
            ra = pairs[pairs[b.factor].astype(str) == b.ref].set_index([*rest, "rep"])[value]
            d = (ta - ra).dropna().rename("contrast").reset_index()
            per = _per_config(d, "contrast", rest)
        name = f"({name}) under {b.factor} {b.test} minus under {b.ref}"
    return est, per, name, unit


def evaluate(sf: StudyFile, runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Every claim as a finding with one check (:func:`findings.check`, :func:`findings.finding`)."""
    out = []
    for c in sf.claims:
        est, per, name, unit = claim_statistic(sf, c, runs)
        scope = ", ".join(f"{k} in [{', '.join(v)}]" for k, v in sf.selection(c.scope).items()) or "every configuration"
        chk = F.check(c.id, c.text, c.claim_form(sf.selection(c.only or {})), name, unit, est, per, scope=scope)
        out.append(F.finding(c.id, c.text, [chk]))
    return out


def identical_warning(sf: StudyFile, runs: pd.DataFrame) -> str | None:
    """A warning naming the configurations whose replications are all the same run (one
    trace digest), or None: their estimates are exact values, not intervals
    (:func:`tcplab.studies.findings.estimate`), as :func:`tcplab.sweeps.identical_replications_warning`
    says of a sweep.

    Example:
        >>> sf = StudyFile.from_toml(TEMPLATE.format(name="demo"))
        >>> runs = pd.DataFrame({"cc": ["reno", "reno", "cubic", "cubic"], "rep": [0, 1, 0, 1], "digest": ["a", "a", "b", "c"]})
        >>> identical_warning(sf, runs).split(";")[0]
        'replications are identical in 1 of 2 configurations (cc=reno)'
    """
    from tcplab.sweeps import RANDOM_ELEMENTS

    factors = [f.name for f in sf.factors]
    if not len(runs) or runs["rep"].nunique() < 2:
        return None
    same = [key if isinstance(key, tuple) else (key,) for key, part in runs.groupby(factors, sort=False)
            if part["digest"].nunique() == 1]
    if not same:
        return None
    shown = "; ".join(", ".join(f"{f}={v}" for f, v in zip(factors, key)) for key in same[:4]) + (
        "; ..." if len(same) > 4 else "")
    return (f"replications are identical in {len(same)} of {runs.groupby(factors).ngroups} configurations ({shown}); "
            "their values are exact, not intervals; add a random element: " + ", ".join(RANDOM_ELEMENTS)
            + " (docs/scenarios.md)")


# --------------------------------------------------------------------------------------
# The study's definition for the shared machine


def side_by_side(runs: pd.DataFrame, factors: list[str], metrics: list[str]) -> pd.DataFrame:
    """``--mode emulate``: per configuration and metric, the simulator's and real Linux's means
    over the replications, ``difference`` = kernel - sim and ``relative`` = difference / |sim|
    (NaN when sim is 0): the simulator's error against a real stack on the same scenario
    and seeds. No verdict: a study file states no tolerance for it.

    Example:
        >>> runs = pd.DataFrame({"q": ["a"] * 4, "rep": [0, 0, 1, 1], "engine": ["sim", "kernel"] * 2,
        ...                      "g": [10.0, 11.0, 12.0, 12.0]})
        >>> side_by_side(runs, ["q"], ["g"])[["q", "metric", "sim", "kernel", "relative"]].values.tolist()
        [['a', 'g', 11.0, 11.5, 0.045454545454545456]]
    """
    rows = []
    for key, part in runs.groupby(factors, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            sim = float(part.loc[part["engine"] == "sim", m].mean())
            kern = float(part.loc[part["engine"] == "kernel", m].mean())
            rel = (kern - sim) / abs(sim) if sim and math.isfinite(sim) else math.nan
            rows.append({**dict(zip(factors, key)), "metric": m, "sim": sim, "kernel": kern, "difference": kern - sim,
                         "relative": rel, "n": int((part["engine"] == "kernel").sum())})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RunParams:
    """How a study file is run: replications (``--reps``), the file it came from, and the
    mode: ``simulate``, or ``emulate`` (each replication on the simulator and on real
    Linux, :data:`ENGINES`; the claims are judged on real Linux's runs)."""

    reps: int
    file: str
    mode: str = "simulate"


class FileStudy(engine.StudyDefinition):
    """A study file for :func:`tcplab.studies.engine.run_study`."""

    seed_study = ""
    version = STUDY_VERSION
    task_tables = ("runs", *KEPT_TABLES)
    block = staticmethod(simulate_block)
    ledger = False

    def __init__(self, sf: StudyFile) -> None:
        self.sf = sf
        self.name = sf.study_name
        self.config_columns = tuple((f.name, "string") for f in sf.factors)
        self.empty_columns = (*(f.name for f in sf.factors), "rep")
        self._index = {json.dumps(c, sort_keys=True): i for i, c in enumerate(sf.configurations())}

    def plan(self, params: RunParams) -> list[BlockTask]:
        metrics = [m.model_dump() for m in self.sf.metrics]
        tasks = []
        for config in self.sf.configurations():
            doc = self.sf.scenario_doc(config)
            for first in range(0, params.reps, BLOCK):
                stop = min(first + BLOCK, params.reps)
                spec = {"study": self.name, "version": STUDY_VERSION, "scenario": doc, "reps": [first, stop],
                        "seed": self.sf.seed, "metrics": metrics, "factors": list(config), **config}
                if params.mode == "emulate":  # its own tasks: simulated-only tasks keep their keys
                    spec["mode"] = "emulate"
                tasks.append(BlockTask(engine.task_key(spec), spec, stop - first))
        return tasks

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        config = {f.name: spec[f.name] for f in self.sf.factors}
        return (self._index[json.dumps(config, sort_keys=True)], spec["reps"][0])

    def n_runs(self, params: RunParams) -> int:
        return len(self.sf.configurations()) * params.reps * (len(ENGINES) if params.mode == "emulate" else 1)

    def params_dict(self, params: RunParams) -> dict[str, Any]:
        return {**asdict(params), "seed": self.sf.seed, "configurations": len(self.sf.configurations())}

    def analyse(self, tables: dict[str, pd.DataFrame], params: RunParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        factors = [f.name for f in self.sf.factors]
        metrics = [m.name for m in self.sf.metrics]
        emulate = params.mode == "emulate"
        out: dict[str, pd.DataFrame] = {}
        runs = tables["runs"]
        sim_runs = runs
        if emulate:
            sim_runs = runs[runs["engine"] == "sim"]
            out["comparison"] = side_by_side(runs, factors, metrics)
            runs = runs[runs["engine"] == "kernel"]
        rows = []
        for key, part in runs.groupby(factors, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            row: dict[str, Any] = dict(zip(factors, key))
            for m in metrics:
                e = F.estimate(part[m])
                row.update({m: e["value"], f"{m}_ci_low": e["ci"][0], f"{m}_ci_high": e["ci"][1]})
            row["n"] = len(part)
            rows.append(row)
        out["summary"] = pd.DataFrame(rows)
        method = F.METHOD + ("; every claim judged on real Linux TCP (the emulator, this host's kernel) on the "
                             "study's scenarios and seeds" if emulate else "")
        doc = F.document(self.name, self.seed_study, self.params_dict(params), int(runs["rep"].nunique()), [],
                         method, evaluate(self.sf, runs), question=self.sf.question, study_file=params.file,
                         warnings=[w for w in [identical_warning(self.sf, sim_runs)] if w],
                         **({"mode": "emulate"} if emulate else {}))
        F.validate(doc)
        return out, doc

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: RunParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies import reporting as R

        summary = tables["summary"]
        factors = [f.name for f in self.sf.factors]
        labels = [", ".join(f"{f}={r[f]}" for f in factors) for _, r in summary.iterrows()]
        figs = []
        for m in self.sf.metrics:
            fig, axes = R.figure(1, 1, 6.5, 0.9 + 0.32 * len(summary))
            ax = axes[0, 0]
            y = np.arange(len(summary))
            mid = summary[m.name].to_numpy(float)
            lo, hi = summary[f"{m.name}_ci_low"].to_numpy(float), summary[f"{m.name}_ci_high"].to_numpy(float)
            err = np.vstack([np.nan_to_num(mid - lo), np.nan_to_num(hi - mid)])
            ax.errorbar(mid, y, xerr=err, fmt="o", capsize=3)
            ax.set_yticks(y, labels)
            ax.invert_yaxis()
            ax.set_xlabel(f"{m.name}" + (f" ({m.unit})" if m.unit else ""))
            stem = f"metric_{m.name}"
            figs.append({"stem": stem, "section": "metrics", **R.save(fig, fig_dir, stem),
                         "caption": f"{m.name}: {m.aggregate} of {m.table}.{m.column} per run; mean over "
                                    "replications with its 95% interval, per configuration."})
        return figs

    def write_report(self, out: Path, params: RunParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies import reporting as R

        sf = self.sf
        fac = pd.DataFrame([{"factor": f.name, "path": f.path, "values": ", ".join(f.labels or []),
                             "subsets": "; ".join(f"{k}: {', '.join(v)}" for k, v in f.subsets.items())}
                            for f in sf.factors])
        met = pd.DataFrame([{"metric": m.name, "table": m.table, "column": m.column, "aggregate": m.aggregate,
                             "where": json.dumps(m.where) if m.where else "", "part": json.dumps(m.part) if m.part
                             else "", "unit": m.unit} for m in sf.metrics])
        setup = (f"<h2 id='setup'>Set-up</h2><p><b>Question.</b> {html.escape(sf.question or '(none stated)')}</p>"
                 f"<p>Study file <code>{html.escape(params.file)}</code>; {len(sf.configurations())} configurations x "
                 f"{params.reps} replications (replication r runs with seed {sf.seed} + r in every configuration: "
                 f"common random numbers).</p><h3>Factors</h3>{R.table_html(fac)}<h3>Metrics</h3>{R.table_html(met)}"
                 "<details><summary>Base scenario</summary><pre>"
                 + html.escape(json.dumps(sf._base, indent=1)) + "</pre></details>")
        setup += "".join(f"<p><b>Warning:</b> {html.escape(w)}</p>" for w in findings.get("warnings", []))
        if params.mode == "emulate":
            runs = tables["runs"]
            k = runs[runs["engine"] == "kernel"]
            release = html.escape(str(k["kernel_release"].iloc[0])) if len(k) else "?"
            setup += (f"<h3>Real Linux</h3><p>Mode <b>emulate</b>: every replication ran on real Linux TCP (this host's "
                      f"kernel, Linux {release}) through tcplab's own link and queue models, and in the simulator on the "
                      "same scenario and seed (docs/emulation.md). The claims below are judged on the kernel's runs; the "
                      "side-by-side table gives the simulator's difference. Emulator timing: scheduling error p99 "
                      f"{R.fmt(float(k['sched_p99_s'].max()) * 1e6) if len(k) else '?'} µs at worst; "
                      f"{int(k['behind'].sum()) if len(k) else 0} run(s) fell behind the 1 ms bound "
                      "(<code>behind</code> in <code>runs.parquet</code>).</p>")
        body = [R.nav(["runs.parquet", "summary.parquet", "flows.parquet", "findings.json", "study.json"]), setup,
                R.findings_html(findings, "the study file", ""),
                R.figures_html(out, figs, {"metrics": "Metrics per configuration"}),
                "<h2 id='summary'>Summary table</h2>" + R.table_html(tables["summary"]),
                *(["<h2 id='side-by-side'>Simulation and real Linux, side by side</h2><p class='small'>Per "
                   "configuration and metric, the means over the replications: <i>difference</i> = kernel - sim, "
                   "<i>relative</i> = (kernel - sim) / |sim|.</p>" + R.table_html(tables["comparison"])]
                  if "comparison" in tables else []),
                R.failures_html(manifest, [f.name for f in sf.factors]), R.parameters_html(manifest)]
        intro = f"<p class='small'>{R.provenance(manifest, f'{self.n_runs(params)} runs')}</p>"
        return R.write_page(out, f"Study {self.name}", intro, body)


def check_emulable(sf: StudyFile) -> None:
    """``--mode emulate``: every configuration's scenario is one this host's kernel can run
    (``tcplab-emu check``), before anything runs.

    Raises:
        ScenarioError: one line per configuration the emulator refuses, with its reasons.
        EmulatorNotFound: the emulator is not built.
    """
    from tcplab.emulation import EmulationRefused, check_core

    problems = []
    for config in sf.configurations():
        try:
            check_core(Scenario.from_dict(sf.scenario_doc(config)).to_core(sf.seed))
        except EmulationRefused as e:
            # The emulator lists its reasons one per line ("- flows[0] ('a'): ..."), after a heading.
            reasons = [r.strip().removeprefix("- ") for r in str(e).splitlines()[1:] if r.strip()] or [str(e)]
            combo = ", ".join(f"{k}={v}" for k, v in config.items())
            problems += [ScenarioError("--mode emulate", f"this kernel cannot run it: {r}", file=sf._file,
                                       context=f"configuration {combo}") for r in reasons]
    if problems:
        raise ScenarioError.joined(problems)


def run(path: str | Path | StudyFile, out: str | Path, reps: int | None = None, jobs: int | None = None,
        scheduler: str | None = None, progress: bool = True, figures: bool = True,
        mode: str = "simulate") -> StudyResult:
    """Runs (or resumes) a study file into ``out`` (tables, figures, findings.json, report.html).

    ``mode="emulate"`` runs every replication on real Linux as well (:data:`ENGINES`), one
    run at a time in this process (real time; ``jobs`` and ``scheduler`` are not used),
    after :func:`check_emulable`.
    """
    sf = path if isinstance(path, StudyFile) else load(path)
    if mode not in ("simulate", "emulate"):
        raise ValueError(f"mode: {mode!r}; accepted: simulate, emulate")
    params = RunParams(reps=reps or sf.reps, file=sf._file, mode=mode)
    if mode == "emulate":
        check_emulable(sf)
        jobs, scheduler = 1, None
    return engine.run_study(FileStudy(sf), out, params, jobs=jobs, scheduler=scheduler, progress=progress,
                            figures=figures)


#: Types the scenario reference's rules do not name (free lists and tables), by field name:
#: the reference's type column and the study schema's hover text (tcplab.scenario.schema).
FIELD_TYPES = {"scenario": "table, or string (a path)", "values": "list (of values or tables)",
               "labels": "list of strings", "subsets": "table: name = [labels]",
               "where": "table: column = value or [values]", "part": "table: column = value or [values]",
               "only": "table: factor = label or [labels]", "scope": "table: factor = label or [labels]"}


def reference_markdown() -> str:
    """The field tables of docs/study-files.md, generated from the models' declarations
    (as :mod:`tcplab.scenario.reference` generates docs/scenarios.md' tables).

    Example:
        >>> reference_markdown().splitlines()[0]
        '## Top level'
    """
    from tcplab.scenario.reference import documented_fields, field_default_text, field_type_text

    types = FIELD_TYPES
    head = "| field | type | default | meaning |\n|---|---|---|---|"
    parts = []
    for title, model in (("Top level", StudyFile), ("`[[factors]]`", Factor), ("`[[metrics]]`", Metric),
                         ("`[[claims]]`", Claim), ("A claim's `compare`", Compare), ("A contrast's `between`", Between)):
        rows = [f"| `{name}` | {types.get(name) or field_type_text(info)} | {field_default_text(info)} | "
                f"{(info.description or '').replace('|', chr(92) + '|')} |" for name, info in documented_fields(model)]
        parts.append(f"## {title}\n\n{head}\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


#: ``tcplab study new NAME``: a commented starting file that runs as it is (a few seconds).
TEMPLATE = '''\
# A tcplab study file: `tcplab study run {name}.toml` (python/tcplab/studies/studyfile.py;
# a worked example: examples/studies/fq-codel-fairness.toml). It runs as it is, in seconds.
name = "{name}"
question = "Does CUBIC take a larger share of a 10 Mbit/s bottleneck than Reno?"
reps = 6        # replications of every configuration (seed + r: common random numbers)
seed = 0

# The base scenario (docs/scenarios.md), inline; or scenario = "path/to/scenario.toml".
[scenario]
duration = "6s"
warmup = "1s"
topology = {{ kind = "dumbbell", pairs = 2, bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ kind = "drop_tail", limit = "50pkt" }} }}, sender_access = {{ rate = "100Mbps", delay = "1ms" }}, receiver_access = {{ rate = "100Mbps", delay = "1ms" }} }}
flows = [
  {{ name = "a", src = "s0", dst = "d0", cc = {{ name = "reno" }}, start_jitter = "200ms" }},
  {{ name = "b", src = "s1", dst = "d1", cc = {{ name = "reno" }}, start_jitter = "200ms" }},
]

# Factors: a scenario path and its values (crossed with the other factors, as in `tcplab sweep`).
[[factors]]
name = "cc"
path = "flows[0].cc.name"
values = ["reno", "cubic"]
# labels = [...]                        # optional: a label per value (tables default to their kind)
# subsets = {{ lossy = ["reno"] }}        # optional: named subsets a scope may use

# Metrics: one number per run from a result table (flows, udp, queues, links, transactions,
# series_*), a column, optional row filter `where`, and an aggregate (mean, median, sum, min,
# max, std, count, jain, share, p50, p99, ...).
[[metrics]]
name = "goodput_share"
table = "flows"
column = "goodput_bps"
aggregate = "share"
part = {{ name = "a" }}                   # share: the numerator's rows
unit = "fraction"

# Claims (python/tcplab/studies/findings.py): form = directional | equivalent | differs |
# contrast | every | share | only; fix each form and margin from the question's words before
# looking at results.
[[claims]]
id = "C1"
text = "Flow a takes a larger share when it runs CUBIC than when it runs Reno"
form = "directional"
metric = "goodput_share"
compare = {{ factor = "cc", test = "cubic", ref = "reno" }}
side = "above"
negligible = 0.02
'''
