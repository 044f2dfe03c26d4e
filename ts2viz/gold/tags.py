"""Tags of a rated set's prompts and images, grouped in families, and the slices they define.

A *tag* says something about a prompt (the skill it tests, its prompt set, a DSG question category) or
about one image (the T2I model that drew it). Tags come in *families* (``dsg-category``, ``gecko-skill``,
``t2i-model``, ...); a prompt or image may carry several tags of one family (a TIFA160 prompt with a
colour question and a spatial question is in both ``attribute/color`` and ``relation/spatial``). The
*slice* of a tag is the set of images that carry it, directly or through their prompt.

Sources, all merged by :func:`rated_tags`:

- every rated set: family ``t2i-model`` (per image, from ``images.csv``);
- a rated-set folder's ``tags.csv`` (TIFA160 bundles ``dsg-category``, from DSG-1K's question categories:
  a prompt is in slice C when at least one of its DSG questions has category C; broad names as DSG writes
  them, detailed ones as ``broad/detailed``);
- Gecko2K (bundled, ``data/goldsets/gecko2k``): a rated set whose prompt texts are Gecko2K's gets
  ``gecko-prompt-set``, ``gecko-category``, ``gecko-skill``, ``gecko-subskill`` and ``gecko-source``;
- the user's tag files (:func:`read_tags`): CSV ``prompt_id`` or ``image_id``, ``family``, ``tag``.

Pure numpy/pandas.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..tagfamilies import TagFamilies, check_tag_row

#: the columns of :attr:`Tags.frame`
TAG_COLUMNS = ("unit", "id", "family", "tag")
#: the family every rated set has: each image's T2I model
MODEL_FAMILY = "t2i-model"
#: families of the bundled Gecko2K prompts
GECKO_FAMILIES = ("gecko-prompt-set", "gecko-category", "gecko-skill", "gecko-subskill", "gecko-source")


@dataclass(frozen=True, eq=False)     # holds a DataFrame: compared by identity
class Tags(TagFamilies):
    """Tags of prompts and images, in families.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per tag of a prompt or an image: ``unit`` (``"prompt"`` or ``"image"``), ``id`` (the
        prompt or image id), ``family``, ``tag``; no duplicate rows.

    See Also
    --------
    rated_tags : every tag of a rated set.
    slices : the images of each tag of a family.
    """

    frame: object

    def _family_tags(self):
        return zip(self.frame["family"].tolist(), self.frame["tag"].tolist())

    def merged(self, other: "Tags") -> "Tags":
        """These tags and ``other``'s, duplicates dropped.

        Parameters
        ----------
        other : Tags
            More tags.

        Returns
        -------
        Tags
            The union.
        """
        import pandas as pd

        frame = pd.concat([self.frame, other.frame], ignore_index=True).drop_duplicates(ignore_index=True)
        return Tags(frame)


def empty_tags() -> Tags:
    """Tags with no row.

    Returns
    -------
    Tags
        An empty table.
    """
    import pandas as pd

    return Tags(pd.DataFrame({c: pd.Series(dtype=object) for c in TAG_COLUMNS}))


def _frame(rows) -> Tags:
    import pandas as pd

    return Tags(pd.DataFrame(rows, columns=list(TAG_COLUMNS)).drop_duplicates(ignore_index=True))


def read_tags(path: str | os.PathLike, rated=None) -> Tags:
    r"""Read a tag file: CSV ``prompt_id`` or ``image_id``, ``family``, ``tag``.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file. Each row tags one prompt (``prompt_id``) or one image (``image_id``); a file may
        have both columns, each row filling exactly one of them.
    rated : RatedSet, optional
        When given, every id must be one of its prompts or images.

    Returns
    -------
    Tags
        The tags.

    Raises
    ------
    InputError
        In one line naming the file and row: no ``prompt_id``/``image_id`` column, a row with both or
        neither id, an empty family or tag, a family or tag with a comma or a control character, an id
        the rated set does not have, or more than :data:`~ts2viz.tagfamilies.MAX_TAGS_PER_FAMILY` tags in one
        family.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.gold.tags import read_tags
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "tags.csv"
    >>> _ = f.write_text("prompt_id,family,tag\np1,topic,animals\np2,topic,food\np1,length,short\n")
    >>> tags = read_tags(f)
    >>> tags.families, tags.tags("topic")
    (['topic', 'length'], ['animals', 'food'])
    """
    from ..dataset import csv_records, read_text_utf8

    path = Path(path)
    text = read_text_utf8(path)
    header = text.split("\n", 1)[0]
    if "prompt_id" not in header and "image_id" not in header:
        raise InputError("expected a prompt_id or image_id column (and family, tag)", file=path, row=1)
    prompts = set(rated.prompts["prompt_id"]) | set(rated.images["prompt_id"]) if rated is not None else None
    images = set(rated.images["image_id"]) if rated is not None else None
    rows, per_family = [], {}
    for line, rec in csv_records(path, text, ["family", "tag"], ["prompt_id", "image_id"]):
        pid, iid = rec.get("prompt_id", ""), rec.get("image_id", "")
        if bool(pid) == bool(iid):
            raise InputError("expected exactly one of prompt_id and image_id", file=path, row=line)
        check_tag_row(rec, per_family, path, line)
        unit, uid = ("prompt", pid) if pid else ("image", iid)
        known = prompts if pid else images
        if known is not None and uid not in known:
            raise InputError(f"{unit}_id {uid[:80]!r} is not a {unit} of rated set {rated.name!r}", file=path, row=line)
        rows.append((unit, uid, rec["family"], rec["tag"]))
    return _frame(rows)


def _normal_text(text: str) -> str:
    return " ".join(str(text).lower().split())


@functools.lru_cache(maxsize=None)
def gecko2k_prompts():
    """The bundled Gecko2K prompts, tags and released reliability flags.

    Returns
    -------
    prompts : pandas.DataFrame
        ``prompt_id``, ``prompt`` (1,546 prompts).
    tags : pandas.DataFrame
        ``prompt_id``, ``family``, ``tag`` (families :data:`GECKO_FAMILIES`).
    reliability : pandas.DataFrame
        ``prompt_id`` and the release's ``max_disagreement_less_X`` columns (bool).

    Examples
    --------
    >>> from ts2viz.gold.tags import gecko2k_prompts
    >>> prompts, tags, reliability = gecko2k_prompts()
    >>> len(prompts), sorted(tags.loc[tags.family == "gecko-category", "tag"].unique())
    (1546, ['att', 'lang', 'ne', 'rel', 'render'])
    >>> int(reliability["max_disagreement_less_0.5"].sum())
    1037
    """
    import pandas as pd

    from ..paths import bundled_data_dir

    root = bundled_data_dir() / "goldsets" / "gecko2k"
    read = functools.partial(pd.read_csv, dtype={"prompt_id": str}, keep_default_na=False)
    return read(root / "prompts.csv"), read(root / "tags.csv"), read(root / "reliability.csv")


def gecko2k_match(rated) -> dict:
    """The rated set's prompts that are Gecko2K's, matched on the prompt text.

    Parameters
    ----------
    rated : RatedSet
        A rated set.

    Returns
    -------
    dict
        The rated set's prompt id -> Gecko2K's prompt id, for each prompt whose text (lower case,
        whitespace collapsed) is a Gecko2K prompt's.
    """
    prompts, _, _ = gecko2k_prompts()
    gecko = {_normal_text(t): p for p, t in zip(prompts["prompt_id"], prompts["prompt"])}
    texts = _prompt_texts(rated)
    return {pid: gecko[t] for pid, t in texts.items() if t in gecko}


def _prompt_texts(rated) -> dict:
    texts = {p: _normal_text(t) for p, t in zip(rated.prompts["prompt_id"], rated.prompts["prompt"]) if str(t)}
    if "prompt" in rated.images.columns:
        for p, t in zip(rated.images["prompt_id"], rated.images["prompt"]):
            if str(t) and p not in texts:
                texts[p] = _normal_text(t)
    return texts


def rated_tags(rated, files: Sequence[str | os.PathLike] = ()) -> Tags:
    """Every tag of a rated set: its T2I models, its folder's ``tags.csv``, Gecko2K's, the user's files.

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    files : sequence of path-like, default ()
        The user's tag files (:func:`read_tags`), checked against the set's prompts and images.

    Returns
    -------
    Tags
        The merged tags.

    Raises
    ------
    InputError
        For a bad tag file (one line: file, row, problem).

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.gold.tags import rated_tags
    >>> tags = rated_tags(load_gold("tifa160", answers=False))
    >>> tags.families
    ['t2i-model', 'dsg-category', 'gecko-prompt-set', 'gecko-source']
    >>> tags.tags("dsg-category")[:5]
    ['entity', 'entity/whole', 'relation', 'relation/spatial', 'attribute']
    """
    rows = [("image", i, MODEL_FAMILY, str(m)) for i, m in zip(rated.images["image_id"], rated.images["t2i_model"])]
    tags = _frame(rows)
    if rated.source is not None and (Path(rated.source) / "tags.csv").is_file():
        tags = tags.merged(read_tags(Path(rated.source) / "tags.csv", rated))
    match = gecko2k_match(rated)
    if match:
        _, gtags, _ = gecko2k_prompts()
        back: dict = {}
        for ours, theirs in match.items():
            back.setdefault(theirs, []).append(ours)
        rows = [("prompt", ours, f, t) for p, f, t in zip(gtags["prompt_id"], gtags["family"], gtags["tag"])
                for ours in back.get(p, ())]
        tags = tags.merged(_frame(rows))
    for f in files:
        tags = tags.merged(read_tags(f, rated))
    return tags


@dataclass(frozen=True, eq=False)     # holds an array: compared by identity
class Slices:
    """The images of each tag of one family.

    Attributes
    ----------
    family : str
        The tag family.
    names : tuple of str
        The slices (tags), in order.
    masks : numpy.ndarray
        (slices, images) bool: which of the rated set's images (in its order) are in each slice.
    """

    family: str
    names: tuple
    masks: np.ndarray

    def __len__(self) -> int:
        """The number of slices."""
        return len(self.names)


def slices(rated, tags: Tags, family: str, *, include_all: bool = True) -> Slices:
    """The images of each tag of ``family``: an image is in slice T when it or its prompt has tag T.

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    tags : Tags
        Its tags (:func:`rated_tags`).
    family : str
        The family.
    include_all : bool, default True
        Put a slice ``all`` (every image) first, to compare each slice with.

    Returns
    -------
    Slices
        One slice per tag (a tag none of the set's images carries gives an empty slice, which the
        statistics mark).

    Raises
    ------
    InputError
        If the family is unknown.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.gold.tags import rated_tags, slices
    >>> gold = load_gold("tifa160", answers=False)
    >>> s = slices(gold, rated_tags(gold), "dsg-category")
    >>> s.names[:4], s.masks.sum(1)[:4].tolist()
    (('all', 'entity', 'entity/whole', 'relation'), [800, 800, 795, 690])
    """
    tags.check_family(family)
    sub = tags.frame[tags.frame["family"] == family]
    names = tags.tags(family)
    index = {t: r for r, t in enumerate(names)}
    img = {i: k for k, i in enumerate(rated.images["image_id"])}
    by_prompt: dict = {}
    for k, p in enumerate(rated.images["prompt_id"]):
        by_prompt.setdefault(p, []).append(k)
    masks = np.zeros((len(names), len(rated)), dtype=bool)
    for unit, uid, tag in zip(sub["unit"], sub["id"], sub["tag"]):
        cols = by_prompt.get(uid, []) if unit == "prompt" else ([img[uid]] if uid in img else [])
        masks[index[tag], cols] = True
    if include_all:
        masks = np.vstack([np.ones((1, len(rated)), dtype=bool), masks])
        names = ["all"] + [n if n != "all" else "all (tag)" for n in names]
    return Slices(family, tuple(names), masks)
