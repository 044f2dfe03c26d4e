"""Background downloads of a hub dataset's images: a priority queue, worker threads, a disk budget.

A few worker threads, a disk budget for what is fetched ahead, and an honest idea of whether the hub
can be reached. The app never waits on a download: a view asks for its images
(:meth:`ImageFetcher.request`), draws what is there, and is redrawn when they land
(:mod:`ts2viz.ui.images.image_refresh`). Each image has a state (:meth:`ImageFetcher.state`): ``ready``
(on disk), ``loading`` (queued or downloading), ``offline`` (the hub is not reachable now, or
offline mode is on, :func:`ts2viz.hub.offline`) or ``missing`` (the repo has no such file).

Reachability: one probe of ``HF_ENDPOINT`` (:func:`ts2viz.hub.probe`: a ``HEAD`` that must answer below
500) before the first download and after any failure. A hub that fails (refused,
timed out, 5xx) is left alone for a back-off that starts at :data:`BACKOFF_S` and doubles up to
:data:`MAX_BACKOFF_S`; the next request after it probes again, so images come back without a restart
when the hub does.
"""
from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from ...hub import offline, reachable

#: priorities: what a visitor is looking at, then the SEGs next to it, then a warm-up of everything
VIEW, NEIGHBOUR, WARM = 0, 1, 2
READY, LOADING, OFFLINE, MISSING = "ready", "loading", "offline", "missing"

#: first and longest pause after the hub failed (seconds)
BACKOFF_S, MAX_BACKOFF_S = 10.0, 120.0
#: a successful probe is trusted this long (seconds)
PROBE_TTL_S = 60.0


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, "") or default)
    except ValueError:
        return default


class ImageFetcher:
    """Downloads images of a hub dataset into the local hub cache, in worker threads.

    ``bytes_fetched`` and ``downloads`` count what this process downloaded.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        A dataset with an ``hf_id``.
    workers : int or None, default None
        Downloads at once (``None``: env ``TS2VIZ_IMAGE_WORKERS``, default 6).
    timeout : float, default 4.0
        Seconds a file's metadata request may take (the hub client's ``etag_timeout``).
    probe_timeout : float, default 2.0
        Seconds the reachability probe may take: what a stalled hub costs.
    ahead_budget_mb : int or None, default None
        Megabytes that downloads *ahead of a visitor* (neighbours, warm-up) may add to the disk (``None``:
        env ``TS2VIZ_PREFETCH_MB``, default 2048); what a visitor looks at is always fetched.
    on_arrival : callable or None, default None
        Called with the file name after each download, from a worker thread.
    """

    def __init__(self, dataset, *, workers: int | None = None, timeout: float = 4.0, probe_timeout: float = 2.0,
                 ahead_budget_mb: int | None = None, on_arrival: Callable[[str], None] | None = None):
        self.dataset = dataset
        self.workers = max(1, workers if workers is not None else _env_int("TS2VIZ_IMAGE_WORKERS", 6))
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        mb = ahead_budget_mb if ahead_budget_mb is not None else _env_int("TS2VIZ_PREFETCH_MB", 2048)
        self.ahead_budget = max(0, mb) * 1024 * 1024
        self.on_arrival = on_arrival
        self.bytes_fetched = 0          # bytes this process downloaded
        self.downloads = 0
        self._cv = threading.Condition()
        self._heap: list[tuple[int, int, str]] = []
        self._queued: dict[str, int] = {}      # file -> best priority queued
        self._active: set[str] = set()
        self._missing: set[str] = set()
        self._offline_until = 0.0
        self._backoff = BACKOFF_S
        self._probe_ok_until = 0.0
        self._seq = itertools.count()
        self._threads: list[threading.Thread] = []
        self._probe_lock = threading.Lock()
        self._closed = False

    # -- state ---------------------------------------------------------------------------------------------
    def local(self, file_name: str) -> Path | None:
        """The image on disk (dataset folder or local hub cache), without touching the network.

        Parameters
        ----------
        file_name : str
            An image of the dataset.

        Returns
        -------
        pathlib.Path or None
            Its file, if on disk.
        """
        from ...dataset import cached_image

        return self.dataset.image_path(file_name) or cached_image(self.dataset, file_name)

    @property
    def offline(self) -> bool:
        """Whether downloads are off now: offline mode (:func:`ts2viz.hub.offline`), or the hub's back-off runs."""
        return offline() or time.monotonic() < self._offline_until

    def state(self, file_name: str) -> str:
        """The image's state (see the module's docstring).

        Parameters
        ----------
        file_name : str
            An image of the dataset.

        Returns
        -------
        str
            ``ready``, ``loading``, ``offline`` or ``missing``.
        """
        if file_name in self._missing or not self.dataset.has_image(file_name):
            return MISSING
        with self._cv:
            if file_name in self._queued or file_name in self._active:
                return LOADING
        if self.local(file_name) is not None:
            return READY
        return OFFLINE if self.offline else MISSING if self.dataset.hf_id is None else LOADING

    def busy(self, file_names: Iterable[str]) -> bool:
        """Whether any of these images is queued or downloading.

        Parameters
        ----------
        file_names : iterable of str
            Images of the dataset.

        Returns
        -------
        bool
            True if one is.
        """
        with self._cv:
            return any(f in self._queued or f in self._active for f in file_names)

    # -- requests ------------------------------------------------------------------------------------------
    def request(self, file_names: Iterable[str], priority: int = VIEW) -> int:
        """Queue the images that are neither on disk nor known missing.

        A visitor's view (``VIEW``) goes first, its newest request first; an image already queued at a lower
        priority moves up. Nothing is queued while offline (the caller's tiles say so) or, for downloads ahead
        of a visitor, once their disk budget is spent.

        Parameters
        ----------
        file_names : iterable of str
            Images of the dataset.
        priority : int, default VIEW
            ``VIEW``, ``NEIGHBOUR`` or ``WARM``.

        Returns
        -------
        int
            How many were queued.
        """
        if self.dataset.hf_id is None or self.offline or self._closed:
            return 0
        if priority != VIEW and self.bytes_fetched >= self.ahead_budget:
            return 0
        n = 0
        todo = [f for f in dict.fromkeys(file_names)
                if self.dataset.has_image(f) and f not in self._missing]
        todo = [f for f in todo if self.local(f) is None]
        with self._cv:
            for f in todo:
                if f in self._active or self._queued.get(f, 99) <= priority:
                    continue
                order = -next(self._seq) if priority == VIEW else next(self._seq)
                heapq.heappush(self._heap, (priority, order, f))
                self._queued[f] = priority
                n += 1
            if n:
                self._start_workers()
                self._cv.notify_all()
        return n

    def pending(self) -> int:
        """Images queued or downloading.

        Returns
        -------
        int
            Their number.
        """
        with self._cv:
            return len(self._queued) + len(self._active)

    def _start_workers(self) -> None:
        self._threads = [t for t in self._threads if t.is_alive()]
        while len(self._threads) < self.workers:
            t = threading.Thread(target=self._work, daemon=True, name=f"ts2viz-fetch-{len(self._threads)}")
            self._threads.append(t)
            t.start()

    def close(self, wait: float = 0.0) -> bool:
        """Drop the queue and let the workers end after the download each may be in.

        Parameters
        ----------
        wait : float, default 0.0
            Seconds to wait for them.

        Returns
        -------
        bool
            Whether no worker is left.
        """
        self._closed = True
        self._drop_queue()
        with self._cv:
            self._cv.notify_all()
        end = time.monotonic() + wait
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def _next(self) -> tuple[int, str] | None:
        with self._cv:
            while not self._closed:
                while self._heap:
                    prio, _, f = heapq.heappop(self._heap)
                    if self._queued.get(f) != prio:
                        continue            # superseded by a higher-priority entry
                    del self._queued[f]
                    self._active.add(f)
                    return prio, f
                if not self._cv.wait(timeout=30.0):
                    return None             # idle: the thread ends, a later request starts another
            return None

    def _drop_queue(self) -> None:
        with self._cv:
            self._heap.clear()
            self._queued.clear()

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            prio, f = job
            try:
                self._fetch(prio, f)
            finally:
                with self._cv:
                    self._active.discard(f)

    # -- one download --------------------------------------------------------------------------------------
    def _hub_down(self) -> None:
        now = time.monotonic()
        if now < self._offline_until:
            return                  # the other workers' failures are the same outage
        self._offline_until = now + self._backoff
        self._backoff = min(MAX_BACKOFF_S, self._backoff * 2)
        self._probe_ok_until = 0.0
        self._drop_queue()          # every queued image would fail the same way: their tiles say offline

    def reachable(self) -> bool:
        """Whether the hub can be reached: one probe at a time, trusted for :data:`PROBE_TTL_S` once it answered.

        A fresh probe (:func:`ts2viz.hub.reachable` with ``max_age=0``: a ``HEAD`` of the endpoint's root that
        must answer below 500 within ``probe_timeout`` seconds); a failed probe starts the back-off.

        Returns
        -------
        bool
            True if downloads may go ahead.
        """
        if offline():
            return False
        with self._probe_lock:      # the other workers wait for this probe instead of each probing
            if time.monotonic() < self._probe_ok_until:
                return True
            if time.monotonic() < self._offline_until:
                return False
            if reachable(self.probe_timeout, max_age=0):
                self._probe_ok_until = time.monotonic() + PROBE_TTL_S
                return True
            self._hub_down()        # before the lock is released: the waiting workers see it
            return False

    def _fetch(self, prio: int, f: str) -> None:
        if self.offline:
            return
        if prio != VIEW and self.bytes_fetched >= self.ahead_budget:
            return
        if not self.reachable():
            return
        try:
            from huggingface_hub import hf_hub_download
            from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

            p = Path(hf_hub_download(self.dataset.hf_id, f, repo_type="dataset", etag_timeout=self.timeout))
        except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
            self._missing.add(f)   # the hub answered: this file is not there (its tile says so)
            return
        except Exception:          # refused, timed out, 5xx, a broken answer: the hub is down for now
            self._hub_down()
            return
        self._backoff = BACKOFF_S
        try:
            self.bytes_fetched += p.stat().st_size
        except OSError:
            pass
        self.downloads += 1
        if self.on_arrival is not None:
            self.on_arrival(f)
