"""The CLI contract: output columns, exit codes, one-line errors and no half-written files."""
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core_helpers import write_folder
from core_helpers import ROWS

REPO = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=120)


def test_leaderboard_bundled_csv(tmp_path):
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "CLIPScore" in r.stdout and "SEG 164 left out" in r.stdout
    df = pd.read_csv(out)
    assert list(df.columns) == ["metric", "ord_avg", "sep_avg", "ord_synth", "sep_synth", "ord_nat",
                                "sep_nat", "ord_real", "sep_real"]
    assert len(df) == 19
    clip = df.set_index("metric").loc["CLIPScore"]
    assert round(clip["ord_avg"], 3) == 0.714 and round(clip["sep_real"], 3) == 0.903


def test_metametrics_columns_and_filters(tmp_path):
    out = tmp_path / "mm.csv"
    r = run("metametrics", "--metrics", "CLIPScore,ALIGNScore", "--mode", "spec", "--seg", "0-4,120",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert list(df.columns) == ["seg_id", "partition", "metric", "ord", "sep", "delta", "kendall", "signed_sep",
                                "n_walks", "n_images", "n_scored"]
    assert sorted(df.seg_id.unique()) == [0, 1, 2, 3, 4, 120] and set(df.metric) == {"CLIPScore", "ALIGNScore"}
    assert set(df.partition) == {"Synth", "Nat"}
    # images per SEG, counted here from the bundled metadata; the bundled CLIPScore scores every image
    meta = pd.read_csv(REPO / "data" / "ts2" / "metadata.csv")
    sizes = meta.groupby("id").size()
    for _, row in df.iterrows():
        assert row.n_images == sizes[row.seg_id] and row.n_scored == row.n_images


def test_user_scores_on_local_dataset(tmp_path):
    root = write_folder(tmp_path / "ds", ROWS)
    s = tmp_path / "s.csv"
    s.write_text("file_name,good,bad\n" + "\n".join(
        f"{r['file_name']},{-int(r['rank'][0])},{int(r['rank'][0])}" for r in ROWS) + "\n")
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--dataset", str(root), "--scores", str(s), "--lower-is-better", "bad",
            "--mode", "spec", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out).set_index("metric")
    assert df.loc["good", "ord_avg"] == pytest.approx(1.0) and df.loc["bad", "ord_avg"] == pytest.approx(1.0)


@pytest.mark.parametrize("content, message", [
    ("file_name,m\nimages/000-00.jpg,1\nimages/nope.jpg,2\n", "row 3: unknown file_name"),
    ("file_name,m\nimages/000-00.jpg,1\nimages/000-00.jpg,2\n", "duplicate file_name"),
    ("file_name,m\nimages/000-00.jpg,abc\n", "'abc' is not a number"),
    ("", "empty file"),
])
def test_bad_scores_exit_2_without_output(tmp_path, content, message):
    root = write_folder(tmp_path / "ds", ROWS)
    s = tmp_path / "s.csv"
    s.write_text(content)
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--dataset", str(root), "--scores", str(s), "--out", str(out))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(s) in lines[0]
    assert not out.exists() and list(tmp_path.glob(".lb.csv*")) == []


def test_bad_dataset_and_metric_exit_2(tmp_path):
    root = write_folder(tmp_path / "ds", [dict(r, rank="1a") if r["id"] == 1 else r for r in ROWS])
    r = run("leaderboard", "--dataset", str(root), "--scores", str(tmp_path / "x.csv"))
    assert r.returncode == 2 and "SEG 1 has no error-0 node" in r.stderr
    r = run("leaderboard", "--metrics", "NoSuchMetric")
    assert r.returncode == 2 and "no metric 'NoSuchMetric'" in r.stderr
    r = run("metametrics", "--metrics", "CLIPScore", "--seg", "999", "--out", str(tmp_path / "o.csv"))
    assert r.returncode == 2 and "no SEG with id 999" in r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_leaderboard_does_not_import_heavy_dependencies():
    code = ("import sys, io, contextlib; from ts2viz.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): assert main(['leaderboard']) == 0\n"
            "heavy = [m for m in ('torch', 'gradio', 'transformers', 'open_clip', 'plotly') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
