"""Real VLMs' recorded answers through the live ``tifa:`` and ``dsg:`` answer-reading paths.

The TS2 release recorded the free-form answers of six VLMs (BLIP1, InstructBLIP, LLaVA-1.5, LLaVA-1.5 with
the "alt" system prompt, mPLUG-Owl, Fuyu) to every TIFA and DSG question of every TS2 image
(``data/ts2/qa_answers.parquet``, MIT, see ``data/ts2/LICENSE``). Here those answers are handed to a loaded
metric's :meth:`score_answers`, the method a live model's answers go through after decoding, and what it
maps and scores is checked against each original's rule:

* DSG's rules (``exact``: DSG's InstructBLIP path; ``chat``: DSG's ``GPT4o.vqa`` reading) written out here
  from j-min/DSG, and DSG's own ``calc_vqa_score`` run on the same answers by
  ``tools/reference/dsg/recorded_answers.py`` (``tests/fixtures/reference/dsg/recorded_scores.csv.gz``);
* TS2's rule (``contains``: yes when the answer contains "yes", for questions with fewer than three
  choices) against the release's own per-question files (the bundle's ``mc_answer`` column);
* TIFA's rule (``VQAModel.multiple_choice_vqa``: an answer that is one of the choices is taken as is, any
  other goes to Sentence-BERT; correct when the mapped choice ``==`` the expected answer).

The VQA model of the metrics is never called (the answers are given); the Sentence-BERT of ``tifa:`` is
the tiny one of the TIFA fixture, so only what TIFA's rule decides without a model is compared choice by
choice.
"""
from __future__ import annotations

import functools
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ts2viz import metrics

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "reference"
VLMS = ["BLIP1", "InstructBLIP", "LLaVA-1.5", "LLaVA-1.5-alt", "mPLUG", "Fuyu"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The tiny models here run thousands of small batches: one torch thread is faster than many (and keeps
    this module's speed independent of the machine's load)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def recorded() -> pd.DataFrame:
    data = pd.read_parquet(ROOT / "data" / "ts2" / "qa_answers.parquet")
    # each image's questions are its SEG's (a few images' metadata prompt is another SEG's): the prompt that
    # keys them is the question file's prompt of the image's SEG
    seg_prompt = {}
    for kind, name in (("TIFA", "TS2_TIFA_Q.csv"), ("DSG", "TS2_DSG_Q_dependency.csv")):
        q = pd.read_csv(ROOT / "data" / "ts2" / name, dtype=str, keep_default_na=False)
        seg_prompt.update({(kind, int(i)): p for i, p in zip(q.id, q.prompt)})
    kind = data.metric.astype(str).str.split("-").str[0]
    data["prompt"] = [seg_prompt[(k, int(s))] for k, s in zip(kind, data.seg_id)]
    for c in ("metric", "file_name", "answer", "choices", "expected", "mc_answer"):
        data[c] = data[c].astype(str)
    return data


@functools.lru_cache(maxsize=None)
def _metric(kind: str, options: str = ""):
    """A loaded metric (once per module and options): its VQA model is never called here."""
    blip = FIX / "tifa" / "tiny-blip-vqa"
    # DSG's questions are all yes/no, read by the yes rule: no Sentence-BERT to load
    mapper = f"sbert:{FIX / 'tifa' / 'tiny-mpnet'}" if kind == "tifa" else "lexical"
    return metrics.load(f"{kind}:{blip}?mapper={mapper}&dtype=float32{options}", device="cpu")


def _score(metric, rows: pd.DataFrame):
    """Per image of ``rows`` (one metric): the live scores and records, answers aligned by question id."""
    images = list(dict.fromkeys(rows.file_name))
    by_image: dict = {}
    for fn, q, a in zip(rows.file_name, rows.question_id, rows.answer):
        by_image.setdefault(fn, {})[int(q)] = a
    prompt = dict(zip(rows.file_name, rows.prompt))
    prompts = [prompt[fn] for fn in images]
    answers = [[by_image[fn][q.id] for q in metric.source.get(prompt[fn])] for fn in images]
    scores = metric.score_answers(prompts, answers)
    return images, scores, metric.last_details


# -- DSG ------------------------------------------------------------------------------------------------

def dsg_exact(answer: str) -> bool:
    """j-min/DSG calc_vqa_score: float(answer == 'yes') on the decoded, stripped answer."""
    return answer == "yes"


def dsg_chat(answer: str) -> bool:
    """j-min/DSG GPT4o.vqa: lower(), strip(), '.', ',', '?', '!' removed; then calc_vqa_score's == 'yes'."""
    a = answer.lower().strip()
    a = a.replace(".", "").replace(",", "").replace("?", "").replace("!", "")
    return a == "yes"


def ts2_contains(answer: str) -> bool:
    """TS2's freeform_to_multiple_choice: 'yes' in the lower-cased answer."""
    return "yes" in answer.lower()


RULES = {"exact": dsg_exact, "chat": dsg_chat, "contains": ts2_contains}
#: share of recorded DSG answers each rule reads as yes (module docstring of ts2viz.qa.mapping), in %
YES_SHARES = {"BLIP1": (58.0, 58.0, 58.0), "InstructBLIP": (52.7, 52.7, 56.8), "LLaVA-1.5": (0.0, 38.9, 52.7),
              "LLaVA-1.5-alt": (0.0, 0.0, 60.2), "mPLUG": (0.0, 0.0, 65.8), "Fuyu": (9.2, 14.0, 54.7)}


@pytest.fixture(scope="module")
def dsg_reference() -> pd.DataFrame:
    with gzip.open(FIX / "dsg" / "recorded_scores.csv.gz", "rt") as f:
        return pd.read_csv(f, dtype={"instructblip": float, "chat": float}).set_index(["metric", "file_name"])


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("vlm", VLMS)
def test_dsg_yes_rules_on_recorded_answers(recorded, dsg_reference, vlm, rule):
    rows = recorded[recorded.metric == f"DSG-{vlm}"]
    metric = _metric("dsg", f"&yes_rule={rule}")
    images, scores, details = _score(metric, rows)
    recs = [r for d in details for r in d]
    assert len(recs) == len(rows) == 17114
    want = np.array([RULES[rule](r["answer"]) for r in recs])
    got = np.array([r["mapped"] == "yes" for r in recs])
    np.testing.assert_array_equal(got, want)
    assert round(100 * got.mean(), 1) == YES_SHARES[vlm][list(RULES).index(rule)]
    if rule == "contains":   # TS2's rule: the release's own per-question files
        mc = dict(zip(zip(rows.file_name, rows.question_id.astype(int)), rows.mc_answer))
        released = [mc[(fn, r["question_id"])] for fn, d in zip(images, details) for r in d]
        assert [r["mapped"] for r in recs] == released
    else:                    # DSG's own calc_vqa_score (and GPT4o.vqa's reading) on the same answers
        column = "instructblip" if rule == "exact" else "chat"
        ref = dsg_reference.loc[f"DSG-{vlm}"].loc[images, column].to_numpy()
        np.testing.assert_allclose(scores, ref, rtol=0, atol=1e-12)   # ratios of small integers


def test_dsg_reference_scores_differ_between_rules(dsg_reference):
    """The fixture is not degenerate: the two DSG rules give different scores where the answers say so."""
    ref = dsg_reference
    # the chat reading ("Yes." is yes) raises LLaVA-1.5's scores on most images and Fuyu's on a few
    # (90 of its 2,840 images); it never lowers one
    for vlm, at_least in (("LLaVA-1.5", 0.5), ("Fuyu", 0.02)):
        sub = ref.loc[f"DSG-{vlm}"]
        assert (sub.chat > sub.instructblip).mean() > at_least
        assert not (sub.chat < sub.instructblip).any()
    assert (ref.loc["DSG-BLIP1"].chat == ref.loc["DSG-BLIP1"].instructblip).all()


# -- TIFA -----------------------------------------------------------------------------------------------

def _tifa_rows(recorded, vlm):
    """The TIFA answers of every fourth SEG (41 of 165, all three partitions): the tiny Sentence-BERT maps
    thousands of free-form answers, and a quarter of the images keeps this module fast."""
    rows = recorded[recorded.metric == f"TIFA-{vlm}"]
    return rows[rows.seg_id % 4 == 0]


@pytest.mark.parametrize("vlm", VLMS)
def test_tifa_rule_on_recorded_answers(recorded, vlm):
    """TIFA's rule: an answer that is a choice is taken; correct means mapped == expected (no normalising)."""
    rows = _tifa_rows(recorded, vlm)
    metric = _metric("tifa")
    images, scores, details = _score(metric, rows)
    n_taken = 0
    for image_recs, score in zip(details, scores):
        for r in image_recs:
            choices = r["choices"]
            assert r["mapped"] in choices
            if r["answer"] in choices:            # TIFA: `if free_form_answer not in choices: sbert(...)`
                assert r["mapped"] == r["answer"]
                n_taken += 1
            assert r["correct"] == (r["mapped"] == r["expected"])     # TIFA: int(mc_answer == answer)
        assert score == pytest.approx(np.mean([r["correct"] for r in image_recs]), abs=1e-12)
    share = n_taken / len(rows)
    assert {"BLIP1": 0.7, "InstructBLIP": 0.7}.get(vlm, 0.0) <= share


@pytest.mark.parametrize("vlm", VLMS)
def test_tifa_ts2_rule_matches_release(recorded, vlm):
    """``mapper_rule=ts2``: yes/no (fewer than three choices) by "contains yes", as the release's files say."""
    rows = _tifa_rows(recorded, vlm)
    metric = _metric("tifa", "&mapper_rule=ts2")
    images, _, details = _score(metric, rows)
    mc = dict(zip(zip(rows.file_name, rows.question_id.astype(int)), rows.mc_answer))
    n = 0
    for fn, image_recs in zip(images, details):
        for r in image_recs:
            if len(r["choices"]) < 3:
                assert r["mapped"] == mc[(fn, r["question_id"])] == ("yes" if ts2_contains(r["answer"]) else "no")
                n += 1
    assert n == int((rows.choices.str.count(r"\|") < 2).sum()) > 2000
