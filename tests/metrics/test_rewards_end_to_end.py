"""Preference rewards end to end: ``ts2viz score`` (all four families in one run) into ``ts2viz leaderboard``,
on a SEG dataset of the reference fixtures' images, so that the CLI's scores are compared with the numbers
the originals' own code gave for the same images and prompts."""
from __future__ import annotations

import numpy as np
from reward_fixtures import assert_matches, fixture
from reward_specs import fixture_seg_dataset, reward_specs

#: the score each fixture records for the family's default
EXPECTED_KEY = {"pickscore": "authors", "hpsv2": "v2.1", "imagereward": "score", "hpsv3": "mu"}


def test_score_all_rewards_then_leaderboard(tmp_path, capsys):
    from ts2viz.cli import main
    from ts2viz.scores import read_scores

    ds = fixture_seg_dataset(tmp_path / "ds")
    specs = reward_specs()
    out = tmp_path / "scores.csv"
    args = ["score", "--dataset", str(ds), "--out", str(out), "--device", "cpu", "--cache", str(tmp_path / "c"),
            "--quiet"]
    for spec in specs.values():
        args += ["--metric", spec]
    assert main(args) == 0
    sc = read_scores(out)
    assert sc.metrics == list(specs.values()) and len(sc.file_names) == 5
    for k, (family, spec) in enumerate(specs.items()):
        _, exp = fixture(family)
        by_file = dict(zip(sc.file_names, sc.values[:, k]))
        got = [by_file[r["image"]] for r in exp["rows"]]
        assert np.isfinite(got).all()
        assert_matches(got, [r[EXPECTED_KEY[family]] for r in exp["rows"]], f"{family} through ts2viz score")
    capsys.readouterr()
    assert main(["leaderboard", "--dataset", str(ds), "--scores", str(out)]) == 0
    board = capsys.readouterr().out
    for family in specs:
        assert f"{family}:" in board


def test_the_fields_model_names_resolve_to_the_released_repositories(tmp_path, capsys):
    """``pickscore:pickscore-v1``, ``hpsv2:hpsv2.1``, ``imagereward:imagereward-v1.0`` and ``hpsv3:hpsv3`` load from a
    hub cache that holds the fixtures under the released repositories' ids (offline), processors and tokenizers
    from the other repositories the originals name, and score as the originals; ``ts2viz metrics`` lists them."""
    import os
    import subprocess
    import sys

    from reward_specs import hub_cache_with_fixtures

    from ts2viz.cli import main
    from ts2viz.scores import read_scores

    assert main(["metrics"]) == 0
    listing = capsys.readouterr().out
    for line in ("model pickscore-v1 = pickscore:yuvalkirstain/PickScore_v1", "model hpsv2.1 = hpsv2:xswu/HPSv2",
                 "model hpsv2 = hpsv2:xswu/HPSv2", "model imagereward-v1.0 = imagereward:THUDM/ImageReward",
                 "model hpsv3 = hpsv3:MizzenAI/HPSv3"):
        assert line in listing, line
    cache = hub_cache_with_fixtures(tmp_path / "hub")
    ds = fixture_seg_dataset(tmp_path / "ds")
    h2, e2 = fixture("hpsv2")
    specs = {"pickscore": "pickscore:pickscore-v1", "hpsv2": f"hpsv2:hpsv2.1?arch={h2 / e2['arch']}",
             "imagereward": "imagereward:imagereward-v1.0", "hpsv3": "hpsv3:hpsv3"}
    out = tmp_path / "named.csv"
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("HF_HOME", None)
    cmd = [sys.executable, "-m", "ts2viz", "score", "--dataset", str(ds), "--out", str(out), "--device", "cpu",
           "--cache", str(tmp_path / "c"), "--quiet"]
    for s in specs.values():
        cmd += ["--metric", s]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    sc = read_scores(out)
    for k, family in enumerate(specs):
        _, exp = fixture(family)
        by_file = dict(zip(sc.file_names, sc.values[:, k]))
        assert_matches([by_file[r["image"]] for r in exp["rows"]], [r[EXPECTED_KEY[family]] for r in exp["rows"]],
                       f"{specs[family]} from the hub cache")
    # HPS v2.0's checkpoint is not in that cache: one line naming the file, the repository and offline mode
    bad = subprocess.run([sys.executable, "-m", "ts2viz", "score", "--dataset", str(ds), "--out",
                          str(tmp_path / "v20.csv"), "--device", "cpu", "--quiet", "--metric",
                          f"hpsv2:hpsv2?arch={h2 / e2['arch']}"], env=env, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and not (tmp_path / "v20.csv").exists()
    msg = bad.stderr.strip().splitlines()[-1]
    assert "HPS_v2_compressed.pt" in msg and "xswu/HPSv2" in msg and "offline" in msg, bad.stderr[-2000:]
