"""The leaderboard per slice of SEGs (issue 38 item 1, TS2's side): SEG tags, the slices' rows, small slices,
p-values and stability.

Expected values come from outside the code under test: the TS2 project page's published per-partition
numbers (a partition slice's average is the page's partition column), the plain leaderboard on the slice's
SEGs (``ts2viz leaderboard --seg``, the command users already trust), the per-SEG values of the whole
dataset's meta-metrics, scipy's Kendall tau and numpy's percentiles on the resamples.
"""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.dataset.tags import read_seg_tags, seg_slices, seg_tags
from ts2viz.errors import InputError
from ts2viz.metametrics.slices import board_slices
from ts2viz.statistics.bootstrap import BootstrapSettings

METRICS = ["CLIPScore", "ALIGNScore", "DSG-mPLUG", "TIFA-mPLUG"]
#: the TS2 project page: OrdSynth SepSynth OrdNat SepNat OrdReal SepReal (as in tests/core/test_golden_leaderboard.py)
PUBLISHED = {
    "CLIPScore": (0.750, 0.905, 0.580, 0.915, 0.693, 0.903),
    "ALIGNScore": (0.776, 0.941, 0.702, 0.926, 0.626, 0.879),
    "DSG-mPLUG": (0.735, 0.771, 0.619, 0.706, 0.564, 0.731),
    "TIFA-mPLUG": (0.726, 0.806, 0.669, 0.842, 0.682, 0.774),
}
BOOT = BootstrapSettings(n_resamples=400)


@pytest.fixture(scope="module")
def ds():
    return load_dataset("ts2")


@pytest.fixture(scope="module")
def scores():
    return bundled_scores()


@pytest.fixture(scope="module")
def parts(ds, scores):
    return board_slices(ds, scores, seg_slices(ds, "partition"), family="partition", metrics=METRICS, bootstrap=BOOT)


# -- SEG tags -----------------------------------------------------------------------------------------

def test_partition_family_has_ts2s_subsets(ds):
    sl = seg_slices(ds, "partition")
    # the TS2 paper: 111 synthetic, 25 natural-image and 29 real-error SEGs
    assert {k: len(v) for k, v in sl.items()} == {"all": 165, "Synth": 111, "Nat": 25, "Real": 29}
    assert sl["Nat"] == list(range(111, 136))
    assert seg_slices(ds, "partition", include_all=False).keys() == {"Synth", "Nat", "Real"}


def test_user_tags_several_per_seg(ds, tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("seg_id,family,tag\n3,topic,animals\n3,topic,food\n140,topic,food\n5,size,small\n")
    tags = seg_tags(ds, [f])
    assert tags.families == ["partition", "topic", "size"]
    assert seg_slices(ds, "topic", tags) == {"all": sorted(ds.segs), "animals": [3], "food": [3, 140]}
    with pytest.raises(InputError, match="no SEG tag family 'colour'.*partition, topic, size"):
        seg_slices(ds, "colour", tags)


@pytest.mark.parametrize("text, problem", [
    ("seg,family,tag\n3,a,b\n", "seg_id"),
    ("seg_id,family,tag\n3,a,b\n999,a,b\n", "row 3: seg_id 999 is not a SEG of dataset ts2"),
    ("seg_id,family,tag\nthree,a,b\n", "row 2: seg_id 'three' is not an integer"),
    ("seg_id,family,tag\n3,topic,\n", "row 2: empty tag"),
    ("seg_id,family,tag\n3,,x\n", "row 2: empty family"),
    ("seg_id,family,tag\n3,partition,Synth\n", "row 2: family 'partition' is built in"),
    ("seg_id,family,tag\n", "no tag rows"),
])
def test_bad_tag_file_is_one_line_naming_file_and_row(ds, tmp_path, text, problem):
    f = tmp_path / "tags.csv"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        read_seg_tags(f, ds)
    msg = str(e.value)
    assert "\n" not in msg and "tags.csv" in msg and problem in msg, msg


def test_a_dataset_folders_seg_tags_join(tmp_path):
    from ts2viz.paths import bundled_data_dir

    folder = tmp_path / "ts2"                                  # TS2's name: its one two-prompt SEG is known
    folder.mkdir()
    shutil.copy(bundled_data_dir() / "ts2" / "metadata.csv", folder / "metadata.csv")
    (folder / "seg_tags.csv").write_text("seg_id,family,tag\n0,kind,objects\n1,kind,objects\n")
    own = load_dataset(str(folder))
    assert seg_slices(own, "kind")["objects"] == [0, 1]


# -- the rows -----------------------------------------------------------------------------------------

def test_partition_slices_are_the_published_partition_columns(parts):
    f = parts.frame()
    for metric, pub in PUBLISHED.items():
        for k, name in enumerate(("Synth", "Nat", "Real")):
            row = f[(f.slice == name) & (f.metric == metric)].iloc[0]
            assert row.ord_avg == pytest.approx(pub[2 * k], abs=6e-4), (metric, name)
            assert row.sep_avg == pytest.approx(pub[2 * k + 1], abs=6e-4), (metric, name)
    assert f[f.slice == "Real"].n_segs.iloc[0] == 28          # SEG 164 left out in paper mode, as published
    assert f[f.slice == "Real"].note.str.contains("SEG 164 left out").all()


def test_a_slice_row_is_the_leaderboard_on_its_segs(parts, tmp_path, capsys):
    from ts2viz.cli import main

    out = tmp_path / "nat.csv"
    assert main(["leaderboard", "--seg", "111-135", "--ci", "--resamples", str(BOOT.n_resamples),
                 "--metrics", ",".join(METRICS), "--out", str(out)]) == 0
    lb = pd.read_csv(out).set_index("metric")
    mine = parts.frame().query("slice == 'Nat'").set_index("metric")
    cols = [c for c in lb.columns]
    assert {"ord_avg_lo", "sep_nat_hi", "rank_lo"} <= set(cols)
    pd.testing.assert_frame_equal(mine.loc[lb.index, cols], lb, check_exact=False, atol=5e-7, rtol=0,
                                  check_dtype=False)


def test_point_values_are_per_seg_means_of_the_whole(ds, scores, parts):
    whole = compute(ds, scores, METRICS)
    ord_ = whole.seg_values["ord"]                           # (SEGs, metrics)
    ids = np.asarray(whole.seg_ids)
    nat = (ids >= 111) & (ids <= 135)
    np.testing.assert_allclose(parts.point["ord_avg"][parts.slices.index("Nat")], np.nanmean(ord_[nat], 0), atol=1e-12)


# -- small slices -------------------------------------------------------------------------------------

def test_small_slices_say_so_and_one_seg_has_no_interval(ds, scores):
    whole = compute(ds, scores, METRICS)
    res = board_slices(ds, scores, {"none": [], "one": [7], "three": [0, 1, 2], "odd": [0, 1, 2, 111]},
                       metrics=METRICS, bootstrap=BOOT)
    f = res.frame().set_index(["slice", "metric"])
    none, one, three, odd = (f.loc[s] for s in ("none", "one", "three", "odd"))
    assert none.note.iloc[0] == "no SEG: no statistic" and none.ord_avg.isna().all() and none.n_segs.iloc[0] == 0
    assert "1 SEG: no interval" in one.note.iloc[0]
    assert one.ord_avg_lo.isna().all() and one.ord_avg_hi.isna().all() and one["rank"].isna().all()
    np.testing.assert_allclose(one.ord_avg, whole.seg_values["ord"][whole.seg_ids.index(7)])
    assert np.isnan(res.pvalue("ord")[1]).all()
    assert "only 3 SEGs: intervals rest on few SEGs" in three.note.iloc[0] and three.ord_avg_lo.notna().all()
    assert "partition (Nat) with 1 SEG here" in odd.note.iloc[0]


def test_refuses_what_it_cannot_do(ds, scores):
    with pytest.raises(InputError, match="no slice"):
        board_slices(ds, scores, {}, metrics=METRICS)
    with pytest.raises(InputError, match="two-level"):
        board_slices(ds, scores, {"a": [0, 1]}, metrics=METRICS, bootstrap=BootstrapSettings(image_resamples=10))
    with pytest.raises(InputError, match="statistics"):
        board_slices(ds, scores, {"a": [0, 1]}, metrics=METRICS, stats=["rho"])
    with pytest.raises(InputError, match="no SEG with id 999"):
        board_slices(ds, scores, {"a": [0, 999]}, metrics=METRICS)


# -- p-values and stability ---------------------------------------------------------------------------

def test_pvalue_is_two_sided_share_of_resamples_past_zero(parts):
    s = parts.samples["ord_avg"].astype(np.float64)
    expect = np.minimum(1, 2 * np.minimum((s <= 0).mean(-1), (s >= 0).mean(-1)))
    np.testing.assert_array_equal(parts.pvalue("ord"), expect)
    assert np.isnan(parts.pvalue("sep")).all()                  # a KS distance has no null value
    assert "ord_avg_p" in parts.frame().columns and "sep_avg_p" not in parts.frame().columns


def test_stability_is_kendall_between_slices_and_reversals_exclude_zero(parts):
    rank, rev = parts.stability("ord")
    v = parts.point["ord_avg"]
    for s, a in enumerate(parts.slices):
        for t, b in enumerate(parts.slices):
            assert rank.loc[a, b] == pytest.approx(scipy.stats.kendalltau(v[s], v[t])[0])
    # every reversal: the paired difference's interval excludes 0 one way on slice_a, the other on slice_b
    sm = parts.samples["ord_avg"].astype(np.float64)
    for _, r in rev.iterrows():
        i, j = parts.metrics.index(r.metric_a), parts.metrics.index(r.metric_b)
        d_a = sm[parts.slices.index(r.slice_a), i] - sm[parts.slices.index(r.slice_a), j]
        d_b = sm[parts.slices.index(r.slice_b), i] - sm[parts.slices.index(r.slice_b), j]
        assert np.percentile(d_a, 2.5) > 0 and np.percentile(d_b, 97.5) < 0
    # and no pair is missed: every pair whose intervals exclude 0 in opposite directions is listed
    found = set(zip(rev.metric_a, rev.metric_b, rev.slice_a, rev.slice_b))
    for i in range(len(parts.metrics)):
        for j in range(i + 1, len(parts.metrics)):
            d = sm[:, i] - sm[:, j]
            lo, hi = np.percentile(d, 2.5, axis=-1), np.percentile(d, 97.5, axis=-1)
            for s in np.flatnonzero(lo > 0):
                for t in np.flatnonzero(hi < 0):
                    assert (parts.metrics[i], parts.metrics[j], parts.slices[s], parts.slices[t]) in found


def test_a_built_reversal_is_found(ds, scores):
    from margins import assert_wide_threshold

    # two slices built from the whole set's per-SEG values: where CLIPScore's Ord beats DSG-mPLUG's most,
    # and where it trails most; the ranking of the two must reverse, significantly, between them
    a, b = "CLIPScore", "DSG-mPLUG"
    whole = compute(ds, scores, [a, b])
    d = whole.seg_values["ord"][:, 0] - whole.seg_values["ord"][:, 1]
    ids = np.asarray(whole.seg_ids)
    ok = ~np.isnan(d) & ~np.isin(ids, whole.excluded)
    order = ids[ok][np.argsort(d[ok], kind="stable")]
    sl = {"a-better": sorted(order[-30:].tolist()), "b-better": sorted(order[:30].tolist())}
    res = board_slices(ds, scores, sl, metrics=[a, b], bootstrap=BOOT)
    sm = res.samples["ord_avg"].astype(np.float64)
    lo_a = np.percentile(sm[0, 0] - sm[0, 1], 2.5)
    hi_b = np.percentile(sm[1, 0] - sm[1, 1], 97.5)
    assert_wide_threshold([lo_a, -hi_b], 0.0, abs_tol=0.02)       # far from 0: the verdict cannot flip
    assert lo_a > 0 > hi_b
    _, rev = res.stability("ord")
    assert rev[["metric_a", "metric_b", "slice_a", "slice_b"]].values.tolist() == [[a, b, "a-better", "b-better"]]
    rank, _ = res.stability("ord")
    assert rank.loc["a-better", "b-better"] == pytest.approx(-1.0)


def test_seg_restricts_every_slice_and_stats_choose_the_columns(tmp_path):
    from ts2viz.cli import main

    out = tmp_path / "s.csv"
    assert main(["leaderboard", "--slices", "partition", "--seg", "100-120", "--stats", "ord", "--metrics",
                 "CLIPScore", "--out", str(out)]) == 0
    df = pd.read_csv(out, keep_default_na=False, na_values=[""])
    # SEGs 100-120: Synth 100-110 (11), Nat 111-120 (10), no Real SEG
    assert df.slice.tolist() == ["all", "Synth", "Nat", "Real"] and df.n_segs.tolist() == [21, 11, 10, 0]
    assert df.note.tolist()[3] == "no SEG: no statistic" and np.isnan(df.ord_avg.iloc[3])
    assert not any(c.startswith("sep") for c in df.columns)
