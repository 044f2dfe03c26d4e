"""Model ids, content fingerprints, the Hugging Face hub probe and ``from_pretrained`` error handling."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from ...errors import InputError
from .spec import Spec

# -- model ids -------------------------------------------------------------------------------------

def is_local_model(model: str) -> bool:
    return Path(os.path.expanduser(model)).is_dir()


def check_model_id(spec: Spec) -> str:
    """The model folder or hub id of ``spec``; :class:`InputError` if it is neither."""
    m = spec.model
    if is_local_model(m):
        return str(Path(os.path.expanduser(m)).resolve())
    parts = m.split("/")
    if m.startswith((".", "/", "~")) or len(parts) > 2 or not all(parts):
        raise InputError(f"metric {spec.raw!r}: no model folder {m!r} and not a hub id (owner/name)")
    return m


def folder_fingerprint(folder: str | os.PathLike) -> str:
    """A cheap content fingerprint of a local model folder.

    Small files are hashed whole; large weight files by size plus their first and last 64 KiB, which
    changes whenever the weights do without reading gigabytes on every load.
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
    """Config entries naming a transformers model exactly: id plus hub commit or local fingerprint."""
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
#: seconds a hub probe's answer holds (a metric loads several files in a row: one probe for all of them)
HUB_PROBE_TTL = 30.0
_hub_probe: dict = {"endpoint": None, "until": 0.0, "up": True}


def hub_answers() -> bool:
    """Whether the Hugging Face hub answers (:func:`ts2viz.dataset.hub_reachable`, a few seconds at most),
    remembered for :data:`HUB_PROBE_TTL` seconds. Offline mode (``HF_HUB_OFFLINE``) is not asked about here."""
    import time

    import huggingface_hub.constants as hub_constants

    from ...dataset import hub_reachable

    if time.monotonic() >= _hub_probe["until"] or _hub_probe["endpoint"] != hub_constants.ENDPOINT:
        _hub_probe.update(endpoint=hub_constants.ENDPOINT, up=hub_reachable())
        _hub_probe["until"] = time.monotonic() + HUB_PROBE_TTL
    return _hub_probe["up"]


def _not_available(spec: Spec, what: str, model_id: str, unreachable: bool) -> InputError:
    why = "the Hugging Face hub does not answer" if unreachable else "offline mode (HF_HUB_OFFLINE is set)"
    return InputError(f"metric {spec.raw!r}: cannot load {what} {model_id!r} from the Hugging Face hub: "
                      f"{why}, and it is not in the local hub cache. {OFFLINE_ADVICE}")


def _in_hub_cache(model_id: str) -> bool:
    """Whether the local hub cache holds anything of the model ``model_id`` (its ``models--OWNER--NAME``
    folder, in huggingface_hub's cache or a ``TRANSFORMERS_CACHE``); no file is read."""
    import huggingface_hub.constants as hub_constants

    folder = "models--" + model_id.replace("/", "--")
    roots = [hub_constants.HF_HUB_CACHE, os.environ.get("TRANSFORMERS_CACHE")]
    return any(r and (Path(os.path.expanduser(r)) / folder).exists() for r in roots)


def check_hub_model_available(spec: Spec, options: dict | None = None) -> None:
    """:class:`InputError` at once if ``spec``'s model is a hub id that cannot be had: the hub does not
    answer (one short probe, :func:`hub_answers`) or offline mode is on, and the local hub cache holds
    nothing of it. Called before a family's module is imported: the first failure then takes the probe
    (a second at most), not the import of torch and transformers (tens of seconds on a busy machine).

    Anything else (a local folder, an open_clip model, not an ``owner/name`` id, a model with something
    in the cache, ``local_files_only`` or ``cache_dir`` options) is left to the family's own loading,
    which says precisely what is wrong (:func:`hf_load`).
    """
    opts = {**spec.options, **(options or {})}
    m = spec.model
    if spec.is_openclip or opts.get("cache_dir") or opts.get("local_files_only") or is_local_model(m):
        return
    parts = m.split("/")
    if m.startswith((".", "/", "~")) or len(parts) > 2 or not all(parts):
        return
    import huggingface_hub.constants as hub_constants

    offline = bool(hub_constants.HF_HUB_OFFLINE)
    if (not offline and hub_answers()) or _in_hub_cache(m):
        return
    raise _not_available(spec, "model", m, unreachable=not offline)


def hf_load(what: str, fn: Callable, model_id: str, spec: Spec, **kwargs):
    """Call a ``from_pretrained``-style ``fn`` and turn every failure into one clear :class:`InputError`.

    A hub model on a network where the hub does not answer (one short probe, :func:`hub_answers`) comes
    from the local hub cache only: it loads at once if cached and otherwise fails in seconds with advice,
    not after the hub client's retries (half a minute and more).
    """
    import huggingface_hub.constants as hub_constants

    hub = not is_local_model(model_id)
    offline = bool(hub_constants.HF_HUB_OFFLINE)
    unreachable = hub and not offline and not kwargs.get("local_files_only") and not hub_answers()
    if unreachable:
        kwargs = {**kwargs, "local_files_only": True}
    try:
        return fn(model_id, **kwargs)
    except InputError:
        raise
    except (OSError, ValueError, KeyError, ImportError, EnvironmentError) as e:
        if hub and (offline or unreachable):
            raise _not_available(spec, what, model_id, unreachable) from e
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        where = "local folder" if not hub else "hub model (not found? expected a hub id owner/name or a local folder)"
        raise InputError(f"metric {spec.raw!r}: cannot load {what} from {where} {model_id!r}: {msg[:300]}") from e


def declared_tokenizer_class(model_id: str, default=None):
    """The transformers tokenizer class a checkpoint folder's ``tokenizer_config.json`` names (``tokenizer_class``,
    e.g. ``LlamaTokenizer`` for ``liuhaotian/llava-v1.5-*``), else ``default`` (``AutoTokenizer``).

    transformers 5's ``AutoTokenizer`` may pick the checkpoint's model type's tokenizer instead (for
    LLaVA's own layout a generic one that drops SentencePiece's dummy prefix), which tokenises differently
    from the class the model was trained with; the declared class tokenises as that class did.
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
