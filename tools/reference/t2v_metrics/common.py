"""Shared parts of the t2v_metrics fixture scripts (side venv only): images, the fake hub cache, output."""
from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
OUT = REPO / "tests" / "fixtures" / "reference" / "vqascore"
IMAGES = OUT / "images"
PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights",
           # longer than BLIP-2's 35 text tokens: truncation counts
           "a small red cat with green eyes sits on the lowest branch of a tall old tree while two blue dogs and "
           "a brown teddy bear wait below next to a wooden bench under bright string lights on a cold winter night"]
#: (file name, width, height): one wide, one tall, one square image
IMAGE_SPECS = [("wide.png", 72, 48), ("tall.png", 40, 64), ("square.png", 56, 56)]
#: one image whose sides are no multiples of 28 and above 1280 tokens of 28 x 28 (where qwen_vl_utils resizes
#: before Qwen2-VL's processor does; used by the Qwen2-VL fixture only)
LARGE_SPEC = ("large.png", 1130, 1010)
PACKAGES = ("t2v_metrics", "torch", "torchvision", "transformers", "tokenizers", "sentencepiece", "numpy", "Pillow",
            "timm", "qwen-vl-utils", "openai", "tiktoken", "llava")


def hf_home() -> Path:
    """The side venv's own hub cache (``HF_HOME``), where the tiny stand-ins of hub repos that t2v_metrics
    names in its code (``openai/clip-vit-large-patch14-336``, ``bert-base-uncased``) are put."""
    return Path(os.environ["HF_HOME"])


def put_in_hub_cache(repo_id: str, folder: Path) -> None:
    """Copy ``folder`` into the hub cache as the snapshot of ``repo_id`` (read offline by from_pretrained)."""
    base = hf_home() / "hub" / ("models--" + repo_id.replace("/", "--"))
    commit = "0" * 40
    snap = base / "snapshots" / commit
    if snap.exists():
        shutil.rmtree(snap)
    shutil.copytree(folder, snap)
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / "main").write_text(commit)


def make_large_image() -> Path:
    """:data:`LARGE_SPEC`: a smooth deterministic pattern (small as a PNG)."""
    import numpy as np
    from PIL import Image

    name, w, h = LARGE_SPEC
    y, x = np.mgrid[0:h, 0:w]
    arr = np.stack([(x * 255 // w), (y * 255 // h), ((x // 56 + y // 56) % 2) * 200], axis=-1).astype(np.uint8)
    p = IMAGES / name
    Image.fromarray(arr, "RGB").save(p, optimize=True)
    return p


def make_images() -> list[Path]:
    """Three deterministic RGB images (smooth gradients plus noise; wide, tall, square) as PNG files."""
    import numpy as np
    from PIL import Image

    IMAGES.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2024)
    paths = []
    for k, (name, w, h) in enumerate(IMAGE_SPECS):
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([x * 255 / w, y * 255 / h, (x + y + 40 * k) % 256], axis=-1)
        noise = rng.integers(-40, 41, size=(h, w, 3))
        arr = np.clip(base + noise, 0, 255).astype(np.uint8)
        p = IMAGES / name
        Image.fromarray(arr, "RGB").save(p)
        paths.append(p)
    return paths


def pairs(images: list[Path]) -> list[tuple[Path, str]]:
    """Every image with every prompt."""
    return [(im, p) for im in images for p in PROMPTS]


def versions() -> dict:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            pass
    return out


def write_fixture(name: str, *, t2v_model: str, scores: list[dict], how: str, changes: list[str],
                  extra: dict | None = None) -> Path:
    """``expected.json`` (per-pair scores and what produced them) and ``provenance.json`` in OUT/name."""
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    expected = {"t2v_metrics_model": t2v_model, "scoring": how, "pairs": scores, **(extra or {})}
    (folder / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    prov = {"made_by": "tools/reference/t2v_metrics/make_fixtures.py " + name,
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "versions": versions(),
            "precision": "float32 on CPU",
            "changes_to_run_offline": changes,
            "note": "The scores are t2v_metrics 3.0's own forward() on this tiny random-weight checkpoint; "
                    "no t2v_metrics code is in this repository."}
    (folder / "provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    return folder


def rel(p: Path) -> str:
    return str(Path(p).relative_to(OUT))
