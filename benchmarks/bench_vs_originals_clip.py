r"""CLIPScore speed against the original: ts2viz vs J. Hessel et al.'s clipscore.

Same machine, same random-weight CLIP, same JPEGs and prompts, both as a user runs them and engine against
engine.

The original runs in its side environment (``--side-python``: torch 2.14.1, torchvision 0.29.1, openai-clip,
scikit-learn, pycocoevalcap, transformers < 5; ``--checkout``: jmhessel/clipscore at 1036465), so this script
runs only where that environment exists and says so otherwise (exit 0, nothing timed). The model is built by
``tools/reference/clipscore/bench_original.py build`` with the ``clip`` package's own class (``--size b32``:
ViT-B/32's shape; ``tiny``: 2 layers per tower, where the work is mostly image preparation), and written for
ts2viz in the hub layout. Two prompt settings: ``ts2`` (TS2's prompts in its metadata's order: consecutive
images share a prompt, as in every SEG) and ``distinct`` (one prompt per image). What is timed, per setting:

* **end to end** (what a user runs, interpreter start, imports and model loading included): Hessel's
  ``clipscore.py candidates.json IMAGE_DIR --save_per_instance out.json`` (``run_hessel.py``: its
  ``clip.load("ViT-B/32")`` given the local checkpoint) against ``python -m ts2viz score --metric
  clipscore:MODEL?variant=hessel&dtype=float32 --dataset DIR --out out.csv --no-cache`` (what the ``ts2viz``
  console script runs), each a fresh process;
* **engine**: Hessel's ``get_clip_score`` on the paths (``bench_original.py time``: a warm-up run, then one
  timed; its DataLoaders, 8 workers, batch 64) against ``ts2viz.engine.score_images`` (batch 64, no cache, the
  prompt memo cleared), a warm-up then one timed run per round, in this process;
* for ts2viz, two bounds: the **decode + prepare floor** (every image read and prepared by the metric's own
  ``read_image`` + ``prepare``, one thread, divided by the cores: what preparation costs with no overhead and
  perfect parallelism) and the **forward-only limit** (the model on ready batches and the prompts' text
  encoding: what remains if preparation were free).

Rounds alternate the sides (the first side alternates too), at the same priority; each figure is the best of
``--rounds``. Both sides must give the same per-image scores (checked, rtol 1e-4) before a ratio is printed.
Not part of the test suite::

    .venv/bin/python benchmarks/bench_vs_originals_clip.py --size tiny --n 196 --rounds 3 \\
        --side-python /work/side/clipscore/bin/python
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

SIDE = os.environ.get("TS2VIZ_SIDE", "/work/side")
ORIGINAL = ROOT / "tools" / "reference" / "clipscore"


def write_images(folder: Path, n: int) -> list[Path]:
    from PIL import Image

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        small = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)   # smooth, JPEG-typical content
        p = folder / f"{i:04d}.jpg"
        Image.fromarray(small).resize((512, 512), Image.BICUBIC).save(p, quality=90)
        out.append(p)
    return out


def prompts_for(setting: str, n: int) -> list[str]:
    """TS2's prompts in metadata order (``ts2``), or ``n`` different ones (``distinct``)."""
    with open(ROOT / "data" / "ts2" / "metadata.csv", newline="", encoding="utf-8") as f:
        rows = [r["target_prompt"].replace('"', "") for r in csv.DictReader(f)]
    if setting == "ts2":
        return [rows[i % len(rows)] for i in range(n)]
    distinct = list(dict.fromkeys(rows))
    return [distinct[i % len(distinct)] + ("" if i < len(distinct) else f", view {i // len(distinct)}")
            for i in range(n)]


def write_dataset(folder: Path, paths: list[Path], prompts: list[str], setting: str) -> None:
    """``folder`` as a ts2viz dataset (one SEG per prompt) and Hessel's candidates file (image id -> caption)."""
    seg = {p: k for k, p in enumerate(dict.fromkeys(prompts))}
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for k, (p, text) in enumerate(zip(paths, prompts)):
        lines.append(f'{seg[text]},"{text}",images/{p.name},gen{k},{0 if k == 0 or prompts[k - 1] != text else "1a"}')
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "candidates.json").write_text(json.dumps({p.stem: t for p, t in zip(paths, prompts)}))


def wall(cmd: list[str], env=None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=196, help="number of images")
    ap.add_argument("--size", choices=("tiny", "b32"), default="tiny")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best is reported)")
    ap.add_argument("--settings", default="ts2,distinct", help="prompt settings: ts2, distinct or both")
    ap.add_argument("--side-python", default=f"{SIDE}/clipscore/bin/python")
    ap.add_argument("--checkout", default=f"{SIDE}/src/jmhessel+clipscore", help="a checkout of jmhessel/clipscore")
    args = ap.parse_args()
    missing = [p for p in (args.side_python, str(Path(args.checkout) / "clipscore.py")) if not Path(p).exists()]
    if missing:
        print(f"skipped: the original's side environment is not here ({', '.join(missing)} missing); see "
              "this script's docstring and tools/reference/README.md")
        return 0

    import warnings

    import torch

    from ts2viz import engine, metrics
    from ts2viz.parallel import usable_cpus

    warnings.simplefilter("ignore")
    tmp = Path(tempfile.mkdtemp(prefix="bench-vs-clip-"))
    subprocess.run([args.side_python, str(ORIGINAL / "bench_original.py"), "build", str(tmp), "--size", args.size],
                   check=True, stderr=subprocess.DEVNULL)
    spec = f"clipscore:{tmp / 'model'}?variant=hessel&dtype=float32"
    m = metrics.load(spec, device="cpu")
    cores = usable_cpus()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    print(f"model: random-weight CLIP, size {args.size} ({sum(p.numel() for p in m.model.parameters()) / 1e6:.1f}M "
          f"params), CPU float32, {cores} usable cores; ts2viz torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); images: {args.n} JPEG 512x512; best of {args.rounds} interleaved rounds")
    ok = True
    for setting in settings:
        d = tmp / setting
        paths = write_images(d / "images", args.n)
        prompts = prompts_for(setting, args.n)
        write_dataset(d, paths, prompts, setting)
        (tmp / f"{setting}.json").write_text(json.dumps({"images": [str(p) for p in paths], "prompts": prompts}))
        hessel_cli = [args.side_python, str(ORIGINAL / "run_hessel.py"), args.checkout, str(tmp / "clip.pt"), "--",
                      str(d / "candidates.json"), str(d / "images"), "--save_per_instance", str(d / "hessel.json")]
        ours_cli = [sys.executable, "-m", "ts2viz", "score", "-q", "--no-cache", "--device", "cpu", "--metric", spec,
                    "--dataset", str(d), "--out", str(d / "ours.csv")]
        orig_engine = [args.side_python, str(ORIGINAL / "bench_original.py"), "time", args.checkout, str(tmp), setting]

        def ours_engine():
            m.clear_text_memo()
            return engine.score_images(m, [str(p) for p in paths], prompts, batch_size=64, use_cache=False)

        ours_engine()
        t = {k: [] for k in ("orig_cli", "ours_cli", "orig_engine", "ours_engine")}
        for r in range(args.rounds):
            order = ("orig", "ours") if r % 2 == 0 else ("ours", "orig")
            for side in order:
                if side == "orig":
                    t["orig_cli"].append(wall(hessel_cli))
                    subprocess.run(orig_engine, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    t["orig_engine"].append(json.loads((tmp / f"original-{setting}.json").read_text())["time"])
                else:
                    t["ours_cli"].append(wall(ours_cli, env))
                    ours_engine()
                    s = time.perf_counter()
                    ours = np.asarray(ours_engine(), dtype=np.float64)
                    t["ours_engine"].append(time.perf_counter() - s)
        # the bounds (ts2viz's own steps, one thread for preparation; the model on torch's threads)
        from ts2viz.engine.inputs import one_torch_thread

        floor = []
        for _ in range(args.rounds):
            import threading

            out = {}

            def prep_all():
                one_torch_thread()
                s = time.perf_counter()
                out["x"] = [m.prepare(m.read_image(str(p))) for p in paths]
                out["t"] = time.perf_counter() - s

            th = threading.Thread(target=prep_all)
            th.start()
            th.join()
            floor.append(out["t"])
        prepared = out["x"]
        fwd = []
        for _ in range(args.rounds + 1):
            m.clear_text_memo()
            s = time.perf_counter()
            for i in range(0, len(prepared), 64):
                m.score_prepared(prepared[i:i + 64], prompts[i:i + 64])
            fwd.append(time.perf_counter() - s)
        fwd = fwd[1:]
        # the same scores on both sides: Hessel's per-instance file (image id -> score), ts2viz's CSV
        hessel = json.loads((d / "hessel.json").read_text())
        want = np.array([hessel[p.stem]["CLIPScore"] for p in paths])
        with open(d / "ours.csv", newline="") as f:
            cli = {r["file_name"]: float(r[spec]) for r in csv.DictReader(f)}
        got_cli = np.array([cli[f"images/{p.name}"] for p in paths])
        eng = np.asarray(json.loads((tmp / f"original-{setting}.json").read_text())["scores"])
        agree = all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in ((ours, want), (got_cli, want), (eng, want)))
        gap = float(max(np.max(np.abs(ours - want)), np.max(np.abs(got_cli - want))))
        ok &= agree
        b = {k: min(v) for k, v in t.items()}
        fl, fw = min(floor), min(fwd)
        load = os.getloadavg()
        print(f"\n[{setting}] {len(set(prompts))} distinct prompts; load average {load[0]:.1f}; per-image scores "
              f"agree (rtol 1e-4): {agree} (largest difference {gap:.2e})")
        print(f"  end to end: Hessel's clipscore.py {b['orig_cli']:6.2f} s   ts2viz score {b['ours_cli']:6.2f} s   "
              f"ratio {b['orig_cli'] / b['ours_cli']:.2f}x   (runs {[round(x, 2) for x in t['orig_cli']]} / "
              f"{[round(x, 2) for x in t['ours_cli']]})")
        print(f"  engine:     get_clip_score       {b['orig_engine']:6.2f} s   score_images {b['ours_engine']:6.2f} s   "
              f"ratio {b['orig_engine'] / b['ours_engine']:.2f}x   (runs {[round(x, 2) for x in t['orig_engine']]} / "
              f"{[round(x, 2) for x in t['ours_engine']]})")
        print(f"  ts2viz bounds: decode + prepare {fl:.2f} s on one thread ({fl / cores:.2f} s over {cores} cores), "
              f"forward only {fw:.2f} s; engine {b['ours_engine']:.2f} s = "
              f"{b['ours_engine'] / (fl / cores + fw):.2f}x (floor / cores + forward)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
