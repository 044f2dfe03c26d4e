"""The Leaderboard tab's significance panel (clusters and pairwise accuracy), without a browser: the HTML
it returns against the library run here on meta-metrics computed from the bundled data."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.metaeval.seg_pairwise import seg_pairwise
from ts2viz.scores import Scores
from ts2viz.metametrics.permutation import leaderboard_clusters
from ts2viz.ui import load_state
from ts2viz.ui.views.significance_view import significance_html
from ts2viz.ui.tabs.board import significance_panel


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2sig"), fetch_images=False)


@pytest.fixture(scope="module")
def ref():
    sc = bundled_scores()
    mm = compute(load_dataset("ts2"), sc, policy="paper")
    return mm, sc


def clusters_in(page: str) -> list[list[str]]:
    boxes = re.findall(r"<b>Cluster (\d+)</b>(.*?)</div>", page)
    return [re.findall(r"<span class='sig-chip'>(.*?) <b>", body) for _, body in boxes]


def test_panel_clusters_and_accuracy_match_library(state, ref):
    mm, sc = ref
    view = state.view()
    page = significance_panel(view, "paper", ["All"], True)
    assert clusters_in(page) == leaderboard_clusters(mm, "ord_avg").members()
    # the pairwise-accuracy rows, best first, with the library's values (x100, one decimal)
    pw = seg_pairwise(mm, sc)
    av = pw.averages()["pacc_avg"]
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([\d.]+) <small>\[([\d.]+), ([\d.]+)\]", page)
    assert [r[0] for r in rows] == [pw.metrics[i] for i in np.argsort(-av, kind="stable")]
    for name, v, lo, hi in rows:
        assert float(v) == pytest.approx(100 * av[pw.metrics.index(name)], abs=0.051)
        assert float(lo) <= float(v) <= float(hi)
    assert "never on the SEG it scores" in page and "chance at its tie rate" in page
    assert significance_panel(view, "paper", ["All"], False) == ""


def test_panel_follows_family_filter_and_escapes_names(state):
    view = state.view()
    page = significance_panel(view, "spec", ["DSG"], True)
    names = [m for c in clusters_in(page) for m in c]
    assert names and all(m.startswith("DSG") for m in names)
    # a visitor's metric name is shown as text, never as markup
    base = view.scores()
    files = list(base.file_names)
    rng = np.random.default_rng(0)
    view.add_table(Scores(files, ["<img src=x onerror=alert(1)>"], rng.random((len(files), 1))), kind="uploaded",
                   name="evil.csv")
    page = significance_html(view, "paper", ["CLIPScore", "<img src=x onerror=alert(1)>"])
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "at least two metrics" in significance_html(view, "paper", ["CLIPScore"])


def test_explorer_header_and_failure_finder_show_pairwise_accuracy(state, ref):
    from ts2viz.ui.callbacks.explorer import picking as cb_explorer_picking, view as cb_explorer_view

    mm, sc = ref
    pw = seg_pairwise(mm, sc)
    view = state.view()
    k = pw.metrics.index("TIFA-GPT4V")
    head = cb_explorer_view.seg_header(view, "paper", 12, "TIFA-GPT4V", "CLIPScore")
    i = pw.seg_ids.index(12)
    assert f"pairwise acc {100 * pw.accuracy[i, k]:.1f} (tie ε {pw.epsilon[i, k]:.3g})" in head
    assert head.count("pairwise acc") == 2
    df = cb_explorer_picking.failure_finder(view, "paper", "TIFA-GPT4V", "pacc")
    col = "pairwise acc TIFA-GPT4V"
    want = np.sort(pw.accuracy[:, k][~np.isnan(pw.accuracy[:, k])])[:len(df)]
    np.testing.assert_allclose(df[col].to_numpy(), want)
    gap = cb_explorer_picking.failure_finder(view, "paper", "TIFA-GPT4V", "pacc", "CLIPScore")
    assert (np.diff(gap["gap"].to_numpy()) >= 0).all()


def test_panel_clusters_follow_the_sort_column(state, ref):
    mm, _ = ref
    page = significance_panel(state.view(), "paper", ["All"], True, "sep_avg")
    assert "Significance clusters by Sep · Avg" in page
    assert clusters_in(page) == leaderboard_clusters(mm, "sep_avg").members()
    # sorting by name: clusters by Ord · Avg
    assert "by Ord · Avg" in significance_panel(state.view(), "paper", ["All"], True, "metric")
