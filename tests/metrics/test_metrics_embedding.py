"""Embedding metrics on tiny saved models, checked against independent computations."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tiny_models import OPENCLIP_TINY, openclip_spec, tiny
from ts2viz import metrics
from ts2viz.errors import InputError

PROMPTS = ["a red cat", "a red cat", "the dog with lights", "two blue dogs", "a green tree"]


@pytest.fixture(scope="module")
def images():
    from PIL import Image

    rng = np.random.default_rng(7)
    return [Image.fromarray(rng.integers(0, 255, (36 + 3 * i, 44, 3), dtype=np.uint8)) for i in range(5)]


def _cos(a, b):
    import torch

    a = torch.nn.functional.normalize(a.float(), dim=-1)
    b = torch.nn.functional.normalize(b.float(), dim=-1)
    return (a * b).sum(-1).double().numpy()


def test_clipscore_transformers_matches_model_forward(images):
    import torch
    from transformers import CLIPModel, CLIPProcessor

    folder = tiny("clip")
    spec = f"clipscore:{folder}?variant=cosine&preprocess=fast"
    m = metrics.load(spec, device="cpu", batch_size=2)  # several batches
    got = m(images=images, prompts=PROMPTS)
    model = CLIPModel.from_pretrained(folder).eval()
    proc = CLIPProcessor.from_pretrained(folder)
    with torch.no_grad():
        out = model(**proc(text=PROMPTS, images=images, return_tensors="pt", padding=True))
    # CLIPModel's forward normalises its own embeddings: cosine = row-wise dot product.
    want = (out.image_embeds * out.text_embeds).sum(-1).double().numpy()
    assert got.dtype == np.float64 and got.shape == (5,)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # the default variant (TS2's) is the forward's logits_per_image
    ts2 = metrics.load(f"clipscore:{folder}?preprocess=fast", device="cpu")(images=images, prompts=PROMPTS)
    np.testing.assert_allclose(ts2, out.logits_per_image.diagonal().double().numpy(), rtol=1e-5, atol=1e-5)
    assert m.name == "clipscore" and m.higher_is_better and m.spec == spec
    assert m.config["backend"] == "transformers" and "fingerprint" in m.config
    assert len(m.config_hash) == 20


def test_clipscore_accepts_paths_and_is_order_independent(images, tmp_path):
    m = metrics.load(f"clipscore:{tiny('clip')}", device="cpu")
    paths = []
    for i, im in enumerate(images):
        p = tmp_path / f"{i}.png"
        im.save(p)
        paths.append(str(p))
    a = m(images=paths, prompts=PROMPTS)
    b = m(images=images[::-1], prompts=PROMPTS[::-1])[::-1]
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_openclip_checkpoint_matches_independent(images):
    import open_clip
    import torch

    spec = openclip_spec()
    m = metrics.load(spec, device="cpu", batch_size=3, variant="cosine")
    got = m(images=images, prompts=PROMPTS)
    model, _, pre = open_clip.create_model_and_transforms(OPENCLIP_TINY, pretrained=str(tiny("openclip")))
    tok = open_clip.get_tokenizer(OPENCLIP_TINY)
    model.eval()
    with torch.no_grad():
        want = _cos(model.encode_image(torch.stack([pre(im) for im in images])), model.encode_text(tok(PROMPTS)))
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert m.config["backend"] == "open_clip" and m.config["arch"] == OPENCLIP_TINY


@pytest.mark.parametrize("family,name", [("siglip", "siglip"), ("alignscore", "align")])
def test_siglip_and_align_match_model_forward(images, family, name):
    import torch
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    folder = tiny(name)
    got = metrics.load(f"{family}:{folder}?variant=cosine&preprocess=fast", device="cpu")(images=images, prompts=PROMPTS)
    model = AutoModel.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)
    ip = AutoImageProcessor.from_pretrained(folder)
    pad = "max_length" if family == "siglip" else True
    enc = tok(PROMPTS, padding=pad, max_length=tok.model_max_length, truncation=True, return_tensors="pt")
    if family == "siglip":
        enc.pop("attention_mask", None)
    with torch.no_grad():
        out = model(pixel_values=ip(images=images, return_tensors="pt")["pixel_values"], **enc)
    want = _cos(out.image_embeds, out.text_embeds)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_long_prompt_truncated_with_warning(images):
    m = metrics.load(f"clipscore:{tiny('clip')}", device="cpu")
    long = "the cat and the dog with the lights on the green tree " * 4
    with pytest.warns(UserWarning, match="truncated"):
        s = m(images=images[:2], prompts=[long, long])
    assert np.isfinite(s).all()
    oc = metrics.load(openclip_spec(), device="cpu")
    with pytest.warns(UserWarning, match="truncated"):
        assert np.isfinite(oc(images=images[:1], prompts=[long])).all()


def test_unreadable_image_is_nan(images, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not a jpeg")
    m = metrics.load(f"clipscore:{tiny('clip')}", device="cpu")
    with pytest.warns(UserWarning, match="unreadable"):
        s = m(images=[images[0], str(bad), str(tmp_path / "missing.jpg")], prompts=PROMPTS[:3])
    assert np.isfinite(s[0]) and np.isnan(s[1:]).all()


def test_spec_errors_are_one_line_input_errors(tmp_path):
    cases = ["nocolon", "bogus:openai/clip", f"clipscore:{tmp_path}/does-not-exist",
             "clipscore:openclip:ViT-B-32", "clipscore:openclip:ViT-B-32/missing.pt",
             "siglip:openclip:x/y", "clipscore:a/b/c/d"]
    for spec in cases:
        with pytest.raises(InputError) as e:
            metrics.load(spec, device="cpu")
        assert "\n" not in str(e.value)


def test_missing_hub_model_offline_is_clear(monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)  # read at import time; patch the live value too
    with pytest.raises(InputError, match="cannot load model"):
        metrics.load("clipscore:nobody/not-a-real-model-ts2viz", device="cpu")


def test_cuda_requested_but_absent():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(InputError, match="no CUDA GPU"):
        metrics.load(f"clipscore:{tiny('clip')}", device="cuda")


def test_spec_parsing_revision_and_options():
    sp = metrics.parse_spec("clipscore:openai/clip-vit-base-patch32@abc123?batch_size=8&dtype=float32")
    assert (sp.family, sp.model, sp.revision) == ("clipscore", "openai/clip-vit-base-patch32", "abc123")
    assert sp.options == {"batch_size": 8, "dtype": "float32"}
    sp = metrics.parse_spec("clipscore:openclip:ViT-B-32/laion2b_s34b_b79k")
    assert sp.openclip_parts() == ("ViT-B-32", "laion2b_s34b_b79k")
    sp = metrics.parse_spec("callable:pkg.mod:fn")
    assert sp.model == "pkg.mod:fn"


def test_registry_is_cheap_to_import():
    code = ("import sys, ts2viz.metrics as m, ts2viz.engine, ts2viz.cli; fams = m.families(); "
            "assert 'clipscore' in [f.name for f in fams]; "
            "bad = [x for x in ('torch', 'transformers', 'open_clip') if x in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_register_custom_family(images):
    calls = []

    @metrics.register("brightness", "mean pixel value (test family)")
    def build(spec, device=None, **options):
        from ts2viz.metrics.common.base import Metric

        class Bright(Metric):
            name = "brightness"

            def prepare(self, image, file_name=None):
                return np.asarray(image, dtype=np.float64).mean()

            def score_prepared(self, items, prompts):
                calls.append(len(items))
                return np.array(items)

        return Bright(spec, {"family": "brightness"}, "cpu", 2)

    try:
        m = metrics.load("brightness:any")
        s = m(images=images, prompts=PROMPTS)
        np.testing.assert_allclose(s, [np.asarray(im, dtype=float).mean() for im in images])
        assert calls == [2, 2, 1]
        assert "brightness" in [f.name for f in metrics.families()]
    finally:
        metrics.unregister("brightness")


def test_fast_preprocessing_equals_the_processor():
    from PIL import Image
    from transformers import AutoImageProcessor

    m = metrics.load(f"clipscore:{tiny('clip')}?preprocess=fast", device="cpu")
    assert m.fast_prepare is not None  # CLIP's processor takes the shortcut
    ip = AutoImageProcessor.from_pretrained(tiny("clip"))
    rng = np.random.default_rng(1)
    for h, w in [(40, 48), (31, 90), (32, 32), (17, 12)]:
        im = Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8))
        want = ip(images=im, return_tensors="pt")["pixel_values"][0]
        got = m.prepare(im)["pixel_values"]
        assert got.shape == want.shape and float((got - want).abs().max()) < 1e-6
    assert metrics.load(f"alignscore:{tiny('align')}?preprocess=fast", device="cpu").fast_prepare is None
    assert metrics.load(f"clipscore:{tiny('clip')}", device="cpu").fast_prepare is None   # original: PIL
