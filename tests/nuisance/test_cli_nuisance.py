"""``ts2viz nuisance`` end to end with a tiny CLIP, its columns in ``ts2viz leaderboard``, and bad input:
one line on stderr, exit code 2, no file written (neither the long table nor the summary)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tiny_models import tiny, write_image_dataset
from ts2viz.cli import main
from ts2viz.dataset import load_dataset
from ts2viz.nuisance import read_nuisance, summarize

TRANSFORMS = "jpeg:quality=30,blur:sigma=2,hflip,prefix"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    ds = write_image_dataset(root / "ds", n_segs=4)
    spec = f"clipscore:{tiny('clip')}"
    out = root / "nuis.csv"
    assert main(["score", "--metric", spec, "--dataset", str(ds), "--out", str(root / "scores.csv"),
                 "--cache", str(root / "cache"), "-q"]) == 0
    assert main(["nuisance", "--metric", spec, "--dataset", str(ds), "--transforms", TRANSFORMS, "--out", str(out),
                 "--cache", str(root / "cache"), "--resamples", "500", "-q"]) == 0
    return root, ds, spec, out


def test_long_table_summary_and_leaderboard_columns(ran, capsys):
    root, ds, spec, out = ran
    capsys.readouterr()
    long = pd.read_csv(out)
    n = len(load_dataset(ds).file_names)
    assert len(long) == 4 * n and set(long["transform"]) == {"jpeg:quality=30", "blur:sigma=2", "hflip",
                                                              "prefix:text=a photo of"}
    assert long.loc[long["transform"] == "hflip", "changes_meaning"].all()
    summary = pd.read_csv(root / "nuis.summary.csv")
    assert list(summary["transform"]) == ["jpeg:quality=30", "blur:sigma=2", "hflip", "prefix:text=a photo of"]
    # the leaderboard with the stability columns: the same numbers as the summary over its own SEGs
    assert main(["leaderboard", "--dataset", str(ds), "--scores", str(root / "scores.csv"), "--nuisance", str(out),
                 "--resamples", "500", "--out", str(root / "board.csv")]) == 0
    text = capsys.readouterr().out
    assert "Stability under nuisance" in text and "hflip †" in text and "blur:sigma=2 *" in text
    board = pd.read_csv(root / "board.csv").set_index("metric")
    want = summarize(read_nuisance(out, load_dataset(ds)), load_dataset(ds), n_resamples=500).frame()
    for r in want.itertuples():
        for stat, short in (("ratio", "nsr"), ("flip_rate", "flip"), ("ord_diff", "dord"), ("up_share", "up")):
            for suf in ("", "_lo", "_hi"):
                got, exp = board.loc[spec, f"{short}[{r.transform}]{suf}"], getattr(r, stat + suf)
                assert got == pytest.approx(exp, abs=1e-6, nan_ok=True)
    keep = want[~want["changes_meaning"]]
    assert board.loc[spec, "nsr_worst"] == pytest.approx(keep["ratio"].max(), abs=1e-6)
    assert np.isfinite(board.loc[spec, "nsr[blur:sigma=2]_lo"])


def test_leaderboard_warns_about_a_metric_it_does_not_have(ran, capsys):
    root, ds, spec, out = ran
    df = pd.read_csv(out)
    df["metric"] = "SomethingElse"
    df.to_csv(root / "other.csv", index=False)
    capsys.readouterr()
    assert main(["leaderboard", "--dataset", str(ds), "--scores", str(root / "scores.csv"), "--nuisance",
                 str(root / "other.csv"), "--resamples", "100"]) == 0
    err = capsys.readouterr().err
    assert "'SomethingElse' is not in the scores" in err


def _bad(capsys, argv, *files):
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("ts2viz: error: ") and err.strip().count("\n") == 0
    for f in files:
        assert not Path(f).exists(), f
    return err


def test_bad_input_one_line_exit_2_no_file(ran, tmp_path, capsys):
    root, ds, spec, out = ran
    o = tmp_path / "o.csv"
    base = ["nuisance", "--metric", spec, "--dataset", str(ds), "--out", str(o), "-q", "--cache", str(root / "cache")]
    s = tmp_path / "o.summary.csv"
    assert "unknown transform 'jpg'; did you mean 'jpeg'?" in _bad(capsys, base + ["--transforms", "jpg"], o, s)
    assert "quality=0 is out of range" in _bad(capsys, base + ["--transforms", "jpeg:quality=0"], o, s)
    assert "fraction must be a number >= 0.9" in _bad(capsys, base + ["--transforms", "crop:fraction=0.5"], o, s)
    assert "given twice" in _bad(capsys, base + ["--transforms", "blur,blur:sigma=2"], o, s)
    assert "--seed" in _bad(capsys, base + ["--seed", "-3"], o, s)
    assert "--resamples" in _bad(capsys, base + ["--resamples", "0"], o, s)
    assert "--out must end in .csv" in _bad(capsys, ["nuisance", "--metric", spec, "--dataset", str(ds), "--out",
                                                     str(tmp_path / "o.txt")], tmp_path / "o.txt")
    (tmp_path / "d.csv").mkdir()
    assert "is a folder" in _bad(capsys, ["nuisance", "--metric", spec, "--dataset", str(ds), "--out",
                                          str(tmp_path / "d.csv")], tmp_path / "d.summary.csv")
    assert "another file than --out" in _bad(capsys, base + ["--summary", str(o)], o)
    assert "reads precomputed scores" in _bad(capsys, ["nuisance", "--metric", f"csv:{root / 'scores.csv'}",
                                                       "--dataset", str(ds), "--out", str(o)], o, s)
    assert "no model folder" in _bad(capsys, ["nuisance", "--metric", "clipscore:/no/such/dir", "--dataset", str(ds),
                                              "--out", str(o), "-q"], o, s)
    # a long table the leaderboard cannot read: the file and the row
    df = pd.read_csv(out)
    df.loc[3, "transform"] = "blurr:sigma=2"
    df.to_csv(tmp_path / "bad.csv", index=False)
    err = _bad(capsys, ["leaderboard", "--dataset", str(ds), "--scores", str(root / "scores.csv"), "--nuisance",
                        str(tmp_path / "bad.csv"), "--out", str(tmp_path / "b.csv")], tmp_path / "b.csv")
    assert "bad.csv, row 5: unknown transform 'blurr'" in err
    df = pd.read_csv(out)
    df.loc[0, "file_name"] = "images/nope.jpg"
    df.to_csv(tmp_path / "bad2.csv", index=False)
    assert "row 2: unknown file_name 'images/nope.jpg'" in _bad(
        capsys, ["leaderboard", "--dataset", str(ds), "--scores", str(root / "scores.csv"), "--nuisance",
                 str(tmp_path / "bad2.csv")])
    df = pd.read_csv(out, dtype=str)
    df.loc[7, "transformed"] = "lots"
    df.to_csv(tmp_path / "bad3.csv", index=False)
    assert "row 9: column 'transformed': 'lots' is not a number" in _bad(
        capsys, ["leaderboard", "--dataset", str(ds), "--scores", str(root / "scores.csv"), "--nuisance",
                 str(tmp_path / "bad3.csv")])


def test_transforms_lists_the_registry(capsys):
    assert main(["transforms"]) == 0
    out = capsys.readouterr().out
    assert "jpeg" in out and "quality=75" in out and "hflip" in out and "changes meaning" in out
    assert "default set: jpeg:quality=30," in out


def test_cli_imports_no_heavy_package():
    import subprocess
    import sys

    code = ("import sys, ts2viz.cli, ts2viz.nuisance, ts2viz.cli.nuisance; "
            "bad = [m for m in ('torch', 'transformers', 'gradio', 'plotly') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
