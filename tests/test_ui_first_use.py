"""Issue 21, "tried as a new user would", without a browser: the callbacks and the files they write."""
from __future__ import annotations

import pandas as pd
import pytest

from ts2viz.ui import callbacks as cb
from ts2viz.ui import load_state
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    d = tmp_path_factory.mktemp("first_use")
    write_dataset(d / "ds", big_image=False)
    return load_state(str(d / "ds"), [str(write_scores(d, d / "ds"))], cache_root=d / "cache").view()


# -- item 5: picking a family while "All" is selected -------------------------------------------------

def test_family_selection_drops_all_when_a_family_is_picked():
    A = cb.ALL
    assert cb.family_selection([A, "CLIP"]) == ["CLIP"]               # picked a family: All goes
    assert cb.family_selection(["CLIP", "VQA", A]) == [A]             # picked All: the families go
    assert cb.family_selection(["CLIP", "VQA"]) == ["CLIP", "VQA"]
    assert cb.family_selection([]) == [A] and cb.family_selection(None) == [A]
    assert cb.family_selection([A]) == [A]


# -- item 8: the leaderboard CSV in the table's order -------------------------------------------------

@pytest.mark.parametrize("sort_by", ["ord_avg", "sep_avg", "metric"])
@pytest.mark.parametrize("best_first", [True, False])
def test_leaderboard_csv_rows_in_the_tables_order(app, sort_by, best_first):
    table = cb.leaderboard(app, "paper", None, sort_by, best_first)
    csv = pd.read_csv(cb.leaderboard_csv(app, "paper", None, sort_by, best_first))
    assert list(csv["metric"]) == list(table["metric"])
    assert len(set(csv["metric"])) >= 3
    # sorted as asked (names A-Z / values best first), not in one fixed order
    col = csv[sort_by]
    want = col.sort_values(ascending=(sort_by == "metric") == best_first, na_position="last", kind="stable")
    assert list(col) == list(want)
