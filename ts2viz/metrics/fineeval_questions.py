"""T2I-FineEval's prompt decomposition: entity names plus entity and relation yes/no questions.

The authors' few-shot prompts are not published; :data:`DECOMPOSE_SYSTEM` is ts2viz's own two-shot
prompt (the paper uses two shots with GPT-4). The reply format::

    Entities: cake; suitcase
    1. [entity] Is there a blue cake?
    2. [entity] Is there a red suitcase?
    3. [relation] Is the cake next to the suitcase?

Entity questions are about one entity and its attributes (asked on single-object crops); relation
questions about two or more entities together (asked on the union boxes of pairs of detections).
The entity names are what an open-vocabulary detector is queried with.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError

KINDS = ("entity", "relation")

DECOMPOSE_SYSTEM = """\
You break a text-to-image prompt into short yes/no questions for checking an image against it.
First list the prompt's entities (the objects, people or animals it mentions), as short singular
nouns separated by semicolons. Then write numbered questions, each tagged with its kind:
- [entity] questions check one entity and its own attributes (count, color, size, material, shape,
  state): one question per entity, with all of its attributes;
- [relation] questions check how two or more entities relate (position, action, interaction,
  comparison): one question per relation.
Every question is answered "yes" by an image faithful to the prompt. Ask only about what the prompt
states. Reply in exactly this format and nothing else.

Prompt: a blue cake and a red suitcase
Entities: cake; suitcase
1. [entity] Is there a blue cake?
2. [entity] Is there a red suitcase?

Prompt: Two black cats sleeping on a wooden bench under a large oak tree.
Entities: cat; bench; tree
1. [entity] Are there two black cats?
2. [entity] Is there a wooden bench?
3. [entity] Is there a large oak tree?
4. [relation] Are the cats sleeping on the bench?
5. [relation] Is the bench under the tree?
"""


@dataclass(frozen=True)
class Decomposition:
    """A prompt's entity names and its questions as ``(kind, question)`` pairs, in order."""

    entities: tuple[str, ...]
    questions: tuple[tuple[str, str], ...]


_QUESTION = re.compile(r"^\s*\d+\s*[.)]\s*\[\s*(entity|entities|relation|relational|relations)\s*\]\s*(.+?)\s*$",
                       re.IGNORECASE)


def parse_decomposition(reply: str) -> Decomposition:
    """The entities and tagged questions of a decomposition reply (lines in another format are ignored).

    Duplicate questions are kept once. Raises :class:`InputError` if there is no tagged question.
    """
    entities: list[str] = []
    questions: dict[str, tuple[str, str]] = {}
    for line in reply.splitlines():
        head, sep, rest = line.strip().partition(":")
        if sep and head.strip().lower() == "entities" and not entities:
            entities = [e.strip() for e in re.split(r"[;,]", rest) if e.strip()]
            continue
        m = _QUESTION.match(line)
        if m:
            kind = "relation" if m.group(1).lower().startswith("relation") else "entity"
            text = m.group(2)
            questions.setdefault(text.lower(), (kind, text))
    if not questions:
        raise InputError(f"T2I-FineEval decomposition reply has no '1. [entity] question' lines: {reply[:120]!r}")
    return Decomposition(tuple(dict.fromkeys(entities)), tuple(questions.values()))
