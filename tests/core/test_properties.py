"""Property tests (hypothesis) of the meta-metrics."""
import numpy as np
from hypothesis import given, settings, strategies as st

from ts2viz import compute
from core_helpers import make_dataset, make_scores


@st.composite
def segs(draw):
    """A random single SEG: {label: n_images} with a root, 1-4 further levels, 1-3 nodes per level."""
    nodes = {"0": draw(st.integers(1, 4))}
    levels = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True))
    for lv in levels:
        for k in range(draw(st.integers(1, 3))):
            nodes[f"{lv}{'abc'[k]}"] = draw(st.integers(1, 4))
    return nodes


def _run(nodes, values, mode):
    ds = make_dataset({0: nodes})
    return compute(ds, make_scores(ds, {"m": np.asarray(values, float)}), mode=mode).segs().iloc[0]


@settings(max_examples=60, deadline=None)
@given(segs(), st.floats(0.1, 10), st.floats(-5, 5))
def test_strictly_decreasing_metric_orders_perfectly_in_spec_mode(nodes, slope, offset):
    ds = make_dataset({0: nodes})
    values = [offset - slope * r.level ** 1.5 for r in ds.rows]     # strictly decreasing in error count
    row = _run(nodes, values, "spec")
    assert abs(row["ord"] - 1) < 1e-9
    assert abs(row["sep"] - 1) < 1e-9          # adjacent populations are disjoint


@settings(max_examples=60, deadline=None)
@given(segs(), st.floats(-3, 3), st.sampled_from(["paper", "spec"]))
def test_constant_metric_has_no_order_and_no_separation(nodes, c, mode):
    n = sum(nodes.values())
    row = _run(nodes, [c] * n, mode)
    assert row["ord"] == 0 and row["sep"] == 0 and row["kendall"] == 0


@settings(max_examples=60, deadline=None)
@given(segs(), st.data(), st.sampled_from(["paper", "spec"]))
def test_sep_in_unit_interval_and_ord_bounded(nodes, data, mode):
    n = sum(nodes.values())
    values = data.draw(st.lists(st.one_of(st.floats(-1, 1), st.just(float("nan"))), min_size=n, max_size=n))
    row = _run(nodes, values, mode)
    for k in ("sep",):
        assert np.isnan(row[k]) or 0 <= row[k] <= 1 + 1e-12
    for k in ("ord", "kendall"):
        assert np.isnan(row[k]) or -1 - 1e-12 <= row[k] <= 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(segs(), st.data(), st.sampled_from(["paper", "spec"]))
def test_relabelling_nodes_within_a_level_changes_nothing(nodes, data, mode):
    ds = make_dataset({0: nodes})
    values = data.draw(st.lists(st.floats(-1, 1), min_size=len(ds.rows), max_size=len(ds.rows)))
    before = compute(ds, make_scores(ds, {"m": np.asarray(values)}), mode=mode).segs().iloc[0]
    # Rename nodes within each level by reversing their letter suffixes; images keep their scores.
    by_level = {}
    for lbl in nodes:
        by_level.setdefault(int(lbl.rstrip("abc")), []).append(lbl)
    rename = {}
    for lv, lbls in by_level.items():
        for a, b in zip(lbls, reversed(lbls)):
            rename[a] = b
    renamed = {rename[l]: nodes[l] for l in nodes}
    ds2 = make_dataset({0: renamed})
    score_of = {(r.label, i): v for (r, v), i in zip(zip(ds.rows, values), _index_in_node(ds.rows))}
    values2 = [score_of[(next(a for a, b in rename.items() if b == r.label), i)]
               for r, i in zip(ds2.rows, _index_in_node(ds2.rows))]
    after = compute(ds2, make_scores(ds2, {"m": np.asarray(values2)}), mode=mode).segs().iloc[0]
    for k in ("ord", "sep", "delta", "kendall"):
        assert np.isclose(before[k], after[k], equal_nan=True, atol=1e-12)


def _index_in_node(rows):
    seen = {}
    out = []
    for r in rows:
        out.append(seen.get(r.label, 0))
        seen[r.label] = out[-1] + 1
    return out
