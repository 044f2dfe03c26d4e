"""Single files in hub repositories or folders, and their identity in a metric's config.

A file may be named by a hub repository, a local folder or a local file (a field's short model name is
resolved to its hub repository by :func:`ts2viz.hub.model_hub_id`).

The reward models of HPSv2 and ImageReward are released as single checkpoint files in hub repositories
(``xswu/HPSv2``: ``HPS_v2_compressed.pt``, ``HPS_v2.1_compressed.pt``; ``THUDM/ImageReward``:
``ImageReward.pt`` + ``med_config.json``), not as ``save_pretrained`` folders; PickScore's processor and
HPSv3's base model live in other repositories than the weights. This module finds such files by name,
offline from the local hub cache when the hub does not answer, and says in one line what is missing.
"""
from __future__ import annotations

import os
from pathlib import Path

from ...errors import InputError
from ...hub import is_hub_id, offline, reachable
from .pretrained import file_fingerprint


def hub_file(spec, repo: str, filename: str, revision: str | None = None, what: str = "checkpoint",
             option: str | None = None, note: str = "") -> str:
    """Local path of ``filename`` in hub repository ``repo`` (downloaded once, then from the hub cache).

    Offline (:func:`ts2viz.hub.offline`) or when the hub does not answer (:func:`ts2viz.hub.reachable`), only the local hub cache is read; a file
    that is not there gives a one-line :class:`InputError` naming the repository, the file, and
    ``option`` (the spec option that names another place for it) when there is one.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec (its ``raw`` string names the metric in error messages).
    repo : str
        The hub repository (``owner/name``).
    filename : str
        The file's name in the repository.
    revision : str or None, optional
        The hub revision; None for the default branch.
    what : str, default "checkpoint"
        What the file is, for error messages.
    option : str or None, optional
        The spec option that gives another place for the file, named in error messages.
    note : str, optional
        A sentence put before the offline error message.

    Returns
    -------
    str
        The path of the file in the local hub cache.

    Raises
    ------
    InputError
        If the file cannot be downloaded, or (offline or the hub not answering) is not in the local hub
        cache.
    """
    import huggingface_hub

    off = offline()
    local_only = off or not reachable()
    try:
        return huggingface_hub.hf_hub_download(repo, filename, revision=revision, local_files_only=local_only)
    except Exception as e:  # noqa: BLE001 - every failure becomes one line
        if local_only:
            why = "offline mode (HF_HUB_OFFLINE is set)" if off else "the Hugging Face hub does not answer"
            where = f" (option {option}=)" if option else ""
            lead = f"{note} " if note else ""
            raise InputError(f"metric {spec.raw!r}: {lead}cannot load {what} {filename!r} of {repo!r}{where}: {why}, and "
                             f"it is not in the local hub cache. Give a local copy instead "
                             f"({option + '=/path/to/' + filename if option else 'a path to the file or its folder'}), "
                             "or load it once while the hub is reachable") from e
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"metric {spec.raw!r}: cannot load {what} {filename!r} of hub repository {repo!r}: "
                         f"{msg[:300]}") from e


def local_or_hub_file(spec, place: str, filename: str, what: str, revision: str | None = None,
                      option: str | None = None, note: str = "") -> str:
    """The local path of a file given as a local file, a local folder holding it, or a hub repository.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec (named in error messages).
    place : str
        A local file (used as is), a local folder holding ``filename``, or a hub id whose ``filename`` is
        fetched with :func:`hub_file`; where ``option`` is given, a one-part name (``bert-base-uncased``)
        is a hub id too.
    filename : str
        The file's name in a folder or hub repository.
    what : str
        What the file is, for error messages.
    revision : str or None, optional
        The hub revision.
    option : str or None, optional
        The spec option that names ``place``, for error messages.
    note : str, optional
        Passed to :func:`hub_file`.

    Returns
    -------
    str
        The absolute path of the file.

    Raises
    ------
    InputError
        If a folder lacks ``filename``, ``place`` is neither a path nor a hub id, or the hub file cannot be
        had (:func:`hub_file`).
    """
    p = Path(os.path.expanduser(place))
    if p.is_file():
        return str(p.resolve())
    if p.is_dir():
        f = p / filename
        if not f.is_file():
            raise InputError(f"metric {spec.raw!r}: the folder {place!r} has no {what} file {filename!r}")
        return str(f.resolve())
    if is_hub_id(place) or (option and "/" not in place and not place.startswith((".", "~"))):
        # a hub id; a one-part name too where an option names another repository (bert-base-uncased)
        return hub_file(spec, place, filename, revision, what, option, note)
    raise InputError(f"metric {spec.raw!r}: no file or folder {place!r} and not a hub id (owner/name)")


def file_identity(path: str, repo: str | None = None, revision: str | None = None) -> dict:
    """Config entries naming a checkpoint file exactly, for a metric's ``config``.

    Parameters
    ----------
    path : str
        The file's local path.
    repo : str or None, optional
        The hub repository it came from; None for a local file.
    revision : str or None, optional
        The hub revision it came from (recorded as ``main`` when None).

    Returns
    -------
    dict
        ``{"repo", "file" (base name), "revision", "fingerprint"}`` for a hub file, or ``{"file" (absolute
        path), "fingerprint"}`` for a local one.
    """
    if repo:
        return {"repo": repo, "file": os.path.basename(path), "revision": revision or "main",
                "fingerprint": file_fingerprint(path)}
    return {"file": os.path.abspath(path), "fingerprint": file_fingerprint(path)}


__all__ = ["hub_file", "local_or_hub_file", "file_identity"]
