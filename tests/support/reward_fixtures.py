"""Reading the preference-reward reference fixtures (tests/fixtures/reference/<family>/expected.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reference"

#: Per-image agreement with the original's own code, fp32 on the CPU. The fixtures were made with other
#: library versions (transformers 4.x, the originals' open_clip) and other batch shapes; the differences
#: seen are a few 1e-6 relative (float32 summation order). Any change of a formula (scale, normalisation,
#: preprocessing, tokenisation, a layer) moves these random-weight models' scores by far more than 1e-4.
RTOL = 1e-4


def fixture(family: str) -> tuple[Path, dict]:
    root = FIXTURES / family
    return root, json.loads((root / "expected.json").read_text())


def score_rows(metric, root: Path, rows: list[dict]) -> np.ndarray:
    return metric([str(root / r["image"]) for r in rows], [r["prompt"] for r in rows])


def assert_matches(got, want, what: str) -> None:
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-12)
    assert np.all(rel <= RTOL), f"{what}: relative differences {rel} exceed {RTOL} (got {got}, want {want})"


def assert_spread(want) -> None:
    """The expected scores differ between images by far more than :data:`RTOL`: a metric that returned one
    constant (or ignored the image) could not match them."""
    w = np.asarray(want, float)
    assert np.ptp(w) > 100 * RTOL * np.max(np.abs(w)), f"fixture scores too alike to test anything: {w}"
