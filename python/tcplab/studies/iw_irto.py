"""Study ``iw-irto``: seed 000 reproduced end to end (issue 4).

Seed 000 is I. Järvinen, A. Nyrhinen, A. Y. Ding and M. Kojo, "Effect of IW and
Initial RTO changes", IETF 79 (Beijing, November 2010): an ns-2 study (TCP SACK) of
the initial window 3 -> 10 segments and the initial RTO 3 s -> 1 s over EDGE, HSPA and
LTE bottlenecks (``shared/seeds/000_ae80ce17cd677c8e.txt``; SPEC.md, "Seed 000").

What runs (every choice the seed leaves open is a :class:`StudyParams` field, and
``docs/studies/iw-irto.md`` explains each):

- **Topology.** A dumbbell. Sender ``s_i`` reaches router ``r0`` over an 11 ms,
  100 Mbit/s access link; ``r0 -> r1`` is the wireless link (the bottleneck); the
  receivers hang off ``r1`` over 100 Mbit/s links with no delay. The reverse
  bottleneck (ACKs) has the same rate and delay with a 1000-packet drop-tail queue.
  Every flow has its own sender/receiver pair. Packets are 1500 B (MSS 1460 + 40).
- **Links** (:data:`LINKS`): EDGE 160 kbit/s / 250 ms, HSPA 2 Mbit/s / 70 ms, LTE
  50 Mbit/s / 15 ms. The seed's BDPs (7, 24, 125 packets) are
  ``ceil(rate * 2 * wireless delay / 1500 B)``, without the 11 ms wired part
  (:func:`bdp_table`).
- **Buffers** (:func:`buffers`): FIFO of BDP, FIFO of 2 BDP, FIFO of 50 packets (EDGE
  only), RED (2 BDP) and REDok with the seed's table (:data:`RED_TABLE`), in ns-2 byte
  mode. FIFOs are drop-tail with ``count_in_service = true`` (ns-2's DropTail drops
  when ``length + 1 >= qlim_``, so the packet on the wire counts); RED's physical
  limit is ns-2's ``qlen >= qlim`` on the waiting bytes (``limit = buffer * 1500 B``,
  the packet in service not counted).
- **Workload.** Burst 1 is N in {1, 2, 6, 18} flows of 180 000 / N bytes; burst 2 is
  the same, ``offset_rtts`` base RTTs later. Every flow's start is delayed by
  ``u * jitter_rtts * base RTT`` with ``u`` uniform in [0, 1) from
  ``numpy.random.default_rng([seed, rep])`` (a 2 x 18 array, flow i of burst b takes
  ``u[b, i]``): replication ``rep`` sees the same draws for every TCP variant and
  buffer (common random numbers). The core seed of replication ``rep`` is
  ``seed + rep`` (RED's drop draws), as in ``tcplab sweep``.
- **TCP.** Profile ``ns2-sack`` (SACK, min RTO 1 s, no delayed ACKs), Reno, IW in
  {3, 10}, initial RTO in {3 s, 1 s}.

Execution is the shared study machine's (:mod:`tcplab.studies.engine`; this module
holds only set-up, analysis and findings, as :class:`Definition`): a task is one
link x buffer x N x block of replications x the four TCP variants; the worker calls ``_core.run``
directly and keeps per-flow rows, per-run rows and, for N in {1, 6}, the one-way delay
of every data packet. The five findings are checks on the data
(:func:`evaluate_findings`), written to ``findings.json`` and the report.

Example:
    >>> [(l.name, l.bdp_pkts, round(l.bdp_exact, 1)) for l in LINKS.values()]
    [('edge', 7, 6.7), ('hspa', 24, 23.3), ('lte', 125, 125.0)]
    >>> [b.id for b in buffers(LINKS["edge"])]
    ['fifo-bdp', 'fifo-2bdp', 'fifo-50', 'red', 'redok']
    >>> q = queue_config(LINKS["hspa"], buffer_by_id(LINKS["hspa"], "redok"))
    >>> q["limit"], q["q_weight"], q["min_th"], q["max_th"], q["max_p"]
    ({'bytes': 150000}, 0.02, 3.0, 50.0, 0.65)
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import _core, stats
from tcplab.studies import engine
from tcplab.studies import findings as fnd
from tcplab.studies.engine import BlockTask, StudyResult, TaskStore, task_key
from tcplab.studies.findings import above as _above, below as _below, legacy_check as _check, clean as _clean
from tcplab.studies.findings import count as _count, estimate as _est, finding as _finding, num as _num

__all__ = [
    "NAME",
    "SUMMARY",
    "WirelessLink",
    "Buffer",
    "RedSetting",
    "LINKS",
    "RED_TABLE",
    "FLOW_COUNTS",
    "VARIANTS",
    "StudyParams",
    "StudyResult",
    "buffers",
    "buffer_by_id",
    "queue_config",
    "bdp_table",
    "red_table",
    "start_fractions",
    "flow_starts",
    "scenario",
    "simulate_block",
    "plan",
    "run",
    "run_metrics",
    "evaluate_findings",
]

NAME = "iw-irto"
SUMMARY = "Seed 000: IW 3 -> 10 and initial RTO 3 s -> 1 s over EDGE/HSPA/LTE (ns-2 TCP SACK)"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 1

NS_PER_S = 1_000_000_000
PACKET_BYTES = 1500  # MSS 1460 + 40 B of headers
TOTAL_BYTES = 180_000  # per burst
WIRED_DELAY_S = 0.011
ACCESS_RATE_BPS = 100_000_000
REVERSE_QUEUE_PKTS = 1000
MAX_DURATION_S = 600
FLOW_COUNTS = (1, 2, 6, 18)
MAX_FLOWS = max(FLOW_COUNTS)
#: (IW in segments, initial RTO in s), the four TCP variants, in plotting order.
VARIANTS: tuple[tuple[int, float], ...] = ((3, 3.0), (10, 3.0), (3, 1.0), (10, 1.0))
#: Flow counts whose per-packet one-way delays are kept (the seed's OWD figures).
OWD_FLOW_COUNTS = (1, 6)


@dataclass(frozen=True)
class WirelessLink:
    """A bottleneck of seed 000: rate, one-way delay and the seed's BDP in packets.

    Example:
        >>> e = LINKS["edge"]
        >>> e.bdp_exact, e.base_rtt_s   # 160e3 * 0.5 / 12000; 2 * (0.011 + 0.250)
        (6.666666666666667, 0.522)
    """

    name: str
    label: str
    rate_bps: int
    delay_s: float
    bdp_pkts: int

    @property
    def bdp_exact(self) -> float:
        """rate x 2 x wireless one-way delay / 1500 B (the seed's rule, wired part left out)."""
        return self.rate_bps * 2 * self.delay_s / (8 * PACKET_BYTES)

    @property
    def bdp_with_wired(self) -> float:
        """rate x base RTT / 1500 B, counting the 11 ms wired delay both ways."""
        return self.rate_bps * self.base_rtt_s / (8 * PACKET_BYTES)

    @property
    def base_rtt_s(self) -> float:
        """Propagation-only round trip: 2 x (11 ms + wireless delay)."""
        return round(2 * (WIRED_DELAY_S + self.delay_s), 9)

    @property
    def packet_time_s(self) -> float:
        """Serialization time of one 1500-byte packet on the wireless link."""
        return PACKET_BYTES * 8 / self.rate_bps


LINKS: dict[str, WirelessLink] = {
    "edge": WirelessLink("edge", "EDGE", 160_000, 0.250, 7),
    "hspa": WirelessLink("hspa", "HSPA", 2_000_000, 0.070, 24),
    "lte": WirelessLink("lte", "LTE", 50_000_000, 0.015, 125),
}


@dataclass(frozen=True)
class RedSetting:
    """One row of the seed's RED table (thresholds in packets, buffer in packets or None = 2 BDP)."""

    q_weight: float
    max_p: float
    min_th: float
    max_th: float
    buffer_pkts: int | None


#: The seed's table: (config, link) -> parameters. RED's buffer is 2 BDP.
RED_TABLE: dict[tuple[str, str], RedSetting] = {
    ("red", "edge"): RedSetting(0.002, 0.1, 3, 9, None),
    ("red", "hspa"): RedSetting(0.002, 0.1, 5, 20, None),
    ("red", "lte"): RedSetting(0.002, 0.1, 5, 20, None),
    ("redok", "edge"): RedSetting(0.2, 0.65, 3, 40, 50),
    ("redok", "hspa"): RedSetting(0.02, 0.65, 3, 50, 100),
    ("redok", "lte"): RedSetting(0.001, 0.1, 5, 125, 400),
}


@dataclass(frozen=True)
class Buffer:
    """A bottleneck buffer configuration: id, label, kind (``fifo`` or ``red``), size, RED row."""

    id: str
    label: str
    kind: str
    packets: int
    red: RedSetting | None = None


def buffers(link: WirelessLink) -> list[Buffer]:
    """The buffer configurations of ``link``, in the seed's order.

    Example:
        >>> [(b.id, b.packets) for b in buffers(LINKS["lte"])]
        [('fifo-bdp', 125), ('fifo-2bdp', 250), ('red', 250), ('redok', 400)]
    """
    bdp = link.bdp_pkts
    out = [Buffer("fifo-bdp", "FIFO BDP", "fifo", bdp), Buffer("fifo-2bdp", "FIFO 2·BDP", "fifo", 2 * bdp)]
    if link.name == "edge":
        out.append(Buffer("fifo-50", "FIFO 50", "fifo", 50))
    red = RED_TABLE[("red", link.name)]
    out.append(Buffer("red", "RED", "red", red.buffer_pkts or 2 * bdp, red))
    ok = RED_TABLE[("redok", link.name)]
    out.append(Buffer("redok", "REDok", "red", ok.buffer_pkts or 2 * bdp, ok))
    return out


def buffer_by_id(link: WirelessLink, buffer_id: str) -> Buffer:
    """The buffer ``buffer_id`` of ``link``; ``KeyError`` names the accepted ids."""
    for b in buffers(link):
        if b.id == buffer_id:
            return b
    raise KeyError(f"{link.name} has no buffer {buffer_id!r}; accepted: {', '.join(b.id for b in buffers(link))}")


def queue_config(link: WirelessLink, buf: Buffer) -> dict[str, Any]:
    """The core's queue JSON for a bottleneck buffer (ns-2 semantics, see the module doc).

    Example:
        >>> queue_config(LINKS["edge"], buffer_by_id(LINKS["edge"], "fifo-bdp"))
        {'kind': 'drop_tail', 'limit': {'packets': 7}, 'count_in_service': True}
    """
    if buf.kind == "fifo":
        return {"kind": "drop_tail", "limit": {"packets": buf.packets}, "count_in_service": True}
    assert buf.red is not None
    return {
        "kind": "red",
        "limit": {"bytes": buf.packets * PACKET_BYTES},  # ns-2: qlim_ * mean_pktsize with queue_in_bytes_
        "count_in_service": False,  # ns-2 RED compares the waiting bytes with the limit
        "bytes": True,
        "queue_in_bytes": True,
        "mean_pktsize": PACKET_BYTES,
        "idle_pktsize": PACKET_BYTES,
        "idle_integer_m": True,  # ns-2: m = int(ptc * idle)
        "q_weight": buf.red.q_weight,
        "min_th": float(buf.red.min_th),
        "max_th": float(buf.red.max_th),
        "max_p": buf.red.max_p,
        "gentle": False,
        "wait": False,
    }


def bdp_table() -> pd.DataFrame:
    """The BDP arithmetic: the seed's rule, its rounding up, and the value with the wired part.

    Example:
        >>> bdp_table()[["link", "bdp_exact_pkts", "bdp_seed_pkts"]].values.tolist()
        [['EDGE', 6.667, 7], ['HSPA', 23.333, 24], ['LTE', 125.0, 125]]
    """
    rows = []
    for l in LINKS.values():
        rows.append({
            "link": l.label, "rate_bps": l.rate_bps, "delay_ms": round(l.delay_s * 1e3, 3),
            "arithmetic": f"{l.rate_bps:,} bit/s × 2 × {l.delay_s * 1e3:g} ms / (1500 B × 8 bit/B) "
                          f"= {l.bdp_exact:.2f} → {l.bdp_pkts} packets",
            "bdp_exact_pkts": round(l.bdp_exact, 3), "bdp_seed_pkts": l.bdp_pkts,
            "base_rtt_ms": round(l.base_rtt_s * 1e3, 3), "bdp_with_wired_pkts": round(l.bdp_with_wired, 3),
            "packet_time_ms": round(l.packet_time_s * 1e3, 3),
        })
    return pd.DataFrame(rows)


def red_table() -> pd.DataFrame:
    """The RED/REDok parameters as run (thresholds and buffer in packets).

    Example:
        >>> red_table().query("config == 'REDok' and link == 'EDGE'")[["w_q", "max_p", "th_min", "th_max", "buffer_pkts"]].values.tolist()
        [[0.2, 0.65, 3.0, 40.0, 50.0]]
    """
    rows = []
    for (cfg, name), r in RED_TABLE.items():
        l = LINKS[name]
        rows.append({"config": "RED" if cfg == "red" else "REDok", "link": l.label, "w_q": r.q_weight, "max_p": r.max_p,
                     "th_min": float(r.min_th), "th_max": float(r.max_th), "buffer_pkts": r.buffer_pkts or 2 * l.bdp_pkts,
                     "buffer_rule": "2·BDP" if r.buffer_pkts is None else str(r.buffer_pkts)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Scenarios


def start_fractions(seed: int, rep: int) -> np.ndarray:
    """The start-jitter draws of replication ``rep``: a 2 x 18 array of uniforms in [0, 1).

    The draws depend on (``seed``, ``rep``) only, so every TCP variant, buffer and flow
    count sees the same ones (common random numbers); flow ``i`` of burst ``b`` takes
    ``[b, i]``.

    Example:
        >>> a, b = start_fractions(1, 0), start_fractions(1, 0)
        >>> a.shape, bool((a == b).all()), bool((a != start_fractions(1, 1)).any())
        ((2, 18), True, True)
    """
    return np.random.default_rng([seed, rep]).random((2, MAX_FLOWS))


def flow_starts(link: WirelessLink, n_flows: int, seed: int, rep: int, offset_rtts: float,
                jitter_rtts: float) -> np.ndarray:
    """Start times in ns, shape (2, n_flows): burst offset plus jitter, both in base RTTs.

    Example:
        >>> s = flow_starts(LINKS["hspa"], 2, seed=1, rep=0, offset_rtts=2.0, jitter_rtts=0.1)
        >>> s.shape, bool((s[0] < 16_200_000).all()), bool((s[1] >= 324_000_000).all())
        ((2, 2), True, True)
    """
    u = start_fractions(seed, rep)[:, :n_flows]
    rtt = link.base_rtt_s
    secs = np.array([[0.0], [offset_rtts * rtt]]) + u * (jitter_rtts * rtt)
    return np.rint(secs * NS_PER_S).astype(np.int64)


def scenario(link: WirelessLink, buf: Buffer, n_flows: int, iw: int, irto_s: float, starts_ns: np.ndarray,
             record_owd: bool = True) -> dict[str, Any]:
    """The core scenario (scenario.rs schema) of one run.

    Example:
        >>> l = LINKS["edge"]
        >>> sc = scenario(l, buffers(l)[0], 2, 10, 1.0, flow_starts(l, 2, 1, 0, 2.0, 0.1))
        >>> sc["topology"]["pairs"], [f["bytes"] for f in sc["flows"]], sc["flows"][3]["group"]
        (4, [90000, 90000, 90000, 90000], 'burst2')
        >>> sc["flows"][0]["tcp"]
        {'profile': 'ns2-sack', 'iw': 10, 'initial_rto': 1000000000}
    """
    if TOTAL_BYTES % n_flows:
        raise ValueError(f"{TOTAL_BYTES} B do not split equally over {n_flows} flows")
    delay_ns = int(round(link.delay_s * NS_PER_S))
    tcp = {"profile": "ns2-sack", "iw": int(iw), "initial_rto": int(round(irto_s * NS_PER_S))}
    flows = []
    for b in range(2):
        for i in range(n_flows):
            k = b * n_flows + i
            flows.append({
                "kind": "tcp", "name": f"b{b + 1}.{i}", "group": f"burst{b + 1}", "src": f"s{k}", "dst": f"d{k}",
                "start": int(starts_ns[b, i]), "bytes": TOTAL_BYTES // n_flows, "cc": {"name": "reno"}, "tcp": tcp,
            })
    return {
        "name": f"{NAME}:{link.name}:{buf.id}:{n_flows}+{n_flows}:iw{iw}:irto{irto_s:g}",
        "topology": {
            "kind": "dumbbell",
            "pairs": 2 * n_flows,
            "bottleneck": {"rate": link.rate_bps, "delay": delay_ns, "queue": queue_config(link, buf)},
            "bottleneck_reverse": {"rate": link.rate_bps, "delay": delay_ns,
                                   "queue": {"kind": "drop_tail", "limit": {"packets": REVERSE_QUEUE_PKTS}}},
            "sender_access": {"rate": ACCESS_RATE_BPS, "delay": int(round(WIRED_DELAY_S * NS_PER_S))},
            "receiver_access": {"rate": ACCESS_RATE_BPS, "delay": 0},
        },
        "flows": flows,
        "max_duration": MAX_DURATION_S * NS_PER_S,
        "record": {"owd": ["*"] if record_owd else []},
    }


_FLOW_INT = ("retransmits", "fast_retransmits", "rtos", "spurious_rtos", "syn_retransmits", "spurious_syn_rtos",
             "segs_sent", "bytes_delivered")
_FLOW_FLOAT = ("start_s", "established_s", "completed_s", "elapsed_s", "goodput_bps")


def _floats(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: every TCP variant x the replications ``spec["reps"]`` of one configuration.

    ``spec`` holds ``link``, ``buffer``, ``n_flows``, ``reps`` ([first, stop)), ``seed``,
    ``offset_rtts``, ``jitter_rtts`` and ``keep_owd``. Returns column dicts for the
    ``flows``, ``runs`` and (with ``keep_owd``) ``owd`` tables, without the
    configuration columns (the caller adds them).

    Example:
        >>> out = simulate_block({"link": "lte", "buffer": "fifo-bdp", "n_flows": 1, "reps": [0, 1], "seed": 1,
        ...                       "offset_rtts": 2.0, "jitter_rtts": 0.1, "keep_owd": False})
        >>> len(out["runs"]["rep"]), len(out["flows"]["flow"]), sorted(set(out["flows"]["burst"].tolist()))
        (4, 8, [1, 2])
    """
    link = LINKS[spec["link"]]
    buf = buffer_by_id(link, spec["buffer"])
    n = int(spec["n_flows"])
    seed = int(spec["seed"])
    keep_owd = bool(spec.get("keep_owd", False))
    flows: dict[str, list[Any]] = {k: [] for k in ("rep", "iw", "irto_s", "flow", "burst", *_FLOW_FLOAT, *_FLOW_INT)}
    runs: dict[str, list[Any]] = {k: [] for k in (
        "rep", "iw", "irto_s", "core_seed", "sim_end_s", "events", "digest", "drops_overflow", "drops_early",
        "drops_forced", "occ_max_pkts", "occ_mean_pkts", "owd_n", "owd_mean_s", "owd_p50_s", "owd_p99_s",
        "owd_max_s", "unfinished")}
    owd_parts: list[tuple[int, int, float, np.ndarray, np.ndarray]] = []
    first, stop = spec["reps"]
    burst_of = np.repeat(np.array([1, 2], dtype=np.int8), n)
    for rep in range(first, stop):
        starts = flow_starts(link, n, seed, rep, spec["offset_rtts"], spec["jitter_rtts"])
        core_seed = seed + rep
        for iw, irto in VARIANTS:
            text = json.dumps(scenario(link, buf, n, iw, irto, starts), separators=(",", ":"))
            doc = json.loads(_core.run(text, core_seed))
            f = doc["flows"]
            m = len(f["flow_id"])
            if m != 2 * n:
                raise RuntimeError(f"expected {2 * n} flows, the core returned {m}")
            flows["rep"] += [rep] * m
            flows["iw"] += [iw] * m
            flows["irto_s"] += [irto] * m
            flows["flow"] += list(range(m))
            flows["burst"] += burst_of.tolist()
            for c in _FLOW_FLOAT:
                flows[c] += [np.nan if v is None else v for v in f[c]]
            for c in _FLOW_INT:
                flows[c] += f[c]
            q = doc["queues"]
            qi = q["link"].index("bottleneck")
            owd = doc["series"]["owd"]
            delays = np.asarray(owd["owd_s"], dtype=np.float64)
            meta = doc["meta"]
            elapsed = _floats(f["elapsed_s"])
            for k, v in (("rep", rep), ("iw", iw), ("irto_s", irto), ("core_seed", core_seed),
                         ("sim_end_s", meta["sim_end_s"]), ("events", meta["events"]), ("digest", meta["digest"]),
                         ("drops_overflow", q["drops_overflow"][qi]), ("drops_early", q["drops_early"][qi]),
                         ("drops_forced", q["drops_forced"][qi]), ("occ_max_pkts", q["occ_max_pkts"][qi]),
                         ("occ_mean_pkts", q["occ_mean_pkts"][qi]), ("owd_n", len(delays)),
                         ("owd_mean_s", float(delays.mean()) if len(delays) else np.nan),
                         ("owd_p50_s", float(np.percentile(delays, 50)) if len(delays) else np.nan),
                         ("owd_p99_s", float(np.percentile(delays, 99)) if len(delays) else np.nan),
                         ("owd_max_s", float(delays.max()) if len(delays) else np.nan),
                         ("unfinished", int(np.isnan(elapsed).sum()))):
                runs[k].append(v)
            if keep_owd and len(delays):
                fid = np.asarray(owd["flow_id"], dtype=np.int64)
                owd_parts.append((rep, iw, irto, np.where(fid >= n, 2, 1).astype(np.int8), delays.astype(np.float32)))
    out: dict[str, Any] = {
        "flows": {k: np.asarray(v) for k, v in flows.items()},
        "runs": {k: np.asarray(v) for k, v in runs.items()},
    }
    if keep_owd:
        sizes = [len(p[4]) for p in owd_parts]
        out["owd"] = {
            "rep": np.repeat([p[0] for p in owd_parts], sizes).astype(np.int32),
            "iw": np.repeat([p[1] for p in owd_parts], sizes).astype(np.int16),
            "irto_s": np.repeat([p[2] for p in owd_parts], sizes).astype(np.float64),
            "burst": np.concatenate([p[3] for p in owd_parts]) if owd_parts else np.zeros(0, np.int8),
            "owd_s": np.concatenate([p[4] for p in owd_parts]) if owd_parts else np.zeros(0, np.float32),
        }
    return out


# --------------------------------------------------------------------------------------
# Planning and running


@dataclass
class StudyParams:
    """Everything that defines a run of the study (and nothing about how it is executed).

    Attributes:
        reps: replications per configuration (seed 000: 100).
        links: link names, a subset of :data:`LINKS`.
        seed: master seed; replication r uses core seed ``seed + r`` and jitter draws
            ``default_rng([seed, r])``.
        offset_rtts: start of burst 2 after burst 1, in base RTTs (default 2: burst 2's
            SYN leaves as burst 1's first window is acknowledged, so it meets burst 1
            in slow start on every link).
        jitter_rtts: each flow's start is delayed by up to this many base RTTs
            (uniform; default 0.5: at least three packet times on EDGE, so that
            replications differ on every link, while a burst still starts within
            one slow-start round).
        block: replications per task (resumability and load-balancing granularity).

    Example:
        >>> StudyParams(reps=4, links=["lte"]).n_runs()   # 4 buffers x 4 flow counts x 4 variants x 4
        256
    """

    reps: int = 100
    links: list[str] = field(default_factory=lambda: list(LINKS))
    seed: int = 1
    offset_rtts: float = 2.0
    jitter_rtts: float = 0.5
    block: int = 25

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps must be an integer >= 2 (confidence intervals need two), got {self.reps!r}")
        unknown = [l for l in self.links if l not in LINKS]
        if unknown or not self.links:
            raise ValueError(f"unknown link(s) {unknown or self.links!r}; accepted: {', '.join(LINKS)}")
        self.links = [l for l in LINKS if l in self.links]  # canonical order, no duplicates
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")
        if not (self.offset_rtts >= 0 and math.isfinite(self.offset_rtts)):
            raise ValueError(f"offset_rtts must be a finite number >= 0, got {self.offset_rtts}")
        if not (self.jitter_rtts >= 0 and math.isfinite(self.jitter_rtts)):
            raise ValueError(f"jitter_rtts must be a finite number >= 0, got {self.jitter_rtts}")
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1:
            raise ValueError(f"block must be an integer >= 1, got {self.block!r}")

    def configurations(self) -> list[tuple[WirelessLink, Buffer, int]]:
        """(link, buffer, N) in report order."""
        return [(LINKS[l], b, n) for l in self.links for b in buffers(LINKS[l]) for n in FLOW_COUNTS]

    def n_runs(self) -> int:
        """Simulations in the study: configurations x 4 variants x reps."""
        return len(self.configurations()) * len(VARIANTS) * self.reps


def plan(params: StudyParams) -> list[BlockTask]:
    """The tasks of a study, heaviest first (EDGE and 18 flows take longest).

    Example:
        >>> tasks = plan(StudyParams(reps=30, links=["hspa"], block=25))
        >>> len(tasks), sum(t.runs for t in tasks), tasks[0].spec["n_flows"], tasks[0].spec["reps"]
        (32, 1920, 18, [0, 25])
    """
    tasks = []
    for link, buf, n in params.configurations():
        for first in range(0, params.reps, params.block):
            spec = {"study": NAME, "version": STUDY_VERSION, "link": link.name, "buffer": buf.id, "n_flows": n,
                    "reps": [first, min(first + params.block, params.reps)], "seed": int(params.seed),
                    "offset_rtts": float(params.offset_rtts), "jitter_rtts": float(params.jitter_rtts),
                    "keep_owd": n in OWD_FLOW_COUNTS, "core": _core.version()}
            tasks.append(BlockTask(task_key(spec), spec, (spec["reps"][1] - first) * len(VARIANTS)))
    weight = {"edge": 3, "hspa": 2, "lte": 1}
    return sorted(tasks, key=lambda t: (-t.spec["n_flows"] * weight[t.spec["link"]], 0))


_LINK_ORDER = list(LINKS)
_BUFFER_ORDER = ["fifo-bdp", "fifo-2bdp", "fifo-50", "red", "redok"]
CONFIG = ["link", "buffer", "n_flows"]
VARIANT = ["iw", "irto_s"]
RUN = CONFIG + VARIANT + ["rep"]


def _sort(df: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Rows in report order: link, buffer, N, replication, variant (IW3/3s first), ``extra``."""
    if not len(df):
        return df
    keys = pd.DataFrame({
        "_l": df["link"].map(_LINK_ORDER.index), "_b": df["buffer"].map(_BUFFER_ORDER.index),
        "_v": [VARIANTS.index((int(i), float(r))) for i, r in zip(df["iw"], df["irto_s"])],
    }, index=df.index)
    order = pd.concat([df, keys], axis=1).sort_values(["_l", "_b", "n_flows", "rep", "_v", *extra], kind="stable")
    return order.drop(columns=["_l", "_b", "_v"]).reset_index(drop=True)


class Definition(engine.StudyDefinition):
    """Seed 000 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = "000_ae80ce17cd677c8e"
    version = STUDY_VERSION
    task_tables = ("flows", "runs", "owd")
    config_columns = (("link", "string"), ("buffer", "string"), ("n_flows", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_block)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        # A task's rows are already ordered by replication, variant (VARIANTS order) and
        # flow or packet, so concatenating tasks in this order gives report order.
        return (_LINK_ORDER.index(spec["link"]), _BUFFER_ORDER.index(spec["buffer"]), spec["n_flows"], spec["reps"][0])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        rm = run_metrics(tables["flows"], tables["runs"])
        summary = summary_table(rm)
        findings = evaluate_findings(rm, params)
        findings["seed_owd_maxima"] = owd_maxima(tables["runs"])
        return {"run_metrics": rm, "summary": summary}, findings

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies import iw_irto_report

        return iw_irto_report.render_figures(tables, tables["run_metrics"], fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies import iw_irto_report

        return iw_irto_report.write_report(out, params, tables, tables["run_metrics"], tables["summary"], findings,
                                           figs, manifest)


DEFINITION = Definition()


def run(
    out: str | Path,
    params: StudyParams | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    figures: bool = True,
) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    Args:
        out: results directory; finished tasks already in ``out/tasks`` are skipped.
        params: the study definition (default: the seed's, 100 replications, all links).
        jobs, scheduler: as ``tcplab sweep`` (see :mod:`tcplab.studies.engine`).
        progress: show a progress bar on stderr.
        figures: render the figures (PNG + SVG) and embed them in the report.

    Example (a tiny run; the CLI is ``tcplab study iw-irto --reps 2 --links lte``)::

        >>> res = run("results/tiny", StudyParams(reps=2, links=["lte"]), jobs=1, progress=False)  # doctest: +SKIP
        >>> res.report                                                                              # doctest: +SKIP
        PosixPath('results/tiny/report.html')
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


def collect(store: TaskStore, tasks: list[BlockTask]) -> dict[str, pd.DataFrame]:
    """The finished tasks' tables concatenated in report order: ``flows``, ``runs``, ``owd``."""
    return engine.collect(DEFINITION, store, tasks)


# --------------------------------------------------------------------------------------
# Analysis


def run_metrics(flows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: elapsed times per burst, fairness, RTO counts and OWD summaries.

    - ``elapsed_mean_s`` / ``elapsed_max_s``: mean and maximum (the longest flow) over
      all 2N flows; ``elapsed_mean_b1_s`` etc. per burst.
    - ``jain_b1``, ``jain_b2``: Jain's index of per-flow goodput within a burst (NaN
      for N = 1); ``jain_within`` their mean.
    - ``jain_between``: Jain's index of the two bursts' mean per-flow goodputs
      (1 = both bursts equally fast, 0.5 = one burst starved); ``later_ratio`` =
      burst 2's mean goodput / burst 1's.
    - ``rto_total`` = data RTOs + SYN timeouts; ``rto_spurious`` the spurious ones
      (the retransmitted segment or SYN had not been lost); ``rto_genuine`` the rest.

    Example:
        >>> f = pd.DataFrame({"link": ["lte"] * 2, "buffer": ["red"] * 2, "n_flows": [1, 1], "iw": [3, 3],
        ...     "irto_s": [3.0, 3.0], "rep": [0, 0], "flow": [0, 1], "burst": [1, 2], "elapsed_s": [1.0, 2.0],
        ...     "goodput_bps": [2.0, 1.0], "rtos": [1, 0], "spurious_rtos": [1, 0], "syn_retransmits": [0, 1],
        ...     "spurious_syn_rtos": [0, 0]})
        >>> r = run_metrics(f, pd.DataFrame())
        >>> r[["elapsed_mean_s", "elapsed_max_s", "jain_between", "later_ratio", "rto_total", "rto_spurious"]].values.tolist()
        [[1.5, 2.0, 0.9, 0.5, 2.0, 1.0]]
    """
    f = flows.copy()
    f["rto_total"] = f["rtos"] + f["syn_retransmits"]
    f["rto_spurious"] = f["spurious_rtos"] + f["spurious_syn_rtos"]
    f["g2"] = f["goodput_bps"] ** 2
    per_burst = f.groupby(RUN + ["burst"], sort=False).agg(
        el_mean=("elapsed_s", "mean"), el_max=("elapsed_s", "max"), g_sum=("goodput_bps", "sum"),
        g2_sum=("g2", "sum"), g_n=("goodput_bps", "count"), g_mean=("goodput_bps", "mean")).reset_index()
    per_burst["jain"] = np.where(per_burst["g_n"] >= 2,
                                 per_burst["g_sum"] ** 2 / (per_burst["g_n"] * per_burst["g2_sum"]), np.nan)
    wide = per_burst.pivot(index=RUN, columns="burst", values=["el_mean", "el_max", "jain", "g_mean"])
    wide.columns = [f"{a}_b{b}" for a, b in wide.columns]
    per_run = f.groupby(RUN, sort=False).agg(
        elapsed_mean_s=("elapsed_s", "mean"), elapsed_max_s=("elapsed_s", "max"),
        rto_total=("rto_total", "sum"), rto_spurious=("rto_spurious", "sum"), rto_data=("rtos", "sum"),
        rto_syn=("syn_retransmits", "sum"), unfinished=("elapsed_s", lambda s: int(s.isna().sum())))
    rm = per_run.join(wide).reset_index()
    rm = rm.rename(columns={"el_mean_b1": "elapsed_mean_b1_s", "el_mean_b2": "elapsed_mean_b2_s",
                            "el_max_b1": "elapsed_max_b1_s", "el_max_b2": "elapsed_max_b2_s"})
    rm["rto_total"] = rm["rto_total"].astype(float)
    rm["rto_spurious"] = rm["rto_spurious"].astype(float)
    rm["rto_genuine"] = rm["rto_total"] - rm["rto_spurious"]
    rm["jain_within"] = rm[["jain_b1", "jain_b2"]].mean(axis=1, skipna=False)
    g1, g2 = rm["g_mean_b1"], rm["g_mean_b2"]
    rm["jain_between"] = (g1 + g2) ** 2 / (2 * (g1 ** 2 + g2 ** 2))
    rm["later_ratio"] = g2 / g1
    rm = rm.drop(columns=["g_mean_b1", "g_mean_b2"])
    if len(runs):
        keep = ["owd_max_s", "owd_p50_s", "owd_p99_s", "owd_mean_s", "drops_overflow", "drops_early", "drops_forced",
                "occ_max_pkts", "sim_end_s"]
        rm = rm.merge(runs[RUN + keep], on=RUN, how="left")
    return _sort(rm)


def _variant_label(iw: int, irto_s: float) -> str:
    return f"IW{int(iw)}/IRTO{float(irto_s):g}"


def summary_table(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means with 95% Student-t intervals over replications."""
    rows = []
    for key, part in rm.groupby(CONFIG + VARIANT, sort=False):
        link, buf, n, iw, irto = key
        row: dict[str, Any] = {"link": LINKS[link].label, "buffer": buffer_by_id(LINKS[link], buf).label,
                               "flows": f"{n}+{n}", "variant": _variant_label(iw, irto), "reps": len(part)}
        for col, name in (("elapsed_mean_b1_s", "elapsed b1 (s)"), ("elapsed_mean_b2_s", "elapsed b2 (s)"),
                          ("elapsed_max_s", "longest (s)"), ("jain_within", "Jain within"),
                          ("jain_between", "Jain between"), ("rto_total", "RTOs/run"),
                          ("rto_spurious", "spurious/run"), ("owd_max_s", "max OWD (s)")):
            if col not in part:
                continue
            est = stats.mean_ci(part[col])
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


# ---- findings -------------------------------------------------------------------------

LEVEL = fnd.LEVEL


def _paired(rm: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, where: dict[str, Sequence[Any]],
            relative: bool) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """Paired differences of ``metric`` per replication (:func:`tcplab.studies.findings.paired`; a run is :data:`RUN`)."""
    return fnd.paired(rm, metric, factor, test, ref, where, relative, unit=RUN)


_bootstrap_ratio = fnd.bootstrap_ratio


def _scope(rm: pd.DataFrame, links: Sequence[str]) -> list[str]:
    return [l for l in links if l in set(rm["link"])]


def evaluate_findings(rm: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """Checks seed 000's five findings on the per-run metrics; returns the ``findings.json`` document.

    Each finding has one or more checks; a finding holds when all its checks hold.
    Every check compares two TCP variants run by run (the same replication, so the
    same start times: common random numbers) and pools the configurations in its
    scope: per replication, the mean difference over those configurations, then a
    95% Student-t interval over the replications. A check that needs a link the run
    did not include is reported with ``held = null`` (not evaluated).
    """
    findings: list[dict[str, Any]] = []
    small_large_links = _scope(rm, ["edge", "hspa"])
    all_b = _BUFFER_ORDER

    # F1 ------------------------------------------------------------------------------
    checks = []
    if small_large_links:
        where = {"link": small_large_links, "n_flows": [1, 2]}
        _, est, per = _paired(rm, "elapsed_mean_s", "iw", 10, 3, where, relative=True)
        checks.append(_check(
            "F1a", "IW10 improves the elapsed times of small bursts (1+1, 2+2 flows) on HSPA and EDGE",
            "mean flow elapsed time per run, relative change IW10 vs IW3 (same IRTO, same replication), pooled over "
            f"{'/'.join(small_large_links).upper()}, every buffer, N in {{1, 2}}, both IRTOs; held if the 95% CI is below 0",
            "relative change of mean elapsed time, IW10 vs IW3", "fraction", est, _below(est), per,
            configs_below_zero=_count(per, "below"), configs_above_zero=_count(per, "above")))
        where = {"link": small_large_links, "n_flows": [18]}
        _, est, per = _paired(rm, "elapsed_mean_s", "iw", 10, 3, where, relative=True)
        checks.append(_check(
            "F1b", "IW10 tends to hurt large bursts (18+18 flows) on HSPA and EDGE",
            "as F1a for N = 18; held if the 95% CI is above 0",
            "relative change of mean elapsed time, IW10 vs IW3", "fraction", est, _above(est), per,
            configs_below_zero=_count(per, "below"), configs_above_zero=_count(per, "above")))
    findings.append(_finding("F1", "IW10 improves the elapsed times of small bursts (1+1, 2+2) and tends to hurt "
                             "large ones (18+18), on HSPA and EDGE", checks))

    # F2 ------------------------------------------------------------------------------
    checks = []
    if small_large_links:
        where = {"link": small_large_links}
        _, est, per = _paired(rm, "jain_between", "iw", 10, 3, where, relative=False)
        checks.append(_check(
            "F2a", "IW10 improves the later burst's relative fairness",
            "Jain's index between the bursts' mean per-flow goodputs, difference IW10 - IW3 per run, pooled over "
            f"{'/'.join(small_large_links).upper()}, every buffer and N, both IRTOs; held if the 95% CI is above 0",
            "difference of between-burst Jain index, IW10 - IW3", "index", est, _above(est), per,
            configs_below_zero=_count(per, "below"), configs_above_zero=_count(per, "above")))
        where = {"link": small_large_links, "n_flows": [2, 6, 18]}
        _, est, per = _paired(rm, "jain_within", "iw", 10, 3, where, relative=False)
        checks.append(_check(
            "F2b", "IW10 worsens fairness within bursts",
            "Jain's index of per-flow goodput within each burst (mean of the two bursts), difference IW10 - IW3 per "
            "run, pooled over the same links, every buffer, N in {2, 6, 18}, both IRTOs; held if the 95% CI is below 0",
            "difference of within-burst Jain index, IW10 - IW3", "index", est, _below(est), per,
            configs_below_zero=_count(per, "below"), configs_above_zero=_count(per, "above")))
    findings.append(_finding("F2", "IW10 improves the later burst's relative fairness and worsens fairness within "
                             "bursts", checks))

    # F3 ------------------------------------------------------------------------------
    checks = []
    if "lte" in set(rm["link"]):
        lte1 = rm[(rm["link"] == "lte") & (rm["irto_s"] == 1.0)]
        per_rep = lte1.groupby("rep")["rto_spurious"].mean()
        total = int(lte1["rto_spurious"].sum())
        runs_n = int(len(lte1))
        if total == 0:
            est = {"value": 0.0, "ci": [0.0, 3.0 / runs_n if runs_n else math.nan], "n": int(len(per_rep)),
                   "runs": runs_n, "interval": "one-sided 95% upper bound, rule of three (3 / runs)"}
        else:
            est = {**_est(per_rep), "runs": runs_n, "interval": "Student-t over replications"}
        per = [_clean({"buffer": b, "n_flows": int(n), "iw": int(i), "spurious_total": int(p["rto_spurious"].sum()),
                       "rtos_total": int(p["rto_total"].sum()), "runs": int(len(p))})
               for (b, n, i), p in lte1.groupby(["buffer", "n_flows", "iw"], sort=False)]
        checks.append(_check(
            "F3a", "On LTE, IRTO1 causes no spurious RTOs",
            "spurious RTOs (data and SYN) per run on LTE with IRTO = 1 s, every buffer, N and IW; held if there are none",
            "spurious RTOs per run, LTE, IRTO1", "RTOs/run", est, total == 0, per, spurious_total=total))
        _, est, per = _paired(rm, "elapsed_mean_s", "irto_s", 1.0, 3.0, {"link": ["lte"]}, relative=True)
        identical = bool(per) and all(c["value"] == 0 and c["ci"][0] == 0 and c["ci"][1] == 0 for c in per)
        held = identical or (est["n"] >= 2 and est["ci"][0] <= 0 <= est["ci"][1])
        checks.append(_check(
            "F3b", "On LTE, elapsed times with IRTO1 are the same as with IRTO3 within the CI",
            "mean flow elapsed time per run, relative change IRTO1 vs IRTO3 (same IW, same replication), pooled over "
            "LTE's buffers, N and IWs; held if the 95% CI contains 0",
            "relative change of mean elapsed time, IRTO1 vs IRTO3", "fraction", est, held, per,
            configs_excluding_zero=_count(per, "excl"), all_runs_identical=identical))
    findings.append(_finding("F3", "On LTE, IRTO1 changes nothing: no spurious RTOs, and elapsed times are the "
                             "same within the CI", checks))

    # F4 ------------------------------------------------------------------------------
    checks = []
    if "edge" in set(rm["link"]):
        large = ["fifo-50", "redok"]
        where = {"link": ["edge"], "buffer": large}
        pairs, est, per = _paired(rm, "rto_total", "irto_s", 1.0, 3.0, where, relative=False)
        checks.append(_check(
            "F4a", "On EDGE with large buffers, IRTO1 increases the number of RTOs",
            "RTOs (data + SYN timeouts) per run, difference IRTO1 - IRTO3 (same IW, same replication), pooled over "
            "EDGE's 50-packet buffers (FIFO 50, REDok), every N, both IWs; held if the 95% CI is above 0",
            "difference of RTOs per run, IRTO1 - IRTO3", "RTOs/run", est, _above(est), per,
            configs_above_zero=_count(per, "above")))
        sp_pairs, _, _ = _paired(rm, "rto_spurious", "irto_s", 1.0, 3.0, where, relative=False)
        num = sp_pairs.groupby("rep")["diff"].sum()
        den = pairs.groupby("rep")["diff"].sum().reindex(num.index)
        ratio = _bootstrap_ratio(num.to_numpy(float), den.to_numpy(float))
        ratio["interval"] = "bootstrap percentile over replications (2000 resamples, seed 0)"
        per_sp = []
        for key, part in rm[(rm["link"] == "edge") & rm["buffer"].isin(large)].groupby(["buffer", "n_flows", "iw"], sort=False):
            a = part[part["irto_s"] == 1.0]
            b = part[part["irto_s"] == 3.0]
            per_sp.append(_clean({"buffer": key[0], "n_flows": int(key[1]), "iw": int(key[2]),
                                  "rtos_irto3": float(b["rto_total"].mean()), "spurious_irto3": float(b["rto_spurious"].mean()),
                                  "rtos_irto1": float(a["rto_total"].mean()), "spurious_irto1": float(a["rto_spurious"].mean()),
                                  "value": math.nan, "ci": [math.nan, math.nan], "n": int(len(a))}))
        checks.append(_check(
            "F4b", "The extra RTOs are mostly spurious",
            "share of the increase in RTOs (IRTO1 - IRTO3, same scope as F4a) made of spurious RTOs: "
            "sum of spurious-RTO differences / sum of RTO differences; held if the 95% CI is above 0.5",
            "spurious share of the RTO increase", "fraction", ratio,
            ratio["n"] >= 2 and not math.isnan(ratio["ci"][0]) and ratio["ci"][0] > 0.5, per_sp))
        _, est, per = _paired(rm, "elapsed_max_s", "irto_s", 1.0, 3.0, where, relative=False)
        checks.append(_check(
            "F4c", "IRTO1 delays the longest flow",
            "elapsed time of the run's longest flow, difference IRTO1 - IRTO3, same scope as F4a; held if the 95% CI "
            "is above 0", "difference of the longest elapsed time, IRTO1 - IRTO3", "s", est, _above(est), per,
            configs_above_zero=_count(per, "above"), configs_below_zero=_count(per, "below")))
    findings.append(_finding("F4", "On EDGE with large buffers, IRTO1 increases the number of RTOs, mostly spurious, "
                             "and delays the longest flow", checks))

    # F5 ------------------------------------------------------------------------------
    checks = []
    cases = [c for c in (("edge", 1), ("hspa", 6)) if c[0] in set(rm["link"])]
    if cases and "owd_max_s" in rm:
        sub = rm[rm.apply(lambda r: (r["link"], r["n_flows"]) in cases, axis=1) & (rm["irto_s"] == 3.0)]
        case_text = " and ".join(f"{LINKS[l].label} {n}+{n}" for l, n in cases)
        for cid, buf, label in (("F5a", "redok", "REDok"), ("F5b", "red", "RED")):
            _, est, per = _paired(sub, "owd_max_s", "iw", 10, 3, {"buffer": [buf]}, relative=True)
            checks.append(_check(
                cid, f"{label} does not prevent IW10 from raising the one-way delay",
                f"maximum one-way delay of the run's data packets, relative change IW10 vs IW3 (IRTO 3 s, same "
                f"replication), {label}, pooled over {case_text} (the seed's OWD cases); held if the 95% CI is above 0",
                "relative change of the maximum OWD, IW10 vs IW3", "fraction", est, _above(est), per,
                configs_above_zero=_count(per, "above"), configs_below_zero=_count(per, "below")))
    findings.append(_finding("F5", "RED (and REDok) fail to control the OWD increase of IW10", checks))

    return fnd.document(NAME, "000_ae80ce17cd677c8e", asdict(params), params.reps, params.links, fnd.METHOD, findings)


def owd_maxima(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The largest one-way delay over all replications (IRTO 3 s), next to the seed's REDok values.

    The seed gives 2.80 s (IW10) vs 2.06 s (IW3) for one flow and 0.429 s vs 0.296 s for
    6 flows with REDok; the magnitudes place them on EDGE and HSPA respectively.
    """
    seed_values = {("edge", 1, 10): 2.80, ("edge", 1, 3): 2.06, ("hspa", 6, 10): 0.429, ("hspa", 6, 3): 0.296}
    out = []
    if not len(runs):
        return out
    sub = runs[(runs["irto_s"] == 3.0) & runs["n_flows"].isin(list(OWD_FLOW_COUNTS))]
    for (link, buf, n, iw), part in sub.groupby(["link", "buffer", "n_flows", "iw"], sort=False):
        out.append({"link": link, "buffer": buf, "n_flows": int(n), "iw": int(iw),
                    "max_owd_s": _num(part["owd_max_s"].max()), "mean_of_run_maxima_s": _num(part["owd_max_s"].mean()),
                    "seed_max_owd_s": seed_values.get((link, int(n), int(iw))) if buf == "redok" else None})
    return out
