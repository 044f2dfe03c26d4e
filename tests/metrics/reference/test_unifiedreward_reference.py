"""UnifiedReward 2.0 against the authors' own request code (``tests/fixtures/reference/judges/unifiedreward``).

The fixture was made by ``tools/reference/judges/unifiedreward.py``: the authors' point-score script
(CodeGoat24/UnifiedReward ``inference_qwen/UnifiedReward-2.0-inference/point_score_ACS_image_generation.py``,
through ``vllm_qwen/vllm_request.py``'s ``VLMessageClient``) run from their checkout in a side venv against a
local endpoint that replied recorded texts. ts2viz must send the very same request bodies (the image's JPEG
bytes included) and read from each reply the scores the reply states (written with the reply in the fixture,
since the authors' script has no parser).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_compare import compare_unifiedreward

from ts2viz.metrics.families.unifiedreward import parse_reply

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "reference" / "judges"


def test_unifiedreward_request_and_reply_equal_the_authors_client():
    m, bodies = compare_unifiedreward("alignment", retries=0)
    exp = json.loads((FIX / "unifiedreward" / "expected.json").read_text())
    assert len(bodies) == len(exp["cases"])          # one request per image, no retry with retries=0
    body = bodies[0]
    assert {k: v for k, v in body.items() if k != "messages"} == {"model": "UnifiedReward", "do_sample": False,
                                                                  "max_tokens": 4096}
    assert [c["type"] for c in body["messages"][0]["content"]] == ["image_url", "text"]
    assert m.config["judge"]["jpeg_quality"] == 95 and m.config["judge"]["image_first"] is True


@pytest.mark.parametrize("axis", ["alignment", "coherence", "style"])
def test_unifiedreward_reads_the_three_lines_of_each_reply(axis):
    m, _ = compare_unifiedreward(axis, retries=0)
    d = m.last_details
    assert [x["parsed"] for x in d] == [x[f"{axis}_score"] is not None for x in d]
    assert m.unparsed == sum(not x["parsed"] for x in d) > 0


def test_unifiedreward_asks_an_unreadable_reply_once_more_when_the_judge_samples():
    exp = json.loads((FIX / "unifiedreward" / "expected.json").read_text())
    unreadable = sum(c["scores"]["alignment"] is None for c in exp["cases"])
    m, bodies = compare_unifiedreward("alignment", retries=1)
    assert len(bodies) == len(exp["cases"]) + unreadable
    assert [x["tries"] for x in m.last_details] == [1 + (c["scores"]["alignment"] is None) for c in exp["cases"]]


def test_unifiedreward_parse_edge_cases():
    assert parse_reply("Alignment Score (1-5): **3**")["alignment"] == 3.0
    assert parse_reply("Alignment Score (1-5): -\nStyle Score (1-5): 2") == {"alignment": None, "coherence": None,
                                                                             "style": 2.0}
    assert parse_reply(None) == {"alignment": None, "coherence": None, "style": None}
