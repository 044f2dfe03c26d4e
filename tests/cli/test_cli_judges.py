"""``ts2viz judges`` as a user types it: the file it writes, its exit codes and one-line errors."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures" / "reference"
sys.path.insert(0, str(REPO / "tests" / "statistics"))


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=300)


def test_judges_file_reproduces_genaibench_published_column(tmp_path):
    from test_judges import published_image_generation

    out = tmp_path / "judges.csv"
    r = run("judges", "--gold", "genaibench-pairwise", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert list(df.columns[:7]) == ["judge", "n_pairs", "n_missing", "n_unparsed", "n_empty", "n_reverse", "n_no_ties"]
    assert {"acc_4label_lo", "acc_4label_hi", "swap_acc", "first_share_hi", "consistency"} <= set(df.columns)
    published = published_image_generation()
    assert len(df) == 18
    for row in df.itertuples():
        assert round(100 * row.acc_4label, 2) == published[row.judge], row.judge
        assert row.acc_4label_lo <= row.acc_4label <= row.acc_4label_hi
    assert "gpt4o" in r.stdout and "45.59 [" in r.stdout


def test_canonical_rule_and_judge_filter_to_stdout():
    r = run("judges", "--parse", "canonical", "--judges", "gemini-1.5-pro", "--no-ci", "--out", "-")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("gemini-1.5-pro,1735,0,50,")
    assert "acc_4label_lo" not in lines[0]


def test_mmrb2_files_from_the_users_disk(tmp_path):
    out = tmp_path / "m.csv"
    r = run("judges", "--gold", str(FIX / "mmrb2" / "t2i.json"), "--verdicts", str(FIX / "mmrb2" / "judge_noisy.json"),
            str(FIX / "mmrb2" / "judge_biased.json"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out).set_index("judge")
    assert round(df.loc["judge-noisy", "swap_acc"], 6) == round(66 / 106, 6)
    assert round(df.loc["judge-biased", "swap_acc"], 6) == round(61 / 120, 6)


def test_metric_scores_as_judges_and_sxs_ordering(tmp_path):
    rng = np.random.default_rng(0)
    n = 80
    ma = rng.choice(["x", "y"], size=n)
    human = np.where(ma == "x", rng.choice(["A", "B", "tie-good"], size=n, p=[0.8, 0.1, 0.1]),
                     rng.choice(["A", "B", "tie-bad"], size=n, p=[0.1, 0.8, 0.1]))
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "image_a": [f"a{i}" for i in range(n)],
                          "image_b": [f"b{i}" for i in range(n)], "model_a": ma,
                          "model_b": np.where(ma == "x", "y", "x"), "human": human})
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    sign = np.select([human == "A", human == "B"], [1.0, -1.0], 0.0)
    sa = rng.normal(size=n)
    scores = pd.DataFrame({"image_id": [*pairs.image_a, *pairs.image_b],
                           "good": [*sa, *(sa - sign + rng.normal(0, 0.2, n))],
                           "noise": rng.normal(size=2 * n)})
    scores.to_csv(tmp_path / "scores.csv", index=False)
    out = tmp_path / "j.csv"
    r = run("judges", "--gold", str(tmp_path / "pairs.csv"), "--scores", str(tmp_path / "scores.csv"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out).set_index("judge")
    assert df.loc["good", "acc_ties_wrong"] > 0.8 > 0.7 > df.loc["noise", "acc_ties_wrong"]
    r = run("judges", "--gold", str(tmp_path / "pairs.csv"), "--task", "ordering", "--out", "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "model_a,model_b,n_pairs,wins_a,wins_b,ties,mean,pvalue,outcome"
    assert r.stdout.splitlines()[1].startswith("x,y,80,") and r.stdout.splitlines()[1].endswith(",1")


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "pairs.csv").write_text("pair_id,human\n1,A\n2,B\n")
    (tmp_path / "v.csv").write_text("pair_id,judge,verdict\n1,j,A\n3,j,B\n")
    out = tmp_path / "never.csv"
    r = run("judges", "--gold", str(tmp_path / "pairs.csv"), "--verdicts", str(tmp_path / "v.csv"), "--out", str(out))
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.strip().count("\n") == 0
    assert "v.csv, row 3: verdict for pair '3', which is not in the gold" in r.stderr
    r = run("judges", "--gold", str(tmp_path / "pairs.csv"))
    assert r.returncode == 2 and "no verdicts" in r.stderr
    r = run("judges", "--judges", "gpt5")
    assert r.returncode == 2 and "--judges: no judge 'gpt5'" in r.stderr


def test_humaneval_spa_column(tmp_path):
    out = tmp_path / "h.csv"
    r = run("humaneval", "--gold", "tifa160", "--metrics", "clipscore_vitb32,spice", "--no-ci", "--no-ceiling",
            "--spa", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out).set_index("metric")
    from ts2viz.gold import load_gold
    from ts2viz.metaeval.spa import spa_rated

    want = spa_rated(load_gold("tifa160", answers=False), metrics=["clipscore_vitb32", "spice"]).set_index("metric")
    assert np.allclose(df["spa"], want.loc[df.index, "spa"], atol=1e-6)
    assert "ordering_agreement" in df.columns
