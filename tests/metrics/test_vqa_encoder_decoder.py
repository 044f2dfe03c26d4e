"""Encoder-decoder VLMs (BLIP-2 / InstructBLIP on Flan-T5): the answer goes to the decoder, teacher forced.

(InstructBLIP Flan-T5's VQAScore is proved against t2v_metrics' own code by tests/metrics/reference.) Here a
tiny BLIP-2 Flan-T5 against transformers' own loss: the model called with ``labels`` (the answer's tokens and
``</s>``), whose decoder inputs transformers derives itself, gives ``exp(-loss)`` = ts2viz's likelihood, and
its first decoder step gives the first-token distribution."""
from __future__ import annotations

import numpy as np
import pytest

from tiny_models import tiny
from ts2viz import metrics
from ts2viz.metrics.backbones.vqa.loader import load_vqa_model
from ts2viz.metrics.backbones.vqa.model import surface_forms
from ts2viz.metrics.common.spec import Spec
from ts2viz.metrics.backbones.vqa.t2v import normalized_pixels, resize_shorter_center_crop

QUESTIONS = ["is there a cat?", "what color is the dog with the teddy bear?"]


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(11)
    return [Image.fromarray(rng.integers(0, 255, (40, 52, 3), dtype=np.uint8)),
            Image.fromarray(rng.integers(0, 255, (56, 36, 3), dtype=np.uint8))]


@pytest.fixture(scope="module")
def vqa():
    folder = tiny("blip2_t5")
    return load_vqa_model(Spec(f"x:{folder}", "x", str(folder)), "cpu")


def _loss(vqa, enc, target):
    import torch

    with torch.no_grad():
        out = vqa.model(**enc, labels=torch.tensor([target]))
    return float(out.loss)


def test_choices_and_first_token_go_through_the_decoder(vqa, images):
    import torch

    assert vqa.encoder_decoder and type(vqa.model).__name__ == "Blip2ForConditionalGeneration"
    tok, eos = vqa.tokenizer, vqa.tokenizer.eos_token_id
    choices = [["yes", "no"], ["red", "red and blue"]]
    got = vqa.choice_logprobs(images, QUESTIONS, choices)
    for im, q, cs, g in zip(images, QUESTIONS, choices, got):
        enc = vqa._inputs([im], [q])
        want = []
        for c in cs:
            seqs = {tuple(tok.encode(f, add_special_tokens=False)) for f in surface_forms(c)}
            # transformers' mean cross-entropy over the target's tokens, times their number: -log P(target)
            want.append(np.log(sum(np.exp(-_loss(vqa, enc, [*s, eos]) * (len(s) + 1)) for s in seqs)))
        np.testing.assert_allclose(g, want, rtol=1e-5)
    yes = vqa.yes_probability(images[:1], QUESTIONS[:1])[0]
    enc = vqa._inputs(images[:1], QUESTIONS[:1])
    start = vqa.model.config.text_config.decoder_start_token_id
    with torch.no_grad():
        p = torch.softmax(vqa.model(**enc, decoder_input_ids=torch.tensor([[start]])).logits[0, -1].double(), -1)
    ids = sorted({tok.encode(w, add_special_tokens=False)[0] for w in ("yes", "Yes")})
    assert yes == pytest.approx(float(p[ids].sum()), rel=1e-6)


def test_vqascore_on_blip2_flant5_is_lavis_format_likelihood(vqa, images):
    """BLIP-2 Flan-T5 (no t2v_metrics VQAScore: scored as its LAVIS sibling InstructBLIP): the image shorter side
    to the model's size and centre-cropped, 4 query outputs then the question into T5's encoder, ``yes </s>``
    as the decoder's target; checked with transformers' own T5 loss on those inputs."""
    import torch

    folder = tiny("blip2_t5")
    m = metrics.load(f"vqascore:{folder}", device="cpu")
    prompts = ["a red cat", "two blue dogs"]
    got = m(images=images, prompts=prompts)
    assert m.config["recipe"] == "blip-2" and m.config["answer_template"] == "yes"
    model, tok = vqa.model, vqa.tokenizer
    ip = vqa.processor.image_processor
    want = []
    for im, p in zip(images, prompts):
        px = normalized_pixels([resize_shorter_center_crop(im, 32)], ip.image_mean, ip.image_std)
        q = m.question_template.format(p)
        with torch.no_grad():
            feats = model.get_image_features(pixel_values=px, return_dict=True).pooler_output
            ids = tok([q], return_tensors="pt").input_ids
            emb = torch.cat([feats, model.language_model.get_input_embeddings()(ids)], dim=1)
            labels = tok(["yes"], return_tensors="pt").input_ids
            assert labels[0, -1] == tok.eos_token_id
            loss = model.language_model(inputs_embeds=emb, labels=labels).loss
        want.append(float(torch.exp(-loss)))
    assert np.ptp(want) > 1e-6 * max(want)  # the images matter
    np.testing.assert_allclose(got, want, rtol=1e-5)
