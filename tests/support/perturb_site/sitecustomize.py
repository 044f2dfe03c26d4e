"""Applies tests/support/perturb.py's perturbations (``TS2VIZ_TEST_PERTURB``) in every Python process
started while a perturbed test run is on: ``pytest --perturb=...`` puts this folder first on
PYTHONPATH. Does nothing otherwise, and imports nothing heavy (the settings wait for torch and
ts2viz's modules to be imported)."""
import os

if os.environ.get("TS2VIZ_TEST_PERTURB"):
    import importlib.util
    from pathlib import Path

    _spec = importlib.util.spec_from_file_location("_ts2viz_perturb", Path(__file__).resolve().parent.parent / "perturb.py")
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)
    _mod.apply(os.environ["TS2VIZ_TEST_PERTURB"], export=False)
