"""Every metric card agrees with itself and with the code (issue 40, items 6-7).

Over the whole registry: each fidelity row's test exists; a card whose rows cite reference tests does not
say it was never compared; the evidence phrase of the README and the metric index is the one generated
from the rows. On tiny random-weight models: the embedding families' default score (``variant=ts2``) is
the model's logit that their cards state (CLIP ``exp(logit_scale) * cos``, ALIGN ``cos / temperature``),
not the cosine, and ``variant=cosine`` is in the [-1, 1] the cards state (the tiny ALIGN's temperature is 1, so
only CLIP tells a logit from a cosine here; ALIGN's and SigLIP's logits are compared with TS2's code by
``tests/metrics/reference/test_ts2_embeddings_reference.py``).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ts2viz import metrics

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

CARDS = [f for f in metrics.families() if f.card is not None]


@pytest.mark.parametrize("fam", CARDS, ids=lambda f: f.name)
def test_every_cited_test_exists(fam):
    for row in fam.card.fidelity:
        for ref in (x.strip() for x in str(row.test).split(",") if x.strip()):
            path, _, name = ref.partition("::")
            assert (ROOT / path).is_file(), f"{fam.name} / {row.aspect}: no test file {path}"
            if name:
                assert re.search(rf"^(async )?def {re.escape(name.split('[')[0])}\(",
                                 (ROOT / path).read_text(encoding="utf-8"), re.M), \
                    f"{fam.name} / {row.aspect}: {path} has no test {name}"


@pytest.mark.parametrize("fam", CARDS, ids=lambda f: f.name)
def test_a_compared_card_does_not_say_it_was_not(fam):
    from gen_docs import REFERENCE_TESTS

    compared = any(REFERENCE_TESTS in str(r.test) for r in fam.card.fidelity)
    said = " ".join([fam.card.original, fam.card.summary, fam.card.description]).lower()
    if compared:
        assert "not yet compared" not in said and "never compared" not in said, fam.name
    assert fam.card.output_range, f"{fam.name}: the card states no output range"


def test_the_evidence_column_is_generated_from_the_rows():
    from gen_docs import evidence

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for fam in CARDS:
        phrase = evidence(fam.card)
        assert f"| {phrase} |" in readme.replace("\\|", "|"), f"README: {fam.name}'s evidence is not {phrase!r}"
    names = [f.name for f in CARDS if "no reference fixture" in evidence(f.card)]
    # issue 40: these families have no fixture from their original's code; the README must not say they do
    assert {"gecko", "fineeval"} <= set(names), names


def _images(n: int = 6):
    from PIL import Image

    rng = np.random.default_rng(0)
    return [Image.fromarray(rng.integers(0, 255, (40, 40, 3), dtype=np.uint8)) for _ in range(n)]


PROMPTS = ["a red apple", "two dogs on a beach", "a wooden table", "a red apple", "text on a sign", "a cat"]


def _scores(spec: str) -> np.ndarray:
    from ts2viz.engine.core import score_images

    return np.asarray(score_images(spec, _images(), PROMPTS, device="cpu", use_cache=False), dtype=float)


@pytest.mark.parametrize("fam", [f for f in CARDS if "variant" in f.card.option_names], ids=lambda f: f.name)
def test_a_logit_by_default_is_not_called_a_cosine(fam):
    # the embedding families' default variant is TS2's logit (the tiny CLIP below shows it for clipscore)
    assert fam.card.option("variant").default == "ts2"
    card = fam.card
    assert card.output_range.startswith("ts2:") and "cosine: [-1, 1]" in card.output_range, card.output_range
    assert "logit" in fam.description and "logit" in card.summary, fam.name


def test_clipscore_default_is_the_logit_its_card_states():
    from transformers import CLIPModel

    from tiny_models import tiny

    folder = tiny("clip")
    default = _scores(f"clipscore:{folder}")
    cos = _scores(f"clipscore:{folder}?variant=cosine")
    assert np.all(np.abs(cos) <= 1 + 1e-6), cos
    scale = float(CLIPModel.from_pretrained(folder).logit_scale.detach().exp())
    assert scale > 2, f"the tiny CLIP's scale {scale} is too close to 1 to tell a logit from a cosine"
    np.testing.assert_allclose(default, scale * cos, rtol=1e-4, atol=1e-5)
    fam = metrics.family("clipscore")
    for text in (fam.card.output_range, fam.description, fam.card.summary):
        assert "exp(logit_scale)" in text, text
