"""Loading a SEG dataset: the bundled TS2 metadata, a local folder, a Hugging Face dataset id."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..hub import PROBE_TIMEOUT, endpoint, is_hub_id, offline, reachable, set_timeouts
from ..paths import bundled_data_dir
from .graphfiles import read_edges, read_node_errors
from .metadata import read_metadata
from .model import TS2_HF_ID, Dataset
from .reading import FolderCaps


def load_dataset(spec: str | os.PathLike = "ts2") -> Dataset:
    """Load a SEG dataset.

    Parameters
    ----------
    spec : str or os.PathLike, default "ts2"
        ``"ts2"`` (the bundled TS2 metadata, no image files), a local folder laid out like the released
        dataset (see the module docstring), or a Hugging Face dataset id such as
        ``saxon/T2IScoreScore``.

    Returns
    -------
    Dataset
        The SEGs and their image rows.

    Raises
    ------
    InputError
        For a path that is not a dataset folder, a spec that is none of the three, or bad files (one line
        naming the file, the row and what was expected).

    See Also
    --------
    validate_folder : every problem of a folder, not only the first.
    ts2viz.metametrics.results.compute : the meta-metrics of scores on a dataset.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> ds = load_dataset("ts2")
    >>> len(ds), sum(seg.n_images for seg in ds)
    (165, 2840)
    >>> from collections import Counter
    >>> Counter(seg.partition for seg in ds)
    Counter({'Synth': 111, 'Real': 29, 'Nat': 25})
    """
    s = str(spec)
    if s == "ts2":
        return load_bundled()
    p = Path(s).expanduser()
    if p.exists():
        if not p.is_dir():
            raise InputError("expected a dataset folder containing metadata.csv", file=p)
        return load_folder(p)
    if is_hub_id(s):
        return load_hf(s)
    raise InputError("no such dataset: expected 'ts2', an existing folder with metadata.csv, "
                     "or a Hugging Face dataset id (owner/name)", file=s)


def load_bundled() -> Dataset:
    """The TS2 metadata shipped in ``data/ts2`` (165 SEGs, 2,840 images; images not included).

    Returns
    -------
    Dataset
        The dataset, with ``hf_id`` set to the TS2 release (images are fetched on demand).
    """
    path = bundled_data_dir() / "ts2" / "metadata.csv"
    ds = read_metadata(path, name="ts2", root=None)
    ds.hf_id = TS2_HF_ID
    return ds


def load_folder(folder: str | os.PathLike, name: str | None = None, *, caps: FolderCaps | None = None) -> Dataset:
    """Load a dataset folder: ``metadata.csv``, optional ``edges.csv`` and ``nodes.csv``.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder (see the module docstring for the files).
    name : str, optional
        The dataset's name (default: the folder's name).
    caps : FolderCaps, optional
        Bounds on what is read of a folder from an untrusted source: each file is refused from its size,
        and read no further than the first row past its row cap.

    Returns
    -------
    Dataset
        The dataset, rooted at ``folder``.

    Raises
    ------
    InputError
        For a folder without ``metadata.csv``, any bad row (the first one; :func:`validate_folder` lists
        them all), or a file past one of ``caps`` (one line naming the file, the number and the limit).
    """
    folder = Path(folder)
    meta = folder / "metadata.csv"
    if not meta.is_file():
        raise InputError("dataset folder has no metadata.csv", file=folder)
    edges = read_edges(folder / "edges.csv", caps=caps) if (folder / "edges.csv").is_file() else None
    nodes = read_node_errors(folder / "nodes.csv", caps=caps) if (folder / "nodes.csv").is_file() else None
    return read_metadata(meta, name=name or folder.name, root=folder, edges=edges, node_errors=nodes, caps=caps)


def load_hf(hf_id: str, *, revision: str | None = None, timeout: float = 10.0,
            cache_dir: str | os.PathLike | None = None, probe_timeout: float = PROBE_TIMEOUT) -> Dataset:
    """Load a SEG dataset from the Hugging Face hub (an imagefolder: ``metadata.csv`` + images).

    Only ``metadata.csv`` (and ``edges.csv``, ``nodes.csv`` if present) are downloaded here; images are
    fetched on demand by :func:`fetch_image`.

    Parameters
    ----------
    hf_id : str
        The dataset id (``owner/name``).
    revision : str, optional
        A branch, tag or commit.
    timeout : float, default 10.0
        Seconds per hub request (``HF_HUB_ETAG_TIMEOUT``, ``HF_HUB_DOWNLOAD_TIMEOUT`` unless set).
    cache_dir : str or os.PathLike, optional
        The hub cache to use.
    probe_timeout : float, default ts2viz.hub.PROBE_TIMEOUT
        Seconds the one probe of the hub waits (:func:`ts2viz.hub.reachable`).

    Returns
    -------
    Dataset
        The dataset, rooted in the hub cache, with ``hf_id`` set.

    Raises
    ------
    InputError
        Offline without the dataset in the local hub cache (at once in offline mode, :func:`ts2viz.hub.offline`; without
        it, after one probe that gives up after ``probe_timeout`` seconds, since the hub client's own
        retries on a network that drops or stalls connections take minutes), a missing repository, or
        bad files.
    """
    set_timeouts(timeout)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - huggingface_hub is a requirement
        raise InputError("huggingface_hub is not installed", file=hf_id) from e
    off = offline()
    unreachable = not off and not reachable(probe_timeout)
    try:
        local = snapshot_download(repo_id=hf_id, repo_type="dataset", revision=revision,
                                  allow_patterns=["metadata.csv", "edges.csv", "nodes.csv"],
                                  cache_dir=None if cache_dir is None else str(cache_dir),
                                  local_files_only=off or unreachable)
    except Exception as e:  # network errors, offline mode, missing repo: all one message
        if unreachable:
            raise InputError(f"cannot reach the Hugging Face hub ({endpoint()}) within "
                             f"{probe_timeout:g} s and the dataset is not in the local hub cache; pass a "
                             f"local dataset folder instead", file=hf_id) from None
        raise InputError(f"could not load Hugging Face dataset (offline or not found: "
                         f"{type(e).__name__}); pass a local dataset folder instead", file=hf_id) from None
    folder = Path(local)
    ds = load_folder(folder, name=hf_id)
    ds.hf_id = hf_id
    return ds
