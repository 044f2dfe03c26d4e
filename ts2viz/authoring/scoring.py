"""Live scoring while authoring: score a draft's images with any metric of the registry.

Then compute its meta-metrics (``ts2viz.metametrics.results.compute(drafts_to_dataset(drafts), scores)``), so
a hard SEG can be designed on purpose. Images from TS2 keep their file names, so the bundled TS2
scores apply as they are.
"""
from __future__ import annotations

import io
import os
from typing import Callable, Mapping, Sequence

from ..errors import InputError
from .draft import DraftImage, SegDraft

#: what gives a draft image's pixels for scoring: a function of the image, or a mapping from image keys;
#: either may give ``bytes``, a path, or a PIL image (``None``: the image cannot be had; its score is NaN)
ImageSource = Callable[[DraftImage], object] | Mapping[str, object]


def _pixels(im: DraftImage, source: ImageSource):
    got = source.get(im.key) if isinstance(source, Mapping) else source(im)
    if isinstance(got, (bytes, bytearray, memoryview)):
        from PIL import Image

        try:
            pic = Image.open(io.BytesIO(bytes(got)))
            pic.load()
            return pic
        except Exception:       # unreadable bytes: scored NaN with the engine's one warning
            return None
    return got


def score_drafts(drafts: SegDraft | Sequence[SegDraft], specs: Sequence[str] | str, images: ImageSource, *,
                 device: str | None = None, batch_size: int | None = None, cache_dir=None,
                 use_cache: bool = True, progress=None):
    r"""Scores of every image of drafts against its SEG's prompt, for each metric spec.

    Every image counts, assigned to a node or not (a draft need not be finished). Scoring goes through the
    engine's cache (:func:`ts2viz.engine.score_images`), so rescoring a draft after an edit only scores
    the new images.

    Parameters
    ----------
    drafts : SegDraft or sequence of SegDraft
        One draft or several.
    specs : str or sequence of str
        Metric specs of the registry (``clipscore:ViT-B-32/openai``, ``callable:module:function``, ...).
    images : callable or mapping
        What gives each image's pixels (``ImageSource``): a function of the :class:`DraftImage`, or a
        mapping from image keys; either gives ``bytes``, a path, or a PIL image (``None``: the image
        cannot be had).
    device : str or None, default None
        Where the metrics run (``None``: the engine's choice, a GPU when there is one).
    batch_size : int or None, default None
        Images per batch (``None``: the metric's default).
    cache_dir : str or os.PathLike or None, default None
        The engine's score cache folder (``None``: its default).
    use_cache : bool, default True
        Read and write the cache.
    progress : callable or None, default None
        Called by the engine as batches finish.

    Returns
    -------
    ts2viz.scores.Scores
        Keyed by the images' ``file_name``, one column per metric (named by its spec), its
        lower-is-better metrics recorded. NaN for an image whose pixels cannot be had or read (one
        warning).

    Raises
    ------
    InputError
        When no spec is given, two images share a file name, the same metric is given twice, or a spec
        does not parse.

    Examples
    --------
    A metric of your own (``callable:file.py:function``) on two generated images, one of them not yet in a
    node, and one image that cannot be had:

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> from ts2viz.authoring import SegDraft
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "mine.py").write_text("def redness(images, prompts):\n"
    ...                                  "    return [im.getpixel((0, 0))[0] / 255 for im in images]\n")
    >>> d = (SegDraft("a red square").add_node("0").add_image("r", "red.png", "0")
    ...      .add_image("g", "grey.png").add_image("x", "lost.png", "0"))
    >>> pics = {"r": Image.new("RGB", (8, 8), "red"), "g": Image.new("RGB", (8, 8), (51, 51, 51)), "x": None}
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     s = score_drafts(d, f"callable:{tmp / 'mine.py'}:redness", pics, use_cache=False)
    >>> print(caught[0].message)
    1 image(s) could not be scored and get NaN: .../lost.png: unreadable image (...)
    >>> s.file_names, s.values.round(2).ravel().tolist()
    (['red.png', 'grey.png', 'lost.png'], [1.0, 0.2, nan])
    >>> import shutil; shutil.rmtree(tmp)
    """
    from ..engine import score_images
    from ..engine.models import get_metrics
    from ..scores import Scores

    drafts = [drafts] if isinstance(drafts, SegDraft) else list(drafts)
    specs = [specs] if isinstance(specs, str) else list(specs)
    if not specs:
        raise InputError("no metric given")
    items: list[tuple[DraftImage, str]] = []
    seen: set[str] = set()
    for d in drafts:
        for im in d.images:
            if im.file_name in seen:
                raise InputError(f"duplicate file_name {im.file_name!r}: scores are keyed by file name")
            seen.add(im.file_name)
            items.append((im, d.prompt))
    metrics = get_metrics(specs, device)
    import numpy as np

    values = np.full((len(items), len(metrics)), np.nan)
    if items:
        pics = [_pixels(im, images) for im, _ in items]
        srcs = [p if p is not None else _missing(im) for p, (im, _) in zip(pics, items)]
        prompts = [p for _, p in items]
        for j, m in enumerate(metrics):
            values[:, j] = score_images(m, srcs, prompts, device=device, batch_size=batch_size,
                                        cache_dir=cache_dir, use_cache=use_cache, progress=progress)
    lib = {m.spec for m in metrics if not m.higher_is_better}
    return Scores([im.file_name for im, _ in items], [m.spec for m in metrics], values, lib,
                  source="ts2viz authoring")


def _missing(im: DraftImage) -> str:
    """A path that does not exist, named for the image: the engine scores it NaN and names it once."""
    return os.path.join(os.devnull, "missing", im.file_name)
