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
    return bundled_data_dir() / "goldsets" / BUNDLED[name]


@functools.lru_cache(maxsize=None)
def _bundled(name: str) -> RatedSet:
    return load_folder(bundled_dir(name), name=name)


def load_gold(spec: str | os.PathLike = "tifa160", *, answers: bool = True) -> RatedSet:
    """A bundled rated set by name (:data:`BUNDLED`) or a user's folder (:func:`load_folder`).

    With ``answers=True`` a set with released per-question VQA answers (TIFA160) gets the metric
    columns computed from them (:func:`ts2viz.gold.answers.answer_scores`, DSG's defaults) beside its
    released scores. Bundled sets are read once per process (the result is shared: do not mutate it).
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
