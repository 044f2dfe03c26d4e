"""TIFA's decodings: Yushi-Hu/tifa ``tifascore/vqa_models.py``, one per model type (``decoding=tifa``).

BLIP-VQA ``BLIP.vqa``: the bare question, ``generate(max_length=50)`` (greedy; the answer decoder's 50
tokens count its start token); GIT ``GIT.vqa``: ``[CLS]`` + the question's tokens (no ``[SEP]``, no
template), ``generate(max_length=50)`` counting the question, the answer the tokens after it; BLIP-2
``BLIP2.vqa`` (LAVIS ``blip2_t5``): TIFA's prompt ("Answer the multiple-choice question. ...",
``prompt_style=tifa_blip2``) and LAVIS' ``generate`` defaults: beam search, ``num_beams=5``,
``max_new_tokens=30`` (LAVIS' ``max_length``), ``min_length=1``, ``repetition_penalty=1.0``,
``length_penalty=1.0``. The answers are decoded with ``skip_special_tokens`` and not stripped. They are
the default of ``tifa:`` on those models.
"""
from __future__ import annotations

from types import MappingProxyType

from ...common.decoding import Decoding

#: TIFA's calls, per model type (module docstring): ``TIFAMetric.decodings``
DECODINGS: dict[str, Decoding] = {
    "blip": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py BLIP.vqa",
                     arguments=MappingProxyType(dict(max_length=50)), list_choices=False, model_types=("blip",)),
    "git": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py GIT.vqa",
                    arguments=MappingProxyType(dict(max_length=50)), template="[CLS]{question}", list_choices=False,
                    model_types=("git",), call="prefix"),
    "blip-2": Decoding(name="tifa", source="Yushi-Hu/tifa tifascore/vqa_models.py BLIP2.vqa (LAVIS blip2_t5.generate)",
                       arguments=MappingProxyType(dict(do_sample=False, num_beams=5, max_new_tokens=30, min_length=1,
                                                       top_p=0.9, repetition_penalty=1.0, length_penalty=1.0,
                                                       num_return_sequences=1, temperature=1)),
                       list_choices=False, model_types=("blip-2",)),
}
