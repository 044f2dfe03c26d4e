"""The Human ratings tab's callbacks, without a browser: what the table and figure carry."""
import pytest

from ts2viz.errors import InputError
from ts2viz.ui import gold_callbacks as gc


def test_board_per_task_and_note():
    pw = gc.board("tifa160", "dsg", "point-wise")
    row = pw[pw["metric"] == "dsg:PaLI-17B"].iloc[0]
    assert row["Spearman [95%]"].startswith("0.571 [") and row["Kendall τ-b [95%]"].startswith("0.458 [")
    assert pw["metric"].iloc[0] == "human:tifa"           # the human ceiling leads
    pair = gc.board("tifa160", "dsg", "pair-wise")
    assert {"accuracy [95%]", "acc_eq, tie-calibrated [95%]", "tie ε"} <= set(pair.columns)
    order = gc.board("imagenhub-t2i", "sc", "model ordering")
    assert order["model pairs agreeing"].str.endswith("%").all()
    assert "humans order" in gc.board_note("imagenhub-t2i", "sc", "model ordering")
    assert gc.rating_sets("imagenhub-t2i") == ["sc"]      # perceptual quality is not offered as gold


def test_scatter_is_one_trace_per_model_one_point_per_image():
    import json

    from ts2viz.ui.glue import page_plot

    fig = json.loads(page_plot(lambda: gc.scatter_figure("tifa160", "tifa", "dsg:InstructBLIP")).plot)
    assert len(fig["data"]) == 5 and sum(len(t["x"]) for t in fig["data"]) == 800
    assert "Spearman" in fig["layout"]["title"]["text"]


def test_inputs_from_a_visitor_are_checked():
    with pytest.raises(InputError, match="unknown rated set"):
        gc.board("/etc/passwd", "dsg", "point-wise")
    with pytest.raises(InputError, match="unknown task"):
        gc.board("tifa160", "dsg", "bogus")
    with pytest.raises(InputError, match="no rating set"):
        gc.result("tifa160", "pq")
    with pytest.raises(InputError, match="no metric"):
        gc.scatter_data("tifa160", "dsg", "__import__('os')")
