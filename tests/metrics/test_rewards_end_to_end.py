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
