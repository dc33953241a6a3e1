"""Set-up of study ``home-gateway``: constants, parameters and the scenario files.

The reference is seed 003 (``docs/seeds/003_c9c9fd5920f3a08e.txt``): L. Stewart,
D. Hayes, G. Armitage, M. Welzl and A. Petlund, "Multimedia-unfriendly TCP congestion
control and home gateway queue management", ACM MMSys 2011. Its "Methodology" slide
fixes most of what is here: ADSL1 1500/256 kbit/s and ADSL2 24/1 Mbit/s, byte queues of
10..100 kB and slot queues of 7..67 packets, minimum RTTs of 24, 50, 100 and 200 ms,
one bulk TCP flow A->C and a 186 B N(20 ms, 1 ms) voice stream B<->D. Everything the
seed leaves open is a constant or a :class:`StudyParams` field here, and
``docs/studies/home-gateway.md`` says which choices are tcplab's.

This module imports nothing else of the study, so every other module of the package
(simulation, analysis, claims, report, emulate mode) can import it.

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
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "NAME", "SEED_STUDY", "STUDY_VERSION", "SCENARIO_DIR", "LINKS", "LINK_LABELS", "PACKET_BYTES", "VOICE_BYTES",
    "SEMANTICS", "SEMANTIC_LABELS", "OWD_QUEUE", "FINE_LINK", "FINE_RTT_MS", "FINE_RANGE", "FINE_PS", "SERIES_LINK",
    "SERIES_RTT_MS", "SERIES_LIMITS", "VOICE_TAIL_S", "SERIES_SKIP_FRACTION", "SERIES_GRID_S", "Variant", "VARIANTS", "StudyParams", "bdp_packets",
    "base_scenario", "configure", "scenario_toml", "base_owd_s", "link_rate", "voice_share",
]

NAME = "home-gateway"
SEED_STUDY = "003_c9c9fd5920f3a08e"
#: Bumped when a change alters what a task computes, so old task files are not reused
#: (3: the ``linux-2.6`` profile starts with RFC 3390's IW and a 3 s initial RTO, not IW10 and 1 s).
STUDY_VERSION = 3

#: The scenario files (``<link>.toml``), in the repository next to the package.
SCENARIO_DIR = Path(__file__).resolve().parents[4] / "examples" / "home-gateway"
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
#: The time series: ADSL1, 100 ms, 20 000 B (the seed's "Downstream NewReno Behaviour" and "CUBIC Induces More
#: OWD Than NewReno" slides), PS 13 packets (about 20 000 B / 1500 B); tcplab runs them ``reps`` times.
SERIES_LINK, SERIES_RTT_MS, SERIES_LIMITS = "adsl1", 100, {"slot": 13, "byte_strict": 20_000, "byte_loose": 20_000}
#: Voice packets stop this long before the end, so every one is delivered or dropped.
VOICE_TAIL_S = 1.0
#: The time-series runs' statistics (cwnd/queue coupling, back-offs) skip the first third of the run (slow start).
SERIES_SKIP_FRACTION = 1 / 3
#: The time-series runs' cwnd and queue are resampled on this grid (s) before they are correlated.
SERIES_GRID_S = 0.010


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
        reps: replications of every configuration (main grid, fine sweep and time-series runs).
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
        ...             fine_step_bytes=0).n_runs()   # (3 PS + 3 FB-strict + 3 FB-loose + 3 series) x 2 CCs x 2 reps
        48
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
        """Simulations: grid x CCs x reps, fine sweep x CCs x fine reps, and 3 time-series queues x CCs x reps."""
        grid = len(self.links) * len(self.rtts_ms) * sum(len(self.sizes(s)) for s in SEMANTICS)
        fine = (2 * len(self.fine_sizes()) + len(FINE_PS)) if self.has_fine() else 0
        series = len(SEMANTICS) if SERIES_LINK in self.links else 0
        return (grid + series) * len(VARIANTS) * self.reps + fine * len(VARIANTS) * self.fine_replications()


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


def base_owd_s(core: dict[str, Any], packet_bytes: int) -> float:
    """Propagation plus serialization of one voice packet, s1 -> r0 -> r1 -> d1 (the OWD floor)."""
    topo = core["topology"]
    hops = [topo["sender_access"], topo["bottleneck"], topo["receiver_access"]]
    ns = sum(h["delay"] + math.ceil(packet_bytes * 8 * NS_PER_S / h["rate"]) for h in hops)
    return ns / NS_PER_S



def link_rate(link: str, directory: str | Path | None = None) -> float:
    """The downstream rate (bit/s) of a link's scenario file, as the core resolves it.

    Example:
        >>> link_rate("adsl1"), link_rate("adsl2")
        (1500000.0, 24000000.0)
    """
    from tcplab.scenario import Scenario

    _, doc = base_scenario(link, directory)
    return float(Scenario.from_dict(doc).to_core()["topology"]["bottleneck"]["rate"])


def voice_share(link: str, directory: str | Path | None = None) -> float:
    """The downstream voice stream's share of the link: 186 B x 8 / mean gap / downstream rate.

    Example:
        >>> round(voice_share("adsl1"), 4)   # 186 * 8 / 0.020 / 1.5e6
        0.0496
    """
    from tcplab.scenario import Scenario

    _, doc = base_scenario(link, directory)
    core = Scenario.from_dict(doc).to_core()
    voice = next(f for f in core["flows"] if f.get("name") == "voice_down")
    return voice["packet_bytes"] * 8 / (voice["interval"]["mean"] / NS_PER_S) / core["topology"]["bottleneck"]["rate"]
