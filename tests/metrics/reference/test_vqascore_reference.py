"""VQAScore, ITMScore and ITCScore against t2v_metrics 3.0's own code (reference fixtures).

``tests/fixtures/reference/vqascore/<model>/`` holds a tiny random-weight checkpoint in the released layout
and the per-image scores t2v_metrics 3.0's own ``forward`` gave on it (made in a side venv by
``tools/reference/t2v_metrics/make_fixtures.py``; versions and every change needed to run offline are in
each ``provenance.json``). ts2viz loads the same folder and must give the same score for every image and
prompt, in float32 on the CPU.

Tolerance: 1e-4 relative. Both sides compute in float32 on the CPU with different transformers versions
(4.49 there, this project's pin here) and different operation orders (t2v_metrics scores one pair per call,
ts2viz pads a batch of four); the observed differences are below 1e-5. A different prompt, answer token,
end-of-sequence handling, image preprocessing or softmax changes the scores by far more than 1e-4 (the
images alone move them by 1 % to 10 %).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from reference_compare import VQA_CASES, compare_itm, compare_vqascore

from ts2viz import metrics

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "reference" / "vqascore"
RTOL = 1e-4


def expected(name: str) -> dict:
    return json.loads((FIX / name / "expected.json").read_text())


@pytest.mark.parametrize("name", list(VQA_CASES))
def test_vqascore_equals_t2v_metrics_per_image(name):
    got, m, _ = compare_vqascore(name)
    # the recipe ts2viz chose by the architecture is named in the config (part of the cache key)
    assert m.config["recipe"] == VQA_CASES[name][1] and m.config["dtype"] == "float32"
    # per image, the details hold the answer likelihood (the score)
    assert [d["answer_likelihood"] for d in m.last_details] == list(got)


@pytest.mark.parametrize("family", ["itmscore", "itcscore"])
def test_itm_and_itc_equal_t2v_metrics_per_image(family):
    compare_itm(family)


# -- GPT-4o through top log-probabilities, against a local endpoint -------------------------------------------

def _replay(exp: dict):
    """The endpoint the fixture's replies came from: per (question, image URL) its top log-probabilities,
    after ``fail_first`` HTTP 500 answers."""
    from llm_server import logprob_reply

    cases = {}
    for row in exp["pairs"]:
        url = "data:image/png;base64," + base64.b64encode((FIX / row["image"]).read_bytes()).decode()
        cases[hashlib.sha256((row["question"] + "\0" + url).encode()).hexdigest()] = row
    seen: dict[str, int] = {}

    def reply(body, n):
        content = body["messages"][0]["content"]
        k = hashlib.sha256((content[0]["text"] + "\0" + content[1]["image_url"]["url"]).encode()).hexdigest()
        row = cases[k]
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= row["fail_first"]:
            return 500, {"error": {"message": "try again"}}
        return 200, logprob_reply(body["model"], [tuple(t) for t in row["top_logprobs"]], prompt_tokens=100)

    return reply


def test_api_vqascore_equals_t2v_metrics_against_a_local_endpoint(tmp_path, monkeypatch):
    from llm_server import logprob_server

    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    exp = expected("gpt-4o")
    images = [str(FIX / p["image"]) for p in exp["pairs"]]
    prompts = [p["prompt"] for p in exp["pairs"]]
    with logprob_server(_replay(exp)) as (url, bodies):
        m = metrics.load(f"vqascore:gpt-4o?endpoint={url}&retry_wait=0", device="cpu")
        got = m(images, prompts)
        # the request is t2v_metrics' own: one user message, the question, then the image file's bytes
        assert sorted(bodies[0]) == exp["request_keys"]
        assert {k: v for k, v in bodies[0].items() if k != "messages"} == \
            {k: v for k, v in exp["request"].items() if k != "messages"}
        for body, row in zip(bodies, exp["pairs"]):
            content = body["messages"][0]["content"]
            assert [c["type"] for c in content] == ["text", "image_url"]
        n_first = len(bodies)
        again = metrics.load(f"vqascore:gpt-4o?endpoint={url}&retry_wait=0", device="cpu")(images, prompts)
        assert len(bodies) - n_first == 3  # cached replies are not asked again; the failed pair is (3 tries)
    want = np.array([p["score"] for p in exp["pairs"]])
    failed = np.array([p["fail_first"] >= p["attempts"] for p in exp["pairs"]])
    assert failed.sum() == 1
    # every answered pair as t2v_metrics reads the top log-probabilities (its float32 exp: 1e-6)
    np.testing.assert_allclose(got[~failed], want[~failed], rtol=1e-6, atol=1e-7)
    # where t2v_metrics returns 0.0 after failing twice, ts2viz retries and gives NaN, never a made-up score
    assert want[failed][0] == 0.0 and np.isnan(got[failed]).all() and np.isnan(again[failed]).all()
    np.testing.assert_array_equal(again[~failed], got[~failed])
    # cost accounting: requests and tokens, as the endpoint reported them
    usage = m.usage
    assert usage["requests"] == n_first and usage["answered"] == int((~failed).sum())
    assert usage["prompt_tokens"] == 100 * int((~failed).sum()) and usage["cached"] == 0
    # per-image details: the answer likelihood and the top log-probabilities it was read from
    d = m.last_details[0]
    assert math.isclose(d["answer_likelihood"], want[0], rel_tol=1e-6) and d["top_logprobs"][0][0] == "Yes"
