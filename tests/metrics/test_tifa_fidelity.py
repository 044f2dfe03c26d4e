"""TIFA against its code (Yushi-Hu/tifa), each rule written here from reading that code:

* the UnifiedQA question filter (``tifascore/question_filter.py``, ``unifiedqa.py``) on a tiny
  random-weight T5 that this test builds and saves: ts2viz's decisions equal the filter recomputed here
  from the model's own generations, and TIFA run with ``qa_filter=`` asks exactly the kept questions;
* the BLIP-2 prompt and the decoding settings of ``tifascore/vqa_models.py`` (that BLIP-VQA and GIT decode,
  map and score as TIFA's code is proven by TIFA's code itself: tests/metrics/reference/test_tifa_reference.py).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from margins import generation_margins
from tiny_models import tiny, word_tokenizer, write_image_dataset  # noqa: F401
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.qa.questions import Question, write_question_csv
from ts2viz.metrics.families.tifa.filter import (UnifiedQAFilter, load_filter, mcqa_input, normalize_free_form,
    qa_input, word_f1)

PROMPT = "a red cat on the tree"


@pytest.fixture(scope="module")
def t5(tmp_path_factory):
    """A tiny random T5ForConditionalGeneration with a word vocabulary, saved like a hub checkpoint."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    # seed 8: every greedy step of the generations below wins by a wide margin (seed 11 had a step at
    # 7.7e-4 of the logits' scale: issue 30), and the filter keeps some questions and drops others
    torch.manual_seed(8)
    tok = word_tokenizer()
    tok.add_tokens(["(A)", "(B)", "(C)", "(D)", "1", "2", "3"])
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2,
                   num_heads=2, relative_attention_num_buckets=8, pad_token_id=tok.pad_token_id,
                   eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id)
    folder = tmp_path_factory.mktemp("unifiedqa") / "tiny-t5"
    T5ForConditionalGeneration(cfg).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@functools.lru_cache(maxsize=2)
def _t5(folder):
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    return AutoTokenizer.from_pretrained(folder), T5ForConditionalGeneration.from_pretrained(folder).eval()


def run_unifiedqa(folder, text: str) -> str:
    """UnifiedQAModel.run_model: encode (special tokens added), generate(max_new_tokens=30), decode [0]."""
    import torch

    tok, model = _t5(folder)
    with torch.no_grad():
        res = model.generate(tok.encode(text, return_tensors="pt"), max_new_tokens=30)
    return tok.batch_decode(res, skip_special_tokens=True)[0]


def tifa_filter(folder, caption_qas):
    """filter_question_and_answers, written from TIFA's code (free-form answers are never numeric here)."""
    kept, seen = [], set()
    for qa in caption_qas:
        if qa["question"] in seen:
            continue
        seen.add(qa["question"])
        choice_text = ""
        for h, c in zip(["(A)", "(B)", "(C)", "(D)"], qa["choices"]):
            choice_text += f"{h} {c} "
        if run_unifiedqa(folder, f"{qa['question']} \n {qa['caption']} \n {choice_text}") != qa["answer"]:
            continue
        if qa["answer"] not in ["yes", "no"]:
            ans = run_unifiedqa(folder, f"{qa['question']} \n {qa['caption']}")
            ans = "".join(c for c in ans if c.isalnum() or c.isspace()).strip().lower()
            gold, pred = qa["answer"].split(), ans.split()
            tp = sum(g in pred for g in gold)
            fp = sum(p not in gold for p in pred)
            prec = tp / (tp + fp) if tp + fp else 0
            rec = tp / len(gold)
            if (2 * prec * rec / (prec + rec) if prec + rec else 0) <= 0.6:
                continue
        kept.append(qa)
    return kept


def test_filter_formats_and_overlap_by_hand():
    assert mcqa_input("Is the cat red?", "a red cat", ["yes", "no"]) == "Is the cat red? \n a red cat \n (A) yes (B) no "
    assert mcqa_input("q", "c", list("abcde")).endswith("(D) d ")  # only four headings
    assert qa_input("What color?", "a red cat") == "What color? \n a red cat"
    assert normalize_free_form("  The Red-cat! ") == "the redcat"
    assert word_f1(["red"], ["red"]) == 1.0 and word_f1(["red", "cat"], ["red"]) == pytest.approx(2 / 3)
    # TP counts gold words found (1), FP predicted words not in the gold (1: "cat", the repeat of "red" is free)
    assert word_f1(["red"], ["red", "red", "cat"]) == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))
    assert word_f1([], []) == 1.0 and word_f1([], ["x"]) == 0.0 and word_f1(["x"], []) == 0.0


def _questions(folder):
    """Questions whose expected answers are, for some, what the tiny model answers (so that both the
    kept and the dropped branches are taken)."""
    qs = [("Is there a cat?", ("yes", "no")), ("What color is the cat?", ("red", "blue", "green")),
          ("What is the cat on?", ("tree", "dog", "cat", "lights", "bear")), ("Is the cat red?", ("yes", "no")),
          ("Is there a cat?", ("yes", "no"))]
    out = []
    for k, (text, choices) in enumerate(qs):
        mc = run_unifiedqa(folder, mcqa_input(text, PROMPT, choices))
        expected = mc if k in (0, 1, 2, 4) and mc else choices[0]
        out.append(Question(k, text, choices, expected))
    return out


def test_unifiedqa_filter_equals_tifas_filter(t5):
    # the filter's decisions come from greedy generations, computed twice: wide argmaxes at every step
    with generation_margins(context="UnifiedQA generations"):
        qs = _questions(t5)
        f = load_filter(f"unifiedqa:{t5}", "cpu")
        kept = f.keep(PROMPT, qs)
        want = tifa_filter(t5, [{"question": q.text, "caption": PROMPT, "choices": list(q.choices), "answer": q.answer,
                                 "id": q.id} for q in qs])
    assert [q.id for q in kept] == [w["id"] for w in want]
    d = f.decisions(PROMPT, qs)
    assert d[4]["reason"] == "duplicate" and d[0]["mc_answer"] == qs[0].answer
    assert f.config["filter"] == "unifiedqa" and "fingerprint" in f.config
    assert load_filter("none") is None and load_filter(None) is None
    with pytest.raises(InputError, match="expected none, unifiedqa or unifiedqa:MODEL"):
        load_filter("t5")


def test_tifa_with_qa_filter_asks_only_kept_questions(t5, tmp_path):
    from PIL import Image

    with generation_margins(context="UnifiedQA generations"):
        qs = _questions(t5)
        keep_ids = [q.id for q in UnifiedQAFilter(str(t5), "cpu").keep(PROMPT, qs)]
    csv = tmp_path / "q.csv"
    write_question_csv(csv, [(0, PROMPT, qs)], "tifa")
    im = Image.fromarray(np.random.default_rng(0).integers(0, 255, (32, 32, 3), dtype=np.uint8))
    base = f"tifa:{tiny('blip')}?questions={csv}&mapper=lexical"
    m = metrics.load(f"{base}&qa_filter=unifiedqa:{t5}", device="cpu")
    if not keep_ids:  # a random model rarely agrees with anything: then every question is dropped
        with pytest.raises(InputError, match="dropped every question"), generation_margins(context="UnifiedQA"):
            m.score_with_details([im], [PROMPT])
        return
    with generation_margins(context="UnifiedQA generations in the metric"):
        s, det = m.score_with_details([im], [PROMPT])
    assert [r["question_id"] for r in det[0]] == keep_ids
    assert s[0] == pytest.approx(np.mean([r["correct"] for r in det[0]]))
    plain = metrics.load(base, device="cpu")
    assert plain.config_hash != m.config_hash and m.config["qa_filter"]["filter"] == "unifiedqa"
    with pytest.raises(InputError, match="qa_filter= applies to tifa only"):
        metrics.load(f"dsg:{tiny('blip')}?mapper=lexical&qa_filter=unifiedqa:{t5}", device="cpu")


def test_tifa_blip2_prompt_is_tifas():
    m = metrics.load(f"tifa:{tiny('llava')}?mapper=lexical&prompt_style=tifa_blip2", device="cpu")
    q = Question(0, "What color is the cat?", ("red", "blue"), "red")
    # tifascore/vqa_models.py BLIP2.vqa
    assert m.ask(q) == "Answer the multiple-choice question. Question: What color is the cat? Choices: red, blue Answer:"
    assert m.ask(Question(1, "What is it?", (), "cat")) == "Answer the question. Question: What is it? Answer:"
    assert m.vqa.prompt(m.ask(q)) == m.ask(q)   # no template or chat wrapping around TIFA's text
    assert m.config["prompt_style"] == "tifa_blip2"
    assert "prompt_style" not in metrics.load(f"tifa:{tiny('llava')}?mapper=lexical", device="cpu").config
    with pytest.raises(InputError, match="prompt_style must be one of"):
        metrics.load(f"tifa:{tiny('llava')}?mapper=lexical&prompt_style=blip3", device="cpu")


def test_tifa_decodes_as_tifas_code_on_its_models():
    """TIFA's own calls are the defaults on the models it runs (BLIP-VQA, GIT, BLIP-2); greedy elsewhere.
    That the BLIP and GIT calls equal TIFA's code is proven in tests/metrics/reference/test_tifa_reference.py."""
    from ts2viz.metrics.common.decoding import GREEDY, check_decoding
    from ts2viz.metrics.families.tifa.decoding import DECODINGS as TIFA_DECODINGS
    from ts2viz.metrics.registry import decoding_presets

    m = metrics.load(f"tifa:{tiny('blip')}?mapper=lexical", device="cpu")
    assert m.decoding is TIFA_DECODINGS["blip"] and m.config["decoding_arguments"] == {"max_length": 50}
    assert m.config["correctness"] == "exact"
    assert metrics.load(f"tifa:{tiny('llava')}?mapper=lexical", device="cpu").decoding is GREEDY
    blip2 = check_decoding("tifa", "blip-2", "x", decoding_presets()).generate_kwargs(encoder_decoder=True, max_new_tokens=10)
    assert blip2 == dict(do_sample=False, num_beams=5, max_new_tokens=30, min_length=1, repetition_penalty=1.0,
                         length_penalty=1.0, num_return_sequences=1)     # LAVIS blip2_t5.generate's defaults
    with pytest.raises(InputError, match="decoding=tifa is Yushi-Hu/tifa tifascore/vqa_models.py's call for each model type and "
                       "applies to blip, git, blip-2 models, not 'llava'"):
        metrics.load(f"tifa:{tiny('llava')}?mapper=lexical&decoding=tifa", device="cpu")
    with pytest.raises(InputError, match="correctness must be one of exact, normalized"):
        metrics.load(f"tifa:{tiny('blip')}?mapper=lexical&correctness=fuzzy", device="cpu")


def test_correctness_is_tifas_exact_comparison(tmp_path):
    """TIFA scores int(mc_answer == answer): a choice that differs from the expected answer only by an article
    or case is wrong (``correctness=exact``, default); ``normalized`` is ts2viz's former comparison."""
    csv = tmp_path / "q.csv"
    write_question_csv(csv, [(0, PROMPT, [Question(0, "What is on the tree?", ("a cat", "dog"), "cat"),
                                          Question(1, "Is it red?", ("Yes", "no"), "yes")])], "tifa")
    answers = [["a cat", "Yes"]]
    exact = metrics.load(f"tifa:{tiny('blip')}?questions={csv}&mapper=lexical", device="cpu")
    norm = metrics.load(f"tifa:{tiny('blip')}?questions={csv}&mapper=lexical&correctness=normalized", device="cpu")
    assert exact.score_answers([PROMPT], answers).tolist() == [0.0]
    assert [r["mapped"] for r in exact.last_details[0]] == ["a cat", "Yes"]
    assert norm.score_answers([PROMPT], answers).tolist() == [1.0]
    assert exact.config["correctness"] == "exact" and norm.config_hash != exact.config_hash
