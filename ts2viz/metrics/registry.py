"""The metric registry: the :class:`Family` records, the built-in families and the one factory, :func:`load`.

A family is registered by name with a one-line description and a factory (a ``"module:attr"`` string,
imported only when a metric of the family is loaded). :mod:`ts2viz.metrics` re-exports everything
public here; the family modules live in :mod:`ts2viz.metrics.families`.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

from ..errors import InputError
from .common.device import family_precision
from .common.spec import Spec, parse_spec

__all__ = ["load", "families", "family", "register", "unregister", "check_offered", "Family", "Card", "Option",
           "Fidelity", "Spec", "parse_spec", "accepted_options", "check_options"]


#: the statuses a fidelity row may have
FIDELITY_STATUSES = ("as the original", "documented difference", "not in the original")
#: compute dtypes a card may name as the original's precision on GPU
PRECISIONS = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Option:
    """One option of a metric family (``FAMILY:MODEL?name=value``, or a keyword of :func:`load`).

    Parameters
    ----------
    name : str
        The option's name, as the factory takes it.
    default : object, optional
        Its default as a spec would spell it (``None``: none, the factory decides or it is required).
    doc : str, optional
        What it does, in one or a few sentences (Markdown).
    values : tuple, optional
        The values it allows when they are a fixed set (empty: any value of its kind).
    """

    name: str
    default: object = None
    doc: str = ""
    values: tuple = ()


@dataclass(frozen=True)
class Fidelity:
    """One aspect of a family compared with its original.

    Parameters
    ----------
    aspect : str
        What is compared (prompt template, decoding, answer -> score, aggregation, preprocessing, precision,
        default model ...).
    ts2viz : str
        What ts2viz does (Markdown).
    status : str
        One of :data:`FIDELITY_STATUSES`.
    option : str, optional
        The option that changes it (empty if none).
    test : str, optional
        The test(s) that show it, as ``tests/AREA/test_x.py::test_name`` (empty if none).
    original : str, optional
        What the original's code does, where the row says it apart from ``ts2viz``.
    """

    aspect: str
    ts2viz: str
    status: str
    option: str = ""
    test: str = ""
    original: str = ""

    def __post_init__(self):
        """Check the status (:class:`ValueError` if it is not one of :data:`FIDELITY_STATUSES`)."""
        if self.status not in FIDELITY_STATUSES:
            raise ValueError(f"fidelity row {self.aspect!r}: status must be one of {FIDELITY_STATUSES}, "
                             f"not {self.status!r}")


@dataclass(frozen=True)
class Card:
    """What a metric family is, once: the record the documentation's metric card is generated from.

    Parameters
    ----------
    summary : str
        One paragraph: what the family computes.
    paper : str, optional
        The paper (authors, title, venue, year; a link).
    citation : str, optional
        The paper's BibTeX entry.
    original : str, optional
        The reference code ts2viz follows: repository and version or files.
    output_range : str, optional
        The scores' range (e.g. ``"[-1, 1]"``).
    higher_is_better : bool or None, optional
        The scores' direction (``None`` where an option or the scores decide).
    options : tuple of Option, optional
        Every option the factory takes (:class:`Option`).
    fidelity : tuple of Fidelity, optional
        The family compared with its original, aspect by aspect (:class:`Fidelity`).
    limitations : tuple of str, optional
        What is known not to hold or not checked, one sentence or paragraph each.
    model_names : mapping of str to str, optional
        The field's short model names -> hub ids (e.g. ``clip-flant5-xxl`` -> ``zhiqiulin/clip-flant5-xxl``).
    precision : str or None, optional
        The original's compute dtype on GPU (``float32``, ``float16``, ``bfloat16``): the default GPU dtype of
        the family's models (``dtype=`` overrides; CPU stays float32). ``None``: not established yet; ts2viz's
        generic default (bfloat16 where the GPU supports it, else float16).
    description : str, optional
        The longer text (Markdown): how the family works and the choices it makes.
    """

    summary: str
    paper: str = ""
    citation: str = ""
    original: str = ""
    output_range: str = ""
    higher_is_better: bool | None = True
    options: tuple = ()
    fidelity: tuple = ()
    limitations: tuple = ()
    model_names: Mapping[str, str] = field(default_factory=dict)
    precision: str | None = None
    description: str = ""

    def __post_init__(self):
        """Check the card (:class:`ValueError` for an option listed twice or an unknown precision)."""
        names = [o.name for o in self.options]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"card options listed twice: {', '.join(dup)}")
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(f"card precision must be one of {PRECISIONS} or None, not {self.precision!r}")

    @property
    def option_names(self) -> set:
        """The names of the card's options."""
        return {o.name for o in self.options}

    def option(self, name: str) -> Option:
        """The option ``name`` (:class:`KeyError` if the card has none).

        Parameters
        ----------
        name : str
            The option's name.

        Returns
        -------
        Option
            The card's option of that name.

        Raises
        ------
        KeyError
            If the card has no option ``name``.

        Examples
        --------
        >>> card = Card("demo", options=(Option("batch_size", None, "Images per call."),))
        >>> card.option("batch_size").doc
        'Images per call.'
        """
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)


@dataclass(frozen=True)
class Family:
    """A registered metric family: its name, a one-line description, how to build it and its :attr:`card`."""

    name: str
    description: str
    target: str | Callable  # "module:attr" (imported lazily) or a factory callable
    example: str = ""
    #: the spec names code to run or a file to read (``callable:``, ``csv:``): never from an untrusted caller
    trusted_only: bool = False
    #: MODEL is a Hugging Face hub id (or a local folder): :func:`load` checks that a hub model can be
    #: had before the family's module (torch, transformers) is imported
    hub_model: bool = False
    #: the family's card when it is given at registration (else :attr:`card` reads the module's ``CARD``)
    card_given: Card | None = None

    def factory(self) -> Callable:
        """The family's factory ``f(spec, device=None, **options) -> Metric`` (its module imported now).

        Returns
        -------
        callable
            The target itself when it is callable, else the attribute its ``"module:attr"`` names (module
            paths relative to :mod:`ts2viz.metrics`).
        """
        if callable(self.target):
            return self.target
        mod, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(mod, __package__), attr)

    @property
    def card(self) -> Card | None:
        """The family's :class:`Card`, or None.

        The one given to :func:`register`, else the ``CARD`` of the factory's module (imported now; a family
        module imports nothing heavy at module level), else None.
        """
        if self.card_given is not None:
            return self.card_given
        if callable(self.target):  # its module is imported already
            module = sys.modules.get(getattr(self.target, "__module__", None) or "")
        else:
            module = importlib.import_module(self.target.partition(":")[0], __package__)
        card = getattr(module, "CARD", None)
        return card if isinstance(card, Card) else None


_REGISTRY: dict[str, Family] = {}


def register(name: str, description: str, target: str | Callable | None = None, *, example: str = "",
             trusted_only: bool = False, hub_model: bool = False, card: Card | None = None):
    """Register a metric family.

    ``target`` is a factory ``f(spec: Spec, device: str | None, **options) -> Metric`` or a lazy
    ``"module:attr"`` reference to one. ``trusted_only`` marks a family whose MODEL part names code to
    run or a file to read (see :func:`check_offered`). ``card`` is the family's :class:`Card` (default:
    the ``CARD`` of the factory's module). Without ``target`` this returns a decorator::

        @register("myscore", "my metric")
        def build(spec, device=None, **options): ...

    A family registered again under the same name (case-insensitive) replaces the earlier one.

    Parameters
    ----------
    name : str
        The family's name (the FAMILY of ``FAMILY:MODEL``; stored in lower case).
    description : str
        One line: what the family computes.
    target : callable or str, optional
        The factory, or ``"module:attr"`` naming it (module relative to :mod:`ts2viz.metrics` when it
        starts with a dot); None: return a decorator.
    example : str, optional
        An example spec.
    trusted_only : bool, optional
        The spec names code to run or a file to read: never accepted from an untrusted caller.
    hub_model : bool, optional
        MODEL is a hub id or local folder, checked by :func:`load` before the family's module is imported.
    card : Card, optional
        The family's card (default: the ``CARD`` of the factory's module).

    Returns
    -------
    callable or str
        ``target`` (registered), or, without ``target``, a decorator that registers the function it
        decorates and returns it.

    Examples
    --------
    >>> @register("demo-width", "the image's width")
    ... def build(spec, device=None):
    ...     return None
    >>> family("demo-width").description
    "the image's width"
    >>> unregister("demo-width")
    """
    def add(t):
        _REGISTRY[name.lower()] = Family(name.lower(), description, t, example, trusted_only, hub_model, card)
        return t

    if target is None:
        return add
    add(target)
    return target


# Built-in families. Only strings here: nothing heavy is imported until a metric is loaded.
register("clipscore", "CLIPScore: CLIP's image-prompt logit exp(logit_scale) * cosine as TS2 computes it "
         "(?variant=cosine: the cosine; hessel, torchmetrics) (transformers or open_clip)",
         ".families.clipscore:build", example="clipscore:openai/clip-vit-base-patch32", hub_model=True)
register("alignscore", "ALIGNScore: ALIGN's image-prompt logit cosine / temperature as TS2 computes it "
         "(?variant=cosine: the cosine) (transformers)",
         ".families.alignscore:build", example="alignscore:kakaobrain/align-base", hub_model=True)
register("siglip", "SigLIP score: SigLIP's image-prompt logit exp(logit_scale) * cosine + logit_bias as TS2 "
         "computes it (?variant=cosine: the cosine) (transformers)",
         ".families.siglip:build", example="siglip:google/siglip-base-patch16-224", hub_model=True)
register("vqascore", "VQAScore (t2v_metrics 3.0; ?recipe=t2v_metrics-3.1): the likelihood of 'Yes' to 'Does this figure show \"{prompt}\"?', "
         "asked and scored as t2v_metrics does per model (CLIP-FlanT5, LLaVA-1.5/1.6, InstructBLIP, Qwen2-VL, "
         "PaliGemma, ...; GPT-4o's top log-probabilities through an endpoint)",
         ".families.vqascore:build", example="vqascore:clip-flant5-xxl", hub_model=True)
register("itmscore", "ITMScore (t2v_metrics): BLIP-2's image-text matching probability of the image and the prompt",
         ".families.itmscore:build", example="itmscore:Salesforce/blip2-itm-vit-g", hub_model=True)
register("itcscore", "ITCScore (t2v_metrics): BLIP-2's contrastive score, the largest query-prompt cosine",
         ".families.itcscore:build", example="itcscore:Salesforce/blip2-itm-vit-g", hub_model=True)
register("tifa", "TIFA: fraction of the prompt's multiple-choice questions a VQA model answers correctly",
         ".families.tifa:build", example="tifa:Salesforce/blip-vqa-base", hub_model=True)
register("dsg", "DSG: fraction of yes/no questions answered 'yes', a question failing with a direct parent (DSG's code)",
         ".families.dsg:build", example="dsg:Salesforce/blip-vqa-base", hub_model=True)
register("softtifa", "Soft-TIFA (GenEval 2): per atom the summed first-token probability of the answer's spellings, "
         "geometric (GM) or arithmetic (AM) mean over atoms", ".families.softtifa:build",
         example="softtifa:Qwen/Qwen3-VL-8B-Instruct", hub_model=True)
register("gecko", "Gecko: LLM coverage-labelled yes/no questions, NLI-filtered, mean normalised answer likelihood",
         ".families.gecko:build", example="gecko:google/paligemma-3b-mix-224?generator=https://api.openai.com/v1", hub_model=True)
register("fineeval", "T2I-FineEval: max P(yes) over detector crops per entity/relation question, (fine+coarse)/2",
         ".families.fineeval:build", example="fineeval:Salesforce/blip-vqa-capfilt-large?generator=https://api.openai.com/v1", hub_model=True)
register("viescore", "VIEScore: a multimodal judge rates prompt following 0-10 with reasoning (min of the SC scores)",
         ".families.viescore:build", example="viescore:gpt-4o?endpoint=https://api.openai.com/v1")
register("llmscore", "LLMScore: an LLM rates a caption+detection description of the image (overall 1-100 or error count)",
         ".families.llmscore:build", example="llmscore:gpt-4?endpoint=https://api.openai.com/v1&captioner=Salesforce/blip2-opt-2.7b")
register("unifiedreward", "UnifiedReward 2.0: a reward VLM behind an endpoint rates alignment, coherence and style "
         "1-5 (the alignment line is the score)", ".families.unifiedreward:build",
         example="unifiedreward:UnifiedReward?endpoint=http://localhost:8080/v1")
register("pickscore", "PickScore: CLIP-H fine-tuned on Pick-a-Pic preferences; logit_scale.exp() * cosine as its "
         "authors' code (?score=cosine: t2v_metrics' number)",
         ".families.pickscore:build", example="pickscore:pickscore-v1", hub_model=True)
register("hpsv2", "HPS v2 / v2.1: open_clip ViT-H-14 preference model; cosine on HPSv2's own preprocessing",
         ".families.hpsv2:build", example="hpsv2:hpsv2.1", hub_model=True)
register("imagereward", "ImageReward: BLIP image-grounded text encoder + MLP reward, standardised with the authors' "
         "mean and std", ".families.imagereward:build", example="imagereward:imagereward-v1.0", hub_model=True)
register("hpsv3", "HPSv3: Qwen2-VL-7B reward model; mu read at the <|Reward|> token of its instruction",
         ".families.hpsv3:build", example="hpsv3:hpsv3", hub_model=True)
register("callable", "a Python function f(images, prompts) -> scores, named module:function",
         ".families.callable:build", example="callable:mypkg.metrics:my_score", trusted_only=True)
register("csv", "precomputed per-image scores read from a scores file (file_name + one metric column)",
         ".families.csv:build", example="csv:/data/my_scores.csv", trusted_only=True)


def unregister(name: str) -> None:
    """Remove a registered family (no error if it is not registered).

    Parameters
    ----------
    name : str
        The family's name (case-insensitive).
    """
    _REGISTRY.pop(name.lower(), None)


def families() -> list[Family]:
    """The registered families (name, one-line description, example spec), in registration order.

    Returns
    -------
    list of Family
        A new list; the built-in families first.

    Examples
    --------
    >>> [f.name for f in families()][:3]
    ['clipscore', 'alignscore', 'siglip']
    """
    return list(_REGISTRY.values())


def family(name: str) -> Family:
    """The registered family ``name``; :class:`InputError` naming the known ones if there is none.

    Parameters
    ----------
    name : str
        The family's name (case-insensitive).

    Returns
    -------
    Family
        Its record.

    Raises
    ------
    InputError
        If no family of that name is registered (the message lists the known ones).

    Examples
    --------
    >>> family("CLIPScore").example
    'clipscore:openai/clip-vit-base-patch32'
    """
    f = _REGISTRY.get(name.lower())
    if f is None:
        raise InputError(f"unknown metric family {name!r} (known: {', '.join(_REGISTRY)})")
    return f


def check_offered(spec, offered: Sequence[str]) -> str:
    """The metric spec an untrusted caller (a public app's visitor) chose, if it is one the operator offered.

    ``spec`` must equal one of ``offered`` exactly (after trimming spaces): a visitor picks from the
    operator's list and never names a module, a file or a model folder. Nothing is parsed, imported or
    looked up on disk before the match, so a refusal says nothing about the server's files.

    Parameters
    ----------
    spec : str
        The spec the caller chose (anything else is refused).
    offered : sequence of str
        The operator's list of specs.

    Returns
    -------
    str
        ``spec`` with surrounding spaces removed.

    Raises
    ------
    InputError
        If ``spec`` is not one of ``offered``: a one-line message that does not repeat the spec (it says so
        when the family is trusted-only, or when nothing is offered).

    Examples
    --------
    >>> check_offered(" clipscore:openai/clip-vit-base-patch32", ["clipscore:openai/clip-vit-base-patch32"])
    'clipscore:openai/clip-vit-base-patch32'
    >>> check_offered("csv:/etc/passwd", ["clipscore:openai/clip-vit-base-patch32"])
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: csv: metrics are not accepted here (they run code or read files on the server); ...
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
    """The option names a family's factory takes.

    Its keyword parameters (``spec`` and ``device`` aside) plus its ``extra_options`` attribute.

    Parameters
    ----------
    factory : callable
        A family's factory.

    Returns
    -------
    set of str or None
        The names; None when it takes ``**options`` without an ``extra_options`` attribute saying which
        (such a factory checks its own).

    Examples
    --------
    >>> def build(spec, device=None, *, batch_size=None, dtype=None): ...
    >>> sorted(accepted_options(build))
    ['batch_size', 'dtype']
    >>> accepted_options(lambda spec, device=None, **options: None) is None
    True
    """
    params = inspect.signature(factory).parameters.values()
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"spec", "device"}
    extra = getattr(factory, "extra_options", None)
    if extra is None and any(p.kind == p.VAR_KEYWORD for p in params):
        return None
    return names | set(extra or ())


def check_options(spec, factory: Callable, options: Mapping) -> None:
    """One check, for every family, that a spec's options are ones its factory takes (:func:`accepted_options`).

    Parameters
    ----------
    spec : Spec
        The parsed spec (named in the message).
    factory : callable
        The family's factory.
    options : mapping
        The options given (the spec's and the caller's).

    Raises
    ------
    InputError
        One line naming the unknown options and the accepted ones.

    Examples
    --------
    >>> def build(spec, device=None, *, batch_size=None): ...
    >>> check_options(parse_spec("demo:m"), build, {"batch_size": 4})
    >>> check_options(parse_spec("demo:m?bs=4"), build, {"bs": 4})
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'demo:m?bs=4': unknown option(s) bs (demo takes batch_size)
    """
    accepted = accepted_options(factory)
    bad = [] if accepted is None else sorted(set(options) - accepted)
    if bad:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(bad)} ({spec.family} takes "
                         f"{', '.join(sorted(accepted))})")


def load(spec: str, device: str | None = None, **options):
    """Build the metric named by ``spec`` on ``device`` (``cuda``, ``cpu``, ``mps``; default: best available).

    ``options`` override those in the spec's ``?key=value`` part (e.g. ``batch_size=16``,
    ``dtype="float32"``). On GPU the family's models compute in its card's precision (the original's) unless
    ``dtype`` says otherwise; the dtype used is recorded in ``metric.config["dtype"]``.

    A hub model of a family with ``hub_model`` is checked first (:func:`ts2viz.metrics.common.hub.check_hub_model_available`,
    a field's short name as the hub id the card gives it), so that an unreachable model fails in seconds,
    before torch and transformers are imported.

    Parameters
    ----------
    spec : str
        ``FAMILY:MODEL[@REVISION][?key=value&...]`` (see :mod:`ts2viz.metrics`).
    device : str or None, optional
        ``cuda``, ``cpu``, ``mps``; None: the best available.
    **options
        The family's options (on its card); they override the spec's.

    Returns
    -------
    Metric
        The metric; ``metric(images=..., prompts=...)`` scores.

    Raises
    ------
    InputError
        For a malformed spec, an unknown family or option, a model that cannot be found or loaded, or a
        device that is not available.
    """
    sp = parse_spec(spec)
    fam = family(sp.family)
    opts = {**sp.options, **options}
    card = fam.card
    if fam.hub_model and not opts.get("endpoint") and not not_on_hub(fam, sp.model):
        from ..hub import model_hub_id
        from .common.hub import check_hub_model_available

        # a field's model name (the card's model_names) is checked as the hub id it names; the family's
        # factory gets the spec as written and resolves the name itself
        hub_id = model_hub_id(sp.model, card.model_names if card is not None else None)
        check_hub_model_available(replace(sp, model=hub_id) if hub_id else sp, opts)
    factory = fam.factory()
    check_options(sp, factory, opts)
    # the card's precision is the default GPU dtype of every model the factory loads (``dtype`` overrides,
    # CPU stays float32); the dtypes they resolved are recorded in the config (part of the cache key)
    with family_precision(card.precision if card is not None else None) as used:
        metric = factory(sp, device, **opts)
    record_dtype(metric, used)
    return metric


def not_on_hub(fam: Family, model: str) -> bool:
    """Whether ``fam``'s module says ``model`` is no hub model.

    It is none when it is an API model (the module's ``API_MODELS``, scored through an endpoint) or a name the
    family refuses with its own one-line reason (``UNSUPPORTED``). Its factory says what to do; the hub is
    not asked.

    Parameters
    ----------
    fam : Family
        The family (its module is imported now; a family with a callable target has none to ask).
    model : str
        The spec's MODEL.

    Returns
    -------
    bool
        True if the family's module lists ``model`` in ``API_MODELS`` or ``UNSUPPORTED``.

    Examples
    --------
    >>> not_on_hub(family("itmscore"), "blip2-itm-vitL"), not_on_hub(family("itmscore"), "blip2-itm")
    (True, False)
    """
    if callable(fam.target):
        return False
    module = importlib.import_module(fam.target.partition(":")[0], __package__)
    return model in (getattr(module, "API_MODELS", None) or ()) or model in (getattr(module, "UNSUPPORTED", None) or {})


def record_dtype(metric, used: Sequence[str]) -> None:
    """Write the compute dtype(s) ``used`` while building ``metric`` into ``metric.config["dtype"]``.

    One name when its models share one (``"float32"``), the distinct names in load order when they do not;
    nothing for a metric that loaded no model. A dtype the factory recorded itself is kept.

    Parameters
    ----------
    metric : Metric
        The metric just built (a metric without a dict ``config`` is left alone).
    used : sequence of str
        The dtype names its models resolved, in load order (:func:`ts2viz.metrics.common.device.family_precision`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> m = SimpleNamespace(config={})
    >>> record_dtype(m, ["bfloat16", "float32", "bfloat16"])
    >>> m.config
    {'dtype': ['bfloat16', 'float32']}
    """
    names = list(dict.fromkeys(used))
    if names and isinstance(getattr(metric, "config", None), dict):
        metric.config.setdefault("dtype", names[0] if len(names) == 1 else names)
