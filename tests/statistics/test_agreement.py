"""Krippendorff's alpha equals the krippendorff package's on every bundled set; its resamples are the resampled data's."""
import numpy as np
import pytest

from ts2viz.gold import BUNDLED, load_gold
from ts2viz.metaeval.agreement import agreement
from ts2viz.metaeval.prompt_bootstrap import prompt_resamples
from ts2viz.statistics.bootstrap import BootstrapSettings

krippendorff = pytest.importorskip("krippendorff")


@pytest.mark.parametrize("name", list(BUNDLED))
def test_alpha_equals_the_package_on_every_bundled_set(name):
    rated = load_gold(name, answers=False)
    res = agreement(rated, by=["t2i-model"], bootstrap=None).frame
    checked = 0
    for rs in rated.rating_sets:
        m, _ = rated.rater_matrix(rs)
        if (~np.isnan(m)).sum(1).max() < 2:                 # one value per image (a released mean): no alpha
            assert res[res.rating_set == rs].alpha.isna().all()
            continue
        for level in ("interval", "ordinal", "nominal"):
            row = res[(res.rating_set == rs) & (res.group == "all") & (res.level == level)].iloc[0]
            want = krippendorff.alpha(reliability_data=m.T, level_of_measurement=level)
            assert row.alpha == pytest.approx(want, abs=1e-12), (rs, level)
            model = rated.t2i_models[0]
            sel = (rated.images.t2i_model == model).to_numpy()
            row = res[(res.rating_set == rs) & (res.group == model) & (res.level == level)].iloc[0]
            assert row.alpha == pytest.approx(krippendorff.alpha(reliability_data=m[sel].T, level_of_measurement=level),
                                              abs=1e-12)
            checked += 1
    assert checked >= 3


def test_alpha_of_tifa160_dsg_raters():
    rated = load_gold("tifa160", answers=False)
    res = agreement(rated, ["dsg"], levels=["interval"], by=[], bootstrap=None).frame
    assert round(res.alpha[0], 3) == 0.684 and res.n_images[0] == 800 and res.n_ratings[0] == 3995


def test_resampled_alpha_is_the_package_on_the_resampled_images():
    rated = load_gold("tifa160", answers=False)
    boot = BootstrapSettings(n_resamples=40, seed=1)
    res = agreement(rated, ["tifa"], levels=["interval"], by=[], bootstrap=boot).frame
    m, _ = rated.rater_matrix("tifa")
    _, counts = next(prompt_resamples(rated.images.prompt_id.nunique(), boot))
    pc = rated.prompt_codes()
    vals = [krippendorff.alpha(reliability_data=np.repeat(m, counts[b][pc].astype(int), axis=0).T,
                               level_of_measurement="interval") for b in range(40)]
    lo, hi = np.quantile(vals, [0.025, 0.975])
    assert res.alpha_lo[0] == pytest.approx(lo, abs=1e-12) and res.alpha_hi[0] == pytest.approx(hi, abs=1e-12)


def test_small_groups_are_marked(tmp_path):
    (tmp_path / "images.csv").write_text("image_id,prompt_id,t2i_model\na,p1,m1\nb,p1,m2\nc,p2,m1\n")
    (tmp_path / "ratings.csv").write_text("image_id,rater,rating\na,r1,1\na,r2,2\nb,r1,3\nb,r2,3\nc,r1,5\n")
    res = agreement(load_gold(str(tmp_path), answers=False), levels=["interval"], bootstrap=None).frame
    m2 = res[res.group == "m2"].iloc[0]
    assert np.isnan(m2.alpha) and m2.note.startswith("fewer than 2 images rated twice")
    assert res[res.group == "all"].note.iloc[0] == "only 1 prompt: the interval rests on few prompts"


def test_rating_outside_the_scale_is_one_line(tmp_path):
    from ts2viz.errors import InputError

    (tmp_path / "images.csv").write_text("image_id,prompt_id,t2i_model\na,p1,m1\nb,p2,m1\n")
    (tmp_path / "ratings.csv").write_text("image_id,rater,rating\na,r1,1\na,r2,2\nb,r1,41\nb,r2,3\n")
    (tmp_path / "gold.json").write_text('{"scale": [1, 5]}')
    with pytest.raises(InputError, match=r"image 'b' has a rating 41 outside the scale \[1, 5\]") as e:
        agreement(load_gold(str(tmp_path), answers=False), bootstrap=None)
    assert "\n" not in str(e.value)
