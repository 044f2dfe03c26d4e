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
    import pandas as pd

    text = read_text_utf8(path)
    rows = [{"prompt_id": r["prompt_id"], "prompt": r["prompt"]}
            for _, r in csv_records(path, text, ["prompt_id", "prompt"])]
    return pd.DataFrame(rows, columns=["prompt_id", "prompt"])


def read_score_table(path: str | os.PathLike, image_ids: list[str], *, max_bytes: int | None = None):
    """A scores file keyed by image id, as a DataFrame aligned with ``image_ids`` (NaN: not scored).

    The file is CSV with an ``image_id`` column (``file_name`` is accepted as its name too) and one
    numeric column per metric. Raises :class:`InputError` for an unknown or repeated image id, a
    non-numeric cell, no metric column. Warns (one line) when the file scores only part of the set.
    ``max_bytes``: a larger file is refused from its size, before it is read; rows are bounded by the
    set (each row names one of its images, once: reading stops at the first row past them).
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
    """Read a rated set from ``folder`` (see the module docstring for the files)."""
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
