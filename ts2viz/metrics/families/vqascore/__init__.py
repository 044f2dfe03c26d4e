"""VQAScore (Lin et al., 2024) as t2v_metrics 3.0 computes it, model by model.

For a prompt ``p`` the VQA model is asked ``question_template.format(p)`` and the score is the likelihood of
the answer ``answer_template.format(p)``. t2v_metrics asks and scores each of its models in its own way;
:mod:`.recipes` records them (``RECIPES``) and picks one by the loaded model's architecture:
CLIP-FlanT5 and LLaVA-1.5/1.6 (``exp(-mean cross-entropy)`` of ``Yes`` and the end token in LLaVA's chat
turn), InstructBLIP (LAVIS' Flan-T5 format), Qwen2-VL and PaliGemma (the first generated token's probability
of ``Yes``), GPT-4o (top log-probabilities through an endpoint, :mod:`.api`), ... t2v_metrics'
model names resolve to their checkpoints (``vqascore:clip-flant5-xxl``). The :data:`CARD` lists the
options and says, aspect by aspect, what is proved against t2v_metrics' own code.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...backbones.vqa.loader import load_vqa_model
from ...backbones.vqa.model import VQAModel
from ...common.base import Metric
from ...common.spec import Spec
from ...family import Card, Family, Fidelity, Option
from .recipes import (  # noqa: F401
    API_MODELS,
    MODEL_NAMES,
    Q_FIGURE,
    RECIPES,
    RELEASES,
    UNSUPPORTED,
    fill,
)

#: t2v_metrics' default question (CLIP-FlanT5, LLaVA-1.5 and its other VQAScore models), also TS2's
QUESTION_TEMPLATE = Q_FIGURE
#: t2v_metrics' default answer
ANSWER_TEMPLATE = "Yes"
#: how the answer becomes a score
ANSWER_MODES = {"likelihood": "exp(-mean CE) of the answer's tokens and the model's end token (t2v_metrics)",
                "first_token": "P(the answer's first token) at the first generated position, after the greedy "
                               "logits processors (t2v_metrics' Qwen2-VL, PaliGemma, LLaVA-OneVision, Llama-3.2)",
                "end_tokens": "geometric mean of the answer's tokens' softmax(scores / temperature) at the end of "
                              "greedy generation, a final end token skipped (t2v_metrics 3.1)",
                "spellings_sum": "sum of the first step's probabilities of the first tokens of the answer, its lower "
                                 "case, and both with a leading space (GenEval 2)",
                "first_token_yes": "P(yes) summed over yes spellings, first answer token (ts2viz <= 0.x)"}
#: kept for code that imported the old name
QUESTION = QUESTION_TEMPLATE
#: the most tokens ``answer=end_tokens`` generates per image (a visitor's cost is bounded before work)
MAX_NEW_TOKENS = 64


class VQAScore(Metric):
    """The likelihood of ``answer_template`` as ``vqa``'s answer to ``question_template`` (see module doc).

    Per image, :attr:`last_details` holds the question, the answer and its likelihood (the score).
    """

    name = "vqascore"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, question_template: str = QUESTION_TEMPLATE,
                 answer_template: str = ANSWER_TEMPLATE, answer: str = "likelihood", batch_size: int | None = None,
                 recipe=None, temperature: float | None = None, max_new_tokens: int | None = None):
        if answer not in ANSWER_MODES:
            raise InputError(f"metric {spec.raw!r}: answer must be one of {', '.join(ANSWER_MODES)}, not {answer!r}")
        if answer != "end_tokens" and (temperature is not None or max_new_tokens is not None):
            raise InputError(f"metric {spec.raw!r}: temperature and max_new_tokens are options of the end_tokens "
                             "rule (recipe=t2v_metrics-3.1)")
        generation = {}
        if answer == "end_tokens":
            from ...backbones.vqa.generative import GenerativeVQA

            if not isinstance(vqa, GenerativeVQA) or vqa.encoder_decoder:
                raise InputError(f"metric {spec.raw!r}: answer=end_tokens needs a decoder-only generative VLM")
            t = 1.0 if temperature is None else float(temperature)
            n = 1 if max_new_tokens is None else int(max_new_tokens)
            if not (t > 0 and math.isfinite(t)) or n < 1 or n > MAX_NEW_TOKENS:
                raise InputError(f"metric {spec.raw!r}: temperature must be a positive number and max_new_tokens "
                                 f"1 to {MAX_NEW_TOKENS}, not {temperature!r} and {max_new_tokens!r}")
            generation = {"temperature": t, "max_new_tokens": n}
        fill(question_template, "x"), fill(answer_template, "x")  # malformed templates fail before scoring
        if answer == "first_token_yes" and answer_template not in (ANSWER_TEMPLATE, "yes"):
            raise InputError(f"metric {spec.raw!r}: answer=first_token_yes scores 'yes'; it takes no answer_template")
        config = {"family": "vqascore", **vqa.config, "question_template": question_template,
                  "answer_template": answer_template, "answer": ANSWER_MODES[answer], **generation}
        if recipe is not None:
            config["recipe"] = recipe.name
            if recipe.release.startswith("t2v_metrics"):
                config["t2v_metrics"] = recipe.release
        super().__init__(spec, config, vqa.device, batch_size or vqa.batch_size)
        self.vqa = vqa
        self.recipe = recipe
        self.question_template, self.answer_template, self.answer = question_template, answer_template, answer
        self.generation = generation

    def prepare(self, image, file_name: str | None = None):
        """Do the VQA model's CPU work on the image ahead of the model (:meth:`VQAModel.prepare_image`).

        Parameters
        ----------
        image : PIL.Image.Image
            A decoded RGB image.
        file_name : str, optional
            The image's file name (unused).

        Returns
        -------
        PIL.Image.Image
            The image, carrying its pixel tensor where the model's pixels do not depend on the question.
        """
        return self.vqa.prepare_image(image)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """VQAScore of prepared images and their prompts (one batch; :class:`~ts2viz.metrics.common.base.Metric`).

        Parameters
        ----------
        items : sequence
            Images as :meth:`prepare` returned them.
        prompts : sequence of str
            One prompt per image, put into the question and answer templates.

        Returns
        -------
        numpy.ndarray
            float64 answer likelihoods in [0, 1]; the details of each image in :attr:`last_details`.
        """
        questions = [fill(self.question_template, p) for p in prompts]
        answers = [fill(self.answer_template, p) for p in prompts]
        if self.answer == "end_tokens":
            from ...backbones.vqa.t2v import end_token_scores

            res = end_token_scores(self.vqa, list(items), list(zip(questions, answers)), **self.generation)
            out = np.asarray([v for v, _ in res], dtype=np.float64)
            self.last_details = [{"question": q, "answer": a, "answer_likelihood": float(v), "generated": g}
                                 for q, a, (v, g) in zip(questions, answers, res)]
            return out
        if self.answer == "spellings_sum":
            from ...backbones.vqa.t2v import variant_sum_scores

            out = np.asarray(self.vqa._batched(lambda ims, its: variant_sum_scores(self.vqa, ims, its), list(items),
                                               [(q, spellings(a)) for q, a in zip(questions, answers)]))
        elif self.answer == "first_token_yes":
            out = self.vqa.yes_probability(list(items), questions)
        elif self.answer == "first_token":
            out = self.vqa.first_token_score(list(items), questions, answers)
        else:
            out = self.vqa.answer_score(list(items), questions, answers)
        self.last_details = [{"question": q, "answer": a, "answer_likelihood": float(v)}
                             for q, a, v in zip(questions, answers, out)]
        return out


def spellings(answer: str) -> tuple[str, str, str, str]:
    """The spellings whose first tokens ``answer=spellings_sum`` adds: GenEval 2's ``['Yes', 'yes', ' yes', ' Yes']``.

    Parameters
    ----------
    answer : str
        The answer (``Yes``).

    Returns
    -------
    tuple of str
        The answer, its lower case, and the two with a leading space, in GenEval 2's order.

    Examples
    --------
    >>> spellings("Yes")
    ('Yes', 'yes', ' yes', ' Yes')
    """
    return (answer, answer.lower(), " " + answer.lower(), " " + answer)


#: the options of an API model (``endpoint`` set): they are not options of a local model
API_OPTIONS = ("api_key", "api_key_env", "timeout", "top_logprobs", "retries", "retry_wait", "workers", "cache")


def _gpu_precision(spec: Spec, device: str | None) -> str | None:
    """t2v_metrics' compute dtype for the model's architecture, the default dtype on a GPU.

    Read from the checkpoint's config, before loading; None on the CPU or when the architecture has no recipe.
    """
    from ...backbones.vqa.llava import is_original_layout
    from ...common.device import resolve_device
    from .recipes import ARCHITECTURES, RECIPES

    if not resolve_device(device).startswith("cuda"):
        return None
    from transformers import PretrainedConfig

    from ...common.pretrained import check_model_id, hf_load

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
          temperature: float | None = None, max_new_tokens: int | None = None, **options) -> Metric:
    """The VQAScore metric of a spec ``vqascore:MODEL[?key=value...]`` (the registry's factory).

    MODEL is a hub id, a folder, t2v_metrics' model name (:data:`~.recipes.MODEL_NAMES`) or an API
    model with ``endpoint=URL``. Every option is on the family's card (:data:`CARD`).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str, optional
        ``cpu``, ``cuda``, ``cuda:N`` or None for the best available.
    question_template, answer_template : str, optional
        The question and answer, ``{}`` standing for the prompt (default: the recipe's, t2v_metrics').
    caption_likelihood : bool
        Score the prompt's own likelihood as the caption (no question; both templates set).
    answer : str, optional
        How the answer is scored (``likelihood`` or ``first_token_yes``; default: the recipe's rule).
    recipe : str, optional
        The t2v_metrics release (``t2v_metrics-3.0``, ``t2v_metrics-3.1``: its recipe for the checkpoint's
        architecture) or one recipe by name (default: 3.0's recipe for the architecture, 3.1's where only 3.1
        has one).
    question : str, optional
        The former name of ``question_template``.
    batch_size : int, optional
        Images per forward pass.
    dtype : str, optional
        Compute dtype (default: t2v_metrics' precision on a GPU, float32 on the CPU).
    template : str, optional
        The chat template of a LLaVA checkpoint.
    llava_format : str
        ``t2v_metrics`` (its prompt and square padding) or ``hf`` (the processor's own).
    vision_tower, tokenizer : str, optional
        Where a CLIP-FlanT5 or LLaVA checkpoint's vision tower and tokenizer are, when not beside it.
    endpoint : str, optional
        The base URL of an OpenAI-compatible API (an API model such as ``gpt-4o``).
    temperature, max_new_tokens : optional
        The ``end_tokens`` rule's softmax temperature (1.0) and generated tokens (1), t2v_metrics 3.1's.
    **options
        The API path's options (``top_logprobs``, ``api_key_env``, ``timeout``, ``retries``, ...).

    Returns
    -------
    Metric
        A :class:`VQAScore`, or an :class:`~.api.APIVQAScore` for an API model.

    Raises
    ------
    ts2viz.errors.InputError
        An unknown or conflicting option, a model t2v_metrics names but ts2viz cannot run, an API model
        without an endpoint, a checkpoint that cannot be loaded.
    """
    from .recipes import recipe_for

    api = {k: options.pop(k) for k in API_OPTIONS if k in options}
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if spec.model in UNSUPPORTED:
        raise InputError(f"metric {spec.raw!r}: {UNSUPPORTED[spec.model]}")
    if recipe is not None and recipe not in RECIPES and recipe not in RELEASES:
        raise InputError(f"metric {spec.raw!r}: recipe must be a t2v_metrics release ({', '.join(RELEASES)}) or "
                         f"one of {', '.join(RECIPES)}, not {recipe!r}")
    release = recipe if recipe in RELEASES else None
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
        from .api import APIVQAScore

        if temperature is not None or max_new_tokens is not None:
            raise InputError(f"metric {spec.raw!r}: temperature and max_new_tokens are options of a local model")

        rec = RECIPES["gpt-4o-3.1" if release == RELEASES[1] else "gpt-4o" if release or not recipe else recipe]
        q = rec.question if question_template is None else str(question_template)
        a = rec.answer if answer_template is None else str(answer_template)
        return APIVQAScore(spec, str(endpoint), spec.model, q, a, batch_size=batch_size, recipe=rec.name, **api)
    if api:
        raise InputError(f"metric {spec.raw!r}: option(s) {', '.join(sorted(api))} need endpoint=URL (an API model)")
    if spec.model in MODEL_NAMES and not Path(spec.model).exists():  # t2v_metrics' name -> its checkpoint
        spec = replace(spec, model=MODEL_NAMES[spec.model])
    if dtype is None:
        dtype = _gpu_precision(spec, device)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=batch_size, template=template,
                         llava_format=llava_format, vision_tower=vision_tower, tokenizer=tokenizer)
    try:
        rec = RECIPES[recipe] if recipe and not release else recipe_for(vqa, release)
    except InputError as e:
        raise InputError(f"metric {spec.raw!r}: {e}") from None
    q = rec.question if question_template is None else str(question_template)
    a = rec.answer if answer_template is None else str(answer_template)
    metric = VQAScore(spec, vqa, q, a, answer or rec.rule, batch_size, rec, temperature, max_new_tokens)
    metric.config.setdefault("dtype", str(vqa.dtype).rpartition(".")[2])
    return metric


build.extra_options = API_OPTIONS


_R = "tests/metrics/reference/test_vqascore_reference.py::"
_T = "tests/metrics/test_metrics_vqascore.py::"
_N = "tests/metrics/test_vqascore_names.py::"
_C = "tests/metrics/test_vqa_choices.py::"
_FIX = f"{_R}test_vqascore_equals_t2v_metrics_per_image"
_API = f"{_R}test_api_vqascore_equals_t2v_metrics_against_a_local_endpoint"
_R31 = "tests/metrics/reference/test_vqascore_31_reference.py::"

CARD = Card(
    summary=("VQAScore as its authors' library t2v_metrics 3.0 computes it for each of its models: a VLM is asked "
             "whether the image shows the prompt (`Does this figure show \"{prompt}\"? Please answer yes or no.` "
             "for CLIP-FlanT5) and the score is the likelihood of the answer `Yes`, in the way t2v_metrics reads it "
             "for that model (the answer's teacher-forced likelihood, the first generated token's probability, or "
             "an API's top log-probabilities). Proved per image against t2v_metrics' own code on reference "
             "fixtures for CLIP-FlanT5, LLaVA-1.5, LLaVA-1.6, InstructBLIP, Qwen2-VL, PaliGemma and GPT-4o. "
             "`recipe=t2v_metrics-3.1` follows t2v_metrics 3.1 (not on PyPI; proved for Qwen2.5-VL and Qwen3-VL), `recipe=geneval2` GenEval 2's VQAScore (proved on Qwen3-VL)."),
    paper=("Z. Lin, D. Pathak, B. Li, J. Li, X. Xia, G. Neubig, P. Zhang, D. Ramanan. Evaluating Text-to-Visual "
           "Generation with Image-to-Text Generation. ECCV 2024. https://arxiv.org/abs/2404.01291"),
    citation="""@inproceedings{lin2024evaluating,
  title     = {Evaluating Text-to-Visual Generation with Image-to-Text Generation},
  author    = {Lin, Zhiqiu and Pathak, Deepak and Li, Baiqi and Li, Jiayao and Xia, Xide and Neubig, Graham
               and Zhang, Pengchuan and Ramanan, Deva},
  booktitle = {European Conference on Computer Vision (ECCV)},
  year      = {2024}
}""",
    original=("linzhiqiu/t2v_metrics 3.0 (PyPI `t2v-metrics==3.0`): `t2v_metrics/models/vqascore_models/` "
              "(`clip_t5_model.py`, `llava_model.py`, `llava16_model.py`, `instructblip_model.py` with its vendored "
              "LAVIS, `qwen2vl_model.py`, `paligemma_model.py`, `llavaov_model.py`, `llama32_model.py`, "
              "`gpt4v_model.py`, `mm_utils.py`); run on reference fixtures by tools/reference/t2v_metrics/. "
              "t2v_metrics 3.1 (commit 6ecb74f: `qwen2vl_model.py`, `qwen3vl_model.py`, `gemma3_model.py`, "
              "`paligemma_model.py` read) by tools/reference/t2v_metrics_3_1/; GenEval 2's `evaluation.py` "
              "(facebookresearch/GenEval2 a6e82d2) by tools/reference/geneval2/."),
    fixture=('`tests/fixtures/reference/vqascore/`: PyPI `t2v-metrics` 3.0 (CLIP-FlanT5, '
             'LLaVA-1.5/1.6, InstructBLIP, Qwen2-VL, PaliGemma, GPT-4o with recorded replies) and '
             'linzhiqiu/t2v_metrics 6ecb74f (v3.1: Qwen2.5-VL, Qwen3-VL), on tiny checkpoints; '
             '`recipe=geneval2`: facebookresearch/GenEval2 a6e82d2 '
             '(`tests/fixtures/reference/geneval2/`). Qwen2.5-VL on 3.0, LLaVA-OneVision and '
             'Llama-3.2-Vision not compared. Image modes: not compared (a non-RGB image is read by '
             "ts2viz's `as_rgb`)."),
    output_range="[0, 1] (a probability)",
    higher_is_better=True,
    precision="bfloat16",
    options=(
        Option("question_template", None,
               "The question; `{}` (or `{prompt}`) stands for the prompt. Default: t2v_metrics' for the model "
               "(its recipe). Percent-encode `?`, `&`, `\"` and spaces in a spec string, or pass it to "
               "`ts2viz.metrics.load` as a keyword argument."),
        Option("answer_template", None, "The answer whose likelihood is the score; `{}` stands for the prompt. "
               "Default: t2v_metrics' for the model (`Yes`; InstructBLIP `yes`)."),
        Option("caption_likelihood", False,
               "P(prompt | image), the VisualGPTScore t2v_metrics documents: sets `question_template=` (empty) "
               "and `answer_template={}`; give neither template with it."),
        Option("answer", None,
               "How the answer becomes a score: `likelihood` (`exp(-mean CE)` of the answer's tokens and the "
               "model's end token, teacher forced), `first_token` (the first generated token's probability of "
               "the answer's first token, after the checkpoint's greedy logits processors), `end_tokens` "
               "(t2v_metrics 3.1: the answer's tokens at the end of greedy generation, geometric mean, a final "
               "end token skipped), `spellings_sum` (GenEval 2: the first step's probabilities of `Yes`, `yes`, "
               "` yes`, ` Yes` added) or `first_token_yes` (ts2viz's former score: P(yes) summed over "
               "spellings). Default: the recipe's rule for the model.", tuple(ANSWER_MODES)),
        Option("recipe", None,
               "The t2v_metrics release whose recipe for the architecture is followed (`t2v_metrics-3.0`, the "
               "default where 3.0 has one; `t2v_metrics-3.1`: Qwen2/2.5-VL, Qwen3-VL, Qwen3.5, Gemma 3, PaliGemma, "
               "GPT-4o; architectures only 3.1 scores take it by default), or one recipe by name (`clip-flant5`, "
               "`llava-1.5`, `llava-1.6`, `instructblip`, `qwen2-vl`, `paligemma`, `llava-onevision`, "
               "`llama-3.2-vision`, `gpt-4o`, `blip-2`, `instructblip-vicuna`, `generic`; 3.1's `qwen2.5-vl-3.1`, "
               "`qwen3-vl-3.1`, `gemma-3-3.1`, `paligemma-3.1`, `gpt-4o-3.1`; GenEval 2's `geneval2`). Recorded "
               "in the config (`recipe`, `t2v_metrics`).", RELEASES + tuple(RECIPES)),
        Option("temperature", None, "`answer=end_tokens` (t2v_metrics 3.1) only: the scores are divided by it "
               "before the softmax (generation stays greedy). Default 1.0."),
        Option("max_new_tokens", None, f"`answer=end_tokens` only: tokens generated before the answer's tokens "
               f"are read at the end (t2v_metrics 3.1: 1; at most {MAX_NEW_TOKENS})."),
        Option("question", None, "The former name of `question_template` (give one of the two)."),
        Option("batch_size", None, "Images per model call (default: the VQA model's pair batch size). Speed only."),
        Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16`. Default: t2v_metrics' "
               "for the model (bfloat16; PaliGemma float32; LLaVA-OneVision float16); always float32 on CPU.",
               ("float32", "float16", "bfloat16")),
        Option("template", None,
               "The VQA model's prompt template with `{question}` instead of t2v_metrics' format (a generative "
               "VLM's chat template otherwise)."),
        Option("llava_format", "t2v_metrics",
               "How LLaVA is prompted: `t2v_metrics` (its own conversation, `SYSTEM USER: <image>\\nQUESTION "
               "ASSISTANT: Yes</s>`) or `chat` (the processor's chat template).", ("t2v_metrics", "chat")),
        Option("vision_tower", None,
               "The CLIP vision tower (hub id or folder) of a CLIP-FlanT5 checkpoint, or of a LLaVA checkpoint in "
               "LLaVA's own layout, when it is neither where the config says nor a folder beside the checkpoint."),
        Option("tokenizer", None,
               "A CLIP-FlanT5 checkpoint's T5 tokenizer (hub id or folder) when the folder has none, e.g. "
               "`google/flan-t5-xl` (for `clip-flant5-xl`) or `google/flan-t5-xxl`."),
        Option("endpoint", None, "The base URL of an OpenAI-compatible API that returns log-probabilities "
               "(`https://api.openai.com/v1`, a vLLM server): MODEL is then the endpoint's model (`gpt-4o`)."),
        Option("api_key", None, "The endpoint's API key (default: the `api_key_env` variable); never recorded."),
        Option("api_key_env", "OPENAI_API_KEY", "The environment variable holding the API key."),
        Option("timeout", 60.0, "Seconds one pair may take in all, its retries included."),
        Option("top_logprobs", 2, "How many top log-probabilities of the first token are asked for (t2v_metrics: 2)."),
        Option("retries", 2, "A failed request is asked again this many times (then its image's score is NaN)."),
        Option("retry_wait", 2.0, "Seconds before the first retry (doubling)."),
        Option("workers", 4, "Requests sent at a time."),
        Option("cache", True, "Keep the replies on disk (`$TS2VIZ_CACHE/llm/`) and reuse them."),
    ),
    fidelity=(
        Fidelity("question and answer templates",
                 "t2v_metrics' per model (`Does this figure show \"{}\"? Please answer yes or no.` / `Yes`; "
                 "InstructBLIP `Question: ...` / `yes`; Qwen2-VL `Does this image show \"{}\"?`; ...), picked by "
                 "the architecture and named in the config (`recipe`)", "as the original",
                 "question_template", f"{_FIX}, {_API}"),
        Fidelity("prompt format",
                 "CLIP-FlanT5 `t5_chat` and LLaVA-1.5/1.6 `chat` (system message, ` USER: <image>\\n`, question, "
                 "` ASSISTANT: `, chunks around `<image>` tokenised apart with the checkpoint's own slow-tokenizer "
                 "class); InstructBLIP: question to the Q-Former and, after the query outputs, to T5's encoder; "
                 "Qwen2-VL its chat template; PaliGemma the bare question (`<image>`s, `<bos>`, question, `\\n`, no "
                 "task prefix); GPT-4o one user message, the question then the image", "as the original",
                 "llava_format", f"{_FIX}, {_API}"),
        Fidelity("answer → score",
                 "`exp(-mean CE)` of the answer and the end token (CLIP-FlanT5 `Yes </s>`, LLaVA `Yes</s>`, "
                 "InstructBLIP `yes </s>` through T5's decoder); the first generated token's softmax at the "
                 "answer's first token after the checkpoint's greedy logits processors (Qwen2-VL-Instruct's "
                 "repetition penalty 1.05 over the prompt's tokens; PaliGemma); GPT-4o: the first of `Yes`/`yes` "
                 "(`exp(lp)`) or `No`/`no` (`1 - exp(lp)`) among the top 2, else 0", "as the original", "answer",
                 f"{_FIX}, {_API}"),
        Fidelity("t2v_metrics 3.1 (`recipe=t2v_metrics-3.1`)",
                 "Qwen2.5-VL / Qwen3-VL: `Does this figure show \"{}\"? Please answer Yes or No.`, the chat "
                 "template, `qwen_vl_utils`' resize (factor 28; Qwen3-VL 32) then the processor with "
                 "`do_resize=False`; one prompt at a time, `generate(max_new_tokens, do_sample=False)`, the answer's "
                 "tokens read at the last generated steps (a final end/begin/pad token skipped), each step's "
                 "`softmax(scores / temperature)`, geometric mean; tested with the defaults, `temperature=2` and `max_new_tokens=3` with a two-token answer",
                 "as the original", "recipe", f"{_R31}test_vqascore_31_equals_t2v_metrics_31_per_image"),
        Fidelity("t2v_metrics 3.1: nothing left to score",
                 "where the only generated token is the end token t2v_metrics 3.1 raises ValueError; ts2viz gives "
                 "NaN for that image (the generated text in its details)", "documented difference", "max_new_tokens"),
        Fidelity("t2v_metrics 3.1: Gemma 3, Qwen3.5, PaliGemma, GPT-4o",
                 "Gemma 3: the processor's chat prompt and images, the end-token rule; Qwen3.5: as Qwen3-VL with "
                 "`enable_thinking=False` (told by the architecture; t2v_metrics by 'qwen3.5' in its model name); "
                 "PaliGemma and GPT-4o: 3.0's reading with 3.1's question; read from the code, not proved on a "
                 "fixture (PaliGemma's differs by 3.6e-4 relative on one image of the 3.0 fixture: open) "
                 "(transformers 4.57, which the fixtures ran, has no Qwen3.5)", "documented difference", "recipe"),
        Fidelity("GenEval 2's VQAScore (`recipe=geneval2`)",
                 "`Does this image show \"{}\"? Answer the question with Yes or No.` in the chat template, the "
                 "processor's own image preprocessing, the first step's probabilities of `Yes`, `yes`, ` yes`, ` Yes` "
                 "added (facebookresearch/GenEval2 `evaluation.py` `vqa_score`)", "as the original", "recipe",
                 "tests/metrics/reference/test_softtifa_reference.py::test_geneval2_vqascore_equals_its_vqa_score"),
        Fidelity("t2v_metrics main between 3.0 and 3.1",
                 "asked Qwen2.5-VL `Does this image show \"{}\"? Answer the question with Yes or No`; no release "
                 "has it: give it as `question_template` with `recipe=qwen2.5-vl-3.1`", "not in the original",
                 "question_template"),
        Fidelity("first-token P(yes) summed over spellings", "`answer=first_token_yes` only (ts2viz's former default)",
                 "documented difference", "answer", f"{_T}test_first_token_yes_is_an_explicit_option"),
        Fidelity("image preprocessing",
                 "CLIP-FlanT5/LLaVA: padded to square with the processor's mean colour, then the PIL CLIP processor; "
                 "InstructBLIP: shorter side to 224 (bicubic) and centre crop; Qwen2-VL: `qwen_vl_utils`' resize "
                 "(sides multiples of 28) then its processor; GPT-4o: the image file's own bytes; tested on wide, "
                 "tall, square and a large image", "as the original", "", f"{_FIX}, {_API}"),
        Fidelity("checkpoints as released",
                 "CLIP-FlanT5 (`clip_t5` config, `spiece.model`, no `tokenizer.json`), LLaVA-1.5 and 1.6 in LLaVA's "
                 "own layout (converted on load; 1.6's fine-tuned tower from its checkpoint, no anyres grid and no "
                 "`image_newline`, as t2v_metrics runs it), InstructBLIP in transformers' layout (the same weights "
                 "as LAVIS' release), Qwen2-VL and PaliGemma as on the hub", "as the original", "vision_tower",
                 _FIX),
        Fidelity("vocabulary",
                 "CLIP-FlanT5: the softmax over the tokenizer's rows (the unused Flan-T5 rows dropped, the LM head "
                 "kept untied); LLaVA: over the original 32000 rows", "as the original", "", _FIX),
        Fidelity("model names",
                 "t2v_metrics 3.0's names resolve to their checkpoints (`clip-flant5-xxl`, `llava-v1.5-13b`, "
                 "`instructblip-flant5-xxl`, `qwen2-vl-7b`, `paligemma-3b-mix-448`, ...), and 3.1's new ones "
                 "(`qwen3-vl-8b`, `qwen3-vl-8b-thinking`, `qwen3.5-9b`, `gemma-3-12b-it`, ...); InternVL, Molmo, "
                 "mPLUG-Owl3 (remote code), Gemini (its own API), the text-only Llama-3.2, and 3.1's Gemma 4 and "
                 "Qwen3-Omni fail in one line",
                 "as the original", "", f"{_N}test_names_resolve_to_their_checkpoints, "
                 f"{_N}test_names_ts2viz_does_not_load_fail_in_one_line"),
        Fidelity("batching",
                 "each score independent of its batch (t2v_metrics scores one image with all its prompts in one "
                 "call, where CLIP-FlanT5's padding makes a score depend on the other prompts); the fixtures are "
                 "its one-pair-per-call scores", "documented difference", "batch_size",
                 f"{_T}test_answer_scores_do_not_depend_on_batching"),
        Fidelity("a failed API request", "retried, then NaN with the error in the image's details (t2v_metrics: "
                 "0.0 after two tries)", "documented difference", "retries", _API),
        Fidelity("LLaVA-OneVision", "t2v_metrics' question, ChatML turn and first-token rule on transformers' "
                 "LLaVA-OneVision; the image prepared by transformers' processor (t2v_metrics runs LLaVA-NeXT's own "
                 "`process_images`); **not compared** with t2v_metrics' code (no fixture)", "documented difference",
                 "recipe"),
        Fidelity("Llama-3.2-Vision", "its question, chat template and the first-token rule at the answer's first "
                 "token after BOS: what t2v_metrics 3.0's forward evidently means (it raises NameError: `lm_prob` "
                 "is never set); **not compared** with t2v_metrics' code (its forward does not run)",
                 "documented difference", "recipe"),
        Fidelity("Qwen2.5-VL", "the Qwen2-VL recipe, picked by the architecture (`qwen2_5_vl`): t2v_metrics' Qwen2-VL "
                 "question, chat template and first-token rule; **not compared** with t2v_metrics' code (the "
                 "fixture is a Qwen2-VL checkpoint)", "documented difference", "recipe"),
        Fidelity("models not in t2v_metrics 3.0",
                 "BLIP-2 Flan-T5 as its sibling InstructBLIP; InstructBLIP-Vicuna, BLIP-VQA and any other VLM with "
                 "the default templates, the answer followed by the model's end token (`recipe` in the config)",
                 "not in the original", "recipe", f"{_T}test_blip_scores_the_answer_through_its_answer_decoder"),
        Fidelity("precision",
                 "on a GPU t2v_metrics' dtype for the model (bfloat16; PaliGemma float32; LLaVA-OneVision float16), "
                 "recorded in the config; float32 on CPU (the fixtures' precision)", "as the original", "dtype"),
        Fidelity("answer choices (TIFA, DSG, Gecko)",
                 "each choice a whole answer: its tokens then the model's end token, so that choices which are "
                 "prefixes of each other are exclusive", "not in the original", "",
                 f"{_C}test_choices_that_are_prefixes_of_each_other_are_exclusive"),
        Fidelity("aggregation", "one score per image, no aggregation", "as the original", "",
                 f"{_T}test_cli_score_clip_flant5_then_leaderboard"),
    ),
    limitations=(
        "The fixtures are tiny random-weight checkpoints in the released layouts (t2v_metrics' own classes built "
        "small); no released checkpoint was loaded here (no hub access).",
        "t2v_metrics 3.0's pins (torch 2.5.1, transformers 4.49, ~60 more) cannot all be installed on Python 3.11: "
        "the fixtures ran it with torch 2.9.1 and the pinned transformers 4.49 (tools/reference/t2v_metrics).",
        "LLaVA-OneVision and Llama-3.2-Vision follow t2v_metrics' code as read, not proved on a fixture; "
        "llava-hf's LLaVA-NeXT twins take the generic recipe (t2v_metrics runs LLaVA's own 1.6 checkpoint, "
        "`vqascore:llava-v1.6-13b`).",
        "An API model's image is sent as the file's own bytes where the engine has the file, else as a PNG.",
    ),
    model_names=dict(MODEL_NAMES),
    description="""MODEL is a hub id, a local folder, t2v_metrics' model name (`ts2viz metrics` lists them) or,
with `?endpoint=URL`, an API model. The recipe (templates, format, rule, precision) follows the architecture;
see docs/guide/vqascore-models.md for the table of models and what is proved.

```python
from ts2viz import metrics
vqa = metrics.load("vqascore:clip-flant5-xl", device="cuda")            # zhiqiulin/clip-flant5-xl
scores = vqa(images=["a.png", "b.png"], prompts=["a red cat", "two dogs"])  # one prompt per image
vqa.last_details[0]                     # {"question": ..., "answer": "Yes", "answer_likelihood": ...}
qwen = metrics.load("vqascore:qwen2-vl-7b")                                # first-token rule
gpt = metrics.load("vqascore:gpt-4o?endpoint=https://api.openai.com/v1")   # top log-probabilities
```
""",
)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('vqascore',
                "VQAScore (t2v_metrics 3.0; ?recipe=t2v_metrics-3.1): the likelihood of 'Yes' to 'Does this figure "
                'show "{prompt}"?\', asked and scored as t2v_metrics does per model (CLIP-FlanT5, LLaVA-1.5/1.6, '
                "InstructBLIP, Qwen2-VL, PaliGemma, ...; GPT-4o's top log-probabilities through an endpoint)",
                build, CARD, example='vqascore:clip-flant5-xxl', group='likelihood', hub_model=True, display='VQAScore')
