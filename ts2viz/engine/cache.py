"""The on-disk score cache: SQLite, keyed by (metric config hash, image content hash, prompt).

The key
-------
* **metric**: :attr:`ts2viz.metrics.common.base.Metric.config_hash`, a hash of the metric's ``config``
  dict: family, model identity (its id and revision, or a fingerprint of its files), every option that changes
  results. Changing any of them (another checkpoint, another option value, a ``callable:`` metric's edited
  source file or its ``version``) gives a new hash, so the old entries are simply not found; nothing is
  ever overwritten by a different metric. The ``metrics`` table maps each hash to its spec and config.
* **image**: the sha1 of the image file's bytes (:meth:`ScoreCache.file_hash`), or of an in-memory PIL
  image's mode, size and pixels (:func:`hash_pil`): the same picture under another name or path is a hit,
  an edited file is a miss. An image changed before scoring (a nuisance transform) has a key of its own
  (:func:`variant_key`).
* **prompt**: the prompt text exactly as scored.

Resumability: SQLite in WAL mode with one transaction per batch. A run killed at any point loses at most
the batch in flight, the file is never left corrupt, and the CLI and the app can read and write it at the
same time; a re-run finds the committed batches and scores only the rest. File content hashes are
memoised by (absolute path, size, mtime) so a re-run does not re-read every image. The default file is
``scores.sqlite`` under :func:`ts2viz.paths.cache_dir`; deleting it is always safe (the scores are
recomputed).
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
    """The default score cache file.

    Returns
    -------
    pathlib.Path
        ``scores.sqlite`` in :func:`ts2viz.paths.cache_dir` (``$TS2VIZ_CACHE`` or ``~/.cache/ts2viz``).
    """
    return default_cache_root() / "scores.sqlite"


def hash_bytes(data: bytes) -> str:
    """The cache's content hash of a file's bytes.

    Parameters
    ----------
    data : bytes
        The file's bytes.

    Returns
    -------
    str
        Their sha1, 40 hex digits.

    Examples
    --------
    >>> hash_bytes(b"")
    'da39a3ee5e6b4b0d3255bfef95601890afd80709'
    """
    return hashlib.sha1(data).hexdigest()


def variant_key(image_key: str, change: str) -> str:
    """The cache key of an image changed before scoring (a nuisance transform).

    A hash of the original's key and the change's own key, so that the changed image is cached apart from
    the original and from other changes.

    Parameters
    ----------
    image_key : str
        The original image's key (its content hash).
    change : str
        The change's key (a :class:`ts2viz.engine.Variant` ``image`` hook's ``key`` attribute).

    Returns
    -------
    str
        sha1 hex digest of the two.

    Examples
    --------
    >>> k = hash_bytes(b"image bytes")
    >>> variant_key(k, "jpeg:q=30") != variant_key(k, "jpeg:q=50") != k
    True
    """
    return hashlib.sha1(f"{image_key}\0{change}".encode()).hexdigest()


def hash_pil(image) -> str:
    """Content hash of an in-memory PIL image (mode, size and pixels).

    Two images with the same mode, size and pixel bytes share a key whatever their file name or format.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.

    Returns
    -------
    str
        sha1 hex digest.

    Examples
    --------
    >>> from PIL import Image
    >>> hash_pil(Image.new("RGB", (4, 4), "red")) == hash_pil(Image.new("RGB", (4, 4), (255, 0, 0)))
    True
    >>> hash_pil(Image.new("RGB", (4, 4), "red")) == hash_pil(Image.new("RGBA", (4, 4), "red"))
    False
    """
    h = hashlib.sha1(f"{image.mode}:{image.size[0]}x{image.size[1]}:".encode())
    h.update(image.tobytes())
    return h.hexdigest()


class ScoreCache:
    """A thread-safe handle on the score cache file (keys and resumability: see the module docstring).

    Opens (creating it and its folder if needed) the SQLite file in WAL mode; one connection shared by the
    calling threads under a lock. Use it as a context manager, or call :meth:`close`.

    Parameters
    ----------
    path : str or os.PathLike or None, default None
        The cache file (a name ending in ``.sqlite`` or ``.db``), or a folder to hold ``scores.sqlite``;
        ``None``: :func:`default_path`.

    Attributes
    ----------
    path : pathlib.Path
        The cache file.

    Raises
    ------
    InputError
        When the file cannot be opened or created, is locked by another process, or is not a usable
        SQLite score cache (the message says to pass ``--cache DIR`` or ``--no-cache``).

    Examples
    --------
    >>> import math, tempfile
    >>> with tempfile.TemporaryDirectory() as d, ScoreCache(d) as cache:
    ...     cache.register_metric("m1", "callable:mod:f", {"family": "callable"})
    ...     cache.put_many("m1", [("img1", "a red cat", 0.25, None), ("img2", "a red cat", float("nan"), None)])
    ...     hits = cache.get_many("m1", [("img1", "a red cat"), ("img2", "a red cat"), ("img1", "a dog")])
    ...     (cache.path.name, cache.count("m1"), hits[("img1", "a red cat")], math.isnan(hits[("img2", "a red cat")][0]),
    ...      ("img1", "a dog") in hits)
    ('scores.sqlite', 2, (0.25, None), True, False)
    """

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
        """Close the connection (every committed batch is on disk already)."""
        with self._lock:
            self._con.close()

    def __enter__(self) -> "ScoreCache":
        """Return the cache itself."""
        return self

    def __exit__(self, *exc) -> None:
        """Close the cache."""
        self.close()

    # -- metrics -----------------------------------------------------------------------------------
    def register_metric(self, config_hash: str, spec: str, config: dict) -> None:
        """Record which spec and config a metric hash stands for (the ``metrics`` table; informative only).

        Parameters
        ----------
        config_hash : str
            The metric's :attr:`~ts2viz.metrics.common.base.Metric.config_hash`.
        spec : str
            Its spec.
        config : dict
            Its config, stored as JSON (non-JSON values as their ``str``).
        """
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
                              (config_hash, spec, json.dumps(config, sort_keys=True, default=str)))

    # -- scores ------------------------------------------------------------------------------------
    def get_many(self, metric: str, keys: Sequence[tuple[str, str]],
                 with_details: bool = False) -> dict[tuple[str, str], tuple[float, object]]:
        """Cached ``(value, details)`` for the ``(image hash, prompt)`` keys present in the cache.

        Parameters
        ----------
        metric : str
            The metric's config hash.
        keys : sequence of (str, str)
            ``(image hash, prompt)`` pairs; duplicates are looked up once.
        with_details : bool, default False
            Read the stored per-image details too (else ``details`` is ``None``).

        Returns
        -------
        dict
            ``{(image hash, prompt): (value, details)}`` for the keys found (absent keys are misses);
            ``value`` is a float, NaN for a stored NaN; ``details`` the decoded JSON or ``None``.
        """
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
        """Store ``(image hash, prompt, value, details)`` rows in one transaction (one batch).

        All rows are committed or none (rolled back on any error, an interrupt included); a row with an
        existing key replaces it.

        Parameters
        ----------
        metric : str
            The metric's config hash.
        rows : iterable of (str, str, float, object)
            ``(image hash, prompt, value, details)``; a NaN value is stored as NULL, ``details`` as JSON
            (``None``: none).
        """
        now = time.time()
        data = [(metric, img, pr, None if val != val else float(val),
                 None if det is None else json.dumps(det, default=str), now) for img, pr, val, det in rows]
        self._insert("scores", data)

    def _insert(self, table: str, data: list) -> None:
        # INSERT OR REPLACE the rows in one transaction (none: nothing happens)
        if not data:
            return
        marks = ", ".join("?" * len(data[0]))
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", data)
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise

    def count(self, metric: str | None = None) -> int:
        """How many scores the cache holds.

        Parameters
        ----------
        metric : str or None, default None
            Count only this metric's (its config hash); ``None``: every metric's.

        Returns
        -------
        int
            The number of stored ``(metric, image, prompt)`` entries.
        """
        with self._lock:
            if metric is None:
                return self._con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
            return self._con.execute("SELECT COUNT(*) FROM scores WHERE metric=?", (metric,)).fetchone()[0]

    # -- file hashes -------------------------------------------------------------------------------
    def file_hash(self, path: str | os.PathLike) -> str:
        """sha1 of a file's bytes, memoised by (absolute path, size, mtime).

        The file is read only when its memo is missing or its size or mtime changed.

        Parameters
        ----------
        path : str or os.PathLike
            The file.

        Returns
        -------
        str
            The sha1 hex digest of its bytes.

        Raises
        ------
        OSError
            If the file cannot be stat'ed or read.
        """
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

        Parameters
        ----------
        path : str or os.PathLike
            The file.

        Returns
        -------
        str or None
            The sha1 memoised for it, or ``None`` when none is or the file changed since.

        Raises
        ------
        OSError
            If the file cannot be stat'ed.
        """
        p = os.path.abspath(path)
        st = os.stat(p)
        with self._lock:
            row = self._con.execute("SELECT size, mtime_ns, sha1 FROM file_hashes WHERE path=?", (p,)).fetchone()
        if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
            return row[2]
        return None

    def remember_file_hashes(self, rows: Iterable[tuple[str | os.PathLike, int, int, str]]) -> None:
        """Memoise file hashes computed elsewhere (e.g. on Ray workers), in one transaction.

        Parameters
        ----------
        rows : iterable of (str or os.PathLike, int, int, str)
            ``(path, size, mtime_ns, sha1)``; size and mtime are those the file had when it was read, so
            that a file changed since is hashed again.
        """
        data = [(os.path.abspath(p), int(size), int(mtime), sha1) for p, size, mtime, sha1 in rows]
        self._insert("file_hashes", data)
