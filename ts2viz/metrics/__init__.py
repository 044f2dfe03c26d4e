"""The metric library: one registry and one factory for every metric ts2viz can run.

A metric is named by a SPEC string, ``FAMILY:MODEL``. MODEL is a Hugging Face hub id or a local model
folder (transformers), ``openclip:ARCH/TAG`` for open_clip (TAG a pretrained tag or a checkpoint file),
``module:function`` for ``callable:`` and a file path for ``csv:``. A hub revision may follow the model as
``@REVISION`` and options as ``?key=value&key=value``. Examples::

    clipscore:openai/clip-vit-base-patch32
    clipscore:openclip:ViT-B-32/laion2b_s34b_b79k
    alignscore:kakaobrain/align-base
    siglip:google/siglip-base-patch16-224
    tifa:Salesforce/blip-vqa-base
    dsg:llava-hf/llava-1.5-7b-hf
    vqascore:zhiqiulin/clip-flant5-xxl
    vqascore:llava-hf/llava-1.5-7b-hf
    gecko:google/paligemma-3b-mix-224?generator=https://api.openai.com/v1&generator_model=gpt-4o
    fineeval:Salesforce/blip-vqa-capfilt-large?generator=https://api.openai.com/v1&detector=PekingU/rtdetr_r50vd
    viescore:llava-hf/llava-1.5-7b-hf
    llmscore:gpt-4?endpoint=https://api.openai.com/v1&captioner=Salesforce/blip2-opt-2.7b
    callable:mypkg.metrics:my_score
    csv:/data/precomputed.csv

The same string names the metric's column in a scores file, its cache key and its label in the app.

Importing this package is cheap: the families' modules (and torch, transformers, open_clip) are imported
only when a metric is loaded.

Where things live: :mod:`.family` (what a family is: the :class:`Family` record and its :class:`Card`),
:mod:`.registry` (finding the families, :func:`load`), :mod:`.families` (one module per family, ending with
its ``FAMILY`` record), :mod:`.backbones` (the models several families share) and :mod:`.common` (the
:class:`~.common.base.Metric` base class, spec parsing, devices, caches).
"""
from __future__ import annotations

from .common.spec import Spec
from .family import Card, Family, Fidelity, Option
from .registry import (accepted_options, check_offered, check_options, family, load, parse_spec, register,
                       unregister)

# ``families`` is both the subpackage of family modules and the registry's list of families: the
# subpackage is callable (``families()`` is :func:`ts2viz.metrics.registry.families`), and it is bound
# here at once so that the name means the same before and after a family's module is imported.
from . import families  # noqa: E402,I001  (after the registry: calling it imports the registry)

__all__ = ["load", "families", "family", "register", "unregister", "check_offered", "Family", "Card", "Option",
           "Fidelity", "Spec", "parse_spec", "accepted_options", "check_options"]
