"""Meta-metrics on small hand-computed SEGs, and the vectorised engine against a scipy reference."""
import math

import numpy as np
import pandas as pd
import pytest

from ts2viz import compute
from ts2viz.metametrics.structure import seg_structure
from ts2viz.metametrics.definitions import kendall_ord, ks_separation, mean_gap, spearman_ord
from core_helpers import make_dataset, make_scores
from reference_metametrics import seg_metametrics

# SEG: node 0 = {0.9, 0.8}, 1a = {0.7, 0.6}, 2a = {0.1}
SCORES = [0.9, 0.8, 0.7, 0.6, 0.1]


def one_seg(values=SCORES, lower=()):
    ds = make_dataset({0: {"0": 2, "1a": 2, "2a": 1}})
    return ds, make_scores(ds, {"m": np.array(values, dtype=float)}, lower=lower)


def seg_row(mm):
    return mm.segs().iloc[0]


def test_spec_mode_hand_computed():
    ds, sc = one_seg()
    r = seg_row(compute(ds, sc, mode="spec"))
    # level ranks [1.5,1.5,3.5,3.5,5] vs score ranks [5,4,3,2,1]: rho = -9/sqrt(90)
    assert r["ord"] == pytest.approx(9 / math.sqrt(90))
    # 8 discordant pairs, 2 ties in level: tau_b = -8/sqrt(8*10)
    assert r["kendall"] == pytest.approx(8 / math.sqrt(80))
    assert r["sep"] == pytest.approx(1.0)           # both adjacent pairs are disjoint
    assert r["delta"] == pytest.approx((0.2 + 0.55) / 2)
    assert r["n_walks"] == 1


def test_paper_mode_hand_computed():
    ds, sc = one_seg()
    mm = compute(ds, sc, mode="paper")
    r = seg_row(mm)
    # walk (0, 0, 1a, 2a): the root's two images enter twice; rho = -22.5/sqrt(22.5*27)
    assert r["ord"] == pytest.approx(math.sqrt(22.5 / 27))
    assert r["sep"] == pytest.approx(1.0)
    # delta over consecutive levels only (0-1, 1-2), as the code behind the published numbers did,
    # while sep compares every pair of levels
    assert r["delta"] == pytest.approx((0.2 + 0.55) / 2)
    walks = mm.walks()
    assert list(walks["path"]) == ["0>0>1a>2a"]
    assert walks["n_images"].iloc[0] == 7


def test_lower_is_better_is_negated():
    ds, sc = one_seg([-v for v in SCORES], lower=["m"])
    assert seg_row(compute(ds, sc, mode="spec"))["ord"] == pytest.approx(9 / math.sqrt(90))


def test_partial_overlap_ks_and_nan_dropped():
    ds = make_dataset({0: {"0": 3, "1a": 2}})
    sc = make_scores(ds, {"m": np.array([0.5, 0.9, np.nan, 0.6, 0.4])})
    r = seg_row(compute(ds, sc, mode="spec"))
    # F0 over {.5,.9}, F1 over {.4,.6}: max gap 0.5
    assert r["sep"] == pytest.approx(0.5)
    assert ks_separation([0.5, 0.9, np.nan], [0.6, 0.4]).statistic == pytest.approx(0.5)


def test_constant_and_single_image_walks():
    ds = make_dataset({0: {"0": 2, "1": 2}, 1: {"0": 1, "1": 1}})
    sc = make_scores(ds, {"c": np.full(6, 0.5), "n": np.array([np.nan, np.nan, 0.3, 0.2, 0.4, np.nan])})
    segs = compute(ds, sc, mode="spec").segs().set_index(["seg_id", "metric"])
    assert segs.loc[(0, "c"), "ord"] == 0 and segs.loc[(0, "c"), "sep"] == 0
    # SEG 1 metric n: one scored image -> walk skipped -> NaN
    assert math.isnan(segs.loc[(1, "n"), "ord"]) and segs.loc[(1, "n"), "n_walks"] == 0
    # SEG 0 metric n: level 0 all NaN -> walk has 2 images at one level -> ord 0, no separable pair
    assert segs.loc[(0, "n"), "ord"] == 0
    assert math.isnan(segs.loc[(0, "n"), "sep"])


def test_scalar_functions_match_scipy():
    from scipy import stats

    rng = np.random.default_rng(0)
    e = rng.integers(0, 4, 30).astype(float)
    s = np.round(rng.normal(size=30), 1)
    assert spearman_ord(e, s) == pytest.approx(-stats.spearmanr(e, s)[0])
    assert kendall_ord(e, s) == pytest.approx(-stats.kendalltau(e, s)[0])
    a, b = s[:12], s[12:]
    assert ks_separation(a, b).statistic == pytest.approx(stats.ks_2samp(a, b).statistic)
    assert mean_gap(a, b) == pytest.approx(a.mean() - b.mean())
    assert math.isnan(spearman_ord([0], [1.0]))


def _random_case(rng, n_segs=6, edges=False):
    spec, edge_map = {}, {}
    for sid in range(n_segs):
        nodes = {}
        n_roots = rng.integers(1, 3)
        for r in range(n_roots):
            nodes["0" + "abc"[r] if n_roots > 1 else "0"] = int(rng.integers(1, 4))
        levels = sorted(set(rng.choice([1, 2, 3, 4], size=rng.integers(1, 4), replace=False).tolist()))
        for lv in levels:
            for k in range(rng.integers(1, 3)):
                nodes[f"{lv}{'abc'[k]}"] = int(rng.integers(1, 5))
        spec[sid] = nodes
        if edges:
            labels = list(nodes)
            lvl = {l: int(l[0]) for l in labels}
            e = [(a, b) for a in labels for b in labels if lvl[b] > lvl[a] and rng.random() < 0.6]
            # keep every non-root node reachable
            for b in labels:
                if lvl[b] > 0 and not any(x == b for _, x in e):
                    e.append((labels[0], b))
            edge_map[sid] = e
    return spec, (edge_map if edges else None)


@pytest.mark.parametrize("mode", ["paper", "spec"])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("use_edges", [False, True])
def test_engine_matches_scipy_reference(mode, seed, use_edges):
    rng = np.random.default_rng(seed)
    spec, edges = _random_case(rng, edges=use_edges)
    ds = make_dataset(spec, edges=edges)
    n = len(ds.rows)
    vals = {
        "ties": rng.integers(0, 4, n).astype(float),            # heavy ties
        "cont": rng.normal(size=n),
        "nan": np.where(rng.random(n) < 0.25, np.nan, rng.normal(size=n)),
    }
    sc = make_scores(ds, vals)
    got = compute(ds, sc, mode=mode).segs().set_index(["seg_id", "metric"])
    frame = pd.DataFrame({"seg_id": [r.seg_id for r in ds.rows], "label": [r.label for r in ds.rows],
                          "level": [r.level for r in ds.rows], **vals})
    for sid in spec:
        for m in vals:
            want = seg_metametrics(frame[frame.seg_id == sid], m, mode,
                                   edges=None if edges is None else edges[sid])
            for k in ("ord", "kendall", "sep", "delta", "signed_sep"):
                g = got.loc[(sid, m), k]
                if math.isnan(want[k]):
                    assert math.isnan(g), (sid, m, k, g)
                else:
                    assert g == pytest.approx(want[k], abs=1e-9), (sid, m, k)
            assert got.loc[(sid, m), "n_walks"] == want["n_walks"]


def test_engine_matches_reference_on_ts2_sample():
    from ts2viz import bundled_scores, load_dataset

    ds = load_dataset("ts2")
    sc = bundled_scores()
    ids = [2, 10, 57, 103, 120, 150]   # multi-root, large, single node, Nat, Real
    mets = ["CLIPScore", "TIFA-LLaVA-1.5", "LLMScore-EC"]
    for mode in ("paper", "spec"):
        got = compute(ds, sc, mets, mode=mode, seg_ids=ids).segs().set_index(["seg_id", "metric"])
        for sid in ids:
            rows = [r for r in ds.rows if r.seg_id == sid]
            frame = pd.DataFrame({"label": [r.label for r in rows], "level": [r.level for r in rows]})
            for m in mets:
                frame[m] = sc.aligned([r.file_name for r in rows], [m])[:, 0]
                want = seg_metametrics(frame, m, mode)
                for k in ("ord", "sep", "kendall", "signed_sep"):
                    assert got.loc[(sid, m), k] == pytest.approx(want[k], abs=1e-9, nan_ok=True), (mode, sid, m, k)


def test_structure_walk_counts():
    from ts2viz import load_dataset

    ds = load_dataset("ts2")
    sizes = {sid: len(seg_structure(s, "spec").walks) for sid, s in ds.segs.items()}
    assert max(s.n_images for s in ds) == 76
    assert max(sizes.values()) == 300       # the largest TS2 SEG has 300 walks


def test_signed_sep_shows_the_direction_sep_hides():
    """A metric ordering the images exactly backwards: sep 1 (KS is unsigned), signed_sep -1."""
    ds, sc = one_seg(values=[0.1, 0.2, 0.5, 0.6, 0.9])      # errors rise, scores rise
    for mode in ("paper", "spec"):
        r = seg_row(compute(ds, sc, mode=mode))
        assert r["sep"] == pytest.approx(1.0) and r["signed_sep"] == pytest.approx(-1.0)
        assert r["ord"] < 0
    r = seg_row(compute(*one_seg(), mode="spec"))
    assert r["signed_sep"] == pytest.approx(r["sep"])         # right direction everywhere: the same number


def test_same_shape_segs_batched_equal_one_at_a_time(monkeypatch):
    """SEGs of one shape are computed together (stacked rows); walks in chunks. Neither changes a number."""
    from ts2viz.metametrics import walks as mmod

    shape = {"0": 2, "1a": 3, "1b": 1, "2a": 2, "3": 1}
    ds = make_dataset({i: dict(shape) for i in range(6)} | {6: {"0": 1, "1a": 2}, 7: {"0": 3, "2x": 2}})
    rng = np.random.default_rng(3)
    vals = rng.normal(size=len(ds.file_names))
    vals[rng.random(vals.size) < 0.15] = np.nan
    sc = make_scores(ds, {"a": vals, "b": np.round(vals, 0)})        # b has many ties
    for mode in ("paper", "spec", "paper:delta_pairs=all-levels"):
        together = compute(ds, sc, policy=mode)
        for sid in ds.segs:
            alone = compute(ds, sc, policy=mode, seg_ids=[sid])
            for k in together.seg_values:
                np.testing.assert_allclose(together.seg_values[k][together.seg_ids.index(sid)],
                                           alone.seg_values[k][0], rtol=0, atol=1e-12)
            st, ws = together.walk_stats(sid)
            assert st.seg is ds[sid] and st.walks == ds[sid].walks(repeat_root=together.policy.repeat_root)
            assert st.file_names == [im.file_name for n in ds[sid].nodes for im in n.images]
        # tiny chunks: every walk on its own
        monkeypatch.setattr(mmod, "CHUNK_ELEMENTS", 1)
        chunked = compute(ds, sc, policy=mode)
        monkeypatch.undo()
        for k in together.seg_values:
            np.testing.assert_allclose(chunked.seg_values[k], together.seg_values[k], rtol=0, atol=1e-12)


def test_walk_heavy_seg_memory_is_bounded():
    """1,024 walks x 200 images x 19 metrics: the old engine held ~1.2e8-element temporaries; now the
    peak stays a small multiple of the chunk size (checked on the allocation trace)."""
    import tracemalloc

    labels = [f"{lv}{c}" for lv in range(5) for c in "abcd"]
    ds = make_dataset({0: {lb: 10 for lb in labels}})
    rng = np.random.default_rng(0)
    sc = make_scores(ds, {f"m{j}": rng.normal(size=200) for j in range(19)})
    tracemalloc.start()
    mm = compute(ds, sc, policy="paper")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(mm.walk_stats(0)[0].walks) == 16 * 4 ** 4
    assert peak < 300 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
