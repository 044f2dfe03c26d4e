"""Question sets for TIFA and DSG: the bundled TS2 sets, a user CSV, or an LLM question generator.

TS2 sets (``data/ts2/TS2_TIFA_Q.csv`` and ``TS2_DSG_Q_dependency.csv``, from the T2IScoreScore release)
are matched to a prompt by its normalised text (case, punctuation and spacing ignored, since the
released question files dropped the prompts' commas). A prompt with no set is sent to the generator, if
one is configured (:class:`ts2viz.metrics.common.question_gen.QuestionGenerator`: TIFA's few-shot prompt or
DSG's three stages, on an OpenAI-compatible chat endpoint or a local transformers LLM).
"""
from __future__ import annotations

import csv
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..paths import bundled_data_dir

#: the kind of question set whose questions each count on their own (TIFA's)
INDEPENDENT_KIND = "tifa"
#: the kind whose questions presuppose others (DSG's dependency graph: parents gate their children)
DEPENDENT_KIND = "dsg"
#: the kinds of question sets, as question files, QA records (their ``kind``) and question generators name them
QUESTION_KINDS = (INDEPENDENT_KIND, DEPENDENT_KIND)
#: the bundled TS2 question file of each kind (:data:`QUESTION_KINDS`), under the bundled data folder's ``ts2/``
BUNDLED_QUESTION_FILES = {"tifa": "TS2_TIFA_Q.csv", "dsg": "TS2_DSG_Q_dependency.csv"}


@dataclass(frozen=True)
class Question:
    """One question of a prompt's question set.

    Attributes
    ----------
    id : int
        The question's id within its prompt's set (DSG parents refer to it).
    text : str
        The question.
    choices : tuple of str
        The answer choices (``("yes", "no")`` for every DSG question).
    answer : str
        The expected answer: the one an image faithful to the prompt gives.
    parents : tuple of int
        DSG: the ids of the questions this one presupposes; empty for a root and for TIFA.

    Examples
    --------
    >>> from ts2viz.qa.questions import Question
    >>> Question(1, "Is the cat black?", ("yes", "no"), "yes", parents=(0,))
    Question(id=1, text='Is the cat black?', choices=('yes', 'no'), answer='yes', parents=(0,))
    """

    id: int
    text: str
    choices: tuple[str, ...]
    answer: str
    parents: tuple[int, ...] = field(default=())


def prompt_key(prompt: str) -> str:
    """The normalised prompt text question sets are matched by.

    Lower case, every character other than a letter, digit, underscore, hyphen or white space replaced by
    a space, single spaces: the released question files dropped the prompts' commas.

    Parameters
    ----------
    prompt : str
        The prompt.

    Returns
    -------
    str
        The key.

    Examples
    --------
    >>> from ts2viz.qa.questions import prompt_key
    >>> prompt_key("A black-and-white cat,  sleeping.")
    'a black-and-white cat sleeping'
    """
    return " ".join(re.sub(r"[^\w\s-]", " ", prompt.lower()).split())


def parse_parents(text: str) -> tuple[int, ...]:
    """Parent question ids from TS2's dependency column.

    Parameters
    ----------
    text : str
        ``-1`` or empty for a root, else ids joined by ``-`` (any other object is converted with
        ``str``).

    Returns
    -------
    tuple of int
        The parent ids (empty for a root).

    Raises
    ------
    ValueError
        If a part is not an integer.

    Examples
    --------
    >>> from ts2viz.qa.questions import parse_parents
    >>> parse_parents("-1"), parse_parents("0"), parse_parents("0-2")
    ((), (0,), (0, 2))
    """
    text = str(text).strip()
    if text in ("", "-1"):
        return ()
    return tuple(int(p) for p in text.split("-") if p)


def read_question_csv(path: str | os.PathLike, kind: str) -> dict[str, list[Question]]:
    """Question sets per prompt from a file in the TS2 question-file format.

    Columns ``id, prompt, question_id, [parent_question_id,] question, choices, answer`` (``choices``
    joined by ``|``; see :func:`write_question_csv`). Rows are grouped by :func:`prompt_key` of the
    prompt; when rows of several ``id`` values (several SEGs) share a prompt, the questions of the first
    ``id`` are kept and the others skipped. Choices, question and answer are stripped.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (UTF-8).
    kind : {'tifa', 'dsg'}
        The question set's kind: parents are read for ``dsg`` only; a DSG file without a
        ``parent_question_id`` column makes every question a root.

    Returns
    -------
    dict of str to list of Question
        Prompt key -> the prompt's questions, in file order.

    Raises
    ------
    InputError
        If the file does not exist, a required column (``prompt, question_id, question, choices,
        answer``) is missing, or a question or parent id is not an integer (the message names the file
        and the row).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.qa.questions import Question, read_question_csv, write_question_csv
    >>> qs = [Question(0, "Is there a cat?", ("yes", "no"), "yes"),
    ...       Question(1, "Is the cat black?", ("yes", "no"), "yes", parents=(0,))]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "questions.csv"
    ...     write_question_csv(path, [(0, "A black cat.", qs)], "dsg")
    ...     text = path.read_text()
    ...     back = read_question_csv(path, "dsg")
    >>> print(text)
    id,prompt,question_id,parent_question_id,question,choices,answer
    0,A black cat.,0,-1,Is there a cat?,yes|no,yes
    0,A black cat.,1,0,Is the cat black?,yes|no,yes
    <BLANKLINE>
    >>> back == {"a black cat": qs}
    True
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such question file", file=path)
    out: dict[str, list[Question]] = {}
    owner: dict[str, str] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        need = ["prompt", "question_id", "question", "choices", "answer"]
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column {missing[0]!r} (expected {', '.join(need)})", file=path)
        has_parents = "parent_question_id" in (reader.fieldnames or [])
        for i, rec in enumerate(reader, start=2):
            key = prompt_key(rec["prompt"])
            group = str(rec.get("id", ""))
            # Several SEGs may share a prompt: keep the first SEG's questions only.
            if owner.setdefault(key, group) != group:
                continue
            try:
                parents = parse_parents(rec["parent_question_id"]) if has_parents and kind == DEPENDENT_KIND else ()
                q = Question(int(rec["question_id"]), rec["question"].strip(),
                             tuple(c.strip() for c in rec["choices"].split("|")), rec["answer"].strip(), parents)
            except ValueError:
                raise InputError("question_id and parent_question_id must be integers", file=path, row=i) from None
            out.setdefault(key, []).append(q)
    return out


def bundled_path(kind: str) -> Path:
    """The bundled TS2 question file of a kind.

    Parameters
    ----------
    kind : {'tifa', 'dsg'}
        ``tifa`` gives ``TS2_TIFA_Q.csv``, ``dsg`` ``TS2_DSG_Q_dependency.csv`` (with parents).

    Returns
    -------
    pathlib.Path
        The file under the bundled data folder's ``ts2/``.

    Raises
    ------
    KeyError
        For any other kind.
    """
    return bundled_data_dir() / "ts2" / BUNDLED_QUESTION_FILES[kind]


def write_question_csv(path: str | os.PathLike, sets: list[tuple[int, str, list[Question]]], kind: str) -> None:
    """Write question sets in the TS2 question-file format, atomically.

    Columns ``id, prompt, question_id, [parent_question_id,] question, choices, answer``; DSG files have
    the parent column (``-1`` for a root, ``0-2`` for parents 0 and 2). :func:`read_question_csv` reads
    the file back (``?questions=PATH.csv`` of a TIFA/DSG spec). The file appears complete or not at all
    (:mod:`ts2viz.atomic`).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file to write (replaced if it exists).
    sets : list of tuple of (int, str, list of Question)
        ``(id, prompt, questions)`` per prompt (``id``: the SEG id, or the prompt's index).
    kind : {'tifa', 'dsg'}
        ``dsg`` writes the parent column, any other kind leaves it out.

    Examples
    --------
    See :func:`read_question_csv`.
    """
    from ..atomic import atomic_path

    head = ["id", "prompt", "question_id"] + (["parent_question_id"] if kind == DEPENDENT_KIND else []) + \
        ["question", "choices", "answer"]
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for sid, prompt, qs in sets:
            for q in qs:
                parent = ["-".join(map(str, q.parents)) or "-1"] if kind == DEPENDENT_KIND else []
                w.writerow([sid, prompt, q.id, *parent, q.text, "|".join(q.choices), q.answer])


class QuestionSource:
    """Where a TIFA/DSG metric gets a prompt's questions: a question file first, then the generator.

    Parameters
    ----------
    kind : {'tifa', 'dsg'}
        The question set's kind (passed to the file reader and the generator).
    questions : str or None, default 'ts2'
        ``ts2`` (the bundled TS2 file, :func:`bundled_path`), a path to a question CSV
        (:func:`read_question_csv`; ``~`` expanded), or None, ``""`` or ``none`` for no file.
    generator : QuestionGenerator, optional
        Asked for the questions of a prompt the file lacks
        (:class:`ts2viz.metrics.common.question_gen.QuestionGenerator` or any object with
        ``generate(prompt, kind)`` and ``config``).

    Attributes
    ----------
    kind : str
        The question set's kind.
    generator : object or None
        The question generator.
    sets : dict of str to list of Question
        The file's question sets by :func:`prompt_key` (empty without a file).
    file_id : str or None
        The file's identity in the metric's config: ``ts2:DIGEST`` or ``NAME:DIGEST`` (the file's name
        and the first 16 hex digits of its SHA-1), None without a file.

    Raises
    ------
    InputError
        If the question file cannot be read, or if there is neither a file with questions nor a
        generator.

    Examples
    --------
    >>> from ts2viz.qa.questions import QuestionSource
    >>> src = QuestionSource("dsg")
    >>> src.file_id.startswith("ts2:")
    True
    >>> [(q.id, q.parents) for q in src.get("A group of stuffed animals sitting next to each other in bed.")]
    [(0, ()), (1, (0,)), (2, (0,)), (3, (0,))]
    """

    def __init__(self, kind: str, questions: str | None = "ts2", generator=None):
        self.kind = kind
        self.generator = generator
        self.sets: dict[str, list[Question]] = {}
        self.file_id = None
        if questions not in (None, "", "none"):
            path = bundled_path(kind) if questions == "ts2" else Path(str(questions)).expanduser()
            self.sets = read_question_csv(path, kind)
            digest = hashlib.sha1(path.read_bytes()).hexdigest()[:16]
            self.file_id = f"{'ts2' if questions == 'ts2' else path.name}:{digest}"
        self._generated: dict[str, list[Question]] = {}
        if not self.sets and generator is None:
            raise InputError(f"{kind}: no questions: give a question file or a generator")

    @property
    def config(self) -> dict:
        """``{"questions": file_id, "generator": the generator's config or None}`` (part of the metric's config)."""
        return {"questions": self.file_id, "generator": self.generator.config if self.generator else None}

    def get(self, prompt: str) -> list[Question]:
        """The questions of a prompt.

        The file's set for the prompt's :func:`prompt_key` if it has one; else the generator's, generated on
        first request and kept in memory for the source's lifetime.

        Parameters
        ----------
        prompt : str
            The prompt.

        Returns
        -------
        list of Question
            The prompt's questions.

        Raises
        ------
        InputError
            If the file has no questions for the prompt and there is no generator (the message says how to
            give one); the generator's own errors pass through.
        """
        key = prompt_key(prompt)
        qs = self.sets.get(key) or self._generated.get(key)
        if qs:
            return qs
        if self.generator is None:
            short = prompt if len(prompt) <= 70 else prompt[:67] + "..."
            raise InputError(f"{self.kind}: no questions for prompt {short!r} in {self.file_id}; give a "
                             "question generator (?generator=URL&generator_model=NAME or ?generator=hf:MODEL) "
                             "or a question file (?questions=PATH.csv)")
        qs = self.generator.generate(prompt, self.kind)
        self._generated[key] = qs
        return qs
