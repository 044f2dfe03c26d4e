"""Soft pairwise accuracy against mt-metrics-eval's pce.py; SxS model ordering and templates against scipy / counts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from ts2viz.gold.pairs import PairSet
from ts2viz.metaeval.spa import pairwise_p_values, soft_pairwise_accuracy
from ts2viz.metaeval.sxs import sxs_model_ordering, template_sxs_accuracy

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "spa" / "pce_cases.json"


def _p(rows):
    return np.array([[np.nan if v is None else v for v in r] for r in rows])


def _near_ties(scores, n_perm, seed):
    """Per system pair, permutations whose null delta lies within float32 rounding of the observed delta."""
    x = np.asarray(scores, np.float64)
    rng = np.random.default_rng(seed)
    m = np.rint(rng.random(size=(n_perm, x.shape[1]), dtype=np.float32)) * 2 - 1
    part = m.astype(np.float64) @ x.T
    tot = x.sum(1)
    scale = np.abs(x).sum()
    out = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            out[i, j] = np.sum(np.abs(part[:, i] - part[:, j] - (tot[i] - tot[j])) <= 1e-5 * scale)
    return out


def test_pairwise_p_values_and_spa_equal_pce():
    cases = json.loads(FIX.read_text())["cases"]
    assert len(cases) == 4
    for case in cases:
        n, seed = case["n_permutations"], case["seed"]
        hp = pairwise_p_values(np.array(case["human"]), n, seed)
        # pce's `>=` on float32 sums: a permutation whose null delta equals the observed one (mathematically)
        # may fall either side with another summation order; allow exactly those, counted here.
        slack_h = _near_ties(case["human"], n, seed) / n
        iu = np.triu_indices(hp.shape[0], 1)
        assert np.all(np.abs(hp - _p(case["human_p"]))[iu] <= slack_h[iu] + 1e-12)
        for name, m in case["metrics"].items():
            mp = pairwise_p_values(np.array(m["scores"]), n, seed)
            slack = _near_ties(m["scores"], n, seed) / n
            assert np.all(np.abs(mp - _p(m["p"]))[iu] <= slack[iu] + 1e-12), name
            bound = (slack_h + slack)[iu].mean()
            assert abs(soft_pairwise_accuracy(hp, mp) - m["spa"]) <= bound + 1e-12, name
            assert np.isnan(mp[np.tril_indices(mp.shape[0])]).all()


def test_spa_of_the_humans_is_one_and_of_the_reverse_lower():
    case = json.loads(FIX.read_text())["cases"][0]
    hp = pairwise_p_values(np.array(case["human"]))
    assert soft_pairwise_accuracy(hp, hp) == 1.0
    assert case["metrics"]["reversed"]["spa"] < case["metrics"]["continuous"]["spa"]


def _sxs_pairs(rng, n=120):
    models = np.array(["m1", "m2", "m3"])
    a = rng.integers(0, 3, size=n)
    b = (a + rng.integers(1, 3, size=n)) % 3
    strength = {"m1": 0.8, "m2": 0.5, "m3": 0.45}
    human = []
    for x, y in zip(models[a], models[b]):
        r = rng.random()
        pa = strength[x] / (strength[x] + strength[y]) * 0.8
        human.append("A" if r < pa else "B" if r < 0.8 else rng.choice(["tie-good", "tie-bad"]))
    return PairSet("s", pd.DataFrame({"pair_id": [str(i) for i in range(n)], "model_a": models[a],
                                      "model_b": models[b], "human": human,
                                      "image_a": [f"{i}a" for i in range(n)], "image_b": [f"{i}b" for i in range(n)]}))


def test_sxs_ordering_is_gecko_scores_under_scipy_wilcoxon():
    ps = _sxs_pairs(np.random.default_rng(1))
    res = sxs_model_ordering(ps, alpha=0.05)
    assert list(zip(res.model_a, res.model_b)) == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    df = ps.pairs
    for r in res.itertuples():
        fwd = (df.model_a == r.model_a) & (df.model_b == r.model_b)
        rev = (df.model_a == r.model_b) & (df.model_b == r.model_a)
        s = np.r_[np.select([df.human[fwd] == "A", df.human[fwd] == "B"], [1, -1], 0),
                  np.select([df.human[rev] == "B", df.human[rev] == "A"], [1, -1], 0)].astype(float)
        assert r.n_pairs == s.size and r.wins_a == (s > 0).sum() and r.ties == (s == 0).sum()
        assert r.pvalue == pytest.approx(scipy.stats.wilcoxon(s).pvalue, rel=1e-9)
        assert r.mean == pytest.approx(s.mean())
        assert r.outcome == (int(np.sign(s.mean())) if r.pvalue < 0.05 else 0)


def test_templates_against_sxs_by_hand(tmp_path):
    from ts2viz.gold import load_gold

    (tmp_path / "images.csv").write_text("image_id,prompt_id,t2i_model\n1a,p1,x\n1b,p1,y\n2a,p2,x\n2b,p2,y\n"
                                         "3a,p3,x\n3b,p3,y\n")
    (tmp_path / "ratings.csv").write_text("image_id,rating_set,rating\n"
                                          "1a,likert,5\n1b,likert,3\n2a,likert,2\n2b,likert,2\n3a,likert,1\n3b,likert,4\n"
                                          "1a,wl,0.9\n1b,wl,0.1\n2a,wl,0.4\n2b,wl,0.6\n3a,wl,0.5\n3b,wl,0.2\n")
    rated = load_gold(tmp_path, answers=False)
    ps = PairSet("p", pd.DataFrame({"pair_id": ["1", "2", "3"], "image_a": ["1a", "2a", "3a"],
                                    "image_b": ["1b", "2b", "3b"], "human": ["A", "tie-bad", "B"]}))
    t = template_sxs_accuracy(ps, rated).set_index("rating_set")
    assert t.loc["likert", "accuracy"] == 1.0 and t.loc["likert", "acc_ordered"] == 1.0
    assert t.loc["wl", "accuracy"] == pytest.approx(1 / 3) and t.loc["wl", "acc_ordered"] == 0.5


def test_metric_judges_on_pairs_made_from_a_rated_set_equal_humaneval_pairwise_accuracy():
    """Pairs of a prompt's images, the DSG raters' mean deciding: a metric judge's acc_ties_wrong is
    humaneval's pair-wise accuracy (same pairs, metric ties wrong)."""
    import itertools

    from ts2viz.gold import load_gold
    from ts2viz.metaeval.rated import evaluate_rated
    from ts2viz.metaeval.judges import judge_table, metric_verdicts

    g = load_gold("tifa160", answers=False)
    images = g.images.assign(dsg=g.human("dsg"))
    rows = []
    for _, group in images.groupby("prompt_id", sort=False):
        for a, b in itertools.combinations(group.itertuples(), 2):
            rows.append({"pair_id": f"{a.image_id}|{b.image_id}", "image_a": a.image_id, "image_b": b.image_id,
                         "human": "A" if a.dsg > b.dsg else "B" if a.dsg < b.dsg else "tie-good"})
    ps = PairSet("tifa160-pairs", pd.DataFrame(rows))
    metrics = ["clipscore_vitb32", "tifa_mplug-large"]
    he = evaluate_rated(g, metrics=metrics, bootstrap=None).frame().set_index("metric")
    scores = g.scores.set_axis(g.image_ids)
    for m in metrics:
        v = metric_verdicts(ps, scores.loc[ps.pairs.image_a, m].to_numpy(), scores.loc[ps.pairs.image_b, m].to_numpy(),
                            judge=m, epsilon=0.0)
        got = judge_table(ps, v, boot=None).frame().iloc[0]
        assert got["acc_ties_wrong"] == pytest.approx(he.loc[m, "pairwise_acc"], abs=1e-12), m
