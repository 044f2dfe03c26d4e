"""TIFA's question writer: one few-shot request to a chat LLM (Hu et al. 2023), in TIFA's format.

The LLM lists the prompt's elements by kind (entities, activities, colours, counts, other attributes),
then for each element ``About ELEMENT (TYPE):`` one or two questions, each with ``Choices:`` and the answer
``A:`` a faithful image gives (a yes/no question and, where it makes sense, a multiple-choice one). Types:
object, human, animal, food, activity, attribute, counting, color, material, spatial, location, shape, other.

The prompt and its in-context examples are ts2viz's own, written in the original's format; the reply is
parsed leniently (extra prose and spacing variants are ignored). :data:`WRITER` is the family record's
question writer (:class:`~ts2viz.metrics.common.question_gen.QuestionGenerator` runs it, with its disk cache).
"""
from __future__ import annotations

from ....errors import InputError
from ....qa.questions import Question
from ...common.question_gen import QuestionWriter, excerpt

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


def tifa_messages(prompt: str) -> tuple[str, str]:
    r"""The messages of TIFA's few-shot request for ``prompt``.

    Parameters
    ----------
    prompt : str
        The text-to-image prompt (the request's ``Description:``).

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
    >>> from ts2viz.metrics.families.tifa.questions import parse_tifa_reply
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
                         f"(Q: / Choices: / A:): {excerpt(text)!r}")
    return out



def _write(prompt: str, ask) -> list[Question]:
    """TIFA's questions for ``prompt`` (:attr:`QuestionWriter.write`): one few-shot request, its reply parsed."""
    return parse_tifa_reply(ask("tifa", tifa_messages(prompt)))


#: TIFA's question writer (the ``tifa`` family record's): its method's name in the generator config, and the
#: prompt and examples it sends (their digest is in the config too)
WRITER = QuestionWriter("tifa", "tifa-fewshot", (TIFA_INSTRUCTIONS, TIFA_EXAMPLES), _write)
