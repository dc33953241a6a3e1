"""Set-up of study ``highspeed``: the scenario, its sweep, and the study's parameters.

Seed 002 is H. Shimonishi, T. Murase and M. Sanadidi, "Assessing interactions among
legacy and high-speed TCPs", PFLDnet 2007 (``docs/seeds/002_06d48414b99b3466.txt``):
eight congestion controls compared flow by flow on a 5-router parking lot full of
short flows, alone and mixed with Reno. ``docs/studies/highspeed.md`` gives every
choice the seed leaves open; this module holds them as constants.

- **One scenario file**, ``examples/highspeed/parking_lot.toml`` (the seed's full
  scale), swept by path (:func:`variant_document`): ``cc.name`` (the protocol),
  ``workload.classes[*].mix_fraction`` (0, or :data:`MIX_FRACTION` of the long- and
  short-lived flows on Reno), ``workload.classes[0].count`` (10 or 40 long-lived
  flows), ``topology.backbone.error`` (Bernoulli loss or none), whether the
  short-lived class exists at all, and the scale.
- **Grid** (:meth:`StudyParams.configurations`): per (long-lived count, random loss)
  case of :data:`CASES`, the all-Reno baseline plus each other protocol alone and
  mixed; and, with 10 long-lived flows, every protocol alone *without* short-lived
  flows (the seed's "RTT of a flow; an example: Without short-lived flows / With
  short-lived flows"), for the two sentences of that slide.
- **Scale** (:data:`SCALES`): ``full`` is the seed's (1 Gbit/s, 2 MB buffers, 4.7 GB
  flows); ``reduced`` (the default) divides every rate, buffer, flow size and the
  receive buffer by 10 and multiplies the random-loss rate by 100 (= 10^2, so Reno's
  loss-limited window 1.22/sqrt(p) keeps its ratio to the bandwidth-delay product in
  packets; Mathis et al., CCR 1997); delays and inter-arrival times are unchanged.
  ``tiny`` divides by 100 (CI).

Example:
    >>> doc = variant_document(base_document(), "reduced", "scalable", "mixed", 40, True)
    >>> doc["topology"]["backbone"]["rate"], doc["topology"]["backbone"]["error"]
    ('100Mbps', {'kind': 'bernoulli', 'per': 0.0001})
    >>> doc["workload"]["classes"][0]["count"], doc["workload"]["classes"][0]["bytes"], doc["duration"]
    (40, '470MB', '900s')
    >>> doc["cc"]["name"], doc["workload"]["classes"][1]["mix_fraction"]
    ('scalable', 0.5)
    >>> [c["name"] for c in variant_document(base_document(), "tiny", "reno", "alone", 10, False, shorts=False)
    ...  ["workload"]["classes"]]
    ['long']
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab import units

__all__ = [
    "NAME", "SUMMARY", "SEED_STUDY", "STUDY_VERSION", "PROTOCOLS", "LABELS", "MIXES", "MIX_FRACTION", "SCALES",
    "LOSS_PER_FULL", "CASES", "HOP_BINS", "MIN_SPAN_S", "TAIL_S", "RUN", "CASE", "OWD_FLOWS", "RTT_READINGS",
    "WORKLOADS", "DELAY_READINGS", "BUFFER_READING_DELAY", "DURATION_S", "owd_flows",
    "StudyParams", "base_document", "variant_document",
]

NAME = "highspeed"
SEED_STUDY = "002_06d48414b99b3466"
SUMMARY = "Seed 002: 8 congestion controls alone and mixed with Reno on a 5-router parking lot with short flows"
#: Bumped when a change alters what a task computes, so old task files are not reused.
#: 3: the ``shorts`` dimension (runs without short-lived flows) and the one-way-delay spikes.
#: 4: sessions (``workload``), the RTT readings (``rtt``) and the backbone-delay readings (``delay``).
STUDY_VERSION = 4

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "highspeed"
BASE_FILE = "parking_lot.toml"
#: Reno first (the baseline), then the protocols the seed compares, then CUBIC, which
#: tcplab adds (the seed's conclusion table does not list it).
PROTOCOLS = ("reno", "highspeed", "scalable", "bic", "cubic", "htcp", "compound", "areno")
LABELS = {"reno": "Reno", "highspeed": "HighSpeed", "scalable": "Scalable", "bic": "BIC", "cubic": "CUBIC",
          "htcp": "H-TCP", "compound": "Compound", "areno": "AReno"}
MIXES = ("alone", "mixed")
#: Fraction of the long- and short-lived flows on Reno in a mixed run (tcplab's choice:
#: the seed says "their mixture" without a fraction).
MIX_FRACTION = 0.5
#: Scale name -> divisor of rates, buffers and sizes.
SCALES = {"full": 1, "reduced": 10, "tiny": 100}
#: Random loss per packet per backbone link at full scale (x divisor^2 when reduced);
#: the seed gives no rate.
LOSS_PER_FULL = 1e-6
#: Run length: long-lived count x their mean inter-arrival time, plus this tail, s.
TAIL_S = 600
#: A flow's throughput is compared only if it started this long before the end, s.
MIN_SPAN_S = 60.0
#: The (long-lived count, random loss) cases of the seed: light and heavy load without
#: random loss, and "With/without random packet losses - 10 long-lived flows".
CASES = ((10, False), (40, False), (10, True))
#: Hop-count bins of the per-hop analysis (3 and 4 hops pooled: 10% of flows cross 4).
HOP_BINS = {1: "1", 2: "2", 3: "3-4", 4: "3-4"}
#: The columns that identify a run, and the case a run is paired within (the same
#: flows in every run of a case and replication: common random numbers).
RUN = ["protocol", "mix", "n_long", "loss", "shorts", "rtt", "rep"]
CASE = ["n_long", "loss", "shorts", "rtt", "rep"]
#: The two readings of "Average round trip delay of a flow = 130msec (exponential)"
#: (the core's ``workload.rtt_reading``): the same mean RTT for every hop count, or
#: one exponential excess for every flow, so the RTT grows with the hop count. Neither
#: is the seed's; the study runs both as named variants.
RTT_READINGS = ("equal_per_hop", "common_excess")
#: The two readings of "[[workload.classes]] count" (``docs/studies/highspeed.md``):
#: ``sessions`` (each of the N sources fetches objects with the stated inter-arrival
#: time for the whole run; the default) or ``files`` (N files in one Poisson stream).
WORKLOADS = ("sessions", "files")
#: The two readings of "1Gbps links with 2MB buffer (15msec)": ``link``, 15 ms is each
#: backbone link's one-way delay (the default); ``buffer``, 15 ms is the buffer's
#: depth (2 MB at 1 Gbit/s = 16.8 ms) and the link delay is not given, so tcplab sets
#: :data:`BUFFER_READING_DELAY`.
DELAY_READINGS = ("link", "buffer")
#: Backbone one-way delay under the ``buffer`` reading (tcplab's choice: a short hop, so
#: nearly all of the 130 ms mean RTT is the drawn access delay).
BUFFER_READING_DELAY = "1ms"
#: Run length with sessions, s (tcplab's choice; with sessions the offered load does not
#: depend on the run length, so it is set by cost: docs/studies/highspeed.md).
DURATION_S = 900
#: Long-lived flows whose per-packet one-way delay is recorded (Reno alone, 10
#: long-lived flows, with and without short-lived flows): the first three to arrive.
#: The seed shows the RTT of one flow "as an example"; three give a steadier count.
OWD_FLOWS = ("long000", "long001", "long002")


def base_document() -> dict[str, Any]:
    """The scenario file as a parsed TOML document."""
    from tcplab.scenario import parse_toml, read_text

    return parse_toml(read_text(EXAMPLES / BASE_FILE), str(EXAMPLES / BASE_FILE))


def _div(text: str, parse: Any, fmt: Any, k: int) -> str:
    """A quantity divided by ``k``, written back with its unit (``"1Gbps"``, 10 -> ``"100Mbps"``)."""
    return fmt(parse(text) // k)


def owd_flows(workload: str = "sessions") -> tuple[str, ...]:
    """The flows whose one-way delay is recorded: the first three long-lived files, or
    the first object of each of the first three long-lived sessions.

    Example:
        >>> owd_flows()
        ('long000.0000', 'long001.0000', 'long002.0000')
    """
    return OWD_FLOWS if workload == "files" else tuple(f"{n}.0000" for n in OWD_FLOWS)


def variant_document(base: dict[str, Any], scale: str, protocol: str, mix: str, n_long: int,
                     loss: bool, shorts: bool = True, rtt: str = "equal_per_hop", workload: str = "sessions",
                     delay: str = "link", duration_s: int = DURATION_S) -> dict[str, Any]:
    """The scenario document of one run: ``base`` with the swept paths set (module doc).

    ``shorts=False`` drops the short-lived class; the long-lived flows draw from their
    own substreams, so they are the same flows as with it. ``rtt``, ``workload`` and
    ``delay`` pick the readings (:data:`RTT_READINGS`, :data:`WORKLOADS`,
    :data:`DELAY_READINGS`); with sessions the run lasts ``duration_s``.
    """
    k = SCALES[scale]
    doc = copy.deepcopy(base)
    topo = doc["topology"]
    bb = topo["backbone"]
    bb["rate"] = _div(bb["rate"], units.parse_rate, units.format_rate, k)
    bb["queue"]["limit"] = _div(bb["queue"]["limit"], units.parse_size, units.format_size, k)
    topo["access_rate"] = _div(topo["access_rate"], units.parse_rate, units.format_rate, k)
    bb.pop("error", None)
    if loss:
        bb["error"] = {"kind": "bernoulli", "per": float(f"{LOSS_PER_FULL * k * k:.6g}")}
    doc["tcp"]["rcv_buffer"] = _div(doc["tcp"]["rcv_buffer"], units.parse_size, units.format_size, k)
    doc["cc"] = {"name": protocol}
    long_c, short_c = doc["workload"]["classes"]
    long_c["count"] = n_long
    long_c["bytes"] = _div(long_c["bytes"], units.parse_size, units.format_size, k)
    short_c["size"]["mean"] = _div(short_c["size"]["mean"], units.parse_size, units.format_size, k)
    for c in (long_c, short_c):
        c["mix_fraction"] = MIX_FRACTION if mix == "mixed" else 0.0
    doc["workload"]["rtt_reading"] = rtt
    if delay == "buffer":
        bb["delay"] = BUFFER_READING_DELAY
    for c in (long_c, short_c):
        c["mode"] = workload
    if not shorts:
        doc["workload"]["classes"] = [long_c]
    if workload == "sessions":
        doc["duration"] = f"{int(duration_s)}s"
    else:
        gap_s = units.parse_time(long_c["interarrival_mean"]) / 1e9
        doc["duration"] = f"{round(n_long * gap_s + TAIL_S)}s"
    return doc


def _list(value: Any, kind: type, accepted: tuple[Any, ...], name: str) -> list[Any]:
    items = value.split(",") if isinstance(value, str) else list(value)
    out = [kind(x.strip()) if isinstance(x, str) else kind(x) for x in items if str(x).strip()]
    bad = [x for x in out if x not in accepted]
    if bad or not out:
        raise ValueError(f"{name}: unknown value(s) {bad or out!r}; accepted: {', '.join(map(str, accepted))}")
    return [x for x in accepted if x in out]


def _flag(value: Any) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on") if isinstance(value, str) else bool(value)


@dataclass
class StudyParams:
    """Everything that defines a run of the study (and nothing about how it is executed).

    Attributes:
        reps: replications (independent draws of the flows) per configuration.
        links: accepted for the CLI's ``--links``; the study has one network, ``lot``.
        scale: ``reduced`` (default), ``full`` or ``tiny`` (:data:`SCALES`).
        protocols: the protocols besides Reno (comma-separated from the CLI).
        loads: long-lived flow counts to run, of 10 and 40.
        loss: also run the random-loss case (10 long-lived flows).
        without_short: with 10 long-lived flows, also run Reno and every protocol alone
            without the short-lived flows (the seed's RTT example).
        seed: master seed; replication r uses core seed ``seed + r``.
        short: short-lived flows (or sessions) per run (seed 002: 100).
        rtt: the RTT readings to run, of :data:`RTT_READINGS` (a run dimension).
        workload: ``sessions`` (default) or ``files`` (:data:`WORKLOADS`).
        delay: ``link`` (default) or ``buffer`` (:data:`DELAY_READINGS`).
        duration: run length with sessions, s.

    Example:
        >>> StudyParams(reps=2).n_runs()      # 2 x 2 RTT readings x (3 x (1 + 7 x 2) + (1 + 7))
        212
        >>> StudyParams(reps=2, protocols="scalable,areno", loads="10", loss=False, without_short=False,
        ...             rtt="equal_per_hop").n_runs()
        10
    """

    reps: int = 6
    links: list[str] = field(default_factory=lambda: ["lot"])
    scale: str = "reduced"
    protocols: Any = field(default_factory=lambda: list(PROTOCOLS[1:]))
    loads: Any = field(default_factory=lambda: [10, 40])
    loss: bool = True
    without_short: bool = True
    seed: int = 1
    short: int = 100
    rtt: Any = field(default_factory=lambda: list(RTT_READINGS))
    workload: str = "sessions"
    delay: str = "link"
    duration: int = DURATION_S

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps must be an integer >= 2 (confidence intervals need two), got {self.reps!r}")
        if list(self.links) != ["lot"]:
            raise ValueError(f"unknown link(s) {self.links!r}; accepted: lot")
        if self.scale not in SCALES:
            raise ValueError(f"scale: unknown scale {self.scale!r}; accepted: {', '.join(SCALES)}")
        self.protocols = _list(self.protocols, str, PROTOCOLS[1:], "protocols")
        self.loads = _list(self.loads, int, (10, 40), "loads")
        self.loss = _flag(self.loss)
        self.without_short = _flag(self.without_short)
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")
        if not 1 <= int(self.short) <= 10_000:
            raise ValueError(f"short must be 1 to 10000 flows, got {self.short}")
        self.rtt = _list(self.rtt, str, RTT_READINGS, "rtt")
        if self.workload not in WORKLOADS:
            raise ValueError(f"workload: unknown {self.workload!r}; accepted: {', '.join(WORKLOADS)}")
        if self.delay not in DELAY_READINGS:
            raise ValueError(f"delay: unknown {self.delay!r}; accepted: {', '.join(DELAY_READINGS)}")
        self.duration = int(self.duration)
        if not 60 <= self.duration <= 100_000:
            raise ValueError(f"duration must be 60 to 100000 s, got {self.duration}")

    def cases(self) -> list[tuple[int, bool]]:
        """(long-lived count, random loss) cases run with short-lived flows."""
        return [(n, loss) for n, loss in CASES if n in self.loads and (self.loss or not loss)]

    def configurations(self) -> list[tuple[str, str, int, bool, bool, str]]:
        """(protocol, mix, long-lived count, loss, shorts, RTT reading) of every run of a replication; baselines first."""
        out = []
        for rtt in self.rtt:
            for n, loss in self.cases():
                out.append(("reno", "alone", n, loss, True, rtt))
                out += [(p, m, n, loss, True, rtt) for p in self.protocols for m in MIXES]
            if self.without_short and 10 in self.loads:
                out += [(p, "alone", 10, False, False, rtt) for p in ["reno", *self.protocols]]
        return out

    def n_runs(self) -> int:
        """Simulations in the study."""
        return len(self.configurations()) * self.reps
