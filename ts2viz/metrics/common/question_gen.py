"""Question generation with a chat LLM: the generic generator, its disk cache and the writers' record.

A family whose metrics ask questions gives its record a :class:`QuestionWriter`
(:attr:`ts2viz.metrics.family.Family.question_writer`, in a ``questions`` module of the family's package): how it
asks the LLM and reads the replies. :class:`QuestionGenerator` runs a kind's writer; a reply that
yields no usable question is an :class:`InputError` that names the prompt and the stage.

Generated questions are kept on disk, one JSON file per (generator config, kind, prompt) under
``<cache>/questions/`` (default :func:`ts2viz.paths.cache_dir`), with the raw LLM replies, so a prompt
is sent to the LLM once. ``ts2viz questions`` writes them as a TS2 question CSV to inspect and edit;
a question-answering metric reads the edited file with ``?questions=PATH.csv``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ...errors import InputError
from ...qa.questions import Question


@dataclass(frozen=True)
class QuestionWriter:
    """How one kind of question set is written by a chat LLM: a family record's question writer.

    Attributes
    ----------
    kind : str
        The question kind it writes (:data:`ts2viz.qa.questions.QUESTION_KINDS`).
    method : str
        Its name in the generator config.
    prompts : tuple
        The instructions and in-context examples it sends (JSON-serialisable; their digest is in the
        generator config, so that editing them changes the cache key).
    write : callable
        ``write(prompt, ask) -> list of Question``: the questions for the text-to-image ``prompt``, asking the
        LLM through ``ask(stage, (system, user)) -> reply`` (one call per request; ``stage`` names the request
        in the cache file's replies); an unusable reply is an :class:`InputError`.
    """

    kind: str
    method: str
    prompts: tuple
    write: Callable[[str, Callable[[str, tuple[str, str]], str]], list[Question]]


def excerpt(text: str, n: int = 120) -> str:
    r"""The start of a reply or prompt for an error message: whitespace collapsed, at most ``n`` characters.

    Parameters
    ----------
    text : str
        The text.
    n : int, default 120
        The most characters kept (``...`` ends a shortened text).

    Returns
    -------
    str
        The text, shortened.

    Examples
    --------
    >>> from ts2viz.metrics.common.question_gen import excerpt
    >>> excerpt("a  red\ncat on a tree", 12)
    'a red cat...'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


class QuestionGenerator:
    """Questions for a prompt from a chat LLM (:mod:`ts2viz.metrics.backbones.llm`), cached on disk per prompt.

    Each kind's questions are written by its :class:`QuestionWriter` (a family record's, gathered by
    :func:`ts2viz.metrics.registry.question_writers`). Each cache file, one per (generator config, kind,
    prompt), holds the questions and the raw replies.

    Parameters
    ----------
    llm : object
        The chat LLM: ``chat(system, user)`` returns the reply text and ``config`` identifies it.
    writers : mapping of str to QuestionWriter
        Question kind -> its writer; every writer's method and prompts are in :attr:`config`.
    cache_dir : str or Path or None, optional
        Folder of the question cache (default ``ts2viz.paths.cache_dir()/questions``).
    use_cache : bool, default True
        False neither reads nor writes the cache.
    """

    def __init__(self, llm, writers: Mapping[str, QuestionWriter], cache_dir: str | Path | None = None,
                 use_cache: bool = True):
        from ...paths import cache_dir as default_cache

        self.llm = llm
        self.writers = dict(writers)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache() / "questions"
        self.use_cache = use_cache

    @property
    def config(self) -> dict:
        """The generator's identity: its writers' methods, a digest of their prompts and the LLM's config.

        The digest is the first 12 hex digits of the SHA-1 of every writer's prompts, in order: editing a
        prompt or an example changes the config (and the cache key).
        """
        writers = list(self.writers.values())
        digest = hashlib.sha1(json.dumps([p for w in writers for p in w.prompts]).encode()).hexdigest()[:12]
        return {"generator": "/".join(w.method for w in writers), "prompts": digest, **self.llm.config}

    def cache_path(self, prompt: str, kind: str) -> Path:
        """The cache file of ``prompt``'s questions of ``kind`` (whether or not it exists).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.
        kind : str
            The question kind (a key of :attr:`writers`).

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
        prompt, kind
            As :meth:`cache_path` takes them.

        Returns
        -------
        list of Question
            The questions, ids from 0 (with their parents, for a kind that has them).

        Raises
        ------
        InputError
            If ``kind`` has no writer, or a reply yields no usable questions (the message
            names the prompt and the stage).
        """
        if kind not in self.writers:
            raise InputError(f"question kind must be {' or '.join(self.writers)}, not {kind!r}")
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
            return self.writers[kind].write(prompt, ask)
        except InputError as e:
            raise InputError(f"question generator reply for prompt {excerpt(prompt, 60)!r}: {e.problem}") from None
