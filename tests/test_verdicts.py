"""The verdict rules of ``tcplab.studies.findings``, on synthetic data with known truth.

Each test draws replications from a normal distribution whose mean (the true effect)
is known, builds the estimate the studies build (:func:`findings.estimate`), and
checks the verdict the rule gives. The generators are seeded, so each case is one
fixed draw; the sizes are chosen so that the expected verdict is the one a correct
rule gives with overwhelming probability (stated per case), not by luck of the seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplab.studies import findings as fnd


def draws(effect: float, n: int, sd: float = 1.0, seed: int = 0) -> dict:
    return fnd.estimate(np.random.default_rng(seed).normal(effect, sd, size=n))


# A directional claim "X raises Y" (above 0) with a negligible band of 0.05 sd.
RAISES = fnd.Directional("above", negligible=0.05)
NO_EFFECT = fnd.Equivalent(0.1)


@pytest.mark.parametrize("seed", range(5))
def test_a_true_effect_at_large_n_holds(seed: int) -> None:
    # effect 0.5 sd, n = 400: half-width ~0.1, so the interval excludes 0 (z ~ 10).
    assert RAISES.decide(draws(0.5, 400, seed=seed)) == fnd.HELD


@pytest.mark.parametrize("seed", range(5))
def test_a_true_opposite_effect_is_contradicted(seed: int) -> None:
    assert RAISES.decide(draws(-0.5, 400, seed=seed)) == fnd.CONTRADICTED


@pytest.mark.parametrize("seed", range(5))
def test_a_null_effect_at_small_n_is_inconclusive_for_both_forms(seed: int) -> None:
    # n = 3: half-width ~ 4.3 / sqrt(3) ~ 2.5 sd, far wider than the margins.
    est = draws(0.0, 3, seed=seed)
    assert RAISES.decide(est) == fnd.INCONCLUSIVE
    assert NO_EFFECT.decide(est) == fnd.INCONCLUSIVE


@pytest.mark.parametrize("seed", range(5))
def test_a_null_effect_at_large_n_contradicts_a_directional_claim_and_holds_no_effect(seed: int) -> None:
    # n = 40,000 at sd 1: half-width ~0.01, inside both the 0.05 band and the 0.1 margin.
    est = draws(0.0, 40_000, seed=seed)
    assert RAISES.decide(est) == fnd.CONTRADICTED
    assert NO_EFFECT.decide(est) == fnd.HELD


def test_a_real_effect_contradicts_a_no_effect_claim() -> None:
    assert NO_EFFECT.decide(draws(0.5, 400)) == fnd.CONTRADICTED


@settings(max_examples=300, deadline=None)
@given(centre=st.floats(-1, 1), half=st.floats(0, 2), widen=st.floats(0, 2), margin=st.floats(0.01, 1))
def test_widening_the_interval_never_makes_an_equivalence_claim_hold(centre: float, half: float, widen: float,
                                                                     margin: float) -> None:
    form = fnd.Equivalent(margin)
    narrow = {"value": centre, "ci": [centre - half, centre + half], "n": 10}
    wide = {"value": centre, "ci": [centre - half - widen, centre + half + widen], "n": 10}
    order = {fnd.HELD: 2, fnd.INCONCLUSIVE: 1, fnd.CONTRADICTED: 0}
    a, b = form.decide(narrow), form.decide(wide)
    assert not (b == fnd.HELD and a != fnd.HELD)
    # Widening moves towards inconclusive: never from held to contradicted or back.
    assert {a, b} != {fnd.HELD, fnd.CONTRADICTED}
    assert b == a or b == fnd.INCONCLUSIVE, (a, b, order)


@settings(max_examples=300, deadline=None)
@given(centre=st.floats(-1, 1), half=st.floats(0, 2), widen=st.floats(0, 2))
def test_widening_the_interval_never_decides_a_directional_claim(centre: float, half: float, widen: float) -> None:
    form = fnd.Directional("below", negligible=0.05)
    narrow = {"value": centre, "ci": [centre - half, centre + half], "n": 10}
    wide = {"value": centre, "ci": [centre - half - widen, centre + half + widen], "n": 10}
    a, b = form.decide(narrow), form.decide(wide)
    assert b == a or b == fnd.INCONCLUSIVE


def test_identical_replications_are_reported_as_exact_values() -> None:
    est = fnd.estimate([0.25] * 10)
    assert est["exact"] and est["value"] == 0.25 and est["n"] == 10
    c = fnd.check("X1", "IW10 raises it", fnd.Directional("above"), "difference", "s", est)
    assert c["verdict"] == fnd.HELD and c["statistic"]["exact"] and c["reps_needed"] is None
    assert fnd.check("X2", "no effect", fnd.Equivalent(0.1), "difference", "s", fnd.estimate([0.0] * 4))["verdict"] \
        == fnd.HELD
    # An exact zero contradicts a directional claim: there is no effect at all.
    assert fnd.Directional("above").decide(fnd.estimate([0.0] * 4)) == fnd.CONTRADICTED
    # Replications that differ are never exact, however close.
    assert not fnd.estimate([0.25, 0.25, 0.2500001])["exact"]


def test_an_inconclusive_check_says_how_many_replications_would_settle_it() -> None:
    # Observed effect 0.3 sd with n = 10: half-width ~ 2.26 * 1 / sqrt(10) ~ 0.72. The rule
    # n' = n (h / d)^2 then gives ~ 10 * (0.72 / 0.3)^2 ~ 57; at that n the t interval of the
    # same effect excludes zero.
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 1.0, size=10)
    x = (x - x.mean()) / x.std(ddof=1) + 0.3            # mean 0.3, sd 1 exactly
    est = fnd.estimate(x)
    c = fnd.check("X", "raises", fnd.Directional("above"), "d", "1", est)
    assert c["verdict"] == fnd.INCONCLUSIVE
    n = c["reps_needed"]
    assert 50 <= n <= 60
    from tcplab import stats
    half = stats.t_quantile(0.975, n - 1) / math.sqrt(n)
    assert 0.3 - half > 0


def test_quantifiers_every_share_only() -> None:
    up = {"value": 1.0, "ci": [0.5, 1.5], "n": 10}
    down = {"value": -1.0, "ci": [-1.5, -0.5], "n": 10}
    unsure = {"value": 0.1, "ci": [-0.5, 0.7], "n": 10}
    base = fnd.Directional("above")
    assert fnd.Every(base).decide({}, [up, up]) == fnd.HELD
    assert fnd.Every(base).decide({}, [up, unsure]) == fnd.INCONCLUSIVE
    assert fnd.Every(base).decide({}, [up, down]) == fnd.CONTRADICTED
    assert fnd.Share(base, 0.5).decide({}, [up, down, unsure, up]) == fnd.HELD
    assert fnd.Share(base, 0.75).decide({}, [up, down, unsure, up]) == fnd.INCONCLUSIVE
    assert fnd.Share(base, 0.75).decide({}, [up, down, down, up]) == fnd.CONTRADICTED
    only = fnd.Only(base, {"hops": [1]})
    assert only.decide({}, [{**up, "hops": 1}, {**down, "hops": 3}]) == fnd.HELD
    assert only.decide({}, [{**up, "hops": 1}, {**up, "hops": 3}]) == fnd.CONTRADICTED
    assert only.decide({}, [{**up, "hops": 1}, {**unsure, "hops": 3}]) == fnd.INCONCLUSIVE


def test_a_finding_combines_its_checks_and_leaves_extensions_out() -> None:
    def c(cid: str, v: str, **kw: object) -> dict:
        return {"id": cid, "verdict": v, "statistic": {}, "extension": False, "reading": None, **kw}

    assert fnd.finding("F", "x", [c("a", "held"), c("b", "held")])["verdict"] == fnd.HELD
    assert fnd.finding("F", "x", [c("a", "held"), c("b", "inconclusive")])["verdict"] == fnd.INCONCLUSIVE
    assert fnd.finding("F", "x", [c("a", "inconclusive"), c("b", "contradicted")])["verdict"] == fnd.CONTRADICTED
    assert fnd.finding("F", "x", [c("a", "held"), c("b", "contradicted", extension=True)])["verdict"] == fnd.HELD
    f = fnd.finding("F", "x", [c("a", "held", reading="equal mean RTT"),
                               c("b", "contradicted", reading="RTT grows with hops")])
    assert f["verdict"] == fnd.CONTRADICTED and f["reading_dependent"]
    assert f["readings"] == {"RTT grows with hops": fnd.CONTRADICTED, "equal mean RTT": fnd.HELD}


def test_a_document_whose_finding_verdict_disagrees_with_its_checks_is_refused() -> None:
    c = fnd.check("F1a", "raises", fnd.Directional("above"), "d", "s", {"value": 1.0, "ci": [0.5, 1.5], "n": 5})
    f = fnd.finding("F1", "raises", [c])
    f["verdict"] = fnd.CONTRADICTED
    with pytest.raises(ValueError, match="not the combination"):
        fnd.validate(fnd.document("s", "000", {}, 5, [], "m", [f]))
