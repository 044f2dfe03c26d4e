"""ImageReward against the image-reward package's own ImageReward.score (tools/reference/imagereward)."""
from __future__ import annotations

import pytest
from reference_compare import compare_imagereward
from reward_fixtures import assert_spread, fixture

from ts2viz.errors import InputError
from ts2viz.metrics import load

ROOT, EXP = fixture("imagereward")
TOK = str(ROOT / EXP["tokenizer"])
MODEL = ROOT / "ImageReward"


@pytest.fixture(scope="module")
def metric():
    return load(f"imagereward:{MODEL}?tokenizer={TOK}", device="cpu")


def test_score_is_image_rewards_normalised_mlp_reward(metric):
    assert_spread([r["score"] for r in EXP["rows"]])
    compare_imagereward("score", metric)
    assert metric.config["mean"] == EXP["mean"] and metric.config["std"] == EXP["std"]


def test_batched_scores_are_inference_ranks_rewards(metric):
    compare_imagereward("inference_rank", metric)


def test_tokenizer_from_another_repository_offline_says_which_option(monkeypatch, tmp_path):
    import huggingface_hub.constants as c

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(InputError) as e:
        load(f"imagereward:{MODEL}", device="cpu")
    msg = str(e.value)
    assert "\n" not in msg and "tokenizer=" in msg and "bert-base-uncased" in msg


def test_a_folder_without_the_released_files_is_one_line(tmp_path):
    with pytest.raises(InputError, match="ImageReward.pt"):
        load(f"imagereward:{tmp_path}?tokenizer={TOK}", device="cpu")
