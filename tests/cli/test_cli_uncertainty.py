"""CLI: `ts2viz compare`, `ts2viz significance`, `ts2viz leaderboard --ci` and `--stats` (output, CSV columns, one-line errors)."""
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.metametrics.walks import STATS

REPO = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def test_leaderboard_ci_table_and_csv(tmp_path):
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--ci", "--resamples", "500", "--seed", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "95% percentile bootstrap intervals" in r.stdout and "500 resamples, seed 2" in r.stdout
    clip = next(line for line in r.stdout.splitlines() if line.startswith("CLIPScore"))
    assert clip.split()[1] == "71.4" and clip.split()[2].startswith("[")
    df = pd.read_csv(out)
    cells = ["ord_avg", "sep_avg", "ord_synth", "sep_synth", "ord_nat", "sep_nat", "ord_real", "sep_real"]
    assert list(df.columns) == ["metric"] + [c + s for c in cells for s in ("", "_lo", "_hi")] + [
        "rank", "rank_median", "rank_lo", "rank_hi"]
    for c in cells:
        assert (df[c + "_lo"] <= df[c]).all() and (df[c] <= df[c + "_hi"]).all()
    assert sorted(df["rank"].astype(int)) == list(range(1, 20))
    assert (df.rank_lo <= df.rank_median).all() and (df.rank_median <= df.rank_hi).all()


def test_leaderboard_stats_columns(tmp_path):
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--stats", "kendall,ord,delta", "--mode", "spec", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "KendallAvg" in r.stdout and "DeltaReal" in r.stdout and "SepAvg" not in r.stdout
    assert "delta columns are in score units" in r.stdout
    df = pd.read_csv(out).set_index("metric")
    assert list(df.columns) == [f"{s}_{g}" for g in ("avg", "synth", "nat", "real") for s in ("ord", "delta", "kendall")]
    av = compute(load_dataset("ts2"), bundled_scores(), mode="spec").averages()
    mm_metrics = bundled_scores().metrics
    for c in ("kendall_avg", "delta_nat", "kendall_real"):
        assert np.allclose(df.loc[mm_metrics, c].to_numpy(), av[c], atol=1e-6)


def test_compare_prints_every_cell_with_scipy_pvalues():
    r = run("compare", "CLIPScore", "TIFA-mPLUG", "--resamples", "500")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("CLIPScore vs TIFA-mPLUG") and "SEG 164 left out" in lines[0]
    labels = ["".join(w.capitalize() for w in s.split("_")) + g for g in ("Avg", "Synth", "Nat", "Real") for s in STATS]
    rows = {line.split()[0]: line.split() for line in lines[3:3 + len(labels)]}
    assert list(rows) == labels
    mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "TIFA-mPLUG"], mode="paper")
    keep = np.array([s != 164 for s in mm.seg_ids])
    x, y = mm.seg_values["sep"][keep, 0], mm.seg_values["sep"][keep, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = stats.wilcoxon(x, y).pvalue
    assert rows["SepAvg"][1:4] == ["90.7", "80.6", "10.0"] and rows["SepAvg"][-2] == "164"
    assert float(rows["SepAvg"][-1]) == pytest.approx(p, rel=0.05)
    assert rows["OrdNat"][-2] == "25"


def test_significance_lists_unseparated_ranks(tmp_path):
    out = tmp_path / "pairs.csv"
    r = run("significance", "--cell", "sep_avg", "--metrics", "CLIPScore,ALIGNScore,TIFA-GPT4V,DSG-GPT4V",
            "--resamples", "500", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:6]]
    assert [row[1] for row in rows] == ["ALIGNScore", "CLIPScore", "DSG-GPT4V", "TIFA-GPT4V"]
    df = pd.read_csv(out)
    assert list(df.columns) == ["a", "b", "difference", "low", "high", "n", "pvalue", "pvalue_holm"] and len(df) == 6
    # the printed "not separated" ranks are exactly the pairs with Holm p >= 0.05 in the CSV
    place = {row[1]: int(row[0]) for row in rows}
    for row in rows:
        same = set()
        for tok in " ".join(row[3 + 2:]).split(", "):        # after '#', name, value, '[lo,' 'hi]'
            if tok != "none":
                a_, _, b_ = tok.partition("-")
                same |= set(range(int(a_), int(b_ or a_) + 1))
        want = {place[b if a == row[1] else a] for a, b, ph in zip(df.a, df.b, df.pvalue_holm)
                if row[1] in (a, b) and ph >= 0.05}
        assert same == want, row
    assert f"{int((df.pvalue_holm < 0.05).sum())} of 6 pairs significantly ordered" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["compare", "CLIPScore", "Nope"], "compare: no metric 'Nope'"),
    (["compare", "CLIPScore", "CLIPScore"], "two different metrics"),
    (["compare", "CLIPScore", "ALIGNScore", "--confidence", "95"], "strictly between 0 and 1"),
    (["leaderboard", "--ci", "--resamples", "ten"], "--resamples: 'ten' is not an integer"),
    (["leaderboard", "--ci", "--resamples", "0"], "number of resamples"),
    (["leaderboard", "--ci", "--seed", "-3"], "seed must be a non-negative integer"),
    (["leaderboard", "--stats", "ord,spearman"], "--stats: unknown statistic 'spearman'"),
    (["significance", "--cell", "ord_everything"], "--cell: unknown leaderboard cell 'ord_everything'"),
    (["significance", "--alpha", "1.5"], "--alpha: the significance level"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, args, message):
    out = tmp_path / "o.csv"
    r = run(*args, *(["--out", str(out)] if args[0] != "compare" else []))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not out.exists()
