"""``ts2viz humaneval --slices/--reliable/--aggregate`` and ``ts2viz agreement``: the files written, exit codes."""
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
METRICS = "clipscore_vitb32,tifa_mplug-large"


def run(*args):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300, env={**os.environ})


def test_slices_csv_has_a_row_per_slice_and_metric(tmp_path):
    out = tmp_path / "s.csv"
    r = run("humaneval", "--gold", "tifa160", "--slices", "dsg-category", "--metrics", METRICS, "--resamples", "200",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    tags = pd.read_csv(REPO / "data/goldsets/tifa160/tags.csv")
    assert len(df) == 2 * (1 + tags.tag.nunique())
    assert set(df.metric) == set(METRICS.split(",")) and df.slice.iloc[0] == "all"
    assert {"spearman_lo", "spearman_hi", "spearman_p", "pairwise_acc_eq", "ordering_kendall", "note",
            "n_images", "aggregate", "rating_set"} <= set(df.columns)
    color = df[(df.slice == "attribute/color")]
    assert color.n_images.iloc[0] == 5 * tags[tags.tag == "attribute/color"].prompt_id.nunique()
    small = df[df.n_prompts < 10]
    assert len(small) and small.note.str.contains("few prompts").all()
    assert "significant reversals" in r.stdout


def test_reliable_and_aggregate_are_recorded(tmp_path):
    out = tmp_path / "h.csv"
    r = run("humaneval", "--gold", "tifa160", "--reliable", "0.5", "--aggregate", "median", "--metrics", METRICS,
            "--no-ci", "--no-ceiling", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert (df.n == 570).all() and set(df["aggregate"]) == {"median"} and df.reliable.str.startswith("reliable prompts: 114").all()
    assert "note: reliable prompts: 114 of 160" in r.stderr


def test_slices_reliable_shows_the_change(tmp_path):
    r = run("humaneval", "--gold", "tifa160", "--slices", "reliable", "--metrics", METRICS, "--no-ci", "--out", "-")
    assert r.returncode == 0, r.stderr
    from io import StringIO

    df = pd.read_csv(StringIO(r.stdout))
    assert list(dict.fromkeys(df.slice)) == ["all", "reliable", "unreliable"]
    assert df.groupby("slice").n_images.first().to_dict() == {"all": 800, "reliable": 570, "unreliable": 230}


def test_agreement_csv(tmp_path):
    pytest.importorskip("krippendorff")
    out = tmp_path / "a.csv"
    r = run("agreement", "--gold", "tifa160", "--levels", "interval,nominal", "--resamples", "20", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert len(df) == 2 * 6 * 2 and set(df.group_by) == {"all", "t2i-model"}
    assert (df.alpha_lo <= df.alpha).all() and (df.alpha <= df.alpha_hi).all()


@pytest.mark.parametrize("args,msg", [
    (["humaneval", "--slices", "skills"], "no tag family 'skills'"),
    (["humaneval", "--reliable", "2"], "strictly between 0 and 1"),
    (["humaneval", "--reliable", "half"], "--reliable: 'half' is not a number"),
    (["humaneval", "--slices", "topic", "--tags", "MISSING.csv"], "MISSING.csv"),
    (["agreement", "--levels", "ratio"], "level of measurement must be one of"),
    (["humaneval", "--slices", "t2i-model", "--clusters"], "--slices cannot be combined with --clusters"),
    (["agreement", "--by", "skills"], "no tag family 'skills'"),
])
def test_bad_input_is_one_line_exit_2(args, msg):
    r = run(*args, "--no-ci")
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_tag_file_row(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("prompt_id,family,tag\ncoco_669925,topic,x\nnope,topic,y\n")
    r = run("humaneval", "--slices", "topic", "--tags", str(f), "--no-ci")
    assert r.returncode == 2 and "row 3" in r.stderr and "'nope' is not a prompt" in r.stderr
