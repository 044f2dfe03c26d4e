"""DSG's question writer: three few-shot requests to a chat LLM (Cho et al. 2024), in DSG's formats.

(1) the prompt's *semantic tuples* (``entity - whole (cat)``, ``attribute - color (cat, black)``,
``relation - spatial (cat, chair, on)``, ...), (2) one yes/no question per tuple, (3) each tuple's parent
tuples (``0`` = none); stages 2 and 3 both read the prompt and the stage-1 tuples. DSG's ids are 1-based; the
questions come out 0-based, as in the TS2 question files.

The prompts and in-context examples are ts2viz's own, written in the original's formats; replies are parsed
leniently (extra prose, numbering and spacing variants are ignored), and a reply that yields no usable
question is an :class:`InputError` that names the stage. :data:`WRITER` is the family record's question
writer (:class:`~ts2viz.metrics.common.question_gen.QuestionGenerator` runs it, with its disk cache).
"""
from __future__ import annotations

import re

from ....errors import InputError
from ....qa.accumulation import counted_flags
from ....qa.questions import Question
from ...common.question_gen import QuestionWriter, excerpt

DSG_TUPLE_INSTRUCTIONS = """Task: semantic tuples. Given a text-to-image prompt, list every atomic fact it states as a tuple, one per line.
Tuple kinds: entity - whole (X), entity - part (X, part), attribute - color|material|shape|size|texture|state|type (X, value),
other - count (X, ==N), other - text (X, "text"), relation - spatial|action|part (X, Y, relation), global - (style or medium).
Do not repeat a tuple. Do not add facts the prompt does not state.
output format: id | tuple (ids from 1)"""

DSG_QUESTION_INSTRUCTIONS = """Task: questions. Given a text-to-image prompt and its semantic tuples, rewrite each tuple as one natural yes/no question
whose answer is yes for an image that matches the prompt. Keep the ids.
output format: id | question"""

DSG_DEPENDENCY_INSTRUCTIONS = """Task: dependencies. Given a text-to-image prompt and its semantic tuples, list the parent tuples of each tuple:
the tuples it presupposes (an attribute, count or relation depends on the entities it is about). 0 means no parent.
output format: id | parent ids (comma separated)"""

DSG_EXAMPLES = [
    {"prompt": "A black cat sleeping on a wooden chair.",
     "tuples": ["entity - whole (cat)", "entity - whole (chair)", "attribute - color (cat, black)",
                "attribute - material (chair, wooden)", "attribute - state (cat, sleeping)",
                "relation - spatial (cat, chair, on)"],
     "questions": ["Is there a cat?", "Is there a chair?", "Is the cat black?", "Is the chair wooden?",
                   "Is the cat sleeping?", "Is the cat on the chair?"],
     "dependencies": ["0", "0", "1", "2", "1", "1,2"]},
    {"prompt": "Two children flying a red kite on the beach.",
     "tuples": ["entity - whole (children)", "other - count (children, ==2)", "entity - whole (kite)",
                "attribute - color (kite, red)", "entity - whole (beach)", "relation - action (children, kite, fly)",
                "relation - spatial (children, beach, on)"],
     "questions": ["Are there children?", "Are there two children?", "Is there a kite?", "Is the kite red?",
                   "Is there a beach?", "Are the children flying the kite?", "Are the children on the beach?"],
     "dependencies": ["0", "1", "0", "3", "0", "1,3", "1,5"]},
    {"prompt": "An oil painting of a lighthouse at sunset.",
     "tuples": ["global - (oil painting)", "entity - whole (lighthouse)", "entity - whole (sunset)",
                "relation - spatial (lighthouse, sunset, at)"],
     "questions": ["Is this an oil painting?", "Is there a lighthouse?", "Is it sunset?",
                   "Is the lighthouse shown at sunset?"],
     "dependencies": ["0", "0", "0", "2,3"]},
]


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{i + 1} | {x}" for i, x in enumerate(items))


def dsg_messages(stage: str, prompt: str, tuples: list[str] | None = None) -> tuple[str, str]:
    """The messages of one DSG stage's few-shot request for ``prompt``.

    Parameters
    ----------
    stage : str
        ``tuple``, ``question`` or ``dependency``.
    prompt : str
        The text-to-image prompt.
    tuples : list of str or None, optional
        The stage-1 tuples, listed as ``id | tuple`` (ids from 1) in the ``question`` and ``dependency``
        stages' user message.

    Returns
    -------
    system : str
        The stage's instructions followed by its in-context examples.
    user : str
        The input (the prompt, and the tuples after stage 1) and ``output:``.

    Examples
    --------
    >>> from ts2viz.metrics.families.dsg.questions import dsg_messages
    >>> print(dsg_messages("question", "A red kite.", ["entity - whole (kite)"])[1])
    input: A red kite.
    1 | entity - whole (kite)
    output:
    """
    if stage == "tuple":
        system = DSG_TUPLE_INSTRUCTIONS + "\n\n" + "\n\n".join(
            f"input: {ex['prompt']}\noutput:\n{_numbered(ex['tuples'])}" for ex in DSG_EXAMPLES)
        return system, f"input: {prompt}\noutput:"
    head = {"question": DSG_QUESTION_INSTRUCTIONS, "dependency": DSG_DEPENDENCY_INSTRUCTIONS}[stage]
    key = {"question": "questions", "dependency": "dependencies"}[stage]
    system = head + "\n\n" + "\n\n".join(
        f"input: {ex['prompt']}\n{_numbered(ex['tuples'])}\noutput:\n{_numbered(ex[key])}" for ex in DSG_EXAMPLES)
    return system, f"input: {prompt}\n{_numbered(tuples or [])}\noutput:"


_NUMBERED_LINE = re.compile(r"^\s*[-*]?\s*(\d+)\s*[.):]?\s*\|\s*(.*?)\s*$")


def parse_numbered(text: str, stage: str) -> dict[int, str]:
    r"""The ``id | content`` lines of a DSG stage's reply.

    Other lines are ignored, and the first line of an id wins. An id may be followed by ``.``, ``)`` or
    ``:`` and the line may start with ``-`` or ``*``.

    Parameters
    ----------
    text : str
        The LLM's reply.
    stage : str
        The stage (``tuple``, ``question``, ``dependency``), for the error message.

    Returns
    -------
    dict of int to str
        ``{id: content}``, the content stripped.

    Raises
    ------
    InputError
        If the reply has no such line.

    Examples
    --------
    >>> from ts2viz.metrics.families.dsg.questions import parse_numbered
    >>> parse_numbered("Sure:\n1 | Is there a cat?\n2. | Is it black?\n1 | again", "question")
    {1: 'Is there a cat?', 2: 'Is it black?'}
    """
    out: dict[int, str] = {}
    for line in str(text).splitlines():
        m = _NUMBERED_LINE.match(line)
        if m and m.group(2) and int(m.group(1)) not in out:
            out[int(m.group(1))] = m.group(2)
    if not out:
        raise InputError(f"DSG {stage} stage: the reply has no 'id | {stage}' lines: {excerpt(text)!r}")
    return out


def dsg_questions_from_stages(tuples: dict[int, str], questions: dict[int, str],
                              dependencies: dict[int, str]) -> list[Question]:
    """Assemble DSG questions (0-based ids, parents) from the three parsed stages.

    Every tuple needs a question; a tuple without a dependency line is a root; parent ids that are
    not tuples, or the tuple itself, are dropped.

    Parameters
    ----------
    tuples : dict of int to str
        Stage 1: ``{id: tuple}`` (ids from 1).
    questions : dict of int to str
        Stage 2: ``{id: question}``.
    dependencies : dict of int to str
        Stage 3: ``{id: "parent ids"}`` (comma- or space-separated, ``0`` for none).

    Returns
    -------
    list of Question
        One yes/no question per tuple in id order, with 0-based ids and parents, expected answer ``yes``.

    Raises
    ------
    InputError
        For a tuple with no question, a parent that is not a number, or parent links that form a cycle.

    Examples
    --------
    >>> from ts2viz.metrics.families.dsg.questions import dsg_questions_from_stages
    >>> qs = dsg_questions_from_stages({1: "entity - whole (cat)", 2: "attribute - color (cat, black)"},
    ...                                {1: "Is there a cat?", 2: "Is the cat black?"}, {2: "1, 7"})
    >>> [(q.id, q.text, q.parents) for q in qs]
    [(0, 'Is there a cat?', ()), (1, 'Is the cat black?', (0,))]
    """
    ids = sorted(tuples)
    missing = [i for i in ids if i not in questions]
    if missing:
        raise InputError(f"DSG question stage: no question for tuple(s) {missing} "
                         f"({excerpt(tuples[missing[0]], 60)!r})")
    parents: dict[int, tuple[int, ...]] = {}
    for i in ids:
        text = dependencies.get(i, "0")
        try:
            ps = [int(p) for p in re.split(r"[,\s]+", text.strip()) if p]
        except ValueError:
            raise InputError(f"DSG dependency stage: tuple {i}: parents {text!r} are not ids") from None
        parents[i] = tuple(sorted({p for p in ps if p != i and p in tuples}))
    try:
        counted_flags(ids, [True] * len(ids), [parents[i] for i in ids], "gated")
    except InputError:
        raise InputError(f"DSG dependency stage: the parent links form a cycle: "
                         f"{ {i: list(parents[i]) for i in ids if parents[i]} }") from None
    pos = {i: k for k, i in enumerate(ids)}
    return [Question(pos[i], questions[i].strip(), ("yes", "no"), "yes", tuple(pos[p] for p in parents[i]))
            for i in ids]



def _write(prompt: str, ask) -> list[Question]:
    """DSG's questions for ``prompt`` (:attr:`QuestionWriter.write`): tuples, questions, dependencies, three requests."""
    tuples = parse_numbered(ask("tuple", dsg_messages("tuple", prompt)), "tuple")
    listed = [tuples[i] for i in sorted(tuples)]
    questions = parse_numbered(ask("question", dsg_messages("question", prompt, listed)), "question")
    deps = parse_numbered(ask("dependency", dsg_messages("dependency", prompt, listed)), "dependency")
    # the stages number tuples 1..n in the order listed
    renumber = {i: k + 1 for k, i in enumerate(sorted(tuples))}
    return dsg_questions_from_stages({renumber[i]: t for i, t in tuples.items()}, questions, deps)


#: DSG's question writer (the ``dsg`` family record's): its method's name in the generator config, and the
#: prompts and examples it sends (their digest is in the config too)
WRITER = QuestionWriter("dsg", "dsg-3stage", (DSG_TUPLE_INSTRUCTIONS, DSG_QUESTION_INSTRUCTIONS,
                                              DSG_DEPENDENCY_INSTRUCTIONS, DSG_EXAMPLES), _write)
