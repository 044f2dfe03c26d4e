"""The bundled rated sets (``data/goldsets/``) and one entry point for a name or a folder."""
from __future__ import annotations

import functools
import os
from pathlib import Path

from ..errors import InputError
from ..paths import bundled_data_dir
from .folder import load_folder
from .model import RatedSet

#: bundled names -> folder under data/goldsets (see each folder's gold.json and LICENSE)
BUNDLED: dict[str, str] = {
    "tifa160": "tifa160",
    "imagenhub-t2i": "imagenhub-t2i",
    "genaibench": "genaibench",
    "genaibench-teaser": "genaibench-teaser",
}


def bundled_dir(name: str) -> Path:
    """The folder of a bundled rated set under the package's data.

    Parameters
    ----------
    name : str
        A name of :data:`BUNDLED`.

    Returns
    -------
    pathlib.Path
        The folder (``data/goldsets/NAME``).

    Raises
    ------
    KeyError
        If the name is not bundled.
    """
    return bundled_data_dir() / "goldsets" / BUNDLED[name]


@functools.lru_cache(maxsize=None)
def _bundled(name: str) -> RatedSet:
    return load_folder(bundled_dir(name), name=name)


def load_gold(spec: str | os.PathLike = "tifa160", *, answers: bool = True) -> RatedSet:
    """A bundled rated set by name (:data:`BUNDLED`) or a user's folder (:func:`load_folder`).

    Parameters
    ----------
    spec : str or os.PathLike, default "tifa160"
        ``tifa160``, ``imagenhub-t2i``, ``genaibench``, ``genaibench-teaser``, or a folder in the format
        of :mod:`ts2viz.gold.folder`.
    answers : bool, default True
        A set with released per-question VQA answers (TIFA160) gets the metric columns computed from
        them (:func:`ts2viz.gold.answers.answer_scores`, DSG's defaults) beside its released scores.

    Returns
    -------
    RatedSet
        The set. Bundled sets are read once per process (the result is shared: do not mutate it).

    Raises
    ------
    InputError
        If ``spec`` is neither a bundled name nor a folder, or the folder's files are bad.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> gold = load_gold("tifa160")
    >>> len(gold), gold.rating_sets, gold.default_rating_set
    (800, ['tifa', 'dsg'], 'dsg')
    >>> gold.t2i_models[:2], "dsg:PaLI-17B" in gold.metrics
    (['mini_dalle', 'stable_diffusion_v1_1'], True)
    """
    from .answers import answer_scores

    s = str(spec)
    if s in BUNDLED:
        rated = _bundled(s)
    elif Path(s).is_dir():
        rated = load_folder(s)
    else:
        raise InputError(f"no such rated set: expected one of {', '.join(BUNDLED)} or a folder with "
                         "images.csv and ratings.csv", file=s)
    if answers and rated.qa_answers is not None:
        extra = answer_scores(rated)
        if len(extra.columns):
            rated = rated.with_scores(extra)
    return rated
