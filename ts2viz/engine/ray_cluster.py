"""Reaching a Ray cluster for the distributed engine: importing ray, connecting to an address or a local instance.

:func:`connect` is what ``score_dataset(..., ray=True | ADDRESS)`` calls first
(:mod:`ts2viz.engine.distributed`); an unreachable address or a missing ray package is one line of
:class:`ts2viz.errors.InputError`.
"""
from __future__ import annotations

import logging
import os
import re
from typing import Any

from ..errors import InputError

#: object store of a local instance started here: only paths and scores travel, so it can be small
LOCAL_OBJECT_STORE_BYTES = 256 * 1024 ** 2
#: how long a cluster address may take to accept a TCP connection
REACH_TIMEOUT_S = 5.0
INSTALL_HINT = "scoring on Ray needs the ray package: pip install 'ts2viz[ray]'"




def import_ray():
    """The ``ray`` module, imported on first use (importing the engine never imports ray).

    Returns
    -------
    module
        ``ray``.

    Raises
    ------
    InputError
        If ray is not installed; the message gives the install command (:data:`INSTALL_HINT`).
    """
    try:
        import ray
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return ray


def connect(address: bool | str | None = True) -> bool:
    """Connect this process to Ray.

    An existing connection of this process is used as it is. A ``HOST:PORT`` address is first probed with a
    short TCP connection (:data:`REACH_TIMEOUT_S`), since Ray itself retries an unreachable address for
    minutes.

    Parameters
    ----------
    address : bool or str or None, default True
        ``True`` or ``None`` (or ``""``): ``$RAY_ADDRESS`` if set, else a new local instance sized by Ray for
        this machine (all CPUs and GPUs), with a small object store (:data:`LOCAL_OBJECT_STORE_BYTES`), no
        dashboard and quiet logs. A string: the cluster at that address (``auto``, ``ray://HOST:10001``,
        ``HOST:6379``; ``local`` starts a local instance).

    Returns
    -------
    bool
        True if a local instance was started here (the caller shuts it down with ``ray.shutdown()``);
        False if an existing connection or cluster is used.

    Raises
    ------
    InputError
        If ray is not installed, or the cluster cannot be reached or joined (one line with Ray's reason).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    addr = address if isinstance(address, str) and address else os.environ.get("RAY_ADDRESS") or None
    if addr is None or addr == "local":
        ray.init(address="local", include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                 **quiet)
        return True
    _check_reachable(addr)
    try:
        ray.init(address=addr, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"cannot join the Ray cluster at {addr!r}: {first[:300]}") from None
    return False


def _check_reachable(addr: str) -> None:
    """Check quickly (one TCP connection) that a ``HOST:PORT`` or ``ray://HOST:PORT`` address is reachable.

    Ray itself retries an unreachable address for minutes before it gives up.
    """
    import socket

    m = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)", addr.strip())
    if m is None:
        return  # "auto" and the like: Ray resolves and reports those itself
    try:
        socket.create_connection((m.group(1), int(m.group(2))), timeout=REACH_TIMEOUT_S).close()
    except OSError as e:
        raise InputError(f"cannot reach the Ray cluster at {addr!r} ({e.strerror or type(e).__name__})") from None
