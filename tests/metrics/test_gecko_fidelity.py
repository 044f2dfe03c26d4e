"""Gecko (Wiles et al.; no released metric code): the paper reuses TIFA's question generation, so the
default QA step writes TIFA-style multiple-choice as well as yes/no questions, and Eq. 2 normalises each
question's answer likelihood over its own choices. The likelihoods are recomputed here with a plain
forward pass of the tiny PaliGemma (the processor's own prefix/suffix path), not with ts2viz's code."""
from __future__ import annotations

import numpy as np
import pytest

from llm_server import serving_chat
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metrics.families.gecko.questions import QA_SYSTEM, QA_SYSTEM_TIFA
from ts2viz.metrics.backbones.vqa.model import surface_forms

PROMPT = "a red cat on the tree"
COVERAGE = "a {1}[red, color, 1.0] {2}[cat, entity, 1.0] {3}[on, spatial, 0.9] the {4}[tree, entity, 1.0]"
QA_MC = ("About {1}[red] (color):\nQ: What color is the cat?\nChoices: red, blue, green\nA: red\n"
         "About {2}[cat] (entity):\nQ: Is there a cat?\nChoices: yes, no\nA: yes\n"
         "About {3}[on] (spatial):\nQ: Is the cat on the tree?\nChoices: yes, no\nA: yes\n"
         "About {4}[tree] (entity):\nQ: What is the cat on?\nChoices: tree, dog, lights\nA: tree\n")


def choice_likelihood(folder, image, question: str, choice: str) -> float:
    """Sum over the choice's spellings (as written, lower case, capitalised; distinct token sequences)
    of the product of next-token probabilities of its tokens and of the EOS that ends PaliGemma's answers
    (the processor's suffix), after PaliGemma's prompt: each choice a whole answer, so that choices which
    are prefixes of each other are exclusive."""
    import torch
    from transformers import AutoProcessor, PaliGemmaForConditionalGeneration

    model = PaliGemmaForConditionalGeneration.from_pretrained(folder).eval()
    proc = AutoProcessor.from_pretrained(folder)
    total, seen = 0.0, set()
    for form in dict.fromkeys([choice, choice.lower(), choice[:1].upper() + choice[1:]]):
        ids = tuple(proc.tokenizer.encode(form, add_special_tokens=False))
        if not ids or ids in seen:
            continue
        seen.add(ids)
        enc = proc(images=[image], text=[f"<image>answer en {question}"], suffix=[form], return_tensors="pt")
        enc.pop("labels")
        n = enc["input_ids"].shape[1]
        # the suffix is the choice's tokens then EOS: the choice starts len(ids) + 1 from the end
        start = n - len(ids) - 1
        assert enc["input_ids"][0, start:start + len(ids)].tolist() == list(ids)
        with torch.no_grad():
            logp = torch.log_softmax(model(**enc).logits[0].double(), -1)
        target = enc["input_ids"][0, start:start + len(ids) + 1].tolist()  # the choice's tokens, then EOS
        assert target[-1] == proc.tokenizer.eos_token_id
        total += float(np.exp(sum(logp[start + t - 1, target[t]].item() for t in range(len(target)))))
    return total


def test_gecko_asks_tifa_style_multiple_choice_and_normalises_over_the_choices(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    systems = []

    def answer(body, headers):
        system = body["messages"][0]["content"]
        systems.append(system)
        return COVERAGE if "visually groundable" in system else QA_MC

    image = Image.fromarray(np.random.default_rng(3).integers(0, 255, (40, 48, 3), dtype=np.uint8))
    folder = str(tiny("paligemma"))
    with serving_chat(answer) as url:
        m = metrics.load(f"gecko:{folder}?generator={url}&generator_model=canned&nli=none", device="cpu")
        score = m(images=[image], prompts=[PROMPT])[0]
        yn = metrics.load(f"gecko:{folder}?generator={url}&generator_model=canned&nli=none&question_style=yes_no",
                          device="cpu")
        yn.questions.get(PROMPT)
        with pytest.raises(InputError, match="question_style must be one of"):
            metrics.load(f"gecko:{folder}?generator={url}&nli=none&question_style=dsg", device="cpu")
    assert systems[1] == QA_SYSTEM_TIFA and systems[-1] == QA_SYSTEM      # the QA step's few-shot prompt
    assert m.config["prompts"] != yn.config["prompts"]
    recs = m.last_details[0]["questions"]
    assert [len(r["choices"]) for r in recs] == [3, 2, 2, 3]
    want = []
    for r in recs:
        p = [choice_likelihood(folder, image, r["question"], c) for c in r["choices"]]
        np.testing.assert_allclose([r["probabilities"][c] for c in r["choices"]], p, rtol=1e-5)
        want.append(p[r["choices"].index(r["expected"])] / sum(p))   # Eq. 2 over the question's own choices
        assert r["normalized"] == pytest.approx(want[-1], abs=1e-6)
    assert score == pytest.approx(np.mean(want), abs=1e-6)
    assert surface_forms("red") == ["red", "Red"]
