"""The one client of OpenAI-compatible chat-completions endpoints (LLMs, judges, VQAScore through an API).

Every request to such an endpoint goes through :func:`post_chat`, which carries what a public app
needs of a paid API:

* **a bounded total time per call**: ``timeout`` is the most one call may take, connecting, sending and
  reading included (a server that answers one byte at a time is cut at the deadline too);
* **cancel**: before each request a hook (:func:`request_hooks`) may stop the work (the app's cancel flag),
  and :func:`send_all` stops sending the requests not yet sent once it fires, without waiting for those
  in flight;
* **budgets before any request**: the same hooks are told what each request will cost (one request, its
  estimated tokens, its bytes: :func:`estimate_tokens`) and may refuse it before it is sent, then are told
  the tokens the endpoint reported;
* **secrets masked in every message**: keys (``Bearer ...``, the key given, ``user:pass@`` in a URL) are
  masked (:func:`mask`) in every error and log line; an error (:class:`EndpointError`) carries two
  lines: the operator's (the endpoint, the status, the start of the endpoint's error body, masked) and
  the visitor's (the app's own: which service refused, the HTTP status; no address, no text of the
  endpoint's), which a public app shows;
* **images at the size the API uses**: :func:`fit_detail` scales an image to OpenAI's documented
  high-detail size (within 2048 x 2048, then the shorter side at most 768 pixels), which the API would
  scale it to anyway, so that a 12 MB photo is never sent as it is.

The standard library only: importing it is cheap.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import math
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from ...errors import InputError

log = logging.getLogger("ts2viz.api")

#: OpenAI's documented high-detail image size: scaled to fit 2048 x 2048, then the shorter side to 768
DETAIL_MAX_SIDE, DETAIL_SHORT_SIDE = 2048, 768
#: tokens one reply is assumed to take when a request sets no ``max_tokens`` (the budget's estimate)
REPLY_TOKENS_GUESS = 500
#: bytes of a reply read at most (a chat reply is a few KB)
MAX_REPLY_BYTES = 4 * 1024 * 1024

_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',;]+")
_KEYLIKE = re.compile(r"\b(sk|pk|rk|hf)[-_][A-Za-z0-9_\-]{6,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@")


def remember_secret(secret: str | None) -> None:
    """Add a key to the ones :func:`mask` hides (every client calls it with its key).

    Parameters
    ----------
    secret : str or None
        The key; empty or ``None`` adds nothing.
    """
    if secret and len(secret) >= 4:
        with _SECRETS_LOCK:
            _SECRETS.add(secret)


def mask(text: object) -> str:
    """A text with every key in it masked.

    The keys clients were given (:func:`remember_secret`), ``Bearer`` tokens, key-like words (``sk-...``) and
    the ``user:password@`` part of URLs become ``***``.

    Parameters
    ----------
    text : object
        Any text (its ``str``).

    Returns
    -------
    str
        The text, masked.

    Examples
    --------
    >>> mask("HTTP 401: Incorrect API key provided: Bearer sk-test-123456 at http://u:p@10.0.0.5/v1")
    'HTTP 401: Incorrect API key provided: Bearer *** at http://***@10.0.0.5/v1'
    """
    out = str(text)
    with _SECRETS_LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for s in secrets:
        out = out.replace(s, "***")
    out = _BEARER.sub(r"\1***", out)
    out = _USERINFO.sub(r"\1***@", out)
    return _KEYLIKE.sub("***", out)


def split_credentials(url: str) -> tuple[str, str | None]:
    """A base URL without its ``user:password@`` part, and that part's password (or user) as a key.

    Parameters
    ----------
    url : str
        The endpoint's URL.

    Returns
    -------
    url : str
        The URL without credentials.
    key : str or None
        The password (or the user name when there is no password), ``None`` without credentials.

    Examples
    --------
    >>> split_credentials("https://me:sk-abc@api.example.org/v1")
    ('https://api.example.org/v1', 'sk-abc')
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    cred, _, host = parts.netloc.rpartition("@")
    user, _, password = cred.partition(":")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), (password or user or None)


def endpoint_and_key(url: str, api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY") -> tuple[str, str]:
    """An endpoint's base URL (credentials split off, no trailing ``/``) and the key its requests send.

    The key is ``api_key`` when given, else the URL's credentials (:func:`split_credentials`), else the
    environment variable ``api_key_env`` (empty when it is not set).

    Parameters
    ----------
    url : str
        The endpoint's URL, perhaps with ``user:password@``.
    api_key : str or None, optional
        A key given directly.
    api_key_env : str, optional
        The environment variable that holds the key.

    Returns
    -------
    url : str
        The base URL.
    key : str
        The key (may be empty).

    Examples
    --------
    >>> endpoint_and_key("https://me:sk-abc@api.example.org/v1/")
    ('https://api.example.org/v1', 'sk-abc')
    >>> endpoint_and_key("https://api.example.org/v1", api_key="sk-given")
    ('https://api.example.org/v1', 'sk-given')
    """
    import os

    base, cred = split_credentials(url)
    return base.rstrip("/"), api_key if api_key is not None else (cred or os.environ.get(api_key_env, ""))


def image_data_url(image, image_format: str = "PNG", **save) -> str:
    """A PIL image, converted to RGB, as a ``data:image/...;base64,...`` URL.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    image_format : str, optional
        PIL's format name (``PNG``, ``JPEG``); the URL's type is its lower case.
    **save
        Further arguments of PIL's ``save`` (e.g. ``quality=75``).

    Returns
    -------
    str
        The data URL.

    Examples
    --------
    >>> from PIL import Image
    >>> image_data_url(Image.new("RGB", (2, 2)))[:30]
    'data:image/png;base64,iVBORw0K'
    """
    import base64
    import io

    buf = io.BytesIO()
    image.convert("RGB").save(buf, format=image_format, **save)
    return f"data:image/{image_format.lower()};base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def chat_endpoint(url: str) -> str:
    """The ``.../chat/completions`` URL of an API base (a full one is kept).

    Parameters
    ----------
    url : str
        The API base or the full URL.

    Returns
    -------
    str
        The URL requests are posted to.

    Examples
    --------
    >>> chat_endpoint("http://127.0.0.1:8081/v1/"), chat_endpoint("http://h/v1/chat/completions")
    ('http://127.0.0.1:8081/v1/chat/completions', 'http://h/v1/chat/completions')
    """
    u = url.rstrip("/")
    return u if u.endswith("/chat/completions") else u + "/chat/completions"


class EndpointError(InputError):
    """A request the endpoint refused or did not answer.

    Its text is the operator's line (the endpoint, what happened, the start of the endpoint's error
    body), masked (:func:`mask`); :attr:`visitor` is the app's own line for a public app's visitors, with no
    text of the endpoint's and no address.

    Parameters
    ----------
    operator : str
        The operator's line (masked here).
    visitor : str
        The visitor's line.
    status : int or None, optional
        The HTTP status, when there was one.
    """

    def __init__(self, operator: str, visitor: str, status: int | None = None) -> None:
        super().__init__(mask(operator))
        self.visitor = visitor
        self.status = status


# -- hooks: the app's cancel flag and budgets ---------------------------------------------------------------

class RequestHooks:
    """What a caller is told before and after each request (the app's cancel flag and API budgets).

    Parameters
    ----------
    check : callable or None, optional
        ``check()`` raises to stop the work (a cancel); called before each request.
    charge : callable or None, optional
        ``charge(requests, tokens, bytes)`` raises to refuse a request before it is sent (a budget).
    settle : callable or None, optional
        ``settle(tokens)`` is told the difference between the tokens a request used (as the endpoint
        reported them) and the ones charged for it.
    """

    def __init__(self, check: Callable[[], None] | None = None,
                 charge: Callable[[int, int, int], None] | None = None,
                 settle: Callable[[int], None] | None = None) -> None:
        self.check, self.charge, self.settle = check, charge, settle


_HOOKS: contextvars.ContextVar[RequestHooks | None] = contextvars.ContextVar("ts2viz_api_hooks", default=None)


@contextlib.contextmanager
def request_hooks(hooks: RequestHooks | None) -> Iterator[None]:
    """Run the requests of this thread (and of :func:`send_all`'s workers) with hooks.

    Parameters
    ----------
    hooks : RequestHooks or None
        The hooks (``None``: none).

    Yields
    ------
    None
        While the hooks apply.
    """
    token = _HOOKS.set(hooks)
    try:
        yield
    finally:
        _HOOKS.reset(token)


def check_cancel() -> None:
    """Raise if the work was stopped (the hooks' ``check``); nothing without hooks.

    Raises
    ------
    InputError
        What the hook raises (the app's :class:`~ts2viz.ui.serving.jobs.Cancelled`, a time budget).
    """
    h = _HOOKS.get()
    if h is not None and h.check is not None:
        h.check()


def estimate_tokens(body: dict) -> int:
    """The tokens a request may use, estimated before it is sent (for a budget).

    Text: a token per 4 characters; an image: OpenAI's high-detail count (85 + 170 per 512-pixel tile of
    :func:`fit_detail`'s size; 1,105 when its size cannot be read); the reply: ``max_tokens``, else
    :data:`REPLY_TOKENS_GUESS`.

    Parameters
    ----------
    body : dict
        The request's JSON body.

    Returns
    -------
    int
        The estimate.

    Examples
    --------
    >>> estimate_tokens({"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 10})
    110
    """
    chars, images = 0, 0
    for m in body.get("messages") or ():
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    chars += len(str(part.get("text", "")))
                elif isinstance(part, dict) and part.get("type") == "image_url":
                    images += 1
    reply = body.get("max_tokens") or REPLY_TOKENS_GUESS
    return math.ceil(chars / 4) + images * (85 + 170 * 6) + int(reply)


# -- one request ---------------------------------------------------------------------------------------------

def _read(r, deadline: float) -> bytes:
    chunks, size = [], 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the reply took longer than the call's time limit")
        with contextlib.suppress(AttributeError, OSError):
            r.fp.raw._sock.settimeout(max(0.05, left))
        chunk = r.read1(65536) if hasattr(r, "read1") else r.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise ValueError(f"reply over {MAX_REPLY_BYTES:,} bytes")
        chunks.append(chunk)


def post_chat(url: str, body: dict, *, api_key: str = "", timeout: float = 60.0, service: str = "API",
              retries: int = 0, retry_wait: float = 2.0) -> dict:
    """Post one chat-completions request and return the endpoint's JSON reply.

    Before each try the hooks (:func:`request_hooks`) may stop the work (cancel) or refuse the request (a
    budget); a failed try is retried ``retries`` more times (waiting ``retry_wait`` seconds, doubling),
    except for a request that cannot succeed (HTTP 400, 401, 403, 404). ``timeout`` bounds the whole call,
    every try and wait included.

    Parameters
    ----------
    url : str
        The API base or the full ``.../chat/completions`` URL.
    body : dict
        The JSON body.
    api_key : str, default ""
        The key (sent as ``Authorization: Bearer``; none without one).
    timeout : float, default 60.0
        Seconds the whole call may take.
    service : str, default "API"
        What the error line calls the endpoint ("judge", "LLM", "API").
    retries : int, default 0
        More tries after a failed one.
    retry_wait : float, default 2.0
        Seconds before the first retry (doubling).

    Returns
    -------
    dict
        The parsed reply.

    Raises
    ------
    EndpointError
        The operator's line, masked (also in the ``ts2viz.api`` log), and the visitor's line of the app's
        own ("the judge's service refused the request (HTTP 401)", "did not answer within 60 s").
    InputError
        What a hook raises (a cancel, a budget).
    """
    endpoint = chat_endpoint(url)
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        remember_secret(api_key)
        headers["Authorization"] = f"Bearer {api_key}"
    deadline = time.monotonic() + float(timeout)
    hooks = _HOOKS.get()
    error: EndpointError | None = None
    for attempt in range(int(retries) + 1):
        if attempt:
            pause = min(retry_wait * 2 ** (attempt - 1), deadline - time.monotonic())
            if pause <= 0:
                break
            time.sleep(pause)
        if hooks is not None:
            if hooks.check is not None:
                hooks.check()
            if hooks.charge is not None:
                estimate = estimate_tokens(body)
                hooks.charge(1, estimate, len(data))
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            req = urllib.request.Request(endpoint, data=data, headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=max(0.05, left)) as r:
                reply = json.loads(_read(r, deadline).decode("utf-8"))
            if not isinstance(reply, dict):
                raise ValueError("the reply is not a JSON object")
        except urllib.error.HTTPError as e:
            detail = ""
            with contextlib.suppress(Exception):
                detail = " ".join(e.read(300).decode("utf-8", "replace").split())
            error = EndpointError(f"{service} endpoint {endpoint}: HTTP {e.code} {detail[:200]}",
                                  f"the {service}'s service refused the request (HTTP {e.code})", e.code)
            log.warning("%s", error)
            if e.code in (400, 401, 403, 404):
                break
            continue
        except (urllib.error.URLError, OSError, socket.timeout, TimeoutError, ValueError) as e:
            late = isinstance(e, (TimeoutError, socket.timeout)) or "timed out" in str(e)
            error = EndpointError(f"{service} endpoint {endpoint}: {type(e).__name__}: {e}"[:400],
                                  f"the {service}'s service did not answer within {timeout:g} s" if late else
                                  f"the {service}'s service could not be reached or sent an unreadable reply")
            log.warning("%s", error)
            continue
        if hooks is not None and hooks.settle is not None and hooks.charge is not None:
            used = reply.get("usage") or {}
            try:
                total = int(used.get("total_tokens") or (int(used.get("prompt_tokens") or 0)
                                                         + int(used.get("completion_tokens") or 0)))
            except (TypeError, ValueError, AttributeError):
                total = 0
            if total:
                hooks.settle(total - estimate)
        return reply
    raise error or EndpointError(f"{service} endpoint {endpoint}: no reply within {timeout:g} s",
                                 f"the {service}'s service did not answer within {timeout:g} s")


def reply_text(reply: dict, service: str = "API") -> str:
    """``choices[0].message.content`` of a reply (an empty string when it is not text).

    Parameters
    ----------
    reply : dict
        The parsed reply.
    service : str, default "API"
        What the error line calls the endpoint.

    Returns
    -------
    str
        The reply's text.

    Raises
    ------
    EndpointError
        For a reply without ``choices[0].message.content`` (its text is logged, masked).
    """
    try:
        text = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{service} endpoint: unexpected reply {str(reply)[:200]}",
                            f"the {service}'s service sent a reply without text") from None
    return text if isinstance(text, str) else ""


# -- many requests ------------------------------------------------------------------------------------------

def send_all(fn: Callable[[Any], Any], items: Sequence, workers: int = 4) -> list:
    """``[fn(x) for x in items]``, up to ``workers`` at a time, with this thread's hooks in every worker.

    Once a call raises (a cancel, a budget, an error) no further item is started and the error is raised
    at once, without waiting for the calls in flight (their threads end on their own time limit).

    Parameters
    ----------
    fn : callable
        One request.
    items : sequence
        The items.
    workers : int, default 4
        Calls at once.

    Returns
    -------
    list
        The results, in order.

    Raises
    ------
    Exception
        The first error of a call.
    """
    items = list(items)
    if len(items) <= 1 or workers <= 1:
        out = []
        for x in items:
            check_cancel()
            out.append(fn(x))
        return out
    ctx = contextvars.copy_context()
    pool = ThreadPoolExecutor(min(workers, len(items)))
    results: list = [None] * len(items)
    pending: dict = {}
    nxt = 0
    try:
        while nxt < len(items) or pending:
            while nxt < len(items) and len(pending) < workers:
                check_cancel()
                pending[pool.submit(ctx.copy().run, fn, items[nxt])] = nxt
                nxt += 1
            done, _ = wait(list(pending), timeout=0.25, return_when=FIRST_COMPLETED)
            for f in done:
                results[pending.pop(f)] = f.result()
            if not done:
                check_cancel()
        return results
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


# -- images -------------------------------------------------------------------------------------------------

def detail_size(width: int, height: int) -> tuple[int, int]:
    """The size OpenAI's high-detail mode scales an image to: within 2048 x 2048, then the shorter side 768.

    Never larger than the image.

    Parameters
    ----------
    width, height : int
        The image's size.

    Returns
    -------
    tuple of int
        ``(width, height)`` to send.

    Examples
    --------
    >>> detail_size(4000, 3000), detail_size(512, 512)
    ((1024, 768), (512, 512))
    """
    s = min(1.0, DETAIL_MAX_SIDE / max(width, height, 1))
    w, h = width * s, height * s
    s2 = min(1.0, DETAIL_SHORT_SIDE / max(1.0, min(w, h)))
    return max(1, round(w * s2)), max(1, round(h * s2))


def fit_detail(image):
    """An image scaled to :func:`detail_size` (the image itself when it is not larger).

    Parameters
    ----------
    image : PIL.Image.Image
        The image.

    Returns
    -------
    PIL.Image.Image
        The image to encode and send.
    """
    size = detail_size(*image.size)
    if size == tuple(image.size):
        return image
    from PIL import Image

    return image.resize(size, Image.Resampling.BICUBIC)
