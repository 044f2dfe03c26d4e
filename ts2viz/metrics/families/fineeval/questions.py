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
from typing import Sequence

from ....errors import InputError

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
    r"""The entities and tagged questions of a decomposition reply (lines in another format are ignored).

    An ``Entities:`` line gives the entities (separated by ``;`` or ``,``; the first such line counts);
    a question line is ``N. [entity] text`` or ``N. [relation] text`` (``entities``, ``relational`` and
    ``relations`` are read too). Duplicate questions (case ignored) are kept once.

    Parameters
    ----------
    reply : str
        The LLM's reply.

    Returns
    -------
    Decomposition
        The distinct entities and the tagged questions, in order.

    Raises
    ------
    InputError
        If there is no tagged question.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval.questions import parse_decomposition
    >>> parse_decomposition("Entities: cat; bench\n1. [entity] Is there a cat?\n2) [Relations] Is the cat on the bench?")
    Decomposition(entities=('cat', 'bench'), questions=(('entity', 'Is there a cat?'), ('relation', 'Is the cat on the bench?')))
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


# -- coarse (whole-image) questions -------------------------------------------------------------------

#: The colour words the authors' code keeps in coarse questions (its ``RunConfig.colors``, compared
#: case-sensitively with each adjective's text).
COLORS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white")
#: How coarse questions are made: ``code`` (the authors' ``find_adjectives_and_delete``: every adjective
#: but a colour removed, determiner-verb-noun reduced to determiner-noun), ``all_adjectives`` (their
#: ``find_adjectives_and_delete_all``: colours removed too), ``same`` (the fine questions unchanged).
COARSE_RULES = ("code", "all_adjectives", "same")
#: spaCy pipeline the authors' code loads (``spacy.load("en_core_web_sm")``).
SPACY_MODEL = "en_core_web_sm"
SPACY_INSTALL = "pip install spacy && python -m spacy download en_core_web_sm"


def coarse_from_doc(doc, keep: Sequence[str] = COLORS) -> str:
    """The coarse question of a parsed fine question, by the authors' rule.

    The rule goes token by token from the left:

    * a determiner followed by a verb and a noun (``a sleeping cat``) becomes the determiner and the
      noun (``a cat``), and the three tokens are consumed;
    * an adjective whose text is not in ``keep`` (compared case-sensitively, as the code does) is
      dropped;
    * any other token is kept.

    The kept tokens are joined with single spaces and " ?" becomes "?" (so "cat's" comes back as
    "cat 's", as in the code).

    Parameters
    ----------
    doc : spacy.tokens.Doc or sequence
        The parsed question: a spaCy ``Doc``, or any sequence of tokens with ``text`` and ``pos_``.
    keep : sequence of str, default COLORS
        The adjectives kept.

    Returns
    -------
    str
        The coarse question.

    Examples
    --------
    >>> from types import SimpleNamespace as T
    >>> from ts2viz.metrics.families.fineeval.questions import coarse_from_doc
    >>> tagged = [("Is", "AUX"), ("there", "PRON"), ("a", "DET"), ("sleeping", "VERB"), ("cat", "NOUN"),
    ...           ("on", "ADP"), ("a", "DET"), ("big", "ADJ"), ("red", "ADJ"), ("chair", "NOUN"), ("?", "PUNCT")]
    >>> coarse_from_doc([T(text=w, pos_=p) for w, p in tagged])
    'Is there a cat on a red chair?'
    """
    tokens = list(doc)
    keep = set(keep)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if (t.pos_ == "DET" and i + 2 < len(tokens) and tokens[i + 1].pos_ == "VERB"
                and tokens[i + 2].pos_ == "NOUN"):
            out += [t.text, tokens[i + 2].text]
            i += 3
        elif t.pos_ == "ADJ" and t.text not in keep:
            i += 1
        else:
            out.append(t.text)
            i += 1
    return " ".join(out).replace(" ?", "?")


def load_spacy(name: str = SPACY_MODEL):
    """The spaCy pipeline ``name``: ``spacy.load(name)``.

    Parameters
    ----------
    name : str, default "en_core_web_sm"
        An installed pipeline package or a pipeline folder.

    Returns
    -------
    spacy.language.Language
        The pipeline.

    Raises
    ------
    InputError
        If spaCy or the pipeline is not installed (the message names the install command).
    """
    try:
        import spacy
    except ImportError:
        raise InputError("T2I-FineEval's coarse questions are made with spaCy, which is not installed: "
                         f"{SPACY_INSTALL} (or ?coarse=same asks the fine questions unchanged)") from None
    try:
        return spacy.load(name)
    except OSError:
        raise InputError(f"T2I-FineEval's coarse questions need the spaCy pipeline {name!r}, which is not "
                         f"installed: {SPACY_INSTALL} (or ?coarse=same asks the fine questions unchanged)") from None


class CoarseQuestions:
    """Fine question -> coarse question under one of :data:`COARSE_RULES` (spaCy loaded once, lazily).

    Calling the object with a fine question gives its coarse question (memoised).

    Parameters
    ----------
    rule : str, default "code"
        A rule of :data:`COARSE_RULES`.
    spacy_model : str, default "en_core_web_sm"
        The spaCy pipeline (package name or folder).

    Raises
    ------
    InputError
        If ``rule`` is unknown.
    """

    def __init__(self, rule: str = "code", spacy_model: str = SPACY_MODEL):
        if rule not in COARSE_RULES:
            raise InputError(f"coarse must be one of {', '.join(COARSE_RULES)}, not {rule!r}")
        self.rule = rule
        self.spacy_model = spacy_model
        self._nlp = None
        self._memo: dict[str, str] = {}

    @property
    def config(self) -> dict:
        """The rule and, unless ``same``, the spaCy pipeline's language, name and version."""
        if self.rule == "same":
            return {"coarse": "same"}
        nlp = self.nlp
        meta = getattr(nlp, "meta", {}) or {}
        return {"coarse": self.rule, "spacy": f"{meta.get('lang', '')}_{meta.get('name', '')}-{meta.get('version', '')}"}

    @property
    def nlp(self):
        """The spaCy pipeline, loaded on first use (:func:`load_spacy`)."""
        if self._nlp is None:
            self._nlp = load_spacy(self.spacy_model)
        return self._nlp

    def __call__(self, question: str) -> str:
        """The coarse question of ``question`` under the rule.

        Parameters
        ----------
        question : str
            The fine question.

        Returns
        -------
        str
            The coarse question (the question itself under ``same``).
        """
        if self.rule == "same":
            return question
        if question not in self._memo:
            keep = COLORS if self.rule == "code" else ()
            self._memo[question] = coarse_from_doc(self.nlp(question), keep)
        return self._memo[question]
