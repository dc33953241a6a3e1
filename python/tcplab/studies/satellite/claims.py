"""Seed 004's claims as checks: the findings of the ``satellite`` study.

Each finding is one result sentence of the seed (``docs/seeds/004_af47799115785341.txt``,
slides "Slow-Start overshoot problem", "Conclusions" and "Conclusions (cont'd)", and two
lines of "TCP variants under study"); ``ledger.toml`` quotes every sentence of the seed
and names the finding and checks that test it. The claim forms are
:mod:`tcplab.studies.findings`'s, chosen from the seed's words before any run:

- a plain comparison ("performs better", "yields better performance") is a
  :class:`~tcplab.studies.findings.Directional` claim with a negligible band
  (:data:`NEGLIGIBLE_REL`), read two ways: on average over the test cases in scope, and
  in most of them (:class:`~tcplab.studies.findings.Share`, more than half);
- "significantly" and "very poorly" get sizes stated here (:data:`SIGNIFICANT_REL`,
  :data:`VERY_POOR_REL`), tcplab's choices as the seed gives no number;
- "in particular when", "slower error recovery" are
  :class:`~tcplab.studies.findings.Contrast` claims on per-replication differences of
  effects;
- "in some test cases" is a :class:`~tcplab.studies.findings.Share` of at least one
  configuration;
- "multiple segments" is a :class:`~tcplab.studies.findings.Directional` claim above
  one segment.

Performance is the elapsed time of the transfer (the seed's figures plot "Elapsed
Time vs Error model"): from the SYN to the last byte of the last flow. Scopes are the
seed's: its two TCPs (Reference, Enhanced) unless the sentence names another, every
DAMA mode, SLACP setting, error model and workload the sentence does not exclude, and
its "reduced set of tests" (VBDC, SLACP, 1 MB) for CBI and DAASS. Cases tcplab adds
(CBI and no DAASS on every 1 MB configuration; RBDC with a 1 s grant timeout) are
extensions: shown, never part of a verdict.

The seed's "Initial window of 4 segments (RFC 3390)" reads two ways at its MSS of
1410 B: 4 segments (the ``enhanced`` profile, the verdicts) and RFC 3390's byte formula,
which caps the window at 4380 B (3.1 segments; 4 segments only for MSS <= 1095 B).
:func:`evaluate_findings` checks every finding again on the runs with 4380 B
(``setup_readings`` in ``findings.json``), so the report says where a verdict depends on
that reading.

"Longer capacity allocation delay → slower error recovery" (S4) is read two ways: by
DAMA mode, CRA against the on-demand modes that wait for an allocation (S4a, S4b: the
time link errors add to a transfer), and with the allocation delay itself varied (S4c,
the allocation-delay probe of :mod:`.configs`: the time after one burst until the rate at
which data reaches the gateway is back at its pre-burst level, at 11, 21 and 42
superframes; S4d, the same in steady state, added after S4c's verdict).

Example:
    >>> most(72), some(72) * 72
    (0.5138888888888888, 1.0)
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Sequence

import pandas as pd

from tcplab.studies import findings as fnd
from tcplab.studies.findings import Contrast, Directional, Every, Share
from tcplab.studies.satellite import analysis
from tcplab.studies.satellite.analysis import (combine_pairs, contrast, error_cost, levels, paired, paired_arms,
                                               per_config, pooled)
from tcplab.studies.satellite.configs import (ALLOC_DELAYS_SF, BASE_TCP, DAMA_MODES, ERROR_LABELS, HIGH_ERRORS,
                                              HORIZON_S, LEVEL, LOSSY_ERRORS, LOW_ERRORS, NAME, RBDC_DIAGNOSTIC,
                                              RECOVERY_DESIGNS, RECOVERY_RUN, RFC3390_VARIANTS, SEED_STUDY,
                                              SEED_SUBSET, VARIANTS, WINDOW_S, StudyParams)

__all__ = ["NEGLIGIBLE_REL", "SIGNIFICANT_REL", "VERY_POOR_REL", "NEGLIGIBLE_DROPS", "MULTIPLE_SEGMENTS",
           "NEGLIGIBLE_TIME_S", "NEGLIGIBLE_COST_S", "NEGLIGIBLE_OCC_BYTES", "NEGLIGIBLE_RECOVERY_S", "ON_AVERAGE",
           "IN_MOST", "most", "some", "FINDING_IDS", "RFC3390_READING", "evaluate_findings", "findings_of",
           "rfc3390_frame", "diagnostics"]

# --------------------------------------------------------------------------------------
# Sizes, margins and readings, stated before any run

#: A relative difference in elapsed time inside +-1% counts as none: 1% is 0.6-1 s on
#: these 62-120 s transfers, about one GEO round trip, below what the seed's elapsed-time
#: figures can show (tcplab's choice).
NEGLIGIBLE_REL = 0.01
#: "Improving TCP performance significantly" read as a size: a transfer at least 10%
#: shorter (tcplab's choice; the seed gives no number).
SIGNIFICANT_REL = 0.10
#: "TCP performs very poorly with RBDC": a transfer at least 25% longer than over CRA,
#: the mode the seed finds best, at the same error rates (tcplab's choice; the seed
#: gives no number).
VERY_POOR_REL = 0.25
#: A difference in drops per run inside +-0.5 counts as none: drops are whole packets.
NEGLIGIBLE_DROPS = 0.5
#: "Losing multiple segments": more than one segment in one overshoot.
MULTIPLE_SEGMENTS = 1.0
#: A difference in the time of the first overflow drop inside +-0.1 s counts as none:
#: about one packet's transmission (91 ms for 1450 B at 128 kbit/s).
NEGLIGIBLE_TIME_S = 0.1
#: A difference in the time link errors add to a transfer inside +-1 s counts as none
#: (1% of a 100 s transfer, as :data:`NEGLIGIBLE_REL`).
NEGLIGIBLE_COST_S = 1.0
#: A difference in the mean occupancy of the terminal's buffer inside +-1450 B (one
#: MTU-sized packet) counts as none.
NEGLIGIBLE_OCC_BYTES = 1450.0
#: A difference in recovery time after a burst inside +-0.1 s counts as none: about one
#: packet's transmission (as :data:`NEGLIGIBLE_TIME_S`), below the 265-557 ms by which the
#: probe's allocation delays differ (S4c).
NEGLIGIBLE_RECOVERY_S = 0.1

#: The two readings of a generic comparison in the seed's conclusions.
ON_AVERAGE = "on average over the test cases in scope"
IN_MOST = "in most test cases in scope (more than half, each on its own interval)"

#: Every finding, in report order (each is in ``findings.json`` even when not run).
FINDING_IDS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "S11", "S12", "S13", "S14", "X1")

_REL = "fraction"


def most(n: int) -> float:
    """The share of ``n`` configurations that is "most": more than half, ``(floor(n/2) + 1) / n``.

    Example:
        >>> most(4) * 4, most(5) * 5
        (3.0, 3.0)
    """
    return (n // 2 + 1) / n if n > 0 else 1.0


def some(n: int) -> float:
    """The share of ``n`` configurations that is "some": at least one, ``1 / n``."""
    return 1 / n if n > 0 else 1.0


def _below(threshold: float = 0.0, negligible: float | None = NEGLIGIBLE_REL) -> Directional:
    return Directional("below", threshold, negligible)


def _above(threshold: float = 0.0, negligible: float | None = NEGLIGIBLE_REL) -> Directional:
    return Directional("above", threshold, negligible)


def _names(values: Sequence[str]) -> str:
    """Error models or DAMA modes as the seed names them."""
    return ", ".join(v.upper() if v in DAMA_MODES else ERROR_LABELS.get(v, v) for v in values)


def evaluate_findings(rm: pd.DataFrame, params: StudyParams, recovery: pd.DataFrame | None = None,
                      per_table: pd.DataFrame | None = None) -> dict[str, Any]:
    """Checks seed 004's result sentences; returns the ``findings.json`` document.

    Every finding of :data:`FINDING_IDS` is present; one whose configurations were not
    run (for example the high error models with ``--set errors=none``) is ``not run``.
    ``recovery`` is the allocation-delay probe's table (S4c). The verdicts are those of
    the ``enhanced`` profile's initial window (the seed's 4 segments); ``setup_readings``
    gives every finding's verdict again with RFC 3390's 4380 B (:func:`rfc3390_frame`),
    when those runs exist. ``per_table`` (:func:`~.analysis.per_table`) is copied in.
    """
    found = findings_of(rm, params, recovery)
    doc = fnd.document(NAME, SEED_STUDY, asdict(params), params.reps, ["geo"], fnd.METHOD, found)
    doc["diagnostics"] = diagnostics(rm)
    if recovery is not None and len(recovery):
        doc["recovery"] = [fnd.clean(r) for r in analysis.recovery_summary(recovery).to_dict("records")]
    if per_table is not None and len(per_table):
        doc["per_table"] = [fnd.clean(r) for r in per_table.to_dict("records")]
    alt = rfc3390_frame(rm)
    if alt is not None:
        alt_rec = rfc3390_frame(recovery) if recovery is not None and len(recovery) else None
        doc["setup_readings"] = [{
            "name": RFC3390_READING,
            "changes": 'tcp.iw = "rfc3390" (4380 B) for Enhanced TCP and its CBI and no-DAASS variants',
            "findings": [{"id": f["id"], "verdict": f["verdict"], "readings": f.get("readings"),
                          "checks": [{"id": c["id"], "verdict": c["verdict"], "extension": c["extension"],
                                      "value": c["statistic"]["value"], "ci": c["statistic"]["ci"],
                                      "unit": c["statistic"]["unit"]} for c in f["checks"]]}
                         for f in findings_of(alt, params, alt_rec)]}]
    return doc


#: The second reading of the set-up (:data:`tcplab.studies.satellite.configs.RFC3390_VARIANTS`).
RFC3390_READING = ("Enhanced TCP's initial window = RFC 3390's byte formula, 4380 B (3.1 segments of 1410 B), "
                   "instead of the seed's 4 segments")


def rfc3390_frame(rm: pd.DataFrame) -> pd.DataFrame | None:
    """The runs as if Enhanced TCP's initial window were RFC 3390's 4380 B: the ``-rfc3390`` variants renamed.

    The Enhanced variants with the profile's window (4 segments) are left out and
    ``enhanced-rfc3390``, ``enhanced-rfc3390+cbi``, ``enhanced-rfc3390-daass`` take their
    names; Reference TCP is unchanged. The RBDC-timeout diagnostic has no such runs and is
    left out. ``None`` when the study ran without them. Works on the runs and on the
    allocation-delay probe's table alike.

    Example:
        >>> rm = pd.DataFrame({"dama": ["cra"] * 3, "variant": ["reference", "enhanced", "enhanced-rfc3390"]})
        >>> rfc3390_frame(rm)["variant"].tolist()
        ['reference', 'enhanced']
    """
    if not len(rm) or not rm["variant"].isin(RFC3390_VARIANTS).any():
        return None
    keep = rm["dama"].isin(DAMA_MODES) & ~rm["variant"].isin(VARIANTS[1:])
    out = rm[keep].copy()
    out["variant"] = out["variant"].str.replace("-rfc3390", "", regex=False)
    return out.reset_index(drop=True)


def findings_of(rm: pd.DataFrame, params: StudyParams, recovery: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Every finding of :data:`FINDING_IDS`, checked on the runs ``rm`` and the probe's ``recovery`` table
    (see :func:`evaluate_findings`)."""
    main = rm[rm["dama"].isin(DAMA_MODES)] if len(rm) else rm
    base = main[main["variant"].isin(BASE_TCP)] if len(main) else main
    ran = set(main["error"]) if len(main) else set()
    errors = [e for e in params.errors if e in ran]
    high = [e for e in HIGH_ERRORS if e in errors]
    low = [e for e in LOW_ERRORS if e in errors]
    lossy = [e for e in LOSSY_ERRORS if e in errors]
    clean = "none" in errors
    every = "every DAMA mode, SLACP setting and workload"
    checks: dict[str, list[dict[str, Any]]] = {fid: [] for fid in FINDING_IDS}
    check = fnd.check

    def add(fid: str, c: dict[str, Any]) -> None:
        checks[fid].append(c)

    if len(main):
        # S1 ------------------------------------------------------------------------
        _, est1, per1 = paired(base, "elapsed_s", "variant", "enhanced", "reference", {})
        stat = "relative change of elapsed time, Enhanced vs Reference"
        scope = f"{every}, error models {_names(errors)}"
        add("S1", check("S1a", "Enhanced TCP performs better than Reference TCP", _below(), stat, _REL, est1, per1,
                        scope=scope, reading=ON_AVERAGE))
        add("S1", check("S1b", "Enhanced TCP performs better than Reference TCP", Share(_below(), most(len(per1))),
                        stat, _REL, est1, per1, scope=scope, reading=IN_MOST))

        # S2 ------------------------------------------------------------------------
        off, e_off, _ = paired(base, "elapsed_s", "variant", "enhanced", "reference", {"slacp": [False]})
        on, e_on, _ = paired(base, "elapsed_s", "variant", "enhanced", "reference", {"slacp": [True]})
        add("S2", check("S2a", "Enhanced TCP's gain over Reference TCP is larger without SLACP than with it",
                        Contrast("below", negligible=NEGLIGIBLE_REL),
                        "relative change of elapsed time Enhanced vs Reference, SLACP off minus SLACP on", _REL,
                        contrast(off, on), scope=f"every DAMA mode and workload, error models {_names(errors)}",
                        gain_without_slacp=fnd.clean(e_off), gain_with_slacp=fnd.clean(e_on)))

        # S3 ------------------------------------------------------------------------
        if high:
            _, est, per = paired(base, "elapsed_s", "slacp", True, False, {"error": high})
            stat = "relative change of elapsed time, SLACP on vs off"
            scope = f"error models {_names(high)}; every DAMA mode and workload; Reference and Enhanced TCP"
            claim = "SLACP improves TCP performance when the link-error rate is high"
            add("S3", check("S3a", claim, _below(), stat, _REL, est, per, scope=scope,
                            reading=f"{ON_AVERAGE}; significantly = a clear improvement"))
            add("S3", check("S3b", claim, Share(_below(), most(len(per))), stat, _REL, est, per, scope=scope,
                            reading=f"{IN_MOST}; significantly = a clear improvement"))
            add("S3", check("S3c", claim + ", by at least 10%", _below(-SIGNIFICANT_REL), stat, _REL, est, per,
                            scope=scope, reading=f"{ON_AVERAGE}; significantly = at least 10% shorter transfers"))

        # S4 ------------------------------------------------------------------------
        cost = error_cost(base)
        if clean and lossy and len(cost):
            stat = "extra seconds link errors add to the transfer, difference between DAMA modes"
            scope = (f"error models {_names(lossy)} (each minus the same run on the error-free link); {every}; "
                     "Reference and Enhanced TCP")
            steps = {(t, r): paired(cost, "error_cost_s", "dama", t, r, {}, relative=False)
                     for t, r in (("rbdc", "cra"), ("vbdc", "cra"), ("vbdc", "rbdc"))}

            def step_rows(keys: list[tuple[str, str]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
                rows = [{"comparison": f"{t.upper()} - {r.upper()}", **steps[(t, r)][1]} for t, r in keys]
                return pooled(*(steps[k][0] for k in keys)), rows

            est, rows = step_rows([("rbdc", "cra"), ("vbdc", "cra")])
            add("S4", check("S4a", "errors cost more time with on-demand allocation (RBDC, VBDC) than with CRA",
                            Every(Contrast("above", negligible=NEGLIGIBLE_COST_S)), stat, "s", est, rows, scope=scope,
                            reading="longer allocation delay: RBDC and VBDC against CRA"))
            est, rows = step_rows([("rbdc", "cra"), ("vbdc", "rbdc")])
            add("S4", check("S4b", "errors cost more time in the order CRA < RBDC < VBDC",
                            Every(Contrast("above", negligible=NEGLIGIBLE_COST_S)), stat, "s", est, rows, scope=scope,
                            reading="allocation delay in the order of the next line: CRA < RBDC < VBDC"))

        # S5 ------------------------------------------------------------------------
        stat = "relative change of elapsed time between DAMA modes"
        scope = f"every SLACP setting and workload, error models {_names(errors)}, Reference and Enhanced TCP"
        r_c = paired(base, "elapsed_s", "dama", "rbdc", "cra", {})
        v_c = paired(base, "elapsed_s", "dama", "vbdc", "cra", {})
        v_r = paired(base, "elapsed_s", "dama", "vbdc", "rbdc", {})
        rows = [{"comparison": "RBDC vs CRA", **r_c[1]}, {"comparison": "VBDC vs CRA", **v_c[1]}]
        add("S5", check("S5a", "CRA yields best performance: RBDC and VBDC are slower than CRA", Every(_above()), stat,
                        _REL, pooled(r_c[0], v_c[0]), rows, scope=scope, reading=ON_AVERAGE))
        add("S5", check("S5b", "RBDC performs better than VBDC", _above(),
                        "relative change of elapsed time, VBDC vs RBDC", _REL, v_r[1], v_r[2], scope=scope,
                        reading=ON_AVERAGE))
        best = combine_pairs([r_c[0], v_c[0]], lambda d: d.min(axis=1))
        per = per_config(best)
        add("S5", check("S5c", "CRA yields best performance", Share(_above(), most(len(per))),
                        "relative change of elapsed time, the faster of RBDC and VBDC vs CRA", _REL,
                        pooled(best), per, scope=scope, reading=IN_MOST))
        add("S5", check("S5d", "RBDC performs better than VBDC", Share(_above(), most(len(v_r[2]))),
                        "relative change of elapsed time, VBDC vs RBDC", _REL, v_r[1], v_r[2], scope=scope,
                        reading=IN_MOST))

        # S6 ------------------------------------------------------------------------
        if high:
            scope = f"error models {_names(high)}; every SLACP setting and workload; Reference and Enhanced TCP"
            hr, est, per = paired(base, "elapsed_s", "dama", "rbdc", "cra", {"error": high})
            add("S6", check("S6a", "with high error rates TCP over RBDC is at least 25% slower than over CRA",
                            _above(VERY_POOR_REL), "relative change of elapsed time, RBDC vs CRA", _REL, est, per,
                            scope=scope))
            _, est, per = paired(base, "elapsed_s", "dama", "rbdc", "vbdc", {"error": high})
            add("S6", check("S6b", "with high error rates RBDC is the worst DAMA mode: slower than VBDC too", _above(),
                            "relative change of elapsed time, RBDC vs VBDC", _REL, est, per, scope=scope,
                            reading="very poorly = the worst DAMA mode at high error rates"))
            if low:
                lr, e_lr, _ = paired(base, "elapsed_s", "dama", "rbdc", "cra", {"error": low})
                add("S6", check("S6c", "RBDC's penalty against CRA is larger at high error rates than at low ones",
                                Contrast("above", negligible=NEGLIGIBLE_REL),
                                "relative change of elapsed time RBDC vs CRA, high minus low error rates", _REL,
                                contrast(hr, lr), scope=f"{scope}; low: {_names(low)}",
                                reading="very poorly = RBDC suffers from link errors more than CRA does",
                                penalty_at_low_errors=fnd.clean(e_lr)))

        # S7 ------------------------------------------------------------------------
        enh = main[main["variant"] == "enhanced"]
        if lossy:
            scope = f"Enhanced TCP; error models {_names(lossy)}; every DAMA mode and workload"
            _, est, per = paired(enh, "elapsed_s", "slacp", True, False, {"error": lossy})
            add("S7", check("S7a", "SLACP still shortens Enhanced TCP's transfers over a lossy link", _below(),
                            "relative change of elapsed time, SLACP on vs off (Enhanced TCP)", _REL, est, per,
                            scope=scope, reading="link-layer error recovery is still needed with Enhanced TCP"))
            _, est, per = paired_arms(main, "elapsed_s", {"variant": "enhanced", "slacp": False},
                                      {"variant": "reference", "slacp": True}, {"error": lossy})
            add("S7", check("S7b", "Enhanced TCP without SLACP is slower than Reference TCP with SLACP", _above(),
                            "relative change of elapsed time, Enhanced without SLACP vs Reference with SLACP", _REL,
                            est, per, scope=f"error models {_names(lossy)}; every DAMA mode and workload",
                            reading="the TCP enhancements do less than the link layer"))
        rows, tables = [], []
        for d in ("rbdc", "vbdc"):
            t, e, _ = paired(enh, "elapsed_s", "dama", d, "cra", {})
            rows.append({"comparison": f"{d.upper()} vs CRA", **e})
            tables.append(t)
        add("S7", check("S7c", "Enhanced TCP is slower over RBDC and VBDC than over CRA", Every(_above()),
                        "relative change of elapsed time, on-demand DAMA vs CRA (Enhanced TCP)", _REL, pooled(*tables),
                        rows, scope=f"Enhanced TCP; every SLACP setting and workload; error models {_names(errors)}",
                        reading="the capacity allocation must be fixed too"))

        # S8 ------------------------------------------------------------------------
        if clean:
            _, est, per = levels(base, "overshoot_drops", {"error": ["none"]})
            stat = "segments lost to buffer overflow in the initial slow start's overshoot, per run"
            scope = f"error-free link (every loss is an overflow); {every}; Reference and Enhanced TCP"
            claim = "the exponential opening of cwnd overflows the terminal's buffer and loses multiple segments"
            add("S8", check("S8a", claim, _above(MULTIPLE_SEGMENTS, None), stat, "segments", est, per, scope=scope,
                            reading=ON_AVERAGE))
            add("S8", check("S8b", claim, Every(_above(MULTIPLE_SEGMENTS, None)), stat, "segments", est, per,
                            scope=scope, reading="in every error-free test case"))

        # S9 ------------------------------------------------------------------------
        _, est, per = paired(base, "overshoot_drops", "variant", "enhanced", "reference", {}, relative=False)
        add("S9", check("S9a", "the overshoot is more serious for Enhanced TCP: it loses more segments",
                        _above(negligible=NEGLIGIBLE_DROPS),
                        "difference of segments lost in the initial slow start's overshoot, Enhanced - Reference",
                        "segments", est, per, scope=f"{every}, error models {_names(errors)}"))
        if clean:
            _, est, per = paired(base, "overshoot_s", "variant", "enhanced", "reference", {"error": ["none"]},
                                 relative=False)
            add("S9", check("S9b", "Enhanced TCP is more aggressive: its slow start overflows the buffer sooner",
                            _below(negligible=NEGLIGIBLE_TIME_S),
                            "difference of the time of the first overflow drop, Enhanced - Reference", "s", est, per,
                            scope=f"error-free link; {every}"))

        # S10 -----------------------------------------------------------------------
        add("S10", check("S10a", "Enhanced TCP is slower than Reference TCP in some test cases",
                         Share(_above(), some(len(per1))), "relative change of elapsed time, Enhanced vs Reference",
                         _REL, est1, per1, scope=f"{every}, error models {_names(errors)}",
                         note=f"some = at least one of {len(per1)}", reading="decreased = slower than Reference TCP"))
        # The arrow: in the test cases where Enhanced TCP is slower, is its overshoot larger?
        cfg = ["dama", "slacp", "error", "n_flows"]
        slower = {tuple(c[k] for k in cfg) for c in per1 if _above().decide(c) == fnd.HELD}
        d_pairs, _, d_per = paired(base, "overshoot_drops", "variant", "enhanced", "reference", {}, relative=False)
        if len(d_pairs):
            d_pairs = d_pairs[[tuple(r) in slower for r in d_pairs[cfg].itertuples(index=False)]]
        add("S10", check("S10b", "where Enhanced TCP is slower, its overshoot is larger (the arrow of the sentence)",
                         Every(_above(negligible=NEGLIGIBLE_DROPS)),
                         "difference of segments lost in the initial slow start's overshoot, Enhanced - Reference",
                         "segments", pooled(d_pairs), [c for c in d_per if tuple(c[k] for k in cfg) in slower],
                         scope=f"the {len(slower)} test cases where S10a finds Enhanced TCP slower",
                         reading="decreased = slower than Reference TCP"))
        # CBI's reused ssthresh ends slow start before the buffer overflows (S11b): Enhanced TCP
        # against itself without the overshoot, where the seed ran CBI, and beyond (extension).
        for cid, where, ext in (("S10c", SEED_SUBSET, False), ("S10d", {"n_flows": [1]}, True)):
            _, est, per = paired(main, "elapsed_s", "variant", "enhanced", "enhanced+cbi", where)
            if not per:
                continue
            scope = ("the seed's reduced set: VBDC, SLACP, 1 MB" if not ext else
                     "every 1 MB configuration: every DAMA mode and SLACP setting") + f"; error models {_names(errors)}"
            add("S10", check(cid, "Enhanced TCP is slower than Enhanced TCP without the overshoot (CBI) in some test "
                                  "cases", Share(_above(), some(len(per))),
                             "relative change of elapsed time, Enhanced vs Enhanced with CBI ssthresh reuse", _REL,
                             est, per, scope=scope, note=f"some = at least one of {len(per)}", extension=ext,
                             reading="decreased = slower than without the overshoot (CBI removes it, S11b)"))

        # S11, S12 --------------------------------------------------------------------
        subset = "the seed's reduced set: VBDC, SLACP, 1 MB"
        every_1mb = f"every 1 MB configuration: {every.replace(' and workload', '')}"
        for fid, variant, name in (("S11", "enhanced+cbi", "CBI"), ("S12", "enhanced-daass", "no DAASS")):
            mk = fid + "{}"
            _, est_t, per_t = paired(main, "elapsed_s", "variant", variant, "enhanced", SEED_SUBSET)
            _, est_d, per_d = paired(main, "overshoot_drops", "variant", variant, "enhanced", SEED_SUBSET,
                                     relative=False)
            _, ext_t, ext_pt = paired(main, "elapsed_s", "variant", variant, "enhanced", {"n_flows": [1]})
            _, ext_d, ext_pd = paired(main, "overshoot_drops", "variant", variant, "enhanced", {"n_flows": [1]},
                                      relative=False)
            if not per_t:
                continue
            t_stat = f"relative change of elapsed time, {name} vs Enhanced"
            d_stat = f"difference of segments lost in the initial slow start's overshoot, {name} - Enhanced"
            scope = f"{subset}; error models {_names(errors)}"
            if fid == "S11":
                add(fid, check(mk.format("a"), "CBI with ssthresh reuse shortens Enhanced TCP's transfers", _below(),
                               t_stat, _REL, est_t, per_t, scope=scope))
                add(fid, check(mk.format("b"), "CBI with ssthresh reuse reduces the slow-start overshoot",
                               _below(negligible=NEGLIGIBLE_DROPS), d_stat, "segments", est_d, per_d, scope=scope))
                ext = ("c", "d")
            else:
                add(fid, check(mk.format("a"), "DAASS makes TCP too aggressive: it loses more segments in the "
                                               "overshoot", _below(negligible=NEGLIGIBLE_DROPS), d_stat, "segments",
                               est_d, per_d, scope=scope))
                if clean:
                    _, est, per = paired(main, "overshoot_s", "variant", variant, "enhanced",
                                         {**SEED_SUBSET, "error": ["none"]}, relative=False)
                    add(fid, check(mk.format("b"), "DAASS opens cwnd faster in the initial slow start: without it "
                                                   "the buffer overflows later", _above(negligible=NEGLIGIBLE_TIME_S),
                                   f"difference of the time of the first overflow drop, {name} - Enhanced", "s", est,
                                   per, scope=f"{subset}; error-free link"))
                add(fid, check(mk.format("c"), "disabling DAASS shortens Enhanced TCP's transfers", _below(), t_stat,
                               _REL, est_t, per_t, scope=scope))
                ext = ("d", "e")
            add(fid, check(mk.format(ext[0]), f"{name} shortens Enhanced TCP's transfers beyond the seed's reduced set",
                           _below(), t_stat, _REL, ext_t, ext_pt, scope=f"{every_1mb}; error models {_names(errors)}",
                           extension=True))
            add(fid, check(mk.format(ext[1]), f"{name} reduces the overshoot beyond the seed's reduced set",
                           _below(negligible=NEGLIGIBLE_DROPS), d_stat, "segments", ext_d, ext_pd,
                           scope=f"{every_1mb}; error models {_names(errors)}", extension=True))

        # S13 -----------------------------------------------------------------------
        _, est, per = paired(base, "elapsed_s", "n_flows", 4, 1, {})
        stat = "relative change of elapsed time (until the last flow ends), 4 x 250 kB vs 1 x 1 MB"
        scope = f"every DAMA mode and SLACP setting, error models {_names(errors)}, Reference and Enhanced TCP"
        claim = "four TCP flows transfer 1 MB faster than one"
        add("S13", check("S13a", claim, _below(), stat, _REL, est, per, scope=scope, reading=ON_AVERAGE))
        add("S13", check("S13b", claim, Share(_below(), most(len(per))), stat, _REL, est, per, scope=scope,
                         reading=IN_MOST))

        # S14 -----------------------------------------------------------------------
        if clean:
            _, est, per = paired(base, "overshoot_s", "n_flows", 4, 1, {"error": ["none"]}, relative=False)
            add("S14", check("S14a", "four flows are more aggressive: their slow start overflows the buffer sooner",
                             _below(negligible=NEGLIGIBLE_TIME_S),
                             "difference of the time of the first overflow drop, 4 flows - 1 flow", "s", est, per,
                             scope="error-free link; every DAMA mode and SLACP setting; Reference and Enhanced TCP",
                             reading="aggressive = fills the terminal's buffer sooner"))
        _, est, per = paired(base, "occ_mean_bytes", "n_flows", 4, 1, {}, relative=False)
        add("S14", check("S14b", "four flows are more aggressive: they keep more data queued at the terminal",
                         _above(negligible=NEGLIGIBLE_OCC_BYTES),
                         "difference of the mean occupancy of the terminal's IP buffer, 4 flows - 1 flow", "B", est,
                         per, scope=f"every DAMA mode and SLACP setting, error models {_names(errors)}, Reference and "
                                    "Enhanced TCP", reading="aggressive = keeps the terminal's buffer fuller"))

    # S4c, S4d: the allocation delay itself varied (the allocation-delay probe) -----------
    rec = recovery[recovery["variant"].isin(BASE_TCP)] if recovery is not None and len(recovery) else None
    for cid, design in (("S4c", "early"), ("S4d", "steady")):
        part = rec[rec["design"] == design] if rec is not None and len(rec) else None
        if part is None or not len(part):
            continue
        tables, rows = [], []
        for d in ("rbdc", "vbdc"):
            for short, long in zip(ALLOC_DELAYS_SF, ALLOC_DELAYS_SF[1:]):
                pairs, est, _ = fnd.paired(part, "recovery_s", "alloc_delay_sf", long, short, {"dama": [d]},
                                           relative=False, unit=RECOVERY_RUN)
                if len(pairs):
                    tables.append(pairs)
                    rows.append({"comparison": f"{d.upper()} {long} vs {short} superframes", **est})
        if not rows:
            continue
        size, lo, hi = RECOVERY_DESIGNS[design]["bytes"], *(x / 1e3 for x in RECOVERY_DESIGNS[design]["start_ms"])
        when = ("" if design == "early" else "; in steady state (a second reading, added after S4c's verdict: at "
                "20-35 s of the 1 MB transfer many senders were still repairing their slow-start overshoot)")
        add("S4", check(cid, "error recovery is slower with a longer allocation delay",
                        Every(Contrast("above", negligible=NEGLIGIBLE_RECOVERY_S)),
                        "recovery time after one burst, longer minus shorter allocation delay", "s",
                        pooled(*tables), rows,
                        scope="the allocation-delay probe: RBDC and VBDC at "
                              f"{', '.join(map(str, ALLOC_DELAYS_SF))} superframes, each step per mode pooled over "
                              f"SLACP off and on and Reference and Enhanced TCP; {size.replace('MB', ' MB')}, one "
                              f"burst of 100-300 ms at {lo:g}-{hi:g} s per replication",
                        reading="longer allocation delay: the DAMA allocation delay varied directly; slower error "
                                "recovery = a longer time from the end of a burst until every window of "
                                f"{WINDOW_S:g} s carries {LEVEL:.0%} of the pre-burst delivered rate again (within "
                                f"{HORIZON_S:g} s)" + when))

    # X1 (extension: tcplab's diagnostic) ---------------------------------------------
    diag = rm[(rm["dama"] == RBDC_DIAGNOSTIC)] if len(rm) else rm
    if len(diag):
        sub = rm[(rm["n_flows"] == 1) & rm["variant"].isin(BASE_TCP) & rm["error"].isin(set(diag["error"]))]
        scope = f"1 MB, Reference and Enhanced TCP, SLACP off and on, error models {_names(sorted(set(diag['error'])))}"
        for cid, ref, claim in (("X1a", "rbdc", "RBDC with a 1 s grant timeout is faster than with the default 318 ms"),
                                ("X1b", "vbdc", "RBDC with a 1 s grant timeout is faster than VBDC")):
            _, est, per = paired(sub, "elapsed_s", "dama", RBDC_DIAGNOSTIC, ref, {})
            add("X1", check(cid, claim, _below(), f"relative change of elapsed time, RBDC (1 s) vs {ref.upper()}", _REL,
                            est, per, scope=scope))

    claims = {
        "S1": "Enhanced TCP performs better than Reference TCP",
        "S2": "... in particular when link layer error recovery with SLACP is not present",
        "S3": "SLACP is extremely useful when the link-error rate is high, improving TCP performance significantly",
        "S4": "Longer capacity allocation delay → slower error recovery",
        "S5": "CRA yields best performance, while RBDC performs better than VBDC",
        "S6": "With high error rates TCP performs very poorly with RBDC",
        "S7": "Enhancing TCP is not enough",
        "S8": "The exponential opening of the congestion window results in overshooting the router queue in ST and "
              "losing multiple segments",
        "S9": "Overshoot more serious for the Enhanced TCP as it is more aggressive",
        "S10": "Slow-start overshoot → Enhanced TCP performance decreased in some test cases",
        "S11": "TCP CBI with ssthresh reuse is helpful to attack the problem",
        "S12": "Acknowledging all segments immediately (DAASS) makes TCP too aggressive → disabling DAASS helps too",
        "S13": "Using four TCP flows to transfer the same amount of data yields better performance compared to the "
               "case of one TCP flow",
        "S14": "... makes transfer more aggressive",
        "X1": "tcplab's diagnostic: RBDC's penalty comes from its grant lapsing between TCP's windows (a 1 s grant "
              "timeout instead of 318 ms removes most of it)",
    }
    return [fnd.finding(fid, claims[fid], checks[fid], extension=fid.startswith("X")) for fid in FINDING_IDS]


def diagnostics(rm: pd.DataFrame) -> dict[str, Any]:
    """The RBDC-timeout diagnostic as a table: RBDC with a 1 s grant timeout against the default, VBDC and CRA.

    The default grant lapses whenever the terminal sends nothing for 12 superframes,
    which a GEO round trip of TCP (> 0.5 s) does in every slow-start round and after every
    timeout, so each restart waits one allocation delay. With a 1 s timeout the grant
    survives those pauses.
    """
    if not len(rm):
        return {}
    sub = rm[(rm["n_flows"] == 1) & rm["variant"].isin(BASE_TCP)]
    diag_errors = set(sub.loc[sub["dama"] == RBDC_DIAGNOSTIC, "error"])
    if not diag_errors:
        return {}
    sub = sub[sub["error"].isin(diag_errors)]
    out: dict[str, Any] = {"scope": "1 MB, Reference and Enhanced, SLACP off and on, error models "
                                    + ", ".join(sorted(diag_errors))}
    for name, (test, ref) in {"rbdc_1s_vs_rbdc": (RBDC_DIAGNOSTIC, "rbdc"), "rbdc_1s_vs_vbdc": (RBDC_DIAGNOSTIC, "vbdc"),
                              "rbdc_vs_vbdc": ("rbdc", "vbdc"), "rbdc_1s_vs_cra": (RBDC_DIAGNOSTIC, "cra")}.items():
        _, est, per = paired(sub, "elapsed_s", "dama", test, ref, {})
        out[name] = {**fnd.clean(est), "per_config": [fnd.clean(c) for c in per]}
    return out
