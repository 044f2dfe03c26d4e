"""Judges on side-by-side gold: accuracy, position-swap accuracy and position bias, with intervals over pairs.

A judge (a multimodal LLM, a reward model, or a point-wise metric through :func:`metric_verdicts`) gives a
verdict on each pair of a :class:`~ts2viz.gold.pairs.PairSet`, in the order the images were shown
(``forward``: image A first; ``reverse``: image B first). Statistics of one judge, each a ratio of sums over
pairs (so the bootstrap resamples pairs):

``acc_4label``
    GenAI-Bench's accuracy: the forward verdict equals the human verdict among A, B, tie-good and
    tie-bad; a ``tie`` verdict (``[[A=B]]``) is right for either tie; unparsed and empty verdicts are wrong.
    Over every pair with a forward verdict.
``acc_ties_wrong``
    Over the pairs the humans order (A or B): the forward verdict is that side; a judge's tie, an unparsed
    or an empty verdict counts wrong.
``acc_no_ties``
    Over the pairs the humans order *and* the judge orders (forward verdict A or B): the share right.
``swap_acc``
    MMRB2's position-consistent accuracy (``compute_accuracy.py``): over the pairs the humans order, the
    forward verdict and the reverse verdict flipped (A <-> B) are each one trial; an empty verdict is no
    trial (MMRB2 skips it), any other verdict is a trial and right only when it names the preferred side.
    NaN for a judge without reverse verdicts.
``first_share``
    Position bias: the share of verdicts naming the image shown first (``A`` as shown), among the verdicts
    that name a side, over both orders. 0.5 = no preference for a position.
``consistency``
    Forward/reverse agreement: over pairs with both verdicts parsed, the share where the reverse verdict,
    flipped, equals the forward one.

Counts: ``n_pairs`` (pairs with a forward verdict), ``n_missing`` (gold pairs without one), ``n_unparsed``
and ``n_empty`` (forward and reverse together), ``n_reverse`` (pairs with a reverse verdict).

Pure numpy/pandas (no torch, no gradio).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..gold.pairs import HUMAN_LABELS, VERDICTS, PairSet
from ..statistics.bootstrap import BootstrapSettings, quantiles
from .pairwise import PairIndex, tie_calibration

#: the statistics of :func:`judge_table`, in column order
JUDGE_STATS = ("acc_4label", "acc_ties_wrong", "acc_no_ties", "swap_acc", "first_share", "consistency")

_A, _B, _TG, _TB, _TIE, _UNP, _EMPTY = range(7)
_NONE = -1          # no verdict row at all
_FLIP = np.array([_B, _A, _TG, _TB, _TIE, _UNP, _EMPTY])


def verdict_codes(pairs: PairSet, verdicts: pd.DataFrame, judge: str, order: str = "forward") -> np.ndarray:
    """One judge's verdicts as codes (positions in :data:`~ts2viz.gold.pairs.VERDICTS`), aligned to the pairs.

    Parameters
    ----------
    pairs : PairSet
        The gold.
    verdicts : pandas.DataFrame
        A verdict table (:func:`ts2viz.gold.pairs.load_verdicts`).
    judge : str
        The judge.
    order : {"forward", "reverse"}
        Which presentation.

    Returns
    -------
    numpy.ndarray
        int64 per pair, as shown to the judge; -1 where the judge has no verdict of that order.
    """
    pos = pairs.position()
    v = verdicts[(verdicts["judge"] == judge) & (verdicts["order"] == order)]
    out = np.full(len(pairs), _NONE, dtype=np.int64)
    code = {name: i for i, name in enumerate(VERDICTS)}
    out[[pos[p] for p in v["pair_id"]]] = [code[x] for x in v["verdict"]]
    return out


def _terms(human: np.ndarray, fwd: np.ndarray, rev: np.ndarray) -> np.ndarray:
    """(2 * len(JUDGE_STATS), n): numerator and denominator of each statistic per pair."""
    ordered = human <= _B
    has_f, has_r = fwd != _NONE, rev != _NONE
    rev_g = np.where(has_r, _FLIP[np.maximum(rev, 0)], _NONE)          # reverse verdict, in gold orientation
    tie_h = (human == _TG) | (human == _TB)
    right4 = (fwd == human) | ((fwd == _TIE) & tie_h)
    f_side, r_side = (fwd == _A) | (fwd == _B), (rev == _A) | (rev == _B)
    f_trial = ordered & has_f & (fwd != _EMPTY)
    r_trial = ordered & has_r & (rev != _EMPTY)
    f_parsed = has_f & (fwd <= _TIE)
    r_parsed = has_r & (rev <= _TIE)
    both = f_parsed & r_parsed
    if not has_r.any():         # no reverse verdicts: no position-swap accuracy (not the forward accuracy again)
        r_trial = f_trial = np.zeros_like(ordered)
    terms = [
        (has_f & right4, has_f),
        (ordered & (fwd == human), ordered & has_f),
        (ordered & f_side & (fwd == human), ordered & f_side),
        ((f_trial & (fwd == human)).astype(int) + (r_trial & (rev_g == human)), f_trial.astype(int) + r_trial),
        ((fwd == _A).astype(int) + (rev == _A), f_side.astype(int) + r_side),
        (both & (fwd == rev_g), both),
    ]
    return np.array([x for t in terms for x in t], dtype=np.float64)


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class JudgeResult:
    """The statistics of several judges on one pair set.

    Attributes
    ----------
    judges : list of str
        The judges, in table order.
    estimate : numpy.ndarray
        (judges, stats) the statistics of :data:`JUDGE_STATS` (NaN where undefined: no reverse verdicts).
    low, high : numpy.ndarray or None
        (judges, stats) percentile bootstrap intervals over pairs; ``None`` without a bootstrap.
    counts : pandas.DataFrame
        Per judge: ``n_pairs, n_missing, n_unparsed, n_empty, n_reverse, n_no_ties``.
    settings : BootstrapSettings or None
        The bootstrap's settings.
    """

    judges: list
    estimate: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None
    counts: pd.DataFrame
    settings: BootstrapSettings | None

    def frame(self) -> pd.DataFrame:
        """One row per judge: the counts, then each statistic with ``_lo`` and ``_hi`` (fractions).

        Returns
        -------
        pandas.DataFrame
            The table ``ts2viz judges`` writes.
        """
        cols = {"judge": self.judges}
        for c in self.counts.columns:
            cols[c] = self.counts[c].to_numpy()
        for k, s in enumerate(JUDGE_STATS):
            cols[s] = self.estimate[:, k]
            if self.low is not None:
                cols[f"{s}_lo"] = self.low[:, k]
                cols[f"{s}_hi"] = self.high[:, k]
        return pd.DataFrame(cols)


def judge_table(pairs: PairSet, verdicts: pd.DataFrame, judges=None, *,
                boot: BootstrapSettings | None = BootstrapSettings(n_resamples=2000)) -> JudgeResult:
    """Every judge's statistics (:data:`JUDGE_STATS`) with bootstrap intervals over pairs.

    Parameters
    ----------
    pairs : PairSet
        The side-by-side gold.
    verdicts : pandas.DataFrame
        Verdicts of one or more judges (:func:`ts2viz.gold.pairs.load_verdicts`), every ``pair_id`` in
        ``pairs``.
    judges : sequence of str, optional
        Which judges, in this order (default: the order they first appear in ``verdicts``).
    boot : BootstrapSettings or None, default 2,000 resamples
        Percentile intervals from resampling the pairs (the same resamples for every judge); ``None``: none.

    Returns
    -------
    JudgeResult
        Estimates, intervals and counts.

    Examples
    --------
    GenAI-Bench's published accuracy of GPT-4o (45.59) from the bundled texts:

    >>> from ts2viz.gold.pairs import load_pairs, load_bundled_verdicts
    >>> from ts2viz.metaeval.judges import judge_table
    >>> res = judge_table(load_pairs("genaibench-pairwise"), load_bundled_verdicts(), ["gpt4o"], boot=None)
    >>> round(100 * float(res.frame().loc[0, "acc_4label"]), 2)
    45.59
    """
    judges = list(dict.fromkeys(verdicts["judge"])) if judges is None else list(judges)
    human = pairs.human_codes()
    n = len(pairs)
    terms, counts = [], []
    for j in judges:
        fwd, rev = verdict_codes(pairs, verdicts, j, "forward"), verdict_codes(pairs, verdicts, j, "reverse")
        terms.append(_terms(human, fwd, rev))
        both = np.r_[fwd, rev]
        counts.append({"n_pairs": int((fwd != _NONE).sum()), "n_missing": int((fwd == _NONE).sum()),
                       "n_unparsed": int((both == _UNP).sum()), "n_empty": int((both == _EMPTY).sum()),
                       "n_reverse": int((rev != _NONE).sum()),
                       "n_no_ties": int(((human <= _B) & ((fwd == _A) | (fwd == _B))).sum())})
    t = np.stack(terms) if terms else np.zeros((0, 2 * len(JUDGE_STATS), n))     # (J, 2S, n)
    sums = t.sum(axis=2)
    est = _ratio(sums[:, 0::2], sums[:, 1::2])
    low = high = None
    if boot is not None and judges:
        rng = np.random.default_rng(boot.seed)
        flat = t.reshape(-1, n).T                                   # (n, J*2S)
        samples = np.empty((flat.shape[1], boot.n_resamples))
        chunk = max(1, 4_000_000 // max(n, 1))
        for s in range(0, boot.n_resamples, chunk):
            b = min(chunk, boot.n_resamples - s)
            w = rng.multinomial(n, np.full(n, 1.0 / n), size=b).astype(np.float64)     # (b, n) pair counts
            samples[:, s:s + b] = (w @ flat).T
        samples = samples.reshape(len(judges), -1, boot.n_resamples)
        ratios = _ratio(samples[:, 0::2], samples[:, 1::2])
        a = (1.0 - boot.confidence) / 2.0
        low, high = quantiles(ratios, [a, 1.0 - a])
    return JudgeResult(judges, est, low, high, pd.DataFrame(counts, index=judges), boot)


def _as_pairs(score_a, score_b, human_codes):
    sa, sb = np.asarray(score_a, float), np.asarray(score_b, float)
    n = sa.size
    gold = np.r_[np.select([human_codes == _A, human_codes == _B], [1.0, -1.0], 0.0), np.zeros(n)]
    idx = PairIndex(np.arange(n), np.arange(n, 2 * n))
    return np.r_[sa, sb], gold, idx


def tie_band(score_a, score_b, human_codes) -> float:
    """The tie band of a point-wise metric on pairs: the tie-calibrated ``epsilon`` (``acc_eq``).

    Fitted by :func:`ts2viz.metaeval.pairwise.tie_calibration` on the pairs, a human tie (tie-good or tie-bad)
    being a gold tie. In-sample, hence optimistic: fit it on other pairs when the accuracy is reported.

    Parameters
    ----------
    score_a, score_b : array_like
        The metric's scores of each pair's two images.
    human_codes : numpy.ndarray
        The human verdicts (:meth:`ts2viz.gold.pairs.PairSet.human_codes`).

    Returns
    -------
    float
        ``epsilon >= 0``.
    """
    metric, gold, idx = _as_pairs(score_a, score_b, np.asarray(human_codes))
    return float(tie_calibration(metric, gold, idx).epsilon)


def metric_verdicts(pairs: PairSet, score_a, score_b, *, judge: str, epsilon: float | str = 0.0) -> pd.DataFrame:
    """A point-wise metric as a judge, its verdict from the score difference and a tie band.

    ``A`` when ``score_a - score_b > epsilon``, ``B`` below ``-epsilon``, else ``tie``.

    Parameters
    ----------
    pairs : PairSet
        The gold (one score per image of each pair, in its row order).
    score_a, score_b : array_like
        The metric's scores of the pairs' images; NaN gives an ``empty`` verdict.
    judge : str
        The name in the verdict table.
    epsilon : float or "calibrated", default 0.0
        The tie band; ``"calibrated"``: :func:`tie_band` on these pairs.

    Returns
    -------
    pandas.DataFrame
        A verdict table (forward only; ``raw`` holds the difference).

    Raises
    ------
    ValueError
        If ``epsilon`` is a string other than ``"calibrated"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from ts2viz.gold.pairs import PairSet
    >>> from ts2viz.metaeval.judges import metric_verdicts
    >>> ps = PairSet("toy", pd.DataFrame({"pair_id": ["1", "2", "3"], "human": ["A", "B", "tie-good"]}))
    >>> list(metric_verdicts(ps, [0.9, 0.2, 0.5], [0.1, 0.6, 0.51], judge="m", epsilon=0.05)["verdict"])
    ['A', 'B', 'tie']
    """
    sa, sb = np.asarray(score_a, float), np.asarray(score_b, float)
    if isinstance(epsilon, str):
        if epsilon != "calibrated":
            raise ValueError(f"epsilon must be a number or 'calibrated', got {epsilon!r}")
        ok = ~(np.isnan(sa) | np.isnan(sb))
        epsilon = tie_band(sa[ok], sb[ok], pairs.human_codes()[ok])
    d = sa - sb
    verdict = np.where(np.isnan(d), "empty", np.where(d > epsilon, "A", np.where(d < -epsilon, "B", "tie")))
    return pd.DataFrame({"pair_id": pairs.pairs["pair_id"].to_numpy(), "order": "forward", "judge": judge,
                         "verdict": verdict, "raw": [f"score difference {x:+.6g} (tie band {epsilon:.6g})"
                                                     for x in d]})


def disagreement(pairs: PairSet, verdicts: pd.DataFrame, judges=None) -> pd.DataFrame:
    """Pairs where the judges and the raters disagree most: the share of judges wrong (4-label, forward).

    Parameters
    ----------
    pairs : PairSet
        The gold.
    verdicts : pandas.DataFrame
        The judges' verdicts.
    judges : sequence of str, optional
        Which judges (default: all).

    Returns
    -------
    pandas.DataFrame
        ``pair_id, human, n_judges, wrong_share, parsed_share``, the most disputed first (ties in
        ``wrong_share`` by pair order).
    """
    judges = list(dict.fromkeys(verdicts["judge"])) if judges is None else list(judges)
    human = pairs.human_codes()
    wrong = np.zeros(len(pairs))
    seen = np.zeros(len(pairs))
    parsed = np.zeros(len(pairs))
    for j in judges:
        f = verdict_codes(pairs, verdicts, j)
        has = f != _NONE
        right = (f == human) | ((f == _TIE) & (human >= _TG))
        wrong += has & ~right
        seen += has
        parsed += has & (f <= _TIE)
    out = pd.DataFrame({"pair_id": pairs.pairs["pair_id"].to_numpy(), "human": [HUMAN_LABELS[h] for h in human],
                        "n_judges": seen.astype(int), "wrong_share": _ratio(wrong, seen),
                        "parsed_share": _ratio(parsed, seen)})
    return out.sort_values("wrong_share", ascending=False, kind="mergesort").reset_index(drop=True)
