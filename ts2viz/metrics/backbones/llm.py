"""Chat LLM clients shared by every question-generating metric (TIFA, DSG, Gecko, T2I-FineEval).

A client has one method, ``chat(system, user) -> str`` (greedy / temperature 0), and a ``config`` dict
that names it exactly (part of a metric's cache key; never the API key). Two kinds:

* :class:`OpenAIChat`: any OpenAI-compatible chat-completions endpoint (``POST {url}/chat/completions``);
* :class:`LocalChat`: a local transformers causal LLM (hub id or model folder).

:func:`load_llm` builds one from the ``generator=`` option of a metric spec: an ``http(s)://`` URL or
``hf:MODEL``.
"""
from __future__ import annotations

from ...errors import InputError


class ChatLLM:
    """Interface: ``chat(system, user)`` returns the model's reply text; ``config`` identifies the model."""

    @property
    def config(self) -> dict:
        """What identifies the model (part of a metric's cache key; never an API key)."""
        raise NotImplementedError

    def chat(self, system: str, user: str) -> str:
        """The model's reply to one request (greedy, temperature 0).

        Parameters
        ----------
        system : str
            The system prompt.
        user : str
            The user message.

        Returns
        -------
        str
            The reply text.

        Raises
        ------
        NotImplementedError
            In a subclass that does not implement ``_reply``.
        ts2viz.metrics.backbones.openai_client.EndpointError
            From :class:`OpenAIChat`: for an HTTP, network or JSON error, or a reply without
            ``choices[0].message.content``: one line of the app's own (the endpoint's text goes to the log,
            masked; :func:`~ts2viz.metrics.backbones.openai_client.post_chat`).
        """
        return self._reply([{"role": "system", "content": system}, {"role": "user", "content": user}])

    def _reply(self, messages: list[dict]) -> str:
        """The reply to ``[system message, user message]`` (chat-completions form): the subclasses' own."""
        raise NotImplementedError


class OpenAIChat(ChatLLM):
    """An OpenAI-compatible chat-completions endpoint (``POST {url}/chat/completions``, temperature 0).

    The key is never part of :attr:`config`.

    Parameters
    ----------
    url : str
        The API base (e.g. ``https://api.openai.com/v1``), or the full ``.../chat/completions`` URL.
    model : str, default "gpt-4o"
        The chat model name.
    api_key : str or None, optional
        The key, given directly; None reads it from ``api_key_env``.
    api_key_env : str, default "OPENAI_API_KEY"
        The environment variable holding the key (no key: no ``Authorization`` header).
    timeout : float, default 60.0
        Seconds one request may take in all (:func:`~ts2viz.metrics.backbones.openai_client.post_chat`).
    """

    def __init__(self, url: str, model: str = "gpt-4o", api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0):
        from .openai_client import endpoint_and_key

        self.url, self.api_key = endpoint_and_key(url, api_key, api_key_env)
        self.model = model
        self.timeout = timeout

    @property
    def config(self) -> dict:
        """``{"llm": "openai-chat", "url", "model"}`` (no key)."""
        return {"llm": "openai-chat", "url": self.url, "model": self.model}

    def _reply(self, messages: list[dict]) -> str:
        from .openai_client import post_chat, reply_text

        body = {"model": self.model, "temperature": 0, "messages": messages}
        return reply_text(post_chat(self.url, body, api_key=self.api_key, timeout=self.timeout, service="LLM"),
                          "LLM")


class LocalChat(ChatLLM):
    r"""A local transformers causal LLM (hub id or folder): greedy decoding, its chat template if it has one.

    Without a chat template the prompt is ``"{system}\n\n{user}\n"``.

    Parameters
    ----------
    model : str
        Hub id or local folder of the LLM.
    device : str or None, optional
        The torch device; None picks one.
    max_new_tokens : int, default 512
        The longest reply, in tokens.
    """

    def __init__(self, model: str, device: str | None = None, max_new_tokens: int = 512):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..common.device import resolve_device, resolve_dtype
        from ..common.pretrained import hf_load, model_identity
        from ..common.spec import Spec

        sp = Spec(f"llm:{model}", "llm", model)
        self.device = resolve_device(device)
        self.tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, model, sp)
        self.model = hf_load("LLM", AutoModelForCausalLM.from_pretrained, model, sp,
                             dtype=resolve_dtype(self.device)).to(self.device).eval()
        self.max_new_tokens = max_new_tokens
        self._ident = model_identity(model, None, self.model.config)

    @property
    def config(self) -> dict:
        """``{"llm": "local", ...}`` with the model's identity (name, revision or fingerprint)."""
        return {"llm": "local", **self._ident}

    def _reply(self, messages: list[dict]) -> str:
        r"""Greedy decoding of the chat template's prompt (else ``"{system}\n\n{user}\n"``), special tokens dropped."""
        import torch

        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        else:
            system, user = (m["content"] for m in messages)
            text = f"{system}\n\n{user}\n"
        enc = self.tokenizer(text, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            ids = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id)
        return self.tokenizer.decode(ids[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)


def load_llm(source: str, *, model: str | None = None, api_key: str | None = None,
             api_key_env: str = "OPENAI_API_KEY", device: str | None = None, timeout: float = 60.0) -> ChatLLM:
    """A chat client from a metric's ``generator=`` option.

    Parameters
    ----------
    source : str
        ``hf:MODEL`` (a local transformers LLM: hub id or folder) or the ``http(s)://`` base URL of an
        OpenAI-compatible API.
    model : str or None, optional
        The chat model name at an endpoint (default ``gpt-4o``); ignored for ``hf:``.
    api_key : str or None, optional
        An endpoint's key, given directly.
    api_key_env : str, default "OPENAI_API_KEY"
        The environment variable holding an endpoint's key.
    device : str or None, optional
        The torch device of a local LLM.
    timeout : float, default 60.0
        Seconds an endpoint may take to reply.

    Returns
    -------
    ChatLLM
        A :class:`LocalChat` or an :class:`OpenAIChat`.

    Raises
    ------
    InputError
        If ``source`` is neither ``hf:MODEL`` nor an http(s) URL, or a local LLM cannot be loaded.

    Examples
    --------
    >>> from ts2viz.metrics.backbones.llm import load_llm
    >>> load_llm("https://api.example.org/v1/", model="m1").config
    {'llm': 'openai-chat', 'url': 'https://api.example.org/v1', 'model': 'm1'}
    """
    if source.startswith("hf:"):
        return LocalChat(source[3:], device=device)
    if source.startswith(("http://", "https://")):
        return OpenAIChat(source, model or "gpt-4o", api_key, api_key_env, timeout)
    raise InputError(f"generator {source!r}: expected an http(s) URL of an OpenAI-compatible API or hf:MODEL")
