"""The on-disk score cache: SQLite, keyed by (metric config hash, image content hash, prompt).

SQLite in WAL mode with one transaction per batch: a run killed at any point loses at most the batch
in flight, the file is never left corrupt, and the CLI and the app can read and write it at the same
time. File content hashes are memoised by (path, size, mtime) so a re-run does not re-read every image.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import InputError
from ..paths import cache_dir as default_cache_root

SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    metric  TEXT NOT NULL,      -- Metric.config_hash
    image   TEXT NOT NULL,      -- sha1 of the image file bytes (or of decoded pixels)
    prompt  TEXT NOT NULL,
    value   REAL,
    details TEXT,               -- JSON per-question answers (TIFA, DSG) or NULL
    created REAL NOT NULL,
    PRIMARY KEY (metric, image, prompt)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS metrics (
    hash   TEXT PRIMARY KEY,
    spec   TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_hashes (
    path     TEXT PRIMARY KEY,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha1     TEXT NOT NULL
);
"""


def _reason(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def default_path() -> Path:
    return default_cache_root() / "scores.sqlite"


def hash_bytes(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def variant_key(image_key: str, change: str) -> str:
    """The cache key of an image changed before scoring (a nuisance transform): a hash of the original's
    key and the change's own key, so that it is cached apart from the original and from other changes."""
    return hashlib.sha1(f"{image_key}\0{change}".encode()).hexdigest()


def hash_pil(image) -> str:
    """Content hash of an in-memory PIL image (mode, size and pixels)."""
    h = hashlib.sha1(f"{image.mode}:{image.size[0]}x{image.size[1]}:".encode())
    h.update(image.tobytes())
    return h.hexdigest()


class ScoreCache:
    """A thread-safe handle on the score cache file (see module docstring)."""

    def __init__(self, path: str | os.PathLike | None = None):
        p = Path(path) if path is not None else default_path()
        if p.suffix not in (".sqlite", ".db"):  # a folder was given
            p = p / "scores.sqlite"
        self.path = p
        self._lock = threading.Lock()
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(p), timeout=60, check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise InputError(f"cannot open the score cache ({_reason(e)}); pass --cache DIR or --no-cache",
                             file=p) from None
        try:
            self._con.execute("PRAGMA journal_mode=WAL")
            # NORMAL is crash-safe in WAL mode (a power cut may lose the last commits, never corrupt).
            self._con.execute("PRAGMA synchronous=NORMAL")
            self._con.execute("PRAGMA busy_timeout=60000")
            self._con.executescript(SCHEMA)
        except sqlite3.DatabaseError as e:
            self._con.close()
            if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
                raise InputError(f"the score cache is locked by another process ({e})", file=p) from None
            raise InputError(f"not a usable SQLite score cache ({_reason(e)}); delete the file or run with "
                             f"--no-cache", file=p) from None

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> "ScoreCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- metrics -----------------------------------------------------------------------------------
    def register_metric(self, config_hash: str, spec: str, config: dict) -> None:
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
                              (config_hash, spec, json.dumps(config, sort_keys=True, default=str)))

    # -- scores ------------------------------------------------------------------------------------
    def get_many(self, metric: str, keys: Sequence[tuple[str, str]],
                 with_details: bool = False) -> dict[tuple[str, str], tuple[float, object]]:
        """Cached ``(value, details)`` for the ``(image hash, prompt)`` keys present in the cache."""
        out: dict[tuple[str, str], tuple[float, object]] = {}
        if not keys:
            return out
        col = "details" if with_details else "NULL"
        with self._lock:
            by_prompt: dict[str, list[str]] = {}
            for img, pr in set(keys):
                by_prompt.setdefault(pr, []).append(img)
            for pr, imgs in by_prompt.items():
                for i in range(0, len(imgs), 500):  # stay under SQLite's parameter limit
                    chunk = imgs[i:i + 500]
                    q = (f"SELECT image, value, {col} FROM scores WHERE metric=? AND prompt=? "
                         f"AND image IN ({','.join('?' * len(chunk))})")
                    for img, val, det in self._con.execute(q, (metric, pr, *chunk)):
                        out[(img, pr)] = (float("nan") if val is None else float(val),
                                          json.loads(det) if det else None)
        return out

    def put_many(self, metric: str, rows: Iterable[tuple[str, str, float, object]]) -> None:
        """Store ``(image hash, prompt, value, details)`` rows in one transaction (one batch)."""
        now = time.time()
        data = [(metric, img, pr, None if val != val else float(val),
                 None if det is None else json.dumps(det, default=str), now) for img, pr, val, det in rows]
        if not data:
            return
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?)", data)
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise

    def count(self, metric: str | None = None) -> int:
        with self._lock:
            if metric is None:
                return self._con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
            return self._con.execute("SELECT COUNT(*) FROM scores WHERE metric=?", (metric,)).fetchone()[0]

    # -- file hashes -------------------------------------------------------------------------------
    def file_hash(self, path: str | os.PathLike) -> str:
        """sha1 of a file's bytes, memoised by (absolute path, size, mtime). Raises OSError if unreadable."""
        known = self.known_file_hash(path)
        if known is not None:
            return known
        p = os.path.abspath(path)
        st = os.stat(p)
        with open(p, "rb") as f:
            digest = hash_bytes(f.read())
        self.remember_file_hashes([(p, st.st_size, st.st_mtime_ns, digest)])
        return digest

    def known_file_hash(self, path: str | os.PathLike) -> str | None:
        """The memoised sha1 of a file if its size and mtime still match, else ``None`` (never reads it).

        Raises OSError if the file cannot be stat'ed.
        """
        p = os.path.abspath(path)
        st = os.stat(p)
        with self._lock:
            row = self._con.execute("SELECT size, mtime_ns, sha1 FROM file_hashes WHERE path=?", (p,)).fetchone()
        if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
            return row[2]
        return None

    def remember_file_hashes(self, rows: Iterable[tuple[str | os.PathLike, int, int, str]]) -> None:
        """Memoise ``(path, size, mtime_ns, sha1)`` rows computed elsewhere (e.g. on Ray workers), in one
        transaction; size and mtime are those the file had when it was read."""
        data = [(os.path.abspath(p), int(size), int(mtime), sha1) for p, size, mtime, sha1 in rows]
        if not data:
            return
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?)", data)
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
