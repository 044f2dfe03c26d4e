"""``dsg:`` on InstructBLIP against DSG's own code (j-min/DSG) under the transformers it pins (4.31).

``tests/fixtures/reference/dsg/expected.json`` was written by ``tools/reference/dsg/make_fixtures.py``:
DSG's ``InstructBLIP.vqa`` (bare question, beam 5, repetition penalty 1.5, ``max_length=256``) and
``calc_vqa_score`` under transformers 4.31, on a tiny random-weight InstructBLIP (LLaMA language model,
SentencePiece tokenizer, BERT Q-Former tokenizer) in the layout ``Salesforce/instructblip-vicuna-7b`` has on
the hub today, for the DSG questions of two TS2 prompts. ts2viz's ``dsg:`` with its defaults for an
InstructBLIP must give the same answers (string for string) and per-image scores.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from margins import generation_margins

from ts2viz import metrics

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "reference" / "dsg"
EXPECTED = json.loads((FIX / "expected.json").read_text())
with open(FIX / "questions.csv", newline="", encoding="utf-8") as _f:
    PROMPTS = {int(r["id"]): r["prompt"] for r in csv.DictReader(_f)}


#: at least this many of the fixture's 18 (image, question) answers must be decided widely and compared
#: (10 on the committed fixture: the other 8 beam searches, which run to 256 tokens, have a near-tie)
MIN_COMPARED = 10


def test_dsg_instructblip_equals_dsgs_code(tmp_path):
    # every DSG question is yes/no: read by the yes rule, never by the mapper (lexical: no model to load)
    results = EXPECTED["results"]
    m = metrics.load(f"dsg:{FIX / EXPECTED['model']}?questions={FIX / 'questions.csv'}&mapper=lexical&dtype=float32",
                     device="cpu")
    scores = m(images=[FIX / r["image"] for r in results], prompts=[PROMPTS[r["seg_id"]] for r in results])
    ours = [[(x["question_id"], x["answer"]) for x in recs] for recs in m.last_details]
    # DSG's code decided these answers by beam search on another machine and transformers; an answer is
    # evidence only where every choice of its beam search is wide (issue 30). The tiny model decides a
    # few of its 18 (image, question) searches on near-ties, and no seed / output-layer / end-token scale
    # tried (seeds 0-29, scales 50-200 / 8-15) gave a fixture whose searches are all wide, whose answers
    # depend on the image and equal ts2viz's. So each question is asked once more on
    # its own (a one-question file; ts2viz groups questions by token length without padding, so an
    # answer does not depend on the others asked with it), inside its own generation_margins block:
    # the answers whose searches are all wide are compared with DSG's, string for string, and an image's
    # score is compared when all its answers are. At least MIN_COMPARED must be.
    rows = list(csv.DictReader(open(FIX / "questions.csv", newline="", encoding="utf-8")))
    one = tmp_path / "one_question_each.csv"
    with open(one, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for k, r in enumerate(rows):
            w.writerow({**r, "id": k, "prompt": f"{r['prompt']} [{r['question_id']}]", "question_id": 0,
                        "parent_question_id": "-1"})
    m1 = metrics.load(f"dsg:{FIX / EXPECTED['model']}?questions={one}&mapper=lexical&dtype=float32", device="cpu")
    compared, narrow = 0, []
    for r, mine in zip(results, ours):
        wide = True
        for (qid, answer), want in zip(mine, r["answers"]):
            assert qid == want["question_id"]
            try:
                with generation_margins(context="DSG's InstructBLIP beam search"):
                    m1(images=[FIX / r["image"]], prompts=[f"{PROMPTS[r['seg_id']]} [{qid}]"])
            except AssertionError as e:
                if not str(e).startswith("ill-conditioned fixture"):
                    raise
                wide = False
                narrow.append((r["image"], qid))
                continue
            alone = m1.last_details[0][0]["answer"]
            assert alone == answer, "an answer depends on the other questions asked with it"
            assert answer == want["answer"], (r["image"], qid)
            compared += 1
        if wide:
            np.testing.assert_allclose(scores[results.index(r)], r["score"], rtol=0, atol=1e-12)
    assert compared >= MIN_COMPARED, f"only {compared} answers decided widely (narrow: {narrow})"


def test_fixture_answers_depend_on_the_image():
    """Two images asked the same questions get different answers from the tiny model (so the test above
    would see images swapped or ignored)."""
    by_seg: dict[int, list] = {}
    for r in EXPECTED["results"]:
        by_seg.setdefault(r["seg_id"], []).append([a["answer"] for a in r["answers"]])
    assert any(len({tuple(a) for a in answers}) > 1 for answers in by_seg.values())
