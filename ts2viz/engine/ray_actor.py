"""The Ray actor of the distributed engine: one loaded metric that hashes and scores blocks of image files.

Work reaches an actor as (path, file name, prompt) triples, never pixels: it reads each file once where
it lies (hash and decode from the same bytes), preprocesses, scores and returns the scores with the
hashes of the bytes it scored (:mod:`ts2viz.engine.distributed` drives the actors).
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
import warnings

import numpy as np

from ..errors import InputError
from .inputs import one_torch_thread


_BYTESIO = re.compile(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>")


def _read(path: str) -> tuple[bytes, int, int]:
    """A file's bytes with the size and mtime it had when it was read."""
    st = os.stat(path)
    with open(path, "rb") as f:
        return f.read(), st.st_size, st.st_mtime_ns


class BlockScorer:
    """One loaded metric inside a Ray actor: hashes files and scores blocks of images, decoding them here.

    The driver wraps it with ``ray.remote`` and starts one actor per GPU or per CPU (see the module docstring).
    A failure to load the metric is kept and raised by every call, so that the driver gets the one-line
    :class:`InputError` (a missing model, no GPU) instead of a dead actor. Warnings issued in the actor (a
    truncated prompt, say) are kept and returned with the next block. After a GPU out-of-memory halving the
    smaller batch size is kept for every later block.

    Parameters
    ----------
    spec : str
        The metric's SPEC string (loaded with :func:`ts2viz.metrics.load`).
    device : str or None
        Its device; None: the best available to this actor.
    decode_threads : int, default 1
        Threads that read, decode and prepare a block's images (a GPU actor gets a few); 1: the calling
        thread does it.

    Attributes
    ----------
    metric : ts2viz.metrics.common.base.Metric or None
        The loaded metric; None if loading failed.
    error : BaseException or None
        Why loading failed; raised by every call.
    """

    def __init__(self, spec: str, device: str | None, decode_threads: int = 1):
        from concurrent.futures import ThreadPoolExecutor

        self.error: BaseException | None = None
        self.metric = None
        self.lock = threading.Lock()  # the model: one call at a time
        self.messages_lock = threading.Lock()  # not self.lock: a warning may come from inside a model call
        self.messages: list[str] = []
        # Warnings (a truncated prompt, say) go back to the driver with the block they came from.
        warnings.showwarning = self._keep_warning
        try:
            from ..metrics import load

            self.metric = load(spec, device=device)
        except Exception as e:  # noqa: BLE001 - reported by every call, see the class docstring
            self.error = e
        self.pool = ThreadPoolExecutor(decode_threads, initializer=one_torch_thread) if decode_threads > 1 else None
        self.max_batch: int | None = None  # lowered for good after a GPU out-of-memory halving

    def _keep_warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        with self.messages_lock:
            self.messages.append(f"{category.__name__}: {message}")

    def _check(self):
        if self.error is not None:
            raise self.error
        return self.metric

    def info(self) -> dict:
        """What the driver needs to know about the loaded metric.

        Returns
        -------
        dict
            ``spec``, ``config_hash``, ``config``, ``higher_is_better``, ``needs_pixels``, ``cacheable``,
            ``has_details``, ``batch_size``, ``device`` and the actor's ``pid``.

        Raises
        ------
        Exception
            The error that loading the metric raised, if it failed (an :class:`InputError` for a missing
            model or device).
        """
        m = self._check()
        return {"spec": m.spec, "config_hash": m.config_hash, "config": m.config,
                "higher_is_better": m.higher_is_better, "needs_pixels": m.needs_pixels,
                "cacheable": m.cacheable, "has_details": m.has_details, "batch_size": m.batch_size,
                "device": m.device, "pid": os.getpid()}

    def check_prompts(self, prompts: list[str]) -> None:
        """Refuse prompts the metric cannot score, before any block is sent (``Metric.check_prompts``).

        Parameters
        ----------
        prompts : list of str
            The prompts to be scored.

        Raises
        ------
        InputError
            If a prompt cannot be scored, or as :meth:`info` if the metric failed to load.
        """
        self._check().check_prompts(prompts)

    def hash_files(self, paths: list[str]) -> list:
        """Content hashes of files, read where they lie (for the driver's cache keys).

        Parameters
        ----------
        paths : list of str
            The files, as paths valid on this actor's node.

        Returns
        -------
        list
            Per path: ``(sha1, size, mtime_ns)`` of the file's bytes (size and mtime as when read), or a
            string saying why it is unreadable.
        """
        out: list = []
        for p in paths:
            try:
                data, size, mtime = _read(p)
                out.append((hashlib.sha1(data).hexdigest(), size, mtime))
            except OSError as e:
                out.append(f"unreadable ({e.strerror or type(e).__name__})")
        return out

    def score_block(self, entries: list[tuple[str | None, str, str]], batch_size: int, want_keys: bool,
                    hook=None) -> dict:
        """Score a block of images; the metric's model runs in batches of ``batch_size``.

        Each file is read once: its bytes are hashed (with ``want_keys``) and decoded, then prepared (on the
        decode threads), then scored under a lock (one model call at a time, while the actor's other
        concurrent call prepares the next block). An entry that fails gets NaN and its reason; the block
        goes on.

        Parameters
        ----------
        entries : list of (str or None, str, str)
            ``(path, file name, prompt)`` per image; a ``None`` path: the image is not available.
        batch_size : int
            Images per model call (lowered for good after a GPU out-of-memory halving).
        want_keys : bool
            Return the sha1 of the bytes scored (the driver's cache keys).
        hook : callable or None, default None
            A :class:`ts2viz.engine.Variant`'s image change, applied to each decoded image.

        Returns
        -------
        dict
            ``values`` (float64, NaN where an entry failed), ``errors`` (why, per entry, or None), ``keys``
            (sha1 of the bytes scored, when ``want_keys``, else None), ``details`` (per entry, or None for a
            metric without details), ``config_hash`` and the ``warnings`` issued meanwhile.

        Raises
        ------
        Exception
            As :meth:`info` if the metric failed to load; a model error other than out-of-memory.
        """
        from ..metrics.common.base import score_with_oom_retry

        m = self._check()
        n = len(entries)
        errors: list[str | None] = [None] * n
        keys: list[str | None] = [None] * n

        def prep(k: int):
            path, name, _ = entries[k]
            try:
                image = None
                if m.needs_pixels:
                    if path is None:
                        errors[k] = "image not available"
                        return None
                    try:
                        data, _, _ = _read(path)
                    except OSError as e:
                        errors[k] = f"unreadable ({e.strerror or type(e).__name__})"
                        return None
                    if want_keys:
                        keys[k] = hashlib.sha1(data).hexdigest()
                    image = m.read_image(data)
                    if hook is not None:
                        image = hook(image, path)
                return m.prepare(image, name)
            except InputError as e:
                errors[k] = _BYTESIO.sub(repr(path), e.problem)
            except Exception as e:  # noqa: BLE001 - a bad image must not stop the run
                errors[k] = f"cannot preprocess ({type(e).__name__}: {e})"
            return None

        prepared = list(self.pool.map(prep, range(n))) if self.pool is not None else [prep(k) for k in range(n)]
        good = [k for k in range(n) if errors[k] is None]
        values = np.full(n, np.nan)
        details: list | None = [None] * n if m.has_details else None
        if good:
            with self.lock:  # one model call at a time; the other thread decodes the next block
                bs = min(batch_size, self.max_batch or batch_size)
                vals, dets, worked = score_with_oom_retry(m, [prepared[k] for k in good],
                                                          [entries[k][2] for k in good], bs)
                if worked < bs:
                    self.max_batch = worked
            values[good] = vals
            if details is not None and dets is not None:
                for k, d in zip(good, dets):
                    details[k] = d
        with self.messages_lock:
            said, self.messages = self.messages, []
        return {"values": values, "errors": errors, "keys": keys, "details": details,
                "config_hash": m.config_hash, "warnings": said}
