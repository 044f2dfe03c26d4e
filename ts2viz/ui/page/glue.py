"""Glue between the plain callbacks and Gradio: figures as plot data, errors as messages, the page.

Everything here converts: component values to callback arguments, callback results to component
updates, and :class:`~ts2viz.errors.InputError` (or any other failure) to a readable message while
the app keeps running. Each event finds its session's view of the app through :meth:`Page.view`
(the request's session id). Imported only when the app is built (it imports gradio).
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import os
import re
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import gradio as gr
import orjson

from ...display import md_text
from ...errors import InputError
from ...figures import PlainFigure, plain_figures
from ..callbacks.explorer import seg_from_row as cb_seg_from_row
from ..callbacks.explorer import seg_options as cb_seg_options
from ..state.sessions import Workspaces
from ..state.app_state import AppState, AppView

log = logging.getLogger("ts2viz.ui")

#: events that only redraw views share this concurrency group; model calls have their own
VIEW_GROUP, MODEL_GROUP = "view", "model"

#: the version of the shared data (:meth:`AppState.variant`) the current event's page shows, set
#: around each event by :meth:`Page.on` from the page's variant control, read by :meth:`Page.view`
_VARIANT: contextvars.ContextVar[str | None] = contextvars.ContextVar("ts2viz_variant", default=None)
#: the parameter every event handler gets first when the page has a variant control
VARIANT_PARAM = "ts2viz_variant"


def with_variant(fn: Callable) -> Callable:
    """A callback taking one more input, first: the page's variant choice, which :meth:`Page.view` reads.

    First, because Gradio places its special arguments (request, event data, progress) by their position
    in the signature and fills parameters it has no input for with their defaults: a parameter in front
    shifts both consistently.

    Parameters
    ----------
    fn : callable
        The callback.

    Returns
    -------
    callable
        The wrapped callback, its signature with :data:`VARIANT_PARAM` in front.
    """
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    extra = inspect.Parameter(VARIANT_PARAM, inspect.Parameter.POSITIONAL_OR_KEYWORD)

    @functools.wraps(fn)
    def run(choice, *args):
        token = _VARIANT.set(choice if isinstance(choice, str) else None)
        try:
            return fn(*args)
        finally:
            _VARIANT.reset(token)

    run.__signature__ = sig.replace(parameters=[extra] + params)
    return run

# Save a dataframe / figure in a download: a click makes the file on the server, then the browser
# saves it (one click; nothing is written before a visitor asks).
DOWNLOAD_JS = """(f) => {
  if (f && f.url) {
    const a = document.createElement('a');
    a.href = f.url; a.download = f.orig_name || 'ts2viz.csv';
    document.body.appendChild(a); a.click(); a.remove();
  }
  return [];
}"""


# After a row click opened a SEG: on a narrow window (the layout's columns stacked), scroll to the SEG's header.
SHOW_SEG_ON_PHONE_JS = """() => {
  if (window.innerWidth <= 640) {
    setTimeout(() => document.querySelector('#seg-header')?.scrollIntoView({block: 'start'}), 300);
  }
  return [];
}"""


# After a row of a table opened a SEG: leave no cell of the page's tables selected (Gradio's Dataframe keeps
# the clicked cell outlined, with its "select row / column" buttons, until a click lands outside the table:
# a click on the page's body is one) and give the focus back to the page (issue 40 item 17).
CLEAR_TABLE_SELECTION_JS = """() => {
  requestAnimationFrame(() => {
    const a = document.activeElement;
    if (a && a.closest('[role="grid"], table')) { a.blur(); }
    document.body.click();
  });
  return [];
}"""


# Which panels the page shows (Page.track_open / Page.while_open): a flag per panel, in the page.
OPEN_FLAG_JS = """() => { (window.ts2vizOpen = window.ts2vizOpen || {})[%s] = %s; return []; }"""
# While the panel is open, click the hidden button whose click runs the panel's server event.
CLICK_IF_OPEN_JS = """() => {
  if ((window.ts2vizOpen || {})[%s]) {
    const el = document.getElementById(%s);
    const b = el && (el.tagName === 'BUTTON' ? el : el.querySelector('button'));
    if (b) { b.click(); }
  }
  return [];
}"""


def _json_default(o):
    tolist = getattr(o, "tolist", None)
    if callable(tolist):
        return tolist()
    return str(o)


@functools.lru_cache(maxsize=1)
def _template() -> dict:
    """Plotly's default template, as plotly.js reads it, for the trace types the app draws.

    The full one also styles some forty others: it would triple the size of a small figure.
    """
    import plotly.io as pio

    t = pio.templates[pio.templates.default].to_plotly_json()
    used = ("scatter", "heatmap", "box", "histogram", "bar")
    return {"data": {k: v for k, v in t.get("data", {}).items() if k in used}, "layout": t.get("layout", {})}


def figure_json(fig: PlainFigure) -> bytes:
    """A plain figure as the JSON plotly.js reads, with plotly's default template.

    The ``data`` and ``layout`` dicts exactly as the builders wrote them. Only plain figures: a
    ``go.Figure`` would be serialised by plotly.py, whose classes accept (and rewrite) spellings plotly.js
    ignores, so the page could get something other than what the tests check. Every figure the app sends
    goes :func:`page_plot` → here; tests/ui/test_figure_json.py checks this JSON against Plotly's schema.
    NaN becomes null, as in plotly's own encoder.

    Parameters
    ----------
    fig : ts2viz.figures.PlainFigure
        A figure built inside :func:`build_plain`.

    Returns
    -------
    bytes
        The JSON.

    Raises
    ------
    TypeError
        For anything but a plain figure.
    """
    if not isinstance(fig, PlainFigure):
        raise TypeError(f"figure_json takes a PlainFigure (build it inside build_plain), not {type(fig).__name__}")
    opts = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    return orjson.dumps({"data": fig.data, "layout": {**fig.layout, "template": _template()}},
                        default=_json_default, option=opts)


def build_plain(build: Callable[[], Any]):
    """Run ``build()`` with the figure builders returning plain dicts (:func:`ts2viz.figures.plain_figures`).

    Parameters
    ----------
    build : callable
        Builds a figure (or anything).

    Returns
    -------
    object
        What ``build()`` returns.
    """
    with plain_figures():
        return build()


def plot_config(fmt: str) -> bytes:
    """The plotly.js config of the app's figures: no logo, responsive, the modebar's download in a format.

    Parameters
    ----------
    fmt : str
        ``png`` or ``svg`` (anything else: ``png``).

    Returns
    -------
    bytes
        The config as JSON.
    """
    fmt = fmt if fmt in ("png", "svg") else "png"
    return orjson.dumps({"displaylogo": False, "responsive": True,
                         "toImageButtonOptions": {"format": fmt, "filename": "ts2viz-figure", "scale": 2},
                         "modeBarButtonsToRemove": ["lasso2d", "select2d"]})


def plot_data(body: bytes, fmt: str = "png"):
    """Gradio plot data from :func:`figure_json` output, with the modebar's download set to a format.

    Parameters
    ----------
    body : bytes
        The figure's JSON.
    fmt : str, default "png"
        The download format.

    Returns
    -------
    gradio.components.plot.PlotData
        The value of a ``gr.Plot``.
    """
    from gradio.components.plot import PlotData

    text = body[:-1] + b',"config":' + plot_config(fmt) + b"}"
    return PlotData(type="plotly", plot=text.decode("utf-8"))


def page_plot(build: Callable[[], Any], fmt: str = "png"):
    """THE path of a figure to the page: built as plain dicts, serialised as it is, wrapped as plot data.

    Parameters
    ----------
    build : callable
        Builds the figure (run inside :func:`build_plain`); may return ``None``.
    fmt : str, default "png"
        The modebar's download format.

    Returns
    -------
    gradio.components.plot.PlotData or None
        The value of a ``gr.Plot``; ``None`` when ``build`` returns ``None`` (no figure sent).
    """
    fig = build_plain(build)
    return None if fig is None else plot_data(figure_json(fig), fmt)


def plot_value(fig, fmt: str = "png"):
    """A plain figure (built inside :func:`build_plain`) as Gradio plot data (see :func:`page_plot`).

    Parameters
    ----------
    fig : ts2viz.figures.PlainFigure or None
        The figure.
    fmt : str, default "png"
        The modebar's download format.

    Returns
    -------
    gradio.components.plot.PlotData or None
        The value of a ``gr.Plot``.
    """
    return page_plot(lambda: fig, fmt)


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


def plot_cached(app: AppView, fmt: str):
    """A :data:`ts2viz.ui.callbacks.common.Plot` for a session: each figure built and serialised once per key.

    Shared by all sessions when it shows shared metrics; returned as plot data.

    Parameters
    ----------
    app : AppView
        The session's view.
    fmt : str
        The modebar's download format.

    Returns
    -------
    callable
        ``plot(key, metrics, build) -> PlotData``.
    """

    def plot(key: tuple, metrics: Sequence[str | None], build: Callable[[], Any]):
        return app.memo(("plot", fmt, *key), metrics, lambda: page_plot(build, fmt))

    return plot


_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[^/\s'\"():,]+){2,}")


def message(e: Exception, public: bool = False) -> str:
    """The text shown for a failed callback: an input error as it is, anything else summarised.

    In public mode an unexpected error says nothing about its cause, an API's refusal is the app's own line
    (:attr:`ts2viz.metrics.backbones.openai_client.EndpointError.visitor`; the details go to the log), and
    file paths in any message are cut to their last part (defence in depth: the callbacks' own messages
    name no server paths). Keys are masked in every message and log line
    (:func:`ts2viz.metrics.backbones.openai_client.mask`). Anything but an
    :class:`~ts2viz.errors.InputError` is logged with its traceback.

    Parameters
    ----------
    e : Exception
        The failure.
    public : bool, default False
        Public mode.

    Returns
    -------
    str
        The message.
    """
    from ...metrics.backbones.openai_client import EndpointError, mask

    if public:
        cause, seen = e, 0
        while cause is not None and seen < 8:     # an API's refusal, even wrapped: the app's own line only
            if isinstance(cause, EndpointError):
                log.warning("API call failed: %s", cause)
                return cause.visitor
            cause, seen = cause.__cause__ or cause.__context__, seen + 1
    if isinstance(e, InputError):
        text = mask(e)
        if not public:
            return text
        from ...display import echo_words

        # a pasted value is quoted short (a 200 KB id would come back whole)
        return echo_words(_PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], text))
    log.error("callback failed:\n%s", mask(traceback.format_exc()))
    if public:
        return "Something went wrong. The app is still running; try another choice."
    return f"Something went wrong ({type(e).__name__}: {e}). The app is still running; try another choice."


class Selection(gr.SelectData):
    """``gr.SelectData`` for a select event's callback (``evt: Selection``), also from a call without event data.

    A script's call may lack the event data a browser sends with it (``event_data: null``). Gradio builds
    the type hint's class from the call's event data before the callback runs, outside any ``try`` of
    ours: ``gr.SelectData`` fails there on missing data with a traceback in the log. This class is built
    either way; ``complete`` says whether the data was there, and :func:`safe` refuses an incomplete one
    with one log line and a one-line message.

    Parameters
    ----------
    target : object
        The event's target component.
    data : dict or None
        The event data.
    """

    def __init__(self, target, data) -> None:
        self.complete = isinstance(data, dict) and "index" in data and "value" in data
        if self.complete:
            super().__init__(target, data)
            return
        gr.EventData.__init__(self, target, data)
        self.index = self.value = self.row_value = self.col_value = None
        self.selected = False


def _incomplete_selection(args, kwargs) -> bool:
    return any(isinstance(a, Selection) and not a.complete for a in (*args, *kwargs.values()))


def safe(fn: Callable, public: bool = False, gate: threading.Semaphore | None = None,
         on_error: Callable[[str, Any], None] | None = None) -> Callable:
    """A callback whose failure shows its message in a toast and leaves the outputs as they are.

    A select event called without its selection (:class:`Selection`) is refused with one line. The server
    log gets no traceback for bad input (an :class:`InputError`: an expected answer, not a fault); any
    other failure is logged with its traceback by :func:`message`.

    Parameters
    ----------
    fn : callable
        The callback.
    public : bool, default False
        Public mode (:func:`message`).
    gate : threading.Semaphore or None, default None
        At most that many such callbacks run at once, the others wait their turn in order (Python threads
        share one core for this work: more at once only slows each down).
    on_error : callable or None, default None
        ``on_error(text, request)`` is told each failure's message (and the event's ``gr.Request``, if the
        callback takes one).

    Returns
    -------
    callable
        The wrapped callback (it raises ``gr.Error`` with the message).
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            if _incomplete_selection(args, kwargs):
                log.warning("refused a select event (%s) called without its event data", getattr(fn, "__name__", "?"))
                raise InputError("this action needs the selection made on the page; click the item again")
            if gate is None:
                return fn(*args, **kwargs)
            with gate:
                return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as e:  # noqa: BLE001 - every failure of a callback becomes a message
            text = message(e, public)
            if on_error is not None:
                request = next((a for a in (*args, *kwargs.values()) if isinstance(a, gr.Request)), None)
                on_error(text, request)
            raise gr.Error(text, duration=8, print_exception=False) from None

    return run


def client_of(request) -> str | None:
    """The address a request came from (the per-client cap of :class:`~ts2viz.ui.state.sessions.Workspaces`).

    Parameters
    ----------
    request : gradio.Request or None
        The request.

    Returns
    -------
    str or None
        The address.
    """
    client = getattr(request, "client", None)
    return getattr(client, "host", None) if client is not None else None


def markdown_text(text: str) -> str:
    """Plain text shown as it is in a ``gr.Markdown`` (no emphasis, links or HTML from the text itself).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    str
        The escaped Markdown.
    """
    return md_text(text)


class LastErrors:
    """The last failure message of each session's event, kept until shown (:meth:`put`, then :meth:`pop`).

    At most ``size`` sessions' (a session that never collects its message does not keep it for ever).

    Parameters
    ----------
    size : int, default 1000
        Sessions remembered.
    """

    def __init__(self, size: int = 1000) -> None:
        from collections import OrderedDict

        self.size = size
        self._by: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, text: str, request) -> None:
        """Keep a session's failure message.

        Parameters
        ----------
        text : str
            The message.
        request : gradio.Request or None
            The event's request (nothing kept without a session id).
        """
        sid = getattr(request, "session_hash", None)
        if sid is None:
            return
        with self._lock:
            self._by[sid] = text
            self._by.move_to_end(sid)
            while len(self._by) > self.size:
                self._by.popitem(last=False)

    def pop(self, request) -> str | None:
        """Take a session's failure message.

        Parameters
        ----------
        request : gradio.Request or None
            The event's request.

        Returns
        -------
        str or None
            The message, if one was kept.
        """
        with self._lock:
            return self._by.pop(getattr(request, "session_hash", None), None)


#: whether view events go through Gradio's queue (first come, first served; env TS2VIZ_VIEW_QUEUE=0 answers
#: them on their own requests instead: less overhead, but no order among waiting requests)
VIEW_QUEUED = os.environ.get("TS2VIZ_VIEW_QUEUE", "1") not in ("", "0", "false", "False")
#: view events that may run at the same time, queued ones and others each (env TS2VIZ_VIEW_CONCURRENCY).
#: Views are CPU work in Python, which runs one thread at a time: more at once only adds thread
#: switching (50 clients x 10 view changes: 16.5 ms of server CPU per call at 1, 19 ms at 4). Nothing
#: in a view waits on the network (thumbnails are fetched in the background).
VIEW_CONCURRENCY = int(os.environ.get("TS2VIZ_VIEW_CONCURRENCY") or 1)
#: model calls at a time (one per GPU: more would only share it)
MODEL_CONCURRENCY = 1


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


@dataclass
class Refresh:
    """How to redraw one part of the page: a callback, its input and its output components.

    Parameters
    ----------
    fn : callable
        The callback (takes the inputs' values, then the ``gr.Request``).
    inputs : list
        Its input components.
    outputs : list
        Its output components.
    """

    fn: Callable
    inputs: list
    outputs: list


@dataclass
class Page:
    """The components every tab may read (mode, figure format, the tab bar) and the tabs' redraws.

    Each tab's builder registers how to redraw its views (:attr:`refresh`) and which of its dropdowns list
    metrics (:attr:`metric_pickers`), so that events which change the loaded scores (an upload, a live
    score, the mode) can redraw every tab without knowing its components. Callbacks find their session's
    :class:`~ts2viz.ui.state.app_state.AppView` with :meth:`view`.

    Parameters
    ----------
    app : AppState
        The app.
    mode : gradio.Radio
        The mode switch.
    fmt : gradio.Radio
        The figure-format switch.
    workspaces : Workspaces or None, default None
        The sessions' private data (made if ``None``).
    tabs : gradio.Tabs or None, default None
        The tab bar.
    variant : gradio.Radio or None, default None
        The control choosing the shared data's version (:meth:`AppState.variant`), if any.
    seg : gradio.Dropdown or None, default None
        The explorer's SEG picker: the current SEG for every tab.
    search : gradio.Textbox or None, default None
        The explorer's prompt search (cleared when a SEG is opened from a table).
    refresh : dict of str to Refresh, default {}
        How to redraw each part, by name.
    metric_pickers : list, default []
        Dropdowns listing metrics.
    family_pickers : list, default []
        Dropdowns listing metric families.
    download_slots : list, default []
        The hidden file components of the download buttons (rendered by the layout).
    linkable : dict, default {}
        The components a shared link sets, by link key (:mod:`ts2viz.ui.page.share`).
    link_node : Refresh or None, default None
        Shows a link's node once its SEG is drawn (inputs after the link's state).
    link_gold : Refresh or None, default None
        Draws a link's rated set's views (inputs after the link's state).
    """

    app: AppState
    mode: Any
    fmt: Any
    workspaces: Workspaces | None = None
    tabs: Any = None
    variant: Any = None       # the control choosing the shared data's version (AppState.variant), if any
    seg: Any = None           # the explorer's SEG picker: the current SEG for every tab
    search: Any = None        # the explorer's prompt search (cleared when a SEG is opened from a table)
    refresh: dict[str, Refresh] = field(default_factory=dict)
    metric_pickers: list = field(default_factory=list)
    family_pickers: list = field(default_factory=list)
    download_slots: list = field(default_factory=list)
    linkable: dict = field(default_factory=dict)
    link_node: Refresh | None = None
    link_gold: Refresh | None = None

    def __post_init__(self) -> None:
        """Make the workspaces if none were given, the view gate and the error store."""
        if self.workspaces is None:
            self.workspaces = Workspaces(self.app)
        self.view_gate = threading.Semaphore(VIEW_CONCURRENCY)
        self.last_errors = LastErrors()

    @property
    def public(self) -> bool:
        """Whether the app is in public mode."""
        return self.app.access.public

    def view(self, request: gr.Request | None, *, create: bool = False) -> AppView:
        """The app as the request's session sees it (the variant its page picked).

        Parameters
        ----------
        request : gradio.Request or None
            The event's request.
        create : bool, default False
            Make the session's workspace if it has none (events that add data or write a download).

        Returns
        -------
        AppView
            The view.

        Raises
        ------
        InputError
            When a new workspace has no room.
        """
        sid = getattr(request, "session_hash", None) if request is not None else None
        view = self.workspaces.view(sid, create=create, client=client_of(request))
        choice = _VARIANT.get()
        if choice:
            view = AppView(self.app.variant(choice), view.workspace)
        return view

    def on(self, trigger, fn: Callable, inputs, outputs, *, model: bool = False, lane: str | None = None,
           errors_to=None, **kw):
        """Wire an event; failures become messages.

        A view event (the default) runs in the view group of Gradio's queue, :data:`VIEW_CONCURRENCY` at a
        time, never behind a model call; ``queue=False`` answers a trivial one on its own request (a third of a
        queued call's overhead), at most :data:`VIEW_CONCURRENCY` at a time too. A ``model`` event (live
        scoring) goes through the queue, :data:`MODEL_CONCURRENCY` at a time, and the visitor sees their place
        in it. With a variant control (:attr:`variant`) every event also reads its value, and the callback's
        :meth:`view` shows that version of the shared data. A failed call keeps no workspace it made.

        Parameters
        ----------
        trigger : callable
            The event listener (``button.click``, ``dropdown.change``, ``dep.then``, ...).
        fn : callable
            The callback.
        inputs : component or list
            Its input components.
        outputs : component or list
            Its output components.
        model : bool, default False
            A model call (``lane="model"``).
        lane : str or None, default None
            Heavy work in a queue group of its own (:mod:`ts2viz.ui.serving.jobs`), one at a time, run as a job
            (cancel flag, the lane's lock; one per visitor in the lanes that say so); ``fn`` must take the
            ``gr.Request``.
        errors_to : gradio.Markdown or None, default None
            Also shows a failure's message, and keeps it there (a toast goes after a few seconds); ``fn`` must
            take the ``gr.Request``. The event's progress (and Gradio's "Error" pill) shows there only, not
            on its other outputs, which a failure leaves as they were (issue 40 item 11).
        **kw
            Gradio's event options.

        Returns
        -------
        gradio.events.Dependency
            The event's dependency.
        """
        gate = None
        if model:
            lane = MODEL_GROUP
        if self.variant is not None:
            inputs = [self.variant] + ([] if inputs is None else list(inputs) if isinstance(inputs, (list, tuple, set))
                                       else [inputs])
            fn = with_variant(fn)
        if lane is not None:
            kw.update(queue=True, concurrency_id=lane, concurrency_limit=MODEL_CONCURRENCY)
            fn = self.workspaces.jobs.guarded(fn, lane)
        else:
            kw.setdefault("queue", VIEW_QUEUED)
            if kw["queue"]:
                kw.setdefault("concurrency_id", VIEW_GROUP)
                kw.setdefault("concurrency_limit", VIEW_CONCURRENCY)
            else:
                gate = self.view_gate
        last_errors = self.last_errors if errors_to is not None else None
        if errors_to is not None:
            kw.setdefault("show_progress_on", errors_to)

        def on_error(text: str, request) -> None:
            # a failed call keeps no workspace it made (room is not free to take)
            self.workspaces.discard_if_empty(getattr(request, "session_hash", None))
            if last_errors is not None:
                last_errors.put(text, request)

        dep = trigger(safe(fn, self.public, gate, on_error), inputs, outputs, **kw)
        if errors_to is not None:
            def show_error(request: gr.Request):
                text = self.last_errors.pop(request)
                return gr.skip() if text is None else f"**✗ Error:** {markdown_text(text)}"

            dep.failure(show_error, None, errors_to, queue=False, show_progress="hidden")
        return dep

    def open_seg_from_table(self, table) -> None:
        """Clicking a row of a table (first column: SEG id) opens that SEG in the explorer.

        The clicked cell is not left selected (Gradio's Dataframe would keep it outlined, as if waiting for
        an edit). On a phone the page then scrolls to the SEG's header.

        Parameters
        ----------
        table : gradio.Dataframe
            The table.
        """
        app = self.app

        def open_row(tbl, query, evt: Selection):
            sid = cb_seg_from_row(tbl, evt.index[0])
            if sid is None:
                return gr.skip(), gr.skip(), gr.skip()
            # the search is cleared only if it holds something (a needless change event would filter again)
            return dropdown(cb_seg_options(app), sid), gr.Tabs(selected="seg"), "" if query else gr.skip()

        dep = self.on(table.select, open_row, [table, self.search], [self.seg, self.tabs, self.search])
        # in the browser, at once: the clicked cell is not left selected, as if waiting for an edit
        table.select(None, None, None, js=CLEAR_TABLE_SELECTION_JS, queue=False, show_progress="hidden")
        # on a phone the explorer's sidebar comes first, a screen or two tall: show the SEG itself
        dep.success(None, None, None, js=SHOW_SEG_ON_PHONE_JS)

    def track_open(self, name: str, opened, closed) -> None:
        """Let the page know whether a panel (a tab) is open, with no server call.

        Its ``select`` events set a flag in the browser that :meth:`while_open` reads. Starts closed, like a
        fresh page.

        Parameters
        ----------
        name : str
            The panel's name.
        opened : gradio.Tab
            The tab whose selection opens it.
        closed : sequence of gradio.Tab
            The tabs whose selection hides it.
        """
        for tab, value in [(opened, "true")] + [(t, "false") for t in closed]:
            tab.select(None, None, None, js=OPEN_FLAG_JS % (orjson.dumps(name).decode(), value),
                       queue=False, show_progress="hidden")

    def while_open(self, name: str, triggers, fn: Callable, inputs, outputs, *, elem_id: str, **kw):
        """A callback after any of some triggers, but only while a panel is open (:meth:`track_open`).

        The page decides, not the server: each trigger runs a line of script in the browser that, while the
        panel is open, clicks a hidden button whose click is the server event. A view change with the panel
        closed (most of them) then costs no call at all, where a server-side check would cost a call that
        answers "skip" for every output, each of which Gradio turns into a new component. Call inside the
        panel's layout (the button is rendered there).

        Parameters
        ----------
        name : str
            The panel's name.
        triggers : sequence of callable
            Event listeners.
        fn : callable
            The callback.
        inputs : component or list
            Its inputs.
        outputs : component or list
            Its outputs.
        elem_id : str
            The hidden button's element id.
        **kw
            Options for :meth:`on`.

        Returns
        -------
        gradio.events.Dependency
            The click's dependency.
        """
        button = gr.Button(visible="hidden", elem_id=elem_id, elem_classes="follow-trigger")
        js = CLICK_IF_OPEN_JS % (orjson.dumps(name).decode(), orjson.dumps(elem_id).decode())
        for trigger in triggers:
            trigger(None, None, None, js=js, queue=False, show_progress="hidden")
        kw.setdefault("trigger_mode", "always_last")
        kw.setdefault("show_progress", "hidden")
        return self.on(button.click, fn, inputs, outputs, **kw)

    def then_redraw(self, dep, names):
        """Chain redraws after an event.

        Parameters
        ----------
        dep : gradio.events.Dependency
            The event.
        names : sequence of str
            Names of :attr:`refresh`, in order.

        Returns
        -------
        gradio.events.Dependency
            The last dependency.
        """
        for name in names:
            r = self.refresh[name]
            dep = self.on(dep.then, r.fn, r.inputs, r.outputs)
        return dep

    def download(self, button, fn: Callable, inputs, **kw) -> None:
        """A download button: a click makes the file on the server, then the browser saves it.

        Nothing is written before a visitor asks.

        Parameters
        ----------
        button : gradio.Button
            The button.
        fn : callable
            ``fn(*inputs, request) -> path``, which makes the file in the session's own folder
            (``self.view(request, create=True)``).
        inputs : component or list
            Its inputs.
        **kw
            Options for :meth:`on` (e.g. ``lane`` for a large export).
        """
        out = gr.File(visible="hidden", elem_classes="download-slot", interactive=False, render=False)
        self.download_slots.append(out)          # rendered by the layout, outside the tabs
        kw.setdefault("show_progress", "hidden")
        self.on(button.click, fn, inputs, out, **kw).success(None, out, None, js=DOWNLOAD_JS)
