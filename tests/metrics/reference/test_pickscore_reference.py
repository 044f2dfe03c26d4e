"""PickScore against the authors' published snippet and t2v_metrics 3.0's PickScoreModel (tools/reference/pickscore)."""
from __future__ import annotations

import numpy as np
import pytest
from reference_compare import compare_pickscore
from reward_fixtures import assert_spread, fixture

from ts2viz.errors import InputError
from ts2viz.metrics import load

ROOT, EXP = fixture("pickscore")
PROC = str(ROOT / "CLIP-ViT-H-14-laion2B-s32B-b79K")


def test_authors_score_is_the_model_cards_logit_scale_times_cosine():
    want = [r["authors"] for r in EXP["rows"]]
    assert_spread(want)  # the images score differently: a constant would not pass
    authors, _ = compare_pickscore("authors")
    assert authors.config["score"] == "authors" and authors.config["dtype"] == "float32"


def test_cosine_score_is_t2v_metrics_pickscore():
    compare_pickscore("cosine")
    want = [r["cosine"] for r in EXP["rows"]]
    # the two fixtures come from two codes: their ratio is the tiny model's exp(logit_scale), not 1
    ratio = np.array([r["authors"] for r in EXP["rows"]]) / np.array(want)
    assert np.allclose(ratio, np.exp(3.3), rtol=1e-4)


def test_prompt_order_and_batching_do_not_change_scores():
    compare_pickscore("authors", rows=lambda rows: rows[::-1], batch_size=2)


def test_processor_from_another_repository_offline_says_which_option(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(InputError) as e:
        load(f"pickscore:{ROOT / 'PickScore_v1'}", device="cpu")
    msg = str(e.value)
    assert "\n" not in msg and "processor=" in msg and "laion/CLIP-ViT-H-14-laion2B-s32B-b79K" in msg


def test_unknown_score_is_refused():
    with pytest.raises(InputError, match="score='logits'"):
        load(f"pickscore:{ROOT / 'PickScore_v1'}?score=logits&processor={PROC}", device="cpu")
