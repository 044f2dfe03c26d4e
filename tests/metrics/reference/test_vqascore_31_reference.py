"""VQAScore's ``recipe=t2v_metrics-3.1`` against t2v_metrics 3.1's own code (reference fixtures).

``tests/fixtures/reference/vqascore/<model>-3.1/`` holds a tiny random-weight checkpoint in the released layout
and the per-image scores t2v_metrics 3.1's own ``forward`` (linzhiqiu/t2v_metrics
commit 6ecb74f, from a checkout) gave on it for three sets of options: its defaults, ``temperature=2.0``, and
``max_new_tokens=3`` with the two-token answer ``Yes yes`` (scored at the end of generation). Made in a side venv
by ``tools/reference/t2v_metrics_3_1/make_fixtures.py``. Tolerance as the 3.0 fixtures' (1e-4 relative).
"""
from __future__ import annotations

import pytest
from reference_compare import VQA31_CASES, compare_vqascore_31

from ts2viz import metrics
from ts2viz.errors import InputError

CASES = [(n, c) for n in VQA31_CASES for c in ("defaults", "temperature", "end_tokens")]


@pytest.mark.parametrize("name,case", CASES)
def test_vqascore_31_equals_t2v_metrics_31_per_image(name, case):
    got, m, _ = compare_vqascore_31(name, case)
    assert m.config["recipe"] == VQA31_CASES[name][1] and m.config["t2v_metrics"] == "t2v_metrics-3.1"
    assert m.config["question_template"] == 'Does this figure show "{}"? Please answer Yes or No.'
    assert [d["answer_likelihood"] for d in m.last_details] == list(got)


def test_the_release_is_recorded_and_3_0_stays_the_default():
    from reference_compare import FIXTURES

    ckpt = FIXTURES / "vqascore" / "qwen2.5-vl-3.1" / "qwen2.5-vl-tiny"
    m = metrics.load(f"vqascore:{ckpt}", device="cpu", dtype="float32")
    assert m.config["recipe"] == "qwen2-vl" and m.config["t2v_metrics"] == "t2v_metrics-3.0"
    m31 = metrics.load(f"vqascore:{ckpt}?recipe=t2v_metrics-3.1&temperature=2", device="cpu", dtype="float32")
    assert m31.config["t2v_metrics"] == "t2v_metrics-3.1" and m31.config["temperature"] == 2.0
    assert m31.config_hash != m.config_hash and "recipe=t2v_metrics-3.1" in m31.spec


def test_3_1_options_fail_in_one_line():
    from reference_compare import FIXTURES

    ckpt = FIXTURES / "vqascore" / "qwen2.5-vl-3.1" / "qwen2.5-vl-tiny"
    with pytest.raises(InputError, match="temperature and max_new_tokens are options of the end_tokens"):
        metrics.load(f"vqascore:{ckpt}?temperature=2", device="cpu")
    with pytest.raises(InputError, match="temperature must be a positive number"):
        metrics.load(f"vqascore:{ckpt}?recipe=t2v_metrics-3.1&temperature=0", device="cpu")
    with pytest.raises(InputError, match="recipe must be a t2v_metrics release"):
        metrics.load(f"vqascore:{ckpt}?recipe=t2v_metrics-3.2", device="cpu")
    clip = FIXTURES / "vqascore" / "clip-flant5" / "clip-flant5-tiny"
    with pytest.raises(InputError, match="t2v_metrics 3.1 has no VQAScore recipe for clip_t5"):
        metrics.load(f"vqascore:{clip}?recipe=t2v_metrics-3.1", device="cpu")
