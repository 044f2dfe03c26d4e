"""The page the tabs wire their events on (:class:`Page`): each event's session view, its queue, its errors.

Each event finds its session's view of the app through :meth:`Page.view` (the request's session id).
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import gradio as gr
import orjson

from ...display import md_text
from ..callbacks.explorer.picking import seg_from_row as cb_seg_from_row
from ..callbacks.explorer.picking import seg_options as cb_seg_options
from ..state.app_state import AppState, AppView
from ..serving import priority
from ..state.sessions import Workspaces
from .errors import LastErrors, Selection, safe
from .scripts import CLEAR_TABLE_SELECTION_JS, CLICK_IF_OPEN_JS, DOWNLOAD_JS, OPEN_FLAG_JS, SHOW_SEG_ON_PHONE_JS
from .tables import dropdown

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


#: whether view events go through Gradio's queue (first come, first served; env TS2VIZ_VIEW_QUEUE=0 answers
#: them on their own requests instead: less overhead, but no order among waiting requests)
VIEW_QUEUED = os.environ.get("TS2VIZ_VIEW_QUEUE", "1") not in ("", "0", "false", "False")
#: view events that may run at the same time, queued ones and others each (env TS2VIZ_VIEW_CONCURRENCY).
#: Views are CPU work in Python, which runs one thread at a time: more at once only adds thread
#: switching (50 clients x 10 view changes: 16.5 ms of server CPU per call at 1, 19 ms at 4). Nothing
#: in a view waits on the network (thumbnails are fetched in the background).
VIEW_CONCURRENCY = int(os.environ.get("TS2VIZ_VIEW_CONCURRENCY") or 1)

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
        The components a shared link sets, by link key (:mod:`ts2viz.ui.glue.share`).
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
        scoring) goes through the queue, :meth:`~ts2viz.ui.serving.jobs.Jobs.width` at a time (jobs taking
        turns on the model: :mod:`ts2viz.ui.serving.turns`), and the visitor sees their place in it. With a variant control (:attr:`variant`) every event also reads its value, and the callback's
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
            kw.update(queue=True, concurrency_id=lane, concurrency_limit=self.workspaces.jobs.width(lane))
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

        # a visitor's call: the background warm-up waits at its pause points while it runs (serving.priority)
        dep = trigger(priority.visitor(safe(fn, self.public, gate, on_error)), inputs, outputs, **kw)
        if errors_to is not None:
            def show_error(request: gr.Request):
                text = self.last_errors.pop(request)
                return gr.skip() if text is None else f"**✗ Error:** {md_text(text)}"

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
