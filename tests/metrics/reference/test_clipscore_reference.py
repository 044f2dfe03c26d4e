"""``clipscore:`` against the originals' own code: J. Hessel et al.'s clipscore, torchmetrics and TS2.

The expected scores in ``tests/fixtures/reference/clipscore/expected.json`` were computed by the originals
(``tools/reference/clipscore/``): Hessel's ``get_clip_score`` on the ``clip`` package's model class,
torchmetrics 1.9.0's ``clip_score`` and TS2's ``CLIPScorer.calculate_score``, on a tiny random-weight CLIP
(ViT-B/32's shape: 224-px images, 32-px patches) saved in the hub layout of ``openai/clip-vit-base-patch32``,
for 42 (image, prompt) pairs: seven images of several sizes (odd crops, one grey-scale) and six prompts, one
longer than CLIP's 77 tokens. ts2viz loads that folder and must give the same per-pair scores in float32.

Tolerance: relative 1e-4 (float32 encoders; the originals and ts2viz batch differently), absolute 1e-6
for scores the clamp sets to 0 or that lie next to it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reference_compare import compare_clipscore

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "reference" / "clipscore"
EXPECTED = json.loads((FIX / "expected.json").read_text())


@pytest.mark.parametrize("variant", ["hessel", "torchmetrics"])
def test_clipscore_variant_equals_original(variant):
    m, idx, _ = compare_clipscore(variant)
    want = np.asarray(EXPECTED[variant], dtype=np.float64)
    assert idx == list(range(len(want)))
    assert m.config["variant"] == variant
    # the fixture is not degenerate: some pairs are clamped to 0, others are not
    assert (want == 0).sum() >= 5 and (want > 0.05 * want.max()).sum() >= 5


def test_clipscore_default_is_ts2s_own():
    """The default is TS2's CLIPScore (``logits_per_image``: exp(logit_scale) * cosine, no prefix, no
    clamp); TS2's code has no truncation, so the pairs with the long prompt are not in its reference."""
    ts2 = EXPECTED["ts2"]
    m, idx, _ = compare_clipscore(None)
    assert m.config["variant"] == "ts2"
    assert idx == [k for k in range(len(ts2)) if ts2[k] is not None]
    want = np.asarray([ts2[k] for k in idx], dtype=np.float64)
    assert (want < 0).sum() >= 5 and (want > 0).sum() >= 5          # no clamp: both signs


def test_variants_are_not_interchangeable():
    """Each variant's reference tells it apart from the others (so the tests above can fail)."""
    h, t = np.asarray(EXPECTED["hessel"]), np.asarray(EXPECTED["torchmetrics"])
    # the prefix: pairs that Hessel clamps but torchmetrics does not, and the other way round
    assert ((h == 0) & (t > 0)).any() and ((h > 0) & (t == 0)).any()
