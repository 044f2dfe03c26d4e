"""Permutation tests and significance clusters (ts2viz.statistics) against exact enumeration written
out here, against plain loops over the same random draws, and on a hand-worked example."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ts2viz.errors import InputError
from ts2viz.statistics.permutation_tests import PermutationSettings, pairwise_unit_permutation, permutation_test
from ts2viz.statistics.clusters import significance_clusters


# -- references written from the definition ------------------------------------------------------------

def loop_unit_pvalues(values, settings, alternative="greater"):
    """Unit-swap tests pair by pair, permutation by permutation, with the documented draws."""
    S, M = values.shape
    out = np.full((M, M), np.nan)
    used_out = np.zeros((M, M), dtype=int)
    for i in range(M):
        for j in range(M):
            if i == j:
                continue
            a, b = values[:, i], values[:, j]
            observed = np.nanmean(a) - np.nanmean(b)
            rng = np.random.default_rng(settings.seed)
            hits = used = 0
            while used < settings.n_permutations:
                k = min(settings.block_size, settings.n_permutations - used)
                z = rng.random((k, S)) < 0.5
                for t in range(k):
                    pa = [b[s] if z[t, s] else a[s] for s in range(S)]
                    pb = [a[s] if z[t, s] else b[s] for s in range(S)]
                    d = np.nanmean(pa) - np.nanmean(pb)
                    if alternative == "two-sided":
                        hits += abs(d) >= abs(observed) - 1e-12
                    else:
                        hits += d >= observed - 1e-12
                used += k
                p = (hits + 1) / (used + 1)
                if p < settings.early_min or p > settings.early_max:
                    break
            out[i, j] = (hits + 1) / (used + 1)
            used_out[i, j] = used
    return out, used_out


def pearson(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.std() == 0 or y.std() == 0:
        return np.nan
    return float(np.corrcoef(x, y)[0, 1])


def exact_items_pvalue(a_units, b_units, gold_units, alternative="greater"):
    """Every swap pattern over all items; per-unit Pearson with the gold, mean over units."""
    def z(v):
        v = np.asarray(v, float)
        return (v - v.mean()) / v.std()

    A = [z(a) for a in a_units]
    B = [z(b) for b in b_units]
    obs = np.mean([pearson(a, g) for a, g in zip(A, gold_units)]) - \
        np.mean([pearson(b, g) for b, g in zip(B, gold_units)])
    n = sum(len(a) for a in A)
    hits = 0
    for bits in itertools.product([False, True], repeat=n):
        pos, ca, cb = 0, [], []
        for a, b, g in zip(A, B, gold_units):
            sw = np.array(bits[pos:pos + len(a)])
            pos += len(a)
            ca.append(pearson(np.where(sw, b, a), g))
            cb.append(pearson(np.where(sw, a, b), g))
        d = np.nanmean(ca) - np.nanmean(cb)
        hits += (abs(d) >= abs(obs) - 1e-12) if alternative == "two-sided" else (d >= obs - 1e-12)
    return hits / 2 ** n


def pearson_statistic(gold_units):
    """A vectorised per-unit statistic: Pearson r of each score row with the unit's gold."""
    def f(u, rows):
        g = np.asarray(gold_units[u], float)
        x = rows - rows.mean(1, keepdims=True)
        y = g - g.mean()
        den = np.sqrt((x * x).sum(1) * (y * y).sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (x @ y) / np.where(den > 0, den, 1), np.nan)
    return f


# -- unit swaps -----------------------------------------------------------------------------------------

def test_unit_swaps_exact_matches_enumeration():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(9, 3)) + np.array([0.6, 0.0, 0.2])
    v[2, 1] = np.nan
    res = pairwise_unit_permutation(v, exact=True)
    for i, j in itertools.permutations(range(3), 2):
        a, b = v[:, i], v[:, j]
        obs = np.nanmean(a) - np.nanmean(b)
        hits = 0
        for z in itertools.product([False, True], repeat=9):
            z = np.array(z)
            d = np.nanmean(np.where(z, b, a)) - np.nanmean(np.where(z, a, b))
            hits += d >= obs - 1e-12
        assert res.pvalue[i, j] == pytest.approx(hits / 2 ** 9, abs=0)
        assert res.n_used[i, j] == 2 ** 9


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_unit_swaps_match_plain_loop_with_early_stopping(alternative):
    rng = np.random.default_rng(2)
    v = rng.normal(size=(30, 4)) * 0.3 + np.array([0.5, 0.45, 0.1, 0.48])
    v[rng.random(v.shape) < 0.05] = np.nan
    st = PermutationSettings(n_permutations=400, block_size=50, seed=7)
    res = pairwise_unit_permutation(v, settings=st, alternative=alternative)
    want, used = loop_unit_pvalues(v, st, alternative)
    np.testing.assert_allclose(res.pvalue, want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(res.n_used, used)
    # the clearly separated pair stopped after one block, a close one ran longer
    assert res.n_used[0, 2] == 50 and res.n_used[0, 3] > 50


def test_monte_carlo_pvalue_converges_to_exact():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(12, 2)) + np.array([0.5, 0.0])
    exact = pairwise_unit_permutation(v, exact=True).pvalue[0, 1]
    st = PermutationSettings(n_permutations=20000, block_size=20000, seed=0)
    mc = pairwise_unit_permutation(v, settings=st).pvalue[0, 1]
    se = np.sqrt(exact * (1 - exact) / 20000)
    assert 0.01 < exact < 0.5
    assert abs(mc - exact) < 4 * se + 1 / 20001


# -- item swaps (PERM-BOTH) with a generic statistic ----------------------------------------------------

@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_item_swaps_exact_matches_enumeration(alternative):
    rng = np.random.default_rng(4)
    gold = [rng.normal(size=4), rng.normal(size=4), rng.normal(size=3)]
    a = [g + rng.normal(scale=0.5, size=g.size) for g in gold]
    b = [10 * rng.normal(size=g.size) for g in gold]          # another scale: standardised first
    res = permutation_test(a, b, pearson_statistic(gold), exact=True, alternative=alternative)
    assert res.exact and res.n_used == 2 ** 11
    assert res.pvalue == pytest.approx(exact_items_pvalue(a, b, gold, alternative), abs=1e-12)
    assert res.estimate_a == pytest.approx(np.mean([pearson(x, g) for x, g in zip(a, gold)]))


def test_item_swaps_monte_carlo_near_exact_and_loop():
    rng = np.random.default_rng(5)
    gold = [rng.normal(size=5), rng.normal(size=5)]
    a = [g + rng.normal(scale=1.0, size=5) for g in gold]
    b = [g + rng.normal(scale=2.0, size=5) for g in gold]
    exact = permutation_test(a, b, pearson_statistic(gold), exact=True).pvalue
    st = PermutationSettings(n_permutations=4000, block_size=4000, seed=3)
    mc = permutation_test(a, b, pearson_statistic(gold), settings=st)
    assert abs(mc.pvalue - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000) + 1 / 4001
    # plain loop over the same draws (one block of 4000, items of all units side by side)
    z = np.random.default_rng(3).random((4000, 10)) < 0.5
    za = [(x - x.mean()) / x.std() for x in a]
    zb = [(x - x.mean()) / x.std() for x in b]
    obs = np.mean([pearson(x, g) for x, g in zip(za, gold)]) - np.mean([pearson(x, g) for x, g in zip(zb, gold)])
    hits = 0
    for t in range(4000):
        ca = [pearson(np.where(z[t, 5 * u:5 * u + 5], zb[u], za[u]), gold[u]) for u in range(2)]
        cb = [pearson(np.where(z[t, 5 * u:5 * u + 5], za[u], zb[u]), gold[u]) for u in range(2)]
        hits += np.mean(ca) - np.mean(cb) >= obs - 1e-12
    assert mc.pvalue == pytest.approx((hits + 1) / 4001, abs=1e-15)


def test_units_scheme_of_generic_test_equals_table_test():
    rng = np.random.default_rng(6)
    gold = [rng.normal(size=6) for _ in range(10)]
    a = [g + rng.normal(size=6) for g in gold]
    b = [g + rng.normal(scale=3, size=6) for g in gold]
    st = PermutationSettings(n_permutations=300, block_size=100, seed=1)
    r = permutation_test(a, b, pearson_statistic(gold), swap="units", settings=st)
    f = pearson_statistic(gold)
    va = [f(u, ((x - x.mean()) / x.std())[None]) [0] for u, x in enumerate(a)]
    vb = [f(u, ((x - x.mean()) / x.std())[None])[0] for u, x in enumerate(b)]
    t = pairwise_unit_permutation(np.c_[va, vb], settings=st)
    assert r.pvalue == t.pvalue[0, 1] and r.n_used == t.n_used[0, 1]
    assert r.difference == pytest.approx(np.mean(va) - np.mean(vb))


def test_bad_arguments():
    with pytest.raises(InputError):
        PermutationSettings(n_permutations=0)
    with pytest.raises(InputError):
        PermutationSettings(early_min=0.6, early_max=0.5)
    with pytest.raises(InputError):
        pairwise_unit_permutation(np.zeros((3, 2)), alternative="less")
    with pytest.raises(InputError):
        permutation_test([np.zeros(3)], [np.zeros(4)], lambda u, r: r[:, 0])
    with pytest.raises(InputError):
        pairwise_unit_permutation(np.zeros((30, 2)), exact=True)


# -- clusters -------------------------------------------------------------------------------------------

# Hand-worked: 5 units, metrics A, B, C, D (means 0.82, 0.80, 0.50, 0.48). One-sided unit-swap p-values by
# enumerating the 2**5 sign patterns of the per-unit differences (a swap flips the sign of a difference):
#   A-B = [.1, -.1, .1, -.1, .1]: sum >= .1 iff >= 3 of 5 signs positive: 16/32 = 0.5
#   A-C, A-D, B-C, B-D: every difference positive: only the identity reaches the observed sum: 1/32
#   C-D = [.05, -.1, .05, .1, 0]: the 0 unit doubles every count; over the other four, sums >= .1:
#         (+.1, +.1) with any of the 4 (+-.05, +-.05); the 2 mixed (+-.1) with (+.05, +.05): 6/16 = 12/32
HAND = np.array([[0.9, 0.8, 0.5, 0.45],
                 [0.8, 0.9, 0.4, 0.5],
                 [0.9, 0.8, 0.6, 0.55],
                 [0.7, 0.8, 0.5, 0.4],
                 [0.8, 0.7, 0.5, 0.5]])


def test_hand_worked_pvalues_and_clusters():
    res = pairwise_unit_permutation(HAND, exact=True)
    p = res.pvalue
    assert p[0, 1] == pytest.approx(0.5)
    for i, j in [(0, 2), (0, 3), (1, 2), (1, 3)]:
        assert p[i, j] == pytest.approx(1 / 32)
    assert p[2, 3] == pytest.approx(12 / 32)
    names = ["A", "B", "C", "D"]
    cl = significance_clusters(names, res.estimate, p, alpha=0.05)
    assert cl.members() == [["A", "B"], ["C", "D"]]
    assert cl.cluster.tolist() == [1, 1, 2, 2]
    assert cl.pvalue_used[2] == pytest.approx(1 / 32)
    # Holm over the 6 higher-vs-lower pairs: the four 1/32 become 6/32 > 0.05: one cluster
    holm = significance_clusters(names, res.estimate, p, alpha=0.05, correction="holm")
    assert holm.members() == [["A", "B", "C", "D"]]
    # at alpha 0.01 nothing separates either
    assert significance_clusters(names, res.estimate, p, alpha=0.01).members() == [names]


def test_clusters_best_versus_any_member():
    # C is not beaten by the cluster's best A but is by its second member B: a new cluster only with "any"
    est = np.array([0.9, 0.8, 0.7])
    p = np.array([[np.nan, 0.3, 0.2],
                  [0.7, np.nan, 0.01],
                  [0.8, 0.99, np.nan]])
    names = ["A", "B", "C"]
    assert significance_clusters(names, est, p).members() == [["A", "B", "C"]]
    assert significance_clusters(names, est, p, against="any").members() == [["A", "B"], ["C"]]


def test_clusters_nan_metric_left_out():
    est = np.array([0.5, np.nan, 0.9])
    p = np.full((3, 3), 0.5)
    cl = significance_clusters(["a", "b", "c"], est, p)
    assert cl.cluster.tolist() == [1, 0, 1] and cl.members() == [["c", "a"]]
