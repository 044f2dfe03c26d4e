"""Permutation tests and significance clusters on human gold standards (ts2viz.metaeval.permutation and
``ts2viz humaneval --clusters / --compare``): p-values against exact enumeration and a sampling loop
written here with scipy, the CLI end to end on the bundled TIFA160 and on a user's own rated set."""
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ts2viz.statistics.clusters import significance_clusters
from ts2viz.metaeval.permutation import (GoldStatistic, gold_clusters, gold_permutation_test, inversions_rows,
                                         kendall_rows, pairwise_gold_permutation)

REPO = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600)


# -- reference statistics written here -------------------------------------------------------------------

def z(v):
    return (v - v.mean()) / v.std()


def pair_acc(x, h, prompts, ties="wrong"):
    """Gecko's pair-wise accuracy by hand: same-prompt pairs the raters order; a metric tie wrong / half."""
    num = den = 0.0
    for i, j in itertools.combinations(range(len(h)), 2):
        if prompts[i] != prompts[j] or h[i] == h[j]:
            continue
        den += 1
        if x[i] == x[j]:
            num += 0.5 if ties == "half" else 0.0
        elif (x[i] > x[j]) == (h[i] > h[j]):
            num += 1
    return num / den


def ref_stat(stat, x, h, prompts):
    if stat == "spearman":
        return sps.spearmanr(x, h).statistic
    if stat == "kendall":
        return sps.kendalltau(x, h).statistic
    if stat == "pearson":
        return sps.pearsonr(x, h).statistic
    return pair_acc(x, h, prompts)


def tiny_set(seed=9):
    """3 prompts x 3 images, ratings with ties, metric A close to the ratings, B noisy."""
    rng = np.random.default_rng(seed)
    h = np.array([1.0, 3, 2, 4, 4, 1, 2, 5, 3])
    prompts = np.repeat(["p0", "p1", "p2"], 3)
    a = 10 * h + rng.normal(scale=8, size=9)          # different scales: the z-scoring matters
    b = np.round(h + rng.normal(scale=2.0, size=9))   # ties in B
    return a, b, h, prompts


# -- unit tests ----------------------------------------------------------------------------------------

def test_kendall_rows_and_inversions_against_scipy_and_brute_force():
    rng = np.random.default_rng(0)
    for n in (3, 8, 33, 100):
        x = np.round(rng.normal(size=(12, n)), 1)
        g = rng.integers(0, 4, size=n).astype(float)
        for variant in ("b", "c"):
            ref = [sps.kendalltau(r, g, variant=variant).statistic for r in x]
            np.testing.assert_allclose(kendall_rows(x, g, variant), ref, atol=1e-12)
    a = rng.integers(0, 9, size=(6, 37))
    brute = [sum(r[i] > r[j] for i in range(37) for j in range(i + 1, 37)) for r in a]
    np.testing.assert_array_equal(inversions_rows(a), brute)


@pytest.mark.parametrize("stat", ["spearman", "kendall", "pearson", "pairwise_acc"])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_exact_pvalue_against_enumeration(stat, alternative):
    a, b, h, prompts = tiny_set()
    za, zb = z(a), z(b)
    obs = ref_stat(stat, a, h, prompts) - ref_stat(stat, b, h, prompts)
    hits = 0
    for bits in itertools.product([False, True], repeat=9):
        bits = np.array(bits)
        d = (ref_stat(stat, np.where(bits, zb, za), h, prompts)
             - ref_stat(stat, np.where(bits, za, zb), h, prompts))
        hits += (abs(d) >= abs(obs) - 1e-12) if alternative == "two-sided" else (d >= obs - 1e-12)
    res = gold_permutation_test(a, b, h, prompts, GoldStatistic(stat), alternative=alternative, exact=True)
    assert res.difference == pytest.approx(obs, abs=1e-12)
    assert res.n_used == 512 and res.pvalue == pytest.approx(hits / 512)
    assert 0 < res.pvalue < 1


def test_nan_images_are_left_out_of_the_pair():
    a, b, h, prompts = tiny_set()
    a2 = np.r_[a, np.nan]
    b2 = np.r_[b, 7.0]
    res = gold_permutation_test(a2, b2, np.r_[h, 2.0], np.append(prompts, "p2"), GoldStatistic("pearson"), exact=True)
    ref = gold_permutation_test(a, b, h, prompts, GoldStatistic("pearson"), exact=True)
    assert res.pvalue == ref.pvalue and res.difference == pytest.approx(ref.difference)


def test_lazy_clusters_equal_clusters_from_every_pair():
    rng = np.random.default_rng(5)
    n, prompts = 60, np.repeat(np.arange(20), 3)
    h = rng.normal(size=n)
    x = np.stack([h + rng.normal(scale=s, size=n) for s in (0.3, 0.35, 1.0, 1.1, 3.0)])
    names = [f"m{i}" for i in range(5)]
    cl, tests = gold_clusters(names, x, h, prompts)
    full = pairwise_gold_permutation(x, h, prompts)
    ref = significance_clusters(names, full.estimate, full.pvalue)
    np.testing.assert_array_equal(cl.cluster, ref.cluster)
    assert cl.cluster[0] == 1 and cl.cluster[-1] > cl.cluster[1]
    assert (~np.isnan(tests.pvalue)).sum() <= 4


@pytest.mark.parametrize("stat, ties, spearman", [("pearson", "wrong", "textbook"), ("pairwise_acc", "wrong", "textbook"),
                                                   ("pairwise_acc", "half", "textbook"),
                                                   ("spearman", "wrong", "np-corrcoef")])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_all_pairs_at_once_equals_the_pair_by_pair_loop(stat, ties, spearman, alternative):
    from ts2viz.statistics.permutation_tests import PermutationSettings

    rng = np.random.default_rng(7)
    n, prompts = 90, np.repeat(np.arange(30), 3)
    h = np.round(rng.normal(size=n))                   # rating ties
    x = np.stack([h + rng.normal(scale=s, size=n) for s in (0.3, 0.35, 1.0, 1.1, 3.0)])
    x[2] = np.round(x[2])                              # metric ties
    spec = GoldStatistic(stat, metric_ties=ties, spearman=spearman)
    for settings in (PermutationSettings(), PermutationSettings(n_permutations=300, block_size=64, early_min=0.0,
                                                                early_max=1.0, seed=3)):
        fast = pairwise_gold_permutation(x, h, prompts, spec, alternative=alternative, settings=settings)
        loop = pairwise_gold_permutation(x, h, prompts, spec, alternative=alternative, settings=settings,
                                         vectorise=False)
        np.testing.assert_array_equal(fast.pvalue, loop.pvalue)
        np.testing.assert_array_equal(fast.n_used, loop.n_used)
        np.testing.assert_allclose(fast.difference, loop.difference, atol=1e-12)
    assert np.nanmin(fast.pvalue) < 0.05 < np.nanmax(fast.pvalue)


# -- the CLI on the bundled TIFA160 ---------------------------------------------------------------------

def documented_p(a, b, h, two_sided, n=1000, block=100, early=(0.02, 0.5), seed=0):
    """Pooled-Spearman permutation p with the documented draws, written here with scipy."""
    za, zb = z(a), z(b)
    rh = sps.rankdata(h)

    def rho(rows):
        r = sps.rankdata(rows, axis=1)
        r = r - r.mean(1, keepdims=True)
        g = rh - rh.mean()
        return (r * g).sum(1) / np.sqrt((r * r).sum(1) * (g * g).sum())

    obs = rho(a[None]) [0] - rho(b[None])[0]
    rng = np.random.default_rng(seed)
    hits = used = 0
    while used < n:
        bits = rng.random((block, a.size)) < 0.5
        d = rho(np.where(bits, zb, za)) - rho(np.where(bits, za, zb))
        hits += int(((np.abs(d) >= abs(obs) - 1e-12) if two_sided else (d >= obs - 1e-12)).sum())
        used += block
        p = (hits + 1) / (used + 1)
        if p < early[0] or p > early[1]:
            break
    return p


@pytest.fixture(scope="module")
def tifa():
    from ts2viz.gold import answer_scores, load_gold

    g = load_gold("tifa160")
    return g.with_scores(answer_scores(g))


def test_cli_clusters_on_tifa160(tmp_path, tifa):
    out = tmp_path / "h.csv"
    r = run("humaneval", "--gold", "tifa160", "--clusters", "--no-ci", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "cluster" in r.stdout.splitlines()[2] and "one-sided paired permutation p <= 0.05" in r.stdout
    assert "no correction" in r.stdout
    f = pd.read_csv(out)
    loo = f["metric"] == "human:leave-one-rater-out"
    assert f.loc[loo, "cluster"].isna().all()
    f = f[~loo].sort_values("spearman", ascending=False)
    c = f["cluster"].to_numpy()
    assert c.dtype.kind in "iu" or np.all(c == np.round(c))
    assert c[0] == 1 and np.all(np.diff(c) >= 0) and np.all(np.diff(c) <= 1)
    # the other raters (TIFA's) agree with the DSG raters far better than any metric: alone in cluster 1
    assert f["metric"].iloc[0] == "human:tifa" and (c == 1).sum() == 1
    # check the decisions the greedy walk made, against the p-value computed here
    h = tifa.human()
    best = f["metric"].iloc[1]
    for m, cm in zip(f["metric"].iloc[2:9], c[2:9]):
        p = documented_p(tifa.scores[best].to_numpy(float), tifa.scores[m].to_numpy(float), h, False)
        assert (cm > c[1]) == (p <= 0.05)
        if cm > c[1]:
            break


def test_cli_compare_on_tifa160(tmp_path, tifa):
    out = tmp_path / "c.csv"
    a, b = "dsg:PaLI-17B", "dsg-nodep:PaLI-17B"
    r = run("humaneval", "--gold", "tifa160", "--compare", a, b, "--resamples", "300", "--permutations", "1000",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "PERM-BOTH" in r.stdout and "bootstrap interval" in r.stdout
    f = pd.read_csv(out).set_index("statistic")
    assert list(f.index) == ["spearman", "kendall", "pearson", "pairwise_acc"]
    h = tifa.human()
    x, y = tifa.scores[a].to_numpy(float), tifa.scores[b].to_numpy(float)
    assert f.loc["spearman", "estimate_a"] == pytest.approx(sps.spearmanr(x, h).statistic, abs=1e-6)
    assert f.loc["kendall", "estimate_b"] == pytest.approx(sps.kendalltau(y, h).statistic, abs=1e-6)
    # the two-sided p (no early stop below 0.02 when p-values are shown) against the loop written here
    assert f.loc["spearman", "pvalue_permutation"] == pytest.approx(
        documented_p(x, y, h, True, early=(0.0, 0.5)), abs=1e-6)
    assert (f["diff_lo"] <= f["difference"]).all() and (f["difference"] <= f["diff_hi"]).all()
    # a large difference: every statistic significant
    r = run("humaneval", "--gold", "tifa160", "--compare", "tifa_mplug-large", "vq2a:PaLI-17B", "--no-ci",
            "--permutations", "500", "--out", "-")
    g = pd.read_csv(__import__("io").StringIO(r.stdout))
    assert (g["pvalue_permutation"] < 0.01).all() and g["diff_lo"].isna().all() and (g["n_permutations"] == 500).all()


@pytest.mark.parametrize("args, message", [
    (["--compare", "tifa_vilt", "nope"], "no metric 'nope'"),
    (["--compare", "tifa_vilt", "tifa_vilt"], "two different metrics"),
    (["--clusters", "--cluster-alpha", "2"], "--cluster-alpha"),
    (["--clusters", "--permutations", "many"], "--permutations"),
])
def test_cli_bad_input(tmp_path, args, message):
    out = tmp_path / "x.csv"
    r = run("humaneval", "--gold", "tifa160", "--no-ci", *args, "--out", str(out))
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


# -- a user's own rated set -------------------------------------------------------------------------------

def make_user_set(path, n_prompts=30, seed=0):
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    imgs, ratings, scores = [], [], []
    for q in range(n_prompts):
        for j, mdl in enumerate(("A", "B", "C")):
            iid = f"p{q}-{mdl}"
            imgs.append({"image_id": iid, "prompt": f"prompt {q}", "t2i_model": mdl})
            true = rng.normal() + 0.5 * j
            for r in range(3):
                ratings.append({"image_id": iid, "rater": f"r{r}",
                                "rating": int(np.clip(round(3 + true + rng.normal(scale=0.5)), 1, 5))})
            scores.append({"image_id": iid, "good": true + 0.2 * rng.normal(), "good2": true + 0.25 * rng.normal(),
                           "bad": rng.normal()})
    pd.DataFrame(imgs).to_csv(path / "images.csv", index=False)
    pd.DataFrame(ratings).to_csv(path / "ratings.csv", index=False)
    pd.DataFrame(scores).to_csv(path / "scores.csv", index=False)
    return path


def test_cli_on_a_user_rated_set(tmp_path):
    folder = make_user_set(tmp_path / "mine")
    out = tmp_path / "h.csv"
    r = run("humaneval", "--gold", str(folder), "--clusters", "--cluster-stat", "kendall", "--no-ci",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "by pooled Kendall tau-b" in r.stdout
    f = pd.read_csv(out).set_index("metric")
    assert f.loc["good", "cluster"] == 1 and f.loc["bad", "cluster"] == 2
    assert f.loc["good2", "cluster"] == 1 or f.loc["good2", "kendall"] < f.loc["good", "kendall"] - 0.05
    r = run("humaneval", "--gold", str(folder), "--compare", "good", "bad", "--no-ci", "--out", "-")
    assert r.returncode == 0, r.stderr
    g = pd.read_csv(__import__("io").StringIO(r.stdout))
    assert (g["pvalue_permutation"] < 0.001).all() and (g["n_permutations"] == 10000).all()
