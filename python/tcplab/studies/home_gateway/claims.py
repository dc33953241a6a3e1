"""Claims of study ``home-gateway``: seed 003's sentences, each checked with a claim form.

The reference is seed 003 (``docs/seeds/003_c9c9fd5920f3a08e.txt``; L. Stewart,
D. Hayes, G. Armitage, M. Welzl and A. Petlund, "Multimedia-unfriendly TCP congestion
control and home gateway queue management", ACM MMSys 2011). Its claims ledger,
``ledger.toml`` next to this module, maps every sentence of the seed to the findings
below, to a reason it cannot be tested here, to the set-up, or to context. The rules
that turn data into verdicts are :mod:`tcplab.studies.findings`'.

Findings (the seed's words in quotes; every form, scope, threshold and margin was fixed
from those words before any run was looked at):

- **H1** "CUBIC keeps buffers fuller: latency & loss increase" (summary): CUBIC minus
  NewReno of the queue's fill, the voice's induced delay and its loss, each a
  :class:`~tcplab.studies.findings.Directional` claim with a negligible band, read over
  the seed's whole grid and over the configurations of the seed's figures.
- **H2** "FB-Loose disadvantages small, real-time multimedia packets" (summary): voice
  loss under FB-loose against FB-strict and PS (the seed's loss figure compares the
  three), and against the TCP's own packets in the same queue.
- **H3** "Byte-based queue sizes around integer multiples of TCP packet size correspond
  with lowest FB-Loose loss & highest FB-Strict loss" (summary): on the fine sweep, for
  each TCP on its own interval (:class:`~tcplab.studies.findings.Every`), the FB-loose
  minima and the FB-strict maxima lie closer to the multiples than chance, and the
  limits around the multiples lose less (FB-loose) and more (FB-strict) than the
  others. The period and the correlation of the two curves are tcplab's extensions.
- **H5** "CUBIC Induces More OWD Than NewReno" (slide title) and **H6** "Congestion
  window oscillation coupled with induced queuing delay." (caption): on the slides'
  configuration, ADSL1, 100 ms, a 20 000 B queue.
- **M1** "TCP CC algorithms each interact differently with network buffers" and
  **M2** "Real-time multimedia traffic sharing the gateway bottleneck experiences
  collateral damage: latency/jitter and loss" (motivation), with the "Collateral Damage
  to Voice Stream" slide titles.
- **H4** (extension): goodput against the PS queue length. The seed shows that figure
  but states no result about it.

Example:
    >>> Differs(0.01).decide({"value": 0.2, "ci": [0.1, 0.3], "n": 10})
    'held'
    >>> Differs(0.01).decide({"value": 0.0, "ci": [-0.005, 0.004], "n": 10})
    'contradicted'
    >>> sorted(THRESHOLDS)[:3]
    ['chance_distance_B', 'coupling_r', 'delay_negligible_s']
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from tcplab.studies import findings as F
from tcplab.studies.home_gateway import analysis as A
from tcplab.studies.home_gateway.config import (FINE_LINK, FINE_PS, FINE_RTT_MS, NAME, OWD_QUEUE, PACKET_BYTES,
                                                SEED_STUDY, SEMANTIC_LABELS, SERIES_LIMITS, SERIES_LINK, SERIES_RTT_MS,
                                                VARIANTS, StudyParams, bdp_packets, link_rate)

__all__ = ["Differs", "THRESHOLDS", "READINGS", "evaluate_findings"]

# --------------------------------------------------------------------------------------
# Thresholds and margins, each with its reason (stated before any run was looked at).

#: Queue fill (time-averaged occupancy / the queue's limit): a difference under 1% of the buffer is
#: no difference ("fuller", "differently"): under one 1500 B packet in every buffer of the grid (1% of
#: at most 100 kB, or of at most 67 slots). tcplab's choice; the seed gives no size.
FILL_NEGLIGIBLE = 0.01
#: Delay: 1 ms is dummynet's tick at HZ = 1000, the timing resolution of the seed's testbed emulator
#: ("Dummynet for bandwidth, queue size & RTT emulation"); a delay or jitter under it is none.
DELAY_NEGLIGIBLE_S = 0.001
#: Voice loss: 0.1 percentage point (3 of the ~2 950 voice packets of a 60 s run) is negligible: with
#: packet-loss concealment a G.711 call loses under 0.4 R-factor points for it (ITU-T G.107/G.113,
#: Ie,eff = 95 x Ppl / (Ppl + 25.1)). tcplab's choice; the seed gives no size.
LOSS_NEGLIGIBLE = 0.001
#: "Around integer multiples": an extremum placed at random in a 1500 B window lies packet/4 = 375 B
#: from its multiple on average; "around" the multiples means closer than that (the chance level).
CHANCE_DISTANCE_B = PACKET_BYTES / 4
#: "Coupled": a correlation above 0.5, the conventional boundary of a large correlation (J. Cohen,
#: Statistical Power Analysis for the Behavioral Sciences, 1988). tcplab's choice; the seed gives no size.
COUPLING_R = 0.5
#: "Oscillation": more than two back-offs in the analysed two thirds of the run (a repeated rise and
#: fall, not a single back-off after slow start). tcplab's choice.
OSCILLATION_BACKOFFS = 2.0
#: Extension H4: a goodput change under 1% is none (tcplab's choice), and "saturated" means that a
#: larger PS queue changes goodput by less than 5% either way (tcplab's choice).
GOODPUT_NEGLIGIBLE = 0.01
SATURATION_MARGIN = 0.05

#: Every threshold and margin with its reason, as written into ``findings.json`` (key ``thresholds``).
THRESHOLDS: dict[str, dict[str, Any]] = {
    "fill_negligible": {"value": FILL_NEGLIGIBLE, "unit": "fraction of the buffer",
                        "reason": "under one 1500 B packet in every buffer of the grid (1% of at most 100 kB or 67 "
                                  "slots); tcplab's choice, the seed gives no size"},
    "delay_negligible_s": {"value": DELAY_NEGLIGIBLE_S, "unit": "s",
                           "reason": "dummynet's tick at HZ = 1000, the timing resolution of the seed's testbed"},
    "loss_negligible": {"value": LOSS_NEGLIGIBLE, "unit": "fraction of voice packets",
                        "reason": "3 of ~2 950 voice packets per 60 s run; < 0.4 R-factor points for G.711 with "
                                  "concealment (ITU-T G.113 Bpl 25.1); tcplab's choice"},
    "chance_distance_B": {"value": CHANCE_DISTANCE_B, "unit": "B",
                          "reason": "mean distance of an extremum placed at random in a 1500 B window: packet / 4"},
    "coupling_r": {"value": COUPLING_R, "unit": "1",
                   "reason": "a large correlation by Cohen's (1988) convention; tcplab's choice"},
    "oscillation_backoffs": {"value": OSCILLATION_BACKOFFS, "unit": "back-offs",
                             "reason": "a repeated rise and fall, not one back-off after slow start; tcplab's choice"},
    "goodput_negligible": {"value": GOODPUT_NEGLIGIBLE, "unit": "fraction", "reason": "extension H4; tcplab's choice"},
    "saturation_margin": {"value": SATURATION_MARGIN, "unit": "fraction", "reason": "extension H4; tcplab's choice"},
}

# Readings, where the seed's words allow more than one.
R_GRID = "over the seed's whole grid"
R_FIGURES = "in the configurations of the seed's figures"
R_RULES = "against the same voice under FB-strict and PS"
R_TCP = "against the TCP's large packets in the same FB-loose queue"
R_EXTREMA = "where each curve's extremes lie"
R_BANDS = "which limits lose least (FB-loose) and most (FB-strict)"
R_LOOSE = "the 20 000 B queue is FB-loose (the testbed's dummynet)"
R_STRICT = "the 20 000 B queue is FB-strict"
#: The readings, with how each is read (also in ``findings.json``, key ``readings``).
READINGS = {
    R_GRID: "the summary sentence covers every configuration of the seed's Methodology slide: pooled over them",
    R_FIGURES: "the summary sentence summarises the figures: buffers on the 20 000 B time-series slide, latency on the "
               "40 000 B FB-loose latency figure, loss on the ADSL1 100 ms loss figure",
    R_RULES: "FB-loose puts small packets at a disadvantage compared with the other drop rules the seed compares",
    R_TCP: "FB-loose puts small packets at a disadvantage compared with the large packets sharing its queue",
    R_EXTREMA: "the lowest FB-loose and highest FB-strict loss sit around the multiples: the minima / maxima within "
               "each 1500 B window lie closer to its multiple than chance",
    R_BANDS: "limits around the multiples (closer than a quarter packet) lose less under FB-loose, and more under "
             "FB-strict, than the other limits",
    R_LOOSE: "the slide's 20 000 byte queue is the testbed's (dummynet: FB-loose)",
    R_STRICT: "the slide's 20 000 byte queue is a byte queue that never overshoots (FB-strict, ns-2's byte mode)",
}


#: "X and Y differ" (either way), shared with every study (:class:`tcplab.studies.findings.Differs`).
Differs = F.Differs


# --------------------------------------------------------------------------------------
# Statistics


_CONFIG = ["part", "link", "rtt_ms", "semantic", "limit"]
_NAN: dict[str, Any] = {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}
_UNIT = [*_CONFIG, "cc", "rep"]


def _select(runs: pd.DataFrame, where: dict[str, Sequence[Any]]) -> pd.DataFrame:
    sub = runs
    for col, values in where.items():
        sub = sub[sub[col].isin(list(values))]
    return sub


def _grouped(pairs: pd.DataFrame, value: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Per group of ``keys``: per replication the mean of ``value`` over the group's configurations, estimated."""
    keys = list(keys)
    per_rep = pairs.groupby([*keys, "rep"], sort=False)[value].mean()
    configs = pairs[pairs["rep"] == pairs["rep"].iloc[0]].groupby(keys, sort=False).size()
    out = []
    for key, part in per_rep.groupby(level=list(range(len(keys))), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        out.append({**{k: (v.item() if hasattr(v, "item") else v) for k, v in zip(keys, key)}, **F.estimate(part),
                    "configs": int(configs.get(key if len(key) > 1 else key[0], 0))})
    return out


def cc_difference(runs: pd.DataFrame, metric: str, where: dict[str, Sequence[Any]],
                  by: Sequence[str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """CUBIC minus NewReno of ``metric``, paired by replication and configuration (:func:`findings.paired`).

    Returns the pooled estimate (per replication, the mean over every configuration in
    scope) and per-configuration estimates, or, with ``by``, per-group estimates (per
    replication the mean over the group's configurations).

    Example:
        >>> rm = pd.DataFrame({"part": "grid", "link": "adsl1", "rtt_ms": 100, "semantic": "slot", "limit": 7,
        ...                    "cc": ["newreno", "cubic"] * 3, "rep": [0, 0, 1, 1, 2, 2],
        ...                    "q_fill": [0.5, 0.7, 0.5, 0.6, 0.4, 0.7]})
        >>> est, per = cc_difference(rm, "q_fill", {})
        >>> round(est["value"], 3), len(per)
        (0.2, 1)
    """
    pairs, est, per = F.paired(runs, metric, "cc", "cubic", "newreno", where, relative=False, unit=_UNIT)
    if by is not None and len(pairs):
        per = _grouped(pairs[[*_CONFIG, "rep", "diff"]], "diff", by)
    return est, per


def level(runs: pd.DataFrame, metric: str, where: dict[str, Sequence[Any]], by: Sequence[str]
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``metric`` itself: per replication its mean over every run in scope (both TCPs), and per group of ``by``.

    Example:
        >>> rm = pd.DataFrame({"link": "adsl1", "cc": ["newreno", "cubic"] * 2, "rep": [0, 0, 1, 1],
        ...                    "voice_loss": [0.01, 0.03, 0.02, 0.02]})
        >>> est, per = level(rm, "voice_loss", {}, ["link"])
        >>> round(est["value"], 3), est["exact"], per[0]["link"]
        (0.02, True, 'adsl1')
    """
    sub = _select(runs, where).dropna(subset=[metric])
    if not len(sub):
        return dict(_NAN), []
    est = F.estimate(sub.groupby("rep")[metric].mean())
    cols = [c for c in (*_CONFIG, "cc") if c in sub]
    per = _grouped(sub[[*cols, "rep", metric]], metric, by)
    return est, per


def semantic_difference(runs: pd.DataFrame, test: str, ref: str, where: dict[str, Sequence[Any]], by: Sequence[str]
                        ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Voice loss under ``test`` minus under ``ref`` at the same limit, paired by replication and TCP."""
    sub = _select(runs, where)
    sub = sub[sub["semantic"].isin([test, ref])]
    pairs, est, _ = F.paired(sub, "voice_loss", "semantic", test, ref, {}, relative=False,
                             unit=["part", "link", "rtt_ms", "limit", "cc", "rep", "semantic"])
    if not len(pairs):
        return est, []
    return est, _grouped(pairs[["part", "link", "rtt_ms", "limit", "cc", "rep", "diff"]], "diff", by)


def range_difference(runs: pd.DataFrame, test: str, ref: str, where: dict[str, Sequence[Any]]
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Voice loss averaged over ``test``'s sizes minus averaged over ``ref``'s sizes, per link, RTT, TCP and
    replication (for semantics whose sizes differ: FB-loose 10..100 kB against PS 7..67 packets, both spanning
    about the same nominal bytes); pooled per replication over link, RTT and TCP."""
    sub = _select(runs, where)
    means = sub[sub["semantic"].isin([test, ref])].groupby(["part", "link", "rtt_ms", "cc", "rep", "semantic"])[
        "voice_loss"].mean().unstack("semantic")
    if test not in means or ref not in means:
        return dict(_NAN), []
    d = (means[test] - means[ref]).rename("diff").reset_index().dropna(subset=["diff"])
    est = F.estimate(d.groupby("rep")["diff"].mean())
    return est, _grouped(d[["part", "link", "rtt_ms", "cc", "rep", "diff"]], "diff", ["link", "rtt_ms", "cc"])


def _fine_difference(runs: pd.DataFrame, test: str, ref: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Fine sweep: per TCP and replication, mean voice loss over ``test``'s limits minus over ``ref``'s; pooled
    per replication over both TCPs."""
    diffs, per = [], []
    for v in VARIANTS:
        _, wa = A.fine_matrix(runs, test, v.name)
        _, wb = A.fine_matrix(runs, ref, v.name)
        if not len(wa) or not len(wb):
            continue
        d = wa.mean(axis=1) - wb.mean(axis=1)
        diffs.append(d)
        per.append({"cc": v.name, **F.estimate(d)})
    if not diffs:
        return dict(_NAN), []
    return F.estimate(pd.concat(diffs, axis=1).mean(axis=1)), per


def _public(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if not k.startswith("_") and k not in ("limits",)}


# --------------------------------------------------------------------------------------
# The findings


def _h1(runs: pd.DataFrame) -> dict[str, Any]:
    grid = {"part": ["grid"]}
    by = ["link", "rtt_ms", "semantic"]
    checks = []
    specs = (
        ("q_fill", "the downstream queue is fuller with CUBIC",
         "difference of the time-averaged downstream queue fill (occupancy / limit), CUBIC - NewReno",
         "fraction of the buffer", FILL_NEGLIGIBLE),
        ("iowd_mean_s", "the voice stream's latency increases with CUBIC",
         "difference of the voice packets' mean induced one-way delay, CUBIC - NewReno", "s", DELAY_NEGLIGIBLE_S),
        ("voice_loss", "the voice stream's loss increases with CUBIC",
         "difference of the downstream voice loss proportion, CUBIC - NewReno", "fraction of voice packets",
         LOSS_NEGLIGIBLE),
    )
    if (runs["part"] == "grid").any():
        for cid, (metric, claim, stat, unit, neg) in zip("abc", specs):
            est, per = cc_difference(runs, metric, grid, by)
            checks.append(F.check(f"H1{cid}", claim, F.Directional("above", negligible=neg), stat, unit, est, per,
                                  scope="every link, RTT, drop rule and size of the main grid (per-group rows: means "
                                        "over the sizes)", reading=R_GRID))
    figures = (
        ("d", {"part": ["series"], "semantic": ["byte_loose", "byte_strict"]},
         f"ADSL1, {SERIES_RTT_MS} ms, a {SERIES_LIMITS['byte_loose']:,} B queue (FB-loose and FB-strict): the "
         "NewReno and CUBIC time-series slide"),
        ("e", {"part": ["grid"], "semantic": [OWD_QUEUE[0]], "limit": [OWD_QUEUE[1]]},
         f"a {OWD_QUEUE[1]:,} B FB-loose queue, every link and RTT: the latency figure"),
        ("f", {"part": ["grid"], "link": [FINE_LINK], "rtt_ms": [FINE_RTT_MS]},
         f"ADSL1, {FINE_RTT_MS} ms, every drop rule and size: the loss figure"),
    )
    for (cid, where, scope), (metric, claim, stat, unit, neg) in zip(figures, specs):
        if not len(_select(runs, where)):
            continue
        est, per = cc_difference(runs, metric, where, ["link", "rtt_ms", "semantic", "limit"])
        checks.append(F.check(f"H1{cid}", claim, F.Directional("above", negligible=neg), stat, unit, est, per,
                              scope=scope, reading=R_FIGURES))
    return F.finding("H1", "CUBIC keeps buffers fuller: latency & loss increase (CUBIC against NewReno)", checks)


def _h2(runs: pd.DataFrame) -> dict[str, Any]:
    checks = []
    unit = "fraction of voice packets"
    grid = {"part": ["grid"]}
    if (runs["part"] == "grid").any():
        est, per = semantic_difference(runs, "byte_loose", "byte_strict", grid, ["link", "rtt_ms", "cc"])
        checks.append(F.check(
            "H2a", "voice loss is higher under FB-loose than under FB-strict at the same byte limit",
            F.Directional("above", negligible=LOSS_NEGLIGIBLE), "difference of voice loss, FB-loose - FB-strict", unit,
            est, per, scope="main grid: every link, RTT, byte limit (10..100 kB) and TCP", reading=R_RULES))
        est, per = range_difference(runs, "byte_loose", "slot", grid)
        checks.append(F.check(
            "H2b", "voice loss is higher under FB-loose than under PS over the same range of nominal sizes",
            F.Directional("above", negligible=LOSS_NEGLIGIBLE),
            "difference of voice loss, FB-loose (mean over 10..100 kB) - PS (mean over 7..67 packets)", unit, est, per,
            scope="main grid: every link, RTT and TCP; PS n packets span n x 1500 B = 10.5..100.5 kB", reading=R_RULES))
    if (runs["part"] == "fine").any():
        for cid, ref, claim, scope in (
                ("c", "byte_strict", "…and over the fine sweep, at every phase of the limit against the packet size",
                 "fine sweep: FB-loose and FB-strict over the same limits, 52 500..67 500 B, ADSL1, 100 ms, both TCPs"),
                ("d", "slot", "…and against PS at the same nominal sizes in the fine sweep",
                 f"fine sweep: FB-loose over 52 500..67 500 B against PS over {FINE_PS[0]}..{FINE_PS[-1]} packets "
                 "(52 500..67 500 B nominal), ADSL1, 100 ms, both TCPs")):
            est, per = _fine_difference(runs, "byte_loose", ref)
            checks.append(F.check(
                f"H2{cid}", claim, F.Directional("above", negligible=LOSS_NEGLIGIBLE),
                f"difference of mean voice loss, FB-loose - {SEMANTIC_LABELS[ref]}", unit, est, per, scope=scope,
                reading=R_RULES))
    loose = runs[(runs["part"] == "grid") & (runs["semantic"] == "byte_loose")]
    if len(loose) and "tcp_loss" in loose:
        d = loose.assign(gap=loose["voice_loss"] - loose["tcp_loss"])
        est, per = level(d, "gap", {}, ["link", "rtt_ms", "cc"])
        checks.append(F.check(
            "H2e", "under FB-loose the voice's small packets are lost more often than the TCP's large ones",
            F.Directional("above", negligible=LOSS_NEGLIGIBLE),
            "voice loss proportion - TCP packet loss proportion, same run, FB-loose", "fraction of packets", est, per,
            scope="main grid, FB-loose: every link, RTT, limit and TCP", reading=R_TCP))
    return F.finding("H2", "FB-Loose disadvantages small, real-time multimedia packets", checks)


def _h3(fa: dict[str, Any]) -> dict[str, Any]:
    curves = fa.get("curves", {})
    checks = []

    def per_tcp(sem: str, key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        raw = [(v.name, curves[(sem, v.name)][key]) for v in VARIANTS
               if (sem, v.name) in curves and curves[(sem, v.name)][key]]
        return [e for _, e in raw], [{"cc": cc, **_public(e)} for cc, e in raw]

    for cid, sem, kind in (("a", "byte_loose", "min"), ("b", "byte_strict", "max")):
        ests, per = per_tcp(sem, "extremum")
        if not ests:
            continue
        word = "minima" if kind == "min" else "maxima"
        checks.append(F.check(
            f"H3{cid}", f"the {SEMANTIC_LABELS[sem]} loss curve's {word} lie around integer multiples of the packet "
                        f"size ({PACKET_BYTES} B), for each TCP",
            F.Every(F.Directional("below", threshold=CHANCE_DISTANCE_B)),
            f"mean distance of the {word} (one per 1500 B window around a multiple) to the multiple", "B",
            A.joint(ests), per,
            scope="fine sweep (ADSL1, 100 ms, 52 500..67 500 B in 30 B steps), each TCP on its own bootstrap interval; "
                  "headline: the mean of the two TCPs, resampled jointly", reading=R_EXTREMA,
            note=f"{CHANCE_DISTANCE_B:g} B = an extremum placed at random (packet / 4); flat windows have no extremum"))
    for cid, sem, side in (("c", "byte_loose", "below"), ("d", "byte_strict", "above")):
        rows = [(v.name, curves[(sem, v.name)]) for v in VARIANTS if (sem, v.name) in curves]
        if not rows:
            continue
        diffs = {cc: c["near"] - c["far"] for cc, c in rows}
        per = [{"cc": cc, **F.estimate(d)} for cc, d in diffs.items()]
        est = F.estimate(pd.concat(list(diffs.values()), axis=1).mean(axis=1))
        word = "lower" if side == "below" else "higher"
        checks.append(F.check(
            f"H3{cid}", f"{SEMANTIC_LABELS[sem]} loss is {word} at limits around the multiples of the packet size than "
                        "at the others, for each TCP",
            F.Every(F.Directional(side)),
            f"mean {SEMANTIC_LABELS[sem]} voice loss at limits closer than {PACKET_BYTES / 4:g} B to a multiple of "
            f"{PACKET_BYTES} B minus the mean at the other limits", "fraction of voice packets", est, per,
            scope="fine sweep (ADSL1, 100 ms, 52 500..67 500 B): half of the phases are 'around' a multiple; each TCP "
                  "on its own interval (per replication, paired)", reading=R_BANDS))
    # Extensions: tcplab's diagnostics of the same curves (shown, not part of the verdict).
    for cid, sem in (("e", "byte_loose"), ("f", "byte_strict")):
        ests, per = per_tcp(sem, "period")
        if not ests:
            continue
        res = ests[0]["resolution"]
        shifted = [{**p, "value": p["value"] - PACKET_BYTES, "ci": [x - PACKET_BYTES for x in p["ci"]]} for p in per]
        checks.append(F.check(
            f"H3{cid}", f"the {SEMANTIC_LABELS[sem]} loss curve repeats with the packet size ({PACKET_BYTES} B), "
                        "for each TCP",
            F.Every(F.Equivalent(res)), "dominant period of the voice-loss curve minus 1500 B", "B",
            A.joint(ests, shift=PACKET_BYTES), shifted, extension=True,
            scope="fine sweep; periodogram of the linearly detrended replication-mean curve; each TCP on its own "
                  "bootstrap interval",
            note=f"margin = the periodogram's resolution at 1500 B over the sweep (packet^2 / span = {res:g} B)",
            period_with_voice_B=F.num(fa.get("period_with_voice_B"))))
    corr = [(v.name, fa["correlation"][v.name]) for v in VARIANTS if v.name in fa.get("correlation", {})]
    if corr:
        checks.append(F.check(
            "H3g", "the FB-loose and FB-strict loss curves move in opposite directions over the fine sweep, for each TCP",
            F.Every(F.Directional("below")), "Pearson correlation of the FB-loose and FB-strict mean loss curves", "1",
            A.joint([c for _, c in corr]), [{"cc": cc, **_public(c)} for cc, c in corr], extension=True,
            scope="fine sweep; both curves resampled together (same core seeds); each TCP on its own bootstrap interval"))
    return F.finding("H3", "Byte-based queue sizes around integer multiples of TCP packet size correspond with lowest "
                           "FB-Loose loss & highest FB-Strict loss", checks)


def _h5_h6(runs: pd.DataFrame) -> list[dict[str, Any]]:
    series = runs[runs["part"] == "series"]
    h5, h6 = [], []
    for reading, sem, (c5, c6a, c6b) in ((R_LOOSE, "byte_loose", ("a", "a", "b")),
                                         (R_STRICT, "byte_strict", ("b", "c", "d"))):
        sub = series[series["semantic"] == sem]
        if not len(sub):
            continue
        scope = f"ADSL1, {SERIES_RTT_MS} ms, {SERIES_LIMITS[sem]:,} B {SEMANTIC_LABELS[sem]}"
        est, per = cc_difference(runs, "iowd_mean_s", {"part": ["series"], "semantic": [sem]})
        h5.append(F.check(f"H5{c5}", "CUBIC induces more one-way delay on the voice packets than NewReno",
                          F.Directional("above", negligible=DELAY_NEGLIGIBLE_S),
                          "difference of the voice packets' mean induced one-way delay, CUBIC - NewReno", "s", est, per,
                          scope=scope, reading=reading))
        if "coupling_r" not in sub:
            continue
        for cid, metric, claim, form, stat, unit in (
                (c6a, "coupling_r", "the congestion window and the induced queuing delay rise and fall together",
                 F.Every(F.Directional("above", threshold=COUPLING_R)),
                 "correlation of cwnd and downstream queue occupancy (bytes), both on a 10 ms grid", "1"),
                (c6b, "backoffs", "the congestion window oscillates (repeated back-offs)",
                 F.Every(F.Directional("above", threshold=OSCILLATION_BACKOFFS)),
                 "congestion-window back-offs (entries into recovery or loss)", "back-offs")):
            est, per = level(sub, metric, {}, ["cc"])
            h6.append(F.check(f"H6{cid}", claim, form, stat, unit, est, per,
                              scope=f"{scope}; the last two thirds of each run; each TCP on its own interval",
                              reading=reading))
    return [F.finding("H5", "CUBIC Induces More OWD Than NewReno", h5),
            F.finding("H6", "Congestion window oscillation coupled with induced queuing delay.", h6)]


_LEVEL_NAMES = {"iowd_mean_s": "mean induced one-way delay of the downstream voice packets",
                "voice_jitter_s": "mean |change of one-way delay| between consecutive downstream voice packets "
                                  "(RFC 3550's D, RFC 3393's IPDV)",
                "voice_loss": "downstream voice loss proportion"}


def _m1_m2(runs: pd.DataFrame) -> list[dict[str, Any]]:
    grid = runs[runs["part"] == "grid"]
    m1, m2 = [], []
    if len(grid):
        est, per = cc_difference(runs, "q_fill", {"part": ["grid"]}, ["link", "rtt_ms", "semantic"])
        m1.append(F.check("M1a", "NewReno and CUBIC fill the gateway's buffer differently", Differs(FILL_NEGLIGIBLE),
                          "difference of the time-averaged downstream queue fill, CUBIC - NewReno",
                          "fraction of the buffer", est, per,
                          scope="every link, RTT, drop rule and size of the main grid"))
        for cid, metric, claim, unit, threshold in (
                ("a", "iowd_mean_s", "the voice stream suffers latency (induced one-way delay)", "s", DELAY_NEGLIGIBLE_S),
                ("b", "voice_jitter_s", "the voice stream suffers jitter (delay variation between packets)", "s",
                 DELAY_NEGLIGIBLE_S),
                ("c", "voice_loss", "the voice stream suffers loss", "fraction of voice packets", LOSS_NEGLIGIBLE)):
            if metric not in grid or grid[metric].isna().all():
                continue
            est, per = level(runs, metric, {"part": ["grid"]}, ["link", "rtt_ms", "semantic"])
            m2.append(F.check(f"M2{cid}", claim, F.Directional("above", threshold=threshold), _LEVEL_NAMES[metric],
                              unit, est, per, scope="every link, RTT, drop rule, size and TCP of the main grid, pooled"))
        for cid, metric, claim, unit, threshold, where, scope in (
                ("d", "iowd_mean_s", "Collateral Damage to Voice Stream - Latency (the latency slide)", "s",
                 DELAY_NEGLIGIBLE_S, {"part": ["grid"], "semantic": [OWD_QUEUE[0]], "limit": [OWD_QUEUE[1]]},
                 f"the latency figure: {OWD_QUEUE[1]:,} B FB-loose, every link and RTT, both TCPs, pooled"),
                ("e", "voice_loss", "Collateral Damage to Voice Stream - Loss (the loss slide)",
                 "fraction of voice packets", LOSS_NEGLIGIBLE,
                 {"part": ["grid"], "link": [FINE_LINK], "rtt_ms": [FINE_RTT_MS]},
                 f"the loss figure: ADSL1, {FINE_RTT_MS} ms, every drop rule and size, both TCPs, pooled")):
            if not len(_select(runs, where)):
                continue
            est, per = level(runs, metric, where, ["link", "rtt_ms", "semantic"])
            m2.append(F.check(f"M2{cid}", claim, F.Directional("above", threshold=threshold), _LEVEL_NAMES[metric],
                              unit, est, per, scope=scope))
    return [F.finding("M1", "TCP CC algorithms each interact differently with network buffers", m1),
            F.finding("M2", "Real-time multimedia traffic sharing the gateway bottleneck experiences collateral damage: "
                            "latency/jitter and loss", m2)]


def _h4(runs: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """Extension: goodput against the PS queue length (the seed's goodput figure states no result).

    The whole finding is the extension (``finding(..., extension=True)``); its checks are
    its own and decide its verdict, which is shown apart from the seed's findings."""
    checks = []
    grid = runs[runs["part"] == "grid"]
    ps = grid[grid["semantic"] == "slot"]
    if len(ps) and ps["limit"].nunique() >= 2:
        smallest, largest = int(ps["limit"].min()), int(ps["limit"].max())
        rate = {link: link_rate(link, params.scenario_dir()) for link in params.links}
        rises, sat = [], []
        for (link, rtt), part in ps.groupby(["link", "rtt_ms"], sort=False):
            bdp = bdp_packets(rate[link], rtt)
            if bdp > smallest:
                rises.append((link, rtt))
            above = sorted(int(x) for x in part["limit"].unique() if x >= bdp)
            if above and above[0] < largest:
                sat.append((link, rtt, bdp, above[0]))
        if rises:
            sub = ps[[(l, r) in rises for l, r in zip(ps["link"], ps["rtt_ms"])]]
            sub = sub.assign(size=np.where(sub["limit"] == smallest, "small", np.where(sub["limit"] == largest, "large",
                                                                                      "")))
            _, est, per = F.paired(sub[sub["size"] != ""], "goodput_bps", "size", "large", "small", {}, relative=True,
                                   unit=["link", "rtt_ms", "cc", "rep", "size"])
            checks.append(F.check(
                "H4a", "downstream goodput rises with the PS queue length",
                F.Directional("above", negligible=GOODPUT_NEGLIGIBLE),
                f"relative change of goodput, PS {largest} vs PS {smallest} packets", "fraction", est, per,
                scope=f"every link and RTT whose BDP exceeds {smallest} packets, both TCPs"))
        if sat:
            parts = []
            for link, rtt, _, at in sat:
                p = ps[(ps["link"] == link) & (ps["rtt_ms"] == rtt) & ps["limit"].isin([at, largest])]
                parts.append(p.assign(size=np.where(p["limit"] == at, "bdp", "large")))
            _, est, per = F.paired(pd.concat(parts, ignore_index=True), "goodput_bps", "size", "large", "bdp", {},
                                   relative=True, unit=["link", "rtt_ms", "cc", "rep", "size"])
            bdp_of = {(l, r): (b, a) for l, r, b, a in sat}
            for c in per:
                b, a = bdp_of[(c["link"], c["rtt_ms"])]
                c["bdp_pkts"], c["ps_at_bdp"] = round(b, 2), a
            checks.append(F.check(
                "H4b", "…and saturates once the queue holds the BDP", F.Equivalent(SATURATION_MARGIN),
                f"relative change of goodput, PS {largest} packets vs the smallest PS size at or above the BDP",
                "fraction", est, per,
                scope="the links and RTTs whose BDP (rate x min RTT / 1500 B) lies inside the PS range, both TCPs"))
    return F.finding("H4", "Downstream goodput vs PS queue length (the seed's goodput figure; no result stated)",
                     checks, extension=True)


def evaluate_findings(runs: pd.DataFrame, params: StudyParams, fa: dict[str, Any] | None = None) -> dict[str, Any]:
    """Checks seed 003's sentences on the per-run table; returns the ``findings.json`` document.

    Comparisons are paired by replication (same core seed, so the same voice
    departures): per replication, the mean over the configurations in scope, then a
    95% Student-t interval over the replications (:func:`tcplab.studies.findings.paired`).
    H3's statistics are bootstraps over replications of the fine sweep's mean curves
    (:func:`tcplab.studies.home_gateway.analysis.fine_analysis`; pass ``fa`` to reuse
    one). Every finding is present; one whose configurations did not run is ``not run``.
    """
    fa = fa if fa is not None else A.fine_analysis(runs, params)
    findings = [_h1(runs), _h2(runs), _h3(fa), *_h5_h6(runs), *_m1_m2(runs), _h4(runs, params)]
    return F.document(NAME, SEED_STUDY, asdict(params), params.reps, params.links, F.METHOD, findings,
                      fine_replications=params.fine_replications() if params.has_fine() else 0,
                      series_replications=params.reps if SERIES_LINK in params.links else 0,
                      thresholds=THRESHOLDS, readings=READINGS)
