"""The upload folder of a public app: what visitors put on the server's disk, bounded and removed.

Gradio stores each upload under a folder named by the file's content hash, before any event uses it
and without knowing whose it is: two visitors sending the same bytes under the same name get the same
path. So a session that ends deletes an upload it used only when no other upload of that path is
waiting (:class:`UploadRegistry`), and

- :class:`UploadJanitor` deletes everything in the upload folder older than ``ttl_s`` (uploads used or
  never used, Gradio's leftovers), except the download folders of sessions that are still open, which
  the sessions delete themselves when they end (:class:`~ts2viz.ui.state.workspace.Workspace`);
- :class:`UploadBudget`, an ASGI middleware in front of Gradio's upload route, bounds what one client
  (an address) may upload: bytes and files per request and per ``window_s``. Past it the route
  answers 429 with one line, before the body is read.

A visitor's upload is read once, when the event that uses it runs, and kept in memory from then on.
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Callable, Iterable

#: how long an upload stays on disk (seconds; env TS2VIZ_UPLOAD_TTL_S): long enough to choose a file and
#: press the button that uses it, short enough that a filled disk empties again soon
UPLOAD_TTL_S = float(os.environ.get("TS2VIZ_UPLOAD_TTL_S") or 600)
#: what one client may upload per window (the upload TTL): bytes (env TS2VIZ_CLIENT_UPLOAD_MB) and files,
#: and files in one request
CLIENT_UPLOAD_BYTES = int(float(os.environ.get("TS2VIZ_CLIENT_UPLOAD_MB") or 200) * 1024 * 1024)
CLIENT_UPLOAD_FILES = 200
REQUEST_UPLOAD_FILES = 32
#: what all clients together may upload per window (env TS2VIZ_UPLOAD_TOTAL_MB): the upload folder's
#: bound, whatever the number of addresses
TOTAL_UPLOAD_BYTES = int(float(os.environ.get("TS2VIZ_UPLOAD_TOTAL_MB") or 2048) * 1024 * 1024)


class UploadRegistry:
    """How many times each upload path was handed out, and how many sessions that used it have ended.

    A session that ends deletes an upload only when every upload of that path has been used by a session
    that has ended (the same bytes under the same name share a path, and another visitor's may still wait
    to be submitted). Paths never used go with the janitor.

    Examples
    --------
    >>> reg = UploadRegistry()
    >>> reg.uploaded(["/tmp/gradio/abc/scores.csv", "/tmp/gradio/abc/scores.csv"])
    >>> reg.release("/tmp/gradio/abc/scores.csv"), reg.release("/tmp/gradio/abc/scores.csv")
    (False, True)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def uploaded(self, paths: Iterable[str]) -> None:
        """Count the paths the upload route handed out.

        Parameters
        ----------
        paths : iterable of str
            The paths, one per upload.
        """
        with self._lock:
            for p in paths:
                k = os.path.realpath(p)
                self._count[k] = self._count.get(k, 0) + 1

    def release(self, path: str | os.PathLike) -> bool:
        """A session that used a path has ended; whether the file may be deleted now.

        Parameters
        ----------
        path : str or os.PathLike
            The upload's path.

        Returns
        -------
        bool
            True when no other upload of the path is waiting.
        """
        k = os.path.realpath(path)
        with self._lock:
            n = self._count.get(k, 0) - 1
            if n > 0:
                self._count[k] = n
                return False
            self._count.pop(k, None)
            return True

    def forget(self, older: Iterable[str]) -> None:
        """Forget paths the janitor deleted.

        Parameters
        ----------
        older : iterable of str
            The paths.
        """
        with self._lock:
            for p in older:
                self._count.pop(os.path.realpath(p), None)


#: the upload route's record of this process (the middleware writes it, sessions read it)
REGISTRY = UploadRegistry()


class UploadJanitor:
    """Deletes what lies in the upload folder for longer than ``ttl_s`` seconds.

    Except the paths ``keep()`` returns (the open sessions' download folders). :meth:`start` runs
    :meth:`sweep` in a daemon thread.

    Parameters
    ----------
    root : str or os.PathLike
        The upload folder.
    ttl_s : float, default UPLOAD_TTL_S
        How long an entry stays (from its latest modification, a folder's or its files').
    keep : callable, default ``lambda: ()``
        ``keep()`` gives the paths never deleted.
    clock : callable, default time.time
        The clock (seconds, comparable with file times).
    """

    def __init__(self, root: str | os.PathLike, ttl_s: float = UPLOAD_TTL_S,
                 keep: Callable[[], Iterable[Path]] = lambda: (), clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.ttl_s = float(ttl_s)
        self.keep = keep
        self.clock = clock
        self._stop = threading.Event()

    @staticmethod
    def _age_mark(p: Path) -> float:
        """The latest modification time of ``p`` (a folder: of it and what is directly in it)."""
        latest = p.lstat().st_mtime
        if p.is_dir() and not p.is_symlink():
            for q in p.iterdir():
                try:
                    latest = max(latest, q.lstat().st_mtime)
                except OSError:
                    pass
        return latest

    def sweep(self) -> int:
        """Delete the old entries now.

        Returns
        -------
        int
            How many entries went.
        """
        if not self.root.is_dir():
            return 0
        keep = {os.path.realpath(p) for p in self.keep()}
        now = self.clock()
        gone = 0
        for p in list(self.root.iterdir()):
            try:
                if os.path.realpath(p) in keep or now - self._age_mark(p) <= self.ttl_s:
                    continue
                if p.is_dir() and not p.is_symlink():
                    REGISTRY.forget(str(q) for q in p.iterdir())
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
                gone += 1
            except OSError:
                continue
        return gone

    def start(self, every_s: float | None = None) -> threading.Thread:
        """Sweep in a daemon thread until :meth:`stop`.

        Parameters
        ----------
        every_s : float or None, default None
            Seconds between sweeps (``None``: a quarter of ``ttl_s``, between 1 and 60).

        Returns
        -------
        threading.Thread
            The thread, started.
        """
        every = every_s if every_s is not None else max(1.0, min(60.0, self.ttl_s / 4))

        def loop() -> None:
            while not self._stop.wait(every):
                try:
                    self.sweep()
                except Exception:  # noqa: BLE001 - the janitor must outlive a bad folder entry
                    pass

        t = threading.Thread(target=loop, daemon=True, name="ts2viz-upload-janitor")
        t.start()
        return t

    def stop(self) -> None:
        """Stop the sweeping thread (after its current wait)."""
        self._stop.set()


class UploadBudget:
    """ASGI middleware: each client's uploads to ``path_suffix`` within ``window_s`` are bounded.

    What it refuses, with one line of text before Gradio sees the request:

    - any upload once all clients together have sent ``max_total_bytes`` in the window (429);
    - a client's upload past ``max_bytes`` bytes or ``max_files`` files in the window, counted from
      ``Content-Length`` and again as the body streams (429);
    - one request with more than ``request_files`` files (``filename=`` parts; 413).

    The paths the route hands out are counted in ``registry``.

    Parameters
    ----------
    app : ASGI app
        The app behind it.
    path_suffix : str, default "/gradio_api/upload"
        The upload route.
    window_s : float, default UPLOAD_TTL_S
        The window, in seconds.
    max_bytes : int, default CLIENT_UPLOAD_BYTES
        Bytes one client may upload per window.
    max_files : int, default CLIENT_UPLOAD_FILES
        Files one client may upload per window.
    request_files : int, default REQUEST_UPLOAD_FILES
        Files in one request.
    clock : callable, default time.monotonic
        The clock, in seconds.
    registry : UploadRegistry or None, default None
        Where handed-out paths are counted (``None``: :data:`REGISTRY`).
    max_total_bytes : int, default TOTAL_UPLOAD_BYTES
        Bytes all clients together may upload per window.
    """

    def __init__(self, app, *, path_suffix: str = "/gradio_api/upload", window_s: float = UPLOAD_TTL_S,
                 max_bytes: int = CLIENT_UPLOAD_BYTES, max_files: int = CLIENT_UPLOAD_FILES,
                 request_files: int = REQUEST_UPLOAD_FILES, clock: Callable[[], float] = time.monotonic,
                 registry: UploadRegistry | None = None, max_total_bytes: int = TOTAL_UPLOAD_BYTES) -> None:
        self.max_total_bytes = max_total_bytes
        self.app = app
        self.registry = registry or REGISTRY
        self.path_suffix = path_suffix
        self.window_s = window_s
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.request_files = request_files
        self.clock = clock
        self._log: dict[str, deque] = defaultdict(deque)     # client -> (time, bytes, files)
        self._lock = threading.Lock()

    def _used(self, client: str, now: float) -> tuple[int, int]:
        q = self._log[client]
        while q and now - q[0][0] > self.window_s:
            q.popleft()
        if not q:
            self._log.pop(client, None)
            return 0, 0
        return sum(x[1] for x in q), sum(x[2] for x in q)

    async def _refuse(self, send, status: int, text: str, client: str | None = None) -> None:
        from .guard import refuse

        await refuse(send, status, text, "upload", client)

    async def __call__(self, scope, receive, send):
        """Handle one ASGI connection: refuse an upload past a bound, pass everything else to the app.

        Parameters
        ----------
        scope : dict
            The ASGI connection scope.
        receive : callable
            The ASGI receive channel.
        send : callable
            The ASGI send channel.

        Returns
        -------
        object
            What the app behind returns (``None`` after a refusal).
        """
        if scope.get("type") != "http" or scope.get("method") != "POST" \
                or not scope.get("path", "").rstrip("/").endswith(self.path_suffix):
            return await self.app(scope, receive, send)
        client = (scope.get("client") or ("?", 0))[0]
        headers = dict(scope.get("headers") or [])
        try:
            declared = int(headers.get(b"content-length", b"0"))
        except ValueError:
            declared = 0
        now = self.clock()
        with self._lock:
            used_bytes, used_files = self._used(client, now)
            total = sum(self._used(c, now)[0] for c in list(self._log))
        if total + declared > self.max_total_bytes:
            return await self._refuse(send, 429, "the app takes no more uploads for a few minutes; try again later",
                                      client)
        if used_bytes + declared > self.max_bytes or used_files >= self.max_files:
            return await self._refuse(send, 429, f"upload limit reached: at most {self.max_bytes // (1 << 20)} MB "
                                                 f"and {self.max_files} files per {self.window_s / 60:g} minutes", client)
        seen = {"bytes": 0, "files": 0, "tail": b""}
        entry = [now, declared, 0]
        with self._lock:
            self._log[client].append(entry)
        too_many = {"hit": False}

        async def counted():
            msg = await receive()
            if msg.get("type") == "http.request":
                chunk = msg.get("body", b"")
                seen["bytes"] += len(chunk)
                data = seen["tail"] + chunk
                seen["files"] += data.count(b"filename=") - seen["tail"].count(b"filename=")
                seen["tail"] = chunk[-16:]
                with self._lock:
                    entry[1] = max(declared, seen["bytes"])
                    entry[2] = seen["files"]
                    over = (seen["files"] > self.request_files or used_bytes + entry[1] > self.max_bytes
                            or used_files + seen["files"] > self.max_files)
                if over:
                    too_many["hit"] = True
                    raise UploadRefused()
            return msg

        body: list[bytes] = []
        status = {"code": 0}

        async def recorded(msg):
            # the paths handed out (a JSON list), for the registry; passed on unchanged
            if msg.get("type") == "http.response.start":
                status["code"] = msg.get("status", 0)
            elif msg.get("type") == "http.response.body" and status["code"] == 200:
                body.append(msg.get("body", b""))
                if not msg.get("more_body"):
                    try:
                        import json

                        paths = json.loads(b"".join(body))
                        if isinstance(paths, list):
                            self.registry.uploaded(str(p) for p in paths if isinstance(p, str))
                    except ValueError:
                        pass
            await send(msg)

        try:
            return await self.app(scope, counted, recorded)
        except UploadRefused:
            return await self._refuse(send, 413 if seen["files"] > self.request_files else 429,
                                      f"upload refused: at most {self.request_files} files per request and "
                                      f"{self.max_bytes // (1 << 20)} MB per {self.window_s / 60:g} minutes", client)


class UploadRefused(Exception):
    """Raised inside the upload route's body reader when a client passes its budget."""
