"""Bootstrap intervals, paired tests and rank intervals (ts2viz.statistics).

References from outside the code under test: scipy.stats.wilcoxon (the p-values), a hand-written
Holm loop, exact enumeration of tiny bootstrap distributions, hand-computed examples, and a coverage
simulation with a known truth.
"""
import dataclasses
import functools
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.errors import InputError
from ts2viz.metametrics.walks import STATS
from ts2viz.metametrics.results import MetaMetrics
from core_helpers import make_dataset, make_scores
from ts2viz.metametrics import comparison as pcmp, intervals as bs, ranks as ri
from ts2viz.metametrics.table import leaderboard_table
from ts2viz.statistics import bootstrap as kernels, wilcoxon as wx


@pytest.fixture(scope="module")
def bundled():
    ds, sc = load_dataset("ts2"), bundled_scores()
    return {mode: compute(ds, sc, mode=mode) for mode in ("paper", "spec")}


@pytest.fixture(scope="module")
def paper_boot(bundled):
    return bs.bootstrap(bundled["paper"], n_resamples=4000)


@functools.lru_cache(maxsize=1)
def _tiny() -> MetaMetrics:
    ds = make_dataset({0: {"0": 2, "1": 2}})
    return compute(ds, make_scores(ds, {"m": np.array([0.9, 0.8, 0.2, 0.1])}), mode="paper")


def synthetic(values: np.ndarray, partitions, excluded=(), metrics=None) -> MetaMetrics:
    """A MetaMetrics over made-up per-SEG values (SEGs, metrics), the same for every stat: a computed
    result with its per-SEG fields replaced (whatever else MetaMetrics holds stays valid)."""
    values = np.asarray(values, float)
    S, M = values.shape
    metrics = metrics or [f"m{i}" for i in range(M)]
    return dataclasses.replace(_tiny(), metrics=list(metrics), seg_ids=list(range(S)), partitions=list(partitions),
                               seg_values={s: values.copy() for s in STATS}, n_walks=np.ones((S, M), np.int64),
                               excluded=list(excluded))


def scipy_p(x, y):
    ok = ~np.isnan(x) & ~np.isnan(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.wilcoxon(x[ok], y[ok])


# -- Wilcoxon ---------------------------------------------------------------------------------------

def test_wilcoxon_hand_example():
    # d = 1, 2, 3, -4: R+ = 6, R- = 4; the 16 subsets of {1,2,3,4} have 7 sums >= 6 and 11 <= 6,
    # so p = 2 * 7/16 = 0.875 (exact: n = 4, no ties, no zeros)
    r = wx.wilcoxon([1, 2, 3, -4], [0, 0, 0, 0])
    assert float(r.statistic) == 4.0 and float(r.pvalue) == 0.875 and r.method == "exact" and r.n == 4
    # all differences positive, n = 5: p = 2 / 32
    assert float(wx.wilcoxon(np.arange(1.0, 6.0), np.zeros(5)).pvalue) == 2 / 32


@pytest.mark.parametrize("mode", ["paper", "spec"])
@pytest.mark.parametrize("cell", ["ord_avg", "sep_avg", "delta_synth", "kendall_nat", "sep_nat", "ord_real"])
def test_wilcoxon_equals_scipy_on_bundled_per_seg_values(bundled, mode, cell):
    mm = bundled[mode]
    v = bs.seg_values(mm, cell)
    I, J = np.triu_indices(v.shape[1], 1)
    mine = wx.wilcoxon(v[:, I].T, v[:, J].T)          # all 171 pairs at once
    for k, (i, j) in enumerate(zip(I, J)):
        ref = scipy_p(v[:, i], v[:, j])
        assert float(mine.statistic[k]) == float(ref.statistic)
        assert float(mine.pvalue[k]) == pytest.approx(float(ref.pvalue), rel=1e-12, abs=0), (i, j)


def test_bundled_cells_exercise_exact_and_asymptotic(bundled):
    methods = set()
    for cell in ("ord_nat", "sep_nat", "delta_nat", "ord_avg"):
        v = bs.seg_values(bundled["paper"], cell)
        I, J = np.triu_indices(v.shape[1], 1)
        methods |= set(wx.wilcoxon(v[:, I].T, v[:, J].T).method.tolist())
    assert {"exact", "asymptotic"} <= methods


def _case(kind, n, rng):
    if kind == "continuous":
        return rng.normal(size=n), rng.normal(0.3, 1, size=n)
    if kind == "ties":      # tied |d| but no zero differences
        d = rng.choice([-2.0, -1.0, 1.0, 2.0, 3.0], size=n)
        d[0], d[-1] = 1.0, 1.0
        return d, np.zeros(n)
    if kind == "zeros":     # zero differences, distinct non-zero |d|
        d = rng.permutation(np.arange(1.0, n + 1)) * rng.choice([-1.0, 1.0], size=n) + 0.01 * np.arange(n)
        d[: max(1, n // 4)] = 0.0
        y = rng.normal(size=n)
        return y + d, y
    d = rng.choice([-1.0, 0.0, 1.0, 2.0], size=n)        # ties and zeros
    d[0], d[1] = 0.0, 1.0
    return d, np.zeros(n)


@pytest.mark.parametrize("n", [2, 5, 12, 13, 14, 20, 49, 50, 51, 80])
@pytest.mark.parametrize("kind", ["continuous", "ties", "zeros", "both"])
def test_wilcoxon_equals_scipy_synthetic(n, kind):
    rng = np.random.default_rng(1000 * n + len(kind))
    # scipy enumerates 2**n sign flips for n <= 13 with ties or zeros (seconds at 12, 13): one case there
    for _ in range(1 if 10 <= n <= 13 and kind != "continuous" else 5):
        x, y = _case(kind, n, rng)
        ref = scipy_p(x, y)
        mine = wx.wilcoxon(x, y)
        assert float(mine.statistic) == float(ref.statistic)
        assert float(mine.pvalue) == pytest.approx(float(ref.pvalue), rel=1e-12, abs=0)
        d = x - y
        ties_or_zeros = (d == 0).any() or len(np.unique(np.abs(d[d != 0]))) < (d != 0).sum()
        want = ("asymptotic" if n > 50 else "exact" if not ties_or_zeros
                else "permutation" if n <= 13 else "asymptotic")
        assert mine.method == want


def test_wilcoxon_drops_nan_pairs_and_broadcasts():
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(3, 4, 30)), 1)
    y = np.round(rng.normal(0.2, 1, size=(3, 4, 30)), 1)
    x[0, 0, :5] = np.nan
    y[1, 2, 10:12] = np.nan
    r = wx.wilcoxon(x, y)
    assert r.pvalue.shape == (3, 4)
    for idx in itertools.product(range(3), range(4)):
        ref = scipy_p(x[idx], y[idx])
        assert float(r.pvalue[idx]) == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert r.n[0, 0] == 25 and r.n[1, 2] == 28 and r.n[2, 3] == 30
    nothing = wx.wilcoxon([np.nan, 1.0], [1.0, np.nan])
    assert np.isnan(nothing.pvalue) and nothing.n == 0
    # only zero differences: p = 1 when small (all sign flips equal), NaN above 13 pairs, as scipy
    assert float(wx.wilcoxon(np.ones(5), np.ones(5)).pvalue) == 1.0
    assert float(scipy_p(np.ones(5), np.ones(5)).pvalue) == 1.0
    assert np.isnan(wx.wilcoxon(np.ones(20), np.ones(20)).pvalue)


# -- Holm ------------------------------------------------------------------------------------------

def holm_reference(p):
    """Holm's step-down procedure, written out as a loop."""
    idx = [i for i in range(len(p)) if not math.isnan(p[i])]
    m = len(idx)
    order = sorted(idx, key=lambda i: p[i])
    out = [math.nan] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_holm_hand_example_and_reference():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max
    assert wx.holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 40))
        p[rng.random(p.size) < 0.2] = np.nan
        if p.size > 3:
            p[1] = p[2]                       # a tie
        got = wx.holm(p)
        assert np.allclose(got, holm_reference(p.tolist()), equal_nan=True, rtol=1e-15, atol=0)
    mat = np.array([[np.nan, 0.01], [0.02, np.nan]])
    assert np.allclose(wx.holm(mat), [[np.nan, 0.02], [0.02, np.nan]], equal_nan=True)


# -- bootstrap intervals ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["paper", "spec"])
def test_estimates_are_the_leaderboard_and_intervals_contain_them(bundled, mode):
    mm = bundled[mode]
    b = bs.bootstrap(mm, n_resamples=2000, seed=5)
    av = mm.averages()
    assert b.cells == tuple(av)
    for j, c in enumerate(b.cells):
        assert np.allclose(b.estimate[j], av[c], rtol=0, atol=1e-12, equal_nan=True)
    ok = ~np.isnan(b.estimate)
    assert ok.all()
    assert (b.low[ok] <= b.estimate[ok]).all() and (b.estimate[ok] <= b.high[ok]).all()
    assert (b.high - b.low > 0).all()
    # the bootstrap mean of a mean is the sample mean (no NaN here): within ~4 Monte Carlo SEs
    se = b.resampled.std(-1) / math.sqrt(b.settings.n_resamples)
    assert (np.abs(b.resampled.mean(-1) - b.estimate) < 4 * se + 1e-12).mean() > 0.99
    assert b.mode == mode and b.settings == kernels.BootstrapSettings(2000, 0.95, 5)


def test_group_sizes_and_excluded_seg(bundled):
    b = bs.bootstrap(bundled["paper"], n_resamples=10)
    assert dict(b.group_sizes) == {"avg": 164, "synth": 111, "nat": 25, "real": 28}
    assert 164 not in b.seg_ids and len(b.seg_ids) == 164
    assert dict(bs.bootstrap(bundled["spec"], n_resamples=10).group_sizes)["real"] == 29


def test_stratified_counts_keep_partition_sizes():
    strata = np.array([0, 0, 0, 1, 1, -1, 2, 0, 2, 2, 2])
    c = kernels.stratified_counts(strata, 5000, np.random.default_rng(0))
    assert c.shape == (5000, strata.size) and c.dtype.kind == "i"
    for k in (0, 1, 2):
        assert (c[:, strata == k].sum(1) == (strata == k).sum()).all()
    assert (c[:, strata < 0] == 0).all()
    # each item of a stratum of n is Binomial(n, 1/n): mean 1, variance 1 - 1/n
    s0 = c[:, strata == 0]
    assert s0.mean() == pytest.approx(1.0, abs=0.03) and s0.var() == pytest.approx(0.75, abs=0.04)


def test_stratification_holds_partition_shares_fixed():
    # Synth SEGs all 0, Real SEGs all 1, an excluded SEG with a huge value: with partition sizes
    # kept, every resample's overall average is exactly 10/30; unstratified it would vary.
    v = np.r_[np.zeros(20), np.ones(10), 1e6][:, None]
    mm = synthetic(v, ["Synth"] * 20 + ["Real"] * 10 + ["Real"], excluded=[30])
    b = bs.bootstrap(mm, n_resamples=500)
    j = b.cells.index("ord_avg")
    assert np.allclose(b.resampled[j], 1 / 3, rtol=0, atol=1e-15)
    assert b.interval("m0", "ord_avg") == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert b.interval("m0", "ord_real") == (1.0, 1.0, 1.0)


def test_tiny_case_matches_exact_enumeration():
    # 3 SEGs, values 0, NaN, 1: the bootstrap distribution of the nan-mean is the distribution over
    # the 27 equally likely index triples (all-NaN triples have no value)
    vals = [0.0, np.nan, 1.0]
    exact: dict[float, float] = {}
    for t in itertools.product(range(3), repeat=3):
        x = [vals[i] for i in t if not math.isnan(vals[i])]
        key = round(sum(x) / len(x), 12) if x else math.nan
        exact[key] = exact.get(key, 0) + 1 / 27
    mm = synthetic(np.array(vals)[:, None], ["Synth"] * 3)
    b = bs.bootstrap(mm, n_resamples=40_000, seed=1)
    r = b.resampled[b.cells.index("ord_avg"), 0]
    for key, prob in exact.items():
        freq = np.isnan(r).mean() if math.isnan(key) else np.isclose(r, key).mean()
        assert freq == pytest.approx(prob, abs=0.01), key
    assert b.interval("m0", "ord_avg") == (0.5, 0.0, 1.0)


def test_intervals_shrink_like_one_over_sqrt_n():
    rng = np.random.default_rng(7)
    widths = {}
    for S in (50, 800):
        v = rng.beta(2, 5, size=(S, 20))
        b = bs.bootstrap(synthetic(v, ["Synth"] * S), n_resamples=2000, seed=S)
        j = b.cells.index("ord_avg")
        widths[S] = float((b.high[j] - b.low[j]).mean())
    assert widths[50] / widths[800] == pytest.approx(4.0, rel=0.12)


def test_near_nominal_coverage_with_known_truth():
    # 400 simulated leaderboards (one metric each; 4 runs of 100 with their own resample seeds):
    # Synth SEG values ~ Beta(2, 5) (mean 2/7), Real ~ Beta(5, 2) (mean 5/7), 60 and 30 SEGs.
    rng = np.random.default_rng(2024)
    truth = {"ord_synth": 2 / 7, "ord_real": 5 / 7, "ord_avg": (60 * 2 / 7 + 30 * 5 / 7) / 90}
    hits = {c: 0 for c in truth}
    for run in range(4):
        v = np.r_[rng.beta(2, 5, size=(60, 100)), rng.beta(5, 2, size=(30, 100))]
        b = bs.bootstrap(synthetic(v, ["Synth"] * 60 + ["Real"] * 30), n_resamples=1000, seed=run)
        for c, t in truth.items():
            j = b.cells.index(c)
            hits[c] += int(((b.low[j] <= t) & (t <= b.high[j])).sum())
    for c in truth:
        cov = hits[c] / 400
        assert 0.91 <= cov <= 0.98, (c, cov)


def test_settings_determinism_and_metric_independence(bundled):
    mm = bundled["paper"]
    a = bs.bootstrap(mm, n_resamples=300, seed=3)
    # exact: the same call twice (same code, same numbers, same order) is deterministic
    assert np.array_equal(a.resampled, bs.bootstrap(mm, n_resamples=300, seed=3).resampled)
    assert not np.array_equal(a.resampled, bs.bootstrap(mm, n_resamples=300, seed=4).resampled)
    sub = bs.bootstrap(mm, n_resamples=300, seed=3, metrics=["TIFA-Fuyu", "CLIPScore"])
    i = mm.metrics.index("CLIPScore")
    # Which SEGs a resample draws does not depend on the metrics: the resamples are the counts of
    # resample_counts (drawn from the seed alone), and CLIPScore's resampled ord_avg is exactly the
    # count-weighted mean of its per-SEG values under those counts, whichever metrics are evaluated.
    counts = bs.resample_counts(mm, n_resamples=300, seed=3).astype(np.float64)
    v = bs.seg_values(mm, "ord_avg")[:, i]
    avg = bs.averaged_segs(mm)["avg"]
    ok = ~np.isnan(v)
    want = (counts[:, avg][:, ok] @ v[ok]) / counts[:, avg][:, ok].sum(axis=1)
    j = a.cells.index("ord_avg")
    for boot, col in ((a, i), (sub, 1)):
        np.testing.assert_allclose(boot.resampled[j, col], want, rtol=1e-12, atol=0)
    # A metric's resamples do not depend on which other metrics are evaluated, to within 1e-12
    # relative (not bit for bit: every column's means come from one matrix product over the chosen
    # columns, and BLAS may group a column's additions differently for another number of columns;
    # seen: 1 unit in the last place on an AMD EPYC). Metrics sharing state, or a column read from
    # another metric, would be off by far more: per-SEG values of different metrics differ by > 1e-3.
    np.testing.assert_allclose(sub.resampled[:, 1], a.resampled[:, i], rtol=1e-12, atol=1e-15)
    assert np.array_equal(np.isnan(sub.resampled[:, 1]), np.isnan(a.resampled[:, i]))
    lo = bs.bootstrap(mm, n_resamples=300, seed=3, confidence=0.5)
    assert ((lo.high - lo.low) < (a.high - a.low)).all()
    for bad in (dict(n_resamples=0), dict(confidence=1.0), dict(confidence=0), dict(seed=-1),
                dict(n_resamples=2.5), dict(n_resamples=kernels.MAX_RESAMPLES + 1)):
        with pytest.raises(InputError):
            bs.bootstrap(mm, **bad)
    with pytest.raises(InputError, match="no metric"):
        bs.bootstrap(mm, metrics=["nope"])
    with pytest.raises(ValueError, match="either"):
        pcmp.compare(mm, "CLIPScore", "ALIGNScore", boot=a, seed=1)
    with pytest.raises(ValueError, match="other meta-metrics"):
        pcmp.compare(bundled["spec"], "CLIPScore", "ALIGNScore", boot=a)
    with pytest.raises(InputError, match="two different"):
        pcmp.compare(mm, "CLIPScore", "CLIPScore")
    with pytest.raises(InputError, match="unknown leaderboard cell"):
        pcmp.pairwise(mm, "ord_everything", boot=a)


# -- paired comparisons --------------------------------------------------------------------------

def test_paired_interval_sees_a_constant_shift_exactly():
    # metric b = metric a - 0.05 on every SEG: each metric's own interval is wide, the paired
    # interval of the difference is [0.05, 0.05] up to rounding, and Wilcoxon agrees with scipy
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, size=40)
    mm = synthetic(np.c_[a, a - 0.05, rng.uniform(0, 1, 40)], ["Synth"] * 40, metrics=["A", "B", "C"])
    pc = pcmp.compare(mm, "A", "B", n_resamples=1000)
    k = pc.cells.index("ord_avg")
    assert pc.difference[k] == pytest.approx(0.05) and pc.low[k] == pytest.approx(0.05)
    assert pc.high[k] == pytest.approx(0.05)
    b = bs.bootstrap(mm, n_resamples=1000)
    assert b.high[k, 0] - b.low[k, 0] > 0.1
    assert pc.pvalue[k] == pytest.approx(float(stats.wilcoxon(a, a - 0.05).pvalue), rel=1e-12)


def test_compare_and_pairwise_agree_on_bundled(bundled, paper_boot):
    mm = bundled["paper"]
    pc = pcmp.compare(mm, "CLIPScore", "TIFA-mPLUG", boot=paper_boot)
    av = mm.averages()
    i, j = mm.metrics.index("CLIPScore"), mm.metrics.index("TIFA-mPLUG")
    for k, c in enumerate(pc.cells):
        assert pc.difference[k] == pytest.approx(av[c][i] - av[c][j], abs=1e-12)
        assert pc.low[k] <= pc.difference[k] <= pc.high[k]
        v = bs.seg_values(mm, c)
        assert pc.pvalue[k] == pytest.approx(float(scipy_p(v[:, i], v[:, j]).pvalue), rel=1e-12)
    assert pc.n[pc.cells.index("ord_nat")] == 25
    pw = pcmp.pairwise(mm, "sep_avg", boot=paper_boot)
    k = pc.cells.index("sep_avg")
    assert pw.difference[i, j] == pytest.approx(pc.difference[k])
    assert (pw.low[i, j], pw.high[i, j]) == pytest.approx((pc.low[k], pc.high[k]))
    assert pw.low[j, i] == pytest.approx(-pc.high[k]) and pw.pvalue[j, i] == pw.pvalue[i, j]
    M = len(mm.metrics)
    off = ~np.eye(M, dtype=bool)
    assert np.allclose(pw.difference[off], -pw.difference.T[off])
    assert (pw.pvalue_holm[off] >= pw.pvalue[off]).all() and np.isnan(np.diag(pw.pvalue_holm)).all()
    iu = np.triu_indices(M, 1)
    assert np.allclose(pw.pvalue_holm[iu], holm_reference(pw.pvalue[iu].tolist()), rtol=1e-15)
    f = pw.frame()
    assert len(f) == M * (M - 1) // 2 and pw.significant().sum() == 2 * (f.pvalue_holm < 0.05).sum()


# -- ranks -----------------------------------------------------------------------------------------

def test_rank_intervals_separated_tied_and_exchangeable_metrics():
    rng = np.random.default_rng(0)
    S = 60
    base = rng.normal(0, 0.01, size=(S, 1))
    v = np.c_[0.9 + base, 0.5 + base, 0.5 + base, 0.1 + base]          # 2nd and 3rd identical
    r = ri.rank_intervals(synthetic(v, ["Synth"] * S, metrics=["best", "mid", "copy", "worst"]), n_resamples=2000)
    assert r.rank.tolist() == [1, 2, 2, 4]                               # ties share the best rank
    assert r.low.tolist() == r.high.tolist() == r.median.tolist() == [1, 2, 2, 4]
    assert r.distribution[1, 1] == r.distribution[2, 1] == 1.0
    # same distribution, different SEGs: either can come second
    v = np.c_[0.9 + base, 0.5 + base, 0.5 + base[::-1], 0.1 + base]
    r = ri.rank_intervals(synthetic(v, ["Synth"] * S, metrics=["best", "mid1", "mid2", "worst"]), n_resamples=2000)
    assert (r.low[0], r.high[0]) == (1, 1) and (r.low[3], r.high[3]) == (4, 4)
    assert (r.low[1], r.high[1]) == (2, 3) and (r.low[2], r.high[2]) == (2, 3)
    assert np.allclose(r.distribution.sum(1), 1.0)
    assert r.distribution[1, 1] == pytest.approx(0.5, abs=0.15) and r.distribution[0, 0] == 1.0


def test_rank_intervals_on_bundled(bundled, paper_boot):
    mm = bundled["paper"]
    r = ri.rank_intervals(mm, "ord_avg", boot=paper_boot)
    board = mm.leaderboard().sort_values("ord_avg", ascending=False)
    assert [r.metrics[i] for i in np.argsort(r.rank)] == board.metric.tolist()
    assert (r.low <= r.median).all() and (r.median <= r.high).all()
    assert np.allclose(r.distribution.sum(1), 1.0)
    assert set(np.unique(np.r_[r.low, r.median, r.high])) <= set(range(1, 20))
    # the bottom of the table is certain, the top is not
    last, first = int(np.argmax(r.rank)), int(np.argmin(r.rank))
    assert r.low[last] >= 17 and r.high[first] > 1


def test_leaderboard_table_columns(bundled, paper_boot):
    mm = bundled["paper"]
    t = leaderboard_table(mm, ("kendall", "ord"), groups=("avg", "nat", "other"), boot=paper_boot,
                            ranks=ri.rank_intervals(mm, boot=paper_boot))
    assert list(t.columns) == ["metric", "ord_avg", "ord_avg_lo", "ord_avg_hi", "kendall_avg", "kendall_avg_lo",
                               "kendall_avg_hi", "ord_nat", "ord_nat_lo", "ord_nat_hi", "kendall_nat",
                               "kendall_nat_lo", "kendall_nat_hi", "ord_other", "ord_other_lo", "ord_other_hi",
                               "kendall_other", "kendall_other_lo", "kendall_other_hi", "rank", "rank_median",
                               "rank_lo", "rank_hi"]
    av = mm.averages()
    assert np.allclose(t.kendall_nat, av["kendall_nat"]) and t.ord_other.isna().all()
    assert (t.ord_avg_lo <= t.ord_avg).all()
    with pytest.raises(InputError, match="unknown statistic"):
        leaderboard_table(mm, ("ord", "spearman"))


def test_module_imports_numpy_only():
    import subprocess
    import sys

    code = ("import sys; import ts2viz.statistics.bootstrap, ts2viz.statistics.wilcoxon, "
            "ts2viz.metametrics.comparison, ts2viz.metametrics.ranks\n"
            "bad = [m for m in ('scipy', 'torch', 'gradio', 'plotly') if m in sys.modules]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_quantiles_equal_numpy_including_adversarial_rows():
    rng = np.random.default_rng(11)
    for B in (1, 2, 7, 1000, 10_000, 20_001):
        x = rng.normal(size=(12, B))
        x[1] = np.round(x[1], 1)                       # ties
        x[2] = 3.0                                     # constant
        x[3] = np.sort(x[3])
        x[4, 0] = np.nan                               # a NaN resample
        x[5] = np.nan
        if B >= 10_000:
            # the strided subsample sees only small values, so its threshold keeps too few: fallback path
            step = B // 1024
            x[6] = 100.0
            x[6, ::step] = -np.arange(x[6, ::step].size, dtype=float)[::-1]
            x[7] = -x[6]
        for qs in ([0.025, 0.975], [0.5], [0.0, 1.0], [0.001, 0.3, 0.999]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = np.nanquantile(x, qs, axis=-1)
            # exact: the same order statistics, interpolated elementwise with numpy's own formula
            # (no reduction whose grouping could differ between CPUs)
            assert np.array_equal(kernels.quantiles(x, qs), want, equal_nan=True), (B, qs)


def test_split_cell():
    assert bs.split_cell("ord_avg") == ("ord", "avg") and bs.split_cell("kendall_my_part") == ("kendall", "my_part")
    with pytest.raises(InputError, match="unknown leaderboard cell"):
        bs.split_cell("spearman_avg")
