"""Issue 40, the app half: what a newcomer's first hour in the app showed, without a browser.

Each test here failed before its fix (the browser side is in tests/browser/test_browser_first_hour.py).
"""
from __future__ import annotations

import pytest

from ts2viz.ui import load_state
from ts2viz.ui.callbacks import board as cb_board
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("first-hour")
    write_dataset(d / "ds", big_image=False)
    return d


@pytest.fixture()
def app(folder, tmp_path):
    """One session's view of an app whose operator loaded the test scores."""
    return load_state(str(folder / "ds"), [str(write_scores(tmp_path, folder / "ds"))],
                      cache_root=tmp_path / "cache").view()


# -- item 10: a scores file with blanks is announced as the CLI announces it ------------------------

def test_partly_scored_upload_says_what_the_cli_says(app, tmp_path):
    from ts2viz.scores import coverage, read_scores

    fns = app.dataset.file_names
    blank = set(fns[:5]) | set(fns[13:26])          # 5 images of SEG 0, every image of SEG 1
    path = tmp_path / "part.csv"
    path.write_text("file_name,Part\n" + "\n".join(f"{f},{'' if f in blank else i % 7}"
                                                   for i, f in enumerate(fns)) + "\n")
    expected = coverage(read_scores(path, dataset=app.dataset), app.dataset)[0].describe()
    assert "1 of 3 SEGs partly scored" in expected and "1 of 3 SEGs not scored at all" in expected
    msg = cb_board.add_scores_file(app, path, "part.csv")
    assert expected in msg, msg
    assert "ord and sep use the scored images only" in msg
    # a complete file gets no such warning
    full = tmp_path / "full.csv"
    full.write_text("file_name,Full\n" + "\n".join(f"{f},{i % 7}" for i, f in enumerate(fns)) + "\n")
    assert "has scores for" not in cb_board.add_scores_file(app, full, "full.csv")


# -- item 11: a typo in the spec is named before the images are looked for ----------------------------

def test_live_spec_typo_is_named_before_the_images(tmp_path, monkeypatch):
    import shutil

    from ts2viz.errors import InputError
    from ts2viz.ui.callbacks import live as cb_live

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = write_dataset(tmp_path / "ds", big_image=False)
    shutil.rmtree(folder / "images")                      # no images: the old order said so first
    view = load_state(str(folder), cache_root=tmp_path / "c", fetch_images=False).view()
    with pytest.raises(InputError, match="unknown metric family 'clipscor'"):
        cb_live.live_score(view, "clipscor:openai/clip-vit-base-patch32", "seg", 0)
    with pytest.raises(InputError, match="unknown option"):
        cb_live.live_score(view, "clipscore:openai/clip-vit-base-patch32?bogus=1", "seg", 0)
    # a well-formed spec still gets the images' message
    with pytest.raises(InputError, match="the dataset's folder does not hold its image files"):
        cb_live.live_score(view, "clipscore:openai/clip-vit-base-patch32", "seg", 0)


# -- item 14: the authoring walk table counts a walk's images as the summary does ---------------------

def test_authoring_walk_images_match_the_images_scored(tmp_path):
    from ts2viz.ui.callbacks.authoring import drafts as cb_drafts, scoring as cb_scoring
    from ts2viz.ui.state.sessions import Workspaces

    write_dataset(tmp_path / "ds", big_image=False, nodes=[("0", 1), ("1a", 1), ("2a", 1)])
    scores = write_scores(tmp_path, tmp_path / "ds")
    app = load_state(str(tmp_path / "ds"), [str(scores)], cache_root=tmp_path / "cache")
    view = Workspaces(app, exports_root=tmp_path / "sessions").view("s", create=True)
    cb_drafts.start_from_seg(view, 0)
    for mode in ("paper", "spec"):
        r = cb_scoring.score_draft(view, "loaded", "GoodScore", mode)
        assert "3/3 images scored" in r["summary"], r["summary"]
        assert list(r["walks"]["images"]) == [3], (mode, r["walks"])
    assert "counts node 0's images twice" in cb_scoring.score_draft(view, "loaded", "GoodScore", "paper")["summary"]


# -- item 12: an empty table says what is missing -----------------------------------------------------

def test_empty_tables_say_what_is_missing(folder, tmp_path):
    from ts2viz.ui.callbacks import common as cb_common
    from ts2viz.ui.callbacks import nuisance as cb_nuisance
    from ts2viz.ui.glue.tables import EMPTY_HEADER, table_value
    from ts2viz.ui.tabs.board import board_view

    bare = load_state(str(folder / "ds"), cache_root=tmp_path / "c").view()
    table, _, _ = board_view(bare, "paper", None, "ord_avg", "best first", "png")
    assert table["headers"] == [EMPTY_HEADER] and table["data"] == [[cb_common.NO_SCORES]]
    import pandas as pd

    assert table_value(pd.DataFrame({"a": []}), empty="why")["data"] == [["why"]]
    assert table_value(pd.DataFrame({"a": [1]}), empty="why")["data"] == [[1]]
    # the Leaderboard's stability note points where the test runs (no SEG, no button on that tab)
    assert "below" not in cb_nuisance.NO_STABILITY and "Nuisance tab" in cb_nuisance.NO_STABILITY


# -- item 15: the Human ratings tab's views are computed ahead; every bundled set is offered ------------

def test_warm_computes_every_view_ahead_and_genaibench_is_offered(monkeypatch):
    import ts2viz.metaeval.rated as he
    import ts2viz.metaeval.permutation as gp
    from ts2viz.ui.callbacks.humaneval import (board as gc_board, crossgold as gc_crossgold, sets as gc_sets,
                                               warmup as gc_warmup)

    assert "genaibench" in gc_sets.gold_sets()                 # the CLI's fourth set: ratings only, for uploads
    assert "No metric scores in this set" in gc_board.board_note("genaibench", "likert", "point-wise")
    assert len(gc_board.board("genaibench", "likert", "point-wise")) == 0
    few = ["genaibench-teaser", "genaibench"]             # the whole warm-up takes a minute on 2 cores
    gc_warmup.warm(few)

    def computed(*a, **k):
        raise AssertionError("a click computed a view the warm-up should have computed")

    monkeypatch.setattr(he, "evaluate_rated", computed)
    monkeypatch.setattr(gp, "gold_clusters", computed)
    monkeypatch.setattr("ts2viz.crossgold.cross_gold", computed)
    for name in few:
        for rs in gc_sets.rating_sets(name):
            for task in gc_sets.TASKS:
                gc_board.board(name, rs, task)
                gc_board.board_note(name, rs, task)
    gc_crossgold.cross_gold_table()


# -- item 19: a link names only what the page offers -------------------------------------------------

def test_links_read_only_offered_names(app):
    from ts2viz.ui.glue.share import link_query, read_link

    metric = app.metrics[0]
    want = {"tab": "seg", "seg": 1, "metric": metric, "node": "1b", "gold": "imagenhub-t2i", "ratings": "sc",
            "task": "pair-wise", "gold_metric": "clipscore"}
    assert read_link({k: str(v) for k, v in want.items()}, app) == want
    q = link_query(want)
    from urllib.parse import parse_qsl

    assert read_link(dict(parse_qsl(q[1:])), app) == want
    bad = {"tab": "<script>", "seg": "99", "metric": "/etc/passwd", "compare": "x" * 5000, "node": "9z",
           "gold": "../gold", "ratings": "sc", "task": "?", "gold_metric": "clipscore", "other": "1"}
    assert read_link(bad, app) == {}
    assert read_link({"seg": "2", "node": "1b", "gold": "tifa160", "ratings": "sc"}, app) == \
        {"seg": 2, "node": "1b", "gold": "tifa160"}


# -- item 13: walk plots key the dots by node and colour a walk alike in both plots ---------------------

def test_walk_plots_key_nodes_and_colour_walks_by_number():
    import numpy as np

    from ts2viz import figures
    from ts2viz.figures.style import node_colors, plain_figures

    levels = {"0": 0, "1a": 1, "1b": 1, "2": 2}
    scores = {"0": [0.9, 0.8], "1a": [0.7], "1b": [0.6, 0.5], "2": [0.3]}
    walks = [["0", "1a", "2"], ["0", "1b", "2"]]
    with plain_figures():
        left = figures.walk_figure(levels, scores, walks, np.array([0.2, 0.9]), metric="A")
        right = figures.walk_figure(levels, scores, walks, np.array([0.9, 0.2]), metric="B")   # other order

    def walk_colours(fig):
        return {t["name"].split(":")[0]: t["line"]["color"] for t in fig.data if t["name"].startswith("walk ")}

    assert walk_colours(left) == walk_colours(right) and len(set(walk_colours(left).values())) == 2
    keys = {t["name"]: t["marker"]["color"] for t in left.data if t["name"].startswith("node ")}
    assert keys == {f"node {k}": c for k, c in node_colors(levels).items()}
    dots = next(t for t in left.data if t["name"] == "images")
    assert set(dots["marker"]["color"]) == set(keys.values())


# -- item 17: colours and marks that read --------------------------------------------------------------

def test_family_and_node_colours_and_significance_marks():
    import numpy as np

    from ts2viz.figures.comparisons import significance_heatmap
    from ts2viz.figures.style import (FAMILY_COLORS, MIN_CONTRAST, contrast_on_white, family_color, node_colors,
                                      plain_figures)

    assert family_color("Ensemble") not in FAMILY_COLORS.values()
    yellow = node_colors({"0": 0, "1a": 1, "1b": 1})                 # node 1b of the issue
    assert min(contrast_on_white(c) for c in yellow.values()) >= MIN_CONTRAST, yellow
    assert len(set(yellow.values())) == 3
    p = np.array([[1, 1e-4, 0.5], [1e-4, 1, 0.5], [0.5, 0.5, 1.0]])
    d = np.array([[0, 0.2, 0.01], [-0.2, 0, 0.0], [-0.01, 0, 0]])
    with plain_figures():
        fig = significance_heatmap(["a", "b", "c"], d, p, cell_text="marks")
    marks = next(t for t in fig.data if t.get("name") == "marks")      # the text layer (figures.cell_text)
    assert "***" in marks["text"]
    assert marks["textfont"]["size"] >= 14 and marks["textfont"].get("weight") == "bold"
    # each mark black or white for its own cell (every cell's ratio: tests/ui/test_heatmap_contrast.py)
    assert set(marks["textfont"]["color"]) <= {"#000000", "#ffffff"}


def test_model_ordering_note_explains_agreement_beside_tau():
    from ts2viz.ui.callbacks.humaneval import board as gc_board

    note = gc_board.board_note("tifa160", "dsg", "model ordering")
    assert "'model pairs agreeing'" in note and "τ = 1.000" in note


# -- item 17: a screen reader hears a word, not Gradio's missing key --------------------------------------

def test_screen_reader_text_for_a_finished_update(app):
    from ts2viz.ui import launch_kwargs

    i18n = launch_kwargs(app)["i18n"]
    assert i18n.translations_dict["en"]["common.complete"] == "Updated"
