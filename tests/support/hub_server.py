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

And the upload protocol of ``HfApi.create_repo`` / ``create_commit`` / ``upload_folder``
(huggingface_hub 2.x; see its ``hf_api.py`` and ``_commit_api.py``):

* ``POST /api/repos/create`` (JSON ``name``, ``organization``, ``type``, ``visibility``): ``200`` with
  the repo's ``url``, or ``409`` when it exists (the client's ``exist_ok`` accepts that);
* ``POST /api/validate-yaml`` (a README's metadata): ``400`` with ``errors`` when its YAML front matter
  does not parse or is not a mapping, else ``200``;
* ``POST /api/{datasets,models}/<id>/preupload/<rev>``: every file ``uploadMode: "regular"`` (so the
  client sends contents inline and needs no LFS / Xet storage), with the ``oid`` of a file already there;
* ``POST /api/{datasets,models}/<id>/commit/<rev>``: the ndjson commit (a ``header`` line, then
  ``file`` lines with base64 ``content``, ``deletedFile`` / ``deletedFolder`` lines); a new commit id.

With :attr:`HubServer.token` set, the write endpoints answer ``401`` unless the request carries
``Authorization: Bearer <token>``. Pushed repos are served back by the download routes above.

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
    private: bool = False
    commits: list[str] = field(default_factory=list)   # summaries of the commits pushed to it
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

    def __init__(self, *, delay: float = 0.0, token: str | None = None):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.token = token                         # required by the write endpoints when set
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

    def do_POST(self) -> None:
        hub = self.server_hub
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if hub.delay:
            time.sleep(hub.delay)
        if hub.mode == "stall":
            hub._stop.wait(3600)
            return
        if hub.mode == "error":
            self._error(500, "InternalError", "internal server error", head=False)
            return
        parts = [unquote(p) for p in urlparse(self.path).path.split("/") if p]
        if parts == ["api", "validate-yaml"]:
            self._validate_yaml(json.loads(body or b"{}"))
            return
        if hub.token is not None and self.headers.get("Authorization") != f"Bearer {hub.token}":
            self._error(401, "Unauthorized", "Invalid credentials in Authorization header", head=False)
            return
        if parts == ["api", "repos", "create"]:
            self._create_repo(json.loads(body or b"{}"))
            return
        if parts[:1] == ["api"] and len(parts) >= 6 and parts[1] in ("datasets", "models") \
                and parts[4] in ("preupload", "commit"):
            repo = self._repo(parts[1][:-1], "/".join(parts[2:4]), parts[5], head=False)
            if repo is None:
                return
            if parts[4] == "preupload":
                self._preupload(repo, json.loads(body or b"{}"))
            else:
                self._commit(repo, body)
            return
        self._error(404, "NotFound", f"no route for POST {self.path}", head=False)

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

    # -- uploads ---------------------------------------------------------------------------------------------
    def _validate_yaml(self, payload: dict) -> None:
        import yaml

        text = payload.get("content", "")
        errors = []
        if text.startswith("---"):
            end = text.find("\n---", 3)
            try:
                meta = yaml.safe_load(text[3:end if end >= 0 else None]) if end >= 0 else None
                if end < 0 or not isinstance(meta, dict):
                    errors.append({"message": "metadata must be a YAML mapping between --- lines"})
            except yaml.YAMLError as e:
                errors.append({"message": f"invalid YAML: {e}"})
        self._send(400 if errors else 200, json.dumps({"errors": errors, "warnings": []}).encode(), head=False)

    def _create_repo(self, payload: dict) -> None:
        hub = self.server_hub
        kind = payload.get("type") or "model"
        repo_id = "/".join(x for x in (payload.get("organization"), payload.get("name")) if x)
        url = f"{hub.url}/{'datasets/' if kind == 'dataset' else ''}{repo_id}"
        if (kind, repo_id) in hub.repos:    # as the hub: the conflict names the existing repo's url
            self.server_hub._record(self.command, self.path, 409)
            body = json.dumps({"error": "You already created this repo", "url": url}).encode()
            self.send_response(409)
            for k, v in (("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                         ("X-Error-Message", "You already created this repo")):
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            return
        r = Repo(repo_id, kind, {}, private=payload.get("visibility") == "private" or bool(payload.get("private")))
        hub.repos[(kind, repo_id)] = r
        self._send(200, json.dumps({"url": url, "name": repo_id}).encode(), head=False)

    def _preupload(self, repo: Repo, payload: dict) -> None:
        files = []
        for f in payload.get("files", []):
            have = repo.content(f["path"])
            files.append({"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                          "oid": None if have is None else Repo.blob_id(have)})
        self._send(200, json.dumps({"files": files, "commitOid": repo.commit}).encode(), head=False)

    def _commit(self, repo: Repo, body: bytes) -> None:
        import base64

        header, adds, deletes = None, {}, []
        for line in body.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item.get("key"), item.get("value", {})
            if key == "header":
                header = value
            elif key == "file":
                if value.get("encoding") != "base64":
                    self._error(400, "BadRequest", "file content must be base64", head=False)
                    return
                adds[value["path"]] = base64.b64decode(value["content"])
            elif key in ("deletedFile", "deletedFolder"):
                deletes.append((key, value["path"]))
            else:           # lfsFile: this hub never asked for LFS
                self._error(400, "BadRequest", f"unexpected commit operation {key!r}", head=False)
                return
        if header is None or not header.get("summary"):
            self._error(400, "BadRequest", "the commit has no header with a summary", head=False)
            return
        parent = header.get("parentCommit")
        if parent and parent != repo.commit:
            self._error(412, "PreconditionFailed", "parentCommit is not the head of main", head=False)
            return
        for key, path in deletes:
            for p in list(repo.files):
                if p == path or (key == "deletedFolder" and p.startswith(path.rstrip("/") + "/")):
                    repo.files.pop(p)
                    repo._made.pop(p, None)
        for path, data in adds.items():
            repo.files[path] = data
            repo._made.pop(path, None)
        repo.commit = hashlib.sha1((repo.commit + json.dumps(header, sort_keys=True)
                                    + "".join(f"{p}:{Repo.blob_id(d)}" for p, d in sorted(adds.items()))).encode()).hexdigest()
        repo.commits.append(header["summary"])
        url = f"{self.server_hub.url}/{'datasets/' if repo.kind == 'dataset' else ''}{repo.repo_id}/commit/{repo.commit}"
        self._send(200, json.dumps({"success": True, "commitOid": repo.commit, "commitUrl": url}).encode(), head=False)

    def _api(self, kind: str, repo_id: str, what: str, rev: str, rest: list[str], query, *, head: bool) -> None:
        repo = self._repo(kind, repo_id, rev, head)
        if repo is None:
            return
        if what == "revision":
            info = {"id": repo_id, "author": repo_id.split("/")[0], "sha": repo.commit, "private": repo.private,
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


def go_online(monkeypatch, endpoint: str) -> None:
    """Online mode for one test, with the hub at ``endpoint``: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE``
    unset (either one set means offline, as huggingface_hub reads them: :func:`ts2viz.hub.offline`), the
    client's already-imported constants online and pointed at ``endpoint``. ``monkeypatch`` undoes it."""
    import huggingface_hub.constants as hc

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "ENDPOINT", endpoint)


def point_client_at(hub: HubServer, monkeypatch, cache_dir: str | Path) -> None:
    """Point the real ``huggingface_hub`` client (and what uses it) at ``hub`` for one test: online,
    ``HF_ENDPOINT`` and the client's already-imported constants set to the server, an empty hub cache in
    ``cache_dir``. ``monkeypatch`` undoes it all after the test."""
    import huggingface_hub.constants as hc

    go_online(monkeypatch, hub.url)
    monkeypatch.setattr(hc, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache_dir))
