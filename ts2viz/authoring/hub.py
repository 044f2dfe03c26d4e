"""Push an exported dataset folder to a Hugging Face dataset repository (the operator's step)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from ..errors import InputError, InputWarning

DEFAULT_COMMIT_MESSAGE = "Upload SEG dataset made with ts2viz"


def dataset_files(folder: str | os.PathLike) -> list[str]:
    """The files of a dataset folder that make the dataset (relative POSIX paths): ``metadata.csv``,
    ``edges.csv``, ``nodes.csv``, ``README.md`` when present, and every image ``metadata.csv`` names.
    Nothing else in the folder is pushed (no stray or hidden files)."""
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
    """Upload a dataset folder to the Hugging Face dataset repo ``repo_id`` (created if missing) with
    the ``huggingface_hub`` client, in one commit, and return the URL of the commit.

    The folder is checked first with :func:`ts2viz.dataset.validate_folder`: every rule of the loader,
    and every image file present; the first problem is raised as a one-line
    :class:`~ts2viz.errors.InputError` (``ts2viz validate`` lists them all). Only the dataset's files
    are pushed (:func:`dataset_files`). ``endpoint`` defaults to ``HF_ENDPOINT`` / the public hub;
    ``token`` to the client's own (``HF_TOKEN``, ``hf auth login``). A hub error (no such owner, no
    write access, network) is an ``InputError`` naming the repo; so is a hub that does not answer one
    probe within ``probe_timeout`` seconds (default :data:`ts2viz.dataset.HUB_PROBE_TIMEOUT`). Load the result with
    ``ts2viz.dataset.load_hf(repo_id)``.
    """
    from ..dataset import validate_folder

    folder = Path(folder)
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
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

    from ..dataset import HUB_PROBE_TIMEOUT, hub_reachable

    api = HfApi(endpoint=endpoint, token=token)
    probe_timeout = HUB_PROBE_TIMEOUT if probe_timeout is None else probe_timeout
    # one quick probe first: the client's own retries on a network that drops or stalls take minutes
    if not hub_reachable(probe_timeout, api.endpoint):
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
