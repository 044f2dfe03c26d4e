"""VQAScore (Lin et al., 2024) as t2v_metrics computes it.

For a prompt ``p`` the VQA model is asked ``question_template.format(p)`` (default
``Does this figure show "{p}"? Please answer yes or no.``) and the score is the likelihood of the answer
``answer_template.format(p)`` (default ``Yes``): ``exp(-mean cross-entropy)`` of the answer's tokens,
teacher forced, as t2v_metrics' ``forward`` returns it. For its T5-based model (CLIP-FlanT5) T5's ``</s>``
is one of those tokens; for LLaVA-1.5 the answer is followed by ``</s>`` in t2v_metrics' own conversation
(see :meth:`ts2viz.metrics.backbones.vqa.VQAModel.answer_score`).

Options (``vqascore:MODEL?key=value``; percent-encode ``?``, ``&``, ``"`` and spaces in a template, or pass
them to :func:`ts2viz.metrics.load` as keyword arguments):

* ``question_template`` / ``answer_template``: t2v_metrics' two templates; ``{}`` (or ``{prompt}``) stands for
  the prompt. ``question_template=`` (empty) with ``answer_template={}`` is P(prompt | image), the
  VisualGPTScore t2v_metrics documents; ``caption_likelihood=true`` sets both.
* ``answer=first_token_yes``: ts2viz's former score, the first answer token's probability mass over the
  spellings of "yes" (not t2v_metrics'; kept for comparison).
* ``llava_format=chat``: LLaVA-1.5 through its processor's chat template instead of t2v_metrics' format.
* ``vision_tower`` / ``tokenizer``: a CLIP-FlanT5 checkpoint's CLIP tower and T5 tokenizer (hub id or
  folder) when they are not where its config says (e.g. offline copies).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.spec import Spec
from ..backbones.vqa import VQAModel, load_vqa_model
from .vqascore_recipes import API_MODELS, MODEL_NAMES, UNSUPPORTED, fill  # noqa: F401  (the registry reads the names)

#: t2v_metrics' default question (CLIP-FlanT5, LLaVA-1.5 and its other VQAScore models), also TS2's
QUESTION_TEMPLATE = 'Does this figure show "{}"? Please answer yes or no.'
#: t2v_metrics' default answer
ANSWER_TEMPLATE = "Yes"
#: how the answer becomes a score
ANSWER_MODES = {"likelihood": "exp(-mean CE) of the answer's tokens and the model's end token (t2v_metrics)",
                "first_token": "P(the answer's first token) at the first generated position, after the greedy "
                               "logits processors (t2v_metrics' Qwen2-VL, PaliGemma, LLaVA-OneVision, Llama-3.2)",
                "first_token_yes": "P(yes) summed over yes spellings, first answer token (ts2viz <= 0.x)"}
#: kept for code that imported the old name
QUESTION = QUESTION_TEMPLATE


class VQAScore(Metric):
    """The likelihood of ``answer_template`` as ``vqa``'s answer to ``question_template`` (see module doc).

    Per image, :attr:`last_details` holds the question, the answer and its likelihood (the score)."""

    name = "vqascore"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, question_template: str = QUESTION_TEMPLATE,
                 answer_template: str = ANSWER_TEMPLATE, answer: str = "likelihood", batch_size: int | None = None,
                 recipe=None):
        if answer not in ANSWER_MODES:
            raise InputError(f"metric {spec.raw!r}: answer must be one of {', '.join(ANSWER_MODES)}, not {answer!r}")
        fill(question_template, "x"), fill(answer_template, "x")  # malformed templates fail before scoring
        if answer == "first_token_yes" and answer_template not in (ANSWER_TEMPLATE, "yes"):
            raise InputError(f"metric {spec.raw!r}: answer=first_token_yes scores 'yes'; it takes no answer_template")
        config = {"family": "vqascore", **vqa.config, "question_template": question_template,
                  "answer_template": answer_template, "answer": ANSWER_MODES[answer]}
        if recipe is not None:
            config["recipe"] = recipe.name
        super().__init__(spec, config, vqa.device, batch_size or vqa.batch_size)
        self.vqa = vqa
        self.recipe = recipe
        self.question_template, self.answer_template, self.answer = question_template, answer_template, answer

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        questions = [fill(self.question_template, p) for p in prompts]
        answers = [fill(self.answer_template, p) for p in prompts]
        if self.answer == "first_token_yes":
            out = self.vqa.yes_probability(list(items), questions)
        elif self.answer == "first_token":
            out = self.vqa.first_token_score(list(items), questions, answers)
        else:
            out = self.vqa.answer_score(list(items), questions, answers)
        self.last_details = [{"question": q, "answer": a, "answer_likelihood": float(v)}
                             for q, a, v in zip(questions, answers, out)]
        return out


#: the options of an API model (``endpoint`` set): they are not options of a local model
API_OPTIONS = ("api_key", "api_key_env", "timeout", "top_logprobs", "retries", "retry_wait", "workers", "cache")


def _gpu_precision(spec: Spec, device: str | None) -> str | None:
    """t2v_metrics' compute dtype for the model's architecture (read from its config, before loading), used
    as the default dtype on a GPU; None on the CPU or when the architecture has no recipe."""
    from ..backbones.llava import is_original_layout
    from ..common.device import resolve_device
    from .vqascore_recipes import ARCHITECTURES, RECIPES

    if not resolve_device(device).startswith("cuda"):
        return None
    from transformers import PretrainedConfig

    from ..common.hub import check_model_id, hf_load

    raw, _ = hf_load("config", PretrainedConfig.get_config_dict, check_model_id(spec), spec,
                     **({"revision": spec.revision} if spec.revision else {}))
    kind = raw.get("model_type", "")
    if is_original_layout(raw):
        return RECIPES["llava-1.5"].precision
    if kind in ARCHITECTURES:
        return RECIPES[ARCHITECTURES[kind]].precision
    if kind in ("instructblip", "blip-2"):
        return RECIPES["instructblip"].precision
    return None


def build(spec: Spec, device: str | None = None, *, question_template: str | None = None,
          answer_template: str | None = None, caption_likelihood: bool = False, answer: str | None = None,
          recipe: str | None = None, question: str | None = None, batch_size: int | None = None,
          dtype: str | None = None, template: str | None = None, llava_format: str = "t2v_metrics",
          vision_tower: str | None = None, tokenizer: str | None = None, endpoint: str | None = None,
          **options) -> Metric:
    """``vqascore:MODEL[?key=value...]``: MODEL a hub id, a folder, t2v_metrics' model name
    (:data:`~.vqascore_recipes.MODEL_NAMES`) or an API model with ``endpoint=URL``."""
    from .vqascore_recipes import API_MODELS, RECIPES, UNSUPPORTED, recipe_for

    api = {k: options.pop(k) for k in API_OPTIONS if k in options}
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if spec.model in UNSUPPORTED:
        raise InputError(f"metric {spec.raw!r}: {UNSUPPORTED[spec.model]}")
    if recipe is not None and recipe not in RECIPES:
        raise InputError(f"metric {spec.raw!r}: recipe must be one of {', '.join(RECIPES)}, not {recipe!r}")
    if question is not None:  # the former name of question_template
        if question_template is not None:
            raise InputError(f"metric {spec.raw!r}: give question_template or question, not both")
        question_template = question
    if caption_likelihood is True:
        if question_template not in (None, "") or answer_template not in (None, "{}"):
            raise InputError(f"metric {spec.raw!r}: caption_likelihood sets both templates; give neither")
        question_template, answer_template = "", "{}"
    if endpoint or spec.model in API_MODELS:
        if not endpoint:
            raise InputError(f"metric {spec.raw!r}: {spec.model} is an API model: give ?endpoint=URL, the base URL of "
                             "an OpenAI-compatible API that returns log-probabilities (e.g. https://api.openai.com/v1)")
        from .vqascore_api import APIVQAScore

        rec = RECIPES[recipe or "gpt-4o"]
        q = rec.question if question_template is None else str(question_template)
        a = rec.answer if answer_template is None else str(answer_template)
        return APIVQAScore(spec, str(endpoint), spec.model, q, a, batch_size=batch_size, recipe=rec.name, **api)
    if api:
        raise InputError(f"metric {spec.raw!r}: option(s) {', '.join(sorted(api))} need endpoint=URL (an API model)")
    if dtype is None:
        dtype = _gpu_precision(spec, device)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=batch_size, template=template,
                         llava_format=llava_format, vision_tower=vision_tower, tokenizer=tokenizer)
    rec = RECIPES[recipe] if recipe else recipe_for(vqa)
    q = rec.question if question_template is None else str(question_template)
    a = rec.answer if answer_template is None else str(answer_template)
    metric = VQAScore(spec, vqa, q, a, answer or rec.rule, batch_size, rec)
    metric.config.setdefault("dtype", str(vqa.dtype).rpartition(".")[2])
    return metric


build.extra_options = API_OPTIONS
