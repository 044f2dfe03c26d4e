"""Shared helpers of the preference-reward fixture scripts (pickscore, hpsv2, imagereward, hpsv3).

These scripts run in side environments (see each family's README), never in the project's venv, and
never in CI. This module needs only numpy and Pillow.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "reference"

#: (file name, width, height, prompt): sizes chosen so that resizing, centre-cropping and padding all
#: do something (portrait, landscape, square, smaller and larger than the models' input sizes)
IMAGES = [
    ("a-landscape.png", 96, 64, "a red cat sitting on a tree"),
    ("b-portrait.png", 60, 110, "a red cat sitting on a tree"),
    ("c-square.png", 224, 224, "two blue dogs with a teddy bear"),
    ("d-wide.png", 250, 120, "two blue dogs with a teddy bear"),
    ("e-small.png", 40, 40, "the green tree with lights, at night, in the snow, " + ", ".join(
        f"with {n} red cats and {n} blue dogs" for n in ("one", "two", "three", "four", "five", "six", "seven",
                                                       "eight", "nine", "ten", "eleven", "twelve"))),
]


def make_image(width: int, height: int, seed: int):
    """A deterministic RGB image: colour gradients, a disc and a little noise (compresses well as PNG)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    c = rng.uniform(0.2, 1.0, size=(3, 3))
    img = np.stack([c[k, 0] * x / width + c[k, 1] * y / height + c[k, 2] * 0.3 for k in range(3)], -1)
    cx, cy, r = rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height, 0.25 * min(width, height)
    disc = (x - cx) ** 2 + (y - cy) ** 2 < r ** 2
    img[disc] = rng.uniform(0, 1, size=3)
    img = img / img.max() * 255 + rng.normal(0, 2, size=img.shape)
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB")


def write_images(folder: Path) -> list[dict]:
    """Write :data:`IMAGES` into ``folder/images`` and return rows ``{"image": relative path, "prompt"}``."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for k, (name, w, h, prompt) in enumerate(IMAGES):
        make_image(w, h, seed=100 + k).save(folder / "images" / name)
        rows.append({"image": f"images/{name}", "prompt": prompt})
    return rows


def fake_hub_cache(cache: Path, repo_id: str, files_from: Path, revision: str = "main") -> Path:
    """Lay ``files_from``'s files out as huggingface_hub's cache holds a downloaded ``repo_id``
    (``models--OWNER--NAME/snapshots/<commit>/`` and ``refs/<revision>``), so that an original's code
    that names a hub id (``from_pretrained("owner/name")``, ``hf_hub_download``) reads them with
    ``HF_HUB_OFFLINE=1`` and ``HF_HUB_CACHE=cache``, unchanged. Returns the snapshot folder."""
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    root = cache / ("models--" + repo_id.replace("/", "--"))
    snap = root / "snapshots" / commit
    if snap.exists():
        shutil.rmtree(snap)
    shutil.copytree(files_from, snap)
    (root / "refs").mkdir(parents=True, exist_ok=True)
    (root / "refs" / revision).write_text(commit)
    return snap


def versions(*names: str) -> dict:
    """Installed versions of the named distributions (recorded with every fixture)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for n in names:
        try:
            out[n] = version(n)
        except PackageNotFoundError:
            out[n] = None
    return out


def write_expected(folder: Path, payload: dict) -> None:
    (folder / "expected.json").write_text(json.dumps(payload, indent=1) + "\n")
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    print(f"{folder}: {total / 1e6:.2f} MB in all")
    assert total < 2.5e6, "a fixture should stay near 2 MB"


def clean(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def offline_env(cache: Path) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_CACHE"] = str(cache)
    os.environ["HUGGINGFACE_HUB_CACHE"] = str(cache)  # huggingface_hub < 0.17
    os.environ["TRANSFORMERS_CACHE"] = str(cache)     # transformers < 4.36
    os.environ["HF_HOME"] = str(cache.parent / "hf_home")
