r"""VIEScore (Ku et al., 2024; TIGER-AI-Lab/VIEScore): a multimodal judge rates the image 0-10 with its reasoning.

For text-to-image the judge reads VIEScore's own prompt texts (:mod:`.prompts`, joined as its
``VIEScore`` class joins them: ``"\n".join([context, rule, aspect rule])``, ``<prompt>`` replaced by
the prompt) with the image and replies ``{"score": [...], "reasoning": "..."}``:

* **SC** (semantic consistency, the default ``aspect=sc``): one score, "the success in following the
  prompt"; the metric is the **minimum of the SC list** (``min(results['SC']['score'])``), 0-10, as
  ``VIEScore.evaluate`` computes it and as the TS2 release's ``viescore`` column holds it;
* ``aspect=pq``: perceptual quality, min of [naturalness, artifacts];
* ``aspect=overall``: ``sqrt(min(SC) * min(PQ))``, VIEScore's O score.

A reply is read by :func:`parse_reply`, which follows VIEScore's ``mllm_output_to_dict`` (delimited
JSON, then the outermost ``{...}``, then a bare ``[a, b]`` list or a bare integer, then its
``fix_json`` repair). Where VIEScore, having retried once, finally *guesses a random score*
(``give_up_parsing``), ts2viz gives the image NaN, records the reply and counts it (a warning per
batch and ``details["parsed"] = False``): an unreadable reply is never a score.

The judge: a local generative VLM (``viescore:llava-hf/llava-1.5-7b-hf``, greedy) or any model of an
OpenAI-compatible endpoint (``viescore:gpt-4o?endpoint=https://api.openai.com/v1``); see :mod:`ts2viz.metrics.backbones.judge`.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...backbones.judge import (
    ENDPOINT_OPTIONS,
    ask_until_read,
    endpoint_option_cards,
    endpoint_options,
    load_vision_judge,
)
from ...common.base import Metric
from ...common.judged import JudgedMetric
from ...common.spec import Spec
from ...family import Card, Family, Fidelity, Option
from . import prompts as P

_J = "tests/metrics/test_metrics_judges.py::"
_REF = "tests/metrics/reference/test_viescore_reference.py::test_viescore_requests_and_scores_equal_viescores_own_code"

CARD = Card(
    summary=("VIEScore: a multimodal judge gets VIEScore's own text-to-image prompt and the image, rates how well "
             "the image follows the prompt 0–10 with its reasoning, and the score is the minimum of the "
             "semantic-consistency scores (`SC_score`)."),
    paper=("M. Ku, D. Jiang, C. Wei, X. Yue, W. Chen. VIEScore: Towards Explainable Metrics for Conditional Image "
           "Synthesis Evaluation. ACL 2024. https://arxiv.org/abs/2312.14867"),
    citation="""@inproceedings{ku2024viescore,
  title     = {{VIEScore}: Towards Explainable Metrics for Conditional Image Synthesis Evaluation},
  author    = {Ku, Max and Jiang, Dongfu and Wei, Cong and Yue, Xiang and Chen, Wenhu},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics (ACL)},
  year      = {2024}
}""",
    original=("TIGER-AI-Lab/VIEScore: its text-to-image prompt files (MIT, shipped unchanged in "
              "`ts2viz/metrics/families/viescore/prompts.py`), `VIEScore.evaluate`, `mllm_output_to_dict`."),
    fixture=('`tests/fixtures/reference/judges/viescore/`: TIGER-AI-Lab/VIEScore 2cbea4e '
             '(`VIEScore(backbone="gpt4o", task="t2i")`) against a local endpoint with recorded '
             "replies. Image modes: not compared (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range="[0, 10]",
    higher_is_better=True,
    options=(
        Option("endpoint", None, "The base URL of an OpenAI-compatible endpoint serving MODEL; without it, MODEL "
               "is a local generative VLM (hub id or folder)."),
        Option("aspect", "sc", "`sc` (min of the semantic-consistency list, 0–10, VIEScore's `SC_score` and the TS2 "
               "release's `viescore` column), `pq` (perceptual quality: min of naturalness and artifacts) or "
               "`overall` (VIEScore's O = √(min SC × min PQ)).", ("sc", "pq", "overall")),
        Option("retries", 1, "VIEScore's `max_tries`: an unreadable reply is asked once more (only for a judge "
               "that samples)."),
        Option("max_new_tokens", 512, "New tokens of a local judge's reply (VIEScore's LLaVA wrapper: 512)."),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        Option("pair_batch_size", None, "Requests per local judge call. Speed only."),
        Option("dtype", None, "Compute dtype of a local judge on GPU: `float32`, `float16` or `bfloat16` "
               "(default: the card's precision, else bfloat16 where the GPU supports it, else float16; always "
               "float32 on CPU).", ("float32", "float16", "bfloat16")),
        *endpoint_option_cards(1400, " (default 1400, VIEScore's)"),
    ),
    fidelity=(
        Fidelity("prompt template", "the same texts, joined the same way", "as the original", "",
                 f"{_J}test_viescore_request_is_the_original_prompt_with_the_image, {_REF}",
                 original="`\"\\n\".join([_context_no_delimit, one_image_gen_rule, t2i_rule_SC])`, `<prompt>` replaced"),
        Fidelity("request (endpoint)", "the same bodies (SC and PQ texts, JPEG bytes, model, `max_tokens`) and key, "
                 "shown against VIEScore's own `VIEScore.evaluate` with its GPT-4o wrapper, run from its checkout "
                 "(commit 2cbea4e) against a local endpoint with recorded replies "
                 "(`tools/reference/judges/viescore.py`)", "as the original", "max_tokens",
                 f"{_J}test_viescore_request_is_the_original_prompt_with_the_image, {_REF}",
                 original="one user message: text, then the image as a base64 JPEG (PIL default quality), "
                 "`max_tokens=1400`, no temperature"),
        Fidelity("request (local VLM)", "any registry VLM through its transformers chat template (image first), "
                 "greedy, 512 new tokens", "documented difference", "max_new_tokens",
                 f"{_J}test_viescore_local_vlm_judge_matches_plain_transformers_generation",
                 original="LLaVA-1.5 via the LLaVA repo, `llava_v1` conversation (its system line), temperature "
                 "0.2, 512 new tokens; the library's other local judges (Idefics2, Mantis, MiniCPM-V) their own "
                 "formats"),
        Fidelity("reply → scores", "the same steps, same results (VIEScore's own `mllm_output_to_dict` on the "
                 "fixture's replies: JSON with text around it, delimiters, a bare list, a bare number, `fix_json`)",
                 "as the original", "",
                 f"{_J}test_viescore_parse_matches_original_on_every_reply_shape, {_REF}",
                 original="`mllm_output_to_dict`: delimiters, outermost `{…}`, bare `[a, b]`, bare integer 0–10, "
                 "`fix_json` repair"),
        Fidelity("unreadable reply",
                 "the unreadable request asked once more when the judge samples (greedy judges would repeat "
                 "themselves), then NaN, counted, warned, reply kept; PQ is asked only for `aspect=pq`/`overall` "
                 "(the SC score does not depend on it)", "documented difference", "retries",
                 f"{_J}test_viescore_retries_a_sampling_judge_once_then_nan, "
                 f"{_J}test_viescore_differential_per_image_and_unparsed_counted",
                 original="SC and PQ both asked once more, then a **random** score 0–10 (`give_up_parsing`); "
                 "a reply with `{…}` that neither `json.loads` nor `fix_json` reads (e.g. `{score: [6, 7], "
                 "reasoning: x}`) is asked again **forever** (`give_up_parsing` only applies without braces; "
                 "seen running `tools/reference/judges/viescore.py`)"),
        Fidelity("reply it parses but cannot score (no `score`, empty list, non-numbers)",
                 "NaN and counted (numeric strings such as `\"7\"` read as numbers)", "documented difference", "",
                 f"{_J}test_viescore_parse_matches_original_on_every_reply_shape",
                 original="crashes later in `min`, or computes with strings"),
        Fidelity("score", "`min(SC scores)`; `aspect=pq`, `aspect=overall` = √(min SC · min PQ)", "as the original",
                 "aspect",
                 f"{_J}test_viescore_differential_per_image_and_unparsed_counted, "
                 f"{_J}test_viescore_overall_is_sqrt_of_the_minima, {_REF}",
                 original="`min(SC scores)`, 0–10 (`extract_all_score`: `[SC, PQ, O]`)"),
        Fidelity("default judge", "none: the spec names the judge", "documented difference", "",
                 original="GPT-4o (library), GPT-4V / LLaVA etc. (paper); TS2 used 0-shot LLaVA-1.5"),
    ),
    limitations=(
        "A reply that cannot be read is never scored 0: the image gets NaN, the reply is kept in its details, "
        "and each batch warns how many replies could not be read (`metric.unparsed` counts them). Unreadable "
        "results are cached like any other (a re-run does not ask again; `--no-cache` does).",
    ),
    description="""The judge gets VIEScore's own text-to-image prompt (its prompt files are MIT-licensed and
come in unchanged, with the licence, in `ts2viz/metrics/families/viescore/prompts.py`) and the image, and
replies `{"score": [...], "reasoning": "..."}`. The judge is a local generative VLM (hub id or folder, greedy)
or, with `endpoint=URL`, any model behind an OpenAI-compatible endpoint
(`viescore:gpt-4o?endpoint=https://api.openai.com/v1`).

Each image's ratings, the reasoning and the raw reply are kept in its details (the score cache; the app's
*Questions* tab shows them).
""",
)

DELIMITER = "||V^=^V||"
ASPECTS = ("sc", "pq", "overall")


def sc_prompt(prompt: str) -> str:
    """The semantic-consistency request for ``prompt`` (VIEScore's t2i SC prompt, text unchanged).

    Parameters
    ----------
    prompt : str
        The text-to-image prompt; it replaces ``<prompt>``.

    Returns
    -------
    str
        The context, the one-image rule and the t2i SC rule, joined with newlines.
    """
    return "\n".join([P.CONTEXT, P.ONE_IMAGE_GEN_RULE, P.T2I_RULE_SC]).replace("<prompt>", prompt)


def pq_prompt() -> str:
    """The perceptual-quality request (the same for every prompt).

    Returns
    -------
    str
        The context and the PQ rule, joined with a newline.
    """
    return "\n".join([P.CONTEXT, P.RULE_PQ])


#: names the prompt texts in the metric's config (a change of any character is a new cache key)
_PROMPTS_ID = hashlib.sha1("\0".join([P.CONTEXT, P.ONE_IMAGE_GEN_RULE, P.T2I_RULE_SC, P.RULE_PQ]).encode()).hexdigest()[:16]


# -- parsing (VIEScore's mllm_output_to_dict, without the random guess) -------------------------------------

def _is_int_0_10(text: str) -> bool:
    try:
        return 0 <= int(text) <= 10
    except ValueError:
        return False


def repair_json(text: str) -> str:
    """VIEScore's ``fix_json``, for a reply that is not valid JSON.

    Bare keys are quoted (``word:`` -> ``"word":``), then each ``"key": value`` up to the next ``,`` or
    ``}`` is re-written: a number becomes ``[number]``, true/false/null stay, anything else is put in
    double quotes (after stripping spaces).

    Parameters
    ----------
    text : str
        The JSON-like part of a judge's reply.

    Returns
    -------
    str
        The repaired text (not necessarily valid JSON).

    Examples
    --------
    >>> from ts2viz.metrics.families.viescore import repair_json
    >>> repair_json('{score: 7, reasoning: fine}')
    '{"score": [7], "reasoning": "fine"}'
    """
    text = re.sub(r"(\w+):", r'"\1":', text)

    def value(m: re.Match) -> str:
        key, val, end = m.group(1), m.group(2).strip(), m.group(3)
        if re.match(r"^-?\d+(\.\d+)?$", val):
            val = f"[{val}]"
        elif not re.match(r"^(true|false|null)$", val, re.IGNORECASE):
            val = f'"{val}"'
        return f"{key}: {val}{end}"

    return re.sub(r'(".*?"):(.*?)(,|})', value, text)


def _json_part(reply: str) -> tuple[str | None, dict | None]:
    """``(JSON text to parse, or None; an already-built result, or None)`` as VIEScore locates them."""
    if reply.count(DELIMITER) == 2:
        start, end = reply.find(DELIMITER) + len(DELIMITER), reply.rfind(DELIMITER)
    else:
        start, end = reply.find("{"), reply.rfind("}") + 1
        if start == -1 or end == 0:
            # no JSON object: a bare list of two scores ("[6, 0]") or a bare integer 0-10
            s, e = reply.find("["), reply.rfind("]") + 1
            if re.match(r"^\[\d+, ?\d+\]$", reply[s:e]):
                return None, {"score": json.loads(reply[s:e]), "reasoning": "System: output is simply a list of scores"}
            if _is_int_0_10(reply):
                return None, {"score": [int(reply)], "reasoning": "System: output is simply a number"}
            return None, None
    if start == -1 or end == -1 or start == end:
        return None, None
    return reply[start:end].strip().replace("\n", ""), None


def _number(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def parse_reply(reply: str) -> dict | None:
    """A judge's reply as ``{"score": [floats], "reasoning": str}``, or ``None`` when it cannot be read.

    Follows VIEScore's ``mllm_output_to_dict`` step by step (see the module docstring). ts2viz is
    stricter only where VIEScore would return something it cannot score (and would crash or compute
    with later): no ``score`` key, an empty list, or an element that is not a number (numeric strings
    such as ``"7"`` are read as numbers) give ``None``.

    Parameters
    ----------
    reply : str
        The judge's reply.

    Returns
    -------
    dict or None
        ``{"score": [floats], "reasoning": str}``, or None when the reply cannot be read.

    Raises
    ------
    KeyError
        Never to the caller: raised and caught inside, when parsed JSON has no ``score``, to try
        :func:`repair_json`.

    Examples
    --------
    >>> from ts2viz.metrics.families.viescore import parse_reply
    >>> parse_reply('Here: {"score": [8], "reasoning": "a red cat"}')
    {'score': [8.0], 'reasoning': 'a red cat'}
    >>> parse_reply("7")
    {'score': [7.0], 'reasoning': 'System: output is simply a number'}
    >>> parse_reply("no idea") is None
    True
    """
    if not isinstance(reply, str):
        return None
    text, built = _json_part(reply)
    data = built
    if data is None and text is not None:
        try:
            data = json.loads(text)
            if isinstance(data, dict) and "score" in data and not isinstance(data["score"], list):
                data["score"] = [data["score"]]
            if not isinstance(data, dict) or "score" not in data:
                raise KeyError("score")
        except (ValueError, KeyError, TypeError):
            try:
                data = json.loads(repair_json(text))
            except ValueError:
                return None
    if not isinstance(data, dict) or "score" not in data:
        return None
    raw = data["score"] if isinstance(data["score"], list) else [data["score"]]
    scores = [_number(v) for v in raw]
    if not scores or any(s is None or not math.isfinite(s) for s in scores):
        return None
    reasoning = data.get("reasoning")
    return {"score": scores, "reasoning": "" if reasoning is None else str(reasoning)}


# -- the metric ---------------------------------------------------------------------------------------------

#: what each aspect's sub-scores rate, in VIEScore's words (for the details table)
SUBSCORES = {"SC": ["success in following the prompt"], "PQ": ["naturalness", "artifacts"]}


class VIEScore(JudgedMetric):
    """VIEScore with a vision judge; per-image details keep each request's reply, scores and reasoning.

    An image's score is the minimum of its aspect's score list (``aspect=overall``: the geometric mean
    of the SC and PQ minima); an unreadable reply gives NaN with a warning.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    judge : EndpointJudge or LocalVisionJudge
        The vision judge (:func:`ts2viz.metrics.backbones.judge.load_vision_judge`).
    aspect : str, default "sc"
        ``sc``, ``pq`` or ``overall``.
    retries : int, default 1
        How many times an unreadable reply is asked for again (only when the judge samples).
    batch_size : int or None, optional
        Images per scoring call (default 4).
    """

    name = "viescore"

    def __init__(self, spec: Spec, judge, *, aspect: str = "sc", retries: int = 1, batch_size: int | None = None):
        self.aspect = aspect
        config = {"family": "viescore", "judge": judge.config, "aspect": aspect, "prompts": _PROMPTS_ID}
        super().__init__(spec, judge, config, retries=retries, batch_size=batch_size)

    def _ask(self, images: list, texts: list[str]) -> list[tuple[str, dict | None, int]]:
        """``(reply, parsed or None, tries)`` per request.

        Unreadable replies are asked again (up to ``retries`` times) only when the judge samples (a greedy
        judge would repeat itself).
        """
        return ask_until_read(self.judge, images, texts, parse_reply, retries=self.retries)

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
            One float64 score per image (NaN where a reply could not be read); the requests' replies, scores
            and reasoning are in ``self.last_details``.
        """
        images, prompts = list(items), list(prompts)
        aspects = {"sc": ["SC"], "pq": ["PQ"], "overall": ["SC", "PQ"]}[self.aspect]
        asked = {}
        for a in aspects:
            texts = [sc_prompt(p) for p in prompts] if a == "SC" else [pq_prompt()] * len(images)
            asked[a] = self._ask(images, texts)
        scores = np.full(len(images), np.nan)
        details, bad = [], 0
        for i in range(len(images)):
            recs, mins = [], {}
            for a in aspects:
                reply, parsed, tries = asked[a][i]
                recs.append({"aspect": a, "reply": reply, "parsed": parsed is not None, "tries": tries,
                             "scores": parsed["score"] if parsed else [],
                             "reasoning": parsed["reasoning"] if parsed else "",
                             "rates": SUBSCORES[a]})
                mins[a] = min(parsed["score"]) if parsed else float("nan")
                bad += parsed is None
            if self.aspect == "overall":
                s = math.sqrt(mins["SC"] * mins["PQ"]) if all(math.isfinite(v) for v in mins.values()) \
                    and mins["SC"] * mins["PQ"] >= 0 else float("nan")
            else:
                s = mins[aspects[0]]
            scores[i] = s
            details.append({"score": None if math.isnan(s) else float(s), "aspects": recs,
                            "parsed": all(r["parsed"] for r in recs)})
        self.warn_unread(bad, len(images) * len(aspects), 'could not be read as VIEScore\'s {"score": [...]}')
        self.last_details = details
        return scores


def build(spec: Spec, device: str | None = None, *, endpoint: str | None = None, aspect: str = "sc",
          retries: int = 1, max_new_tokens: int = 512, batch_size: int | None = None,
          pair_batch_size: int | None = None, dtype: str | None = None, **options) -> Metric:
    """The ``viescore:`` metric of ``spec``.

    ``viescore:MODEL[?endpoint=URL&aspect=sc|pq|overall&retries=1&max_new_tokens=512&...]``.

    MODEL is a local generative VLM (hub id or folder) or, with ``endpoint=``, the model name at an
    OpenAI-compatible endpoint (then ``api_key_env``, ``temperature``, ``max_tokens``, ``timeout``,
    ``workers`` apply; VIEScore sends ``max_tokens=1400`` and no temperature, the default here too).

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the judge.
    device : str or None, optional
        The torch device of a local judge; None picks one.
    endpoint, aspect, retries, max_new_tokens, batch_size, pair_batch_size, dtype
        The family's options; their meaning is on the family's card (:data:`CARD`).
    **options
        The endpoint options (:data:`ts2viz.metrics.backbones.judge.ENDPOINT_OPTIONS`); any other is refused.

    Returns
    -------
    Metric
        A :class:`VIEScore`.

    Raises
    ------
    InputError
        For an unknown option, an aspect not in :data:`ASPECTS`, endpoint options without ``endpoint``,
        or a judge that cannot be loaded.
    """
    from ...registry import check_options

    check_options(spec, build, options)  # the registry's one check (metrics.load runs it too)
    kw = endpoint_options(options)
    aspect = str(aspect).lower()
    if aspect not in ASPECTS:
        raise InputError(f"metric {spec.raw!r}: aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
    if endpoint:
        kw.setdefault("max_tokens", 1400)
    judge = load_vision_judge(spec, device, endpoint=endpoint, max_new_tokens=int(max_new_tokens), endpoint_kw=kw,
                              dtype=dtype, batch_size=pair_batch_size)
    return VIEScore(spec, judge, aspect=aspect, retries=int(retries), batch_size=batch_size)



#: options beyond the keyword parameters of :func:`build` (checked in one place, :func:`ts2viz.metrics.load`)
build.extra_options = ENDPOINT_OPTIONS


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('viescore',
                'VIEScore: a multimodal judge rates prompt following 0-10 with reasoning (min of the SC scores)',
                build, CARD, example='viescore:gpt-4o?endpoint=https://api.openai.com/v1', group='judge',
                display='VIEScore', details='aspects')
