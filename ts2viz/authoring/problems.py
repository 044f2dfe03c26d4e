"""Every check of the dataset loader, applied to a draft as it is being built (:func:`draft_problems`).

The rules are the loader's own functions (:mod:`ts2viz.seg`: ``parse_label``, ``edge_problem``,
``no_root_problem``, ``missing_node_problem``, ``unreachable_problem``; :mod:`ts2viz.dataset`:
``file_name_problem``, ``error_text_problem``), so a draft without problems exports to a folder that
``ts2viz validate`` accepts and a draft's messages read like the validator's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .draft import SegDraft


@dataclass(frozen=True)
class DraftProblem:
    """One problem of a draft, in one readable line (``message``), with what it is about so a UI can
    point at it: a node label, an image key, an edge (any may be ``None``)."""

    message: str
    node: str | None = None
    image: str | None = None
    edge: tuple[str, str] | None = None

    def __str__(self) -> str:
        return self.message


def draft_problems(draft: SegDraft) -> list[DraftProblem]:
    """Every problem that would stop ``draft`` from exporting and loading, in a stable order:
    the SEG (id, prompt), node labels (well-formed, distinct), error descriptions, images (in a node
    that exists, file names valid and distinct), empty nodes, edges (existing nodes, lower to higher
    error level), an error-0 node, every node reachable from one. Empty list: the draft is good."""
    raise NotImplementedError


def drafts_problems(drafts: Sequence[SegDraft]) -> list[DraftProblem]:
    """:func:`draft_problems` of each draft (messages prefixed ``SEG <id>: `` where they do not name it),
    plus the problems of the drafts together as one dataset: SEG ids and image file names distinct."""
    raise NotImplementedError
