"""Issue 21, "tried as a new user would", without a browser: the callbacks and the files they write."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ts2viz.ui.callbacks import common as cb_common, board as cb_board

from ts2viz.ui.callbacks.explorer import view as cb_explorer_view, walks as cb_explorer_walks
from ts2viz.ui import load_state
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    d = tmp_path_factory.mktemp("first_use")
    write_dataset(d / "ds", big_image=False)
    return load_state(str(d / "ds"), [str(write_scores(d, d / "ds"))], cache_root=d / "cache").view()


# -- item 5: picking a family while "All" is selected -------------------------------------------------

def test_family_selection_drops_all_when_a_family_is_picked():
    A = cb_common.ALL
    assert cb_common.family_selection([A, "CLIP"]) == ["CLIP"]               # picked a family: All goes
    assert cb_common.family_selection(["CLIP", "VQA", A]) == [A]             # picked All: the families go
    assert cb_common.family_selection(["CLIP", "VQA"]) == ["CLIP", "VQA"]
    assert cb_common.family_selection([]) == [A] and cb_common.family_selection(None) == [A]
    assert cb_common.family_selection([A]) == [A]


# -- item 8: the leaderboard CSV in the table's order -------------------------------------------------

@pytest.mark.parametrize("sort_by", ["ord_avg", "sep_avg", "metric"])
@pytest.mark.parametrize("best_first", [True, False])
def test_leaderboard_csv_rows_in_the_tables_order(app, sort_by, best_first):
    table = cb_board.leaderboard(app, "paper", None, sort_by, best_first)
    csv = pd.read_csv(cb_board.leaderboard_csv(app, "paper", None, sort_by, best_first))
    assert list(csv["metric"]) == list(table["metric"])
    assert len(set(csv["metric"])) >= 3
    # sorted as asked (names A-Z / values best first), not in one fixed order
    col = csv[sort_by]
    want = col.sort_values(ascending=(sort_by == "metric") == best_first, na_position="last", kind="stable")
    assert list(col) == list(want)


# -- item 10: colours -----------------------------------------------------------------------------------

def _is_red_or_green(color: str) -> bool:
    """A saturated colour whose hue is red or green (what red-green colour blindness confuses)."""
    import colorsys

    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, light, sat = colorsys.rgb_to_hls(r, g, b)
    deg = h * 360
    return sat > 0.35 and 0.15 < light < 0.9 and (deg < 15 or deg > 345 or 90 < deg < 160)


def test_value_scales_avoid_red_against_green():
    from ts2viz import figures
    from ts2viz.ui.views.graph import goodness_color

    for scale in (figures.GOODNESS_SCALE, figures.SIGNED_SCALE):
        ends = [c for _, c in scale]
        assert not (any(_is_red_or_green(c) for c in ends[:1]) and any(_is_red_or_green(c) for c in ends[-1:])), scale
        assert not any(_is_red_or_green(c) for c in ends), scale
    assert not any(_is_red_or_green(goodness_color(t / 10)) for t in range(11))


def test_walk_dots_stand_out_on_white(tmp_path):
    """Each image's dot on the walk figure has an outline with contrast >= 3 on white, in the JSON the
    page gets (light shades of a level's yellow were invisible)."""
    import json

    from ts2viz import figures
    from ts2viz.ui.glue.plots import page_plot

    app = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    seg = max(app.dataset, key=lambda s: sum(n.level == 1 for n in s.nodes))     # most shades of yellow
    f = json.loads(page_plot(lambda: cb_explorer_walks.walk_figure(app, "paper", seg.id, "CLIPScore")).plot)
    dots = next(t for t in f["data"] if t["name"] == "images")
    assert len(dots["marker"]["line"]["color"]) == len(dots["x"]) > 0
    assert min(figures.contrast_on_white(c) for c in dots["marker"]["line"]["color"]) >= figures.MIN_CONTRAST
    assert min(figures.contrast_on_white(c) for c in dots["marker"]["color"]) < figures.MIN_CONTRAST  # why


# -- item 9: the Questions tab says when it shows another metric -----------------------------------------

def test_questions_tab_says_when_the_metric_has_no_questions(tmp_path):
    from ts2viz.ui.callbacks.questions import sources as qa_sources

    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    _, metric = qa_sources.qa_metric_choice(ts2, ["TIFA-GPT4V", None], None)
    assert metric and metric != "TIFA-GPT4V"
    note = qa_sources.substitute_note(ts2, ["TIFA-GPT4V", None], metric)
    assert "TIFA-GPT4V" in note and "no per-question details" in note and metric in note
    assert qa_sources.substitute_note(ts2, ["TIFA-BLIP1", None], "TIFA-BLIP1") == ""
    assert qa_sources.substitute_note(ts2, [None, None], "TIFA-BLIP1") == ""


# -- item 4: the leaderboard explains its columns -------------------------------------------------------

def test_board_legend_defines_every_column(app):
    pytest.importorskip("gradio")
    from ts2viz.ui.tabs.board import BOARD_LEGEND

    board = cb_board.leaderboard(app, "paper")
    for term in ("**Ord**", "Spearman", "**Sep**", "Kolmogorov", "**signed Sep**", "**dir**", "**SEGs**", "164",
                 "165", "Synth", "Nat", "Real"):
        assert term in BOARD_LEGEND, term
    assert {"dir", "segs", "signed_sep_avg"} <= set(board.columns)


def test_board_headers_are_readable_and_the_csv_keeps_its_names(app):
    """Item 4: the table the browser gets has headers for people ("Ord avg", "signed Sep avg", "SEGs"),
    the data underneath and the CSV keep snake_case."""
    gr = pytest.importorskip("gradio")
    board = cb_board.leaderboard(app, "paper")
    sent = gr.Dataframe(interactive=False).postprocess(cb_board.style_leaderboard(board))
    assert sent.headers[:5] == ["metric", "dir", "Ord avg", "Sep avg", "signed Sep avg"]
    assert {"Sep synth", "SEGs", "family", "source"} <= set(sent.headers)
    assert not [h for h in sent.headers if "_" in h]
    # the best cell of each column is still marked under its new header
    col = sent.headers.index("Ord avg")
    best = int(board["ord_avg"].to_numpy().argmax())
    assert "font-weight:700" in sent.metadata["styling"][best][col].replace(" ", "")
    assert list(board.columns[:3]) == ["metric", "dir", "ord_avg"]
    csv = pd.read_csv(cb_board.leaderboard_csv(app, "paper"))
    assert list(csv.columns[:3]) == ["metric", "ord_avg", "sep_avg"] and "signed_sep_avg" in csv.columns
    # a shown table written to a file keeps the data's names too
    shown = cb_common.shown(cb_common.mark_columns(board.copy(), x100=["ord_avg"]))
    assert list(pd.read_csv(cb_common.table_csv(app, shown, "t")).columns) == list(board.columns)


@pytest.mark.parametrize("name, label", [("ord_avg", "Ord avg"), ("sep_synth", "Sep synth"),
                                         ("signed_sep_avg", "signed Sep avg"), ("sep_real", "Sep real"),
                                         ("seg_id", "SEG"), ("segs", "SEGs"), ("dir", "dir"), ("ord", "ord"),
                                         ("walk", "walk"), ("sep_lo", "sep_lo"), ("CLIPScore", "CLIPScore")])
def test_column_label(name, label):
    from ts2viz.display import column_label

    assert column_label(name) == label


# -- item 3: offline, each image links to its file on the hub, and one command gets them all --------------

def test_node_title_links_images_to_the_hub_when_offline(tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    seg = next(iter(ts2.dataset))
    node = seg.labels[0]
    title = cb_explorer_view.select_node(ts2, "paper", seg.id, "CLIPScore", None, node)["node_title"]
    first = seg.node(node).images[0].file_name
    assert f"https://huggingface.co/datasets/saxon/T2IScoreScore/blob/main/{first}" in title
    assert "hf download saxon/T2IScoreScore --repo-type dataset --local-dir ts2-data" in title
    assert "python app.py --data ts2-data" in title
    # images on disk: no links
    local = cb_explorer_view.select_node(load_state(str(Path(app_dir(tmp_path))), cache_root=tmp_path / "c2").view(),
                           "paper", 0, None, None, "0")["node_title"]
    assert "Node 0" in local and "huggingface.co" not in local


def test_node_title_links_only_images_not_on_screen(tmp_path, monkeypatch):
    """Leftover of item 3: the hub links are for images the page cannot show (offline, missing), never
    for ones on screen (a download the app made) or on their way (their tiles fill without a click, the
    title is not redrawn)."""
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    seg = next(s for s in ts2.dataset if any(len(n.images) >= 3 for n in s.nodes))
    files = [im.file_name for im in next(n for n in seg.nodes if len(n.images) >= 3).images[:3]]
    url = "https://huggingface.co/datasets/saxon/T2IScoreScore/blob/main/"
    assert cb_explorer_view.image_links(ts2.dataset, files, ["ready", "ready", "ready"]) == ""
    assert cb_explorer_view.image_links(ts2.dataset, files, ["loading", "ready", "loading"]) == ""
    some = cb_explorer_view.image_links(ts2.dataset, files, ["ready", "offline", "missing"])
    assert f"{url}{files[0]}" not in some and f"{url}{files[1]}" in some and f"{url}{files[2]}" in some
    # the node title asks the app's image cache: offline here, so every image of the node is linked
    node = seg.labels[0]
    title = cb_explorer_view.select_node(ts2, "paper", seg.id, None, None, node)["node_title"]
    assert all(f"{url}{im.file_name}" in title for im in seg.node(node).images[:12])


def app_dir(tmp_path):
    return write_dataset(tmp_path / "ds", big_image=False)


# -- item 7: no name silently missing from the Ord-vs-Sep scatter ----------------------------------------

@pytest.mark.parametrize("families", [None, ["TIFA"]])
@pytest.mark.parametrize("whiskers", [False, True])
def test_scatter_names_every_point_on_the_page(tmp_path, families, whiskers):
    """Item 7: in the JSON the page gets, every view of the Ord-vs-Sep scatter (all metrics, the zoom)
    names each point it shows, beside the point or in the list under the plot (none left out, no
    "+3 more"), and the labels' boxes, at the width they are placed for, overlap neither each other
    nor another point."""
    import json
    import re

    from ts2viz import figures
    from ts2viz.ui.callbacks.uncertainty import intervals as uc_intervals
    from ts2viz.ui.glue.plots import page_plot

    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    board = cb_board.leaderboard(ts2, "paper", families)
    if whiskers:
        board = uc_intervals.board_intervals(ts2, "paper", board, "ord_avg")
    f = json.loads(page_plot(lambda: figures.ord_sep_scatter(board, title="t", error_bars=whiskers)).plot)
    lay = f["layout"]
    plot_w = figures.LABEL_PLOT_WIDTH
    plot_h = lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]
    views = [(lay["annotations"], lay["xaxis"]["range"], lay["yaxis"]["range"])]
    for menu in lay.get("updatemenus", []):
        views += [(a["annotations"], a["xaxis.range"], a["yaxis.range"]) for a in (b["args"][0] for b in menu["buttons"])]
    points = [(n, x, y) for t in f["data"] for n, x, y in zip(t["text"], t["x"], t["y"]) if x is not None and y is not None]
    assert len(points) == len(board) >= 4
    for anns, (x0, x1), (y0, y1) in views:
        px = lambda x: (x - x0) / (x1 - x0) * plot_w                                  # noqa: E731
        py = lambda y: (y1 - y) / (y1 - y0) * plot_h                                  # noqa: E731
        shown = [n for n, x, y in points if x0 <= x <= x1 and y0 <= y <= y1]      # the points this view shows
        labels = [a for a in anns if a.get("name") == "label"]
        labelled = {a["text"] for a in labels}
        note = "<br>".join(a["text"] for a in anns if a.get("name") == "unlabelled")
        assert "more" not in note
        listed = set(re.split(r" · |<br>|: ", note))
        assert not [m for m in shown if m not in labelled and m not in listed], note
        assert not labelled & listed and len(labelled) >= 1
        boxes = []
        for a in labels:
            w, h = figures.text_width(a["text"], 10) + 6, 10 * 1.25 + 4
            ax, ay = px(a["x"]), py(a["y"])
            bx = {"left": ax, "right": ax - w, "center": ax - w / 2}[a["xanchor"]]
            by = {"bottom": ay - h, "top": ay, "middle": ay - h / 2}[a["yanchor"]]
            boxes.append((a["text"], bx, by, bx + w, by + h))
        for i, (n1, *b1) in enumerate(boxes):
            assert -1 <= b1[0] and b1[2] <= plot_w + 1 and -1 <= b1[1] and b1[3] <= plot_h + 1, n1
            for n2, *b2 in boxes[i + 1:]:
                assert not (b1[0] < b2[2] and b2[0] < b1[2] and b1[1] < b2[3] and b2[1] < b1[3]), (n1, n2)
            for n, x, y in points:      # no label over another metric's point
                if n != n1 and x0 <= x <= x1 and y0 <= y <= y1:
                    assert not (b1[0] < px(x) < b1[2] and b1[1] < py(y) < b1[3]), (n1, n)


def test_scatter_lists_every_point_for_a_phone(tmp_path):
    """Item 7 on a phone: the note under the scatter names every metric with its values (the page
    shows it where the plot's labels are hidden: assets/app.css)."""
    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    board = cb_board.leaderboard(ts2, "paper")
    note = cb_board.scatter_names_html(board)
    assert note.startswith('<div class="scatter-names">')
    for m, o, sp in zip(board["metric"], board["ord_avg"], board["sep_avg"]):
        assert f"<b>{m}</b> {100 * o:.1f} · {100 * sp:.1f}" in note
    css = (Path(__file__).resolve().parents[2] / "assets" / "app.css").read_text()
    assert ".scatter-names { display: none; }" in css and ".scatter-names { display: block; }" in css


# -- item 12: on a phone the leaderboard's first columns are its scores -----------------------------------

def test_board_scores_come_right_after_the_name(app):
    board = cb_board.leaderboard(app, "paper")
    assert list(board.columns[:3]) == ["metric", "dir", "ord_avg"]
    assert list(board.columns[-3:]) == ["segs", "family", "source"]


def test_question_finder_fits_the_sidebar(tmp_path):
    from ts2viz.ui.callbacks.questions import finder as qa_finder

    ts2 = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    full = qa_finder.question_finder(ts2, "TIFA-mPLUG")
    screen = qa_finder.question_finder_on_screen(full)
    assert list(screen.columns) == ["SEG", "missed", "prompt", "question"]
    assert screen["missed"].iloc[0] == f"{full['missed'].iloc[0]} of {full['of'].iloc[0]}"
    assert screen["SEG"].tolist() == full["SEG"].tolist()
