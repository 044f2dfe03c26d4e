"""Reference fixture for ``oneig:``, made by OneIG-Bench's own alignment code (side venv only).

OneIG-Bench/OneIG-Benchmark (commit 41b4983; no licence, so nothing of it is copied here) scores alignment in
``scripts/alignment/alignment_score.py``: ``alignment_score`` cuts the grid image with ``scripts/utils/utils.py``
``split_mxn_grid`` (an all-black cell dropped, each cell saved as JPEG), asks every question of the prompt
through ``scripts/utils/inference.py`` ``Qwen2_5VLBatchInferencer.infer_semantic`` and applies its ``"Yes"`` and
parent rules. Importing the module loads ``Qwen/Qwen2.5-VL-7B-Instruct``: a tiny random-weight Qwen2.5-VL in the
released (flat, transformers 4.50) layout is put in the side hub cache under that id.

The tiny model: the weights, tokenizer and processor files of the t2v_metrics 3.1 fixture
(``tests/fixtures/reference/vqascore/qwen2.5-vl-3.1/qwen2.5-vl-tiny``), its config written by transformers 4.50's
``Qwen2_5_VLConfig``, and the output rows of ``Yes``, ``No``, `` Yes`` (``ĠYes``) and ``<|im_end|>`` set by
:func:`sharpen` from the model's own last hidden states on the fixture's cells and questions, so that its
answers are ``Yes`` on some cells, ``No`` on others and `` Yes`` (not OneIG's exact ``"Yes"``) on a few, each
followed by the end token. The grids (``images/``), questions (``object.json``, OneIG's ``Q_D`` layout) and
prompts (``prompts.csv``, ``OneIG-Bench.csv``'s layout) are written here for the fixture.

Writes ``tests/fixtures/reference/oneig/``: the checkpoint, the inputs, ``expected.json`` (per grid the answers
per question and cell as ``infer_semantic`` returned them, and ``alignment_score``'s score) and
``provenance.json``. float32 on the CPU, eager attention (OneIG: bfloat16, flash-attention 2, CUDA).

Usage (from the repository root, after setup_side_venv.sh)::

    tools/reference/oneig/run.sh
"""
from __future__ import annotations

import csv
import json
import os
import platform
import shutil
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FIX = REPO / "tests" / "fixtures" / "reference" / "oneig"
BASE = REPO / "tests" / "fixtures" / "reference" / "vqascore" / "qwen2.5-vl-3.1" / "qwen2.5-vl-tiny"
CKPT = FIX / "qwen2.5-vl-tiny"
COMMIT = "41b4983"
HUB_ID = "Qwen/Qwen2.5-VL-7B-Instruct"
CATEGORY = "General_Object"

#: prompt id -> (prompt, questions, dependencies), in OneIG's Q_D layout (parent 0: none); chains two deep and a
#: question with two parents, so that the direct parent rule is told apart from a transitive one
PROMPTS = {
    "000": ("a red apple on a wooden table next to a blue cup",
            {1: "Is there an apple?", 2: "Is the apple red?", 3: "Is the apple on a table?", 4: "Is the table wooden?",
             5: "Is there a cup?", 6: "Is the cup blue?", 7: "Is the cup next to the apple?"},
            {1: [0], 2: [1], 3: [1], 4: [3], 5: [0], 6: [5], 7: [1, 5]}),
    "001": ("a green bird sitting on a yellow fence under the sun",
            {1: "Is there a bird?", 2: "Is the bird green?", 3: "Is there a fence?", 4: "Is the fence yellow?",
             5: "Is the bird sitting on the fence?", 6: "Is there a sun?"},
            {1: [0], 2: [1], 3: [0], 4: [3], 5: [1, 3], 6: [0]}),
    "002": ("two white boats on a calm lake with mountains behind",
            {1: "Are there boats?", 2: "Are there two boats?", 3: "Are the boats white?", 4: "Is there a lake?",
             5: "Is the lake calm?", 6: "Are there mountains?", 7: "Are the mountains behind the lake?"},
            {1: [0], 2: [1], 3: [2], 4: [1], 5: [4], 6: [0], 7: [6]}),
    "003": ("a purple kite flying over a beach",
            {1: "Is there a kite?", 2: "Is the kite purple?", 3: "Is the kite flying?", 4: "Is there a beach?",
             5: "Is the kite over the beach?"},
            {1: [0], 2: [1], 3: [2], 4: [0], 5: [3, 4]}),
}

#: grid file -> (prompt id, (m columns, n rows), size, index of an all-black cell or None)
GRIDS = {
    "000.png": ("000", (2, 2), (112, 112), None),
    "001.png": ("001", (2, 2), (115, 113), 1),     # sides not multiples of the grid: OneIG's floor division
    "002.png": ("002", (2, 2), (112, 112), None),
    "003.png": ("003", (4, 1), (224, 56), None),   # four columns, one row (OneIG's image_grid "4,1")
}


def versions() -> dict:
    out = {"python": platform.python_version()}
    for p in ("torch", "torchvision", "transformers", "tokenizers", "qwen-vl-utils", "numpy", "Pillow", "accelerate"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            pass
    return out


def draw_grid(name: str, seed: int) -> Path:
    """A grid of drawn cells (a background colour, a rectangle and an ellipse each), one cell black if asked."""
    pid, (m, n), (w, h), black = GRIDS[name]
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", (w, h))
    cw, ch = w // m, h // n
    for k in range(m * n):
        i, j = divmod(k, m)
        # ImageDraw's boxes include their last row and column
        box = (j * cw, i * ch, ((j + 1) * cw if j < m - 1 else w) - 1, ((i + 1) * ch if i < n - 1 else h) - 1)
        if k == black:
            continue   # stays (0, 0, 0)
        d = ImageDraw.Draw(im)
        d.rectangle(box, fill=tuple(int(v) for v in rng.integers(20, 236, 3)))
        x0, y0 = box[0] + int(rng.integers(2, 14)), box[1] + int(rng.integers(2, 14))
        d.rectangle((x0, y0, x0 + int(rng.integers(10, 30)), y0 + int(rng.integers(10, 30))),
                    fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
        x1, y1 = box[0] + int(rng.integers(16, 30)), box[1] + int(rng.integers(16, 30))
        d.ellipse((x1, y1, x1 + int(rng.integers(8, 22)), y1 + int(rng.integers(8, 22))),
                  fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    p = FIX / "images" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    im.save(p, optimize=True)
    return p


def write_inputs() -> None:
    FIX.mkdir(parents=True, exist_ok=True)
    qd = {pid: {"question": json.dumps({str(k): v for k, v in q.items()}),
                "dependency": json.dumps({str(k): v for k, v in d.items()})} for pid, (_, q, d) in PROMPTS.items()}
    (FIX / "object.json").write_text(json.dumps(qd, indent=1) + "\n")
    with open(FIX / "prompts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["category", "id", "prompt_en", "type", "prompt_length", "class"])
        for pid, (prompt, _, _) in PROMPTS.items():
            w.writerow([CATEGORY, pid, prompt, "NP", "short", ""])
    for k, name in enumerate(GRIDS):
        draw_grid(name, 390 + k)


def build_checkpoint(folder: Path) -> None:
    """The t2v_metrics 3.1 fixture's tiny Qwen2.5-VL in transformers 4.50's layout (config, weights, files)."""
    from safetensors.torch import load_file
    from transformers import GenerationConfig, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    base = json.loads((BASE / "config.json").read_text())
    t, v = base["text_config"], base["vision_config"]
    cfg = Qwen2_5_VLConfig(
        vocab_size=t["vocab_size"], hidden_size=t["hidden_size"], intermediate_size=t["intermediate_size"],
        num_hidden_layers=t["num_hidden_layers"], num_attention_heads=t["num_attention_heads"],
        num_key_value_heads=t["num_key_value_heads"], max_position_embeddings=t["max_position_embeddings"],
        rms_norm_eps=t["rms_norm_eps"], rope_theta=t["rope_theta"], tie_word_embeddings=False,
        rope_scaling={"type": "mrope", "mrope_section": t["rope_scaling"]["mrope_section"]},
        bos_token_id=t["bos_token_id"], eos_token_id=t["eos_token_id"],
        vision_config={k: v[k] for k in ("depth", "hidden_size", "intermediate_size", "num_heads", "out_hidden_size",
                                         "patch_size", "spatial_merge_size", "temporal_patch_size", "window_size",
                                         "fullatt_block_indexes", "tokens_per_second", "hidden_act", "in_channels")},
        vision_start_token_id=base["vision_start_token_id"], vision_end_token_id=base["vision_end_token_id"],
        vision_token_id=base["vision_token_id"], image_token_id=base["image_token_id"],
        video_token_id=base["video_token_id"], architectures=["Qwen2_5_VLForConditionalGeneration"],
        torch_dtype="float32")
    model = Qwen2_5_VLForConditionalGeneration(cfg)
    model.load_state_dict(load_file(str(BASE / "model.safetensors")), strict=True)
    if folder.exists():
        shutil.rmtree(folder)
    model.save_pretrained(folder)
    gen = json.loads((BASE / "generation_config.json").read_text())
    gen.pop("transformers_version", None)
    GenerationConfig(**gen).save_pretrained(folder)
    for f in BASE.iterdir():
        if f.name not in ("config.json", "model.safetensors", "generation_config.json"):
            shutil.copy(f, folder / f.name)


def put_in_hub_cache(repo_id: str, folder: Path) -> None:
    base = Path(os.environ["HF_HOME"]) / "hub" / ("models--" + repo_id.replace("/", "--"))
    snap = base / "snapshots" / ("0" * 40)
    if snap.exists():
        shutil.rmtree(snap)
    shutil.copytree(folder, snap)
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / "main").write_text("0" * 40)


def oneig_inputs(inf, paths: list[str], question: str) -> dict:
    """The inputs ``batch_inference`` builds for ``infer_semantic(paths, question)`` (for calibration only)."""
    from qwen_vl_utils import process_vision_info

    msgs = [[{"role": "user", "content": [{"type": "image", "image": p},
                                          {"type": "text", "text": f"{question}. Please answer 'Yes' or 'No' only."}]}]
            for p in paths]
    texts = [inf.processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in msgs]
    images, videos = process_vision_info(msgs)
    return inf.processor(text=texts, images=images, videos=videos, padding=True, return_tensors="pt")


def cells_of(utils, tmp: Path) -> dict[str, list[str]]:
    out = {}
    for name, (pid, grid, _, _) in GRIDS.items():
        d = tmp / name.split(".")[0]
        d.mkdir(parents=True, exist_ok=True)
        out[name] = utils.split_mxn_grid(str(FIX / "images" / name), grid, str(d))
    return out


def last_states(model, enc, extra: list[int] | None = None):
    """The final-norm hidden state at the last position (after ``extra`` tokens appended to every row)."""
    enc = dict(enc)
    if extra is not None:
        add = torch.tensor(extra).reshape(-1, 1)
        enc["input_ids"] = torch.cat([enc["input_ids"], add], 1)
        enc["attention_mask"] = torch.cat([enc["attention_mask"], torch.ones_like(add)], 1)
    with torch.no_grad():
        out = model(**enc, output_hidden_states=True)
    h = out.hidden_states[-1][:, -1].double()
    ref = (h.float() @ model.lm_head.weight.T)
    assert torch.allclose(ref, out.logits[:, -1].float(), atol=1e-4), "hidden_states[-1] is not lm_head's input"
    return h


def widest_gap(values: np.ndarray, lo: float, hi: float) -> float:
    """The middle of the widest gap between sorted ``values`` whose rank share lies in [lo, hi]."""
    s = np.sort(values)
    n = len(s)
    best, at = -1.0, float(np.median(s))
    for k in range(max(1, int(lo * n)), min(n - 1, int(hi * n)) + 1):
        if s[k] - s[k - 1] > best:
            best, at = s[k] - s[k - 1], 0.5 * (s[k] + s[k - 1])
    return at


def sharpen(inf, cells: dict[str, list[str]], scale: float = 40.0, share_space_yes: tuple = (0.12, 0.3)) -> dict:
    """Set the rows of Yes / No / ĠYes from the first-step states, and of <|im_end|> from the second-step states."""
    model, tok = inf.model, inf.processor.tokenizer
    ids = {w: tok.convert_tokens_to_ids(w) for w in ("Yes", "No", "ĠYes", "<|im_end|>")}
    encs = [oneig_inputs(inf, cells[name], q) for name, (pid, *_r) in GRIDS.items()
            for q in PROMPTS[pid][1].values()]
    H = torch.cat([last_states(model, e) for e in encs]).numpy()
    m = H.mean(0)
    _, _, vt = np.linalg.svd(H - m, full_matrices=False)
    mm = m / (m @ m)

    def centred(d):
        return d - (m @ d) * mm

    e1, e2 = centred(vt[0]), centred(vt[1])
    z1, z2 = H @ e1, H @ e2
    e1, e2 = e1 / z1.std(), e2 / z2.std()
    z1, z2 = H @ e1, H @ e2
    t1 = widest_gap(z1, 0.35, 0.65)
    c = z2 - np.abs(z1 - t1)
    t2 = widest_gap(c, 1 - share_space_yes[1], 1 - share_space_yes[0])
    W = model.lm_head.weight.data
    rows = {"Yes": scale * (e1 - t1 * mm), "No": -scale * (e1 - t1 * mm), "ĠYes": scale * (e2 - t2 * mm)}
    # ĠYes wins where z2 - t2 > |z1 - t1| (about the share asked); Yes / No split at t1
    for w, r in rows.items():
        W[ids[w]] = torch.tensor(r, dtype=W.dtype)
    # second step: after each answer token the end token
    H2 = torch.cat([last_states(model, e, [ids[w]] * e["input_ids"].shape[0]) for e in encs
                    for w in ("Yes", "No", "ĠYes")]).numpy()
    m2 = H2.mean(0)
    u = m2 - (m2 @ m) * mm
    others = H2 @ W.double().numpy().T
    need = float(np.max(others)) + 20.0
    W[ids["<|im_end|>"]] = torch.tensor(need * u / (m2 @ u), dtype=W.dtype)
    return {"t1": t1, "t2": t2, "scale": scale, "end_row_scale": need}


#: OneIG's main() over two "models": the 2x2 grids and the 4x1 one, each with its image_grid
MAIN_MODELS = {"grids-2x2": ("2,2", ["000.png", "001.png", "002.png"]), "grid-4x1": ("4,1", ["003.png"])}


def run_main(ev, run: Path) -> dict:
    """OneIG's ``main()`` in a folder laid out as it reads one (``scripts/alignment/Q_D/object.json``,
    ``images/object/<model>/<id>.png``): its per-model alignment and per-prompt table (NaN where a model has no
    image of the prompt)."""
    import pandas as pd

    (run / "scripts" / "alignment" / "Q_D").mkdir(parents=True)
    shutil.copy(FIX / "object.json", run / "scripts" / "alignment" / "Q_D" / "object.json")
    for model, (_, names) in MAIN_MODELS.items():
        (run / "images" / "object" / model).mkdir(parents=True)
        for n in names:
            shutil.copy(FIX / "images" / n, run / "images" / "object" / model / n)
    argv, cwd = sys.argv, os.getcwd()
    sys.argv = ["alignment_score.py", "--mode", "EN", "--image_dirname", str(run / "images"), "--model_names",
                *MAIN_MODELS, "--image_grid", *(g for g, _ in MAIN_MODELS.values()), "--class_items", "object"]
    try:
        os.chdir(run)
        ev.main()
    finally:
        sys.argv = argv
        os.chdir(cwd)
    total = pd.read_csv(next((run / "results").glob("alignment_score_EN_*.csv")), index_col=0)
    per = pd.read_csv(next((run / "results").glob("alignment_prompt_score_EN_*.csv")), index_col=0)
    return {"models": {m: {"image_grid": g, "images": [f"images/{n}" for n in names],
                           "alignment": float(total.loc[m, "alignment"]),
                           "per_prompt": {str(k): (None if pd.isna(v) else float(v)) for k, v in per[m].items()}}
                       for m, (g, names) in MAIN_MODELS.items()}}


def main() -> int:
    import importlib

    write_inputs()
    tmp = Path(tempfile.mkdtemp())
    build_checkpoint(tmp / "ckpt")
    put_in_hub_cache(HUB_ID, tmp / "ckpt")
    inference = importlib.import_module("scripts.utils.inference")
    init = inference.Qwen2_5VLBatchInferencer.__init__
    # OneIG's defaults are device="cuda", dtype=torch.bfloat16, use_flash_attention=True: CPU, float32, eager here
    init.__defaults__ = (HUB_ID, "cpu", torch.float32, False)
    ev = importlib.import_module("scripts.alignment.alignment_score")
    utils = importlib.import_module("scripts.utils.utils")
    cells = cells_of(utils, tmp / "cells")
    how = sharpen(ev.inferencer, cells)
    ev.inferencer.model.save_pretrained(tmp / "sharp")
    if CKPT.exists():
        shutil.rmtree(CKPT)
    shutil.copytree(tmp / "ckpt", CKPT)
    shutil.copy(tmp / "sharp" / "model.safetensors", CKPT / "model.safetensors")
    put_in_hub_cache(HUB_ID, CKPT)
    ev.inferencer = inference.Qwen2_5VLBatchInferencer()   # reloaded from the saved checkpoint

    record: list = []
    semantic = ev.inferencer.infer_semantic

    def logged(images_path, question):
        got = semantic(images_path, question)
        record.append({"question": question, "answers": got})
        return got

    ev.inferencer.infer_semantic = logged
    grids = []
    qd = json.loads((FIX / "object.json").read_text())
    for name, (pid, grid, _, black) in GRIDS.items():
        item = qd[pid]
        questions = {int(k): v for k, v in json.loads(item["question"]).items()}
        deps = {int(k): v for k, v in json.loads(item["dependency"]).items()}
        record.clear()
        cache = tmp / "run" / pid
        cache.mkdir(parents=True, exist_ok=True)
        score = ev.alignment_score([str(FIX / "images" / name)], questions, deps, grid, str(cache))
        answers = {str(k): r["answers"] for k, r in zip(questions, record)}
        assert [r["question"] for r in record] == list(questions.values())
        grids.append({"image": f"images/{name}", "prompt_id": pid, "prompt": PROMPTS[pid][0],
                      "cells": f"{grid[0]}x{grid[1]}", "black_cell": black, "answers": answers, "score": score})
        print(name, score, answers, file=sys.stderr)
    totals = run_main(ev, tmp / "main")
    exp = {"oneig_commit": COMMIT, "checkpoint": "qwen2.5-vl-tiny", "questions": "object.json",
           "prompts": "prompts.csv", "category": CATEGORY,
           "scoring": "OneIG-Benchmark scripts/alignment/alignment_score.py alignment_score (split_mxn_grid, "
                      "Qwen2_5VLBatchInferencer.infer_semantic, the 'Yes' and direct-parent rules, mean over "
                      "questions then cells)", "grids": grids, "main": totals}
    (FIX / "expected.json").write_text(json.dumps(exp, indent=1, ensure_ascii=False) + "\n")
    prov = {"made_by": "tools/reference/oneig/make_fixture.py",
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "versions": versions(),
            "oneig": f"OneIG-Bench/OneIG-Benchmark commit {COMMIT} scripts/alignment/alignment_score.py, "
                     "scripts/utils/{utils,inference}.py, from a checkout",
            "precision": "float32 on CPU, eager attention",
            "sharpening": how,
            "changes_to_run_offline": [
                f"the tiny Qwen2.5-VL put in the side hub cache as {HUB_ID}",
                "Qwen2_5VLBatchInferencer's defaults device='cuda', dtype=bfloat16, use_flash_attention=True "
                "replaced by 'cpu', float32, False (eager attention) before the module is imported"],
            "note": "The answers and scores are OneIG's own functions on this tiny random-weight checkpoint; the "
                    "questions, prompts and grids are written for the fixture; no OneIG code or data is in this "
                    "repository."}
    os.chmod(CKPT / "model.safetensors", 0o644)
    (FIX / "provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    print(FIX, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
