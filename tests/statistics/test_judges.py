"""Judges on side-by-side gold: GenAI-Bench's published table, MMRB2's own accuracy, hand-counted statistics."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ts2viz.gold.pairs import PairSet, load_bundled_verdicts, load_pairs, load_verdicts, verdict_frame
from ts2viz.metaeval.judges import JUDGE_STATS, disagreement, judge_table, metric_verdicts, tie_band
from ts2viz.statistics.bootstrap import BootstrapSettings

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "reference"


def published_image_generation() -> dict[str, float]:
    """The "Image Generation" column of GenAI-Bench's genaibench_results.txt."""
    out = {}
    for line in (FIX / "genaibench" / "genaibench_results.txt").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[1] == "pairwise":
            out[cells[0]] = float(cells[2])
    assert len(out) == 18
    return out


@pytest.fixture(scope="module")
def genaibench():
    return load_pairs("genaibench-pairwise")


def test_published_genaibench_column_for_every_judge(genaibench):
    published = published_image_generation()
    res = judge_table(genaibench, load_bundled_verdicts(parse="genaibench"), boot=None).frame()
    assert set(res["judge"]) == set(published)
    for _, r in res.iterrows():
        assert round(100 * r["acc_4label"], 2) == published[r["judge"]], r["judge"]


def test_canonical_parse_differs_where_the_release_took_non_canonical_tokens(genaibench):
    res = judge_table(genaibench, load_bundled_verdicts(parse="canonical"), ["gemini-1.5-pro", "gpt4o"],
                      boot=None).frame().set_index("judge")
    assert round(100 * res.loc["gemini-1.5-pro", "acc_4label"], 2) == 44.61     # SOURCE.md: 775 -> 774 right
    assert round(100 * res.loc["gpt4o", "acc_4label"], 2) == 45.59             # gpt4o writes canonical tokens


def test_genaibench_human_votes_and_llava_position_bias(genaibench):
    assert genaibench.pairs["human"].value_counts().to_dict() == {"B": 663, "A": 643, "tie-bad": 273,
                                                                  "tie-good": 156}
    r = judge_table(genaibench, load_bundled_verdicts(), ["llava"], boot=None).frame().iloc[0]
    assert r["first_share"] == 1.0 and r["n_unparsed"] == 1
    assert r["acc_4label"] == pytest.approx(642 / 1735)      # [[A>B]] 1,734 times: right on the left votes
    assert np.isnan(r["swap_acc"]) and np.isnan(r["consistency"])          # no reverse verdicts released


def test_mmrb2_swap_accuracy_equals_mmrb2_code():
    pairs = load_pairs(FIX / "mmrb2" / "t2i.json")
    expected = json.loads((FIX / "mmrb2" / "expected.json").read_text())["results"]
    for kind in ("noisy", "biased"):
        v = load_verdicts(FIX / "mmrb2" / f"judge_{kind}.json", pairs)
        res = judge_table(pairs, v, boot=None)
        e = expected[f"judge-{kind}"]
        row = res.frame().iloc[0]
        assert row["judge"] == f"judge-{kind}"
        assert row["n_missing"] == e["missing_pairs"]
        assert row["swap_acc"] == pytest.approx(e["accuracy"], abs=1e-12)
    biased = judge_table(pairs, load_verdicts(FIX / "mmrb2" / "judge_biased.json", pairs), boot=None).frame().iloc[0]
    assert biased["first_share"] > 0.75 and biased["consistency"] < 0.4


def _toy():
    pairs = PairSet("toy", pd.DataFrame({"pair_id": list("123456"),
                                         "human": ["A", "B", "A", "tie-good", "tie-bad", "B"]}))
    recs = [("1", "forward", "A"), ("2", "forward", "A"), ("3", "forward", "tie"), ("4", "forward", "tie"),
            ("5", "forward", "tie-good"), ("6", "forward", "unparsed"),
            ("1", "reverse", "B"), ("2", "reverse", "A"), ("3", "reverse", "B"), ("6", "reverse", "empty")]
    v = verdict_frame([{"pair_id": p, "order": o, "judge": "j", "verdict": x} for p, o, x in recs], pairs=pairs)
    return pairs, v


def test_every_statistic_by_hand():
    pairs, v = _toy()
    r = judge_table(pairs, v, boot=None).frame().iloc[0]
    assert r["acc_4label"] == pytest.approx(2 / 6)        # pair 1 (A) and pair 4 (tie on a tie)
    assert r["acc_ties_wrong"] == pytest.approx(1 / 4)    # ordered pairs 1, 2, 3, 6: only 1 right
    assert r["acc_no_ties"] == pytest.approx(1 / 2)       # ordered by both: 1 (right), 2 (wrong)
    # trials: fwd 1, 2, 3, 6 (unparsed is a trial); rev 1 (B -> A right), 2 (A -> B right), 3 (B -> A right);
    # rev 6 is empty: no trial
    assert r["swap_acc"] == pytest.approx((1 + 3) / 7)
    assert r["first_share"] == pytest.approx(3 / 5)       # A-or-B verdicts as shown: A, A, B, A, B
    assert r["consistency"] == pytest.approx(1 / 3)       # both parsed, reverse flipped: 1 (A, A), 2 (A, B), 3 (tie, A)
    assert (r["n_pairs"], r["n_unparsed"], r["n_empty"], r["n_reverse"]) == (6, 1, 1, 4)


def test_bootstrap_intervals_are_percentiles_of_pair_resamples():
    pairs, v = _toy()
    boot = BootstrapSettings(n_resamples=300, seed=3)
    res = judge_table(pairs, v, boot=boot)
    rng = np.random.default_rng(3)
    counts = rng.multinomial(6, np.full(6, 1 / 6), size=300)
    acc = []
    right = np.array([1, 0, 0, 1, 0, 0])
    for c in counts:
        acc.append((c * right).sum() / c.sum())
    lo, hi = np.quantile(acc, [0.025, 0.975])
    k = JUDGE_STATS.index("acc_4label")
    assert res.low[0, k] == pytest.approx(lo) and res.high[0, k] == pytest.approx(hi)


def test_metric_tie_band_is_the_best_4label_threshold():
    rng = np.random.default_rng(5)
    n = 200
    human = rng.choice(["A", "B", "tie-good", "tie-bad"], size=n, p=[0.35, 0.35, 0.15, 0.15])
    pairs = PairSet("g", pd.DataFrame({"pair_id": [str(i) for i in range(n)], "human": human}))
    sign = np.select([human == "A", human == "B"], [1.0, -1.0], 0.0)
    sa = rng.normal(size=n)
    sb = sa - 0.3 * sign + rng.normal(0, 0.25, size=n)
    eps = tie_band(sa, sb, pairs.human_codes())
    best = 0.0
    for cand in np.r_[0.0, np.abs(sa - sb)]:
        acc = judge_table(pairs, metric_verdicts(pairs, sa, sb, judge="m", epsilon=cand), boot=None).estimate[0, 0]
        best = max(best, acc)
    got = judge_table(pairs, metric_verdicts(pairs, sa, sb, judge="m", epsilon="calibrated"), boot=None)
    assert eps > 0 and got.estimate[0, 0] == pytest.approx(best)


def test_disagreement_ranks_pairs_every_judge_gets_wrong_first():
    pairs, v = _toy()
    d = disagreement(pairs, v)
    assert list(d["pair_id"][:4]) == ["2", "3", "5", "6"] and list(d["wrong_share"][:4]) == [1.0] * 4
    assert set(d["pair_id"][4:]) == {"1", "4"}


def test_release_parse_matches_its_correct_field_on_the_odd_tokens():
    from ts2viz.gold.pairs import parse_verdict

    cases = {"1. Model A is better: [[A>B]]": "A", "[[Model A is better: [[A>B]] ]]": "unparsed",
             "[[A=B]]": "tie", "[[A>>B]]": "A", "[[B>A=B=Good]]": "unparsed", "[[A > B]]": "unparsed",
             "[[A>B]] or [[A=B=Good]]": "unparsed", "[[a>b]]": "unparsed", "nothing": "unparsed", None: "empty"}
    for text, want in cases.items():
        assert parse_verdict(text, "genaibench") == want, text
    assert parse_verdict("[[A>>B]]", "canonical") == "unparsed"
    assert re.fullmatch(r"\[\[.*\]\]", "[[A>B]]")
