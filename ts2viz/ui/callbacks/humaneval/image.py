"""One rated image: its ratings, its metrics' scores, and the answers of a question metric."""
from __future__ import annotations

import os

import numpy as np

from ....display import md_text
from ....errors import InputError
from .sets import OWN_MARK, session_rated


def answers_metric(g, metric: str | None) -> str | None:
    """The answer-based QA metric whose per-question answers an image's details show.

    Parameters
    ----------
    g : ts2viz.gold.RatedSet
        The rated set.
    metric : str or None
        The scatter's metric.

    Returns
    -------
    str or None
        ``metric`` when it is one (``dsg:PaLI-17B``, ``vq2a:InstructBLIP``, ...), else the set's first
        such metric; ``None`` when the set has no released answers.
    """
    from ....gold.answers import answer_metric

    names = [m for m in g.metrics if answer_metric(m) is not None]
    if metric in names:
        return metric
    return names[0] if names else None


def answers_table(g, image_id: str, metric: str):
    """One image's released answers behind a QA metric, in the Questions tab's question table.

    The records of :func:`ts2viz.gold.answers.answer_records` through
    :func:`ts2viz.qa.views.image_question_table` (with the metric's own accumulation: DSG's ``counts``
    column is what its score averages) and :func:`ts2viz.ui.callbacks.questions.image.display_table`, the code
    the Questions tab uses.

    Parameters
    ----------
    g : ts2viz.gold.RatedSet
        The rated set.
    image_id : str
        The image.
    metric : str
        The QA metric (``dsg:PaLI-17B``).

    Returns
    -------
    pandas.DataFrame
        The table (``attrs["metric"]`` names the metric); empty when the image has none.
    """
    import pandas as pd

    from ....gold.answers import answer_records
    from ....qa.details import details_of_questions
    from ....qa.views import image_question_table
    from ..questions.image import display_table

    recs, kind, accumulation = answer_records(g, metric, image_id)
    if not len(recs):
        out = pd.DataFrame()
    else:
        out = display_table(details_of_questions(kind),
                            image_question_table(recs, image_id, metric=metric, accumulation=accumulation))
    out.attrs["metric"] = metric
    return out


def image_detail(name: str, image_id: str, own=None, metric: str | None = None):
    """What the page shows for one image of a rated set: a click on a scatter point (or an id typed).

    Parameters
    ----------
    name : str
        The rated set's name.
    image_id : str
        The image.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.
    metric : str or None, default None
        The scatter's metric (whose answers to show, if it is a QA metric).

    Returns
    -------
    markdown : str
        The prompt, T2I model and every rating (by rating set and rater), texts escaped.
    scores : pandas.DataFrame
        Each metric's score, the session's own first and marked.
    answers : pandas.DataFrame
        The released per-question VQA answers behind ``metric`` (or, when it is not a QA metric, the set's
        first: :func:`answers_metric`) in the Questions tab's question table (:func:`answers_table`; empty
        where the set has no answers).
    image_path : str or None
        The image file when the operator's folder names one that exists inside it (else ``None``: the page
        shows a placeholder with the image id; the bundled sets have no pixels).

    Raises
    ------
    InputError
        For no image id, or one the set does not have.
    """
    import pandas as pd

    g = session_rated(name, own)
    iid = str(image_id or "").strip()
    hit = np.flatnonzero(g.images["image_id"].to_numpy() == iid) if iid else []
    if not len(hit):
        raise InputError(f"rated set {name} has no image with that id" if iid else "click a point of the scatter")
    i = int(hit[0])
    row = g.images.iloc[i]
    lines = [f"**Image** {md_text(iid)} of **{md_text(name)}**", "",
             f"**Prompt:** {md_text(g.prompt_text(iid)) or '_(no text)_'}", "",
             f"**T2I model:** {md_text(row['t2i_model'])}", ""]
    r = g.ratings[g.ratings["image_id"] == iid]
    for rs, sub in r.groupby("rating_set", sort=False):
        each = ", ".join(f"{md_text(a)}: {v:g}" for a, v in zip(sub["rater"], sub["rating"]))
        lines.append(f"**Ratings {md_text(rs)}** (mean {sub['rating'].mean():.2f}): {each}")
        lines.append("")
    if r.empty:
        lines.append("_No rating._")
    mine = set(own.metrics(name)) if own else set()
    vals = g.scores.iloc[i] if len(g.scores.columns) else pd.Series(dtype=float)
    vals = vals[[m for m in vals.index if m in mine] + [m for m in vals.index if m not in mine]]   # yours first
    scores = pd.DataFrame({"metric": [m + OWN_MARK if m in mine else m for m in vals.index],
                           "score": ["–" if v != v else f"{v:.4g}" for v in vals.to_numpy(float)]})
    shown = answers_metric(g, metric)
    answers = answers_table(g, iid, shown) if shown is not None else pd.DataFrame()
    path = None
    src = str(row.get("path", "") or "")
    if src and g.source is not None:
        base = os.path.realpath(g.source)
        full = os.path.realpath(os.path.join(base, src))
        # only a file inside the operator's folder (a path in images.csv cannot point elsewhere)
        if os.path.commonpath([full, base]) == base and os.path.isfile(full):
            path = full
    return "\n".join(lines), scores, answers, path


def placeholder_html(image_id: str | None) -> str:
    """The image's place when the set has no pixels for it: a box with the image id.

    Parameters
    ----------
    image_id : str or None
        The image (``None``: a hint to click a point).

    Returns
    -------
    str
        HTML (the id escaped).
    """
    from ....display import html_text

    text = html_text(image_id) if image_id else "click a point of the scatter"
    return (f"<div class='gold-image-placeholder' style='border:1px dashed #999;border-radius:6px;padding:24px 8px;"
            f"text-align:center;max-width:320px;word-break:break-all;color:#666'>no image bundled<br>"
            f"<code>{text}</code></div>")
