"""Two-level bootstrap (SEGs, then images within nodes): the image resamples, the pools against the full
meta-metric pipeline on rewritten scores, the outer level against a loop over the documented draws."""
from __future__ import annotations

import numpy as np
import pytest

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.errors import InputError
from ts2viz.metametrics.walks import STATS
from ts2viz.scores import Scores
from ts2viz.metametrics.two_level import image_pools, node_resample_index, two_level_bootstrap
from ts2viz.statistics.bootstrap import BootstrapSettings
from ts2viz.metametrics.intervals import averaged_segs, bootstrap
from ts2viz.metametrics.ranks import rank_intervals


@pytest.fixture(scope="module")
def ts2():
    ds = load_dataset("ts2")
    sc = bundled_scores().select(["CLIPScore", "TIFA-GPT4V", "VIEScore"])
    return ds, sc, compute(ds, sc, seg_ids=list(range(0, 165, 4)) + [164])


def test_node_resample_index_keeps_nodes():
    node_of = np.array([0, 1, 1, 1, 2, 2])
    idx = node_resample_index(node_of, np.random.default_rng(0), 500)
    assert (node_of[idx] == node_of[None, :]).all()
    assert (idx[:, 0] == 0).all()
    assert set(idx[:, 1:4].ravel()) == {1, 2, 3} and set(idx[:, 4:].ravel()) == {4, 5}


def test_pools_equal_the_pipeline_on_resampled_images(ts2):
    ds, sc, mm = ts2
    pools = image_pools(mm, sc, 3, seed=5)
    M = len(mm.metrics)
    for k in (0, 7):
        sid = mm.seg_ids[k]
        st = mm.walk_stats(sid)[0]
        idx = node_resample_index(st.node_of, np.random.default_rng([5, k]), 3)
        for j in range(3):
            # image i gets the scores of image idx[j, i]: the full pipeline on these scores
            vals = sc.aligned(st.file_names, list(mm.metrics), oriented=False)[idx[j]]
            res = compute(ds, Scores(list(st.file_names), list(mm.metrics), vals), seg_ids=[sid], policy=mm.policy)
            want = np.concatenate([res.seg_values[s][0] for s in STATS])
            np.testing.assert_allclose(pools[k, j], want, rtol=1e-12, atol=1e-12)
            assert pools[k, j].shape == (len(STATS) * M,)


def test_outer_level_matches_loop(ts2):
    ds, sc, mm = ts2
    st = BootstrapSettings(n_resamples=40, seed=3, image_resamples=4)
    boot = two_level_bootstrap(mm, sc, st)
    pools = image_pools(mm, sc, 4, seed=3)
    groups = averaged_segs(mm)
    rng = np.random.default_rng(3)
    draws = {g: (idx[rng.integers(0, idx.size, size=(40, idx.size))], rng.integers(0, 4, size=(40, idx.size)))
             for g, idx in groups.items() if g != "avg"}
    M = len(mm.metrics)
    for cell in ("ord_avg", "sep_synth", "kendall_real", "delta_avg"):
        stat, group = cell.rsplit("_", 1)
        col = STATS.index(stat) * M
        for b in (0, 17, 39):
            parts = draws if group == "avg" else {group: draws[group]}
            vals = np.concatenate([pools[segs[b], pick[b], col:col + M] for segs, pick in parts.values()])
            want = np.nanmean(vals, axis=0)
            np.testing.assert_allclose(boot.resampled[boot.cells.index(cell), :, b], want, rtol=1e-12)
    np.testing.assert_allclose(boot.estimate[boot.cells.index("ord_avg")], mm.averages()["ord_avg"])
    assert rank_intervals(mm, boot=boot).low.shape == (M,)


def test_two_level_widens_ord_intervals(ts2):
    ds, sc, mm = ts2
    one = bootstrap(mm, n_resamples=1000, seed=1)
    two = two_level_bootstrap(mm, sc, BootstrapSettings(1000, seed=1, image_resamples=10))
    c = one.cells.index("ord_avg")
    assert ((two.high[c] - two.low[c]) / (one.high[c] - one.low[c])).mean() > 1.0


def test_settings_validation():
    with pytest.raises(InputError):
        BootstrapSettings(image_resamples=-1)
    assert BootstrapSettings().image_resamples == 0


def test_cli_two_level(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    import pandas as pd

    out, out1 = tmp_path / "lb2.csv", tmp_path / "lb1.csv"
    repo = Path(__file__).resolve().parents[2]
    run = lambda *a: subprocess.run([sys.executable, "-m", "ts2viz", *a], capture_output=True, text=True,  # noqa: E731
                                    cwd=repo, timeout=300)
    r = run("leaderboard", "--ci", "--resamples", "500", "--image-resamples", "5", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "Two-level bootstrap" in r.stdout
    r1 = run("leaderboard", "--ci", "--resamples", "500", "--out", str(out1))
    assert "Two-level" not in r1.stdout
    two, one = pd.read_csv(out), pd.read_csv(out1)
    np.testing.assert_allclose(two.ord_avg, one.ord_avg)
    assert not np.allclose(two.ord_avg_lo, one.ord_avg_lo)
    r = run("leaderboard", "--ci", "--image-resamples", "x")
    assert r.returncode == 2 and "--image-resamples" in r.stderr
