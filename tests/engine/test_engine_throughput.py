"""The engine's speed-ups (docs/guide/engine-throughput.md) change no score.

* the fast preprocessing (:mod:`ts2viz.metrics.common.pixels`) gives the transformers processor's own
  tensors bit for bit, on images of many sizes and for several processor settings (PIL and torchvision
  backends), and steps aside for whatever it does not reproduce;
* the engine's scores with every speed-up (pixels prepared ahead on the worker threads, batches stacked
  there, fast preprocessing) equal its scores with none, image by image and exactly, for CLIP-style
  (transformers and open_clip, both image processors), PickScore, CLIP-FlanT5 and LLaVA-1.5 metrics, with
  odd batch sizes, unreadable and missing images, images of other modes, with and without the cache;
* an interrupted run leaves its finished batches in the cache and a rerun scores only the rest;
* preparation threads run torch on one thread each, without changing the process's setting; nothing is
  hashed without a cache.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image

from tiny_models import build_llava_original, openclip_spec, tiny
from ts2viz import engine
from ts2viz.metrics.common import pixels

PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights"]


# -- the fast preprocessing is the processor's, bit for bit -----------------------------------------------------

def _processor(which: str):
    import transformers

    ps = transformers.CLIPImageProcessorPil
    return {
        "clip-224": lambda: ps(),                                                     # openai/clip-vit-*-patch14
        "clip-336": lambda: ps(size={"shortest_edge": 336}, crop_size={"height": 336, "width": 336}),
        "siglip": lambda: transformers.SiglipImageProcessorPil(),                     # resize to 224 x 224, no crop
        "bilinear-no-crop": lambda: ps(resample=2, do_center_crop=False, size={"shortest_edge": 40}),
        "crop-larger-than-resize": lambda: ps(size={"shortest_edge": 20}, crop_size={"height": 31, "width": 27}),
        "no-normalize": lambda: ps(size={"shortest_edge": 24}, crop_size={"height": 24, "width": 24},
                                   do_normalize=False),
        "no-rescale-no-normalize": lambda: ps(size={"shortest_edge": 24}, crop_size={"height": 24, "width": 24},
                                              do_rescale=False, do_normalize=False),
        "shortest-and-longest": lambda: ps(size={"shortest_edge": 30, "longest_edge": 45}, do_center_crop=False),
        "height-width": lambda: ps(size={"height": 33, "width": 21}, do_center_crop=False),
        # the torchvision backends (transformers' default CLIPImageProcessor, SigLIP's, BLIP's)
        "torchvision-clip-224": lambda: transformers.CLIPImageProcessor(),
        "torchvision-clip-336": lambda: transformers.CLIPImageProcessor(size={"shortest_edge": 336},
                                                                        crop_size={"height": 336, "width": 336}),
        "torchvision-siglip": lambda: transformers.SiglipImageProcessor(),
        "torchvision-crop-larger": lambda: transformers.CLIPImageProcessor(size={"shortest_edge": 20},
                                                                           crop_size={"height": 31, "width": 27}),
        "torchvision-blip": lambda: transformers.BlipImageProcessor(size={"height": 48, "width": 40}),
    }[which]()


def _random_images(n: int, seed: int):
    """Images of many sizes: tiny, smaller than any crop, square, very wide, very tall, odd sides."""
    rng = np.random.default_rng(seed)
    sizes = [(1, 1), (2, 3), (9, 5), (224, 224), (336, 336), (512, 512), (17, 900), (900, 17), (335, 337)]
    sizes += [(int(rng.integers(1, 600)), int(rng.integers(1, 600))) for _ in range(n - len(sizes))]
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in sizes]


def _reference(ip, im):
    return ip(images=im, return_tensors="pt")["pixel_values"][0]


def _same(a, b) -> bool:
    import torch

    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))


@pytest.mark.parametrize("which", ["clip-224", "clip-336", "siglip", "bilinear-no-crop", "crop-larger-than-resize",
                                   "no-normalize", "no-rescale-no-normalize", "shortest-and-longest", "height-width",
                                   "torchvision-clip-224", "torchvision-clip-336", "torchvision-siglip",
                                   "torchvision-crop-larger", "torchvision-blip"])
def test_fast_pixels_are_the_processors_own_on_many_images(which):
    ip = _processor(which)
    assert pixels.fast_pixels(ip) is not None, f"{which}: the fast path should apply"
    for k, im in enumerate(_random_images(30, seed=len(which))):
        try:
            want = _reference(ip, im)
        except ValueError as e:     # e.g. a 17 x 900 image resized to 0 pixels: the fast path fails alike
            with pytest.raises(type(e)):
                pixels.processor_pixels(ip, im)
            continue
        got = pixels.processor_pixels(ip, im)
        assert _same(got, want), f"{which}: image {k} of size {im.size} differs"
        assert pixels.processor_inputs(ip, im).keys() == {"pixel_values"}


@pytest.mark.parametrize("which", ["clip-336", "torchvision-clip-336"])
def test_images_the_fast_path_does_not_take_get_the_processors_own_call(which):
    ip = _processor(which)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (50, 70, 3), dtype=np.uint8)
    a[20:30, 30:40] = (1, 2, 3)
    rgb = Image.fromarray(a)
    keyed = rgb.copy()
    keyed.info["transparency"] = (1, 2, 3)      # an RGB colour key: the processor shows that block white
    others = [rgb.convert("L"), rgb.convert("RGBA"), rgb.convert("P"), keyed]
    for im in others:
        assert _same(pixels.processor_pixels(ip, im), _reference(ip, im)), im.mode
    # the colour key is real: the processor's pixels differ from the plain RGB image's
    assert not _same(_reference(ip, keyed), _reference(ip, rgb))


def test_a_processor_that_changes_a_step_gets_its_own_call():
    import transformers

    class Shifted(transformers.CLIPImageProcessorPil):
        def rescale(self, image, scale, **kwargs):
            return super().rescale(image, scale, **kwargs) + 0.5

    ip = Shifted(size={"shortest_edge": 24}, crop_size={"height": 24, "width": 24})
    assert pixels.fast_pixels(ip) is None
    im = _random_images(10, 3)[-1]
    assert _same(pixels.processor_pixels(ip, im), _reference(ip, im))
    qwen = transformers.Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=64 * 64)   # its own _preprocess
    assert pixels.fast_pixels(qwen) is None
    assert _same(pixels.processor_pixels(qwen, im), _reference(qwen, im))

    class Blurred(transformers.CLIPImageProcessor):          # a torchvision backend that changes a step
        def center_crop(self, image, size, **kwargs):
            return super().center_crop(image, size, **kwargs) // 2

    tv = Blurred(size={"shortest_edge": 24}, crop_size={"height": 24, "width": 24})
    assert pixels.fast_pixels(tv) is None
    assert _same(pixels.processor_pixels(tv, im), _reference(tv, im))


def test_a_fast_path_that_disagrees_with_the_processor_is_never_used(monkeypatch):
    real = pixels._value_table

    def off_by_a_little(kw):
        table = real(kw)
        return table if table is None or table is False else table + np.float32(1e-3)

    monkeypatch.setattr(pixels, "_value_table", off_by_a_little)
    ip = _processor("clip-224")          # a new processor: its plan is made (and checked) now
    assert pixels.fast_pixels(ip) is None
    im = _random_images(10, 4)[-1]
    assert _same(pixels.processor_pixels(ip, im), _reference(ip, im))


def test_a_processor_whose_settings_change_after_use_gets_pixels_for_its_new_settings():
    ip = _processor("clip-224")
    im = _random_images(10, 7)[-1]
    first = pixels.processor_pixels(ip, im)
    ip.crop_size.height = 200            # in place, as code that adjusts a loaded processor might
    ip.image_mean = (0.5, 0.5, 0.5)
    got, want = pixels.processor_pixels(ip, im), _reference(ip, im)
    assert got.shape == (3, 200, 224) and _same(got, want) and not _same(got[:, :200], first[:, :200])


def test_a_prepared_image_is_an_ordinary_image_to_code_that_ignores_its_pixels():
    ip = _processor("clip-224")
    im = _random_images(10, 6)[-1]
    prepared = pixels.prepared_image(im, "k", "carried")
    assert _same(_reference(ip, prepared), _reference(ip, im))
    assert np.array_equal(np.asarray(prepared), np.asarray(im))
    assert pixels.pixels_of(prepared, "k", lambda x: "computed") == "carried"
    assert pixels.pixels_of(prepared.convert("RGB"), "k", lambda x: "computed") == "computed"


# -- the engine: the same scores with and without the speed-ups -------------------------------------------------

@pytest.fixture(scope="module")
def llava_folder(tmp_path_factory):
    orig, _twin = build_llava_original(tmp_path_factory.mktemp("llava"))
    return orig


def _images(tmp_path):
    """Images and file paths of every kind the engine meets; which of them must get NaN."""
    rng = np.random.default_rng(11)
    pil = [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in
           [(40, 40), (37, 61), (90, 23), (64, 64), (33, 35)]]
    a = np.asarray(pil[0]).copy()
    a[10:30, 10:30] = (1, 2, 3)
    keyed = Image.fromarray(a)
    keyed.info["transparency"] = (1, 2, 3)
    jpeg = tmp_path / "photo.jpg"
    Image.fromarray(rng.integers(0, 256, (48, 52, 3), dtype=np.uint8)).save(jpeg, quality=90)
    png16 = tmp_path / "deep.png"
    Image.fromarray(rng.integers(0, 65535, (30, 30)).astype(np.uint16)).save(png16)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    missing = tmp_path / "missing.jpg"
    items = [pil[0], pil[1], broken, pil[2].convert("RGBA"), jpeg, pil[3].convert("L"), missing, keyed, png16, pil[4],
             pil[1]]
    nan = [x is broken or x is missing for x in items]
    return items, [PROMPTS[k % 3] for k in range(len(items))], np.array(nan)


def _metric(kind: str, llava_folder):
    if kind == "pickscore":
        from reward_specs import reward_specs

        spec = reward_specs()["pickscore"]
    else:
        # clip: transformers' torchvision image processor; clip-pil: its PIL processor (the default, TS2's)
        spec = {"clip": f"clipscore:{tiny('clip')}?preprocess=fast", "clip-pil": f"clipscore:{tiny('clip')}",
                "openclip": openclip_spec(), "clip-t5": f"vqascore:{tiny('clip_t5')}",
                "llava": f"vqascore:{llava_folder}"}[kind]
    metric = engine.get_metric(spec, "cpu")
    if kind == "clip-pil":
        from transformers import CLIPImageProcessorPil

        assert isinstance(metric.image_processor, CLIPImageProcessorPil)
    return metric


def _without_speedups(monkeypatch, metric):
    """The engine as it was: pixels made in score_prepared by the processor's call, batches stacked there."""
    monkeypatch.setattr(pixels, "fast_pixels", lambda ip: None)
    monkeypatch.setattr(metric, "stacks_prepared", False, raising=False)
    if hasattr(metric, "vqa"):
        monkeypatch.setattr(metric.vqa, "prepare_image", lambda image: image)


def _spy(metric, seen: list):
    real = metric.score_prepared

    def spy(items, prompts):
        seen.append(items)
        return real(items, prompts)

    return spy


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("kind", ["clip", "clip-pil", "openclip", "pickscore", "clip-t5", "llava"])
def test_engine_scores_equal_those_without_the_speedups(kind, use_cache, llava_folder, tmp_path, monkeypatch):
    items, prompts, nan = _images(tmp_path)
    metric = _metric(kind, llava_folder)
    seen: list = []
    monkeypatch.setattr(metric, "score_prepared", _spy(metric, seen))
    with pytest.warns(Warning, match="could not be scored"):
        fast = engine.score_images(metric, items, prompts, batch_size=3, use_cache=use_cache,
                                   cache_dir=tmp_path / "fast")
    # the speed-ups were taken: stacked batches (embedding metrics), images carrying their pixels (VQA)
    if hasattr(metric, "vqa"):
        assert all(isinstance(x, Image.Image) and getattr(x, "pixels", None) is not None for b in seen for x in b)
    else:
        assert any(getattr(b, "stacked", None) is not None for b in seen)
    with monkeypatch.context() as m:
        _without_speedups(m, metric)
        seen.clear()
        with pytest.warns(Warning, match="could not be scored"):
            slow = engine.score_images(metric, items, prompts, batch_size=3, use_cache=use_cache,
                                       cache_dir=tmp_path / "slow")
        assert not any(getattr(b, "stacked", None) is not None or getattr(x, "pixels", None) is not None
                       for b in seen for x in b)
    assert np.array_equal(np.isnan(fast), nan) and np.array_equal(np.isnan(slow), nan)
    assert np.array_equal(fast, slow, equal_nan=True), np.c_[fast, slow]
    assert np.ptp(fast[~nan]) > 0          # the images' scores differ: a mix-up of images would show


def test_an_interrupted_run_resumes_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TS2VIZ_WORKERS", "1")
    rng = np.random.default_rng(3)
    ims = [Image.fromarray(rng.integers(0, 256, (40, 44, 3), dtype=np.uint8)) for _ in range(12)]
    prompts = [PROMPTS[k % 3] for k in range(12)]
    metric = _metric("clip", None)
    whole = engine.score_images(metric, ims, prompts, batch_size=2, use_cache=False)

    prepared = []
    real_prepare = metric.prepare
    monkeypatch.setattr(metric, "prepare", lambda image, name=None: prepared.append(1) or real_prepare(image, name))

    class Stop(Exception):
        pass

    def stop_after_first_batch(spec, done, total):
        if done >= 2:
            raise Stop

    with pytest.raises(Stop):
        engine.score_images(metric, ims, prompts, batch_size=2, cache_dir=tmp_path, progress=stop_after_first_batch)
    # one batch committed; no more than two batches were ever queued behind it (the rest never prepared)
    from ts2viz.engine import ScoreCache

    with ScoreCache(tmp_path) as cache:
        assert cache.count(metric.config_hash) == 2
    assert len(prepared) <= 6
    seen: list = []
    monkeypatch.setattr(metric, "score_prepared", _spy(metric, seen))
    again = engine.score_images(metric, ims, prompts, batch_size=2, cache_dir=tmp_path)
    assert sum(len(b) for b in seen) == 10
    assert np.array_equal(again, whole)


# -- threads and hashing ----------------------------------------------------------------------------------------

def test_preparation_threads_run_torch_on_one_thread_without_changing_the_process():
    import torch

    from ts2viz.engine.inputs import one_torch_thread

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = {}

        def worker():
            one_torch_thread()
            seen["worker"] = torch.get_num_threads()

        def fresh():
            seen["fresh"] = torch.get_num_threads()

        for fn in (worker, fresh):
            t = threading.Thread(target=fn)
            t.start()
            t.join()
        assert seen == {"worker": 1, "fresh": 2} and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_the_engines_preparation_threads_are_single_threaded_and_sized_by_the_cpus(monkeypatch):
    import os

    import torch

    from ts2viz.engine.inputs import preparation_threads

    monkeypatch.setenv("TS2VIZ_WORKERS", "5")
    assert preparation_threads() == 5
    monkeypatch.delenv("TS2VIZ_WORKERS")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert preparation_threads() == max(1, min(32, cpus - 1))
    metric = _metric("clip", None)
    threads = []
    real = metric.prepare
    monkeypatch.setattr(metric, "prepare",
                        lambda image, name=None: threads.append(torch.get_num_threads()) or real(image, name))
    before = torch.get_num_threads()
    engine.score_images(metric, [Image.new("RGB", (30, 30), c) for c in ("red", "blue", "green")], PROMPTS,
                        use_cache=False)
    assert threads == [1, 1, 1] and torch.get_num_threads() == before


def test_a_model_on_the_cpu_never_computes_while_images_are_prepared(monkeypatch):
    """On the CPU preparation and the model never run at once (more busy threads than cores).

    A batch is prepared on every pool thread, then the model runs, then the next batch is prepared.
    """
    from ts2viz.engine.inputs import computes_on_cpu

    metric = _metric("clip", None)
    assert computes_on_cpu(metric)
    state = {"model": False, "overlap": 0, "prepared": 0}
    lock = threading.Lock()
    real_prepare, real_score = metric.prepare, metric.score_prepared

    def prepare(image, name=None):
        with lock:
            state["overlap"] += state["model"]
            state["prepared"] += 1
        return real_prepare(image, name)

    def score(items, prompts):
        state["model"] = True
        try:
            import time

            t = time.perf_counter()
            while time.perf_counter() - t < 0.05:   # time for a preparing thread to show itself
                pass
            return real_score(items, prompts)
        finally:
            state["model"] = False

    monkeypatch.setattr(metric, "prepare", prepare)
    monkeypatch.setattr(metric, "score_prepared", score)
    monkeypatch.setenv("TS2VIZ_WORKERS", "3")
    rng = np.random.default_rng(5)
    ims = [Image.fromarray(rng.integers(0, 256, (30, 30, 3), dtype=np.uint8)) for _ in range(12)]
    engine.score_images(metric, ims, [PROMPTS[k % 3] for k in range(12)], batch_size=2, use_cache=False)
    assert state == {"model": False, "overlap": 0, "prepared": 12}


def test_images_are_hashed_only_for_the_cache(tmp_path, monkeypatch):
    import ts2viz.engine.batches as batches

    calls = []
    real = batches.hash_pil
    monkeypatch.setattr(batches, "hash_pil", lambda image: calls.append(1) or real(image))
    ims = [Image.new("RGB", (30, 30), c) for c in ("red", "blue")]
    metric = _metric("clip", None)
    engine.score_images(metric, ims, PROMPTS[:2], use_cache=False)
    assert calls == []
    engine.score_images(metric, ims, PROMPTS[:2], cache_dir=tmp_path)
    assert len(calls) == 2


def test_selecting_rows_before_the_log_softmax_changes_no_number():
    """The premise of LLaVA's answer score taking the log-softmax of the answer positions only: each row's
    log-softmax is the same numbers, computed alone or within the whole (batch x length x vocabulary) tensor."""
    import torch

    g = torch.Generator().manual_seed(0)
    logits = (torch.randn(5, 41, 3001, generator=g) * 7).to(torch.bfloat16)
    at = torch.tensor([(0, 3), (0, 4), (2, 40), (4, 0), (4, 17), (1, 39)])
    whole = torch.log_softmax(logits.float(), dim=-1).double()[at[:, 0], at[:, 1]]
    rows = torch.log_softmax(logits[at[:, 0], at[:, 1]].float(), dim=-1).double()
    assert torch.equal(whole, rows)
