"""t2v_metrics' model names: they resolve to hub checkpoints, `ts2viz metrics` lists them, and the ones ts2viz
does not load fail at once with a one-line reason (no model is downloaded here: HF_HUB_OFFLINE)."""
from __future__ import annotations

import pytest

from ts2viz import metrics
from ts2viz.errors import InputError
from ts2viz.metrics.families.vqascore import recipes as R


@pytest.mark.parametrize("spec,repo", [
    ("vqascore:clip-flant5-xxl", "zhiqiulin/clip-flant5-xxl"),
    ("vqascore:llava-v1.5-13b", "liuhaotian/llava-v1.5-13b"),
    ("vqascore:instructblip-flant5-xxl", "Salesforce/instructblip-flan-t5-xxl"),
    ("vqascore:qwen2-vl-7b", "Qwen/Qwen2-VL-7B-Instruct"),
    ("vqascore:paligemma-3b-mix-448", "google/paligemma-3b-mix-448"),
    ("itmscore:blip2-itm", "Salesforce/blip2-itm-vit-g"),
    ("itcscore:blip2-itc", "Salesforce/blip2-itm-vit-g"),
])
def test_names_resolve_to_their_checkpoints(spec, repo, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty hub cache: the load fails, naming the checkpoint
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path / "hub"))
    fam = metrics.family(spec.split(":")[0])
    assert fam.card.model_names[spec.split(":", 1)[1]] == repo
    with pytest.raises(InputError) as e:
        metrics.load(spec, device="cpu")
    assert repo in str(e.value) and spec in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name,words", [
    ("internvl2-8b", "own Python code"), ("molmo-7b-d-0924", "own Python code"), ("mplug-owl3-7b", "own Python code"),
    ("gemini-1.5-pro", "OpenAI-compatible"), ("llama-3.2-1b", "text-only"),
])
def test_names_ts2viz_does_not_load_fail_in_one_line(name, words):
    with pytest.raises(InputError, match=words) as e:
        metrics.load(f"vqascore:{name}", device="cpu")
    assert "\n" not in str(e.value)


def test_api_models_need_an_endpoint_and_take_api_options_only_with_one():
    with pytest.raises(InputError, match="API model: give \\?endpoint=URL"):
        metrics.load("vqascore:gpt-4o", device="cpu")
    with pytest.raises(InputError, match="need endpoint=URL"):
        metrics.load("vqascore:/no/such/folder?top_logprobs=5", device="cpu")
    with pytest.raises(InputError, match="top_logprobs must be 1 to 20"):
        metrics.load("vqascore:gpt-4o?endpoint=http://127.0.0.1:9/v1&top_logprobs=50", device="cpu")
    m = metrics.load("vqascore:gpt-4o?endpoint=http://127.0.0.1:9/v1&api_key=sk-secret", device="cpu")
    assert m.config["recipe"] == "gpt-4o" and m.config["top_logprobs"] == 2
    assert "sk-secret" not in repr(m.config)  # the key is never part of the config (nor of the cache key)


def test_every_name_is_in_exactly_one_table_and_every_recipe_is_described():
    names, api, unsupported = set(R.MODEL_NAMES), set(R.API_MODELS), set(R.UNSUPPORTED)
    assert not (names & api) and not (names & unsupported) and not (api & unsupported)
    for r in R.RECIPES.values():
        assert r.rule in ("likelihood", "first_token", "top_logprobs", "end_tokens", "spellings_sum") and "{}" in r.question
        assert r.proved or r.note, r.name  # an unproven recipe says why
    assert R.RECIPES["paligemma"].precision == "float32" and R.RECIPES["clip-flant5"].precision == "bfloat16"


def test_ts2viz_metrics_lists_the_model_names(capsys):
    from ts2viz.cli import main

    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "itmscore" in out and "itcscore" in out
    assert "clip-flant5-xxl" in out and "qwen2-vl-7b" in out and "blip2-itm" in out
