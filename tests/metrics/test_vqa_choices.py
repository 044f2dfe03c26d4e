"""Answer-choice likelihoods of the VQA backend (BLIP-VQA, LLaVA, PaliGemma) against forced generation.

A choice's likelihood is that of the whole answer: its tokens and then the token that ends the model's
answers (BLIP's ``[SEP]``, a generative VLM's end-of-sequence token), so that choices which are prefixes of
each other ("red" / "red and blue") are exclusive answers, as Gecko's normalisation over the choices needs.
"""
from __future__ import annotations

import numpy as np
import pytest

from margins import assert_wide_gap
from tiny_models import tiny
from ts2viz.errors import InputError
from ts2viz.metrics.common.spec import Spec
from ts2viz.metrics.backbones.vqa.generative import PALIGEMMA_TEMPLATE
from ts2viz.metrics.backbones.vqa.loader import load_vqa_model
from ts2viz.metrics.backbones.vqa.model import surface_forms

QUESTIONS = ["is there a dog?", "what color is the cat with the teddy bear on the tree?", "how many?"]
CHOICES = [["yes", "no"], ["red", "blue green", "teddy bear"], ["one", "two three", "no"]]


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(3)
    return [Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)) for _ in range(3)]


def _vqa(name):
    folder = tiny(name)
    return load_vqa_model(Spec(f"x:{folder}", "x", str(folder)), "cpu")


def _forced_logprob(vqa, image, question, ids) -> float:
    """log P(ids) from ``model.generate`` forced to emit ``ids`` (its own KV cache and masks, one pair)."""
    import torch

    blip = type(vqa).__name__ == "BlipVQA"
    if blip:
        enc = vqa.processor(images=image, text=question, return_tensors="pt")
        ids = list(ids) + [vqa.model.config.text_config.sep_token_id]
        offset = 1  # the decoder starts from [DEC]
    else:
        enc = vqa.processor(images=[image], text=[vqa.prompt(question)], return_tensors="pt")
        enc.pop("labels", None)
        offset = enc["input_ids"].shape[1]
        eos = vqa.model.generation_config.eos_token_id  # the answer ends as the model ends its answers
        ids = list(ids) + [eos[0] if isinstance(eos, list) else eos]
    vocab = list(range(len(vqa.processor.tokenizer)))

    def allowed(_, sofar):
        k = len(sofar) - offset
        return [ids[k]] if k < len(ids) else vocab

    with torch.no_grad():
        out = vqa.model.generate(**enc, max_new_tokens=len(ids), min_new_tokens=len(ids), do_sample=False,
                                 prefix_allowed_tokens_fn=allowed, output_logits=True, return_dict_in_generate=True)
    return sum(torch.log_softmax(out.logits[t][0].double(), -1)[ids[t]].item() for t in range(len(ids)))


@pytest.mark.parametrize("name", ["blip", "llava", "paligemma"])
def test_choice_logprobs_equal_forced_generation(images, name):
    vqa = _vqa(name)
    got = vqa.choice_logprobs(images, QUESTIONS, CHOICES)
    tok = vqa.processor.tokenizer
    for im, q, cs, g in zip(images, QUESTIONS, CHOICES, got):
        want = []
        for c in cs:
            seqs = {tuple(tok.encode(f, add_special_tokens=False)) for f in surface_forms(c)}
            want.append(np.log(sum(np.exp(_forced_logprob(vqa, im, q, s)) for s in seqs)))
        np.testing.assert_allclose(g, want, atol=2e-6)
    assert np.all(got[0] < 0)
    probs = vqa.choice_probabilities(images, QUESTIONS, CHOICES)
    np.testing.assert_allclose(probs[2], np.exp(got[2]), rtol=1e-12)


@pytest.mark.parametrize("name", ["blip", "llava", "paligemma"])
def test_choice_logprobs_do_not_depend_on_batching(images, name):
    vqa = _vqa(name)
    vqa.batch_size = 8
    a = vqa.choice_logprobs(images, QUESTIONS, CHOICES)
    vqa.batch_size = 1
    b = vqa.choice_logprobs(images, QUESTIONS, CHOICES)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, atol=1e-6)


def test_paligemma_prefix_and_yes_probability(images):
    vqa = _vqa("paligemma")
    assert type(vqa.model).__name__ == "PaliGemmaForConditionalGeneration"
    assert vqa.prompt("is there a dog?") == PALIGEMMA_TEMPLATE.format(question="is there a dog?")
    assert vqa.config["prompt"] == PALIGEMMA_TEMPLATE
    # P("yes") of the first answer token bounds the whole answer "yes" (then EOS) from above (the tiny
    # vocabulary has "yes" and "Yes"; surface forms cover both)
    p_yes = vqa.yes_probability(images, QUESTIONS)
    lp = vqa.choice_logprobs(images, QUESTIONS, [["yes"]] * 3)
    for k, (v, p) in enumerate(zip(lp, p_yes)):  # a bound compared over floats of a random model: by a wide margin
        assert_wide_gap(p, np.exp(v[0]), context=f"P(yes first) against P(yes, EOS), image {k}")
    assert all(np.exp(v[0]) < p for v, p in zip(lp, p_yes))
    assert all(isinstance(a, str) for a in vqa.answer(images[:1], QUESTIONS[:1], max_new_tokens=2))


def test_choice_errors(images):
    vqa = _vqa("llava")
    with pytest.raises(InputError, match="at least one non-empty answer choice"):
        vqa.choice_logprobs(images[:1], ["is there a dog?"], [[]])
    with pytest.raises(InputError, match="2 questions but 1 choice lists"):
        vqa.choice_logprobs(images[:2], QUESTIONS[:2], [["yes", "no"]])
    assert surface_forms("yes") == ["yes", "Yes"] and surface_forms("Red car") == ["Red car", "red car"]


@pytest.mark.parametrize("name", ["llava", "paligemma"])
def test_choices_that_are_prefixes_of_each_other_are_exclusive(images, name):
    """Gecko's "red" / "red and blue": without the end token, P("red") counts every answer that starts with
    "red" (so P(red) >= P(red and blue) always, and the two overlap); with it, each choice is one whole
    answer. Checked against forced generation of the choice's tokens and the end token, for two orders."""
    vqa = _vqa(name)
    tok = vqa.processor.tokenizer
    q = ["what color is the cat?"] * 2
    choices = [["red", "red and blue"], ["red and blue", "red"]]
    same = [images[0], images[0]]
    got = vqa.choice_logprobs(same, q, choices)
    for im, cs, g in zip(same, choices, got):
        want = [np.log(sum(np.exp(_forced_logprob(vqa, im, q[0], s))
                           for s in {tuple(tok.encode(f, add_special_tokens=False)) for f in surface_forms(c)}))
                for c in cs]
        np.testing.assert_allclose(g, want, atol=2e-6)
    # the two answers are disjoint events (their probabilities sum to at most 1), and "red" is the whole answer
    # "red", less likely than "red" as a first token (every answer starting with "red")
    assert all(np.exp(v).sum() <= 1 + 1e-9 for v in got)
    assert got[0][0] == pytest.approx(got[1][1], abs=1e-9)
    firsts = {tok.encode(f, add_special_tokens=False)[0]: f for f in surface_forms("red")}
    red_first = sum(vqa.first_token_score(images[:1], q[:1], [f])[0] for f in firsts.values())
    assert_wide_gap(np.log(red_first), got[0][0], context="log P('red' first) against log P('red', EOS)")
    assert got[0][0] < np.log(red_first)
