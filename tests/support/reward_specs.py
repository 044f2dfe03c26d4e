"""Specs of the preference-reward families on their tiny checkpoints (the reference fixtures, which are tiny
random-weight models in the released layouts), and a SEG dataset of the fixtures' own images and prompts."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

from reward_fixtures import fixture


def reward_specs() -> dict[str, str]:
    """family -> spec of the family on its fixture checkpoint (every file it needs named by a local path)."""
    ps, _ = fixture("pickscore")
    h2, e2 = fixture("hpsv2")
    ir, eir = fixture("imagereward")
    h3, e3 = fixture("hpsv3")
    return {
        "pickscore": f"pickscore:{ps / 'PickScore_v1'}?processor={ps / 'CLIP-ViT-H-14-laion2B-s32B-b79K'}",
        "hpsv2": f"hpsv2:{h2 / e2['checkpoints']['v2.1']}?arch={h2 / e2['arch']}",
        "imagereward": f"imagereward:{ir / 'ImageReward'}?tokenizer={ir / eir['tokenizer']}",
        "hpsv3": f"hpsv3:{h3 / 'HPSv3'}?base={h3 / e3['base']}",
    }


def fixture_seg_dataset(folder: Path) -> Path:
    """A SEG dataset of the fixtures' five images (the same in every fixture), one SEG per prompt: the first
    image of a prompt at error level 0, the next at level 1."""
    root, exp = fixture("pickscore")
    (folder / "images").mkdir(parents=True, exist_ok=True)
    seg: dict[str, int] = {}
    rows = []
    for r in exp["rows"]:
        sid = seg.setdefault(r["prompt"], len(seg))
        level = sum(1 for x in rows if x["id"] == sid)
        shutil.copy(root / r["image"], folder / r["image"])
        rows.append({"id": sid, "target_prompt": r["prompt"], "file_name": r["image"], "image_source": "fixture",
                     "rank": "0" if level == 0 else f"{level}a"})
    with open(folder / "metadata.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return folder


#: the hub repositories the field's model names resolve to, and the fixture folder each holds
HUB_LAYOUT = {
    "yuvalkirstain/PickScore_v1": ("pickscore", "PickScore_v1"),
    "laion/CLIP-ViT-H-14-laion2B-s32B-b79K": ("pickscore", "CLIP-ViT-H-14-laion2B-s32B-b79K"),
    "THUDM/ImageReward": ("imagereward", "ImageReward"),
    "bert-base-uncased": ("imagereward", "bert-base-uncased"),
    "MizzenAI/HPSv3": ("hpsv3", "HPSv3"),
    "Qwen/Qwen2-VL-7B-Instruct": ("hpsv3", "Qwen2-VL-7B-Instruct"),
}


def hub_cache_with_fixtures(cache: Path) -> Path:
    """A Hugging Face hub cache (``HF_HUB_CACHE``) holding the fixtures under the hub ids the field's model
    names resolve to (as ``huggingface_hub`` lays out a download: ``models--OWNER--NAME/snapshots/COMMIT``),
    ``xswu/HPSv2`` with the v2.1 checkpoint only."""
    import hashlib

    def lay(repo: str, files: list[Path]) -> None:
        commit = hashlib.sha1(repo.encode()).hexdigest()
        base = cache / ("models--" + repo.replace("/", "--"))
        snap = base / "snapshots" / commit
        snap.mkdir(parents=True, exist_ok=True)
        for f in files:
            shutil.copy(f, snap / f.name)
        (base / "refs").mkdir(parents=True, exist_ok=True)
        (base / "refs" / "main").write_text(commit)

    for repo, (family, sub) in HUB_LAYOUT.items():
        root, _ = fixture(family)
        lay(repo, sorted(p for p in (root / sub).iterdir() if p.is_file()))
    h2, e2 = fixture("hpsv2")
    lay("xswu/HPSv2", [h2 / e2["checkpoints"]["v2.1"]])
    return cache
