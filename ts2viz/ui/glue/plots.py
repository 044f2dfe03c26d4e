"""Figures as the page gets them: built as plain dicts, serialised as they are, wrapped as Gradio plot data."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import orjson

from ...figures import PlainFigure, plain_figures
from ..state.app_state import AppView


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
