"""Model ids, content fingerprints and ``from_pretrained`` error handling.

A model is named by a hub id (``owner/name``) or a local folder (:func:`check_model_id`). A metric's config
names its model exactly (:func:`model_identity`): a hub model by its commit, a local folder by a content
fingerprint (:func:`folder_fingerprint`), so that the score cache tells two different weights apart.
Loading goes through :func:`hf_load`, which turns every ``from_pretrained`` failure into one
:class:`~ts2viz.errors.InputError` line, and fails within seconds when the hub does not answer and the
model is not cached (:func:`ts2viz.hub.reachable`, :func:`check_hub_model_available`). What is a hub id,
offline mode and the probe are :mod:`ts2viz.hub`'s.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from ...errors import InputError
from ...hub import is_hub_id, offline, reachable
from .spec import Spec

# -- model ids -------------------------------------------------------------------------------------

def is_local_model(model: str) -> bool:
    """Whether ``model`` names an existing local folder (``~`` expanded).

    Parameters
    ----------
    model : str
        A model name: a folder or a hub id.

    Returns
    -------
    bool
        True if it is a folder on this machine.

    Examples
    --------
    >>> import tempfile
    >>> is_local_model(tempfile.gettempdir()), is_local_model("openai/clip-vit-base-patch32")
    (True, False)
    """
    return Path(os.path.expanduser(model)).is_dir()


def check_model_id(spec: Spec) -> str:
    """The model folder or hub id of ``spec``; :class:`InputError` if it is neither.

    Parameters
    ----------
    spec : Spec
        The parsed spec.

    Returns
    -------
    str
        The folder's absolute path (``~`` expanded) if ``spec.model`` is an existing folder, else the hub id
        as given.

    Raises
    ------
    InputError
        If ``spec.model`` is no existing folder and not of the form ``owner/name`` (or ``name``).

    Examples
    --------
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> check_model_id(parse_spec("clipscore:openai/clip-vit-base-patch32"))
    'openai/clip-vit-base-patch32'
    >>> check_model_id(parse_spec("clipscore:./no/such/folder"))
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'clipscore:./no/such/folder': no model folder ... and not a hub id (owner/name)
    """
    m = spec.model
    if is_local_model(m):
        return str(Path(os.path.expanduser(m)).resolve())
    if not is_hub_id(m, one_part=True):
        raise InputError(f"metric {spec.raw!r}: no model folder {m!r} and not a hub id (owner/name)")
    return m


def folder_fingerprint(folder: str | os.PathLike) -> str:
    """A cheap content fingerprint of a local model folder.

    Small files are hashed whole; large weight files by size plus their first and last 64 KiB, which
    changes whenever the weights do without reading gigabytes on every load. Hidden files are skipped;
    the relative path and size of every file are hashed too.

    Parameters
    ----------
    folder : str or os.PathLike
        The model folder.

    Returns
    -------
    str
        16 hex digits (a truncated SHA-1).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "config.json").write_text("{}")
    >>> a = folder_fingerprint(d)
    >>> _ = (d / "config.json").write_text('{"x": 1}')
    >>> len(a), a != folder_fingerprint(d)
    (16, True)
    """
    h = hashlib.sha1()
    root = Path(folder)
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        size = p.stat().st_size
        h.update(f"{p.relative_to(root)}\0{size}\0".encode())
        with open(p, "rb") as f:
            if size <= 1 << 20:
                h.update(f.read())
            else:
                h.update(f.read(1 << 16))
                f.seek(-(1 << 16), os.SEEK_END)
                h.update(f.read())
    return h.hexdigest()[:16]


def file_fingerprint(path: str | os.PathLike) -> str:
    """A cheap content fingerprint of one file: its size, its first 64 KiB and (over 128 KiB) its last 64 KiB.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        16 hex digits (a truncated SHA-1).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "w.bin"
    >>> _ = f.write_bytes(b"weights")
    >>> len(file_fingerprint(f))
    16
    """
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.sha1(f"{size}\0".encode())
    with open(p, "rb") as f:
        h.update(f.read(1 << 16))
        if size > 1 << 17:
            f.seek(-(1 << 16), os.SEEK_END)
            h.update(f.read())
    return h.hexdigest()[:16]


def model_identity(model_id: str, revision: str | None, loaded_config=None) -> dict:
    """Config entries naming a transformers model exactly: id plus hub commit or local fingerprint.

    Parameters
    ----------
    model_id : str
        The hub id or local folder (as :func:`check_model_id` gives it).
    revision : str or None
        The revision asked for (hub models).
    loaded_config : transformers.PretrainedConfig, optional
        The loaded model's config; its ``_commit_hash`` (the commit actually loaded) is preferred to
        ``revision``.

    Returns
    -------
    dict
        ``{"model": model_id, "fingerprint": ...}`` for a local folder (:func:`folder_fingerprint`),
        ``{"model": model_id, "revision": ...}`` for a hub model (the commit, else ``revision``, else
        ``main``).

    Examples
    --------
    >>> model_identity("openai/clip-vit-base-patch32", None)
    {'model': 'openai/clip-vit-base-patch32', 'revision': 'main'}
    """
    ident: dict = {"model": model_id}
    if is_local_model(model_id):
        ident["fingerprint"] = folder_fingerprint(model_id)
    else:
        commit = getattr(loaded_config, "_commit_hash", None) if loaded_config is not None else None
        ident["revision"] = commit or revision or "main"
    return ident


#: what to do when a hub model cannot be had (said with every such failure)
OFFLINE_ADVICE = ("Offline? Give a local model folder instead (FAMILY:/path/to/folder, a model saved with "
                  "save_pretrained, e.g. clipscore:/models/clip-vit-base-patch32), or load the model once while "
                  "the hub is reachable")
def _not_available(spec: Spec, what: str, model_id: str, unreachable: bool) -> InputError:
    why = "the Hugging Face hub does not answer" if unreachable else "offline mode (HF_HUB_OFFLINE is set)"
    return InputError(f"metric {spec.raw!r}: cannot load {what} {model_id!r} from the Hugging Face hub: "
                      f"{why}, and it is not in the local hub cache. {OFFLINE_ADVICE}")


def _in_hub_cache(model_id: str) -> bool:
    """Whether the local hub cache holds anything of the model ``model_id``; no file is read.

    That is, its ``models--OWNER--NAME`` folder exists in huggingface_hub's cache or a ``TRANSFORMERS_CACHE``.
    """
    import huggingface_hub.constants as hub_constants

    folder = "models--" + model_id.replace("/", "--")
    roots = [hub_constants.HF_HUB_CACHE, os.environ.get("TRANSFORMERS_CACHE")]
    return any(r and (Path(os.path.expanduser(r)) / folder).exists() for r in roots)


def check_hub_model_available(spec: Spec, options: dict | None = None) -> None:
    """Fail at once if ``spec``'s model is a hub id that cannot be had.

    It cannot be had when the hub does not answer (one short probe, :func:`ts2viz.hub.reachable`) or offline
    mode is on (:func:`ts2viz.hub.offline`), and the local hub cache holds nothing of it. Called before a
    family's module is imported: the first
    failure then takes the probe (a second at most), not the import of torch and transformers (tens of
    seconds on a busy machine).

    Anything else (a local folder, an open_clip model, not an ``owner/name`` id, a model with something
    in the cache, ``local_files_only`` or ``cache_dir`` options) is left to the family's own loading,
    which says precisely what is wrong (:func:`hf_load`).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    options : dict or None, optional
        Options given besides the spec's own (they win over the spec's).

    Raises
    ------
    InputError
        If the model is a hub id, the hub cannot be reached (or offline mode is on) and the local hub
        cache has nothing of it; the message says how to work offline (:data:`OFFLINE_ADVICE`).
    """
    opts = {**spec.options, **(options or {})}
    m = spec.model
    if spec.is_openclip or opts.get("cache_dir") or opts.get("local_files_only") or is_local_model(m):
        return
    if not is_hub_id(m, one_part=True):
        return
    off = offline()
    if (not off and reachable()) or _in_hub_cache(m):
        return
    raise _not_available(spec, "model", m, unreachable=not off)


def hf_load(what: str, fn: Callable, model_id: str, spec: Spec, **kwargs):
    """Call a ``from_pretrained``-style ``fn`` and turn every failure into one clear :class:`InputError`.

    A hub model on a network where the hub does not answer (one short probe, :func:`ts2viz.hub.reachable`) comes
    from the local hub cache only: it loads at once if cached and otherwise fails in seconds with advice,
    not after the hub client's retries (half a minute and more).

    Parameters
    ----------
    what : str
        What is loaded, for the message (``model``, ``tokenizer``, ``processor`` ...).
    fn : callable
        ``fn(model_id, **kwargs)``, e.g. ``AutoModel.from_pretrained``.
    model_id : str
        The hub id or local folder.
    spec : Spec
        The metric's parsed spec (named in the message).
    **kwargs
        Passed to ``fn`` (``local_files_only=True`` is added when the hub does not answer).

    Returns
    -------
    object
        What ``fn`` returns.

    Raises
    ------
    InputError
        If ``fn`` fails with an ``OSError``, ``ValueError``, ``KeyError`` or ``ImportError`` (the first line
        of its message, and whether the model is a local folder or a hub model), or raises an
        :class:`InputError` itself.
    """
    hub = not is_local_model(model_id)
    off = offline()
    unreachable = hub and not off and not kwargs.get("local_files_only") and not reachable()
    if unreachable or (hub and off):
        kwargs = {**kwargs, "local_files_only": True}
    try:
        return fn(model_id, **kwargs)
    except InputError:
        raise
    except (OSError, ValueError, KeyError, ImportError, EnvironmentError) as e:
        if hub and (off or unreachable):
            raise _not_available(spec, what, model_id, unreachable) from e
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        where = "local folder" if not hub else "hub model (not found? expected a hub id owner/name or a local folder)"
        raise InputError(f"metric {spec.raw!r}: cannot load {what} from {where} {model_id!r}: {msg[:300]}") from e


def declared_tokenizer_class(model_id: str, default=None):
    """The transformers tokenizer class a checkpoint folder's ``tokenizer_config.json`` names, else ``default``.

    The class is the config's ``tokenizer_class`` (e.g. ``LlamaTokenizer`` for ``liuhaotian/llava-v1.5-*``;
    a ``...Fast`` name falls back to the slow class if transformers has no fast one). transformers 5's ``AutoTokenizer`` may pick the checkpoint's model type's tokenizer instead (for
    LLaVA's own layout a generic one that drops SentencePiece's dummy prefix), which tokenises differently
    from the class the model was trained with; the declared class tokenises as that class did.

    Parameters
    ----------
    model_id : str
        A local checkpoint folder (a hub id has no ``tokenizer_config.json`` here and gets ``default``).
    default : type, optional
        The class when none is declared or it is unknown; None: ``transformers.AutoTokenizer``.

    Returns
    -------
    type
        A transformers tokenizer class (it has ``from_pretrained``).
    """
    import json

    import transformers

    default = default or transformers.AutoTokenizer
    path = Path(model_id) / "tokenizer_config.json"
    if not path.is_file():
        return default
    try:
        name = str(json.loads(path.read_text(encoding="utf-8")).get("tokenizer_class") or "")
    except (OSError, ValueError):
        return default
    cls = getattr(transformers, name, None) or getattr(transformers, name.removesuffix("Fast"), None)
    return cls if cls is not None and hasattr(cls, "from_pretrained") else default
