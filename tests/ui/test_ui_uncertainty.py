"""The app's "How sure is the leaderboard?" views, without a browser.

References come from outside the callbacks: :mod:`ts2viz.statistics` run on meta-metrics computed
here from the bundled data, ``scipy.stats.wilcoxon`` and a Holm correction written out below.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ts2viz import bundled_scores, compute, figures, load_dataset
from ts2viz.metametrics import comparison as pcmp, intervals as bs, ranks as ri
from ts2viz.display import column_label
from ts2viz.errors import InputError
from ts2viz.ui.callbacks import common as cb_common, board as cb_board
from ts2viz.ui import load_state
from ts2viz.ui.callbacks.uncertainty import (resampled as uc_bootstrap, comparison as uc_comparison,
                                             intervals as uc_intervals, significance as uc_significance)
from ts2viz.ui.glue.tables import table_value

BOARD_STATS = cb_board.BOARD_STATS


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2ci"), fetch_images=False)


@pytest.fixture()
def ts2(state):
    """A fresh session's view of the bundled data."""
    return state.view()


@pytest.fixture(scope="module")
def ref():
    """The library's answers on meta-metrics computed here (not the app's)."""
    mm = compute(load_dataset("ts2"), bundled_scores(), policy="paper")
    boot = bs.bootstrap(mm)
    return {"mm": mm, "boot": boot}


def _holm(p):
    """Holm's step-down correction, written out: the i-th smallest (0-based) of m p-values becomes
    max over j <= i of min(1, (m - j) p_(j))."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    out = np.empty_like(p)
    run = 0.0
    for i, k in enumerate(order):
        run = max(run, min(1.0, (len(p) - i) * p[k]))
        out[k] = run
    return out


# -- the leaderboard ----------------------------------------------------------------------------------

def test_board_intervals_equal_the_library(ts2, ref):
    boot = ref["boot"]
    board = uc_intervals.board_intervals(ts2, "paper", cb_board.leaderboard(ts2, "paper", ["TIFA", "DSG"], "sep_avg", False),
                               "sep_avg")
    assert len(board) == 14 and set(board["family"]) == {"TIFA", "DSG"}
    assert (np.diff(board["sep_avg"].to_numpy()) >= 0).all()            # the board's order is kept
    for _, r in board.iterrows():
        for c in BOARD_STATS:
            est, lo, hi = boot.interval(r["metric"], c)
            assert r[c] == pytest.approx(est, abs=1e-12)
            assert (r[f"{c}_lo"], r[f"{c}_hi"]) == pytest.approx((lo, hi), abs=1e-12)
    # ranks by the sort column, among all 19 metrics (not only the 14 shown)
    ranks = ri.rank_intervals(ref["mm"], "sep_avg", boot=boot).frame().set_index("metric")
    for _, r in board.iterrows():
        want = ranks.loc[r["metric"]]
        assert (r["rank"], r["rank_median"], r["rank_lo"], r["rank_hi"]) == (
            want["rank"], want["median"], want["low"], want["high"])
    assert board.attrs["rank_by"] == "sep_avg"
    # a name sort ranks by Ord · Avg
    by_name = uc_intervals.board_intervals(ts2, "paper", cb_board.leaderboard(ts2, "paper", sort_by="metric"), "metric")
    assert by_name.attrs["rank_by"] == "ord_avg"


def test_table_cells_show_value_and_interval_x100(ts2, ref):
    boot = ref["boot"]
    board = uc_intervals.board_intervals(ts2, "paper", cb_board.leaderboard(ts2, "paper"), "ord_avg")
    val = table_value(uc_intervals.style_board_intervals(board))
    heads = val["headers"]
    assert heads[:2] == ["metric", "median rank [95%]"] and not any(h.endswith(("_lo", "_hi")) for h in heads)
    shown = {r[0]: r for r in val["metadata"]["display_value"]}
    data = {r[0]: r for r in val["data"]}
    ranks = ri.rank_intervals(ref["mm"], "ord_avg", boot=boot)
    for m in boot.metrics:
        for c in BOARD_STATS:
            est, lo, hi = boot.interval(m, c)
            assert shown[m][heads.index(column_label(c))] == f"{est * 100:.1f} [{lo * 100:.1f}, {hi * 100:.1f}]"
            assert data[m][heads.index(column_label(c))] == pytest.approx(est)             # numbers underneath
        k = ranks.metrics.index(m)
        assert shown[m][1] == f"{ranks.median[k]:.0f} [{ranks.low[k]:.0f}, {ranks.high[k]:.0f}]"
    # the best value per column is still marked
    styles = val["metadata"]["styling"]
    col = heads.index("Sep avg")        # the header as people read it (item 4 of issue 21)
    best = int(np.nanargmax(board["sep_avg"].to_numpy()))
    assert "font-weight:700" in styles[best][col].replace(" ", "")


def test_csv_with_intervals_keeps_fractions(ts2, ref, tmp_path):
    df = pd.read_csv(uc_intervals.leaderboard_ci_csv(ts2, "paper", ["Embedding"], "ord_avg"))
    assert list(df.columns[:4]) == ["metric", "ord_avg", "ord_avg_lo", "ord_avg_hi"]
    assert list(df.columns[-5:]) == ["rank", "rank_median", "rank_lo", "rank_hi", "rank_by"]
    assert set(df["metric"]) == {"CLIPScore", "ALIGNScore"}
    for _, r in df.iterrows():
        for c in BOARD_STATS:
            est, lo, hi = ref["boot"].interval(r["metric"], c)
            assert (r[c], r[f"{c}_lo"], r[f"{c}_hi"]) == pytest.approx((est, lo, hi), abs=1e-12)


def test_scatter_whiskers_fit_the_full_view(ts2):
    board = uc_intervals.board_intervals(ts2, "paper", cb_board.leaderboard(ts2, "paper"), "ord_avg")
    f = figures.ord_sep_scatter(board, error_bars=True)
    xr, yr = f.layout.xaxis.range, f.layout.yaxis.range
    assert xr[0] < board["ord_avg_lo"].min() * 100 and xr[1] > board["ord_avg_hi"].max() * 100
    assert yr[0] < board["sep_avg_lo"].min() * 100 and yr[1] > board["sep_avg_hi"].max() * 100
    # the zoom to the dense cluster keeps to the points
    zoom = f.layout.updatemenus[0].buttons[1].args[0]["xaxis.range"]
    assert zoom[1] - zoom[0] < xr[1] - xr[0]


# -- one bootstrap per mode and set of metrics, reused ------------------------------------------------

def test_bootstrap_drawn_once_and_shared_by_sessions(tmp_path, monkeypatch):
    state = load_state("ts2", cache_root=tmp_path, fetch_images=False)      # nothing drawn for it yet
    calls = []
    real = bs.bootstrap
    monkeypatch.setattr(bs, "bootstrap", lambda mm, **kw: calls.append(mm.mode) or real(mm, **kw))
    a, b = state.view(), state.view()
    # a plain view change never draws one
    from ts2viz.ui.tabs.board import board_view

    board_view(a, "spec", ["All"], "sep_avg", "best first", "png", whiskers=False, table_ci=False)
    assert calls == []
    first = uc_bootstrap.board_bootstrap(a, "spec")
    assert calls == ["spec"]
    assert uc_bootstrap.board_bootstrap(b, "spec") is first                   # another session, same object
    _, plot, note = board_view(b, "spec", ["TIFA"], "ord_avg", "worst first", "png", whiskers=True, table_ci=True)
    assert '"error_x"' in plot.plot and "10,000 resamples" in note and "rank by Ord" in note
    uc_significance.significance(a, "spec", "sep", "Nat", ["DSG"])
    uc_comparison.pair_comparison(b, "spec", "ord", "CLIPScore", "TIFA-GPT4V", "Real")
    assert calls == ["spec"]                                         # every view read the same one
    uc_bootstrap.board_bootstrap(a, "paper")
    assert calls == ["spec", "paper"]


def test_session_metrics_get_their_own_bootstrap(state, tmp_path, ref):
    ds = state.dataset
    rng = np.random.default_rng(3)
    names = [r.file_name for r in ds.rows]
    p = tmp_path / "mine.csv"
    pd.DataFrame({"file_name": names, "Mine": rng.uniform(size=len(names))}).to_csv(p, index=False)
    mine, other = state.view(), state.view()
    cb_board.add_scores_file(mine, str(p), "mine.csv")
    own = uc_bootstrap.board_bootstrap(mine, "paper")
    shared = uc_bootstrap.board_bootstrap(other, "paper")
    assert "Mine" in own.boot.metrics and "Mine" not in shared.boot.metrics
    assert uc_bootstrap.board_bootstrap(mine, "paper") is own                 # kept for the session
    # the draws do not depend on the metrics: a shared metric's interval is the same in both
    # (to 1e-12 relative: the two bootstraps hold different metric columns, and BLAS may group a
    # column's sums differently for another number of columns; another metric's interval differs
    # by far more)
    assert own.boot.interval("CLIPScore", "ord_nat") == pytest.approx(shared.boot.interval("CLIPScore", "ord_nat"),
                                                                      rel=1e-12)
    # a view of shared metrics only reads the shared bootstrap, even in this session
    assert uc_bootstrap.board_bootstrap(mine, "paper", ["CLIPScore", "ALIGNScore"]) is shared
    # what the session's own metric gets equals the library's bootstrap of the joined meta-metrics
    lib = bs.bootstrap(mine.mm("paper"))
    assert own.boot.interval("Mine", "sep_avg") == pytest.approx(lib.interval("Mine", "sep_avg"), rel=1e-12)
    board = uc_intervals.board_intervals(mine, "paper", cb_board.leaderboard(mine, "paper"), "ord_avg")
    assert "Mine" in set(board["metric"])
    assert "Mine" not in set(uc_intervals.board_intervals(other, "paper", cb_board.leaderboard(other, "paper"))["metric"])
    # new data in the session: a new bootstrap
    p2 = tmp_path / "mine2.csv"
    pd.DataFrame({"file_name": names, "Mine2": rng.uniform(size=len(names))}).to_csv(p2, index=False)
    cb_board.add_scores_file(mine, str(p2), "mine2.csv")
    again = uc_bootstrap.board_bootstrap(mine, "paper")
    assert again is not own and "Mine2" in again.boot.metrics


# -- which orderings are significant ------------------------------------------------------------------

@pytest.mark.parametrize("stat, part, fams", [("ord", "All", None), ("sep", "Nat", None),
                                              ("signed_sep", "All", ["TIFA", "Embedding"])])
def test_significance_marks_exactly_the_holm_significant_pairs(ts2, ref, stat, part, fams):
    mm = ref["mm"]
    cell = f"{stat}_{'avg' if part == 'All' else part.lower()}"
    pw = uc_significance.significance(ts2, "paper", stat, part, fams)
    shown = cb_common.metric_choices(ts2, fams)
    assert set(pw.metrics) == set(shown) and pw.cell == cell
    est = [mm.averages()[cell][mm.metrics.index(m)] for m in pw.metrics]
    assert (np.diff(est) <= 0).all()                                 # best first
    # raw p from scipy on the per-SEG values the leaderboard cell averages; Holm over the pairs shown
    v = bs.seg_values(mm, cell)
    M = len(pw.metrics)
    I, J = np.triu_indices(M, 1)
    raw = []
    for i, j in zip(I, J):
        x, y = v[:, mm.metrics.index(pw.metrics[i])], v[:, mm.metrics.index(pw.metrics[j])]
        ok = ~(np.isnan(x) | np.isnan(y))
        raw.append(sps.wilcoxon(x[ok], y[ok]).pvalue)
    holm = _holm(raw)
    assert pw.pvalue_holm[I, J] == pytest.approx(holm, rel=1e-9, abs=1e-300)
    want = {(pw.metrics[i], pw.metrics[j]) for i, j, h in zip(I, J, holm) if h < uc_bootstrap.ALPHA}
    want |= {(b, a) for a, b in want}
    f = uc_significance.significance_figure(ts2, "paper", stat, part, fams, pw=pw)
    coloured = f.data[1]
    marked = {(coloured.y[i], coloured.x[j]) for i, row in enumerate(coloured.z) for j, z in enumerate(row)
              if z is not None}
    assert marked == want
    note = uc_significance.significance_note(pw)
    assert f"{len(want) // 2} of {M * (M - 1) // 2} pairs" in note
    json.loads(f.to_json())
    if fams is None:       # every metric shown: the library's own Holm family
        full = pcmp.pairwise(mm, cell, boot=ref["boot"])
        k = [full.metrics.index(m) for m in pw.metrics]
        # exact: the app reindexes the library's own Holm-corrected matrix (same numbers, no arithmetic)
        assert np.array_equal(pw.pvalue_holm, full.pvalue_holm[np.ix_(k, k)], equal_nan=True)


def test_significance_heatmap_marks_only_text():
    names = ["A", "B", "C"]
    diff = np.array([[np.nan, 0.05, 0.20], [-0.05, np.nan, 0.15], [-0.20, -0.15, np.nan]])
    p = np.array([[np.nan, 0.30, 0.0004], [0.30, np.nan, 0.02], [0.0004, 0.02, np.nan]])
    ns, sig, ns_text, marks = figures.significance_heatmap(names, diff, p, cell_text="marks").data
    assert list(ns_text["text"]) == [] and list(marks["text"]) == ["***", "*", "***", "*"]
    assert sig.text[0][2] == "***" and sig.text[1][2] == "*" and ns.text[0][1] == ""
    assert "A − C: +20.0" in sig.customdata[0][2]                    # the number stays in the hover
    with pytest.raises(ValueError, match="cell_text"):
        figures.significance_heatmap(names, diff, p, cell_text="both")


# -- two metrics --------------------------------------------------------------------------------------

def test_pair_comparison_equals_the_library_and_scipy(ts2, ref):
    mm = ref["mm"]
    c = uc_comparison.pair_comparison(ts2, "paper", "sep", "CLIPScore", "TIFA-mPLUG", "All")
    lib = pcmp.compare(mm, "TIFA-mPLUG", "CLIPScore", boot=ref["boot"])
    k = lib.cells.index("sep_avg")
    assert c["difference"] == pytest.approx(lib.difference[k]) and c["difference"] < 0
    assert (c["low"], c["high"]) == pytest.approx((lib.low[k], lib.high[k]))
    v = bs.seg_values(mm, "sep_avg")
    x, y = v[:, mm.metrics.index("CLIPScore")], v[:, mm.metrics.index("TIFA-mPLUG")]
    assert c["pvalue"] == pytest.approx(sps.wilcoxon(y, x).pvalue, rel=1e-9)
    assert c["n"] == 164
    md = uc_comparison.pair_comparison_md(c, "sep")
    assert "TIFA-mPLUG − CLIPScore" in md and f"[{lib.low[k] * 100:.1f}, {lib.high[k] * 100:.1f}]" in md
    assert "**significant**" in md and "excludes 0" in md
    same = uc_comparison.pair_comparison(ts2, "paper", "ord", "CLIPScore", "CLIPScore")
    assert same is None and "two different metrics" in uc_comparison.pair_comparison_md(same, "ord")


def test_bad_choices_are_one_line_errors(ts2):
    with pytest.raises(InputError, match="unknown statistic"):
        uc_significance.significance(ts2, "paper", "bogus", "All")
    with pytest.raises(InputError, match="no SEGs of partition 'elsewhere'"):
        uc_significance.significance(ts2, "paper", "ord", "Elsewhere")
    with pytest.raises(InputError, match="no metric"):
        uc_comparison.pair_comparison(ts2, "paper", "ord", "CLIPScore", "/etc/passwd")
    with pytest.raises(InputError, match="unknown mode"):
        uc_bootstrap.board_bootstrap(ts2, "fast")
    with pytest.raises(InputError, match="no metrics in the chosen families"):
        uc_significance.significance(ts2, "paper", "ord", "All", ["NoSuchFamily"])


def test_a_dataset_with_one_partition(tmp_path):
    """The generated test dataset has only Synth SEGs: sorting by a Real column (offered by the page)
    ranks by Ord · Avg, and the Real cells are a one-line error, not a failure."""
    from ui_helpers import write_dataset, write_scores

    write_dataset(tmp_path / "ds", big_image=False)
    app = load_state(str(tmp_path / "ds"), [str(write_scores(tmp_path, tmp_path / "ds"))],
                     lower_is_better=["ErrCount"], cache_root=tmp_path / "cache").view()
    board = uc_intervals.board_intervals(app, "paper", cb_board.leaderboard(app, "paper", sort_by="ord_real"), "ord_real")
    assert board.attrs["rank_by"] == "ord_avg" and "ord_real" not in board.columns
    ranks = ri.rank_intervals(app.mm("paper"), "ord_avg", boot=uc_bootstrap.board_bootstrap(app, "paper").boot)
    assert list(board.sort_values("metric")["rank_median"]) == [
        ranks.median[ranks.metrics.index(m)] for m in sorted(board["metric"])]
    assert uc_significance.significance(app, "paper", "ord", "All").metrics[0] == "GoodScore"
    with pytest.raises(InputError, match="no SEGs of partition 'real'"):
        uc_comparison.pair_comparison(app, "paper", "ord", "GoodScore", "NoisyScore", "Real")
