"""T2I models ordered from side-by-side votes, and absolute templates judged by the side-by-side gold (Gecko).

**Model ordering from SxS** (Gecko, section 4.3): for a pair of T2I models, each pair of their images (one
per prompt in Gecko) scores +1 when the raters prefer the first model, -1 when they prefer the second and 0
for a tie; the Wilcoxon signed-rank test (:func:`ts2viz.statistics.wilcoxon.wilcoxon`, scipy's defaults:
zeros dropped) of these scores against 0 decides significance (``p < alpha``, Gecko's 0.001), the mean's sign
the direction, as for the absolute templates (:func:`ts2viz.metaeval.humaneval.model_ordering`). A human
verdict from vote counts follows Gecko's rule (:mod:`ts2viz.gold.pairs`): preferred when chosen more often
than the competitor and than the ties.

**Absolute templates against SxS** (Gecko, Table 12): where the images of each pair also have absolute
ratings (a rated set with one rating set per template), each template's verdict on a pair is the sign of
the difference of the two images' mean ratings (equal means: a tie); its accuracy is the share of pairs
where that verdict equals the SxS verdict, over three labels (A, B, tie: tie-good and tie-bad are one
tie), and over the pairs SxS orders (``acc_ordered``: a template tie counts wrong).

Pure numpy/pandas.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..gold.pairs import PairSet
from ..statistics.wilcoxon import wilcoxon

#: Gecko's significance level for model ordering
ALPHA = 0.001


def sxs_model_ordering(pairs: PairSet, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair of T2I models compared on the side-by-side votes of their images.

    Parameters
    ----------
    pairs : PairSet
        Pairs with ``model_a`` and ``model_b`` (pairs of one model with itself, or without models, are left
        out).
    alpha : float, default 0.001
        A Wilcoxon p below it is significant.

    Returns
    -------
    pandas.DataFrame
        One row per model pair (names sorted; ``model_a < model_b``): ``n_pairs, wins_a, wins_b, ties,
        mean`` (of the +1/0/-1 scores), ``pvalue``, ``outcome`` (+1 ``model_a`` better, -1 worse, 0 no
        significant difference).

    Raises
    ------
    InputError
        If no pair names two different models.

    Examples
    --------
    >>> import pandas as pd
    >>> from ts2viz.gold.pairs import PairSet
    >>> from ts2viz.metaeval.sxs import sxs_model_ordering
    >>> df = pd.DataFrame({"pair_id": [str(i) for i in range(30)], "model_a": "x", "model_b": "y",
    ...                    "human": ["A"] * 25 + ["B"] * 2 + ["tie-good"] * 3})
    >>> sxs_model_ordering(PairSet("toy", df), alpha=0.01)[["model_a", "model_b", "wins_a", "wins_b", "outcome"]]
      model_a model_b  wins_a  wins_b  outcome
    0       x       y      25       2        1
    """
    df = pairs.pairs
    a, b = df["model_a"].astype(str).to_numpy(), df["model_b"].astype(str).to_numpy()
    ok = (a != "") & (b != "") & (a != b)
    if not ok.any():
        raise InputError(f"pair set {pairs.name!r} names no two different T2I models (model_a, model_b): "
                         "no model ordering")
    h = pairs.human_codes()
    first = np.where(a < b, a, b)
    second = np.where(a < b, b, a)
    # +1: the raters prefer the alphabetically first model of the pair
    s = np.select([h == 0, h == 1], [1.0, -1.0], 0.0) * np.where(a < b, 1.0, -1.0)
    rows = []
    for m1, m2 in sorted(set(zip(first[ok], second[ok]))):
        sel = ok & (first == m1) & (second == m2)
        v = s[sel]
        p = float(wilcoxon(v, np.zeros_like(v)).pvalue) if (v != 0).any() else 1.0
        mean = float(v.mean())
        rows.append({"model_a": m1, "model_b": m2, "n_pairs": int(v.size), "wins_a": int((v > 0).sum()),
                     "wins_b": int((v < 0).sum()), "ties": int((v == 0).sum()), "mean": mean, "pvalue": p,
                     "outcome": int(np.sign(mean)) if p < alpha and mean != 0 else 0})
    return pd.DataFrame(rows)


def template_sxs_accuracy(pairs: PairSet, rated, rating_sets=None) -> pd.DataFrame:
    """Accuracy of each absolute template (rating set) at predicting the side-by-side verdict (Gecko's Table 12).

    Parameters
    ----------
    pairs : PairSet
        The SxS gold; ``image_a`` and ``image_b`` are image ids of ``rated``.
    rated : ts2viz.gold.RatedSet
        Absolute ratings of the same images, one rating set per template.
    rating_sets : sequence of str, optional
        The templates (default: every rating set of ``rated``).

    Returns
    -------
    pandas.DataFrame
        ``rating_set, n_pairs, accuracy`` (three labels), ``n_ordered, acc_ordered`` (pairs SxS orders).

    Raises
    ------
    InputError
        If a pair's image is not in the rated set.
    """
    pos = {im: i for i, im in enumerate(rated.image_ids)}
    ia, ib = pairs.pairs["image_a"].to_numpy(), pairs.pairs["image_b"].to_numpy()
    for k, im in enumerate(np.r_[ia, ib]):
        if im not in pos:
            raise InputError(f"pair {pairs.pairs['pair_id'].iloc[k % len(ia)]!r}: image {str(im)[:60]!r} is not "
                             f"in rated set {rated.name!r}")
    pa, pb = np.array([pos[i] for i in ia]), np.array([pos[i] for i in ib])
    h = pairs.human_codes()
    gold3 = np.minimum(h, 2)                    # A, B, tie
    rows = []
    for rs in (rated.rating_sets if rating_sets is None else rating_sets):
        m = rated.human(rs)
        d = m[pa] - m[pb]
        ok = ~np.isnan(d)
        t3 = np.where(d > 0, 0, np.where(d < 0, 1, 2))
        ordered = ok & (gold3 < 2)
        rows.append({"rating_set": rs, "n_pairs": int(ok.sum()),
                     "accuracy": float((t3 == gold3)[ok].mean()) if ok.any() else np.nan,
                     "n_ordered": int(ordered.sum()),
                     "acc_ordered": float((t3 == gold3)[ordered].mean()) if ordered.any() else np.nan})
    return pd.DataFrame(rows)
