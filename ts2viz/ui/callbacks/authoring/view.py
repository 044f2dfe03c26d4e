"""What the Authoring tab shows: the drafts to pick, the problems, the graph, the gallery and the nodes table."""
from __future__ import annotations

import html
from pathlib import Path

from ....authoring import (DraftImage, SegDraft, draft_problems, draft_warnings, drafts_problems,
                          preview_seg)
from ....display import plural
from ...state.authoring_session import Drafts, caps_for, drafts_of
from .drafts import DATASET_KEY, THUMB_PX
from .images import thumb_of


def image_file(app, d: Drafts, im: DraftImage, *, fetch: bool = True) -> Path | None:
    """The local file of a draft image.

    The session's copy, an operator's file, or a dataset's (the loaded one's, an imported one's),
    downloaded from its hub repo if ``fetch`` (else only a copy already here).

    Parameters
    ----------
    app : AppView
        The session's view.
    d : Drafts
        The session's drafts.
    im : ts2viz.authoring.DraftImage
        The image.
    fetch : bool, default True
        Download a hub dataset's image that is not here yet.

    Returns
    -------
    pathlib.Path or None
        The file; ``None`` when there is none (here, or at all).
    """
    from ....dataset import cached_image, fetch_image

    if im.key in d.files:
        return d.files[im.key]
    if im.key.startswith(DATASET_KEY):
        ds, fn = app.dataset, im.key[len(DATASET_KEY):]
    elif im.key in d.remote:
        ds, fn = d.remote[im.key]
    else:
        return None
    if not ds.has_image(fn):
        return None
    return fetch_image(ds, fn) if fetch else (ds.image_path(fn) or cached_image(ds, fn))


def _thumb_uri(app, d: Drafts, im: DraftImage) -> str | None:
    """A draft image's thumbnail.

    Images a session added have theirs from their check (made once, in the call that added them); a public
    app never decodes an image while drawing the tab. The operator's own images (a folder, an imported
    dataset folder) are decoded once here, and an image that cannot be made into one is remembered as such
    (not decoded again on every edit).
    """
    if im.key.startswith(DATASET_KEY):
        return app.thumbs.data_uri(im.key[len(DATASET_KEY):], placeholder=False)
    cache = d.thumbs
    if im.key in cache:
        return cache[im.key]
    if app.access.public:
        return None
    p = image_file(app, d, im, fetch=False)      # a thumbnail never waits on the network
    if p is None:
        return None
    uri = None
    try:
        from PIL import Image

        with Image.open(p) as pic:
            if pic.size[0] * pic.size[1] <= caps_for(app).max_pixels:
                pic.draft("RGB", (THUMB_PX, THUMB_PX))
                pic.seek(0)
                uri = thumb_of(pic)
    except Exception:  # noqa: BLE001 - a thumbnail that cannot be made is a placeholder tile
        uri = None
    cache[im.key] = uri                          # a failure is remembered too
    return uri


def draft_choices(app) -> list[tuple[str, str]]:
    """The session's SEGs as (shown, value) pairs for the SEG picker.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of (str, str)
        ``("SEG id: prompt", position)`` pairs.
    """
    d = drafts_of(app)
    if d is None:
        return []
    return [(f"SEG {x.seg_id}: {x.prompt[:50]}", str(i)) for i, x in enumerate(d.drafts)]


def problems_md(problems, warnings=()) -> str:
    """The problems (what stops an export), then the warnings (what loads but may not be meant), as Markdown.

    Parameters
    ----------
    problems : sequence of DraftProblem
        The SEG's problems (:func:`ts2viz.authoring.draft_problems`; the first 60 listed).
    warnings : sequence of DraftProblem, default ()
        Its warnings (:func:`ts2viz.authoring.draft_warnings`).

    Returns
    -------
    str
        The Markdown (messages escaped).
    """
    warn = "".join(f"\n- ⚠ {md_line(w.message)}" for w in warnings)
    if not problems:
        return "✓ **No problems**: this SEG would load as it is." + (f"\n\nWorth a look:{warn}" if warn else "")
    items = "\n".join(f"- {md_line(p.message)}" for p in problems[:60])
    more = f"\n- … and {len(problems) - 60} more" if len(problems) > 60 else ""
    return (f"**{plural(len(problems), 'problem')}** (each as the dataset loader reports it):\n{items}{more}"
            + (f"\n\nWorth a look:{warn}" if warn else ""))


def md_line(text: str) -> str:
    """A message as one line of plain text in Markdown (whitespace folded, nothing in it formatted).

    Parameters
    ----------
    text : str
        The message.

    Returns
    -------
    str
        The escaped Markdown.
    """
    from ....display import md_text

    return md_text(" ".join(str(text).split()))


def draft_graph_html(app, d: Drafts, draft: SegDraft, means=None, metric=None, lower=False, walk=None,
                     walk_name="") -> str:
    """The graph of a draft's sound part (drawn while the rest still has problems), its images as thumbnails.

    Parameters
    ----------
    app : AppView
        The session's view.
    d : Drafts
        The session's drafts.
    draft : ts2viz.authoring.SegDraft
        The draft.
    means : dict or None, default None
        Node means of a metric, by node label (the nodes' colours).
    metric : str or None, default None
        That metric's name.
    lower : bool, default False
        Whether lower scores of that metric are better.
    walk : sequence of str or None, default None
        A walk to draw over the graph.
    walk_name : str, default ""
        Its name.

    Returns
    -------
    str
        The HTML (:func:`ts2viz.ui.views.graph.seg_graph_html`); a note when the draft has no node 0 yet.
    """
    from ...views.graph import seg_graph_html

    # the sound part of the draft, drawn while the rest still has problems (listed beside it)
    seg = preview_seg(draft)
    if seg is None:
        return '<div class="authoring-empty">The graph is drawn from the error-0 node on: add node 0 and its images.</div>'
    
    by_name = {im.file_name: im for im in draft.images}
    return seg_graph_html(seg, node_means=means or {}, metric=metric, lower_is_better=lower,
                          thumb_uri=lambda fn: _thumb_uri(app, d, by_name[fn]) if fn in by_name else None,
                          walk=walk, walk_name=walk_name)


def authoring_state(app) -> dict:
    """What the tab shows of the SEG being edited (after every action, and when the tab is drawn).

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    dict
        ``drafts`` (picker choices), ``current`` (its value or ``None``), ``header`` (prompt, seg_id,
        partition), ``labels`` (node labels by level), ``images`` ((shown, key) pairs for the selection),
        ``gallery`` ((thumbnail data URI or ``None``, caption) pairs), ``nodes`` (rows: node, errors,
        images), ``edges`` (list of pairs), ``follow`` (edges follow error counts), ``problems``
        (messages), ``warnings`` (what loads but may not be meant), ``problems_md``, ``graph`` (HTML: the
        sound part of the draft while it has problems).
    """
    d = drafts_of(app)
    draft = d.draft if d is not None else None
    out = {"drafts": draft_choices(app), "current": None, "header": ("", None, "Custom"), "labels": [],
           "images": [], "gallery": [], "nodes": [], "edges": [], "follow": True, "problems": [], "warnings": [],
           "problems_md": "*Start a SEG: a prompt and images, or a SEG of the dataset to vary.*",
           "graph": '<div class="authoring-empty">No SEG yet.</div>'}
    if draft is None:
        return out
    probs, warns = draft_problems(draft), draft_warnings(draft)
    labels = list(draft.sorted_labels())
    out.update(
        current=str(d.current), header=(draft.prompt, draft.seg_id, draft.partition), labels=labels,
        images=[(f"{im.file_name} [{im.node if im.node is not None else 'no node'}]", im.key) for im in draft.images],
        gallery=[(_thumb_uri(app, d, im), f"{im.file_name} · {im.node if im.node is not None else 'no node'}")
                 for im in draft.images],
        nodes=[{"node": lbl, "errors": "; ".join(draft.node(lbl).errors),
                "images": len(draft.images_of(lbl))} for lbl in labels],
        edges=list(draft.effective_edges), follow=draft.edges is None,
        problems=[p.message for p in probs], warnings=[w.message for w in warns],
        problems_md=problems_md(probs, warns), graph=draft_graph_html(app, d, draft))
    return out


def gallery_html(state: dict) -> str:
    """The SEG's images as a grid of captioned thumbnails (what the selection boxes name).

    Parameters
    ----------
    state : dict
        What :func:`authoring_state` returns.

    Returns
    -------
    str
        The HTML (captions escaped).
    """
    if not state["gallery"]:
        return '<div class="authoring-empty">No images yet.</div>'
    cells = []
    for uri, cap in state["gallery"]:
        img = (f'<img src="{html.escape(uri, quote=True)}" alt=""/>' if uri
               else '<span class="ph">no preview</span>')
        cells.append(f'<figure>{img}<figcaption>{html.escape(cap)}</figcaption></figure>')
    return f'<div class="authoring-gallery">{"".join(cells)}</div>'


def nodes_table(state: dict):
    """The SEG's nodes as the tab's table.

    Parameters
    ----------
    state : dict
        What :func:`authoring_state` returns.

    Returns
    -------
    pandas.DataFrame
        ``node``, ``errors``, ``images``.
    """
    import pandas as pd

    return pd.DataFrame(state["nodes"], columns=["node", "errors", "images"])


def all_problems_md(app) -> str:
    """The problems of the session's SEGs together, as one dataset (what an export checks), in one line.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    str
        Markdown; empty when the session has no SEG.
    """
    d = drafts_of(app)
    if d is None or not d.drafts:
        return ""
    probs = drafts_problems(d.drafts)
    return ("✓ All SEGs of this session export together." if not probs
            else f"{plural(len(probs), 'problem')} before export: " + "; ".join(md_line(p.message) for p in probs[:5])
            + (" …" if len(probs) > 5 else ""))
