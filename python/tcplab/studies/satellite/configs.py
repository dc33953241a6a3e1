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
- **A second reading of Enhanced TCP's initial window** (``rfc3390``,
  :data:`RFC3390_VARIANTS`): the seed says "Initial window of 4 segments (RFC 3390)",
  which the ``enhanced`` profile sends (4 x 1410 B). RFC 3390's own rule,
  min(4 MSS, max(2 MSS, 4380 B)), caps the window at 4380 B, which is 4 segments only
  for MSS <= 1095 B; at the seed's MSS of 1410 B it is 3.1 segments. The same three
  Enhanced variants also run with ``tcp.iw = "rfc3390"``, so that every finding can be
  checked under both readings.
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
- **The allocation-delay probe** (``recovery``, :func:`recovery`): one error burst of
  100-300 ms at 20-35 s into the 1 MB transfer (drawn per replication, :func:`burst_of`),
  RBDC and VBDC with an allocation delay of 11, 21 (the default) and 42 superframes,
  CRA beside them; the time from the burst's end until the rate at which data reaches
  the gateway is back at its pre-burst level. A second design, ``steady``, does the same
  with a 3 MB transfer and the burst at 60-90 s (:data:`RECOVERY_DESIGNS`).
- **The channel probe** (``channel``): a UDP sender that keeps the CRA return link busy,
  per error model, for the channel's realised frame loss against
  :func:`channel_model`'s closed form.

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
    "SEED_ERROR_TABLE", "VARIANTS", "RFC3390_VARIANTS", "ALL_VARIANTS", "IW_RFC3390", "VARIANT_LABELS", "WORKLOADS",
    "HIGH_ERRORS", "LOW_ERRORS", "LOSSY_ERRORS", "BASE_TCP", "SEED_SUBSET", "EXAMPLES", "SUPERFRAME_US",
    "ALLOC_DELAYS_SF", "DEFAULT_ALLOC_DELAY_SF", "BURST", "BURST_START_MS", "BURST_LENGTH_MS", "RECOVERY_DESIGNS",
    "PRE_BURST_S",
    "WINDOW_S", "LEVEL", "HORIZON_S", "GRID_S", "RECOVERY_VARIANTS", "CHANNEL_REPS", "CHANNEL_S", "AIRTIME_S",
    "StudyParams", "base_documents", "variant_document", "core_scenario", "variants_of", "slow_start_exits",
    "overshoot", "burst_of", "recovery", "channel_model", "simulate_block", "plan", "CONFIG", "RUN", "RECOVERY_RUN",
    "DAMA_ORDER",
]

NAME = "satellite"
#: The seed text this study reproduces (``docs/seeds/<stem>.txt``).
SEED_STUDY = "004_af47799115785341"
SUMMARY = "Seed 004: SLACP link layer and DAMA (CRA/RBDC/VBDC) under TCP over a lossy GEO return link"
#: Bumped when a change alters what a task computes, so old task files are not reused
#: (2: every run records its cwnd series and drops, for the overshoot columns; the
#: variants a task runs are in its spec. 3: the ``enhanced`` profile sends the seed's 4
#: segments and RFC 3390's 4380 B is the second reading; RBDC requests its backlog and a
#: frame is lost if its airtime meets a bad state (core); the allocation-delay and
#: channel probes; runs keep the link's frame count).
STUDY_VERSION = 3

#: The scenario files the configurations come from.
EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "satellite"
BASE_FILES = {False: "geo_return.toml", True: "geo_return_slacp.toml"}
DAMA_MODES = ("cra", "rbdc", "vbdc")
#: The diagnostic RBDC variant (tcplab's, not the seed's): the same MAC with a 1 s grant timeout.
RBDC_DIAGNOSTIC = "rbdc-1s"
#: DAMA modes in report order, the diagnostic last.
DAMA_ORDER = [*DAMA_MODES, RBDC_DIAGNOSTIC]
ERROR_MODELS = ("none", "low", "medium", "high", "vhigh", "huge")
#: The error model of the allocation-delay probe: one burst per run (:func:`burst_of`).
BURST = "burst"
ERROR_LABELS = {"none": "None", "low": "Low", "medium": "Medium", "high": "High", "vhigh": "VHigh", "huge": "Huge",
                BURST: "one burst"}
#: Seed 004's error table: average PER and the time series (between bursts, burst length).
SEED_ERROR_TABLE = {
    "none": ("0%", "error-free", "–"), "low": ("1-1.5%", "10-30 s", "60 ms"),
    "medium": ("3-4%", "5-15 s", "100-300 ms"), "high": ("5-6%", "2-10 s", "100-300 ms"),
    "vhigh": ("7-8%", "0-10 s", "100-300 ms"), "huge": ("13-15%", "0-7 s", "100 ms"),
}
#: Workloads: flows x bytes each (1 MB in all).
WORKLOADS = {1: "1MB", 4: "250kB"}
#: TCP variants in plotting order; the last two run on the 1 MB workload only. Enhanced
#: TCP's initial window is the ``enhanced`` profile's: the seed's 4 segments.
VARIANTS = ("reference", "enhanced", "enhanced+cbi", "enhanced-daass")
#: The Enhanced variants with RFC 3390's byte formula for the initial window (``tcp.iw =
#: "rfc3390"``: min(4 MSS, max(2 MSS, 4380 B)) = 4380 B at MSS 1410), the second reading.
RFC3390_VARIANTS = ("enhanced-rfc3390", "enhanced-rfc3390+cbi", "enhanced-rfc3390-daass")
ALL_VARIANTS = VARIANTS + RFC3390_VARIANTS
#: The initial window of the second reading (the scenario's ``tcp.iw``).
IW_RFC3390 = "rfc3390"
VARIANT_LABELS = {"reference": "Reference", "enhanced": "Enhanced", "enhanced+cbi": "Enhanced + CBI",
                  "enhanced-daass": "Enhanced, no DAASS", "enhanced-rfc3390": "Enhanced (IW 4380 B)",
                  "enhanced-rfc3390+cbi": "Enhanced (IW 4380 B) + CBI",
                  "enhanced-rfc3390-daass": "Enhanced (IW 4380 B), no DAASS"}
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

# --------------------------------------------------------------------------------------
# The allocation-delay probe (finding S4's second reading), every value stated before it ran

#: The superframe of the scenario files (DAMA's default, 26.5 ms), in microseconds.
SUPERFRAME_US = 26_500
#: Allocation delays of the probe, in superframes: half the default, the default (2 x
#: 250 ms + 2 superframes of NCC processing, rounded up: 21 = 556.5 ms) and double it.
ALLOC_DELAYS_SF = (11, 21, 42)
DEFAULT_ALLOC_DELAY_SF = 21
#: The one burst of a probe run: its start and length are uniform on these ranges (ms,
#: inclusive), drawn per replication: after the initial slow start's overshoot has been
#: repaired, and the seed's burst lengths of Medium, High and VHigh.
BURST_START_MS = (20_000, 35_000)
BURST_LENGTH_MS = (100, 300)
#: The probe's two designs: ``early`` (the seed's 1 MB transfer, burst at 20-35 s; check
#: S4c, stated before any run) and ``steady`` (a 3 MB transfer, burst at 60-90 s; check
#: S4d, added after S4c's verdict: at 20-35 s many senders over RBDC and VBDC were still
#: repairing their slow-start overshoot, so the pre-burst level was not a steady rate).
#: Everything else is the same. The next burst comes one good period later (after 40 s,
#: resp. 120 s), beyond the horizon.
RECOVERY_DESIGNS = {"early": {"bytes": "1MB", "start_ms": BURST_START_MS},
                    "steady": {"bytes": "3MB", "start_ms": (60_000, 90_000)}}
#: The pre-burst level: the rate at which data packets reached the gateway over the 5 s
#: before the burst.
PRE_BURST_S = 5.0
#: Recovery is judged on windows of 2 s (22 packets of 1450 B at 128 kbit/s) starting
#: every 10 ms from the burst's end up to 13 s after it (a horizon of 15 s): a window is
#: short when it carries fewer packets than 90% of the pre-burst level. The recovery time
#: is how long after the burst's end the windows stop being short: the start of the
#: window after the last short one, from the burst's end (0 when none is short; 13 s,
#: unrecovered, when the last one is).
WINDOW_S = 2.0
LEVEL = 0.9
HORIZON_S = 15.0
GRID_S = 0.01
#: The probe's TCP variants (1 MB): the seed's two TCPs and the second reading's Enhanced.
RECOVERY_VARIANTS = ("reference", "enhanced", "enhanced-rfc3390")
#: The columns of a probe run.
RECOVERY_RUN = ["design", "dama", "slacp", "alloc_delay_sf", "variant", "rep"]

# --------------------------------------------------------------------------------------
# The channel probe

#: Runs per error model, of :data:`CHANNEL_S` each (core seeds ``seed + r``): 20 000 s of
#: a busy return link per model, as ``crates/tcplab-core/tests/error_airtime.rs``.
CHANNEL_REPS = 4
CHANNEL_S = 5_000
#: Airtime of a 1450 B frame at 128 kbit/s, s.
AIRTIME_S = 1450 * 8 / 128_000


def base_documents() -> dict[bool, dict[str, Any]]:
    """The two scenario files (without / with SLACP) as parsed TOML documents."""
    from tcplab.scenario import parse_toml, read_text

    return {slacp: parse_toml(read_text(EXAMPLES / f), str(EXAMPLES / f)) for slacp, f in BASE_FILES.items()}


def variant_document(base: dict[str, Any], dama: str, error: str, n_flows: int, variant: str,
                     alloc_delay_sf: int | None = None, burst: tuple[int, int] | None = None) -> dict[str, Any]:
    """The scenario document of one configuration and TCP variant: ``base`` with paths set.

    ``variant`` is one of :data:`ALL_VARIANTS`; ``+cbi`` variants get the document of
    their Enhanced variant (the reused ssthresh is set per run, :func:`simulate_block`).
    ``alloc_delay_sf`` sets the MAC's allocation delay in superframes (RBDC, VBDC);
    ``error`` = :data:`BURST` with ``burst = (start, length)`` in ms is the probe's one
    burst: a time series whose good and bad states last exactly that long.

    Example:
        >>> d = variant_document(base_documents()[True], "rbdc-1s", "none", 1, "enhanced-daass")
        >>> d["topology"]["links"][0]["mac"], "error" in d["topology"]["links"][0], d["tcp"]["daass"]
        ({'kind': 'dama', 'mode': 'rbdc', 'rbdc_timeout': '1s'}, False, False)
        >>> variant_document(base_documents()[False], "cra", "none", 1, "enhanced-rfc3390-daass")["tcp"]
        {'profile': 'enhanced', 'mss': '1410B', 'iw': 'rfc3390', 'daass': False}
        >>> d = variant_document(base_documents()[False], "vbdc", BURST, 1, "reference", 42, (25000, 150))
        >>> d["topology"]["links"][0]["mac"], d["topology"]["links"][0]["error"]["bad_max"]
        ({'kind': 'dama', 'mode': 'vbdc', 'allocation_delay': '1113000us'}, '150ms')
    """
    doc = copy.deepcopy(base)
    link = "topology.links[0]"
    if dama == RBDC_DIAGNOSTIC:
        _set_path(doc, f"{link}.mac", {"kind": "dama", "mode": "rbdc", "rbdc_timeout": "1s"})
    else:
        _set_path(doc, f"{link}.mac.mode", dama)
    if alloc_delay_sf is not None:
        _set_path(doc, f"{link}.mac.allocation_delay", f"{alloc_delay_sf * SUPERFRAME_US}us")
    doc["topology"]["links"][0].pop("error", None)
    if error == BURST:
        if burst is None:
            raise ValueError("the burst error model needs burst = (start, length) in ms")
        start, length = burst
        _set_path(doc, f"{link}.error", {"kind": "markov", "form": "time_series", "good_min": f"{start}ms",
                                         "good_max": f"{start}ms", "bad_min": f"{length}ms", "bad_max": f"{length}ms"})
    elif error != "none":
        _set_path(doc, f"{link}.error", {"kind": "markov", "form": "preset", "name": error})
    _set_path(doc, "tcp.profile", "reference" if variant == "reference" else "enhanced")
    if "-rfc3390" in variant:
        _set_path(doc, "tcp.iw", IW_RFC3390)
    if variant.endswith("-daass"):
        _set_path(doc, "tcp.daass", False)
    flow = doc["flows"][0]
    flow.pop("bytes", None)
    flow["bytes"] = WORKLOADS[n_flows]
    if n_flows > 1:
        flow["count"] = n_flows
    return doc


def core_scenario(base: dict[str, Any], dama: str, error: str, n_flows: int, variant: str,
                  alloc_delay_sf: int | None = None, burst: tuple[int, int] | None = None) -> dict[str, Any]:
    """The core JSON (as a dict) of one configuration and TCP variant, validated by tcplab.scenario."""
    doc = variant_document(base, dama, error, n_flows, variant, alloc_delay_sf, burst)
    return Scenario.from_dict(doc).to_core()


def variants_of(n_flows: int, rfc3390: bool = False) -> tuple[str, ...]:
    """The TCP variants run on a workload (CBI and no-DAASS on the 1 MB transfer only).

    With ``rfc3390``, also the Enhanced variants with RFC 3390's initial window (4380 B).

    Example:
        >>> variants_of(4), variants_of(4, rfc3390=True)
        (('reference', 'enhanced'), ('reference', 'enhanced', 'enhanced-rfc3390'))
    """
    own = VARIANTS if n_flows == 1 else VARIANTS[:2]
    return own + ((RFC3390_VARIANTS if n_flows == 1 else RFC3390_VARIANTS[:1]) if rfc3390 else ())


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


def burst_of(seed: int, rep: int, design: str = "early") -> tuple[int, int]:
    """The allocation-delay probe's burst of replication ``rep``: ``(start, length)`` in ms.

    Uniform on the design's start range (:data:`RECOVERY_DESIGNS`) and
    :data:`BURST_LENGTH_MS`, from a generator seeded with ``(seed, rep)`` alone (and the
    design), so every DAMA mode, allocation delay, SLACP setting and TCP of a replication
    meets the same burst (common random numbers).

    Example:
        >>> burst_of(1, 0) == burst_of(1, 0), burst_of(1, 0) != burst_of(1, 1)
        (True, True)
        >>> all(20_000 <= s <= 35_000 and 100 <= n <= 300 for s, n in map(lambda r: burst_of(1, r), range(50)))
        True
        >>> all(60_000 <= burst_of(1, r, "steady")[0] <= 90_000 for r in range(50))
        True
    """
    lo, hi = RECOVERY_DESIGNS[design]["start_ms"]
    rng = np.random.default_rng([int(seed), int(rep)] + ([] if design == "early" else [1]))
    start = int(rng.integers(lo, hi, endpoint=True))
    length = int(rng.integers(BURST_LENGTH_MS[0], BURST_LENGTH_MS[1], endpoint=True))
    return start, length


def recovery(arrivals: Sequence[float], burst_start: float, burst_end: float) -> dict[str, Any]:
    """How long the rate at which data reaches the gateway takes to come back after a burst.

    ``arrivals`` are the times (s, sorted) at which data packets reached the gateway, less
    the propagation delay, so that they stand on the clock of the burst (the end of each
    packet's airtime on the return link). The pre-burst level is the rate over
    :data:`PRE_BURST_S` before ``burst_start``. Windows of :data:`WINDOW_S` start every
    :data:`GRID_S` from ``burst_end`` for :data:`HORIZON_S`; a window is short when it
    carries fewer packets than :data:`LEVEL` x level x window. Returns ``rate_pre_pps``,
    ``recovery_s`` (from ``burst_end`` to the start of the first window after the last
    short one, i.e. from when on every window carries the level; 0 when none is short,
    and at most the last window's start), ``recovered`` (the last window is not short)
    and ``deficit_s`` (the link time the horizon lost against the pre-burst level:
    horizon - delivered / level).

    Example:
        >>> steady = [i / 10 for i in range(600)]           # 10 packets/s for 60 s
        >>> r = recovery(steady, 30.0, 30.2)
        >>> r["rate_pre_pps"], r["recovery_s"], r["recovered"]
        (10.0, 0.0, True)
        >>> gap = [t for t in steady if not 30.0 <= t < 34.0]   # nothing from 30 s to 34 s
        >>> r = recovery(gap, 30.0, 30.2)
        >>> # [33.70, 35.70) holds 17 packets (34.0-35.6) < 0.9 x 10 x 2, [33.71, 35.71) holds 18
        >>> round(r["recovery_s"], 2), round(r["deficit_s"], 2)
        (3.51, 3.8)
        >>> r = recovery([t for t in steady if t < 34.0], 30.0, 30.2)   # nothing after 34 s
        >>> round(r["recovery_s"], 2), r["recovered"]
        (13.0, False)
    """
    t = np.asarray(arrivals, dtype=float)
    before = np.searchsorted(t, [burst_start - PRE_BURST_S, burst_start])
    rate = (before[1] - before[0]) / PRE_BURST_S
    starts = burst_end + np.arange(0.0, HORIZON_S - WINDOW_S + GRID_S / 2, GRID_S)
    counts = np.searchsorted(t, starts + WINDOW_S) - np.searchsorted(t, starts)
    short = counts < LEVEL * rate * WINDOW_S - 1e-9
    rec = float(min(starts[short][-1] + GRID_S, starts[-1]) - burst_end) if short.any() else 0.0
    span = np.searchsorted(t, [burst_end, burst_end + HORIZON_S])
    deficit = HORIZON_S - (span[1] - span[0]) / rate if rate > 0 else math.nan
    return {"rate_pre_pps": float(rate), "recovery_s": rec, "recovered": bool(not short[-1]),
            "deficit_s": float(deficit)}


def channel_model(name: str, airtime_s: float = AIRTIME_S) -> dict[str, float]:
    """What the channel model gives for seed 004's preset ``name`` (the core's parameters).

    ``time_fraction``: the expected fraction of time in the bad state,
    E[bad] / (E[good] + E[bad]). ``frame_loss``: the expected loss of frames of
    ``airtime_s`` sent back to back, 1 - E[(good - airtime)+] / E[cycle], since a frame
    is lost if any part of its airtime meets a bad state (``net/error/markov.rs``,
    ``expected_frame_loss``).

    Example:
        >>> m = channel_model("huge")
        >>> round(100 * m["time_fraction"], 3), round(100 * m["frame_loss"], 3)
        (2.778, 5.279)
    """
    reg = json.loads(_core.registry_json())
    [markov] = [e for e in reg["error_models"] if e["name"] == "markov"]
    [p] = [x["params"] for x in markov["presets"] if x["name"] == name]
    lo, hi = p["good_min"] / 1e9, p["good_max"] / 1e9
    bad = (p["bad_min"] + p["bad_max"]) / 2e9
    cycle = (lo + hi) / 2 + bad
    a = airtime_s
    escape = (lo + hi) / 2 - a if a <= lo else (0.0 if a >= hi else (hi - a) ** 2 / (2 * (hi - lo)))
    return {"time_fraction": bad / cycle, "frame_loss": 1 - escape / cycle}


# --------------------------------------------------------------------------------------
# The worker

_RUN_COLUMNS = (
    "rep", "variant", "core_seed", "elapsed_s", "elapsed_mean_s", "unfinished", "segs_sent", "retransmits", "rtos",
    "spurious_rtos", "frto_spurious", "final_ssthresh_bytes", "initial_ssthresh_bytes", "drops_overflow",
    "drops_corruption", "occ_max_bytes", "occ_mean_bytes", "overshoot_s", "overshoot_drops", "realised_per",
    "link_frames", "mac_slots_allocated", "mac_requests", "ll_frames_sent", "ll_frames_retransmitted",
    "ll_fec_frames_sent", "ll_fec_blocks", "ll_fec_blocks_recovered", "ll_frames_recovered", "ll_frames_given_up",
    "ll_residual_loss", "ll_frames_corrupted", "ll_acks_sent", "sim_end_s", "events", "digest",
)


def _nan(v: Any) -> float:
    return math.nan if v is None else float(v)


def simulate_block(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: every TCP variant x the replications ``spec["reps"]`` of one configuration.

    ``spec`` holds ``dama``, ``slacp``, ``error``, ``n_flows``, ``reps`` ([first, stop)),
    ``seed``, ``base`` (the scenario document), ``trace`` and optionally ``variants``
    (default: :func:`variants_of`). Returns the ``runs`` table (one row per run) or, for
    a trace task (Enhanced, replication ``reps[0]``), ``trace_cwnd``, ``trace_queue`` and
    ``trace_drops``. A spec with ``probe = "recovery"`` (the allocation-delay probe, with
    ``alloc_delay_sf``) returns the ``recovery`` table, ``probe = "channel"`` the
    ``channel`` table.

    Example:
        >>> spec = {"dama": "cra", "slacp": True, "error": "huge", "n_flows": 1, "reps": [0, 1], "seed": 1,
        ...         "base": base_documents()[True], "trace": False}
        >>> out = simulate_block(spec)
        >>> out["runs"]["variant"].tolist()
        ['reference', 'enhanced', 'enhanced+cbi', 'enhanced-daass']
        >>> bool((out["runs"]["elapsed_s"] > 62.5).all())   # 1 MB at 128 kbit/s takes 62.5 s
        True
    """
    if spec.get("probe") == "recovery":
        return _simulate_recovery(spec)
    if spec.get("probe") == "channel":
        return _simulate_channel(spec)
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
            if variant in ("enhanced", "enhanced-rfc3390"):
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
                "link_frames": int(lk["tx_pkts"][li]),
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


_RECOVERY_COLUMNS = (
    "design", "alloc_delay_sf", "rep", "variant", "core_seed", "burst_start_s", "burst_s", "rate_pre_pps", "recovery_s",
    "recovered", "deficit_s", "elapsed_s", "retransmits", "rtos", "spurious_rtos", "drops_overflow", "drops_corruption",
    "ll_frames_retransmitted", "mac_requests", "digest",
)


def _simulate_recovery(spec: dict[str, Any]) -> dict[str, Any]:
    """The allocation-delay probe's worker: one burst per run, the recovery of the delivered rate (:func:`recovery`)."""
    seed = int(spec["seed"])
    delay = int(spec["alloc_delay_sf"]) or None
    design = spec["design"]
    rows: dict[str, list[Any]] = {k: [] for k in _RECOVERY_COLUMNS}
    first, stop = spec["reps"]
    cores = {}
    for variant in spec["variants"]:
        # Validated once per variant; each replication sets its own burst in the core JSON.
        doc = variant_document(spec["base"], spec["dama"], BURST, 1, variant, delay, burst_of(seed, first, design))
        doc["flows"][0]["bytes"] = RECOVERY_DESIGNS[design]["bytes"]
        cores[variant] = Scenario.from_dict(doc).to_core()
        cores[variant]["record"].update({"owd": ["*"]})
    for rep in range(first, stop):
        burst = burst_of(seed, rep, design)
        t_b, t_e = burst[0] / 1e3, (burst[0] + burst[1]) / 1e3
        for variant in spec["variants"]:
            core = cores[variant]
            error = core["topology"]["links"][0]["error"]
            error.update(good_min=burst[0] * 1_000_000, good_max=burst[0] * 1_000_000, bad_min=burst[1] * 1_000_000,
                         bad_max=burst[1] * 1_000_000)
            doc = json.loads(_core.run(json.dumps(core, separators=(",", ":")), seed + rep))
            f, q, lk = doc["flows"], doc["queues"], doc["links"]
            qi, li = q["link"].index("return"), lk["link"].index("return")
            prop = lk["delay_s"][li]
            owd = doc["series"]["owd"]
            arrivals = np.sort(np.asarray(owd["t_s"], dtype=float) - prop)
            values = {"design": design, "alloc_delay_sf": int(spec["alloc_delay_sf"]), "rep": rep, "variant": variant,
                      "core_seed": seed + rep, "burst_start_s": t_b,
                      "burst_s": t_e - t_b, **recovery(arrivals, t_b, t_e),
                      "elapsed_s": _nan(f["elapsed_s"][0]), "retransmits": int(f["retransmits"][0]),
                      "rtos": int(f["rtos"][0]), "spurious_rtos": int(f["spurious_rtos"][0]),
                      "drops_overflow": q["drops_overflow"][qi], "drops_corruption": q["drops_corruption"][qi],
                      "ll_frames_retransmitted": _nan(lk["ll_frames_retransmitted"][li]),
                      "mac_requests": _nan(lk["mac_requests"][li]), "digest": doc["meta"]["digest"]}
            for c in _RECOVERY_COLUMNS:
                rows[c].append(values[c])
    return {"recovery": {k: np.asarray(v) for k, v in rows.items()}}


def _simulate_channel(spec: dict[str, Any]) -> dict[str, Any]:
    """The channel probe's worker: a UDP sender keeps the CRA return link busy (1450 B every 80 ms,
    airtime 90.625 ms) for ``duration_s``; the realised frame loss per run."""
    doc = copy.deepcopy(spec["base"])
    _set_path(doc, "topology.links[0].mac.mode", "cra")
    _set_path(doc, "topology.links[0].error", {"kind": "markov", "form": "preset", "name": spec["error"]})
    doc.pop("tcp", None)
    doc["flows"] = [{"kind": "udp", "name": "saturating", "src": "st", "dst": "gw", "packet_size": "1450B",
                     "interval": {"dist": "constant", "mean": "80ms"}}]
    doc["duration"] = f"{int(spec['duration_s'])}s"
    core = Scenario.from_dict(doc).to_core()
    rows: dict[str, list[Any]] = {k: [] for k in ("rep", "core_seed", "duration_s", "frames", "frames_lost")}
    first, stop = spec["reps"]
    for rep in range(first, stop):
        out = json.loads(_core.run(json.dumps(core, separators=(",", ":")), int(spec["seed"]) + rep))
        lk, q = out["links"], out["queues"]
        li, qi = lk["link"].index("return"), q["link"].index("return")
        for k, v in (("rep", rep), ("core_seed", int(spec["seed"]) + rep), ("duration_s", float(spec["duration_s"])),
                     ("frames", int(lk["tx_pkts"][li])), ("frames_lost", int(q["drops_corruption"][qi]))):
            rows[k].append(v)
    return {"channel": {k: np.asarray(v) for k, v in rows.items()}}


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
        rfc3390: also run the Enhanced variants with RFC 3390's initial window of 4380 B
            besides the seed's 4 segments (:data:`RFC3390_VARIANTS`).
        recovery: also run the allocation-delay probe (CRA, and RBDC and VBDC at each of
            :data:`ALLOC_DELAYS_SF`; both SLACP settings; :data:`RECOVERY_VARIANTS`; both
            :data:`RECOVERY_DESIGNS`; ``reps`` replications).
        channel: also run the channel probe (:data:`CHANNEL_REPS` runs of :data:`CHANNEL_S`
            per lossy error model in ``errors``).

    Example:
        >>> # 3 DAMA x 2 SLACP x 2 errors x (4 variants at 1 MB + 2 at 4 x 250 kB) x 2 reps = 144,
        >>> # + diagnostic 2 SLACP x 2 errors x 2 variants x 2 reps = 16, + 3 traces
        >>> StudyParams(reps=2, errors="none,huge", rfc3390=False, recovery=False, channel=False).n_runs()
        163
        >>> # + IW 4380 B: 3 DAMA x 2 SLACP x 2 errors x (3 variants at 1 MB + 1 at 4 x 250 kB) x 2 reps
        >>> StudyParams(reps=2, errors="none,huge", recovery=False, channel=False).n_runs()
        259
        >>> # + probe: 2 designs x (CRA + 2 x 3 delays) x 2 SLACP x 3 variants x 2 reps, + channel: 4 runs for Huge
        >>> StudyParams(reps=2, errors="none,huge").n_runs()
        431
    """

    reps: int = 32
    links: list[str] = field(default_factory=lambda: ["geo"])
    errors: Any = field(default_factory=lambda: list(ERROR_MODELS))
    seed: int = 1
    block: int = 32
    rbdc_diagnostic: bool = True
    trace: bool = True
    rfc3390: bool = True
    recovery: bool = True
    channel: bool = True

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

    def recovery_configurations(self) -> list[tuple[str, bool, int]]:
        """The allocation-delay probe: (DAMA, SLACP, allocation delay in superframes; 0 for CRA)."""
        if not self.recovery:
            return []
        return [(d, s, a) for d in DAMA_MODES for s in (False, True) for a in ((0,) if d == "cra" else ALLOC_DELAYS_SF)]

    def channel_models(self) -> list[str]:
        """The error models of the channel probe: the lossy ones in :attr:`errors`."""
        return [e for e in self.errors if e != "none"] if self.channel else []

    def n_runs(self) -> int:
        """Simulations in the study."""
        main = sum(len(variants_of(n, self.rfc3390)) for *_, n in self.configurations()) * self.reps
        diag = len(self.diagnostic_configurations()) * 2 * self.reps
        probe = len(self.recovery_configurations()) * len(RECOVERY_VARIANTS) * len(RECOVERY_DESIGNS) * self.reps
        channel = len(self.channel_models()) * CHANNEL_REPS
        return main + diag + probe + channel + (len(DAMA_MODES) if self.trace else 0)


def plan(params: StudyParams) -> list[BlockTask]:
    """The tasks: every configuration x block of replications, heaviest (lossy, 1 MB) first.

    Example:
        >>> tasks = plan(StudyParams(reps=4, errors="none", rbdc_diagnostic=False, trace=False, rfc3390=False,
        ...                          recovery=False))
        >>> len(tasks), sum(t.runs for t in tasks)
        (12, 144)
    """
    bases = base_documents()
    tasks = []
    configs = [(c, False) for c in params.configurations() + params.diagnostic_configurations()]
    if params.trace:
        configs += [((d, False, "none", 1), True) for d in DAMA_MODES]
    blocks = [(f, min(f + params.block, params.reps)) for f in range(0, params.reps, params.block)]
    common = {"study": NAME, "version": STUDY_VERSION, "seed": int(params.seed), "core": _core.version()}
    for (dama, slacp, error, n), trace in configs:
        reps = [(0, 1)] if trace else blocks
        variants = ["enhanced"] if trace else (["reference", "enhanced"] if dama == RBDC_DIAGNOSTIC
                                               else list(variants_of(n, params.rfc3390)))
        for first, stop in reps:
            spec = {**common, "probe": "grid", "dama": dama, "slacp": slacp, "error": error, "n_flows": n,
                    "reps": [first, stop], "trace": trace, "base": bases[slacp], "variants": variants}
            tasks.append(BlockTask(task_key(spec), spec, (stop - first) * len(variants)))
    for design in RECOVERY_DESIGNS if params.recovery else ():
        for dama, slacp, delay in params.recovery_configurations():
            for first, stop in blocks:
                spec = {**common, "probe": "recovery", "design": design, "dama": dama, "slacp": slacp,
                        "error": BURST, "n_flows": 1, "alloc_delay_sf": delay, "reps": [first, stop], "trace": False,
                        "base": bases[slacp], "variants": list(RECOVERY_VARIANTS)}
                tasks.append(BlockTask(task_key(spec), spec, (stop - first) * len(RECOVERY_VARIANTS)))
    for error in params.channel_models():
        spec = {**common, "probe": "channel", "dama": "cra", "slacp": False, "error": error, "n_flows": 0,
                "duration_s": CHANNEL_S, "reps": [0, CHANNEL_REPS], "trace": False, "base": bases[False]}
        tasks.append(BlockTask(task_key(spec), spec, CHANNEL_REPS))
    weight = {e: i for i, e in enumerate((*ERROR_MODELS, BURST))}
    return sorted(tasks, key=lambda t: (-weight[t.spec["error"]], -t.runs))
