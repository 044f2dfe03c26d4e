"""Per-image details of every question-based metric as tables, records and pictures (ts2viz.qa.details).

Details come from real runs of the metrics on tiny random-weight models (and the canned local LLM
server); what the tables and records should hold is recomputed from those details by hand here.
"""
from __future__ import annotations

import numpy as np
import pytest

from llm_server import chat_server
from margins import assert_wide_detections
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metrics.registry import details_kind
from ts2viz.qa.details import (BEST_COLOR, BOX_COLORS, DETAIL_RECORD_COLUMNS, candidate_label, detail_records,
                               draw_fineeval_boxes, question_table)
from ts2viz.qa.records import records_from_details

PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear"]
TS2_PROMPT = "A Christmas tree with lights and teddy bear"


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(9)
    return [Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)) for _ in range(2)]


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("TS2VIZ_CACHE", str(tmp_path_factory.mktemp("llmcache")))
    with chat_server() as (url, _):
        yield url
    mp.undo()


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def _near(px, color: str, tol: int = 40) -> bool:
    return sum(abs(a - b) for a, b in zip(px, _rgb(color))) <= tol


# -- records and tables of real runs ----------------------------------------------------------------------

def test_gecko_records_and_table(llm, images):
    spec = f"gecko:{tiny('paligemma')}?generator={llm}&nli={tiny('t5nli')}"
    m = metrics.load(spec, device="cpu")
    # a threshold between the pairs' NLI scores, so that some are kept and some dropped
    m.questions.nli_threshold = float(np.median([p.nli for p in m.questions.get(PROMPTS[0])[1]
                                                 + m.questions.get(PROMPTS[1])[1]]))
    for p in PROMPTS:
        for q in m.questions.get(p)[1]:
            q.kept = q.nli >= m.questions.nli_threshold
    scores = m(images=images, prompts=PROMPTS)
    det = m.last_details
    recs = detail_records(spec, "gecko", details_kind("gecko"), ["a.jpg", "b.jpg"], det)
    assert list(recs.columns) == list(DETAIL_RECORD_COLUMNS)
    kept = [(fn, k, q) for fn, d in zip(["a.jpg", "b.jpg"], det) for k, q in enumerate(d["questions"]) if q["kept"]]
    assert 0 < len(kept) < sum(len(d["questions"]) for d in det)   # the NLI filter dropped some, not all
    assert [(r.file_name, r.question_id) for r in recs.itertuples()] == [(fn, k) for fn, k, _ in kept]
    for r, (_, _, q) in zip(recs.itertuples(), kept):
        probs = q["probabilities"]
        top = max(probs, key=probs.get)
        assert r.mapped == top and r.correct == (top == q["expected"]) and r.score == pytest.approx(q["normalized"])
        assert r.question == q["question"] and r.choices == "|".join(q["choices"])
    # the image score is the mean of its kept questions' values
    for fn, s in zip(["a.jpg", "b.jpg"], scores):
        mine = recs[recs["file_name"] == fn]["score"]
        assert (s == pytest.approx(mine.mean())) if len(mine) else np.isnan(s)
    t = question_table(details_kind("gecko"), det[0])
    qs = det[0]["questions"]
    assert t["question"].tolist() == [q["question"] for q in qs] and t["kept"].tolist() == [q["kept"] for q in qs]
    assert t["word"].tolist() == [q["word"] for q in qs]
    np.testing.assert_allclose(t["nli"], [q["nli"] for q in qs])
    for row, q in zip(t.itertuples(), qs):
        assert np.isnan(row.normalized) if not q["kept"] else row.normalized == pytest.approx(q["normalized"])


def test_fineeval_records_and_table(llm, images):
    spec = f"fineeval:{tiny('blip')}?generator={llm}&detector={tiny('rtdetr')}&confidence=0.3&max_boxes=4&coarse=same"
    m = metrics.load(spec, device="cpu")
    scores = m(images=images, prompts=PROMPTS)
    det = m.last_details
    recs = detail_records(spec, "fineeval", details_kind("fineeval"), ["a.jpg", "b.jpg"], det)
    for fn, d, s in zip(["a.jpg", "b.jpg"], det, scores):
        mine = recs[recs["file_name"] == fn]
        qs = d["questions"]
        assert mine["question"].tolist() == [q["question"] for q in qs]
        np.testing.assert_allclose(mine["score"], [(q["fine"] + q["coarse"]) / 2 for q in qs])
        assert mine["correct"].tolist() == [q["fine"] >= 0.5 for q in qs]
        # with the default plain-mean weighting the image score is the mean of the questions' values
        assert s == pytest.approx(mine["score"].mean())
        t = question_table(details_kind("fineeval"), d)
        assert t["best"].tolist() == [q["best"] for q in qs] and t["kind"].tolist() == [q["kind"] for q in qs]
        np.testing.assert_allclose(t["fine"], [max(q["probabilities"]) for q in qs])
        for row in t.itertuples():
            c = d["candidates"][row.best]
            if c["kind"] == "image":
                assert row.best_label == "whole image"
            else:
                assert row.best_label.startswith("box") and all(str(i) in row.best_label for i in c["detections"])
    assert_wide_detections(m.detector, images, decisions=("threshold",), context="some box found")
    assert any(d["detections"] for d in det)


@pytest.mark.parametrize("family", ["tifa", "dsg"])
def test_tifa_dsg_records_both_score_modes(images, family):
    acc = metrics.load(f"{family}:{tiny('blip')}?mapper=lexical&max_new_tokens=3", device="cpu")
    _, det = acc.score_with_details(images[:1], [TS2_PROMPT])
    recs = detail_records("m", family, details_kind(family), ["a.jpg"], det)
    base = records_from_details("m", family, ["a.jpg"], det)
    assert recs[list(base.columns)].equals(base)
    assert recs["score"].tolist() == [float(r["correct"]) for r in det[0]]
    t = question_table(details_kind(family), det[0])
    assert t["answer"].tolist() == [r["answer"] for r in sorted(det[0], key=lambda r: r["question_id"])]
    if family == "dsg":    # the metric's own counted flags
        assert t["counted"].tolist() == [r["counted"] for r in sorted(det[0], key=lambda r: r["question_id"])]

    norm = metrics.load(f"{family}:{tiny('blip')}?score=normalized", device="cpu")
    _, det = norm.score_with_details(images[:1], [TS2_PROMPT])
    recs = detail_records("m", family, details_kind(family), ["a.jpg"], det)
    for r, d in zip(recs.itertuples(), det[0]):
        probs = d["probabilities"]
        assert r.answer == "" and r.mapped == max(probs, key=probs.get) and r.score == pytest.approx(d["normalized"])
    t = question_table(details_kind(family), det[0])
    assert "probabilities" in t.columns and "answer" not in t.columns
    np.testing.assert_allclose(t["normalized"], [d["normalized"] for d in sorted(det[0], key=lambda d: d["question_id"])])


def test_bad_details_are_one_line_errors():
    with pytest.raises(InputError, match="no per-question details of kind 'clip'"):
        detail_records("m", "clipscore", "clip", ["a"], [[]])
    with pytest.raises(InputError, match="malformed details for a.jpg"):
        detail_records("m", "fineeval", "crops", ["a.jpg"], [{"questions": [{"question": "q?"}]}])
    with pytest.raises(InputError, match="2 file names but 1 details"):
        detail_records("m", "gecko", "coverage", ["a", "b"], [None])
    assert detail_records("m", "gecko", "coverage", ["a"], [None]).empty


# -- boxes ------------------------------------------------------------------------------------------------

DETAIL = {
    "image_size": [100, 50],
    "detections": [{"box": [10.0, 10.0, 30.0, 30.0], "label": "cat", "score": 0.9},
                   {"box": [60.0, 5.0, 90.0, 40.0], "label": "tree", "score": 0.7}],
    "candidates": [{"kind": "image", "box": [0, 0, 100, 50], "detections": [], "score": None},
                   {"kind": "entity", "box": [6, 6, 34, 34], "detections": [0], "score": 0.9},
                   {"kind": "entity", "box": [54, 0, 96, 47], "detections": [1], "score": 0.7},
                   {"kind": "relation", "box": [2, 0, 98, 48], "detections": [0, 1], "score": 0.63}],
    "questions": [{"question": "Is there a cat?", "kind": "entity", "candidates": [0, 1, 2],
                   "probabilities": [0.2, 0.8, 0.1], "best": 1, "fine": 0.8, "coarse": 0.2},
                  {"question": "Is there a tree?", "kind": "entity", "candidates": [0, 1, 2],
                   "probabilities": [0.6, 0.1, 0.3], "best": 0, "fine": 0.6, "coarse": 0.6}],
}


def test_candidate_labels():
    assert [candidate_label(DETAIL, k) for k in range(4)] == ["whole image", "box 0 (cat 0.90)", "box 1 (tree 0.70)",
                                                              "boxes 0+1 (cat+tree)"]
    assert candidate_label(DETAIL, 9) == "candidate 9"


def test_boxes_drawn_where_the_details_say():
    from PIL import Image

    im = Image.new("RGB", (100, 50), (128, 128, 128))
    plain = draw_fineeval_boxes(im, DETAIL, None)
    assert im.getpixel((10, 20)) == (128, 128, 128)            # the input is not drawn on
    assert plain.size == (360, 180)                             # small images are enlarged (longer side 360)
    s = 3.6
    assert _near(plain.getpixel((round(10 * s), round(25 * s))), BOX_COLORS[0])   # left edge of detection 0
    assert _near(plain.getpixel((round(90 * s) - 1, round(30 * s))), BOX_COLORS[1])
    arr = np.asarray(plain).reshape(-1, 3).astype(int)
    assert not (np.abs(arr - _rgb(BEST_COLOR)).sum(axis=1) <= 40).any()   # nothing highlighted without a question

    cat = draw_fineeval_boxes(im, DETAIL, 0)       # best crop: the grown box of detection 0, (6, 6)-(34, 34)
    assert _near(cat.getpixel((round(6 * s) + 2, round(20 * s))), BEST_COLOR)
    assert _near(cat.getpixel((round(34 * s) - 3, round(20 * s))), BEST_COLOR)
    assert not _near(cat.getpixel((round(60 * s) + 1, round(20 * s))), BEST_COLOR)   # the tree's box is not it
    tree = draw_fineeval_boxes(im, DETAIL, 1)      # best crop: the whole image, framed
    assert _near(tree.getpixel((180, 2)), BEST_COLOR) and _near(tree.getpixel((2, 90)), BEST_COLOR)
    big = draw_fineeval_boxes(Image.new("RGB", (2000, 1000), (128, 128, 128)), DETAIL, 0)
    assert big.size == (720, 360)                  # large ones are reduced; boxes scale with the image size
    assert _near(big.getpixel((round(6 * 7.2) + 3, round(20 * 7.2))), BEST_COLOR)


#: best crops on the image's border: the whole image; a box on the left and bottom borders; one on the
#: top and right borders (as T2I-FineEval clips grown boxes to the image)
BORDER = {
    "image_size": [100, 50],
    "detections": [{"box": [2.0, 14.0, 36.0, 48.0], "label": "cat", "score": 0.9},
                   {"box": [66.0, 3.0, 95.0, 26.0], "label": "tree", "score": 0.7}],
    "candidates": [{"kind": "image", "box": [0, 0, 100, 50], "detections": [], "score": None},
                   {"kind": "entity", "box": [0, 10, 40, 50], "detections": [0], "score": 0.9},
                   {"kind": "entity", "box": [60, 0, 100, 30], "detections": [1], "score": 0.7}],
    "questions": [{"question": q, "kind": "entity", "candidates": [0, 1, 2], "probabilities": p, "best": b,
                   "fine": max(p), "coarse": 0.1}
                  for q, p, b in [("Is it a picture?", [0.9, 0.1, 0.2], 0), ("Is there a cat?", [0.1, 0.9, 0.2], 1),
                                  ("Is there a tree?", [0.1, 0.2, 0.9], 2)]],
}


@pytest.mark.parametrize("question", [0, 1, 2])
def test_best_crop_on_the_border_is_outlined_to_the_edge(question):
    """Issue 30: a best crop that is the whole image, or a box that touches the image's border, is
    outlined on the image's outermost pixels, with its full line width, like a crop inside the image
    (the whole image used to be framed two pixels in, and a box ending on the right or bottom border
    lost a column of its line off the image)."""
    from PIL import Image

    im = Image.new("RGB", (100, 50), (128, 128, 128))
    out = draw_fineeval_boxes(im, BORDER, question)
    W, H = out.size
    assert (W, H) == (360, 180)
    thick = 4                                     # max(4, 2 * thin) at this size
    s = W / 100
    box = BORDER["candidates"][BORDER["questions"][question]["best"]]["box"]
    x0, y0 = round(box[0] * s), round(box[1] * s)
    x1, y1 = min(W - 1, round(box[2] * s)), min(H - 1, round(box[3] * s))
    ys = range(y0 + (y1 - y0) // 5, y1 - (y1 - y0) // 5)
    xs = range(x0 + (x1 - x0) // 5, x1 - (x1 - x0) // 5)
    for name, pixels in [("left", lambda k: [(x0 + k, y) for y in ys]), ("right", lambda k: [(x1 - k, y) for y in ys]),
                         ("top", lambda k: [(x, y0 + k) for x in xs])]:
        for k in (0, thick - 1):                  # the outermost and the innermost pixel of the line
            hits = np.mean([_near(out.getpixel(p), BEST_COLOR) for p in pixels(k)])
            assert hits > 0.9, (name, k, hits)
        assert not _near(out.getpixel(pixels(thick + 1)[len(ys) // 2 if name != "top" else len(xs) // 2]),
                         BEST_COLOR), name
    # the bottom edge carries the label (a bar of the same colour) where it crosses it: check beyond it
    tail = [(x, y1 - k) for x in range(max(x0, W // 2 + 40), x1 - 4) for k in (0, thick - 1)]
    if tail:
        assert np.mean([_near(out.getpixel(p), BEST_COLOR) for p in tail]) > 0.9
    if box[0] == 0:
        assert _near(out.getpixel((0, H // 3)), BEST_COLOR) and _near(out.getpixel((1, H // 3)), BEST_COLOR)
    if box[2] == 100:
        assert _near(out.getpixel((W - 1, y0 + 10)), BEST_COLOR)
