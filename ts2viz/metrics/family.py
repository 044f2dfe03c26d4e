"""What a metric family is: its :class:`Family` record, its :class:`Card` and the card's :class:`Option` and :class:`Fidelity` rows.

A family is one module of :mod:`ts2viz.metrics.families` (or one subpackage) that ends with one
``FAMILY = Family(...)`` record: its name, one line on what it computes, its ``build`` factory, its card, an
example spec, its display group, what its MODEL names, the kind of details its metrics return and its
display name. :mod:`ts2viz.metrics.registry` finds the records
and loads metrics from them; nothing here imports a family or anything heavy.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping

__all__ = ["Family", "Card", "Option", "Fidelity", "FIDELITY_STATUSES", "PRECISIONS", "GROUPS"]


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
    fixture : str, optional
        Which code made the family's reference fixture (repository at a commit or package and version, and
        the fixture's folder ``tests/fixtures/reference/...``), or ``not compared`` and why; also whether
        images of other modes were compared (issue 39). Every built-in family states it.
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
    fixture: str = ""
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


#: the display groups of the families, in the order the listings show them (:data:`ts2viz.metrics.registry.DISPLAY_ORDER`)
GROUPS = ("embedding", "likelihood", "questions", "judge", "preference", "user")


@dataclass(frozen=True, init=False)
class Family:
    """A metric family: the record its module ends with (``FAMILY = Family(...)``).

    Parameters
    ----------
    name : str
        The family's name, the FAMILY of ``FAMILY:MODEL`` (lower case).
    description : str
        One line: what the family computes (the listings show it).
    build : callable or str
        The factory ``f(spec, device=None, **options) -> Metric``, or ``"module:attr"`` naming one (imported
        when a metric is loaded; a module path starting with a dot is relative to :mod:`ts2viz.metrics`).
    card : Card or None, optional
        The family's card (the documentation's metric card is generated from it). None with a
        ``"module:attr"`` factory: the ``CARD`` of that module, read when :attr:`card` is first asked for.
    example : str, optional
        An example spec.
    group : str, optional
        Its display group, one of :data:`GROUPS` (the listings show the families group by group).
    trusted_only : bool, optional
        The spec names code to run or a file to read (``callable:``, ``csv:``): never accepted from an
        untrusted caller (:func:`ts2viz.metrics.registry.check_offered`).
    hub_model : bool, optional
        MODEL is a Hugging Face hub id (or a local folder): :func:`ts2viz.metrics.registry.load` checks that
        a hub model can be had before the family's heavy code (torch, transformers) is imported.
    needs_pixels : bool, optional
        Its metrics read the images (False for a family that reads precomputed scores, ``csv:``).
    revisions : bool, optional
        A trailing ``@REVISION`` of MODEL is a hub revision (False where MODEL is a path or code, taken
        as written).
    tiny : str, optional
        A spec of a small metric of the family that loads in seconds with nothing downloaded, for the
        registry's contract test (``tests/metrics/test_registry_contract.py``; empty: the family's tiny model
        is built by ``tests/support/tiny_models.py``).
    details : str, optional
        The kind of per-image details its metrics return that the question views read, one of
        :data:`ts2viz.qa.details.DETAIL_KINDS` (``questions``: TIFA's answered questions, ``dependent``:
        DSG's, with parents; ``coverage``: Gecko's; ``crops``: T2I-FineEval's; ``aspects``: VIEScore's
        ratings; ``ratings``: LLMScore's). Empty: none (:func:`ts2viz.metrics.registry.details_kind`).
    display : str, optional
        The family's name as people write it (``T2I-FineEval``); empty: :attr:`name`
        (:func:`ts2viz.metrics.registry.display_name`).
    question_writer : QuestionWriter or None, optional
        How a chat LLM writes the family's questions for a prompt (``generator=``): a
        :class:`ts2viz.metrics.common.question_gen.QuestionWriter`, kept in the family package's ``questions``
        module (:func:`ts2viz.metrics.registry.question_writers` gathers them). None: the family writes none.

    Examples
    --------
    >>> def build(spec, device=None):
    ...     return None
    >>> Family("demo-width", "the image's width", build, group="user").needs_pixels
    True
    """

    name: str
    description: str
    build: str | Callable
    card_given: Card | None = field(default=None, repr=False)
    example: str = ""
    group: str = "user"
    trusted_only: bool = False
    hub_model: bool = False
    needs_pixels: bool = True
    revisions: bool = True
    tiny: str = ""
    details: str = ""
    display: str = ""
    question_writer: object | None = field(default=None, repr=False)

    def __init__(self, name: str, description: str, build, card: Card | None = None, *, example: str = "",
                 group: str = "user", trusted_only: bool = False, hub_model: bool = False,
                 needs_pixels: bool = True, revisions: bool = True, tiny: str = "", details: str = "",
                 display: str = "", question_writer=None):
        """Check and store the record (:class:`ValueError` for an unknown group or an upper-case name)."""
        if group not in GROUPS:
            raise ValueError(f"family {name!r}: group must be one of {GROUPS}, not {group!r}")
        if name != name.lower() or not name:
            raise ValueError(f"family name must be non-empty lower case, not {name!r}")
        for k, v in dict(name=name, description=description, build=build, card_given=card, example=example,
                         group=group, trusted_only=trusted_only, hub_model=hub_model, needs_pixels=needs_pixels,
                         revisions=revisions, tiny=tiny, details=details, display=display,
                         question_writer=question_writer).items():
            object.__setattr__(self, k, v)

    def factory(self) -> Callable:
        """The family's factory ``f(spec, device=None, **options) -> Metric`` (its module imported now).

        Returns
        -------
        callable
            :attr:`build` itself when it is callable, else the attribute its ``"module:attr"`` names.
        """
        if callable(self.build):
            return self.build
        mod, _, attr = self.build.partition(":")
        return getattr(importlib.import_module(mod, "ts2viz.metrics"), attr)

    def module(self):
        """The module that holds the family's factory (imported now), or None for a factory without one.

        Returns
        -------
        module or None
            The module of :attr:`build`.
        """
        if callable(self.build):
            return sys.modules.get(getattr(self.build, "__module__", None) or "")
        return importlib.import_module(self.build.partition(":")[0], "ts2viz.metrics")

    @property
    def card(self) -> Card | None:
        """The family's :class:`Card`, or None.

        The one the record was given, else the ``CARD`` of the factory's module (imported now; a family
        module imports nothing heavy at module level), else None.
        """
        if self.card_given is not None:
            return self.card_given
        card = getattr(self.module(), "CARD", None)
        return card if isinstance(card, Card) else None
