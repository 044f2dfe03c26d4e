"""Judges: the models that VIEScore and LLMScore ask for a rating in words.

A *vision judge* reads one image and a text and replies in text (VIEScore's multimodal judge,
LLMScore's captioner); a *text judge* reads a text only (LLMScore's description writer and
evaluator). Each has ``config`` (the exact model, part of a metric's cache key; never an API key) and
answers many requests at once:

* :class:`EndpointJudge`: any OpenAI-compatible chat-completions endpoint (GPT-4o, a vLLM or
  Ollama server, ...). The request is one **user** message, as both originals send it: VIEScore's
  content is the text followed by the image as a base64 JPEG data URL (``mllm_tools/openai.py``),
  LLMScore's is the text alone. No system message; ``temperature`` and ``max_tokens`` are sent only
  when set (VIEScore's code sends ``max_tokens=1400`` and no temperature; LLMScore's neither).
* :class:`LocalVisionJudge`: any generative VLM of the registry (:func:`ts2viz.metrics.backbones.vqa.loader.load_vqa_model`:
  LLaVA-1.5, Qwen2-VL, InstructBLIP, ...), greedy decoding, its chat template with the image first.
* :class:`LocalTextJudge`: a local transformers causal LLM, greedy, its chat template with one user turn.
* :class:`Captioner`: an image-to-text model asked for a caption with no text prompt when it has no
  chat template (BLIP-2, as LLMScore's global descriptor does), else with ``prompt``.

:func:`load_vision_judge` / :func:`load_text_judge` build one from a metric's model and options.
"""
from __future__ import annotations

from typing import Sequence

from ...errors import InputError
from ..common.spec import Spec
from ..family import Option


def jpeg_data_url(image, quality: int = 75) -> str:
    """A PIL image as a ``data:image/jpeg;base64,...`` URL.

    The image is converted to RGB and saved at PIL's default JPEG quality 75, as VIEScore's
    ``encode_pil_image`` does.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    quality : int, default 75
        The JPEG quality.

    Returns
    -------
    str
        The data URL.

    Examples
    --------
    >>> from PIL import Image
    >>> from ts2viz.metrics.backbones.judge import jpeg_data_url
    >>> jpeg_data_url(Image.new("RGB", (8, 8))).startswith("data:image/jpeg;base64,/9j/")
    True
    """
    from .openai_client import image_data_url

    return image_data_url(image, "JPEG", quality=quality)


class EndpointJudge:
    """An OpenAI-compatible chat-completions endpoint as a vision or text judge.

    Each request is one user message, no system message; ``temperature`` and ``max_tokens`` are sent
    only when set. Requests run in up to ``workers`` threads.

    Parameters
    ----------
    url : str
        The http(s) API base (or the full ``.../chat/completions`` URL).
    model : str
        The model name at the endpoint.
    api_key : str or None, optional
        The key, given directly; None reads it from ``api_key_env``.
    api_key_env : str, default "OPENAI_API_KEY"
        The environment variable holding the key (no key: no ``Authorization`` header).
    timeout : float, default 120.0
        Seconds one request may take in all (:func:`~ts2viz.metrics.backbones.openai_client.post_chat`).
    temperature : float or None, optional
        Sampling temperature sent; None sends none (the endpoint's default).
    max_tokens : int or None, optional
        ``max_tokens`` sent; None sends none.
    workers : int, default 4
        Requests in flight at once.
    image_first : bool, default False
        :meth:`see` puts the image before the text (UnifiedReward's client) instead of after it (VIEScore's).
    jpeg_quality : int, default 75
        The JPEG quality of :meth:`see`'s images (75, PIL's default, is VIEScore's; UnifiedReward's is 95).
    extra_body : dict or None, optional
        Fields added to every request body as given (UnifiedReward's client sends ``"do_sample": false``).

    Raises
    ------
    InputError
        If ``url`` is not an http(s) URL.
    """

    def __init__(self, url: str, model: str, *, api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, temperature: float | None = None, max_tokens: int | None = None,
                 workers: int = 4, image_first: bool = False, jpeg_quality: int = 75, extra_body: dict | None = None):
        from .openai_client import endpoint_and_key

        if not url.startswith(("http://", "https://")):
            raise InputError("judge endpoint: expected the http(s) base URL of an OpenAI-compatible API")
        self.url, self.api_key = endpoint_and_key(url, api_key, api_key_env)
        self.model = model
        self.timeout = float(timeout)
        self.temperature = None if temperature is None else float(temperature)
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.workers = max(1, int(workers))
        self.image_first, self.jpeg_quality = bool(image_first), int(jpeg_quality)
        self.extra_body = dict(extra_body or {})
        #: replies are not deterministic (a sampling temperature or the endpoint's default): a retry may help
        self.samples = self.temperature != 0.0

    @property
    def config(self) -> dict:
        """The endpoint, model, temperature and ``max_tokens`` (no key)."""
        config = {"judge": "openai-chat", "url": self.url, "model": self.model, "temperature": self.temperature,
                  "max_tokens": self.max_tokens}
        if self.image_first or self.jpeg_quality != 75 or self.extra_body:  # only then: older cache keys stay valid
            config.update(image_first=self.image_first, jpeg_quality=self.jpeg_quality, extra_body=self.extra_body)
        return config

    def _post(self, content) -> str:
        from .openai_client import post_chat, reply_text

        body: dict = {"model": self.model, "messages": [{"role": "user", "content": content}]}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)
        return reply_text(post_chat(self.url, body, api_key=self.api_key, timeout=self.timeout, service="judge"),
                          "judge")

    def see(self, images: Sequence, texts: Sequence[str]) -> list[str]:
        """One reply per (image, text): content = the text, then the image as a JPEG data URL (VIEScore's order).

        With ``image_first`` the image comes before the text (UnifiedReward's order). An image larger than the
        API's high-detail size is sent at that size
        (:func:`~ts2viz.metrics.backbones.openai_client.fit_detail`, what the API would scale it to).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images.
        texts : sequence of str
            One text per image.

        Returns
        -------
        list of str
            The replies, in order (an empty string for a reply whose content is not text).

        Raises
        ------
        InputError
            For an HTTP, network or JSON error, or a reply without ``choices[0].message.content``: one line of
            the app's own (:class:`~ts2viz.metrics.backbones.openai_client.EndpointError`; the endpoint's text
            goes to the log, masked).
        """
        from .openai_client import fit_detail

        contents = []
        for im, t in zip(images, texts):
            parts = [{"type": "text", "text": t},
                     {"type": "image_url", "image_url": {"url": jpeg_data_url(fit_detail(im), self.jpeg_quality)}}]
            contents.append(parts[::-1] if self.image_first else parts)
        return self._many(contents)

    def read(self, texts: Sequence[str]) -> list[str]:
        """One reply per text (content = the text as a plain string, as LLMScore sends it).

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        list of str
            The replies, in order.

        Raises
        ------
        InputError
            For an HTTP, network or JSON error, or a reply without ``choices[0].message.content``: one line of
            the app's own (:class:`~ts2viz.metrics.backbones.openai_client.EndpointError`; the endpoint's text
            goes to the log, masked).
        """
        return self._many(list(texts))

    def _many(self, contents: list) -> list[str]:
        from .openai_client import send_all

        return send_all(self._post, contents, self.workers)


class LocalVisionJudge:
    """A generative VLM of the registry (hub id or folder) as a judge: greedy, up to ``max_new_tokens``.

    Parameters
    ----------
    spec : Spec
        The metric's spec; its model is the VLM (:func:`ts2viz.metrics.backbones.vqa.loader.load_vqa_model`).
    device : str or None, optional
        The torch device; None picks one.
    dtype : str or None, optional
        The compute dtype's name.
    batch_size : int or None, optional
        Requests per model call.
    max_new_tokens : int, default 512
        The longest reply, in tokens.

    Raises
    ------
    InputError
        If the model is not generative (BLIP-VQA answers short questions only).
    """

    samples = False  # greedy: asking again gives the same reply

    def __init__(self, spec: Spec, device: str | None = None, *, dtype: str | None = None,
                 batch_size: int | None = None, max_new_tokens: int = 512):
        from .vqa.loader import load_vqa_model

        self.vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=batch_size)
        if not self.vqa.generative:
            raise InputError(f"metric {spec.raw!r}: {spec.model!r} answers short VQA questions only (BLIP-VQA); "
                             "a judge must write a rating with its reasoning: use a generative VLM (LLaVA-1.5, "
                             "Qwen2-VL, ...) or an OpenAI-compatible endpoint (?endpoint=URL)")
        self.max_new_tokens = int(max_new_tokens)
        self.device = self.vqa.device

    @property
    def config(self) -> dict:
        """The VLM's config and ``max_new_tokens``."""
        return {"judge": "local-vlm", **self.vqa.config, "max_new_tokens": self.max_new_tokens}

    def see(self, images: Sequence, texts: Sequence[str]) -> list[str]:
        """One reply per (image, text), the VLM's greedy answer in its own prompt format.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images.
        texts : sequence of str
            One text per image.

        Returns
        -------
        list of str
            The replies, in order.
        """
        return self.vqa.answer(list(images), list(texts), max_new_tokens=self.max_new_tokens)


class LocalTextJudge:
    """A local transformers causal LLM (hub id or folder): one user turn, greedy.

    Parameters
    ----------
    model : str
        Hub id or local folder of the LLM.
    device : str or None, optional
        The torch device; None picks one.
    max_new_tokens : int, default 512
        The longest reply, in tokens.
    """

    samples = False

    def __init__(self, model: str, device: str | None = None, *, max_new_tokens: int = 512):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..common.device import resolve_device, resolve_dtype
        from ..common.pretrained import check_model_id, hf_load, model_identity

        sp = Spec(f"llm:{model}", "llm", model)
        model_id = check_model_id(sp)
        self.device = resolve_device(device)
        self.tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, model_id, sp)
        self.model = hf_load("LLM", AutoModelForCausalLM.from_pretrained, model_id, sp,
                             dtype=resolve_dtype(self.device)).to(self.device).eval()
        self.max_new_tokens = int(max_new_tokens)
        self._ident = model_identity(model_id, None, self.model.config)

    @property
    def config(self) -> dict:
        """The LLM's identity and ``max_new_tokens``."""
        return {"judge": "local-llm", **self._ident, "max_new_tokens": self.max_new_tokens}

    def read(self, texts: Sequence[str]) -> list[str]:
        """One reply per text: the text as one user turn in the chat template (the bare text without one), greedy.

        Parameters
        ----------
        texts : sequence of str
            The texts, run one at a time (no padding).

        Returns
        -------
        list of str
            The replies (special tokens dropped), in order.
        """
        import torch

        out = []
        for t in texts:
            if getattr(self.tokenizer, "chat_template", None):
                text = self.tokenizer.apply_chat_template([{"role": "user", "content": t}], add_generation_prompt=True,
                                                          tokenize=False)
            else:
                text = t
            enc = self.tokenizer(text, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                ids = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id)
            out.append(self.tokenizer.decode(ids[0, enc["input_ids"].shape[1]:], skip_special_tokens=True))
        return out


class Captioner:
    """An image-to-text model (``AutoModelForImageTextToText``) writing one caption per image, greedy.

    Without a chat template (BLIP-2) the model gets the image alone, as LLMScore's global descriptor
    calls ``Blip2ForConditionalGeneration.generate(**processor(images=image))``; with one (LLaVA,
    Qwen2-VL) it is asked ``prompt``.

    Parameters
    ----------
    model : str
        Hub id or local folder of the model.
    device : str or None, optional
        The torch device; None picks one.
    prompt : str, optional
        The text prompt (default: none without a chat template, "Describe this image." with one).
    max_new_tokens : int, default 30
        The longest caption, in tokens.
    owner : str, default "captioner"
        The metric spec named in error messages.
    """

    def __init__(self, model: str, device: str | None = None, *, prompt: str = "", max_new_tokens: int = 30,
                 owner: str = "captioner"):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        from ..common.device import resolve_device, resolve_dtype
        from ..common.pretrained import check_model_id, hf_load, model_identity

        sp = Spec(owner, "captioner", model)
        model_id = check_model_id(sp)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(self.device)
        m = hf_load("captioner", AutoModelForImageTextToText.from_pretrained, model_id, sp, dtype=self.dtype)
        self.model = m.to(self.device).eval()
        self.processor = hf_load("captioner processor", AutoProcessor.from_pretrained, model_id, sp)
        self.chat = bool(getattr(self.processor, "chat_template", None))
        self.prompt = prompt or ("Describe this image." if self.chat else "")
        self.max_new_tokens = int(max_new_tokens)
        self._ident = model_identity(model_id, None, m.config)

    @property
    def config(self) -> dict:
        """The model's identity, the prompt, whether a chat template is used, and ``max_new_tokens``."""
        return {"captioner": self._ident, "prompt": self.prompt, "chat": self.chat,
                "max_new_tokens": self.max_new_tokens}

    def caption(self, images: Sequence) -> list[str]:
        """One caption per image, greedy, images run one at a time (no caption depends on its batch).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images.

        Returns
        -------
        list of str
            The captions (the prompt's tokens removed when the output repeats them), stripped.
        """
        import torch

        from ..common.device import autocast, on_device
        from .vqa.model import image_chat_prompt

        out = []
        for im in images:  # one at a time: no padding, so a caption never depends on its batch
            if self.chat:
                enc = self.processor(images=[im], text=[image_chat_prompt(self.processor, self.prompt)],
                                     return_tensors="pt")
            elif self.prompt:
                enc = self.processor(images=[im], text=[self.prompt], return_tensors="pt")
            else:
                enc = self.processor(images=[im], return_tensors="pt")
            enc = on_device(enc, self.device, self.model.dtype)
            with torch.inference_mode(), autocast(self.device, self.dtype):
                ids = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False)
            n = enc["input_ids"].shape[1] if "input_ids" in enc and ids.shape[1] > enc["input_ids"].shape[1] \
                and bool((ids[:, :enc["input_ids"].shape[1]] == enc["input_ids"]).all()) else 0
            tok = getattr(self.processor, "tokenizer", self.processor)
            out.append(tok.decode(ids[0, n:], skip_special_tokens=True).strip())
        return out


def ask_until_read(judge, images: Sequence, texts: Sequence[str], parse, *, retries: int,
                   readable=lambda parsed: parsed is not None) -> list[tuple]:
    """Ask a vision judge, then ask again the requests whose reply cannot be read, when the judge samples.

    A greedy judge (``judge.samples`` false) would repeat itself, so it is asked once.

    Parameters
    ----------
    judge : EndpointJudge or LocalVisionJudge
        The judge.
    images : sequence of PIL.Image.Image
        The images.
    texts : sequence of str
        One request text per image.
    parse : callable
        ``parse(reply)``: the reply read.
    retries : int
        How many more times an unreadable request is asked.
    readable : callable, optional
        ``readable(parsed)``: whether a read reply is usable (default: it is not None).

    Returns
    -------
    list of tuple
        ``(reply, parsed, tries)`` per request, in order.
    """
    images, texts = list(images), list(texts)
    out = [(r, parse(r), 1) for r in judge.see(images, texts)]
    for _ in range(max(0, int(retries)) if judge.samples else 0):
        bad = [i for i, (_, p, _) in enumerate(out) if not readable(p)]
        if not bad:
            break
        for i, r in zip(bad, judge.see([images[i] for i in bad], [texts[i] for i in bad])):
            out[i] = (r, parse(r), out[i][2] + 1)
    return out


#: the options a judge metric passes to its OpenAI-compatible endpoint (:func:`endpoint_options`)
ENDPOINT_OPTIONS: tuple[str, ...] = ("api_key", "api_key_env", "timeout", "temperature", "max_tokens", "workers")


def endpoint_option_cards(max_tokens_default=None, max_tokens_doc: str = "") -> tuple:
    """The options a judge family passes to its OpenAI-compatible endpoint, as the family cards list them.

    They are :data:`ENDPOINT_OPTIONS`, and all need ``endpoint=URL``.

    Parameters
    ----------
    max_tokens_default : int or None, optional
        The default shown for ``max_tokens``.
    max_tokens_doc : str, optional
        Text appended to ``max_tokens``' doc (e.g. what the original sends).

    Returns
    -------
    tuple of Option
        One row per option of :data:`ENDPOINT_OPTIONS`.
    """
    return (
        Option("api_key", None, "The endpoint's key, given directly (never recorded in the config; prefer "
               "`api_key_env`). Needs `endpoint`."),
        Option("api_key_env", "OPENAI_API_KEY", "The environment variable holding the endpoint's key. Needs "
               "`endpoint`."),
        Option("timeout", 120.0, "Seconds one request may take in all (connecting, sending, reading). Needs `endpoint`."),
        Option("temperature", None, "Sampling temperature sent to the endpoint (default: none sent, the "
               "endpoint's own; `0` makes the judge greedy, so no retry). Needs `endpoint`."),
        Option("max_tokens", max_tokens_default, "`max_tokens` sent to the endpoint" + max_tokens_doc
               + ". Needs `endpoint`."),
        Option("workers", 4, "Requests in flight at once. Speed only. Needs `endpoint`."),
    )


def endpoint_options(options: dict) -> dict:
    """The endpoint keyword arguments among a metric's options, popped from ``options``.

    Parameters
    ----------
    options : dict
        The metric's remaining options; the keys of :data:`ENDPOINT_OPTIONS` are removed from it.

    Returns
    -------
    dict
        The removed options (keyword arguments of :class:`EndpointJudge`).

    Examples
    --------
    >>> from ts2viz.metrics.backbones.judge import endpoint_options
    >>> opts = {"timeout": 5, "other": 1}
    >>> endpoint_options(opts), opts
    ({'timeout': 5}, {'other': 1})
    """
    kw: dict = {}
    for k in ENDPOINT_OPTIONS:
        if k in options:
            kw[k] = options.pop(k)
    return kw


def _endpoint_judge(spec: Spec, endpoint: str | None, endpoint_kw: dict) -> EndpointJudge | None:
    """``spec.model`` at ``endpoint``, or None for a local judge (refusing endpoint options without an endpoint).

    Parameters
    ----------
    spec : Spec
        The metric's spec; its model is the judge model.
    endpoint : str or None
        An OpenAI-compatible base URL, or None.
    endpoint_kw : dict
        The endpoint options (:func:`endpoint_options`).

    Returns
    -------
    EndpointJudge or None
        The endpoint judge; None when there is no endpoint.

    Raises
    ------
    InputError
        If endpoint options are given without ``endpoint``.
    """
    if endpoint:
        return EndpointJudge(str(endpoint), spec.model, **endpoint_kw)
    if endpoint_kw:
        raise InputError(f"metric {spec.raw!r}: option(s) {', '.join(sorted(endpoint_kw))} need endpoint=URL")
    return None


def load_vision_judge(spec: Spec, device: str | None, *, endpoint: str | None, max_new_tokens: int,
                      endpoint_kw: dict, dtype: str | None = None, batch_size: int | None = None):
    """The vision judge of a metric.

    Parameters
    ----------
    spec : Spec
        The metric's spec; its model is the judge model.
    device : str or None
        The torch device of a local judge.
    endpoint : str or None
        An OpenAI-compatible base URL serving ``spec.model``; None loads the local VLM ``spec.model``
        (hub id or folder).
    max_new_tokens : int
        The longest reply of a local judge, in tokens.
    endpoint_kw : dict
        The endpoint options (:func:`endpoint_options`).
    dtype : str or None, optional
        The compute dtype of a local judge.
    batch_size : int or None, optional
        Requests per call of a local judge.

    Returns
    -------
    EndpointJudge or LocalVisionJudge
        The judge.

    Raises
    ------
    InputError
        If endpoint options are given without ``endpoint``, or the judge cannot be built.
    """
    judge = _endpoint_judge(spec, endpoint, endpoint_kw)
    if judge is not None:
        return judge
    return LocalVisionJudge(spec, device, dtype=dtype, batch_size=batch_size, max_new_tokens=max_new_tokens)


def load_text_judge(spec: Spec, device: str | None, *, endpoint: str | None, max_new_tokens: int, endpoint_kw: dict):
    """The text judge of a metric: ``spec.model`` at ``endpoint``, or the local causal LLM ``spec.model``.

    Parameters
    ----------
    spec : Spec
        The metric's spec; its model is the judge model.
    device : str or None
        The torch device of a local judge.
    endpoint : str or None
        An OpenAI-compatible base URL; None loads the local LLM.
    max_new_tokens : int
        The longest reply of a local judge, in tokens.
    endpoint_kw : dict
        The endpoint options (:func:`endpoint_options`).

    Returns
    -------
    EndpointJudge or LocalTextJudge
        The judge.

    Raises
    ------
    InputError
        If endpoint options are given without ``endpoint``, or the judge cannot be built.
    """
    judge = _endpoint_judge(spec, endpoint, endpoint_kw)
    if judge is not None:
        return judge
    return LocalTextJudge(spec.model, device, max_new_tokens=max_new_tokens)
