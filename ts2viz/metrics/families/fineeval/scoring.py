"""T2I-FineEval's scores: the yes score of a (crop, question) pair, the fine score over questions, the final score.

The yes score follows LAVIS' ``blip_vqa`` (:func:`lavis_question`, :func:`lavis_yes_score`); a question's
fine score is the max over its candidates, the image's fine score their mean or the paper's Eq. 4
(:func:`fine_score`), and the image's score (fine + coarse) / 2 (:func:`final_score`).
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

WEIGHTINGS = ("mean", "eq4")
#: P(yes) of a (crop, question): ``lavis_rank`` (the code: LAVIS ``predict_answers`` ranking
#: ["yes", "no"], see :func:`lavis_yes_score`; BLIP-VQA only) or ``first_token`` (P(yes) of the first
#: answer token, as the paper describes it; any VQA model).
ANSWER_SCORES = ("lavis_rank", "first_token")
#: LAVIS' blip_vqa (vqav2) input size, which the code uses.
LAVIS_IMAGE_SIZE = 480


def lavis_question(question: str, max_words: int = 50) -> str:
    """LAVIS' ``BlipQuestionProcessor`` ("eval") applied to a question.

    Lower case, ``. ! " ( ) * # : ; ~`` removed, trailing spaces stripped, at most ``max_words``
    space-separated words.

    Parameters
    ----------
    question : str
        The question.
    max_words : int, default 50
        The most words kept.

    Returns
    -------
    str
        The processed question.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.scoring import lavis_question
    >>> lavis_question("Is the cat (black)?  ")
    'is the cat black?'
    """
    q = re.sub(r'([.!"()*#:;~])', "", str(question).lower()).rstrip(" ")
    words = q.split(" ")
    return " ".join(words[:max_words]) if len(words) > max_words else q


def lavis_yes_score(first: Sequence[float], seq: Sequence[float]) -> float:
    """The code's "yes" score from LAVIS ranking of ``["yes", "no"]``.

    ``first``: each answer's first-token probability; ``seq``: each answer's ranking score. The code
    takes the candidates in order of ``first`` (top-k), picks the one with the best ranking score and
    returns the *top* first-token probability if that winner is "yes", else the *second*: so the
    score is P1(yes) whenever the two orders agree, and the other answer's first-token probability
    when they do not.

    Parameters
    ----------
    first : sequence of float
        The first-token probabilities of ``yes`` and ``no``, in that order.
    seq : sequence of float
        Their ranking scores.

    Returns
    -------
    float
        The code's yes score.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.scoring import lavis_yes_score
    >>> lavis_yes_score([0.7, 0.2], [-1.0, -2.0]), lavis_yes_score([0.7, 0.2], [-3.0, -2.0])
    (0.7, 0.2)
    """
    first, seq = np.asarray(first, dtype=np.float64), np.asarray(seq, dtype=np.float64)
    order = np.argsort(-first, kind="stable")
    winner = int(order[int(np.argmax(seq[order]))])
    return float(first[order[0]] if winner == 0 else first[order[1]])


# -- aggregation -------------------------------------------------------------------------------------

def fine_score(entity: Sequence[float], relation: Sequence[float], weighting: str = "mean") -> float:
    """Fine-grained score from the per-question maxima.

    ``mean`` (the authors' code): the mean over all questions. ``eq4`` (the paper's Eq. 4):
    sum(entity) / 2 n_e + sum(relation) / 2 n_r, i.e. entity and relation questions weigh half each;
    with no question of one kind, the mean of the other kind. NaN for no questions at all.

    Parameters
    ----------
    entity : sequence of float
        The entity questions' best yes scores.
    relation : sequence of float
        The relation questions' best yes scores.
    weighting : str, default "mean"
        ``mean`` or ``eq4``.

    Returns
    -------
    float
        The fine-grained score.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.scoring import fine_score
    >>> fine_score([1.0, 1.0, 1.0], [0.0]), fine_score([1.0, 1.0, 1.0], [0.0], "eq4")
    (0.75, 0.5)
    """
    e, r = [float(v) for v in entity], [float(v) for v in relation]
    if not e and not r:
        return float("nan")
    if weighting == "mean" or not e or not r:
        return float(np.mean(e + r))
    return sum(e) / (2 * len(e)) + sum(r) / (2 * len(r))


def final_score(fine: float, coarse: float) -> float:
    """The final score, (fine + coarse) / 2 (the code's coefficients 1 and 1; the paper's Eq. 6).

    Parameters
    ----------
    fine : float
        The fine-grained score (:func:`fine_score`).
    coarse : float
        The coarse score (mean over questions asked on the whole image).

    Returns
    -------
    float
        Their mean.
    """
    return (fine + coarse) / 2

