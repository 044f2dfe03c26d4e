"""The Hugging Face hub: hub ids, offline mode, a cached reachability probe, a field's model names.

Every part of ts2viz that talks to the hub (dataset loading, image downloads, model loading, pushing a
dataset) asks this module the same four questions:

- **Is this a hub id?** :func:`is_hub_id`: ``owner/name``, two non-empty parts, not a relative, absolute or
  home path (``one_part=True`` also takes a bare ``name``, as transformers does for its own models).
- **Is offline mode on?** :func:`offline`: ``HF_HUB_OFFLINE`` (or, when it is unset or empty,
  ``TRANSFORMERS_OFFLINE``) with one of the values huggingface_hub itself takes as true, ``1``, ``ON``,
  ``YES``, ``TRUE`` (any case); anything else (``0``, ``no``, ``off``, ``false``, empty) is online. The
  hub client reads the variable once, when it is imported (``huggingface_hub.constants.HF_HUB_OFFLINE``);
  :func:`offline` is true when that value is, or when the variable is true now.
- **Does the hub answer?** :func:`reachable`: one ``HEAD`` of the endpoint's root (:func:`probe`) that must
  answer below 500 within a timeout. A refused, reset or stalled connection, a bad URL and a 5xx (a hub
  that cannot serve files now) are all "down"; any other answer, 404 included, is "up". The answer is
  remembered per endpoint for :data:`PROBE_TTL` seconds, so that a load of several files, or a dataset and
  then its images, probes once; the hub client's own retries on a network that drops or stalls
  connections take minutes, the probe seconds.
- **Which hub id is this field name?** :func:`model_hub_id`: a card's ``model_names`` (short name -> hub
  id), looked up case-insensitively.

Examples
--------
>>> is_hub_id("saxon/T2IScoreScore"), is_hub_id("./saxon/T2IScoreScore"), is_hub_id("bert-base-uncased")
(True, False, False)
>>> model_hub_id("PickScore-v1", {"pickscore-v1": "yuvalkirstain/PickScore_v1"})
'yuvalkirstain/PickScore_v1'
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Mapping

#: seconds :func:`reachable` waits for the hub to answer before the hub is treated as down
PROBE_TIMEOUT = 3.0
#: seconds a probe's answer (up or down) holds, per endpoint
PROBE_TTL = 30.0
#: the values of ``HF_HUB_OFFLINE`` that mean offline, as huggingface_hub reads them (upper-cased)
TRUE_VALUES = frozenset({"1", "ON", "YES", "TRUE"})

_probes: dict[str, tuple[bool, float]] = {}     # endpoint -> (up, monotonic time of the probe)
_probe_lock = threading.Lock()


def is_hub_id(text: str, *, one_part: bool = False) -> bool:
    """Whether ``text`` has the form of a hub id ``owner/name``.

    Parameters
    ----------
    text : str
        A dataset, model or repository name as given.
    one_part : bool, default False
        Also accept a bare ``name`` (transformers' own models, e.g. ``bert-base-uncased``).

    Returns
    -------
    bool
        True for two non-empty parts separated by one ``/`` (or one part, with ``one_part``) that do not
        start with ``.``, ``/`` or ``~``.

    Examples
    --------
    >>> is_hub_id("xswu/HPSv2"), is_hub_id("a/b/c"), is_hub_id("~/x/y"), is_hub_id("a/")
    (True, False, False, False)
    >>> is_hub_id("bert-base-uncased"), is_hub_id("bert-base-uncased", one_part=True)
    (False, True)
    """
    parts = text.split("/")
    return (not text.startswith((".", "/", "~")) and len(parts) in ((1, 2) if one_part else (2,))
            and all(parts))


def offline() -> bool:
    """Whether offline mode is on: no request goes to the hub, only its local cache is read.

    ``HF_HUB_OFFLINE`` (``TRANSFORMERS_OFFLINE`` when it is unset or empty) is read now and as the hub
    client read it at its import; either true means offline. True values are those of huggingface_hub
    (:data:`TRUE_VALUES`, any case).

    Returns
    -------
    bool
        True if offline mode is on.

    Examples
    --------
    >>> import os
    >>> saved = os.environ.get("HF_HUB_OFFLINE")
    >>> os.environ["HF_HUB_OFFLINE"] = "yes"; offline()
    True
    >>> _ = os.environ.pop("HF_HUB_OFFLINE") if saved is None else os.environ.update(HF_HUB_OFFLINE=saved)
    """
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    if value is not None and value.strip().upper() in TRUE_VALUES:
        return True
    try:
        import huggingface_hub.constants as hub_constants
    except ImportError:  # pragma: no cover - huggingface_hub is a requirement
        return False
    return bool(hub_constants.HF_HUB_OFFLINE)


def endpoint() -> str:
    """The hub's address: ``HF_ENDPOINT`` as the hub client reads it, else the public hub.

    Returns
    -------
    str
        The URL, e.g. ``https://huggingface.co``.
    """
    try:
        import huggingface_hub.constants as hub_constants

        return hub_constants.ENDPOINT
    except ImportError:  # pragma: no cover - huggingface_hub is a requirement
        return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def probe(timeout: float = PROBE_TIMEOUT, url: str | None = None) -> bool:
    """One ``HEAD`` of the hub's root now (not cached): whether it answers below 500 within ``timeout``.

    Parameters
    ----------
    timeout : float, default PROBE_TIMEOUT
        Seconds to wait.
    url : str or None, default None
        The hub's address (scheme, host and port as given); ``None``: :func:`endpoint`.

    Returns
    -------
    bool
        True if it answered with a status below 500; False for a 5xx, a refused, reset or stalled
        connection, or a bad URL.
    """
    import urllib.error
    import urllib.request

    url = endpoint() if url is None else url
    try:
        with urllib.request.urlopen(urllib.request.Request(url.rstrip("/") + "/", method="HEAD"), timeout=timeout):
            return True
    except urllib.error.HTTPError as e:
        return e.code < 500
    except (OSError, ValueError):   # URLError, timeouts, refused or reset connections, a bad endpoint URL
        return False


def reachable(timeout: float = PROBE_TIMEOUT, url: str | None = None, *, max_age: float = PROBE_TTL) -> bool:
    """Whether the hub answers (:func:`probe`), remembered per endpoint for ``max_age`` seconds.

    Offline mode is not asked about here (:func:`offline`). One probe runs at a time; callers that arrive
    meanwhile wait for its answer.

    Parameters
    ----------
    timeout : float, default PROBE_TIMEOUT
        Seconds a new probe waits.
    url : str or None, default None
        The hub's address; ``None``: :func:`endpoint`.
    max_age : float, default PROBE_TTL
        Reuse an answer at most this old (seconds); ``0``: probe now (the answer is remembered for the
        others).

    Returns
    -------
    bool
        True if the hub answered the last probe.
    """
    url = endpoint() if url is None else url
    with _probe_lock:
        last = _probes.get(url)
        if last is not None and max_age > 0 and time.monotonic() - last[1] < max_age:
            return last[0]
        up = probe(timeout, url)
        _probes[url] = (up, time.monotonic())
        return up


def forget_probes() -> None:
    """Forget every remembered probe answer: the next :func:`reachable` probes again."""
    with _probe_lock:
        _probes.clear()


def set_timeouts(timeout: float) -> None:
    """Set the hub client's per-request timeouts to ``timeout`` seconds, unless the user set them.

    ``HF_HUB_ETAG_TIMEOUT`` and ``HF_HUB_DOWNLOAD_TIMEOUT``, which huggingface_hub reads per request.

    Parameters
    ----------
    timeout : float
        Seconds (whole seconds are written).
    """
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(timeout)))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(timeout)))


def model_hub_id(model: str, names: Mapping[str, str] | None) -> str | None:
    """The hub id a card's ``model_names`` gives ``model`` (a field's short name, case-insensitive).

    Parameters
    ----------
    model : str
        A spec's MODEL as written.
    names : mapping of str to str or None
        The card's ``model_names`` (short name -> hub id).

    Returns
    -------
    str or None
        The hub id; None when ``names`` is empty, does not know the name, or a local file or folder of
        that name exists (``~`` expanded).

    Examples
    --------
    >>> model_hub_id("BLIP2-ITM", {"blip2-itm": "Salesforce/blip2-itm-vit-g"})
    'Salesforce/blip2-itm-vit-g'
    >>> model_hub_id("other", {"blip2-itm": "Salesforce/blip2-itm-vit-g"}) is None
    True
    """
    if not names or Path(os.path.expanduser(model)).exists():
        return None
    return {k.lower(): v for k, v in names.items()}.get(model.lower())
