"""VQAScore: the probability a VQA model answers "Yes" to "Does this figure show '{prompt}'?"."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from .base import Metric
from .spec import Spec
from .vqa import VQAModel, load_vqa_model

QUESTION = "Does this figure show '{prompt}'? Please answer yes or no."


class VQAScore(Metric):
    """P("yes") of ``vqa`` for :data:`QUESTION` (or ``question``, a template with ``{prompt}``)."""

    name = "vqascore"

    def __init__(self, spec: Spec, vqa: VQAModel, question: str = QUESTION, batch_size: int | None = None):
        if "{prompt}" not in question:
            raise InputError(f"metric {spec.raw!r}: the question template must contain {{prompt}}")
        config = {"family": "vqascore", **vqa.config, "question": question, "answer": "P(yes) first token"}
        super().__init__(spec, config, vqa.device, batch_size or vqa.batch_size)
        self.vqa = vqa
        self.question = question

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        return self.vqa.yes_probability(list(items), [self.question.format(prompt=p) for p in prompts])


def build(spec: Spec, device: str | None = None, *, question: str = QUESTION, batch_size: int | None = None,
          dtype: str | None = None, template: str | None = None, **options) -> Metric:
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=batch_size, template=template)
    return VQAScore(spec, vqa, question, batch_size)
