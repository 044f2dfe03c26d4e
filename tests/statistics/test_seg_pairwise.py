"""Pairwise accuracy on SEGs (ts2viz.metaeval.seg_pairwise): pairs from the walks, accuracy against a loop
from the definition, a tie threshold never fitted on the SEG it scores, chance baselines against random
scores, intervals."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.metaeval import pairwise_accuracy, tie_calibration
from ts2viz.metaeval.seg_pairwise import fold_assignment, pairwise_intervals, seg_pairwise, walk_pairs
from ts2viz.scores import Scores
from ts2viz.metametrics.intervals import resample_counts


@pytest.fixture(scope="module")
def ts2():
    ds = load_dataset("ts2")
    sc = bundled_scores().select(["CLIPScore", "TIFA-GPT4V", "DSG-BLIP1"])
    return ds, sc, compute(ds, sc)


def loop_pairs(st):
    """Pairs of images on a common walk, from the walks' node lists."""
    out = set()
    for walk in st.walk_nodes:
        imgs = sorted({i for i in range(len(st.file_names)) if st.node_of[i] in walk})
        out |= set(itertools.combinations(imgs, 2))
    return out


def test_walk_pairs_match_walks(ts2):
    _, _, mm = ts2
    st = mm.walk_stats(mm.seg_ids[0])[0]
    p, gold = walk_pairs(st)
    got = set(zip(p.first.tolist(), p.second.tolist()))
    assert got == loop_pairs(st)
    # SEG 0: nodes of 1, 5, 3 and 3 images; walks 0>1>3 and 0>2>3: the 15 pairs of node 1 x node 2 share no walk
    assert len(got) == 66 - 15
    assert (gold == -st.levels).all()
    for sid in mm.seg_ids[::17]:
        st = mm.walk_stats(sid)[0]
        p, _ = walk_pairs(st)
        assert set(zip(p.first.tolist(), p.second.tolist())) == loop_pairs(st)


def loop_acc(m, g, pairs, eps):
    num = den = 0
    for i, j in pairs:
        if np.isnan(m[i]) or np.isnan(m[j]):
            continue
        den += 1
        tie = abs(m[i] - m[j]) <= eps
        num += tie if g[i] == g[j] else (not tie and (m[i] > m[j]) == (g[i] > g[j]))
    return num / den if den else np.nan


def test_accuracy_matches_loop_and_threshold_is_cross_validated(ts2):
    ds, sc, mm = ts2
    res = seg_pairwise(mm, sc, folds=4, seed=3)
    assert res.fold.max() == 3 and (res.fold[[mm.seg_ids.index(s) for s in mm.excluded]] == -1).all()
    # each fold's threshold is the tie calibration of the other folds' pooled pairs
    items, golds, pairs, seg_of = [], [], [], []
    off = 0
    for s, sid in enumerate(mm.seg_ids):
        st = mm.walk_stats(sid)[0]
        p, g = walk_pairs(st)
        items.append(sc.aligned(st.file_names, list(mm.metrics)))
        golds.append(g)
        pairs += [(i + off, j + off) for i, j in zip(p.first, p.second)]
        seg_of += [s] * len(p)
        off += g.size
    X, G = np.concatenate(items).T, np.concatenate(golds)
    pairs, seg_of = np.array(pairs), np.array(seg_of)
    from ts2viz.metaeval import PairIndex

    for f in range(4):
        train = np.isin(seg_of, np.flatnonzero((res.fold != f) & (res.fold >= 0)))
        fit = tie_calibration(X, G, PairIndex(pairs[train, 0], pairs[train, 1])).epsilon
        s = int(np.flatnonzero(res.fold == f)[0])
        np.testing.assert_array_equal(res.epsilon[s], fit)
    for s in range(0, len(mm.seg_ids), 23):
        mine = pairs[seg_of == s]
        for k in range(len(mm.metrics)):
            assert res.accuracy[s, k] == pytest.approx(loop_acc(X[k], G, mine, res.epsilon[s, k]), abs=1e-12)


def test_threshold_never_sees_the_seg_it_scores(ts2):
    ds, sc, mm = ts2
    res = seg_pairwise(mm, sc)
    s = 5
    st = mm.walk_stats(mm.seg_ids[s])[0]
    values = sc.values.copy()
    rows = [sc.file_names.index(f) for f in st.file_names]
    values[rows] = np.round(values[rows] * 2) / 2          # this SEG's scores made coarse: many ties
    changed = Scores(list(sc.file_names), list(sc.metrics), values, set(sc.lower_is_better))
    res2 = seg_pairwise(mm, changed)
    np.testing.assert_array_equal(res2.epsilon[s], res.epsilon[s])
    other = np.flatnonzero((res.fold != res.fold[s]) & (res.fold >= 0))[0]
    assert not np.array_equal(res2.accuracy[s], res.accuracy[s])
    # SEGs of other folds are scored with thresholds fitted on folds that include SEG s: they may change,
    # SEG s's own fold-mates use the same threshold as SEG s
    mate = np.flatnonzero(res.fold == res.fold[s])[1]
    np.testing.assert_array_equal(res2.epsilon[mate], res.epsilon[mate])
    assert other != s


def test_chance_baselines_match_random_scores(ts2):
    ds, _, mm = ts2
    files = [f for sid in mm.seg_ids for f in mm.walk_stats(sid)[0].file_names]
    files = list(dict.fromkeys(files))
    rng = np.random.default_rng(0)
    accs, tie_rate, chance, chance_t = [], [], [], []
    for rep in range(3):
        vals = np.c_[rng.random(len(files)), rng.integers(0, 3, len(files)) / 2.0]
        sc = Scores(files, ["random", "random-3-levels"], vals)
        res = seg_pairwise(mm, sc, metrics=sc.metrics, gold_ties="include")
        av = res.averages()
        accs.append(av["pacc_avg"])
        chance.append(av["pacc_chance_avg"][0])
        chance_t.append(av["pacc_chance_ties_avg"])
        tie_rate.append(av["pacc_tie_rate_avg"])
    accs, chance_t = np.mean(accs, 0), np.mean(chance_t, 0)
    # continuous random scores: no ties, accuracy at the no-tie chance level
    assert accs[0] == pytest.approx(np.mean(chance), abs=0.01)
    # random scores on 3 levels tie a third of the pairs (the calibrated threshold stays below one level
    # step), and score at the chance level of that tie rate
    assert np.mean(tie_rate, 0)[1] == pytest.approx(1 / 3, abs=0.02) and np.mean(tie_rate, 0)[0] < 0.01
    assert accs[1] == pytest.approx(chance_t[1], abs=0.015)


def test_exclude_gold_ties_and_per_seg_definition(ts2):
    ds, sc, mm = ts2
    res = seg_pairwise(mm, sc, gold_ties="exclude", metric_ties="half")
    s = 10
    st = mm.walk_stats(mm.seg_ids[s])[0]
    p, g = walk_pairs(st)
    x = sc.aligned(st.file_names, list(mm.metrics)).T
    want = pairwise_accuracy(x, g, p, res.epsilon[s], gold_ties="exclude", metric_ties="half")
    np.testing.assert_allclose(res.accuracy[s], want)
    assert np.nanmax(res.chance_random) == 0.5


def test_intervals_and_folds(ts2):
    ds, sc, mm = ts2
    res = seg_pairwise(mm, sc)
    iv = pairwise_intervals(res, resample_counts(mm, n_resamples=400, seed=1))
    assert iv.cells == ("pacc_avg", "pacc_synth", "pacc_nat", "pacc_real")
    assert (iv.low <= iv.estimate).all() and (iv.estimate <= iv.high).all()
    np.testing.assert_allclose(iv.estimate[0], res.averages()["pacc_avg"])
    f = fold_assignment(["a"] * 7 + ["b"] * 5, 3, 0)
    assert sorted(np.bincount(f).tolist()) == [4, 4, 4]
    with pytest.raises(Exception):
        seg_pairwise(mm, sc, folds=1)


def test_few_segs_leave_one_out_or_exact_ties():
    ds = load_dataset("ts2")
    sc = bundled_scores().select(["CLIPScore", "ALIGNScore"])
    mm = compute(ds, sc, seg_ids=[3, 50, 120])
    res = seg_pairwise(mm, sc)
    assert res.folds == 3 and sorted(res.fold.tolist()) == [0, 1, 2]
    mm1 = compute(ds, sc, seg_ids=[3])
    one = seg_pairwise(mm1, sc)
    assert one.folds == 1 and (one.epsilon == 0).all() and not np.isnan(one.accuracy).all()
    # SEG 3's threshold is fitted on the two others only
    two = seg_pairwise(compute(ds, sc, seg_ids=[50, 120]), sc)
    np.testing.assert_array_equal(res.epsilon[0], two.epsilon_all)
