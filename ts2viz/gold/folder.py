"""Read a rated set from a folder (the bundled sets and a user's own use the same files).

Files (UTF-8 CSV, a header row; cells are stripped; extra columns are ignored):

``images.csv`` (required)
    ``image_id`` (unique, non-empty); ``prompt_id`` and/or ``prompt`` (at least one: images of one
    prompt share it; with only ``prompt`` the text is the id); ``t2i_model`` (optional: one model
    ``-`` when absent); optional ``path`` (an image file, relative to the folder) and ``hub_id``.
``ratings.csv`` (required)
    ``image_id`` (one of images.csv), ``rating`` (a finite number, any scale, higher = more
    faithful); optional ``rater`` (rater id; default: the rating's position among the image's
    ratings) and ``rating_set`` (default ``default``).
``prompts.csv`` (optional)
    ``prompt_id``, ``prompt``: the prompt texts.
``scores.csv`` (optional)
    ``image_id``, then one numeric column per metric (higher = better); an empty cell is no score.
``gold.json`` (optional)
    ``{"name": ..., "default_rating_set": ..., "title": ..., ...}``.
``qa_answers.parquet`` (optional)
    released per-question VQA answers: ``vqa_model, question_set, image_id, question_id, parents,
    question, answer`` (see :mod:`ts2viz.gold.answers`).

Bad input raises :class:`~ts2viz.errors.InputError` naming the file, the row (1-based file line) and
what was expected; the CLI turns it into one line and exit code 2.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path

from ..dataset import csv_records, read_text_utf8
from ..errors import InputError, warn_input
from .model import RatedSet

REQUIRED_FILES = ("images.csv", "ratings.csv")


def _number(text: str, *, what: str, path: Path, row: int, allow_empty: bool) -> float:
    if text == "" or text.lower() in ("nan", "na", "none", "null"):
        if allow_empty:
            return math.nan
        raise InputError(f"empty {what}: expected a number", file=path, row=row)
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{what} {text[:40]!r} is not a number", file=path, row=row) from None
    if not math.isfinite(v):
        if allow_empty:
            return math.nan
        raise InputError(f"{what} {text[:40]!r} is not a finite number", file=path, row=row)
    return v


def _header(path: Path, text: str) -> list[str]:
    try:
        row = next(csv.reader(io.StringIO(text, newline="")), None)
    except csv.Error as e:          # a header cell over the CSV reader's field limit, a NUL: one line
        raise InputError(f"the header cannot be read as CSV ({' '.join(str(e).split())[:80]})", file=path,
                         row=1) from None
    return [h.strip() for h in row] if row else []


def read_images(path: Path):
    """Read ``images.csv`` of a rated-set folder.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    pandas.DataFrame
        ``image_id``, ``prompt_id`` (the prompt text when only ``prompt`` is given), ``t2i_model``
        (``-`` when absent), ``prompt``, ``path``, ``hub_id``.

    Raises
    ------
    InputError
        Naming the file and row: not UTF-8, a missing column, an empty or repeated ``image_id``, an image
        without a prompt, no rows.
    """
    import pandas as pd

    text = read_text_utf8(path)
    cols = _header(path, text)
    if "prompt_id" not in cols and "prompt" not in cols:
        if "image_id" not in cols:
            raise InputError("missing column 'image_id' (expected image_id, prompt_id or prompt, t2i_model)", file=path)
        raise InputError("missing column 'prompt_id' or 'prompt': images of one prompt must share one", file=path)
    opt = [c for c in ("prompt_id", "prompt", "t2i_model", "path", "hub_id") if c in cols]
    rows, seen = [], {}
    for line, rec in csv_records(path, text, ["image_id"], opt):
        iid = rec["image_id"]
        if not iid:
            raise InputError("empty image_id", file=path, row=line)
        if iid in seen:
            raise InputError(f"image_id {iid!r} appears twice (first on row {seen[iid]})", file=path, row=line)
        seen[iid] = line
        pid = rec.get("prompt_id") or rec.get("prompt") or ""
        if not pid:
            raise InputError(f"image {iid!r} has no prompt_id or prompt", file=path, row=line)
        rows.append({"image_id": iid, "prompt_id": pid, "t2i_model": rec.get("t2i_model") or "-",
                     "prompt": rec.get("prompt", ""), "path": rec.get("path", ""), "hub_id": rec.get("hub_id", "")})
    if not rows:
        raise InputError("no images: expected one row per image", file=path)
    return pd.DataFrame(rows)


def read_ratings(path: Path, image_ids: set[str]):
    """Read ``ratings.csv`` of a rated-set folder.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    image_ids : set of str
        The images of ``images.csv``.

    Returns
    -------
    pandas.DataFrame
        ``image_id``, ``rating_set`` (default ``default``), ``rater`` (default: the rating's position
        among the image's ratings), ``rating``.

    Raises
    ------
    InputError
        Naming the file and row: an unknown image id, a rating that is empty or not a finite number,
        no rows.
    """
    import pandas as pd

    text = read_text_utf8(path)
    rows, position = [], {}
    for line, rec in csv_records(path, text, ["image_id", "rating"], ["rater", "rating_set"]):
        iid = rec["image_id"]
        if iid not in image_ids:
            raise InputError(f"image_id {iid[:80]!r} is not in images.csv", file=path, row=line)
        v = _number(rec["rating"], what="rating", path=path, row=line, allow_empty=False)
        rs = rec.get("rating_set") or "default"
        k = position[(iid, rs)] = position.get((iid, rs), 0) + 1
        rows.append({"image_id": iid, "rating_set": rs, "rater": rec.get("rater") or str(k), "rating": v})
    if not rows:
        raise InputError("no ratings: expected one row per rating (image_id, rating)", file=path)
    return pd.DataFrame(rows)


def read_prompts(path: Path):
    """Read ``prompts.csv`` of a rated-set folder.

    Parameters
    ----------
    path : pathlib.Path
        The file (``prompt_id``, ``prompt``).

    Returns
    -------
    pandas.DataFrame
        ``prompt_id``, ``prompt``.

    Raises
    ------
    InputError
        If the file is not UTF-8 or lacks a column.
    """
    import pandas as pd

    text = read_text_utf8(path)
    rows = [{"prompt_id": r["prompt_id"], "prompt": r["prompt"]}
            for _, r in csv_records(path, text, ["prompt_id", "prompt"])]
    return pd.DataFrame(rows, columns=["prompt_id", "prompt"])


def read_score_table(path: str | os.PathLike, image_ids: list[str], *, max_bytes: int | None = None):
    """A scores file keyed by image id, as a DataFrame aligned with ``image_ids``.

    Parameters
    ----------
    path : str or os.PathLike
        CSV with an ``image_id`` column (``file_name`` is accepted as its name too) and one numeric
        column per metric.
    image_ids : list of str
        The rated set's images, in order.
    max_bytes : int, optional
        A larger file is refused from its size, before it is read. Rows are bounded by the set anyway
        (each row names one of its images, once: reading stops at the first row past them).

    Returns
    -------
    pandas.DataFrame
        One row per image of ``image_ids``, one float column per metric.

    Raises
    ------
    InputError
        For a missing file, a file over ``max_bytes``, a header or row that cannot be read as CSV, an
        unknown or repeated image id, more rows than images, a non-numeric cell, no metric column, no rows
        (naming the file and row).

    Warns
    -----
    InputWarning
        When the file scores only part of the set.

    Notes
    -----
    NaN policy: an empty cell (or ``nan``, ``NA``, ``None``, ``null``, or a non-finite number) and an
    image absent from the file are not scored (NaN).
    """
    import numpy as np
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError("no such scores file", file=path)
    text = read_text_utf8(path, max_bytes)
    cols = _header(path, text)
    key = "image_id" if "image_id" in cols or "file_name" not in cols else "file_name"
    metrics = [c for c in cols if c and c != key]
    if key in cols and not metrics:
        raise InputError(f"no metric column: expected {key} and one column per metric", file=path)
    index = {iid: i for i, iid in enumerate(image_ids)}
    values = np.full((len(image_ids), len(metrics)), np.nan)
    seen: dict[str, int] = {}
    for line, rec in csv_records(path, text, [key], metrics, max_rows=len(image_ids)):
        iid = rec[key]
        if iid not in index:
            raise InputError(f"{key} {iid[:80]!r} is not an image of the rated set", file=path, row=line)
        if iid in seen:
            raise InputError(f"{key} {iid!r} appears twice (first on row {seen[iid]})", file=path, row=line)
        seen[iid] = line
        for j, m in enumerate(metrics):
            values[index[iid], j] = _number(rec[m], what=f"score of {m!r}", path=path, row=line, allow_empty=True)
    if not seen:
        raise InputError("no rows: expected one row per image", file=path)
    if len(seen) < len(image_ids):
        warn_input(f"scores {len(seen)} of the rated set's {len(image_ids)} images; the others count as not scored",
                   file=path)
    return pd.DataFrame(values, columns=metrics)


def load_folder(folder: str | os.PathLike, name: str | None = None) -> RatedSet:
    r"""Read a rated set from ``folder`` (see the module docstring for the files).

    Parameters
    ----------
    folder : str or os.PathLike
        The folder with ``images.csv`` and ``ratings.csv`` (and optional ``prompts.csv``,
        ``scores.csv``, ``gold.json``, ``qa_answers.parquet``).
    name : str, optional
        The set's name (default: ``gold.json``'s ``name``, else the folder's name).

    Returns
    -------
    RatedSet
        The set.

    Raises
    ------
    InputError
        Naming the file, the row and what was expected (see the readers), a missing folder or required
        file, a ``gold.json`` that is not a JSON object, or a default rating set ``ratings.csv`` does not
        have.

    Warns
    -----
    InputWarning
        When some images have no rating (they are left out of every statistic).

    Examples
    --------
    >>> import pathlib, shutil, tempfile
    >>> from ts2viz.gold import load_folder
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "images.csv").write_text("image_id,prompt,t2i_model\na1,a red cube,m1\na2,a red cube,m2\n")
    >>> _ = (folder / "ratings.csv").write_text("image_id,rating\na1,5\na1,4\na2,2\n")
    >>> _ = (folder / "scores.csv").write_text("image_id,my_metric\na1,0.9\na2,0.4\n")
    >>> rated = load_folder(folder, name="mine")
    >>> len(rated), rated.rating_sets, rated.human().tolist(), rated.metrics
    (2, ['default'], [4.5, 2.0], ['my_metric'])
    >>> shutil.rmtree(folder)
    """
    import pandas as pd

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such rated-set folder", file=folder)
    for f in REQUIRED_FILES:
        if not (folder / f).is_file():
            raise InputError(f"rated-set folder has no {f} (expected {', '.join(REQUIRED_FILES)})", file=folder)
    meta: dict = {}
    if (folder / "gold.json").is_file():
        try:
            meta = json.loads(read_text_utf8(folder / "gold.json"))
        except json.JSONDecodeError as e:
            raise InputError(f"not valid JSON ({e.msg})", file=folder / "gold.json", row=e.lineno) from None
        if not isinstance(meta, dict):
            raise InputError("expected a JSON object", file=folder / "gold.json")
    images = read_images(folder / "images.csv")
    ratings = read_ratings(folder / "ratings.csv", set(images["image_id"]))
    if (folder / "prompts.csv").is_file():
        prompts = read_prompts(folder / "prompts.csv")
    else:
        prompts = images[["prompt_id", "prompt"]].drop_duplicates("prompt_id")
    texts = dict(zip(prompts["prompt_id"], prompts["prompt"]))
    images = images.assign(prompt=[t or texts.get(p, "") for t, p in zip(images["prompt"], images["prompt_id"])])
    ids = images["image_id"].tolist()
    scores = (read_score_table(folder / "scores.csv", ids) if (folder / "scores.csv").is_file()
              else pd.DataFrame(index=range(len(ids))))
    qa = None
    if (folder / "qa_answers.parquet").is_file():
        qa = pd.read_parquet(folder / "qa_answers.parquet")
    sets = list(dict.fromkeys(ratings["rating_set"]))
    default = meta.get("default_rating_set") or sets[0]
    if default not in sets:
        raise InputError(f"default_rating_set {default!r} is not a rating set of ratings.csv ({', '.join(sets)})",
                         file=folder / "gold.json")
    unrated = int((~images["image_id"].isin(ratings["image_id"])).sum())
    if unrated:
        warn_input(f"{unrated} of {len(images)} images have no rating; they are left out of every statistic",
                   file=folder / "ratings.csv")
    return RatedSet(name=name or str(meta.get("name") or folder.name), images=images, prompts=prompts,
                    ratings=ratings, scores=scores, default_rating_set=default, meta=meta, qa_answers=qa,
                    source=folder)
