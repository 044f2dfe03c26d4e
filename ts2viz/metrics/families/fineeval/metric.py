"""The T2I-FineEval metric (:class:`FineEval`), its LLM decomposition source and :func:`build`."""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...backbones.detect import CONFIDENCE, DEFAULT_DETECTOR, NMS_IOU, Detector, load_detector
from ...backbones.llm import load_llm
from ...backbones.vqa.loader import load_vqa_model
from ...backbones.vqa.model import VQAModel
from ...common.base import Metric
from ...common.llmcache import cached_reply
from ...common.llmquestions import LLMQuestionsMetric, require_generator
from ...common.spec import Spec
from .questions import COARSE_RULES, DECOMPOSE_SYSTEM, SPACY_MODEL, CoarseQuestions, Decomposition, parse_decomposition
from .regions import GROW, RELATION_BOXES, TOP_PAIRS, WHOLE_IMAGE, candidates, crop_resized
from .scoring import (ANSWER_SCORES, LAVIS_IMAGE_SIZE, WEIGHTINGS, final_score, fine_score, lavis_question,
                      lavis_yes_score)

#: detections kept per image: the original's YOLOv9 ``detect.run(max_det=1000)`` (``evaluation.py``)
YOLO_MAX_DET = 1000
PROMPTS_ID = "ts2viz-fineeval-v1:" + hashlib.sha1(DECOMPOSE_SYSTEM.encode()).hexdigest()[:12]


class FineEvalQuestions:
    """A prompt's decomposition from an LLM (replies cached on disk, results memoised per prompt).

    Parameters
    ----------
    llm : ChatLLM
        The decomposing LLM.
    use_cache : bool, default True
        Read and write the LLM reply cache.
    """

    def __init__(self, llm, use_cache: bool = True):
        self.llm = llm
        self.use_cache = use_cache
        self._memo: dict[str, Decomposition] = {}

    @property
    def config(self) -> dict:
        """The generator's config and the prompts' identity."""
        return {"generator": self.llm.config, "prompts": PROMPTS_ID}

    def get(self, prompt: str) -> Decomposition:
        """The decomposition of ``prompt`` (entities and questions).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.

        Returns
        -------
        Decomposition
            What :func:`.questions.parse_decomposition` reads from the LLM's reply.
        """
        if prompt not in self._memo:
            self._memo[prompt] = cached_reply(self.llm, DECOMPOSE_SYSTEM, f"Prompt: {prompt}", parse_decomposition,
                                              use_cache=self.use_cache)
        return self._memo[prompt]


class FineEval(LLMQuestionsMetric):
    """T2I-FineEval over a :class:`VQAModel`, a :class:`Detector` and an LLM decomposition.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    vqa : VQAModel
        The VQA model giving yes scores.
    detector : Detector
        The object detector.
    questions : FineEvalQuestions
        Gives each prompt's decomposition.
    grow, top_pairs, whole_image, weighting, batch_size, list_choices, relation_boxes, answer_score, lowercase
        As the family's card describes the options of the same names (:data:`.card.CARD`).
    coarse : CoarseQuestions or None, optional
        The coarse-question rule (default: the code's).

    Raises
    ------
    InputError
        If ``answer_score=lavis_rank`` is asked of a model that cannot rank answers (not BLIP-VQA).
    """

    name = "fineeval"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, detector: Detector, questions: FineEvalQuestions, *,
                 grow: float = GROW, top_pairs: int = TOP_PAIRS, whole_image: str = "always",
                 weighting: str = "mean", batch_size: int | None = None, list_choices: bool | None = None,
                 relation_boxes: str = "code", coarse: CoarseQuestions | None = None,
                 answer_score: str | None = None, lowercase: bool = True):
        #: the questions lower-cased before they are asked and parsed by spaCy (the original's ``parse_output``)
        self.lowercase = bool(lowercase)
        self.detector = detector
        self.grow = float(grow)
        self.top_pairs = int(top_pairs)
        self.whole_image = whole_image
        self.weighting = weighting
        self.relation_boxes = relation_boxes
        self.coarse = coarse or CoarseQuestions("code")
        ranks = hasattr(vqa, "rank_answers")
        self.answer_score = answer_score or ("lavis_rank" if ranks else "first_token")
        if self.answer_score == "lavis_rank" and not ranks:
            raise InputError(f"metric {spec.raw!r}: answer_score=lavis_rank needs a BLIP-VQA model; "
                             "use answer_score=first_token")
        config = {"detector": detector.config, "grow": self.grow, "grow_rule": "code", "top_pairs": self.top_pairs,
                  "whole_image": whole_image, "weighting": weighting,
                  "relation_boxes": relation_boxes, **self.coarse.config, "answer_score": self.answer_score,
                  "lowercase_questions": self.lowercase,
                  "vqa_image_size": getattr(vqa, "image_size", None),
                  "score": "(fine + coarse) / 2"}
        # Chat VLMs are told to answer yes or no (list_choices=None); BLIP-VQA and PaliGemma take the bare question.
        super().__init__(spec, vqa, questions, list_choices, config, batch_size or 2)

    def ask(self, question: str) -> str:
        """The text put to the VQA model for a question.

        Parameters
        ----------
        question : str
            The question.

        Returns
        -------
        str
            LAVIS' processed question under ``answer_score=lavis_rank``; else the question, followed by
            "Answer yes or no." when the choices are listed.
        """
        if self.answer_score == "lavis_rank":
            return lavis_question(question)
        return f"{question} Answer yes or no." if self.list_choices else question

    def yes_scores(self, images: Sequence, questions: Sequence[str]) -> np.ndarray:
        """The yes score of each (crop, question) pair under :attr:`answer_score`.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The crops.
        questions : sequence of str
            One question text per crop.

        Returns
        -------
        numpy.ndarray
            One yes score per pair (:func:`.scoring.lavis_yes_score` or the VQA model's yes probability).
        """
        if not images:
            return np.zeros(0)
        if self.answer_score == "lavis_rank":
            ranked = self.vqa.rank_answers(images, questions, ["yes", "no"])
            return np.array([lavis_yes_score(r[0], r[1]) for r in ranked])
        return self.vqa.yes_probability(images, questions)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """T2I-FineEval's scores of a batch of images with their prompts.

        Each question is asked on each of its candidates (the best yes score is its fine score) and on the
        whole image (its coarse question; the coarse score).

        Parameters
        ----------
        items : sequence of PIL.Image.Image
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image, :func:`.scoring.final_score`; detections, candidates and per-question
            scores are in ``self.last_details``.
        """
        decs = [self.questions.get(p) for p in prompts]
        detections = self.detector.detect(items, [list(d.entities) for d in decs] if self.detector.open_vocab else None)
        pair_images, pair_questions = [], []
        index: dict[tuple[int, tuple[int, int, int, int], str], int] = {}  # (image, region, text) -> pair

        def pair(i: int, region: tuple[int, int, int, int], image, text: str) -> int:
            # A region equal to the whole image gives the same pixels as the image (PIL's resize of a
            # same-size image is a copy), so identical (image, region, question) pairs are asked once.
            key = (i, region, text)
            if key not in index:
                index[key] = len(pair_images)
                pair_images.append(image)
                pair_questions.append(text)
            return index[key]

        layouts = []
        for i, (im, dec, dets) in enumerate(zip(items, decs, detections)):
            cands, ent, rel = candidates(dets, im.size, grow=self.grow, top_pairs=self.top_pairs,
                                         whole_image=self.whole_image, relation_boxes=self.relation_boxes)
            whole = cands[0].region
            crops = {whole: im}
            per_q = []
            for k, (kind, text) in enumerate(dec.questions):
                if self.lowercase:   # parse_output: line.strip().lower() for every line of the LLM's reply
                    text = text.lower()
                use = ent if kind == "entity" else rel
                fine_text = self.ask(text)
                coarse_text = self.coarse(text)
                rows = []
                for c in use:
                    region = cands[c].region
                    if region not in crops:
                        crops[region] = crop_resized(im, region)
                    rows.append(pair(i, region, crops[region], fine_text))
                per_q.append((use, rows, coarse_text, pair(i, whole, im, self.ask(coarse_text))))
            layouts.append((cands, per_q))
        probs = self.yes_scores(pair_images, pair_questions)
        scores = np.full(len(items), np.nan)
        details = []
        for i, (dec, dets, (cands, per_q)) in enumerate(zip(decs, detections, layouts)):
            recs, fine_e, fine_r, coarse = [], [], [], []
            for (kind, text), (use, rows, coarse_text, c_row) in zip(dec.questions, per_q):
                if self.lowercase:   # the question as asked (see above)
                    text = text.lower()
                p = [float(probs[r]) for r in rows]
                best = int(np.argmax(p))
                c0 = float(probs[c_row])
                (fine_e if kind == "entity" else fine_r).append(p[best])
                coarse.append(c0)
                recs.append({"question": text, "kind": kind, "candidates": list(use), "probabilities": p,
                             "best": use[best], "fine": p[best], "coarse_question": coarse_text, "coarse": c0})
            fine = fine_score(fine_e, fine_r, self.weighting)
            coarse_s = float(np.mean(coarse)) if coarse else float("nan")
            scores[i] = final_score(fine, coarse_s)
            details.append({"image_size": list(items[i].size), "entities": list(dec.entities),
                            "detections": [d.record() for d in dets], "candidates": [c.record() for c in cands],
                            "questions": recs, "fine": fine, "coarse": coarse_s, "weighting": self.weighting})
        self.last_details = details
        return scores


def _number(spec: Spec, name: str, value, lo: float, hi: float, integer: bool = False):
    try:
        v = int(value) if integer else float(value)
        if integer and float(value) != v:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"metric {spec.raw!r}: {name} must be {'an integer' if integer else 'a number'}, "
                         f"not {value!r}") from None
    if not lo <= v <= hi:
        raise InputError(f"metric {spec.raw!r}: {name} must lie in [{lo}, {hi}], not {value!r}")
    return v


def build(spec: Spec, device: str | None = None, *, generator: str | None = None, generator_model: str | None = None,
          api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY", detector: str = DEFAULT_DETECTOR,
          confidence: float = CONFIDENCE, nms_iou: float = NMS_IOU, image_size: int | None = None,
          max_boxes: int = YOLO_MAX_DET, grow: float = GROW, top_pairs: int = TOP_PAIRS, whole_image: str = "always",
          weighting: str = "mean", batch_size: int | None = None, pair_batch_size: int | None = None,
          detector_batch_size: int | None = None, dtype: str | None = None, template: str | None = None,
          list_choices: bool | None = None, llm_cache: bool = True, relation_boxes: str = "code",
          coarse: str = "code", spacy_model: str = SPACY_MODEL, answer_score: str | None = None,
          vqa_image_size: int | None = None, lowercase: bool = True, **options) -> Metric:
    """The ``fineeval:`` metric of ``spec``: ``fineeval:VQA_MODEL?generator=URL|hf:MODEL&detector=MODEL&...``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the VQA model.
    device : str or None, optional
        The torch device; None picks one.
    generator, generator_model, api_key, api_key_env, detector, confidence, nms_iou, image_size, max_boxes, grow, top_pairs, whole_image, weighting, batch_size, pair_batch_size, detector_batch_size, dtype, template, list_choices, llm_cache, relation_boxes, coarse, spacy_model, answer_score, vqa_image_size, lowercase
        The family's options; their meaning is on the family's card (:data:`.card.CARD`).
    **options
        Any other option: refused.

    Returns
    -------
    Metric
        A :class:`FineEval`.

    Raises
    ------
    InputError
        For an unknown option, no ``generator``, a value out of range or not accepted, ``vqa_image_size``
        with a model other than BLIP-VQA, a missing spaCy pipeline, or a model that cannot be loaded.
    """
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    require_generator(spec, generator, "T2I-FineEval decomposes prompts")
    conf = _number(spec, "confidence", confidence, 0.0, 1.0)
    iou = _number(spec, "nms_iou", nms_iou, 0.0, 1.0)
    size = None if image_size in (None, "", 0) else _number(spec, "image_size", image_size, 16, 4096, True)
    boxes = _number(spec, "max_boxes", max_boxes, 0, 10000, True)
    if not isinstance(lowercase, bool):
        raise InputError(f"metric {spec.raw!r}: lowercase must be true or false, not {lowercase!r}")
    grow_v = _number(spec, "grow", grow, 0.0, 10.0)
    top = _number(spec, "top_pairs", top_pairs, 0, 1000, True)
    if whole_image not in WHOLE_IMAGE:
        raise InputError(f"metric {spec.raw!r}: whole_image must be one of {', '.join(WHOLE_IMAGE)}")
    if weighting not in WEIGHTINGS:
        raise InputError(f"metric {spec.raw!r}: weighting must be one of {', '.join(WEIGHTINGS)}")
    if relation_boxes not in RELATION_BOXES:
        raise InputError(f"metric {spec.raw!r}: relation_boxes must be one of {', '.join(RELATION_BOXES)}")
    if coarse not in COARSE_RULES:
        raise InputError(f"metric {spec.raw!r}: coarse must be one of {', '.join(COARSE_RULES)}")
    if answer_score not in (None, "", *ANSWER_SCORES):
        raise InputError(f"metric {spec.raw!r}: answer_score must be one of {', '.join(ANSWER_SCORES)}")
    coarse_q = CoarseQuestions(coarse, str(spacy_model))
    if coarse != "same":
        coarse_q.nlp  # fail before any model is loaded when spaCy or its pipeline is missing
    vqa_size = None if vqa_image_size is None else _number(spec, "vqa_image_size", vqa_image_size, 0, 4096, True)
    llm = load_llm(str(generator), model=generator_model, api_key=api_key, api_key_env=api_key_env, device=device)
    det = load_detector(str(detector), device, owner=spec.raw, threshold=conf, nms_iou=iou, image_size=size,
                        max_boxes=boxes, batch_size=detector_batch_size or 8)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    if hasattr(vqa, "image_size"):  # BLIP-VQA: LAVIS preprocessing at 480 px unless vqa_image_size=0
        vqa.image_size = LAVIS_IMAGE_SIZE if vqa_size is None else (vqa_size or None)
    elif vqa_size:
        raise InputError(f"metric {spec.raw!r}: vqa_image_size applies to BLIP-VQA models only")
    return FineEval(spec, vqa, det, FineEvalQuestions(llm, bool(llm_cache)), grow=grow_v, top_pairs=top,
                    whole_image=whole_image, weighting=weighting, batch_size=batch_size, list_choices=list_choices,
                    relation_boxes=relation_boxes, coarse=coarse_q, answer_score=answer_score or None,
                    lowercase=lowercase)


#: the options :func:`build` takes beyond its keyword parameters (none: ``**options`` only catches typos)
build.extra_options = ()
