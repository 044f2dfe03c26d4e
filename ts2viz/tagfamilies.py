"""Tags grouped in families: what SEG tags and a rated set's tags share (families, the family check, a tag file's rows).

:class:`ts2viz.dataset.tags.SegTags` (tags of SEGs) and :class:`ts2viz.gold.tags.Tags` (tags of a rated set's
prompts and images) hold their rows differently; both read their families and tags through
:class:`TagFamilies`, and both tag-file readers check a row's family and tag with :func:`check_tag_row`.
"""
from __future__ import annotations

import re

from .errors import InputError

#: at most this many tags per family from a user's file (a slice each)
MAX_TAGS_PER_FAMILY = 1000
_NAME = re.compile(r"^[^\x00-\x1f,]{1,200}$")


class TagFamilies:
    """The families and tags of a table of tags; a subclass says which pairs it holds.

    A subclass defines ``_family_tags()`` (its ``(family, tag)`` pairs, in its order) and may name what its tags
    tag in ``_KIND`` (the error message's ``no {_KIND} family ...``).
    """

    _KIND = "tag"

    def _family_tags(self):
        raise NotImplementedError

    @property
    def families(self) -> list[str]:
        """The tag families, in order of first appearance."""
        return list(dict.fromkeys(f for f, _ in self._family_tags()))

    def check_family(self, family: str) -> str:
        """``family`` if it is one of :attr:`families`.

        Parameters
        ----------
        family : str
            A family name.

        Returns
        -------
        str
            The family.

        Raises
        ------
        InputError
            If there is no such family (the message lists those there are, and echoes at most 80 characters
            of ``family``).
        """
        families = self.families
        if family not in families:
            raise InputError(f"no {self._KIND} family {str(family)[:80]!r} "
                             f"(families here: {', '.join(families) or 'none'})")
        return family

    def tags(self, family: str) -> list[str]:
        """The tags of one family, in order of first appearance.

        Parameters
        ----------
        family : str
            A family of :attr:`families`.

        Returns
        -------
        list of str
            Its tags.

        Raises
        ------
        InputError
            If there is no such family.
        """
        self.check_family(family)
        return list(dict.fromkeys(t for f, t in self._family_tags() if f == family))


def check_tag_row(rec: dict, per_family: dict, path, line: int) -> None:
    """Check one row of a tag file: its family and tag names, and its family's count of tags so far.

    Parameters
    ----------
    rec : dict
        The row (``family`` and ``tag`` among its keys).
    per_family : dict
        The tags seen so far per family, updated with this row's.
    path : pathlib.Path
        The file (for the message).
    line : int
        The row's line (for the message).

    Raises
    ------
    InputError
        For an empty family or tag, one that is not 1-200 characters without commas or control characters, or a family
        with more than :data:`MAX_TAGS_PER_FAMILY` tags.
    """
    for col in ("family", "tag"):
        if not rec[col]:
            raise InputError(f"empty {col}", file=path, row=line)
        if not _NAME.match(rec[col]):
            raise InputError(f"{col} must be 1-200 characters without commas or control characters, got "
                             f"{rec[col][:80]!r}", file=path, row=line)
    seen = per_family.setdefault(rec["family"], set())
    seen.add(rec["tag"])
    if len(seen) > MAX_TAGS_PER_FAMILY:
        raise InputError(f"family {rec['family']!r} has more than {MAX_TAGS_PER_FAMILY} tags", file=path, row=line)
