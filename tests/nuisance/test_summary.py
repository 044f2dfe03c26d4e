"""The nuisance statistics against hand-worked examples, and ``callable:`` metrics whose answer is known
without a model, scored through the engine (tests/support/nuisance_callables.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nuisance_data import write_height_dataset
from ts2viz.dataset import load_dataset
from ts2viz.metametrics.results import compute
from ts2viz.metametrics.structure import seg_structure
from ts2viz.nuisance import run as R, summary as S, transforms as T
from ts2viz.scores import Scores
from ts2viz.metametrics.intervals import bootstrap, resample_counts
from ts2viz.metametrics.comparison import compare

CALLABLES = Path(__file__).resolve().parents[1] / "support" / "nuisance_callables.py"


def write_meta(folder: Path, rows, edges=None) -> Path:
    """A dataset folder without images: (seg_id, file_name, label) rows; ``edges``: (seg, parent, child)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["id,target_prompt,file_name,image_source,rank"]
    lines += [f"{s},prompt {s},{fn},x,{lbl}" for s, fn, lbl in rows]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    if edges:
        (folder / "edges.csv").write_text("id,parent,child\n" + "\n".join(f"{s},{a},{b}" for s, a, b in edges) + "\n")
    return folder


def one_run(ds, clean: dict, transformed: dict, specs, higher_is_better=True, metric="M") -> R.NuisanceScores:
    files = list(clean)
    ts = tuple(T.parse(s) for s in specs)
    tr = np.array([[transformed[s][f] for s in specs] for f in files], dtype=float)
    return R.NuisanceScores(ds.name, [R.MetricRun(metric, higher_is_better, "cfg", tuple(files),
                                                  np.array([clean[f] for f in files], float), ts, tr)])


def per_seg(ds, sid, clean, transformed, hib=True):
    st = seg_structure(ds[sid], "paper")
    s = np.array([clean[f] for f in st.file_names])
    t = np.array([transformed[f] for f in st.file_names])[:, None]
    return {k: v[0] for k, v in S.seg_nuisance(st, ds[sid].adjacent_pairs(), s, t, hib).items()}


# -- one SEG, worked by hand ----------------------------------------------------------------------------

@pytest.fixture()
def chain(tmp_path):
    """SEG 0: nodes 0 (a, b), 1 (c, d), 2 (e, f); implied edges 0-1, 1-2."""
    rows = [(0, f, lbl) for f, lbl in zip("abcdef", ["0", "0", "1", "1", "2", "2"])]
    return load_dataset(write_meta(tmp_path / "chain", rows))


CLEAN = dict(a=1.0, b=0.8, c=0.7, d=0.5, e=0.4, f=0.2)
MOVED = dict(a=0.9, b=0.8, c=0.75, d=0.5, e=0.5, f=0.2)


def test_one_seg_by_hand(chain):
    r = per_seg(chain, 0, CLEAN, MOVED)
    # node means 0.9, 0.6, 0.3: both edges step 0.3, median 0.3
    assert r["step"] == pytest.approx(0.3, abs=1e-12)
    # |changes| 0.1, 0, 0.05, 0, 0.1, 0: median of six = (0 + 0.05) / 2
    assert r["median_change"] == pytest.approx(0.025, abs=1e-12)
    assert r["ratio"] == pytest.approx(0.025 / 0.3, abs=1e-12)
    # 12 pairs at different levels on the one walk, all ordered right; 24 replacements. One fails: d (0.5)
    # against e moved to 0.5, a tie
    assert (r["correct_pairs"], r["flip_events"], r["flips"]) == (12, 24, 1)
    assert r["flip_rate"] == pytest.approx(1 / 24)
    # c and e went up
    assert r["up_share"] == pytest.approx(2 / 6) and r["n_images"] == 6
    # a lower-is-better metric with the scores negated: the same statistics
    neg = per_seg(chain, 0, {k: -v for k, v in CLEAN.items()}, {k: -v for k, v in MOVED.items()}, hib=False)
    for k in ("ratio", "flip_rate", "up_share", "step", "median_change"):
        assert neg[k] == pytest.approx(r[k], abs=1e-12)


def test_pairs_count_only_on_a_common_walk(tmp_path):
    # 0 -> 1a -> 2a and 0 -> 1b: node 1b shares no walk with 2a
    rows = [(0, "p", "0"), (0, "q", "1a"), (0, "r", "1b"), (0, "s", "2a")]
    ds = load_dataset(write_meta(tmp_path / "branch", rows, [(0, "0", "1a"), (0, "0", "1b"), (0, "1a", "2a")]))
    clean = dict(p=1.0, q=0.6, r=0.7, s=0.2)
    moved = dict(p=1.0, q=0.6, r=0.1, s=0.2)      # r below s: a flip only if r and s shared a walk
    r = per_seg(ds, 0, clean, moved)
    assert (r["correct_pairs"], r["flip_events"], r["flips"]) == (3 + 1, 8, 0)   # (0,1a) (0,1b) (1a,2a) (0,2a)
    assert r["step"] == pytest.approx(0.4)       # edge gaps 0.4, 0.3, 0.4
    assert r["median_change"] == 0 and r["ratio"] == 0


def test_zero_over_zero_is_undefined_and_x_over_zero_is_infinite(tmp_path):
    rows = [(0, f, lbl) for f, lbl in zip("abcd", ["0", "0", "1", "1"])] + [(1, "z", "0")]
    ds = load_dataset(write_meta(tmp_path / "flat", rows))
    flat = dict(a=0.5, b=0.5, c=0.5, d=0.5)        # a metric that reads only the prompt: equal everywhere
    same = per_seg(ds, 0, flat, flat)
    assert np.isnan(same["ratio"]) and same["undefined"] and same["step"] == 0
    assert np.isnan(same["flip_rate"]) and same["correct_pairs"] == 0     # nothing ordered, nothing to flip
    up = per_seg(ds, 0, flat, {k: 0.6 for k in flat})
    assert up["ratio"] == np.inf and not up["undefined"] and up["up_share"] == 1
    one = per_seg(ds, 1, dict(z=0.5), dict(z=0.7))  # one node: no edge, no step
    assert np.isnan(one["step"]) and np.isnan(one["ratio"]) and not one["undefined"]


# -- pooled over SEGs ------------------------------------------------------------------------------------

@pytest.fixture()
def many(tmp_path):
    """SEGs 0-6 with nodes 0 and 1 (two images each); SEG k's step g_k and uniform change c_k make its
    ratio c_k / g_k; SEG 5 is 0/0 (flat, unchanged), SEG 6 is x/0 (flat, moved)."""
    g = [0.2, 0.4, 0.1, 0.5, 0.25]
    c = [0.02, 0.2, 0.05, 0.1, 0.0]
    rows, clean, moved = [], {}, {}
    for s in range(7):
        for k, lbl in enumerate(["0", "0", "1", "1"]):
            f = f"{s}-{k}"
            rows.append((s, f, lbl))
            if s < 5:
                base = 1.0 if lbl == "0" else 1.0 - g[s]
                clean[f] = base + (0.01 if k % 2 else -0.01)
                moved[f] = clean[f] - c[s]
            else:
                clean[f] = 0.5
                moved[f] = 0.5 if s == 5 else 0.55
    ds = load_dataset(write_meta(tmp_path / "many", rows))
    ratios = [ci / gi for ci, gi in zip(c, g)] + [np.nan, np.inf]
    return ds, clean, moved, ratios


def test_pooled_values_and_intervals(many):
    ds, clean, moved, ratios = many
    ns = one_run(ds, clean, {"jpeg:quality=30": moved}, ["jpeg:quality=30"])
    sm = S.summarize(ns, ds, mode="spec", n_resamples=400, seed=3)
    row = sm.frame().iloc[0]
    per = sm.segs().set_index("seg_id")
    np.testing.assert_allclose(per["ratio"].to_numpy(), ratios, rtol=1e-9)
    assert bool(per.loc[5, "undefined"]) and row["n_undefined"] == 1 and row["n_segs"] == 6
    # the pooled ratio: the median over the SEGs with a defined ratio (inf the largest)
    defined = [x for x in ratios if not np.isnan(x)]
    assert row["ratio"] == pytest.approx(np.median(defined))
    # its interval: the median of each resample's multiset of SEGs, by an explicit loop, then quantiles
    mm = compute(ds, Scores(list(clean), ["x"], np.array(list(clean.values()))[:, None]), policy="spec")
    counts = resample_counts(mm, n_resamples=400, seed=3)
    r = np.array(ratios)
    meds = []
    for cb in counts:
        drawn = np.repeat(r, cb)
        drawn = drawn[~np.isnan(drawn)]
        meds.append(np.median(drawn) if drawn.size else np.nan)
    meds = np.array(meds)
    assert np.array_equal(S.pooled_median(r, counts), meds, equal_nan=True)
    fin = meds[~np.isnan(meds)]
    assert np.isinf(fin).any() and np.isfinite(fin).any()      # some resamples draw the x/0 SEG often
    # numpy's quantiles with inf stood in for by 1e6 (every finite ratio is at most 0.5): a quantile that
    # interpolates towards it lands far above 1, which is inf
    lo, hi = (v if v < 1 else np.inf for v in np.quantile(np.where(np.isinf(fin), 1e6, fin), [0.025, 0.975]))
    assert (row["ratio_lo"], row["ratio_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    # flip rate and direction: means over SEGs, their intervals from the same resamples
    up = per["up_share"].to_numpy()
    assert row["up_share"] == pytest.approx(np.nanmean(up))
    loop = [np.nanmean(np.repeat(up, cb)) if np.isfinite(np.repeat(up, cb)).any() else np.nan for cb in counts]
    lo, hi = np.nanquantile(loop, [0.025, 0.975])
    assert (row["up_share_lo"], row["up_share_hi"]) == (pytest.approx(lo), pytest.approx(hi))


def test_interval_handles_infinity():
    x = np.array([[1.0, 2.0, 3.0, np.inf, np.nan]])
    lo, hi = S.interval(x, 0.5)                     # quantiles 0.25 and 0.75 of 1, 2, 3, inf
    assert lo[0] == pytest.approx(1.75) and hi[0] == np.inf
    lo, hi = S.interval(np.array([[np.inf, np.inf]]), 0.9)
    assert lo[0] == hi[0] == np.inf
    finite = np.random.default_rng(0).normal(size=(3, 101))
    lo, hi = S.interval(finite, 0.9)
    np.testing.assert_allclose(np.stack([lo, hi]), np.quantile(finite, [0.05, 0.95], axis=1), rtol=1e-12)


def test_ord_and_sep_under_nuisance_beside_clean(chain):
    moved = dict(a=0.1, b=0.8, c=0.7, d=0.5, e=0.4, f=0.9)      # a and f swap places: Ord falls
    ns = one_run(chain, CLEAN, {"blur:sigma=2": moved}, ["blur:sigma=2"])
    sm = S.summarize(ns, chain, n_resamples=200)
    row = sm.frame().iloc[0]
    both = Scores(list(CLEAN), ["clean", "moved"], np.array([[CLEAN[f], moved[f]] for f in CLEAN]))
    mm = compute(chain, both, policy="paper")
    av = mm.averages()
    assert row["ord_clean"] == pytest.approx(av["ord_avg"][0]) and row["ord_nuisance"] == pytest.approx(av["ord_avg"][1])
    assert row["sep_clean"] == pytest.approx(av["sep_avg"][0]) and row["sep_nuisance"] == pytest.approx(av["sep_avg"][1])
    assert row["ord_nuisance"] < row["ord_clean"]
    pc = compare(mm, "moved", "clean", boot=bootstrap(mm, n_resamples=200))
    j = pc.cells.index("ord_avg")
    assert (row["ord_diff"], row["ord_diff_lo"], row["ord_diff_hi"]) == pytest.approx(
        (pc.difference[j], pc.low[j], pc.high[j]))


def test_leaderboard_columns_and_the_worst_transform(many):
    ds, clean, moved, _ = many
    flipped = {f: v + 5 for f, v in clean.items()}
    ns = one_run(ds, clean, {"jpeg:quality=30": moved, "hflip": flipped}, ["jpeg:quality=30", "hflip"])
    sm = S.summarize(ns, ds, n_resamples=100)
    cols = sm.leaderboard_columns(["other", "M"])
    assert np.isnan(cols["nsr[jpeg:quality=30]"][0])
    assert cols["nsr[jpeg:quality=30]"][1] == pytest.approx(sm.frame().iloc[0]["ratio"])
    assert {"flip[hflip]_lo", "dord[hflip]_hi", "up[jpeg:quality=30]"} <= set(cols)
    # hflip moves far more, but it changes meaning: the worst ratio is the JPEG one
    assert cols["nsr[hflip]"][1] > cols["nsr[jpeg:quality=30]"][1]
    assert cols["nsr_worst"][1] == cols["nsr[jpeg:quality=30]"][1]
    text = S.format_summary(sm)
    assert "hflip †" in text and "jpeg:quality=30 *" in text


# -- callable: metrics through the engine -----------------------------------------------------------------

@pytest.fixture(scope="module")
def heights(tmp_path_factory):
    return load_dataset(write_height_dataset(tmp_path_factory.mktemp("heights") / "ds"))


def test_a_metric_reading_what_transforms_leave_alone_is_perfectly_stable(heights, tmp_path):
    ns = R.run(heights, f"callable:{CALLABLES}:height", "jpeg:quality=10,brightness:factor=1.2,noise:sigma=20",
               cache_dir=tmp_path / "cache")
    r = ns.runs[0]
    assert np.array_equal(r.transformed, np.repeat(r.clean[:, None], 3, axis=1))
    sm = S.summarize(ns, heights, n_resamples=200)
    f = sm.frame()
    assert (f["ratio"] == 0).all() and (f["flip_rate"] == 0).all() and (f["up_share"] == 0).all()
    assert (f["ratio_hi"] == 0).all() and (f["ord_diff"] == 0).all()
    segs = sm.segs()
    assert (segs["correct_pairs"] > 0).all() and (segs["step"] > 0).all()   # there were steps and pairs to flip


def test_a_metric_reading_only_the_prompt_has_no_error_steps(heights, tmp_path):
    ns = R.run(heights, f"callable:{CALLABLES}:prompt_length", "jpeg:quality=30,period", cache_dir=tmp_path / "c")
    sm = S.summarize(ns, heights, n_resamples=200)
    f = sm.frame().set_index("transform")
    n = len(heights.segs)
    jpeg = f.loc["jpeg:quality=30"]
    # image transform: no change and no step on any SEG, 0/0: undefined, left out, said so
    assert np.isnan(jpeg["ratio"]) and jpeg["n_undefined"] == n and jpeg["n_segs"] == 0
    assert np.isnan(jpeg["ratio_lo"]) and np.isnan(jpeg["flip_rate"])
    assert "0/0 (no error steps)" in S.format_summary(sm)
    # a text transform moves it (one character more) while nothing moves between error levels: x/0
    period = f.loc["period"]
    assert period["ratio"] == np.inf and period["n_segs"] == n and period["up_share"] == 1


def test_mean_brightness_moves_under_brightness_exactly_as_computed_here(heights, tmp_path):
    from PIL import Image

    ns = R.run(heights, f"callable:{CALLABLES}:mean_brightness", "brightness:factor=1.2", cache_dir=tmp_path / "c")
    r = ns.runs[0]
    for k, fn in enumerate(r.file_names):
        x = np.asarray(Image.open(heights.image_path(fn)).convert("RGB"), dtype=np.int64)
        clean = x.mean() / 255
        bright = np.minimum((12 * x + 5) // 10, 255).mean() / 255     # x 6/5, rounded half up, clipped
        assert r.clean[k] == pytest.approx(clean, rel=1e-12, abs=0)
        assert r.transformed[k, 0] == pytest.approx(bright, rel=1e-12, abs=0)
    assert (r.transformed[:, 0] > r.clean).all()
    sm = S.summarize(ns, heights, n_resamples=100)
    assert sm.frame().iloc[0]["up_share"] == 1.0
