"""HPSv3 against the hpsv3 package's own HPSv3RewardInferencer.reward (tools/reference/hpsv3)."""
from __future__ import annotations

import pytest
from reward_fixtures import assert_matches, assert_spread, fixture, score_rows

from ts2viz.errors import InputError
from ts2viz.metrics import load

ROOT, EXP = fixture("hpsv3")
BASE = str(ROOT / EXP["base"])
MODEL = ROOT / "HPSv3"


@pytest.fixture(scope="module")
def metric():
    return load(f"hpsv3:{MODEL}?base={BASE}", device="cpu")


def test_score_is_hpsv3s_mu_at_the_reward_token(metric):
    want = [r["mu"] for r in EXP["rows"]]
    assert_spread(want)
    metric.batch_size = len(want)  # the fixture scored all images in one right-padded batch
    assert_matches(score_rows(metric, ROOT, EXP["rows"]), want, "hpsv3 mu")


def test_an_image_alone_scores_as_in_a_batch(metric):
    r = EXP["rows"][0]
    metric.batch_size = 1
    assert_matches(score_rows(metric, ROOT, [r]), [r["mu_alone"]], "hpsv3 mu, batch of one")


def test_base_from_another_repository_offline_says_which_option(monkeypatch, tmp_path):
    import huggingface_hub.constants as c

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(InputError) as e:
        load(f"hpsv3:{MODEL}", device="cpu")
    msg = str(e.value)
    assert "\n" not in msg and "base=" in msg and "Qwen/Qwen2-VL-7B-Instruct" in msg
