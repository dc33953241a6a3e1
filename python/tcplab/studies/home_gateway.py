"""Study ``home-gateway``: seed 003 reproduced end to end (issue 12).

Seed 003 is L. Stewart, D. Hayes, G. Armitage, M. Welzl and A. Petlund,
"Multimedia-unfriendly TCP congestion control and home gateway queue management",
ACM MMSys 2011 (``shared/seeds/003_c9c9fd5920f3a08e.txt``; SPEC.md, "Seed 003"): how
the choice of TCP congestion control, and the way a home gateway counts its drop-tail
queue, hurt a voice call that shares the broadband bottleneck.

What runs (every choice the seed leaves open is a :class:`StudyParams` field or a
constant here, and ``docs/studies/home-gateway.md`` explains each):

- **Scenarios.** The configurations are ordinary scenario files,
  ``examples/home-gateway/<link>.toml`` (loadable with ``tcplab run``). The study
  applies its sweep values by path (:func:`configure`): the minimum RTT (half on
  each direction of the ADSL line), the queue of *both* gateway directions, the TCP
  variant, the duration. :func:`scenario_toml` writes any configuration back as a
  scenario file.
- **Topology.** A dumbbell of two pairs: ``s0`` (A) sends one bulk TCP flow
  downstream to ``d0`` (C); ``s1`` (B) and ``d1`` (D) exchange a voice call
  (``voice_down``, ``voice_up``): 186 B packets with N(20 ms, 1 ms) gaps. The
  ADSL line is ``bottleneck`` (downstream) and ``bottleneck_rev`` (upstream); the
  access links are 100 Mbit/s with no delay.
- **Links** (the core's presets): ADSL1 1500/256 kbit/s, ADSL2 24/1 Mbit/s; minimum
  RTT 24, 50, 100 or 200 ms.
- **Queues** (:data:`SEMANTICS`): packet-slot (PS) 7..67 packets, fixed-byte strict
  (FB-strict) and fixed-byte loose (FB-loose, dummynet's) 10..100 kB, the same on
  both directions. Occupancy counts the packet being transmitted
  (``count_in_service = true``): dummynet keeps a packet in its queue until its
  transmission time has elapsed (``ready_event``/``move_pkt`` in ip_dummynet.c).
- **Fine sweep.** FB-loose and FB-strict, 52 500..67 500 B in 30 B steps, and PS
  35..45 packets (the same nominal sizes), on ADSL1 at 100 ms.
- **TCP** (:data:`VARIANTS`): NewReno = profile ``linux-2.6`` with ``sack = false`` and
  ``reno``; CUBIC = profile ``linux-2.6`` with ``cubic``. The seed's testbed (2010) ran
  2.6 kernels, before PRR (Linux 3.2) and RACK-TLP (4.4), which profile ``linux``
  (kernel 6.x) now has.
- **Replications.** Replication ``r`` runs with core seed ``seed + r`` for both TCP
  variants and every queue: the voice departures are the same draws (common random
  numbers), so NewReno and CUBIC, and the three semantics, are compared run by run.

Execution and output are the shared study machine's (:mod:`tcplab.studies.engine`);
this module holds the set-up, the analysis and the findings (:class:`Definition`).

Example:
    >>> [(v.name, v.cc, v.tcp) for v in VARIANTS]
    [('newreno', {'name': 'reno'}, {'profile': 'linux-2.6', 'sack': False}), ('cubic', {'name': 'cubic'}, {'profile': 'linux-2.6', 'sack': True})]
    >>> p = StudyParams(reps=2)
    >>> p.ps_sizes()[:3], p.fb_sizes()[:3], len(p.fine_sizes())
    ([7, 12, 17], [10000, 20000, 30000], 501)
    >>> round(bdp_packets(1_500_000, 100), 2)   # 1.5 Mbit/s x 100 ms / (1500 B x 8)
    12.5
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab import _core, stats
from tcplab.studies import engine
from tcplab.studies import findings as F
from tcplab.studies.engine import BlockTask, StudyResult

__all__ = [
    "NAME",
    "SEED_STUDY",
    "SEMANTICS",
    "VARIANTS",
    "Variant",
    "StudyParams",
    "Definition",
    "DEFINITION",
    "SCENARIO_DIR",
    "bdp_packets",
    "base_scenario",
    "configure",
    "scenario_toml",
    "simulate_block",
    "plan",
    "run",
    "dominant_period",
    "extremum_distance",
    "curve_correlation",
    "fine_analysis",
    "voice_share",
    "periodogram",
    "evaluate_findings",
]

NAME = "home-gateway"
SEED_STUDY = "003_c9c9fd5920f3a08e"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 1

#: The scenario files (``<link>.toml``), in the repository next to the package.
SCENARIO_DIR = Path(__file__).resolve().parents[3] / "examples" / "home-gateway"
LINKS = ("adsl1", "adsl2")
LINK_LABELS = {"adsl1": "ADSL1", "adsl2": "ADSL2"}
NS_PER_S = 1_000_000_000
#: The TCP packet: MSS 1460 B + 40 B of headers (profile ``linux-2.6``).
PACKET_BYTES = 1500
VOICE_BYTES = 186
SEMANTICS = ("slot", "byte_strict", "byte_loose")
SEMANTIC_LABELS = {"slot": "PS", "byte_strict": "FB-strict", "byte_loose": "FB-loose"}
#: The seed's OWD figure: a 40 000 B FB-loose queue (per-packet delays are kept for it).
OWD_QUEUE = ("byte_loose", 40_000)
#: The fine sweep: ADSL1, 100 ms, [52 500, 67 500] B; PS over the same nominal sizes.
FINE_LINK, FINE_RTT_MS, FINE_RANGE = "adsl1", 100, (52_500, 67_500)
FINE_PS = tuple(range(35, 46))
#: The time series: ADSL1, 100 ms, 20 000 B (the seed's cwnd/OWD slide), PS 13 packets.
SERIES_LINK, SERIES_RTT_MS, SERIES_LIMITS = "adsl1", 100, {"slot": 13, "byte_strict": 20_000, "byte_loose": 20_000}
#: Voice packets stop this long before the end, so every one is delivered or dropped.
VOICE_TAIL_S = 1.0
#: Diagnostic bands (periodicity table): phases within NEAR of a multiple of the packet size, and at least FAR from one.
NEAR_BYTES, FAR_BYTES = 300, 450


@dataclass(frozen=True)
class Variant:
    """A TCP variant: its name, label, ``cc`` table and ``tcp`` table (scenario-file values)."""

    name: str
    label: str
    cc: dict[str, Any]
    tcp: dict[str, Any]


#: NewReno as the seed's FreeBSD hosts ran it (no SACK, RFC 6582 recovery), and Linux CUBIC.
VARIANTS: tuple[Variant, ...] = (
    Variant("newreno", "NewReno", {"name": "reno"}, {"profile": "linux-2.6", "sack": False}),
    Variant("cubic", "CUBIC", {"name": "cubic"}, {"profile": "linux-2.6", "sack": True}),
)
_VARIANT = {v.name: v for v in VARIANTS}


def bdp_packets(rate_bps: float, rtt_ms: float) -> float:
    """Bandwidth-delay product in 1500 B packets: rate x minimum RTT / (1500 B x 8 bit/B)."""
    return rate_bps * rtt_ms / 1000 / (PACKET_BYTES * 8)


@dataclass
class StudyParams:
    """Everything that defines a run of the study (nothing about how it is executed).

    Attributes:
        reps: replications of every configuration (main grid and fine sweep).
        links: ``adsl1`` and/or ``adsl2``.
        seed: master seed; replication r runs with core seed ``seed + r``.
        rtts_ms: minimum RTTs (ms); the propagation delay is RTT/2 each way.
        duration_s: simulated time of every run (s).
        ps_step: PS sizes are 7, 7 + step, ..., 67 packets.
        fb_step_bytes: FB sizes are 10 000, 10 000 + step, ..., 100 000 B (plus 40 000).
        fine_step_bytes: the fine sweep's step (B); 0 leaves the fine sweep out.
        fine_reps: replications of the fine sweep (0: ``reps``).
        block: replications per task (0: all of them in one task).
        scenarios: directory of the ``<link>.toml`` scenario files ("" = the repository's).

    Example:
        >>> StudyParams(reps=2, links=["adsl1"], rtts_ms=[100], ps_step=30, fb_step_bytes=90_000,
        ...             fine_step_bytes=0).n_runs()   # (3 PS + 3 FB-strict + 3 FB-loose) x 2 CCs x 2 reps + 6 series
        42
    """

    reps: int = 10
    links: list[str] = field(default_factory=lambda: list(LINKS))
    seed: int = 1
    rtts_ms: list[int] = field(default_factory=lambda: [24, 50, 100, 200])
    duration_s: float = 60.0
    ps_step: int = 5
    fb_step_bytes: int = 10_000
    fine_step_bytes: int = 30
    fine_reps: int = 0
    block: int = 0
    scenarios: str = ""

    def __post_init__(self) -> None:
        def whole(name: str, low: int) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")

        whole("reps", 2)
        unknown = [l for l in self.links if l not in LINKS]
        if unknown or not self.links:
            raise ValueError(f"unknown link(s) {unknown or self.links!r}; accepted: {', '.join(LINKS)}")
        self.links = [l for l in LINKS if l in self.links]
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")
        if not self.rtts_ms or any(isinstance(r, bool) or not isinstance(r, int) or r < 2 for r in self.rtts_ms):
            raise ValueError(f"rtts_ms must be integers >= 2 (ms), got {self.rtts_ms!r}")
        self.rtts_ms = sorted(set(self.rtts_ms))
        if not (math.isfinite(self.duration_s) and self.duration_s >= 5):
            raise ValueError(f"duration_s must be at least 5 s, got {self.duration_s}")
        whole("ps_step", 1)
        whole("fb_step_bytes", 1)
        whole("fine_step_bytes", 0)
        whole("fine_reps", 0)
        if self.fine_reps == 1:
            raise ValueError("fine_reps must be 0 (= reps) or >= 2, got 1")
        whole("block", 0)
        if self.scenarios and not (Path(self.scenarios) / f"{self.links[0]}.toml").is_file():
            raise ValueError(f"scenarios: {self.scenarios!r} has no {self.links[0]}.toml")

    # -- the grid ------------------------------------------------------------------------

    def ps_sizes(self) -> list[int]:
        """PS limits (packets): 7 to 67 in ``ps_step`` steps, 67 always included."""
        return sorted(set(range(7, 68, self.ps_step)) | {67})

    def fb_sizes(self) -> list[int]:
        """FB limits (bytes): 10 000 to 100 000 in ``fb_step_bytes`` steps, plus 40 000 and 100 000."""
        return sorted(set(range(10_000, 100_001, self.fb_step_bytes)) | {OWD_QUEUE[1], 100_000})

    def fine_sizes(self) -> list[int]:
        """The fine sweep's byte limits (empty when ``fine_step_bytes`` is 0)."""
        if not self.fine_step_bytes:
            return []
        return list(range(FINE_RANGE[0], FINE_RANGE[1] + 1, self.fine_step_bytes))

    def fine_replications(self) -> int:
        return self.fine_reps or self.reps

    def sizes(self, semantic: str) -> list[int]:
        return self.ps_sizes() if semantic == "slot" else self.fb_sizes()

    def has_fine(self) -> bool:
        return bool(self.fine_sizes()) and FINE_LINK in self.links

    def scenario_dir(self) -> Path:
        return Path(self.scenarios) if self.scenarios else SCENARIO_DIR

    def n_runs(self) -> int:
        """Simulations: grid x CCs x reps, fine sweep x CCs x fine reps, and the 6 time-series runs."""
        grid = len(self.links) * len(self.rtts_ms) * sum(len(self.sizes(s)) for s in SEMANTICS)
        fine = (2 * len(self.fine_sizes()) + len(FINE_PS)) if self.has_fine() else 0
        series = len(SEMANTICS) * len(VARIANTS) if SERIES_LINK in self.links else 0
        return grid * len(VARIANTS) * self.reps + fine * len(VARIANTS) * self.fine_replications() + series


# --------------------------------------------------------------------------------------
# Scenarios


def base_scenario(link: str, directory: str | Path | None = None) -> tuple[str, dict[str, Any]]:
    """The text and the parsed document of ``<directory>/<link>.toml``, checked for what the study needs.

    Example:
        >>> text, doc = base_scenario("adsl1")
        >>> doc["topology"]["bottleneck"]["preset"], [f["name"] for f in doc["flows"]]
        ('adsl1-down', ['bulk', 'voice_down', 'voice_up'])
    """
    path = Path(directory or SCENARIO_DIR) / f"{link}.toml"
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"{path}: cannot read the {link} scenario: {e}") from None
    from tcplab.scenario import parse_toml

    doc = parse_toml(text, str(path))
    names = [f.get("name") for f in doc.get("flows", [])]
    if doc.get("topology", {}).get("kind") != "dumbbell" or not {"bulk", "voice_down", "voice_up"} <= set(names):
        raise ValueError(f"{path}: the study needs a dumbbell with flows named bulk, voice_down and voice_up; "
                         f"got topology {doc.get('topology', {}).get('kind')!r} and flows {names}")
    return text, doc


def _limit_text(semantic: str, limit: int) -> str:
    return f"{limit}pkt" if semantic == "slot" else f"{limit}B"


def configure(doc: dict[str, Any], rtt_ms: float, semantic: str, limit: int, variant: str, duration_s: float,
              record: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of a base scenario document with one configuration's values set by path.

    - ``topology.bottleneck.delay`` = ``topology.bottleneck_reverse.delay`` = RTT/2;
    - both directions' ``queue`` = drop-tail ``semantic``, ``limit`` (packets for
      ``slot``, bytes otherwise), ``count_in_service = true``;
    - ``cc`` from :data:`VARIANTS`; ``tcp``'s ``profile`` and ``sack`` from :data:`VARIANTS`
      (any other ``[tcp]`` knob of the file applies to both TCPs);
    - ``duration``; the voice flows stop :data:`VOICE_TAIL_S` before the end;
    - ``record`` when given.

    Example:
        >>> _, base = base_scenario("adsl1")
        >>> d = configure(base, 24, "slot", 7, "cubic", 30.0)
        >>> d["topology"]["bottleneck"]["delay"], d["topology"]["bottleneck_reverse"]["queue"]
        ('12ms', {'kind': 'drop_tail', 'limit': '7pkt', 'semantics': 'slot', 'count_in_service': True})
        >>> d["cc"], d["tcp"], d["duration"], d["flows"][1]["stop"]
        ({'name': 'cubic'}, {'profile': 'linux-2.6', 'sack': True}, '30s', '29s')
    """
    if semantic not in SEMANTICS:
        raise ValueError(f"unknown drop-tail semantic {semantic!r}; accepted: {', '.join(SEMANTICS)}")
    v = _VARIANT[variant]
    d = copy.deepcopy(doc)
    topo = d["topology"]
    queue = {"kind": "drop_tail", "limit": _limit_text(semantic, limit), "semantics": semantic, "count_in_service": True}
    for side in ("bottleneck", "bottleneck_reverse"):
        topo[side]["delay"] = f"{rtt_ms / 2:g}ms"
        topo[side]["queue"] = dict(queue)
    d["cc"] = copy.deepcopy(v.cc)
    d["tcp"] = {**d.get("tcp", {}), **copy.deepcopy(v.tcp)}  # the file's other [tcp] knobs apply to both TCPs
    d["duration"] = f"{duration_s:g}s"
    for f in d["flows"]:
        if f.get("name") in ("voice_down", "voice_up"):
            f["stop"] = f"{duration_s - VOICE_TAIL_S:g}s"
    if record is not None:
        d["record"] = record
    return d


def scenario_toml(link: str, rtt_ms: float, semantic: str, limit: int, variant: str, duration_s: float = 60.0,
                  directory: str | Path | None = None) -> str:
    """One configuration of the study as a scenario file (``tcplab run`` accepts it).

    Example:
        >>> text = scenario_toml("adsl2", 50, "byte_strict", 52_530, "newreno")
        >>> from tcplab.scenario import Scenario
        >>> core = Scenario.from_toml(text).to_core()
        >>> core["topology"]["bottleneck"]["rate"], core["topology"]["bottleneck"]["queue"]["limit"]
        (24000000, {'bytes': 52530})
    """
    import tomli_w

    from tcplab.scenario import Scenario

    _, doc = base_scenario(link, directory)
    d = configure(doc, rtt_ms, semantic, limit, variant, duration_s)
    Scenario.from_dict(d)  # validated before it is handed out
    return tomli_w.dumps(d)


def _base_owd_s(core: dict[str, Any], packet_bytes: int) -> float:
    """Propagation plus serialization of one voice packet, s1 -> r0 -> r1 -> d1 (the OWD floor)."""
    topo = core["topology"]
    hops = [topo["sender_access"], topo["bottleneck"], topo["receiver_access"]]
    ns = sum(h["delay"] + math.ceil(packet_bytes * 8 * NS_PER_S / h["rate"]) for h in hops)
    return ns / NS_PER_S


_RUN_COLUMNS = ("limit", "nominal_bytes", "cc", "rep", "core_seed", "goodput_bps", "bytes_delivered", "retransmits",
                "rtos", "voice_sent", "voice_delivered", "voice_lost", "voice_loss", "voice_up_sent", "voice_up_lost",
                "voice_up_loss", "owd_base_s", "iowd_mean_s", "iowd_p50_s", "iowd_p95_s", "iowd_p99_s", "iowd_max_s",
                "q_mean_bytes", "q_mean_pkts", "q_max_bytes", "q_drops", "q_up_mean_bytes", "q_up_drops", "events",
                "digest")


def run_row(out: dict[str, Any], semantic: str, limit: int, cc: str, rep: int, core_seed: int, base_owd: float
            ) -> tuple[dict[str, Any], np.ndarray]:
    """One run's row of the ``runs`` table (the columns of :data:`_RUN_COLUMNS`) and the
    induced one-way delays (s) of its downstream voice packets, from a result document
    (the simulator's, or the emulator's: :mod:`tcplab.studies.home_gateway_emulate`).
    ``base_owd`` is :func:`_base_owd_s` of the run's scenario."""
    f, u, q = out["flows"], out["udp"], out["queues"]
    bulk = f["name"].index("bulk")
    down, up = u["name"].index("voice_down"), u["name"].index("voice_up")
    qd, qu = q["link"].index("bottleneck"), q["link"].index("bottleneck_rev")
    owd = out["series"]["owd"]
    fid = np.asarray(owd["flow_id"], dtype=np.int64)
    induced = np.asarray(owd["owd_s"], dtype=np.float64)[fid == u["flow_id"][down]] - base_owd
    has = len(induced) > 0
    sent, lost = u["pkts_sent"][down], u["pkts_lost"][down]
    row = {
        "limit": limit, "nominal_bytes": limit * (PACKET_BYTES if semantic == "slot" else 1),
        "cc": cc, "rep": rep, "core_seed": core_seed, "goodput_bps": f["goodput_bps"][bulk],
        "bytes_delivered": f["bytes_delivered"][bulk], "retransmits": f["retransmits"][bulk],
        "rtos": f["rtos"][bulk], "voice_sent": sent, "voice_delivered": u["pkts_delivered"][down],
        "voice_lost": lost, "voice_loss": lost / sent if sent else math.nan,
        "voice_up_sent": u["pkts_sent"][up], "voice_up_lost": u["pkts_lost"][up],
        "voice_up_loss": u["pkts_lost"][up] / u["pkts_sent"][up] if u["pkts_sent"][up] else math.nan,
        "owd_base_s": base_owd,
        "iowd_mean_s": float(induced.mean()) if has else math.nan,
        "iowd_p50_s": float(np.percentile(induced, 50)) if has else math.nan,
        "iowd_p95_s": float(np.percentile(induced, 95)) if has else math.nan,
        "iowd_p99_s": float(np.percentile(induced, 99)) if has else math.nan,
        "iowd_max_s": float(induced.max()) if has else math.nan,
        "q_mean_bytes": q["occ_mean_bytes"][qd], "q_mean_pkts": q["occ_mean_pkts"][qd],
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
    row per run), ``owd`` (with ``keep_owd``: every downstream voice packet's induced
    one-way delay) and, for ``series``, ``cwnd`` and ``queue``.

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
    runs: dict[str, list[Any]] = {k: [] for k in _RUN_COLUMNS}
    owd_parts: list[tuple[int, str, int, np.ndarray]] = []
    cwnd_parts: list[pd.DataFrame] = []
    queue_parts: list[pd.DataFrame] = []
    first, stop = spec["reps"]
    # Without start jitter the resolved scenario does not depend on the seed: build it once per limit and variant.
    jitter = any(f.get("start_jitter") for f in base.get("flows", []))
    cores: dict[tuple[int, str, int], tuple[dict[str, Any], str, float]] = {}

    def resolved(limit: int, variant: str, core_seed: int) -> tuple[dict[str, Any], str, float]:
        key = (limit, variant, core_seed if jitter else -1)
        if key not in cores:
            doc = configure(base, spec["rtt_ms"], semantic, limit, variant, spec["duration_s"], record)
            core = Scenario.from_dict(doc).to_core(core_seed)
            cores[key] = (core, json.dumps(core, separators=(",", ":")), _base_owd_s(core, VOICE_BYTES))
        return cores[key]

    for limit in spec["limits"]:
        for rep in range(first, stop):
            core_seed = seed + rep
            for v in VARIANTS:
                core, text, base_owd = resolved(int(limit), v.name, core_seed)
                out = json.loads(_core.run(text, core_seed))
                row, induced = run_row(out, semantic, int(limit), v.name, rep, core_seed, base_owd)
                f = out["flows"]
                bulk = f["name"].index("bulk")
                has = len(induced) > 0
                for k, val in row.items():
                    runs[k].append(val)
                if spec.get("keep_owd") and has:
                    owd_parts.append((int(limit), v.name, rep, induced.astype(np.float32)))
                if series:
                    cw = out["series"]["cwnd"]
                    c = pd.DataFrame({"t_s": cw["t_s"], "flow_id": cw["flow_id"], "cwnd_bytes": cw["cwnd_bytes"],
                                      "state": cw["state"]})
                    c = c[c["flow_id"] == f["flow_id"][bulk]].drop(columns="flow_id")
                    c.insert(0, "cc", v.name)
                    c.insert(0, "limit", int(limit))
                    cwnd_parts.append(c)
                    qs = out["series"]["queue"]
                    link_id = out["meta"]["link_names"].index("bottleneck")
                    qq = pd.DataFrame({"t_s": qs["t_s"], "link": qs["link"], "pkts": qs["pkts"], "bytes": qs["bytes"]})
                    qq = qq[qq["link"] == link_id].drop(columns="link")
                    qq.insert(0, "cc", v.name)
                    qq.insert(0, "limit", int(limit))
                    queue_parts.append(qq)
    result: dict[str, Any] = {"runs": {k: np.asarray(vals) for k, vals in runs.items()}}
    if spec.get("keep_owd"):
        sizes = [len(p[3]) for p in owd_parts]
        result["owd"] = {
            "limit": np.repeat([p[0] for p in owd_parts], sizes).astype(np.int64),
            "cc": np.repeat([p[1] for p in owd_parts], sizes),
            "rep": np.repeat([p[2] for p in owd_parts], sizes).astype(np.int32),
            "iowd_s": np.concatenate([p[3] for p in owd_parts]) if owd_parts else np.zeros(0, np.float32),
        }
    if series:
        result["cwnd"] = {k: v.to_numpy() for k, v in pd.concat(cwnd_parts, ignore_index=True).items()}
        result["queue"] = {k: v.to_numpy() for k, v in pd.concat(queue_parts, ignore_index=True).items()}
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
    """The study's tasks, heaviest first. A task is one (link, RTT, semantic), a chunk of
    queue limits sized to about 2 s of CPU, a block of replications and both TCP variants.

    Example:
        >>> tasks = plan(StudyParams(reps=2, links=["adsl1"], rtts_ms=[100], fine_step_bytes=0))
        >>> sorted({t.spec["part"] for t in tasks}), sum(t.runs for t in tasks)
        (['grid', 'series'], 138)
    """
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
            spec = {"study": NAME, "version": STUDY_VERSION, "part": "series", "link": SERIES_LINK,
                    "rtt_ms": SERIES_RTT_MS, "semantic": sem, "limits": [SERIES_LIMITS[sem]], "reps": [0, 1],
                    "seed": int(params.seed), "duration_s": float(params.duration_s), "scenario": texts[SERIES_LINK],
                    "keep_owd": False, "core": version}
            tasks.append(BlockTask(engine.task_key(spec), spec, len(VARIANTS)))
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
        summary = summary_table(runs)
        fine = fine_curves(runs)
        owd_pct = owd_percentiles(tables["owd"])
        fa = fine_analysis(runs, params)
        period = periodicity_table(fa)
        findings = evaluate_findings(runs, params, fa)
        return {"summary": summary, "fine_curves": fine, "owd_percentiles": owd_pct, "periodicity": period}, findings

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies import home_gateway_report

        return home_gateway_report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                     figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies import home_gateway_report

        return home_gateway_report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study into ``out``: tables, figures, ``findings.json``, ``report.html``.

    Example (the CLI is ``tcplab study home-gateway --reps 2 --links adsl1``)::

        >>> res = run("results/hg", StudyParams(reps=2, links=["adsl1"]), progress=False)  # doctest: +SKIP
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


# --------------------------------------------------------------------------------------
# Analysis


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means over replications with 95% Student-t half-widths."""
    cols = (("goodput_bps", "goodput (bit/s)"), ("voice_loss", "voice loss"), ("iowd_mean_s", "voice induced OWD (s)"),
            ("iowd_p95_s", "voice induced OWD p95 (s)"), ("q_mean_bytes", "queue mean (B)"),
            ("voice_up_loss", "upstream voice loss"))
    keys = ["part", "link", "rtt_ms", "semantic", "limit", "cc"]
    if not len(runs):
        return pd.DataFrame()
    g = runs.groupby(keys, sort=False)
    mean, sd, n = g[[c for c, _ in cols]].mean(), g[[c for c, _ in cols]].std(ddof=1), g[[c for c, _ in cols]].count()
    tq = {k: stats.t_quantile(0.975, k - 1) if k >= 2 else math.nan for k in np.unique(n.to_numpy())}
    t = n.apply(lambda col: col.map(tq))
    half = t * sd / np.sqrt(n)
    out = mean.index.to_frame(index=False)
    out = pd.DataFrame({
        "part": out["part"], "link": out["link"].map(LINK_LABELS), "RTT (ms)": out["rtt_ms"].astype(int),
        "queue": out["semantic"].map(SEMANTIC_LABELS),
        "limit": [f"{int(l)} {'pkt' if s_ == 'slot' else 'B'}" for l, s_ in zip(out["limit"], out["semantic"])],
        "TCP": out["cc"].map({v.name: v.label for v in VARIANTS}), "reps": g.size().to_numpy()})
    for col, label in cols:
        out[label] = mean[col].to_numpy()
        out[label + " ±"] = half[col].to_numpy()
    return out


def fine_curves(runs: pd.DataFrame) -> pd.DataFrame:
    """The fine sweep per semantic, TCP and limit: mean voice loss, its 5th/95th percentiles over replications."""
    fine = runs[runs["part"] == "fine"]
    if not len(fine):
        return pd.DataFrame(columns=["semantic", "cc", "limit", "nominal_bytes", "loss_mean", "loss_p5", "loss_p95", "n"])
    g = fine.groupby(["semantic", "cc", "limit", "nominal_bytes"], sort=False)["voice_loss"]
    out = g.agg(loss_mean="mean", n="count").reset_index()
    out["loss_p5"] = g.quantile(0.05).to_numpy()
    out["loss_p95"] = g.quantile(0.95).to_numpy()
    return out[["semantic", "cc", "limit", "nominal_bytes", "loss_mean", "loss_p5", "loss_p95", "n"]]


def owd_percentiles(owd: pd.DataFrame, qs: Sequence[float] = (50, 90, 95, 99)) -> pd.DataFrame:
    """Percentiles of every downstream voice packet's induced one-way delay (40 000 B FB-loose), per link, RTT, TCP."""
    rows = []
    if not len(owd):
        return pd.DataFrame(columns=["link", "rtt_ms", "cc", "packets", "mean_s", *[f"p{int(q)}_s" for q in qs], "max_s"])
    for (link, rtt, cc), part in owd.groupby(["link", "rtt_ms", "cc"], sort=False):
        v = part["iowd_s"].to_numpy(np.float64)
        rows.append({"link": link, "rtt_ms": int(rtt), "cc": cc, "packets": len(v), "mean_s": float(v.mean()),
                     **{f"p{int(q)}_s": float(np.percentile(v, q)) for q in qs}, "max_s": float(v.max())})
    return pd.DataFrame(rows)


# ---- periodicity (H3) ------------------------------------------------------------------


def _detrend(curves: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Each curve minus its least-squares straight line over ``limits`` (a trend would leak into long periods)."""
    x = (limits - limits.mean()) / (np.ptp(limits) or 1.0)
    y = curves - curves.mean(axis=1, keepdims=True)
    slope = (y @ x) / float(x @ x)
    return y - slope[:, None] * x[None, :]


def periodogram(limits: np.ndarray, curves: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Amplitude of the sinusoid of each period in each linearly detrended curve: ``2/N |sum y e^{-2 pi i L / P}|``.

    ``curves`` is (k, N) over the N ``limits``; returns (k, len(periods)). A pure
    sinusoid of amplitude A whose cycles fit the span gives A.

    Example:
        >>> L = np.arange(0, 15_000, 30.0)
        >>> amp = periodogram(L, 0.01 * np.cos(2 * np.pi * L / 1500)[None, :], np.array([1000.0, 1500.0]))
        >>> np.round(amp, 4).tolist()
        [[0.0, 0.01]]
    """
    y = _detrend(np.atleast_2d(curves), limits)
    basis = np.exp(-2j * np.pi * limits[None, :] / periods[:, None])  # (P, N)
    return 2.0 / limits.size * np.abs(y @ basis.T)


def _candidate_periods(limits: np.ndarray, packet: int) -> np.ndarray | None:
    """Periods searched: from packet/2.5 to half the span, 1 B apart; None when the sweep cannot resolve the packet."""
    step = float(np.min(np.diff(limits))) if limits.size > 1 else math.inf
    span = float(limits.max() - limits.min()) if limits.size > 1 else 0.0
    if step > packet / 4 or span < 2 * packet:
        return None
    return np.arange(max(packet / 2.5, 4 * step), span / 2 + 1, 1.0)


def _bootstrap(per_rep: np.ndarray, statistic: Any, n_boot: int, seed: int) -> tuple[float, list[float]]:
    """``statistic`` of the replication-mean curve, and its 2.5/97.5 percentiles over resampled replications.

    ``statistic`` maps a (k, N) array of curves to k values (NaN: undefined for that curve).
    """
    value = float(statistic(per_rep.mean(axis=0)[None, :])[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, per_rep.shape[0], size=(n_boot, per_rep.shape[0]))
    boots = statistic(per_rep[idx].mean(axis=1))
    boots = boots[~np.isnan(boots)]
    lo, hi = np.quantile(boots, [0.025, 0.975]) if len(boots) else (math.nan, math.nan)
    return value, [float(lo), float(hi)]


def dominant_period(limits: Sequence[float], per_rep: np.ndarray, packet: int = PACKET_BYTES, n_boot: int = 400,
                    seed: int = 0) -> dict[str, Any] | None:
    """The strongest period of the replication-mean curve, with a bootstrap interval over replications.

    ``per_rep`` is (replications, limits). The period is the peak of :func:`periodogram`
    (a 15 B grid, then 1 B around its peak); the interval is the 2.5/97.5 percentiles
    of the peak over ``n_boot`` resamples of the replications (``default_rng(seed)``).
    ``resolution`` = packet^2 / span is the periodogram's main-lobe half-width at the
    packet size. Returns None when the sweep cannot resolve a period of ``packet``
    (steps over packet/4, or a span under two packets).

    Example:
        >>> L = np.arange(52_500, 67_501, 30.0)
        >>> rng = np.random.default_rng(1)
        >>> reps = 0.02 + 0.004 * np.sin(2 * np.pi * L / 1500) + rng.normal(0, 0.004, (10, L.size))
        >>> d = dominant_period(L, reps)
        >>> abs(d["value"] - 1500) <= 15, d["ci"][0] <= 1500 <= d["ci"][1], d["resolution"]
        (True, True, 150.0)
    """
    L = np.asarray(limits, dtype=float)
    periods = _candidate_periods(L, packet)
    if periods is None or per_rep.shape[0] < 2:
        return None
    coarse = periods[::15]
    basis = np.exp(-2j * np.pi * L[None, :] / coarse[:, None])
    fine_basis: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # coarse peak -> (periods, basis) around it

    def peaks(curves: np.ndarray) -> np.ndarray:
        y = _detrend(curves, L)
        best = coarse[np.argmax(np.abs(y @ basis.T), axis=1)]
        out = np.empty(len(curves))
        for b in np.unique(best):
            if b not in fine_basis:
                near = periods[(periods >= b - 15) & (periods <= b + 15)]
                fine_basis[b] = (near, np.exp(-2j * np.pi * L[None, :] / near[:, None]))
            near, nb = fine_basis[b]
            rows = best == b
            out[rows] = near[np.argmax(np.abs(y[rows] @ nb.T), axis=1)]
        return out

    value, ci = _bootstrap(per_rep, peaks, n_boot, seed)
    amp = periodogram(L, per_rep.mean(axis=0)[None, :], np.array([value, float(packet), 2.0 * packet]))[0]
    return {"value": value, "ci": ci, "n": int(per_rep.shape[0]), "resolution": packet ** 2 / float(np.ptp(L)),
            "amplitude": float(amp[0]), "amplitude_at_packet": float(amp[1]), "amplitude_at_2_packets": float(amp[2]),
            "interval": f"bootstrap percentile over replications ({n_boot} resamples, seed {seed})"}


def _plateau_centres(L: np.ndarray, curves: np.ndarray, kind: str) -> np.ndarray:
    """Per curve, where it is largest (``max``) or smallest (``min``): the mean position of the tied points
    (the curves are step-like, so an extremum is often a plateau)."""
    target = curves.max(axis=1, keepdims=True) if kind == "max" else curves.min(axis=1, keepdims=True)
    tied = np.isclose(curves, target, rtol=0, atol=1e-12)
    return (tied * L[None, :]).sum(axis=1) / tied.sum(axis=1)


def extremum_distance(limits: Sequence[float], per_rep: np.ndarray, kind: str, packet: int = PACKET_BYTES,
                      n_boot: int = 400, seed: int = 0) -> dict[str, Any] | None:
    """How far the curve's extrema lie from integer multiples of the packet size.

    For each multiple k x packet whose window [k x packet - packet/2, k x packet +
    packet/2) lies inside the sweep, the position of the replication-mean curve's
    maximum (``kind = "max"``) or minimum (``"min"``) in that window (the middle of a
    plateau); the statistic is the mean distance of those positions to k x packet,
    with a bootstrap interval over replications. Extrema placed at random would give
    packet/4 on average.

    Example:
        >>> L = np.arange(52_500, 67_501, 30.0)
        >>> spikes = np.where(np.mod(L, 1500) == 60, 1.0, 0.0)   # a spike 60 B after each multiple
        >>> extremum_distance(L, np.vstack([spikes, spikes]), "max")["value"]
        60.0
    """
    L = np.asarray(limits, dtype=float)
    ks = [k for k in range(int(np.ceil((L.min() + packet / 2) / packet)), int(L.max() // packet) + 1)
          if k * packet + packet / 2 <= L.max() + 1e-9]
    if len(ks) < 2 or per_rep.shape[0] < 2 or _candidate_periods(L, packet) is None:
        return None
    windows = [(k * packet, (L >= k * packet - packet / 2) & (L < k * packet + packet / 2)) for k in ks]

    def mean_distance(curves: np.ndarray) -> np.ndarray:
        return np.mean([np.abs(_plateau_centres(L[w], curves[:, w], kind) - centre) for centre, w in windows], axis=0)

    value, ci = _bootstrap(per_rep, mean_distance, n_boot, seed)
    mean = per_rep.mean(axis=0)[None, :]
    positions = [float(_plateau_centres(L[w], mean[:, w], kind)[0]) - c for c, w in windows]
    return {"value": value, "ci": ci, "n": int(per_rep.shape[0]), "windows": len(windows),
            "offsets_B": [round(x, 1) for x in positions], "random_expectation_B": packet / 4,
            "interval": f"bootstrap percentile over replications ({n_boot} resamples, seed {seed})"}


def curve_correlation(a_per_rep: np.ndarray, b_per_rep: np.ndarray, n_boot: int = 400, seed: int = 0
                      ) -> dict[str, Any]:
    """Pearson correlation of two replication-mean curves over the same limits, bootstrap over replications.

    Replication r of both curves ran with the same core seed, so they are resampled
    together. A flat curve (a resample without any loss) has no correlation (NaN).

    Example:
        >>> x = np.linspace(0, 10, 50)
        >>> a = np.vstack([np.sin(x), np.sin(x) + 0.01]); b = -a
        >>> round(curve_correlation(a, b)["value"], 6)
        -1.0
    """
    both = np.concatenate([a_per_rep, b_per_rep], axis=1)
    n = a_per_rep.shape[1]

    def corr(curves: np.ndarray) -> np.ndarray:
        a = curves[:, :n] - curves[:, :n].mean(axis=1, keepdims=True)
        b = curves[:, n:] - curves[:, n:].mean(axis=1, keepdims=True)
        den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (a * b).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)

    value, ci = _bootstrap(both, corr, n_boot, seed)
    return {"value": value, "ci": ci, "n": int(a_per_rep.shape[0]),
            "interval": f"bootstrap percentile over replications ({n_boot} resamples, seed {seed})"}


def _fine_matrix(runs: pd.DataFrame, semantic: str, cc: str | None) -> tuple[np.ndarray, pd.DataFrame]:
    """The fine sweep's voice loss as (replications x limits) for one semantic and TCP."""
    sub = runs[(runs["part"] == "fine") & (runs["semantic"] == semantic)]
    if cc is not None:
        sub = sub[sub["cc"] == cc]
    wide = sub.pivot_table(index="rep", columns="limit", values="voice_loss", aggfunc="mean")
    return wide.columns.to_numpy(dtype=float), wide


def voice_share(link: str, params: StudyParams) -> float:
    """The downstream voice stream's share of the link: 186 B x 8 / mean gap / downstream rate.

    Example:
        >>> round(voice_share("adsl1", StudyParams(reps=2)), 4)   # 186 * 8 / 0.020 / 1.5e6
        0.0496
    """
    from tcplab.scenario import Scenario

    _, doc = base_scenario(link, params.scenario_dir())
    core = Scenario.from_dict(doc).to_core()
    voice = next(f for f in core["flows"] if f.get("name") == "voice_down")
    return voice["packet_bytes"] * 8 / (voice["interval"]["mean"] / NS_PER_S) / core["topology"]["bottleneck"]["rate"]


def fine_analysis(runs: pd.DataFrame, params: StudyParams, n_boot: int = 400) -> dict[str, Any]:
    """H3's numbers, computed once: per fine-swept semantic and TCP, the dominant period, the
    extremum distances and the near/far band means; per TCP, the FB-loose/FB-strict correlation
    (each with ``n_boot`` bootstrap resamples of the replications)."""
    out: dict[str, Any] = {"curves": {}, "correlation": {}}
    if not (runs["part"] == "fine").any():
        return out
    share = voice_share(FINE_LINK, params)
    out["voice_share"] = share
    out["period_with_voice_B"] = PACKET_BYTES / (1 - share)
    for v in VARIANTS:
        mats = {}
        for sem in ("byte_loose", "byte_strict"):
            L, wide = _fine_matrix(runs, sem, v.name)
            if not len(wide) or _candidate_periods(L, PACKET_BYTES) is None:
                continue
            mats[sem] = wide
            per = wide.to_numpy()
            near, far = _band_means(wide)
            out["curves"][(sem, v.name)] = {
                "limits": L, "period": dominant_period(L, per, n_boot=n_boot),
                "extremum": extremum_distance(L, per, "min" if sem == "byte_loose" else "max", n_boot=n_boot),
                "near": near, "far": far}
        if len(mats) == 2 and mats["byte_loose"].index.equals(mats["byte_strict"].index) and \
                mats["byte_loose"].columns.equals(mats["byte_strict"].columns):
            c = curve_correlation(mats["byte_loose"].to_numpy(), mats["byte_strict"].to_numpy(), n_boot=n_boot)
            if not math.isnan(c["value"]):  # a flat curve (no loss at all) has no extremes to compare
                out["correlation"][v.name] = c
    return out


def periodicity_table(fa: dict[str, Any]) -> pd.DataFrame:
    """H3's numbers per fine-swept semantic and TCP (from :func:`fine_analysis`)."""
    rows = []
    for (sem, cc), c in fa.get("curves", {}).items():
        d, e = c["period"] or {}, c["extremum"] or {}
        corr = fa["correlation"].get(cc, {})
        rows.append({"semantic": sem, "cc": cc, "reps": d.get("n"), "period_B": d.get("value"),
                     "period_ci_low_B": (d.get("ci") or [None, None])[0], "period_ci_high_B": (d.get("ci") or [None, None])[1],
                     "resolution_B": d.get("resolution"), "period_with_voice_B": fa.get("period_with_voice_B"),
                     "amplitude": d.get("amplitude"), "amplitude_at_1500": d.get("amplitude_at_packet"),
                     "amplitude_at_3000": d.get("amplitude_at_2_packets"),
                     "extremum": "min" if sem == "byte_loose" else "max", "extremum_distance_B": e.get("value"),
                     "extremum_offsets_B": json.dumps(e.get("offsets_B")),
                     "loss_near_multiples": float(c["near"].mean()), "loss_far_from_multiples": float(c["far"].mean()),
                     "corr_loose_strict": corr.get("value")})
    return pd.DataFrame(rows)


def _phase_distance(limits: np.ndarray, packet: int = PACKET_BYTES) -> np.ndarray:
    r = np.mod(limits, packet)
    return np.minimum(r, packet - r)


def _band_means(wide: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per replication: mean loss over limits within NEAR_BYTES of a multiple of 1500 B, and at least FAR_BYTES away."""
    dist = _phase_distance(wide.columns.to_numpy(dtype=float))
    return wide.loc[:, dist <= NEAR_BYTES].mean(axis=1), wide.loc[:, dist >= FAR_BYTES].mean(axis=1)


# ---- findings ----------------------------------------------------------------------------


_PAIR_UNIT = ["part", "link", "rtt_ms", "semantic", "limit", "cc", "rep"]


def _paired_cc(runs: pd.DataFrame, metric: str, relative: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    grid = runs[runs["part"] == "grid"]
    _, est, per = F.paired(grid, metric, "cc", "cubic", "newreno", {}, relative, unit=_PAIR_UNIT)
    return est, per


def _paired_semantic(runs: pd.DataFrame, test: str, ref: str, where: dict[str, Sequence[Any]]
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    grid = runs[(runs["part"] == "grid") & runs["semantic"].isin([test, ref])]
    _, est, per = F.paired(grid, "voice_loss", "semantic", test, ref, where, relative=False,
                           unit=["link", "rtt_ms", "limit", "cc", "rep", "semantic"])
    return est, per


def _collapse(per: list[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Per-configuration estimates grouped by ``keys`` (for readable tables): the mean of
    their values and how many have a CI above / below 0.

    Example:
        >>> per = [{"link": "a", "value": 1.0, "ci": [0.5, 1.5], "n": 3}, {"link": "a", "value": -1.0, "ci": [-2, 0.5], "n": 3}]
        >>> _collapse(per, ["link"])
        [{'link': 'a', 'configs': 2, 'value': 0.0, 'ci': [nan, nan], 'n': 3, 'configs_ci_above_zero': 1, 'configs_ci_below_zero': 0}]
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for c in per:
        groups.setdefault(tuple(c[k] for k in keys), []).append(c)
    return [{**dict(zip(keys, key)), "configs": len(cs), "value": float(np.mean([c["value"] for c in cs])),
             "ci": [math.nan, math.nan], "n": int(min(c["n"] for c in cs)),
             "configs_ci_above_zero": F.count(cs, "above"), "configs_ci_below_zero": F.count(cs, "below")}
            for key, cs in groups.items()]


def evaluate_findings(runs: pd.DataFrame, params: StudyParams, fa: dict[str, Any] | None = None) -> dict[str, Any]:
    """Checks seed 003's four findings on the per-run table; returns the ``findings.json`` document.

    Comparisons are paired by replication (same core seed, so the same voice
    departures): per replication, the mean difference over the configurations in
    scope, then a 95% Student-t interval over the replications
    (:func:`tcplab.studies.findings.paired`). H3's statistics are bootstraps over
    replications of the fine sweep's mean curves (:func:`fine_analysis`; pass ``fa``
    to reuse one).
    """
    findings: list[dict[str, Any]] = []
    grid = runs[runs["part"] == "grid"]

    # H1 --------------------------------------------------------------------------------
    checks = []
    if len(grid):
        for cid, metric, claim, stat, unit, relative in (
            ("H1a", "q_mean_bytes", "CUBIC keeps the downstream queue fuller than NewReno",
             "relative change of the time-averaged downstream queue (bytes), CUBIC vs NewReno", "fraction", True),
            ("H1b", "iowd_mean_s", "so the voice stream's induced one-way delay increases",
             "relative change of the mean induced OWD of downstream voice, CUBIC vs NewReno", "fraction", True),
            ("H1c", "voice_loss", "and the voice stream's loss increases",
             "difference of the downstream voice loss proportion, CUBIC - NewReno", "fraction of packets", False),
        ):
            est, per = _paired_cc(runs, metric, relative)
            checks.append(F.legacy_check(
                cid, claim, f"{stat}, paired by replication, pooled over every link, RTT, semantic and queue size of the "
                            "main grid; held if the 95% CI is above 0",
                stat, unit, est, F.above(est), _collapse(per, ["link", "rtt_ms", "semantic"]),
                configs_above_zero=F.count(per, "above"), configs_below_zero=F.count(per, "below"),
                configs=len(per)))
    findings.append(F.finding("H1", "CUBIC keeps buffers fuller than NewReno, so voice latency and loss increase",
                              checks))

    # H2 --------------------------------------------------------------------------------
    checks = []
    if len(grid):
        est, per = _paired_semantic(runs, "byte_loose", "byte_strict", {})
        checks.append(F.legacy_check(
            "H2a", "Voice loss is higher under FB-loose than under FB-strict at the same byte limit (main grid)",
            "downstream voice loss proportion, FB-loose - FB-strict at equal limit (10..100 kB), paired by replication "
            "and TCP, pooled over every link, RTT, size and both TCPs; held if the 95% CI is above 0",
            "difference of voice loss, FB-loose - FB-strict", "fraction of packets", est, F.above(est),
            _collapse(per, ["link", "rtt_ms", "cc"]), configs_above_zero=F.count(per, "above"),
            configs_below_zero=F.count(per, "below"), configs=len(per)))
    fine = runs[runs["part"] == "fine"]
    if len(fine):
        per_rep, per_cfg = [], []
        for a, b, cid, claim in (("byte_loose", "byte_strict", "H2b",
                                  "… and over the fine sweep, every phase of the limit against the packet size"),
                                 ("byte_loose", "slot", "H2c",
                                  "Voice loss is higher under FB-loose than under PS at the same nominal size")):
            diffs = []
            per_cfg = []
            for v in VARIANTS:
                _, wa = _fine_matrix(runs, a, v.name)
                _, wb = _fine_matrix(runs, b, v.name)
                if not len(wa) or not len(wb):
                    continue
                d = wa.mean(axis=1) - wb.mean(axis=1)
                diffs.append(d)
                per_cfg.append({"cc": v.name, **F.estimate(d)})
            if not diffs:
                continue
            est = F.estimate(pd.concat(diffs, axis=1).mean(axis=1))
            scope = ("FB-strict over the same limits, 52 500..67 500 B" if b == "byte_strict"
                     else "PS over 35..45 packets (the same mean nominal size, 60 000 B = 40 x 1500 B)")
            checks.append(F.legacy_check(
                cid, claim, f"mean downstream voice loss over the fine sweep's FB-loose limits (52 500..67 500 B, ADSL1, "
                            f"100 ms) minus the mean over {scope}, per replication and TCP, averaged over both TCPs; "
                            "held if the 95% CI is above 0",
                f"difference of mean voice loss, FB-loose - {SEMANTIC_LABELS[b]}", "fraction of packets", est,
                F.above(est), per_cfg))
    findings.append(F.finding("H2", "FB-loose disadvantages small real-time packets: voice loss is higher under "
                                    "FB-loose than under the other semantics at equal nominal size", checks,
                              not_evaluated="not evaluated: no grid or fine-sweep runs"))

    # H3 --------------------------------------------------------------------------------
    checks = []
    fa = fa if fa is not None else fine_analysis(runs, params)
    letter = iter("abcdefghij")
    for sem in ("byte_loose", "byte_strict"):
        for v in VARIANTS:
            c = fa["curves"].get((sem, v.name))
            d = c and c["period"]
            if not d:
                continue
            held = d["ci"][0] >= PACKET_BYTES - d["resolution"] and d["ci"][1] <= PACKET_BYTES + d["resolution"]
            checks.append(F.legacy_check(
                f"H3{next(letter)}", f"The {SEMANTIC_LABELS[sem]} loss curve ({v.label}) is periodic with the TCP "
                                     f"packet size ({PACKET_BYTES} B)",
                "dominant period of the replication-mean voice-loss curve over the fine sweep (periodogram of the "
                f"linearly detrended curve, periods {PACKET_BYTES / 2.5:g} B to half the span); held if its bootstrap 95% "
                f"CI lies within {PACKET_BYTES} B ± the periodogram's resolution (packet² / span = {d['resolution']:g} B)",
                "dominant period of the voice-loss curve", "B", d, held,
                period_with_voice_B=F.num(fa.get("period_with_voice_B"))))
    corr = fa["correlation"]
    if corr:
        est = {"value": float(np.mean([c["value"] for c in corr.values()])),
               "ci": [float(np.mean([c["ci"][0] for c in corr.values()])), float(np.mean([c["ci"][1] for c in corr.values()]))],
               "n": min(c["n"] for c in corr.values()), "interval": next(iter(corr.values()))["interval"]}
        held = all(c["ci"][1] < 0 for c in corr.values())
        checks.append(F.legacy_check(
            f"H3{next(letter)}", "The lowest FB-loose loss and the highest FB-strict loss fall on the same queue sizes",
            "Pearson correlation between the replication-mean FB-loose and FB-strict loss curves over the fine sweep's "
            "limits, per TCP (bootstrap over replications, resampled together); held if both TCPs' 95% CIs are below 0 "
            "(statistic: the mean of the two)", "correlation of the FB-loose and FB-strict curves", "1", est, held,
            [{"cc": cc, **c} for cc, c in corr.items()]))
    for sem, kind, claim in (("byte_loose", "min", "FB-loose loss is lowest near integer multiples of the packet size"),
                             ("byte_strict", "max", "FB-strict loss is highest near integer multiples of the packet size")):
        per = [{"cc": v.name, **fa["curves"][(sem, v.name)]["extremum"]} for v in VARIANTS
               if fa["curves"].get((sem, v.name)) and fa["curves"][(sem, v.name)]["extremum"]]
        if not per:
            continue
        est = {"value": float(np.mean([p["value"] for p in per])),
               "ci": [float(np.mean([p["ci"][0] for p in per])), float(np.mean([p["ci"][1] for p in per]))],
               "n": min(p["n"] for p in per), "interval": per[0]["interval"]}
        held = all(p["ci"][1] < PACKET_BYTES / 4 for p in per)
        checks.append(F.legacy_check(
            f"H3{next(letter)}", claim,
            f"in each {PACKET_BYTES} B window centred on a multiple k x {PACKET_BYTES} B inside the fine sweep, where the "
            f"replication-mean curve has its {'minimum' if kind == 'min' else 'maximum'}; statistic: the mean distance to "
            f"k x {PACKET_BYTES} B (bootstrap over replications); held if both TCPs' 95% CIs lie below "
            f"{PACKET_BYTES / 4:g} B, the mean distance of extrema placed at random",
            f"mean distance of the {'minima' if kind == 'min' else 'maxima'} to multiples of {PACKET_BYTES} B", "B", est,
            held, [{k: v for k, v in p.items() if k != "interval"} for p in per]))
    findings.append(F.finding("H3", "Byte-based queue sizes near integer multiples of the TCP packet size give the "
                                    "lowest FB-loose loss and the highest FB-strict loss (periodic in the packet size)",
                              checks, not_evaluated="not evaluated: no fine sweep at a step that resolves 1500 B"))

    # H4 --------------------------------------------------------------------------------
    checks = []
    ps = grid[grid["semantic"] == "slot"]
    if len(ps) and ps["limit"].nunique() >= 2:
        smallest, largest = int(ps["limit"].min()), int(ps["limit"].max())
        rate = {link: _link_rate(link, params) for link in params.links}
        rises, sat = [], []
        for (link, rtt), part in ps.groupby(["link", "rtt_ms"], sort=False):
            bdp = bdp_packets(rate[link], rtt)
            if bdp > smallest:
                rises.append((link, rtt, bdp))
            above = sorted(int(x) for x in part["limit"].unique() if x >= bdp)
            if above and above[0] < largest:
                sat.append((link, rtt, bdp, above[0]))
        if rises:
            rows = [(l, r) for l, r, _ in rises]
            sub = ps[[(l, r) in rows for l, r in zip(ps["link"], ps["rtt_ms"])]]
            sub = sub.assign(size=np.where(sub["limit"] == smallest, "small", np.where(sub["limit"] == largest, "large", "")))
            _, est, per = F.paired(sub[sub["size"] != ""], "goodput_bps", "size", "large", "small", {}, relative=True,
                                   unit=["link", "rtt_ms", "cc", "rep", "size"])
            for c in per:
                c["bdp_pkts"] = round(bdp_packets(rate[c["link"]], c["rtt_ms"]), 2)
            checks.append(F.legacy_check(
                "H4a", "Downstream goodput rises with the PS queue length",
                f"goodput with {largest} packets relative to {smallest} packets, paired by replication and TCP, pooled "
                f"over every link and RTT whose BDP exceeds {smallest} packets; held if the 95% CI is above 0",
                f"relative change of goodput, PS {largest} vs PS {smallest}", "fraction", est, F.above(est), per))
        if sat:
            parts = []
            for link, rtt, bdp, at in sat:
                p = ps[(ps["link"] == link) & (ps["rtt_ms"] == rtt) & ps["limit"].isin([at, largest])]
                parts.append(p.assign(size=np.where(p["limit"] == at, "bdp", "large")))
            sub = pd.concat(parts, ignore_index=True)
            _, est, per = F.paired(sub, "goodput_bps", "size", "large", "bdp", {}, relative=True,
                                   unit=["link", "rtt_ms", "cc", "rep", "size"])
            bdp_of = {(l, r): (b, a) for l, r, b, a in sat}
            for c in per:
                b, a = bdp_of[(c["link"], c["rtt_ms"])]
                c["bdp_pkts"], c["ps_at_bdp"] = round(b, 2), a
            shifted = {**est, "value": est["value"] - 0.05, "ci": [x - 0.05 for x in est["ci"]]}
            checks.append(F.legacy_check(
                "H4b", "… and saturates near the BDP",
                f"goodput with {largest} packets relative to the smallest PS size at or above the BDP (rate x min RTT / "
                f"1500 B), paired by replication and TCP, pooled over the links and RTTs whose BDP lies inside the PS "
                f"range; held if the 95% CI of the gain lies below 5% (statistic: gain - 0.05)",
                "relative goodput gain beyond the BDP, minus 0.05", "fraction", shifted, F.below(shifted), per,
                gain=F.num(est["value"]), gain_ci=[F.num(x) for x in est["ci"]]))
    findings.append(F.finding("H4", "Goodput rises with the PS queue length and saturates near the BDP", checks,
                              not_evaluated="not evaluated: fewer than two PS sizes were run"))

    return F.document(NAME, SEED_STUDY, asdict(params), params.reps, params.links, F.METHOD, findings,
                      fine_replications=params.fine_replications() if params.has_fine() else 0)


def _link_rate(link: str, params: StudyParams) -> float:
    """The downstream rate (bit/s) of a link's scenario file, as the core resolves it."""
    from tcplab.scenario import Scenario

    _, doc = base_scenario(link, params.scenario_dir())
    return float(Scenario.from_dict(doc).to_core()["topology"]["bottleneck"]["rate"])
