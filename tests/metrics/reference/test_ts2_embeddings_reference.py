"""``alignscore:`` and ``siglip:`` (``variant=ts2``, the default) against TS2's own scoring code.

``tests/fixtures/reference/ts2_embeddings/expected.json`` was written by
``tools/reference/ts2_embeddings/make_fixtures.py``: michaelsaxon/T2IScoreScore's ``ALIGNScore`` and
``SiGLIPScore`` (``src/T2IMetrics/correlation/``, ``CorrelationMetric.calculate_score``: the processor on one
(image, prompt) with ``padding=True``, the model's ``logits_per_image``) under transformers 4.57.6, on tiny
random-weight ``AlignModel`` / ``SiglipModel`` checkpoints in the layouts of ``kakaobrain/align-base`` and
``google/siglip-so400m-patch14-384`` (BERT ``vocab.txt``; SentencePiece ``spiece.model``), every image with
every prompt (30 pairs each; prompts with capitals, punctuation and digits, all within 64 tokens). The tiny
SigLIP was saved with ``exp(logit_scale) = 10`` and ``logit_bias = -3`` (not SigLIP's init values 1 and 0,
under which its ``logits_per_image`` would be the plain cosine), so its scale and bias are tested too.

ts2viz (transformers 5) loads the same folders and must give the same per-pair scores. Tolerance: relative
1e-4 (float32 encoders, batched differently), absolute 1e-5 for scores next to 0.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reference_compare import compare_ts2_embeddings

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "reference" / "ts2_embeddings"
EXPECTED = json.loads((FIX / "expected.json").read_text())


@pytest.mark.parametrize("model", ["align", "siglip"])
def test_default_variant_equals_ts2s_code(model):
    m, _ = compare_ts2_embeddings(model)
    assert m.config["variant"] == "ts2"


@pytest.mark.parametrize("model", ["align", "siglip"])
def test_fixture_tells_prompts_and_images_apart(model):
    """Each image's scores differ between prompts, and each prompt's between images, by far more than the
    tolerance: a prompt or image swapped, or the logit scale or bias dropped, fails the test above."""
    s = np.asarray(EXPECTED["scores"][model])
    assert np.min(np.ptp(s, axis=1)) > 10 * 1e-4 * np.abs(s).max()
    assert np.min(np.ptp(s, axis=0)) > 10 * 1e-4 * np.abs(s).max()
