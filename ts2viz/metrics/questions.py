"""Question sets for TIFA and DSG: the bundled TS2 sets, a user CSV, or an LLM question generator.

TS2 sets (``data/ts2/TS2_TIFA_Q.csv`` and ``TS2_DSG_Q_dependency.csv``, from the T2IScoreScore release)
are matched to a prompt by its normalised text (case, punctuation and spacing ignored, since the
released question files dropped the prompts' commas). A prompt with no set is sent to the generator, if
one is configured: an OpenAI-compatible chat endpoint (URL + key) or a local transformers LLM.
"""
from __future__ import annotations

import csv
import hashlib
import json
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


# -- generators ------------------------------------------------------------------------------------

TIFA_INSTRUCTIONS = (
    "You write visual question-answering checks for a text-to-image prompt, as in TIFA. For the prompt "
    "below, list questions that together cover every object, attribute, count, relation and action it "
    "states. Each question has multiple-choice answers (for yes/no questions the choices are "
    "[\"yes\", \"no\"]) and the answer an image faithful to the prompt would give. Reply with JSON only: "
    "a list of objects {\"question\": str, \"choices\": [str, ...], \"answer\": str}.")
DSG_INSTRUCTIONS = (
    "You write a Davidsonian scene graph of yes/no questions for a text-to-image prompt, as in DSG. List "
    "atomic yes/no questions (entities first, then their attributes and relations), each answered 'yes' "
    "for an image faithful to the prompt. A question's parents are the ids of the questions it presupposes "
    "(an attribute or relation depends on its entities). Reply with JSON only: a list of objects "
    "{\"id\": int starting at 0, \"question\": str, \"parents\": [int, ...]}.")


def parse_generated(text: str, kind: str) -> list[Question]:
    """Questions from an LLM reply holding a JSON list (extra text around it is ignored)."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise InputError(f"question generator reply has no JSON list: {text[:120]!r}")
    try:
        items = json.loads(text[start:end + 1])
    except json.JSONDecodeError as e:
        raise InputError(f"question generator reply is not valid JSON ({e.msg}): {text[start:start + 120]!r}") from None
    out: list[Question] = []
    try:
        for k, it in enumerate(items):
            if kind == "tifa":
                choices = tuple(str(c).strip() for c in it.get("choices") or ["yes", "no"])
                out.append(Question(k, str(it["question"]).strip(), choices, str(it.get("answer", "yes")).strip()))
            else:
                qid = int(it.get("id", k))
                parents = tuple(int(p) for p in it.get("parents") or [] if int(p) >= 0 and int(p) != qid)
                out.append(Question(qid, str(it["question"]).strip(), ("yes", "no"), "yes", parents))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(f"question generator reply has a malformed item ({type(e).__name__}: {e})") from None
    if not out:
        raise InputError("question generator returned no questions")
    return out


class QuestionGenerator:
    """Questions for a prompt from a chat LLM (:mod:`.llm`): one zero-shot JSON request per prompt."""

    def __init__(self, llm):
        self.llm = llm

    @property
    def config(self) -> dict:
        return {"generator": "zero-shot-json", **self.llm.config}

    def generate(self, prompt: str, kind: str) -> list[Question]:
        system = TIFA_INSTRUCTIONS if kind == "tifa" else DSG_INSTRUCTIONS
        return parse_generated(self.llm.chat(system, f"Prompt: {prompt}"), kind)


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
