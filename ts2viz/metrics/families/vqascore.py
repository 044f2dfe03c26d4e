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
