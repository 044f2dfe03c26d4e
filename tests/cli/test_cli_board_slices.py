"""``ts2viz leaderboard --slices FAMILY [--tags F]`` as a user types it: the installed console script, run in
an empty folder (issue 38 item 1, TS2's side).

The console script is the one beside the test's Python (``.venv/bin/ts2viz``), run with no ``PYTHONPATH``
and the current folder an empty temporary one, so nothing of the repository is found but through the
install. As in ``tests/docs/test_runnable_pages.py``, the script must import the ts2viz of this checkout,
else the tests skip and say how to install it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "ts2viz"
METRICS = "CLIPScore,DSG-mPLUG,TIFA-mPLUG"


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}


@pytest.fixture(scope="module")
def installed():
    """The console script, checked to run this checkout's ts2viz (else skip, saying why)."""
    if not SCRIPT.is_file():
        pytest.skip(f"no ts2viz console script beside {sys.executable}: pip install -e {ROOT}")
    first = SCRIPT.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    py = first[2:].strip() if first.startswith("#!") else sys.executable
    r = subprocess.run([py, "-c", "import ts2viz; print(ts2viz.__file__)"], capture_output=True, text=True,
                       env=_env(), cwd="/")
    where = Path(r.stdout.strip()).resolve().parent.parent if r.returncode == 0 else None
    if where != ROOT:
        pytest.skip(f"the ts2viz console script ({SCRIPT}) runs the ts2viz of {where}, not this checkout "
                    f"({ROOT}): install this one with pip install -e {ROOT}")
    return SCRIPT


def ts2viz_cmd(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], cwd=folder, capture_output=True, text=True, timeout=300, env=_env())


@pytest.fixture()
def empty(tmp_path, installed):
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_one_row_per_slice_and_metric_equal_to_the_leaderboard_on_the_slice(empty):
    t0 = time.perf_counter()
    r = ts2viz_cmd(empty, "leaderboard", "--slices", "partition", "--ci", "--resamples", "1000", "--metrics",
                   METRICS, "--out", "slices.csv")
    wall = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(empty / "slices.csv")
    assert df[["slice", "metric"]].values.tolist() == [[s, m] for s in ("all", "Synth", "Nat", "Real")
                                                       for m in METRICS.split(",")]
    assert {"family", "n_segs", "ord_avg_lo", "ord_avg_p", "rank_hi", "note"} <= set(df.columns)
    assert df.groupby("slice", sort=False).n_segs.first().tolist() == [164, 111, 25, 28]
    assert "ord_avg x100 per slice of partition" in r.stdout and "significant reversal" in r.stdout
    # the Real slice is `ts2viz leaderboard --seg 136-164` (same resamples, same seed), column for column
    r2 = ts2viz_cmd(empty, "leaderboard", "--seg", "136-164", "--ci", "--resamples", "1000", "--metrics", METRICS,
                    "--out", "real.csv")
    assert r2.returncode == 0, r2.stderr
    lb = pd.read_csv(empty / "real.csv")
    real = df[df.slice == "Real"].reset_index(drop=True)
    pd.testing.assert_frame_equal(real[lb.columns], lb, check_dtype=False)
    assert wall < 120, f"--slices partition took {wall:.1f} s"


def test_user_tags_and_csv_on_stdout(empty):
    (empty / "seg_tags.csv").write_text("seg_id,family,tag\n0,topic,holiday\n1,topic,holiday\n2,topic,holiday\n"
                                        "111,topic,holiday\n5,topic,lonely\n")
    r = ts2viz_cmd(empty, "leaderboard", "--tags", "seg_tags.csv", "--slices", "topic", "--metrics", "CLIPScore",
                   "--out", "-")
    assert r.returncode == 0, r.stderr
    from io import StringIO

    df = pd.read_csv(StringIO(r.stdout))
    assert df.slice.tolist() == ["all", "holiday", "lonely"] and df.n_segs.tolist() == [164, 4, 1]
    notes = dict(zip(df.slice, df.note.fillna("")))
    assert "only 4 SEGs" in notes["holiday"] and "partition (Nat) with 1 SEG" in notes["holiday"]
    assert "1 SEG: no interval" in notes["lonely"]
    assert "ord_avg_lo" not in df.columns              # no --ci: the leaderboard's columns without intervals


@pytest.mark.parametrize("args, says", [
    (["--slices", "partition", "--clusters"], "--slices cannot be combined with --clusters"),
    (["--slices", "partition", "--pairwise"], "--slices cannot be combined with --pairwise"),
    (["--slices", "partition", "--cost", "c.csv"], "--slices cannot be combined with --cost"),
    (["--slices", "partition", "--nuisance", "n.csv"], "--slices cannot be combined with --nuisance"),
    (["--slices", "partition", "--ci", "--image-resamples", "20"], "--slices cannot be combined with --image-resamples"),
    (["--slices", "skills"], "no SEG tag family 'skills' (families here: partition)"),
    (["--tags", "t.csv"], "--tags: name the family to slice by with --slices FAMILY"),
    (["--slices", "topic", "--tags", "bad.csv"], "bad.csv, row 3: seg_id 999 is not a SEG of dataset ts2"),
])
def test_refused_in_one_line_exit_2(empty, args, says):
    (empty / "bad.csv").write_text("seg_id,family,tag\n1,topic,a\n999,topic,b\n")
    r = ts2viz_cmd(empty, "leaderboard", "--metrics", "CLIPScore", "--out", "out.csv", *args)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and says in err[0], r.stderr
    assert not (empty / "out.csv").exists()
