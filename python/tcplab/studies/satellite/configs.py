"""Set-up of the ``satellite`` study: seed 004's configurations, the worker and the plan.

Seed 004 is M. Kojo, "On Efficient and TCP/IP Friendly Link Layers for Wireless WANs",
FDPW 2005 (``docs/seeds/004_af47799115785341.txt``): how much a TCP-friendly link layer
(SLACP) and the satellite's capacity allocation (DAMA: CRA, RBDC, VBDC) change TCP over a
lossy GEO return link.

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
- **A second reading of Enhanced TCP's initial window** (``iw4``, :data:`IW4_VARIANTS`):
  the seed says "Initial window of 4 segments (RFC 3390)", but RFC 3390's rule gives
  4380 B (3.1 segments) at the seed's MSS of 1410 B, which the ``enhanced`` profile
  uses. The same three Enhanced variants also run with ``tcp.iw = 4`` segments, so that
  every finding can be checked under both readings.
- **Common random numbers**: replication ``r`` runs with core seed ``seed + r``; the
  return link's error time series is drawn from that seed alone (its own substream,
  independent of the traffic), so every DAMA mode, SLACP setting, TCP variant and
  workload of a replication sees the same bursts.
- **The slow-start overshoot of every run** (:func:`overshoot`): every run records
  its cwnd series and the return link's drops; the segments lost to buffer overflow
  while their flow was still in its initial slow start are the overshoot (its size,
  and the time of its first drop).
- **A diagnostic** (``rbdc_diagnostic``, tcplab's own): RBDC with a 1 s grant timeout
  instead of the default 318 ms, on the None/High/Huge models.
- **A trace** (``trace``): Enhanced TCP, no SLACP, no errors, replication 0, every DAMA
  mode, with cwnd, the MAC buffer's occupancy and drops recorded (the seed's slide
  "Trace of Enhanced TCP").

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tcplab import _core
from tcplab.scenario import Scenario
from tcplab.studies.engine import BlockTask, task_key
from tcplab.sweeps import _set_path

__all__ = [
    "NAME", "SEED_STUDY", "SUMMARY", "STUDY_VERSION", "DAMA_MODES", "RBDC_DIAGNOSTIC", "ERROR_MODELS", "ERROR_LABELS",
    "SEED_ERROR_TABLE", "VARIANTS", "IW4_VARIANTS", "ALL_VARIANTS", "IW4", "VARIANT_LABELS", "WORKLOADS",
    "HIGH_ERRORS", "LOW_ERRORS", "LOSSY_ERRORS", "BASE_TCP", "SEED_SUBSET", "EXAMPLES", "StudyParams",
    "base_documents", "variant_document", "core_scenario", "variants_of", "slow_start_exits", "overshoot",
    "simulate_block", "plan", "CONFIG", "RUN", "DAMA_ORDER",
]

NAME = "satellite"
#: The seed text this study reproduces (``docs/seeds/<stem>.txt``).
SEED_STUDY = "004_af47799115785341"
SUMMARY = "Seed 004: SLACP link layer and DAMA (CRA/RBDC/VBDC) under TCP over a lossy GEO return link"
#: Bumped when a change alters what a task computes, so old task files are not reused
#: (2: every run records its cwnd series and drops, for the overshoot columns; the
#: variants a task runs are in its spec).
STUDY_VERSION = 2

#: The scenario files the configurations come from.
EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "satellite"
BASE_FILES = {False: "geo_return.toml", True: "geo_return_slacp.toml"}
DAMA_MODES = ("cra", "rbdc", "vbdc")
#: The diagnostic RBDC variant (tcplab's, not the seed's): the same MAC with a 1 s grant timeout.
RBDC_DIAGNOSTIC = "rbdc-1s"
#: DAMA modes in report order, the diagnostic last.
DAMA_ORDER = [*DAMA_MODES, RBDC_DIAGNOSTIC]
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
#: The Enhanced variants with the seed's literal "initial window of 4 segments" (``tcp.iw = 4``).
IW4_VARIANTS = ("enhanced-iw4", "enhanced-iw4+cbi", "enhanced-iw4-daass")
ALL_VARIANTS = VARIANTS + IW4_VARIANTS
#: The initial window of the second reading, in segments (the seed's words).
IW4 = 4
VARIANT_LABELS = {"reference": "Reference", "enhanced": "Enhanced", "enhanced+cbi": "Enhanced + CBI",
                  "enhanced-daass": "Enhanced, no DAASS", "enhanced-iw4": "Enhanced (IW 4 seg.)",
                  "enhanced-iw4+cbi": "Enhanced (IW 4 seg.) + CBI",
                  "enhanced-iw4-daass": "Enhanced (IW 4 seg.), no DAASS"}
#: The seed's two TCPs (slides "TCP variants under study"); its conclusions compare these.
BASE_TCP = ("reference", "enhanced")
#: "High" link-error rates: the seed's models named High and above (average PER >= 5%).
HIGH_ERRORS = ("high", "vhigh", "huge")
#: Low link-error rates: the error-free link and the model named Low (PER 1-1.5%).
LOW_ERRORS = ("none", "low")
#: Every model with link errors.
LOSSY_ERRORS = ERROR_MODELS[1:]
#: The seed's "reduced set of tests" for CBI and DAASS: its slide "Attacking Slow-Start
#: overshoot" plots "Elapsed Time vs Error model - SLACP", "VBDC - 1MB".
SEED_SUBSET = {"dama": ["vbdc"], "slacp": [True], "n_flows": [1]}
#: The columns of a run (a task's configuration is added in front by the engine).
CONFIG = ["dama", "slacp", "error", "n_flows"]
RUN = CONFIG + ["variant", "rep"]


def base_documents() -> dict[bool, dict[str, Any]]:
    """The two scenario files (without / with SLACP) as parsed TOML documents."""
    from tcplab.scenario import parse_toml, read_text

    return {slacp: parse_toml(read_text(EXAMPLES / f), str(EXAMPLES / f)) for slacp, f in BASE_FILES.items()}


def variant_document(base: dict[str, Any], dama: str, error: str, n_flows: int, variant: str) -> dict[str, Any]:
    """The scenario document of one configuration and TCP variant: ``base`` with paths set.

    ``variant`` is one of :data:`ALL_VARIANTS`; ``+cbi`` variants get the document of
    their Enhanced variant (the reused ssthresh is set per run, :func:`simulate_block`).

    Example:
        >>> d = variant_document(base_documents()[True], "rbdc-1s", "none", 1, "enhanced-daass")
        >>> d["topology"]["links"][0]["mac"], "error" in d["topology"]["links"][0], d["tcp"]["daass"]
        ({'kind': 'dama', 'mode': 'rbdc', 'rbdc_timeout': '1s'}, False, False)
        >>> variant_document(base_documents()[False], "cra", "none", 1, "enhanced-iw4-daass")["tcp"]
        {'profile': 'enhanced', 'mss': '1410B', 'iw': 4, 'daass': False}
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
    if "-iw4" in variant:
        _set_path(doc, "tcp.iw", IW4)
    if variant.endswith("-daass"):
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


def variants_of(n_flows: int, iw4: bool = False) -> tuple[str, ...]:
    """The TCP variants run on a workload (CBI and no-DAASS on the 1 MB transfer only).

    With ``iw4``, also the Enhanced variants with an initial window of 4 segments.

    Example:
        >>> variants_of(4), variants_of(4, iw4=True)
        (('reference', 'enhanced'), ('reference', 'enhanced', 'enhanced-iw4'))
    """
    own = VARIANTS if n_flows == 1 else VARIANTS[:2]
    return own + ((IW4_VARIANTS if n_flows == 1 else IW4_VARIANTS[:1]) if iw4 else ())


def slow_start_exits(cwnd: dict[str, list[Any]]) -> dict[int, float]:
    """When each flow's initial slow start ended, from its cwnd series (s; absent: it never ended).

    The sender leaves its initial slow start when it first leaves the Open state
    (``state`` 0: fast recovery or an RTO) or when cwnd first reaches a finite
    ssthresh (CBI's reused ssthresh ends it without a loss).

    Example:
        >>> cw = {"t_s": [0.0, 2.0, 5.0, 0.0, 3.0], "flow_id": [0, 0, 0, 1, 1], "state": [0, 0, 1, 0, 0],
        ...       "cwnd_bytes": [1410, 2820, 1410, 1410, 5000], "ssthresh_bytes": [None, None, 2000, 4000, 4000]}
        >>> slow_start_exits(cw)
        {0: 5.0, 1: 3.0}
    """
    exits: dict[int, float] = {}
    for t, fid, state, cwnd, ssthresh in zip(cwnd["t_s"], cwnd["flow_id"], cwnd["state"], cwnd["cwnd_bytes"],
                                             cwnd["ssthresh_bytes"]):
        if fid in exits:
            continue
        if state != 0 or (ssthresh is not None and cwnd >= ssthresh):
            exits[fid] = float(t)
    return exits


def overshoot(exits: dict[int, float], t_s: Sequence[float], flow_id: Sequence[int], cause: Sequence[str]
              ) -> tuple[float, int]:
    """The initial slow start's overshoot: ``(time of its first drop in s, segments lost)``.

    The segments a flow lost to buffer overflow at the terminal while still in its
    initial slow start (dropped before :func:`slow_start_exits` says it ended; the
    sender sits on the terminal, so a segment is dropped when it is sent), summed over
    the flows. ``(nan, 0)`` when nothing overflowed during slow start.

    Example:
        >>> overshoot({0: 5.0}, [3.4, 3.5, 4.0, 9.0], [0, 0, 0, 0], ["overflow", "overflow", "corruption", "overflow"])
        (3.4, 2)
        >>> overshoot({}, [], [], [])
        (nan, 0)
    """
    times = [t for t, f, c in zip(t_s, flow_id, cause) if c == "overflow" and t < exits.get(f, math.inf)]
    return (float(times[0]), len(times)) if times else (math.nan, 0)


# --------------------------------------------------------------------------------------
# The worker

_RUN_COLUMNS = (
    "rep", "variant", "core_seed", "elapsed_s", "elapsed_mean_s", "unfinished", "segs_sent", "retransmits", "rtos",
    "spurious_rtos", "frto_spurious", "final_ssthresh_bytes", "initial_ssthresh_bytes", "drops_overflow",
    "drops_corruption", "occ_max_bytes", "occ_mean_bytes", "overshoot_s", "overshoot_drops", "realised_per",
    "mac_slots_allocated", "mac_requests", "ll_frames_sent", "ll_frames_retransmitted", "ll_fec_frames_sent",
    "ll_fec_blocks", "ll_fec_blocks_recovered", "ll_frames_recovered", "ll_frames_given_up", "ll_residual_loss",
    "ll_frames_corrupted", "ll_acks_sent", "sim_end_s", "events", "digest",
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
    cores = {v: core_scenario(spec["base"], spec["dama"], spec["error"], n, v.removesuffix("+cbi")) for v in wanted}
    for core in cores.values():
        # The cwnd series and the drop list give the overshoot columns; recording does not change the run.
        core["record"].update({"cwnd": True, "drops": True})
    rows: dict[str, list[Any]] = {k: [] for k in _RUN_COLUMNS}
    out: dict[str, Any] = {}
    first, stop = spec["reps"]
    for rep in range(first, stop):
        core_seed = seed + rep
        # Final ssthresh of each Enhanced variant's 1 MB transfer, reused by its "+cbi" variant.
        cached_ssthresh: dict[str, Any] = {}
        for variant, core in cores.items():
            cbi = variant.endswith("+cbi")
            sc = copy.deepcopy(core) if cbi or spec["trace"] else core
            initial = None
            if cbi and cached_ssthresh.get(variant.removesuffix("+cbi")) is not None:
                # RFC 2140 temporal sharing: the previous connection's final ssthresh.
                initial = int(cached_ssthresh[variant.removesuffix("+cbi")])
                for f in sc["flows"]:
                    f["tcp"]["initial_ssthresh"] = initial
            if spec["trace"]:
                sc["record"].update({"cwnd": True, "queue": ["return"], "drops": True})
            doc = json.loads(_core.run(json.dumps(sc, separators=(",", ":")), core_seed))
            f, q, lk, meta = doc["flows"], doc["queues"], doc["links"], doc["meta"]
            qi, li = q["link"].index("return"), lk["link"].index("return")
            ret = meta["link_names"].index("return")
            drops = doc["series"]["drops"]
            mine = [i for i, l in enumerate(drops["link"]) if l == ret]
            ss_t, ss_n = overshoot(slow_start_exits(doc["series"]["cwnd"]), [drops["t_s"][i] for i in mine],
                                   [drops["flow_id"][i] for i in mine], [drops["cause"][i] for i in mine])
            elapsed = np.array([_nan(v) for v in f["elapsed_s"]])
            if variant in ("enhanced", "enhanced-iw4"):
                cached_ssthresh[variant] = f["final_ssthresh_bytes"][0] if n == 1 else None
            values = {
                "rep": rep, "variant": variant, "core_seed": core_seed,
                "elapsed_s": float(elapsed.max()) if not np.isnan(elapsed).any() else math.nan,
                "elapsed_mean_s": float(np.nanmean(elapsed)) if not np.isnan(elapsed).all() else math.nan,
                "unfinished": int(np.isnan(elapsed).sum()), "segs_sent": int(sum(f["segs_sent"])),
                "retransmits": int(sum(f["retransmits"])), "rtos": int(sum(f["rtos"])),
                "spurious_rtos": int(sum(f["spurious_rtos"])), "frto_spurious": int(sum(f["frto_spurious"])),
                "final_ssthresh_bytes": _nan(f["final_ssthresh_bytes"][0]), "initial_ssthresh_bytes": _nan(initial),
                "drops_overflow": q["drops_overflow"][qi], "drops_corruption": q["drops_corruption"][qi],
                "occ_max_bytes": q["occ_max_bytes"][qi], "occ_mean_bytes": _nan(q["occ_mean_bytes"][qi]),
                "overshoot_s": ss_t, "overshoot_drops": ss_n, "realised_per": _nan(lk["realised_per"][li]),
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
                out["trace_drops"] = {"t_s": [drops["t_s"][i] for i in mine], "cause": [drops["cause"][i] for i in mine]}
    if not spec["trace"]:
        out["runs"] = {k: np.asarray(v) for k, v in rows.items()}
    return out


# --------------------------------------------------------------------------------------
# Planning


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
        iw4: also run the Enhanced variants with an initial window of 4 segments (the
            seed's words) besides RFC 3390's 4380 B (:data:`IW4_VARIANTS`).

    Example:
        >>> # 3 DAMA x 2 SLACP x 2 errors x (4 variants at 1 MB + 2 at 4 x 250 kB) x 2 reps = 144,
        >>> # + diagnostic 2 SLACP x 2 errors x 2 variants x 2 reps = 16, + 3 traces
        >>> StudyParams(reps=2, errors="none,huge", iw4=False).n_runs()
        163
        >>> # + IW 4 segments: 3 DAMA x 2 SLACP x 2 errors x (3 variants at 1 MB + 1 at 4 x 250 kB) x 2 reps
        >>> StudyParams(reps=2, errors="none,huge").n_runs()
        259
    """

    reps: int = 32
    links: list[str] = field(default_factory=lambda: ["geo"])
    errors: Any = field(default_factory=lambda: list(ERROR_MODELS))
    seed: int = 1
    block: int = 32
    rbdc_diagnostic: bool = True
    trace: bool = True
    iw4: bool = True

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
        main = sum(len(variants_of(n, self.iw4)) for *_, n in self.configurations()) * self.reps
        diag = len(self.diagnostic_configurations()) * 2 * self.reps
        return main + diag + (len(DAMA_MODES) if self.trace else 0)


def plan(params: StudyParams) -> list[BlockTask]:
    """The tasks: every configuration x block of replications, heaviest (lossy, 1 MB) first.

    Example:
        >>> tasks = plan(StudyParams(reps=4, errors="none", rbdc_diagnostic=False, trace=False, iw4=False))
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
        variants = ["enhanced"] if trace else (["reference", "enhanced"] if dama == RBDC_DIAGNOSTIC
                                               else list(variants_of(n, params.iw4)))
        for first, stop in reps:
            spec = {"study": NAME, "version": STUDY_VERSION, "dama": dama, "slacp": slacp, "error": error,
                    "n_flows": n, "reps": [first, stop], "seed": int(params.seed), "trace": trace,
                    "base": bases[slacp], "core": _core.version(), "variants": variants}
            tasks.append(BlockTask(task_key(spec), spec, (stop - first) * len(variants)))
    weight = {e: i for i, e in enumerate(ERROR_MODELS)}
    return sorted(tasks, key=lambda t: (-weight[t.spec["error"]], -t.runs))
