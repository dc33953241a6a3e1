"""The testbed of seed 001 as scenario documents: links, loads, IW variants and the grid.

Seed 001 is H.K. J. Chu and Y. Wang, "A testbed study on IW10 vs IW3"
(draft-ietf-tcpm-initcwnd-00, IETF 79, 2010; the text is kept in
``docs/seeds/001_ac085380cef1778f.txt``). Its NCSU testbed: a dumbbell of 4
client/server pairs, netem delay of 150 ms each way (RTT 300 ms), an HTB bottleneck of
64 kbit/s with a 40-packet queue or 20 Mbit/s with 500 packets; netperf transactions
(200 B request, 15 kB response) at a Poisson offered load, single or 5 simultaneous
opens; IW3, IW10 or a 50/50 mix; SACK on or off; optionally 2 iperf bulk flows.

This module holds only the set-up (no simulation, no analysis), so that the study
(:mod:`tcplab.studies.iw_testbed.study`), its claims, its report and its emulate mode
all import it without importing each other. The scenario files are
``examples/iw-testbed/testbed-<link>.toml``; :func:`configure` sets one
configuration's values by path.

Example:
    >>> [(l.name, l.light_load, l.loads) for l in LINKS.values()]
    [('64k', 0.3, (0.75, 0.975)), ('20m', 0.3, (0.72, 0.96))]
    >>> len(configurations(["64k"])), seed_ran("64k", 0.975, 5, True), seed_ran("20m", 0.96, 5, True)
    (9, True, False)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["NAME", "SEED_STUDY", "SCENARIO_DIR", "IW_VARIANTS", "SACK", "OPENS", "RTT_S", "PACKET_BYTES",
           "RESPONSE_WIRE_BYTES", "TestbedLink", "LINKS", "configurations", "seed_ran", "base_scenario", "configure",
           "idle_document"]

NAME = "iw-testbed"
#: The seed text's stem in ``docs/seeds/``.
SEED_STUDY = "001_ac085380cef1778f"
#: The study's scenario files (``examples/iw-testbed/``).
SCENARIO_DIR = Path(__file__).resolve().parents[4] / "examples" / "iw-testbed"

#: IW variant -> ``iw_mix`` of the rpc entry (cycled over the 4 clients: in the mix,
#: clients 0 and 2 have IW3 servers, clients 1 and 3 IW10).
IW_VARIANTS: dict[str, list[int]] = {"iw3": [3], "iw10": [10], "mix": [3, 10]}
SACK = (True, False)
OPENS = (1, 5)
#: The seed's round-trip time, s ("RTT: 300ms").
RTT_S = 0.3
#: A full data packet on the wire, bytes (MSS 1448 + 52 B of headers with timestamps).
PACKET_BYTES = 1500
#: One 15 000 B response on the wire, bytes: 11 segments of 52 B headers each.
RESPONSE_WIRE_BYTES = 15_000 + 11 * 52


@dataclass(frozen=True)
class TestbedLink:
    """A bottleneck of the seed's testbed: the scenario file, the loads and the run length.

    ``loads`` are the seed's named pair (lower, heavy); ``light_load`` is tcplab's
    choice for the seed's "lightly loaded" tests, which it gives no number for.
    ``warmup_s`` lets the queue and the background flows reach their regime before
    transactions count; ``measure_s`` is the default measurement window, s;
    ``drain_s`` the time after the last arrival for transactions to finish, s.
    """

    name: str
    label: str
    rate_bps: int
    queue_pkts: int
    loads: tuple[float, float]
    light_load: float
    warmup_s: float
    measure_s: float
    drain_s: float

    @property
    def file(self) -> Path:
        return SCENARIO_DIR / f"testbed-{self.name}.toml"

    def packet_time_s(self) -> float:
        """Transmission time of a full packet at this link's rate, s (187.5 ms at 64 kbit/s)."""
        return PACKET_BYTES * 8 / self.rate_bps

    def response_time_s(self) -> float:
        """Serialization of one 15 kB response at this link's rate, s (1.95 s at 64 kbit/s)."""
        return RESPONSE_WIRE_BYTES * 8 / self.rate_bps


# The light load, 30 %, is tcplab's choice: well below the seed's lowest named load
# (72-75 %), where an M/D/1 queue's mean wait is 0.21 service times, so queueing is small.
LINKS: dict[str, TestbedLink] = {
    "64k": TestbedLink("64k", "64 kbit/s, 40 pkt", 64_000, 40, (0.75, 0.975), 0.3, 60.0, 3600.0, 600.0),
    "20m": TestbedLink("20m", "20 Mbit/s, 500 pkt", 20_000_000, 500, (0.72, 0.96), 0.3, 10.0, 60.0, 30.0),
}


def configurations(links: list[str]) -> list[tuple[str, float, int, bool]]:
    """(link, load, opens, bg) in report order: the light load with single opens and no
    background, then the seed's two loads x single/5 opens x without/with background.

    Example:
        >>> configurations(["20m"])[:3]
        [('20m', 0.3, 1, False), ('20m', 0.72, 1, False), ('20m', 0.72, 1, True)]
    """
    out = []
    for name in links:
        link = LINKS[name]
        out.append((name, link.light_load, 1, False))
        out += [(name, load, o, bg) for load in link.loads for o in OPENS for bg in (False, True)]
    return out


def seed_ran(link: str, load: float, opens: int, bg: bool) -> bool:
    """Whether the seed ran this configuration (its slides show results for it).

    Without background flows: every link, load and open count. With the 2 long-lived
    flows only 64 kbit/s with 5 simultaneous opens at its two named loads ("64Kkpbs,
    5 simultaneous RPC flows, 2 long-lived background flows"); the 20 Mbit/s and
    single-open background runs are tcplab's additions.

    Example:
        >>> seed_ran("64k", 0.75, 1, True), seed_ran("64k", 0.3, 1, False)
        (False, True)
    """
    if not bg:
        return True
    return link == "64k" and opens == 5 and load in LINKS[link].loads


def base_scenario(link: str) -> dict[str, Any]:
    """The parsed scenario file of ``link`` (a TOML document, quantities with units).

    Example:
        >>> d = base_scenario("20m")
        >>> [f["name"] for f in d["flows"]], d["topology"]["bottleneck"]["preset"]
        (['rpc', 'bg'], 'testbed-20m')
    """
    from tcplab.scenario import parse_toml

    path = LINKS[link].file
    doc = parse_toml(path.read_text(), str(path))
    names = [f.get("name") for f in doc.get("flows", [])]
    if names[:2] != ["rpc", "bg"] or doc["flows"][0].get("kind") != "rpc":
        raise ValueError(f"{path}: the study needs flows named rpc (kind rpc) and bg; got {names}")
    return doc


def configure(doc: dict[str, Any], iw: str, opens: int, load: float, sack: bool, bg: bool, warmup_s: float,
              measure_s: float, drain_s: float, record: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of a base scenario document with one configuration's values set by path.

    - ``flows[rpc].iw_mix`` = :data:`IW_VARIANTS` ``[iw]``; ``.batch`` = ``opens``;
      ``.arrivals.load`` = ``load``; ``.stop`` = end of the window;
    - ``tcp.sack``; the ``bg`` entry kept (stopping at the window's end) or removed;
    - ``duration`` = window end + ``drain_s``; ``record`` merged when given.

    Example:
        >>> d = configure(base_scenario("64k"), "mix", 5, 0.975, False, True, 60, 1800, 600)
        >>> r = d["flows"][0]
        >>> r["iw_mix"], r["batch"], r["arrivals"], r["stop"], d["tcp"]["sack"], d["duration"]
        ([3, 10], 5, {'process': 'poisson', 'load': 0.975}, '1860s', False, '2460s')
    """
    d = copy.deepcopy(doc)
    end = warmup_s + measure_s
    rpc = d["flows"][0]
    rpc["iw_mix"] = list(IW_VARIANTS[iw])
    rpc["batch"] = int(opens)
    rpc["arrivals"] = {"process": "poisson", "load": float(load)}
    rpc["stop"] = f"{end:g}s"
    if bg:
        d["flows"][1]["stop"] = f"{end:g}s"
    else:
        d["flows"] = d["flows"][:1]
    d["tcp"]["sack"] = bool(sack)
    d["duration"] = f"{end + drain_s:g}s"
    if record:
        d["record"] = {**d.get("record", {}), **record}
    return d


def idle_document(doc: dict[str, Any], iw_segments: int) -> dict[str, Any]:
    """One transaction alone on the idle testbed (at 1 s, one client, IW ``iw_segments``).

    Its UCT is the part of every transaction's UCT that is neither queueing nor
    competition: the round trips and the serialization (64 kbit/s: 2.59 s for IW3 and
    IW10 alike; 20 Mbit/s: 1.20 s for IW3, 0.61 s for IW10).

    Example:
        >>> d = idle_document(base_scenario("64k"), 10)
        >>> d["flows"][0]["arrivals"], d["flows"][0]["count"], len(d["flows"]), d["duration"]
        ({'process': 'times', 'at': ['1s']}, 1, 1, '120s')
    """
    d = copy.deepcopy(doc)
    rpc = d["flows"][0]
    rpc.update(count=1, batch=1, iw_mix=[int(iw_segments)], arrivals={"process": "times", "at": ["1s"]})
    rpc.pop("stop", None)
    d["flows"] = [rpc]
    d["duration"] = "120s"
    return d
