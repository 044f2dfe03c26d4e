"""The batch engine on Ray: a local 2-CPU Ray cluster started here scores a generated SEG dataset with a
tiny local CLIP. Same scores as the single-process engine, a killed actor's blocks retried, a killed
driver's finished blocks kept, and the error without Ray installed."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from margins import assert_distinct
from tiny_models import tiny, write_image_dataset
from ts2viz import engine
from ts2viz.cli import main
from ts2viz.scores import read_scores

BS = 2  # 40 images -> 20 blocks: enough for a kill to land mid-run
HERE = Path(__file__).resolve().parent


def test_without_ray_installed_one_line_error_exit_2(tmp_path, monkeypatch, capsys):
    ds = write_image_dataset(tmp_path / "ds", n_segs=1)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    # The model is never loaded: the missing package is reported first.
    rc = main(["score", "--metric", "clipscore:openai/clip-vit-base-patch32", "--dataset", str(ds), "--out",
               str(tmp_path / "o.csv"), "--ray", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip().count("\n") == 0 and "pip install 'ts2viz[ray]'" in err
    assert not (tmp_path / "o.csv").exists()
    assert main(["score", "--metric", "x:y", "--dataset", str(ds), "--out", str(tmp_path / "o.csv"),
                 "--ray-actors", "2"]) == 2


ray = pytest.importorskip("ray")


def test_unreachable_cluster_is_a_quick_one_line_error(tmp_path, capsys):
    import socket

    if ray.is_initialized():
        pytest.skip("this process is already connected to Ray (the address would not be used)")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ds = write_image_dataset(tmp_path / "ds", n_segs=1)
    rc = main(["score", "--metric", "clipscore:openai/clip-vit-base-patch32", "--dataset", str(ds), "--out",
               str(tmp_path / "o.csv"), "--ray", f"127.0.0.1:{port}", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and f"cannot reach the Ray cluster at '127.0.0.1:{port}'" in err
    assert err.strip().count("\n") == 0 and not ray.is_initialized()


@pytest.fixture(autouse=True)
def deadline():
    """Fail a test that runs past 600 s instead of hanging the suite (the driver polls Ray each second)."""
    def expire(signum, frame):
        raise TimeoutError("test ran past its 600 s deadline")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(600)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def cluster():
    """A local Ray instance with 2 CPUs, a small object store and no dashboard; its GCS address."""
    import logging

    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, num_gpus=0, object_store_memory=96 * 1024 ** 2, include_dashboard=False,
             logging_level=logging.ERROR, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A 40-image dataset (one unreadable JPEG, one missing file) and the single-process scores of it."""
    root = tmp_path_factory.mktemp("ray")
    ds = write_image_dataset(root / "ds", n_segs=8)
    # Both near the end, so that the first blocks to finish hold two scored images each.
    (ds / "images" / "007-02.jpg").write_bytes(b"\xff\xd8 truncated garbage")
    (ds / "images" / "006-03.jpg").unlink()
    spec = f"clipscore:{tiny('clip')}"
    with pytest.warns(UserWarning, match="2 image"):
        ref = engine.score_dataset(ds, [spec], device="cpu", batch_size=BS, cache_dir=root / "ref-cache")
    return ds, spec, ref


def assert_same_scores(got, want) -> None:
    """Scores of the same images by the same model in another process: NaN in the same places and
    equal to 1e-9 relative; the tolerance is far below the gap between any two images' scores."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # no two images' scores within 1e-6 (1000 times the tolerance below): a swapped image would not pass
    assert_distinct(want[~np.isnan(want)], rel=0.0, abs_tol=1e-6, context="tiny CLIP's scores of the images")
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


USER_METRIC = """
import numpy as np
def mean_red(images, prompts):
    return [float(np.asarray(im)[..., 0].mean()) + len(p) for im, p in zip(images, prompts)]
"""


def test_errors_and_a_user_metric_without_cache(cluster, data, tmp_path):
    from ts2viz.errors import InputError

    ds, spec, ref = data
    with pytest.raises(InputError, match="unknown metric family"):  # before any actor starts
        engine.score_dataset(ds, ["nosuch:x/y"], ray=True, cache_dir=tmp_path / "c")
    with pytest.raises(InputError, match="SPEC strings"):
        engine.score_dataset(ds, [engine.get_metric(spec, "cpu")], ray=True, cache_dir=tmp_path / "c")
    # A metric that fails to load on the actor: its one-line error, not a dead-actor traceback.
    with pytest.raises(InputError, match="cannot import 'no_such_module_xyz'"):
        engine.score_dataset(ds, ["callable:no_such_module_xyz:f"], ray=True, ray_actors=1,
                             cache_dir=tmp_path / "c")
    assert not [n for n in ray.util.list_named_actors() if n.startswith("ts2viz-score-")]  # pool closed
    # A user metric from a file (no torch: quick actors), no cache: nothing hashed, same numbers.
    (tmp_path / "usermetric.py").write_text(USER_METRIC)
    user = f"callable:{tmp_path / 'usermetric.py'}:mean_red"
    with pytest.warns(UserWarning, match="2 image"):
        want = engine.score_dataset(ds, [user], use_cache=False)
    seen = []
    with pytest.warns(UserWarning, match="2 image"):
        got = engine.score_dataset(ds, [user], use_cache=False, ray=True, progress=lambda *a: seen.append(a))
    # exact: the same numpy code on the same pixels in the same order, in another process
    np.testing.assert_array_equal(got.values, want.values)
    assert {s[0] for s in seen} == {user}


def test_scores_equal_single_process_and_survive_a_killed_actor(cluster, data, tmp_path):
    ds, spec, ref = data
    seen = []
    state = {"actor": None, "killed": None, "restarted": None, "left": None}

    def progress(label, done, total):
        seen.append((label, done, total))
        if label != spec or len([s for s in seen if s[0] == spec]) == 1:
            return  # the first report counts the missing image, before any block
        if state["actor"] is None:
            # The first block is committed, so the pool's first actor is up and has blocks in flight.
            name = next(n for n in ray.util.list_named_actors() if n.startswith("ts2viz-score-") and n.endswith("-0"))
            state["actor"] = ray.get_actor(name)
            pid = ray.get(state["actor"].info.remote(), timeout=60)["pid"]
            os.kill(pid, signal.SIGKILL)  # the actor's process dies with its blocks
            state.update(killed=pid, left=total - done)
        elif state["restarted"] is None:
            state["restarted"] = ray.get(state["actor"].info.remote(), timeout=120)["pid"]

    with pytest.warns(UserWarning, match="2 image"):
        sc = engine.score_dataset(ds, [spec], device="cpu", batch_size=BS, cache_dir=tmp_path / "c",
                                  ray=True, progress=progress)
    assert state["killed"] is not None and state["left"] >= 30  # killed early, most work still to do
    assert state["restarted"] not in (None, state["killed"])  # Ray restarted the actor in a new process
    assert sc.metrics == [spec] and sc.file_names == ref.file_names
    # Same batches, same numbers: equal to 1e-9 relative, not bit for bit (the actor's torch may run
    # with another thread count than this process, which can group a matmul's additions differently).
    # A misplaced, skipped or rescored-on-other-pixels image would be off by far more: no two images'
    # scores here are within 1e-6 of each other.
    assert_same_scores(sc.values, ref.values)
    assert np.isnan(sc.values).sum() == 2
    # Hashing, then scoring. The missing file is neither hashed nor sent; it counts as done at once.
    assert seen[0] == ("hashing images", 0, 39) and ("hashing images", 39, 39) in seen
    scoring = [s for s in seen if s[0] == spec]
    assert scoring[0] == (spec, 1, 40) and scoring[-1] == (spec, 40, 40) and len(scoring) == 1 + 20
    con = sqlite3.connect(tmp_path / "c" / "scores.sqlite")
    assert con.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 38
    assert con.execute("SELECT COUNT(*) FROM file_hashes").fetchone()[0] == 39
    con.close()


KILL_SCRIPT = """
import os, signal, sys
sys.path[:0] = {paths!r}
import ray
from ts2viz import engine
n = 0
def progress(label, done, total):
    global n
    if label != {spec!r}:
        return
    n += 1
    if n == 4:  # the first report is the cache hits, then three blocks were committed
        os.kill(os.getpid(), signal.SIGKILL)
engine.score_dataset({ds!r}, [{spec!r}], device="cpu", batch_size={bs}, cache_dir={cache!r},
                     progress=progress, ray={address!r})
"""


def test_rerun_after_driver_kill_rescores_only_unfinished(cluster, data, tmp_path, capsys):
    ds, spec, ref = data
    cache = tmp_path / "c"
    script = KILL_SCRIPT.format(paths=[str(HERE.parent / 'support'), str(HERE.parents[1])], ds=str(ds), spec=spec, bs=BS,
                                cache=str(cache), address=cluster)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == -9, r.stderr[-3000:]
    con = sqlite3.connect(cache / "scores.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    kept = dict(con.execute("SELECT image, created FROM scores").fetchall())
    con.close()
    assert len(kept) == 3 * BS  # three committed blocks survived the kill, nothing half-written
    # Re-run through the CLI on the same cluster (this process's connection).
    out = tmp_path / "s.parquet"  # exact float64 (the CSV keeps 10 digits)
    assert main(["score", "--metric", spec, "--dataset", str(ds), "--out", str(out), "--device", "cpu",
                 "--batch-size", str(BS), "--cache", str(cache), "--ray", "--ray-actors", "1", "--quiet"]) == 0
    # the CLI prints each input warning as one line
    assert "ts2viz: warning: 2 image(s) could not be scored" in capsys.readouterr().err
    con = sqlite3.connect(cache / "scores.sqlite")
    after = dict(con.execute("SELECT image, created FROM scores").fetchall())
    con.close()
    assert len(after) == 38
    # Finished images were not rescored (a rescored row would have been replaced with a new time).
    assert {k: after[k] for k in kept} == kept
    got = read_scores(out)
    assert got.file_names == ref.file_names
    assert_same_scores(got.column(spec), ref.column(spec))
