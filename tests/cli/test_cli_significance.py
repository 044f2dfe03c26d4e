"""CLI: `ts2viz leaderboard --clusters` and `ts2viz significance --test permutation` on the bundled
data (the files they write, the clusters checked pair by pair against a permutation test written here)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ts2viz import bundled_scores, compute, load_dataset

REPO = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def one_sided_p(a, b, seed=0, n=1000, block=100, early=(0.02, 0.5)):
    """SEG-swap permutation p of mean(a) > mean(b), block by block with the documented draws."""
    rng = np.random.default_rng(seed)
    obs = a.mean() - b.mean()
    hits = used = 0
    while used < n:
        z = rng.random((block, a.size)) < 0.5
        pa = np.where(z, b, a).mean(1)
        pb = np.where(z, a, b).mean(1)
        hits += int((pa - pb >= obs - 1e-12).sum())
        used += block
        p = (hits + 1) / (used + 1)
        if p < early[0] or p > early[1]:
            break
    return p


def test_leaderboard_clusters_csv_and_table(tmp_path):
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--clusters", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "significance cluster(s) by ord_avg" in r.stdout and "no correction" in r.stdout
    assert r.stdout.splitlines()[0].split()[-1] == "Cluster"
    df = pd.read_csv(out)
    assert list(df.columns)[-1] == "cluster"
    df = df.sort_values("ord_avg", ascending=False, kind="stable").reset_index(drop=True)
    assert df.cluster.iloc[0] == 1
    assert (np.diff(df.cluster) >= 0).all() and (np.diff(df.cluster) <= 1).all()
    # every placement checked against the test written above, on the per-SEG Ord values
    mm = compute(load_dataset("ts2"), bundled_scores())
    keep = [i for i, s in enumerate(mm.seg_ids) if s not in mm.excluded]
    ords = {m: mm.seg_values["ord"][keep, k] for k, m in enumerate(mm.metrics)}
    best = df.metric.iloc[0]
    for k in range(1, len(df)):
        m = df.metric.iloc[k]
        p = one_sided_p(ords[best], ords[m])
        new = df.cluster.iloc[k] == df.cluster.iloc[k - 1] + 1
        assert new == (p <= 0.05), (m, best, p)
        if new:
            best = m
    # the table rows show the same clusters
    rows = {line.split()[0]: line.split()[-1] for line in r.stdout.splitlines()[2:21]}
    assert all(rows[m] == str(c) for m, c in zip(df.metric, df.cluster))


def test_significance_permutation_table_and_csv(tmp_path):
    out = tmp_path / "sig.csv"
    r = run("significance", "--test", "permutation", "--resamples", "300", "--permutations", "2000",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "two-sided paired permutation test swapping whole SEGs" in r.stdout
    assert "Holm over all pairs" in r.stdout
    assert "The tests disagree on" in r.stdout or "agrees on every pair" in r.stdout
    df = pd.read_csv(out)
    assert len(df) == 171
    assert {"pvalue_permutation", "pvalue_permutation_adj", "pvalue_wilcoxon_holm", "cluster_a",
            "cluster_b"} <= set(df.columns)
    assert (df.pvalue_permutation_adj >= df.pvalue_permutation - 1e-12).all()
    assert (df.pvalue_permutation > 0).all() and (df.pvalue_permutation <= 1).all()
    # the count of disagreements printed is that of the CSV
    sig_p = df.pvalue_permutation_adj <= 0.05
    sig_w = df.pvalue_wilcoxon_holm <= 0.05
    n = int((sig_p != sig_w).sum())
    if n:
        assert f"The tests disagree on {n} pair(s)" in r.stdout
    # with 2,000 permutations (smallest p 1/2001 > 0.05/171) Holm over 171 pairs cannot reach 0.05: the output says so
    assert "Holm cannot reach significance" in r.stdout


def test_bad_permutation_options():
    r = run("leaderboard", "--clusters", "--permutations", "many")
    assert r.returncode == 2 and "--permutations" in r.stderr and "Traceback" not in r.stderr
    r = run("leaderboard", "--clusters", "--cluster-cell", "ord_everything")
    assert r.returncode == 2 and "--cluster-cell" in r.stderr
    r = run("significance", "--test", "permutation", "--permutations", "0")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_leaderboard_pairwise_accuracy_columns(tmp_path):
    out = tmp_path / "lb.csv"
    r = run("leaderboard", "--pairwise", "--ci", "--resamples", "300", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "Pairwise accuracy on SEGs (x100)" in r.stdout and "never on the SEG it scores" in r.stdout
    df = pd.read_csv(out)
    for g in ("avg", "synth", "nat", "real"):
        assert (df[f"pacc_{g}_lo"] <= df[f"pacc_{g}"]).all() and (df[f"pacc_{g}"] <= df[f"pacc_{g}_hi"]).all()
    assert {"pacc_chance_avg", "pacc_chance_ties_avg", "pacc_tie_rate_avg", "pacc_epsilon"} <= set(df.columns)
    assert ((df.pacc_avg > 0) & (df.pacc_avg < 1)).all() and (df.pacc_epsilon >= 0).all()
    # every metric beats continuous random scores except the weakest; the chance level is the same for all
    assert df.pacc_chance_avg.nunique() == 1
    assert (df.pacc_avg > df.pacc_chance_avg).sum() >= 17
    # the ordering broadly agrees with Ord (both reward scores that fall with the errors)
    assert np.corrcoef(df.pacc_avg, df.ord_avg)[0, 1] > 0.9
    r = run("leaderboard", "--pairwise", "--pairwise-folds", "1")
    assert r.returncode == 2 and "--pairwise-folds" in r.stderr


def test_delta_clusters_use_standardised_gaps():
    from ts2viz.metametrics.permutation import cell_unit_values, leaderboard_clusters

    sc = bundled_scores().select(["CLIPScore", "TIFA-GPT4V", "VIEScore"])
    mm = compute(load_dataset("ts2"), sc)
    cl = leaderboard_clusters(mm, "delta_avg", scores=sc)
    z = np.nanmean(cell_unit_values(mm, "delta_avg", sc), axis=0)
    assert [cl.metrics[i] for i in cl.order] == [mm.metrics[i] for i in np.argsort(-z)]
    # by standardised gaps VIEScore (0-10 scale, largest raw delta) is not first
    raw = mm.averages()["delta_avg"]
    assert mm.metrics[int(np.argmax(raw))] == "VIEScore" and cl.metrics[cl.order[0]] != "VIEScore"


def test_standardised_delta_equals_delta_of_zscored_scores():
    from ts2viz.scores import Scores
    from ts2viz.metametrics.permutation import cell_unit_values

    ds = load_dataset("ts2")
    sc = bundled_scores().select(["CLIPScore", "TIFA-GPT4V"])
    ids = list(range(0, 40, 3))
    mm = compute(ds, sc, seg_ids=ids)
    files, rows = [], []
    for sid in ids:
        st = mm.walk_stats(sid)[0]
        x = sc.aligned(st.file_names, list(mm.metrics))
        rows.append((x - np.nanmean(x, 0)) / np.nanstd(x, 0))
        files += st.file_names
    z = Scores(files, list(mm.metrics), np.concatenate(rows))
    want = compute(ds, z, seg_ids=ids).seg_values["delta"]
    np.testing.assert_allclose(cell_unit_values(mm, "delta_avg", sc), want, rtol=1e-9, atol=1e-12)


def test_compare_with_permutation_column():
    r = run("compare", "CLIPScore", "TIFA-mPLUG", "--permutation", "--permutations", "2000", "--resamples", "300")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split()[-5:] == ["Perm", "p", "n", "Wilcoxon", "p"]
    rows = {line.split()[0]: line.split() for line in lines[3:23]}
    assert rows["SepAvg"][-2] == "164" and rows["OrdNat"][-2] == "25"
    mm = compute(load_dataset("ts2"), bundled_scores().select(["CLIPScore", "TIFA-mPLUG"]))
    keep = [i for i, s in enumerate(mm.seg_ids) if s not in mm.excluded]
    for cell, stat in (("OrdAvg", "ord"), ("KendallAvg", "kendall")):
        a, b = mm.seg_values[stat][keep, 0], mm.seg_values[stat][keep, 1]
        # the documented draws: blocks of 100, stop only above 0.5 (the p-values are shown)
        rng = np.random.default_rng(0)
        obs, hits, used = abs(a.mean() - b.mean()), 0, 0
        while used < 2000:
            z = rng.random((100, a.size)) < 0.5
            d = np.where(z, b, a).mean(1) - np.where(z, a, b).mean(1)
            hits += int((np.abs(d) >= obs - 1e-12).sum())
            used += 100
            if (hits + 1) / (used + 1) > 0.5:
                break
        p = (hits + 1) / (used + 1)
        assert float(rows[cell][-3]) == pytest.approx(p, abs=5e-4), cell
    assert "Perm p: two-sided paired permutation test" in r.stdout
    assert "disagrees with Wilcoxon on" in r.stdout or "agrees with Wilcoxon on every cell" in r.stdout
