"""Soft-TIFA and GenEval 2's VQAScore against GenEval 2's own code (reference fixture).

``tests/fixtures/reference/geneval2/`` holds GenEval 2-layout questions (written for the fixture: GenEval 2's data
is CC BY-NC) and what facebookresearch/GenEval2 ``evaluation.py`` (commit a6e82d2) computed with the tiny
Qwen3-VL of the t2v_metrics 3.1 fixture standing in for ``Qwen/Qwen3-VL-8B-Instruct``: per image and prompt the
atoms' summed probabilities (``soft_tifa``) and ``vqa_score``, and what ``main()`` printed for three methods.
Made by ``tools/reference/geneval2/make_fixture.py`` in a side venv (transformers 4.57.3). Tolerance 1e-4
relative, as the other VQA fixtures. No score depends on an argmax (GenEval 2's Soft-TIFA reads probabilities).
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from reference_compare import FIXTURES, check_close, compare_geneval2_vqascore, compare_softtifa

from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metrics.families.softtifa import answer_spellings


@pytest.mark.parametrize("mean", ["gm", "am"])
def test_softtifa_equals_geneval2_per_image(mean):
    m, _ = compare_softtifa(mean)
    assert m.config["family"] == "softtifa" and m.config["question_format"] == "geneval2"
    # the count atom beyond ten is scored with GenEval 2's 'other' spellings, as its code does
    eleven = [a for d in m.last_details for a in d if a["answer"] == "eleven"][0]
    assert eleven["spellings"][-2:] == ["other", " other"]


def test_benchmark_total_equals_geneval2_main():
    exp = json.loads((FIXTURES / "geneval2" / "expected.json").read_text())
    main = exp["main"]
    root = FIXTURES / "geneval2"
    prompts = list(main["images"])
    images = [str(FIXTURES / "vqascore" / main["images"][p]) for p in prompts]
    for method, spec in (("soft_tifa_gm", "softtifa:{c}?questions={q}&mean=gm"),
                         ("soft_tifa_am", "softtifa:{c}?questions={q}&mean=am"), ("vqascore", "vqascore:{c}?recipe=geneval2")):
        m = metrics.load(spec.format(c=root / exp["checkpoint"], q=root / exp["questions"]), device="cpu",
                         dtype="float32")
        got = m(images, prompts)
        check_close([100 * float(np.mean(got))], [main[method]["printed"]], f"geneval2 main {method}")


def test_geneval2_vqascore_equals_its_vqa_score():
    m, _ = compare_geneval2_vqascore()
    assert m.config["recipe"] == "geneval2" and "t2v_metrics" not in m.config


def test_spellings_are_geneval2s():
    assert answer_spellings("How many dogs?", "one") == ("one", "One", " one", " One", "1", " 1")
    assert answer_spellings("Are there dogs?", "No") == ("Yes", "yes", " yes", " Yes")


def test_a_bad_question_file_fails_in_one_line(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"prompt": "a cat", "vqa_list": [["Is there a cat?", "Yes"]]}\n{"prompt": "x"}\n')
    ckpt = FIXTURES / "vqascore" / "qwen3-vl-3.1" / "qwen3-vl-tiny"
    with pytest.raises(InputError, match=r"q.jsonl: line 2: expected a JSON object with 'prompt' and 'vqa_list'"):
        metrics.load(f"softtifa:{ckpt}?questions={bad}", device="cpu")
    with pytest.raises(InputError, match="mean must be one of gm, am"):
        metrics.load(f"softtifa:{ckpt}?questions={FIXTURES / 'geneval2' / 'questions.jsonl'}&mean=hm", device="cpu")
