"""The Human ratings tab's callbacks, without a browser: what the table and figure carry."""
import numpy as np
import pytest

from ts2viz.errors import InputError
from ts2viz.ui.callbacks.humaneval import (board as gc_board, crossgold as gc_crossgold, image as gc_image,
                                           sets as gc_sets)


def test_board_per_task_and_note():
    pw = gc_board.board("tifa160", "dsg", "point-wise")
    row = pw[pw["metric"] == "dsg:PaLI-17B"].iloc[0]
    assert row["Spearman [95%]"].startswith("0.571 [") and row["Kendall τ-b [95%]"].startswith("0.458 [")
    assert pw["metric"].iloc[0] == "human:tifa"           # the human ceiling leads
    pair = gc_board.board("tifa160", "dsg", "pair-wise")
    assert {"accuracy [95%]", "acc_eq, tie-calibrated [95%]", "tie ε"} <= set(pair.columns)
    order = gc_board.board("imagenhub-t2i", "sc", "model ordering")
    assert order["model pairs agreeing"].str.endswith("%").all()
    assert "humans order" in gc_board.board_note("imagenhub-t2i", "sc", "model ordering")
    assert gc_sets.rating_sets("imagenhub-t2i") == ["sc"]      # perceptual quality is not offered as gold


def test_scatter_is_one_trace_per_model_one_point_per_image():
    import json

    from ts2viz.ui.glue.plots import page_plot

    fig = json.loads(page_plot(lambda: gc_board.scatter_figure("tifa160", "tifa", "dsg:InstructBLIP")).plot)
    assert len(fig["data"]) == 5 and sum(len(t["x"]) for t in fig["data"]) == 800
    assert "Spearman" in fig["layout"]["title"]["text"]


def test_inputs_from_a_visitor_are_checked():
    with pytest.raises(InputError, match="unknown rated set"):
        gc_board.board("/etc/passwd", "dsg", "point-wise")
    with pytest.raises(InputError, match="unknown task"):
        gc_board.board("tifa160", "dsg", "bogus")
    with pytest.raises(InputError, match="no rating set"):
        gc_sets.result("tifa160", "pq")
    with pytest.raises(InputError, match="no metric"):
        gc_board.scatter_data("tifa160", "dsg", "__import__('os')")


# -- a user's own rated set and score files, one image's details (issue 19 item 6) --------------------

@pytest.fixture(scope="module")
def app_public(tmp_path_factory):
    from ui_helpers import write_dataset, write_scores

    from ts2viz.ui.serving import access
    from ts2viz.ui import load_state

    d = tmp_path_factory.mktemp("gold-ui")
    write_dataset(d / "ds", big_image=False)
    return load_state(str(d / "ds"), [str(write_scores(d, d / "ds"))], cache_root=d / "cache", fetch_images=False,
                      access=access.public())


@pytest.fixture(scope="module")
def own_set(tmp_path_factory):
    """An operator's rated set (``app.py --gold FOLDER``) made here: 20 prompts x 3 models, 3 raters,
    a metric 'good' that follows the raters and 'bad' that does not, an image file for one image."""
    from PIL import Image
    from gold_helpers import make_folder

    folder = make_folder(tmp_path_factory.mktemp("own") / "myset")
    Image.new("RGB", (8, 8), (200, 10, 10)).save(folder / "p0-A.png")
    import pandas as pd

    im = pd.read_csv(folder / "images.csv")
    im["path"] = ["p0-A.png" if i == "p0-A" else ("../../etc/passwd" if i == "p0-B" else "") for i in im["image_id"]]
    im.to_csv(folder / "images.csv", index=False)
    assert gc_sets.add_operator_sets([folder]) == ["myset"]
    yield folder
    gc_sets.remove_operator_sets(["myset", "bare"])        # other tests in this process see the bundled sets only
    assert "myset" not in gc_sets.gold_sets()


def _visitor_file(app, text: str, name: str = "mine.csv"):
    """A file as a visitor's upload lies on the server: in the app's upload folder."""
    import dataclasses
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(prefix="gold-up-"))
    app.access = dataclasses.replace(app.access, upload_root=str(root))
    p = root / "u" / name
    p.parent.mkdir()
    p.write_text(text)
    return p


def test_operator_set_is_offered_and_evaluated(own_set):
    from ts2viz.ui.glue.plots import page_plot
    import json

    assert gc_sets.gold_sets()[:len(gc_sets.GOLD_SETS)] == list(gc_sets.GOLD_SETS) and "myset" in gc_sets.gold_sets()
    b = gc_board.board("myset", "default", "point-wise")
    assert {"good", "bad"} <= set(b["metric"])
    assert b[b["metric"] == "good"].index[0] < b[b["metric"] == "bad"].index[0]
    fig = json.loads(page_plot(lambda: gc_board.scatter_figure("myset", "default", "good")).plot)
    assert sorted(t["name"] for t in fig["data"]) == ["A", "B", "C"]
    assert sorted(i for t in fig["data"] for i in t["customdata"])[:2] == ["p0-A", "p0-B"]
    with pytest.raises(InputError, match="bundled set"):
        import shutil

        shutil.copytree(own_set, own_set.parent / "tifa160")
        gc_sets.add_operator_sets([own_set.parent / "tifa160"])


def test_image_detail_of_a_tifa160_image():
    md, scores, answers, path = gc_image.image_detail("tifa160", "coco_669925_mini_dalle")
    assert "A Christmas tree with lights and teddy bear" in md and "mini\\_dalle" in md
    assert "tifa-1: 5" in md and "mean 5.00" in md and path is None
    s = dict(zip(scores["metric"], scores["score"]))
    assert len(s) == len(gc_sets.rated("tifa160").metrics) and s["spice"] == "0.5"
    # the released answers in the Questions tab's question table, of the set's first answer-based metric
    # when no metric is named; the DSG question with parents 1,2 is there
    from ts2viz.ui.callbacks.questions.image import display_table

    assert answers.attrs["metric"] == "dsg:mPLUG-large"
    assert list(answers.columns) == list(display_table("dependent", _empty_dsg_table()).columns)
    row = answers[answers["#"] == 4].iloc[0]
    assert row["parents"] == "1, 2" and row["question"] == "Are the lights on the Christmas tree?"
    assert row["expected"] == "yes" and row["choices"] == "yes | no"
    _, _, pali, _ = gc_image.image_detail("tifa160", "coco_669925_mini_dalle", metric="vq2a:PaLI-17B")
    assert pali.attrs["metric"] == "vq2a:PaLI-17B" and "parents" not in pali.columns and len(pali)
    with pytest.raises(InputError, match="no image"):
        gc_image.image_detail("tifa160", "<img src=x>")
    assert "&lt;img" in gc_image.placeholder_html("<img src=x>")


def test_image_file_only_inside_the_operators_folder(own_set):
    assert gc_image.image_detail("myset", "p0-A")[3] == str((own_set / "p0-A.png").resolve())
    assert gc_image.image_detail("myset", "p0-B")[3] is None          # ../../etc/passwd: not served
    assert gc_image.image_detail("myset", "p1-A")[3] is None


def test_a_visitors_scores_join_their_session_only(app_public, own_set):
    import json

    import numpy as np

    from ts2viz.ui.callbacks import gold_uploads as gu
    from ts2viz.ui.glue.plots import page_plot
    from ts2viz.ui.state import gold_session as gs

    g = gc_sets.rated("myset")
    rng = np.random.default_rng(1)
    good = g.scores["good"].to_numpy()
    lines = ["image_id,<b>mine</b>,noise"] + [f"{i},{v + 0.01 * rng.normal():.4f},{rng.normal():.4f}"
                                               for i, v in zip(g.image_ids, good)]
    a, b = app_public.view(), app_public.view()
    p = _visitor_file(app_public, "\n".join(lines) + "\n")
    msg = gu.add_gold_scores(a, "myset", p)
    assert "Loaded 2 metrics for myset" in msg and "<b>mine</b>" in msg
    own_a, own_b = gs.uploads_of(a), gs.uploads_of(b)
    assert own_b is None and not a.workspace.is_empty()       # the upload keeps the session's workspace
    board_a = gc_board.board("myset", "default", "point-wise", own_a)
    board_b = gc_board.board("myset", "default", "point-wise", own_b)
    assert "<b>mine</b> (yours)" in set(board_a["metric"]) and "noise (yours)" in set(board_a["metric"])
    assert not any("yours" in m for m in board_b["metric"])
    row = board_a[board_a["metric"] == "<b>mine</b> (yours)"].iloc[0]
    shared = board_a[board_a["metric"] == "good"].iloc[0]
    assert row["Spearman [95%]"][:4] == shared["Spearman [95%]"][:4]    # 'good' plus tiny noise
    # scatter and cross-gold: the visitor's metric, escaped in the figure
    fig = json.loads(page_plot(lambda: gc_board.scatter_figure("myset", "default", "<b>mine</b>", own_a)).plot)
    assert "&lt;b&gt;mine" in fig["layout"]["title"]["text"] and sum(len(t["x"]) for t in fig["data"]) == 60
    with pytest.raises(InputError, match="no metric"):
        gc_board.scatter_data("myset", "default", "<b>mine</b>", own_b)
    cross = gc_crossgold.cross_gold_table(own_a)
    mine = cross[cross["metric family"] == "<b>mine</b> (yours)"].iloc[0]
    assert mine["myset:spearman"].startswith(("1 [", "2 [")) and mine["ts2:ord_avg"] == "–"
    assert "<b>mine</b> (yours)" not in set(gc_crossgold.cross_gold_table(own_b)["metric family"])
    md, scores, _, _ = gc_image.image_detail("myset", "p3-B", own_a)
    assert list(scores["metric"][:2]) == ["<b>mine</b> (yours)", "noise (yours)"]     # the session's first
    # the session ends: its uploads go with it
    a.workspace.close()
    assert gs.uploads_of(a) is None


def test_visitor_upload_errors_quote_nothing_and_caps_hold(app_public, own_set):
    from ts2viz.ui.callbacks import gold_uploads as gu

    v = app_public.view()
    secret = "SECRET-CONTENT"
    for text, want in [(f"image_id,m\n{secret},1\n", "row 2: not a valid score file for rated set myset"),
                       (f"image_id,m\np0-A,{secret}\n", "row 2: not a valid score file"),
                       ("image_id,good\np0-A,1\n", "metric 'good' is already in rated set 'myset'"),
                       ("image_id,human:x\np0-A,1\n", "already in rated set"),
                       ("image_id," + ",".join(f"m{k}" for k in range(9)) + "\np0-A" + ",1" * 9 + "\n",
                        "at most 8 metrics")]:
        with pytest.raises(InputError) as e:
            gu.add_gold_scores(v, "myset", _visitor_file(app_public, text))
        assert want in str(e.value) and secret not in str(e.value), str(e.value)
    with pytest.raises(InputError, match="upload the file through the page"):
        gu.add_gold_scores(v, "myset", "/etc/hostname")
    with pytest.raises(InputError, match="unknown rated set"):
        gu.add_gold_scores(v, "/etc", _visitor_file(app_public, "image_id,m\np0-A,1\n"))
    with pytest.raises(InputError, match=".csv"):
        gu.add_gold_scores(v, "myset", _visitor_file(app_public, "x", "s.parquet"))
    big = _visitor_file(app_public, "image_id,m\n" + "x" * (5 * 1024 * 1024 + 10))
    with pytest.raises(InputError, match="limit is 5 MB"):
        gu.add_gold_scores(v, "myset", big)
    for k in range(5):
        gu.add_gold_scores(v, "myset", _visitor_file(app_public, f"image_id,c{k}\np0-A,1\np1-A,2\n"))
    with pytest.raises(InputError, match="at most 5 score files"):
        gu.add_gold_scores(v, "myset", _visitor_file(app_public, "image_id,c9\np0-A,1\n"))


def test_app_gold_flag_bad_folder_is_one_line_and_exit_2(tmp_path, capsys):
    from ui_helpers import write_dataset

    from ts2viz.cli import build_parser, main

    assert build_parser().parse_args(["app", "--gold", "a", "--gold", "b"]).gold == ["a", "b"]
    write_dataset(tmp_path / "ds", big_image=False)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "images.csv").write_text("image_id,prompt\nx,a prompt\n")
    (tmp_path / "broken" / "ratings.csv").write_text("image_id,rating\nx,five\n")
    assert main(["app", "--data", str(tmp_path / "ds"), "--gold", str(tmp_path / "broken")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ratings.csv, row 2: rating 'five' is not a number" in err[0]
    assert "broken" not in gc_sets.gold_sets()


def test_an_operator_set_without_scores_evaluates_a_visitors_upload(app_public, own_set, tmp_path):
    from gold_helpers import make_folder

    from ts2viz.ui.callbacks import gold_uploads as gu
    from ts2viz.ui.state import gold_session as gs

    folder = make_folder(tmp_path / "bare")
    (folder / "scores.csv").unlink()
    gc_sets.add_operator_sets([folder])
    assert gc_sets.result("bare", "default") is None and gc_sets.metrics_of("bare", "default") == []
    assert gc_board.board("bare", "default", "point-wise").empty
    assert "No metric scores in this set" in gc_board.board_note("bare", "default", "pair-wise")
    v = app_public.view()
    ids = gc_sets.rated("bare").image_ids
    gu.add_gold_scores(v, "bare", _visitor_file(app_public, "image_id,x\n" + "".join(f"{i},{k % 7}\n" for k, i in
                                                                                     enumerate(ids))))
    own = gs.uploads_of(v)
    assert list(gc_board.board("bare", "default", "model ordering", own)["metric"]) == ["x (yours)"]
    assert "humans order" in gc_board.board_note("bare", "default", "model ordering", own)
    assert gc_sets.metrics_of("bare", "default", own) == ["x"]
    assert "Spearman" in gc_board.scatter_figure("bare", "default", "x", own)["layout"]["title"]["text"]
    assert "x (yours)" in set(gc_crossgold.cross_gold_table(own)["metric family"])


def test_cluster_column_is_the_cli_s(tmp_path):
    import contextlib
    import io

    import pandas as pd

    from ts2viz.cli import main

    pw = gc_board.board("tifa160", "dsg", "point-wise")
    assert pw["metric"].iloc[0] == "human:tifa" and pw["cluster"].iloc[0] == "1"
    c = [int(v) for v in pw["cluster"]]
    assert c == sorted(c) and max(c) >= 3                # sorted by Spearman, clusters never go back
    assert "permutation" in gc_board.board_note("tifa160", "dsg", "point-wise")
    out = tmp_path / "h.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["humaneval", "--gold", "tifa160", "--clusters", "--no-ci", "--out", str(out)]) == 0
    cli = pd.read_csv(out).dropna(subset=["cluster"]).set_index("metric")["cluster"].astype(int)
    assert {m: int(v) for m, v in zip(pw["metric"], pw["cluster"])} == cli.to_dict()
    pair = gc_board.board("tifa160", "dsg", "pair-wise")
    pc = [int(v) for v in pair["cluster"]]
    assert pc == sorted(pc) and pc[0] == 1
    assert "cluster" not in gc_board.board("tifa160", "dsg", "model ordering").columns


def test_board_note_says_when_rank_intervals_are_first_order(own_set, monkeypatch):
    import ts2viz.metaeval.prompt_bootstrap as he

    gc_sets.result.cache_clear()
    monkeypatch.setattr(he, "RANK_EXACT_MAX_WORK", 0)         # as for a set too large to re-rank exactly
    try:
        assert "Spearman intervals: first-order" in gc_board.board_note("myset", "default", "point-wise")
        assert "first-order" not in gc_board.board_note("myset", "default", "pair-wise")
    finally:
        gc_sets.result.cache_clear()
    monkeypatch.undo()
    assert "first-order" not in gc_board.board_note("myset", "default", "point-wise")


def _empty_dsg_table():
    from ts2viz.qa.details import question_table

    return question_table("dependent", None)


@pytest.mark.parametrize("metric", ["dsg:PaLI-17B", "dsg-transitive:InstructBLIP", "dsg-nodep:mPLUG-large",
                                    "vq2a:PaLI-17B"])
def test_image_question_table_gives_the_metrics_score(metric):
    """Issue 19 in the Human ratings tab: a TIFA160 image's answers in the Questions tab's question table;
    its 'counts' column (DSG: after the metric's own gating) averages to the image's score that the
    leaderboard and scatter use (computed by the vectorised ts2viz.gold.answers, not by the table)."""
    g = gc_sets.rated("tifa160")
    qa = g.qa_answers
    # images with gating that matters: a wrong parent above a right child
    ids = list(dict.fromkeys(qa["image_id"]))[:40]
    for iid in ids:
        t = gc_image.answers_table(g, iid, metric)
        i = g.image_ids.index(iid)
        want = g.scores[metric].iloc[i]
        if not len(t):
            assert want == 0.0          # no released answer: DSG's code scores 0
            continue
        col = "counts" if "counts" in t.columns else "correct"
        got = float(np.mean([v == "✓" for v in t[col]]))
        assert got == pytest.approx(want), (iid, metric)


def test_cross_gold_headers_for_people():
    """Issue 21 item 4 in the Human ratings tab: the cross-gold table's headers are not ``ts2:ord_avg``."""
    shown = gc_crossgold.cross_gold_shown(gc_crossgold.cross_gold_table(None))
    cols = list(shown.columns)
    assert cols[:3] == ["metric family", "TS2 Ord avg", "TS2 Sep avg"] and "tifa160 Spearman" in cols
    assert not [c for c in cols if "_" in c or ":" in c], cols
