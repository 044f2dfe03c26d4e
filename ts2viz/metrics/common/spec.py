"""Parsing metric SPEC strings (``FAMILY:MODEL[@REVISION][?key=value&...]``)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from ...errors import InputError


@dataclass(frozen=True)
class Spec:
    """A parsed metric spec (what :func:`parse_spec` returns).

    Attributes
    ----------
    raw : str
        The spec string exactly as given (the metric's column name in a scores file).
    family : str
        The family name, lower-cased (``clipscore``).
    model : str
        The model part: a hub id, a local path, ``openclip:ARCH/TAG``, ``module:function`` or a file path.
    revision : str or None
        The hub revision given as ``@REVISION``, or None.
    options : dict
        The ``?key=value`` options; values are coerced to bool, int or float where they read as one,
        except for the options of :data:`TEXT_OPTIONS`, which stay text.
    """

    raw: str
    family: str
    model: str
    revision: str | None = None
    options: dict = field(default_factory=dict)

    @property
    def is_openclip(self) -> bool:
        """Whether the model is an open_clip model (``openclip:ARCH/TAG``)."""
        return self.model.startswith("openclip:")

    def openclip_parts(self) -> tuple[str, str | None]:
        """``(ARCH, TAG)`` of an ``openclip:ARCH/TAG`` model.

        Returns
        -------
        tuple of (str, str or None)
            The open_clip architecture and the pretrained tag or checkpoint path (None when no ``/TAG``
            follows the architecture).

        Raises
        ------
        InputError
            If the architecture is empty.

        Examples
        --------
        >>> from ts2viz.metrics.common.spec import parse_spec
        >>> parse_spec("clipscore:openclip:ViT-B-32/laion2b_s34b_b79k").openclip_parts()
        ('ViT-B-32', 'laion2b_s34b_b79k')
        >>> parse_spec("clipscore:openclip:ViT-B-32").openclip_parts()
        ('ViT-B-32', None)
        """
        rest = self.model[len("openclip:"):]
        arch, sep, tag = rest.partition("/")
        if not arch:
            raise InputError(f"metric {self.raw!r}: expected openclip:ARCH/TAG, e.g. openclip:ViT-B-32/laion2b_s34b_b79k")
        return arch, (tag or None) if sep else None


#: options whose values are text as given (a template's "Yes" stays "Yes", not True; "1" stays "1")
TEXT_OPTIONS = frozenset({"question_template", "answer_template", "question", "template", "vision_tower",
                          "tokenizer"})


def _coerce(v: str):
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for t in (int, float):
        try:
            return t(v)
        except ValueError:
            pass
    return v


def parse_spec(spec: str, *, revisions: bool = True) -> Spec:
    """Split a SPEC string into family, model, revision and options.

    The family is lower-cased. The part after the last ``?`` is read as options only when it looks
    like ``key=value`` pairs, so that odd paths stay usable; option values are coerced (``true``/``yes``/``on``
    to True, ``false``/``no``/``off`` to False, then int, then float) except for :data:`TEXT_OPTIONS`. A
    trailing ``@REVISION`` is split off the model only with ``revisions``, when the model is not an existing
    path and the revision has no ``/`` (:func:`ts2viz.metrics.registry.parse_spec` asks the family).

    Parameters
    ----------
    spec : str
        A metric spec, ``FAMILY:MODEL[@REVISION][?key=value&...]``.
    revisions : bool, optional
        Whether a trailing ``@REVISION`` may be a hub revision (False: the model is taken as written, for a
        family whose MODEL is a path or code).

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
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> s = parse_spec("TIFA:Salesforce/blip-vqa-base@v1?batch_size=4&question_template=Q: {}")
    >>> s.family, s.model, s.revision, s.options
    ('tifa', 'Salesforce/blip-vqa-base', 'v1', {'batch_size': 4, 'question_template': 'Q: {}'})
    >>> parse_spec("clipscore")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'clipscore': expected FAMILY:MODEL, e.g. clipscore:openai/clip-vit-base-patch32 (run `ts2viz metrics` for the families)
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise InputError(f"metric {spec!r}: expected FAMILY:MODEL, e.g. clipscore:openai/clip-vit-base-patch32 "
                         "(run `ts2viz metrics` for the families)")
    fam, _, rest = spec.partition(":")
    fam = fam.strip().lower()
    options: dict = {}
    # Options only when the part after '?' looks like key=value pairs, so odd paths stay usable.
    if "?" in rest:
        head, _, q = rest.rpartition("?")
        pairs = parse_qsl(q, keep_blank_values=True)
        if pairs and all(k for k, _ in pairs) and "=" in q:
            rest = head
            options = {k: v if k in TEXT_OPTIONS else _coerce(v) for k, v in pairs}
    rest = rest.strip()
    if not fam or not rest:
        raise InputError(f"metric {spec!r}: expected FAMILY:MODEL with both parts non-empty")
    revision = None
    # A hub revision: only for hub-style ids that are not existing paths.
    if revisions and "@" in rest and not Path(os.path.expanduser(rest)).exists():
        head, _, rev = rest.rpartition("@")
        if head and rev and "/" not in rev:
            rest, revision = head, rev
    return Spec(spec, fam, rest, revision, options)
