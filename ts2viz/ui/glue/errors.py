"""A failed callback as a readable message, the app still running; a select event without its selection refused."""
from __future__ import annotations

import functools
import logging
import re
import threading
import traceback
from typing import Any, Callable

import gradio as gr

from ...errors import InputError

log = logging.getLogger("ts2viz.ui")

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
