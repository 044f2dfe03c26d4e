"""Metrics whose questions an LLM writes from each prompt and a VQA model answers (Gecko, T2I-FineEval).

:func:`require_generator` refuses a spec without the ``generator=`` LLM; :class:`LLMQuestionsMetric` holds
the VQA model and the question source, records both in the config, decides whether the choices are spelt
out, and has every prompt's questions written before any image is scored.
"""
from __future__ import annotations

from typing import Sequence

from ...errors import InputError
from .base import Metric
from .spec import Spec


def require_generator(spec: Spec, generator: str | None, uses: str) -> None:
    """Refuse ``spec`` when it names no question-writing LLM.

    Parameters
    ----------
    spec : Spec
        The metric's spec.
    generator : str or None
        Its ``generator`` option.
    uses : str
        What the family does with the LLM, for the message (e.g. "Gecko writes its questions").

    Raises
    ------
    InputError
        If ``generator`` is empty.

    Examples
    --------
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> require_generator(parse_spec("gecko:m"), None, "Gecko writes its questions")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'gecko:m': Gecko writes its questions with an LLM: give ?generator=URL&generator_model=NAME (OpenAI-compatible API) or ?generator=hf:MODEL
    """
    if not generator:
        raise InputError(f"metric {spec.raw!r}: {uses} with an LLM: give "
                         "?generator=URL&generator_model=NAME (OpenAI-compatible API) or ?generator=hf:MODEL")


class LLMQuestionsMetric(Metric):
    """A metric over a VQA model and a question source whose ``get(prompt)`` gives a prompt's questions.

    The config is ``{"family": name, **vqa.config, "vqa_dtype": ..., **questions.config, "list_choices": ...,
    **config}``.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    vqa : VQAModel
        The VQA model.
    questions : object
        The question source: ``get(prompt)`` and a ``config`` dict.
    list_choices : bool or None
        Spell out the choices in the question; None: on for chat VLMs only (BLIP-VQA and PaliGemma take the
        bare question).
    config : dict
        The family's own config entries.
    batch_size : int
        Images per scoring call.
    """

    def __init__(self, spec: Spec, vqa, questions, list_choices: bool | None, config: dict, batch_size: int):
        self.vqa = vqa
        self.questions = questions
        self.list_choices = bool(getattr(vqa, "chat", False)) if list_choices is None else bool(list_choices)
        config = {"family": self.name, **vqa.config, "vqa_dtype": str(vqa.dtype), **questions.config,
                  "list_choices": self.list_choices, **config}
        super().__init__(spec, config, vqa.device, batch_size)

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Write (or read from the cache) every prompt's questions before any image is scored.

        Parameters
        ----------
        prompts : sequence of str
            The prompts to be scored.
        """
        for p in dict.fromkeys(prompts):
            self.questions.get(p)
