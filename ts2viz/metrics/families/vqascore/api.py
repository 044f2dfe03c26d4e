"""VQAScore through an API's log-probabilities, as t2v_metrics 3.0 scores GPT-4o (``gpt4v_model.py``).

One chat-completions request per (image, prompt) to an OpenAI-compatible endpoint: one user message whose
content is the question, then the image as a data URL of the image file's own bytes
(``data:image/<file extension>;base64,...``; a PNG of the decoded image where the file cannot be read
again, or where the image is larger than the API's high-detail size, which it is scaled to: the one
difference, :func:`data_url`), with ``logprobs=true`` and ``top_logprobs=2``. The score is read from the first answer token's top
log-probabilities in order, as t2v_metrics reads them: for the answer "yes" (any case), the first entry
that is ``Yes``/``yes`` gives ``exp(logprob)`` and the first that is ``No``/``no`` gives
``1 - exp(logprob)``; for another answer the entry equal to it gives ``exp(logprob)``; none of them: 0.

The engineering around it is the judge families': replies are cached on disk (keyed by endpoint model,
question, image bytes and ``top_logprobs``; the endpoint URL and the key are not part of the key), a
failed request is retried (``retries`` more times, waiting ``retry_wait`` seconds, doubling; every try within
``timeout`` seconds in all), requests run
``workers`` at a time, and :attr:`APIVQAScore.usage` counts requests, cache hits and the tokens the
endpoint reported. Where t2v_metrics returns 0.0 for a request that failed twice, ts2viz gives NaN (with
the error in the image's details): an unanswered request is never a score.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import threading
import time
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...common.base import Metric
from ...common.spec import Spec
from .recipes import fill

#: the image types t2v_metrics sends (its get_image_type): the file's extension is the data URL's type
IMAGE_TYPES = ("png", "jpeg", "jpg", "gif", "bmp", "webp")


def data_url(image, file_name: str | None = None) -> str:
    """The data URL an API request sends for an image, as t2v_metrics' ``encode_image`` builds it.

    ``data:image/<type>;base64,...`` of the image file's own bytes, or of a PNG of the decoded image when there
    is no readable file of a type t2v_metrics sends (:data:`IMAGE_TYPES`). An image larger than the API's
    high-detail size (:func:`ts2viz.metrics.backbones.openai_client.detail_size`: within 2048 x 2048, the
    shorter side at most 768) is sent as a PNG at that size, the size the API scales it to (t2v_metrics sends
    the file as it is: a documented difference that bounds what a request sends).

    Parameters
    ----------
    image : PIL.Image.Image
        The decoded image.
    file_name : str, optional
        Its file, whose bytes are sent as they are.

    Returns
    -------
    str
        The data URL.

    Examples
    --------
    >>> from PIL import Image
    >>> data_url(Image.new("RGB", (2, 2)))[:30]
    'data:image/png;base64,iVBORw0K'
    """
    from ...backbones.openai_client import fit_detail, image_data_url

    fitted = fit_detail(image)
    if file_name and fitted is image:
        p = Path(file_name)
        kind = p.suffix.lower().lstrip(".")
        if kind in IMAGE_TYPES and p.is_file():
            return f"data:image/{kind};base64,{base64.b64encode(p.read_bytes()).decode('ascii')}"
    return image_data_url(fitted, "PNG")


def read_top_logprobs(top: Sequence[tuple[str, float]], answer: str) -> float:
    """The answer's probability read from the first token's top log-probabilities, as t2v_metrics reads it.

    For "yes" (any case): ``exp(lp)`` of the first entry that is "Yes"/"yes", or ``1 - exp(lp)`` of the first
    that is "No"/"no", whichever comes first; for another answer, ``exp(lp)`` of the entry equal to it.

    Parameters
    ----------
    top : sequence of (str, float)
        ``[(token, logprob), ...]`` of the first answer token, most likely first.
    answer : str
        The answer scored.

    Returns
    -------
    float
        The probability; 0.0 when no entry is the answer (or, for "yes", its opposite).

    Examples
    --------
    >>> import math
    >>> read_top_logprobs([("No", math.log(0.75)), ("Yes", math.log(0.2))], "Yes")
    0.25
    >>> read_top_logprobs([("Maybe", -0.1)], "Yes")
    0.0
    """
    yes = answer.lower() == "yes"
    for token, lp in top:
        if yes:
            if token in ("Yes", "yes"):
                return math.exp(lp)
            if token in ("No", "no"):
                return 1.0 - math.exp(lp)
        elif token == answer:
            return math.exp(lp)
    return 0.0


class APIVQAScore(Metric):
    """VQAScore of an endpoint's model from its top log-probabilities (module docstring)."""

    name = "vqascore"
    has_details = True
    #: no model is loaded here: the endpoint computes (no compute dtype to record)
    loads_model = False

    def __init__(self, spec: Spec, endpoint: str, model: str, question_template: str, answer_template: str, *,
                 top_logprobs: int = 2, api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60.0, retries: int = 2, retry_wait: float = 2.0, workers: int = 4,
                 cache: bool = True, batch_size: int | None = None, recipe: str = "gpt-4o"):
        if not str(endpoint).startswith(("http://", "https://")):
            raise InputError(f"metric {spec.family}:{spec.model}: endpoint= is not the http(s) base URL of an "
                             "OpenAI-compatible API")
        fill(question_template, "x"), fill(answer_template, "x")
        from ...backbones.openai_client import endpoint_and_key

        self.url, self.api_key = endpoint_and_key(str(endpoint), api_key, api_key_env)
        self.model_name = model
        self.question_template, self.answer_template = question_template, answer_template
        self.top_logprobs = int(top_logprobs)
        if not 1 <= self.top_logprobs <= 20:
            raise InputError(f"metric {spec.raw!r}: top_logprobs must be 1 to 20, not {top_logprobs}")
        self.timeout, self.retries, self.retry_wait = float(timeout), int(retries), float(retry_wait)
        self.workers = max(1, int(workers))
        self.cache = bool(cache)
        config = {"family": "vqascore", "recipe": recipe, "api": "openai-chat top_logprobs", "url": self.url,
                  "model": model, "question_template": question_template, "answer_template": answer_template,
                  "top_logprobs": self.top_logprobs,
                  "answer": "t2v_metrics' reading of the first token's top log-probabilities"}
        super().__init__(spec, config, "cpu", batch_size or 16)
        self._lock = threading.Lock()
        #: requests sent, pairs answered and failed, cache hits, tokens reported (since the metric was built)
        self.usage = {"requests": 0, "answered": 0, "failed": 0, "cached": 0, "prompt_tokens": 0,
                      "completion_tokens": 0}

    def prepare(self, image, file_name: str | None = None) -> str:
        """The image as the data URL a request sends (:func:`data_url`).

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str, optional
            Its file, whose bytes are sent as they are.

        Returns
        -------
        str
            The data URL.
        """
        return data_url(image, file_name)

    # -- one request ------------------------------------------------------------------------------
    def _cache_path(self, question: str, url: str) -> Path:
        from ...common.llmcache import llm_cache_dir

        blob = json.dumps({"api": "vqascore-top-logprobs", "model": self.model_name, "question": question,
                           "image": hashlib.sha256(url.encode()).hexdigest(), "top_logprobs": self.top_logprobs},
                          sort_keys=True)
        return llm_cache_dir() / f"{hashlib.sha1(blob.encode()).hexdigest()}.json"

    def _post(self, question: str, url: str, timeout: float) -> dict:
        from ...backbones.openai_client import post_chat

        body = {"model": self.model_name, "messages": [{"role": "user", "content": [
            {"type": "text", "text": question}, {"type": "image_url", "image_url": {"url": url}}]}],
            "logprobs": True, "top_logprobs": self.top_logprobs}
        with self._lock:
            self.usage["requests"] += 1
        return post_chat(self.url, body, api_key=self.api_key, timeout=timeout, service="API")

    def _top(self, question: str, url: str) -> tuple[list | None, bool, str]:
        """``(top log-probabilities or None, from the cache, error)`` for one request (all tries within ``timeout``)."""
        from ...backbones.openai_client import EndpointError

        from ...common.llmcache import reply_cache_on

        path = self._cache_path(question, url)
        cache = self.cache and reply_cache_on()
        if cache and path.is_file():
            try:
                return [tuple(t) for t in json.loads(path.read_text(encoding="utf-8"))["top_logprobs"]], True, ""
            except (OSError, ValueError, KeyError, TypeError):
                pass
        error = ""
        deadline = time.monotonic() + self.timeout
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(max(0.0, min(self.retry_wait * 2 ** (attempt - 1), deadline - time.monotonic())))
            left = deadline - time.monotonic()
            if left <= 0:
                error = error or f"no reply within {self.timeout:g} s"
                break
            try:
                reply = self._post(question, url, left)
                entries = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
                top = [(str(e["token"]), float(e["logprob"])) for e in entries]
            except EndpointError as e:
                error = e.visitor
                if e.status in (400, 401, 403, 404):  # a request that cannot succeed: do not ask again
                    break
                continue
            except (ValueError, KeyError, IndexError, TypeError) as e:
                error = f"unreadable reply ({type(e).__name__})"
                continue
            usage = reply.get("usage") or {}
            with self._lock:
                self.usage["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                self.usage["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            if cache:
                from ....atomic import atomic_path

                try:
                    with atomic_path(path) as tmp:
                        tmp.write_text(json.dumps({"model": self.model_name, "question": question,
                                                   "top_logprobs": top, "usage": usage}), encoding="utf-8")
                except OSError:
                    pass  # a read-only cache must not stop scoring
            return top, False, ""
        return None, False, error or "no reply"

    # -- a batch ----------------------------------------------------------------------------------
    def score_prepared(self, items: Sequence[str], prompts: Sequence[str]) -> np.ndarray:
        """Scores of a batch: one request per pair not in the cache, sent concurrently, retried on failure.

        Parameters
        ----------
        items : sequence of str
            The images' data URLs (:meth:`prepare`).
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 answer probabilities; NaN for a pair whose request failed after every retry (never a
            made-up score). :attr:`usage` counts the requests and tokens.
        """
        questions = [fill(self.question_template, p) for p in prompts]
        answers = [fill(self.answer_template, p) for p in prompts]
        jobs = list(zip(questions, items))
        from ...backbones.openai_client import send_all

        results = send_all(lambda j: self._top(*j), jobs, self.workers)
        out = np.full(len(jobs), np.nan)
        details = []
        failed = 0
        for i, ((top, cached, error), q, a) in enumerate(zip(results, questions, answers)):
            if top is None:
                failed += 1
                details.append({"question": q, "answer": a, "error": error})
                continue
            out[i] = read_top_logprobs(top, a)
            details.append({"question": q, "answer": a, "answer_likelihood": float(out[i]),
                            "top_logprobs": [list(t) for t in top], "cached": cached})
        with self._lock:
            self.usage["answered"] += len(jobs) - failed
            self.usage["failed"] += failed
            self.usage["cached"] += sum(1 for r in results if r[1])
        if failed:
            warnings.warn(f"{self.spec}: {failed} of {len(jobs)} requests failed after {self.retries + 1} tries "
                          f"({next(d['error'] for d in details if 'error' in d)}); their scores are NaN",
                          stacklevel=2)
        self.last_details = details
        return out
