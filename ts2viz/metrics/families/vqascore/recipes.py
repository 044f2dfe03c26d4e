"""t2v_metrics' VQAScore, release by release and model by model: its names, and how it asks and scores each.

t2v_metrics (``t2v_metrics/models/vqascore_models/*``) gives every VLM its own question template, answer
template, prompt format, image preprocessing, scoring rule and precision, and these changed between its
releases (:data:`RELEASES`): 3.0 (PyPI) and 3.1 (linzhiqiu/t2v_metrics commit 6ecb74f, not on PyPI), which
asks Qwen2.5-VL, Qwen3-VL, Gemma 3, PaliGemma and GPT-4o ``Does this figure show "{}"? Please answer Yes or
No.`` and scores the answer's tokens at the end of generation with a softmax temperature (``end_tokens``).
(Between the two, ``main`` asked Qwen2.5-VL ``Does this image show "{}"? Answer the question with Yes or No``;
no release has that.) :data:`RECIPES` records them (read from its code; the formats are implemented in
:mod:`ts2viz.metrics.backbones.vqa.t2v` and :mod:`ts2viz.metrics.backbones.vqa`, and proved on reference
fixtures where marked ``proved``). :func:`recipe_for` picks the recipe of a loaded model by its architecture
and the release. :data:`MODEL_NAMES` maps t2v_metrics' model names to hub checkpoints; :data:`API_MODELS`
are its log-probability API models; :data:`UNSUPPORTED` says, in one line each, why a t2v_metrics name does
not load here.

Nothing heavy is imported here.
"""
from __future__ import annotations

from dataclasses import dataclass

from ....errors import InputError

def fill(template: str, prompt: str) -> str:
    """``template`` with the prompt in place of ``{}`` or ``{prompt}`` (t2v_metrics' ``str.format``).

    Parameters
    ----------
    template : str
        A question or answer template; ``{}`` or ``{prompt}`` stands for the prompt, ``{{`` and ``}}`` for
        literal braces.
    prompt : str
        The prompt.

    Returns
    -------
    str
        The filled template.

    Raises
    ------
    InputError
        If the template has another placeholder or an unbalanced brace.

    Examples
    --------
    >>> fill(Q_FIGURE, "a red cat")
    'Does this figure show "a red cat"? Please answer yes or no.'
    >>> fill("Is it {prompt}? {{yes}}", "a dog")
    'Is it a dog? {yes}'
    """
    try:
        return template.format(prompt, prompt=prompt)
    except (IndexError, KeyError, ValueError) as e:
        raise InputError(f"template {template!r}: use {{}} for the prompt and {{{{ }}}} for a literal brace ({e})")


#: t2v_metrics' default question (CLIP-FlanT5, LLaVA-1.5/1.6, PaliGemma, GPT-4o)
Q_FIGURE = 'Does this figure show "{}"? Please answer yes or no.'
#: t2v_metrics 3.1's question (Qwen2.5-VL, Qwen3-VL, Qwen3.5, Gemma 3, PaliGemma, GPT-4o)
Q_FIGURE_31 = 'Does this figure show "{}"? Please answer Yes or No.'
#: the t2v_metrics releases whose recipes ts2viz follows (``recipe=t2v_metrics-3.1``); the first is the default
RELEASES = ("t2v_metrics-3.0", "t2v_metrics-3.1")


@dataclass(frozen=True)
class Recipe:
    """How t2v_metrics 3.0 asks and scores one kind of model.

    Parameters
    ----------
    name : str
        The recipe's name (recorded in a metric's config).
    question : str
        The question template (``{}`` is the prompt).
    answer : str
        The answer template.
    rule : str
        ``likelihood`` (``exp(-mean cross-entropy)`` of the answer's tokens and the model's end token, teacher
        forced), ``first_token`` (the first generated token's probability of the answer's first token),
        ``end_tokens`` (t2v_metrics 3.1: the answer's tokens at the end of greedy generation, geometric mean,
        softmax temperature), ``spellings_sum`` (GenEval 2: the first step's probabilities of the answer's
        first tokens in four spellings, added) or ``top_logprobs`` (an API's top log-probabilities of the
        first token).
    precision : str or None
        t2v_metrics' compute dtype on a GPU (``None``: an API).
    original : str
        t2v_metrics' class that scores it.
    proved : bool, optional
        Whether a reference fixture made by that class proves ts2viz's scores
        (``tests/metrics/reference/test_vqascore_reference.py``).
    note : str, optional
        A difference from the original, where there is one.
    release : str, optional
        The t2v_metrics release it is read from (:data:`RELEASES`), or the other code (GenEval 2's).
    """

    name: str
    question: str
    answer: str
    rule: str
    precision: str | None
    original: str
    proved: bool = False
    note: str = ""
    release: str = RELEASES[0]


RECIPES: dict[str, Recipe] = {r.name: r for r in [
    Recipe("clip-flant5", Q_FIGURE, "Yes", "likelihood", "bfloat16", "clip_t5_model.CLIPT5Model", True),
    Recipe("llava-1.5", Q_FIGURE, "Yes", "likelihood", "bfloat16", "llava_model.LLaVAModel", True),
    Recipe("llava-1.6", Q_FIGURE, "Yes", "likelihood", "bfloat16", "llava16_model.LLaVA16Model", True,
           "as t2v_metrics runs it: one square-padded image, no anyres grid"),
    Recipe("instructblip", "Question: " + Q_FIGURE, "yes", "likelihood", "bfloat16",
           "instructblip_model.InstructBLIPModel", True),
    Recipe("qwen2-vl", 'Does this image show "{}"?', "Yes", "first_token", "bfloat16",
           "qwen2vl_model.Qwen2VLModel", True),
    Recipe("paligemma", Q_FIGURE, "Yes", "first_token", "float32", "paligemma_model.PaliGemmaModel", True),
    Recipe("llava-onevision", 'Does this image show "{}"? Answer the question with Yes or No', "Yes", "first_token",
           "float16", "llavaov_model.LLaVAOneVisionModel", False,
           "transformers' LLaVA-OneVision processor prepares the image (t2v_metrics runs LLaVA-NeXT's own code)"),
    Recipe("llama-3.2-vision", 'Does this image show "{}"? Answer the question with Yes or No', "Yes", "first_token",
           "bfloat16", "llama32_model.LLaMA32VisionModel", False,
           "t2v_metrics 3.0's forward raises NameError (lm_prob undefined); ts2viz computes what it evidently "
           "means: the first token's probability of the answer's first token after BOS"),
    Recipe("gpt-4o", Q_FIGURE, "Yes", "top_logprobs", None, "gpt4v_model.GPT4VModel", True,
           "a request that fails after the retries gives NaN, where t2v_metrics returns 0.0"),
    # not in t2v_metrics 3.0: the nearest recipe, said so in the config
    Recipe("blip-2", "Question: " + Q_FIGURE, "yes", "likelihood", "bfloat16", "(none: as InstructBLIP)", False,
           "t2v_metrics 3.0 has no BLIP-2 VQAScore; scored as its LAVIS sibling InstructBLIP"),
    Recipe("instructblip-vicuna", "Question: " + Q_FIGURE, "yes", "likelihood", "bfloat16",
           "(none: as InstructBLIP Flan-T5)", False,
           "t2v_metrics 3.0 has InstructBLIP Flan-T5 only; the answer is followed by Vicuna's </s>"),
    Recipe("generic", Q_FIGURE, "Yes", "likelihood", None, "(none)", False,
           "not a t2v_metrics model: its default templates, the answer's tokens and the model's end token"),
    # t2v_metrics 3.1 (commit 6ecb74f)
    Recipe("qwen2.5-vl-3.1", Q_FIGURE_31, "Yes", "end_tokens", "bfloat16", "qwen2vl_model.Qwen2VLModel", True,
           "where t2v_metrics 3.1 raises ValueError (the only generated token is the end token) the score is NaN",
           release=RELEASES[1]),
    Recipe("qwen3-vl-3.1", Q_FIGURE_31, "Yes", "end_tokens", "bfloat16", "qwen3vl_model.Qwen3VLModel", True,
           "where t2v_metrics 3.1 raises ValueError (the only generated token is the end token) the score is NaN; "
           "Qwen3.5 is told from Qwen3-VL by its architecture (t2v_metrics: by 'qwen3.5' in the model name)",
           release=RELEASES[1]),
    Recipe("gemma-3-3.1", Q_FIGURE_31, "Yes", "end_tokens", "bfloat16", "gemma3_model.Gemma3Model", False,
           "the processor's chat prompt and image processing, as t2v_metrics 3.1's apply_chat_template(tokenize="
           "True) gives them; not proved on a fixture", release=RELEASES[1]),
    Recipe("paligemma-3.1", Q_FIGURE_31, "Yes", "first_token", "float32", "paligemma_model.PaliGemmaModel", False,
           "3.0's reading with 3.1's question; not proved: on the 3.0 fixture's checkpoint t2v_metrics 3.1 under "
           "transformers 4.57 differs from ts2viz by 3.6e-4 relative on one image (open)", release=RELEASES[1]),
    # GenEval 2's evaluation.py (facebookresearch/GenEval2 commit a6e82d2), its VQAScore on Qwen3-VL
    Recipe("geneval2", 'Does this image show "{}"? Answer the question with Yes or No.', "Yes", "spellings_sum",
           "bfloat16", "GenEval2 evaluation.py vqa_score", True,
           "the prompt is put into the question once (GenEval 2 formats the filled question a second time, which "
           "differs only for a prompt with braces)", release="GenEval2 a6e82d2"),
    Recipe("gpt-4o-3.1", Q_FIGURE_31, "Yes", "top_logprobs", None, "gpt4v_model.GPT4VModel", False,
           "3.0's reading with 3.1's question; not proved on a fixture", release=RELEASES[1]),
]}

#: model type of the loaded model (see :func:`recipe_for`) -> recipe
ARCHITECTURES = {
    # (llava-hf's LLaVA-NeXT twins, model type llava_next, take the generic recipe: t2v_metrics runs LLaVA's own
    # 1.6 checkpoint, which ts2viz converts: vqascore:llava-v1.6-13b)
    "clip_t5": "clip-flant5", "llava": "llava-1.5", "qwen2_vl": "qwen2-vl",
    "qwen2_5_vl": "qwen2-vl", "paligemma": "paligemma", "llava_onevision": "llava-onevision",
    "mllama": "llama-3.2-vision",
}

#: model type -> t2v_metrics 3.1's recipe (3.1 has no CLIP-FlanT5, LLaVA, InstructBLIP, LLaVA-OneVision or Llama)
ARCHITECTURES_31 = {
    "qwen2_vl": "qwen2.5-vl-3.1", "qwen2_5_vl": "qwen2.5-vl-3.1", "qwen3_vl": "qwen3-vl-3.1",
    "qwen3_vl_moe": "qwen3-vl-3.1", "qwen3_5": "qwen3-vl-3.1", "gemma3": "gemma-3-3.1", "paligemma": "paligemma-3.1",
}

_QWEN = {"2b": "2B", "7b": "7B", "72b": "72B", "3b": "3B", "32b": "32B"}
#: t2v_metrics 3.0's VQAScore model names (image models) -> hub checkpoints ts2viz loads
MODEL_NAMES: dict[str, str] = {
    "clip-flant5-xxl": "zhiqiulin/clip-flant5-xxl",
    "clip-flant5-xl": "zhiqiulin/clip-flant5-xl",
    "llava-v1.5-13b": "liuhaotian/llava-v1.5-13b",
    "llava-v1.5-7b": "liuhaotian/llava-v1.5-7b",
    "sharegpt4v-7b": "Lin-Chen/ShareGPT4V-7B",
    "sharegpt4v-13b": "Lin-Chen/ShareGPT4V-13B",
    "llava-v1.6-13b": "liuhaotian/llava-v1.6-vicuna-13b",
    "instructblip-flant5-xxl": "Salesforce/instructblip-flan-t5-xxl",
    "instructblip-flant5-xl": "Salesforce/instructblip-flan-t5-xl",
    **{f"qwen2-vl-{k}": f"Qwen/Qwen2-VL-{_QWEN[k]}-Instruct" for k in ("2b", "7b", "72b")},
    **{f"qwen2.5-vl-{k}": f"Qwen/Qwen2.5-VL-{_QWEN[k]}-Instruct" for k in ("3b", "7b", "32b", "72b")},
    **{f"paligemma-3b-mix-{r}": f"google/paligemma-3b-mix-{r}" for r in (224, 448, 896)},
    "llava-onevision-qwen2-7b-si": "llava-hf/llava-onevision-qwen2-7b-si-hf",
    "llava-onevision-qwen2-7b-ov": "llava-hf/llava-onevision-qwen2-7b-ov-hf",
    "llama-3.2-11b-vision": "meta-llama/Llama-3.2-11B-Vision",
    "llama-3.2-11b-vision-instruct": "meta-llama/Llama-3.2-11B-Vision-Instruct",
    "llama-3.2-90b-vision": "meta-llama/Llama-3.2-90B-Vision",
    "llama-3.2-90b-vision-instruct": "meta-llama/Llama-3.2-90B-Vision-Instruct",
    "llama-guard-3-11b-vision": "meta-llama/Llama-Guard-3-11B-Vision",
    # new in t2v_metrics 3.1 (qwen3vl_model.py, gemma3_model.py)
    **{f"qwen3-vl-{k}{t}": f"Qwen/Qwen3-VL-{k.upper()}-{'Thinking' if t else 'Instruct'}"
       for k in ("235b-a22b", "30b-a3b", "32b", "8b", "4b", "2b") for t in ("", "-thinking")},
    **{f"qwen3.5-{k}": f"Qwen/Qwen3.5-{k.upper()}" for k in ("4b", "9b", "27b")},
    **{f"gemma-3-{k}-it": f"google/gemma-3-{k}-it" for k in ("4b", "12b", "27b")},
}
#: t2v_metrics 3.0's API models: scored through an OpenAI-compatible endpoint's top log-probabilities
API_MODELS = ("gpt-4-turbo", "gpt-4o", "gpt-4.1")

_REMOTE = ("its checkpoints run their own Python code from the hub (trust_remote_code), which ts2viz does not "
           "run; transformers has no class for them")
#: t2v_metrics 3.0 model names ts2viz does not load -> why, in one line
UNSUPPORTED: dict[str, str] = {
    **{n: f"InternVL ({n}): {_REMOTE}" for n in (
        "internvl2-1b", "internvl2-2b", "internvl2-4b", "internvl2-8b", "internvl2-26b", "internvl2-40b",
        "internvl2-llama3-76b", "internvl2.5-1b", "internvl2.5-2b", "internvl2.5-4b", "internvl2.5-8b",
        "internvl2.5-26b", "internvl2.5-38b", "internvl2.5-78b", "internvl3-8b", "internvl3-14b", "internvl3-78b")},
    **{n: f"Molmo ({n}): {_REMOTE} (t2v_metrics 3.0's own Molmo forward also fails: it reads an undefined "
          "'paths')" for n in ("molmo-72b-0924", "molmo-7b-d-0924", "molmo-7b-o-0924", "molmoe-1b-0924")},
    "mplug-owl3-7b": f"mPLUG-Owl3: {_REMOTE}",
    **{n: f"Gemini ({n}): t2v_metrics reads Google's own API; ts2viz asks OpenAI-compatible endpoints for "
          "top log-probabilities (vqascore:MODEL?endpoint=URL)" for n in (
        "gemini-1.5-pro", "gemini-1.5-flash", "gemini-2.5-flash", "gemini-2.5-pro")},
    **{n: f"{n} is a text-only language model: it cannot see the image" for n in (
        "llama-3.2-1b", "llama-3.2-3b", "llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-guard-3-1b")},
    **{n: f"{n}: new in t2v_metrics 3.1 (gemma4_model.py); ts2viz does not follow its recipe yet" for n in (
        "gemma-4-12b-it", "gemma-4-31b-it")},
    **{n: f"{n}: new in t2v_metrics 3.1 (qwen3omni_model.py, an audio-visual model); ts2viz does not follow its "
          "recipe" for n in ("qwen3-omni-30b-a3b", "qwen3-omni-30b-a3b-thinking", "qwen3-omni-30b-a3b-captioner")},
    "clip-flant5-xxl-no-system": "a prompt ablation of clip-flant5-xxl: give its question in question_template",
    "clip-flant5-xxl-no-system-no-user": "a prompt ablation of clip-flant5-xxl: give its question in "
                                         "question_template",
}


def recipe_for(vqa, release: str | None = None) -> Recipe:
    """The t2v_metrics recipe of a loaded :class:`~ts2viz.metrics.backbones.vqa.model.VQAModel` (its architecture).

    The recipe is chosen by the model config's ``model_type`` (:data:`ARCHITECTURES`, and
    :data:`ARCHITECTURES_31` for ``release="t2v_metrics-3.1"``); LLaVA-1.6 checkpoints are told from
    LLaVA-1.5 by the loaded layout, InstructBLIP and BLIP-2 by whether the language model is an
    encoder-decoder (FlanT5) or a decoder (Vicuna, OPT). Without a release, an architecture only 3.1 scores
    (Qwen3-VL, Qwen3.5, Gemma 3) gets 3.1's recipe and anything else 3.0's; anything 3.0 does not know gets the
    ``generic`` recipe.

    Parameters
    ----------
    vqa : VQAModel
        The loaded VQA model.
    release : str, optional
        One of :data:`RELEASES` (None: the default rule above).

    Returns
    -------
    Recipe
        One of :data:`RECIPES`.

    Raises
    ------
    InputError
        When the release named has no recipe for the architecture.
    """
    kind = getattr(getattr(getattr(vqa, "model", None), "config", None), "model_type", "")
    if release == RELEASES[1] or (release is None and kind in ARCHITECTURES_31 and kind not in ARCHITECTURES):
        if kind not in ARCHITECTURES_31:
            raise InputError(f"t2v_metrics 3.1 has no VQAScore recipe for {kind or 'this'} models (it scores "
                             f"{', '.join(sorted(ARCHITECTURES_31))}); use recipe={RELEASES[0]}")
        return RECIPES[ARCHITECTURES_31[kind]]
    if release == RELEASES[0] and kind in ARCHITECTURES_31 and kind not in ARCHITECTURES:
        raise InputError(f"t2v_metrics 3.0 has no VQAScore recipe for {kind} models; use recipe={RELEASES[1]}")
    layout = str(getattr(vqa, "identity", {}).get("layout", ""))
    if kind == "llava" and layout.startswith("llava-1.6"):
        return RECIPES["llava-1.6"]
    if kind in ARCHITECTURES:
        return RECIPES[ARCHITECTURES[kind]]
    if kind in ("instructblip", "blip-2"):
        if getattr(vqa, "encoder_decoder", False):
            return RECIPES["instructblip" if kind == "instructblip" else "blip-2"]
        return RECIPES["instructblip-vicuna"] if kind == "instructblip" else RECIPES["generic"]
    return RECIPES["generic"]
