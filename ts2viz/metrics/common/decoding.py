"""How a generative VQA model decodes a free-form answer: one named setting per source.

A QA metric asks its VQA model open questions and maps the answers to choices, so the decoding changes
scores (DSG's authors ran InstructBLIP with beam search and a repetition penalty, not greedily). A
:class:`Decoding` records one source's call: its ``generate`` arguments, its prompt, the model types it
was written for, and how the model is called (:attr:`Decoding.call`). The settings a source's family
defines live in that family's module, on its metric class (``QAMetric.decodings``, by model type); ``decoding=NAME`` on any QA family names one of them (:func:`check_decoding`; the registry
gathers them: :func:`ts2viz.metrics.registry.decoding_presets`), or :data:`GREEDY`, ts2viz's own: the
model's prompt template (chat template or ``Question: … Answer:``), greedy, ``max_new_tokens`` (metric
option, default 10) new tokens.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ...errors import InputError


@dataclass(frozen=True)
class Decoding:
    """A named decoding setting: the ``generate`` arguments as its source passes them, and the prompt.

    ``arguments`` are the source's own (for the record and the config hash); :meth:`generate_kwargs`
    gives the arguments that make current transformers do the same. ``template`` is the prompt
    (``"{question}"``: the question alone; None: the model's own template); ``list_choices`` whether
    the metric spells out the choices in the question (None: the metric's default).
    """

    name: str
    source: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    template: str | None = None
    list_choices: bool | None = None
    #: model types the setting was written for (empty: any generative VQA model)
    model_types: tuple[str, ...] = ()
    #: how the model is called: ``generate`` (the processor's inputs, the model's ``generate``, the new tokens),
    #: ``prefix`` (``[CLS]`` + the question's tokens as the decoder's prefix, the tokens after it: GIT's way) or
    #: ``embeds`` (the language model given ``inputs_embeds`` only, as transformers 4.31 ran InstructBLIP)
    call: str = "generate"

    def generate_kwargs(self, *, encoder_decoder: bool, max_new_tokens: int) -> dict:
        """``generate`` keyword arguments for current transformers that reproduce the source's call.

        Written for the case where the language model is given ``inputs_embeds`` only (transformers
        4.31's InstructBLIP call).

        A decoder-only model's ``max_length``/``min_length`` counted generated tokens only in 4.31
        (the sequence started empty); current transformers subtracts the embeddings' length, so they
        become ``max_new_tokens``/``min_new_tokens``. An encoder–decoder's lengths count decoder
        tokens in both versions and pass unchanged. Sampling-only arguments are dropped when
        ``do_sample`` is False (they change nothing there; current transformers warns about them).
        Without its own lengths a setting generates ``max_new_tokens`` tokens.

        Parameters
        ----------
        encoder_decoder : bool
            Whether the language model is an encoder–decoder (its lengths then pass unchanged).
        max_new_tokens : int
            The number of new tokens to generate when the setting names no length of its own.

        Returns
        -------
        dict
            Keyword arguments for ``generate``.

        Examples
        --------
        >>> from ts2viz.metrics.common.decoding import Decoding
        >>> d = Decoding("x", "a source", dict(do_sample=False, num_beams=5, max_length=256, min_length=1, top_p=0.9))
        >>> kw = d.generate_kwargs(encoder_decoder=False, max_new_tokens=10)
        >>> kw["max_new_tokens"], kw["min_new_tokens"], "top_p" in kw
        (256, 1, False)
        """
        kw = dict(self.arguments)
        if not kw.get("do_sample", False):
            for k in ("top_p", "top_k", "temperature"):
                kw.pop(k, None)
        if "max_new_tokens" in kw:
            pass
        elif "max_length" not in kw:
            kw["max_new_tokens"] = int(max_new_tokens)
        elif not encoder_decoder:
            kw["max_new_tokens"] = kw.pop("max_length")
            if "min_length" in kw:
                kw["min_new_tokens"] = kw.pop("min_length")
        return kw

    @property
    def config(self) -> dict:
        """What a metric's config records (so caches of different decodings never mix)."""
        return {"decoding": self.name, "decoding_arguments": dict(self.arguments),
                **({"decoding_prompt": self.template} if self.template else {})}


#: ts2viz's own decoding: the model's prompt, greedy, ``max_new_tokens``
GREEDY = Decoding(name="greedy", source="ts2viz", arguments=MappingProxyType({"do_sample": False}))


def default_decoding(decodings: Mapping[str, Decoding], model_type: str | None) -> Decoding:
    """The decoding a QA metric uses unless told otherwise: its family's own for the model's type, else greedy.

    Parameters
    ----------
    decodings : mapping of str to Decoding
        The family's own decodings by model type (its :attr:`~ts2viz.metrics.qametric.metric.QAMetric.decodings`).
    model_type : str or None
        The VQA model's type (``instructblip``, ``blip``, ``git``, ``blip-2``, ...).

    Returns
    -------
    Decoding
        The family's decoding for the model type, or :data:`GREEDY`.

    Examples
    --------
    >>> from ts2viz.metrics.common.decoding import Decoding, default_decoding
    >>> own = {"git": Decoding("src", "a source", template="[CLS]{question}", model_types=("git",))}
    >>> default_decoding(own, "git").template, default_decoding(own, "llava").name
    ('[CLS]{question}', 'greedy')
    """
    return decodings.get(model_type, GREEDY)


def check_decoding(name: str, model_type: str | None, what: str,
                   presets: Mapping[str, Mapping[str, Decoding]]) -> Decoding:
    """The decoding setting ``name`` for a model of ``model_type``, checked.

    Parameters
    ----------
    name : str
        The ``decoding=`` option: :data:`GREEDY`'s name or one of ``presets``.
    model_type : str or None
        The VQA model's type.
    what : str
        What is being configured (the metric's spec), for error messages.
    presets : mapping of str to mapping of str to Decoding
        The named settings, each by the model type it was written for
        (:func:`ts2viz.metrics.registry.decoding_presets`).

    Returns
    -------
    Decoding
        The setting of that name for the model's type.

    Raises
    ------
    InputError
        If ``name`` is unknown, or the setting was written for other model types.

    Examples
    --------
    >>> from ts2viz.metrics.common.decoding import Decoding, check_decoding
    >>> d = Decoding("mine", "my lab's vqa.py", model_types=("blip",))
    >>> check_decoding("mine", "blip", "x:y", {"mine": {"blip": d}}).source
    "my lab's vqa.py"
    >>> check_decoding("mine", "git", "x:y", {"mine": {"blip": d}})
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: x:y: decoding=mine is my lab's vqa.py and applies to blip models, not 'git'
    """
    if name == GREEDY.name:
        return GREEDY
    if name not in presets:
        raise InputError(f"{what}: decoding must be one of {', '.join([*presets, GREEDY.name])}, not {name!r}")
    by_type = presets[name]
    if model_type not in by_type:
        sources = list(dict.fromkeys(d.source for d in by_type.values()))
        common = os.path.commonprefix(sources).rsplit(" ", 1)[0].strip()
        said = sources[0] if len(sources) == 1 else f"{common or 'its sources'}'s call for each model type"
        raise InputError(f"{what}: decoding={name} is {said} and applies to {', '.join(by_type)} models, "
                         f"not {model_type or 'this model'!r}")
    return by_type[model_type]
