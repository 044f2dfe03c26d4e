"""A dataset's image files: on disk, in the local hub cache, or downloaded from its hub repo."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..hub import PROBE_TIMEOUT, offline, reachable, set_timeouts
from .model import Dataset


def cached_image(ds: Dataset, file_name: str) -> Path | None:
    """An already downloaded copy of a dataset image in the local hub cache (never touches the network).

    Parameters
    ----------
    ds : Dataset
        A dataset with ``hf_id``.
    file_name : str
        One of its images (other names are not looked up).

    Returns
    -------
    pathlib.Path or None
        The cached file, or None when there is no copy.
    """
    if ds.hf_id is None or not ds.has_image(file_name):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(ds.hf_id, file_name, repo_type="dataset")
        return Path(hit) if isinstance(hit, str) else None
    except Exception:
        return None


def images_available(ds: Dataset, file_names: Sequence[str], probe_timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether any of these images of ``ds`` can be had now.

    On disk, in the local hub cache, or from the dataset's hub repo (offline mode off and the hub
    answers :func:`ts2viz.hub.reachable`). Quick, for a check before a model is loaded: it stops at the first
    image found, downloads nothing and probes the hub at most once.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    file_names : sequence of str
        The images (names the dataset lacks are ignored).
    probe_timeout : float, default ts2viz.hub.PROBE_TIMEOUT
        Seconds the probe of the hub waits.

    Returns
    -------
    bool
        True if at least one image can be had.
    """
    names = [f for f in file_names if ds.has_image(f)]
    if any(ds.image_path(f) is not None for f in names):
        return True
    if ds.hf_id is None or not names:
        return False
    if any(cached_image(ds, f) is not None for f in names):
        return True
    return not offline() and reachable(probe_timeout)


def fetch_image(ds: Dataset, file_name: str, *, timeout: float = 5.0) -> Path | None:
    """Local path of an image, downloading it from the dataset's hub repo if needed.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    file_name : str
        One of its images.
    timeout : float, default 5.0
        Seconds per hub request.

    Returns
    -------
    pathlib.Path or None
        The file; ``None`` (never raises, never hangs past ``timeout``) when the image cannot be had.
        Offline (:func:`ts2viz.hub.offline`), only the local hub cache is looked at.
    """
    p = ds.image_path(file_name)
    if p is not None or ds.hf_id is None or not ds.has_image(file_name):
        return p
    if offline():
        return cached_image(ds, file_name)
    set_timeouts(timeout)
    try:
        from huggingface_hub import hf_hub_download
        return Path(hf_hub_download(ds.hf_id, file_name, repo_type="dataset"))
    except Exception:
        return None
