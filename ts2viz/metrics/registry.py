"""The metric registry: the :class:`Family` records, the built-in families and the one factory, :func:`load`.

A family is registered by name with a one-line description and a factory (a ``"module:attr"`` string,
imported only when a metric of the family is loaded). :mod:`ts2viz.metrics` re-exports everything
public here; the family modules live in :mod:`ts2viz.metrics.families`.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..errors import InputError
from .common.spec import Spec, parse_spec

__all__ = ["load", "families", "family", "register", "unregister", "check_offered", "Family", "Spec",
           "parse_spec"]


@dataclass(frozen=True)
class Family:
    """A registered metric family: its name, a one-line description and how to build it."""

    name: str
    description: str
    target: str | Callable  # "module:attr" (imported lazily) or a factory callable
    example: str = ""
    #: the spec names code to run or a file to read (``callable:``, ``csv:``): never from an untrusted caller
    trusted_only: bool = False
    #: MODEL is a Hugging Face hub id (or a local folder): :func:`load` checks that a hub model can be
    #: had before the family's module (torch, transformers) is imported
    hub_model: bool = False

    def factory(self) -> Callable:
        if callable(self.target):
            return self.target
        mod, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(mod, __package__), attr)


_REGISTRY: dict[str, Family] = {}


def register(name: str, description: str, target: str | Callable | None = None, *, example: str = "",
             trusted_only: bool = False, hub_model: bool = False):
    """Register a metric family.

    ``target`` is a factory ``f(spec: Spec, device: str | None, **options) -> Metric`` or a lazy
    ``"module:attr"`` reference to one. ``trusted_only`` marks a family whose MODEL part names code to
    run or a file to read (see :func:`check_offered`). Without ``target`` this returns a decorator::

        @register("myscore", "my metric")
        def build(spec, device=None, **options): ...
    """
    def add(t):
        _REGISTRY[name.lower()] = Family(name.lower(), description, t, example, trusted_only, hub_model)
        return t

    if target is None:
        return add
    add(target)
    return target


# Built-in families. Only strings here: nothing heavy is imported until a metric is loaded.
register("clipscore", "CLIPScore: cosine of CLIP image and prompt embeddings (transformers or open_clip)",
         ".families.clipscore:build", example="clipscore:openai/clip-vit-base-patch32", hub_model=True)
register("alignscore", "ALIGNScore: cosine of ALIGN image and prompt embeddings (transformers)",
         ".families.alignscore:build", example="alignscore:kakaobrain/align-base", hub_model=True)
register("siglip", "SigLIP score: cosine of SigLIP image and prompt embeddings (transformers)",
         ".families.siglip:build", example="siglip:google/siglip-base-patch16-224", hub_model=True)
register("vqascore", "VQAScore (t2v_metrics): likelihood of the answer 'Yes' to 'Does this figure show \"{prompt}\"? "
         "Please answer yes or no.' (CLIP-FlanT5, LLaVA-1.5, any VQA model)",
         ".families.vqascore:build", example="vqascore:zhiqiulin/clip-flant5-xxl", hub_model=True)
register("tifa", "TIFA: fraction of the prompt's multiple-choice questions a VQA model answers correctly",
         ".families.tifa:build", example="tifa:Salesforce/blip-vqa-base", hub_model=True)
register("dsg", "DSG: fraction of yes/no questions answered 'yes', a question failing with a direct parent (DSG's code)",
         ".families.dsg:build", example="dsg:Salesforce/blip-vqa-base", hub_model=True)
register("gecko", "Gecko: LLM coverage-labelled yes/no questions, NLI-filtered, mean normalised answer likelihood",
         ".families.gecko:build", example="gecko:google/paligemma-3b-mix-224?generator=https://api.openai.com/v1", hub_model=True)
register("fineeval", "T2I-FineEval: max P(yes) over detector crops per entity/relation question, (fine+coarse)/2",
         ".families.fineeval:build", example="fineeval:Salesforce/blip-vqa-capfilt-large?generator=https://api.openai.com/v1", hub_model=True)
register("viescore", "VIEScore: a multimodal judge rates prompt following 0-10 with reasoning (min of the SC scores)",
         ".families.viescore:build", example="viescore:gpt-4o?endpoint=https://api.openai.com/v1")
register("llmscore", "LLMScore: an LLM rates a caption+detection description of the image (overall 1-100 or error count)",
         ".families.llmscore:build", example="llmscore:gpt-4?endpoint=https://api.openai.com/v1&captioner=Salesforce/blip2-opt-2.7b")
register("callable", "a Python function f(images, prompts) -> scores, named module:function",
         ".families.callable:build", example="callable:mypkg.metrics:my_score", trusted_only=True)
register("csv", "precomputed per-image scores read from a scores file (file_name + one metric column)",
         ".families.csv:build", example="csv:/data/my_scores.csv", trusted_only=True)


def unregister(name: str) -> None:
    """Remove a registered family (no error if it is not registered)."""
    _REGISTRY.pop(name.lower(), None)


def families() -> list[Family]:
    """The registered families (name, one-line description, example spec), in registration order."""
    return list(_REGISTRY.values())


def family(name: str) -> Family:
    """The registered family ``name``; :class:`InputError` naming the known ones if there is none."""
    f = _REGISTRY.get(name.lower())
    if f is None:
        raise InputError(f"unknown metric family {name!r} (known: {', '.join(_REGISTRY)})")
    return f


def check_offered(spec, offered: Sequence[str]) -> str:
    """The metric spec an untrusted caller (a public app's visitor) chose, if it is one the operator offered.

    ``spec`` must equal one of ``offered`` exactly (after trimming spaces): a visitor picks from the
    operator's list and never names a module, a file or a model folder. Nothing is parsed, imported or
    looked up on disk before the match, so a refusal says nothing about the server's files. Raises
    :class:`InputError` with a one-line message that does not repeat the spec.
    """
    text = spec.strip() if isinstance(spec, str) else ""
    if text and text in {s.strip() for s in offered}:
        return text
    head = text.partition(":")[0].strip().lower()
    fam = _REGISTRY.get(head)
    if fam is not None and fam.trusted_only:
        raise InputError(f"{fam.name}: metrics are not accepted here (they run code or read files on the "
                         "server); choose one of the offered metrics")
    if not offered:
        raise InputError("this app offers no metrics for live scoring")
    raise InputError("that metric is not offered here; choose one of the offered metrics")


def accepted_options(factory: Callable) -> set[str] | None:
    """The option names a family's factory takes: its keyword parameters (``spec`` and ``device`` aside)
    plus its ``extra_options`` attribute; None when it takes ``**options`` without saying which (such a
    factory checks its own)."""
    params = inspect.signature(factory).parameters.values()
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"spec", "device"}
    extra = getattr(factory, "extra_options", None)
    if extra is None and any(p.kind == p.VAR_KEYWORD for p in params):
        return None
    return names | set(extra or ())


def check_options(spec, factory: Callable, options: Mapping) -> None:
    """One check, for every family, that a spec's options are ones its factory takes (:func:`accepted_options`):
    a one-line :class:`InputError` naming the unknown ones and the accepted ones."""
    accepted = accepted_options(factory)
    bad = [] if accepted is None else sorted(set(options) - accepted)
    if bad:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(bad)} ({spec.family} takes "
                         f"{', '.join(sorted(accepted))})")


def load(spec: str, device: str | None = None, **options):
    """Build the metric named by ``spec`` on ``device`` (``cuda``, ``cpu``, ``mps``; default: best available).

    ``options`` override those in the spec's ``?key=value`` part (e.g. ``batch_size=16``,
    ``dtype="float32"``). Raises :class:`InputError` for a malformed spec, an unknown family, a model that
    cannot be found or loaded, or a device that is not available.
    """
    sp = parse_spec(spec)
    fam = family(sp.family)
    opts = {**sp.options, **options}
    if fam.hub_model:
        from .common.hub import check_hub_model_available

        check_hub_model_available(sp, opts)    # in a second, before torch and transformers are imported
    factory = fam.factory()
    check_options(sp, factory, opts)
    metric = factory(sp, device, **opts)
    return metric
