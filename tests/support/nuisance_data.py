"""Generated SEG datasets for the nuisance tests (written by the tests, never bundled)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

PROMPTS = ["a red apple on a wooden table", "two blue birds sitting on a fence", "a yellow taxi in the rain",
           "a small dog under a green umbrella"]


def write_height_dataset(folder: Path, n_segs: int = 4, seed: int = 0) -> Path:
    """A SEG dataset whose images get taller with the error level (48 + 10 x level pixels, plus 0-3 per
    image) and textured, so that every level's heights lie apart: nodes 0, 1a, 1b, 2 (2 images each, 3 in
    node 2), JPEGs except one PNG per SEG."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for s in range(n_segs):
        k = 0
        for label, n in (("0", 2), ("1a", 2), ("1b", 2), ("2", 3)):
            level = int(label[0])
            for _ in range(n):
                h, w = 48 + 10 * level + k % 4, 40 + 3 * s
                base = np.array([200 - 40 * level, 90 + 30 * s, 60 + 20 * level], dtype=np.float64)
                arr = np.clip(base + rng.normal(0, 25, size=(h, w, 3)), 0, 255).astype(np.uint8)
                ext = "png" if k == 0 else "jpg"
                fn = f"images/{s:03d}-{k:02d}.{ext}"
                Image.fromarray(arr).save(folder / fn, **({} if ext == "png" else {"quality": 90}))
                lines.append(f'{s},"{PROMPTS[s % len(PROMPTS)]}",{fn},gen,{label}')
                k += 1
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder
