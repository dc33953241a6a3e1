"""Results of one run as pandas DataFrames, and their Parquet files (docs/scenarios.md; the columns are documented in crates/tcplab-core/src/metrics/mod.rs).

``tcplab._core.run`` returns a JSON document of column lists; :class:`RunResult`
turns it into DataFrames with a fixed column order and dtypes, and writes them as one
Parquet file per table. Every file is written to a temporary name in the target
directory and then moved over the final name with ``os.replace``, so a reader (or a
resumed sweep) never sees a half-written table.

Tables and columns (times in seconds, rates in bit/s, sizes in bytes):

- ``flows``: flow_id, name, group, cc, src, dst, start_s, established_s,
  completed_s, elapsed_s (completion - start, handshake included; NaN if not
  completed), bytes_target (<NA> for bulk), bytes_delivered, goodput_bps,
  window_start_s, window_end_s (the span goodput covers: the run's measurement window
  clipped to the flow's life), segs_sent, retransmits, fast_retransmits, rtos,
  spurious_rtos, syn_retransmits, ecn_reductions (window reductions on ECN-Echo),
  tlp_probes (tail loss probes sent) (and, after them, spurious_syn_rtos,
  frto_spurious, final_cwnd_bytes, final_ssthresh_bytes, final_srtt_s).
- ``udp``: flow_id, name, group, src, dst, window_start_s, window_end_s, pkts_sent,
  pkts_delivered, pkts_lost, owd_mean_s, owd_max_s, jitter_s, pkts_out_of_order
  (deliveries not above every earlier sequence number).
- ``transactions``: one row per request/response transaction of the ``rpc``
  applications (core ``app/rpc.rs``), in creation order: txn_id, app (the entry's
  name), group, client, server, batch (arrival number within the application; the
  transactions of one batch share it), iw_segments (the server's initial window for
  the response), request_bytes, response_bytes, start_s (the client's connect: SYN
  sent), established_s (SYN-ACK at the client), completed_s (last response byte at
  the client, in order), uct_s (user completion time = completed_s - start_s),
  closed_s (both FINs acknowledged), bytes_delivered (response bytes at the client),
  retransmits (data segments, both directions), rtos (data timeouts, both
  directions), rtos_undone (of those, undone as spurious by Eifel detection,
  ``tcp.timestamps``), syn_retransmits (the client's), drops (packets of the transaction
  dropped in the network), state. Every transaction appears: ``state`` is
  ``closed``, ``completed`` (response in, still closing at the end of the run),
  ``open`` (response incomplete at the end: uct_s is NaN) or ``failed`` (the client
  gave up connecting after ``syn_retries``).
- ``queues``: link, window_start_s, window_end_s, enq_pkts, enq_bytes,
  drops_overflow, drops_early (AQM drops: RED, CoDel, PIE), drops_forced,
  drops_corruption, ce_marks (ECN CE marks instead of drops), occ_mean_pkts,
  occ_max_pkts, occ_mean_bytes, occ_max_bytes.
- ``links``: link, window_start_s, window_end_s, rate_bps, delay_s, tx_pkts, tx_bytes,
  utilisation, busy_sample_fraction, realised_per; with a MAC: mac (e.g.
  ``dama/rbdc``), mac_slots_allocated, mac_requests (<NA> without one); with a link
  layer: ll (e.g. ``slacp``), ll_frames_sent, ll_frames_retransmitted,
  ll_fec_frames_sent, ll_fec_blocks, ll_fec_blocks_recovered, ll_frames_recovered,
  ll_frames_given_up, ll_residual_loss, ll_frames_corrupted, ll_acks_sent. The MAC and
  link-layer counters are windowed like the rest (events from the warm-up's end on).

Summaries cover the measurement window [window_start_s, window_end_s]: from the
scenario's ``warmup`` (default 0) to the end of the run, ``meta["sim_end_s"]``, which
is the scenario's ``duration`` when it sets one (else the last event's time). The
core's ``metrics`` module documents which columns are windowed; ``meta`` counts
(drops, bottleneck_pkts) cover the whole run.
- series (only when recorded): ``cwnd`` (t_s, flow_id, cwnd_bytes, ssthresh_bytes,
  srtt_s, rto_s, state), ``queue`` (t_s, link, pkts, bytes), ``owd`` (t_s, flow_id,
  owd_s), ``drops`` (t_s, link, flow_id, cause, seq), ``throughput`` (``[record]
  throughput_interval``: t_s, the end of the interval; flow_id; flow, its name;
  interval_s, the interval's length, shorter for a last one cut by the end of the run;
  bytes delivered in order to the receiving application in the interval; goodput_bps =
  bytes x 8 / interval_s; one row per flow and interval from the flow's start to its
  completion or the end, ordered by time then flow; a flow's bytes sum to its
  ``bytes_delivered``), ``packets`` (``[record] packets``: t_ns, the event's time in
  integer ns, and t_s; flow_id; flow; event: enqueue, drop, transmit (start of
  serialization), receive (at the TCP receiver or UDP sink) or ack (at the TCP sender);
  link (<NA> for receive and ack); direction, data or ack; seq, relative to the ISN (the
  SYN is 0) or the UDP datagram's number; ack, the cumulative ACK of ack-direction
  packets; bytes on the wire, IP headers included; payload_bytes; cause of a drop).

Example:
    >>> doc = {"meta": {"seed": 1, "name": "x", "sim_end_s": 1.0, "events": 10, "digest": "ab", "wall_s": 0.1},
    ...        "flows": {"flow_id": [0], "name": ["f"], "elapsed_s": [None]}, "udp": {}, "queues": {}, "links": {},
    ...        "series": {}}
    >>> r = RunResult.from_core(doc)
    >>> r.flows.loc[0, "name"], bool(r.flows["elapsed_s"].isna()[0])
    ('f', True)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

__all__ = ["RunResult", "TABLES", "SERIES", "SERIES_DOC", "COLUMNS", "SUMMARY", "frame", "write_table_atomic",
           "write_json_atomic"]

#: Summary tables, always present.
TABLES = ("flows", "udp", "transactions", "queues", "links")
#: Time series, present when recorded.
SERIES = ("cwnd", "queue", "owd", "drops", "throughput", "packets")

_F, _I, _S, _NI = "float64", "int64", "string", "Int64"

#: Documented columns and dtypes of every table (``series_<name>`` for the series).
COLUMNS: dict[str, dict[str, str]] = {
    "flows": {
        "flow_id": _I, "name": _S, "group": _S, "cc": _S, "src": _S, "dst": _S,
        "start_s": _F, "established_s": _F, "completed_s": _F, "elapsed_s": _F,
        "bytes_target": _NI, "bytes_delivered": _I, "goodput_bps": _F, "window_start_s": _F,
        "window_end_s": _F, "segs_sent": _I,
        "retransmits": _I, "fast_retransmits": _I, "rtos": _I, "spurious_rtos": _I,
        "syn_retransmits": _I, "ecn_reductions": _I, "tlp_probes": _I,
    },
    "udp": {
        "flow_id": _I, "name": _S, "group": _S, "src": _S, "dst": _S, "window_start_s": _F,
        "window_end_s": _F, "pkts_sent": _I,
        "pkts_delivered": _I, "pkts_lost": _I, "owd_mean_s": _F, "owd_max_s": _F, "jitter_s": _F,
        "pkts_out_of_order": _I,
    },
    "transactions": {
        "txn_id": _I, "app": _S, "group": _S, "client": _S, "server": _S, "batch": _I, "iw_segments": _I,
        "request_bytes": _I, "response_bytes": _I, "start_s": _F, "established_s": _F, "completed_s": _F,
        "uct_s": _F, "closed_s": _F, "bytes_delivered": _I, "retransmits": _I, "rtos": _I, "rtos_undone": _I,
        "syn_retransmits": _I, "drops": _I, "state": _S,
    },
    "queues": {
        "link": _S, "window_start_s": _F, "window_end_s": _F, "enq_pkts": _I, "enq_bytes": _I,
        "drops_overflow": _I, "drops_early": _I,
        "drops_forced": _I, "drops_corruption": _I, "ce_marks": _I, "occ_mean_pkts": _F, "occ_max_pkts": _F,
        "occ_mean_bytes": _F, "occ_max_bytes": _F,
    },
    "links": {
        "link": _S, "window_start_s": _F, "window_end_s": _F, "rate_bps": _I, "delay_s": _F,
        "tx_pkts": _I, "tx_bytes": _I,
        "utilisation": _F, "busy_sample_fraction": _F, "realised_per": _F,
        "mac": _S, "mac_slots_allocated": _NI, "mac_requests": _NI,
        "ll": _S, "ll_frames_sent": _NI, "ll_frames_retransmitted": _NI, "ll_fec_frames_sent": _NI,
        "ll_fec_blocks": _NI, "ll_fec_blocks_recovered": _NI, "ll_frames_recovered": _NI,
        "ll_frames_given_up": _NI, "ll_residual_loss": _F, "ll_frames_corrupted": _NI, "ll_acks_sent": _NI,
    },
    "series_cwnd": {
        "t_s": _F, "flow_id": _I, "cwnd_bytes": _I, "ssthresh_bytes": _F, "srtt_s": _F, "rto_s": _F, "state": _S,
    },
    "series_queue": {"t_s": _F, "link": _S, "pkts": _I, "bytes": _I},
    "series_owd": {"t_s": _F, "flow_id": _I, "owd_s": _F},
    "series_drops": {"t_s": _F, "link": _S, "flow_id": _NI, "cause": _S, "seq": _NI},
    "series_throughput": {"t_s": _F, "flow_id": _I, "flow": _S, "interval_s": _F, "bytes": _I, "goodput_bps": _F},
    "series_packets": {
        "t_ns": _I, "t_s": _F, "flow_id": _I, "flow": _S, "event": _S, "link": _S, "direction": _S, "seq": _I,
        "ack": _NI, "bytes": _I, "payload_bytes": _I, "cause": _S,
    },
}

#: For each series: the ``[record]`` field (or ``trace=`` name) that asks for it, and
#: what its rows are and mean (rendered into docs/scenarios.md by
#: ``tcplab.scenario.reference``; the columns are :data:`COLUMNS` ``series_<name>``).
SERIES_DOC: dict[str, tuple[str, str]] = {
    "cwnd": ("cwnd = true", "One row per change of a TCP sender's cwnd (bytes), ssthresh (bytes; NaN while "
             "unbounded), smoothed RTT and RTO (s) or state (open, recovery, loss, cwr)."),
    "queue": ("queue = [links]", "One row per change of a recorded link's queue: waiting packets and bytes."),
    "owd": ("owd = [flows]", "One row per data packet delivered to a recorded flow: its one-way delay, s."),
    "drops": ("drops = true", "One row per drop: link, flow, cause (overflow, early, forced, corruption) and "
              "`seq`, the dropped packet's place in its flow: a TCP data segment's sequence number from the "
              "sender's ISN (the SYN is 0, the first data byte 1), a UDP datagram's number; empty for the ACK "
              "direction and packets of no flow. In emulate mode it is read from the kernel's segments (empty "
              "for request/response flows)."),
    "throughput": ("throughput_interval = \"100ms\"", "Goodput of every TCP and UDP flow on a fixed grid from "
                   "time 0: interval k covers (k x interval, (k+1) x interval], so a delivery exactly on a "
                   "boundary counts in the interval that ends there. One row per flow and interval, from the "
                   "interval holding the flow's start to the one holding its completion (else the end of the "
                   "run), ordered by time then flow id. `t_s` is the interval's end, `interval_s` its length "
                   "(shorter only for a last interval cut by the end of the run), `bytes` the bytes delivered "
                   "in order to the receiving application (TCP payload; UDP whole datagrams), `goodput_bps` = "
                   "bytes x 8 / interval_s. A flow's `bytes` sum to its `bytes_delivered` exactly. Not "
                   "windowed by `warmup`; rpc transactions are in the `transactions` table instead."),
    "packets": ("packets = [flows]", "Every packet event of the named TCP and UDP flows (both directions), in "
                "time order: `enqueue` (the link's queue accepted it), `drop` (with `cause`), `transmit` (its "
                "first bit starts to serialize; under a DAMA MAC, when the transmitter takes it, before any "
                "wait for a granted slot; a link layer's retransmission of a frame is another `transmit` of "
                "its IP packet), `receive` (a data packet at the TCP receiver or UDP sink) and `ack` (a packet "
                "of the ACK direction at the TCP sender). `t_ns` is exact (integer ns), `t_s` the same in s; "
                "`link` is empty at the endpoints; `direction` is data or ack; `seq` counts from the ISN (the "
                "SYN is 0, the first data byte 1; UDP: the datagram's number), `ack` is the cumulative ACK of "
                "ack-direction packets; `bytes` is the size on the wire with IP headers, `payload_bytes` the "
                "TCP payload. Drop rows of all flows (`packets = [\"*\"]`) equal the `queues` table's drop "
                "counts when there is no `warmup`. Cost: about 1.2 rows per simulated event, each about 130 ns "
                "and 100 B in the core (a traced bulk dumbbell runs at about half the events/s) and about 3 us "
                "more through `tcplab.run` (JSON and DataFrames): trace the flows you need."),
}

#: Series whose rows also get the flow's name (``flow``) beside its ``flow_id``.
NAMED_FLOW_SERIES = ("throughput", "packets")


def frame(table: str, columns: Mapping[str, list[Any]] | None) -> pd.DataFrame:
    """A DataFrame from a dict of column lists, in the documented order and dtypes.

    Documented columns missing from ``columns`` are filled with nulls (so every table
    has its full schema); extra columns the core adds are kept, after them. ``None``
    becomes NaN in float columns and <NA> in nullable ones.

    Example:
        >>> frame("links", {"link": ["bottleneck"], "utilisation": [0.5]}).dtypes["rate_bps"]
        Int64Dtype()
    """
    columns = dict(columns or {})
    schema = COLUMNS.get(table, {})
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"table {table}: columns of unequal length {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    data: dict[str, Any] = {}
    for name, dtype in schema.items():
        values = columns.pop(name, None)
        if values is None:
            values = [None] * n
            dtype = {"int64": "Int64"}.get(dtype, dtype)
        data[name] = _column(values, dtype)
    for name, values in columns.items():
        data[name] = pd.Series(values)
    return pd.DataFrame(data, index=pd.RangeIndex(n))


def _column(values: list[Any], dtype: str) -> pd.Series:
    if dtype == "float64":
        return pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
    if dtype == "int64" and any(v is None for v in values):
        dtype = "Int64"
    return pd.Series(values, dtype=dtype)


#: The columns of ``flows`` and ``udp`` a person reads first, as ``(column, heading with its
#: unit, scale)``: ``tcplab run``'s tables and :meth:`RunResult._repr_html_` (a notebook's
#: view) both show these (:meth:`RunResult.summary`).
SUMMARY: dict[str, tuple[tuple[str, str, float | None], ...]] = {
    "flows": (
        ("name", "name", None), ("group", "group", None), ("cc", "cc", None),
        ("start_s", "start (s)", 1.0), ("established_s", "estab. (s)", 1.0), ("elapsed_s", "elapsed (s)", 1.0),
        ("bytes_delivered", "delivered (B)", 1.0), ("goodput_bps", "goodput (Mbit/s)", 1e-6),
        ("retransmits", "rexmit (segs)", 1.0), ("rtos", "RTOs", 1.0), ("spurious_rtos", "spurious RTOs", 1.0),
        ("syn_retransmits", "SYN rexmit", 1.0),
    ),
    "udp": (
        ("name", "name", None), ("group", "group", None), ("pkts_sent", "sent (pkts)", 1.0),
        ("pkts_delivered", "delivered (pkts)", 1.0), ("pkts_lost", "lost (pkts)", 1.0),
        ("owd_mean_s", "OWD mean (ms)", 1e3), ("owd_max_s", "OWD max (ms)", 1e3), ("jitter_s", "jitter (ms)", 1e3),
    ),
}

#: Sender congestion states by the core's code (cc/mod.rs ``CaState::code``).
CA_STATES = {0: "open", 1: "recovery", 2: "loss", 3: "cwr"}


def _named_codes(series: dict[str, Any], link_names: list[str] | None) -> dict[str, Any]:
    """Replaces integer link indices and state codes in the series by their names.

    The core sends series columns compactly: ``link`` as an index into
    ``meta.link_names`` and the cwnd ``state`` as a ``CaState`` code.

    Example:
        >>> _named_codes({"queue": {"link": [1, 0]}, "cwnd": {"state": [0, 2]}}, ["a", "b"])
        {'queue': {'link': ['b', 'a']}, 'cwnd': {'state': ['open', 'loss']}}
        >>> _named_codes({"packets": {"link": [1, None]}}, ["a", "b"])
        {'packets': {'link': ['b', None]}}
    """
    out = {}
    for name, cols in series.items():
        cols = dict(cols or {})
        links = cols.get("link")
        if link_names and links and all(v is None or isinstance(v, int) and 0 <= v < len(link_names) for v in links):
            cols["link"] = [None if v is None else link_names[v] for v in links]
        states = cols.get("state") if name == "cwnd" else None
        if states and all(isinstance(v, int) for v in states):
            cols["state"] = [CA_STATES.get(v, str(v)) for v in states]
        out[name] = cols
    return out


def _flow_names(doc: Mapping[str, Any]) -> dict[int, str]:
    """Flow id -> name over the ``flows`` and ``udp`` tables of a core result document.

    Example:
        >>> _flow_names({"flows": {"flow_id": [0], "name": ["bulk"]}, "udp": {"flow_id": [1], "name": ["voip"]}})
        {0: 'bulk', 1: 'voip'}
    """
    out: dict[int, str] = {}
    for table in ("flows", "udp"):
        cols = doc.get(table) or {}
        out.update(zip(cols.get("flow_id") or [], cols.get("name") or []))
    return out


def write_table_atomic(df: pd.DataFrame, path: Path) -> None:
    """Writes ``df`` as Parquet at ``path`` via a temporary file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        df.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(obj: Any, path: Path) -> None:
    """Writes ``obj`` as indented JSON at ``path`` via a temporary file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(obj, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def digests(directory: Path) -> dict[str, str]:
    """SHA-256 of every Parquet file of a finished run's directory, by file name.

    Recorded in the run's JSON when it is stored (sweeps' ``run.json``, studies'
    ``task.json``), so :func:`damage` can tell a file that changed since.
    """
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.glob("*.parquet"))}


def damage(directory: Path, info_name: str) -> str | None:
    """Why a finished run's directory cannot be trusted (None: it can), in a few words.

    The directory was published whole (written under a temporary name, then renamed),
    but a crash of the machine, a full disk or a hand can still leave a file truncated
    or corrupt; resuming then runs it again instead of failing on it later
    (``ArrowInvalid``). Files recorded with a digest (:func:`digests`) must match it;
    others must at least have a readable Parquet footer.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> frame("flows", {"name": ["a"]}).to_parquet(d / "flows.parquet")
        >>> _ = (d / "run.json").write_text(json.dumps({"sha256": digests(d)}))
        >>> damage(d, "run.json") is None
        True
        >>> _ = (d / "flows.parquet").write_bytes((d / "flows.parquet").read_bytes()[:100])
        >>> damage(d, "run.json")
        'flows.parquet does not match its digest (truncated or corrupt)'
    """
    import pyarrow.parquet as pq

    try:
        info = json.loads((directory / info_name).read_text())
    except (OSError, ValueError) as e:
        return f"{info_name} is unreadable ({type(e).__name__})"
    recorded = info.get("sha256") if isinstance(info, dict) else None
    for p in sorted(directory.glob("*.parquet")):
        if isinstance(recorded, dict) and p.name in recorded:
            if hashlib.sha256(p.read_bytes()).hexdigest() != recorded[p.name]:
                return f"{p.name} does not match its digest (truncated or corrupt)"
            continue
        try:
            pq.ParquetFile(p).metadata
        except Exception as e:  # pyarrow's ArrowInvalid, OSError, ...
            return f"{p.name} is not a readable Parquet file ({type(e).__name__})"
    if isinstance(recorded, dict):
        missing = sorted(set(recorded) - {p.name for p in directory.glob("*.parquet")})
        if missing:
            return f"{missing[0]} is missing"
    return None


@dataclass
class RunResult:
    """One run's tables (see the module docstring for every column).

    Attributes: ``meta`` (seed, name, sim_end_s, events, digest, wall_s), ``flows``,
    ``udp``, ``queues``, ``links``, ``transactions`` (DataFrames), ``series`` (name -> DataFrame, only
    the recorded ones) and ``scenario`` (the resolved core scenario, if known).
    """

    meta: dict[str, Any]
    flows: pd.DataFrame
    udp: pd.DataFrame
    queues: pd.DataFrame
    links: pd.DataFrame
    transactions: pd.DataFrame = field(default_factory=lambda: frame("transactions", {}))
    series: dict[str, pd.DataFrame] = field(default_factory=dict)
    scenario: dict[str, Any] | None = None

    @classmethod
    def from_core(cls, doc: Mapping[str, Any] | str, scenario: dict[str, Any] | None = None) -> "RunResult":
        """Builds the result from ``_core.run``'s JSON document (a str or parsed)."""
        if isinstance(doc, str):
            doc = json.loads(doc)
        meta = dict(doc.get("meta") or {})
        series_doc = _named_codes(dict(doc.get("series") or {}), meta.get("link_names"))
        flow_names = _flow_names(doc)
        for name in NAMED_FLOW_SERIES:
            cols = series_doc.get(name)
            if cols and "flow_id" in cols and "flow" not in cols:
                cols["flow"] = [flow_names.get(f) for f in cols["flow_id"]]
        series = {
            name: frame(f"series_{name}", cols)
            for name, cols in series_doc.items()
            if cols and any(len(v) for v in cols.values())
        }
        packets = series.get("packets")
        if packets is not None and packets["t_s"].isna().all():
            # The core sends only the exact t_ns; seconds as the core computes them.
            packets["t_s"] = packets["t_ns"].astype("float64") * 1e-9
        return cls(
            meta=meta,
            flows=frame("flows", doc.get("flows")),
            udp=frame("udp", doc.get("udp")),
            queues=frame("queues", doc.get("queues")),
            links=frame("links", doc.get("links")),
            transactions=frame("transactions", doc.get("transactions")),
            series=series,
            scenario=scenario,
        )

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by file stem: ``flows``, ``udp``, ``transactions``, ``queues``, ``links``, ``series_*``."""
        out = {name: getattr(self, name) for name in TABLES}
        out.update({f"series_{k}": v for k, v in self.series.items()})
        return out

    def summary(self, table: str = "flows") -> pd.DataFrame:
        """The :data:`SUMMARY` columns of ``flows`` or ``udp``, headed with their units and scaled to them.

        Example:
            >>> doc = {"meta": {}, "flows": {"flow_id": [0], "name": ["f"], "goodput_bps": [2.5e6]}}
            >>> RunResult.from_core(doc).summary()[["name", "goodput (Mbit/s)"]].values.tolist()
            [['f', 2.5]]
        """
        if table not in SUMMARY:
            raise ValueError(f"table {table!r} has no summary; accepted: {', '.join(SUMMARY)}")
        df = getattr(self, table)
        out = {}
        for col, head, scale in SUMMARY[table]:
            if col in df:
                out[head] = df[col] if scale is None or scale == 1.0 else df[col].astype(float) * scale
        return pd.DataFrame(out, index=df.index)

    def _repr_html_(self) -> str:
        """A compact HTML summary for Jupyter: scenario name, seed, simulated duration, the flows with units.

        Example:
            >>> doc = {"meta": {"name": "demo", "seed": 1, "sim_end_s": 2.0, "events": 10, "wall_s": 0.01},
            ...        "flows": {"flow_id": [0], "name": ["bulk.0"], "goodput_bps": [1.5e6]}}
            >>> html_text = RunResult.from_core(doc)._repr_html_()
            >>> "bulk.0" in html_text and "goodput (Mbit/s)" in html_text and "2 s simulated" in html_text
            True
        """
        import html

        m = self.meta
        name = m.get("name") or (self.scenario or {}).get("name") or "(unnamed scenario)"
        dur = m.get("sim_end_s")
        facts = [f"seed {m.get('seed', '?')}",
                 f"{dur:.6g} s simulated" if isinstance(dur, (int, float)) else "duration unknown"]
        if isinstance(m.get("events"), int):
            facts.append(f"{m['events']:,} events")
        if isinstance(m.get("wall_s"), (int, float)):
            facts.append(f"{m['wall_s']:.3g} s wall")
        parts = [f"<div><strong>tcplab run: {html.escape(str(name))}</strong> ({html.escape('; '.join(facts))})"]
        for table, title in (("flows", "TCP flows"), ("udp", "UDP flows")):
            if len(getattr(self, table)):
                parts.append(f"<p>{title} ({len(getattr(self, table))}):</p>" + self.summary(table).to_html(
                    index=False, na_rep="–", float_format=lambda x: f"{x:.4g}", border=0))
        if len(self.transactions):
            uct = self.transactions["uct_s"].dropna()
            parts.append(f"<p>{len(self.transactions)} request/response transactions, {len(uct)} completed"
                         + (f"; user completion time median {uct.median():.4g} s" if len(uct) else "") + ".</p>")
        if self.series:
            parts.append(f"<p>Recorded series: {html.escape(', '.join(sorted(self.series)))}.</p>")
        return "\n".join(parts) + "</div>"

    def write(self, out_dir: str | Path) -> Path:
        """Writes ``<table>.parquet`` for every table, ``meta.json`` and ``scenario.json``.

        Each file is replaced atomically. Returns the directory.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, df in self.tables().items():
            write_table_atomic(df, out / f"{name}.parquet")
        if self.scenario is not None:
            write_json_atomic(self.scenario, out / "scenario.json")
        write_json_atomic(self.meta, out / "meta.json")
        return out

    @classmethod
    def read(cls, out_dir: str | Path) -> "RunResult":
        """Reads back what :meth:`write` wrote."""
        d = Path(out_dir)
        # Results written before a table existed lack its file: read it as empty.
        tables = {name: pd.read_parquet(p) if (p := d / f"{name}.parquet").is_file() else frame(name, {})
                  for name in TABLES}
        series = {p.stem[len("series_"):]: pd.read_parquet(p) for p in sorted(d.glob("series_*.parquet"))}
        scenario_path = d / "scenario.json"
        return cls(
            meta=json.loads((d / "meta.json").read_text()),
            series=series,
            scenario=json.loads(scenario_path.read_text()) if scenario_path.exists() else None,
            **tables,
        )
