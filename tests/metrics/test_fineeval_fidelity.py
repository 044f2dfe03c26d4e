"""T2I-FineEval against the authors' code (hadi-hosseini/T2I-FineEval), each rule written here from
reading that code, not by calling ts2viz's:

* coarse questions (``src/delete_adjectives.py``) on spaCy ``Doc`` objects built by hand (words, tags,
  POS, heads, dependencies), so no trained spaCy pipeline is needed;
* box growth (``src/similarity_score_calculation.py``) and relation boxes (``yolov9/making_boxes.py``:
  the whole-image pseudo-box of confidence 0.51);
* the yes score (``src/vqa.py``: LAVIS ``blip_vqa`` at 480 px ranking ["yes", "no"]) on a tiny
  random-weight BLIP-VQA through transformers' modules directly;
* the whole metric (``evaluation.py``), per image to 1e-6, on tiny BLIP-VQA + RT-DETR with a canned LLM
  and a small rule-based spaCy pipeline saved to disk.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from llm_server import CANNED, chat_server
from margins import assert_wide_detections, assert_wide_gap
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metrics.families.fineeval.regions import code_relation_pairs, grow_box
from ts2viz.metrics.families.fineeval.scoring import lavis_question, lavis_yes_score
from ts2viz.metrics.families.fineeval.questions import (COLORS, CoarseQuestions, coarse_from_doc, load_spacy,
    parse_decomposition)

spacy = pytest.importorskip("spacy")

PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights"]
CODE_COLORS = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white"]


def doc(words, tags, pos, heads, deps):
    """A parsed question as spaCy would give it (the tests need no trained pipeline)."""
    from spacy.tokens import Doc

    spaces = [w not in ("?", "'s") and (i + 1 < len(words) and words[i + 1] not in ("?", "'s"))
              for i, w in enumerate(words)]
    return Doc(spacy.blank("en").vocab, words=words, spaces=spaces, tags=tags, pos=pos, heads=heads, deps=deps)


# The original's own example questions (evaluation.py) and questions in the style of its decompositions,
# tagged and parsed as en_core_web_sm does (Penn tags, universal POS, absolute head indices).
QUESTIONS = [
    (doc(["is", "there", "a", "blue", "cake", "in", "the", "image", "?"],
         ["VBZ", "EX", "DT", "JJ", "NN", "IN", "DT", "NN", "."],
         ["AUX", "PRON", "DET", "ADJ", "NOUN", "ADP", "DET", "NOUN", "PUNCT"],
         [0, 0, 4, 4, 0, 4, 7, 5, 0], ["ROOT", "expl", "det", "amod", "attr", "prep", "det", "pobj", "punct"]),
     "is there a blue cake in the image?", "is there a cake in the image?"),
    (doc(["is", "there", "a", "red", "suitcase", "in", "the", "image", "?"],
         ["VBZ", "EX", "DT", "JJ", "NN", "IN", "DT", "NN", "."],
         ["AUX", "PRON", "DET", "ADJ", "NOUN", "ADP", "DET", "NOUN", "PUNCT"],
         [0, 0, 4, 4, 0, 4, 7, 5, 0], ["ROOT", "expl", "det", "amod", "attr", "prep", "det", "pobj", "punct"]),
     "is there a red suitcase in the image?", "is there a suitcase in the image?"),
    (doc(["Is", "there", "a", "large", "wooden", "table", "?"],
         ["VBZ", "EX", "DT", "JJ", "JJ", "NN", "."],
         ["AUX", "PRON", "DET", "ADJ", "ADJ", "NOUN", "PUNCT"],
         [0, 0, 5, 5, 5, 0, 0], ["ROOT", "expl", "det", "amod", "amod", "attr", "punct"]),
     "Is there a table?", "Is there a table?"),
    # determiner - verb - noun: "a sleeping cat" -> "a cat"; the colour of the sofa stays
    (doc(["Is", "there", "a", "sleeping", "cat", "on", "the", "red", "sofa", "?"],
         ["VBZ", "EX", "DT", "VBG", "NN", "IN", "DT", "JJ", "NN", "."],
         ["AUX", "PRON", "DET", "VERB", "NOUN", "ADP", "DET", "ADJ", "NOUN", "PUNCT"],
         [0, 0, 4, 4, 0, 4, 8, 8, 5, 0], ["ROOT", "expl", "det", "amod", "attr", "prep", "det", "amod", "pobj", "punct"]),
     "Is there a cat on the red sofa?", "Is there a cat on the sofa?"),
    # the colour list is compared case-sensitively: "Red" is dropped like any adjective
    (doc(["Are", "the", "Red", "apples", "small", "?"],
         ["VBP", "DT", "JJ", "NNS", "JJ", "."],
         ["AUX", "DET", "ADJ", "NOUN", "ADJ", "PUNCT"],
         [0, 3, 3, 0, 0, 0], ["ROOT", "det", "amod", "nsubj", "acomp", "punct"]),
     "Are the apples?", "Are the apples?"),
    # tokens are re-joined with spaces: "dog's" comes back as "dog 's"
    (doc(["Is", "the", "dog", "'s", "ball", "green", "?"],
         ["VBZ", "DT", "NN", "POS", "NN", "JJ", "."],
         ["AUX", "DET", "NOUN", "PART", "NOUN", "ADJ", "PUNCT"],
         [0, 2, 4, 2, 0, 0, 0], ["ROOT", "det", "poss", "case", "nsubj", "acomp", "punct"]),
     "Is the dog 's ball green?", "Is the dog 's ball?"),
]


@pytest.mark.parametrize("parsed, code, all_adjectives", QUESTIONS)
def test_coarse_questions_follow_the_codes_rule(parsed, code, all_adjectives):
    assert tuple(CODE_COLORS) == COLORS
    assert coarse_from_doc(parsed) == code                 # find_adjectives_and_delete(question, colors, nlp)
    assert coarse_from_doc(parsed, keep=()) == all_adjectives  # find_adjectives_and_delete_all(question, nlp)


def test_missing_spacy_pipeline_names_the_install_command(monkeypatch):
    with pytest.raises(InputError, match=r"python -m spacy download en_core_web_sm"):
        load_spacy("ts2viz_no_such_spacy_pipeline")
    same = CoarseQuestions("same")
    assert same("Is there a large cat?") == "Is there a large cat?" and same.config == {"coarse": "same"}
    with pytest.raises(InputError, match="coarse must be one of"):
        CoarseQuestions("paper")


def test_grow_box_as_the_code():
    # int() truncation of 20 % of the width/height, rounded pixel boxes, clipped
    assert grow_box((10, 10, 23, 20), (100, 50)) == (8, 8, 25, 22)       # 13 * .2 = 2.6 -> 2
    assert grow_box((10.4, 9.6, 22.6, 20.2), (100, 50)) == (8, 8, 25, 22)  # rounded to (10, 10, 23, 20) first
    assert grow_box((0, 0, 10, 10), (11, 11)) == (0, 0, 11, 11)
    assert grow_box((3, 3, 7, 7), (100, 100)) == (3, 3, 7, 7)             # 4 * .2 = 0.8 -> 0


def _code_pairs(confs, k=10):
    """get_merged_bounding_box over boxes named by index (None: the whole-image 'random_box', 0.51)."""
    boxes = [(i, c) for i, c in enumerate(confs)] or [(None, 0.51)]  # handle_no_detection
    lst = list(boxes)
    if len(lst) < 2:
        lst += sorted(boxes, key=lambda x: x[1], reverse=True)[:2]
    lst.append((None, 0.51))
    out = []
    for a in range(len(lst)):
        for b in range(a + 1, len(lst)):
            out.append((lst[a][0], lst[b][0], lst[a][1] * lst[b][1]))
    return sorted(out, key=lambda x: x[-1], reverse=True)[:k]


@pytest.mark.parametrize("confs", [[], [0.9], [0.9, 0.3], [0.3, 0.3, 0.28], [0.95, 0.9, 0.8, 0.7, 0.6, 0.5]])
def test_relation_pairs_include_the_whole_image_pseudo_box(confs):
    got = code_relation_pairs(confs)
    want = _code_pairs(confs)
    assert [(i, j) for i, j, _ in got] == [(i, j) for i, j, _ in want]
    np.testing.assert_allclose([p for *_, p in got], [p for *_, p in want])
    if confs == [0.3, 0.3, 0.28]:   # low-confidence detections: whole-image pairs outrank detection pairs
        assert got[0][1] is None and got[0][2] == pytest.approx(0.3 * 0.51)


def test_lavis_question_and_yes_score():
    assert lavis_question('Is the "cat" on the tree? (yes; no!)  ') == "is the cat on the tree? yes no"
    assert lavis_question(" ".join(["w"] * 60)) == " ".join(["w"] * 50)
    assert lavis_yes_score([0.6, 0.3], [-1.0, -2.0]) == 0.6   # orders agree: P1(yes)
    assert lavis_yes_score([0.3, 0.6], [-2.0, -1.0]) == 0.3   # "no" wins both: P1(yes) again
    assert lavis_yes_score([0.6, 0.3], [-2.0, -1.0]) == 0.3   # disagree: the second first-token prob
    assert lavis_yes_score([0.3, 0.6], [-1.0, -2.0]) == 0.6


# -- LAVIS blip_vqa, written from LAVIS' BlipVQA.predict_answers(inference_method="rank") ------------------

def assert_wide_ranking(ranked, context):
    """LAVIS' yes score takes two decisions: which answer has the larger first-token probability (its
    top-k order) and which has the better ranking score; each by a wide margin."""
    for k, (first, seq) in enumerate(ranked):
        assert_wide_gap(first[0], first[1], context=f"{context} {k}: first-token probabilities")
        assert_wide_gap(seq[0], seq[1], context=f"{context} {k}: ranking scores")


def lavis_pixels(image, size, mean, std):
    """BlipImageEvalProcessor(480): Resize((s, s), BICUBIC), ToTensor, Normalize."""
    import torch
    from PIL import Image

    x = torch.from_numpy(np.array(image.convert("RGB").resize((size, size), Image.BICUBIC))).permute(2, 0, 1).float() / 255
    return ((x - torch.tensor(mean).view(3, 1, 1)) / torch.tensor(std).view(3, 1, 1)).unsqueeze(0)


def code_yes_score(model, proc, image, question, size=480):
    """src/vqa.py VQAModel.get_score: LAVIS rank of ['yes', 'no'] with num_ans_candidates=2, pos score."""
    import torch

    q = re.sub(r"([.!\"()*#:;~])", "", question.lower()).rstrip(" ")
    q = " ".join(q.split(" ")[:50])
    tok = proc.tokenizer
    px = lavis_pixels(image, size, proc.image_processor.image_mean, proc.image_processor.image_std)
    with torch.no_grad():
        img = model.vision_model(pixel_values=px, interpolate_pos_encoding=True)[0]
        qi = tok([q], return_tensors="pt")
        qs = model.text_encoder(input_ids=qi.input_ids, attention_mask=qi.attention_mask, encoder_hidden_states=img)[0]
        # LAVIS: tokenizer(answer_list, padding="longest") gives [CLS] answer [SEP]; input_ids[:, 0] = bos ([DEC])
        sep, pad = model.config.text_config.sep_token_id, tok.pad_token_id
        rows = [[model.decoder_start_token_id] + tok.encode(a, add_special_tokens=False) + [sep] for a in ["yes", "no"]]
        width = max(map(len, rows))
        ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
        cand = type("Cand", (), {"attention_mask": torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])})
        start = ids[0, 0].repeat(1, 1)
        logits = model.text_decoder(input_ids=start, encoder_hidden_states=qs).logits[:, 0, :]
        prob_first = torch.softmax(logits.double(), dim=1).index_select(1, ids[:, 1])
        topk_probs, topk_ids = prob_first.topk(2, dim=1)
        inp = ids.index_select(0, topk_ids[0])
        att = cand.attention_mask.index_select(0, topk_ids[0])
        targets = inp.masked_fill(inp == tok.pad_token_id, -100)
        out = model.text_decoder(input_ids=inp, attention_mask=att, encoder_hidden_states=qs.repeat(2, 1, 1)).logits
        loss = torch.nn.CrossEntropyLoss(reduction="none", label_smoothing=0.1)(
            out[:, :-1, :].double().reshape(-1, out.shape[-1]), targets[:, 1:].reshape(-1)).view(2, -1).sum(1)
        max_topk = int((-loss).argmax())
        max_id = int(topk_ids[0, max_topk])
        return float(topk_probs[0, 0] if max_id == 0 else topk_probs[0, 1])


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(5)
    return [Image.fromarray(rng.integers(0, 255, (40 + 4 * k, 48, 3), dtype=np.uint8)) for k in range(3)]


@pytest.fixture(scope="module")
def blip():
    from transformers import AutoProcessor, BlipForQuestionAnswering

    folder = str(tiny("blip"))
    return BlipForQuestionAnswering.from_pretrained(folder).eval(), AutoProcessor.from_pretrained(folder)


def test_blip_rank_answers_is_lavis_ranking(images, blip):
    from ts2viz.metrics.common.spec import Spec
    from ts2viz.metrics.backbones.vqa.loader import load_vqa_model

    vqa = load_vqa_model(Spec(f"x:{tiny('blip')}", "x", str(tiny("blip"))), "cpu")
    vqa.image_size = 480
    qs = ["Is there a red cat?", "Is the cat on the tree?", "Are there lights?"]
    ranked = vqa.rank_answers(images, [lavis_question(q) for q in qs], ["yes", "no"])
    assert_wide_ranking(ranked, "pair")
    got = [lavis_yes_score(r[0], r[1]) for r in ranked]
    want = [code_yes_score(*blip, im, q) for im, q in zip(images, qs)]
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert vqa.lavis_pixels(images[:1]).shape == (1, 3, 480, 480)


# -- the whole metric, per image, against evaluation.py's formula ------------------------------------------

@pytest.fixture(scope="module")
def spacy_folder(tmp_path_factory):
    """A small rule-based English pipeline saved to disk (the trained en_core_web_sm is not needed to
    test the metric's wiring; the rule itself is tested above on parsed questions)."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    nlp.initialize()
    ruler.add(patterns=[[{"LOWER": {"IN": ["red", "blue", "green", "teddy", "two"]}}]], attrs={"POS": "ADJ"})
    ruler.add(patterns=[[{"LOWER": {"IN": ["a", "the"]}}]], attrs={"POS": "DET"})
    folder = tmp_path_factory.mktemp("spacy") / "rules_en"
    nlp.to_disk(folder)
    return folder


def code_grow(box, size, t=0.2):
    b = [round(v) for v in box]   # YOLOv9 writes rounded pixel boxes
    ew, eh = int((b[2] - b[0]) * t), int((b[3] - b[1]) * t)
    return (max(0, b[0] - ew), max(0, b[1] - eh), min(size[0], b[2] + ew), min(size[1], b[3] + eh))


def code_image_score(blip, nlp, image, questions, dets, size):
    """evaluation.py's score of one image from its detections (sorted by confidence, highest first)."""
    from PIL import Image

    def crop(box):
        return image.crop(code_grow(box, image.size)).resize(image.size, Image.BICUBIC)

    whole = [0, 0, image.width, image.height]
    noun_boxes = [(list(d["box"]), d["score"]) for d in dets] or [(whole, 0.51)]
    lst = list(noun_boxes)
    if len(lst) < 2:
        lst += sorted(noun_boxes, key=lambda x: x[1], reverse=True)[:2]
    lst.append((whole, 0.51))
    rel = []
    for a in range(len(lst)):
        for b in range(a + 1, len(lst)):
            (b1, p1), (b2, p2) = lst[a], lst[b]
            rel.append(([min(b1[0], b2[0]), min(b1[1], b2[1]), max(b1[2], b2[2]), max(b1[3], b2[3])], p1 * p2))
    rel = sorted(rel, key=lambda x: x[-1], reverse=True)[:10]
    coarse, noun, relation = [], [], []
    for kind, q in questions:
        toks = [t for t in nlp(q)]
        # find_adjectives_and_delete
        new, i = [], 0
        while i < len(toks):
            if toks[i].pos_ == "DET" and i + 2 < len(toks) and toks[i + 1].pos_ == "VERB" and toks[i + 2].pos_ == "NOUN":
                new += [toks[i].text, toks[i + 2].text]
                i += 3
            elif toks[i].pos_ == "ADJ" and toks[i].text not in CODE_COLORS:
                i += 1
            else:
                new.append(toks[i].text)
                i += 1
        coarse.append(code_yes_score(*blip, image, " ".join(new).replace(" ?", "?"), size))
        boxes = [b for b, _ in (noun_boxes if kind == "entity" else rel)]
        scores = [code_yes_score(*blip, crop(b), q, size) * 2 for b in boxes] + [code_yes_score(*blip, image, q, size) * 2]
        noun.append(max(scores) if kind == "entity" else 0)
        relation.append(max(scores) if kind == "relation" else 0)
    fine = np.vstack([np.mean(noun), np.mean(relation)]).mean(0)[0]
    return (np.mean(coarse) + fine) / 2


def test_fineeval_equals_the_codes_formula_per_image(tmp_path, monkeypatch, images, blip, spacy_folder):
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    nlp = spacy.load(spacy_folder)
    with chat_server() as (url, _):
        m = metrics.load(f"fineeval:{tiny('blip')}?generator={url}&detector={tiny('rtdetr')}&confidence=0.5"
                         f"&max_boxes=4&spacy_model={spacy_folder}&vqa_image_size=64", device="cpu")
        ranked, rank = [], m.vqa.rank_answers      # every (crop, question)'s LAVIS decisions, recomputed below
        m.vqa.rank_answers = lambda *a, **k: ranked.extend(rank(*a, **k)) or ranked[len(ranked) - len(a[0]):]
        scores = m(images=images, prompts=PROMPTS)
        del m.vqa.rank_answers
    assert_wide_ranking(ranked, "crop and question")
    assert_wide_detections(m.detector, images, context="FineEval's detector")   # "some image has 2 boxes"
    # 64 px keeps the tiny model fast here; 480 px (the default, LAVIS' size) is tested above
    assert m.config["answer_score"] == "lavis_rank" and m.config["vqa_image_size"] == 64
    assert m.config["relation_boxes"] == "code" and m.config["coarse"] == "code"
    assert m.config["lowercase_questions"] is True
    n_dets = []
    for im, p, s, det in zip(images, PROMPTS, scores, m.last_details):
        # parse_output lower-cases every line of the LLM's reply before the questions are used
        qs = [(k, q.lower()) for k, q in parse_decomposition(CANNED[p][2]).questions]
        assert s == pytest.approx(code_image_score(blip, nlp, im, qs, det["detections"], 64), abs=1e-6)
        n_dets.append(len(det["detections"]))
    assert max(n_dets) >= 2
    coarse = {q["question"]: q["coarse_question"] for d in m.last_details for q in d["questions"]}
    assert coarse["are there two blue dogs?"] == "are there blue dogs?"   # "two" tagged ADJ here, colour kept
    assert coarse["is there a teddy bear?"] == "is there a bear?"


def test_fineeval_code_options(tmp_path, monkeypatch, spacy_folder):
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    with chat_server() as (url, _):
        base = f"fineeval:{tiny('blip')}?generator={url}&detector={tiny('rtdetr')}"
        hashes = {metrics.load(base + extra, device="cpu").config_hash
                  for extra in (f"&spacy_model={spacy_folder}", "&coarse=same",
                                f"&coarse=all_adjectives&spacy_model={spacy_folder}",
                                "&coarse=same&relation_boxes=detections", "&coarse=same&answer_score=first_token",
                                "&coarse=same&vqa_image_size=0", "&coarse=same&lowercase=false",
                                "&coarse=same&max_boxes=30")}
        assert len(hashes) == 8
        # the original's settings by default: YOLOv9's max_det=1000, questions lower-cased (parse_output)
        m = metrics.load(base + "&coarse=same", device="cpu")
        assert m.config["detector"]["max_boxes"] == 1000 and m.config["lowercase_questions"] is True
        with pytest.raises(InputError, match="python -m spacy download en_core_web_sm"):
            metrics.load(base + "&spacy_model=ts2viz_no_such_spacy_pipeline", device="cpu")
        with pytest.raises(InputError, match="relation_boxes must be one of"):
            metrics.load(base + "&coarse=same&relation_boxes=all", device="cpu")
        with pytest.raises(InputError, match="lavis_rank needs a BLIP-VQA model"):
            metrics.load(f"fineeval:{tiny('llava')}?generator={url}&detector={tiny('rtdetr')}&coarse=same"
                         "&answer_score=lavis_rank", device="cpu")
