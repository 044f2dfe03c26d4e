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


def test_cluster_column_is_the_cli_s(tmp_path):
    import contextlib
    import io

    import pandas as pd

    from ts2viz.cli import main

    pw = gc.board("tifa160", "dsg", "point-wise")
    assert pw["metric"].iloc[0] == "human:tifa" and pw["cluster"].iloc[0] == "1"
    c = [int(v) for v in pw["cluster"]]
    assert c == sorted(c) and max(c) >= 3                # sorted by Spearman, clusters never go back
    assert "permutation" in gc.board_note("tifa160", "dsg", "point-wise")
    out = tmp_path / "h.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["humaneval", "--gold", "tifa160", "--clusters", "--no-ci", "--out", str(out)]) == 0
    cli = pd.read_csv(out).dropna(subset=["cluster"]).set_index("metric")["cluster"].astype(int)
    assert {m: int(v) for m, v in zip(pw["metric"], pw["cluster"])} == cli.to_dict()
    pair = gc.board("tifa160", "dsg", "pair-wise")
    pc = [int(v) for v in pair["cluster"]]
    assert pc == sorted(pc) and pc[0] == 1
    assert "cluster" not in gc.board("tifa160", "dsg", "model ordering").columns
