"""Hessel et al.'s CLIP-S preparation (:mod:`ts2viz.metrics.common.clip_prep`) against torchvision's pipeline."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.transforms import Compose

from ts2viz.metrics.common import clip_prep

MEAN, STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)


class _Processor:
    def __init__(self, n):
        self.crop_size = {"height": n, "width": n}
        self.size = {"shortest_edge": n}
        self.image_mean, self.image_std = list(MEAN), list(STD)


def _jpeg(rng, h, w):
    small = rng.integers(0, 256, (max(2, h // 16), max(2, w // 16), 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(small).resize((w, h), Image.BICUBIC).save(buf, "JPEG", quality=90)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


@pytest.mark.parametrize("n", [224, 32])
def test_the_fast_transform_is_torchvisions_pipeline_bit_for_bit(n):
    fast = clip_prep.hessel_transform(_Processor(n))
    assert not isinstance(fast, Compose)     # the shortcut passed its own check: it is what is tested here
    ref = clip_prep._reference(n, MEAN, STD)
    rng = np.random.default_rng(7)
    images = [_jpeg(rng, h, w) for h, w in [(512, 512), (480, 640), (1024, 333), (20, 30), (224, 224)]]
    images += [Image.fromarray(rng.integers(0, 256, (300, 257, 3), dtype=np.uint8))]
    for im in images:
        want, got = ref(im), fast(im)
        assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape == (3, n, n)
        assert torch.equal(got, want)
    # every 8-bit value of every channel comes out as the pipeline computes it
    ramp = Image.fromarray(np.stack([np.tile(np.arange(256, dtype=np.uint8), (n, 1))[:, :n]] * 3, -1))
    assert torch.equal(fast(ramp), ref(ramp))


def test_other_modes_take_the_pipeline_itself():
    fast = clip_prep.hessel_transform(_Processor(32))
    ref = clip_prep._reference(32, MEAN, STD)
    rng = np.random.default_rng(8)
    for im in (Image.fromarray(rng.integers(0, 256, (40, 50), dtype=np.uint8)),
               Image.fromarray(rng.integers(0, 256, (40, 50, 4), dtype=np.uint8), "RGBA")):
        assert torch.equal(fast(im), ref(im))


def test_a_shortcut_that_disagrees_is_not_used(monkeypatch):
    real = clip_prep._value_table
    monkeypatch.setattr(clip_prep, "_value_table", lambda m, s: np.nextafter(real(m, s), np.float32(np.inf)))
    assert isinstance(clip_prep.hessel_transform(_Processor(32)), Compose)
