"""Study ``satellite``: seed 004 end to end (issue 9).

Seed 004 is M. Kojo, "On Efficient and TCP/IP Friendly Link Layers for Wireless WANs",
FDPW 2005 (``shared/seeds/004_af47799115785341.txt``; SPEC.md, "Seed 004"): how much a
TCP-friendly link layer (SLACP) and the satellite's capacity allocation (DAMA: CRA,
RBDC, VBDC) change TCP over a lossy GEO return link.

What runs (every choice the seed leaves open is a :class:`StudyParams` field or a
scenario field, and ``docs/studies/satellite.md`` explains each):

- **Configurations are scenario files**: ``examples/satellite/geo_return.toml`` (no
  SLACP: 28.8 kB MAC buffer) and ``geo_return_slacp.toml`` (SLACP: 14.4 kB MAC buffer
  plus a 14.4 kB IP queue), swept by path (:func:`variant_document`): the DAMA mode
  (``topology.links[0].mac.mode``), the error model (``topology.links[0].error``, seed
  004's Markov time series by name), the TCP variant (``[tcp]``) and the workload
  (``[[flows]]``: 1 x 1 MB or 4 x 250 kB). ``tcplab run`` runs any of them alone.
- **TCP variants** (:data:`VARIANTS`): Reference and Enhanced (profiles ``reference``
  and ``enhanced``, MSS 1410 for the 1450 B MTU), and on the 1 MB workload also
  Enhanced with CBI ssthresh reuse and Enhanced without DAASS. CBI (RFC 2140 temporal
  sharing) starts the connection with the ssthresh the previous connection to the gateway
  ended with: the Enhanced transfer of the same configuration and replication (the
  scenario's ``tcp.initial_ssthresh``; none when that transfer never set one).
- **Common random numbers**: replication ``r`` runs with core seed ``seed + r``; the
  return link's error time series is drawn from that seed alone (its own substream,
  independent of the traffic), so every DAMA mode, SLACP setting, TCP variant and
  workload of a replication sees the same bursts.
- **A diagnostic** (``rbdc_diagnostic``): RBDC with a 1 s grant timeout instead of the
  default 318 ms, on the None/High/Huge models, to test the cause of finding S3.
- **A trace** (``trace``): Enhanced TCP, no SLACP, no errors, replication 0, every DAMA
  mode, with cwnd, the MAC buffer's occupancy and drops recorded (the seed's slow-start
  overshoot trace).

Execution is the shared study machine's (:mod:`tcplab.studies.engine`): a task is one
configuration (DAMA, SLACP, error model, workload) x a block of replications x its TCP
variants; the worker calls ``_core.run`` on the core JSON of each and keeps one row per
run (:func:`simulate_block`).

Example:
    >>> doc = variant_document(base_documents()[False], "rbdc", "high", 4, "enhanced")
    >>> doc["topology"]["links"][0]["mac"]["mode"], doc["topology"]["links"][0]["error"]["name"]
    ('rbdc', 'high')
    >>> doc["tcp"]["profile"], doc["flows"][0]["count"], doc["flows"][0]["bytes"]
    ('enhanced', 4, '250kB')
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import _core, stats
from tcplab.scenario import Scenario
from tcplab.studies import engine
from tcplab.studies import findings as fnd
from tcplab.studies.engine import BlockTask, StudyResult, task_key
from tcplab.sweeps import _set_path

__all__ = [
    "NAME", "SUMMARY", "DAMA_MODES", "ERROR_MODELS", "VARIANTS", "WORKLOADS", "StudyParams", "StudyResult",
    "base_documents", "variant_document", "simulate_block", "plan", "run", "run_metrics", "summary_table",
    "evaluate_findings", "EXAMPLES",
]

NAME = "satellite"
SUMMARY = "Seed 004: SLACP link layer and DAMA (CRA/RBDC/VBDC) under TCP over a lossy GEO return link"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 1

NS_PER_S = 1_000_000_000
#: The scenario files the configurations come from.
EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "satellite"
BASE_FILES = {False: "geo_return.toml", True: "geo_return_slacp.toml"}
DAMA_MODES = ("cra", "rbdc", "vbdc")
#: The diagnostic RBDC variant: the same MAC with a 1 s grant timeout.
RBDC_DIAGNOSTIC = "rbdc-1s"
ERROR_MODELS = ("none", "low", "medium", "high", "vhigh", "huge")
ERROR_LABELS = {"none": "None", "low": "Low", "medium": "Medium", "high": "High", "vhigh": "VHigh", "huge": "Huge"}
#: Seed 004's error table: average PER and the time series (between bursts, burst length).
SEED_ERROR_TABLE = {
    "none": ("0%", "error-free", "–"), "low": ("1-1.5%", "10-30 s", "60 ms"),
    "medium": ("3-4%", "5-15 s", "100-300 ms"), "high": ("5-6%", "2-10 s", "100-300 ms"),
    "vhigh": ("7-8%", "0-10 s", "100-300 ms"), "huge": ("13-15%", "0-7 s", "100 ms"),
}
#: Workloads: flows x bytes each (1 MB in all).
WORKLOADS = {1: "1MB", 4: "250kB"}
#: TCP variants in plotting order; the last two run on the 1 MB workload only.
VARIANTS = ("reference", "enhanced", "enhanced+cbi", "enhanced-daass")
VARIANT_LABELS = {"reference": "Reference", "enhanced": "Enhanced", "enhanced+cbi": "Enhanced + CBI",
                  "enhanced-daass": "Enhanced, no DAASS"}
HIGH_ERRORS = ("high", "vhigh", "huge")
LOW_ERRORS = ("none", "low")


def base_documents() -> dict[bool, dict[str, Any]]:
    """The two scenario files (without / with SLACP) as parsed TOML documents."""
    from tcplab.scenario import parse_toml, read_text

    return {slacp: parse_toml(read_text(EXAMPLES / f), str(EXAMPLES / f)) for slacp, f in BASE_FILES.items()}


def variant_document(base: dict[str, Any], dama: str, error: str, n_flows: int, variant: str) -> dict[str, Any]:
    """The scenario document of one configuration and TCP variant: ``base`` with paths set.

    Example:
        >>> d = variant_document(base_documents()[True], "rbdc-1s", "none", 1, "enhanced-daass")
        >>> d["topology"]["links"][0]["mac"], "error" in d["topology"]["links"][0], d["tcp"]["daass"]
        ({'kind': 'dama', 'mode': 'rbdc', 'rbdc_timeout': '1s'}, False, False)
    """
    doc = copy.deepcopy(base)
    link = "topology.links[0]"
    if dama == RBDC_DIAGNOSTIC:
        _set_path(doc, f"{link}.mac", {"kind": "dama", "mode": "rbdc", "rbdc_timeout": "1s"})
    else:
        _set_path(doc, f"{link}.mac.mode", dama)
    doc["topology"]["links"][0].pop("error", None)
    if error != "none":
        _set_path(doc, f"{link}.error", {"kind": "markov", "form": "preset", "name": error})
    _set_path(doc, "tcp.profile", "reference" if variant == "reference" else "enhanced")
    if variant == "enhanced-daass":
        _set_path(doc, "tcp.daass", False)
    flow = doc["flows"][0]
    flow.pop("bytes", None)
    flow["bytes"] = WORKLOADS[n_flows]
    if n_flows > 1:
        flow["count"] = n_flows
    return doc


def core_scenario(base: dict[str, Any], dama: str, error: str, n_flows: int, variant: str) -> dict[str, Any]:
    """The core JSON (as a dict) of one configuration and TCP variant, validated by tcplab.scenario."""
    return Scenario.from_dict(variant_document(base, dama, error, n_flows, variant)).to_core()


def variants_of(n_flows: int) -> tuple[str, ...]:
    """The TCP variants run on a workload (CBI and no-DAASS on the 1 MB transfer only)."""
    return VARIANTS if n_flows == 1 else VARIANTS[:2]


# --------------------------------------------------------------------------------------
# The worker

_RUN_COLUMNS = (
    "rep", "variant", "core_seed", "elapsed_s", "elapsed_mean_s", "unfinished", "segs_sent", "retransmits", "rtos",
    "spurious_rtos", "frto_spurious", "final_ssthresh_bytes", "initial_ssthresh_bytes", "drops_overflow",
    "drops_corruption", "occ_max_bytes", "realised_per", "mac_slots_allocated", "mac_requests", "ll_frames_sent",
    "ll_frames_retransmitted", "ll_fec_frames_sent", "ll_fec_blocks", "ll_fec_blocks_recovered",
    "ll_frames_recovered", "ll_frames_given_up", "ll_residual_loss", "ll_frames_corrupted", "ll_acks_sent",
    "sim_end_s", "events", "digest",
)


def _nan(v: Any) -> float:
    return math.nan if v is None else float(v)


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: every TCP variant x the replications ``spec["reps"]`` of one configuration.

    ``spec`` holds ``dama``, ``slacp``, ``error``, ``n_flows``, ``reps`` ([first, stop)),
    ``seed``, ``base`` (the scenario document), ``trace`` and optionally ``variants``
    (default: :func:`variants_of`). Returns the ``runs`` table (one row per run) or, for
    a trace task (Enhanced, replication ``reps[0]``), ``trace_cwnd``, ``trace_queue`` and
    ``trace_drops``.

    Example:
        >>> spec = {"dama": "cra", "slacp": True, "error": "huge", "n_flows": 1, "reps": [0, 1], "seed": 1,
        ...         "base": base_documents()[True], "trace": False}
        >>> out = simulate_block(spec)
        >>> out["runs"]["variant"].tolist()
        ['reference', 'enhanced', 'enhanced+cbi', 'enhanced-daass']
        >>> bool((out["runs"]["elapsed_s"] > 62.5).all())   # 1 MB at 128 kbit/s takes 62.5 s
        True
    """
    n = int(spec["n_flows"])
    seed = int(spec["seed"])
    wanted = ("enhanced",) if spec["trace"] else tuple(spec.get("variants") or variants_of(n))
    cores = {v: core_scenario(spec["base"], spec["dama"], spec["error"], n, "enhanced" if v == "enhanced+cbi" else v)
             for v in wanted}
    rows: dict[str, list[Any]] = {k: [] for k in _RUN_COLUMNS}
    out: dict[str, Any] = {}
    first, stop = spec["reps"]
    for rep in range(first, stop):
        core_seed = seed + rep
        cached_ssthresh = None
        for variant, core in cores.items():
            sc = copy.deepcopy(core) if variant == "enhanced+cbi" or spec["trace"] else core
            initial = None
            if variant == "enhanced+cbi" and cached_ssthresh is not None:
                # RFC 2140 temporal sharing: the previous connection's final ssthresh.
                initial = int(cached_ssthresh)
                for f in sc["flows"]:
                    f["tcp"]["initial_ssthresh"] = initial
            if spec["trace"]:
                sc["record"].update({"cwnd": True, "queue": ["return"], "drops": True})
            doc = json.loads(_core.run(json.dumps(sc, separators=(",", ":")), core_seed))
            f, q, lk, meta = doc["flows"], doc["queues"], doc["links"], doc["meta"]
            qi, li = q["link"].index("return"), lk["link"].index("return")
            elapsed = np.array([_nan(v) for v in f["elapsed_s"]])
            if variant == "enhanced":
                cached_ssthresh = f["final_ssthresh_bytes"][0] if n == 1 else None
            values = {
                "rep": rep, "variant": variant, "core_seed": core_seed,
                "elapsed_s": float(elapsed.max()) if not np.isnan(elapsed).any() else math.nan,
                "elapsed_mean_s": float(np.nanmean(elapsed)) if not np.isnan(elapsed).all() else math.nan,
                "unfinished": int(np.isnan(elapsed).sum()), "segs_sent": int(sum(f["segs_sent"])),
                "retransmits": int(sum(f["retransmits"])), "rtos": int(sum(f["rtos"])),
                "spurious_rtos": int(sum(f["spurious_rtos"])), "frto_spurious": int(sum(f["frto_spurious"])),
                "final_ssthresh_bytes": _nan(f["final_ssthresh_bytes"][0]), "initial_ssthresh_bytes": _nan(initial),
                "drops_overflow": q["drops_overflow"][qi], "drops_corruption": q["drops_corruption"][qi],
                "occ_max_bytes": q["occ_max_bytes"][qi], "realised_per": _nan(lk["realised_per"][li]),
                "mac_slots_allocated": _nan(lk["mac_slots_allocated"][li]), "mac_requests": _nan(lk["mac_requests"][li]),
                "sim_end_s": meta["sim_end_s"], "events": meta["events"], "digest": meta["digest"],
            }
            for c in _RUN_COLUMNS:
                if c.startswith("ll_"):
                    values[c] = _nan(lk[c][li])
            for c in _RUN_COLUMNS:
                rows[c].append(values[c])
            if spec["trace"]:
                s = doc["series"]
                out["trace_cwnd"] = {"t_s": s["cwnd"]["t_s"], "cwnd_bytes": s["cwnd"]["cwnd_bytes"],
                                     "ssthresh_bytes": [_nan(x) for x in s["cwnd"]["ssthresh_bytes"]],
                                     "state": s["cwnd"]["state"]}
                out["trace_queue"] = {"t_s": s["queue"]["t_s"], "pkts": s["queue"]["pkts"], "bytes": s["queue"]["bytes"]}
                drops = s["drops"]
                keep = [i for i, l in enumerate(drops["link"]) if l == 0]
                out["trace_drops"] = {"t_s": [drops["t_s"][i] for i in keep], "cause": [drops["cause"][i] for i in keep]}
    if not spec["trace"]:
        out["runs"] = {k: np.asarray(v) for k, v in rows.items()}
    return out


# --------------------------------------------------------------------------------------
# Planning and running


@dataclass
class StudyParams:
    """Everything that defines a run of the study (and nothing about how it is executed).

    Attributes:
        reps: replications per configuration (seed 004: 32).
        links: accepted for the CLI's ``--links``; the study has one link, ``geo``.
        errors: error models to run, a subset of :data:`ERROR_MODELS` (a comma-separated
            string from the CLI: ``--set errors=none,huge``).
        seed: master seed; replication r uses core seed ``seed + r``.
        block: replications per task.
        rbdc_diagnostic: also run RBDC with a 1 s grant timeout (None, High, Huge).
        trace: also run the slow-start overshoot traces.

    Example:
        >>> # 3 DAMA x 2 SLACP x 2 errors x (4 variants at 1 MB + 2 at 4 x 250 kB) x 2 reps = 144,
        >>> # + diagnostic 2 SLACP x 2 errors x 2 variants x 2 reps = 16, + 3 traces
        >>> StudyParams(reps=2, errors="none,huge").n_runs()
        163
    """

    reps: int = 32
    links: list[str] = field(default_factory=lambda: ["geo"])
    errors: Any = field(default_factory=lambda: list(ERROR_MODELS))
    seed: int = 1
    block: int = 32
    rbdc_diagnostic: bool = True
    trace: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps must be an integer >= 2 (confidence intervals need two), got {self.reps!r}")
        if list(self.links) != ["geo"]:
            raise ValueError(f"unknown link(s) {self.links!r}; accepted: geo")
        errors = self.errors.split(",") if isinstance(self.errors, str) else list(self.errors)
        errors = [e.strip() for e in errors if e.strip()]
        unknown = [e for e in errors if e not in ERROR_MODELS]
        if unknown or not errors:
            raise ValueError(f"errors: unknown error model(s) {unknown or errors!r}; accepted: {', '.join(ERROR_MODELS)}")
        self.errors = [e for e in ERROR_MODELS if e in errors]
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1:
            raise ValueError(f"block must be an integer >= 1, got {self.block!r}")

    def configurations(self) -> list[tuple[str, bool, str, int]]:
        """(DAMA, SLACP, error model, flows) of the main grid, in report order."""
        return [(d, s, e, n) for n in WORKLOADS for d in DAMA_MODES for s in (False, True) for e in self.errors]

    def diagnostic_configurations(self) -> list[tuple[str, bool, str, int]]:
        """The RBDC-timeout diagnostic: RBDC with a 1 s timeout on None/High/Huge, 1 MB."""
        if not self.rbdc_diagnostic:
            return []
        return [(RBDC_DIAGNOSTIC, s, e, 1) for s in (False, True) for e in ("none", "high", "huge") if e in self.errors]

    def n_runs(self) -> int:
        """Simulations in the study."""
        main = sum(len(variants_of(n)) for *_, n in self.configurations()) * self.reps
        diag = len(self.diagnostic_configurations()) * 2 * self.reps
        return main + diag + (len(DAMA_MODES) if self.trace else 0)


def plan(params: StudyParams) -> list[BlockTask]:
    """The tasks: every configuration x block of replications, heaviest (lossy, 1 MB) first.

    Example:
        >>> tasks = plan(StudyParams(reps=4, errors="none", rbdc_diagnostic=False, trace=False))
        >>> len(tasks), sum(t.runs for t in tasks)
        (12, 144)
    """
    bases = base_documents()
    tasks = []
    configs = [(c, False) for c in params.configurations() + params.diagnostic_configurations()]
    if params.trace:
        configs += [((d, False, "none", 1), True) for d in DAMA_MODES]
    for (dama, slacp, error, n), trace in configs:
        reps = [(0, 1)] if trace else [(f, min(f + params.block, params.reps)) for f in range(0, params.reps, params.block)]
        n_variants = 1 if trace else (2 if dama == RBDC_DIAGNOSTIC else len(variants_of(n)))
        for first, stop in reps:
            spec = {"study": NAME, "version": STUDY_VERSION, "dama": dama, "slacp": slacp, "error": error,
                    "n_flows": n, "reps": [first, stop], "seed": int(params.seed), "trace": trace,
                    "base": bases[slacp], "core": _core.version()}
            if dama == RBDC_DIAGNOSTIC:
                spec["variants"] = ["reference", "enhanced"]
            tasks.append(BlockTask(task_key(spec), spec, (stop - first) * n_variants))
    weight = {e: i for i, e in enumerate(ERROR_MODELS)}
    return sorted(tasks, key=lambda t: (-weight[t.spec["error"]], -t.runs))


CONFIG = ["dama", "slacp", "error", "n_flows"]
RUN = CONFIG + ["variant", "rep"]
_DAMA_ORDER = list(DAMA_MODES) + [RBDC_DIAGNOSTIC]


def _order(df: pd.DataFrame) -> pd.DataFrame:
    if not len(df):
        return df
    keys = pd.DataFrame({"_n": df["n_flows"], "_d": df["dama"].map(_DAMA_ORDER.index), "_s": df["slacp"].astype(int),
                         "_e": df["error"].map(list(ERROR_MODELS).index),
                         "_v": df["variant"].map(list(VARIANTS).index)}, index=df.index)
    ordered = pd.concat([df, keys], axis=1).sort_values(["_n", "_d", "_s", "_e", "rep", "_v"], kind="stable")
    return ordered.drop(columns=list(keys.columns)).reset_index(drop=True)


class Definition(engine.StudyDefinition):
    """Seed 004 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = "004_af47799115785341"
    version = STUDY_VERSION
    task_tables = ("runs", "trace_cwnd", "trace_queue", "trace_drops")
    config_columns = (("dama", "string"), ("slacp", "bool"), ("error", "string"), ("n_flows", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (spec["trace"], spec["n_flows"], _DAMA_ORDER.index(spec["dama"]), spec["slacp"],
                ERROR_MODELS.index(spec["error"]), spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def params_dict(self, params: StudyParams) -> dict[str, Any]:
        return asdict(params)

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        rm = run_metrics(tables["runs"])
        return {"run_metrics": rm, "summary": summary_table(rm)}, evaluate_findings(rm, params)

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.satellite import report as satellite_report

        return satellite_report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.satellite import report as satellite_report

        return satellite_report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    The CLI is ``tcplab study satellite [--reps N] [--jobs J] [--scheduler ADDR] [--out DIR]``.
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


# --------------------------------------------------------------------------------------
# Analysis


def run_metrics(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, in report order, with derived columns.

    ``retx_per_frame`` = SLACP retransmissions per frame first sent; ``fec_per_frame`` =
    redundancy frames per frame first sent (NaN without SLACP).
    """
    if not len(runs):
        return runs
    rm = runs.copy()
    rm["slacp"] = rm["slacp"].astype(bool)
    rm["retx_per_frame"] = rm["ll_frames_retransmitted"] / rm["ll_frames_sent"]
    rm["fec_per_frame"] = rm["ll_fec_frames_sent"] / rm["ll_frames_sent"]
    return _order(rm)


def summary_table(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means with 95% Student-t half-widths over replications."""
    rows = []
    for key, part in rm.groupby(RUN[:-1], sort=False):
        dama, slacp, error, n, variant = key
        row: dict[str, Any] = {"DAMA": dama, "SLACP": "on" if slacp else "off", "error": ERROR_LABELS[error],
                               "workload": f"{n} x {WORKLOADS[n]}", "TCP": VARIANT_LABELS[variant], "reps": len(part)}
        for col, name in (("elapsed_s", "elapsed (s)"), ("retransmits", "TCP retx/run"), ("rtos", "RTOs/run"),
                          ("drops_overflow", "overflow drops/run"), ("ll_frames_given_up", "given up/run")):
            est = stats.mean_ci(part[col].astype(float))
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _paired(rm: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, where: dict[str, Sequence[Any]],
            relative: bool = True) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    return fnd.paired(rm, metric, factor, test, ref, where, relative, unit=RUN)


def _per_rep(pairs: pd.DataFrame) -> pd.Series:
    return pairs.groupby("rep")["diff"].mean() if len(pairs) else pd.Series(dtype=float)


def _difference(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, Any]:
    """Per replication, (mean paired difference in scope a) - (in scope b); Student-t over replications."""
    d = (_per_rep(a) - _per_rep(b)).dropna()
    return fnd.estimate(d) if len(d) else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}


def evaluate_findings(rm: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """Checks seed 004's five findings; returns the ``findings.json`` document.

    Every comparison is paired by replication (the same error time series) and pooled
    over the configurations in its scope: per replication, the mean relative change of
    the elapsed time (``elapsed_s``: until the last flow's last byte), then a 95%
    Student-t interval over the replications. A "difference" check compares two such
    relative changes replication by replication.
    """
    main = rm[rm["dama"].isin(DAMA_MODES)]
    errors = [e for e in params.errors]
    high = [e for e in HIGH_ERRORS if e in errors]
    low = [e for e in LOW_ERRORS if e in errors]
    base_tcp = ["reference", "enhanced"]
    findings: list[dict[str, Any]] = []
    check, finding, below, above, count = fnd.legacy_check, fnd.finding, fnd.below, fnd.above, fnd.count

    # S1 ------------------------------------------------------------------------------
    pairs, est, per = _paired(main, "elapsed_s", "variant", "enhanced", "reference", {})
    checks = [check("S1a", "Enhanced TCP is faster than Reference TCP",
                    "relative change of elapsed time, Enhanced vs Reference (same configuration and replication), "
                    "pooled over every DAMA mode, SLACP setting, error model and workload; held if the 95% CI is below 0",
                    "relative change of elapsed time, Enhanced vs Reference", "fraction", est, below(est), per,
                    configs_below_zero=count(per, "below"), configs_above_zero=count(per, "above"))]
    off, e_off, _ = _paired(main, "elapsed_s", "variant", "enhanced", "reference", {"slacp": [False]})
    on, e_on, _ = _paired(main, "elapsed_s", "variant", "enhanced", "reference", {"slacp": [True]})
    est = _difference(off, on)
    checks.append(check("S1b", "... in particular without SLACP",
                        "per replication, the Enhanced-vs-Reference relative change without SLACP minus the same with "
                        "SLACP (pooled over DAMA, errors, workloads); held if the 95% CI is below 0 (a larger gain "
                        "without SLACP)", "difference of relative changes, SLACP off - on", "fraction", est, below(est),
                        [], gain_without_slacp=fnd.clean(e_off), gain_with_slacp=fnd.clean(e_on)))
    findings.append(finding("S1", "Enhanced TCP performs better than Reference TCP, in particular without SLACP", checks))

    # S2 ------------------------------------------------------------------------------
    checks = []
    if high:
        hi, est, per = _paired(main, "elapsed_s", "slacp", True, False, {"error": high, "variant": base_tcp})
        checks.append(check("S2a", "SLACP shortens transfers when the error rate is high",
                            f"relative change of elapsed time, SLACP on vs off, error models {', '.join(high)}, pooled "
                            "over DAMA modes, Reference/Enhanced and workloads; held if the 95% CI is below 0",
                            "relative change of elapsed time, SLACP on vs off", "fraction", est, below(est), per,
                            configs_below_zero=count(per, "below"), configs_above_zero=count(per, "above")))
        if low:
            lo, e_lo, _ = _paired(main, "elapsed_s", "slacp", True, False, {"error": low, "variant": base_tcp})
            est = _difference(hi, lo)
            checks.append(check("S2b", "... and more than when it is low",
                                f"per replication, SLACP's relative change at {', '.join(high)} minus at {', '.join(low)}; "
                                "held if the 95% CI is below 0", "difference of relative changes, high - low errors",
                                "fraction", est, below(est), [], change_at_low_errors=fnd.clean(e_lo)))
    findings.append(finding("S2", "SLACP improves TCP significantly when the error rate is high", checks))

    # S3 ------------------------------------------------------------------------------
    checks = []
    scope = {"variant": base_tcp}
    for cid, test, ref, claim in (("S3a", "rbdc", "cra", "CRA is faster than RBDC"),
                                  ("S3b", "vbdc", "cra", "CRA is faster than VBDC"),
                                  ("S3c", "vbdc", "rbdc", "RBDC is faster than VBDC")):
        _, est, per = _paired(main, "elapsed_s", "dama", test, ref, scope)
        checks.append(check(cid, claim, f"relative change of elapsed time, {test.upper()} vs {ref.upper()}, pooled over "
                            "SLACP settings, error models, workloads, Reference/Enhanced; held if the 95% CI is above 0",
                            f"relative change of elapsed time, {test.upper()} vs {ref.upper()}", "fraction", est,
                            above(est), per, configs_above_zero=count(per, "above"),
                            configs_below_zero=count(per, "below")))
    if high and low:
        hi, e_hi, per_hi = _paired(main, "elapsed_s", "dama", "rbdc", "cra", {"error": high, "variant": base_tcp})
        lo, e_lo, _ = _paired(main, "elapsed_s", "dama", "rbdc", "cra", {"error": low, "variant": base_tcp})
        est = _difference(hi, lo)
        hv, e_hv, _ = _paired(main, "elapsed_s", "dama", "rbdc", "vbdc", {"error": high, "variant": base_tcp})
        checks.append(check("S3d", "with high error rates TCP performs very poorly with RBDC",
                            f"per replication, RBDC's relative slowdown vs CRA at {', '.join(high)} minus at "
                            f"{', '.join(low)}; held if the 95% CI is above 0 (RBDC suffers more from errors), and RBDC "
                            "is not faster than VBDC at those error rates (RBDC vs VBDC CI not below 0)",
                            "difference of RBDC-vs-CRA relative changes, high - low errors", "fraction", est,
                            above(est) and not below(e_hv), per_hi, rbdc_vs_cra_high=fnd.clean(e_hi),
                            rbdc_vs_cra_low=fnd.clean(e_lo), rbdc_vs_vbdc_high=fnd.clean(e_hv)))
    findings.append(finding("S3", "A longer allocation delay means slower error recovery: CRA is best, RBDC is better "
                                  "than VBDC, and with high error rates TCP performs very poorly with RBDC", checks))

    # S4 ------------------------------------------------------------------------------
    checks = []
    if "none" in errors:
        _, est, per = _paired(main, "drops_overflow", "variant", "enhanced", "reference", {"error": ["none"]},
                              relative=False)
        checks.append(check("S4a", "without link errors, Enhanced TCP overshoots the MAC buffer more than Reference",
                            "buffer-overflow drops at the terminal per run, Enhanced - Reference, error model None, "
                            "pooled over DAMA, SLACP and workloads; held if the 95% CI is above 0",
                            "difference of overflow drops per run, Enhanced - Reference", "packets", est, above(est),
                            per, configs_above_zero=count(per, "above")))
        _, est_all, per_all = _paired(main, "elapsed_s", "variant", "enhanced", "reference", {"error": ["none"]})
        slower = [c for c in per_all if c["n"] >= 2 and c["ci"][0] > 0]
        worst = max(per_all, key=lambda c: c["value"]) if per_all else {"value": math.nan, "ci": [math.nan] * 2, "n": 0}
        checks.append(check("S4b", "... and in some configurations that makes Enhanced slower than Reference",
                            "relative change of elapsed time, Enhanced vs Reference, error model None, per configuration "
                            "(DAMA x SLACP x workload); held if at least one configuration's 95% CI is above 0 "
                            "(statistic: the configuration with the largest change)",
                            "relative change of elapsed time, Enhanced vs Reference (worst configuration)", "fraction",
                            worst, bool(slower), per_all, configs_slower=len(slower)))
    # CBI and DAASS on the seed's own subset ("Attacking slow-start overshoot": VBDC,
    # SLACP, 1 MB, every error model); the pooled result over every 1 MB configuration
    # is reported with each check.
    seed_subset = {"n_flows": [1], "dama": ["vbdc"], "slacp": [True]}
    for cid, variant, claim, stat in (("S4c", "enhanced+cbi", "CBI ssthresh reuse helps Enhanced TCP", "CBI"),
                                      ("S4d", "enhanced-daass", "disabling DAASS helps Enhanced TCP", "no DAASS")):
        _, est, per = _paired(main, "elapsed_s", "variant", variant, "enhanced", seed_subset)
        _, est_all, per_all = _paired(main, "elapsed_s", "variant", variant, "enhanced", {"n_flows": [1]})
        checks.append(check(cid, claim,
                            f"relative change of elapsed time, {VARIANT_LABELS[variant]} vs Enhanced, on the seed's "
                            "subset (VBDC, SLACP, 1 MB), pooled over error models; held if the 95% CI is below 0",
                            f"relative change of elapsed time, {stat} vs Enhanced (VBDC, SLACP, 1 MB)", "fraction", est,
                            below(est), per, configs_below_zero=count(per, "below"),
                            configs_above_zero=count(per, "above"), every_1mb_configuration=fnd.clean(est_all),
                            every_1mb_configs_below_zero=count(per_all, "below"),
                            every_1mb_configs_above_zero=count(per_all, "above")))
    findings.append(finding("S4", "Slow-start overshoot decreases Enhanced TCP's performance in some cases; CBI ssthresh "
                                  "reuse helps, and so does disabling DAASS", checks))

    # S5 ------------------------------------------------------------------------------
    _, est, per = _paired(main, "elapsed_s", "n_flows", 4, 1, {"variant": base_tcp})
    findings.append(finding("S5", "Four flows beat one flow for the same 1 MB", [
        check("S5a", "4 x 250 kB finish sooner than 1 x 1 MB",
              "relative change of elapsed time (until the last flow ends), 4 flows vs 1, pooled over DAMA, SLACP, error "
              "models, Reference/Enhanced; held if the 95% CI is below 0", "relative change of elapsed time, 4 flows vs 1",
              "fraction", est, below(est), per, configs_below_zero=count(per, "below"),
              configs_above_zero=count(per, "above"))]))

    doc = fnd.document(NAME, "004_af47799115785341", asdict(params), params.reps, ["geo"], fnd.METHOD, findings)
    doc["diagnostics"] = diagnostics(rm)
    return doc


def diagnostics(rm: pd.DataFrame) -> dict[str, Any]:
    """S3's cause, tested: RBDC with a 1 s grant timeout vs the default 318 ms and vs VBDC.

    The default grant lapses whenever the terminal sends nothing for 12 superframes, which
    a GEO round trip of TCP (> 0.5 s) does in every slow-start round and after every
    timeout, so each restart waits one allocation delay. With a 1 s timeout the grant
    survives those pauses.
    """
    sub = rm[(rm["n_flows"] == 1) & rm["variant"].isin(["reference", "enhanced"])]
    sub = sub[sub["error"].isin(set(sub.loc[sub["dama"] == RBDC_DIAGNOSTIC, "error"]))]
    if not (sub["dama"] == RBDC_DIAGNOSTIC).any():
        return {}
    out: dict[str, Any] = {"scope": "1 MB, Reference and Enhanced, SLACP off and on, error models "
                                    + ", ".join(sorted(set(sub.loc[sub['dama'] == RBDC_DIAGNOSTIC, 'error'])))}
    for name, (test, ref) in {"rbdc_1s_vs_rbdc": (RBDC_DIAGNOSTIC, "rbdc"), "rbdc_1s_vs_vbdc": (RBDC_DIAGNOSTIC, "vbdc"),
                              "rbdc_vs_vbdc": ("rbdc", "vbdc"), "rbdc_1s_vs_cra": (RBDC_DIAGNOSTIC, "cra")}.items():
        _, est, per = _paired(sub, "elapsed_s", "dama", test, ref, {})
        out[name] = {**fnd.clean(est), "per_config": [fnd.clean(c) for c in per]}
    return out
