"""PERM-BOTH on TS2: Ord's fast path (``metametrics.seg_ord``) against the leaderboard's own ``seg_stats``, the
swap kernel (``metametrics.swap_ord.SwapOrd``) against ``seg_ord`` on the explicit swapped rows, and the
all-pairs test (``perm_both_pairs``) against the one-pair test run with ``seg_stats`` for every permutation
(the per-permutation path, the benchmark's named baseline)."""
from __future__ import annotations

import numpy as np
import pytest

from ts2viz import Scores, bundled_scores, compute, load_dataset
from ts2viz.errors import InputError
from ts2viz.metametrics.walks import seg_ord, seg_stats
from ts2viz.metametrics.structure import seg_structure
from ts2viz.metametrics.intervals import averaged_segs
from ts2viz.metametrics.permutation import perm_both, perm_both_pairs
from ts2viz.metametrics.policy import resolve_policy
from ts2viz.metametrics.swap_ord import SwapOrd
from ts2viz.statistics.permutation_tests import PermutationSettings, permutation_test, standardise


@pytest.fixture(scope="module")
def ts2():
    ds, scores = load_dataset("ts2"), bundled_scores()
    return ds, scores


@pytest.mark.parametrize("policy", ["paper", "spec"])
def test_seg_ord_equals_seg_stats_on_every_ts2_seg(ts2, policy):
    """Released scores (ties in the QA metrics, NaN where a metric left an image out), mixes of two metrics'
    rows image by image (what PERM-BOTH scores), and continuous random rows: equal up to the rounding of the last divisions."""
    ds, scores = ts2
    rng = np.random.default_rng(7)
    checked = 0
    for seg in ds:
        st = seg_structure(seg, policy)
        x = scores.aligned(st.file_names, scores.metrics).T                  # (M, n)
        a, b = x[rng.integers(0, len(x), 40)], x[rng.integers(0, len(x), 40)]
        rows = np.concatenate([x, np.where(rng.random(a.shape) < 0.5, a, b),
                               rng.normal(size=(5, x.shape[1])), np.round(rng.normal(size=(5, x.shape[1])))])
        ref = seg_stats(st, rows, policy=policy)["ord"]
        new = seg_ord(st, rows, policy)
        assert np.array_equal(np.isnan(ref), np.isnan(new)), seg.id
        np.testing.assert_allclose(new, ref, rtol=0, atol=1e-13, err_msg=f"SEG {seg.id}")
        checked += 1
    assert checked == len(ds)


def test_seg_ord_constant_and_unscored_rows(ts2):
    ds, _ = ts2
    st = seg_structure(ds[0])
    n = len(st.file_names)
    rows = np.stack([np.zeros(n), np.full(n, np.nan), np.r_[np.full(n - 1, np.nan), 1.0]])
    ref = seg_stats(st, rows)["ord"]
    new = seg_ord(st, rows)
    assert np.array_equal(np.isnan(ref), np.isnan(new))
    assert new[0] == ref[0] == 0.0                      # a constant metric orders nothing
    assert np.isnan(new[1]) and np.isnan(new[2])        # fewer than two scored images on every walk


@pytest.mark.parametrize("policy", ["paper", "spec"])
def test_swap_kernel_equals_seg_ord_on_every_ts2_seg(ts2, policy):
    """Pairs of released (standardised) scores and of coarse random scores (ties within and across the two
    metrics), some SEGs with images left out by both metrics: rows A and B of every swap pattern equal
    ``seg_ord`` on the explicit rows, up to the rounding of the last divisions."""
    ds, scores = ts2
    pol = resolve_policy(policy)
    rng = np.random.default_rng(11)
    for seg in ds:
        st = seg_structure(seg, pol)
        z = np.stack([standardise(r) for r in scores.aligned(st.file_names, scores.metrics).T])   # (M, n)
        n = z.shape[1]
        pa, pb = rng.integers(0, len(z), 4), rng.integers(0, len(z), 4)
        coarse = rng.integers(0, 3, (2, 2, n)).astype(float)
        A, B = np.concatenate([z[pa], coarse[0]]), np.concatenate([z[pb], coarse[1]])
        out = np.isnan(A).any(0) | np.isnan(B).any(0) | (rng.random(n) < (0.25 if seg.id % 3 == 0 else 0.0))
        A[:, out], B[:, out] = np.nan, np.nan
        bits = rng.random((6, n)) < 0.5
        fast = SwapOrd(st, A, B, pol)(bits)                                  # (2, 6, pairs)
        for p in range(len(A)):
            rows = np.concatenate([np.where(bits, B[p], A[p]), np.where(bits, A[p], B[p])])
            ref = seg_ord(st, rows, pol)
            got = fast[:, :, p].ravel()
            assert np.array_equal(np.isnan(got), np.isnan(ref)), (seg.id, p)
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13, err_msg=f"SEG {seg.id}, pair {p}")


def test_swap_kernel_pair_subset_and_bad_rows(ts2):
    ds, scores = ts2
    st = seg_structure(ds[9])                                    # the largest SEG: 76 images, 300 walks
    z = np.stack([standardise(r) for r in scores.aligned(st.file_names, scores.metrics).T])
    kernel = SwapOrd(st, z[:8], z[8:16], resolve_policy("paper"))
    bits = np.random.default_rng(3).random((5, z.shape[1])) < 0.5
    every = kernel(bits)
    on = np.arange(8) % 3 == 1
    some = kernel(bits, on)
    assert np.isnan(some[:, :, ~on]).all()
    np.testing.assert_allclose(some[:, :, on], every[:, :, on], rtol=0, atol=1e-15)
    a = z[:2].copy()
    a[1, 0] = np.nan                                             # rows leaving out different images
    with pytest.raises(ValueError, match="same images"):
        SwapOrd(st, a, z[2:4], resolve_policy("paper"))


def _per_permutation_perm_both(mm, scores, a, b, settings):
    """The test as written before the fast path: ``seg_stats`` (all five statistics) per permuted row."""
    idx = averaged_segs(mm)["avg"]
    structures = [mm.walk_stats(mm.seg_ids[i])[0] for i in idx]
    a_units, b_units = [], []
    for st in structures:
        x = scores.aligned(st.file_names, [a, b])
        a_units.append(x[:, 0])
        b_units.append(x[:, 1])
    return permutation_test(a_units, b_units, lambda u, rows: seg_stats(structures[u], rows, policy=mm.policy)["ord"],
                            swap="items", settings=settings)


def test_all_pairs_equal_the_per_permutation_path(ts2):
    ds, scores = ts2
    names = ["DSG-InstructBLIP", "CLIPScore", "DSG-Fuyu"]     # average Ord 80.2, 71.4, 35.8 (paper policy)
    mm = compute(ds, scores, names, policy="paper")
    st = PermutationSettings(n_permutations=60, block_size=20, early_min=0.0, early_max=1.0)
    pairs = [(names[0], names[2]), (names[2], names[0]), (names[1], names[0])]
    res = perm_both_pairs(mm, scores, "ord_avg", pairs=pairs, settings=st)
    col = {m: k for k, m in enumerate(mm.metrics)}
    for a, b in pairs:
        ref = _per_permutation_perm_both(mm, scores, a, b, st)
        i, j = col[a], col[b]
        assert res.pvalue[i, j] == ref.pvalue and res.n_used[i, j] == ref.n_used == 60, (a, b)
        assert res.estimate[i] == pytest.approx(ref.estimate_a, abs=1e-12)
        assert res.estimate[j] == pytest.approx(ref.estimate_b, abs=1e-12)
        one = perm_both(mm, scores, a, b, "ord_avg", settings=st)          # the one-pair API, now fast too
        assert one.pvalue == ref.pvalue and one.n_used == ref.n_used
    # a discriminating check: DSG-InstructBLIP > DSG-Fuyu is significant, the reverse is not
    assert res.pvalue[col[names[0]], col[names[2]]] < 0.05 < res.pvalue[col[names[2]], col[names[0]]]
    untested = [(i, j) for i in range(len(names)) for j in range(len(names))
                if i != j and (mm.metrics[i], mm.metrics[j]) not in pairs]
    assert all(np.isnan(res.pvalue[i, j]) for i, j in untested)


def test_all_pairs_equal_the_per_permutation_path_with_nans_and_ties(ts2):
    """Scores with images left out: by both metrics of a pair (the kernel without those images), by one of
    them (that pair goes row by row), and a coarse metric (many ties, within it and with a rounded twin):
    every pair's p-value and permutation count equal the per-permutation path's, both directions."""
    ds, scores = ts2
    base = ["DSG-InstructBLIP", "CLIPScore", "TIFA-mPLUG"]
    vals = scores.aligned(scores.file_names, base)
    rng = np.random.default_rng(5)
    n = len(scores.file_names)
    both_out, one_out = rng.random(n) < 0.08, rng.random(n) < 0.08
    coarse = np.round(vals[:, 1] * 10) / 10                   # CLIPScore in steps of 0.1: heavy ties
    cols = np.stack([vals[:, 0], np.where(both_out, np.nan, vals[:, 1]), np.where(both_out, np.nan, coarse),
                     np.where(one_out, np.nan, vals[:, 2])], axis=1)
    names = ["DSG-InstructBLIP", "CLIP", "CLIP-coarse", "TIFA-holes"]
    sc = Scores(list(scores.file_names), names, cols)
    mm = compute(ds, sc, names, policy="paper")
    st = PermutationSettings(n_permutations=40, block_size=20, early_min=0.0, early_max=1.0)
    pairs = [("CLIP", "CLIP-coarse"), ("CLIP-coarse", "CLIP"), ("CLIP", "TIFA-holes"), ("DSG-InstructBLIP", "CLIP-coarse")]
    res = perm_both_pairs(mm, sc, "ord_avg", pairs=pairs, settings=st)
    col = {m: k for k, m in enumerate(mm.metrics)}
    for a, b in pairs:
        ref = _per_permutation_perm_both(mm, sc, a, b, st)
        assert res.pvalue[col[a], col[b]] == ref.pvalue and res.n_used[col[a], col[b]] == ref.n_used == 40, (a, b)
    # the pairs tell something apart: not every p-value is the same
    assert len({res.pvalue[col[a], col[b]] for a, b in pairs}) > 1


def test_early_stopping_per_pair_and_standardisation(ts2):
    ds, scores = ts2
    names = ["DSG-InstructBLIP", "DSG-Fuyu", "CLIPScore", "DSG-mPLUG"]
    mm = compute(ds, scores, names, policy="paper")
    col = {m: k for k, m in enumerate(mm.metrics)}
    st = PermutationSettings(n_permutations=300, block_size=100)
    res = perm_both_pairs(mm, scores, settings=st)
    for a, b in [("CLIPScore", "DSG-mPLUG"), ("DSG-Fuyu", "DSG-InstructBLIP")]:
        ref = perm_both(mm, scores, a, b, settings=st)
        assert res.pvalue[col[a], col[b]] == ref.pvalue and res.n_used[col[a], col[b]] == ref.n_used
    i, f = col["DSG-InstructBLIP"], col["DSG-Fuyu"]
    assert res.n_used[i, f] == res.n_used[f, i] == 100    # p = 1/101 < 0.02, and p > 0.5: stopped after a block
    assert res.n_used[col["CLIPScore"], col["DSG-mPLUG"]] == 300      # p between the bounds: ran to the end
    # standardisation is per SEG and metric: Ord is a rank statistic, so the estimates equal the leaderboard's
    np.testing.assert_allclose(res.estimate, mm.averages()["ord_avg"], atol=1e-12)
    assert standardise(np.array([1.0, 1.0])).tolist() == [0.0, 0.0]


def test_bad_input(ts2):
    ds, scores = ts2
    mm = compute(ds, scores, ["CLIPScore", "DSG-mPLUG"], policy="paper")
    with pytest.raises(InputError, match="no metric 'nope'"):
        perm_both_pairs(mm, scores, pairs=[("CLIPScore", "nope")])
    with pytest.raises(InputError, match="alternative"):
        perm_both_pairs(mm, scores, alternative="less")
