"""Tables and dropdowns as the values and updates Gradio's components take."""
from __future__ import annotations

from typing import Any

import gradio as gr

#: a Dataframe that turns Stylers into values; made here, at import (when the app is built): a component
#: made inside an event is an update, without the attributes postprocess reads
STYLED_TABLE = gr.Dataframe(interactive=False, render=False)


#: the header of a table that has no rows (:func:`empty_table`)
EMPTY_HEADER = "nothing to show yet"


def empty_table(why: str) -> dict:
    """The value of a ``gr.Dataframe`` with no rows: one cell saying what is missing.

    Without it Gradio draws an empty table under the made-up headers "1 | 2 | 3" (issue 40 item 12).

    Parameters
    ----------
    why : str
        What is missing and how to get it (plain text).

    Returns
    -------
    dict
        The value: header :data:`EMPTY_HEADER`, one row holding ``why``.
    """
    return {"headers": [EMPTY_HEADER], "data": [[why]]}


def table_value(df, empty: str | None = None) -> dict | None:
    """A table as the value a ``gr.Dataframe`` takes as it is.

    A DataFrame, or a pandas Styler (what people read, e.g. x100, over the data), as the ``{"headers",
    "data"[, "metadata"]}`` value: built once and memoised with the view, instead of converted again for
    every session. A Styler's display values travel in ``metadata``; ``data`` keeps the values underneath
    (what a row click reads).

    Parameters
    ----------
    df : pandas.DataFrame or pandas.io.formats.style.Styler or None
        The table.
    empty : str or None, default None
        What a table without rows shows instead (:func:`empty_table`); ``None``: the table as it is.

    Returns
    -------
    dict or None
        The value; ``None`` for no table (without ``empty``).
    """
    if empty is not None and (df is None or len(getattr(df, "data", df)) == 0):
        return empty_table(empty)
    if df is None:
        return None
    from pandas.io.formats.style import Styler

    if isinstance(df, Styler):
        out = STYLED_TABLE.postprocess(_formatted_value(df) or df).model_dump()
        return {k: v for k, v in out.items() if v is not None}
    split = df.to_dict(orient="split")
    return {"headers": [str(c) for c in split["columns"]], "data": split["data"]}


#: the most cells :func:`_formatted_value` converts (pandas' Styler trims larger tables when it renders)
FORMATTED_MAX_CELLS = 100_000


def _formatted_value(styler) -> dict | None:
    """A Styler that only formats (no styles, nothing hidden) as the value Gradio makes of it, without rendering it.

    Gradio's ``Dataframe.postprocess`` renders the whole Styler (``_compute()._translate()``, pandas' HTML
    model) to read each cell's display value: most of a first view's walk table. The display value of a
    cell is its formatter applied to its value (what ``_translate`` does for a Styler without styles),
    and the data are ``to_dict(orient="split")``'s; ``None`` for any other Styler (styled, hidden rows or
    columns, missing values in a column that is not numeric, a table pandas would trim), which goes
    Gradio's way.
    """
    df = styler.data
    if (styler._todo or styler.ctx or styler.cell_context or styler.hidden_columns or styler.hidden_rows
            or df.size > FORMATTED_MAX_CELLS or not df.columns.is_unique or len(df) == 0):
        return None
    cols = [df.iloc[:, j] for j in range(df.shape[1])]
    if any(c.dtype.kind not in "fiub" and c.hasnans for c in cols):
        return None
    values = [c.tolist() for c in cols]
    data = [list(row) for row in zip(*values)]
    funcs = styler._display_funcs
    display = [[funcs[(i, j)](v) for j, v in enumerate(row)] for i, row in enumerate(data)]
    return {"headers": list(df.columns), "data": data,
            "metadata": {"display_value": display, "styling": [[""] * len(row) for row in data]}}


def dropdown(choices, value) -> Any:
    """A dropdown update with new choices and value.

    Updates are ``gr.update`` dicts, not component instances: a component built per call costs a signature
    inspection and a config in Gradio's request path, about a tenth of a light view call.

    Parameters
    ----------
    choices : list
        The choices.
    value : object
        The value.

    Returns
    -------
    dict
        The update.
    """
    return gr.update(choices=choices, value=value)
