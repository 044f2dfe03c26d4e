"""The bundled TS2 scores: the published per-image scores, their DSG columns recomputed by an accumulation."""
from __future__ import annotations

import numpy as np

from ..paths import bundled_data_dir
from .reading import read_scores
from .table import Scores

#: the heads of the published TS2 score columns (``TIFA-BLIP1``: head ``TIFA``, the part before the first
#: ``-``) -> the metric family that computes them (:mod:`ts2viz.metrics.families`); data of the release
PUBLISHED_COLUMN_FAMILIES = {"CLIPScore": "clipscore", "ALIGNScore": "alignscore", "TIFA": "tifa", "DSG": "dsg",
                             "LLMScore": "llmscore", "VIEScore": "viescore"}


def published_family(column: str) -> str | None:
    """The metric family of a published TS2 score column, by its head (:data:`PUBLISHED_COLUMN_FAMILIES`).

    Parameters
    ----------
    column : str
        A column name of the bundled scores (``DSG-mPLUG``).

    Returns
    -------
    str or None
        The family's name; None for a name whose head is no published column's.

    Examples
    --------
    >>> published_family("DSG-mPLUG"), published_family("VIEScore"), published_family("dsg:mine")
    ('dsg', 'viescore', None)
    """
    return PUBLISHED_COLUMN_FAMILIES.get(str(column).split("-", 1)[0])


def bundled_scores(dsg: str | None = None) -> Scores:
    """The per-image scores behind the published TS2 leaderboard (19 metric variants).

    The six DSG columns with per-question records (all but DSG-GPT4V) are recomputed from
    ``data/ts2/qa_answers.parquet`` by the accumulation chosen; DSG-GPT4V has no per-question records in
    the release and keeps its released per-image scores.

    Parameters
    ----------
    dsg : str, optional
        How the DSG columns accumulate their questions: ``"mean"`` (the default,
        :data:`ts2viz.qa.records.BUNDLED_DSG_ACCUMULATION`: the plain fraction of correct answers, which
        reproduces the published web leaderboard's DSG rows), ``"transitive"`` (alias ``"gated"``: a
        question fails when any ancestor fails, as DSG's README describes it and as the release's
        per-image DSG files use) or ``"direct"`` (a question fails when a direct parent was answered
        wrongly, as DSG's scoring code does; see :mod:`ts2viz.qa.accumulation`).

    Returns
    -------
    Scores
        2,840 images x 19 metrics; LLMScore's two variants are lower-is-better.

    Raises
    ------
    InputError
        For an unknown accumulation.

    Examples
    --------
    >>> from ts2viz import bundled_scores
    >>> scores = bundled_scores()
    >>> len(scores.file_names), len(scores.metrics), sorted(scores.lower_is_better)
    (2840, 19, ['LLMScore-EC', 'LLMScore-Over'])
    >>> scores.metrics[:4]
    ['CLIPScore', 'ALIGNScore', 'TIFA-BLIP1', 'TIFA-InstructBLIP']
    """
    from ..qa.accumulation import check_accumulation
    from ..qa.records import BUNDLED_DSG_ACCUMULATION, BUNDLED_QA_METRICS, bundled_qa_scores

    accumulation = check_accumulation(BUNDLED_DSG_ACCUMULATION if dsg is None else dsg)
    scores = read_scores(bundled_data_dir() / "ts2" / "published_scores.csv")
    dsg_metrics = [m for m in BUNDLED_QA_METRICS if m.startswith("DSG-")]
    recomputed = bundled_qa_scores(accumulation, dsg_metrics).reindex(scores.file_names)
    for m in dsg_metrics:
        scores.values[:, scores.metrics.index(m)] = recomputed[m].to_numpy(dtype=np.float64)
    return scores
