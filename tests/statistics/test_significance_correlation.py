"""Correlation-with-gold unit statistics (ts2viz.statistics.unit_correlation) against scipy, and a permutation
test of two metrics' mean per-prompt correlation with human ratings against exact enumeration."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from ts2viz.statistics.permutation_tests import permutation_test
from ts2viz.statistics.correlation import rankdata
from ts2viz.statistics.unit_correlation import correlation_statistic


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_statistic_matches_scipy(method):
    rng = np.random.default_rng(0)
    gold = [rng.integers(1, 6, size=8).astype(float), rng.normal(size=5)]
    f = correlation_statistic(gold, method)
    ref = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}[method]
    for u, g in enumerate(gold):
        rows = np.round(rng.normal(size=(30, g.size)), 1)           # ties in scores too
        got = f(u, rows)
        for r, v in zip(rows, got):
            assert v == pytest.approx(ref(r, g)[0], abs=1e-12)


def test_nan_and_constant_rows():
    f = correlation_statistic([np.array([1.0, 2.0, np.nan, 4.0])], "pearson")
    rows = np.array([[1.0, 2.0, 99.0, 3.0], [1.0, np.nan, 0.0, 3.0], [5.0, 5.0, 1.0, 5.0]])
    got = f(0, rows)
    assert got[0] == pytest.approx(sps.pearsonr([1, 2, 3], [1, 2, 4])[0])
    assert np.isnan(got[1]) and np.isnan(got[2])
    np.testing.assert_array_equal(rankdata(np.array([[3.0, 1.0, 3.0, 2.0]])), [[3.5, 1.0, 3.5, 2.0]])


def test_gold_permutation_test_exact():
    # two prompts of 4 and 5 images rated by humans; metric A follows the ratings, B less so
    rng = np.random.default_rng(1)
    human = [np.array([1.0, 3, 2, 5]), np.array([2.0, 2, 4, 1, 5])]
    a = [h + rng.normal(scale=0.5, size=h.size) for h in human]
    b = [h + rng.normal(scale=3.0, size=h.size) for h in human]
    res = permutation_test(a, b, correlation_statistic(human, "spearman"), exact=True)
    z = lambda v: (v - v.mean()) / v.std()   # noqa: E731
    za, zb = [z(x) for x in a], [z(x) for x in b]
    rho = lambda x, g: sps.spearmanr(x, g)[0]   # noqa: E731
    obs = np.mean([rho(x, g) for x, g in zip(za, human)]) - np.mean([rho(x, g) for x, g in zip(zb, human)])
    hits = 0
    for bits in itertools.product([0, 1], repeat=9):
        bits = np.array(bits, bool)
        sa = [np.where(bits[:4], zb[0], za[0]), np.where(bits[4:], zb[1], za[1])]
        sb = [np.where(bits[:4], za[0], zb[0]), np.where(bits[4:], za[1], zb[1])]
        d = np.mean([rho(x, g) for x, g in zip(sa, human)]) - np.mean([rho(x, g) for x, g in zip(sb, human)])
        hits += d >= obs - 1e-12
    assert res.difference == pytest.approx(obs)
    assert res.pvalue == pytest.approx(hits / 512)
