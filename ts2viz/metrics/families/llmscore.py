r"""LLMScore (Lu et al., NeurIPS 2023; YujieLu10/LLMScore): an LLM rates a visual description of the image.

The original's pipeline (``llm_score.py``), step by step, and what ts2viz runs:

1. **global description**: a caption of the whole image (the original: BLIP-2 OPT-2.7b,
   ``generate`` with no text prompt). ts2viz: ``captioner=MODEL``, any image-to-text model
   (:class:`ts2viz.metrics.backbones.judge.Captioner`: BLIP-2 exactly so; a chat VLM is asked ``caption_prompt``);
2. **local description**: dense captions with boxes, ``"<caption>: [x0, y0, x1, y1]; "`` per region
   (the original: GRiT's DenseCap, confidence >= 0.5). ts2viz: ``detector=MODEL``, a closed-set
   detector of :mod:`ts2viz.metrics.backbones.detect` at confidence 0.5, written in the same format with the class name as the
   region's text (GRiT needs detectron2 and is not a transformers model); no detector: an empty local
   description;
3. **visual description**: the LLM merges both, with the image's size, into one paragraph
   (newlines replaced by spaces);
4. **evaluation**: the LLM, given ``Text Prompt: ...\nImage Description: ...`` and the evaluation
   instruction, replies four lines: the overall rating (1-100), the number of composition errors
   (0-9; a missing object category counts 4), and a rationale for each.

Which number is the score (``score=``): ``overall`` (default; higher is better) or
``error_counting`` (a count of errors: **lower is better**, declared so in the scores file). Both
ratings and both rationales are kept in the details.

Why the TS2 release's two LLMScore columns are both lower-is-better: ``llmscore_ec`` is this error
count, lower-is-better by construction. ``llmscore_over`` holds integers 0-5 that grow with a node's
error count (mean 0.61 at 0 errors, 4.67 at 5), not the original's 1-100 rating: it is not on the
original's scale, and its direction says it counts problems too. ts2viz follows the original: the
overall rating is 1-100, higher is better.

The prompts: LLMScore's repository has no licence, so its instruction texts cannot be copied here.
:data:`DESCRIBE_INSTRUCTION` and :data:`EVALUATION_INSTRUCTION` are ts2viz's own wording of the same
requests (same fields, scales, counting rule, order and output format ``X1\nX2\nZ1\nZ2``); the
framing around them (``Global Description:``, ``Local Description:``, ``The image resolution
is:{W}X{H}``, ``Text Prompt:``, ``Image Description:``) is the original's structure.

A reply is read as the original reads it: empty lines dropped, the first four lines are overall,
error count, overall rationale, error-count rationale. A reply with fewer than four lines (the
original's unpacking fails; TS2's script stored -1) or whose chosen rating is not a number gives
NaN, counted and warned about, with the reply in the details.
"""
from __future__ import annotations

import hashlib
import re
import warnings
from typing import Sequence

import numpy as np

from ...errors import InputError
from ..backbones.judge import (
    ENDPOINT_OPTIONS,
    Captioner,
    endpoint_option_cards,
    endpoint_options,
    load_text_judge,
)
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

_J = "tests/metrics/test_metrics_judges.py::"
_REF = "tests/metrics/reference/test_llmscore_reference.py::test_llmscore_requests_and_readings_equal_llmscores_own_code"

CARD = Card(
    summary=("LLMScore: a captioner (and optionally a detector) describe the image, an LLM writes a visual "
             "description from them, then rates the prompt against it: overall 1–100 (`score=overall`, higher is "
             "better) or the number of composition errors 0–9 (`score=error_counting`, lower is better)."),
    paper=("Y. Lu, X. Yang, X. Li, X. E. Wang, W. Y. Wang. LLMScore: Unveiling the Power of Large Language Models "
           "in Text-to-Image Synthesis Evaluation. NeurIPS 2023. https://arxiv.org/abs/2305.11116"),
    citation="""@inproceedings{lu2023llmscore,
  title     = {{LLMScore}: Unveiling the Power of Large Language Models in Text-to-Image Synthesis Evaluation},
  author    = {Lu, Yujie and Yang, Xianjun and Li, Xiujun and Wang, Xin Eric and Wang, William Yang},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2023}
}""",
    original="YujieLu10/LLMScore (BLIP-2 captions, GRiT dense captions, its description and evaluation prompts).",
    fixture=('`tests/fixtures/reference/judges/llmscore/`: YujieLu10/LLMScore 8b898e3 '
             '(`VisualDescriptor`, `EvaluationInstructor`, openai 0.28) against a local endpoint with'
             ' recorded replies; GRiT and BLIP-2 not run. Image modes: not compared (a non-RGB image '
             "is read by ts2viz's `as_rgb`)."),
    output_range="overall: [1, 100]; error_counting: [0, 9]",
    higher_is_better=None,
    # the original's BLIP-2 captioner is Blip2ForConditionalGeneration.from_pretrained(torch_dtype=torch.float16)
    # (llm_descriptor/global_descriptor.py); its Vicuna ran behind FastChat's server, which loads float16 too
    precision="float16",
    options=(
        Option("endpoint", None, "The base URL of an OpenAI-compatible endpoint serving LLM (`gpt-4`, the "
               "original's default); without it, LLM is a local causal LLM (hub id or folder, greedy)."),
        Option("captioner", None, "Required: the image-to-text model of the global description (e.g. "
               "`Salesforce/blip2-opt-2.7b`, the original's), hub id or folder."),
        Option("detector", None, "Optional closed-set transformers detector of the local description (confidence "
               "0.5, e.g. `PekingU/rtdetr_r50vd_coco_o365`); none: no local description."),
        Option("score", "overall", "`overall` (the 1–100 rating, higher is better) or `error_counting` (the error "
               "count, **lower is better**, declared so in the scores file).", ("overall", "error_counting")),
        Option("caption_prompt", "", "The question a chat VLM captioner is asked (BLIP-2 is called without one)."),
        Option("caption_tokens", 30, "New tokens of the caption."),
        Option("max_new_tokens", 512, "New tokens of a local LLM's replies."),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        *endpoint_option_cards(),
    ),
    fidelity=(
        Fidelity("global description",
                 "any image-to-text model; a model without a chat template (BLIP-2) is called exactly so, greedy, "
                 "`caption_tokens` (30) new tokens; a chat VLM is asked `caption_prompt`", "as the original",
                 "captioner", f"{_J}test_llmscore_blip2_caption_and_detector_local_description",
                 original="BLIP-2 OPT-2.7b, `generate(**processor(images=image))`, no text prompt, default "
                 "generation length"),
        Fidelity("global description (length, other captioners)", "`caption_tokens` new tokens; other captioners",
                 "documented difference", "caption_tokens",
                 f"{_J}test_llmscore_blip2_caption_and_detector_local_description"),
        Fidelity("local description",
                 "a closed-set transformers detector at confidence 0.5 (class-wise NMS 0.45, at most 30 boxes), "
                 "the class name as the region's text, the same format; none without `detector` (GRiT is not a "
                 "transformers model)", "documented difference", "detector",
                 f"{_J}test_llmscore_blip2_caption_and_detector_local_description, "
                 f"{_J}test_llmscore_local_description_format_and_options",
                 original="GRiT dense captions (detectron2), confidence 0.5, `\"caption: [x0, y0, x1, y1]; \"`"),
        Fidelity("visual description prompt",
                 "the same framing and post-processing; the instruction in ts2viz's own words (the repository has "
                 "no licence); the framing, the request's fields and the description passed on equal what LLMScore's "
                 "own `VisualDescriptor` sent and returned (run from its checkout, commit 8b898e3, against a local "
                 "endpoint with recorded replies: `tools/reference/judges/llmscore.py`)", "documented difference", "",
                 f"{_J}test_llmscore_differential_per_image, {_REF}",
                 original="`Global Description / Local Description / The image resolution is:{W}X{H}` + an "
                 "instruction; reply's newlines → spaces"),
        Fidelity("evaluation prompt",
                 "the same framing, fields, scales, rule, order and format in ts2viz's words; one user message "
                 "(framing and request fields equal `EvaluationInstructor`'s, shown on the fixture)",
                 "documented difference", "",
                 f"{_J}test_llmscore_instruction_keeps_the_original_structure, {_J}test_llmscore_differential_per_image, "
                 f"{_REF}",
                 original="`Text Prompt: …\\nImage Description: …\\n` + evaluation instruction 1 (X1 overall 1–100, "
                 "X2 errors 0–9, missing category = 4 errors, Z1, Z2, format `X1\\nX2\\nZ1\\nZ2`), one user message"),
        Fidelity("reply → ratings", "the same split; a rating is read as a plain number (equal to what "
                 "`EvaluationInstructor.generate_score_with_rationale` returned on the fixture's replies: blank "
                 "lines, extra lines, padded numbers)", "as the original", "",
                 f"{_J}test_llmscore_differential_per_image, {_REF}",
                 original="empty lines dropped, first four lines = overall, error count, two rationales (strings)"),
        Fidelity("unreadable reply",
                 "NaN, counted, warned, reply kept; a chosen rating that is not a plain number is NaN too",
                 "documented difference", "", f"{_J}test_llmscore_differential_per_image, {_REF}",
                 original="fewer than four lines: unpacking fails (TS2's script stored −1)"),
        Fidelity("score and direction",
                 "`score=overall` (default, ↑) or `score=error_counting` (↓, declared in the scores file)",
                 "as the original", "score",
                 f"{_J}test_llmscore_differential_per_image, {_J}test_score_cli_to_leaderboard_with_details",
                 original="returns both; overall higher is better, error count lower is better"),
        Fidelity("precision",
                 "float16 on a GPU for the captioner and a local LLM (the card's precision, recorded in the config's "
                 "`dtype`); the detector stays float32, as GRiT's detectron2 predictor; float32 on CPU",
                 "as the original", "",
                 "tests/metrics/test_llmscore_precision.py::test_llmscore_loads_its_models_in_the_originals_float16",
                 original="`Blip2ForConditionalGeneration.from_pretrained(\"Salesforce/blip2-opt-2.7b\", "
                 "torch_dtype=torch.float16)`, inputs cast to float16 (`llm_descriptor/global_descriptor.py`); GRiT "
                 "through detectron2's `DefaultPredictor` in float32; GPT-4 behind its API"),
        Fidelity("LLM", "any OpenAI-compatible endpoint or a local causal LLM (greedy)", "as the original",
                 "endpoint", f"{_J}test_llmscore_differential_per_image",
                 original="GPT-4 (default), GPT-3.5, Vicuna via an OpenAI-compatible server"),
    ),
    limitations=(
        "The TS2 release's `llmscore_over` column is not the original's overall rating: it holds integers 0–5 "
        "(the original asks for 1–100) that grow with a node's error count (mean 0.61 on 0-error images, 4.67 on "
        "5-error images), another count of problems whose computation the TS2 code does not show. ts2viz "
        "follows the original: `overall` is the 1–100 rating, higher is better; the bundled `LLMScore-Over` "
        "column keeps the release's direction. `llmscore_ec` is the error count, lower is better by "
        "construction, in the original too.",
        "A reply that cannot be read is never scored 0: the image gets NaN, the reply is kept in its details, "
        "and each batch warns how many replies could not be read (`metric.unparsed` counts them).",
    ),
    description="""A global description (a caption of the whole image), a local description
(`label: [x0, y0, x1, y1]; ` per detected region), the LLM's one-paragraph visual description of both, then the
LLM's four-line evaluation: overall rating (1–100), number of composition errors (0–9; a missing object
category counts 4), and a rationale for each. Both ratings and rationales are in the details either way, with
the caption, the detections and the description that was rated (the app's *Questions* tab shows them).

```bash
ts2viz score --metric "llmscore:gpt-4?endpoint=https://api.openai.com/v1&captioner=Salesforce/blip2-opt-2.7b&detector=PekingU/rtdetr_r50vd_coco_o365" \\
    --dataset path/to/ts2 --out llm.csv
```
""",
)

#: ts2viz's wording of LLMScore's description request (the original's text cannot be copied; see module doc)
DESCRIBE_INSTRUCTION = (
    "Using the global and local descriptions of the generated image above, write one detailed paragraph "
    "(no more than 10 sentences) describing the color, spatial position, shape, size and material of each "
    "object and the relationships between the objects. Give the positions of objects in words, not as numeric "
    "coordinates.")

#: ts2viz's wording of LLMScore's evaluation instruction 1 (overall + error counting)
EVALUATION_INSTRUCTION = (
    "\nCompare the image description with the text prompt and give 2 scores and 2 rationales that explain them "
    "(the word \"a\" in the text prompt means the number one):\n"
    "\nX1: The overall quality (scale: 1-100) of the image description as a match for the text prompt.\n"
    "\nX2: The number Y of composition errors (scale: 0-9) in the image description compared with the text "
    "prompt. Count one error for every wrong number of an object, wrong color, location, shape, size or material "
    "of an object, and wrong relationship between objects. An object category of the text prompt that is "
    "missing from the description counts as 4 errors.\n"
    "\nZ1: A paragraph of fewer than 5 sentences, without separators, explaining the overall rating X1.\n"
    "\nZ2: A paragraph of fewer than 5 sentences, without separators, explaining the error count Y.\n"
    "\nX1 and X2 are integers. Do not write titles such as \"X1\". The output format must be: \"X1\nX2\nZ1\nZ2\".\n")

SCORES = ("overall", "error_counting")


def local_description(detections) -> str:
    """The original's local description format: ``"<text>: [x0, y0, x1, y1]; "`` per region, integer pixels.

    Parameters
    ----------
    detections : sequence of Detection
        Detected regions, each with a ``label`` and a ``box`` (x0, y0, x1, y1 in pixels), as
        :mod:`ts2viz.metrics.backbones.detect` gives them.

    Returns
    -------
    str
        The regions in order, each as ``"label: [x0, y0, x1, y1]; "`` (coordinates truncated to integers);
        empty for no region.

    Examples
    --------
    >>> from types import SimpleNamespace as D
    >>> local_description([D(label="cat", box=(1.7, 2.0, 30.2, 40.9)), D(label="dog", box=(0, 0, 5, 5))])
    'cat: [1, 2, 30, 40]; dog: [0, 0, 5, 5]; '
    """
    return "".join(f"{d.label}: {[int(v) for v in d.box]}; " for d in detections)


def describe_prompt(global_desc: str, local_desc: str, width: int, height: int) -> str:
    """The description request: the original's framing around ts2viz's wording of its instruction.

    Parameters
    ----------
    global_desc : str
        The caption of the whole image.
    local_desc : str
        The regions (:func:`local_description`), possibly empty.
    width, height : int
        The image's size in pixels.

    Returns
    -------
    str
        ``Global Description:``, ``Local Description:`` and ``The image resolution is:{W}X{H}`` lines, then
        :data:`DESCRIBE_INSTRUCTION`.

    Examples
    --------
    >>> describe_prompt("a cat", "cat: [1, 2, 3, 4]; ", 512, 256).splitlines()[1:4]
    ['Global Description: a cat', 'Local Description: cat: [1, 2, 3, 4]; ', 'The image resolution is:512X256']
    """
    return (f"\nGlobal Description: {global_desc}\nLocal Description: {local_desc}\n"
            f"The image resolution is:{width}X{height}\n{DESCRIBE_INSTRUCTION}\n")


def evaluation_prompt(description: str, prompt: str) -> str:
    r"""The evaluation request (the original's ``f"Text Prompt: ...\nImage Description: ...\n{instruction}"``).

    Parameters
    ----------
    description : str
        The LLM's visual description of the image.
    prompt : str
        The text prompt the image was generated from.

    Returns
    -------
    str
        The request, ending with :data:`EVALUATION_INSTRUCTION`.

    Examples
    --------
    >>> evaluation_prompt("A cat sits.", "a cat").splitlines()[:2]
    ['Text Prompt: a cat', 'Image Description: A cat sits.']
    """
    return f"Text Prompt: {prompt}\nImage Description: {description}\n{EVALUATION_INSTRUCTION}"


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _rating(line: str | None) -> float | None:
    if line is None:
        return None
    s = line.strip()
    return float(s) if _NUMBER.match(s) else None


def parse_reply(reply: str) -> dict:
    r"""The evaluator's reply as the original splits it: empty lines dropped, then the first four lines.

    Parameters
    ----------
    reply : str
        The evaluator LLM's reply.

    Returns
    -------
    dict
        ``lines`` (bool: four lines present), ``overall`` and ``error_counting`` (float, or None when the
        line is not a plain number or the lines are missing), ``overall_rationale`` and
        ``error_counting_rationale`` (str, empty when missing).

    Examples
    --------
    >>> r = parse_reply("85\n\n2\nMostly right.\nThe dog is missing.")
    >>> r["lines"], r["overall"], r["error_counting"], r["error_counting_rationale"]
    (True, 85.0, 2.0, 'The dog is missing.')
    >>> parse_reply("85")["overall"] is None
    True
    """
    lines = [ln for ln in str(reply).split("\n") if ln]
    four = len(lines) >= 4
    first = (lines + [None] * 4)[:4] if four else [None] * 4
    return {"lines": four, "overall": _rating(first[0]), "error_counting": _rating(first[1]),
            "overall_rationale": first[2] or "", "error_counting_rationale": first[3] or ""}


class LLMScore(Metric):
    """LLMScore: captioner (+ detector) -> LLM description -> LLM ratings with rationales.

    Built by :func:`build`; the steps are in the module docstring. The direction follows ``score``:
    ``overall`` is higher-is-better, ``error_counting`` lower-is-better. The config records the LLM,
    captioner and detector configs and a hash of ts2viz's instruction texts. ``unparsed`` counts the replies
    that could not be read so far.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec.
    llm : object
        The text judge (:func:`ts2viz.metrics.backbones.judge.load_text_judge`): ``read(prompts)`` gives one
        reply per prompt, ``config`` names it.
    captioner : Captioner
        Writes the global description.
    detector : object, optional
        A closed-set detector (:func:`ts2viz.metrics.backbones.detect.load_detector`) for the local
        description; None: an empty local description.
    score : str, optional
        ``overall`` or ``error_counting``: which rating is the score.
    batch_size : int or None, optional
        Images per call (default 4).
    """

    name = "llmscore"
    has_details = True

    def __init__(self, spec: Spec, llm, captioner: Captioner, detector=None, *, score: str = "overall",
                 batch_size: int | None = None):
        self.llm = llm
        self.captioner = captioner
        self.detector = detector
        self.score = score
        self.higher_is_better = score == "overall"
        config = {"family": "llmscore", "llm": llm.config, "captioner": captioner.config,
                  "detector": detector.config if detector is not None else None, "score": score,
                  "instructions": hashlib.sha1((DESCRIBE_INSTRUCTION + EVALUATION_INSTRUCTION).encode()).hexdigest()[:16]}
        super().__init__(spec, config, captioner.device, batch_size or 4)
        self.unparsed = 0

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """The chosen rating of each image for its prompt, with the whole pipeline's records in the details.

        Captions (and detects) each image, asks the LLM for one visual description per image (newlines
        replaced by spaces), then for the ratings, and reads each reply as the original does
        (:func:`parse_reply`). ``last_details`` holds, per image, the score, whether the reply was read,
        the reply, the global and local descriptions, the description, both ratings and rationales, and
        the chosen rating's name.

        Parameters
        ----------
        items : sequence of PIL.Image.Image
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 scores; NaN where the reply has fewer than four lines or the chosen rating is not a
            number (warned about, counted in ``unparsed``).
        """
        images, prompts = list(items), list(prompts)
        globals_ = self.captioner.caption(images)
        if self.detector is not None:
            locals_ = [local_description(d) for d in self.detector.detect(images)]
        else:
            locals_ = [""] * len(images)
        descs = self.llm.read([describe_prompt(g, l, *im.size) for g, l, im in zip(globals_, locals_, images)])
        descs = [d.strip().replace("\n", " ") for d in descs]
        replies = self.llm.read([evaluation_prompt(d, p) for d, p in zip(descs, prompts)])
        scores = np.full(len(images), np.nan)
        details, bad = [], 0
        for i, reply in enumerate(replies):
            r = parse_reply(reply)
            value = r[self.score]
            ok = r["lines"] and value is not None
            bad += not ok
            scores[i] = value if ok else np.nan
            details.append({"score": float(value) if ok else None, "parsed": ok, "reply": reply,
                            "global": globals_[i], "local": locals_[i], "description": descs[i],
                            "overall": r["overall"] if r["lines"] else None,
                            "error_counting": r["error_counting"] if r["lines"] else None,
                            "overall_rationale": r["overall_rationale"],
                            "error_counting_rationale": r["error_counting_rationale"], "chosen": self.score})
        if bad:
            self.unparsed += bad
            warnings.warn(f"{self.spec}: {bad} LLM {'reply' if bad == 1 else 'replies'} of {len(images)} could not be "
                          f"read as LLMScore's four lines with a numeric {self.score.replace('_', ' ')}; those images "
                          f"are NaN ({self.unparsed} so far; the replies are in the details)", stacklevel=2)
        self.last_details = details
        return scores


def build(spec: Spec, device: str | None = None, *, endpoint: str | None = None, captioner: str | None = None,
          detector: str | None = None, score: str = "overall", caption_prompt: str = "", caption_tokens: int = 30,
          max_new_tokens: int = 512, batch_size: int | None = None, **options) -> Metric:
    """``llmscore:LLM?captioner=MODEL[&detector=MODEL&score=overall|error_counting&endpoint=URL&...]``.

    LLM is a local causal LLM (hub id or folder) or, with ``endpoint=``, the model name at an
    OpenAI-compatible endpoint (``gpt-4``, as the original's default). ``captioner`` (required) writes the
    global description; ``detector`` (optional, closed-set) the local one.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device of the local models; None picks one.
    endpoint, captioner, detector, score, caption_prompt, caption_tokens, max_new_tokens, batch_size
        The family's options; their meaning is on the family's card (:data:`CARD`).
    **options
        The endpoint's options (:data:`ts2viz.metrics.backbones.judge.ENDPOINT_OPTIONS`: api_key, timeout,
        temperature ...).

    Returns
    -------
    LLMScore
        The metric.

    Raises
    ------
    InputError
        If an option is unknown or not accepted (``score``), ``captioner`` is missing, the detector is
        open-vocabulary, or a model cannot be loaded.
    """
    from ..registry import check_options

    check_options(spec, build, options)  # the registry's one check (metrics.load runs it too)
    kw = endpoint_options(options)
    score = str(score).lower()
    if score not in SCORES:
        raise InputError(f"metric {spec.raw!r}: score must be overall or error_counting, not {score!r}")
    if not captioner:
        raise InputError(f"metric {spec.raw!r}: LLMScore needs captioner=MODEL (an image-to-text model such as "
                         "Salesforce/blip2-opt-2.7b, the original's) for the global description")
    cap = Captioner(str(captioner), device, prompt=str(caption_prompt), max_new_tokens=int(caption_tokens),
                    owner=spec.raw)
    det = None
    if detector:
        from ..backbones.detect import load_detector

        det = load_detector(str(detector), device, owner=spec.raw, threshold=0.5)
        if det.open_vocab:
            raise InputError(f"metric {spec.raw!r}: detector {detector!r} is open-vocabulary; LLMScore's local "
                             "description needs a closed-set detector (e.g. PekingU/rtdetr_r50vd_coco_o365)")
    llm = load_text_judge(spec, device, endpoint=endpoint, max_new_tokens=int(max_new_tokens), endpoint_kw=kw)
    return LLMScore(spec, llm, cap, det, score=score, batch_size=batch_size)



#: options beyond the keyword parameters of :func:`build` (checked in one place, :func:`ts2viz.metrics.load`)
build.extra_options = ENDPOINT_OPTIONS

__all__ = ["LLMScore", "build", "parse_reply", "describe_prompt", "evaluation_prompt", "local_description",
           "DESCRIBE_INSTRUCTION", "EVALUATION_INSTRUCTION", "SCORES"]


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('llmscore',
                'LLMScore: an LLM rates a caption+detection description of the image (overall 1-100 or error count)',
                build, CARD, example='llmscore:gpt-4?endpoint=https://api.openai.com/v1&captioner=Salesforce/blip2-opt-2.7b', group='judge',
                display='LLMScore', details='ratings')
