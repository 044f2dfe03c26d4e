"""A draft's nodes (label and error descriptions) and edges."""
from __future__ import annotations

from ....errors import InputError
from .drafts import current_draft, keep_draft


#: labels a node may take (what the loader's parse_label accepts starts with digits)
NODE_LABEL_MAX = 16


ERRORS_MAX = 300


def _label(label) -> str:
    lbl = str(label or "").strip()
    if not lbl:
        raise InputError("enter a node label: its error count and a letter, e.g. 0, 1a, 2b")
    if len(lbl) > NODE_LABEL_MAX:
        raise InputError(f"a node label has at most {NODE_LABEL_MAX} characters")
    return lbl


def _existing(draft, lbl: str, hint: str = "") -> str:
    """``lbl`` if the draft has a node with that label (else an InputError, ``hint`` after its message)."""
    if not draft.has_node(lbl):
        raise InputError(f"no node {lbl!r} in this SEG{hint}")
    return lbl


def save_node(app, label, errors="") -> str:
    """Add a node, or set the error descriptions of an existing one.

    The tab's "Add node / set its errors" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    label : str
        The node label (``0``, ``1a``, ...; at most :data:`NODE_LABEL_MAX` characters).
    errors : str, default ""
        Its error descriptions, several separated by ``;`` (at most :data:`ERRORS_MAX` characters).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for an empty or overlong label or errors, or a SEG the new node would make too
        large.
    """
    d, draft = current_draft(app)
    lbl = _label(label)
    errs = str(errors or "")
    if len(errs) > ERRORS_MAX:
        raise InputError(f"error descriptions have at most {ERRORS_MAX} characters")
    if draft.has_node(lbl):
        d.set_draft(draft.set_node_errors(lbl, errs))
        return f"Node {lbl}: errors set."
    note = keep_draft(app, d, draft.add_node(lbl, errs))
    return f"Added node {lbl}." + note


def remove_node(app, label) -> str:
    """Remove a node; its images become unassigned.

    The tab's "Remove node" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    label : str
        The node label.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for a node the SEG does not have.
    """
    d, draft = current_draft(app)
    lbl = _existing(draft, _label(label))
    note = keep_draft(app, d, draft.remove_node(lbl))
    return f"Removed node {lbl}; its images are unassigned." + note


def rename_node(app, old, new) -> str:
    """Relabel a node; its images and edges follow it.

    Parameters
    ----------
    app : AppView
        The session's view.
    old : str
        The current label.
    new : str
        The new label.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a node the SEG does not have, or a bad label.
    """
    d, draft = current_draft(app)
    o, n = _label(old), _label(new)
    _existing(draft, o)
    note = keep_draft(app, d, draft.rename_node(o, n))
    return f"Node {o} is now {n}." + note


def set_edges_follow(app, follow: bool) -> str:
    """Make edges follow the error counts, or make them explicit.

    The tab's "Edges follow the error counts" checkbox: an action, after which the tab shows the session's SEGs
    again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    follow : bool
        Follow the error counts (as TS2 does without ``edges.csv``); else the current edges become
        explicit, to be drawn one by one.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for a SEG the change would make too large.
    """
    d, draft = current_draft(app)
    note = keep_draft(app, d, draft.follow_error_counts() if follow else draft.explicit_edges())
    return ("Edges follow the error counts." if follow else "Edges are explicit: add or remove them.") + note


def add_edge(app, parent, child) -> str:
    """Add an explicit edge between two nodes of the SEG.

    The tab's "Add edge" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    parent : str
        The parent node (fewer errors).
    child : str
        The child node.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a node the SEG does not have, or a SEG the edge would make too large.
    """
    d, draft = current_draft(app)
    a, b = _label(parent), _label(child)
    for lbl in (a, b):          # an edge between nodes of the SEG only (the loader's rule, checked as it comes)
        _existing(draft, lbl, "; add it first")
    note = keep_draft(app, d, draft.add_edge(a, b))
    return f"Edge {a} → {b} added." + note


def remove_edge(app, parent, child) -> str:
    """Remove an edge (the implied edges become explicit first).

    The tab's "Remove edge" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    parent : str
        The parent node.
    child : str
        The child node.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for an edge the SEG does not have.
    """
    d, draft = current_draft(app)
    a, b = _label(parent), _label(child)
    try:
        d.set_draft(draft.remove_edge(a, b))       # fewer edges: never more walks
    except KeyError:
        raise InputError(f"no edge {a} → {b} in this SEG") from None
    return f"Edge {a} → {b} removed."
