"""Gecko's VQA score normalisation (Eq. 2), shared by Gecko and the ``score=normalized`` option of TIFA/DSG.

A question with answer choices ``c_1..c_k`` and expected answer ``c_a`` scores

    P(c_a | image, question) / sum_i P(c_i | image, question)

from the VQA model's answer likelihoods (:meth:`ts2viz.metrics.backbones.vqa.model.VQAModel.choice_logprobs`). The paper
writes s_i as "the negative log likelihood" of answer i; taken literally that would reward the least
likely answer, so ts2viz uses the likelihoods themselves, which is what the surrounding text describes
(modelling the VQA model's uncertainty instead of taking the arg max).
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", str(text).lower()).split())


def choice_index(choices: Sequence[str], expected: str) -> int | None:
    """Index of ``expected`` among ``choices`` (case, punctuation and spacing ignored).

    Parameters
    ----------
    choices : sequence of str
        The question's answer choices.
    expected : str
        The expected answer.

    Returns
    -------
    int or None
        The index of the first choice equal to ``expected`` once lower-cased, with punctuation replaced
        by spaces and runs of spaces collapsed; None if no choice matches.

    Examples
    --------
    >>> from ts2viz.metrics.common.choicescore import choice_index
    >>> choice_index(["Red", "a blue  car!"], "A blue car")
    1
    >>> choice_index(["red"], "green") is None
    True
    """
    want = _norm(expected)
    for i, c in enumerate(choices):
        if _norm(c) == want:
            return i
    return None


def normalized_probability(logprobs: Sequence[float], index: int) -> float:
    """``P_index / sum_i P_i`` from log-likelihoods ``log P_i`` (Gecko's Eq. 2).

    Computed stably: the largest log-likelihood is subtracted before exponentiating.

    Parameters
    ----------
    logprobs : sequence of float
        The log-likelihood of each answer choice.
    index : int or None
        The index of the expected answer (:func:`choice_index`).

    Returns
    -------
    float
        The expected answer's share of the summed likelihoods, in [0, 1]; NaN if every likelihood is
        zero (no finite log-likelihood) or ``index`` is None.

    Examples
    --------
    >>> import math
    >>> from ts2viz.metrics.common.choicescore import normalized_probability
    >>> round(normalized_probability([math.log(0.2), math.log(0.6)], 1), 6)
    0.75
    >>> normalized_probability([-math.inf, -math.inf], 0)
    nan
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    if index is None or not np.isfinite(lp).any():
        return float("nan")
    m = lp.max()
    w = np.exp(lp - m)
    return float(w[index] / w.sum())
