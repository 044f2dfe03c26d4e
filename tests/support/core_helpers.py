"""Small builders shared by the core tests."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ts2viz.dataset import ImageRow, Dataset
from ts2viz.scores import Scores
from ts2viz.seg import build_seg, parse_label


def make_dataset(spec: dict[int, dict[str, int]], partition="Synth", edges=None) -> Dataset:
    """spec: {seg_id: {label: n_images}} -> Dataset with file names 'S-label-i.jpg'."""
    segs, rows = {}, []
    for sid, nodes in spec.items():
        items = []
        for label, n in nodes.items():
            for i in range(n):
                fn = f"{sid}-{label}-{i}.jpg"
                items.append((fn, "SDX", label))
                rows.append(ImageRow(sid, fn, f"prompt {sid}", "SDX", label, parse_label(label), partition))
        segs[sid] = build_seg(sid, f"prompt {sid}", partition, items,
                              edges=None if edges is None else edges.get(sid))
    return Dataset("test", segs, rows)


def make_scores(ds: Dataset, values: dict[str, dict[str, float]] | dict[str, np.ndarray],
                lower=()) -> Scores:
    names = ds.file_names
    metrics = list(values)
    cols = []
    for m in metrics:
        v = values[m]
        cols.append([v[f] for f in names] if isinstance(v, dict) else list(v))
    return Scores(names, metrics, np.array(cols, dtype=float).T, set(lower))


def write_folder(root: Path, rows: list[dict], images: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    cols = ["id", "target_prompt", "file_name", "image_source", "rank"]
    with open(root / "metadata.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols + [c for c in rows[0] if c not in cols])
        w.writeheader()
        w.writerows(rows)
    if images:
        from PIL import Image

        for r in rows:
            p = root / r["file_name"]
            p.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (8, 8), (int(r["id"]) * 40 % 255, 100, 150)).save(p)
    return root


#: a small SEG dataset's metadata rows (two SEGs, one skipping level 1)
ROWS = [
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-00.jpg", "image_source": "SD2.1", "rank": "0"},
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-01.jpg", "image_source": "SD2.0", "rank": "1a"},
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-02.jpg", "image_source": "SD2.0", "rank": "1b"},
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-03.jpg", "image_source": "SD2.0", "rank": "2"},
    {"id": 1, "target_prompt": "two dogs", "file_name": "images/001-00.jpg", "image_source": "Natural", "rank": "0"},
    {"id": 1, "target_prompt": "two dogs", "file_name": "images/001-01.jpg", "image_source": "Natural", "rank": "2a"},
]


def _fake_hub_cache(root, repo="me/tiny"):
    base = root / ("datasets--" + repo.replace("/", "--"))
    snap = base / "snapshots" / ("a" * 40)
    write_folder(snap, ROWS)
    (base / "refs").mkdir(parents=True)
    (base / "refs" / "main").write_text("a" * 40)
    return root
