"""An on-disk cache of LLM replies, so that each prompt is sent to the LLM once.

Question generation (Gecko's coverage labels and QA pairs, T2I-FineEval's decomposition) is the slow,
paid and not quite deterministic part of a QA metric. :func:`cached_reply` keeps the raw reply of every
successful request in ``<cache_dir>/llm/<sha1>.json``, keyed by the LLM's ``config`` (endpoint and model
or local model fingerprint), the system prompt and the user message: changing the LLM or any word of a
few-shot prompt asks again. A reply is stored only after it parsed, so a malformed reply is retried
next time instead of being kept. Files are written atomically (:func:`ts2viz.atomic.atomic_path`).
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from pathlib import Path
from typing import Callable, TypeVar

from ...atomic import atomic_path
from ...errors import InputError
from ...paths import cache_dir

T = TypeVar("T")


def reply_key(llm_config: dict, system: str, user: str) -> str:
    """The cache key of one request: the SHA-1 of the LLM's config, the system prompt and the user message.

    Parameters
    ----------
    llm_config : dict
        The LLM's ``config`` (endpoint and model, or a local model's fingerprint).
    system : str
        The system prompt.
    user : str
        The user message.

    Returns
    -------
    str
        40 hex digits, the same for the same three inputs (the config is serialised with sorted keys).

    Examples
    --------
    >>> from ts2viz.metrics.common.llmcache import reply_key
    >>> reply_key({"b": 1, "a": 2}, "s", "u") == reply_key({"a": 2, "b": 1}, "s", "u")
    True
    >>> reply_key({}, "s", "u") == reply_key({}, "s", "v")
    False
    """
    blob = json.dumps({"llm": llm_config, "system": system, "user": user}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()


_WRITES: contextvars.ContextVar[bool] = contextvars.ContextVar("ts2viz_reply_cache", default=True)


@contextlib.contextmanager
def no_reply_cache():
    """Neither read nor write the reply cache in this context (a public app's visitors' jobs).

    A visitor's prompts and the replies to them then never reach the disk, nor does a visitor read what
    another's requests cached.

    Yields
    ------
    None
        While the cache is off.
    """
    token = _WRITES.set(False)
    try:
        yield
    finally:
        _WRITES.reset(token)


def reply_cache_on() -> bool:
    """Whether the reply cache may be used here (:func:`no_reply_cache` turns it off).

    Returns
    -------
    bool
        True unless in a :func:`no_reply_cache` context.
    """
    return _WRITES.get()


def llm_cache_dir() -> Path:
    """The folder of the LLM reply cache.

    Returns
    -------
    Path
        ``<ts2viz cache>/llm`` (``$TS2VIZ_CACHE/llm`` or ``~/.cache/ts2viz/llm``); not created here.
    """
    return cache_dir() / "llm"


def cached_reply(llm, system: str, user: str, parse: Callable[[str], T], *, use_cache: bool = True) -> T:
    """``parse(llm.chat(system, user))``, reading and filling the on-disk reply cache.

    A cached reply that no longer parses (the parser changed) is asked for again. Errors of the LLM
    or of ``parse`` propagate and store nothing. A cache folder that cannot be written is ignored.

    Parameters
    ----------
    llm : object
        The LLM: its ``config`` dict keys the cache and ``chat(system, user)`` returns its reply text.
    system : str
        The system prompt.
    user : str
        The user message.
    parse : callable
        Turns the reply text into the result; it raises (e.g. :class:`InputError`) on a malformed reply.
    use_cache : bool, default True
        Read and write the cache (unless :func:`no_reply_cache` is in force); False always asks the LLM and
        stores nothing.

    Returns
    -------
    object
        ``parse(reply)`` of the cached or the new reply.
    """
    use_cache = use_cache and reply_cache_on()
    path = llm_cache_dir() / f"{reply_key(llm.config, system, user)}.json"
    if use_cache and path.is_file():
        try:
            reply = json.loads(path.read_text(encoding="utf-8"))["reply"]
            return parse(reply)
        except (OSError, ValueError, KeyError, TypeError, InputError):
            pass  # unreadable or no longer parseable: ask again
    reply = llm.chat(system, user)
    out = parse(reply)
    if use_cache:
        try:
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps({"llm": llm.config, "user": user, "reply": reply}, default=str),
                               encoding="utf-8")
        except OSError:
            pass  # a read-only cache must not stop scoring
    return out
