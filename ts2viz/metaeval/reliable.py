"""Reliable prompts as the Gecko paper defines them: low inter-rater disagreement for every model and template.

Gecko (Wiles et al., Sec. 4, "Reliable prompts"): "For each model and absolute template, we select the
prompts for which inter-rater disagreement is < 50% of the maximum disagreement observed across all
prompts for that model-template pair. The intersection of these prompts across models and templates gives
our reliable prompts." Here:

- the *disagreement* of an image is the variance (``measure="variance"``, population variance, ddof 0: the
  paper's v2) or the standard deviation (``"std"``: the release's v1) of its ratings in one rating set
  (a *template*);
- for each (T2I model, rating set), a prompt passes when its image's disagreement is below
  ``threshold`` x the largest disagreement over the prompts of that pair (a pair where no image has any
  disagreement passes every prompt); an image with fewer than two ratings in a rating set has no
  disagreement there and does not constrain its prompt;
- a prompt is reliable when it passes for every (model, rating set) it has an image in.

Gecko2K releases its own flags (``max_disagreement_less_X`` for X in 0.3, 0.35, 0.4, 0.45, 0.5 with the
variance, ``v1_max_disagreement_less_0.45`` with the standard deviation); ``source="auto"`` uses them
when every prompt of the rated set is a Gecko2K prompt and the threshold and measure are released ones
(the paper also removed prompts whose Likert ratings were all *Unsure*, which the released flags
include and a computed selection cannot know).

Pure numpy/pandas.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError

MEASURES = ("variance", "std")
SOURCES = ("auto", "computed", "released")
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class ReliablePrompts:
    """The reliable prompts of a rated set.

    Attributes
    ----------
    prompt_ids : tuple
        The reliable prompts.
    image_mask : numpy.ndarray
        (images,) bool: the images of reliable prompts, in the rated set's order.
    n_prompts : int
        The set's prompts.
    threshold : float
        The fraction X of the largest disagreement.
    measure : str
        ``"variance"`` or ``"std"``.
    source : str
        ``"computed"`` (from the ratings) or ``"released"`` (Gecko2K's flags).
    rating_sets : tuple of str
        The rating sets (templates) intersected (empty for released flags).
    """

    prompt_ids: tuple
    image_mask: np.ndarray
    n_prompts: int
    threshold: float
    measure: str
    source: str
    rating_sets: tuple = ()

    def describe(self) -> str:
        """One line: how many prompts are reliable, and how they were chosen.

        Returns
        -------
        str
            The description.
        """
        how = ("Gecko2K's released flags" if self.source == "released" else
               f"{self.measure} of ratings < {self.threshold:g} x the largest, every model and rating set "
               f"({', '.join(self.rating_sets)})")
        return f"reliable prompts: {len(self.prompt_ids)} of {self.n_prompts} ({how})"


def image_disagreement(rated, rating_set: str | None = None, measure: str = "variance") -> np.ndarray:
    """Each image's inter-rater disagreement in one rating set.

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    rating_set : str, optional
        The rating set (default: the set's default).
    measure : {'variance', 'std'}, default 'variance'
        Population variance (ddof 0) or standard deviation of the image's ratings.

    Returns
    -------
    numpy.ndarray
        (images,) NaN for an image with fewer than two ratings.

    Raises
    ------
    InputError
        If the rating set or measure is unknown.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.reliable import image_disagreement
    >>> d = image_disagreement(load_gold("tifa160", answers=False), "tifa")
    >>> d[:3].tolist()
    [0.0, 0.0, 0.0]
    """
    if measure not in MEASURES:
        raise InputError(f"disagreement measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    m, _ = rated.rater_matrix(rating_set)
    n = (~np.isnan(m)).sum(1)
    with np.errstate(invalid="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v = np.nanvar(m, axis=1)
    v = np.where(n >= 2, v, np.nan)
    return np.sqrt(v) if measure == "std" else v


def _released(rated, threshold: float, measure: str):
    """Gecko2K's released flags for every prompt of the set, or None where they do not apply."""
    from ..gold.tags import gecko2k_match, gecko2k_prompts

    column = (f"max_disagreement_less_{threshold:g}" if measure == "variance"
              else f"v1_max_disagreement_less_{threshold:g}")
    _, _, rel = gecko2k_prompts()
    if column not in rel.columns:
        return None
    match = gecko2k_match(rated)
    pids = list(dict.fromkeys(rated.images["prompt_id"]))
    if not pids or any(p not in match for p in pids):
        return None
    flag = dict(zip(rel["prompt_id"], rel[column].astype(bool)))
    return {p for p in pids if flag[match[p]]}


def reliable_prompts(rated, threshold: float = DEFAULT_THRESHOLD, *, measure: str = "variance",
                     rating_sets: Sequence[str] | None = None, source: str = "auto") -> ReliablePrompts:
    """The prompts whose disagreement is below ``threshold`` of the largest, for every model and rating set.

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    threshold : float, default 0.5
        X, strictly between 0 and 1 (the paper: 0.5).
    measure : {'variance', 'std'}, default 'variance'
        The disagreement of an image (:func:`image_disagreement`).
    rating_sets : sequence of str, optional
        The rating sets (templates) to intersect over (default: every faithfulness rating set).
    source : {'auto', 'computed', 'released'}, default 'auto'
        Gecko2K's released flags where they apply (``auto``; ``released`` requires them), or always
        computed from the ratings.

    Returns
    -------
    ReliablePrompts
        The reliable prompts and their images.

    Raises
    ------
    InputError
        For a threshold outside (0, 1), an unknown measure, source or rating set, or ``source="released"``
        where Gecko2K's flags do not cover the set at that threshold and measure.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.reliable import reliable_prompts
    >>> rel = reliable_prompts(load_gold("tifa160", answers=False))
    >>> rel.describe()
    'reliable prompts: 114 of 160 (variance of ratings < 0.5 x the largest, every model and rating set (tifa, dsg))'
    """
    try:
        x = float(threshold)
    except (TypeError, ValueError):
        raise InputError(f"reliable threshold must be a number, not {threshold!r}") from None
    if not 0.0 < x < 1.0:
        raise InputError(f"reliable threshold must be strictly between 0 and 1, got {threshold!r}")
    if measure not in MEASURES:
        raise InputError(f"disagreement measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    if source not in SOURCES:
        raise InputError(f"reliable source must be one of {', '.join(SOURCES)}, not {source!r}")
    pids = rated.images["prompt_id"].to_numpy()
    order = list(dict.fromkeys(pids.tolist()))
    if source != "computed":
        keep = _released(rated, x, measure)
        if keep is not None:
            return ReliablePrompts(tuple(p for p in order if p in keep), np.isin(pids, list(keep)), len(order), x,
                                   measure, "released")
        if source == "released":
            raise InputError(f"Gecko2K's released reliability flags do not cover rated set {rated.name!r} at "
                             f"threshold {x:g} with the {measure} (released: variance at 0.3, 0.35, 0.4, 0.45, 0.5; "
                             "std at 0.45; every prompt must be a Gecko2K prompt)")
    skip = set(rated.meta.get("not_faithfulness", []))
    sets = [s for s in rated.rating_sets if s not in skip] if rating_sets is None else list(rating_sets)
    for s in sets:
        rated.check_rating_set(s)
    models = rated.images["t2i_model"].to_numpy()
    bad = np.zeros(len(rated), dtype=bool)
    for s in sets:
        d = image_disagreement(rated, s, measure)
        for m in np.unique(models):
            sel = (models == m) & ~np.isnan(d)
            if not sel.any():
                continue
            top = d[sel].max()
            if top > 0:
                bad |= sel & ~(d < x * top)
    unreliable = set(pids[bad].tolist())
    keep = [p for p in order if p not in unreliable]
    return ReliablePrompts(tuple(keep), ~np.isin(pids, list(unreliable)), len(order), x, measure, "computed",
                           tuple(sets))


def reliability_tags(rated, rel: ReliablePrompts, family: str = "reliable"):
    """The reliable prompts as a tag family: tags ``reliable`` and ``unreliable``.

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    rel : ReliablePrompts
        Its reliable prompts (:func:`reliable_prompts`).
    family : str, default "reliable"
        The family's name.

    Returns
    -------
    ts2viz.gold.tags.Tags
        One tag per prompt, so that :func:`ts2viz.metaeval.slices.evaluate_slices` shows what changes
        on the reliable subset.
    """
    import pandas as pd

    from ..gold.tags import TAG_COLUMNS, Tags

    keep = set(rel.prompt_ids)
    pids = list(dict.fromkeys(rated.images["prompt_id"].tolist()))
    rows = [("prompt", p, family, "reliable" if p in keep else "unreliable") for p in pids]
    return Tags(pd.DataFrame(rows, columns=list(TAG_COLUMNS)))
