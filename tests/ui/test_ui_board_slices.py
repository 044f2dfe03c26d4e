"""The Leaderboard tab's "Slices of SEGs" callbacks as plain function calls (issue 38 item 1, TS2's side).

The heatmap's JSON and the table against what the leaderboard tab itself shows (its per-partition columns
are the partition slices' averages) and the TS2 project page's numbers.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from ts2viz.errors import InputError
from ts2viz.ui import load_state
from ts2viz.ui.callbacks import board as cb_board
from ts2viz.ui.callbacks import board_slices as cb
from ts2viz.ui.glue.plots import build_plain, figure_json


@pytest.fixture(scope="module")
def app():
    return load_state("ts2", fetch_images=False).view()


def test_families_offer_the_partitions(app):
    assert cb.families(app) == ["partition"]


def test_heatmap_json_is_the_boards_partition_columns(app):
    # what the page gets: the figure built plain and serialised by the one path to the page
    fig = build_plain(lambda: cb.slices_figure(app, "paper", "partition", "ord"))
    data = json.loads(figure_json(fig))["data"]
    heat = data[0]
    assert heat["x"] == ["all<br>164 SEGs", "Synth<br>111 SEGs", "Nat<br>25 SEGs", "Real<br>28 SEGs"]
    board = cb_board.leaderboard(app, "paper").set_index("metric")
    for r, metric in enumerate(heat["y"]):
        assert heat["customdata"][r][2] == ["Nat", metric]
        expect = [board.loc[metric, c] for c in ("ord_avg", "ord_synth", "ord_nat", "ord_real")]
        shown = [float(t.strip("()")) for t in heat["text"][r]]
        np.testing.assert_allclose(shown, expect, atol=0.0051)
    # CLIPScore's Nat Ord, 58.0 on the TS2 project page
    assert heat["text"][heat["y"].index("CLIPScore")][2].strip("()") == "0.58"
    # the dark layer marks exactly the cells whose Ord p-value is above 0.05
    res = cb.board_result(app, "paper", "partition")
    marked = ~(res.pvalue("ord").T <= 0.05)
    dark = np.array([[v is not None for v in row] for row in data[1]["z"]])
    assert dark.shape == marked.shape and (dark == marked).all()


def test_table_rows_and_note(app):
    t = cb.slices_table(app, "paper", "partition")
    assert len(t) == 4 * len(app.metrics) and t.slice.unique().tolist() == ["all", "Synth", "Nat", "Real"]
    clip = t[(t.slice == "Nat") & (t.metric == "CLIPScore")].iloc[0]
    assert clip["Ord · Avg"].startswith("58.0 [") and clip["SEGs"] == 25
    note = cb.slices_note(app, "paper", "partition")
    assert "1,000 resamples of SEGs" in note and "SEG 164 left out" in note
    assert "(`signed_sep` = 0)" in cb.slices_note(app, "paper", "partition", "signed_sep")
    with pytest.raises(InputError, match="one of ord, signed_sep"):       # Sep has no null value, no p-value
        cb.slices_figure(app, "paper", "partition", "sep")


@pytest.mark.parametrize("family, stat", [("skills", "ord"), ("../etc", "ord"), ("partition", "__import__")])
def test_unknown_family_or_statistic_is_one_line(app, family, stat):
    with pytest.raises(InputError) as e:
        cb.slices_figure(app, "paper", family, stat)
    assert "\n" not in str(e.value)
