"""The meta-metric policy: presets, overrides, and each rule changing the result as documented."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core_helpers import make_dataset, make_scores
from ts2viz import bundled_scores, compute, load_dataset
from ts2viz.errors import InputError
from ts2viz.metametrics.policy import CHOICES, MODES, PAPER, RULES, SPEC, Policy, parse_overrides, resolve_policy

# SEG 0: node 0 = {0.9, 0.8}, 1a = {0.7, 0.6}, 2a = {0.1};  SEG 1: 0 = {0.5}, 1a = {0.6}, 1b = {0.1, 0.2, 0.3}
SCORES = [0.9, 0.8, 0.7, 0.6, 0.1, 0.5, 0.6, 0.1, 0.2, 0.3]


def two_segs():
    ds = make_dataset({0: {"0": 2, "1a": 2, "2a": 1}, 1: {"0": 1, "1a": 1, "1b": 3}})
    return ds, make_scores(ds, {"m": np.array(SCORES)})


def test_presets_are_the_one_definition():
    assert MODES == ("paper", "spec")
    assert resolve_policy("paper") is PAPER and resolve_policy("spec") is SPEC
    assert set(PAPER.rules()) == set(RULES) == set(CHOICES)
    # the presets differ in every rule but the NaN policy
    assert [r for r in RULES if PAPER.rules()[r] == SPEC.rules()[r]] == ["nan_policy"]
    for p in (PAPER, SPEC):
        assert all(line.split(" = ")[0] in RULES for line in p.describe().splitlines())


def test_overrides_text_and_names():
    pol = resolve_policy("paper:walk_weights=uniform,leave_out=none")
    assert pol == PAPER.replace(walk_weights="uniform", leave_out="none")
    assert pol.name == "paper+walk_weights=uniform+leave_out=none"
    assert resolve_policy("spec", "repeat_root=true").repeat_root is True
    assert parse_overrides("delta-pairs=all-levels") == {"delta_pairs": "all-levels"}
    assert PAPER.replace(walk_weights="scored-images") is PAPER      # no change, same object
    for bad, msg in [("walk_weights=heavy", "expected one of"), ("colour=red", "RULE=VALUE"),
                     ("walk_weights", "RULE=VALUE")]:
        with pytest.raises(InputError, match=msg):
            parse_overrides(bad)
    with pytest.raises(InputError, match="unknown mode"):
        resolve_policy("papers")
    with pytest.raises(InputError, match="unknown policy rule"):
        PAPER.replace(colour="red")


def test_result_records_its_policy():
    ds, sc = two_segs()
    pol = PAPER.replace(walk_weights="uniform")
    mm = compute(ds, sc, policy=pol)
    assert mm.policy is pol and mm.mode == pol.name
    assert compute(ds, sc, mode="spec").policy is SPEC


def test_delta_pairs_rule():
    ds, sc = two_segs()
    consecutive = compute(ds, sc, policy="paper").segs().iloc[0]["delta"]
    every = compute(ds, sc, policy="paper:delta_pairs=all-levels").segs().iloc[0]["delta"]
    assert consecutive == pytest.approx((0.2 + 0.55) / 2)           # 0-1 and 1-2
    assert every == pytest.approx((0.2 + 0.75 + 0.55) / 3)          # 0-1, 0-2 and 1-2


def test_sep_pairs_rule():
    ds, sc = two_segs()
    # SEG 0, spec walk 0>1a>2a: all pairs disjoint either way; SEG 1 differs:
    # nodes 1a {0.6} and 1b {0.1,0.2,0.3} are both one error away from the root {0.5}.
    walk = compute(ds, sc, policy="spec:sep_pairs=adjacent-levels").segs().iloc[1]["sep"]
    edges = compute(ds, sc, policy="spec").segs().iloc[1]["sep"]
    assert edges == pytest.approx((1.0 + 1.0) / 2)     # edges 0-1a and 0-1b, each once: both disjoint
    assert walk == pytest.approx((1.0 + 1.0) / 2)      # walks 0>1a and 0>1b, uniform weights
    weighted = compute(ds, sc, policy="spec:sep_pairs=adjacent-levels,walk_weights=scored-images").segs()
    assert weighted.iloc[1]["sep"] == pytest.approx(1.0)


def test_walk_weights_rule():
    ds, sc = two_segs()
    mm = compute(ds, sc, policy="spec:walk_weights=scored-images")
    ws = mm.walks(seg_id=1)
    want = np.average(ws["ord"], weights=ws["n_images"])
    assert mm.segs().iloc[1]["ord"] == pytest.approx(want)
    assert compute(ds, sc, policy="spec").segs().iloc[1]["ord"] == pytest.approx(ws["ord"].mean())
    assert not math.isclose(want, ws["ord"].mean())


def test_no_pairs_rule_on_single_node_seg():
    ds = make_dataset({0: {"0": 3}})
    sc = make_scores(ds, {"m": np.array([0.1, 0.2, 0.3])})
    assert compute(ds, sc, policy="paper").segs().iloc[0]["sep"] == 0.0
    assert math.isnan(compute(ds, sc, policy="paper:no_pairs=undefined").segs().iloc[0]["sep"])
    assert math.isnan(compute(ds, sc, policy="spec").segs().iloc[0]["sep"])
    assert compute(ds, sc, policy="spec:no_pairs=zero").segs().iloc[0]["sep"] == 0.0


def test_leave_out_only_applies_to_ts2():
    ds, sc = two_segs()
    assert compute(ds, sc, policy="paper").excluded == []          # a user's dataset loses nothing
    ts2 = load_dataset("ts2")
    assert ts2.is_ts2
    scores = bundled_scores().select(["CLIPScore"])
    assert compute(ts2, scores, policy="paper").excluded == [164]
    assert compute(ts2, scores, policy="paper:leave_out=none").excluded == []
    assert compute(ts2, scores, policy="paper", seg_ids=[0, 1, 2]).excluded == []
    sub = ts2.subset(range(100))
    assert not sub.is_ts2 and compute(sub, scores, policy="paper").excluded == []


def test_nan_policy_rule():
    ds, _ = two_segs()
    vals = np.array(SCORES)
    vals[3] = np.nan
    sc = make_scores(ds, {"m": vals})
    assert np.isfinite(compute(ds, sc, policy="spec").segs()["ord"]).all()
    with pytest.raises(InputError, match="no score for 1 image.*0-1a-1.jpg.*nan_policy=raise"):
        compute(ds, sc, policy="spec:nan_policy=raise")


def test_policy_validates_its_fields():
    with pytest.raises(InputError, match="walk_weights"):
        Policy("x", True, "all-levels", "all-levels", "heavy", "zero", "none")
