"""A hub model that cannot be had fails at once, the first time too (issue 21, item 11).

The first live-scoring error for a hub model took 43 s in the app (later ones 1.5 s): the first call
imported torch and transformers (tens of seconds on a busy machine) before the hub was probed. Now
:func:`ts2viz.metrics.load` probes the hub and looks in the local hub cache before a family's module is
imported. Checked in a fresh interpreter (nothing imported yet, as in a just-started app): the error
comes with its advice, torch and transformers are not imported, and it takes seconds.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ts2viz.errors import InputError

ROOT = Path(__file__).resolve().parents[2]

FIRST_LOAD = """
import json, sys, time
t = time.perf_counter()
from ts2viz.errors import InputError
from ts2viz.metrics import load
try:
    load(sys.argv[1], device="cpu")
    err = None
except InputError as e:
    err = str(e)
print(json.dumps({"error": err, "seconds": time.perf_counter() - t,
                  "heavy": [m for m in ("torch", "transformers", "open_clip") if m in sys.modules]}))
"""


def _first_load(spec: str, env_extra: dict, tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_CACHE=str(tmp_path / "hub-cache"), HF_HOME=str(tmp_path / "hf-home"),
               **env_extra)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_LOAD, spec], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall"] = time.perf_counter() - t
    return r


@pytest.mark.parametrize("spec", ["clipscore:nobody/not-cached-clip", "tifa:nobody/not-cached-vqa",
                                  "vqascore:nobody/not-cached-vqa@v1?dtype=float32"])
def test_first_error_for_an_unreachable_hub_model_is_fast(spec, tmp_path, hanging_hub):
    r = _first_load(spec, {"HF_ENDPOINT": hanging_hub}, tmp_path)
    assert r["error"] and "the Hugging Face hub does not answer" in r["error"], r
    assert "not in the local hub cache" in r["error"] and "local model folder" in r["error"]
    assert r["heavy"] == [], f"imported before the error: {r['heavy']}"
    # the probe waits 3 s for the hanging hub; the imports it avoids take 10-40 s on a busy machine
    assert r["seconds"] < 12, r


def test_first_error_in_offline_mode_is_fast(tmp_path):
    r = _first_load("siglip:nobody/not-cached-siglip", {"HF_HUB_OFFLINE": "1"}, tmp_path)
    assert r["error"] and "offline mode (HF_HUB_OFFLINE is set)" in r["error"], r
    assert r["heavy"] == [] and r["seconds"] < 12, r


def test_check_leaves_cached_local_and_non_hub_models_to_the_family(tmp_path, monkeypatch, hanging_hub):
    import huggingface_hub.constants as hc

    from ts2viz.metrics import parse_spec
    from ts2viz.metrics.common.pretrained import check_hub_model_available

    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "models--me--cached").mkdir(parents=True)
    (tmp_path / "folder").mkdir()
    for spec in ("clipscore:me/cached", f"clipscore:{tmp_path / 'folder'}", "clipscore:openclip:ViT-B-32/openai",
                 "clipscore:/no/such/folder", "clipscore:me/x?local_files_only=true"):
        check_hub_model_available(parse_spec(spec))          # no error: the family's own loading decides
    with pytest.raises(InputError, match="offline mode"):
        check_hub_model_available(parse_spec("clipscore:me/not-cached"))


def test_judges_are_not_checked_as_hub_models():
    from ts2viz.metrics import family

    assert family("clipscore").hub_model and family("tifa").hub_model
    # a judge's MODEL is a model name at an API endpoint (gpt-4o), not a hub id
    assert not family("viescore").hub_model and not family("llmscore").hub_model
    assert not family("csv").hub_model and not family("callable").hub_model
