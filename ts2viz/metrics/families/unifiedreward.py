r"""UnifiedReward 2.0 (Wang et al., 2025; CodeGoat24/UnifiedReward): a reward VLM rates the image 1-5 per axis.

The authors' point-score request for image generation
(``inference_qwen/UnifiedReward-2.0-inference/point_score_ACS_image_generation.py``): one user message
whose content is the image (a base64 JPEG at quality 95, after ``convert("RGB")``), then
:data:`INSTRUCTION` with the caption in ``Text Caption: [...]``; the body is ``{"model", "messages",
"do_sample": false, "max_tokens": 4096}`` (``vllm_qwen/vllm_request.py``, ``VLMessageClient``). The
model, served by vLLM (``--served-model-name UnifiedReward``), replies three lines::

    Alignment Score (1-5): X
    Coherence Score (1-5): Y
    Style Score (1-5): Z

The score is the alignment line (``score=alignment``, the default: how well the image matches the
caption); ``coherence`` and ``style`` read the other two lines of the same reply. The authors' script
prints the reply and has no parser: :func:`parse_reply` is ts2viz's reading of that format (the number
after ``Alignment Score (1-5):``, integer or decimal, as in the script's example output). A reply
without the line gives NaN, counted and warned about as VIEScore's unreadable replies are, and is asked
once more when the judge samples.
"""
from __future__ import annotations

import hashlib
import math
import re
from typing import Sequence

import numpy as np

from ...errors import InputError
from ..backbones.judge import (
    ENDPOINT_OPTIONS,
    EndpointJudge,
    ask_until_read,
    endpoint_option_cards,
    endpoint_options,
    load_vision_judge,
)
from ..common.base import Metric
from ..common.judged import JudgedMetric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

_R = "tests/metrics/reference/test_unifiedreward_reference.py::"

#: the three axes of the reply, in its order (``score=`` picks one)
AXES = ("alignment", "coherence", "style")

# The instruction below is the authors' text, unchanged (CodeGoat24/UnifiedReward, MIT License,
# Copyright (c) 2025 Yibin Wang; the licence's full text: https://github.com/CodeGoat24/UnifiedReward/blob/main/LICENSE).
# The permission notice: "Permission is hereby granted, free of charge, to any person obtaining a copy of this
# software ... The above copyright notice and this permission notice shall be included in all copies or
# substantial portions of the Software." Only the text is taken; the code here is ts2viz's own.

#: the authors' instruction (``problem`` of ``point_score_ACS_image_generation.py``); ``{prompt}`` is the caption
INSTRUCTION = (
    "You are presented with a generated image and its associated text caption. "
    "Your task is to analyze the image across multiple dimensions in relation to the caption. Specifically:\n"
    "Provide overall assessments for the image along the following axes (each rated from 1 to 5):\n"
    "- Alignment Score: How well the image matches the caption in terms of content.\n"
    "- Coherence Score: How logically consistent the image is (absence of visual glitches, object distortions, etc.).\n"
    "- Style Score: How aesthetically appealing the image looks, regardless of caption accuracy.\n\n"
    "Output your evaluation using the format below:\n\n"
    "Alignment Score (1-5): X\n"
    "Coherence Score (1-5): Y\n"
    "Style Score (1-5): Z\n\n"
    "Your task is provided as follows:\n"
    "Text Caption: [{prompt}]"
)

#: the request body's fields besides model and messages (``VLMessageClient.process_item``'s payload)
EXTRA_BODY = {"do_sample": False}
MAX_TOKENS = 4096
JPEG_QUALITY = 95

CARD = Card(
    summary=("UnifiedReward 2.0: a reward VLM behind an OpenAI-compatible endpoint (vLLM) gets the image and the "
             "authors' point-score instruction, and replies an alignment, a coherence and a style score 1–5; the "
             "score is the alignment line (`score=alignment`)."),
    paper=("Y. Wang, Y. Zang, H. Li, C. Jin, J. Wang. Unified Reward Model for Multimodal Understanding and "
           "Generation. 2025. https://arxiv.org/abs/2503.05236"),
    citation="""@article{wang2025unified,
  title   = {Unified Reward Model for Multimodal Understanding and Generation},
  author  = {Wang, Yibin and Zang, Yuhang and Li, Hao and Jin, Cheng and Wang, Jiaqi},
  journal = {arXiv preprint arXiv:2503.05236},
  year    = {2025}
}""",
    original=("CodeGoat24/UnifiedReward (commit ff6f520): `inference_qwen/UnifiedReward-2.0-inference/"
              "point_score_ACS_image_generation.py` (the instruction) and `vllm_qwen/vllm_request.py` "
              "(`VLMessageClient`: the request); the model `CodeGoat24/UnifiedReward-2.0-qwen3vl-8b` (or "
              "`-qwen35-9b`) served by vLLM as `UnifiedReward`."),
    fixture=('`tests/fixtures/reference/judges/unifiedreward/`: CodeGoat24/UnifiedReward ff6f520 '
             '(`point_score_ACS_image_generation.py` through `VLMessageClient`) against a local '
             'endpoint with recorded replies. Image modes: not compared (a non-RGB image is read by '
             "ts2viz's `as_rgb`)."),
    output_range="[1, 5]",
    higher_is_better=True,
    options=(
        Option("endpoint", None, "The base URL of an OpenAI-compatible endpoint serving MODEL (the authors' vLLM "
               "server: `http://localhost:8080/v1`, MODEL `UnifiedReward`); without it, MODEL is a local "
               "generative VLM of the registry (not the authors' setup)."),
        Option("score", "alignment", "Which line of the reply is the score: `alignment` (how well the image "
               "matches the caption), `coherence` or `style`; all three are kept in the details.", AXES),
        Option("retries", 1, "An unreadable reply is asked once more (only for a judge that samples), as "
               "VIEScore's `max_tries`."),
        Option("max_new_tokens", 512, "New tokens of a local judge's reply."),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        Option("pair_batch_size", None, "Requests per local judge call. Speed only."),
        Option("dtype", None, "Compute dtype of a local judge on GPU: `float32`, `float16` or `bfloat16`.",
               ("float32", "float16", "bfloat16")),
        *endpoint_option_cards(MAX_TOKENS, f" (default {MAX_TOKENS}, the authors' client's)"),
    ),
    fidelity=(
        Fidelity("request (endpoint)", "the same body: one user message, the image then the instruction, the "
                 "same JPEG bytes, `do_sample: false`, `max_tokens: 4096`", "as the original", "max_tokens",
                 _R + "test_unifiedreward_request_and_reply_equal_the_authors_client",
                 original="`VLMessageClient.build_messages` + `process_item`'s payload, run from the authors' "
                 "checkout against a local endpoint (`tools/reference/unifiedreward/make_fixture.py`)"),
        Fidelity("prompt template", "the authors' instruction, the caption in `Text Caption: [...]`",
                 "as the original", "",
                 _R + "test_unifiedreward_request_and_reply_equal_the_authors_client",
                 original="`problem` of `point_score_ACS_image_generation.py`"),
        Fidelity("reply → score", "the number after `Alignment Score (1-5):` (integer or decimal); `score=` "
                 "reads the coherence or style line instead", "not in the original", "score",
                 _R + "test_unifiedreward_reads_the_three_lines_of_each_reply",
                 original="none: the script prints the reply (`model_output`); the scores expected in the "
                 "fixture are written with its replies, not computed by ts2viz"),
        Fidelity("unreadable reply", "NaN, counted, warned, the reply kept; asked once more when the judge "
                 "samples", "not in the original", "retries",
                 _R + "test_unifiedreward_reads_the_three_lines_of_each_reply",
                 original="none (the reply is printed)"),
        Fidelity("HTTP errors", "one try: an HTTP error is an error with the endpoint's message", "documented "
                 "difference", "", original="up to 10 tries with back-off (429, 5xx), then a failed item"),
        Fidelity("local VLM judge", "any registry VLM through its chat template (image first), greedy",
                 "documented difference", "max_new_tokens",
                 original="the authors serve their fine-tuned Qwen3-VL / Qwen3.5 with vLLM only"),
    ),
    limitations=(
        "The authors' reward model is a Qwen3-VL (or Qwen3.5) checkpoint with remote code; ts2viz does not load "
        "it locally: serve it with vLLM as the authors do and pass `endpoint=`. A local registry VLM gets the "
        "same instruction but is not UnifiedReward.",
        "A reply that cannot be read is never scored: the image gets NaN and the reply is kept in its details.",
    ),
    description="""`unifiedreward:UnifiedReward?endpoint=http://localhost:8080/v1` sends the authors' request to
their vLLM server (`vllm serve CodeGoat24/UnifiedReward-2.0-qwen3vl-8b --served-model-name UnifiedReward`).
Each image's three scores and the raw reply are kept in its details.
""",
)


def instruction(prompt: str) -> str:
    """The authors' point-score instruction for ``prompt``.

    Parameters
    ----------
    prompt : str
        The caption (the text-to-image prompt).

    Returns
    -------
    str
        :data:`INSTRUCTION` with the caption in ``Text Caption: [...]``.

    Examples
    --------
    >>> from ts2viz.metrics.families.unifiedreward import instruction
    >>> instruction("a red cat").splitlines()[-1]
    'Text Caption: [a red cat]'
    """
    return INSTRUCTION.replace("{prompt}", prompt)


_LINE = {a: re.compile(rf"{a}\s+score\s*\(1-5\)\s*:\s*\**\s*([-+]?\d+(?:\.\d+)?)", re.IGNORECASE) for a in AXES}


def parse_reply(reply: str) -> dict:
    r"""The three scores of a reply, each a float or None where its line is missing.

    Parameters
    ----------
    reply : str
        The judge's reply.

    Returns
    -------
    dict
        ``{"alignment": float or None, "coherence": ..., "style": ...}``: the first number after each
        ``<Axis> Score (1-5):``.

    Examples
    --------
    >>> from ts2viz.metrics.families.unifiedreward import parse_reply
    >>> parse_reply("Alignment Score (1-5): 2.69\nCoherence Score (1-5): 4\nStyle Score (1-5): 3")
    {'alignment': 2.69, 'coherence': 4.0, 'style': 3.0}
    >>> parse_reply("I cannot rate this.")["alignment"] is None
    True
    """
    out = {}
    for a in AXES:
        m = _LINE[a].search(reply) if isinstance(reply, str) else None
        v = float(m.group(1)) if m else None
        out[a] = v if v is not None and math.isfinite(v) else None
    return out


class UnifiedReward(JudgedMetric):
    """UnifiedReward 2.0's point score with a vision judge; details keep each reply and its three scores.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    judge : EndpointJudge or LocalVisionJudge
        The vision judge.
    score : str, default "alignment"
        The axis that is the score (one of :data:`AXES`).
    retries : int, default 1
        How many times an unreadable reply is asked for again (only when the judge samples).
    batch_size : int or None, optional
        Images per scoring call (default 4).
    """

    name = "unifiedreward"

    def __init__(self, spec: Spec, judge, *, score: str = "alignment", retries: int = 1,
                 batch_size: int | None = None):
        self.score = score
        config = {"family": "unifiedreward", "judge": judge.config, "score": score,
                  "instruction": hashlib.sha1(INSTRUCTION.encode()).hexdigest()[:16]}
        super().__init__(spec, judge, config, retries=retries, batch_size=batch_size)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """The judge's scores of a batch of images with their prompts.

        Parameters
        ----------
        items : sequence
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image (NaN where the reply has no line for the chosen axis); the replies
            and their three scores are in ``self.last_details``.
        """
        asked = ask_until_read(self.judge, list(items), [instruction(p) for p in prompts], parse_reply,
                               retries=self.retries, readable=lambda p: p[self.score] is not None)
        scores = np.array([np.nan if p[self.score] is None else p[self.score] for _, p, _ in asked], dtype=np.float64)
        self.last_details = [{"score": None if p[self.score] is None else p[self.score], "reply": r, "tries": t,
                              "parsed": p[self.score] is not None, **{f"{a}_score": p[a] for a in AXES}}
                             for r, p, t in asked]
        self.warn_unread(int(np.isnan(scores).sum()), len(asked), f"had no '{self.score.capitalize()} Score (1-5):' line")
        return scores


def build(spec: Spec, device: str | None = None, *, endpoint: str | None = None, score: str = "alignment",
          retries: int = 1, max_new_tokens: int = 512, batch_size: int | None = None,
          pair_batch_size: int | None = None, dtype: str | None = None, **options) -> Metric:
    """The ``unifiedreward:`` metric of ``spec``.

    ``unifiedreward:MODEL?endpoint=URL[&score=alignment|coherence|style&retries=1&...]``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the judge (the served model name at ``endpoint``).
    device : str or None, optional
        The torch device of a local judge; None picks one.
    endpoint, score, retries, max_new_tokens, batch_size, pair_batch_size, dtype
        The family's options; their meaning is on the family's card (:data:`CARD`).
    **options
        The endpoint options (:data:`ts2viz.metrics.backbones.judge.ENDPOINT_OPTIONS`); any other is refused.

    Returns
    -------
    Metric
        A :class:`UnifiedReward`.

    Raises
    ------
    InputError
        For an unknown option, a ``score`` not in :data:`AXES`, endpoint options without ``endpoint``, or a
        judge that cannot be loaded.
    """
    from ..registry import check_options

    check_options(spec, build, options)
    kw = endpoint_options(options)
    score = str(score).lower()
    if score not in AXES:
        raise InputError(f"metric {spec.raw!r}: score must be one of {', '.join(AXES)}, not {score!r}")
    if endpoint:
        kw.setdefault("max_tokens", MAX_TOKENS)
        judge = EndpointJudge(str(endpoint), spec.model, image_first=True, jpeg_quality=JPEG_QUALITY,
                              extra_body=EXTRA_BODY, **kw)
    else:
        judge = load_vision_judge(spec, device, endpoint=None, max_new_tokens=int(max_new_tokens), endpoint_kw=kw,
                                  dtype=dtype, batch_size=pair_batch_size)
    return UnifiedReward(spec, judge, score=score, retries=int(retries), batch_size=batch_size)


#: options beyond the keyword parameters of :func:`build` (checked in one place, :func:`ts2viz.metrics.load`)
build.extra_options = ENDPOINT_OPTIONS


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('unifiedreward',
                'UnifiedReward 2.0: a reward VLM behind an endpoint rates alignment, coherence and style 1-5 (the '
                'alignment line is the score)',
                build, CARD, example='unifiedreward:UnifiedReward?endpoint=http://localhost:8080/v1', group='judge',
                display='UnifiedReward')
