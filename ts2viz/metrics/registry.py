"""The metric registry: finding the families, looking them up, and the one factory, :func:`load`.

The built-in families are found, not listed: every module (or subpackage) of :mod:`ts2viz.metrics.families`
ends with one ``FAMILY = Family(...)`` record (:class:`~ts2viz.metrics.family.Family`), read the first time
the families are asked for (a family module imports nothing heavy at module level, so this imports no
torch). :func:`register` adds a family at run time (a user's metric). :mod:`ts2viz.metrics` re-exports
everything public here.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import replace
from typing import Callable, Mapping, Sequence

from ..errors import InputError
from .common.device import family_precision
from .common.spec import Spec
from .common.spec import parse_spec as split_spec
from .family import GROUPS, Card, Family

__all__ = ["load", "families", "family", "register", "unregister", "check_offered", "parse_spec",
           "accepted_options", "check_options", "details_kind", "display_name", "question_writers",
           "DISPLAY_ORDER"]

#: the order the listings (``ts2viz metrics``, the documentation, the app) show the families in: group by
#: group (:data:`ts2viz.metrics.family.GROUPS`), within a group as named here; a family not named here
#: follows the named ones of its group, by name
DISPLAY_ORDER: dict[str, tuple[str, ...]] = {
    "embedding": ("clipscore", "alignscore", "siglip"),
    "likelihood": ("vqascore", "itmscore", "itcscore"),
    "questions": ("tifa", "dsg", "softtifa", "gecko", "fineeval"),
    "judge": ("viescore", "llmscore", "unifiedreward"),
    "preference": ("pickscore", "hpsv2", "imagereward", "hpsv3"),
    "user": ("callable", "csv"),
}

#: the families registered at run time (:func:`register`), by name, in registration order
_ADDED: dict[str, Family] = {}
#: the built-in families (found once, :func:`builtin_families`), by name
_FOUND: dict[str, Family] = {}
#: names of built-in families a :func:`unregister` removed
_REMOVED: set = set()


def builtin_families() -> dict[str, Family]:
    """The families of :mod:`ts2viz.metrics.families`: the ``FAMILY`` record of each of its modules, by name.

    Found on the first call (each module imported; none imports anything heavy at module level), the
    same dict after. A subpackage (a family with helper modules, such as ``gecko/``) is read as its
    ``__init__``, which holds the record; its helper modules are not searched.

    Returns
    -------
    dict of str to Family
        Name -> record, in module-name order.

    Raises
    ------
    ValueError
        If a module holds a family of another name than its own (:func:`builtin_family` looks a family up
        by its module's name).
    """
    if not _FOUND:
        pkg = importlib.import_module(".families", __package__)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            rec = getattr(importlib.import_module(f"{pkg.__name__}.{info.name}"), "FAMILY", None)
            if isinstance(rec, Family):
                if rec.name != info.name:
                    raise ValueError(f"{pkg.__name__}.{info.name} holds the family {rec.name!r}: a family's "
                                     "module is named for it")
                _FOUND[rec.name] = rec
    return _FOUND


def builtin_family(name: str) -> Family | None:
    """The built-in family ``name``: the ``FAMILY`` record of the module of :mod:`ts2viz.metrics.families` named for it.

    Only that module is imported (the families are not all found), so that loading one family's metric
    imports no other family's module.

    Parameters
    ----------
    name : str
        A family's name, in lower case.

    Returns
    -------
    Family or None
        Its record; None if no module of that name holds a family record of that name.

    Examples
    --------
    >>> builtin_family("clipscore").name, builtin_family("no-such-family")
    ('clipscore', None)
    """
    if _FOUND or not name.isidentifier() or name.startswith("_"):
        return _FOUND.get(name)
    where = f"{__package__}.families.{name}"
    try:
        module = importlib.import_module(where)
    except ModuleNotFoundError as e:
        if e.name != where:
            raise
        return None
    rec = getattr(module, "FAMILY", None)
    return rec if isinstance(rec, Family) and rec.name == name else None


def display_key(fam: Family) -> tuple:
    """Where ``fam`` comes in the listings: its group's place, then its place in :data:`DISPLAY_ORDER`, then its name.

    Parameters
    ----------
    fam : Family
        A family.

    Returns
    -------
    tuple
        A sort key.

    Examples
    --------
    >>> display_key(family("clipscore")) < display_key(family("csv"))
    True
    """
    named = DISPLAY_ORDER.get(fam.group, ())
    return (GROUPS.index(fam.group), named.index(fam.name) if fam.name in named else len(named), fam.name)


def register(name: str, description: str, target: str | Callable | None = None, *, example: str = "",
             trusted_only: bool = False, hub_model: bool = False, card: Card | None = None,
             group: str = "user", needs_pixels: bool = True, details: str = "", display: str = ""):
    """Register a metric family at run time (a user's own; a built-in family is a module of :mod:`ts2viz.metrics.families`).

    ``target`` is a factory ``f(spec: Spec, device: str | None, **options) -> Metric`` or a lazy
    ``"module:attr"`` reference to one. ``trusted_only`` marks a family whose MODEL part names code to
    run or a file to read (see :func:`check_offered`). ``card`` is the family's :class:`Card` (default:
    the ``CARD`` of the factory's module). Without ``target`` this returns a decorator::

        @register("myscore", "my metric")
        def build(spec, device=None, **options): ...

    A family registered again under the same name (case-insensitive) replaces the earlier one, a
    built-in one included.

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
    group : str, optional
        Its display group (:data:`ts2viz.metrics.family.GROUPS`); it is listed after the named families
        of that group.
    needs_pixels : bool, optional
        Whether its metrics read the images.
    details : str, optional
        The kind of per-image details its metrics return (:attr:`~ts2viz.metrics.family.Family.details`).
    display : str, optional
        Its name as people write it (:attr:`~ts2viz.metrics.family.Family.display`).

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
        key = name.lower()
        _ADDED.pop(key, None)
        _ADDED[key] = Family(key, description, t, card, example=example, group=group, trusted_only=trusted_only,
                             hub_model=hub_model, needs_pixels=needs_pixels, details=details, display=display)
        return t

    if target is None:
        return add
    add(target)
    return target


def unregister(name: str) -> None:
    """Remove a registered family (no error if it is not registered).

    Parameters
    ----------
    name : str
        The family's name (case-insensitive); a built-in family is removed from this process's listings.
    """
    key = name.lower()
    if _ADDED.pop(key, None) is None and key in builtin_families():
        _REMOVED.add(key)


def registered() -> dict[str, Family]:
    """Every family by name: the built-in ones (less those unregistered), then those :func:`register` added.

    A family registered under a built-in family's name replaces it (in its place of the listings).

    Returns
    -------
    dict of str to Family
        A new dict, in display order (:func:`display_key`) for the built-in families, registration order
        after them.
    """
    found = {n: f for n, f in builtin_families().items() if n not in _REMOVED}
    ordered = {f.name: _ADDED.get(f.name, f) for f in sorted(found.values(), key=display_key)}
    return {**ordered, **{n: f for n, f in _ADDED.items() if n not in ordered}}


def registered_family(key: str) -> Family | None:
    """``registered().get(key)``, importing no other built-in family's module than ``key``'s (:func:`builtin_family`).

    Parameters
    ----------
    key : str
        A family's name, in lower case.

    Returns
    -------
    Family or None
        The family :func:`register` added under ``key``, else the built-in one (unless unregistered), else None.
    """
    return _ADDED.get(key) or (None if key in _REMOVED else builtin_family(key))


def families() -> list[Family]:
    """The families (name, one-line description, example spec), in display order.

    The built-in families (:func:`builtin_families`) group by group as :data:`DISPLAY_ORDER` lists them,
    then those :func:`register` added, in registration order.

    Returns
    -------
    list of Family
        A new list; the built-in families first.

    Examples
    --------
    >>> [f.name for f in families()][:3]
    ['clipscore', 'alignscore', 'siglip']
    """
    return list(registered().values())


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
    f = registered_family(name.lower())
    if f is None:
        known = registered()
        raise InputError(f"unknown metric family {name!r} (known: {', '.join(known)})")
    return f


def details_kind(name: str | None) -> str:
    """The kind of per-image details the family ``name``'s metrics return (:attr:`Family.details`).

    Parameters
    ----------
    name : str or None
        A family's name (case-insensitive).

    Returns
    -------
    str
        One of :data:`ts2viz.qa.details.DETAIL_KINDS`; ``""`` for a family whose details the question views
        do not read, and for a name no family has.

    Examples
    --------
    >>> details_kind("dsg"), details_kind("clipscore"), details_kind("no-such-family")
    ('dependent', '', '')
    """
    fam = registered().get(str(name or "").lower())
    return fam.details if fam is not None else ""


def question_writers() -> dict:
    """The question writer of each question kind, from the built-in families' records (:attr:`Family.question_writer`).

    The generator's config names every writer and digests their prompts in this order (the kinds'
    order, :data:`ts2viz.qa.questions.QUESTION_KINDS`, then any other by name); a family registered at
    run time does not change it.

    Returns
    -------
    dict of str to QuestionWriter
        Question kind -> its :class:`ts2viz.metrics.common.question_gen.QuestionWriter`.

    Examples
    --------
    >>> list(question_writers())
    ['tifa', 'dsg']
    """
    from ..qa.questions import QUESTION_KINDS

    found = {w.kind: w for w in (f.question_writer for f in builtin_families().values()) if w is not None}
    order = sorted(found, key=lambda k: (QUESTION_KINDS.index(k) if k in QUESTION_KINDS else len(QUESTION_KINDS), k))
    return {k: found[k] for k in order}


def decoding_presets() -> dict:
    """The named decoding settings ``decoding=`` can choose: the built-in QA families' own (their ``decodings``).

    A question-answering family's factory names its :class:`~ts2viz.metrics.qametric.metric.QAMetric`
    subclass (:func:`~ts2viz.metrics.qametric.build.qa_factory`), whose ``decodings`` are its settings by VQA
    model type.

    Returns
    -------
    dict of str to dict of str to Decoding
        Setting name -> VQA model type -> the :class:`ts2viz.metrics.common.decoding.Decoding` its source
        wrote for that type, in the families' display order.

    Raises
    ------
    ValueError
        If two families define a setting of the same name for the same model type.

    Examples
    --------
    >>> {name: sorted(by_type) for name, by_type in decoding_presets().items()}
    {'tifa': ['blip', 'blip-2', 'git'], 'dsg': ['instructblip']}
    """
    found: dict = {}
    for fam in sorted(builtin_families().values(), key=display_key):
        own = getattr(getattr(fam.factory(), "metric", None), "decodings", {})
        for model_type, d in own.items():
            by_type = found.setdefault(d.name, {})
            if by_type.get(model_type, d) is not d:
                raise ValueError(f"two families define decoding={d.name} for {model_type} models")
            by_type[model_type] = d
    return found


def display_name(name: str) -> str:
    """The family ``name`` as people write it (:attr:`Family.display`; its name when it has none).

    Parameters
    ----------
    name : str
        A family's name (case-insensitive).

    Returns
    -------
    str
        Its display name.

    Raises
    ------
    InputError
        If no family of that name is registered.

    Examples
    --------
    >>> display_name("fineeval"), display_name("CLIPScore")
    ('T2I-FineEval', 'CLIPScore')
    """
    fam = family(name)
    return fam.display or fam.name


def parse_spec(spec: str) -> Spec:
    """Split a SPEC string as its family reads it (:func:`ts2viz.metrics.common.spec.parse_spec`).

    A trailing ``@REVISION`` is split off the model only for a family whose MODEL takes revisions
    (:attr:`~ts2viz.metrics.family.Family.revisions`; an unknown family's is split).

    Parameters
    ----------
    spec : str
        A metric spec, ``FAMILY:MODEL[@REVISION][?key=value&...]``.

    Returns
    -------
    Spec
        The parsed spec; its ``raw`` is ``spec`` unchanged.

    Raises
    ------
    InputError
        If ``spec`` is not a string, has no ``:``, or its family or model part is empty.

    Examples
    --------
    >>> parse_spec("clipscore:openai/clip-vit-base-patch32@abc123").revision
    'abc123'
    >>> parse_spec("csv:/data/run@2.csv").model
    '/data/run@2.csv'
    """
    sp = split_spec(spec)
    fam = registered_family(sp.family)
    return split_spec(spec, revisions=False) if fam is not None and not fam.revisions else sp


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
    fam = registered().get(head)
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

    A hub model of a family with ``hub_model`` is checked first (:func:`ts2viz.metrics.common.pretrained.check_hub_model_available`,
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
        from .common.pretrained import check_hub_model_available

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
        The family (the module of its factory is imported now).
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
    module = fam.module()
    if module is None:
        return False
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
