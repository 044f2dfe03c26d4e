"""The tests' own margin and perturbation helpers (tests/support/margins.py, perturb.py) can fail: each
check refuses a near-tie and lets a wide decision through."""
from __future__ import annotations

import numpy as np
import pytest

from margins import (assert_distinct, assert_wide_argmax, assert_wide_gap, assert_wide_rounding, assert_wide_threshold,
                     generation_margins)
import perturb
from perturb import parse


def test_value_checks_refuse_near_ties_and_pass_wide_ones():
    assert assert_wide_argmax([0.1, 0.9, 0.5]) == 1
    assert assert_wide_argmax([0.1, 0.9, 0.5], argmin=True) == 0
    assert assert_wide_argmax([np.nan, 0.2, 0.9]) == 2
    with pytest.raises(AssertionError, match="ill-conditioned fixture .x.: argmax margin"):
        assert_wide_argmax([0.5, 0.9, 0.8999], context="x")
    assert_wide_threshold([0.2, 0.4], 0.3)
    with pytest.raises(AssertionError, match="threshold 0.3"):
        assert_wide_threshold([0.2, 0.3000001], 0.3)
    assert_distinct([3.0, 1.0, 2.0])
    with pytest.raises(AssertionError, match="sort margin"):
        assert_distinct([3.0, 1.0, 2.9995])
    assert_wide_gap(1.0, 2.0)
    with pytest.raises(AssertionError):
        assert_wide_gap(1.0, 1.0)
    assert_wide_rounding([0.0141, 12.2, -3.71], 0)
    assert_wide_rounding([0.0141], 3)
    with pytest.raises(AssertionError, match="rounding to 3 decimals"):
        assert_wide_rounding([0.01450001], 3)
    with pytest.raises(AssertionError, match="rounding to 0 decimals"):
        assert_wide_rounding([10.4999999], 0)


def _flat_lm(tmp_path):
    """The tiny Llama with its output layer zeroed: every next token ties exactly."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tiny_models import tiny

    model = AutoModelForCausalLM.from_pretrained(tiny("llm")).eval()
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()
    return model, AutoTokenizer.from_pretrained(tiny("llm"))


@pytest.mark.parametrize("beams", [1, 3])
def test_generation_margins_refuse_a_tie_in_greedy_and_beam_search(tmp_path, beams):
    import torch

    model, tok = _flat_lm(tmp_path)
    enc = tok(["a red cat"], return_tensors="pt")
    with pytest.raises(AssertionError, match="ill-conditioned fixture .flat.: generation"):
        with generation_margins(context="flat"):
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=2, do_sample=False, num_beams=beams,
                                     pad_token_id=tok.pad_token_id or tok.eos_token_id)
    assert out.shape[0] == 1            # the caller still gets its tensor back
    # a model the predicate leaves out is not checked
    with generation_margins(only=lambda m: False) as rec:
        with torch.no_grad():
            model.generate(**enc, max_new_tokens=2, do_sample=False, num_beams=beams,
                           pad_token_id=tok.pad_token_id or tok.eos_token_id)
    assert rec.calls == 0


def test_perturbation_specs():
    assert parse("threads1, batch3,denormal,nomkldnn,isa=avx2") == {"threads": 1, "batch": 3, "denormal": True,
                                                                   "nomkldnn": True, "isa": "avx2"}
    assert parse("") == {}
    for bad in ("threads0", "fast", "isa=sse"):
        with pytest.raises(ValueError, match="unknown perturbation"):
            parse(bad)


def test_batch_cap_is_read_at_each_call_and_lifted_without_batch(monkeypatch):
    from types import SimpleNamespace

    from ts2viz.metrics.common.device import run_halving_on_oom

    monkeypatch.setenv(perturb.ENV, "threads1,batch3,denormal")
    assert perturb.batch_cap() == 3 and perturb.without_batch("threads1,batch3,denormal") == "threads1,denormal"
    mod = SimpleNamespace(run_halving_on_oom=run_halving_on_oom)
    perturb._cap_batches()(mod)
    assert mod.run_halving_on_oom(lambda a, b: b - a, 8, 4, "demo") == ([3, 3, 2], 3)
    monkeypatch.setenv(perturb.ENV, perturb.without_batch("threads1,batch3,denormal"))
    assert perturb.batch_cap() is None
    assert mod.run_halving_on_oom(lambda a, b: b - a, 8, 4, "demo") == ([4, 4], 4)


@pytest.mark.exact_batches
def test_a_test_marked_exact_batches_runs_without_the_batch_cap():
    import os

    assert "batch" not in parse(os.environ.get(perturb.ENV, ""))    # under --perturb=batch3 too (conftest.py)
