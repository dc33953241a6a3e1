"""Statistics (tcplab.stats) against hand-worked values."""

import math

import numpy as np
import pandas as pd
import pytest

from tcplab import stats


@pytest.mark.parametrize(
    "p, df, expected",
    [  # Student-t table values
        (0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 4, 2.7764), (0.975, 10, 2.2281),
        (0.975, 30, 2.0423), (0.95, 5, 2.0150), (0.995, 20, 2.8453), (0.975, 1e6, 1.9600), (0.025, 4, -2.7764),
    ],
)
def test_t_quantiles_match_the_table(p: float, df: float, expected: float) -> None:
    assert stats.t_quantile(p, df) == pytest.approx(expected, abs=1e-4)


def test_mean_ci_hand_worked() -> None:
    # x = 1..5: mean 3, s = sqrt(2.5) = 1.58114, se = 0.707107, half = 2.776445 * 0.707107 = 1.963243
    est = stats.mean_ci([1, 2, 3, 4, 5, float("nan")])
    assert (est.value, est.n) == (3.0, 5)
    assert est.low == pytest.approx(3 - 1.963243, abs=1e-6) and est.high == pytest.approx(3 + 1.963243, abs=1e-6)
    one = stats.mean_ci([4.0])
    assert one.value == 4.0 and math.isnan(one.low)


def test_bootstrap_percentile_is_seeded_and_covers() -> None:
    x = np.random.default_rng(1).normal(10, 2, 200)
    a = stats.percentile_ci(x, 90, seed=3)
    b = stats.percentile_ci(x, 90, seed=3)
    assert a == b and a.low < a.value < a.high
    assert a.value == pytest.approx(np.percentile(x, 90))


def test_ecdf_and_jain() -> None:
    xs, ps = stats.ecdf([3, 1, 2, float("nan")])
    assert xs.tolist() == [1, 2, 3] and ps.tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    assert stats.jain_index([1, 2, 3]) == pytest.approx(36 / 42)  # (1+2+3)^2 / (3 * (1+4+9))
    assert stats.jain_index([7, 7]) == 1.0 and stats.jain_index([1, 0, 0, 0]) == 0.25
    assert math.isnan(stats.jain_index([0, 0]))


def test_relative_throughput_pairs_flow_by_flow() -> None:
    test = pd.DataFrame({"seed": [0, 0, 1], "name": ["a", "b", "a"], "goodput_bps": [2.0, 3.0, 4.0]})
    ref = pd.DataFrame({"seed": [0, 0, 1], "name": ["b", "a", "a"], "goodput_bps": [6.0, 1.0, 0.0]})
    # Pairs: (0,a) 2/1, (0,b) 3/6, (1,a) 4/0 -> NaN, ignored: (2 + 0.5) / 2 = 1.25
    assert stats.relative_throughput(test, ref) == 1.25


def test_loss_rate_and_utilisation() -> None:
    q = pd.DataFrame({"enq_pkts": [95, 0], "drops_overflow": [3, 0], "drops_early": [1, 0],
                      "drops_forced": [1, 0], "drops_corruption": [2, 0]})
    lr = stats.loss_rate(q)
    assert lr[0] == pytest.approx(7 / 100) and math.isnan(lr[1])
    links = pd.DataFrame({"rate_bps": [2_000_000], "tx_bytes": [250_000], "utilisation": [0.5]})
    assert stats.utilisation(links, duration_s=2.0)[0] == pytest.approx(0.5)  # 2e6 bit / (2e6 * 2 s)
