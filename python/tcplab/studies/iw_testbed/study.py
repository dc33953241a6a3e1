"""Study ``iw-testbed``: seed 001's testbed simulated end to end (runs, per-run metrics, the study).

Seed 001 is H.K. J. Chu and Y. Wang, "A testbed study on IW10 vs IW3"
(draft-ietf-tcpm-initcwnd-00, IETF 79, 2010; ``docs/seeds/001_ac085380cef1778f.txt``):
netperf-style web transactions and iperf-like bulk flows over a Linux testbed with a
64 kbit/s or 20 Mbit/s bottleneck. The set-up is :mod:`tcplab.studies.iw_testbed.testbed`;
the claims checked on these runs are :mod:`tcplab.studies.iw_testbed.claims`, the
ledger mapping every seed sentence to them ``ledger.toml`` beside this file.

What runs (``docs/studies/iw-testbed.md`` explains every choice the seed leaves open):

- **Scenarios.** The configurations are ordinary scenario files,
  ``examples/iw-testbed/testbed-<link>.toml`` (``tcplab run`` accepts them). The study
  sets its swept values by path (:func:`~tcplab.studies.iw_testbed.testbed.configure`).
- **Topology.** A dumbbell of 4 client/server pairs; netem-style 150 ms each way
  (RTT 300 ms); the bottleneck 64 kbit/s with a 40-packet queue or 20 Mbit/s with a
  500-packet queue, the same in both directions (HTB on the router).
- **Workload.** Servers ``s0..s3`` answer clients ``d0..d3``: a 200 B request, a
  15 kB response, a new connection each (``kind = "rpc"``), Poisson arrivals at an
  offered load of the bottleneck split equally over the 4 clients, one or 5
  transactions per arrival. With background: 2 bulk CUBIC flows (``s0 -> d0``,
  ``s1 -> d1``) from 0 s and 1 s to the end of the arrivals.
- **Grid** (:func:`~tcplab.studies.iw_testbed.testbed.configurations`): IW3, IW10, or
  the 50/50 mix *per client* (clients 0 and 2 IW3, clients 1 and 3 IW10; the testbed
  set IW per route); SACK on or off; per link a light load (30 %, single opens, no
  background: tcplab's value for the seed's "lightly loaded" tests) and the seed's two
  loads, 75 % / 97.5 % (64 kbit/s) and 72 % / 96 % (20 Mbit/s), each with single or 5
  opens, without or with the 2 background flows.
- **TCP.** Profile ``linux-2.6`` (the seed's kernels predate PRR, Linux 3.2, and
  RACK-TLP, 4.4), CUBIC, the FIN quirk, and the seed's 2.6 kernels' initial RTO (3 s)
  and timestamps (RTT per ACK, Eifel undo, 52 B headers, MSS 1448): set in the
  scenario files.
- **Replications.** Replication ``r`` runs with core seed ``seed + r`` for every IW
  variant and SACK setting: the arrivals are the same draws (common random numbers),
  so variants are compared run by run.
- **Measurement.** Transactions that start in the window ``[warm-up, warm-up +
  measure)`` count; arrivals stop at its end; the run continues a drain time so that
  they can finish; any still open at the end counts as an infinite UCT in the
  percentiles and is reported (never dropped). Each run also records the UCT of one
  transaction alone on the idle testbed with its IW (:func:`idle_uct`), the part of a
  UCT that is neither queueing nor competition.

Example:
    >>> p = StudyParams(reps=2)
    >>> len(p.configurations()), p.n_runs()   # 2 links x (1 light + 2 loads x 2 opens x 2 bg); x 6 TCP variants x 2
    (18, 216)
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import _core
from tcplab.studies import engine
from tcplab.studies.engine import BlockTask, StudyResult, task_key
from tcplab.studies.iw_testbed.testbed import (IW_VARIANTS, LINKS, NAME, SACK, SEED_STUDY, base_scenario,
                                               configurations, configure, idle_document)

__all__ = ["NAME", "SUMMARY", "StudyParams", "StudyResult", "simulate_block", "run_metrics_of", "batch_overflow",
           "idle_uct", "plan", "run", "evaluate_findings", "DEFINITION"]

SUMMARY = "Seed 001: IW10 vs IW3 testbed, web transactions (single / 5 opens), Poisson load, SACK, long-lived flows"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 3
NS_PER_S = 1_000_000_000


# --------------------------------------------------------------------------------------
# One run's metrics


def _floats(values: Sequence[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def batch_overflow(starts: np.ndarray, ends: np.ndarray, batch_key: np.ndarray, drops: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per batch: whether any of its packets was dropped, and how many other batches overlap it.

    A batch lives from its transactions' common start to the last one's end (``inf``
    when one never finished). Seed 001 says five IW3 bursts "never overflow router
    buffer (unless colliding with two other Poisson arriving bursts)": a batch's
    *overlaps* are the other batches whose lives overlap its own (touching ends do not
    count), so "colliding with two others" is ``overlaps >= 2``.

    Example:
        >>> s = np.array([0.0, 0.0, 5.0, 20.0]); e = np.array([3.0, 6.0, 8.0, 21.0])
        >>> dropped, overlaps = batch_overflow(s, e, np.array([0, 0, 1, 2]), np.array([0, 2, 0, 0]))
        >>> dropped.tolist(), overlaps.tolist()
        ([True, False, False], [1, 1, 0])
    """
    keys, inv = np.unique(batch_key, return_inverse=True)
    n = len(keys)
    b_start = np.full(n, np.inf)
    b_end = np.full(n, -np.inf)
    b_drops = np.zeros(n)
    np.minimum.at(b_start, inv, starts)
    np.maximum.at(b_end, inv, np.where(np.isnan(ends), np.inf, ends))
    np.add.at(b_drops, inv, drops)
    # Batch j overlaps batch i when s_j < e_i and e_j > s_i. Every batch ending at or
    # before s_i also starts before e_i, so the count is #(s_j < e_i) - #(e_j <= s_i),
    # less batch i itself.
    s_sorted, e_sorted = np.sort(b_start), np.sort(b_end)
    overlaps = (np.searchsorted(s_sorted, b_end, side="left") - np.searchsorted(e_sorted, b_start, side="right")
                - (b_start < b_end))
    return b_drops > 0, overlaps.astype(np.int64)


_RUN_FLOAT = ("uct_mean_s", "uct_p50_s", "uct_p90_s", "uct_p99_s", "uct_max_s", "uct_mean_iw3_s", "uct_mean_iw10_s",
              "uct_mean_c02_s", "uct_mean_c13_s", "hs_rtt_max_s", "plr", "drops_per_txn", "retx_per_txn",
              "rtos_per_txn", "rtos_undone_per_txn", "syn_per_txn", "bg_goodput_bps", "bg_retransmits", "busy_fraction",
              "utilisation", "occ_mean_pkts", "occ_mean_bytes", "qdelay_mean_s", "qdelay_max_s", "sim_end_s")
_RUN_INT = ("n_txn", "n_finished", "n_batches", "batches_dropped", "batches_isolated", "isolated_dropped",
            "batches_lt2", "lt2_dropped", "events")


def run_metrics_of(doc: dict[str, Any], t0: float, t1: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Per-run metrics of a core result (``_core.run``'s document) and its window's transactions.

    Transactions count when they start in ``[t0, t1)``. UCT percentiles treat an
    unfinished transaction as infinitely long (so they are never flattered by
    dropping it); means are over the finished ones, with ``n_finished`` beside them.

    - ``uct_mean_c02_s`` / ``uct_mean_c13_s``: mean UCT of clients 0 and 2 / 1 and 3
      (in the mix these are the IW3 / IW10 clients, so "IW3 in the mix" is compared
      with the same clients alone); ``uct_mean_iw3_s`` / ``uct_mean_iw10_s`` by the
      transactions' own IW.
    - ``hs_rtt_max_s``: the longest handshake (SYN to established) of the window's
      transactions whose SYN was not retransmitted: a round trip whose SYN-ACK queued
      at the bottleneck behind the responses.
    - PLR is the bottleneck's drops over the packets offered to it (enqueued + dropped)
      during the whole run; ``qdelay_mean_s`` / ``qdelay_max_s`` the mean and largest
      queue in bytes over the bottleneck rate (the queueing delay a packet meets).
    - ``busy_fraction`` is the share of 1-second samples with a non-empty queue (the
      seed's link utilisation); ``utilisation`` the transmitter's busy time.

    Example (a run of the 20 Mbit/s scenario cut to 4 s):
        >>> d = configure(base_scenario("20m"), "iw10", 1, 0.5, True, False, 1, 2, 1)
        >>> from tcplab.scenario import Scenario
        >>> doc = json.loads(_core.run(Scenario.from_dict(d).to_core_json(), 1))
        >>> m, tx = run_metrics_of(doc, 1.0, 3.0)
        >>> m["n_txn"] == m["n_finished"] == len(tx["uct_s"]) > 100, round(m["plr"], 3), m["bg_goodput_bps"]
        (True, 0.0, nan)
        >>> round(m["hs_rtt_max_s"], 2), m["uct_mean_c02_s"] > 0   # 300 ms and a little queueing
        (0.33, True)
    """
    tr = doc["transactions"]
    start = np.asarray(tr["start_s"], dtype=np.float64)
    sel = (start >= t0) & (start < t1)
    uct = _floats(tr["uct_s"])[sel]
    iw = np.asarray(tr["iw_segments"], dtype=np.int64)[sel]
    drops = np.asarray(tr["drops"], dtype=np.float64)[sel]
    client = np.array([int(str(a).rsplit(".", 1)[-1]) for a in tr["app"]], dtype=np.int64)[sel]
    finished = ~np.isnan(uct)
    inf_uct = np.where(finished, uct, np.inf)
    n = int(sel.sum())
    m: dict[str, Any] = {"n_txn": n, "n_finished": int(finished.sum())}
    # Empirical quantiles without interpolation (an infinite UCT must stay infinite).
    pct = np.quantile(inf_uct, [0.5, 0.9, 0.99], method="inverted_cdf") if n else [np.nan] * 3
    m.update(uct_mean_s=float(uct[finished].mean()) if finished.any() else np.nan,
             uct_p50_s=float(pct[0]), uct_p90_s=float(pct[1]), uct_p99_s=float(pct[2]),
             uct_max_s=float(inf_uct.max()) if n else np.nan)
    for w in (3, 10):
        part = uct[(iw == w) & finished]
        m[f"uct_mean_iw{w}_s"] = float(part.mean()) if len(part) else np.nan
    for name, parity in (("uct_mean_c02_s", 0), ("uct_mean_c13_s", 1)):
        part = uct[(client % 2 == parity) & finished]
        m[name] = float(part.mean()) if len(part) else np.nan
    est = _floats(tr["established_s"])[sel]
    clean_hs = (np.asarray(tr["syn_retransmits"], dtype=np.int64)[sel] == 0) & ~np.isnan(est)
    m["hs_rtt_max_s"] = float((est - start[sel])[clean_hs].max()) if clean_hs.any() else np.nan
    for col, name in (("retransmits", "retx_per_txn"), ("rtos", "rtos_per_txn"), ("rtos_undone", "rtos_undone_per_txn"),
                      ("syn_retransmits", "syn_per_txn")):
        v = np.asarray(tr[col], dtype=np.float64)[sel]
        m[name] = float(v.mean()) if n else np.nan
    m["drops_per_txn"] = float(drops.mean()) if n else np.nan
    # Batches (transactions of one application arrival) starting in the window; their
    # overlaps are counted against every batch of the run, warm-up and drain included.
    n_all = len(start)
    app = np.unique(np.asarray(tr["app"]), return_inverse=True)[1] if n_all else np.zeros(0, np.int64)
    key = app.astype(np.int64) * 10**9 + np.asarray(tr["batch"], dtype=np.int64)
    if n_all:
        d_all, o_all = batch_overflow(start, _floats(tr["completed_s"]), key, np.asarray(tr["drops"], dtype=np.float64))
        b_start = np.full(len(d_all), np.inf)
        np.minimum.at(b_start, np.unique(key, return_inverse=True)[1], start)
        in_window = (b_start >= t0) & (b_start < t1)
        dropped, overlaps = d_all[in_window], o_all[in_window]
    else:
        dropped, overlaps = np.zeros(0, bool), np.zeros(0, np.int64)
    m.update(n_batches=int(len(dropped)), batches_dropped=int(dropped.sum()),
             batches_isolated=int((overlaps == 0).sum()), isolated_dropped=int((dropped & (overlaps == 0)).sum()),
             batches_lt2=int((overlaps < 2).sum()), lt2_dropped=int((dropped & (overlaps < 2)).sum()))
    q = doc["queues"]
    qi = q["link"].index("bottleneck")
    offered = q["enq_pkts"][qi] + q["drops_overflow"][qi]
    m["plr"] = q["drops_overflow"][qi] / offered if offered else np.nan
    m["occ_mean_pkts"] = q["occ_mean_pkts"][qi]
    m["occ_mean_bytes"] = q["occ_mean_bytes"][qi]
    lk = doc["links"]
    li = lk["link"].index("bottleneck")
    rate = float(lk["rate_bps"][li])
    m["qdelay_mean_s"] = q["occ_mean_bytes"][qi] * 8 / rate
    m["qdelay_max_s"] = q["occ_max_bytes"][qi] * 8 / rate
    m["busy_fraction"] = np.nan if lk["busy_sample_fraction"][li] is None else lk["busy_sample_fraction"][li]
    m["utilisation"] = lk["utilisation"][li]
    f = doc["flows"]
    bg = [i for i, g in enumerate(f["group"]) if g == "bg"]
    m["bg_goodput_bps"] = float(sum(f["goodput_bps"][i] for i in bg)) if bg else np.nan
    m["bg_retransmits"] = float(sum(f["retransmits"][i] for i in bg)) if bg else np.nan
    m["events"] = int(doc["meta"]["events"])
    m["sim_end_s"] = float(doc["meta"]["sim_end_s"])
    return m, {"uct_s": uct.astype(np.float32), "iw": iw.astype(np.int8), "drops": drops.astype(np.int16),
               "start_s": start[sel].astype(np.float32)}


@functools.lru_cache(maxsize=None)
def idle_uct(link: str, iw_segments: int) -> float:
    """UCT of one transaction alone on the idle testbed, s (deterministic; SACK plays no part).

    Example:
        >>> round(idle_uct("64k", 3), 3), round(idle_uct("64k", 10), 3)   # 64 kbit/s: no round trip saved
        (2.591, 2.591)
        >>> round(idle_uct("20m", 3) - idle_uct("20m", 10), 3)           # 20 Mbit/s: 2 RTTs of 300 ms
        0.597
    """
    from tcplab.scenario import Scenario

    doc = json.loads(_core.run(Scenario.from_dict(idle_document(base_scenario(link), iw_segments)).to_core_json(), 1))
    return float(doc["transactions"]["uct_s"][0])


def _step_on_grid(t: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The value of a step function (changes at ``t`` to ``v``) at each grid time; 0 before the first."""
    idx = np.searchsorted(t, grid, side="right") - 1
    return np.where(idx >= 0, v[np.clip(idx, 0, None)] if len(v) else 0, 0).astype(np.float64)


def _series_of(doc: dict[str, Any], grid: np.ndarray) -> dict[str, np.ndarray]:
    """Queue occupancy of the bottleneck and cwnd/ssthresh of the background flows on ``grid``."""
    out: dict[str, list[Any]] = {"t_s": [], "what": [], "value": []}
    sq = doc["series"]["queue"]
    names = doc["meta"]["link_names"]
    link = np.asarray(sq["link"])
    bi = names.index("bottleneck")
    sel = link == bi
    qv = _step_on_grid(np.asarray(sq["t_s"])[sel], np.asarray(sq["pkts"], dtype=np.float64)[sel], grid)
    out["t_s"] += grid.tolist()
    out["what"] += ["queue_pkts"] * len(grid)
    out["value"] += qv.tolist()
    sc = doc["series"]["cwnd"]
    if sc["t_s"]:
        fid = np.asarray(sc["flow_id"])
        t = np.asarray(sc["t_s"])
        for k, flow in enumerate(sorted(set(fid.tolist()))):
            s = fid == flow
            cw = _step_on_grid(t[s], np.asarray(sc["cwnd_bytes"], dtype=np.float64)[s], grid)
            ss = _step_on_grid(t[s], _floats(sc["ssthresh_bytes"])[s], grid)
            out["t_s"] += grid.tolist() * 2
            out["what"] += [f"bg{k}_cwnd_bytes"] * len(grid) + [f"bg{k}_ssthresh_bytes"] * len(grid)
            out["value"] += cw.tolist() + ss.tolist()
    return {k: np.asarray(v) for k, v in out.items()}


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: every IW variant x SACK setting x the replications ``spec["reps"]`` of one configuration.

    ``spec`` holds ``link``, ``load``, ``opens``, ``bg``, ``reps`` ([first, stop)),
    ``seed``, ``warmup_s``, ``measure_s``, ``drain_s``, ``keep_txn_reps`` and
    ``series_rep``. Returns column dicts for ``runs`` (with ``uct_idle_s``, the idle
    testbed's UCT for the variant's IW: :func:`idle_uct`, averaged over the mix's two),
    ``txns`` (per transaction of the replications below ``keep_txn_reps``) and
    ``series`` (replication ``series_rep``).

    Example:
        >>> out = simulate_block({"link": "20m", "load": 0.5, "opens": 1, "bg": False, "reps": [0, 1], "seed": 1,
        ...                       "warmup_s": 1.0, "measure_s": 1.0, "drain_s": 1.0, "keep_txn_reps": 1,
        ...                       "series_rep": -1})
        >>> len(out["runs"]["rep"]), sorted(set(out["runs"]["iw"].tolist()))
        (6, ['iw10', 'iw3', 'mix'])
    """
    from tcplab.scenario import Scenario

    link = LINKS[spec["link"]]
    base = base_scenario(link.name)
    first, stop = spec["reps"]
    t0, t1 = spec["warmup_s"], spec["warmup_s"] + spec["measure_s"]
    runs: dict[str, list[Any]] = {k: [] for k in ("rep", "iw", "sack", "core_seed", "uct_idle_s", *_RUN_INT,
                                                  *_RUN_FLOAT)}
    txns: dict[str, list[np.ndarray]] = {k: [] for k in ("rep", "iw_variant", "sack", "uct_s", "iw", "drops", "start_s")}
    series: dict[str, list[np.ndarray]] = {k: [] for k in ("rep", "iw_variant", "sack", "t_s", "what", "value")}
    grid = np.linspace(0.0, t1 + spec["drain_s"], 1201)
    for iw in IW_VARIANTS:
        idle = float(np.mean([idle_uct(link.name, w) for w in IW_VARIANTS[iw]]))
        for sack in SACK:
            for want_series in (False, True):
                d = configure(base, iw, spec["opens"], spec["load"], sack, spec["bg"], spec["warmup_s"],
                              spec["measure_s"], spec["drain_s"],
                              record={"queue": ["bottleneck"], "cwnd": bool(spec["bg"])} if want_series else None)
                core = Scenario.from_dict(d).to_core_json()
                for rep in range(first, stop):
                    if want_series != (rep == spec["series_rep"]):
                        continue
                    seed = int(spec["seed"]) + rep
                    doc = json.loads(_core.run(core, seed))
                    m, tx = run_metrics_of(doc, t0, t1)
                    runs["rep"].append(rep)
                    runs["iw"].append(iw)
                    runs["sack"].append(sack)
                    runs["core_seed"].append(seed)
                    runs["uct_idle_s"].append(idle)
                    for k in (*_RUN_INT, *_RUN_FLOAT):
                        runs[k].append(m[k])
                    if rep < spec["keep_txn_reps"]:
                        k = len(tx["uct_s"])
                        txns["rep"].append(np.full(k, rep, np.int16))
                        txns["iw_variant"].append(np.full(k, iw, dtype=object))
                        txns["sack"].append(np.full(k, sack))
                        for c in ("uct_s", "iw", "drops", "start_s"):
                            txns[c].append(tx[c])
                    if want_series:
                        s = _series_of(doc, grid)
                        k = len(s["t_s"])
                        series["rep"].append(np.full(k, rep, np.int16))
                        series["iw_variant"].append(np.full(k, iw, dtype=object))
                        series["sack"].append(np.full(k, sack))
                        for c in ("t_s", "what", "value"):
                            series[c].append(s[c])
    out: dict[str, Any] = {"runs": {k: np.asarray(v) for k, v in runs.items()}}
    if txns["rep"]:
        out["txns"] = {k: np.concatenate(v) for k, v in txns.items()}
    if series["rep"]:
        out["series"] = {k: np.concatenate(v) for k, v in series.items()}
    return out


# --------------------------------------------------------------------------------------
# Parameters and plan


@dataclass
class StudyParams:
    """Everything that defines a run of the study (and nothing about how it is executed).

    Attributes:
        reps: replications per configuration.
        links: a subset of :data:`LINKS`.
        seed: master seed; replication r uses core seed ``seed + r``.
        measure_64k_s, measure_20m_s: measurement windows (transactions starting in
            them count), after the links' warm-ups; see ``docs/studies/iw-testbed.md``
            for why these lengths.
        block: replications per task.
        keep_txn_reps: replications whose per-transaction rows are kept (CDFs, tails).

    Example:
        >>> StudyParams(reps=4, links=["64k"]).n_runs()   # 9 configurations x 6 TCP variants x 4
        216
    """

    reps: int = 10
    links: list[str] = field(default_factory=lambda: list(LINKS))
    seed: int = 1
    measure_64k_s: float = LINKS["64k"].measure_s
    measure_20m_s: float = LINKS["20m"].measure_s
    block: int = 5
    keep_txn_reps: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps must be an integer >= 2 (confidence intervals need two), got {self.reps!r}")
        unknown = [l for l in self.links if l not in LINKS]
        if unknown or not self.links:
            raise ValueError(f"unknown link(s) {unknown or self.links!r}; accepted: {', '.join(LINKS)}")
        self.links = [l for l in LINKS if l in self.links]
        for name in ("measure_64k_s", "measure_20m_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {v!r}")
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1:
            raise ValueError(f"block must be an integer >= 1, got {self.block!r}")
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")

    def measure_s(self, link: str) -> float:
        return float(self.measure_64k_s if link == "64k" else self.measure_20m_s)

    def configurations(self) -> list[tuple[str, float, int, bool]]:
        """(link, load, opens, bg) in report order (:func:`~tcplab.studies.iw_testbed.testbed.configurations`)."""
        return configurations(self.links)

    def n_runs(self) -> int:
        """Simulations: configurations x 3 IW variants x 2 SACK settings x reps."""
        return len(self.configurations()) * len(IW_VARIANTS) * len(SACK) * self.reps


def plan(params: StudyParams) -> list[BlockTask]:
    """The tasks, heaviest first (20 Mbit/s with background flows).

    Example:
        >>> tasks = plan(StudyParams(reps=10, links=["20m"], block=5))
        >>> len(tasks), sum(t.runs for t in tasks), tasks[0].spec["bg"], tasks[0].spec["reps"]
        (18, 540, True, [0, 5])
    """
    tasks = []
    for link, load, opens, bg in params.configurations():
        l = LINKS[link]
        for first in range(0, params.reps, params.block):
            spec = {"study": NAME, "version": STUDY_VERSION, "link": link, "load": load, "opens": opens, "bg": bg,
                    "reps": [first, min(first + params.block, params.reps)], "seed": int(params.seed),
                    "warmup_s": l.warmup_s, "measure_s": params.measure_s(link), "drain_s": l.drain_s,
                    "keep_txn_reps": int(params.keep_txn_reps), "series_rep": 0, "core": _core.version(),
                    "scenario": l.file.read_text()}
            runs = (spec["reps"][1] - first) * len(IW_VARIANTS) * len(SACK)
            tasks.append(BlockTask(task_key(spec), spec, runs))
    weight = {"20m": 10, "64k": 1}
    # Heaviest first: the load sets the transactions per run, background flows the events.
    return sorted(tasks, key=lambda t: -(weight[t.spec["link"]] * t.spec["load"] * (2 if t.spec["bg"] else 1)))


CONFIG = ["link", "load", "opens", "bg"]
VARIANT = ["iw", "sack"]
RUN = CONFIG + VARIANT + ["rep"]
_LINK_ORDER = list(LINKS)
_IW_ORDER = list(IW_VARIANTS)


def _sort(df: pd.DataFrame) -> pd.DataFrame:
    if not len(df):
        return df
    keys = pd.DataFrame({"_l": df["link"].map(_LINK_ORDER.index), "_i": df["iw"].map(_IW_ORDER.index),
                         "_s": ~df["sack"].astype(bool)}, index=df.index)
    order = pd.concat([df, keys], axis=1).sort_values(["_l", "load", "opens", "bg", "rep", "_i", "_s"], kind="stable")
    return order.drop(columns=["_l", "_i", "_s"]).reset_index(drop=True)


class Definition(engine.StudyDefinition):
    """Seed 001 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = SEED_STUDY
    version = STUDY_VERSION
    task_tables = ("runs", "txns", "series")
    config_columns = (("link", "string"), ("load", "float64"), ("opens", "int64"), ("bg", "bool"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (_LINK_ORDER.index(spec["link"]), spec["load"], spec["opens"], spec["bg"], spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def params_dict(self, params: StudyParams) -> dict[str, Any]:
        return asdict(params)

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        from tcplab.studies.iw_testbed import analysis, claims

        runs = _sort(tables["runs"])
        summary = analysis.summary_table(runs)
        findings = claims.evaluate_findings(runs, params)
        return {"runs": runs, "summary": summary}, findings

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.iw_testbed import report

        return report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.iw_testbed import report

        return report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    Example (a tiny run; the CLI is ``tcplab study iw-testbed --reps 2``)::

        >>> res = run("results/tiny", StudyParams(reps=2, links=["64k"]), jobs=1, progress=False)  # doctest: +SKIP
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


def evaluate_findings(runs: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """The ``findings.json`` document (:mod:`tcplab.studies.iw_testbed.claims`)."""
    from tcplab.studies.iw_testbed import claims

    return claims.evaluate_findings(runs, params)
