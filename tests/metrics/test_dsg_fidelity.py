"""DSG's options and rules: how each kind of VQA model is asked and read, the yes rules, the decodings.

That ``dsg:`` decodes and scores as DSG's own code is proven against DSG's code itself in
``tests/metrics/reference/`` (``test_dsg_reference.py``: InstructBLIP under transformers 4.31;
``test_recorded_answers.py``: ``calc_vqa_score`` and ``GPT4o.vqa``'s reading on six real VLMs' answers).
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
from ts2viz.metrics.common.decoding import GREEDY
from ts2viz.metrics.families.dsg.decoding import DSG_INSTRUCTBLIP
from ts2viz.metrics.registry import decoding_presets
from ts2viz.metrics.backbones.sbert import load_mapper
from ts2viz.qa.mapping import YES_RULES, is_yes, reads_yes, yes_no_choice
from ts2viz.metrics.qametric.metric import map_answers

PROMPT = "A Christmas tree with lights and teddy bear"   # a TS2 prompt: its DSG questions are bundled


def _images(n=3, seed=0):
    from PIL import Image

    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 255, size=(36 + 6 * k, 44, 3), dtype=np.uint8)) for k in range(n)]


def test_dsg_asks_and_reads_each_kind_of_model_as_dsgs_code():
    """InstructBLIP: DSG's InstructBLIP path (its decoding, exact yes; equal to DSG's own code under
    transformers 4.31: tests/metrics/reference/test_dsg_reference.py); a chat VLM: DSG's GPT4o path (its
    instruction, 20 tokens, the chat reading); BLIP-VQA: the bare question read exactly."""
    m = metrics.load(f"dsg:{tiny('instructblip')}?mapper=lexical", device="cpu")
    assert m.decoding is DSG_INSTRUCTBLIP and m.list_choices is False and m.yes_rule == "exact"
    assert m.config["decoding"] == "dsg" and m.config["decoding_arguments"]["num_beams"] == 5
    images = _images(1)
    with generation_margins(context="InstructBLIP beam search"):      # the answers below differ by wide margins
        _, details = m.score_with_details(images, [PROMPT])
    # the reference is not the greedy answer: the setting matters on this model
    greedy = metrics.load(f"dsg:{tiny('instructblip')}?mapper=lexical&decoding=greedy", device="cpu")
    assert greedy.decoding is GREEDY and "decoding" not in greedy.config
    with generation_margins(context="InstructBLIP greedy"):
        _, gdet = greedy.score_with_details(images, [PROMPT])
    assert [r["answer"] for r in gdet[0]] != [r["answer"] for r in details[0]]
    chat = metrics.load(f"dsg:{tiny('llava')}?mapper=lexical", device="cpu")
    assert (chat.decoding is GREEDY and chat.yes_rule == "chat" and chat.prompt_style == "dsg_chat"
            and chat.max_new_tokens == 20 and chat.list_choices is False)
    q = chat.source.get(PROMPT)[0]
    assert chat.ask(q) == ("Answer only with 'yes' or 'no'. Do not give other outputs or punctuation marks. "
                           f"Question: {q.text}")
    blip = metrics.load(f"dsg:{tiny('blip')}?mapper=lexical", device="cpu")
    assert blip.yes_rule == "exact" and blip.ask(q) == q.text
    # each part is an option
    own = metrics.load(f"dsg:{tiny('llava')}?mapper=lexical&yes_rule=contains&prompt_style=default"
                       "&max_new_tokens=10", device="cpu")
    assert own.yes_rule == "contains" and own.prompt_style == "default" and own.max_new_tokens == 10


def test_decoding_option_is_checked():
    with pytest.raises(InputError, match="decoding must be one of tifa, dsg, greedy"):
        metrics.load(f"dsg:{tiny('instructblip')}?mapper=lexical&decoding=beam", device="cpu")
    with pytest.raises(InputError, match="decoding=dsg .* applies to instructblip models, not 'llava'"):
        metrics.load(f"dsg:{tiny('llava')}?mapper=lexical&decoding=dsg", device="cpu")
    # another model family keeps ts2viz's greedy decoding
    assert metrics.load(f"dsg:{tiny('llava')}?mapper=lexical", device="cpu").decoding is GREEDY
    # the named settings are the families' own (each family's decoding.py), by model type
    assert {n: set(t) for n, t in decoding_presets().items()} == {"dsg": {"instructblip"},
                                                                  "tifa": {"blip", "git", "blip-2"}}


def test_generate_kwargs_follow_transformers_431_lengths():
    kw = DSG_INSTRUCTBLIP.generate_kwargs(encoder_decoder=False, max_new_tokens=10)
    assert kw == dict(do_sample=False, num_beams=5, max_new_tokens=256, min_new_tokens=1, repetition_penalty=1.5,
                      length_penalty=1.0)
    # an encoder-decoder (InstructBLIP Flan-T5) counts decoder tokens in both versions
    kw = DSG_INSTRUCTBLIP.generate_kwargs(encoder_decoder=True, max_new_tokens=10)
    assert kw["max_length"] == 256 and kw["min_length"] == 1 and "max_new_tokens" not in kw


ANSWERS = ["yes", "Yes.", "Yes", "yes, it is", "no", "No", "Yesterday", "eyes", "", " yes", None, " YES!", "yes ."]
EXACT = [True, False, False, False, False, False, False, False, False, False, False, False, False]
# DSG's GPT4o.vqa: lower(), strip(), '.', ',', '?', '!' removed (no second strip: "yes ." stays "yes ")
CHAT = [True, True, True, False, False, False, False, False, False, True, False, True, False]
CONTAINS = [True, True, True, True, False, False, True, True, False, True, False, True, True]


def test_yes_rules_on_hand_written_answers():
    assert YES_RULES == ("exact", "chat", "contains")
    assert [reads_yes(a, "exact") for a in ANSWERS] == EXACT
    assert [reads_yes(a, "chat") for a in ANSWERS] == CHAT
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
    assert [c == "yes" for c in live] == [reads_yes(a, rule) for a in answers]


def test_yes_rule_option():
    folder = tiny("instructblip")
    m = metrics.load(f"dsg:{folder}?mapper=lexical&yes_rule=contains", device="cpu")
    assert m.yes_rule == "contains" and m.config["yes_rule"] == "contains"
    assert metrics.load(f"dsg:{folder}?mapper=lexical", device="cpu").config["yes_rule"] == "exact"
    with pytest.raises(InputError, match="yes_rule= applies to dsg only"):
        metrics.load(f"tifa:{folder}?mapper=lexical&yes_rule=exact", device="cpu")
    with pytest.raises(InputError, match="unknown yes rule 'maybe'"):
        metrics.load(f"dsg:{folder}?mapper=lexical&yes_rule=maybe", device="cpu")
