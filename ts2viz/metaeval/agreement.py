"""Inter-annotator agreement: Krippendorff's alpha per rating set, T2I model and slice, with bootstrap intervals.

Gecko (Wiles et al., Sec. 4, Table 3) measures how well raters agree with Krippendorff's alpha (1 perfect
agreement, 0 chance), per template and T2I model. Here the units are images, the values an image's
ratings in one rating set (a rater id is not needed: alpha depends on how many raters gave each value to
each unit); alpha itself is the ``krippendorff`` package's (:func:`krippendorff.alpha`) at the level of
measurement asked (``interval``, ``ordinal``, ``nominal``; the value domain is the sorted ratings that
occur in the rating set).

Intervals: percentile bootstrap over **prompts** (every image of a drawn prompt joins as often as the
prompt is drawn), the resamples of :func:`ts2viz.metaeval.prompt_bootstrap.prompt_resamples` (seeded, the same
for every group), each resample's alpha the package's on the repeated units.

Pure numpy/pandas and ``krippendorff`` (numpy only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..display import plural
from ..errors import InputError
from ..statistics.bootstrap import BootstrapSettings, quantiles
from .prompt_bootstrap import prompt_resamples

LEVELS = ("interval", "ordinal", "nominal")
#: the agreement's bootstrap default: alpha is the package's, one call per resample, group and level (TIFA160,
#: two rating sets, 6 groups, 3 levels: about 10 s on a loaded 2-core machine)
AGREEMENT_RESAMPLES = 200


def _krippendorff():
    try:
        import krippendorff
    except ImportError:
        raise InputError("Krippendorff's alpha needs the krippendorff package (pip install krippendorff==0.9.0)") from None
    return krippendorff


def value_counts(ratings: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """How many raters gave each value of ``domain`` to each unit.

    Parameters
    ----------
    ratings : numpy.ndarray
        (units, raters), NaN where a rater did not rate a unit.
    domain : numpy.ndarray
        (V,) the sorted values.

    Returns
    -------
    numpy.ndarray
        (units, V) int counts.

    Raises
    ------
    InputError
        If a rating is not in ``domain``.
    """
    ok = ~np.isnan(ratings)
    codes = np.searchsorted(domain, np.where(ok, ratings, domain[0]))
    codes = np.clip(codes, 0, len(domain) - 1)
    if (domain[codes][ok] != ratings[ok]).any():
        raise InputError("a rating is not in the value domain")
    out = np.zeros((ratings.shape[0], len(domain)), dtype=np.int64)
    rows = np.broadcast_to(np.arange(ratings.shape[0])[:, None], ratings.shape)
    np.add.at(out, (rows[ok], codes[ok]), 1)
    return out


def alpha(counts: np.ndarray, domain: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha (the ``krippendorff`` package's) from value counts.

    Parameters
    ----------
    counts : numpy.ndarray
        (units, V) value counts (:func:`value_counts`).
    domain : numpy.ndarray
        (V,) the sorted values.
    level : {'interval', 'ordinal', 'nominal'}, default 'interval'
        The level of measurement.

    Returns
    -------
    float
        Alpha; NaN when fewer than two units have two or more ratings, or every pairable rating has one
        value (no expected disagreement).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metaeval.agreement import alpha, value_counts
    >>> r = np.array([[1, 1], [2, 2], [3, 2.0], [1, np.nan]])
    >>> domain = np.array([1.0, 2.0, 3.0])
    >>> round(alpha(value_counts(r, domain), domain, "interval"), 4)
    0.7059
    """
    pairable = counts.sum(1) >= 2
    c = counts[pairable]
    if c.shape[0] < 2 or (c.sum(0) > 0).sum() < 2:
        return float("nan")
    return float(_krippendorff().alpha(value_counts=c, value_domain=domain, level_of_measurement=level))


@dataclass(frozen=True, eq=False)     # holds a DataFrame: compared by identity
class Agreement:
    """Result of :func:`agreement`: one row per (rating set, group, level).

    Attributes
    ----------
    frame : pandas.DataFrame
        ``rating_set``, ``group_by`` (``all``, ``t2i-model`` or a tag family), ``group``, ``level``,
        ``n_images`` (units with two or more ratings), ``n_prompts``, ``n_ratings``, ``alpha``,
        ``alpha_lo``, ``alpha_hi``, ``note`` (why a value is missing or few units back it).
    bootstrap : BootstrapSettings or None
        The resampling settings.
    """

    frame: object
    bootstrap: BootstrapSettings | None


def _group_alpha(vc, domain, levels, pc, P, boot, sel) -> list:
    """Alpha and its interval per level on the images ``sel``."""
    out = []
    units = np.flatnonzero(sel)
    prompts = pc[units]
    for level in levels:
        a = alpha(vc[units], domain, level)
        lo = hi = float("nan")
        if boot is not None and not np.isnan(a):
            vals = np.full(boot.n_resamples, np.nan)
            for start, counts in prompt_resamples(P, boot):
                for r in range(counts.shape[0]):
                    w = counts[r, prompts].astype(np.int64)
                    vals[start + r] = alpha(np.repeat(vc[units], w, axis=0), domain, level)
            q = (1.0 - boot.confidence) / 2.0
            lo, hi = quantiles(vals[None, :], (q, 1.0 - q))[:, 0]
        out.append((level, a, float(lo), float(hi)))
    return out


def agreement(rated, rating_sets: Sequence[str] | None = None, *, levels: Sequence[str] = LEVELS,
              by: Sequence[str] = ("t2i-model",), tags=None,
              bootstrap: BootstrapSettings | None = BootstrapSettings(n_resamples=AGREEMENT_RESAMPLES)) -> Agreement:
    """Krippendorff's alpha of every rating set, overall, per T2I model and per slice of tag families.

    Parameters
    ----------
    rated : RatedSet
        The rated set (its per-rater ratings).
    rating_sets : sequence of str, optional
        The rating sets (default: all).
    levels : sequence of {'interval', 'ordinal', 'nominal'}, default all three
        Levels of measurement.
    by : sequence of str, default ('t2i-model',)
        Tag families to group by besides ``all`` (``t2i-model`` and any family of ``tags``).
    tags : ts2viz.gold.tags.Tags, optional
        The set's tags (default: :func:`ts2viz.gold.tags.rated_tags`).
    bootstrap : BootstrapSettings or None, default 200 resamples
        Resampling over prompts (one package call per resample, group and level), or None.

    Returns
    -------
    Agreement
        One row per (rating set, group, level).

    Raises
    ------
    InputError
        For an unknown rating set, level or tag family, a rating outside the set's ``scale`` (gold.json),
        or no ``krippendorff`` package.

    Notes
    -----
    A group with fewer than two images rated twice or more has alpha NaN and a note; one with fewer
    than 10 prompts says its interval rests on few prompts.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.agreement import agreement
    >>> res = agreement(load_gold("tifa160", answers=False), ["dsg"], levels=["interval"], by=[], bootstrap=None)
    >>> res.frame[["rating_set", "group", "level", "n_images", "alpha"]].round(3)
      rating_set group     level  n_images  alpha
    0        dsg   all  interval       800  0.684
    """
    import pandas as pd

    from ..gold.tags import rated_tags, slices

    for lv in levels:
        if lv not in LEVELS:
            raise InputError(f"level of measurement must be one of {', '.join(LEVELS)}, not {lv!r}")
    sets = rated.rating_sets if rating_sets is None else [rated.check_rating_set(s) for s in rating_sets]
    if by and tags is None:
        tags = rated_tags(rated)
    groups = [("all", "all", np.ones(len(rated), dtype=bool))]
    for fam in by:
        sl = slices(rated, tags, fam, include_all=False)
        groups += [(fam, name, m) for name, m in zip(sl.names, sl.masks)]
    pc = rated.prompt_codes()
    P = int(pc.max()) + 1 if len(pc) else 0
    rows = []
    scale = rated.meta.get("scale")
    for rs in sets:
        m, _ = rated.rater_matrix(rs)
        vals = m[~np.isnan(m)]
        if isinstance(scale, (list, tuple)) and len(scale) == 2:
            out = np.flatnonzero(((m < scale[0]) | (m > scale[1])).any(1))
            if out.size:
                img = rated.image_ids[int(out[0])]
                bad = m[out[0]][(m[out[0]] < scale[0]) | (m[out[0]] > scale[1])][0]
                raise InputError(f"rated set {rated.name!r}, rating set {rs!r}: image {img!r} has a rating {bad:g} outside "
                                 f"the scale [{scale[0]:g}, {scale[1]:g}] of its gold.json")
        domain = np.unique(vals)
        vc = value_counts(m, domain) if domain.size else np.zeros((len(rated), 0), dtype=np.int64)
        n_rat = (~np.isnan(m)).sum(1)
        for fam, name, sel in groups:
            pairable = sel & (n_rat >= 2)
            n_img, n_pr = int(pairable.sum()), int(np.unique(pc[pairable]).size)
            note = ""
            if n_img < 2:
                note = "fewer than 2 images rated twice or more: no alpha"
            elif n_pr < 10:
                note = f"only {plural(n_pr, 'prompt')}: the interval rests on few prompts"
            res = (_group_alpha(vc, domain, levels, pc, P, bootstrap, pairable) if n_img >= 2 else
                   [(lv, float("nan"), float("nan"), float("nan")) for lv in levels])
            for lv, a, lo, hi in res:
                if n_img >= 2 and np.isnan(a) and not note:
                    note = "no expected disagreement (one value): alpha undefined"
                rows.append({"rating_set": rs, "group_by": fam, "group": name, "level": lv, "n_images": n_img,
                             "n_prompts": n_pr, "n_ratings": int(n_rat[sel].sum()), "alpha": a, "alpha_lo": lo,
                             "alpha_hi": hi, "note": note})
    return Agreement(pd.DataFrame(rows), bootstrap)
