"""Gecko's tasks per slice: point values equal scipy's on the slice's rows, resamples equal the resampled data's."""
import numpy as np
import pytest
from scipy import stats

from ts2viz.gold import load_gold
from ts2viz.gold.tags import rated_tags, slices
from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
from ts2viz.metaeval.humaneval import evaluate
from ts2viz.metaeval.prompt_bootstrap import prompt_resamples
from ts2viz.metaeval.slices import evaluate_slices, evaluate_slices_arrays
from ts2viz.statistics.bootstrap import BootstrapSettings

METRICS = ["clipscore_vitb32", "tifa_mplug-large", "dsg:PaLI-17B"]


@pytest.fixture(scope="module")
def tifa():
    return load_gold("tifa160")


@pytest.fixture(scope="module")
def res(tifa):
    sl = slices(tifa, rated_tags(tifa), "dsg-category")
    return sl, evaluate_slices(tifa, sl, metrics=METRICS, bootstrap=BootstrapSettings(n_resamples=300, seed=3))


def test_per_slice_statistics_equal_scipy(tifa, res):
    sl, r = res
    y = tifa.human("dsg")
    x = tifa.score_matrix(METRICS)
    checked = 0
    for s, (name, mask) in enumerate(zip(sl.names, sl.masks)):
        if mask.sum() < 3:
            continue
        for i in range(len(METRICS)):
            a, b = x[i][mask], y[mask]
            if np.ptp(a) == 0:
                continue
            assert r.point["spearman"][s, i] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
            assert r.point["kendall"][s, i] == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
            assert r.point["pearson"][s, i] == pytest.approx(stats.pearsonr(a, b).statistic, abs=1e-12)
            checked += 1
    assert checked > 40
    assert r.n_images.tolist() == sl.masks.sum(1).tolist()


def test_median_and_majority_gold_equal_pandas(tifa):
    sub = tifa.ratings[tifa.ratings.rating_set == "dsg"]
    med = sub.groupby("image_id").rating.median().reindex(tifa.image_ids).to_numpy()
    assert np.array_equal(tifa.human("dsg", "median"), med)
    modes = sub.groupby("image_id").rating.agg(lambda v: v.mode().mean()).reindex(tifa.image_ids).to_numpy()
    assert np.array_equal(tifa.human("dsg", "majority"), modes)
    sl = slices(tifa, rated_tags(tifa), "t2i-model")
    r = evaluate_slices(tifa, sl, metrics=METRICS[:1], aggregate="median", bootstrap=None)
    m = sl.masks[1]
    x = tifa.score_matrix(METRICS[:1])[0]
    assert r.point["spearman"][1, 0] == pytest.approx(stats.spearmanr(x[m], med[m]).statistic, abs=1e-12)
    assert set(r.frame()["aggregate"]) == {"median"}


def test_the_all_slice_has_humaneval_resamples(tifa):
    """One resample matrix: the 'all' slice's resampled statistics are humaneval's on the same resamples."""
    boot = BootstrapSettings(n_resamples=200, seed=5)
    st = HumanEvalSettings(rank_bootstrap="linear")
    sl = slices(tifa, rated_tags(tifa), "t2i-model")
    r = evaluate_slices(tifa, sl, metrics=METRICS, bootstrap=boot, settings=st)
    he = evaluate(tifa.score_matrix(METRICS), tifa.human("dsg"), tifa.images.prompt_id.to_numpy(),
                  tifa.images.t2i_model.to_numpy(), METRICS, settings=st, bootstrap=boot)
    for stat in ("pearson", "pairwise_acc", "pairwise_acc_eq", "ordering_kendall", "spearman", "kendall"):
        assert np.allclose(r.samples[stat][0], he.samples[stat], atol=2e-6, equal_nan=True), stat


def test_slice_resamples_equal_resampled_data():
    """A slice's resampled Pearson and pair-wise accuracy are those of its images, weighted by the prompt counts."""
    rng = np.random.default_rng(1)
    n_p, M = 30, 3
    prompts = np.repeat(np.arange(n_p), M)
    models = np.tile(np.arange(M), n_p)
    y = np.round(rng.normal(size=prompts.size) * 2) / 2
    x = np.stack([y + rng.normal(size=y.size), rng.normal(size=y.size)])
    masks = np.stack([prompts < 12, (prompts % 3) == 0])
    boot = BootstrapSettings(n_resamples=20, seed=2)
    r = evaluate_slices_arrays(x, y, prompts, models, ["a", "b"], masks, ["first", "third"], bootstrap=boot)
    _, counts = next(prompt_resamples(n_p, boot))
    for s, mask in enumerate(masks):
        for b in range(5):
            w = counts[b][prompts][mask].astype(int)
            xs, ys = np.repeat(x[:, mask], w, axis=1), np.repeat(y[mask], w)
            for i in range(2):
                assert r.samples["pearson"][s, i, b] == pytest.approx(np.corrcoef(xs[i], ys)[0, 1], abs=1e-5)
            # pair-wise accuracy: same-prompt pairs the raters order, each pair counted w_p times
            pi = prompts[mask]
            num = den = 0.0
            idx = np.flatnonzero(mask)
            for u in range(idx.size):
                for v in range(u + 1, idx.size):
                    if pi[u] != pi[v] or y[idx[u]] == y[idx[v]]:
                        continue
                    c = counts[b][pi[u]]
                    den += c
                    num += c * (np.sign(x[0, idx[u]] - x[0, idx[v]]) == np.sign(y[idx[u]] - y[idx[v]]))
            if den:
                assert r.samples["pairwise_acc"][s, 0, b] == pytest.approx(num / den, abs=1e-6)


def test_small_slices_are_marked_not_silent():
    y = np.arange(8.0)
    x = np.stack([y + np.array([0.1, -0.2, 0.3, 0, 0.1, -0.1, 0.2, 0])])
    prompts = np.repeat(np.arange(4), 2)
    masks = np.stack([np.ones(8, bool), np.eye(8, dtype=bool)[0], np.zeros(8, bool)])
    r = evaluate_slices_arrays(x, y, prompts, np.tile([0, 1], 4), ["m"], masks, ["all", "one", "none"],
                               bootstrap=BootstrapSettings(n_resamples=50))
    fr = r.frame()
    assert fr.note[1].startswith("fewer than 2 rated images (1)") and fr.note[2].startswith("fewer than 2")
    assert fr.loc[1:2, ["spearman", "spearman_lo", "spearman_hi", "spearman_p"]].isna().all().all()
    assert "only 4 prompts" in fr.note[0]


def test_pvalues_and_reversals_on_a_planted_reversal():
    """Metric a follows the raters on slice A only, metric b on slice B only: both differences significant."""
    rng = np.random.default_rng(0)
    n_p, M = 200, 4
    prompts = np.repeat(np.arange(n_p), M)
    models = np.tile(np.arange(M), n_p)
    y = rng.normal(size=prompts.size)
    inA = prompts < n_p // 2
    a = np.where(inA, y, 0) + rng.normal(scale=0.3, size=y.size)
    b = np.where(~inA, y, 0) + rng.normal(scale=0.3, size=y.size)
    masks = np.stack([inA, ~inA])
    r = evaluate_slices_arrays(np.stack([a, b]), y, prompts, models, ["a", "b"], masks, ["A", "B"],
                               bootstrap=BootstrapSettings(n_resamples=400))
    p = r.pvalue("spearman")
    # wide margins: the planted correlations are ~0.95 and ~0, the p-value floor is 2/400
    assert r.point["spearman"][0, 0] > 0.8 and abs(r.point["spearman"][0, 1]) < 0.2
    assert p[0, 0] <= 0.005 and p[1, 1] <= 0.005 and p[0, 1] > 0.05
    rank, rev = r.stability("spearman")
    assert rank.loc["A", "B"] == pytest.approx(-1.0)
    assert len(rev) == 1 and rev.iloc[0][["slice_a", "slice_b"]].tolist() == ["A", "B"]


def test_slices_resamples_are_the_same_on_one_thread_and_on_several(monkeypatch):
    """The resamples of the slices run side by side on threads (ts2viz.parallel): the same numbers as on one."""
    import numpy as np

    from ts2viz.metaeval.slices import evaluate_slices_arrays
    from ts2viz.statistics.bootstrap import BootstrapSettings

    rng = np.random.default_rng(3)
    n = 240
    human = rng.normal(size=n)
    scores = np.stack([human + rng.normal(size=n), rng.normal(size=n), np.round(human + rng.normal(size=n))])
    scores[1, rng.random(n) < 0.1] = np.nan
    prompts, models = np.repeat(np.arange(60), 4), np.tile(["a", "b", "c", "d"], 60)
    masks = np.stack([np.ones(n, bool), prompts < 30, prompts % 3 == 0, prompts == 7, prompts == 8])
    masks[4] = False
    masks[4, 0] = True                                 # one image: a marked row, no resamples
    boot = BootstrapSettings(n_resamples=500, seed=11)
    runs = {}
    for threads in ("1", "3"):
        monkeypatch.setenv("TS2VIZ_THREADS", threads)
        runs[threads] = evaluate_slices_arrays(scores, human, prompts, models, ["a", "b", "c"], masks,
                                               ["all", "half", "third", "one", "tiny"], bootstrap=boot)
    one, many = runs["1"], runs["3"]
    assert set(one.samples) == set(many.samples)
    for stat, s in one.samples.items():
        assert np.isfinite(s[0]).any() and np.isnan(s[4]).all(), stat
        assert np.array_equal(s, many.samples[stat], equal_nan=True), stat
    assert one.frame().equals(many.frame())
