"""The rated set: images of prompts, human ratings per rater (several rating sets), metric scores.

A *rated set* is the human-judgment gold standard beside TS2's semantic error graphs: each image has
a prompt and the T2I model that drew it, raters rated how faithful it is (any numeric scale), and
metrics scored it. One image set can carry several *rating sets* (TIFA160: the TIFA authors' 2
ratings per image and the DSG authors' ~5). Everything is aligned on ``images`` (one row per image,
in a fixed order), so statistics take plain arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

#: how an image's ratings become its gold (:meth:`RatedSet.human`)
AGGREGATES = ("mean", "median", "majority")


@dataclass(frozen=True, eq=False)     # holds DataFrames: compared by identity
class RatedSet:
    """A human-judgment gold standard: images of prompts, human ratings, metric scores.

    Attributes
    ----------
    name : str
        Short name (``tifa160`` or the folder name).
    images : pandas.DataFrame
        One row per image, columns ``image_id`` (unique), ``prompt_id``, ``t2i_model``, ``prompt`` and
        optionally ``path`` (a local image file) or ``hub_id`` (where the pixels can be fetched).
    prompts : pandas.DataFrame
        ``prompt_id``, ``prompt`` (text may be empty where a release has none).
    ratings : pandas.DataFrame
        Long table ``image_id``, ``rating_set``, ``rater``, ``rating`` (float), one row per rating; every
        ``image_id`` is one of ``images``.
    scores : pandas.DataFrame
        Metric scores, one float column per metric, rows aligned with ``images`` (NaN: not scored).
        Higher is better.
    default_rating_set : str
        The rating set used when none is named.
    meta : dict
        Free description (title, scale, sources, notes, rating set descriptions).
    qa_answers : pandas.DataFrame or None
        Released per-question VQA answers (TIFA160), or None.
    source : pathlib.Path or None
        The folder it was read from, or None.

    See Also
    --------
    ts2viz.gold.load_gold : a bundled set or a folder.
    ts2viz.metaeval.rated.evaluate_rated : Gecko's tasks on a rated set.
    """

    name: str
    images: Any
    prompts: Any
    ratings: Any
    scores: Any
    default_rating_set: str
    meta: dict = field(default_factory=dict)
    qa_answers: Any = None
    source: Path | None = None

    def __len__(self) -> int:
        """The number of images."""
        return len(self.images)

    @property
    def image_ids(self) -> list[str]:
        """The image ids, in the order of :attr:`images`."""
        return self.images["image_id"].tolist()

    @property
    def rating_sets(self) -> list[str]:
        """The rating sets, in order of first appearance in :attr:`ratings`."""
        return list(dict.fromkeys(self.ratings["rating_set"].tolist()))

    @property
    def metrics(self) -> list[str]:
        """The metric columns of :attr:`scores`."""
        return list(self.scores.columns)

    @property
    def t2i_models(self) -> list[str]:
        """The T2I models, in order of first appearance."""
        return list(dict.fromkeys(self.images["t2i_model"].tolist()))

    def check_rating_set(self, rating_set: str | None) -> str:
        """The rating set to use: ``rating_set``, or the default one when None.

        Parameters
        ----------
        rating_set : str or None
            A rating set name, or None for :attr:`default_rating_set`.

        Returns
        -------
        str
            The rating set's name.

        Raises
        ------
        InputError
            If the set has no such rating set.
        """
        rs = self.default_rating_set if rating_set is None else rating_set
        if rs not in self.rating_sets:
            raise InputError(f"rated set {self.name!r} has no rating set {rs!r} (its rating sets: "
                             f"{', '.join(self.rating_sets)})")
        return rs

    def rater_matrix(self, rating_set: str | None = None) -> tuple[np.ndarray, list[str]]:
        """Ratings of one rating set as a matrix (images x raters).

        Parameters
        ----------
        rating_set : str, optional
            The rating set (default: :attr:`default_rating_set`).

        Returns
        -------
        ratings : numpy.ndarray
            (images, raters), NaN where a rater did not rate an image; a rater id that rated an image twice
            keeps the mean.
        raters : list of str
            The rater ids (columns).

        Raises
        ------
        InputError
            If the rating set is unknown.
        """
        import pandas as pd

        rs = self.check_rating_set(rating_set)
        sub = self.ratings[self.ratings["rating_set"] == rs]
        wide = sub.pivot_table(index="image_id", columns="rater", values="rating", aggfunc="mean")
        wide = wide.reindex(pd.Index(self.image_ids, name="image_id"))
        return wide.to_numpy(dtype=np.float64), [str(c) for c in wide.columns]

    def human(self, rating_set: str | None = None, aggregate: str = "mean") -> np.ndarray:
        """The gold of each image: its ratings of one rating set aggregated (by default their mean).

        Parameters
        ----------
        rating_set : str, optional
            The rating set (default: :attr:`default_rating_set`).
        aggregate : {'mean', 'median', 'majority'}, default 'mean'
            How an image's ratings become its gold: their mean, their median, or the most frequent rating
            (a tie between values: the mean of the tied values, which ranks the image between them).

        Returns
        -------
        numpy.ndarray
            (images,) aligned with :attr:`images`; NaN for an image nobody rated.

        Raises
        ------
        InputError
            If the rating set or the aggregation is unknown.

        Examples
        --------
        >>> from ts2viz.gold import load_gold
        >>> gold = load_gold("tifa160", answers=False)
        >>> gold.human("tifa")[:3].tolist(), gold.human("dsg")[:3].tolist()
        ([5.0, 3.0, 5.0], [5.0, 4.2, 5.0])
        """
        import pandas as pd

        rs = self.check_rating_set(rating_set)
        if aggregate not in AGGREGATES:
            raise InputError(f"aggregate must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
        sub = self.ratings[self.ratings["rating_set"] == rs]
        g = sub.groupby("image_id", sort=False)["rating"]
        if aggregate == "majority":
            counts = sub.groupby(["image_id", "rating"], sort=False).size().rename("c").reset_index()
            top = counts[counts["c"] == counts.groupby("image_id")["c"].transform("max")]
            gold = top.groupby("image_id", sort=False)["rating"].mean()
        else:
            gold = g.mean() if aggregate == "mean" else g.median()
        return gold.reindex(pd.Index(self.image_ids)).to_numpy(dtype=np.float64)

    def subset(self, keep) -> "RatedSet":
        """The rated set restricted to some images (their ratings and scores with them).

        Parameters
        ----------
        keep : array_like of bool
            (images,) which images to keep, in the order of :attr:`images`.

        Returns
        -------
        RatedSet
            The smaller set (this one is unchanged); prompts without a kept image are dropped.

        Raises
        ------
        ValueError
            If ``keep`` does not have one entry per image.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self.images),):
            raise ValueError("keep must have one entry per image")
        images = self.images[keep].reset_index(drop=True)
        ids = set(images["image_id"])
        pids = set(images["prompt_id"])
        qa = self.qa_answers
        if qa is not None:
            qa = qa[qa["image_id"].isin(ids)].reset_index(drop=True)
        return replace(self, images=images, prompts=self.prompts[self.prompts["prompt_id"].isin(pids)].reset_index(drop=True),
                       ratings=self.ratings[self.ratings["image_id"].isin(ids)].reset_index(drop=True),
                       scores=self.scores[keep].reset_index(drop=True), qa_answers=qa)

    def ratings_per_image(self, rating_set: str | None = None) -> np.ndarray:
        """Number of ratings of each image in one rating set.

        Parameters
        ----------
        rating_set : str, optional
            The rating set (default: :attr:`default_rating_set`).

        Returns
        -------
        numpy.ndarray
            (images,) int counts, aligned with :attr:`images`.

        Raises
        ------
        InputError
            If the rating set is unknown.
        """
        import pandas as pd

        rs = self.check_rating_set(rating_set)
        sub = self.ratings[self.ratings["rating_set"] == rs]
        return sub.groupby("image_id")["rating"].size().reindex(pd.Index(self.image_ids)).fillna(0).to_numpy(int)

    def prompt_codes(self) -> np.ndarray:
        """Integer code of each image's prompt (the unit the bootstrap resamples).

        Returns
        -------
        numpy.ndarray
            (images,) int64 codes, in order of first appearance.
        """
        import pandas as pd

        return pd.factorize(self.images["prompt_id"])[0].astype(np.int64)

    def model_codes(self) -> tuple[np.ndarray, list[str]]:
        """Integer code of each image's T2I model, and the model names.

        Returns
        -------
        codes : numpy.ndarray
            (images,) int64 codes.
        names : list of str
            The model names (codes index them).
        """
        import pandas as pd

        codes, names = pd.factorize(self.images["t2i_model"])
        return codes.astype(np.int64), [str(n) for n in names]

    def score_matrix(self, metrics=None) -> np.ndarray:
        """Scores as a (metrics x images) float matrix.

        Parameters
        ----------
        metrics : sequence of str, optional
            The metric columns, in this order (default: all).

        Returns
        -------
        numpy.ndarray
            (metrics, images) float64, a copy; NaN where not scored.

        Raises
        ------
        InputError
            If a metric is not a column of :attr:`scores`.
        """
        cols = self.metrics if metrics is None else list(metrics)
        missing = [m for m in cols if m not in self.scores.columns]
        if missing:
            raise InputError(f"rated set {self.name!r} has no scores of metric {missing[0]!r} "
                             f"(its metrics: {', '.join(self.metrics) or 'none'})")
        return self.scores[cols].to_numpy(dtype=np.float64).T.copy()

    def with_scores(self, extra) -> "RatedSet":
        """A copy with more metric columns.

        Parameters
        ----------
        extra : pandas.DataFrame
            One row per image (in the order of :attr:`images`), one column per metric; a column of the same
            name as an existing one replaces it.

        Returns
        -------
        RatedSet
            The new set (this one is unchanged).

        Raises
        ------
        ValueError
            If ``extra`` does not have one row per image.
        """
        import pandas as pd

        extra = extra.reset_index(drop=True)
        if len(extra) != len(self.images):
            raise ValueError("extra scores must have one row per image")
        base = self.scores.drop(columns=[c for c in extra.columns if c in self.scores.columns])
        return replace(self, scores=pd.concat([base.reset_index(drop=True), extra], axis=1))

    def prompt_text(self, image_id: str) -> str:
        """The prompt text of one image.

        Parameters
        ----------
        image_id : str
            An image id of the set.

        Returns
        -------
        str
            The prompt, or ``""`` where the release has no text.

        Raises
        ------
        InputError
            If the set has no such image.
        """
        row = self.images.loc[self.images["image_id"] == image_id]
        if row.empty:
            raise InputError(f"rated set {self.name!r} has no image {image_id!r}")
        pid = row["prompt_id"].iloc[0]
        hit = self.prompts.loc[self.prompts["prompt_id"] == pid, "prompt"]
        return str(hit.iloc[0]) if len(hit) else ""
