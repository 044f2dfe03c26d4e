"""DSG accumulation rules: direct (DSG's scoring code), transitive (alias gated: DSG's README, TS2's
release files) and mean; the yes rules exact (DSG) and contains (TS2). Expected flags by hand."""
import numpy as np
import pytest

from ts2viz.errors import InputError
from ts2viz.qa.accumulation import (ACCUMULATIONS, DEFAULT_ACCUMULATION, USED_BY, canonical_accumulation,
                                         check_accumulation, counted_by_edges, counted_flags, direct_flags,
                                          dsg_score)
from ts2viz.qa.mapping import is_yes
from ts2viz.qa.records import RECORD_COLUMNS, image_scores, with_counted

# 1 root (answered no); 2 <- 1 (yes); 3 <- 2 (yes, grandchild of the failed root); 4 <- 3 (yes);
# 5 root (yes); 6 <- 5 (no); 7 <- 6 and 5 (yes)
IDS = [1, 2, 3, 4, 5, 6, 7]
CORRECT = [False, True, True, True, True, False, True]
PARENTS = [(), (1,), (2,), (3,), (), (5,), (6, 5)]


def test_direct_gates_on_direct_parents_only():
    # DSG's calc_vqa_score: a question is zeroed when a direct parent's own answer is no
    assert counted_flags(IDS, CORRECT, PARENTS, "direct") == [False, False, True, True, True, False, False]
    assert dsg_score(dict(zip(IDS, CORRECT)), dict(zip(IDS, PARENTS)), "direct") == pytest.approx(3 / 7)


def test_transitive_and_its_alias_gate_on_every_ancestor():
    want = [False, False, False, False, True, False, False]
    assert counted_flags(IDS, CORRECT, PARENTS, "transitive") == want
    assert counted_flags(IDS, CORRECT, PARENTS, "gated") == want
    assert canonical_accumulation("gated") == "transitive" and check_accumulation("gated") == "gated"
    assert counted_flags(IDS, CORRECT, PARENTS, "mean") == CORRECT


def test_rules_on_positions_and_defaults():
    child, parent = np.array([1, 2, 3]), np.array([0, 1, 2])      # chain 0 <- 1 <- 2 <- 3, 0 fails
    ok = np.array([False, True, True, True])
    np.testing.assert_array_equal(direct_flags(ok, child, parent), [False, False, True, True])
    np.testing.assert_array_equal(counted_by_edges(ok, child, parent, "gated"), [False] * 4)
    np.testing.assert_array_equal(counted_by_edges(ok, child, parent, "mean"), ok)
    assert DEFAULT_ACCUMULATION == "direct" and set(USED_BY) == set(ACCUMULATIONS)
    with pytest.raises(InputError, match="unknown DSG accumulation 'strict'"):
        canonical_accumulation("strict")
    with pytest.raises(InputError, match="cycle"):
        counted_flags([0, 1], [True, True], [(1,), (0,)], "direct")


def test_with_counted_table_follows_each_rule():
    import pandas as pd

    rows = [("DSG-x", "dsg", "im", q, "q?", "yes|no", "yes", "-".join(map(str, p)), "a", "yes" if c else "no", c)
            for q, c, p in zip(IDS, CORRECT, PARENTS)]
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for rule in ("direct", "transitive", "gated", "mean"):
        assert with_counted(df, rule)["counted"].tolist() == counted_flags(IDS, CORRECT, PARENTS, rule)
    assert image_scores(df, "direct").loc["im", "DSG-x"] == pytest.approx(3 / 7)


def test_yes_rules():
    answers = ["yes", "Yes", "yes, it is", "no", "", None, float("nan"), "eyes"]
    assert is_yes(answers, "exact").tolist() == [True, False, False, False, False, False, False, False]
    assert is_yes(answers, "contains").tolist() == [True, True, True, False, False, False, False, True]
    with pytest.raises(InputError, match="unknown yes rule"):
        is_yes(["yes"], "fuzzy")


def test_bundled_ts2_dsg_columns_under_each_rule():
    from ts2viz.scores import bundled_scores

    direct, transitive, gated, mean = (bundled_scores(dsg=r) for r in ("direct", "transitive", "gated", "mean"))
    m = "DSG-InstructBLIP"
    d, t, g, a = (s.column(m) for s in (direct, transitive, gated, mean))
    np.testing.assert_array_equal(t, g)                   # the alias is the same rule
    ok = ~np.isnan(d)
    # gating only removes questions, and the direct rule removes a subset of what the transitive one does
    assert (t[ok] <= d[ok] + 1e-12).all() and (d[ok] <= a[ok] + 1e-12).all()
    assert (d[ok] > t[ok] + 1e-12).any()                  # a grandchild of a failed root: direct keeps it
