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


@dataclass(frozen=True)
class Question:
    """One question: its id, text, answer choices, expected answer and (DSG) parent question ids."""

    id: int
    text: str
    choices: tuple[str, ...]
    answer: str
    parents: tuple[int, ...] = field(default=())


def prompt_key(prompt: str) -> str:
    """Normalised prompt text used to match question sets (lower case, no punctuation, single spaces)."""
    return " ".join(re.sub(r"[^\w\s-]", " ", prompt.lower()).split())


def parse_parents(text: str) -> tuple[int, ...]:
    """``"-1"`` -> ``()``, ``"0"`` -> ``(0,)``, ``"0-2"`` -> ``(0, 2)`` (TS2's dependency column)."""
    text = str(text).strip()
    if text in ("", "-1"):
        return ()
    return tuple(int(p) for p in text.split("-") if p)


def read_question_csv(path: str | os.PathLike, kind: str) -> dict[str, list[Question]]:
    """Questions per prompt key from a TS2-format CSV (id, prompt, question_id, [parent_question_id,]
    question, choices ``a|b``, answer). For DSG without a parent column every question is a root."""
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
                parents = parse_parents(rec["parent_question_id"]) if has_parents and kind == "dsg" else ()
                q = Question(int(rec["question_id"]), rec["question"].strip(),
                             tuple(c.strip() for c in rec["choices"].split("|")), rec["answer"].strip(), parents)
            except ValueError:
                raise InputError("question_id and parent_question_id must be integers", file=path, row=i) from None
            out.setdefault(key, []).append(q)
    return out


def bundled_path(kind: str) -> Path:
    name = {"tifa": "TS2_TIFA_Q.csv", "dsg": "TS2_DSG_Q_dependency.csv"}[kind]
    return bundled_data_dir() / "ts2" / name


def write_question_csv(path: str | os.PathLike, sets: list[tuple[int, str, list[Question]]], kind: str) -> None:
    """Write question sets in the TS2 question-file format, atomically.

    ``sets`` holds ``(id, prompt, questions)`` per prompt (``id``: the SEG id, or the prompt's index).
    Columns ``id, prompt, question_id, [parent_question_id,] question, choices, answer``; DSG files have
    the parent column (``-1`` for a root, ``0-2`` for parents 0 and 2). :func:`read_question_csv`
    reads it back (``?questions=PATH.csv``).
    """
    from ..atomic import atomic_path

    head = ["id", "prompt", "question_id"] + (["parent_question_id"] if kind == "dsg" else []) + \
        ["question", "choices", "answer"]
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for sid, prompt, qs in sets:
            for q in qs:
                parent = ["-".join(map(str, q.parents)) or "-1"] if kind == "dsg" else []
                w.writerow([sid, prompt, q.id, *parent, q.text, "|".join(q.choices), q.answer])


class QuestionSource:
    """Where a TIFA/DSG metric gets a prompt's questions: a question file first, then the generator."""

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
        return {"questions": self.file_id, "generator": self.generator.config if self.generator else None}

    def get(self, prompt: str) -> list[Question]:
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
