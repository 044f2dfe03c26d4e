"""DSG as its authors' code computes it (j-min/DSG): InstructBLIP's decoding and the yes rule.

The reference here is DSG's ``InstructBLIP.vqa`` (``dsg/vqa_utils.py``) as it ran on the transformers it
pins (4.31), written out in the test from reading both: the processor given the bare question, the
Q-Former query embeddings concatenated in front of the prompt's embeddings, the language model's
``generate`` given those embeddings only, with DSG's arguments. It is computed on a tiny random-weight
InstructBLIP and compared, question by question, with what ``dsg:`` records.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from margins import generation_margins
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.gold.answers import question_scores
from ts2viz.qa.accumulation import dsg_counted
from ts2viz.metrics.common.decoding import DECODINGS, DSG_INSTRUCTBLIP, GREEDY
from ts2viz.qa.mapping import YES_RULES, is_yes, load_mapper, reads_yes, yes_no_choice
from ts2viz.metrics.common.qametric import map_answers

PROMPT = "A Christmas tree with lights and teddy bear"   # a TS2 prompt: its DSG questions are bundled


def _images(n=3, seed=0):
    from PIL import Image

    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 255, size=(36 + 6 * k, 44, 3), dtype=np.uint8)) for k in range(n)]


def dsg_vqa_431(model, processor, image, question: str) -> str:
    """j-min/DSG ``InstructBLIP.vqa`` under transformers 4.31 (written from both sources, not ts2viz's)."""
    import torch

    enc = processor(images=image, text=question, return_tensors="pt")
    keep = enc["input_ids"][0] != model.config.image_token_index   # 4.31's processor had no image tokens
    input_ids = enc["input_ids"][:, keep]
    attention_mask = enc["attention_mask"][:, keep]
    with torch.no_grad():
        # 4.31 InstructBlipForConditionalGeneration.generate
        image_embeds = model.vision_model(pixel_values=enc["pixel_values"]).last_hidden_state
        image_mask = torch.ones(image_embeds.shape[:-1], dtype=torch.long)
        query_tokens = model.query_tokens.expand(image_embeds.shape[0], -1, -1)
        query_mask = torch.ones(query_tokens.shape[:-1], dtype=torch.long)
        qformer_mask = torch.cat([query_mask, enc["qformer_attention_mask"]], dim=1)
        query_output = model.qformer(input_ids=enc["qformer_input_ids"], attention_mask=qformer_mask,
                                     query_embeds=query_tokens, encoder_hidden_states=image_embeds,
                                     encoder_attention_mask=image_mask).last_hidden_state[:, :query_tokens.shape[1]]
        lm_inputs = model.language_projection(query_output)
        embeds = torch.cat([lm_inputs, model.get_input_embeddings()(input_ids)], dim=1)
        mask = torch.cat([torch.ones(lm_inputs.shape[:-1], dtype=torch.long), attention_mask], dim=1)
        # DSG's arguments. 4.31 started generate's sequence empty (inputs_embeds only), so max_length=256
        # and min_length=1 counted generated tokens; current transformers subtracts the embeddings, so the
        # same lengths are written as max_new_tokens / min_new_tokens here.
        out = model.language_model.generate(inputs_embeds=embeds, attention_mask=mask, do_sample=False, num_beams=5,
                                            max_new_tokens=256, min_new_tokens=1, top_p=0.9, repetition_penalty=1.5,
                                            length_penalty=1.0, temperature=1)
    return processor.batch_decode(out, skip_special_tokens=True)[0].strip()


def test_dsg_on_instructblip_decodes_as_dsgs_code():
    from transformers import AutoProcessor, InstructBlipForConditionalGeneration

    folder = tiny("instructblip")
    m = metrics.load(f"dsg:{folder}?mapper=lexical", device="cpu")
    assert m.decoding is DSG_INSTRUCTBLIP and m.list_choices is False and m.yes_rule == "exact"
    assert m.config["decoding"] == "dsg" and m.config["decoding_arguments"]["num_beams"] == 5
    images = _images()
    model = InstructBlipForConditionalGeneration.from_pretrained(folder).eval()
    processor = AutoProcessor.from_pretrained(folder)
    # beam search, batched by ts2viz and one question at a time here: every choice it makes by a wide margin
    with generation_margins(context="InstructBLIP beam search"):
        scores, details = m.score_with_details(images, [PROMPT] * len(images))
        want = [[dsg_vqa_431(model, processor, im, r["question"]) for r in recs] for im, recs in zip(images, details)]
    n = 0
    for recs, answers in zip(details, want):
        assert len(recs) == 5      # the bundled TS2 DSG set of this prompt, several token lengths
        for r, a in zip(recs, answers):
            assert r["answer"] == a, r["question"]
            n += 1
    assert n == 15 and np.isfinite(scores).all()
    # the reference is not the greedy answer: the setting matters on this model
    greedy = metrics.load(f"dsg:{folder}?mapper=lexical&decoding=greedy", device="cpu")
    assert greedy.decoding is GREEDY and "decoding" not in greedy.config
    with generation_margins(context="InstructBLIP greedy"):
        _, gdet = greedy.score_with_details(images[:1], [PROMPT])
    assert [r["answer"] for r in gdet[0]] != [r["answer"] for r in details[0]]


def test_decoding_option_is_checked():
    with pytest.raises(InputError, match="decoding must be one of dsg, greedy"):
        metrics.load(f"dsg:{tiny('instructblip')}?mapper=lexical&decoding=beam", device="cpu")
    with pytest.raises(InputError, match="decoding=dsg .* applies to instructblip models, not 'llava'"):
        metrics.load(f"dsg:{tiny('llava')}?mapper=lexical&decoding=dsg", device="cpu")
    # another model family keeps ts2viz's greedy decoding
    assert metrics.load(f"dsg:{tiny('llava')}?mapper=lexical", device="cpu").decoding is GREEDY
    assert set(DECODINGS) == {"dsg", "greedy"}


def test_generate_kwargs_follow_transformers_431_lengths():
    kw = DSG_INSTRUCTBLIP.generate_kwargs(encoder_decoder=False, max_new_tokens=10)
    assert kw == dict(do_sample=False, num_beams=5, max_new_tokens=256, min_new_tokens=1, repetition_penalty=1.5,
                      length_penalty=1.0)
    # an encoder-decoder (InstructBLIP Flan-T5) counts decoder tokens in both versions
    kw = DSG_INSTRUCTBLIP.generate_kwargs(encoder_decoder=True, max_new_tokens=10)
    assert kw["max_length"] == 256 and kw["min_length"] == 1 and "max_new_tokens" not in kw


ANSWERS = ["yes", "Yes.", "Yes", "yes, it is", "no", "No", "Yesterday", "eyes", "", " yes", None]
EXACT = [True, False, False, False, False, False, False, False, False, False, False]
CONTAINS = [True, True, True, True, False, False, True, True, False, True, False]


def test_yes_rules_on_hand_written_answers():
    assert YES_RULES == ("exact", "contains")
    assert [reads_yes(a, "exact") for a in ANSWERS] == EXACT
    assert [reads_yes(a, "contains") for a in ANSWERS] == CONTAINS
    assert is_yes(ANSWERS, "exact").tolist() == EXACT and is_yes(ANSWERS, "contains").tolist() == CONTAINS
    assert yes_no_choice("Yes.", ["Yes", "No"], "contains") == "Yes"
    assert yes_no_choice("Yes.", ["Yes", "No"], "exact") == "No"
    with pytest.raises(InputError, match="unknown yes rule 'fuzzy'"):
        reads_yes("yes", "fuzzy")


@pytest.mark.parametrize("rule", YES_RULES)
def test_live_and_released_answers_agree(rule):
    # one image, DSG questions 1..5 with parents; the same answers read live and as a released table
    parents = {1: (), 2: (), 3: (1,), 4: (3,), 5: (1, 2)}
    answers = ["yes", "Yes.", "yes, it is", "no", "Yesterday"]
    live = map_answers(answers, [("yes", "no")] * 5, load_mapper("lexical"), rule)
    correct = {q: c == "yes" for q, c in zip(parents, live)}
    released = pd.DataFrame({"vqa_model": "m", "question_set": "dsg", "image_id": "im", "question_id": list(parents),
                             "parents": [",".join(map(str, p)) or "0" for p in parents.values()], "answer": answers})
    for acc in ("direct", "transitive", "mean"):
        want = question_scores(released, acc, yes_rule=rule).tolist()
        assert list(dsg_counted(correct, parents, acc).values()) == want
    assert [c == "yes" for c in live] == (EXACT if rule == "exact" else CONTAINS)[:1] + \
        [reads_yes(a, rule) for a in answers[1:]]


def test_yes_rule_option():
    folder = tiny("instructblip")
    m = metrics.load(f"dsg:{folder}?mapper=lexical&yes_rule=contains", device="cpu")
    assert m.yes_rule == "contains" and m.config["yes_rule"] == "contains"
    assert metrics.load(f"dsg:{folder}?mapper=lexical", device="cpu").config["yes_rule"] == "exact"
    with pytest.raises(InputError, match="yes_rule= applies to dsg only"):
        metrics.load(f"tifa:{folder}?mapper=lexical&yes_rule=exact", device="cpu")
    with pytest.raises(InputError, match="unknown yes rule 'maybe'"):
        metrics.load(f"dsg:{folder}?mapper=lexical&yes_rule=maybe", device="cpu")
