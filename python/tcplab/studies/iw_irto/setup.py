"""Set-up of study ``iw-irto``: links, buffers, workload, scenarios and the block of runs.

The seed is I. Järvinen, A. Nyrhinen, A. Y. Ding and M. Kojo, "Effect of IW and
Initial RTO changes", IETF 79 (Beijing, November 2010): an ns-2 study (TCP SACK) of
the initial window 3 -> 10 segments and the initial RTO 3 s -> 1 s over EDGE, HSPA and
LTE bottlenecks. Its text is kept verbatim in ``docs/seeds/000_ae80ce17cd677c8e.txt``.

What runs (every choice the seed leaves open is a :class:`StudyParams` field or a
constant here, and ``docs/studies/iw-irto.md`` explains each):

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
  ``u[b, i]``): replication ``rep`` sees the same draws for every TCP variant, buffer
  and flow count (common random numbers). The core seed of replication ``rep`` is
  ``seed + rep`` (RED's drop draws), as in ``tcplab sweep``.
- **TCP.** Profile ``ns2-sack`` (SACK, min RTO 1 s, no delayed ACKs), Reno, IW in
  {3, 10}, initial RTO in {3 s, 1 s} (RFC 6298 lowered the initial RTO of RFC 2988
  from 3 s to 1 s).

A task is one link x buffer x N x block of replications x the four TCP variants
(:func:`plan`); the worker (:func:`simulate_block`) calls ``_core.run`` directly and
keeps per-flow rows (with the time of each flow's first RTO, read from the core's
cwnd trace), per-run rows and, for N in {1, 6}, the one-way delay of every data packet.

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
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import _core
from tcplab.studies.engine import BlockTask, task_key

__all__ = [
    "NAME",
    "SEED_STUDY",
    "SUMMARY",
    "WirelessLink",
    "Buffer",
    "RedSetting",
    "LINKS",
    "RED_TABLE",
    "FLOW_COUNTS",
    "VARIANTS",
    "CONFIG",
    "VARIANT",
    "RUN",
    "StudyParams",
    "buffers",
    "buffer_by_id",
    "queue_config",
    "bdp_table",
    "red_table",
    "start_fractions",
    "flow_starts",
    "scenario",
    "first_rtos",
    "simulate_block",
    "plan",
    "sort_rows",
    "variant_label",
    "link_order",
    "buffer_order",
]

NAME = "iw-irto"
#: The seed text, ``docs/seeds/<SEED_STUDY>.txt``.
SEED_STUDY = "000_ae80ce17cd677c8e"
SUMMARY = "Seed 000: IW 3 -> 10 and initial RTO 3 s -> 1 s over EDGE/HSPA/LTE (ns-2 TCP SACK)"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 2  # 2: per-flow first-RTO columns from the cwnd trace

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
        # The cwnd trace gives the time of each flow's first RTO (:func:`first_rtos`).
        "record": {"owd": ["*"] if record_owd else [], "cwnd": True},
    }


_FLOW_INT = ("retransmits", "fast_retransmits", "rtos", "spurious_rtos", "syn_retransmits", "spurious_syn_rtos",
             "segs_sent", "bytes_delivered")
_FLOW_FLOAT = ("start_s", "established_s", "completed_s", "elapsed_s", "goodput_bps")
#: Loss state of the core's cwnd trace: the sender is recovering from an RTO.
_STATE_LOSS = 2


def _floats(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def first_rtos(cwnd: dict[str, list[Any]], established_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per flow, the time of its first data RTO and whether it hit the first window.

    ``cwnd`` is the core's cwnd trace (one row per change of a sender's state, rows in
    time order); a row whose state is loss (2) starts an RTO. The first window timed
    out when the first row after the connection was established is such a row: no
    ACK of data had moved the window before the RTO (the seed's "first packet").

    Returns ``(first_rto_s, first_window_rto)``: absolute times in s (NaN for a flow
    with no data RTO) and 0/1 flags, indexed by flow id.

    Example:
        >>> tr = {"flow_id": [0, 1, 0, 1, 0, 1], "t_s": [0.0, 0.0, 0.5, 0.5, 0.9, 2.0],
        ...       "state": [0, 0, 0, 0, 0, 2]}
        >>> t, w = first_rtos(tr, np.array([0.5, 0.5]))
        >>> t.tolist(), w.tolist()
        ([nan, 2.0], [0, 1])
    """
    n = len(established_s)
    first = np.full(n, np.nan)
    window = np.zeros(n, dtype=np.int8)
    fid = np.asarray(cwnd["flow_id"], dtype=np.int64)
    if not len(fid):
        return first, window
    ts = np.asarray(cwnd["t_s"], dtype=np.float64)
    loss = np.asarray(cwnd["state"], dtype=np.int64) == _STATE_LOSS
    order = np.argsort(fid, kind="stable")  # rows of each flow together, still in time order
    fid, ts, loss = fid[order], ts[order], loss[order]
    bounds = np.flatnonzero(np.diff(fid)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(fid)]):
        f = int(fid[lo])
        hits = np.flatnonzero(loss[lo:hi])
        if not len(hits):
            continue
        first[f] = ts[lo + hits[0]]
        est = established_s[f]
        after = np.flatnonzero(ts[lo:hi] > est) if not math.isnan(est) else np.zeros(0, dtype=np.int64)
        window[f] = int(len(after) > 0 and loss[lo + after[0]])
    return first, window


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
    flows: dict[str, list[Any]] = {k: [] for k in ("rep", "iw", "irto_s", "flow", "burst", *_FLOW_FLOAT, *_FLOW_INT,
                                                    "first_rto_s", "first_window_rto")}
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
            t_rto, window = first_rtos(doc["series"]["cwnd"], _floats(f["established_s"]))
            flows["first_rto_s"] += t_rto.tolist()
            flows["first_window_rto"] += window.tolist()
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
#: The columns that name a configuration, a TCP variant, and a run.
CONFIG = ["link", "buffer", "n_flows"]
VARIANT = ["iw", "irto_s"]
RUN = CONFIG + VARIANT + ["rep"]


def link_order(name: str) -> int:
    """A link's place in report order (EDGE, HSPA, LTE)."""
    return _LINK_ORDER.index(name)


def buffer_order(buffer_id: str) -> int:
    """A buffer's place in report order (FIFO BDP, FIFO 2·BDP, FIFO 50, RED, REDok)."""
    return _BUFFER_ORDER.index(buffer_id)


def sort_rows(df: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Rows in report order: link, buffer, N, replication, variant (IW3/3s first), ``extra``."""
    if not len(df):
        return df
    keys = pd.DataFrame({
        "_l": df["link"].map(_LINK_ORDER.index), "_b": df["buffer"].map(_BUFFER_ORDER.index),
        "_v": [VARIANTS.index((int(i), float(r))) for i, r in zip(df["iw"], df["irto_s"])],
    }, index=df.index)
    order = pd.concat([df, keys], axis=1).sort_values(["_l", "_b", "n_flows", "rep", "_v", *extra], kind="stable")
    return order.drop(columns=["_l", "_b", "_v"]).reset_index(drop=True)




def variant_label(iw: int, irto_s: float) -> str:
    """A TCP variant's label.

    Example:
        >>> variant_label(10, 1.0)
        'IW10/IRTO1'
    """
    return f"IW{int(iw)}/IRTO{float(irto_s):g}"
