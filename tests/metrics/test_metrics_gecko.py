"""Gecko on tiny saved models (PaliGemma VQA, T5 NLI) with a local canned-reply LLM endpoint; parsers,
hypotheses and Eq. 2 by hand; TIFA/DSG with score=normalized."""
from __future__ import annotations

import json

import numpy as np
import pytest

from llm_server import chat_server
from margins import assert_wide_argmax, assert_wide_threshold
from tiny_models import tiny
from ts2viz import engine, metrics
from ts2viz.errors import InputError
from ts2viz.metrics.common.choicescore import choice_index, normalized_probability
from ts2viz.metrics.families.gecko.questions import (CoverageWord, labelled_prompt, parse_coverage, parse_qa,
    qa_hypothesis, qa_user_message)
from ts2viz.metrics.backbones.nli import load_nli
from ts2viz.qa.questions import QuestionSource

PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear"]


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(11)
    return [Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)) for _ in range(2)]


@pytest.fixture()
def llm(tmp_path, monkeypatch):
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    with chat_server() as (url, requests):
        yield url, requests


# -- parsing and arithmetic on hand-made text --------------------------------------------------------

def test_parse_coverage():
    words = parse_coverage("A {1}[red colored, color, 1.0] {2}[dog, entity, 0.8] {3}[x, weird, high] {2}[dup, entity, 1]"
                           " {4}[in the style of Monet, style, 0.5]")
    assert [(w.id, w.phrase, w.type, w.groundability) for w in words] == [
        (1, "red colored", "color", 1.0), (2, "dog", "entity", 0.8), (3, "x", "other", 1.0),
        (4, "in the style of Monet", "style", 0.5)]
    assert parse_coverage("{1}[a, b, c, entity, 2.5]")[0] == CoverageWord(1, "a, b, c", "entity", 1.0)
    with pytest.raises(InputError, match="no \\{N\\}\\[phrase, type, score\\] labels"):
        parse_coverage("A red dog.")


def test_labelled_prompt_and_qa_message():
    words = [CoverageWord(1, "red", "color", 1.0), CoverageWord(2, "dog", "entity", 1.0),
             CoverageWord(3, "kite", "entity", 1.0)]
    assert labelled_prompt("A red dog and a red car.", words) == "A {1}[red] {2}[dog] and a red car. {3}[kite]"
    msg = qa_user_message("A red dog.", words[:2])
    assert msg.splitlines() == ["Prompt: A red dog.", "Labelled: A {1}[red] {2}[dog].",
                                "Words: {1}[red] (color); {2}[dog] (entity)"]


def test_parse_qa():
    words = [CoverageWord(1, "red", "color", 1.0), CoverageWord(2, "dog", "entity", 1.0),
             CoverageWord(3, "two", "counting", 1.0)]
    reply = ("Sure!\nAbout {2}[dog] (entity):\nQ: Is there a dog?\nChoices: yes, no\nA: yes\n"
             "About {1}[red] (color):\nQ: What color is the dog?\nChoices: red, blue\nA: red\n"
             "About {2}[dog] (entity):\nQ: Is this a dog?\nA: yes\n"          # second block for 2: ignored
             "About {3}[two] (counting):\nQ: How many dogs?\nChoices: 1, 3\nA: 2\n"  # answer not a choice
             "About {9}[cat] (entity):\nQ: Is there a cat?\nA: yes\n")        # not a labelled word
    pairs = parse_qa(reply, words)
    assert [(p.word_id, p.question, p.choices, p.expected) for p in pairs] == [
        (1, "What color is the dog?", ("red", "blue"), "red"), (2, "Is there a dog?", ("yes", "no"), "yes")]
    with pytest.raises(InputError, match="no 'About"):
        parse_qa("Q: Is there a dog?\nA: yes", words)


def test_qa_hypothesis():
    assert qa_hypothesis("Is there a cat?", "yes") == "There is a cat."
    assert qa_hypothesis("are there  two dogs?", "yes") == "There are two dogs."
    assert qa_hypothesis("Is there a cat?", "no") == "There is not a cat."
    assert qa_hypothesis("Is the cat red?", "yes") == "Is the cat red? Yes."
    assert qa_hypothesis("What color is the cat", "red") == "What color is the cat? Red."
    assert qa_hypothesis("Is the cat red?", "yes", "Q: {question} A: {answer}") == "Q: Is the cat red? A: yes"


def test_normalisation_by_hand():
    assert normalized_probability(np.log([0.2, 0.05]), 0) == pytest.approx(0.8)
    assert normalized_probability(np.log([0.2, 0.05]), 1) == pytest.approx(0.2)
    assert normalized_probability([-1000.0, -1001.0, -1002.0], 0) == pytest.approx(1 / (1 + np.e ** -1 + np.e ** -2))
    assert np.isnan(normalized_probability([-np.inf, -np.inf], 0)) and np.isnan(normalized_probability([0.0], None))
    assert choice_index(["Yes", "no"], "yes") == 0 and choice_index(["red car", "blue"], "Red  car.") == 0
    assert choice_index(["1", "2"], "group") is None


# -- NLI ----------------------------------------------------------------------------------------------

def _nli_by_generate(folder, premise, hypothesis) -> float:
    """P("1") of the first token ``generate`` produces, one pair at a time."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)
    enc = tok(f"premise: {premise} hypothesis: {hypothesis}", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=1, do_sample=False, output_logits=True, return_dict_in_generate=True)
    return torch.softmax(out.logits[0][0].double(), -1)[tok.convert_tokens_to_ids("1")].item()


def test_nli_entailment_matches_generate_and_batching(tmp_path):
    folder = str(tiny("t5nli"))
    nli = load_nli(folder, "cpu")
    prem = ["a red cat on the tree"] * 3 + ["two blue dogs with a teddy bear"]
    hyp = ["There is a cat.", "Is the cat red? Yes.", "There are two dogs with a teddy bear on the tree.", "There are dogs."]
    got = nli.entailment(prem, hyp)
    want = [_nli_by_generate(folder, p, h) for p, h in zip(prem, hyp)]
    np.testing.assert_allclose(got, want, atol=1e-6)
    nli.batch_size = 1
    np.testing.assert_allclose(nli.entailment(prem, hyp), got, atol=1e-6)
    assert nli.config["input"] == "premise: {premise} hypothesis: {hypothesis}"
    with pytest.raises(InputError, match="cannot load NLI model"):
        load_nli(str(tiny("llm")), "cpu")  # a causal LM is no seq2seq NLI model
    from transformers import T5Config, T5ForConditionalGeneration

    from tiny_models import word_tokenizer

    tok = word_tokenizer()  # no "1" in its vocabulary
    T5ForConditionalGeneration(T5Config(vocab_size=len(tok), d_model=16, d_kv=8, d_ff=16, num_layers=1,
                                        num_heads=2, decoder_start_token_id=0)).save_pretrained(tmp_path / "t5")
    tok.save_pretrained(tmp_path / "t5")
    with pytest.raises(InputError, match="no token for '1'"):
        load_nli(str(tmp_path / "t5"), "cpu")


# -- Gecko end to end on tiny models ------------------------------------------------------------------

def _p_yes_no(vqa_folder, image, question):
    """P(yes), P(no) (any case) as whole answers: the word's token then PaliGemma's EOS (the processor's suffix
    path), from a plain forward pass of one pair per spelling."""
    import torch
    from transformers import AutoProcessor, PaliGemmaForConditionalGeneration

    model = PaliGemmaForConditionalGeneration.from_pretrained(vqa_folder).eval()
    proc = AutoProcessor.from_pretrained(vqa_folder)

    def p(word):
        enc = proc(images=[image], text=[f"<image>answer en {question}"], suffix=[word], return_tensors="pt")
        enc.pop("labels")
        ids = enc["input_ids"][0].tolist()
        with torch.no_grad():
            logp = torch.log_softmax(model(**enc).logits[0].double(), -1)
        n = len(ids)  # the suffix is the word's one token, then EOS: the last two tokens
        assert ids[-1] == proc.tokenizer.eos_token_id
        return float(np.exp(logp[n - 3, ids[n - 2]].item() + logp[n - 2, ids[n - 1]].item()))

    return p("yes") + p("Yes"), p("no") + p("No")


EXPECTED_QA = {
    "a red cat on the tree": [("red", "other", "Is the cat red?", "Is the cat red? Yes."),
                              ("cat", "entity", "Is there a cat?", "There is a cat."),
                              ("on", "spatial", "Is the cat on the tree?", "Is the cat on the tree? Yes."),
                              ("tree", "entity", "Are there trees?", "There are trees.")],
    "two blue dogs with a teddy bear": [("two", "counting", "Are there two dogs?", "There are two dogs."),
                                        ("blue", "color", "Are the dogs blue?", "Are the dogs blue? Yes."),
                                        ("dogs", "entity", "Are there dogs?", "There are dogs."),
                                        ("teddy bear", "entity", "Is there a teddy bear?", "There is a teddy bear.")],
}


def test_gecko_score_is_mean_of_normalised_kept_answers(llm, images):
    url, requests = llm
    vqa_folder, nli_folder = str(tiny("paligemma")), str(tiny("t5nli"))
    nli_scores = {p: [_nli_by_generate(nli_folder, p, h) for *_, h in EXPECTED_QA[p]] for p in PROMPTS}
    # A threshold between the NLI scores, so that some pairs are kept and some dropped.
    thr = float(np.median([s for v in nli_scores.values() for s in v]))
    spec = f"gecko:{vqa_folder}?generator={url}&generator_model=canned&nli={nli_folder}&nli_threshold={thr}"
    m = metrics.load(spec, device="cpu")
    scores = m(images=images, prompts=PROMPTS)
    details = m.last_details
    for im, p, s, det in zip(images, PROMPTS, scores, details):
        recs = det["questions"]
        assert [(r["word"], r["type"], r["question"], r["hypothesis"]) for r in recs] == EXPECTED_QA[p]
        np.testing.assert_allclose([r["nli"] for r in recs], nli_scores[p], atol=1e-6)
        # kept or not: both computations of each NLI score are far from the threshold
        assert_wide_threshold([r["nli"] for r in recs] + nli_scores[p], thr, context="NLI filter")
        assert [r["kept"] for r in recs] == [v >= thr for v in nli_scores[p]]
        want = []
        for r in recs:
            if not r["kept"]:
                assert "normalized" not in r and "NLI entailment" in r["note"]
                continue
            py, pn = _p_yes_no(vqa_folder, im, r["question"])
            np.testing.assert_allclose([r["probabilities"]["yes"], r["probabilities"]["no"]], [py, pn], rtol=1e-5)
            assert r["normalized"] == pytest.approx(py / (py + pn), abs=1e-6)
            want.append(py / (py + pn))
        assert det["n_kept"] == len(want)
        assert s == pytest.approx(np.mean(want) if want else np.nan, abs=1e-6, nan_ok=True)
        assert [c["phrase"] for c in det["coverage"]] == [w for w, *_ in EXPECTED_QA[p]]
    assert sum(d["n_kept"] for d in details) not in (0, 8)  # the threshold really split the pairs
    json.dumps(details)  # the engine stores details as JSON
    # Two LLM calls per prompt (coverage, QA); the system prompts are the few-shot ones.
    assert len(requests) == 4 and "{3}[gecko" not in requests[0]["messages"][0]["content"]
    assert m.config["nli_threshold"] == thr and m.config["nli"]["input"].startswith("premise:")


def test_gecko_batching_and_engine_cache(llm, images, tmp_path):
    url, requests = llm
    spec = f"gecko:{tiny('paligemma')}?generator={url}&nli=none"
    m = metrics.load(spec, device="cpu")
    assert m.config["nli"] is None
    m.vqa.batch_size = 16
    a = m(images=images, prompts=PROMPTS)
    m.vqa.batch_size = 1
    m.batch_size = 1
    b = m(images=images, prompts=PROMPTS)
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert all(d["n_kept"] == 4 and all(r["nli"] is None for r in d["questions"]) for d in m.last_details)
    n_requests = len(requests)
    # Through the engine: details come back from the score cache with no model call.
    s1, d1 = engine.score_images(m, images, PROMPTS, cache_dir=tmp_path / "c", return_details=True)
    calls = []
    m.score_prepared = lambda items, prompts: calls.append(len(items))
    s2, d2 = engine.score_images(m, images, PROMPTS, cache_dir=tmp_path / "c", return_details=True)
    assert calls == [] and d2 == d1 and d1[0]["questions"][1]["question"] == "Is there a cat?"
    np.testing.assert_array_equal(s1, s2)     # exact: s2 is s1 read back from the cache
    np.testing.assert_allclose(s1, a, atol=1e-6)
    assert len(requests) == n_requests  # questions were generated once per prompt


def test_llm_replies_cached_on_disk(llm, images, tmp_path):
    url, requests = llm
    spec = f"gecko:{tiny('paligemma')}?generator={url}&nli=none"
    s1 = metrics.load(spec, device="cpu")(images=images[:1], prompts=PROMPTS[:1])
    assert len(requests) == 2 and len(list((tmp_path / "cache" / "llm").glob("*.json"))) == 2
    s2 = metrics.load(spec, device="cpu")(images=images[:1], prompts=PROMPTS[:1])  # new process-level metric
    assert len(requests) == 2 and s1[0] == s2[0]
    metrics.load(spec + "&generator_model=other", device="cpu").check_prompts(PROMPTS[:1])
    assert len(requests) == 4  # another LLM: asked again
    metrics.load(spec + "&llm_cache=false", device="cpu").check_prompts(PROMPTS[:1])
    assert len(requests) == 6


def test_gecko_options_change_config_hash_and_bad_options(llm):
    url, _ = llm
    base = f"gecko:{tiny('paligemma')}?generator={url}&nli=none"
    h0 = metrics.load(base, device="cpu").config_hash
    with_nli = f"gecko:{tiny('paligemma')}?generator={url}&nli={tiny('t5nli')}"
    variants = [base + "&generator_model=m2", base + "&hypothesis=Q: {question} A: {answer}",
                base + "&min_groundability=0.5", base + "&list_choices=true",
                base + "&template=<image>answer en {question} please", base + "&dtype=bfloat16",
                f"gecko:{tiny('llava')}?generator={url}&nli=none", with_nli, with_nli + "&nli_threshold=0.1"]
    hashes = {h0} | {metrics.load(v, device="cpu").config_hash for v in variants}
    assert len(hashes) == len(variants) + 1
    # Batch sizes and the reply cache do not change results, so not the hash either.
    for extra in ("&batch_size=2", "&pair_batch_size=3", "&llm_cache=false"):
        assert metrics.load(base + extra, device="cpu").config_hash == h0
    for extra, msg in [("", "unknown option"), ("&nli_threshold=2", "must lie in"),
                       ("&nli_threshold=low", "must be numbers"), ("&hypothesis={question}", "hypothesis must be")]:
        spec = base + (extra or "&colour=red")
        with pytest.raises(InputError, match=msg):
            metrics.load(spec, device="cpu")
    with pytest.raises(InputError, match="writes its questions with an LLM"):
        metrics.load(f"gecko:{tiny('paligemma')}", device="cpu")


def test_gecko_unknown_prompt_and_tiny_local_llm(llm, images):
    url, _ = llm
    m = metrics.load(f"gecko:{tiny('paligemma')}?generator={url}&nli=none", device="cpu")
    with pytest.raises(InputError, match="coverage reply has no"):
        m.check_prompts(["a prompt the canned LLM does not know"])
    # A random tiny local LLM runs but cannot write the format: a clear error, not a crash.
    m2 = metrics.load(f"gecko:{tiny('paligemma')}?generator=hf:{tiny('llm')}&nli=none&llm_cache=false", device="cpu")
    m2.questions.llm.max_new_tokens = 8
    with pytest.raises(InputError, match="coverage reply has no"):
        m2(images=images[:1], prompts=PROMPTS[:1])


# -- TIFA / DSG with Gecko's normalisation -------------------------------------------------------------

TS2_PROMPT = "A Christmas tree with lights and teddy bear"


@pytest.mark.parametrize("family", ["tifa", "dsg"])
def test_qa_normalized_score(images, family):
    m = metrics.load(f"{family}:{tiny('blip')}?score=normalized", device="cpu")
    acc = metrics.load(f"{family}:{tiny('blip')}?mapper=lexical", device="cpu")
    assert m.config_hash != acc.config_hash and "score" not in acc.config
    scores, details = m.score_with_details(images[:1], [TS2_PROMPT])
    qs = QuestionSource(family).get(TS2_PROMPT)
    recs = details[0]
    assert [r["question"] for r in recs] == [q.text for q in qs]
    # Each question's likelihoods are those of the VQA backend for its choices; Eq. 2 by hand.
    lps = m.vqa.choice_logprobs([images[0]] * len(qs), [m.ask(q) for q in qs], [q.choices for q in qs])
    norm, best = {}, {}
    for q, r, lp in zip(qs, recs, lps):
        p = np.exp(lp)
        a = [c.lower() for c in q.choices].index(q.answer.lower())
        norm[q.id] = p[a] / p.sum()
        # DSG counts a question's children only when its most likely choice is the expected one: an argmax
        # over likelihoods that the metric computed in another batch, so by a wide margin
        best[q.id] = (assert_wide_argmax(p, context=f"{family}: {q.text}") if family == "dsg" else int(np.argmax(p))) == a
        np.testing.assert_allclose(list(r["probabilities"].values()), p, rtol=1e-9)
        assert r["normalized"] == pytest.approx(norm[q.id])
    if family == "dsg":
        # direct (the default accumulation, DSG's scoring code): a question counts 0 when one of its
        # direct parents does not have the expected answer as its most likely choice
        counts = dict(best)
        want = [0.0 if any(not counts.get(p, True) for p in q.parents) else norm[q.id] for q in qs]
        assert any(q.parents for q in qs)
    else:
        want = list(norm.values())
    assert [r["counted"] for r in recs] == pytest.approx(want)
    assert scores[0] == pytest.approx(np.mean(want))
    with pytest.raises(InputError, match="score must be 'accuracy' or 'normalized'"):
        metrics.load(f"{family}:{tiny('blip')}?score=soft", device="cpu")


def test_metrics_listing_names_the_new_families(capsys):
    from ts2viz.cli import main

    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "gecko" in out and "fineeval" in out and "gecko:google/paligemma" in out
