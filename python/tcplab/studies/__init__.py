"""Bundled studies: each seed study re-run with one command (docs/studies/all.md).

A study is registered here with its name, the seed it reproduces, its parameters
(with defaults and documentation) and a ``run`` entry point. ``tcplab study NAME``
looks studies up in :data:`STUDIES`.

Registered:

- ``iw-irto`` (:mod:`tcplab.studies.iw_irto`): seed 000, Järvinen et al., IETF 79,
  2010: IW 3 -> 10 and initial RTO 3 s -> 1 s over EDGE/HSPA/LTE (ns-2 TCP SACK).
- ``home-gateway`` (:mod:`tcplab.studies.home_gateway`): seed 003, Stewart et al.,
  ACM MMSys 2011: drop-tail semantics, CUBIC vs NewReno and the collateral damage to
  a voice call on ADSL1/ADSL2.
- ``iw-testbed`` (:mod:`tcplab.studies.iw_testbed`): seed 001, Chu and Wang, IETF 79,
  2010: IW10 vs IW3 on a 64 kbit/s / 20 Mbit/s testbed with web transactions,
  simultaneous opens, SACK on/off and long-lived flows.
- ``satellite`` (:mod:`tcplab.studies.satellite`): seed 004, Kojo, FDPW 2005: the SLACP
  link layer and DAMA (CRA/RBDC/VBDC) under TCP over a lossy GEO return link.
- ``highspeed`` (:mod:`tcplab.studies.highspeed`): seed 002, Shimonishi et al., PFLDnet
  2007: 8 congestion controls alone and mixed with Reno on a parking lot.

Every study runs on the shared machine (:mod:`tcplab.studies.engine`,
:mod:`tcplab.studies.findings`, :mod:`tcplab.studies.reporting`).

Example:
    >>> names()
    ['iw-irto', 'home-gateway', 'iw-testbed', 'satellite', 'highspeed']
    >>> s = get("iw-irto")
    >>> s.seed, s.default_reps, s.links
    ('000', 100, ['edge', 'hspa', 'lte'])
    >>> [p.name for p in s.params]
    ['seed', 'offset_rtts', 'jitter_rtts', 'block']
    >>> get("iw-10")
    Traceback (most recent call last):
    ...
    KeyError: "unknown study 'iw-10'; accepted: iw-irto, home-gateway, iw-testbed, satellite, highspeed"
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Study", "StudyParam", "STUDIES", "names", "get"]


@dataclass(frozen=True)
class StudyParam:
    """A study parameter that ``tcplab study --set NAME=VALUE`` may change."""

    name: str
    type: type
    default: Any
    doc: str

    def parse(self, text: str) -> Any:
        """The value of ``text`` in this parameter's type; ``ValueError`` names the parameter.

        Example:
            >>> StudyParam("offset_rtts", float, 2.0, "").parse("3")
            3.0
            >>> StudyParam("block", int, 25, "").parse("x")
            Traceback (most recent call last):
            ...
            ValueError: block: expected int, got 'x'
        """
        try:
            return self.type(text)
        except ValueError:
            raise ValueError(f"{self.name}: expected {self.type.__name__}, got {text!r}") from None


@dataclass(frozen=True)
class Study:
    """A registered study: name, seed, summary, links, defaults and its runner."""

    name: str
    seed: str
    summary: str
    default_reps: int
    links: list[str]
    params: list[StudyParam]
    runner: Callable[..., Any]
    #: ``--mode emulate``: a reduced grid run in the simulator and with real kernel TCP
    #: (:mod:`tcplab.studies.emulated`); ``None`` when the study has no such mode.
    emulate_runner: Callable[..., Any] | None = None
    emulate_params: tuple[StudyParam, ...] = ()
    emulate_reps: int = 1
    #: The links ``--mode emulate`` runs unless ``--links`` says otherwise (empty: :attr:`links`).
    emulate_links: tuple[str, ...] = ()
    #: The seed's reference (authors, title, venue, year), shown by the dashboard.
    citation: str = ""
    #: Reduced sizes by name (``tcplab study all --preset NAME``): ``{"reps": N, "links": [...],
    #: PARAM: value, ...}``. ``tiny`` is the CI size (seconds); ``demo`` is ``make demo``'s
    #: (the five studies together in under 5 minutes on 2 cores). A study without the
    #: preset asked for runs at its defaults.
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The stem of the figure the dashboard shows as the study's thumbnail (default: the
    #: report's first figure).
    thumbnail: str = ""

    def run(self, out: str | Path, reps: int | None = None, links: list[str] | None = None, jobs: int | None = None,
            scheduler: str | None = None, progress: bool = True, **params: Any) -> Any:
        """Runs the study into ``out``; ``params`` are values of :attr:`params` by name."""
        return self.runner(out, reps=reps or self.default_reps, links=links or self.links, jobs=jobs,
                           scheduler=scheduler, progress=progress, **params)

    def emulate(self, out: str | Path, reps: int | None = None, links: list[str] | None = None, progress: bool = True,
                **params: Any) -> Any:
        """Runs the study's emulate mode into ``out`` (one run at a time, real time); ``params``
        are values of :attr:`emulate_params` by name.

        Raises:
            ValueError: the study has no emulate mode, or a parameter is refused.
        """
        if self.emulate_runner is None:
            raise ValueError(f"study {self.name} has no emulate mode; studies with one: "
                             + ", ".join(s.name for s in STUDIES.values() if s.emulate_runner))
        return self.emulate_runner(out, reps=reps or self.emulate_reps, links=links or list(self.emulate_links or self.links),
                                   progress=progress,
                                   **params)

    def settings(self, preset: str | None = None, reps_scale: float = 1.0) -> dict[str, Any]:
        """The keyword arguments of :meth:`run` for ``preset`` (or the defaults), replications scaled.

        Replications are ``round(reps x reps_scale)``, at least 2 (confidence intervals
        need two).

        Example:
            >>> get("satellite").settings("tiny", reps_scale=3.0)
            {'reps': 6, 'errors': 'none,huge'}
            >>> get("iw-irto").settings(reps_scale=0.1)["reps"], get("iw-irto").settings(reps_scale=0.001)["reps"]
            (10, 2)
        """
        if not reps_scale > 0:
            raise ValueError(f"reps_scale must be > 0, got {reps_scale}")
        kw = dict(self.presets.get(preset, {})) if preset else {}
        kw["reps"] = max(2, round(kw.get("reps", self.default_reps) * reps_scale))
        return kw

    def describe(self) -> dict[str, Any]:
        """The study as a JSON-able entry (for listings)."""
        d = {"name": self.name, "seed": self.seed, "summary": self.summary, "default_reps": self.default_reps,
             "links": self.links, "citation": self.citation, "presets": self.presets,
             "params": [{"name": p.name, "default": p.default, "doc": p.doc} for p in self.params]}
        if self.emulate_runner is not None:
            d["emulate_params"] = [{"name": p.name, "default": p.default, "doc": p.doc} for p in self.emulate_params]
        return d




def _runner(module: str) -> Callable[..., Any]:
    """The ``run`` entry point of study module ``tcplab.studies.<module>``, imported on first use.

    Every study module has ``StudyParams(reps=..., links=..., **params)`` and
    ``run(out, params, jobs=, scheduler=, progress=)``.
    """

    def run(out: str | Path, reps: int, links: list[str], jobs: int | None, scheduler: str | None,
            progress: bool, **params: Any) -> Any:
        mod = importlib.import_module(f"tcplab.studies.{module}")
        return mod.run(out, mod.StudyParams(reps=reps, links=list(links), **params), jobs=jobs,
                       scheduler=scheduler, progress=progress)

    return run


def _emulate_runner(module: str) -> Callable[..., Any]:
    """The ``run`` entry point of an emulate-mode module ``tcplab.studies.<module>``
    (``EmulateParams(reps=..., links=..., **params)``), imported on first use."""

    def run(out: str | Path, reps: int, links: list[str], progress: bool, **params: Any) -> Any:
        mod = importlib.import_module(f"tcplab.studies.{module}")
        return mod.run(out, mod.EmulateParams(reps=reps, links=list(links), **params), progress=progress)

    return run


def _str_list(text: str) -> list[str]:
    """A comma-separated list of names."""
    return [t.strip() for t in text.split(",") if t.strip()]


_str_list.__name__ = "comma-separated names"


def _bool_list(text: str) -> list[bool]:
    """A comma-separated list of true/false."""
    out = []
    for t in _str_list(text):
        if t.lower() not in ("true", "false"):
            raise ValueError(f"expected comma-separated true/false, got {text!r}")
        out.append(t.lower() == "true")
    return out


_bool_list.__name__ = "comma-separated true/false"


def _bool(text: str) -> bool:
    """One true/false switch (``--set trace=false``)."""
    if text.strip().lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text.strip().lower() == "true"


_bool.__name__ = "true or false"


def _int_list(text: str) -> list[int]:
    """A comma-separated list of integers, for list-valued study parameters."""
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValueError(f"expected comma-separated integers, got {text!r}") from None


_int_list.__name__ = "comma-separated integers"




# ``make demo``'s sizes (``tcplab study all --preset demo``), chosen so that the studies together finish in
# under 5 minutes on 2 cores (measured figures in docs/studies/all.md): fewer replications, RTTs, queue
# sizes and shorter measurement windows. A finding whose configurations a preset leaves out is "not run"
# (checks never narrow their scope to what ran); the dashboard shows the full-size verdict beside it.
DEMO_HOME_GATEWAY: dict[str, Any] = {"reps": 3, "rtts_ms": [24, 100], "duration_s": 20.0, "ps_step": 10,
                                     "fb_step_bytes": 30_000, "fine_step_bytes": 150}
DEMO_IW_TESTBED: dict[str, Any] = {"reps": 3, "measure_64k_s": 600.0, "measure_20m_s": 10.0}
DEMO_SATELLITE: dict[str, Any] = {"reps": 8}
#: Reduced scale, three protocols that span the seed's conclusions (Scalable aggressive,
#: Compound and AReno friendly), 10 long-lived flows, no random loss. Four replications:
#: with two, Student's t (1 d.o.f.) makes every interval span zero.
#: Sessions (revision 4) carry about 100 objects per second for the whole run, so the demo
#: runs the tiny scale (/ 100) for 150 s under both RTT readings (docs/studies/highspeed.md).
DEMO_HIGHSPEED: dict[str, Any] = {"reps": 4, "scale": "tiny", "protocols": "scalable,compound,areno",
                                  "loads": "10", "loss": "false", "duration": 150}

STUDIES: dict[str, Study] = {
    "iw-irto": Study(
        name="iw-irto",
        seed="000",
        summary="IW 3 -> 10 and initial RTO 3 s -> 1 s over EDGE/HSPA/LTE, FIFO/RED/REDok buffers, bursts of "
                "1/2/6/18 flows (Järvinen et al., IETF 79, 2010; ns-2 TCP SACK)",
        default_reps=100,
        links=["edge", "hspa", "lte"],
        params=[
            StudyParam("seed", int, 1, "master seed: replication r uses core seed seed + r and jitter draws "
                                       "default_rng([seed, r])"),
            StudyParam("offset_rtts", float, 2.0, "start of the later burst, in base RTTs after the first"),
            StudyParam("jitter_rtts", float, 0.5, "each flow's start is delayed by up to this many base RTTs (uniform)"),
            StudyParam("block", int, 25, "replications per task (resumability granularity)"),
        ],
        runner=_runner("iw_irto"),
        citation="J. Järvinen, A. Nyrhinen, A. Ding and M. Kojo, Effect of IW and Initial RTO changes, IETF 79 "
                 "(TCPM/ICCRG), Beijing, 2010",
        presets={"tiny": {"reps": 2, "links": ["lte"], "block": 1}, "demo": {"reps": 10}},
        thumbnail="elapsed_hspa_fifo-bdp",
    ),
    "home-gateway": Study(
        name="home-gateway",
        seed="003",
        summary="Home-gateway drop-tail semantics (PS, FB-strict, FB-loose), NewReno vs CUBIC and the collateral "
                "damage to a voice call on ADSL1/ADSL2 (Stewart et al., ACM MMSys 2011)",
        default_reps=10,
        links=["adsl1", "adsl2"],
        params=[
            StudyParam("seed", int, 1, "master seed: replication r runs with core seed seed + r"),
            StudyParam("rtts_ms", _int_list, [24, 50, 100, 200], "minimum RTTs in ms, comma-separated"),
            StudyParam("duration_s", float, 60.0, "simulated seconds per run"),
            StudyParam("ps_step", int, 5, "PS sizes 7, 7 + step, ..., 67 packets"),
            StudyParam("fb_step_bytes", int, 10_000, "FB sizes 10 000, 10 000 + step, ..., 100 000 B (and 40 000 B)"),
            StudyParam("fine_step_bytes", int, 30, "fine sweep step over 52 500..67 500 B; 0 leaves it out"),
            StudyParam("fine_reps", int, 0, "replications of the fine sweep (0: --reps)"),
            StudyParam("block", int, 0, "replications per task (0: all in one task)"),
            StudyParam("scenarios", str, "", "directory of the adsl1.toml/adsl2.toml scenario files "
                                             "(default: examples/home-gateway)"),
        ],
        runner=_runner("home_gateway"),
        emulate_runner=_emulate_runner("home_gateway.emulate"),
        emulate_links=("adsl1",),
        emulate_params=(
            StudyParam("seed", int, 1, "master seed: replication r runs with core seed seed + r"),
            StudyParam("rtts_ms", _int_list, [100], "minimum RTTs in ms, comma-separated"),
            StudyParam("duration_s", float, 30.0, "seconds per run (real time when emulated)"),
            StudyParam("ps_limits", _int_list, [13, 40], "PS queue sizes, packets"),
            StudyParam("fb_limits", _int_list, [20_000, 60_000], "FB-strict and FB-loose queue sizes, bytes"),
        ),
        citation="L. Stewart, D. Hayes, G. Armitage, M. Welzl and A. Petlund, Multimedia-unfriendly TCP congestion "
                 "control and home gateway queue management, ACM MMSys 2011",
        presets={"tiny": {"reps": 2, "links": ["adsl1"], "rtts_ms": [100], "ps_step": 30, "fb_step_bytes": 90_000,
                          "fine_step_bytes": 300, "duration_s": 10.0},
                 "demo": DEMO_HOME_GATEWAY},
        thumbnail="voice_loss_adsl1",
    ),
    "iw-testbed": Study(
        name="iw-testbed",
        seed="001",
        summary="IW10 vs IW3 testbed (Chu & Wang, IETF 79, 2010): web transactions over 64 kbit/s and 20 Mbit/s, "
                "single or 5 simultaneous opens, Poisson offered load, IW3/IW10/mix, SACK on/off, long-lived flows",
        default_reps=10,
        links=["64k", "20m"],
        params=[
            StudyParam("seed", int, 1, "master seed: replication r uses core seed seed + r (the same arrivals for "
                                       "every IW variant and SACK setting)"),
            StudyParam("measure_64k_s", float, 3600.0, "measurement window on 64 kbit/s, s (after a 60 s warm-up)"),
            StudyParam("measure_20m_s", float, 60.0, "measurement window on 20 Mbit/s, s (after a 10 s warm-up)"),
            StudyParam("block", int, 5, "replications per task (resumability granularity)"),
            StudyParam("keep_txn_reps", int, 2, "replications whose per-transaction rows are kept (CDFs)"),
        ],
        runner=_runner("iw_testbed"),
        emulate_runner=_emulate_runner("iw_testbed.emulate"),
        emulate_params=(
            StudyParam("seed", int, 1, "master seed: replication r uses core seed seed + r"),
            StudyParam("iw", _str_list, ["iw3", "iw10"], "IW variants (iw3, iw10, mix), comma-separated"),
            StudyParam("measure_20m_s", float, 20.0, "measured window on 20 Mbit/s, s (after 5 s, before a 5 s drain)"),
            StudyParam("measure_64k_s", float, 120.0, "measured window on 64 kbit/s, s (after 20 s, before a 60 s drain)"),
            StudyParam("opens", _int_list, [1, 5], "20 Mbit/s: simultaneous opens per arrival (1, 5)"),
            StudyParam("bg", _bool_list, [False, True], "20 Mbit/s: without/with the 2 background flows"),
        ),
        citation="J. Chu and Y. Wang, A testbed study on IW10 vs IW3, IETF 79 (TCPM), Beijing, 2010",
        presets={"tiny": {"reps": 2, "measure_64k_s": 60.0, "measure_20m_s": 2.0, "keep_txn_reps": 1},
                 "demo": DEMO_IW_TESTBED},
        thumbnail="uct_mean",
    ),
    "satellite": Study(
        name="satellite",
        seed="004",
        summary="SLACP link layer (ARQ + incremental RS-FEC) and DAMA (CRA/RBDC/VBDC) under Reference and Enhanced TCP "
                "over a lossy GEO return link, 1 x 1 MB and 4 x 250 kB (Kojo, FDPW 2005)",
        default_reps=32,
        links=["geo"],
        params=[
            StudyParam("errors", str, "none,low,medium,high,vhigh,huge", "error models to run (comma-separated)"),
            StudyParam("seed", int, 1, "master seed: replication r uses core seed seed + r"),
            StudyParam("block", int, 32, "replications per task (resumability granularity)"),
            StudyParam("rbdc_diagnostic", _bool, True, "also run RBDC with a 1 s grant timeout (tcplab's diagnostic)"),
            StudyParam("trace", _bool, True, "also run the slow-start overshoot traces"),
            StudyParam("rfc3390", _bool, True, "also run Enhanced TCP with RFC 3390's 4380 B initial window (the "
                                               "second reading of the seed's IW)"),
            StudyParam("recovery", _bool, True, "also run the allocation-delay probe (recovery time per DAMA delay)"),
            StudyParam("channel", _bool, True, "also run the channel probe (realised PER per error preset)"),
        ],
        runner=_runner("satellite"),
        citation="M. Kojo, On Efficient and TCP/IP Friendly Link Layers for Wireless WANs, FDPW 2005",
        presets={"tiny": {"reps": 2, "errors": "none,huge"}, "demo": DEMO_SATELLITE},
    ),
    "highspeed": Study(
        name="highspeed",
        seed="002",
        summary="Reno, HighSpeed, Scalable, BIC, CUBIC, H-TCP, Compound and AReno alone and mixed with Reno on a "
                "5-router parking lot with short- and long-lived flows (Shimonishi et al., PFLDnet 2007)",
        default_reps=6,
        links=["lot"],
        params=[
            StudyParam("scale", str, "reduced", "reduced (rates, buffers, sizes / 10), full (the seed's 1 Gbit/s) "
                                                "or tiny (/ 100)"),
            StudyParam("protocols", str, "highspeed,scalable,bic,cubic,htcp,compound,areno",
                       "protocols besides Reno (comma-separated)"),
            StudyParam("loads", str, "10,40", "long-lived flow counts (comma-separated, of 10 and 40)"),
            StudyParam("loss", str, "true", "also run 10 long-lived flows with random loss (true/false)"),
            StudyParam("without_short", str, "true", "with 10 long-lived flows, also run Reno and every protocol "
                                                     "alone without the short-lived flows (true/false)"),
            StudyParam("seed", int, 1, "master seed: replication r runs with core seed seed + r"),
            StudyParam("short", int, 100, "short-lived flows (sessions) per run"),
            StudyParam("rtt", str, "equal_per_hop,common_excess",
                       "RTT readings to run (comma-separated): equal_per_hop (130 ms mean for every hop count), "
                       "common_excess (one excess law, so the RTT grows with the hop count)"),
            StudyParam("workload", str, "sessions", "sessions (each source fetches objects for the whole run) or "
                                                    "files (count files in one Poisson stream)"),
            StudyParam("delay", str, "link", "link (15 ms is the backbone link delay) or buffer (15 ms is the "
                                             "buffer's depth; backbone delay 1 ms)"),
            StudyParam("duration", int, 900, "run length with sessions, s"),
        ],
        runner=_runner("highspeed"),
        citation="H. Shimonishi, T. Murase and M. Sanadidi, Assessing Interactions among Legacy and High-Speed "
                 "TCPs, PFLDnet 2007",
        presets={"tiny": {"reps": 2, "scale": "tiny", "protocols": "scalable,areno", "loads": "10", "loss": "false",
                          "short": 10},
                 "demo": DEMO_HIGHSPEED},
        thumbnail="tradeoff",
    ),
}


def names() -> list[str]:
    """Registered study names."""
    return list(STUDIES)


def get(name: str) -> Study:
    """The study called ``name``; ``KeyError`` lists the accepted names."""
    try:
        return STUDIES[name]
    except KeyError:
        raise KeyError(f"unknown study {name!r}; accepted: {', '.join(STUDIES)}") from None
