"""Shared views: a link that opens the app on the same tab, SEG, metrics, node and rated set (issue 40 item 19).

A link is the page's address with query parameters (:data:`LINK_KEYS`): ``?tab=seg&seg=12&metric=CLIPScore
&node=1b`` or ``?tab=gold&gold=imagenhub-t2i&ratings=sc&task=pair-wise``. It carries names of what every
visitor is offered (the tabs, the dataset's SEG ids and node labels, the shared metrics, the bundled and the
operator's rated sets), never a visitor's data: a session's uploaded or live metrics are not offered to the
next visitor, so a link naming one opens without it. Every parameter is checked against the offered choices
when the page loads (:func:`read_link`); anything else is left out, with no message.

The explorer and the Human ratings tab each have a "copy link" control (:func:`link_query`, then the page
prepends its own address and copies the link).
"""
from __future__ import annotations

from typing import Mapping
from urllib.parse import urlencode

import gradio as gr  # this module is imported only when the app is built

#: the query parameters of a link, in the order a link writes them
LINK_KEYS = ("tab", "seg", "metric", "compare", "node", "gold", "ratings", "task", "gold_metric")
#: the top-level tabs a link may open (their ids)
LINK_TABS = ("board", "seg", "corr", "live", "author", "gold")
#: the longest parameter value read (a longer one is no offered name)
MAX_VALUE_CHARS = 300

#: builds the link in the page: the server's query string after the page's own address, copied when the
#: browser allows it (the link is shown either way)
COPY_LINK_JS = """(q) => {
  if (!q) return q;
  const u = window.location.origin + window.location.pathname + q;
  try { if (navigator.clipboard) navigator.clipboard.writeText(u).catch(() => {}); } catch (e) {}
  return u;
}"""


def read_link(params: Mapping, view) -> dict:
    """A link's parameters that name things the page offers; the others left out.

    Parameters
    ----------
    params : mapping of str to str
        The query parameters of the page's address.
    view : ts2viz.ui.state.app_state.AppView
        The view of a page without a session's own data (the shared metrics only).

    Returns
    -------
    dict
        Some of :data:`LINK_KEYS`: ``tab`` (str), ``seg`` (int), ``metric`` and ``compare`` (shared
        metrics), ``node`` (a node label of ``seg``), ``gold`` (a rated set the tab offers), ``ratings`` (one
        of its rating sets), ``task``, ``gold_metric`` (a metric of the set's scatter).

    Examples
    --------
    >>> from ts2viz.ui import load_state
    >>> view = load_state("ts2", fetch_images=False).view()
    >>> read_link({"tab": "seg", "seg": "3", "node": "0", "metric": "nope", "x": "1"}, view)
    {'tab': 'seg', 'seg': 3, 'node': '0'}
    >>> read_link({"tab": "../../etc", "seg": "-1", "gold": "imagenhub-t2i", "ratings": "dsg"}, view)
    {'gold': 'imagenhub-t2i'}
    """
    from ..callbacks.humaneval import sets as gc_sets
    from ..callbacks.common import metric_choices

    p = {k: v for k, v in params.items()
         if k in LINK_KEYS and isinstance(v, str) and 0 < len(v) <= MAX_VALUE_CHARS}
    out: dict = {}
    if p.get("tab") in LINK_TABS:
        out["tab"] = p["tab"]
    seg = p.get("seg", "")
    if seg.isdigit() and int(seg) in view.dataset.segs:
        out["seg"] = int(seg)
    metrics = metric_choices(view)
    for key in ("metric", "compare"):
        if p.get(key) in metrics:
            out[key] = p[key]
    if "seg" in out and p.get("node") in [n.label for n in view.dataset[out["seg"]].nodes]:
        out["node"] = p["node"]
    if p.get("gold") in gc_sets.gold_sets():
        gold = out["gold"] = p["gold"]
        if p.get("ratings") in gc_sets.rating_sets(gold):
            out["ratings"] = p["ratings"]
        rs = out.get("ratings", gc_sets.rated(gold).default_rating_set)
        if p.get("gold_metric") in gc_sets.metrics_of(gold, rs):
            out["gold_metric"] = p["gold_metric"]
    if p.get("task") in gc_sets.TASKS:
        out["task"] = p["task"]
    return {k: out[k] for k in LINK_KEYS if k in out}


def link_query(state: Mapping) -> str:
    """The query string of a link to a view.

    Parameters
    ----------
    state : mapping
        Some of :data:`LINK_KEYS` and their values (``None`` and empty values left out).

    Returns
    -------
    str
        ``?key=value&...`` in the order of :data:`LINK_KEYS` (URL-encoded).

    Examples
    --------
    >>> link_query({"seg": 12, "tab": "seg", "metric": "dsg:PaLI-17B", "node": None})
    '?tab=seg&seg=12&metric=dsg%3APaLI-17B'
    """
    items = [(k, str(state[k])) for k in LINK_KEYS if state.get(k) not in (None, "")]
    return "?" + urlencode(items)


def wire(demo, page) -> None:
    """Open the view a link names when a page loads; wire the tabs' "copy link" controls' page side.

    The link is read once per page load (:func:`read_link`, against the shared view: no session's data) and
    kept in the page's state; its tab, SEG, metrics and rated set are set at once (their own change events
    redraw the views), then the node (:attr:`Page.link_node`) and the Human ratings views
    (:attr:`Page.link_gold`), which need the SEG's and the set's views first.

    Parameters
    ----------
    demo : gradio.Blocks
        The page (inside its ``with`` block).
    page : ts2viz.ui.glue.events.Page
        The page, its :attr:`~ts2viz.ui.glue.events.Page.linkable` components registered by the tabs.
    """
    from ..callbacks.humaneval import sets as gc_sets
    from ..callbacks.explorer.picking import seg_options

    comps = page.linkable
    keys = [k for k in ("seg", "metric", "compare", "gold", "ratings", "task", "gold_metric") if k in comps]
    state = gr.State(None)

    def open_link(request: gr.Request):
        params = getattr(request, "query_params", None) or {}
        link = read_link(dict(params), page.view(None)) if params else {}
        if not link:
            return (None, gr.skip(), *(gr.skip() for _ in keys))
        gold = link.get("gold")
        rs = link.get("ratings") or (gc_sets.rated(gold).default_rating_set if gold else None)
        values = {"seg": lambda: gr.update(choices=seg_options(page.app), value=link["seg"]),
                  "metric": lambda: gr.update(value=link["metric"]),
                  "compare": lambda: gr.update(value=link["compare"]),
                  "gold": lambda: gr.update(value=gold),
                  "ratings": lambda: gr.update(choices=gc_sets.rating_sets(gold), value=rs),
                  "task": lambda: gr.update(value=link["task"]),
                  "gold_metric": lambda: gr.update(choices=gc_sets.metrics_of(gold, rs), value=link["gold_metric"])}
        tab = gr.Tabs(selected=link["tab"]) if "tab" in link else gr.skip()
        return (link, tab, *(values[k]() if k in link or (k == "ratings" and gold) else gr.skip() for k in keys))

    dep = page.on(demo.load, open_link, None, [state, page.tabs, *(comps[k] for k in keys)], show_progress="hidden")
    for r in (page.link_node, page.link_gold):
        if r is not None:
            page.on(dep.then, r.fn, [state, *r.inputs], r.outputs, show_progress="hidden")


def copy_link(page, button, box, tab: str, parts: Mapping) -> None:
    """A "copy link" control: a click shows (and copies) the link to the view of some components.

    The link names only what :func:`read_link` would read back on a page without the session's data:
    a visitor's own metric or set is left out of it.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page.
    button : gradio.Button
        The control.
    box : gradio.Textbox
        Where the link is shown.
    tab : str
        The tab the link opens (one of :data:`LINK_TABS`).
    parts : mapping of str to component
        The components the view is made of, by link key.
    """
    keys = list(parts)

    def make_link(*values):
        *values, request = values
        offered = read_link({"tab": tab, **{k: str(v) for k, v in zip(keys, values) if v not in (None, "")}},
                            page.view(None))
        return link_query(offered)

    import inspect

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    make_link.__signature__ = inspect.Signature(
        [inspect.Parameter(f"v{i}", kind) for i in range(len(keys))]
        + [inspect.Parameter("request", kind, annotation=gr.Request)])
    make_link.__annotations__ = {"request": gr.Request}
    make_link.__name__ = f"{tab}_link"
    dep = page.on(button.click, make_link, [parts[k] for k in keys], box, show_progress="hidden")
    dep.success(None, box, box, js=COPY_LINK_JS)
