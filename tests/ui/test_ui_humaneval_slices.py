"""The Human ratings tab's slices, agreement, reliable switch and triage callbacks as plain function calls
(issue 38 part 6); expected values from scipy, the ``krippendorff`` package and the rated set's own columns."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from ts2viz.display import md_text
from ts2viz.errors import InputError
from ts2viz.figures.style import plain_figures
from ts2viz.ui.callbacks import humaneval_slices as hs
from ts2viz.ui.callbacks.humaneval import sets as gc_sets

SET, RS = "tifa160", "dsg"
METRIC = "tifa_mplug-large"


@pytest.fixture(scope="module")
def g():
    return gc_sets.rated(SET)


@pytest.fixture(scope="module")
def color_mask(g):
    from ts2viz.gold.tags import rated_tags, slices

    sl = slices(g, rated_tags(g), "dsg-category")
    return sl.masks[sl.names.index("attribute/color")]


def test_families_are_rated_tags_families():
    assert hs.families(SET) == ["t2i-model", "dsg-category", "gecko-prompt-set", "gecko-source"]
    assert hs.families("imagenhub-t2i") == ["t2i-model"]
    with pytest.raises(InputError):
        hs.families("../etc")


@pytest.mark.parametrize("only_reliable", [False, True])
def test_cell_rows_are_the_slice_images(g, color_mask, only_reliable):
    keep = color_mask & (hs.reliable(SET).image_mask if only_reliable else True)
    md, rows = hs.slice_rows(SET, RS, "dsg-category", f"attribute/color{hs.CELL_SEP}{METRIC}", only_reliable)
    assert rows["image_id"].tolist() == list(np.asarray(g.image_ids)[keep])
    np.testing.assert_allclose(rows[f"human ({RS})"], np.round(g.human(RS)[keep], 3))
    np.testing.assert_allclose(rows[METRIC], np.round(g.scores[METRIC].to_numpy()[keep], 4))
    assert rows["prompt"].iloc[0] == g.prompt_text(rows["image_id"].iloc[0])
    n_prompts = g.images["prompt_id"][keep].nunique()
    assert f"n = {int(keep.sum())} images, {n_prompts} prompts" in md
    rho = scipy.stats.spearmanr(g.scores[METRIC].to_numpy()[keep], g.human(RS)[keep])[0]
    assert f"Spearman {rho:.3f} [" in md


def test_reliable_switch_restricts_every_slice(g):
    rel = hs.reliable(SET)
    whole, only = hs.slice_eval(SET, RS, "t2i-model", False), hs.slice_eval(SET, RS, "t2i-model", True)
    assert whole.n_images[0] == len(g) and only.n_images[0] == int(rel.image_mask.sum()) < len(g)
    assert len(rel.prompt_ids) == 114              # the library's doctest number for TIFA160 at X = 0.5
    assert "Reliable prompts only" in hs.slice_note(SET, RS, "t2i-model", True)
    assert "All prompts" in hs.slice_note(SET, RS, "t2i-model", False)


def test_heatmap_cells_carry_slice_and_metric():
    with plain_figures():
        fig = hs.slice_figure(SET, RS, "gecko-prompt-set", "pairwise_acc")
    res = hs.slice_eval(SET, RS, "gecko-prompt-set")
    assert fig.data[0]["customdata"][0][1] == [res.slices[1], res.metrics[0]]
    with pytest.raises(InputError):
        hs.slice_figure(SET, RS, "gecko-prompt-set", "__import__")


@pytest.mark.parametrize("cell", ["", "all", f"nope{hs.CELL_SEP}{METRIC}", f"all{hs.CELL_SEP}/etc/passwd"])
def test_a_cell_not_on_the_heatmap_is_one_line(cell):
    with pytest.raises(InputError, match="click a cell"):
        hs.slice_rows(SET, RS, "gecko-prompt-set", cell)


def test_unknown_family_or_rating_set_is_one_line():
    with pytest.raises(InputError):
        hs.slice_eval(SET, RS, "skills")
    with pytest.raises(InputError):
        hs.slice_eval(SET, "nope", "t2i-model")


def test_agreement_all_row_is_the_krippendorff_package(g):
    import krippendorff

    t = hs.agreement_table(SET).set_index("group")
    for rs in ("tifa", "dsg"):
        m, _ = g.rater_matrix(rs)
        want = krippendorff.alpha(reliability_data=m.T, level_of_measurement="interval")
        assert t.loc["all", rs].startswith(f"{want:.3f} [")
    assert set(g.t2i_models) <= set(t.index)
    assert t.loc["all", "n images"] == len(g)
    r = hs.agreement_table(SET, True).set_index("group")
    assert r.loc["all", "n images"] == int(hs.reliable(SET).image_mask.sum())


def test_triage_metric_is_the_largest_rank_gap(g):
    t = hs.triage_metric(SET, RS, METRIC)
    x, h = g.scores[METRIC].to_numpy(float), g.human(RS)
    n = len(g) - 1
    gap = np.abs((scipy.stats.rankdata(x) - 1) / n - (scipy.stats.rankdata(h) - 1) / n)
    assert len(t) == hs.TRIAGE_ROWS
    assert np.all(np.diff(t["gap"]) <= 0)
    np.testing.assert_allclose(t["gap"].iloc[0], np.round(gap.max(), 3))
    i = g.image_ids.index(t["image_id"].iloc[0])
    np.testing.assert_allclose(gap[i], gap.max())
    with pytest.raises(InputError):
        hs.triage_metric(SET, RS, "human:dsg")


def test_triage_raters_is_the_largest_variance(g):
    t = hs.triage_raters(SET, RS)
    r = g.ratings[g.ratings["rating_set"] == RS]
    var = r.groupby("image_id")["rating"].var(ddof=0)
    assert t["image_id"].iloc[0] in set(var[var == var.max()].index)
    np.testing.assert_allclose(t["variance"].to_numpy(), np.round(var.loc[t["image_id"]].to_numpy(), 3))
    kept = set(np.asarray(g.image_ids)[hs.reliable(SET).image_mask])
    assert set(hs.triage_raters(SET, RS, True)["image_id"]) <= kept


def test_triage_row_opens_its_image(g):
    t = hs.triage_raters(SET, RS)
    md, scores, path = hs.triage_detail(SET, t, 0)
    iid = t["image_id"].iloc[0]
    assert f"**Image** {md_text(iid)} of" in md and f"**Prompt:** {md_text(g.prompt_text(iid))}" in md
    assert "Ratings dsg" in md and path is None
    assert set(scores["metric"]) >= set(g.metrics)
    bad = t.copy()
    bad.loc[0, "image_id"] = "../../secret"
    for table, row in ((t, None), (t, 10_000), (None, 0), (bad, 0)):
        with pytest.raises(InputError):
            hs.triage_detail(SET, table, row)


def test_an_operators_set_shows_its_image_file_and_a_set_rated_once_has_no_alpha(tmp_path):
    from PIL import Image
    from gold_helpers import make_folder

    folder = make_folder(tmp_path / "sliceset")
    Image.new("RGB", (8, 8), (200, 10, 10)).save(folder / "p0-A.png")
    import pandas as pd

    im = pd.read_csv(folder / "images.csv")
    im["path"] = ["p0-A.png" if i == "p0-A" else ("../../etc/passwd" if i == "p0-B" else "") for i in im["image_id"]]
    im.to_csv(folder / "images.csv", index=False)
    assert gc_sets.add_operator_sets([folder]) == ["sliceset"]
    try:
        rs = gc_sets.rated("sliceset").default_rating_set
        table = pd.DataFrame({"image_id": ["p0-A", "p0-B"]})
        assert hs.triage_detail("sliceset", table, 0)[2] == str((folder / "p0-A.png").resolve())
        assert hs.triage_detail("sliceset", table, 1)[2] is None          # ../../etc/passwd: not served
        res = hs.slice_eval("sliceset", rs, "t2i-model")
        assert res.slices == ("all", "A", "B", "C") and res.n_images.tolist() == [60, 20, 20, 20]
    finally:
        gc_sets.remove_operator_sets(["sliceset"])
    once = hs.agreement_table("genaibench-teaser").set_index("group")
    assert once.loc["all", "released_mean"].startswith("– (fewer than 2 images rated twice")
