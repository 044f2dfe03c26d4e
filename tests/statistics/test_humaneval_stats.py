"""Gecko's three tasks: each statistic against an independent computation (scipy, loops over pairs,
resampled data built explicitly), on generated rated data."""
import math

import numpy as np
import pytest
from scipy import stats

from ts2viz.metaeval import average_correlations, evaluate, kendall, pearson, spearman
from ts2viz.statistics.correlation import count_inversions
from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
from ts2viz.metaeval.prompt_bootstrap import prompt_resamples
from ts2viz.statistics.bootstrap import BootstrapSettings


def synthetic(n_prompts=30, n_models=4, k=3, seed=0, ties=True):
    rng = np.random.default_rng(seed)
    prompts = np.repeat(np.arange(n_prompts), n_models)
    models = np.tile(np.arange(n_models), n_prompts)
    quality = rng.normal(size=n_prompts)[prompts] + 0.4 * models
    human = np.clip(np.round(3 + quality + rng.normal(scale=0.7, size=prompts.size)), 1, 5)
    scores = np.stack([quality + rng.normal(scale=s, size=prompts.size) for s in np.linspace(0.3, 2.0, k)])
    if ties:
        scores[-1] = np.round(scores[-1])          # a metric with many ties (like TIFA / DSG)
    scores[0, 3] = np.nan                           # one unscored image
    return scores, human, prompts.astype(str), np.array([f"m{j}" for j in models])


@pytest.mark.parametrize("seed", range(5))
def test_correlations_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    x = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
    y = np.round(x + rng.normal(size=n), 1)
    x[rng.random(n) < 0.1] = np.nan
    ok = ~np.isnan(x)
    if ok.sum() < 3:
        return
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x[ok], y[ok])[0], abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x[ok], y[ok])[0], abs=1e-12)
    for v in "bc":
        assert kendall(x, y, v) == pytest.approx(stats.kendalltau(x[ok], y[ok], variant=v)[0], abs=1e-12)
    a = rng.integers(0, 7, size=n)
    assert count_inversions(a) == sum(int(a[i] > a[j]) for i in range(n) for j in range(i + 1, n))
    assert math.isnan(kendall([1, 1, 1], [1, 2, 3])) and math.isnan(spearman([1.0], [2.0]))


def test_point_wise_pooled_per_model_and_average():
    x, h, p, m = synthetic()
    r = evaluate(x, h, p, m, ["a", "b", "c"], bootstrap=None)
    f = r.frame().set_index("metric")
    for i, name in enumerate("abc"):
        ok = ~np.isnan(x[i])
        assert f.loc[name, "n"] == ok.sum()
        assert f.loc[name, "spearman"] == pytest.approx(stats.spearmanr(x[i][ok], h[ok])[0])
        assert f.loc[name, "kendall"] == pytest.approx(stats.kendalltau(x[i][ok], h[ok])[0])
        assert f.loc[name, "kendall_other"] == pytest.approx(stats.kendalltau(x[i][ok], h[ok], variant="c")[0])
        per = []
        for model in np.unique(m):
            sel = ok & (m == model)
            per.append(stats.spearmanr(x[i][sel], h[sel])[0])
        assert f.loc[name, "spearman_model_avg"] == pytest.approx(np.tanh(np.mean(np.arctanh(per))))
    plain = evaluate(x, h, p, m, list("abc"), settings=HumanEvalSettings(model_average="mean"), bootstrap=None)
    assert plain.frame()["spearman_model_avg"].iloc[0] == pytest.approx(np.mean(r.per_model["spearman"][0]))
    tifa_nb = evaluate(x, h, p, m, list("abc"), settings=HumanEvalSettings(spearman="np-corrcoef"), bootstrap=None)
    ok = ~np.isnan(x[1])
    assert tifa_nb.point["spearman"][1] == pytest.approx(np.corrcoef(x[1][ok], h[ok])[0, 1])
    assert average_correlations(np.array([0.5, np.nan]), "fisher") == pytest.approx(0.5)


def test_pair_wise_by_loops():
    x, h, p, m = synthetic()
    r = evaluate(x, h, p, m, list("abc"), bootstrap=None)
    for i in range(3):
        right = total = 0
        for a in range(len(h)):
            for b in range(a + 1, len(h)):
                if p[a] != p[b] or h[a] == h[b] or np.isnan(x[i][a]) or np.isnan(x[i][b]):
                    continue
                total += 1
                right += (x[i][a] - x[i][b]) * (h[a] - h[b]) > 0
        assert r.point["pairwise_acc"][i] == pytest.approx(right / total)


def test_model_ordering_is_scipy_wilcoxon():
    x, h, p, m = synthetic(n_prompts=40)
    r = evaluate(x, h, p, m, list("abc"), settings=HumanEvalSettings(alpha=0.01), bootstrap=None)
    of = r.ordering_frame()
    hm = h.reshape(40, 4)
    row = of[(of.scorer == "human") & (of.model_a == "m0") & (of.model_b == "m3")].iloc[0]
    want = stats.wilcoxon(hm[:, 0], hm[:, 3])
    assert row["pvalue"] == pytest.approx(want.pvalue)
    assert row["outcome"] == (int(np.sign(np.mean(hm[:, 0] - hm[:, 3]))) if want.pvalue < 0.01 else 0)
    agree = of[of.scorer == "b"]["agrees"].mean()
    assert r.frame().set_index("metric").loc["b", "ordering_agreement"] == pytest.approx(agree)


def test_bootstrap_resamples_equal_explicit_resampled_data():
    x, h, p, m = synthetic(n_prompts=12, n_models=3)
    boot = BootstrapSettings(n_resamples=25, seed=3)
    r = evaluate(x, h, p, m, list("abc"), bootstrap=boot)
    pc = np.unique(p, return_inverse=True)[1]
    # codes in order of first appearance (prompts are "0", "1", ... in order here)
    order = {v: i for i, v in enumerate(dict.fromkeys(p))}
    pc = np.array([order[v] for v in p])
    counts = np.concatenate([c for _, c in prompt_resamples(12, boot)])
    for b in range(boot.n_resamples):
        idx, grp = [], []
        copy = 0
        for q in range(12):
            for _ in range(int(counts[b, q])):
                members = np.flatnonzero(pc == q)
                idx.extend(members)
                grp.extend([copy] * len(members))
                copy += 1
        idx, grp = np.array(idx), np.array(grp)
        for i in range(3):
            xi, hi = x[i][idx], h[idx]
            ok = ~np.isnan(xi)
            assert r.samples["pearson"][i, b] == pytest.approx(stats.pearsonr(xi[ok], hi[ok])[0], abs=1e-9)
            assert r.samples["kendall"][i, b] == pytest.approx(stats.kendalltau(xi[ok], hi[ok])[0], abs=1e-9)
            # pair-wise accuracy over pairs within each drawn copy of a prompt
            right = total = 0
            for g in np.unique(grp):
                mem = np.flatnonzero((grp == g) & ok)
                for u in range(len(mem)):
                    for v in range(u + 1, len(mem)):
                        a, c = mem[u], mem[v]
                        if hi[a] != hi[c]:
                            total += 1
                            right += (xi[a] - xi[c]) * (hi[a] - hi[c]) > 0
            assert r.samples["pairwise_acc"][i, b] == pytest.approx(right / total)
    lo, hi_ = r.interval("pearson")
    assert (lo <= r.point["pearson"]).all() and (r.point["pearson"] <= hi_).all()
    cmp = r.compare("a", "c", "pearson")
    assert cmp["diff"] == pytest.approx(r.point["pearson"][0] - r.point["pearson"][2])
    assert cmp["lo"] <= cmp["diff"] <= cmp["hi"]


def test_leave_one_rater_out_by_hand(tmp_path):
    import pandas as pd

    from ts2viz.gold import load_folder
    from ts2viz.metaeval.rated import leave_one_rater_out

    pd.DataFrame({"image_id": list("abcd"), "prompt": ["p", "p", "q", "q"]}).to_csv(tmp_path / "images.csv", index=False)
    ratings = {"a": [1, 2, 3], "b": [4, 5], "c": [2], "d": [5, 4, 4]}
    pd.DataFrame([{"image_id": i, "rating": v} for i, vs in ratings.items() for v in vs]).to_csv(
        tmp_path / "ratings.csv", index=False)
    got = leave_one_rater_out(load_folder(tmp_path))
    xs, ys = [], []
    for vs in ratings.values():
        for k, v in enumerate(vs):
            if len(vs) >= 2:
                xs.append(v)
                ys.append(np.mean(vs[:k] + vs[k + 1:]))
    assert got["n"] == len(xs) == 8
    assert got["spearman"] == pytest.approx(stats.spearmanr(xs, ys)[0])
    assert got["kendall"] == pytest.approx(stats.kendalltau(xs, ys)[0])
    assert got["pearson"] == pytest.approx(stats.pearsonr(xs, ys)[0])
