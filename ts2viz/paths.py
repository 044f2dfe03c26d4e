"""Where the bundled data and the caches live."""
from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def bundled_data_dir() -> Path:
    """The ``data/`` folder: inside the installed package (wheel) or at the repository root (checkout).

    Returns
    -------
    pathlib.Path
        The folder holding ``ts2/metadata.csv``.

    Raises
    ------
    FileNotFoundError
        If neither place has the bundled data.
    """
    for cand in (_PKG / "_data", _PKG.parent / "data"):
        if (cand / "ts2" / "metadata.csv").is_file():
            return cand
    raise FileNotFoundError("ts2viz bundled data not found (expected data/ts2/metadata.csv)")


def assets_dir() -> Path:
    """The ``assets/`` folder (the app's CSS and images): inside the installed package or at the repository root.

    Returns
    -------
    pathlib.Path
        The folder (the checkout's path when neither exists).
    """
    for cand in (_PKG / "_assets", _PKG.parent / "assets"):
        if cand.is_dir():
            return cand
    return _PKG.parent / "assets"


def cache_dir() -> Path:
    """Root of ts2viz's on-disk caches (scores, thumbnails): ``$TS2VIZ_CACHE`` or ``~/.cache/ts2viz``.

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    env = os.environ.get("TS2VIZ_CACHE")
    p = Path(env).expanduser() if env else Path.home() / ".cache" / "ts2viz"
    return p
