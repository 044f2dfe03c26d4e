"""The scoring engine end to end: dataset folder -> metric -> cache -> scores file -> meta-metrics."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tiny_models import openclip_spec, tiny, write_image_dataset
from ts2viz import engine
from ts2viz.metametrics import results as metametrics
from ts2viz.cli import main
from ts2viz.dataset import load_dataset
from ts2viz.errors import InputError
from ts2viz.scores import read_scores, write_scores


@pytest.fixture()
def dataset_dir(tmp_path) -> Path:
    return write_image_dataset(tmp_path / "ds", n_segs=3)


def _count_calls(metric):
    """Wrap metric.score_prepared to count model calls (the real method still runs)."""
    calls = []
    orig = metric.score_prepared

    def spy(items, prompts):
        calls.append(len(items))
        return orig(items, prompts)

    metric.score_prepared = spy
    return calls


def test_dataset_to_leaderboard_and_cache_reuse(dataset_dir, tmp_path):
    spec = f"clipscore:{tiny('clip')}"
    metric = engine.get_metric(spec, "cpu")
    calls = _count_calls(metric)
    ds = load_dataset(dataset_dir)
    seen = []
    sc = engine.score_dataset(ds, [metric], device="cpu", batch_size=4, cache_dir=tmp_path / "cache",
                              progress=lambda s, d, t: seen.append((s, d, t)))
    assert sc.metrics == [spec] and len(sc.file_names) == 15
    assert sum(calls) == 15 and max(calls) <= 4
    assert seen[-1] == (spec, 15, 15)
    # Same numbers as calling the metric directly on the files.
    paths = [str(dataset_dir / fn) for fn in sc.file_names]
    direct = metric(images=paths, prompts=[ds.row(fn).prompt for fn in sc.file_names])
    np.testing.assert_allclose(sc.column(spec), direct, atol=1e-6)
    # Scores file -> meta-metrics and the leaderboard command.
    out = tmp_path / "scores.csv"
    write_scores(sc, out)
    back = read_scores(out, dataset=ds)
    np.testing.assert_allclose(back.column(spec), sc.column(spec), rtol=1e-8)
    mm = metametrics.compute(ds, back)
    lb = mm.leaderboard()
    assert list(lb["metric"]) == [spec] and np.isfinite(lb["ord_avg"]).all()
    assert main(["leaderboard", "--dataset", str(dataset_dir), "--scores", str(out)]) == 0
    # Second run: everything from the cache, zero model calls.
    calls.clear()
    sc2 = engine.score_dataset(ds, [metric], batch_size=4, cache_dir=tmp_path / "cache")
    assert calls == []
    np.testing.assert_array_equal(sc2.values, sc.values)     # exact: a cache round trip of float64
    # The app's live scoring shares the cache: no model call for cached images either.
    live = engine.score_images(metric, paths[:3], [ds.row(fn).prompt for fn in sc.file_names[:3]],
                               cache_dir=tmp_path / "cache")
    assert calls == [] and np.allclose(live, sc.values[:3, 0])
    # A different prompt is a different key: computed.
    engine.score_images(metric, paths[:1], ["two blue dogs"], cache_dir=tmp_path / "cache")
    assert calls == [1]


def test_unreadable_image_gets_nan_and_run_goes_on(dataset_dir, tmp_path):
    (dataset_dir / "images" / "001-02.jpg").write_bytes(b"\xff\xd8 truncated garbage")
    (dataset_dir / "images" / "002-03.jpg").unlink()
    with pytest.warns(UserWarning, match="2 image"):
        sc = engine.score_dataset(dataset_dir, [f"clipscore:{tiny('clip')}"], device="cpu",
                                  cache_dir=tmp_path / "c")
    col = sc.column(sc.metrics[0])
    bad = {sc.file_names.index("images/001-02.jpg"), sc.file_names.index("images/002-03.jpg")}
    assert all(np.isnan(col[i]) for i in bad)
    assert np.isfinite(np.delete(col, list(bad))).all()


def test_two_metrics_and_seg_subset(dataset_dir, tmp_path):
    specs = [f"clipscore:{tiny('clip')}", openclip_spec()]
    sc = engine.score_dataset(dataset_dir, specs, seg_ids=[0, 2], device="cpu", cache_dir=tmp_path / "c")
    assert sc.metrics == specs and len(sc.file_names) == 10
    assert np.isfinite(sc.values).all()
    assert {f[7:10] for f in sc.file_names} == {"000", "002"}


def test_bundled_ts2_without_images_is_a_clear_error(tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    with pytest.raises(InputError, match="could be read"):
        engine.score_dataset("ts2", [f"clipscore:{tiny('clip')}"], seg_ids=[0], device="cpu",
                             cache_dir=tmp_path / "c")


def test_cli_score_then_leaderboard(dataset_dir, tmp_path, capsys):
    out = tmp_path / "s.csv"
    spec = f"clipscore:{tiny('clip')}"
    rc = main(["score", "--metric", spec, "--metric", openclip_spec(), "--dataset", str(dataset_dir),
               "--seg", "0-1", "--out", str(out), "--device", "cpu", "--batch-size", "3",
               "--cache", str(tmp_path / "c"), "--quiet"])
    assert rc == 0
    assert "10 images" in capsys.readouterr().out
    sc = read_scores(out)
    assert sc.metrics == [spec, openclip_spec()] and np.isfinite(sc.values).all()
    assert main(["leaderboard", "--dataset", str(dataset_dir), "--scores", str(out), "--seg", "0-1"]) == 0


def test_cli_errors_exit_2(dataset_dir, tmp_path, capsys):
    import torch

    base = ["score", "--dataset", str(dataset_dir), "--out", str(tmp_path / "o.csv"), "--cache", str(tmp_path / "c")]
    assert main([*base, "--metric", "nosuchfamily:x/y"]) == 2
    assert main([*base, "--metric", f"clipscore:{tmp_path}/missing-model"]) == 2
    if not torch.cuda.is_available():
        assert main([*base, "--metric", f"clipscore:{tiny('clip')}", "--device", "cuda"]) == 2
    assert main(["score", "--metric", f"clipscore:{tiny('clip')}", "--dataset", str(dataset_dir),
                 "--out", str(tmp_path / "o.txt")]) == 2
    err = capsys.readouterr().err
    assert "nosuchfamily" in err and "no CUDA GPU" in err or torch.cuda.is_available()
    assert not (tmp_path / "o.csv").exists()
    assert main(["metrics"]) == 0 and "clipscore" in capsys.readouterr().out


def test_user_callable_and_csv_metrics(dataset_dir, tmp_path):
    mod = tmp_path / "mymetric.py"
    mod.write_text(textwrap.dedent("""
        import numpy as np
        version = 1
        def mean_red(images, prompts):
            return [float(np.asarray(im)[..., 0].mean()) for im in images]
        def badness(images, prompts):
            return [len(p) for p in prompts]
        badness.higher_is_better = False
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        specs = ["callable:mymetric:mean_red", f"callable:{mod}:badness"]
        sc = engine.score_dataset(dataset_dir, specs, device="cpu", cache_dir=tmp_path / "c")
    finally:
        sys.path.remove(str(tmp_path))
    from PIL import Image

    want = [np.asarray(Image.open(dataset_dir / f).convert("RGB"))[..., 0].mean() for f in sc.file_names]
    np.testing.assert_allclose(sc.column(specs[0]), want)
    assert sc.lower_is_better == {specs[1]}
    out = tmp_path / "u.csv"
    write_scores(sc.select([specs[0]]), out)
    csv_spec = f"csv:{out}"
    sc2 = engine.score_dataset(dataset_dir, [csv_spec], cache_dir=tmp_path / "c")
    np.testing.assert_allclose(sc2.column(csv_spec), sc.column(specs[0]))
    m = engine.get_metric(csv_spec)
    got = m(images=[str(dataset_dir / sc.file_names[1])], prompts=["x"])
    assert got[0] == pytest.approx(sc.column(specs[0])[1])


KILL_SCRIPT = """
import os, signal, sys
sys.path[:0] = {paths!r}
from ts2viz import engine
n = 0
def progress(spec, done, total):
    global n
    n += 1
    if n == 3:  # first call reports cache hits, then two batches were committed
        os.kill(os.getpid(), signal.SIGKILL)
engine.score_dataset({ds!r}, [{spec!r}], device="cpu", batch_size=4, cache_dir={cache!r}, progress=progress)
"""


@pytest.mark.exact_batches  # counts the rows of two committed batches of 4
def test_killed_run_keeps_finished_batches_and_cache_is_sound(dataset_dir, tmp_path):
    spec = f"clipscore:{tiny('clip')}"
    cache = tmp_path / "cache"
    here = Path(__file__).resolve().parent
    script = KILL_SCRIPT.format(paths=[str(here.parent / 'support'), str(here.parents[1])], ds=str(dataset_dir), spec=spec,
                                cache=str(cache))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == -9, r.stderr[-2000:]
    con = sqlite3.connect(cache / "scores.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 8
    con.close()
    metric = engine.get_metric(spec, "cpu")
    calls = _count_calls(metric)
    sc = engine.score_dataset(dataset_dir, [metric], batch_size=4, cache_dir=cache)
    assert sum(calls) == 7 and np.isfinite(sc.values).all()


def test_score_images_with_pil_and_no_cache(tmp_path):
    from PIL import Image

    ims = [Image.new("RGB", (30, 30), c) for c in ("red", "blue")]
    spec = f"clipscore:{tiny('clip')}"
    a = engine.score_images(spec, ims, ["a red cat", "a blue dog"], device="cpu", use_cache=False)
    b = engine.score_images(spec, ims, ["a red cat", "a blue dog"], device="cpu", cache_dir=tmp_path)
    c = engine.score_images(spec, ims, ["a red cat", "a blue dog"], device="cpu", cache_dir=tmp_path)
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_array_equal(b, c)     # exact: c is b read back from the cache
    with pytest.raises(InputError):
        engine.score_images(spec, ims, ["only one prompt"])
