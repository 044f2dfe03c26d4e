"""How a generative VQA model decodes a free-form answer: one named setting per source.

A QA metric (TIFA, DSG) asks its VQA model open questions and maps the answers to choices, so the
decoding changes scores: DSG's authors ran InstructBLIP with beam search and a repetition penalty, not
greedily. The ``decoding=`` option of ``dsg:`` (and ``tifa:``) names one of :data:`DECODINGS`:

``dsg`` (default of ``dsg:`` when the VQA model is an InstructBLIP)
    j-min/DSG ``dsg/vqa_utils.py`` ``InstructBLIP.vqa``: the processor is given the bare question
    (``text=question``: no template, no listed choices), then ``generate(do_sample=False, num_beams=5,
    max_length=256, min_length=1, top_p=0.9, repetition_penalty=1.5, length_penalty=1.0,
    temperature=1)``, and the output is decoded with ``skip_special_tokens=True`` and stripped. DSG pins
    transformers 4.31, whose ``InstructBlipForConditionalGeneration.generate`` passes the language model
    only ``inputs_embeds`` (query embeddings, then the prompt's): the sequence ``generate`` sees starts
    empty, so ``max_length``/``min_length`` count the generated tokens only and the repetition penalty
    applies to generated tokens only. ts2viz reproduces that call on current transformers (which would
    count the prompt in both); ``top_p`` and ``temperature`` are inert under ``do_sample=False`` and
    are not passed. DSG ran one question at a time; ts2viz batches only questions whose prompts have
    the same token length, so no answer depends on padding.
``tifa`` (default of ``tifa:`` on the models TIFA's code runs through transformers or LAVIS)
    Yushi-Hu/tifa ``tifascore/vqa_models.py``, one setting per model type (:data:`TIFA_DECODINGS`):
    BLIP-VQA ``BLIP.vqa``: the bare question, ``generate(max_length=50)`` (greedy; the answer decoder's
    50 tokens count its start token); GIT ``GIT.vqa``: ``[CLS]`` + the question's tokens (no ``[SEP]``, no
    template), ``generate(max_length=50)`` counting the question, the answer the tokens after it;
    BLIP-2 ``BLIP2.vqa`` (LAVIS ``blip2_t5``): TIFA's prompt ("Answer the multiple-choice question. ...",
    ``prompt_style=tifa_blip2``) and LAVIS' ``generate`` defaults: beam search, ``num_beams=5``,
    ``max_new_tokens=30`` (LAVIS' ``max_length``), ``min_length=1``, ``repetition_penalty=1.0``,
    ``length_penalty=1.0``. The answers are decoded with ``skip_special_tokens`` and not stripped.
``greedy`` (every other model, and ``decoding=greedy`` to override)
    ts2viz's own: the model's prompt template (chat template or ``Question: … Answer:``), greedy,
    ``max_new_tokens`` (metric option, default 10) new tokens.
"""
from __future__ import annotations

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
        >>> from ts2viz.metrics.common.decoding import DSG_INSTRUCTBLIP
        >>> kw = DSG_INSTRUCTBLIP.generate_kwargs(encoder_decoder=False, max_new_tokens=10)
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


#: DSG's InstructBLIP VQA (j-min/DSG ``dsg/vqa_utils.py``, transformers 4.31; module docstring)
DSG_INSTRUCTBLIP = Decoding(
    name="dsg",
    source="j-min/DSG dsg/vqa_utils.py InstructBLIP.vqa (transformers 4.31)",
    arguments=MappingProxyType(dict(do_sample=False, num_beams=5, max_length=256, min_length=1, top_p=0.9,
                                    repetition_penalty=1.5, length_penalty=1.0, temperature=1)),
    template="{question}",
    list_choices=False,
    model_types=("instructblip",),
)
#: ts2viz's own decoding: the model's prompt, greedy, ``max_new_tokens``
GREEDY = Decoding(name="greedy", source="ts2viz", arguments=MappingProxyType({"do_sample": False}))

#: TIFA's calls, per model type (module docstring)
TIFA_DECODINGS: dict[str, Decoding] = {
    "blip": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py BLIP.vqa",
                     arguments=MappingProxyType(dict(max_length=50)), list_choices=False, model_types=("blip",)),
    "git": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py GIT.vqa",
                    arguments=MappingProxyType(dict(max_length=50)), template="[CLS]{question}", list_choices=False,
                    model_types=("git",)),
    "blip-2": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py BLIP2.vqa (LAVIS blip2_t5.generate)",
                       arguments=MappingProxyType(dict(do_sample=False, num_beams=5, max_new_tokens=30, min_length=1,
                                                       top_p=0.9, repetition_penalty=1.0, length_penalty=1.0,
                                                       num_return_sequences=1, temperature=1)),
                       list_choices=False, model_types=("blip-2",)),
}

#: the settings ``decoding=`` can name (``tifa`` stands for the setting of the model's type)
DECODINGS: dict[str, Decoding] = {d.name: d for d in (DSG_INSTRUCTBLIP, GREEDY)}
DECODING_NAMES = ("dsg", "tifa", "greedy")


def default_decoding(decodings: Mapping[str, Decoding], model_type: str | None) -> Decoding:
    """The decoding a QA metric uses unless told otherwise: its family's own for the model's type, else greedy.

    Parameters
    ----------
    decodings : mapping of str to Decoding
        The family's own decodings by model type (its :attr:`~ts2viz.metrics.qametric.metric.QAMetric.decodings`: DSG's
        :data:`DSG_INSTRUCTBLIP` on an InstructBLIP, TIFA's :data:`TIFA_DECODINGS`).
    model_type : str or None
        The VQA model's type (``instructblip``, ``blip``, ``git``, ``blip-2``, ...).

    Returns
    -------
    Decoding
        The family's decoding for the model type, or :data:`GREEDY`.

    Examples
    --------
    >>> from ts2viz.metrics.common.decoding import TIFA_DECODINGS, default_decoding
    >>> default_decoding(TIFA_DECODINGS, "git").template, default_decoding(TIFA_DECODINGS, "llava").name
    ('[CLS]{question}', 'greedy')
    """
    return decodings.get(model_type, GREEDY)


def check_decoding(name: str, model_type: str | None, what: str) -> Decoding:
    """The decoding setting ``name`` for a model of ``model_type``, checked.

    Parameters
    ----------
    name : str
        The ``decoding=`` option: one of :data:`DECODING_NAMES` (``tifa`` stands for the setting of the
        model's type in :data:`TIFA_DECODINGS`).
    model_type : str or None
        The VQA model's type.
    what : str
        What is being configured (the metric's spec), for error messages.

    Returns
    -------
    Decoding
        The setting.

    Raises
    ------
    InputError
        If ``name`` is unknown, or the setting was written for other model types.

    Examples
    --------
    >>> from ts2viz.metrics.common.decoding import check_decoding
    >>> check_decoding("tifa", "blip", "tifa:x").source
    'Yushi-Hu/tifa tifascore/vqa_models.py BLIP.vqa'
    >>> check_decoding("dsg", "blip", "dsg:x")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: dsg:x: decoding=dsg is j-min/DSG dsg/vqa_utils.py InstructBLIP.vqa (transformers 4.31) and applies to instructblip models, not 'blip'
    """
    if name == "tifa":
        if model_type not in TIFA_DECODINGS:
            raise InputError(f"{what}: decoding=tifa is TIFA's code's call and applies to "
                             f"{', '.join(TIFA_DECODINGS)} models, not {model_type or 'this model'!r}")
        return TIFA_DECODINGS[model_type]
    if name not in DECODINGS:
        raise InputError(f"{what}: decoding must be one of {', '.join(DECODING_NAMES)}, not {name!r}")
    d = DECODINGS[name]
    if d.model_types and model_type not in d.model_types:
        raise InputError(f"{what}: decoding={name} is {d.source} and applies to "
                         f"{', '.join(d.model_types)} models, not {model_type or 'this model'!r}")
    return d
