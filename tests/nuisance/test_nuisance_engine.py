"""Transformed copies through the batch engine with a tiny CLIP: the same numbers as scoring the transformed
images directly, batched, cached with the transform in the key, resumable, and the same on Ray."""
from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from tiny_models import tiny, write_image_dataset
from ts2viz import engine
from ts2viz.dataset import load_dataset
from ts2viz.errors import InputError
from ts2viz.metrics.common.base import load_image
from ts2viz.nuisance import run as R, transforms as T

SPECS = ["jpeg:quality=30", "noise:sigma=8", "crop:fraction=0.9", "period"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("nuis")
    return load_dataset(write_image_dataset(root / "ds", n_segs=3)), f"clipscore:{tiny('clip')}"


def spy(metric):
    calls = []
    orig = metric.score_prepared

    def wrapped(items, prompts):
        calls.append(len(items))
        return orig(items, prompts)

    metric.score_prepared = wrapped
    return calls


@pytest.mark.exact_batches  # counts the model's calls per batch of 4
def test_transformed_scores_equal_scoring_the_transformed_images(data, tmp_path):
    ds, spec = data
    metric = engine.get_metric(spec, "cpu")
    calls = spy(metric)
    try:
        seen = []
        ns = R.run(ds, metric, SPECS, seed=4, batch_size=4, cache_dir=tmp_path / "cache",
                   progress=lambda s, d, t: seen.append((s, d, t)))
        r = ns.runs[0]
        n = len(ds.file_names)
        assert r.transformed.shape == (n, len(SPECS)) and max(calls) <= 4 and sum(calls) == n * (1 + len(SPECS))
        assert {s for s, _, _ in seen} == {f"{spec} [clean]"} | {f"{spec} [{t}]" for t in SPECS}
        # the clean column is what `ts2viz score` gives
        ref = engine.score_dataset(ds, [metric], batch_size=4, cache_dir=tmp_path / "cache")
        np.testing.assert_array_equal(r.clean, ref.column(spec))
        # each transformed column: the metric called directly on the transformed image / prompt
        paths = [ds.image_path(f) for f in r.file_names]
        prompts = [ds.row(f).prompt for f in r.file_names]
        for k, s in enumerate(SPECS):
            t = T.parse(s)
            if t.side == "image":
                imgs = [t.image(load_image(p, "ts2viz"), seed=4) for p in paths]
                direct = metric(images=imgs, prompts=prompts)
            else:
                direct = metric(images=paths, prompts=[t.text(p) for p in prompts])
            np.testing.assert_allclose(r.transformed[:, k], direct, rtol=1e-6, atol=1e-7)
            assert np.abs(r.transformed[:, k] - r.clean).max() > 1e-6       # the transform did something
        # a re-run: every score from the cache, no model call
        calls.clear()
        again = R.run(ds, metric, SPECS, seed=4, batch_size=4, cache_dir=tmp_path / "cache")
        assert calls == [] and np.array_equal(again.runs[0].transformed, r.transformed)
        # the transform (and the random one's seed) is in the key: each copy has entries of its own
        with sqlite3.connect(tmp_path / "cache" / "scores.sqlite") as con:
            assert con.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == n * (1 + len(SPECS))
        other = R.run(ds, metric, ["noise:sigma=8"], seed=5, batch_size=4, cache_dir=tmp_path / "cache")
        assert calls == [n] * 0 + [4] * (n // 4) + ([n % 4] if n % 4 else [])
        assert not np.array_equal(other.runs[0].transformed[:, 0], r.transformed[:, 1])
    finally:
        metric.score_prepared = type(metric).score_prepared.__get__(metric)


@pytest.mark.exact_batches  # stopped after two batches of 4: counts what is left
def test_an_interrupted_run_resumes_where_it_stopped(data, tmp_path):
    ds, spec = data
    metric = engine.get_metric(spec, "cpu")

    class Stop(Exception):
        pass

    def progress(label, done, total):
        if label.endswith("[noise:sigma=8]") and done >= 8:
            raise Stop                                # killed two batches into the second transform

    with pytest.raises(Stop):
        R.run(ds, metric, ["jpeg:quality=30", "noise:sigma=8"], batch_size=4, cache_dir=tmp_path / "c", progress=progress)
    calls = spy(metric)
    try:
        done = R.run(ds, metric, ["jpeg:quality=30", "noise:sigma=8"], batch_size=4, cache_dir=tmp_path / "c")
        n = len(ds.file_names)
        assert sum(calls) == n - 8                    # only the rest of the second transform
        fresh = R.run(ds, metric, ["jpeg:quality=30", "noise:sigma=8"], batch_size=4, use_cache=False)
        np.testing.assert_allclose(done.runs[0].transformed, fresh.runs[0].transformed, rtol=1e-9)
    finally:
        metric.score_prepared = type(metric).score_prepared.__get__(metric)


def test_unreadable_images_get_nan_in_every_column(tmp_path):
    from tiny_models import tiny as _tiny

    root = write_image_dataset(tmp_path / "ds", n_segs=1)
    (root / "images" / "000-01.jpg").write_bytes(b"\xff\xd8 garbage")
    ds = load_dataset(root)
    with pytest.warns(UserWarning, match="1 image"):
        ns = R.run(ds, f"clipscore:{_tiny('clip')}", ["blur", "period"], cache_dir=tmp_path / "c")
    r = ns.runs[0]
    bad = r.file_names.index("images/000-01.jpg")
    assert np.isnan(r.clean[bad]) and np.isnan(r.transformed[bad]).all()
    assert np.isfinite(np.delete(r.transformed, bad, axis=0)).all()


def test_inputs_checked_before_any_model(tmp_path, data):
    ds, _ = data
    with pytest.raises(InputError, match="unknown transform"):
        R.run(ds, "clipscore:/no/such/model", "blurr")
    with pytest.raises(InputError, match="reads precomputed scores"):
        R.run(ds, f"csv:{tmp_path / 'x.csv'}", "blur")
    with pytest.raises(InputError, match="seed"):
        R.run(ds, "clipscore:/no/such/model", "blur", seed=-1)
    with pytest.raises(InputError, match="given twice"):
        engine.score_variants(ds, "clipscore:/x", [engine.Variant("a"), engine.Variant("a")])


def test_long_table_round_trip(data, tmp_path):
    ds, spec = data
    ns = R.run(ds, spec, ["jpeg:quality=30", "prefix"], cache_dir=tmp_path / "c")
    for name in ("n.csv", "n.parquet"):
        ns.write(tmp_path / name, ds)
        back = R.read_nuisance(tmp_path / name, ds)
        a, b = ns.runs[0], back.runs[0]
        assert (b.metric, b.higher_is_better, b.config_hash, b.file_names) == (a.metric, a.higher_is_better,
                                                                              a.config_hash, a.file_names)
        assert [t.spec for t in b.transforms] == ["jpeg:quality=30", "prefix:text=a photo of"]
        assert np.array_equal(b.clean, a.clean) and np.array_equal(b.transformed, a.transformed)   # to the bit
    df = ns.frame(ds)
    assert list(df.columns) == list(R.COLUMNS) and len(df) == 2 * len(ds.file_names)
    pre = df[df["transform"] == "prefix:text=a photo of"]
    assert all(p.startswith("a photo of ") for p in pre["prompt"]) and (pre["side"] == "text").all()


ray = pytest.importorskip("ray")


@pytest.mark.slow
@pytest.mark.exact_batches  # the same batches of 4 on Ray and in one process give the same bits (rtol 1e-9)
def test_on_ray_the_same_scores_and_the_same_cache(data, tmp_path):
    import logging

    ds, spec = data
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, num_gpus=0, object_store_memory=96 * 1024 ** 2, include_dashboard=False,
             logging_level=logging.ERROR, log_to_driver=False)
    try:
        specs = ["jpeg:quality=30", "noise:sigma=8", "roundtrip", "period"]
        seen = []
        on_ray = R.run(ds, spec, specs, seed=2, batch_size=4, cache_dir=tmp_path / "c", ray=True,
                       progress=lambda *a: seen.append(a))
    finally:
        ray.shutdown()
    single = R.run(ds, spec, specs, seed=2, batch_size=4, use_cache=False)
    a, b = on_ray.runs[0], single.runs[0]
    np.testing.assert_array_equal(np.isnan(a.transformed), np.isnan(b.transformed))
    np.testing.assert_allclose(a.transformed, b.transformed, rtol=1e-9, atol=0)
    np.testing.assert_allclose(a.clean, b.clean, rtol=1e-9, atol=0)
    assert a.config_hash == b.config_hash
    assert {s[0] for s in seen} >= {f"{spec} [{T.parse(t).spec}]" for t in specs}
    # the Ray run's cache serves the single-process engine: nothing is scored again
    metric = engine.get_metric(spec, "cpu")
    calls = spy(metric)
    try:
        R.run(ds, metric, specs, seed=2, batch_size=4, cache_dir=tmp_path / "c")
        assert calls == []
    finally:
        metric.score_prepared = type(metric).score_prepared.__get__(metric)
