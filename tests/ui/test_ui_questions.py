"""The app's question views and DSG accumulation, without a browser (ts2viz.ui.callbacks.questions, the
shared-data variants of AppState, the page's variant control, the questions x nodes figure).

Bundled views are checked against the release's per-question records read through the library;
live views against the details the metric gives when called directly on the same image.
"""
from __future__ import annotations

import base64
import inspect
import io

import gradio as gr
import numpy as np
import pandas as pd
import pytest

from margins import assert_wide_detections, assert_wide_rounding, generation_margins
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metametrics.results import compute
from ts2viz.qa.records import bundled_qa_records, with_counted
from ts2viz.qa.views import rank_segs_by_questions
from ts2viz.scores import bundled_scores
from ts2viz.ui.callbacks import board as cb_board, live as cb_live
from ts2viz.ui.callbacks.explorer import picking as cb_explorer_picking
from ts2viz.ui import load_state
from ts2viz.ui.callbacks.questions import (finder as qa_finder, image as qa_image, nodes as qa_nodes,
                                           sources as qa_sources)
from ts2viz.ui.serving.access import public
from ts2viz.ui.state.app_state import AppView
from ts2viz.ui.state.workspace import Workspace

TIFA_PROMPT = "A Christmas tree with lights and teddy bear"
FINE_PROMPT = "a red cat on the tree"


@pytest.fixture(scope="module")
def ts2_app(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2q"), fetch_images=False)


@pytest.fixture(scope="module")
def ts2(ts2_app):
    return ts2_app.view()


@pytest.fixture(scope="module")
def gated(ts2_app, ts2):
    return AppView(ts2_app.variant("gated"), ts2.workspace)


# -- bundled: the release's answers -------------------------------------------------------------------------

def test_which_metrics_have_questions(ts2):
    assert qa_sources.qa_metrics(ts2, ["CLIPScore", "DSG-BLIP1", "TIFA-GPT4V", "TIFA-mPLUG", None, "DSG-BLIP1"]) == [
        "DSG-BLIP1", "TIFA-mPLUG"]
    src = qa_sources.qa_source(ts2, "DSG-BLIP1")
    assert src.bundled and src.family == "dsg" and src.accumulation == "mean"
    assert qa_sources.qa_source(ts2, "nope") is None
    with pytest.raises(InputError, match="has no per-question details here"):
        qa_image.image_questions(ts2, "CLIPScore", 0, ts2.dataset[0].nodes[0].images[0].file_name)


@pytest.mark.parametrize("variant", ["mean", "gated"])
def test_image_table_is_the_release_answers(ts2, gated, variant):
    view = ts2 if variant == "mean" else gated
    seg = view.dataset[0]
    fn = seg.node("1a").images[2].file_name
    v = qa_image.image_questions(view, "DSG-BLIP1", 0, fn)
    recs = bundled_qa_records("DSG-BLIP1")
    want = with_counted(recs[recs["file_name"] == fn], variant).sort_values("question_id")
    t = v["table"]
    assert t["#"].tolist() == want["question_id"].tolist() and t["question"].tolist() == want["question"].tolist()
    assert t["answer (raw)"].tolist() == want["answer"].astype(str).tolist()
    assert t["mapped to"].tolist() == want["mapped"].astype(str).tolist()
    assert t["correct"].tolist() == ["✓" if c else "✗" for c in want["correct"]]
    assert t["counts"].tolist() == ["✓" if c else "✗" for c in want["counted"]]
    assert t["parents"].tolist() == [p.replace("-", ", ") or "–" for p in want["parents"].astype(str)]
    assert f"({variant} accumulation)" in v["title"] and "000-03.jpg" in v["title"]
    assert v["boxes"] is False and qa_image.boxes_html(view, "DSG-BLIP1", 0, fn) == ""
    with pytest.raises(InputError, match="SEG 0 has no image"):
        qa_image.image_questions(view, "DSG-BLIP1", 0, view.dataset[1].nodes[0].images[0].file_name)
    with pytest.raises(InputError, match="SEG 0 has no image"):
        qa_image.image_questions(view, "DSG-BLIP1", 0, "../../etc/passwd")


def test_gated_and_mean_tables_differ_where_a_parent_fails(ts2, gated):
    recs = bundled_qa_records("DSG-BLIP1")
    # an image with a question answered right under a parent answered wrong
    wrong = set(zip(recs["file_name"], recs["question_id"])) - set(
        zip(recs["file_name"][recs["correct"]], recs["question_id"][recs["correct"]]))
    r = next(r for r in recs[recs["correct"]].itertuples()
             if any((r.file_name, int(p)) in wrong for p in str(r.parents).split("-") if p))
    mean_t, gated_t = (qa_image.image_questions(v, "DSG-BLIP1", int(r.seg_id), r.file_name)["table"] for v in (ts2, gated))
    row = mean_t["#"].tolist().index(int(r.question_id))
    assert mean_t["counts"][row] == "✓" and gated_t["counts"][row] == "✗"
    assert (mean_t["correct"] == gated_t["correct"]).all() and (mean_t["counts"] == mean_t["correct"]).all()


def test_questions_x_nodes_of_a_seg(ts2):
    seg = ts2.dataset[0]
    v = qa_nodes.node_questions(ts2, "DSG-BLIP1", 0, "correct")
    recs = bundled_qa_records("DSG-BLIP1")
    t = v["table"]
    labels = [n.label for n in seg.nodes]
    # each cell by hand: the share of the node's images on which the question was answered right
    for row in t.itertuples(index=False):
        for k, lbl in enumerate(labels):
            files = [im.file_name for im in seg.node(lbl).images]
            mine = recs[(recs["question_id"] == row[0]) & recs["file_name"].isin(files)]
            assert row[2 + k] == pytest.approx(mine["correct"].mean())
    # "catches": the edges along which a question's accuracy drops by at least half, from the cells
    for _, row in t.iterrows():
        want = [f"{a}→{b}" for a, b in seg.adjacent_pairs() if row[a] - row[b] >= 0.5]
        assert [c.split(" ")[0] for c in row["catches"].split(", ")] == want if want else row["catches"] == "–"
    assert (t["catches"] != "–").any()
    fig = v["figure"]
    heat = fig.data[0]
    np.testing.assert_allclose(np.array(heat.z, dtype=float), t[labels].to_numpy(dtype=float))
    assert "accuracy of each question per node · DSG-BLIP1" in fig.layout.title.text
    assert qa_nodes.value_choices(ts2, "DSG-BLIP1") == [(qa_nodes.VALUE_CHOICES["correct"], "correct"),
                                                  (qa_nodes.VALUE_CHOICES["counted"], "counted")]
    with pytest.raises(InputError, match="a cell may show correct for TIFA-BLIP1"):
        qa_nodes.node_questions(ts2, "TIFA-BLIP1", 0, "counted")
    counted = qa_nodes.node_questions(ts2, "DSG-BLIP1", 0, "counted")["table"]
    assert (counted[labels].to_numpy() <= t[labels].to_numpy() + 1e-12).all()


def test_question_finder(ts2):
    got = qa_finder.question_finder(ts2, "TIFA-mPLUG")
    ranked = rank_segs_by_questions(bundled_qa_records("TIFA-mPLUG"), ts2.dataset)
    assert got["SEG"].tolist() == ranked["seg_id"].head(len(got)).tolist() and len(got) == qa_finder.FINDER_ROWS
    assert (got["missed"] <= got["of"]).all() and got["missed"].iloc[0] >= 1
    assert got.attrs["x100"] == ["drop"]
    nat = qa_finder.question_finder(ts2, "TIFA-mPLUG", "Nat")
    assert set(nat["partition"]) == {"Nat"}
    assert cb_explorer_picking.seg_from_row(got, 0) == got["SEG"].iloc[0]       # a row click opens its SEG
    # the finder ranks by the first of the explorer's metrics that has questions
    assert qa_finder.finder_metric(ts2, "CLIPScore", "TIFA-mPLUG") == "TIFA-mPLUG"
    assert qa_finder.finder_metric(ts2, "DSG-BLIP1", "TIFA-mPLUG") == "DSG-BLIP1"
    with pytest.raises(InputError, match="ranking by questions needs a question metric"):
        qa_finder.finder_metric(ts2, "CLIPScore", "TIFA-GPT4V")


# -- the DSG accumulation: a variant of the shared data -----------------------------------------------------

def test_variant_leaderboard_is_the_gated_scores(ts2_app, ts2, gated):
    assert ts2_app.variant_names == ["mean", "gated"] and ts2_app.variant("gated") is gated.app
    assert ts2_app.variant("mean") is ts2_app and ts2_app.variant(None) is ts2_app
    with pytest.raises(InputError, match="unknown data variant"):
        ts2_app.variant("strict")
    ref = compute(ts2.dataset, bundled_scores(dsg="gated"), policy="paper").leaderboard().set_index("metric")
    ref_mean = compute(ts2.dataset, bundled_scores(dsg="mean"), policy="paper").leaderboard().set_index("metric")
    b = cb_board.leaderboard(gated, "paper").set_index("metric")
    bm = cb_board.leaderboard(ts2, "paper").set_index("metric")
    for m in b.index:
        assert b.loc[m, "ord_avg"] == pytest.approx(ref.loc[m, "ord_avg"])
        assert bm.loc[m, "ord_avg"] == pytest.approx(ref_mean.loc[m, "ord_avg"])
    assert b.loc["DSG-BLIP1", "ord_avg"] != bm.loc["DSG-BLIP1", "ord_avg"]
    # the same scores in both variants: equal but for the grouping of additions in the vectorised
    # engine (another variant's other columns), far below the 1e-3 a different accumulation moves them
    assert b.loc["TIFA-BLIP1", "ord_avg"] == pytest.approx(bm.loc["TIFA-BLIP1", "ord_avg"], rel=1e-12)
    assert b.loc["DSG-GPT4V", "ord_avg"] == pytest.approx(bm.loc["DSG-GPT4V", "ord_avg"], rel=1e-12)  # no records: released scores
    # the explorer follows it too
    g = gated.node_scores(0, "DSG-BLIP1")
    m = ts2.node_scores(0, "DSG-BLIP1")
    assert any(not np.allclose(g[k], m[k], rtol=1e-6) for k in g)    # a real difference, not rounding


def test_variants_share_nothing_they_should_not(ts2_app, ts2, gated, tmp_path):
    # the view memo: one key, one value per variant
    assert ts2.memo(("probe",), [], lambda: "mean") == "mean"
    assert gated.memo(("probe",), [], lambda: "gated") == "gated"
    assert ts2.memo(("probe",), [], lambda: "other") == "mean"
    # a session's own scores joined to either variant
    from ts2viz.scores import Scores

    ws = Workspace(ts2_app, exports_root=tmp_path)
    names = ts2.dataset.file_names
    ws.add_table(Scores(list(names), ["Mine"], np.linspace(0, 1, len(names))[:, None], set()), kind="uploaded",
                 name="mine.csv")
    a, b = AppView(ts2_app, ws), AppView(ts2_app.variant("gated"), ws)
    ba = cb_board.leaderboard(a, "paper").set_index("metric")
    bb = cb_board.leaderboard(b, "paper").set_index("metric")
    # the same scores under both variants (to 1e-12: computed beside other columns in each)
    assert ba.loc["Mine", "ord_avg"] == pytest.approx(bb.loc["Mine", "ord_avg"], rel=1e-12)
    assert ba.loc["DSG-BLIP1", "ord_avg"] != bb.loc["DSG-BLIP1", "ord_avg"]
    assert a.memo(("probe2",), ["Mine"], lambda: 1) == 1 and b.memo(("probe2",), ["Mine"], lambda: 2) == 2


def test_page_events_read_the_variant_control(ts2_app):
    from gradio.helpers import special_args

    from ts2viz.ui.glue.errors import safe

    from ts2viz.ui.glue.events import VARIANT_PARAM, Page, with_variant

    page = Page(ts2_app, mode=None, fmt=None)

    def handler(sid, request, evt=None, follow=False):
        return page.view(request).app.variant_name, sid, follow

    wrapped = with_variant(handler)
    names = list(inspect.signature(safe(wrapped)).parameters)
    assert names == [VARIANT_PARAM, "sid", "request", "evt", "follow"]
    assert wrapped("gated", 3, None) == ("gated", 3, False)
    assert wrapped(None, 3, None, None) == ("mean", 3, False)
    assert page.view(None).app is ts2_app                     # outside an event: the default
    with pytest.raises(InputError, match="unknown data variant"):
        wrapped("../x", 3, None)

    def typed(sid, request: gr.Request, follow: bool = False):
        return sid

    # Gradio puts the request where the handler has it and fills the rest with defaults; the variant
    # (the first input) stays first
    args, *_ = special_args(safe(with_variant(typed)), inputs=["gated", 5], request=None)
    assert args == ["gated", 5, None, False]


# -- the questions x nodes figure ------------------------------------------------------------------------------

def test_question_node_heatmap():
    from ts2viz.figures import question_node_heatmap

    acc = pd.DataFrame({"question": ["Is there a cat?", "Is it red?"], "0": [1.0, 1.0], "1a": [0.0, np.nan]},
                       index=pd.Index([0, 3], name="question_id"))
    acc.attrs.update(levels={"0": 0, "1a": 1}, n_images={"0": 2, "1a": 3})
    fig = question_node_heatmap(acc, title="SEG 9: accuracy")
    heat = fig.data[0]
    assert list(heat.y) == ["0 · Is there a cat?", "3 · Is it red?"] and list(heat.x) == ["0", "1a"]
    assert [list(r) for r in heat.text] == [["100%", "0%"], ["100%", "n/a"]]
    assert heat.z[1][1] is None and heat.zmin == 0 and heat.zmax == 1
    assert "1 error" in fig.layout.xaxis.ticktext[1] and "3 images" in heat.customdata[0][1]
    soft = question_node_heatmap(acc, percent=False)
    assert soft.data[0].text[0][0] == "1.00"
    assert "No questions" in question_node_heatmap(acc.iloc[:0]).layout.annotations[0].text


# -- live-scored metrics ----------------------------------------------------------------------------------------

def _write_dataset(folder):
    from PIL import Image

    rng = np.random.default_rng(4)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for s, prompt in enumerate([TIFA_PROMPT, FINE_PROMPT]):
        for k, label in enumerate(["0", "1a", "1a", "2a"]):
            fn = f"images/{s:03d}-{k:02d}.jpg"
            Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)).save(folder / fn, quality=90)
            lines.append(f'{s},"{prompt}",{fn},gen{k},{label}')
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """An app on a small image dataset, the canned LLM server, and the specs of a live TIFA and T2I-FineEval."""
    from llm_server import chat_server

    d = tmp_path_factory.mktemp("qlive")
    mp = pytest.MonkeyPatch()
    mp.setenv("TS2VIZ_CACHE", str(d / "cache"))
    with chat_server() as (url, _):
        yield {"dir": d, "ds": _write_dataset(d / "ds"),
               "tifa": f"tifa:{tiny('blip')}?mapper=lexical&max_new_tokens=3",
               "fine": f"fineeval:{tiny('blip')}?generator={url}&detector={tiny('rtdetr')}&confidence=0.3&max_boxes=4&coarse=same",
               "gecko": f"gecko:{tiny('paligemma')}?generator={url}&nli=none"}
    mp.undo()


def _image(live, fn):
    from PIL import Image

    return Image.open(live["ds"] / fn).convert("RGB")


def test_live_tifa_and_fineeval(live, tmp_path):
    app = load_state(str(live["ds"]), cache_root=tmp_path / "cache").view()
    ds = app.dataset
    fn0 = ds[0].node("1a").images[1].file_name
    # the answers of the SEG's batch and of one image, compared below: every step by a wide margin
    tifa_margins = generation_margins(context="TIFA answers")
    with tifa_margins:
        cb_live.live_score(app, live["tifa"], "seg", 0)
    assert qa_sources.qa_metrics(app, [live["tifa"]]) == [live["tifa"]]
    src = qa_sources.qa_source(app, live["tifa"])
    assert not src.bundled and src.family == "tifa" and src.config_hash == metrics.load(live["tifa"], device="cpu").config_hash
    with generation_margins(context="TIFA answers, one image"):
        _, det = metrics.load(live["tifa"], device="cpu").score_with_details([_image(live, fn0)], [TIFA_PROMPT])
    t = qa_image.image_questions(app, live["tifa"], 0, fn0)["table"]
    want = sorted(det[0], key=lambda r: r["question_id"])
    assert t["question"].tolist() == [r["question"] for r in want]
    assert t["answer (raw)"].tolist() == [r["answer"] for r in want]
    assert t["correct"].tolist() == ["✓" if r["correct"] else "✗" for r in want]
    nodes = qa_nodes.node_questions(app, live["tifa"], 0)
    assert len(nodes["table"]) == len(want) and "4 images with details" in nodes["note"]
    # SEG 1 was not scored: an image there has no details, and says so
    fn1 = ds[1].node("0").images[0].file_name
    assert "not scored in this session yet" in qa_image.image_questions(app, live["tifa"], 1, fn1)["title"]
    assert "score it in the Live scoring tab" in qa_nodes.node_questions(app, live["tifa"], 1)["note"]
    assert qa_finder.question_finder(app, live["tifa"])["SEG"].tolist() in ([0], [])

    cb_live.live_score(app, live["fine"], "seg", 1)
    v = qa_image.image_questions(app, live["fine"], 1, fn1)
    m = metrics.load(live["fine"], device="cpu")
    m(images=[_image(live, fn1)], prompts=[FINE_PROMPT])
    d = m.last_details[0]
    assert v["boxes"] and [q for _, q in v["questions"]] == list(range(len(d["questions"])))
    # values of the SEG's batch written to 3 decimals, against one image's: not near where they round
    assert_wide_rounding([q["fine"] for q in d["questions"]], 3, context="fine P(yes)")
    assert v["table"]["fine P(yes)"].tolist() == [f"{q['fine']:.3f}" for q in d["questions"]]
    # the number of detections: their confidences against the threshold, their sizes, NMS (wide margins)
    assert_wide_detections(m.detector, [_image(live, fn1)], decisions=("threshold", "size", "nms"), context=fn1)
    assert f"{len(d['detections'])} detections" in v["title"]
    # the boxes: a JPEG data URI (nothing on disk) with the best crop of a question in the highlight colour
    html = qa_image.boxes_html(app, live["fine"], 1, fn1, 2)
    assert "data-question='2'" in html and "best crop" in html
    from PIL import Image

    from ts2viz.qa.details import BEST_COLOR

    drawn = Image.open(io.BytesIO(base64.b64decode(html.split("base64,", 1)[1].split("'", 1)[0]))).convert("RGB")
    # where the app's own details put the best crop: which crop is best is a near-tie on the tiny BLIP
    # (its P(yes) differs by 1e-9 between crops), so it is read back, not recomputed (issue 30)
    from ts2viz.engine.details import cached_details

    mine = cached_details(qa_sources.qa_source(app, live["fine"]).config_hash, ds, [fn1], app.cache_root)[fn1]
    best = mine["candidates"][mine["questions"][2]["best"]]
    sx = drawn.size[0] / mine["image_size"][0]
    sy = drawn.size[1] / mine["image_size"][1]
    x = round(best["box"][0] * sx) + (2 if best["kind"] != "image" else 1)
    y = round((best["box"][1] + best["box"][3]) / 2 * sy)
    assert sum(abs(a - int(BEST_COLOR[i:i + 2], 16)) for a, i in zip(drawn.getpixel((x, y)), (1, 3, 5))) < 90
    assert "choose a question" in qa_image.boxes_html(app, live["fine"], 1, fn1)
    with pytest.raises(InputError, match="not a question number"):
        qa_image.boxes_html(app, live["fine"], 1, fn1, "x")
    # questions x nodes: by default the mean of each question's (fine + coarse) / 2 per node
    assert qa_nodes.default_value(app, live["fine"]) == "score"
    nodes = qa_nodes.node_questions(app, live["fine"], 1, "score")["table"]
    seg = ds[1]
    for k, lbl in enumerate([n.label for n in seg.nodes]):
        vals = []
        for im in seg.node(lbl).images:
            m(images=[_image(live, im.file_name)], prompts=[FINE_PROMPT])
            q0 = m.last_details[0]["questions"][0]
            vals.append((q0["fine"] + q0["coarse"]) / 2)
        assert nodes.iloc[0, 2 + k] == pytest.approx(np.mean(vals), abs=1e-6)


def test_live_metric_without_details_and_public_mode(live, tmp_path):
    # public mode: a T2I-FineEval the operator listed can be scored, one that is not listed cannot
    app = load_state(str(live["ds"]), cache_root=tmp_path / "cache", access=public([live["fine"]])).view()
    with pytest.raises(InputError, match="not offered"):
        cb_live.live_score(app, live["gecko"], "seg", 1)
    # a visitor names an offered metric by its display name, never by the spec (its folder path)
    fine = app.app.access.display_name(live["fine"])
    assert fine != live["fine"] and str(tiny("blip")) not in fine
    with pytest.raises(InputError, match="not offered"):
        cb_live.live_score(app, live["fine"], "seg", 1)
    cb_live.live_score(app, fine, "seg", 1)
    fn = app.dataset[1].node("1a").images[0].file_name
    assert qa_image.image_questions(app, fine, 1, fn)["boxes"]
    # another session sees neither the metric nor its details
    other = AppView(app.app, Workspace(app.app, exports_root=tmp_path))
    assert qa_sources.qa_source(other, fine) is None
    with pytest.raises(InputError):
        qa_image.image_questions(other, live["fine"], 1, fn)
    # a live metric without per-question details (CLIPScore)
    op = load_state(str(live["ds"]), cache_root=tmp_path / "cache2").view()
    clip = f"clipscore:{tiny('clip')}"
    cb_live.live_score(op, clip, "seg", 0)
    assert qa_sources.qa_metrics(op, [clip]) == [] and qa_nodes.value_choices(op, clip) == [(qa_nodes.VALUE_CHOICES["correct"], "correct")]


def test_live_gecko(live, tmp_path):
    app = load_state(str(live["ds"]), cache_root=tmp_path / "cache").view()
    cb_live.live_score(app, live["gecko"], "seg", 1)
    src = qa_sources.qa_source(app, live["gecko"])
    assert src.family == "gecko" and qa_nodes.default_value(app, live["gecko"]) == "score"
    fn = app.dataset[1].node("1a").images[0].file_name
    v = qa_image.image_questions(app, live["gecko"], 1, fn)
    m = metrics.load(live["gecko"], device="cpu")
    s = m(images=[_image(live, fn)], prompts=[FINE_PROMPT])
    d = m.last_details[0]
    t = v["table"]
    assert t["question"].tolist() == [q["question"] for q in d["questions"]]
    assert t["word"].tolist() == [q["word"] for q in d["questions"]]
    assert t["kept"].tolist() == ["kept"] * len(d["questions"])          # nli=none keeps every pair
    # values of the SEG's batch written to 3 decimals, against one image's: not near where they round
    assert_wide_rounding([q["normalized"] for q in d["questions"]] + [s[0]], 3, context="Gecko values")
    assert t["normalized"].tolist() == [f"{q['normalized']:.3f}" for q in d["questions"]]
    cov = " · ".join(f"{w['phrase']} ({w['type']})" for w in d["coverage"])
    assert f"Coverage: {cov}" in v["title"] and f"{s[0]:.3f}" in v["title"] and "(no NLI filter)" in v["title"]
    nodes = qa_nodes.node_questions(app, live["gecko"], 1, "score")["table"]
    assert nodes["question"].tolist() == [q["question"] for q in d["questions"]]
