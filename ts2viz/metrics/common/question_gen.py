"""Question generation for TIFA and DSG with a chat LLM, structured as the original methods.

* **TIFA** (Hu et al. 2023): one long few-shot prompt. The LLM lists the prompt's elements by kind
  (entities, activities, colours, counts, other attributes), then for each element ``About ELEMENT
  (TYPE):`` one or two questions, each with ``Choices:`` and the answer ``A:`` a faithful image gives
  (a yes/no question and, where it makes sense, a multiple-choice one). Types: object, human,
  animal, food, activity, attribute, counting, color, material, spatial, location, shape, other.
* **DSG** (Cho et al. 2024): three stages, each a few-shot prompt. (1) the prompt's *semantic
  tuples* (``entity - whole (cat)``, ``attribute - color (cat, black)``, ``relation - spatial (cat,
  chair, on)``, ...), (2) one yes/no question per tuple, (3) each tuple's parent tuples (``0`` = none);
  stages 2 and 3 both read the prompt and the stage-1 tuples. DSG's ids are 1-based; the questions
  come out 0-based, as in the TS2 question files.

The prompts and in-context examples here are ts2viz's own, written in the originals' formats. Replies
are parsed leniently (extra prose, numbering and spacing variants are ignored); a reply that yields no
usable question is an :class:`InputError` that names the stage and shows the reply's start.

Generated questions are kept on disk, one JSON file per (generator config, kind, prompt) under
``<cache>/questions/`` (default :func:`ts2viz.paths.cache_dir`), with the raw LLM replies, so a prompt
is sent to the LLM once. ``ts2viz questions`` writes them as a TS2 question CSV to inspect and edit;
a TIFA/DSG metric reads the edited file with ``?questions=PATH.csv``.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ...errors import InputError
from ...qa.accumulation import counted_flags
from ...qa.questions import Question

TIFA_TYPES = ("object", "human", "animal", "food", "activity", "attribute", "counting", "color", "material",
              "spatial", "location", "shape", "other")

TIFA_INSTRUCTIONS = f"""Given an image description, write multiple-choice questions that check whether an image shows it faithfully.
First list the description's elements: Entities, Activities, Colors, Counting, Other attributes.
Then, for each element, write a line "About ELEMENT (TYPE):" with TYPE one of {", ".join(TIFA_TYPES)},
followed by one or two questions. Each question is three lines: "Q: ...", "Choices: ..." (comma-separated)
and "A: ..." (the answer for an image that matches the description). Ask a yes/no question (Choices: yes, no)
and, where the element has plausible alternatives, a question with four choices that include the answer.
Only ask about what the description states."""

TIFA_EXAMPLES = [
    """Description: A black cat sleeping on a wooden chair.
Entities: cat, chair
Activities: sleeping
Colors: black
Counting:
Other attributes: wooden
About cat (animal):
Q: is there a cat?
Choices: yes, no
A: yes
Q: what animal is on the chair?
Choices: cat, dog, rabbit, fox
A: cat
About chair (object):
Q: is there a chair?
Choices: yes, no
A: yes
Q: what is the cat lying on?
Choices: chair, sofa, bed, floor
A: chair
About sleeping (activity):
Q: is the cat sleeping?
Choices: yes, no
A: yes
Q: what is the cat doing?
Choices: sleeping, eating, playing, jumping
A: sleeping
About black (color):
Q: is the cat black?
Choices: yes, no
A: yes
Q: what color is the cat?
Choices: black, white, orange, gray
A: black
About wooden (material):
Q: is the chair made of wood?
Choices: yes, no
A: yes
Q: what is the chair made of?
Choices: wood, metal, plastic, stone
A: wood""",
    """Description: Two children flying a red kite on the beach.
Entities: children, kite, beach
Activities: flying
Colors: red
Counting: two
Other attributes:
About children (human):
Q: are there children?
Choices: yes, no
A: yes
Q: who is flying the kite?
Choices: children, adults, a dog, nobody
A: children
About kite (object):
Q: is there a kite?
Choices: yes, no
A: yes
About beach (location):
Q: is this a beach?
Choices: yes, no
A: yes
Q: where are the children?
Choices: beach, park, street, forest
A: beach
About flying (activity):
Q: are the children flying a kite?
Choices: yes, no
A: yes
About red (color):
Q: is the kite red?
Choices: yes, no
A: yes
Q: what color is the kite?
Choices: red, blue, yellow, green
A: red
About two (counting):
Q: are there two children?
Choices: yes, no
A: yes
Q: how many children are there?
Choices: 1, 2, 3, 4
A: 2""",
    """Description: An oil painting of a lighthouse at sunset.
Entities: lighthouse, sunset
Activities:
Colors:
Counting:
Other attributes: oil painting
About lighthouse (object):
Q: is there a lighthouse?
Choices: yes, no
A: yes
Q: what building is in the picture?
Choices: lighthouse, castle, church, windmill
A: lighthouse
About sunset (other):
Q: is it sunset?
Choices: yes, no
A: yes
Q: what time of day is it?
Choices: sunset, noon, night, morning
A: sunset
About oil painting (attribute):
Q: is this an oil painting?
Choices: yes, no
A: yes
Q: what kind of image is this?
Choices: oil painting, photograph, pencil sketch, cartoon
A: oil painting""",
]

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

#: a short digest of every prompt and example: editing them changes the generator config (and the cache key)
PROMPTS_VERSION = hashlib.sha1(json.dumps(
    [TIFA_INSTRUCTIONS, TIFA_EXAMPLES, DSG_TUPLE_INSTRUCTIONS, DSG_QUESTION_INSTRUCTIONS,
     DSG_DEPENDENCY_INSTRUCTIONS, DSG_EXAMPLES]).encode()).hexdigest()[:12]


def _short(text: str, n: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


# -- TIFA ----------------------------------------------------------------------------------------------

def tifa_messages(prompt: str) -> tuple[str, str]:
    r"""The messages of TIFA's few-shot request for ``prompt``.

    Parameters
    ----------
    prompt : str
        The text-to-image prompt.

    Returns
    -------
    system : str
        :data:`TIFA_INSTRUCTIONS` followed by the in-context examples.
    user : str
        ``"Description: PROMPT\nEntities:"``.
    """
    system = TIFA_INSTRUCTIONS + "\n\n" + "\n\n".join(TIFA_EXAMPLES)
    return system, f"Description: {prompt}\nEntities:"


def parse_tifa_reply(text: str) -> list[Question]:
    r"""Questions from a reply in TIFA's format (see the module docstring).

    A question needs ``Q:``, ``Choices:`` (two or more) and ``A:``; an answer that is not one of the
    choices is matched case-insensitively, and a question whose answer still is not a choice is
    dropped, as is a repeated question (case ignored). Leading ``-``/``*`` are ignored; an ``About ...``
    or ``Description:`` line ends the question being read.

    Parameters
    ----------
    text : str
        The LLM's reply.

    Returns
    -------
    list of Question
        The questions in reply order, ids from 0, answers spelt as in the choices, no parents.

    Raises
    ------
    InputError
        If no usable question remains.

    Examples
    --------
    >>> from ts2viz.metrics.common.question_gen import parse_tifa_reply
    >>> qs = parse_tifa_reply("About cat (animal):\nQ: is there a cat?\nChoices: yes, no\nA: Yes")
    >>> [(q.id, q.text, q.choices, q.answer) for q in qs]
    [(0, 'is there a cat?', ('yes', 'no'), 'yes')]
    """
    out: list[Question] = []
    seen: set[str] = set()
    q = choices = None
    for raw in str(text).splitlines():
        line = raw.strip().lstrip("-*").strip()
        low = line.lower()
        if low.startswith("about ") or low.startswith("description:"):
            q = choices = None
        elif low.startswith("q:"):
            q, choices = line[2:].strip(), None
        elif low.startswith("choices:") and q:
            choices = [c.strip() for c in line[len("choices:"):].split(",") if c.strip()]
        elif low.startswith("a:") and q and choices and len(choices) >= 2:
            ans = line[2:].strip()
            match = next((c for c in choices if c.lower() == ans.lower()), None)
            if match is not None and q.lower() not in seen:
                seen.add(q.lower())
                out.append(Question(len(out), q, tuple(choices), match))
            q = choices = None
    if not out:
        raise InputError(f"TIFA question generator reply has no question in the expected format "
                         f"(Q: / Choices: / A:): {_short(text)!r}")
    return out


# -- DSG -------------------------------------------------------------------------------------------------

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
    >>> from ts2viz.metrics.common.question_gen import dsg_messages
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
    >>> from ts2viz.metrics.common.question_gen import parse_numbered
    >>> parse_numbered("Sure:\n1 | Is there a cat?\n2. | Is it black?\n1 | again", "question")
    {1: 'Is there a cat?', 2: 'Is it black?'}
    """
    out: dict[int, str] = {}
    for line in str(text).splitlines():
        m = _NUMBERED_LINE.match(line)
        if m and m.group(2) and int(m.group(1)) not in out:
            out[int(m.group(1))] = m.group(2)
    if not out:
        raise InputError(f"DSG {stage} stage: the reply has no 'id | {stage}' lines: {_short(text)!r}")
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
    >>> from ts2viz.metrics.common.question_gen import dsg_questions_from_stages
    >>> qs = dsg_questions_from_stages({1: "entity - whole (cat)", 2: "attribute - color (cat, black)"},
    ...                                {1: "Is there a cat?", 2: "Is the cat black?"}, {2: "1, 7"})
    >>> [(q.id, q.text, q.parents) for q in qs]
    [(0, 'Is there a cat?', ()), (1, 'Is the cat black?', (0,))]
    """
    ids = sorted(tuples)
    missing = [i for i in ids if i not in questions]
    if missing:
        raise InputError(f"DSG question stage: no question for tuple(s) {missing} "
                         f"({_short(tuples[missing[0]], 60)!r})")
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


# -- the generator with its disk cache ---------------------------------------------------------------------

def write_tifa_questions(prompt: str, ask) -> list[Question]:
    """TIFA's questions for ``prompt``: one few-shot request (:func:`tifa_messages`, :func:`parse_tifa_reply`).

    Parameters
    ----------
    prompt : str
        The text-to-image prompt.
    ask : callable
        ``ask(stage, (system, user)) -> reply``: sends one request to the LLM.

    Returns
    -------
    list of Question
        The questions, ids from 0.
    """
    return parse_tifa_reply(ask("tifa", tifa_messages(prompt)))


def write_dsg_questions(prompt: str, ask) -> list[Question]:
    """DSG's questions for ``prompt``: tuples, questions and dependencies, three requests (:func:`dsg_messages`).

    Parameters
    ----------
    prompt : str
        The text-to-image prompt.
    ask : callable
        ``ask(stage, (system, user)) -> reply``: sends one request to the LLM.

    Returns
    -------
    list of Question
        The questions with their parents (:func:`dsg_questions_from_stages`).
    """
    tuples = parse_numbered(ask("tuple", dsg_messages("tuple", prompt)), "tuple")
    listed = [tuples[i] for i in sorted(tuples)]
    questions = parse_numbered(ask("question", dsg_messages("question", prompt, listed)), "question")
    deps = parse_numbered(ask("dependency", dsg_messages("dependency", prompt, listed)), "dependency")
    # the stages number tuples 1..n in the order listed
    renumber = {i: k + 1 for k, i in enumerate(sorted(tuples))}
    return dsg_questions_from_stages({renumber[i]: t for i, t in tuples.items()}, questions, deps)


#: the question kinds (of :mod:`ts2viz.qa.questions`) the generator writes -> how it writes one kind's questions
WRITERS = {"tifa": write_tifa_questions, "dsg": write_dsg_questions}


class QuestionGenerator:
    """TIFA / DSG questions for a prompt from a chat LLM (:mod:`ts2viz.metrics.backbones.llm`), cached on disk per prompt.

    Each cache file, one per (generator config, kind, prompt), holds the questions and the raw replies.

    Parameters
    ----------
    llm : object
        The chat LLM: ``chat(system, user)`` returns the reply text and ``config`` identifies it.
    cache_dir : str or Path or None, optional
        Folder of the question cache (default ``ts2viz.paths.cache_dir()/questions``).
    use_cache : bool, default True
        False neither reads nor writes the cache.
    """

    def __init__(self, llm, cache_dir: str | Path | None = None, use_cache: bool = True):
        from ...paths import cache_dir as default_cache

        self.llm = llm
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache() / "questions"
        self.use_cache = use_cache

    @property
    def config(self) -> dict:
        """The generator's identity: its method, :data:`PROMPTS_VERSION` and the LLM's config."""
        return {"generator": "tifa-fewshot/dsg-3stage", "prompts": PROMPTS_VERSION, **self.llm.config}

    def cache_path(self, prompt: str, kind: str) -> Path:
        """The cache file of ``prompt``'s questions of ``kind`` (whether or not it exists).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.
        kind : str
            ``tifa`` or ``dsg``.

        Returns
        -------
        Path
            ``<cache_dir>/<kind>/<24 hex digits>.json``, keyed by :attr:`config`, ``kind`` and ``prompt``.
        """
        key = json.dumps({"config": self.config, "kind": kind, "prompt": prompt}, sort_keys=True)
        return self.cache_dir / kind / f"{hashlib.sha1(key.encode()).hexdigest()[:24]}.json"

    def generate(self, prompt: str, kind: str) -> list[Question]:
        """The questions for ``prompt``, from the cache or the LLM.

        An unreadable cache entry is generated again. A new result is written to the cache (atomically)
        with the raw replies.

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.
        kind : str
            ``tifa`` (one few-shot request) or ``dsg`` (three stages).

        Returns
        -------
        list of Question
            The questions, ids from 0 (DSG's with parents).

        Raises
        ------
        InputError
            If ``kind`` is neither ``tifa`` nor ``dsg``, or a reply yields no usable questions (the message
            names the prompt and the stage).
        """
        if kind not in WRITERS:
            raise InputError(f"question kind must be {' or '.join(WRITERS)}, not {kind!r}")
        path = self.cache_path(prompt, kind)
        if self.use_cache and path.is_file():
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
                return [Question(int(q["id"]), q["question"], tuple(q["choices"]), q["answer"],
                                 tuple(int(p) for p in q["parents"])) for q in rec["questions"]]
            except (OSError, ValueError, KeyError, TypeError):
                pass  # an unreadable cache entry is regenerated
        replies: dict[str, str] = {}
        questions = self._run(prompt, kind, replies)
        if self.use_cache:
            from ...atomic import atomic_path

            rec = {"prompt": prompt, "kind": kind, "generator": self.config, "replies": replies,
                   "questions": [{"id": q.id, "question": q.text, "choices": list(q.choices), "answer": q.answer,
                                  "parents": list(q.parents)} for q in questions]}
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(rec, indent=1, ensure_ascii=False), encoding="utf-8")
        return questions

    def _ask(self, stage: str, messages: tuple[str, str], replies: dict[str, str]) -> str:
        reply = self.llm.chat(*messages)
        replies[stage] = reply
        return reply

    def _run(self, prompt: str, kind: str, replies: dict[str, str]) -> list[Question]:
        def ask(stage: str, messages: tuple[str, str]) -> str:
            return self._ask(stage, messages, replies)

        try:
            return WRITERS[kind](prompt, ask)
        except InputError as e:
            raise InputError(f"question generator reply for prompt {_short(prompt, 60)!r}: {e.problem}") from None
