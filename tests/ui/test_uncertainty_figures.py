"""Figures of leaderboard uncertainty (interval whiskers, significance heatmap), without a browser."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from ts2viz import bundled_scores, compute, figures, load_dataset
from ts2viz.metametrics import comparison as pcmp, intervals as bs
from ts2viz.metametrics.table import leaderboard_table

BOARD = pd.DataFrame({"metric": ["A", "B", "C"], "family": ["Embedding", "TIFA", "Embedding"],
                      "ord_avg": [0.7, 0.8, 0.6], "sep_avg": [0.9, 0.85, 0.5],
                      "ord_avg_lo": [0.65, 0.74, np.nan], "ord_avg_hi": [0.74, 0.83, 0.7],
                      "sep_avg_lo": [0.88, 0.8, 0.45], "sep_avg_hi": [0.93, 0.9, 0.52]})


def test_scatter_without_error_bars_is_unchanged():
    f = figures.ord_sep_scatter(BOARD)
    assert [t.name for t in f.data] == ["Embedding", "TIFA"]
    assert all(t.error_x.array is None and t.error_y.array is None for t in f.data)


def test_scatter_error_bars_span_the_intervals():
    f = figures.ord_sep_scatter(BOARD, error_bars=True)
    emb = f.data[0]
    assert list(emb.text) == ["A", "C"]
    # the scatter shows x100 (like the paper), so do its whiskers
    assert emb.error_x.array == pytest.approx([4, 10]) and emb.error_x.symmetric is False
    assert emb.error_x.arrayminus[0] == pytest.approx(5) and emb.error_x.arrayminus[1] is None
    assert emb.error_y.array == pytest.approx([3, 2]) and emb.error_y.arrayminus == pytest.approx([2, 5])
    assert emb.error_x.color == figures.FAMILY_COLORS["Embedding"]
    assert "[%{customdata[0]:.1f}" in emb.hovertemplate
    json.loads(f.to_json())
    with pytest.raises(ValueError, match="sep_avg_hi"):
        figures.ord_sep_scatter(BOARD.drop(columns=["sep_avg_hi"]), error_bars=True)


def _matrices():
    names = ["A", "B", "C"]
    diff = np.array([[np.nan, 0.05, 0.20], [-0.05, np.nan, 0.15], [-0.20, -0.15, np.nan]])
    p = np.array([[np.nan, 0.30, 0.0004], [0.30, np.nan, 0.02], [0.0004, 0.02, np.nan]])
    return names, diff, p


def test_significance_heatmap_marks_and_colours_only_significant_cells():
    names, diff, p = _matrices()
    f = figures.significance_heatmap(names, diff, p)
    ns, sig, ns_text, marks = f.data               # two colour layers, then their texts (figures.cell_text)
    assert list(ns_text["text"]) == ["+5.0", "-5.0"] and list(marks["text"]) == ["+20***", "+15*", "-20***", "-15*"]
    assert sig.text[0][2] == "+20***" and sig.text[1][2] == "+15*" and sig.text[2][0] == "-20***"
    assert sig.z[0][2] == pytest.approx(20.0) and sig.z[0][1] is None and sig.z[1][1] is None
    assert ns.z[0][1] == 0.0 and ns.text[0][1] == "+5.0" and ns.z[0][2] is None and ns.showscale is False
    assert sig.zmin == -20.0 and sig.zmax == 20.0
    assert "A − C: +20.0" in sig.customdata[0][2] and "Holm p = 4e-04" in sig.customdata[0][2]
    # a stricter level: only the p = 0.0004 pair stays coloured
    strict = figures.significance_heatmap(names, diff, p, alpha=0.01).data[1]
    assert [[z is not None for z in row] for row in strict.z] == [[False, False, True], [False, False, False],
                                                                  [True, False, False]]
    json.loads(f.to_json())


def test_significance_heatmap_p_view_and_bad_input():
    names, diff, p = _matrices()
    f = figures.significance_heatmap(names, diff, p, value="p")
    h, marks = f.data
    assert marks["text"][0] == "0.300" and marks["type"] == "scatter"
    assert h.z[0][2] == pytest.approx(-math.log10(0.0004)) and h.z[0][0] is None
    assert h.text[0][1] == "0.300" and h.text[1][2] == "0.020*"
    with pytest.raises(ValueError, match="3 x 3"):
        figures.significance_heatmap(names, diff[:2], p)
    with pytest.raises(ValueError, match="value"):
        figures.significance_heatmap(names, diff, p, value="z")
    assert "No metrics" in figures.significance_heatmap([], np.zeros((0, 0)), np.zeros((0, 0))).layout.annotations[0].text


def test_significance_heatmap_of_the_bundled_leaderboard():
    mm = compute(load_dataset("ts2"), bundled_scores(), mode="paper")
    pw = pcmp.pairwise(mm, "ord_avg", n_resamples=500)
    f = figures.significance_heatmap(pw.metrics, pw.difference, pw.pvalue_holm)
    coloured = sum(z is not None for row in f.data[1].z for z in row)
    assert coloured == int(pw.significant().sum()) and 0 < coloured < 19 * 18
    board = leaderboard_table(mm, boot=bs.bootstrap(mm, n_resamples=500))
    board["family"] = [m.split("-")[0] for m in board.metric]
    s = figures.ord_sep_scatter(board, error_bars=True)
    assert sum(len(t.x) for t in s.data) == 19
