"""Resampled rank correlations of the human-gold bootstrap (ts2viz.statistics.rank_bootstrap and the
paths of ts2viz.metaeval.humaneval that use it), each against a straightforward computation written
here: scipy on explicitly resampled (repeated) data, brute-force counts, finite differences of the
weighted statistics' definitions, and the draws of the plain per-resample formula."""
import math

import numpy as np
import pytest
from scipy import stats

import ts2viz.metaeval.prompt_bootstrap as he
from ts2viz.errors import InputError
from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
from ts2viz.metaeval.humaneval import evaluate
from ts2viz.metaeval.prompt_bootstrap import prompt_resamples, rank_interval_methods
from ts2viz.statistics.rank_bootstrap import ResampledSpearman, kendall_influence, prefix_counts, spearman_influence
from ts2viz.statistics.bootstrap import BootstrapSettings


def rated(n_prompts, n_models=5, k=4, seed=0):
    rng = np.random.default_rng(seed)
    prompts = np.repeat(np.arange(n_prompts), n_models)
    models = np.tile(np.arange(n_models), n_prompts)
    quality = rng.normal(size=n_prompts)[prompts] + 0.2 * models + rng.normal(scale=0.5, size=prompts.size)
    human = np.clip(np.round(3 + quality + rng.normal(scale=0.6, size=prompts.size)), 1, 5)
    scores = quality[None, :] + np.linspace(0.2, 2.0, k)[:, None] * rng.normal(size=(k, prompts.size))
    scores[k // 2:] = np.round(scores[k // 2:] * 2) / 2                    # metrics with many ties
    return scores, human, prompts, models


# -- references, written from the definitions ----------------------------------------------------------

def weighted_ranks(v, w):
    """R_i = sum_j w_j H(v_i - v_j) + 1/2, H(0) = 1/2: the average rank of item i when every item j is
    repeated w_j times (a loop over pairs)."""
    n = v.size
    return np.array([sum(w[j] * (1.0 if v[j] < v[i] else 0.5 if v[j] == v[i] else 0.0) for j in range(n)) + 0.5
                     for i in range(n)])


def weighted_spearman(x, y, w):
    rx, ry = weighted_ranks(x, w), weighted_ranks(y, w)
    m = (w.sum() + 1) / 2
    return (w * (rx - m) * (ry - m)).sum() / math.sqrt((w * (rx - m) ** 2).sum() * (w * (ry - m) ** 2).sum())


def weighted_kendall(x, y, w, variant):
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    s = (w[:, None] * w[None, :] * sx * sy).sum()
    N = w.sum()
    if variant == "b":
        tx = sum(w[x == v].sum() ** 2 for v in np.unique(x))
        ty = sum(w[y == v].sum() ** 2 for v in np.unique(y))
        return s / math.sqrt((N * N - tx) * (N * N - ty))
    m = min(np.unique(x).size, np.unique(y).size)
    return s * m / ((m - 1) * N * N)


def expanded(counts_row, prompts):
    """Indices of the explicitly resampled data: every image of a drawn prompt, once per draw."""
    return np.concatenate([np.flatnonzero(prompts == p) for p in range(counts_row.size)
                           for _ in range(int(counts_row[p]))])


# -- tests ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values", [5, 300])
def test_prefix_counts_by_brute_force(values):
    a = np.random.default_rng(values).integers(0, values, size=700)
    le, lt = prefix_counts(a)
    assert (le == [(a[:p] <= a[p]).sum() for p in range(a.size)]).all()
    assert (lt == [(a[:p] < a[p]).sum() for p in range(a.size)]).all()


@pytest.mark.parametrize("ties", [False, True])
def test_influences_are_derivatives_of_the_weighted_statistics(ties):
    rng = np.random.default_rng(3)
    n = 40
    x = rng.normal(size=n)
    y = np.round(x + rng.normal(size=n))
    if ties:
        x = np.round(x * 2) / 2
    rho, psi = spearman_influence(x, y)
    assert rho == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert psi.sum() == pytest.approx(0.0, abs=1e-12)              # scaling every weight leaves rho alone
    eps = 1e-6
    for j in range(0, n, 7):
        up, down = np.ones(n), np.ones(n)
        up[j] += eps
        down[j] -= eps
        assert psi[j] == pytest.approx((weighted_spearman(x, y, up) - weighted_spearman(x, y, down)) / (2 * eps),
                                       abs=1e-7)
    for variant in "bc":
        tau, psk = kendall_influence(x, y, variant)
        assert tau == pytest.approx(stats.kendalltau(x, y, variant=variant)[0], abs=1e-12)
        assert psk.sum() == pytest.approx(0.0, abs=1e-12)
        for j in range(0, n, 7):
            up, down = np.ones(n), np.ones(n)
            up[j] += eps
            down[j] -= eps
            fd = (weighted_kendall(x, y, up, variant) - weighted_kendall(x, y, down, variant)) / (2 * eps)
            assert psk[j] == pytest.approx(fd, abs=1e-7)


@pytest.mark.parametrize("ties", [False, True])
def test_resampled_spearman_is_scipy_on_the_resampled_data(ties):
    rng = np.random.default_rng(5)
    P = 30
    prompts = np.repeat(np.arange(P), 3)
    x = rng.normal(size=prompts.size)
    y = np.round(x + rng.normal(size=prompts.size))
    if ties:
        x = np.round(x)                                  # several images per (x, y) cell
    counts = rng.multinomial(P, np.full(P, 1.0 / P), size=12).astype(float)
    got = ResampledSpearman(x, y, prompts, P)(counts)
    for b in range(counts.shape[0]):
        idx = expanded(counts[b], prompts)
        assert got[b] == pytest.approx(stats.spearmanr(x[idx], y[idx])[0], abs=1e-12)


@pytest.mark.parametrize("variant", ["b", "c"])
def test_exact_rank_resamples_equal_explicit_resampled_data(variant):
    x, h, p, m = rated(14, n_models=3, k=3, seed=2)
    x[0, 4] = np.nan                                    # an unscored image
    boot = BootstrapSettings(n_resamples=20, seed=4)
    r = evaluate(x, h, p, m, list("abc"), settings=HumanEvalSettings(kendall=variant), bootstrap=boot)
    assert r.interval_methods == {"spearman": "exact", "kendall": "exact"} and r.interval_notes() == []
    counts = np.concatenate([c for _, c in prompt_resamples(14, boot)])
    for b in range(boot.n_resamples):
        idx = expanded(counts[b], p)
        for i in range(3):
            xi, hi = x[i][idx], h[idx]
            ok = ~np.isnan(xi)
            assert r.samples["spearman"][i, b] == pytest.approx(stats.spearmanr(xi[ok], hi[ok])[0], abs=1e-9)
            assert r.samples["kendall"][i, b] == pytest.approx(
                stats.kendalltau(xi[ok], hi[ok], variant=variant)[0], abs=1e-9)


def test_linear_resamples_track_the_exact_ones_and_fixed_ranks_do_not():
    """On 1,500 images the first-order resamples follow the exact ones closely (same spread, endpoints
    within a fraction of it); the weighted Pearson r of the full set's ranks (what ts2viz computed
    before) has a visibly smaller spread for a well-correlated metric."""
    x, h, p, m = rated(300, k=4, seed=1)
    boot = BootstrapSettings(n_resamples=1000, seed=0)
    ex = evaluate(x, h, p, m, list("abcd"), settings=HumanEvalSettings(rank_bootstrap="exact"), bootstrap=boot)
    li = evaluate(x, h, p, m, list("abcd"), settings=HumanEvalSettings(rank_bootstrap="linear"), bootstrap=boot)
    assert li.interval_methods == {"spearman": "linear", "kendall": "linear"} and len(li.interval_notes()) == 2
    for stat in ("spearman", "kendall"):
        e, lin = ex.samples[stat], li.samples[stat]
        sd = e.std(1)
        for i in range(4):
            assert np.corrcoef(e[i], lin[i])[0, 1] > 0.99
            assert lin[i].std() / sd[i] == pytest.approx(1.0, abs=0.03)
        lo_e, hi_e = ex.interval(stat)
        lo_l, hi_l = li.interval(stat)
        assert (np.abs(lo_e - lo_l) < 0.35 * sd).all() and (np.abs(hi_e - hi_l) < 0.35 * sd).all()
        assert (ex.point[stat] == li.point[stat]).all()
    # the old "fixed ranks" resamples: weighted Pearson r of the full set's average ranks
    counts = np.concatenate([c for _, c in prompt_resamples(300, boot)])
    w = counts[:, p]
    rx, ry = stats.rankdata(x[0]), stats.rankdata(h)
    mx = (w * rx).sum(1, keepdims=True) / w.sum(1, keepdims=True)
    my = (w * ry).sum(1, keepdims=True) / w.sum(1, keepdims=True)
    fixed = (w * (rx - mx) * (ry - my)).sum(1) / np.sqrt((w * (rx - mx) ** 2).sum(1) * (w * (ry - my) ** 2).sum(1))
    exact_sd = ex.samples["spearman"][0].std()
    assert abs(fixed.std() / exact_sd - 1) > 2 * abs(li.samples["spearman"][0].std() / exact_sd - 1)


def test_float32_products_agree_with_float64(monkeypatch):
    x, h, p, m = rated(400, k=3, seed=6)
    boot = BootstrapSettings(n_resamples=300, seed=1)
    st = HumanEvalSettings(rank_bootstrap="linear")
    monkeypatch.setattr(he, "FLOAT32_MIN_PROMPTS", 1)
    single = evaluate(x, h, p, m, list("abc"), settings=st, bootstrap=boot)
    monkeypatch.setattr(he, "FLOAT32_MIN_PROMPTS", 10 ** 9)
    double = evaluate(x, h, p, m, list("abc"), settings=st, bootstrap=boot)
    for stat in he.INTERVAL_STATS:
        a, b = single.samples[stat], double.samples[stat]
        assert (np.isnan(a) == np.isnan(b)).all()
        assert np.nanmax(np.abs(a - b)) < 1e-6, stat             # the stated tolerance
        if stat in ("pearson", "spearman", "kendall"):
            assert np.nanmax(np.abs(a - b)) > 0                  # the float32 path did run


@pytest.mark.parametrize("P,B", [(1, 3), (7, 5), (13, 40), (2001, 9)])
def test_prompt_counts_are_the_plain_formula_draws(P, B):
    boot = BootstrapSettings(n_resamples=B, seed=11)
    chunk = 10_000
    rng = np.random.default_rng(11)
    want = []
    step = max(1, min(B, chunk // P))
    for start in range(0, B, step):
        b = min(step, B - start)
        draws = rng.integers(0, P, size=(b, P))
        want.append(np.stack([np.bincount(row, minlength=P) for row in draws]))
    got = np.concatenate([c for _, c in prompt_resamples(P, boot, chunk_items=chunk, dtype=np.float32)])
    assert got.dtype == np.float32 and np.array_equal(got, np.concatenate(want))


def test_methods_by_size_and_setting():
    auto = HumanEvalSettings()
    assert rank_interval_methods(800, 160, auto) == {"spearman": "exact", "kendall": "exact"}        # TIFA160
    assert rank_interval_methods(100_000, 20_000, auto) == {"spearman": "linear", "kendall": "linear"}
    assert rank_interval_methods(6_000, 10, auto)["kendall"] == "linear"        # images^2 pairs: too many
    assert rank_interval_methods(5000, 1000, HumanEvalSettings(rank_bootstrap="exact"))["spearman"] == "exact"
    with pytest.raises(InputError, match="would not fit in memory"):
        rank_interval_methods(100_000, 20_000, HumanEvalSettings(rank_bootstrap="exact"))
    assert rank_interval_methods(50, 10, HumanEvalSettings(rank_bootstrap="linear"))["kendall"] == "linear"
    assert rank_interval_methods(50, 10, HumanEvalSettings(spearman="np-corrcoef"))["spearman"] == "pearson"
    with pytest.raises(InputError, match="rank_bootstrap"):
        HumanEvalSettings(rank_bootstrap="fixed-ranks")
    x, h, p, m = rated(10, k=2)
    assert evaluate(x, h, p, m, ["a", "b"], bootstrap=None).interval_notes() == []


def test_cli_says_when_rank_intervals_are_first_order(tmp_path, capsys):
    from gold_helpers import make_folder

    from ts2viz.cli import main

    folder = make_folder(tmp_path / "set")
    assert main(["humaneval", "--gold", str(folder), "--resamples", "200", "--rank-bootstrap", "linear"]) == 0
    table = capsys.readouterr().out
    assert "Spearman intervals: first-order (linearised) bootstrap" in table and "Kendall tau-b intervals" in table
    assert main(["humaneval", "--gold", str(folder), "--resamples", "200", "--rank-bootstrap", "linear",
                 "--out", "-"]) == 0
    got = capsys.readouterr()
    assert got.out.startswith("metric,") and "first-order" in got.err                 # the CSV stays clean
    assert main(["humaneval", "--gold", str(folder), "--resamples", "200"]) == 0       # auto: exact here
    assert "first-order" not in capsys.readouterr().out


@pytest.mark.parametrize("how", ["exact", "linear"])
def test_a_metric_with_too_few_scores_gets_no_rank_interval(how):
    x, h, p, m = rated(12, n_models=3, k=3, seed=8)
    x[1] = np.nan
    x[2, 1:] = np.nan                                   # one scored image: no pair
    r = evaluate(x, h, p, m, list("abc"), settings=HumanEvalSettings(rank_bootstrap=how),
                 bootstrap=BootstrapSettings(n_resamples=30, seed=0))
    for stat in ("spearman", "kendall"):
        assert np.isnan(r.samples[stat][1:]).all() and not np.isnan(r.samples[stat][0]).any()
