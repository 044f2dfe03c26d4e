"""Object detectors for T2I-FineEval: closed-set (COCO classes) or open-vocabulary (queried with names).

* closed set: any ``AutoModelForObjectDetection`` (RT-DETR, DETR, Conditional/Deformable DETR, YOLOS,
  ...). The default, ``PekingU/rtdetr_r50vd_coco_o365`` (COCO AP 55.3), stands in for the original's
  YOLOv9-e (COCO AP 55.6) with the same settings: confidence 0.25, class-wise NMS at IoU 0.45, 640 px
  input. DETR-style models need no NMS, but it is applied anyway so that both kinds get the same rule.
* open vocabulary: any ``AutoModelForZeroShotObjectDetection`` (OWLv2, OWL-ViT, Grounding DINO),
  queried with the entity names of the prompt.

The kind is read from the model's config. :meth:`Detector.detect` returns, per image, the detections
after thresholding, NMS and the ``max_boxes`` cap, most confident first, boxes in pixels of the image.
"""
from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass
from typing import Sequence

from ...errors import InputError
from ..common.device import resolve_device, run_halving_on_oom
from ..common.pretrained import check_model_id, hf_load, model_identity
from ..common.spec import Spec

DEFAULT_DETECTOR = "PekingU/rtdetr_r50vd_coco_o365"
CONFIDENCE = 0.25
NMS_IOU = 0.45
MAX_BOXES = 30


@dataclass(frozen=True)
class Detection:
    """One detected box.

    Attributes
    ----------
    box : tuple of float
        (left, top, right, bottom) in pixels of the image.
    label : str
        The class name (closed set) or the query name (open vocabulary).
    score : float
        The detector's confidence.
    """

    box: tuple[float, float, float, float]
    label: str
    score: float

    def record(self) -> dict:
        """The detection as a JSON-ready dict.

        Returns
        -------
        dict
            ``{"box": [left, top, right, bottom], "label": str, "score": float}`` with plain floats.

        Examples
        --------
        >>> from ts2viz.metrics.backbones.detect import Detection
        >>> Detection((1, 2, 3, 4), "cat", 0.5).record()
        {'box': [1.0, 2.0, 3.0, 4.0], 'label': 'cat', 'score': 0.5}
        """
        d = asdict(self)
        d["box"] = [float(v) for v in self.box]
        d["score"] = float(self.score)
        return d


def nms(dets: list[Detection], iou: float) -> list[Detection]:
    """Class-wise non-maximum suppression (torchvision's ``batched_nms``), most confident first.

    Parameters
    ----------
    dets : list of Detection
        The detections of one image.
    iou : float
        The IoU above which a less confident box of the same label is dropped; ``iou >= 1`` keeps all.

    Returns
    -------
    list of Detection
        The kept detections, sorted by decreasing confidence.
    """
    import torch
    from torchvision.ops import batched_nms

    dets = sorted(dets, key=lambda d: -d.score)
    if not dets or iou >= 1:
        return dets
    boxes = torch.tensor([d.box for d in dets], dtype=torch.float64)
    scores = torch.tensor([d.score for d in dets], dtype=torch.float64)
    names = {n: i for i, n in enumerate(dict.fromkeys(d.label for d in dets))}
    labels = torch.tensor([names[d.label] for d in dets])
    keep = batched_nms(boxes, scores, labels, float(iou)).tolist()
    return [dets[i] for i in sorted(keep)]


class Detector:
    """A transformers detector with FineEval's post-processing (see the module docstring).

    The kind (closed set or open vocabulary) is read from the model's config.

    Parameters
    ----------
    model_id : str
        Hub id or local folder of the detector.
    spec : Spec
        The spec named in error messages.
    device : str
        The torch device.
    threshold : float, default 0.25
        The confidence below which a detection is dropped.
    nms_iou : float, default 0.45
        The IoU of the class-wise NMS (:func:`nms`).
    image_size : int or None, optional
        The input size in pixels (a square for fixed-size models such as RT-DETR, the longest edge for
        aspect-preserving ones such as DETR); None keeps the processor's.
    max_boxes : int, default 30
        The most detections kept per image.
    batch_size : int, default 8
        Images per forward pass (halved on GPU out-of-memory).
    revision : str or None, optional
        The hub revision.

    Raises
    ------
    InputError
        If the model is not an object detector, or cannot be loaded.
    """

    def __init__(self, model_id: str, spec: Spec, device: str, *, threshold: float = CONFIDENCE,
                 nms_iou: float = NMS_IOU, image_size: int | None = None, max_boxes: int = MAX_BOXES,
                 batch_size: int = 8, revision: str | None = None):
        from transformers import AutoConfig, AutoImageProcessor, AutoProcessor
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES,
            MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES,
        )

        kw = {"revision": revision} if revision else {}
        cfg = hf_load("detector config", AutoConfig.from_pretrained, model_id, spec, **kw)
        if cfg.model_type in MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES:
            from transformers import AutoModelForZeroShotObjectDetection as Auto

            self.open_vocab = True
            self.processor = hf_load("detector processor", AutoProcessor.from_pretrained, model_id, spec, **kw)
        elif cfg.model_type in MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES:
            from transformers import AutoModelForObjectDetection as Auto

            self.open_vocab = False
            self.processor = hf_load("detector image processor", AutoImageProcessor.from_pretrained, model_id,
                                     spec, **kw)
        else:
            raise InputError(f"metric {spec.raw!r}: {model_id!r} ({cfg.model_type}) is not an object detector "
                             "(expected e.g. PekingU/rtdetr_r50vd_coco_o365 or google/owlv2-base-patch16-ensemble)")
        model = hf_load("detector", Auto.from_pretrained, model_id, spec, **kw)
        self.model = model.to(device).eval()
        self.model_type = cfg.model_type
        self.model_id = model_id
        self.device = device
        self.threshold = float(threshold)
        self.nms_iou = float(nms_iou)
        self.image_size = int(image_size) if image_size else None
        self.max_boxes = int(max_boxes)
        self.batch_size = max(1, int(batch_size))
        self.identity = model_identity(model_id, revision, model.config)
        self._size_kwargs = self._size_override()

    @property
    def config(self) -> dict:
        """The detector's identity, kind, confidence, NMS IoU, image size and box cap."""
        return {**self.identity, "kind": "open-vocabulary" if self.open_vocab else "closed-set",
                "confidence": self.threshold, "nms_iou": self.nms_iou, "image_size": self.image_size,
                "max_boxes": self.max_boxes}

    def _image_processor(self):
        return getattr(self.processor, "image_processor", self.processor)

    def _size_override(self) -> dict:
        """Processor ``size`` for ``image_size``.

        A square for fixed-size models (RT-DETR, like YOLO's 640x640 letterbox), the longest edge for
        aspect-preserving ones (DETR).
        """
        if not self.image_size:
            return {}
        size = getattr(self._image_processor(), "size", None) or {}
        s = self.image_size
        if "height" in size and "width" in size:
            return {"size": {"height": s, "width": s}}
        if "longest_edge" in size or "shortest_edge" in size:
            return {"size": {"shortest_edge": s, "longest_edge": s}}
        return {"size": {"height": s, "width": s}}

    def detect(self, images: Sequence, queries: Sequence[Sequence[str]] | None = None) -> list[list[Detection]]:
        """Detections per image, after thresholding, clipping to the image, NMS and the ``max_boxes`` cap.

        Boxes smaller than one pixel after clipping are dropped. An open-vocabulary detector is run once
        per distinct list of names, over the images that share it.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images.
        queries : sequence of sequence of str or None, optional
            ``queries[i]``: the names to look for in image ``i`` (open vocabulary only; ignored otherwise).

        Returns
        -------
        list of list of Detection
            Per image, its detections, most confident first, boxes in pixels of the image.

        Raises
        ------
        InputError
            If an open-vocabulary detector is given no names, or not one list per image.
        """
        images = list(images)
        if self.open_vocab:
            if queries is None or len(queries) != len(images):
                raise InputError(f"detector {self.model_id}: an open-vocabulary detector needs names per image")
            out: list = [None] * len(images)
            groups: dict[tuple[str, ...], list[int]] = {}
            for i, q in enumerate(queries):
                groups.setdefault(tuple(q), []).append(i)
            for q, idx in groups.items():
                res = self._batched(lambda ims, q=q: self._open(ims, list(q)), [images[i] for i in idx])
                for i, r in zip(idx, res):
                    out[i] = r
            return out
        return self._batched(self._closed, images)

    def _batched(self, fn, images: list) -> list:
        import torch

        def chunk(a: int, b: int):
            with torch.inference_mode():
                return fn(images[a:b])

        parts, self.batch_size = run_halving_on_oom(chunk, len(images), self.batch_size, f"detector {self.model_id}")
        return [self._finish(dets, im) for part, ims in zip(parts, _chunks(images, parts)) for dets, im in zip(part, ims)]

    def _finish(self, dets: list[Detection], image) -> list[Detection]:
        w, h = image.size
        clipped = [Detection((max(0.0, min(w, d.box[0])), max(0.0, min(h, d.box[1])),
                              max(0.0, min(w, d.box[2])), max(0.0, min(h, d.box[3]))), d.label, d.score)
                   for d in dets if d.score >= self.threshold]
        clipped = [d for d in clipped if d.box[2] - d.box[0] >= 1 and d.box[3] - d.box[1] >= 1]
        return nms(clipped, self.nms_iou)[:self.max_boxes]

    def _closed(self, images: list) -> list[list[Detection]]:
        enc = self.processor(images=images, return_tensors="pt", **self._size_kwargs).to(self.device)
        outputs = self.model(**enc)
        sizes = [(im.size[1], im.size[0]) for im in images]
        res = self.processor.post_process_object_detection(outputs, threshold=self.threshold, target_sizes=sizes)
        names = self.model.config.id2label
        return [[Detection(tuple(float(v) for v in b), str(names.get(int(lab), lab)), float(s))
                 for s, lab, b in zip(r["scores"].tolist(), r["labels"].tolist(), r["boxes"].tolist())]
                for r in res]

    def _open(self, images: list, names: list[str]) -> list[list[Detection]]:
        if not names:
            return [[] for _ in images]
        grounding = "grounding" in self.model_type
        text = ". ".join(names) + "." if grounding else names
        enc = self.processor(images=images, text=[text] * len(images), return_tensors="pt", padding=True,
                             **self._size_kwargs).to(self.device)
        outputs = self.model(**enc)
        if self.model_type.startswith("owl"):
            # OWL-ViT/OWLv2 predict boxes on the image padded to a square at the bottom/right.
            sizes = [(max(im.size),) * 2 for im in images]
        else:
            sizes = [(im.size[1], im.size[0]) for im in images]
        post = self.processor.post_process_grounded_object_detection
        params = inspect.signature(post).parameters
        kwargs = {"threshold": self.threshold, "target_sizes": sizes}
        if "text_threshold" in params:
            kwargs["text_threshold"] = self.threshold
        if "input_ids" in params and "input_ids" in enc:
            kwargs["input_ids"] = enc["input_ids"]
        if "text_labels" in params:
            kwargs["text_labels"] = [names] * len(images)
        res = post(outputs, **kwargs)
        out = []
        for r in res:
            labels = r.get("text_labels")
            if labels is None:
                labels = [i if isinstance(i, str) else names[int(i)] for i in r["labels"]]
            out.append([Detection(tuple(float(v) for v in b), str(lab) or "object", float(s))
                        for s, lab, b in zip(r["scores"].tolist(), labels, r["boxes"].tolist())])
        return out


def _chunks(items: list, parts: list) -> list[list]:
    out, i = [], 0
    for p in parts:
        out.append(items[i:i + len(p)])
        i += len(p)
    return out


def load_detector(model: str, device: str | None = None, *, owner: str = "detector", **kwargs) -> Detector:
    """The detector ``model`` (hub id, optionally ``@REVISION``, or a local folder).

    Parameters
    ----------
    model : str
        Hub id (default of FineEval: :data:`DEFAULT_DETECTOR`), ``ID@REVISION`` or a local folder.
    device : str or None, optional
        The torch device; None picks one.
    owner : str, default "detector"
        The metric spec named in error messages.
    **kwargs
        ``threshold``, ``nms_iou``, ``image_size``, ``max_boxes``, ``batch_size`` (see :class:`Detector`).

    Returns
    -------
    Detector
        The loaded detector.
    """
    rev = None
    if "@" in model and not model.startswith((".", "/", "~")):
        model, _, rev = model.rpartition("@")
    spec = Spec(owner, "detector", model, rev)
    return Detector(check_model_id(spec), spec, resolve_device(device), revision=rev, **kwargs)
