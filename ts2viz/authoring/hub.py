"""Push an exported dataset folder to a Hugging Face dataset repository (the operator's step)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from ..errors import InputError, InputWarning

DEFAULT_COMMIT_MESSAGE = "Upload SEG dataset made with ts2viz"


def dataset_files(folder: str | os.PathLike) -> list[str]:
    """The files of a dataset folder that make the dataset, as relative POSIX paths.

    ``metadata.csv``, ``edges.csv``, ``nodes.csv``, ``README.md`` when present, and every image
    ``metadata.csv`` names. Nothing else in the folder is pushed or packed (no stray or hidden files).
    The folder's warnings are not given here (they are ``ts2viz validate``'s to give).

    Parameters
    ----------
    folder : str or os.PathLike
        A dataset folder in ts2viz's format.

    Returns
    -------
    list of str
        The dataset's own files first, then the images in ``metadata.csv``'s order.

    Raises
    ------
    InputError
        When the folder does not load as a dataset (the loader's first problem).
    """
    from ..dataset import load_folder

    folder = Path(folder)
    with warnings.catch_warnings():      # the folder's warnings are validate's to give, not this listing's
        warnings.simplefilter("ignore", InputWarning)
        ds = load_folder(folder)
    own = [n for n in ("metadata.csv", "edges.csv", "nodes.csv", "README.md") if (folder / n).is_file()]
    return own + [r.file_name for r in ds.rows]


def push_to_hub(folder: str | os.PathLike, repo_id: str, *, token: str | None = None,
                endpoint: str | None = None, private: bool = False,
                commit_message: str = DEFAULT_COMMIT_MESSAGE, probe_timeout: float | None = None) -> str:
    """Upload a dataset folder to a Hugging Face dataset repo in one commit (the operator's step).

    The folder is checked first with :func:`ts2viz.dataset.validate_folder`: every rule of the loader, and
    every image file present (``ts2viz validate`` lists all the problems). Only the dataset's files are
    pushed (:func:`dataset_files`). The repo is created if missing. Load the result with
    ``ts2viz.dataset.load_hf(repo_id)``.

    Parameters
    ----------
    folder : str or os.PathLike
        A dataset folder in ts2viz's format, with its images.
    repo_id : str
        ``OWNER/NAME`` of the dataset repo.
    token : str or None, default None
        A hub token; ``None``: the client's own (``HF_TOKEN``, ``hf auth login``).
    endpoint : str or None, default None
        The hub's address; ``None``: ``HF_ENDPOINT`` or the public hub.
    private : bool, default False
        Create the repo as private (an existing repo keeps its visibility).
    commit_message : str, default DEFAULT_COMMIT_MESSAGE
        The commit's message.
    probe_timeout : float or None, default None
        Seconds the hub has to answer one probe before anything is sent; ``None``:
        :data:`ts2viz.hub.PROBE_TIMEOUT`.

    Returns
    -------
    str
        The URL of the commit.

    Raises
    ------
    InputError
        In one line: ``repo_id`` is not ``OWNER/NAME``; the folder's first problem, or its first missing
        image; a hub that does not answer the probe in time; any hub error (no such owner, no write
        access, network), naming the repo.
    """
    from ..dataset import validate_folder
    from ..hub import is_hub_id

    folder = Path(folder)
    if not is_hub_id(repo_id):
        raise InputError(f"--repo: expected OWNER/NAME, got {repo_id!r}")
    report = validate_folder(folder)
    if not report.ok:
        more = len(report.errors) + report.dropped - 1
        raise InputError(f"{report.errors[0]}" + (f" (and {more} more problem(s); run ts2viz validate)"
                                                  if more else ""))
    if report.missing_images:
        fn, row = report.missing_images[0]
        raise InputError(f"image file {fn!r} not found; a pushed dataset needs its images "
                         f"({len(report.missing_images)} missing)", file=folder / "metadata.csv", row=row)
    from huggingface_hub import CommitOperationAdd, HfApi

    from ..hub import PROBE_TIMEOUT, reachable

    api = HfApi(endpoint=endpoint, token=token)
    probe_timeout = PROBE_TIMEOUT if probe_timeout is None else probe_timeout
    # one quick probe first: the client's own retries on a network that drops or stalls take minutes
    if not reachable(probe_timeout, api.endpoint):
        raise InputError(f"cannot reach the Hugging Face hub ({api.endpoint}) within {probe_timeout:g} s",
                         file=repo_id)
    ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(folder / p)) for p in dataset_files(folder)]
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.create_commit(repo_id, ops, repo_type="dataset", commit_message=commit_message)
    except Exception as e:     # HTTP errors, refused connections, bad tokens: one line naming the repo
        msg = " ".join(str(e).split())[:300]
        raise InputError(f"could not push to the Hugging Face dataset repo ({api.endpoint}): "
                         f"{type(e).__name__}: {msg}", file=repo_id) from None
    return str(info.commit_url)
