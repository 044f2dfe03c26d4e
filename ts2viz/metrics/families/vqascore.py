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
from ..backbones.vqa import VQAModel, load_vqa_model
from ..common.base import Metric
from ..common.spec import Spec
from ..registry import Card, Fidelity, Option

_T = "tests/metrics/test_metrics_vqascore.py::"

CARD = Card(
    summary=("VQAScore as its authors' code (linzhiqiu/t2v_metrics) computes it: a VQA model is asked "
             "`Does this figure show \"{prompt}\"? Please answer yes or no.` and the score is the likelihood of "
             "the answer `Yes`, `exp(-mean cross-entropy)` of the answer's tokens, teacher forced."),
    paper=("Z. Lin, D. Pathak, B. Li, J. Li, X. Xia, G. Neubig, P. Zhang, D. Ramanan. Evaluating Text-to-Visual "
           "Generation with Image-to-Text Generation. ECCV 2024. https://arxiv.org/abs/2404.01291"),
    citation="""@inproceedings{lin2024evaluating,
  title     = {Evaluating Text-to-Visual Generation with Image-to-Text Generation},
  author    = {Lin, Zhiqiu and Pathak, Deepak and Li, Baiqi and Li, Jiayao and Xia, Xide and Neubig, Graham
               and Zhang, Pengchuan and Ramanan, Deva},
  booktitle = {European Conference on Computer Vision (ECCV)},
  year      = {2024}
}""",
    original=("linzhiqiu/t2v_metrics: `t2v_metrics/models/vqascore_models/clip_t5_model.py`, `llava_model.py`, "
              "`mm_utils.py`, `clip_t5/`, read in the history before its v3.1, where this code lives."),
    output_range="[0, 1] (a likelihood)",
    higher_is_better=True,
    options=(
        Option("question_template", 'Does this figure show "{}"? Please answer yes or no.',
               "t2v_metrics' question template; `{}` (or `{prompt}`) stands for the prompt. Percent-encode `?`, "
               "`&`, `\"` and spaces in a spec string, or pass it to `ts2viz.metrics.load` as a keyword "
               "argument."),
        Option("answer_template", "Yes", "t2v_metrics' answer template; `{}` stands for the prompt."),
        Option("caption_likelihood", False,
               "P(prompt | image), the VisualGPTScore t2v_metrics documents: sets `question_template=` (empty) "
               "and `answer_template={}`; give neither template with it."),
        Option("answer", "likelihood",
               "How the answer becomes a score: `likelihood` (t2v_metrics: `exp(-mean CE)` of the answer's "
               "tokens) or `first_token_yes` (ts2viz's former score: the first answer token's probability "
               "summed over the spellings of \"yes\"; takes no `answer_template`).",
               ("likelihood", "first_token_yes")),
        Option("question", None, "The former name of `question_template` (give one of the two)."),
        Option("batch_size", None, "Images per model call (default: the VQA model's pair batch size). Speed only."),
        Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: the card's "
               "precision, else bfloat16 where the GPU supports it, else float16; always float32 on CPU).",
               ("float32", "float16", "bfloat16")),
        Option("template", None,
               "The VQA model's prompt template with `{question}` (default: the model's own: its chat "
               "template, PaliGemma's `answer en {question}`, BLIP-VQA's bare question)."),
        Option("llava_format", "t2v_metrics",
               "How LLaVA-1.5 is prompted: `t2v_metrics` (its own conversation, `SYSTEM USER: <image>\\nQUESTION "
               "ASSISTANT: Yes</s>`) or `chat` (the processor's chat template).", ("t2v_metrics", "chat")),
        Option("vision_tower", None,
               "The CLIP vision tower (hub id or folder) of a CLIP-FlanT5 checkpoint, or of a LLaVA-1.5 "
               "checkpoint in LLaVA's own layout, when it is not where the config says (e.g. offline copies)."),
        Option("tokenizer", None,
               "A CLIP-FlanT5 checkpoint's T5 tokenizer (hub id or folder) when the folder has none, e.g. "
               "`google/flan-t5-xl` (for `clip-flant5-xl`) or `google/flan-t5-xxl`."),
    ),
    fidelity=(
        Fidelity("question template", '`Does this figure show "{}"? Please answer yes or no.`', "as the original",
                 "question_template",
                 f"{_T}test_clip_flant5_matches_t2v_metrics_formula, "
                 f"{_T}test_clip_flant5_templates_and_caption_likelihood"),
        Fidelity("answer template", '`Yes`; P(caption) as `question_template=""`, `answer_template="{}"`',
                 "as the original", "answer_template",
                 f"{_T}test_clip_flant5_templates_and_caption_likelihood, {_T}test_llava_matches_t2v_metrics_formula"),
        Fidelity("answer → score",
                 "`exp(-mean CE)` over the answer's tokens: CLIP-FlanT5 `Yes </s>` (T5 tokenizes each chunk with "
                 "`</s>`), LLaVA-1.5 the tokens after the question (one fewer when it ends in a space, as the "
                 "original counts), `</s>` included", "as the original", "answer",
                 f"{_T}test_clip_flant5_matches_t2v_metrics_formula, {_T}test_llava_matches_t2v_metrics_formula"),
        Fidelity("first-token P(yes) summed over spellings", "`answer=first_token_yes` only (ts2viz's former default)",
                 "documented difference", "answer", f"{_T}test_first_token_yes_is_an_explicit_option"),
        Fidelity("prompt format",
                 "CLIP-FlanT5 `t5_chat` and LLaVA-1.5 `chat`: system message + ` USER: <image>\\n` + question + "
                 "` ASSISTANT: `; `<image>` chunks tokenised separately (LLaVA: BOS kept once)", "as the original",
                 "llava_format",
                 f"{_T}test_clip_flant5_matches_t2v_metrics_formula, {_T}test_llava_matches_t2v_metrics_formula"),
        Fidelity("image preprocessing",
                 "padded to square with the processor's mean colour (`expand2square`), then the CLIP image "
                 "processor (transformers' PIL-based one, as the original's); tested on wide, tall and square "
                 "images", "as the original", "",
                 f"{_T}test_clip_flant5_matches_t2v_metrics_formula, {_T}test_llava_matches_t2v_metrics_formula"),
        Fidelity("CLIP-FlanT5 architecture",
                 "tower's penultimate layer, patch tokens (no CLS), `mlp2x_gelu` projector, features spliced at "
                 "`<image>` in the T5 encoder input, right padding (ts2viz's own implementation of the released "
                 "checkpoints' config and key layout; tested with and without the tower in the checkpoint)",
                 "as the original", "vision_tower", f"{_T}test_clip_flant5_matches_t2v_metrics_formula"),
        Fidelity("LLaVA-1.5 weights",
                 "a local folder of `liuhaotian/llava-v1.5-*` in LLaVA's own code layout (`LlavaLlamaForCausalLM`, "
                 "`model.mm_projector.*`, `mm_vision_tower` in the config), as t2v_metrics loads it, is converted "
                 "on load to transformers' `LlavaForConditionalGeneration` (`ts2viz.metrics.backbones.llava`: "
                 "`model.*` → `model.language_model.*`, `mm_projector.0/2` → `multi_modal_projector.linear_1/2`, "
                 "the CLIP tower from `?vision_tower=FOLDER` or a folder beside the checkpoint named as the tower, "
                 "e.g. `clip-vit-large-patch14-336`; one-line error naming the tower when it is missing offline). "
                 "`llava-hf/*` works too (the image placeholder expanded to its 576 image tokens, the same "
                 "features at the same place). Converted = transformers twin = t2v_metrics' formula, 1e-6",
                 "as the original", "vision_tower",
                 f"{_T}test_llava_in_its_own_code_layout_is_converted, {_T}test_llava_matches_t2v_metrics_formula"),
        Fidelity("LLaVA-1.5 vocabulary",
                 "the softmax of the score runs over the tokenizer's own vocabulary (32000 rows, the original LM "
                 "head's); llava-hf's appended `<image>` and padding rows (32064 in all) and the converted "
                 "checkpoint's zero `<image>` row are left out (the twin's random `<image>` row changes scores "
                 "when included)", "as the original", "", f"{_T}test_llava_in_its_own_code_layout_is_converted"),
        Fidelity("CLIP-FlanT5 vocabulary",
                 "embeddings and LM head resized to the tokenizer (Flan-T5: 32128 → 32100 rows) before scoring, as "
                 "the original's loader does: the softmax runs over the tokenizer's tokens only (the tiny "
                 "checkpoint has 4 spare rows)", "as the original", "",
                 f"{_T}test_clip_flant5_matches_t2v_metrics_formula"),
        Fidelity("default model", "none: MODEL is always named (t2v_metrics defaults to `clip-flant5-xxl`)",
                 "documented difference"),
        Fidelity("precision",
                 "bfloat16 weights and autocast on GPU as t2v_metrics, float32 on CPU (the GPU path not run on "
                 "the build machine: no GPU there)", "as the original", "dtype"),
        Fidelity("context length",
                 "CLIP-FlanT5 prompts and answers cut at 2048 tokens as the original; LLaVA not cut (TS2 prompts "
                 "are far shorter)", "as the original"),
        Fidelity("other VQA models (BLIP-VQA, PaliGemma, ...)",
                 "the answer's likelihood in the model's own format (BLIP-VQA: its answer decoder over "
                 "`[DEC] Yes [SEP]`; a generative VLM: the answer's tokens after its chat template or "
                 "`template=`, no end token)", "not in the original", "template",
                 f"{_T}test_blip_scores_the_answer_through_its_answer_decoder, "
                 f"{_T}test_answer_scores_do_not_depend_on_batching"),
        Fidelity("aggregation", "one score per image, no aggregation", "as the original", "",
                 f"{_T}test_cli_score_clip_flant5_then_leaderboard"),
    ),
    limitations=(
        "No real checkpoint was loaded on the build machine (no hub access): the key names and config of the "
        "released checkpoints were read from the original's code, and the tests compare with the original's "
        "formula recomputed from plain transformers parts on tiny random-weight checkpoints (1e-6 relative).",
        "Tokenizers: t2v_metrics loads the slow SentencePiece tokenizers (`use_fast=False`; CLIP-FlanT5 was "
        "trained with `T5TokenizerFast`); ts2viz uses what transformers loads for the model, the fast tokenizer "
        "where one exists. Their exact pieces for real Flan-T5 and LLaMA were not compared.",
        "A local copy of a CLIP-FlanT5 checkpoint without tokenizer files needs `?tokenizer=google/flan-t5-xl` "
        "(or `-xxl`); the error says so.",
        "t2v_metrics 3.0 scores other VLMs (InstructBLIP, Qwen2-VL, LLaVA-OneVision, ...) each in its own way; "
        "ts2viz applies one generic format to the VQA models other than CLIP-FlanT5 and LLaVA-1.5 (issue 31).",
    ),
    model_names={"clip-flant5-xxl": "zhiqiulin/clip-flant5-xxl", "clip-flant5-xl": "zhiqiulin/clip-flant5-xl"},
    description="""MODEL may be:

- **CLIP-FlanT5** (`zhiqiulin/clip-flant5-xxl`, t2v_metrics' default, or `-xl`), VQAScore's own model.
  `ts2viz/metrics/backbones/clip_flant5.py` implements its architecture from transformers parts (CLIP vision
  tower, penultimate layer's patch features, a Linear-GELU-Linear projector, Flan-T5 encoder-decoder with the
  image features in place of `<image>` in the encoder input); it loads the released checkpoints' layout
  (`model_type: clip_t5`, the `mm_*` config keys, the state dict's `vision_tower.vision_tower.vision_model.*`
  and `mm_projector.{0,2}.*` keys), so a checkpoint folder works as `vqascore:/models/clip-flant5-xl`. The
  CLIP tower and its image processor come from the config's `mm_vision_tower`
  (`openai/clip-vit-large-patch14-336`; the tower's weights from the checkpoint when it has them), the
  tokenizer from the folder or, for the two hub ids, from `google/flan-t5-xl` / `-xxl` as t2v_metrics loads
  it; `?vision_tower=PATH&tokenizer=PATH` name local copies. The same model answers TIFA's and DSG's
  questions (`tifa:zhiqiulin/clip-flant5-xl`).
- **LLaVA-1.5** in the transformers layout (`llava-hf/llava-1.5-7b-hf`, `-13b-hf`): scored in t2v_metrics'
  own conversation (`SYSTEM USER: <image>\\nQUESTION ASSISTANT: Yes</s>` with LLaVA's system message, its
  chunk-wise tokenisation around `<image>` and its label mask) on images padded to square with the image
  processor's mean colour; `?llava_format=chat` uses the processor's chat template instead. A local folder
  of the original checkpoints (`liuhaotian/llava-v1.5-7b`, `-13b`: LLaVA's own code layout, which
  t2v_metrics loads) is converted on load (`vqascore:/models/llava-v1.5-7b`); its CLIP tower is the
  config's `mm_vision_tower`, looked for as a folder beside the checkpoint
  (`/models/clip-vit-large-patch14-336`) or named with `?vision_tower=PATH`. The score's softmax runs over
  the tokenizer's 32000 tokens, as the original model's (llava-hf's extra rows left out).
- any other VQA model of the backbone (BLIP-VQA, PaliGemma, InstructBLIP, ...): the answer's likelihood in
  that model's own format (BLIP-VQA: its answer decoder over `[DEC] Yes [SEP]`; a generative VLM: the
  answer's tokens after its chat template or `template=`, no end token). These are ts2viz's extensions.

```python
from ts2viz import metrics
vqa = metrics.load("vqascore:zhiqiulin/clip-flant5-xl", device="cuda")   # or a local checkpoint folder
scores = vqa(images=["a.png", "b.png"], prompts=["a red cat", "two dogs"])  # one prompt per image
p_caption = metrics.load("vqascore:zhiqiulin/clip-flant5-xl?caption_likelihood=true")
```
""",
)

#: t2v_metrics' default question (CLIP-FlanT5, LLaVA-1.5 and its other VQAScore models), also TS2's
QUESTION_TEMPLATE = 'Does this figure show "{}"? Please answer yes or no.'
#: t2v_metrics' default answer
ANSWER_TEMPLATE = "Yes"
#: how the answer becomes a score
ANSWER_MODES = {"likelihood": "exp(-mean CE) of the answer's tokens (t2v_metrics)",
                "first_token_yes": "P(yes) summed over yes spellings, first answer token (ts2viz <= 0.x)"}
#: kept for code that imported the old name
QUESTION = QUESTION_TEMPLATE


def fill(template: str, prompt: str) -> str:
    """``template`` with the prompt in place of ``{}`` or ``{prompt}`` (t2v_metrics' ``str.format``)."""
    try:
        return template.format(prompt, prompt=prompt)
    except (IndexError, KeyError, ValueError) as e:
        raise InputError(f"template {template!r}: use {{}} for the prompt and {{{{ }}}} for a literal brace ({e})")


class VQAScore(Metric):
    """The likelihood of ``answer_template`` as ``vqa``'s answer to ``question_template`` (see module doc)."""

    name = "vqascore"

    def __init__(self, spec: Spec, vqa: VQAModel, question_template: str = QUESTION_TEMPLATE,
                 answer_template: str = ANSWER_TEMPLATE, answer: str = "likelihood", batch_size: int | None = None):
        if answer not in ANSWER_MODES:
            raise InputError(f"metric {spec.raw!r}: answer must be one of {', '.join(ANSWER_MODES)}, not {answer!r}")
        fill(question_template, "x"), fill(answer_template, "x")  # malformed templates fail before scoring
        if answer == "first_token_yes" and answer_template != ANSWER_TEMPLATE:
            raise InputError(f"metric {spec.raw!r}: answer=first_token_yes scores 'yes'; it takes no answer_template")
        config = {"family": "vqascore", **vqa.config, "question_template": question_template,
                  "answer_template": answer_template, "answer": ANSWER_MODES[answer]}
        super().__init__(spec, config, vqa.device, batch_size or vqa.batch_size)
        self.vqa = vqa
        self.question_template, self.answer_template, self.answer = question_template, answer_template, answer

    def prepare(self, image, file_name: str | None = None):
        """The VQA model's CPU work on the image, done ahead of the model (:meth:`VQAModel.prepare_image`)."""
        return self.vqa.prepare_image(image)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        questions = [fill(self.question_template, p) for p in prompts]
        if self.answer == "first_token_yes":
            return self.vqa.yes_probability(list(items), questions)
        return self.vqa.answer_score(list(items), questions, [fill(self.answer_template, p) for p in prompts])


def build(spec: Spec, device: str | None = None, *, question_template: str | None = None,
          answer_template: str | None = None, caption_likelihood: bool = False, answer: str = "likelihood",
          question: str | None = None, batch_size: int | None = None, dtype: str | None = None,
          template: str | None = None, llava_format: str = "t2v_metrics", vision_tower: str | None = None,
          tokenizer: str | None = None, **options) -> Metric:
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if question is not None:  # the former name of question_template
        if question_template is not None:
            raise InputError(f"metric {spec.raw!r}: give question_template or question, not both")
        question_template = question
    if caption_likelihood is True:
        if question_template not in (None, "") or answer_template not in (None, "{}"):
            raise InputError(f"metric {spec.raw!r}: caption_likelihood sets both templates; give neither")
        question_template, answer_template = "", "{}"
    q = QUESTION_TEMPLATE if question_template is None else str(question_template)
    a = ANSWER_TEMPLATE if answer_template is None else str(answer_template)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=batch_size, template=template,
                         llava_format=llava_format, vision_tower=vision_tower, tokenizer=tokenizer)
    return VQAScore(spec, vqa, q, a, answer, batch_size)


#: the options :func:`build` takes beyond its keyword parameters (none: ``**options`` only catches typos)
build.extra_options = ()
