"""T2I-FineEval's candidate regions: detector boxes grown as the authors' code grows them, relation union boxes.

Each question is asked on candidates (:func:`candidates`): the whole image, every grown detection box
(:func:`grow_box`) for entity questions, and the grown union boxes of the best pairs (:func:`code_relation_pairs`,
:func:`relation_pairs`) for relation questions, each cropped and resized to the image size (:func:`crop_resized`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...backbones.detect import Detection

GROW = 0.2
TOP_PAIRS = 10
WHOLE_IMAGE = ("always", "fallback")

Box = tuple[float, float, float, float]


def grow_box(box: Box, size: tuple[int, int], grow: float = GROW) -> tuple[int, int, int, int]:
    """``box`` grown as the authors' code grows it.

    The box is rounded to whole pixels (their YOLOv9 writes rounded pixel boxes), then moved out by
    ``int(grow * width)`` on the left and right and ``int(grow * height)`` on the top and bottom
    (truncated), and clipped to the image ``size``. A degenerate result is widened to one pixel (the code
    would fail on it).

    Parameters
    ----------
    box : tuple of float
        (left, top, right, bottom) in pixels.
    size : tuple of int
        The image's (width, height).
    grow : float, default 0.2
        The fraction of the box's width and height added on each side.

    Returns
    -------
    tuple of int
        The grown box (left, top, right, bottom).

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.regions import grow_box
    >>> grow_box((10.4, 10, 20, 30), (100, 100))
    (8, 6, 22, 34)
    >>> grow_box((0, 0, 50, 50), (40, 40))
    (0, 0, 40, 40)
    """
    left, top, right, bottom = (int(round(float(v))) for v in box)
    w, h = right - left, bottom - top
    width, height = size
    ext_w, ext_h = int(w * grow), int(h * grow)
    l2, t2 = max(0, left - ext_w), max(0, top - ext_h)
    r2, b2 = min(width, right + ext_w), min(height, bottom + ext_h)
    if r2 <= l2:
        l2, r2 = (r2 - 1, r2) if r2 >= 1 else (0, 1)
    if b2 <= t2:
        t2, b2 = (b2 - 1, b2) if b2 >= 1 else (0, 1)
    return l2, t2, r2, b2


def union_box(a: Box, b: Box) -> Box:
    """The smallest box holding both ``a`` and ``b``.

    Parameters
    ----------
    a : tuple of float
        A box (left, top, right, bottom).
    b : tuple of float
        Another box.

    Returns
    -------
    tuple of float
        Their union's bounding box.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.regions import union_box
    >>> union_box((0, 5, 10, 10), (3, 0, 8, 20))
    (0, 0, 10, 20)
    """
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def relation_pairs(scores: Sequence[float], top: int = TOP_PAIRS) -> list[tuple[int, int, float]]:
    """Pairs of detections ranked by the product of their confidences (the paper's rule).

    Parameters
    ----------
    scores : sequence of float
        The detections' confidences.
    top : int, default 10
        How many pairs to keep.

    Returns
    -------
    list of tuple of (int, int, float)
        ``(i, j, score_i * score_j)`` with ``i < j``, the ``top`` highest products first (ties in index
        order).

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.regions import relation_pairs
    >>> [(i, j, round(p, 3)) for i, j, p in relation_pairs([0.5, 0.9, 0.2], top=2)]
    [(0, 1, 0.45), (1, 2, 0.18)]
    """
    pairs = [(i, j, float(scores[i]) * float(scores[j])) for i in range(len(scores)) for j in range(i + 1, len(scores))]
    pairs.sort(key=lambda p: -p[2])
    return pairs[:max(0, int(top))]


#: The authors' code's confidence for its whole-image pseudo-box ("random_box").
PSEUDO_BOX_CONFIDENCE = 0.51
#: Relation candidates: ``code`` (the authors' ``get_merged_bounding_box``: the detections, repeated
#: when fewer than two, plus a whole-image pseudo-box of confidence 0.51, all pairs ranked by the
#: product of their confidences) or ``detections`` (pairs of detections only, as the paper describes).
RELATION_BOXES = ("code", "detections")


def code_relation_pairs(scores: Sequence[float], top: int = TOP_PAIRS) -> list[tuple[int | None, int | None, float]]:
    """The relation pairs of the authors' code over detections with confidences ``scores``.

    ``scores`` are sorted by confidence, highest first, as their detection files are. The box list is
    the detections; with fewer than two, the (up to) two most confident are appended again; then the
    whole-image pseudo-box (confidence :data:`PSEUDO_BOX_CONFIDENCE`); with no detection at all the
    pseudo-box stands in for them (their ``handle_no_detection``), giving three copies. Every pair
    ``a < b`` of that list is scored by the product of confidences, sorted highest first (stable), and
    the first ``top`` kept.

    Parameters
    ----------
    scores : sequence of float
        The detections' confidences, highest first.
    top : int, default 10
        How many pairs to keep.

    Returns
    -------
    list of tuple of (int or None, int or None, float)
        ``(i, j, product)`` with detection indices, or None for the pseudo-box.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.regions import code_relation_pairs
    >>> [(i, j, round(p, 3)) for i, j, p in code_relation_pairs([0.8])]
    [(0, 0, 0.64), (0, None, 0.408), (0, None, 0.408)]
    """
    items: list[tuple[int | None, float]] = [(i, float(s)) for i, s in enumerate(scores)]
    if not items:
        items = [(None, PSEUDO_BOX_CONFIDENCE)]
    if len(items) < 2:
        items += sorted(items, key=lambda it: -it[1])[:2]
    items.append((None, PSEUDO_BOX_CONFIDENCE))
    pairs = [(items[a][0], items[b][0], items[a][1] * items[b][1])
             for a in range(len(items)) for b in range(a + 1, len(items))]
    pairs.sort(key=lambda p: -p[2])
    return pairs[:max(0, int(top))]


def crop_resized(image, region: tuple[int, int, int, int]):
    """The ``region`` of a PIL image, resized (bicubic) to the image's own size, as the VQA model sees it.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    region : tuple of int
        (left, top, right, bottom) in pixels.

    Returns
    -------
    PIL.Image.Image
        The crop, at the image's size.
    """
    from PIL import Image

    return image.crop(region).resize(image.size, Image.BICUBIC)


@dataclass(frozen=True)
class Candidate:
    """An image region a question is asked on: the whole image, a grown box or a grown union box.

    Attributes
    ----------
    kind : str
        ``image``, ``entity`` or ``relation``.
    region : tuple of int
        (left, top, right, bottom) in pixels.
    detections : tuple of int
        Indices into the image's detections.
    score : float or None
        The detection's confidence, or the pair's product (None for the whole image).
    """

    kind: str                       # "image", "entity" or "relation"
    region: tuple[int, int, int, int]
    detections: tuple[int, ...]     # indices into the image's detections
    score: float | None             # the detection's confidence, or the pair's product

    def record(self) -> dict:
        """The candidate as a JSON-ready dict.

        Returns
        -------
        dict
            ``kind``, ``box``, ``detections`` and ``score`` (rounded to 6 decimals).
        """
        return {"kind": self.kind, "box": list(self.region), "detections": list(self.detections),
                "score": None if self.score is None else round(self.score, 6)}


def candidates(dets: Sequence[Detection], size: tuple[int, int], *, grow: float = GROW, top_pairs: int = TOP_PAIRS,
               whole_image: str = "always", relation_boxes: str = "code") -> tuple[list[Candidate], list[int], list[int]]:
    """All candidates of an image and the indices of those for entity and for relation questions.

    Candidate 0 is the whole image. Entity questions: one candidate per detection, plus the whole
    image (``whole_image="always"``, the code) or the whole image only when nothing was detected
    (``"fallback"``). Relation questions, ``relation_boxes="code"``: the grown union boxes of the
    pairs of :func:`code_relation_pairs` (a union with the whole-image pseudo-box is the whole image,
    candidate 0), then the whole image, as the code appends it; ``"detections"``: the grown union
    boxes of the ``top_pairs`` best pairs of detections (:func:`relation_pairs`), or the single
    detection's box when there is one, plus the whole image.

    Parameters
    ----------
    dets : sequence of Detection
        The image's detections, most confident first.
    size : tuple of int
        The image's (width, height).
    grow : float, default 0.2
        How much boxes grow (:func:`grow_box`).
    top_pairs : int, default 10
        How many pairs become relation candidates.
    whole_image : str, default "always"
        ``always`` or ``fallback`` (see above).
    relation_boxes : str, default "code"
        ``code`` or ``detections`` (see above).

    Returns
    -------
    candidates : list of Candidate
        Every candidate; the first is the whole image.
    entity : list of int
        The indices of the candidates entity questions are asked on.
    relation : list of int
        The indices of the candidates relation questions are asked on.
    """
    width, height = size
    cands = [Candidate("image", (0, 0, width, height), (), None)]
    entity = []
    for i, d in enumerate(dets):
        entity.append(len(cands))
        cands.append(Candidate("entity", grow_box(d.box, size, grow), (i,), float(d.score)))
    if whole_image == "always" or not entity:
        entity = [0] + entity
    relation = []
    if relation_boxes == "code":
        whole = (0, 0, width, height)
        for i, j, s in code_relation_pairs([d.score for d in dets], top_pairs):
            a = whole if i is None else dets[i].box
            b = whole if j is None else dets[j].box
            relation.append(len(cands))
            # A union with the pseudo-box is the whole image: recorded as such (kind "image").
            kind = "relation" if i is not None and j is not None else "image"
            cands.append(Candidate(kind, grow_box(union_box(a, b), size, grow),
                                   tuple(k for k in (i, j) if k is not None), s))
        return cands, entity, relation + [0]
    if len(dets) == 1:
        relation.append(1)
    for i, j, s in relation_pairs([d.score for d in dets], top_pairs):
        relation.append(len(cands))
        cands.append(Candidate("relation", grow_box(union_box(dets[i].box, dets[j].box), size, grow), (i, j), s))
    return cands, entity, relation + [0]

