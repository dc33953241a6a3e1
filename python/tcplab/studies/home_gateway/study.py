"""Runs of study ``home-gateway``: one simulation per configuration, the tasks, the study machine's hooks.

The reference is seed 003 (``docs/seeds/003_c9c9fd5920f3a08e.txt``; Stewart et al.,
ACM MMSys 2011). Three parts run (:func:`plan`):

- **grid** (the seed's "Methodology" slide): every link x minimum RTT x drop-tail
  semantic x queue size x TCP, ``reps`` replications; the 40 000 B FB-loose queue
  (the seed's latency figure) keeps every voice packet's induced one-way delay;
- **fine** (the seed's "Detailed Simulation" slide): FB-loose and FB-strict over
  [52 500, 67 500] B in 30 B steps and PS over 35..45 packets, ADSL1 at 100 ms;
- **series** (the seed's "Downstream NewReno Behaviour" and "CUBIC Induces More OWD
  Than NewReno" slides): ADSL1, 100 ms, 20 000 B (PS: 13 packets), recording the bulk
  flow's cwnd and the downstream queue. Every replication is reduced to its cwnd/queue
  coupling and back-off count (:func:`tcplab.studies.home_gateway.analysis.series_stats`);
  replication 0's time series are kept for the figures.

Replication ``r`` runs with core seed ``seed + r`` for both TCP variants and every
queue: the voice departures are the same draws (common random numbers), so NewReno and
CUBIC, and the three semantics, are compared run by run. Execution and output are the
shared study machine's (:mod:`tcplab.studies.engine`); :class:`Definition` connects the
set-up (:mod:`~tcplab.studies.home_gateway.config`), the analysis
(:mod:`~tcplab.studies.home_gateway.analysis`), the claims
(:mod:`~tcplab.studies.home_gateway.claims`) and the report
(:mod:`~tcplab.studies.home_gateway.report`, imported when figures or the report are
drawn).

Example:
    >>> tasks = plan(StudyParams(reps=2, links=["adsl1"], rtts_ms=[100], fine_step_bytes=0))
    >>> sorted({t.spec["part"] for t in tasks}), sum(t.runs for t in tasks)
    (['grid', 'series'], 144)
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab import _core
from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult
from tcplab.studies.home_gateway import analysis as A
from tcplab.studies.home_gateway import claims
from tcplab.studies.home_gateway.config import (FINE_LINK, FINE_PS, FINE_RTT_MS, LINKS, NAME, OWD_QUEUE, PACKET_BYTES,
                                                SEED_STUDY, SEMANTICS, SERIES_GRID_S, SERIES_LIMITS, SERIES_LINK,
                                                SERIES_RTT_MS, SERIES_SKIP_FRACTION, STUDY_VERSION, VARIANTS,
                                                VOICE_BYTES, StudyParams, base_owd_s, base_scenario, configure)

__all__ = ["RUN_COLUMNS", "SERIES_COLUMNS", "run_row", "simulate_block", "plan", "Definition", "DEFINITION", "run"]

#: The columns of the ``runs`` table (one row per run), besides the engine's configuration columns.
RUN_COLUMNS = ("limit", "nominal_bytes", "cc", "rep", "core_seed", "goodput_bps", "bytes_delivered", "retransmits",
               "rtos", "tcp_segs", "tcp_drops", "tcp_loss", "voice_sent", "voice_delivered", "voice_lost", "voice_loss",
               "voice_jitter_s", "voice_up_sent", "voice_up_lost", "voice_up_loss", "owd_base_s", "iowd_mean_s",
               "iowd_p50_s", "iowd_p95_s", "iowd_p99_s", "iowd_max_s", "q_mean_bytes", "q_mean_pkts", "q_fill",
               "q_max_bytes", "q_drops", "q_up_mean_bytes", "q_up_drops", "events", "digest")
#: Columns only the time-series runs fill (NaN elsewhere): :func:`tcplab.studies.home_gateway.analysis.series_stats`.
SERIES_COLUMNS = ("coupling_r", "backoffs")


def _num(d: dict[str, Any], key: str, i: int) -> float:
    """``d[key][i]`` as a float, NaN when the result document has no such column (an engine without it)."""
    col = d.get(key)
    return float(col[i]) if col is not None and col[i] is not None else math.nan


def run_row(out: dict[str, Any], semantic: str, limit: int, cc: str, rep: int, core_seed: int, base_owd: float
            ) -> tuple[dict[str, Any], np.ndarray]:
    """One run's row of the ``runs`` table (the columns of :data:`RUN_COLUMNS`) and the
    induced one-way delays (s) of its downstream voice packets, from a result document
    (the simulator's, or the emulator's: :mod:`tcplab.studies.home_gateway.emulate`).
    ``base_owd`` is :func:`~tcplab.studies.home_gateway.config.base_owd_s` of the run's scenario.

    ``q_fill`` is the time-averaged downstream occupancy as a fraction of the queue's
    limit (packets for PS, bytes otherwise). ``tcp_drops`` are the downstream queue's
    drops less the voice stream's (the bottleneck is the only place either loses
    packets), and ``tcp_loss`` their share of the bulk flow's segments.
    ``voice_jitter_s`` is the mean absolute change of one-way delay between consecutive
    delivered voice packets over the whole run (the |D| whose running average is
    RFC 3550's interarrival jitter; RFC 3393's IPDV), not the simulator's end-of-run
    RFC 3550 estimate, which reflects only the last ~16 packets.
    """
    f, u, q = out["flows"], out["udp"], out["queues"]
    bulk = f["name"].index("bulk")
    down, up = u["name"].index("voice_down"), u["name"].index("voice_up")
    qd, qu = q["link"].index("bottleneck"), q["link"].index("bottleneck_rev")
    owd = out["series"]["owd"]
    mine = np.asarray(owd["flow_id"], dtype=np.int64) == u["flow_id"][down]
    order = np.argsort(np.asarray(owd["t_s"], dtype=np.float64)[mine], kind="stable")  # in order of arrival
    induced = np.asarray(owd["owd_s"], dtype=np.float64)[mine][order] - base_owd
    has = len(induced) > 0
    sent, lost = u["pkts_sent"][down], u["pkts_lost"][down]
    segs = _num(f, "segs_sent", bulk)
    tcp_drops = q["drops_overflow"][qd] - lost
    occupancy = q["occ_mean_pkts"][qd] if semantic == "slot" else q["occ_mean_bytes"][qd]
    row = {
        "limit": limit, "nominal_bytes": limit * (PACKET_BYTES if semantic == "slot" else 1),
        "cc": cc, "rep": rep, "core_seed": core_seed, "goodput_bps": f["goodput_bps"][bulk],
        "bytes_delivered": f["bytes_delivered"][bulk], "retransmits": f["retransmits"][bulk],
        "rtos": f["rtos"][bulk], "tcp_segs": segs, "tcp_drops": tcp_drops,
        "tcp_loss": tcp_drops / segs if segs and segs > 0 else math.nan,
        "voice_sent": sent, "voice_delivered": u["pkts_delivered"][down],
        "voice_lost": lost, "voice_loss": lost / sent if sent else math.nan,
        "voice_jitter_s": float(np.mean(np.abs(np.diff(induced)))) if len(induced) > 1 else math.nan,
        "voice_up_sent": u["pkts_sent"][up], "voice_up_lost": u["pkts_lost"][up],
        "voice_up_loss": u["pkts_lost"][up] / u["pkts_sent"][up] if u["pkts_sent"][up] else math.nan,
        "owd_base_s": base_owd,
        "iowd_mean_s": float(induced.mean()) if has else math.nan,
        "iowd_p50_s": float(np.percentile(induced, 50)) if has else math.nan,
        "iowd_p95_s": float(np.percentile(induced, 95)) if has else math.nan,
        "iowd_p99_s": float(np.percentile(induced, 99)) if has else math.nan,
        "iowd_max_s": float(induced.max()) if has else math.nan,
        "q_mean_bytes": q["occ_mean_bytes"][qd], "q_mean_pkts": q["occ_mean_pkts"][qd], "q_fill": occupancy / limit,
        "q_max_bytes": q["occ_max_bytes"][qd], "q_drops": q["drops_overflow"][qd],
        "q_up_mean_bytes": q["occ_mean_bytes"][qu], "q_up_drops": q["drops_overflow"][qu],
        "events": out["meta"]["events"], "digest": out["meta"]["digest"],
    }
    return row, induced


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: every TCP variant x replication x queue limit of one (link, RTT, semantic).

    ``spec`` holds ``part`` (``grid``, ``fine`` or ``series``), ``rtt_ms``, ``semantic``,
    ``limits``, ``reps`` ([first, stop)), ``seed``, ``duration_s``, ``scenario`` (the
    base scenario's TOML text) and ``keep_owd``. Returns column dicts: ``runs`` (one
    row per run; ``series`` runs also fill :data:`SERIES_COLUMNS`), ``owd`` (with
    ``keep_owd``: every downstream voice packet's induced one-way delay) and, for
    ``series``, ``cwnd`` and ``queue`` of replication 0.

    Example:
        >>> text, _ = base_scenario("adsl1")
        >>> out = simulate_block({"part": "grid", "rtt_ms": 100, "semantic": "byte_loose", "limits": [40000],
        ...     "reps": [0, 1], "seed": 1, "duration_s": 10.0, "scenario": text, "keep_owd": False})
        >>> out["runs"]["cc"].tolist(), bool((out["runs"]["voice_sent"] ==
        ...     out["runs"]["voice_delivered"] + out["runs"]["voice_lost"]).all())
        (['newreno', 'cubic'], True)
    """
    from tcplab.scenario import Scenario

    base = tomllib.loads(spec["scenario"])
    seed, semantic, part = int(spec["seed"]), spec["semantic"], spec["part"]
    series = part == "series"
    record: dict[str, Any] = {"owd": ["voice_down"]}
    if series:
        record = {"owd": ["voice_down"], "cwnd": True, "queue": ["bottleneck"]}
    elif part == "fine":
        record = {}
    columns = RUN_COLUMNS + (SERIES_COLUMNS if series else ())
    runs: dict[str, list[Any]] = {k: [] for k in columns}
    owd_parts: list[tuple[int, str, int, np.ndarray]] = []
    cwnd_parts: list[pd.DataFrame] = []
    queue_parts: list[pd.DataFrame] = []
    first, stop = spec["reps"]
    duration = float(spec["duration_s"])
    window = (duration * SERIES_SKIP_FRACTION, duration)
    # Without start jitter the resolved scenario does not depend on the seed: build it once per limit and variant.
    jitter = any(f.get("start_jitter") for f in base.get("flows", []))
    cores: dict[tuple[int, str, int], tuple[dict[str, Any], str, float]] = {}

    def resolved(limit: int, variant: str, core_seed: int) -> tuple[dict[str, Any], str, float]:
        key = (limit, variant, core_seed if jitter else -1)
        if key not in cores:
            doc = configure(base, spec["rtt_ms"], semantic, limit, variant, duration, record)
            core = Scenario.from_dict(doc).to_core(core_seed)
            cores[key] = (core, json.dumps(core, separators=(",", ":")), base_owd_s(core, VOICE_BYTES))
        return cores[key]

    for limit in spec["limits"]:
        for rep in range(first, stop):
            core_seed = seed + rep
            for v in VARIANTS:
                core, text, base_owd = resolved(int(limit), v.name, core_seed)
                out = json.loads(_core.run(text, core_seed))
                row, induced = run_row(out, semantic, int(limit), v.name, rep, core_seed, base_owd)
                if spec.get("keep_owd") and len(induced):
                    owd_parts.append((int(limit), v.name, rep, induced.astype(np.float32)))
                if series:
                    f = out["flows"]
                    cw = out["series"]["cwnd"]
                    mine = np.asarray(cw["flow_id"]) == f["flow_id"][f["name"].index("bulk")]
                    c = pd.DataFrame({"t_s": cw["t_s"], "cwnd_bytes": cw["cwnd_bytes"], "state": cw["state"]})[mine]
                    qs = out["series"]["queue"]
                    link_id = out["meta"]["link_names"].index("bottleneck")
                    qq = pd.DataFrame({"t_s": qs["t_s"], "link": qs["link"], "pkts": qs["pkts"], "bytes": qs["bytes"]})
                    qq = qq[qq["link"] == link_id].drop(columns="link")
                    row.update(A.series_stats(c["t_s"].to_numpy(), c["cwnd_bytes"].to_numpy(), c["state"].to_numpy(),
                                              qq["t_s"].to_numpy(), qq["bytes"].to_numpy(), *window, SERIES_GRID_S))
                    if rep == 0:  # the figures draw one run per TCP
                        cwnd_parts.append(c.assign(limit=int(limit), cc=v.name))
                        queue_parts.append(qq.assign(limit=int(limit), cc=v.name))
                for k in columns:
                    runs[k].append(row[k])
    result: dict[str, Any] = {"runs": {k: np.asarray(vals) for k, vals in runs.items()}}
    if spec.get("keep_owd"):
        sizes = [len(p[3]) for p in owd_parts]
        result["owd"] = {
            "limit": np.repeat([p[0] for p in owd_parts], sizes).astype(np.int64),
            "cc": np.repeat([p[1] for p in owd_parts], sizes),
            "rep": np.repeat([p[2] for p in owd_parts], sizes).astype(np.int32),
            "iowd_s": np.concatenate([p[3] for p in owd_parts]) if owd_parts else np.zeros(0, np.float32),
        }
    if series and cwnd_parts:
        order = ["limit", "cc", "t_s"]
        cw = pd.concat(cwnd_parts, ignore_index=True)[order + ["cwnd_bytes", "state"]]
        qu = pd.concat(queue_parts, ignore_index=True)[order + ["pkts", "bytes"]]
        result["cwnd"] = {k: v.to_numpy() for k, v in cw.items()}
        result["queue"] = {k: v.to_numpy() for k, v in qu.items()}
    return result


# --------------------------------------------------------------------------------------
# Planning


_PART_ORDER = ("grid", "fine", "series")
#: CPU seconds of one 60 s run per link (measured: ADSL1 ~7 ms, ADSL2 ~50 ms), for task sizing.
_RUN_COST_S = {"adsl1": 0.007, "adsl2": 0.050}
_TASK_TARGET_S = 2.0


def _chunks(values: list[int], size: int) -> list[list[int]]:
    return [values[i:i + size] for i in range(0, len(values), max(size, 1))]


def plan(params: StudyParams) -> list[BlockTask]:
    """The study's tasks, heaviest first. A task is one (part, link, RTT, semantic), a chunk of
    queue limits sized to about 2 s of CPU, a block of replications and both TCP variants."""
    texts = {link: base_scenario(link, params.scenario_dir())[0] for link in params.links}
    version = _core.version()
    tasks: list[BlockTask] = []

    def add(part: str, link: str, rtt_ms: int, semantic: str, limits: list[int], reps: int, keep_owd: bool) -> None:
        block = params.block or reps
        per_run = _RUN_COST_S[link] * params.duration_s / 60.0 * len(VARIANTS) * min(block, reps)
        for chunk in _chunks(limits, max(1, int(_TASK_TARGET_S / per_run))):
            for first in range(0, reps, block):
                spec = {"study": NAME, "version": STUDY_VERSION, "part": part, "link": link, "rtt_ms": rtt_ms,
                        "semantic": semantic, "limits": chunk, "reps": [first, min(first + block, reps)],
                        "seed": int(params.seed), "duration_s": float(params.duration_s), "scenario": texts[link],
                        "keep_owd": keep_owd, "core": version}
                tasks.append(BlockTask(engine.task_key(spec), spec, len(chunk) * (spec["reps"][1] - first) * len(VARIANTS)))

    for link in params.links:
        for rtt in params.rtts_ms:
            for sem in SEMANTICS:
                sizes = params.sizes(sem)
                if sem == OWD_QUEUE[0]:  # the OWD figure's queue alone, with its per-packet delays
                    add("grid", link, rtt, sem, [OWD_QUEUE[1]], params.reps, True)
                    sizes = [s for s in sizes if s != OWD_QUEUE[1]]
                add("grid", link, rtt, sem, sizes, params.reps, False)
    if params.has_fine():
        for sem in ("byte_loose", "byte_strict"):
            add("fine", FINE_LINK, FINE_RTT_MS, sem, params.fine_sizes(), params.fine_replications(), False)
        add("fine", FINE_LINK, FINE_RTT_MS, "slot", list(FINE_PS), params.fine_replications(), False)
    if SERIES_LINK in params.links:
        for sem in SEMANTICS:
            add("series", SERIES_LINK, SERIES_RTT_MS, sem, [SERIES_LIMITS[sem]], params.reps, False)
    return sorted(tasks, key=lambda t: -t.runs * _RUN_COST_S[t.spec["link"]])


# --------------------------------------------------------------------------------------
# The study's definition for the shared machine


_RUN_KEY = ["part", "link", "rtt_ms", "semantic", "limit", "cc", "rep"]


class Definition(engine.StudyDefinition):
    """Seed 003 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("runs", "owd", "cwnd", "queue")
    config_columns = (("part", "string"), ("link", "string"), ("rtt_ms", "int64"), ("semantic", "string"))
    empty_columns = tuple(_RUN_KEY)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (_PART_ORDER.index(spec["part"]), LINKS.index(spec["link"]), spec["rtt_ms"],
                SEMANTICS.index(spec["semantic"]), spec["limits"][0], spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        runs = tables["runs"]
        fa = A.fine_analysis(runs, params)
        derived = {"summary": A.summary_table(runs), "fine_curves": A.fine_curves(runs),
                   "owd_percentiles": A.owd_percentiles(tables["owd"]), "periodicity": A.periodicity_table(fa)}
        return derived, claims.evaluate_findings(runs, params, fa)

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.home_gateway import report

        return report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.home_gateway import report

        return report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study into ``out``: tables, figures, ``findings.json``, ``report.html``.

    Example (the CLI is ``tcplab study home-gateway --reps 2 --links adsl1``)::

        >>> res = run("results/hg", StudyParams(reps=2, links=["adsl1"]), progress=False)  # doctest: +SKIP
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)
