"""Gecko's question generation: coverage labelling, one QA pair per labelled word, NLI hypotheses.

Two LLM steps (Gecko, Sec. 5 and App. C), with few-shot prompts written for ts2viz in the paper's
formats:

1. **Coverage** (:data:`COVERAGE_SYSTEM`, Listing 3 format): the LLM copies the prompt and wraps every
   visually groundable word or phrase as ``{N}[phrase, type, groundability]``, e.g.
   ``A {1}[red, color, 1.0] {2}[gecko, entity, 1.0]``. Types: :data:`WORD_TYPES`.
2. **QA generation** (Listing 4 format): given the prompt with its labelled words, one question per
   word, as TIFA-style blocks: multiple-choice or yes/no as TIFA writes them (:data:`QA_SYSTEM_TIFA`,
   the default, since the paper reuses TIFA's question generation) or yes/no only
   (:data:`QA_SYSTEM`, ``question_style=yes_no``)::

       About {1}[red] (color):
       Q: Is the gecko red?
       Choices: yes, no
       A: yes

:func:`qa_hypothesis` turns a QA pair into the NLI hypothesis (the paper does not say how; see there).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ....errors import InputError
from ...common.choicescore import choice_index

WORD_TYPES = ("entity", "activity", "attribute", "counting", "color", "material", "spatial", "location",
              "shape", "style", "other")

COVERAGE_SYSTEM = """\
You label the visually groundable words of a text-to-image prompt.
Copy the prompt word for word and wrap every word or short phrase that an image could show or
contradict as {N}[phrase, type, score]:
- N numbers the labels 1, 2, 3, ... in reading order;
- type is one of: entity, activity, attribute, counting, color, material, spatial, location, shape,
  style, other;
- score, from 0.0 to 1.0, says how well the phrase can be checked by looking at an image (1.0: it can
  be seen directly; 0.0: it cannot be seen at all).
Leave articles and other words that carry nothing visible unlabelled. Reply with the labelled prompt
only, on one line.

Prompt: A red colored dog.
Labelled: A {1}[red colored, color, 1.0] {2}[dog, entity, 1.0].

Prompt: Three wooden chairs around a round table in a sunny kitchen, watercolor painting.
Labelled: {1}[Three, counting, 1.0] {2}[wooden, material, 1.0] {3}[chairs, entity, 1.0] {4}[around, spatial, 1.0] a {5}[round, shape, 1.0] {6}[table, entity, 1.0] in a {7}[sunny, attribute, 0.8] {8}[kitchen, location, 1.0], {9}[watercolor painting, style, 1.0].

Prompt: A proud gecko wearing a tiny hat dances on a sign that reads "hello".
Labelled: A {1}[proud, attribute, 0.4] {2}[gecko, entity, 1.0] {3}[wearing, activity, 1.0] a {4}[tiny, attribute, 1.0] {5}[hat, entity, 1.0] {6}[dances, activity, 1.0] {7}[on, spatial, 1.0] a {8}[sign, entity, 1.0] that reads {9}["hello", other, 1.0].
"""

#: the QA prompts' two few-shot examples: the prompt, its labelled copy and its word list (each word gets
#: one answer block, in the order of the list)
_QA_SHOTS = ("""\
Prompt: A red colored dog.
Labelled: A {1}[red colored] {2}[dog].
Words: {1}[red colored] (color); {2}[dog] (entity)
""", """\
Prompt: Three wooden chairs around a round table in a sunny kitchen, watercolor painting.
Labelled: {1}[Three] {2}[wooden] {3}[chairs] {4}[around] a {5}[round] {6}[table] in a {7}[sunny] {8}[kitchen], {9}[watercolor painting].
Words: {1}[Three] (counting); {2}[wooden] (material); {3}[chairs] (entity); {4}[around] (spatial); {5}[round] (shape); {6}[table] (entity); {7}[sunny] (attribute); {8}[kitchen] (location); {9}[watercolor painting] (style)
""")
_YES_NO = ("yes, no", "yes")


def _qa_prompt(instructions: str, answers: tuple[tuple[tuple[str, str, str], ...], ...]) -> str:
    """A QA prompt: ``instructions``, then each of :data:`_QA_SHOTS` with its answer blocks.

    Parameters
    ----------
    instructions : str
        The prompt's instructions, ending with a newline.
    answers : tuple of tuple of (str, str, str)
        Per shot, per word of its ``Words:`` line in order: the question, the choices and the answer.

    Returns
    -------
    str
        The prompt: per shot a blank line, the shot and one ``About / Q: / Choices: / A:`` block per word.
    """
    parts = [instructions]
    for shot, rows in zip(_QA_SHOTS, answers, strict=True):
        words = shot.rstrip("\n").rsplit("\n", 1)[1].removeprefix("Words: ").split("; ")
        parts.append("\n" + shot)
        parts += [f"About {w}:\nQ: {q}\nChoices: {c}\nA: {a}\n" for w, (q, c, a) in zip(words, rows, strict=True)]
    return "".join(parts)


QA_SYSTEM = _qa_prompt("""\
You write visual yes/no questions that check an image against its text-to-image prompt, as in TIFA.
The prompt's checkable words are labelled {N}[phrase] and listed with their type. For EVERY labelled
word write exactly one block, in order:
About {N}[phrase] (type):
Q: a yes/no question about that word, in the context of the prompt
Choices: yes, no
A: yes
The answer is the one an image faithful to the prompt gives. Ask only about what the prompt states.
""", ((("Is the dog red?", *_YES_NO), ("Is there a dog?", *_YES_NO)),
      (("Are there three chairs?", *_YES_NO), ("Are the chairs made of wood?", *_YES_NO),
       ("Are there chairs?", *_YES_NO), ("Are the chairs placed around the table?", *_YES_NO),
       ("Is the table round?", *_YES_NO), ("Is there a table?", *_YES_NO), ("Is the kitchen sunny?", *_YES_NO),
       ("Is this a kitchen?", *_YES_NO), ("Is this a watercolor painting?", *_YES_NO))))

QA_SYSTEM_TIFA = _qa_prompt("""\
You write visual questions that check an image against its text-to-image prompt, as TIFA does.
The prompt's checkable words are labelled {N}[phrase] and listed with their type. For EVERY labelled
word write exactly one block, in order:
About {N}[phrase] (type):
Q: a question about that word, in the context of the prompt
Choices: the possible answers, separated by commas
A: the answer an image faithful to the prompt gives (one of the choices)
As in TIFA: an entity gets a yes/no question about whether it is there (Choices: yes, no); a color,
count, material, shape, activity, location, style or other attribute gets a multiple-choice question
whose choices are the right answer and three plausible wrong ones; a spatial relation or anything
without natural alternatives gets a yes/no question. Ask only about what the prompt states.
""", ((("What color is the dog?", "red, black, white, brown", "red"), ("Is there a dog?", *_YES_NO)),
      (("How many chairs are there?", "1, 2, 3, 4", "3"),
       ("What are the chairs made of?", "wood, metal, plastic, glass", "wood"),
       ("Are there chairs?", *_YES_NO), ("Are the chairs placed around the table?", *_YES_NO),
       ("What shape is the table?", "round, square, rectangular, oval", "round"), ("Is there a table?", *_YES_NO),
       ("Is the kitchen sunny or dark?", "sunny, dark", "sunny"),
       ("Where is this?", "kitchen, bedroom, office, garden", "kitchen"),
       ("What is the style of the image?", "watercolor painting, photograph, oil painting, cartoon",
        "watercolor painting"))))

#: QA prompt per ``questions=`` style: ``tifa`` (default: TIFA-style multiple-choice and yes/no
#: questions, as the Gecko paper reuses TIFA's prompts) or ``yes_no`` (one yes/no question per word).
QA_SYSTEMS = {"tifa": QA_SYSTEM_TIFA, "yes_no": QA_SYSTEM}

_LABEL = re.compile(r"\{(\d+)\}\[([^\[\]]*)\]")


@dataclass(frozen=True)
class CoverageWord:
    """One labelled word of a prompt's coverage step.

    Attributes
    ----------
    id : int
        The label's number ``N`` of ``{N}[...]``.
    phrase : str
        The labelled phrase.
    type : str
        Its type (one of :data:`WORD_TYPES`; ``other`` for an unknown one).
    groundability : float
        Its groundability score in [0, 1].
    """

    id: int
    phrase: str
    type: str
    groundability: float


@dataclass
class QAPair:
    """One generated question about a labelled word, with its NLI check (filled in later).

    Attributes
    ----------
    word_id : int
        The labelled word's number.
    word : str
        The labelled phrase.
    type : str
        The word's type.
    question : str
        The question.
    choices : tuple of str
        The answer choices.
    expected : str
        The answer a faithful image gives.
    hypothesis : str
        The NLI hypothesis (:func:`qa_hypothesis`); empty until checked.
    nli : float or None
        The entailment probability; None until checked (or without an NLI model).
    kept : bool
        Whether the pair is asked (False when the NLI check drops it).
    note : str
        Why it was dropped.
    extra : dict
        Anything else (not recorded).
    """

    word_id: int
    word: str
    type: str
    question: str
    choices: tuple[str, ...]
    expected: str
    hypothesis: str = ""
    nli: float | None = None
    kept: bool = True
    note: str = ""
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The pair as a JSON-ready dict (``extra`` left out, ``choices`` as a list).

        Returns
        -------
        dict
            The pair's fields.
        """
        d = asdict(self)
        d["choices"] = list(self.choices)
        d.pop("extra")
        return d


def parse_coverage(reply: str) -> list[CoverageWord]:
    """The ``{N}[phrase, type, score]`` labels of a coverage reply, in order.

    An unknown type becomes ``other``; a missing or unreadable score becomes 1.0 (labelled means
    groundable), a score outside [0, 1] is clipped. A repeated number or an empty phrase is skipped.

    Parameters
    ----------
    reply : str
        The LLM's coverage reply.

    Returns
    -------
    list of CoverageWord
        The labelled words, in reply order.

    Raises
    ------
    InputError
        If the reply has no label at all.

    Examples
    --------
    >>> from ts2viz.metrics.families.gecko.questions import parse_coverage
    >>> parse_coverage("{1}[a red, color, 0.9] {2}[cat] {1}[again, object, 1]")
    [CoverageWord(id=1, phrase='a red', type='color', groundability=0.9), CoverageWord(id=2, phrase='cat', type='other', groundability=1.0)]
    """
    words: list[CoverageWord] = []
    seen: set[int] = set()
    for m in _LABEL.finditer(reply):
        n, inner = int(m.group(1)), m.group(2)
        parts = [p.strip() for p in inner.rsplit(",", 2)]
        phrase, typ, score = parts[0], "other", 1.0
        if len(parts) == 3:
            typ = parts[1].lower()
            try:
                score = min(1.0, max(0.0, float(parts[2])))
            except ValueError:
                score = 1.0
        elif len(parts) == 2:
            typ = parts[1].lower()
        if typ not in WORD_TYPES:
            typ = "other"
        if not phrase or n in seen:
            continue
        seen.add(n)
        words.append(CoverageWord(n, phrase, typ, score))
    if not words:
        raise InputError(f"Gecko coverage reply has no {{N}}[phrase, type, score] labels: {reply[:120]!r}")
    return words


def labelled_prompt(prompt: str, words: list[CoverageWord]) -> str:
    """The prompt with each labelled phrase marked ``{N}[phrase]`` (first unmarked occurrence, in order).

    A phrase that cannot be found in the prompt is appended at the end, so the QA step still sees it.

    Parameters
    ----------
    prompt : str
        The text-to-image prompt.
    words : list of CoverageWord
        The labelled words, in order.

    Returns
    -------
    str
        The marked prompt (matching ignores case; the prompt's own spelling is kept).

    Examples
    --------
    >>> from ts2viz.metrics.families.gecko.questions import CoverageWord, labelled_prompt
    >>> labelled_prompt("A red cat", [CoverageWord(1, "red", "color", 1.0), CoverageWord(2, "dog", "animal", 1.0)])
    'A {1}[red] cat {2}[dog]'
    """
    out, pos, missing = prompt, 0, []
    for w in words:
        m = re.compile(re.escape(w.phrase), re.IGNORECASE).search(out, pos)
        if m is None:
            missing.append(w)
            continue
        tag = f"{{{w.id}}}[{m.group(0)}]"
        out = out[:m.start()] + tag + out[m.end():]
        pos = m.start() + len(tag)
    return out + "".join(f" {{{w.id}}}[{w.phrase}]" for w in missing)


def qa_user_message(prompt: str, words: list[CoverageWord]) -> str:
    """The user message of the QA step (same layout as the examples in :data:`QA_SYSTEM`).

    Parameters
    ----------
    prompt : str
        The text-to-image prompt.
    words : list of CoverageWord
        The words to ask about.

    Returns
    -------
    str
        Three lines: ``Prompt:``, ``Labelled:`` (:func:`labelled_prompt`) and ``Words:`` (each word with its
        type).
    """
    listing = "; ".join(f"{{{w.id}}}[{w.phrase}] ({w.type})" for w in words)
    return f"Prompt: {prompt}\nLabelled: {labelled_prompt(prompt, words)}\nWords: {listing}"


_ABOUT = re.compile(r"^\s*About\s*\{(\d+)\}\s*\[(.*)\]\s*(?:\(([^)]*)\))?\s*:?\s*$", re.IGNORECASE)


def parse_qa(reply: str, words: list[CoverageWord]) -> list[QAPair]:
    """The QA pairs of a QA-step reply: at most one per labelled word (the first block), in word order.

    A block needs ``Q:`` and ``A:`` lines; ``Choices:`` defaults to yes, no. A block whose answer is not
    among its choices, or about a word that was not labelled, is ignored.

    Parameters
    ----------
    reply : str
        The LLM's QA reply (``About {N}[word] (type):`` blocks).
    words : list of CoverageWord
        The words asked about.

    Returns
    -------
    list of QAPair
        The pairs, in the order of ``words``.

    Raises
    ------
    InputError
        If no block parses.
    """
    by_id = {w.id: w for w in words}
    blocks: list[dict] = []
    cur: dict | None = None
    for line in reply.splitlines():
        m = _ABOUT.match(line)
        if m:
            cur = {"id": int(m.group(1))}
            blocks.append(cur)
            continue
        if cur is None:
            continue
        key, sep, val = line.strip().partition(":")
        k = key.strip().lower()
        if sep and k in ("q", "question"):
            cur.setdefault("q", val.strip())
        elif sep and k == "choices":
            cur.setdefault("choices", tuple(c.strip() for c in val.split(",") if c.strip()))
        elif sep and k in ("a", "answer"):
            cur.setdefault("a", val.strip())
    pairs: dict[int, QAPair] = {}
    for b in blocks:
        w = by_id.get(b["id"])
        if w is None or b["id"] in pairs or not b.get("q") or not b.get("a"):
            continue
        choices = b.get("choices") or ("yes", "no")
        if choice_index(choices, b["a"]) is None:
            continue
        pairs[w.id] = QAPair(w.id, w.phrase, w.type, b["q"], choices, b["a"])
    if not pairs:
        raise InputError(f"Gecko QA reply has no 'About {{N}}[word] / Q: / Choices: / A:' block: {reply[:120]!r}")
    return [pairs[w.id] for w in words if w.id in pairs]


def qa_hypothesis(question: str, answer: str, template: str = "auto") -> str:
    """The NLI hypothesis for a QA pair (premise: the prompt).

    The Gecko paper checks "the QA pair" for consistency with the prompt without saying how a pair
    becomes an NLI hypothesis. ts2viz's ``auto`` rule:

    * an existence question "Is there X?" / "Are there X?" becomes the statement "There is X." /
      "There are X." (with "not" after the verb when the expected answer is "no") - these are most of
      the entity questions, and a plain statement is what NLI models are trained on;
    * any other question keeps its wording with the answer appended: "Is the dog red? Yes."

    Any other ``template`` is a format string with ``{question}`` and ``{answer}``.

    Parameters
    ----------
    question : str
        The question (runs of whitespace collapsed).
    answer : str
        The expected answer.
    template : str, default "auto"
        ``auto`` or a format string.

    Returns
    -------
    str
        The hypothesis.

    Examples
    --------
    >>> from ts2viz.metrics.families.gecko.questions import qa_hypothesis
    >>> qa_hypothesis("Are there two dogs?", "no"), qa_hypothesis("Is the dog red", "yes")
    ('There are not two dogs.', 'Is the dog red? Yes.')
    """
    q = " ".join(str(question).split())
    a = str(answer).strip()
    if template != "auto":
        return template.format(question=q, answer=a)
    m = re.match(r"^(is|are)\s+there\s+(.+?)\s*\?*$", q, re.IGNORECASE)
    if m and a.lower() in ("yes", "no"):
        verb = m.group(1).lower() + (" not" if a.lower() == "no" else "")
        return f"There {verb} {m.group(2)}."
    ans = a[:1].upper() + a[1:]
    return f"{q if q.endswith('?') else q + '?'} {ans}."
