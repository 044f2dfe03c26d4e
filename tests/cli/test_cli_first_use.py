"""Issue 21, "tried as a new user would", on the command line (items 1 and 6).

Expected numbers: the published TS2 web leaderboard's DSG rows (Ord, paper mode), DSG-InstructBLIP
80.2 and DSG-Fuyu 35.8; the release's gated per-image DSG columns give 79.0 and 29.5 (issue 21).
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from ts2viz.cli import main
from ts2viz.paths import bundled_data_dir

PUBLISHED = bundled_data_dir() / "ts2" / "published_scores.csv"


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    """A user's scores file on the TS2 images: one column, 'Mine' (random, seeded)."""
    lines = [ln for ln in PUBLISHED.read_text().splitlines() if not ln.startswith("#")]
    names = [r[0] for r in csv.reader(lines[1:])]
    rng = np.random.default_rng(0)
    p = tmp_path_factory.mktemp("mine") / "mine.csv"
    p.write_text("file_name,Mine\n" + "".join(f"{n},{v:.4f}\n" for n, v in zip(names, rng.random(len(names)))))
    return p


def _ord_avg(out: str, metric: str) -> float:
    row = next(ln for ln in out.splitlines() if ln.split() and ln.split()[0] == metric)
    return float(row.split()[1])


def test_bundled_name_plus_a_file_is_what_the_app_shows(mine, capsys):
    rc = main(["leaderboard", "--scores", "ts2", str(mine), "--metrics", "DSG-InstructBLIP,DSG-Fuyu,Mine"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert _ord_avg(cap.out, "DSG-InstructBLIP") == 80.2 and _ord_avg(cap.out, "DSG-Fuyu") == 35.8
    assert "Mine" in cap.out and "DSG columns: mean accumulation" in cap.out
    assert "warning" not in cap.err
    # --dsg now goes with the bundled name
    rc = main(["leaderboard", "--scores", "ts2", str(mine), "--dsg", "gated", "--metrics", "DSG-InstructBLIP"])
    cap = capsys.readouterr()
    assert rc == 0 and _ord_avg(cap.out, "DSG-InstructBLIP") == 79.0 and "gated accumulation" in cap.out
    # a file's metric with a bundled name: an error, as when uploading it in the app
    assert main(["leaderboard", "--scores", "ts2", str(PUBLISHED)]) == 2
    assert "appears in two scores files" in capsys.readouterr().err


def test_released_file_with_bundled_names_warns(mine, capsys):
    rc = main(["leaderboard", "--scores", str(PUBLISHED), str(mine), "--metrics", "DSG-InstructBLIP,Mine"])
    cap = capsys.readouterr()
    assert rc == 0 and _ord_avg(cap.out, "DSG-InstructBLIP") == 79.0
    assert "'DSG-InstructBLIP' has the name of a bundled TS2 metric but other values" in cap.err
    assert "--scores ts2" in cap.err
    # only --dsg without the bundled scores is refused
    assert main(["leaderboard", "--scores", str(mine), "--dsg", "gated"]) == 2
    assert "--scores ts2" in capsys.readouterr().err


def test_metric_names_ignore_case_and_suggest(capsys):
    assert main(["leaderboard", "--metrics", "clipscore,TIFA-gpt4v"]) == 0
    out = capsys.readouterr().out
    assert "CLIPScore" in out and "TIFA-GPT4V" in out
    assert main(["leaderboard", "--metrics", "ClipSore"]) == 2
    err = capsys.readouterr().err
    assert "no metric 'ClipSore'" in err and "did you mean 'CLIPScore'" in err and err.count("\n") == 1
    assert main(["compare", "clipscore", "vieScore", "--resamples", "50", "--seg", "0-40"]) == 0
    out = capsys.readouterr().out
    assert "CLIPScore" in out and "VIEScore" in out


def test_score_without_images_fails_before_loading_a_model(tmp_path, monkeypatch, capsys):
    from ui_helpers import write_dataset

    from ts2viz.engine import core

    ds = write_dataset(tmp_path / "ds", big_image=False)
    for f in (ds / "images").iterdir():
        f.unlink()
    loaded = []
    monkeypatch.setattr(core, "get_metric", lambda *a, **k: loaded.append(a) or pytest.fail("model loaded"))
    rc = main(["score", "--metric", "clipscore:ViT-B-32/openai", "--dataset", str(ds), "--out", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and loaded == [] and not (tmp_path / "o.csv").exists()
    assert "none of the 39 images" in err and "no model was loaded" in err
