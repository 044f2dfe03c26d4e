"""Import t2v_metrics 3.0's model modules without running its package ``__init__`` files.

``import t2v_metrics`` checks for an ``ffmpeg`` binary and imports every model module of the package
(video models included: PerceptionLM needs xformers' compiled operators, Tarsier and InternVideo2 more).
The image models the fixtures use need none of that, so this module registers the three package
levels (``t2v_metrics``, ``t2v_metrics.models``, ``t2v_metrics.models.<kind>_models``) as plain package
objects pointing at the installed folders and imports only the model module asked for. Every line of
scoring code that runs is t2v_metrics' own, unchanged.

Run in the side venv only (tools/reference/t2v_metrics/setup_side_venv.sh).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

PACKAGES = ("", "models", "models/vqascore_models", "models/clipscore_models", "models/itmscore_models")


_ROOT: Path | None = None


def package_root() -> Path:
    global _ROOT
    if _ROOT is not None:
        return _ROOT
    spec = importlib.util.find_spec("t2v_metrics")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("t2v_metrics is not installed in this interpreter (run setup_side_venv.sh)")
    _ROOT = Path(list(spec.submodule_search_locations)[0])
    return _ROOT


def _register_packages() -> None:
    root = package_root()
    for sub in PACKAGES:
        name = "t2v_metrics" + ("." + sub.replace("/", ".") if sub else "")
        if name in sys.modules:
            continue
        mod = types.ModuleType(name)
        mod.__path__ = [str(root / sub)] if sub else [str(root)]
        mod.__package__ = name
        mod.__file__ = str((root / sub / "__init__.py") if sub else root / "__init__.py")
        sys.modules[name] = mod


def model_module(name: str):
    """``t2v_metrics.models.<name>`` (e.g. ``vqascore_models.clip_t5_model``), its package __init__ files skipped."""
    _register_packages()
    return importlib.import_module("t2v_metrics.models." + name)


def version() -> str:
    from importlib.metadata import version as v

    return v("t2v_metrics")
