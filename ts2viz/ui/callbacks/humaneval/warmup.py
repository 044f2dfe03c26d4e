"""The tab's shared views computed ahead of the first visitor."""
from __future__ import annotations

from ...serving.priority import background, pause_point
from .board import board
from .crossgold import cross_long
from .sets import TASKS, gold_sets, rated, rating_sets


def warm(names=None) -> None:
    """Compute the tab's shared views ahead of the first visitor (the app starts it in the background).

    The first view a visitor sees first (the first set's default rating set, point-wise, the cross-gold ranks and
    the slices section's default heatmap, :func:`default_slices`), then every rating set and task of every set: each click of the tab then finds its view computed (issue 40 item
    15: the tab's first open took 13.5 s, imagenhub-t2i 9.7 s). A click on a view still being computed waits for
    that computation (:func:`~ts2viz.ui.callbacks.humaneval.sets.shared_once`), never repeats it. It is background
    work (:func:`ts2viz.ui.serving.priority.background`): it yields to every visitor's call, up to 30 s in all.

    Parameters
    ----------
    names : sequence of str or None, default None
        The rated sets (``None``: every set the tab offers).
    """
    names = list(gold_sets() if names is None else names)
    if not names:
        return
    with background():
        first = rated(names[0]).default_rating_set
        board(names[0], first, TASKS[0])
        cross_long()
        default_slices(names[0])
        for name in names:
            for rs in rating_sets(name):
                for task in TASKS:
                    pause_point()
                    board(name, rs, task)


def default_slices(name: str) -> None:
    """The slices the section's heatmap first shows for a set: its first tag family, all prompts.

    Parameters
    ----------
    name : str
        The rated set's name (nothing for a set without shared metric scores).
    """
    from .. import humaneval_slices as hs

    g = rated(name)
    if g.metrics:
        hs.slice_eval(name, g.default_rating_set, hs.families(name)[0], False)
