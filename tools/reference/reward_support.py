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


#: (file name, mode, width, height, prompt): one image per Pillow mode the originals read differently
#: (issue 39, item 9), written by :func:`write_mode_images`; sizes so that every family resizes them
MODE_IMAGES = [
    ("l.png", "L", 72, 48, "a red cat sitting on a tree"),
    ("la.png", "LA", 50, 80, "a red cat sitting on a tree"),
    ("rgba.png", "RGBA", 96, 64, "two blue dogs with a teddy bear"),
    ("p.png", "P", 64, 96, "two blue dogs with a teddy bear"),
    ("i16.png", "I;16", 80, 60, "the green tree with lights, at night, in the snow"),
    ("cmyk.jpg", "CMYK", 70, 50, "the green tree with lights, at night, in the snow"),
    ("exif.jpg", "RGB", 60, 90, "a red cat sitting on a tree"),
]


def make_mode_image(mode: str, width: int, height: int, seed: int):
    """A deterministic image of ``mode`` made from :func:`make_image` (what each mode can hold that RGB cannot:
    a semi-transparent alpha ramp with other colours under it, a palette with a transparent index, 16-bit
    values over the whole range, CMYK ink)."""
    from PIL import Image

    rgb = make_image(width, height, seed)
    a = np.asarray(rgb).astype(np.float64)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    alpha = np.clip(255 * (0.15 + 0.85 * x / max(width - 1, 1)), 0, 255).astype(np.uint8)
    if mode == "L":
        return rgb.convert("L")
    if mode == "LA":
        grey = np.asarray(rgb.convert("L"))
        grey = np.where(alpha < 90, 255 - grey, grey).astype(np.uint8)  # other values under the transparent part
        return Image.fromarray(np.stack([grey, alpha], -1), "LA")
    if mode == "RGBA":
        under = np.where((alpha < 90)[..., None], 255 - a, a).astype(np.uint8)
        return Image.fromarray(np.concatenate([under, alpha[..., None]], -1), "RGBA")
    if mode == "P":
        p = rgb.quantize(colors=24, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        p.info["transparency"] = int(np.asarray(p)[0, 0])  # one palette entry transparent
        return p
    if mode == "I;16":
        v = (a[..., 0] * 0.3 + a[..., 1] * 0.59 + a[..., 2] * 0.11) / 255.0
        v16 = np.clip(v * 65535 + 40 * np.sin(x / 3.0), 0, 65535).astype(np.uint16)
        return Image.fromarray(v16)  # uint16 -> I;16
    if mode == "CMYK":
        return rgb.convert("CMYK")
    if mode == "RGB":
        return rgb
    raise ValueError(mode)


def write_mode_images(folder: Path) -> list[dict]:
    """Write :data:`MODE_IMAGES` into ``folder/images`` (the JPEG ``exif.jpg`` with EXIF orientation 6, "rotate
    90 clockwise to view") and return rows ``{"image", "mode", "prompt"}``."""
    from PIL import Image

    (folder / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for k, (name, mode, w, h, prompt) in enumerate(MODE_IMAGES):
        im = make_mode_image(mode, w, h, seed=200 + k)
        path = folder / "images" / name
        if name == "exif.jpg":
            exif = Image.Exif()
            exif[0x0112] = 6
            im.save(path, quality=92, exif=exif)
        elif name.endswith(".jpg"):
            im.save(path, quality=92)
        else:
            im.save(path)
        with Image.open(path) as back:
            assert back.mode == mode, (name, back.mode)
        rows.append({"image": f"images/{name}", "mode": mode, "prompt": prompt})
    return rows


def ts2viz_reading_copy(path: Path, out: Path) -> Path:
    """An RGB PNG of the image at ``path`` as ``image_mode=ts2viz`` reads it, made here independently of
    ts2viz's code: 16-bit values scaled to 8 bits (``floor(v / 257 + 0.5)``), every other mode through
    Pillow's ``convert("RGB")``; no EXIF rotation. The original's score of this copy is what ts2viz must give
    with ``image_mode=ts2viz``."""
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        if im.mode.startswith("I;16"):
            v = np.floor(np.asarray(im, dtype=np.float64) / 257.0 + 0.5).astype(np.uint8)
            rgb = Image.fromarray(v).convert("RGB")  # uint8 -> L
        else:
            rgb = im.convert("RGB")
    out.parent.mkdir(parents=True, exist_ok=True)
    rgb.save(out)
    return out


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
