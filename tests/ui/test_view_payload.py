"""What an explorer view costs the server.

Gradio's file scan left out for outputs that hold no file, the walk table as shown built once per view
and counted at its size by the memo, formatted tables sent without rendering their Styler.
"""
from __future__ import annotations

import asyncio

import orjson
import pytest

gr = pytest.importorskip("gradio")

from gradio import processing_utils  # noqa: E402

from ts2viz.ui import load_state  # noqa: E402
from ts2viz.ui.callbacks.explorer import view as cb_view  # noqa: E402
from ts2viz.ui.glue.file_scan import holds_no_file, skip_file_scan_of_fileless_outputs  # noqa: E402
from ts2viz.ui.glue.tables import table_value  # noqa: E402
from ts2viz.ui.state.memo import size_of  # noqa: E402


@pytest.fixture(scope="module")
def ts2(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2cache"), fetch_images=False).view()


def test_file_scan_left_out_only_where_no_file_can_be(ts2, tmp_path):
    """For fileless outputs the patched scan sends what Gradio's own walk sends; files are walked."""
    skip_file_scan_of_fileless_outputs()
    assert skip_file_scan_of_fileless_outputs() is False          # idempotent
    patched = processing_utils.async_move_files_to_cache
    original = patched.__wrapped__
    v = cb_view.seg_view(ts2, "paper", 0, "CLIPScore", "TIFA-GPT4V", nodes=False)
    table = gr.Dataframe(interactive=False, render=False)
    cases = [(table, table.postprocess(table_value(v["walk_table"]))), (gr.Markdown(render=False), v["header"]),
             (gr.HTML(render=False), v["graph"]),
             (gr.Dropdown(render=False), {"__type__": "update", "choices": v["walk_choices"], "value": None})]
    for block, value in cases:
        assert holds_no_file(block)
        got = asyncio.run(patched(value, block, postprocess=True))
        want = asyncio.run(original(value, block, postprocess=True))
        # what the page gets (the walk turns tuples into lists: the same JSON)
        assert orjson.dumps(got) == orjson.dumps(want), type(block).__name__
        assert isinstance(got, (dict, str))
    # a file component and an image column are walked as before
    assert not holds_no_file(gr.Gallery(render=False))
    assert not holds_no_file(gr.Dataframe(datatype=["str", "image"], render=False))
    gallery = gr.Gallery(render=False)
    files = gallery.postprocess(v["gallery"]).model_dump()
    assert asyncio.run(patched(files, gallery, postprocess=True)) == asyncio.run(original(files, gallery, postprocess=True))
    # inputs are always walked (the walk is where Gradio checks a visitor's files), a table's too
    f = tmp_path / "a.txt"
    f.write_text("x")
    given = {"headers": ["f"], "data": [[{"path": str(f), "meta": {"_type": "gradio.FileData"}}]]}
    got = asyncio.run(patched(given, table, postprocess=False))
    assert got == asyncio.run(original(given, table, postprocess=False))
    assert got["data"][0][0]["url"]


def test_walk_table_shown_once_per_view_and_sized(ts2):
    """The walk table as shown (a Styler) is memoised with the view; the memo counts it at its table's size."""
    a = cb_view.seg_view(ts2, "paper", 3, "CLIPScore", "TIFA-GPT4V", nodes=False)["walk_table"]
    b = cb_view.seg_view(ts2, "paper", 3, "CLIPScore", "TIFA-GPT4V", nodes=False)["walk_table"]
    c = cb_view.seg_view(ts2, "paper", 3, "CLIPScore", "DSG-GPT4V", nodes=False)["walk_table"]
    assert a is b and a is not c
    assert list(c.data.columns) != list(a.data.columns)
    assert size_of(a) >= 2 * size_of(a.data)


def test_formatted_tables_sent_as_gradio_renders_them(ts2):
    """A Styler that only formats goes to the page as Gradio's render of it does (headers, data, display values)."""
    from ts2viz.ui.callbacks.common import mark_columns, shown
    from ts2viz.ui.callbacks.explorer import nodes as cb_nodes, picking as cb_picking
    from ts2viz.ui.glue.tables import STYLED_TABLE, _formatted_value

    import numpy as np
    import pandas as pd

    tables = []
    for mode, seg, a, b in [("paper", 0, "CLIPScore", "TIFA-GPT4V"), ("spec", 7, "DSG-GPT4V", None),
                            ("paper", 120, "ALIGNScore", "CLIPScore"), ("spec", 164, "TIFA-GPT4V", "TIFA-GPT4V")]:
        tables.append(cb_view.seg_view(ts2, mode, seg, a, b, nodes=False)["walk_table"])
        tables.append(shown(cb_nodes.ks_table(ts2, seg, a, b)))
    tables.append(shown(cb_picking.failure_finder(ts2, "paper", "CLIPScore", "sep", "TIFA-GPT4V")))
    odd = mark_columns(pd.DataFrame({"n": [1, 2, 3], "x": [0.5, np.nan, -0.25], "s": [0.1234, 2.0, np.nan],
                                     "t": ["a", "b", "c"], "f": [True, False, True], "raw": [1.5, np.nan, 3.0]}),
                       x100=["x"], scores=["s"])
    tables.append(shown(odd))
    for styler in tables:
        fast = _formatted_value(styler)
        assert fast is not None
        want = STYLED_TABLE.postprocess(styler).model_dump()
        got = STYLED_TABLE.postprocess(fast).model_dump()
        assert orjson.dumps(got, option=orjson.OPT_SERIALIZE_NUMPY) == orjson.dumps(want, option=orjson.OPT_SERIALIZE_NUMPY)
    # anything but formats goes Gradio's way
    styled = shown(odd).highlight_max(subset=["n"])
    assert _formatted_value(styled) is None
    assert _formatted_value(shown(odd).hide(axis="columns", subset=["t"])) is None
    assert _formatted_value(shown(pd.DataFrame({"t": ["a", None]}))) is None
    want = {k: v for k, v in STYLED_TABLE.postprocess(styled).model_dump().items() if v is not None}
    assert orjson.dumps(table_value(styled)) == orjson.dumps(want)
    assert "background-color" in orjson.dumps(want).decode()       # the styled path does style
