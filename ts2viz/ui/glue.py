"""Glue between the plain callbacks and Gradio: figures as plot data, errors as messages, the page.

Everything here converts: component values to callback arguments, callback results to component
updates, and :class:`~ts2viz.errors.InputError` (or any other failure) to a readable message while
the app keeps running. Imported only when the app is built (it imports gradio).
"""
from __future__ import annotations

import functools
import json
import logging
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import gradio as gr

from ..errors import InputError
from .callbacks import seg_from_row as cb_seg_from_row
from .callbacks import seg_options as cb_seg_options
from .state import AppState

log = logging.getLogger("ts2viz.ui")


def plot_value(fig, fmt: str = "png"):
    """A plotly figure as Gradio plot data, with the modebar's download button set to ``fmt``."""
    from gradio.components.plot import PlotData

    if fig is None:
        return None
    data = json.loads(fig.to_json())
    fmt = fmt if fmt in ("png", "svg") else "png"
    data["config"] = {"displaylogo": False, "responsive": True,
                      "toImageButtonOptions": {"format": fmt, "filename": "ts2viz-figure", "scale": 2},
                      "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
    return PlotData(type="plotly", plot=json.dumps(data))


def message(e: Exception) -> str:
    """The text shown for a failed callback: an input error as it is, anything else summarised."""
    if isinstance(e, InputError):
        return str(e)
    log.error("callback failed:\n%s", traceback.format_exc())
    return f"Something went wrong ({type(e).__name__}: {e}). The app is still running; try another choice."


def safe(fn: Callable) -> Callable:
    """Run a callback; on failure show the message in a toast and leave the outputs as they are."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as e:  # noqa: BLE001 - every failure of a callback becomes a message
            raise gr.Error(message(e), duration=8) from None

    return run


def dropdown(choices, value) -> Any:
    """A dropdown update with new choices and value."""
    return gr.Dropdown(choices=choices, value=value)


@dataclass
class Refresh:
    """How to redraw one part of the page: a callback, its input and its output components."""

    fn: Callable
    inputs: list
    outputs: list


@dataclass
class Page:
    """The components every tab may read (mode, figure format, the tab bar) and the tabs' redraws.

    Each tab's builder registers how to redraw its views (:attr:`refresh`) and which of its dropdowns
    list metrics (:attr:`metric_pickers`), so that events which change the loaded scores (an upload, a
    live score, the mode) can redraw every tab without knowing its components.
    """

    app: AppState
    mode: Any
    fmt: Any
    tabs: Any = None
    seg: Any = None           # the explorer's SEG picker: the current SEG for every tab
    search: Any = None        # the explorer's prompt search (cleared when a SEG is opened from a table)
    refresh: dict[str, Refresh] = field(default_factory=dict)
    metric_pickers: list = field(default_factory=list)
    family_pickers: list = field(default_factory=list)

    def open_seg_from_table(self, table) -> None:
        """Clicking a row of ``table`` (first column: SEG id) opens that SEG in the explorer."""
        app = self.app

        def open_row(tbl, evt: gr.SelectData):
            sid = cb_seg_from_row(tbl, evt.index[0])
            if sid is None:
                return gr.skip(), gr.skip(), gr.skip()
            return dropdown(cb_seg_options(app), sid), gr.Tabs(selected="seg"), ""

        table.select(safe(open_row), table, [self.seg, self.tabs, self.search])

    def then_redraw(self, dep, names):
        """Chain the redraws ``names`` after the event ``dep``; returns the last dependency."""
        for name in names:
            r = self.refresh[name]
            dep = dep.then(safe(r.fn), r.inputs, r.outputs)
        return dep
