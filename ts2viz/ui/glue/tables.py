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
        out = STYLED_TABLE.postprocess(df).model_dump()
        return {k: v for k, v in out.items() if v is not None}
    split = df.to_dict(orient="split")
    return {"headers": [str(c) for c in split["columns"]], "data": split["data"]}


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
