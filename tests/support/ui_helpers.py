"""A small image dataset and scores file for the app's tests (written by the tests, not bundled)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

PROMPTS = ["a red apple on a wooden table", "two blue birds sitting on a fence", "a yellow taxi in the rain"]
# node label -> images per node; levels 0..3, with branching at level 1 and 2
NODES = [("0", 2), ("1a", 3), ("1b", 2), ("2a", 2), ("2b", 2), ("3a", 2)]
EDGES = None  # implied: every node of level k connects to every node of the next level


def write_dataset(folder: Path, *, big_image: bool = True, nodes=NODES) -> Path:
    """metadata.csv + JPEGs: 3 SEGs (ids 0-2), 13 images each (with the default ``nodes``: (label, images)
    pairs); one image is 9,000 px wide."""
    from PIL import Image, ImageDraw

    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for s, prompt in enumerate(PROMPTS):
        k = 0
        for label, n in nodes:
            for _ in range(n):
                fn = f"images/{s:03d}-{k:02d}.jpg"
                level = int(label[0])
                hue = np.array([220 - 50 * level, 60 + 40 * s, 40 + 50 * level])
                w, h = (9000, 300) if (big_image and s == 0 and k == 0) else (160, 120)
                arr = np.clip(hue + rng.integers(-20, 20, size=(h, w, 3)), 0, 255).astype(np.uint8)
                im = Image.fromarray(arr)
                ImageDraw.Draw(im).text((8, 8), f"{s}:{label}:{k}", fill=(255, 255, 255))
                im.save(folder / fn, quality=85)
                lines.append(f'{s},"{prompt}",{fn},{["SD2.1", "DALL-E2", "SDXL"][k % 3]},{label}')
                k += 1
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


def write_scores(folder: Path, dataset_folder: Path) -> Path:
    """Scores for the dataset above: GoodScore falls with the error count, NoisyScore is random,
    ErrCount (lower is better) counts errors with noise."""
    import csv

    rng = np.random.default_rng(11)
    rows = list(csv.DictReader(open(Path(dataset_folder) / "metadata.csv", newline="")))
    out = Path(folder) / "scores.csv"
    with open(out, "w", newline="") as f:
        f.write("# ts2viz-scores lower_is_better=ErrCount\n")
        wr = csv.writer(f)
        wr.writerow(["file_name", "GoodScore", "NoisyScore", "ErrCount"])
        for r in rows:
            lv, seg = int(r["rank"][0]), int(r["id"])
            wr.writerow([r["file_name"], f"{0.9 - 0.2 * lv + rng.normal(0, 0.01 + 0.015 * seg):.4f}",
                         f"{rng.uniform(0, 1):.4f}", f"{lv + rng.normal(0, 0.4):.4f}"])
    return out
