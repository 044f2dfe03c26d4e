"""Parsing metric SPEC strings (``FAMILY:MODEL[@REVISION][?key=value&...]``)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from ...errors import InputError


@dataclass(frozen=True)
class Spec:
    """A parsed metric spec. ``raw`` is the string exactly as given (the scores column name)."""

    raw: str
    family: str
    model: str
    revision: str | None = None
    options: dict = field(default_factory=dict)

    @property
    def is_openclip(self) -> bool:
        return self.model.startswith("openclip:")

    def openclip_parts(self) -> tuple[str, str | None]:
        """``(ARCH, TAG)`` of an ``openclip:ARCH/TAG`` model (TAG may be a checkpoint path or None)."""
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


def parse_spec(spec: str) -> Spec:
    """Split a SPEC string into family, model, revision and options; :class:`InputError` if malformed."""
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
    if fam not in ("csv", "callable") and "@" in rest and not Path(os.path.expanduser(rest)).exists():
        head, _, rev = rest.rpartition("@")
        if head and rev and "/" not in rev:
            rest, revision = head, rev
    return Spec(spec, fam, rest, revision, options)
