"""A local HTTP server that answers as the Hugging Face hub does for the file protocol, for tests that
drive the real ``huggingface_hub`` client (and transformers / open_clip through it) via ``HF_ENDPOINT``.

What it speaks (what ``hf_hub_download``, ``snapshot_download`` and ``repo_info`` use):

* ``HEAD`` / ``GET /datasets/<owner>/<name>/resolve/<rev>/<path>`` (dataset repos) and
  ``/<owner>/<name>/resolve/<rev>/<path>`` (model repos): ``X-Repo-Commit``, ``ETag`` (the file's git
  blob id, quoted), ``Content-Length``; ``<rev>`` is ``main`` or the repo's commit hash;
* ``GET /api/datasets/<id>/revision/<rev>`` and ``/api/models/<id>/revision/<rev>``: the repo's info
  (``sha``, ``siblings``);
* ``GET /api/{datasets,models}/<id>/tree/<rev>[/<folder>]``: the file listing (``recursive`` honoured);
* a missing file: ``404`` with ``X-Error-Code: EntryNotFound`` (and ``X-Repo-Commit``); an unknown repo:
  ``404`` with ``X-Error-Code: RepoNotFound``; a bad revision: ``RevisionNotFound``.

Every request waits :attr:`HubServer.delay` seconds first (a slow hub); :attr:`HubServer.mode` set to
``"stall"`` holds requests without answering (a hub that hangs) and ``"error"`` answers ``500``.
Requests are logged (:attr:`HubServer.log`). Listens on 127.0.0.1 only. Images are generated here
(:func:`generated_image`), never downloaded.
"""
from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Mapping
from urllib.parse import parse_qs, unquote, urlparse

Content = bytes | Callable[[], bytes]


def generated_image(name: str, size: int = 320) -> bytes:
    """A JPEG made for ``name``: a two-colour gradient with a bar, distinct per name and far from the
    app's grey placeholder tiles (so a browser test can tell a real thumbnail from a placeholder)."""
    from PIL import Image, ImageDraw

    h = hashlib.sha1(name.encode()).digest()
    a = (60 + h[0] % 180, 40 + h[1] % 120, 30 + h[2] % 200)
    b = (h[3] % 120, 80 + h[4] % 160, 60 + h[5] % 190)
    im = Image.new("RGB", (size, size), a)
    d = ImageDraw.Draw(im)
    for y in range(0, size, 8):
        t = y / size
        d.rectangle([0, y, size, y + 8], fill=tuple(round(x + (z - x) * t) for x, z in zip(a, b)))
    d.rectangle([size // 4, size // 3, 3 * size // 4, size // 2], fill=(250, 240, 20))
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=85)
    return buf.getvalue()


@dataclass
class Repo:
    """One repo: its files (bytes, or a function giving them, generated once on first use)."""

    repo_id: str
    kind: str                                  # "dataset" or "model"
    files: dict[str, Content]
    commit: str = field(default="")
    _made: dict[str, bytes] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.commit:
            self.commit = hashlib.sha1(f"{self.kind}:{self.repo_id}".encode()).hexdigest()

    def content(self, path: str) -> bytes | None:
        if path not in self.files:
            return None
        if path not in self._made:
            c = self.files[path]
            self._made[path] = c() if callable(c) else c
        return self._made[path]

    @staticmethod
    def blob_id(data: bytes) -> str:
        """The git blob id of ``data`` (what the hub gives as a small file's ETag and tree ``oid``)."""
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubServer:
    """The server; use as a context manager (``with HubServer() as hub: hub.url``)."""

    def __init__(self, *, delay: float = 0.0):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.delay = delay
        self.mode = "ok"                           # "ok", "stall" or "error"
        self.log: list[tuple[float, str, str, int]] = []   # (time, method, path, status)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # -- repos ---------------------------------------------------------------------------------------------
    def add_dataset(self, repo_id: str, files: Mapping[str, Content]) -> Repo:
        r = Repo(repo_id, "dataset", dict(files))
        self.repos[("dataset", repo_id)] = r
        return r

    def add_model(self, repo_id: str, folder: str | Path) -> Repo:
        """A model repo holding every file of a saved model folder (``save_pretrained`` output)."""
        folder = Path(folder)
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        r = Repo(repo_id, "model", files)
        self.repos[("model", repo_id)] = r
        return r

    # -- running -------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> "HubServer":
        hub = self

        class Handler(_Handler):
            server_hub = hub

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True, name="hub-server").start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def requests(self, method: str | None = None, contains: str = "") -> list[tuple[float, str, str, int]]:
        with self._lock:
            return [e for e in self.log if (method is None or e[1] == method) and contains in e[2]]

    def _record(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.log.append((time.time(), method, path, status))


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):   # a client gone mid-answer is no news
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server_hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:   # quiet: the hub keeps its own log
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    # -- answers -------------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None, *,
              head: bool = False, ctype: str = "application/json") -> None:
        # logged before answering: a client that has its answer finds its request in the log
        self.server_hub._record(self.command, self.path, status)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, repo: Repo | None = None, *, head: bool) -> None:
        h = {"X-Error-Code": code, "X-Error-Message": message}
        if repo is not None:
            h["X-Repo-Commit"] = repo.commit
        self._send(status, json.dumps({"error": message}).encode(), h, head=head)

    def _serve(self, head: bool) -> None:
        hub = self.server_hub
        if hub.delay:
            time.sleep(hub.delay)
        if hub.mode == "stall":
            hub._stop.wait(3600)      # hold the connection, never answer (until the server stops)
            return
        if hub.mode == "error":
            self._error(500, "InternalError", "internal server error", head=head)
            return
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        query = parse_qs(url.query)
        if not parts:                      # the endpoint's root (a reachability probe)
            self._send(200, b"hub", head=head, ctype="text/plain")
            return
        if parts[0] == "api" and len(parts) >= 6 and parts[1] in ("datasets", "models"):
            self._api(parts[1][:-1], "/".join(parts[2:4]), parts[4], parts[5], parts[6:], query, head=head)
            return
        if parts[0] == "datasets" and len(parts) >= 6 and parts[3] == "resolve":
            self._resolve("dataset", "/".join(parts[1:3]), parts[4], "/".join(parts[5:]), head=head)
            return
        if len(parts) >= 5 and parts[2] == "resolve":
            self._resolve("model", "/".join(parts[0:2]), parts[3], "/".join(parts[4:]), head=head)
            return
        self._error(404, "NotFound", f"no route for {url.path}", head=head)

    def _repo(self, kind: str, repo_id: str, rev: str, head: bool) -> Repo | None:
        repo = self.server_hub.repos.get((kind, repo_id))
        if repo is None:
            self._error(404, "RepoNotFound", f"Repository not found: {repo_id}", head=head)
            return None
        if rev not in ("main", repo.commit):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", repo, head=head)
            return None
        return repo

    def _resolve(self, kind: str, repo_id: str, rev: str, path: str, *, head: bool) -> None:
        repo = self._repo(kind, repo_id, rev, head)
        if repo is None:
            return
        data = repo.content(path)
        if data is None:
            self._error(404, "EntryNotFound", f"{path} does not exist on \"{rev}\"", repo, head=head)
            return
        self._send(200, data, {"X-Repo-Commit": repo.commit, "ETag": f'"{Repo.blob_id(data)}"',
                               "Accept-Ranges": "bytes"}, head=head, ctype="application/octet-stream")

    def _api(self, kind: str, repo_id: str, what: str, rev: str, rest: list[str], query, *, head: bool) -> None:
        repo = self._repo(kind, repo_id, rev, head)
        if repo is None:
            return
        if what == "revision":
            info = {"id": repo_id, "author": repo_id.split("/")[0], "sha": repo.commit, "private": False,
                    "disabled": False, "gated": False, "tags": [], "downloads": 0, "likes": 0,
                    "lastModified": "2026-01-01T00:00:00.000Z", "createdAt": "2026-01-01T00:00:00.000Z",
                    "siblings": [{"rfilename": p} for p in sorted(repo.files)]}
            if kind == "model":
                info["modelId"] = repo_id
            self._send(200, json.dumps(info).encode(), head=head)
            return
        if what == "tree":
            folder = "/".join(rest)
            recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
            entries, dirs = [], set()
            for p in sorted(repo.files):
                if folder and not p.startswith(folder + "/"):
                    continue
                sub = p[len(folder) + 1:] if folder else p
                if "/" in sub and not recursive:
                    dirs.add((folder + "/" if folder else "") + sub.split("/")[0])
                    continue
                if recursive:   # the hub lists a recursive tree's folders too
                    segs = p.split("/")[:-1]
                    dirs.update("/".join(segs[:i]) for i in range(1, len(segs) + 1))
                data = repo.content(p)
                entries.append({"type": "file", "oid": Repo.blob_id(data), "size": len(data), "path": p})
            entries += [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d}
                        for d in sorted(dirs) if not folder or d.startswith(folder + "/")]
            self._send(200, json.dumps(entries).encode(), head=head)
            return
        self._error(404, "NotFound", f"no route for api/{kind}s/{repo_id}/{what}", head=head)


def ts2_image_repo(hub: HubServer, metadata_csv: Path, repo_id: str = "saxon/T2IScoreScore") -> Repo:
    """The TS2 dataset repo: its ``metadata.csv`` and a generated JPEG for every image it names."""
    import csv

    with open(metadata_csv, newline="", encoding="utf-8") as f:
        names = [r["file_name"] for r in csv.DictReader(f)]
    files: dict[str, Content] = {"metadata.csv": Path(metadata_csv).read_bytes()}
    for n in names:
        files[n] = (lambda n=n: generated_image(n))
    return hub.add_dataset(repo_id, files)
