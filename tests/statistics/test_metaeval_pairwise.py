"""Pairwise accuracy with ties and tie calibration (ts2viz.metaeval.pairwise) against plain loops
written from Deutsch et al. (2023)'s definition, and hand-worked examples."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ts2viz.metaeval import (PairIndex, pair_counts, pairs_within, pairwise_accuracy,
                             tie_calibration)


def loop_accuracy(m, g, pairs, eps, gold_ties="include", metric_ties="wrong"):
    """acc_eq (or its variants) pair by pair, straight from the definition."""
    num = den = 0.0
    for i, j in pairs:
        if np.isnan(m[i]) or np.isnan(m[j]) or np.isnan(g[i]) or np.isnan(g[j]):
            continue
        gold_tie = g[i] == g[j]
        metric_tie = abs(m[i] - m[j]) <= eps
        if gold_tie and gold_ties == "exclude":
            continue
        den += 1
        if gold_tie:
            num += metric_tie
        elif metric_tie:
            num += 0.5 if metric_ties == "half" else 0.0
        else:
            num += (m[i] > m[j]) == (g[i] > g[j])
    return num / den if den else float("nan")


def test_hand_worked_example():
    # items: gold 3, 2, 2, 1; metric 0.9, 0.5, 0.5, 0.7
    gold = np.array([3, 2, 2, 1.0])
    metric = np.array([0.9, 0.5, 0.5, 0.7])
    pairs = pairs_within(np.zeros(4))
    assert len(pairs) == 6
    c = pair_counts(metric, gold, pairs)
    # (0,1) C, (0,2) C, (0,3) C, (1,2) both tie, (1,3) D, (2,3) D
    assert (c.concordant, c.discordant, c.ties_metric, c.ties_gold, c.ties_both) == (3, 2, 0, 0, 1)
    assert pairwise_accuracy(metric, gold, pairs) == pytest.approx(4 / 6)
    assert pairwise_accuracy(metric, gold, pairs, gold_ties="exclude") == pytest.approx(3 / 5)
    # epsilon 0.2 ties (1,3), (2,3) and (0,3): 0.2 = |0.9 - 0.7| up to rounding, so use 0.21
    c2 = pair_counts(metric, gold, pairs, 0.21)
    assert (c2.concordant, c2.discordant, c2.ties_metric, c2.ties_both) == (2, 0, 3, 1)
    assert pairwise_accuracy(metric, gold, pairs, 0.21) == pytest.approx(3 / 6)
    assert pairwise_accuracy(metric, gold, pairs, 0.21, gold_ties="exclude", metric_ties="half") == \
        pytest.approx((2 + 1.5) / 5)


def test_pairs_within_matches_itertools():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 7, size=40)
    distinct = rng.integers(0, 3, size=40)
    got = set(zip(*(a.tolist() for a in (pairs_within(groups).first, pairs_within(groups).second))))
    want = {(i, j) for i, j in itertools.combinations(range(40), 2) if groups[i] == groups[j]}
    assert got == want
    p = pairs_within(groups, require_distinct=distinct)
    assert set(zip(p.first.tolist(), p.second.tolist())) == {(i, j) for i, j in want if distinct[i] != distinct[j]}
    assert len(pairs_within([1])) == 0 and len(pairs_within([1, 2, 3])) == 0


@pytest.mark.parametrize("gold_ties", ["include", "exclude"])
@pytest.mark.parametrize("metric_ties", ["wrong", "half"])
def test_vectorised_matches_loop_and_calibration_is_the_best_threshold(gold_ties, metric_ties):
    rng = np.random.default_rng(1)
    n = 30
    groups = rng.integers(0, 4, size=n)
    gold = rng.integers(1, 4, size=n).astype(float)       # many gold ties, as Likert ratings
    metrics = np.stack([
        np.round(rng.random(n), 1),                       # many metric ties
        rng.random(n),                                    # continuous
        gold + rng.normal(0, 0.5, n),                     # informative
    ])
    metrics[0, 3] = np.nan
    gold[5] = np.nan
    pairs = pairs_within(groups)
    plist = list(zip(pairs.first.tolist(), pairs.second.tolist()))
    for eps in (0.0, 0.05, 0.3):
        got = pairwise_accuracy(metrics, gold, pairs, eps, gold_ties=gold_ties, metric_ties=metric_ties)
        want = [loop_accuracy(m, gold, plist, eps, gold_ties, metric_ties) for m in metrics]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    cal = tie_calibration(metrics, gold, pairs, gold_ties=gold_ties, metric_ties=metric_ties)
    for r, m in enumerate(metrics):
        diffs = {abs(m[i] - m[j]) for i, j in plist if not np.isnan(m[i] - m[j])}
        grid = sorted({0.0, *diffs})
        accs = [loop_accuracy(m, gold, plist, e, gold_ties, metric_ties) for e in grid]
        best = max(accs)
        assert cal.accuracy[r] == pytest.approx(best, abs=1e-12)
        assert cal.epsilon[r] == pytest.approx(grid[accs.index(best)], abs=0)   # the smallest best
        assert pairwise_accuracy(m, gold, pairs, cal.epsilon[r], gold_ties=gold_ties,
                                 metric_ties=metric_ties) == pytest.approx(best, abs=1e-12)


def test_calibration_predicts_ties_only_where_they_pay():
    # gold: two tied pairs and one ordered pair; a continuous metric that is close on the tied items
    gold = np.array([1.0, 1.0, 2.0, 2.0])
    metric = np.array([0.10, 0.11, 0.50, 0.52])
    pairs = PairIndex(np.array([0, 2, 0]), np.array([1, 3, 2]))
    assert pairwise_accuracy(metric, gold, pairs) == pytest.approx(1 / 3)
    cal = tie_calibration(metric, gold, pairs)
    assert cal.epsilon == pytest.approx(0.02) and cal.accuracy == pytest.approx(1.0)
    # without gold ties nothing is gained by tying
    cal_ex = tie_calibration(metric, gold, pairs, gold_ties="exclude")
    assert cal_ex.epsilon == 0.0 and cal_ex.accuracy == 1.0


def test_bad_arguments():
    p = pairs_within([0, 0])
    with pytest.raises(ValueError, match="gold_ties"):
        pairwise_accuracy([1, 2], [1, 2], p, gold_ties="maybe")
    with pytest.raises(ValueError, match="items"):
        pairwise_accuracy([1, 2, 3], [1, 2], p)
    assert np.isnan(pairwise_accuracy([np.nan, 1], [1, 2], p))
