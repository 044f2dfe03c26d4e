"""LLMScore's precision: the original runs its BLIP-2 captioner in float16 (YujieLu10/LLMScore
``llm_descriptor/global_descriptor.py``: ``Blip2ForConditionalGeneration.from_pretrained(...,
torch_dtype=torch.float16)``), so the card says float16, and on a GPU ts2viz's captioner and local LLM load
in float16 and the config records it.

No GPU is needed: the dtype resolver is told to resolve the CPU as it would a CUDA device (the only thing
that differs on a GPU), so the tiny models really load in float16 here and the config says so.
"""
from __future__ import annotations

import pytest

from tiny_models import tiny
from ts2viz import metrics


@pytest.fixture
def cpu_resolved_as_gpu(monkeypatch):
    from ts2viz.metrics.common import device as dev

    real = dev._resolve_dtype
    monkeypatch.setattr(dev, "_resolve_dtype", lambda device, dtype: real("cuda" if device == "cpu" else device, dtype))


def test_llmscore_card_precision_is_the_originals_float16():
    assert metrics.family("llmscore").card.precision == "float16"


def test_llmscore_loads_its_models_in_the_originals_float16(cpu_resolved_as_gpu):
    import torch

    m = metrics.load(f"llmscore:{tiny('llm')}?captioner={tiny('llava')}&caption_tokens=3&max_new_tokens=5",
                     device="cpu")
    assert m.config["dtype"] == "float16"
    assert m.captioner.model.dtype == torch.float16
    assert next(m.llm.model.parameters()).dtype == torch.float16


def test_llmscore_on_cpu_stays_float32():
    m = metrics.load(f"llmscore:{tiny('llm')}?captioner={tiny('llava')}&caption_tokens=3&max_new_tokens=5",
                     device="cpu")
    assert m.config["dtype"] == "float32"
