"""Coverage: how many of a dataset's images (and SEGs) each metric of a scores table has a score for."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .table import Scores


@dataclass
class Coverage:
    """How many of a dataset's images one metric's scores cover, in total and per SEG.

    A score counts when it is finite (NaN, an empty cell or an image absent from the table is none).

    Attributes
    ----------
    metric : str
        The metric.
    seg_ids : list of int
        The SEGs.
    seg_images : numpy.ndarray
        (S,) images per SEG.
    seg_scored : numpy.ndarray
        (S,) of them with a score.
    """

    metric: str
    seg_ids: list[int]
    seg_images: np.ndarray      # (S,) images per SEG
    seg_scored: np.ndarray      # (S,) of them with a score

    @property
    def n_images(self) -> int:
        """The images of all the SEGs."""
        return int(self.seg_images.sum())

    @property
    def n_scored(self) -> int:
        """The images with a score."""
        return int(self.seg_scored.sum())

    @property
    def complete(self) -> bool:
        """Whether every image has a score."""
        return self.n_scored == self.n_images

    @property
    def partial_segs(self) -> list[int]:
        """SEGs with some but not all images scored."""
        return [s for s, n, k in zip(self.seg_ids, self.seg_images, self.seg_scored) if 0 < k < n]

    @property
    def unscored_segs(self) -> list[int]:
        """SEGs without any scored image."""
        return [s for s, k in zip(self.seg_ids, self.seg_scored) if k == 0]

    def describe(self) -> str:
        """One line: ``metric 'm' has scores for 5 of 14 images (SEGs 0, 1 partly; SEG 2 not at all)``.

        Returns
        -------
        str
            The counts, the partly scored SEGs and the unscored SEGs (the first six of each named).
        """
        def ids(xs: list[int]) -> str:
            head = ", ".join(map(str, xs[:6]))
            return ("SEG " if len(xs) == 1 else "SEGs ") + head + (f" and {len(xs) - 6} more" if len(xs) > 6 else "")

        parts = []
        if self.partial_segs:
            parts.append(f"{len(self.partial_segs)} of {len(self.seg_ids)} SEGs partly scored ({ids(self.partial_segs)})")
        if self.unscored_segs:
            parts.append(f"{len(self.unscored_segs)} of {len(self.seg_ids)} SEGs not scored at all "
                         f"({ids(self.unscored_segs)})")
        text = f"metric {self.metric!r} has scores for {self.n_scored} of {self.n_images} images"
        return text + (": " + "; ".join(parts) if parts else "")


def coverage(scores: Scores, dataset, metrics: Sequence[str] | None = None,
             seg_ids: Sequence[int] | None = None) -> list[Coverage]:
    r"""Per metric, how many images of ``dataset`` have a finite score.

    Parameters
    ----------
    scores : Scores
        The scores.
    dataset : Dataset
        The dataset.
    metrics : sequence of str, optional
        The metrics (default: all of ``scores``).
    seg_ids : sequence of int, optional
        The SEGs (default: all).

    Returns
    -------
    list of Coverage
        One per metric.

    Raises
    ------
    InputError
        If a metric is not in ``scores``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz import load_dataset, read_scores
    >>> from ts2viz.scores import coverage
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = path.write_text("file_name,mine\nimages/000-00.jpg,0.91\nimages/000-01.jpg,0.85\n")
    >>> print(coverage(read_scores(path), load_dataset("ts2"), seg_ids=[0, 1])[0].describe())
    metric 'mine' has scores for 2 of 23 images: 1 of 2 SEGs partly scored (SEG 0); 1 of 2 SEGs not scored at all (SEG 1)
    """
    metrics = list(scores.metrics if metrics is None else metrics)
    ids = list(dataset.segs) if seg_ids is None else [int(s) for s in seg_ids]
    names = [img.file_name for sid in ids for node in dataset[sid].nodes for img in node.images]
    sizes = np.array([dataset[sid].n_images for sid in ids], dtype=np.int64)
    ok = np.isfinite(scores.aligned(names, metrics, oriented=False)) if names else np.zeros((0, len(metrics)), bool)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(ids) else np.zeros(0, np.int64)
    per_seg = np.add.reduceat(ok.astype(np.int64), starts, axis=0) if len(ids) else np.zeros((0, len(metrics)))
    per_seg[sizes == 0] = 0
    return [Coverage(m, ids, sizes, per_seg[:, j].astype(np.int64)) for j, m in enumerate(metrics)]
