"""DSG's decoding: j-min/DSG ``dsg/vqa_utils.py`` ``InstructBLIP.vqa`` (``decoding=dsg``).

The processor is given the bare question (``text=question``: no template, no listed choices), then
``generate(do_sample=False, num_beams=5, max_length=256, min_length=1, top_p=0.9, repetition_penalty=1.5,
length_penalty=1.0, temperature=1)``, and the output is decoded with ``skip_special_tokens=True`` and
stripped. DSG pins transformers 4.31, whose ``InstructBlipForConditionalGeneration.generate`` passes the
language model only ``inputs_embeds`` (query embeddings, then the prompt's): the sequence ``generate`` sees
starts empty, so ``max_length``/``min_length`` count the generated tokens only and the repetition penalty
applies to generated tokens only. ts2viz reproduces that call on current transformers (which would count
the prompt in both; :meth:`~ts2viz.metrics.common.decoding.Decoding.generate_kwargs`); ``top_p`` and
``temperature`` are inert under ``do_sample=False`` and are not passed. DSG ran one question at a time;
ts2viz batches only questions whose prompts have the same token length, so no answer depends on padding.
It is the default of ``dsg:`` when the VQA model is an InstructBLIP.
"""
from __future__ import annotations

from types import MappingProxyType

from ...common.decoding import Decoding

#: DSG's InstructBLIP VQA (j-min/DSG ``dsg/vqa_utils.py``, transformers 4.31; module docstring)
DSG_INSTRUCTBLIP = Decoding(
    name="dsg",
    source="j-min/DSG dsg/vqa_utils.py InstructBLIP.vqa (transformers 4.31)",
    arguments=MappingProxyType(dict(do_sample=False, num_beams=5, max_length=256, min_length=1, top_p=0.9,
                                    repetition_penalty=1.5, length_penalty=1.0, temperature=1)),
    template="{question}",
    list_choices=False,
    model_types=("instructblip",),
    call="embeds",
)

#: DSG's decodings by VQA model type (``DSGMetric.decodings``)
DECODINGS = {t: DSG_INSTRUCTBLIP for t in DSG_INSTRUCTBLIP.model_types}
