"""Study ``highspeed``: seed 002 end to end: the worker, the plan and the study definition.

Seed 002 is H. Shimonishi, T. Murase and M. Sanadidi, "Assessing interactions among
legacy and high-speed TCPs", PFLDnet 2007 (``docs/seeds/002_06d48414b99b3466.txt``).
The set-up is :mod:`tcplab.studies.highspeed.setup`, the metrics
:mod:`tcplab.studies.highspeed.analysis`, the claims and their checks
:mod:`tcplab.studies.highspeed.claims` (with the claims ledger ``ledger.toml`` beside
them), the figures and ``report.html`` :mod:`tcplab.studies.highspeed.report`.

- **Common random numbers**: replication ``r`` runs with core seed ``seed + r``; the
  core draws every flow's path, RTT, start, size and Reno-mix key from that seed alone
  (``crates/tcplab-core/src/app/workload.rs``), so every protocol of a replication sees
  the same flows and the same flows are on Reno in every mixed run.
- **One task per run**; the Reno baselines of 10 long-lived flows without random loss
  (with and without short-lived flows) also record the per-packet one-way delay of the
  first three long-lived flows (:data:`tcplab.studies.highspeed.setup.OWD_FLOWS`) and
  return their RTT spikes, not the series.

Example:
    >>> len(plan(StudyParams(reps=2, protocols="areno", loads="10", loss=False, without_short=False)))
    12
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab import _core
from tcplab.scenario import Scenario
from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult, task_key
from tcplab.studies.highspeed import analysis, claims
from tcplab.studies.highspeed.setup import (CASES, MIXES, NAME, PROTOCOLS, RTT_READINGS, RUN, SEED_STUDY,
                                            STUDY_VERSION, StudyParams, base_document, owd_flows, variant_document)

__all__ = ["simulate_run", "plan", "run", "Definition", "DEFINITION", "StudyResult"]

_FLOW_COLUMNS = ("name", "cls", "entry", "exit", "hops", "rtt_s", "flow_cc", "start_s", "bytes_target", "bytes_delivered",
                 "completed", "elapsed_s", "throughput_bps", "span_s")
_SPIKE_COLUMNS = ("name", "spikes", "span_s", "samples", "q99_s")


def records_owd(spec: dict[str, Any]) -> bool:
    """Whether a run records one-way delays: Reno alone, 10 long-lived flows, no random loss.

    Example:
        >>> records_owd({"protocol": "reno", "mix": "alone", "n_long": 10, "loss": False})
        True
        >>> records_owd({"protocol": "reno", "mix": "alone", "n_long": 40, "loss": False})
        False
    """
    return (spec["protocol"], spec["mix"], int(spec["n_long"]), bool(spec["loss"])) == ("reno", "alone", 10, False)


def simulate_run(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: one run (protocol, mix, long-lived count, loss, shorts, replication).

    Returns the ``flows`` table (one row per flow: class, hop count, base RTT, its CC,
    throughput), ``links`` (the 8 backbone links), ``runs`` (one row) and ``spikes``
    (per recorded flow, :func:`tcplab.studies.highspeed.analysis.spike_rows`; empty
    unless :func:`records_owd`).

    Example:
        >>> spec = {"scale": "tiny", "protocol": "cubic", "mix": "mixed", "n_long": 2, "loss": False, "shorts": True,
        ...         "rep": 0, "seed": 1, "base": base_document(), "short": 2, "duration": 60}
        >>> out = simulate_run(spec)      # 2 long and 2 short sessions for 60 s; long000's first object comes later
        >>> len(out["flows"]["name"]), sorted(set(out["flows"]["flow_cc"])), len(out["links"]["link"])
        (104, ['cubic', 'reno'], 8)
        >>> sorted({n.split(".")[0] for n in simulate_run({**spec, "shorts": False})["flows"]["name"]})
        ['long001']

    """
    shorts = bool(spec.get("shorts", True))
    workload = spec.get("workload", "sessions")
    doc = variant_document(spec["base"], spec["scale"], spec["protocol"], spec["mix"], int(spec["n_long"]),
                           bool(spec["loss"]), shorts=shorts, rtt=spec.get("rtt", "equal_per_hop"),
                           workload=workload, delay=spec.get("delay", "link"),
                           duration_s=int(spec.get("duration", 900)))
    if shorts and spec.get("short") is not None:
        doc["workload"]["classes"][1]["count"] = int(spec["short"])
    owd = records_owd(spec)
    recorded = owd_flows(workload)[:int(spec["n_long"])]
    if owd:
        doc["record"] = {"owd": list(recorded)}
    core_seed = int(spec["seed"]) + int(spec["rep"])
    core = Scenario.from_dict(doc).to_core(core_seed)
    t0 = time.perf_counter()
    res = json.loads(_core.run(json.dumps(core, separators=(",", ":")), core_seed))
    wall = time.perf_counter() - t0
    f, lk, q, meta = res["flows"], res["links"], res["queues"], res["meta"]
    li = {n: i for i, n in enumerate(lk["link"])}
    bb = [n for n in lk["link"] if n.startswith("bb")]
    hop_delay = (lk["delay_s"][li["bb0"]] + lk["delay_s"][li["bb0_rev"]]) / 2
    rows: dict[str, list[Any]] = {c: [] for c in _FLOW_COLUMNS}
    for i, name in enumerate(f["name"]):
        hops = int(f["group"][i].rsplit("_h", 1)[1])
        host = name.split(".")[0]  # a session's objects use the session's hosts
        d_s, d_d = lk["delay_s"][li[f"acc_{host}_s"]], lk["delay_s"][li[f"acc_{host}_d"]]
        elapsed = f["elapsed_s"][i]
        entry, exit_ = int(lk["to"][li[f"acc_{host}_s"]][1:]), int(lk["to"][li[f"acc_{host}_d"]][1:])
        values = {"name": name, "cls": f["group"][i].rsplit("_h", 1)[0], "entry": entry, "exit": exit_, "hops": hops,
                  "rtt_s": 2 * hops * hop_delay + 2 * (d_s + d_d), "flow_cc": f["cc"][i], "start_s": f["start_s"][i],
                  "bytes_target": f["bytes_target"][i], "bytes_delivered": f["bytes_delivered"][i],
                  "completed": elapsed is not None, "elapsed_s": math.nan if elapsed is None else elapsed,
                  "throughput_bps": f["goodput_bps"][i], "span_s": f["window_end_s"][i] - f["window_start_s"][i]}
        for c in _FLOW_COLUMNS:
            rows[c].append(values[c])
    qi = {n: i for i, n in enumerate(q["link"])}
    links = {"link": bb, "rate_bps": [lk["rate_bps"][li[n]] for n in bb],
             "utilisation": [lk["utilisation"][li[n]] for n in bb],
             "tx_bytes": [lk["tx_bytes"][li[n]] for n in bb],
             "drops": [q["drops_overflow"][qi[n]] + q["drops_corruption"][qi[n]] for n in bb]}
    runs = {"core_seed": [core_seed], "duration_s": [meta["sim_end_s"]], "events": [meta["events"]],
            "pkt_hops": [int(sum(lk["tx_pkts"]))], "digest": [meta["digest"]], "sim_wall_s": [wall]}
    spikes = (analysis.spike_rows(res["series"]["owd"], recorded, f["name"]) if owd
              else {c: [] for c in _SPIKE_COLUMNS})
    return {"flows": rows, "links": links, "runs": runs, "spikes": spikes}


def plan(params: StudyParams) -> list[BlockTask]:
    """One task per run, heaviest (40 long-lived flows) first."""
    base = base_document()
    tasks = []
    for rep in range(params.reps):
        for protocol, mix, n, loss, shorts, rtt in params.configurations():
            spec = {"study": NAME, "version": STUDY_VERSION, "scale": params.scale, "protocol": protocol, "mix": mix,
                    "n_long": n, "loss": loss, "shorts": shorts, "rtt": rtt, "rep": rep, "seed": int(params.seed),
                    "short": int(params.short), "workload": params.workload, "delay": params.delay,
                    "duration": int(params.duration), "base": base, "core": _core.version()}
            tasks.append(BlockTask(task_key(spec), spec, 1))
    return sorted(tasks, key=lambda t: (-t.spec["n_long"], not t.spec["shorts"]))


class Definition(engine.StudyDefinition):
    """Seed 002 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("flows", "links", "runs", "spikes")
    config_columns = (("protocol", "string"), ("mix", "string"), ("n_long", "int64"), ("loss", "bool"),
                      ("shorts", "bool"), ("rtt", "string"), ("rep", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_run)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (not spec.get("shorts", True), CASES.index((spec["n_long"], spec["loss"])),
                PROTOCOLS.index(spec["protocol"]), MIXES.index(spec["mix"]),
                RTT_READINGS.index(spec.get("rtt", "equal_per_hop")), spec["rep"])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        # Compact in place: the full-dtype table is then freed (its Parquet file is already written).
        tables["flows"] = analysis.compact_flows(tables["flows"])
        derived = analysis.analyse_runs(tables["flows"], tables["links"], tables["runs"], tables.get("spikes"))
        return derived, claims.evaluate_findings(derived["run_metrics"], params)

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.highspeed import report

        return report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame],
                     findings: dict[str, Any], figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.highspeed import report

        return report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    The CLI is ``tcplab study highspeed [--scale full|reduced] [--reps N] [--jobs J] [--scheduler ADDR]
    [--out DIR]``.
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)
