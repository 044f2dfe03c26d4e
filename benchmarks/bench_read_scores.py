"""Time and peak memory of reading a ~200 MB scores CSV, through the CLI of a source tree.

    python benchmarks/bench_read_scores.py [--src DIR] [--dir DIR] [--images N] [--metrics M]

Writes (once, into ``--dir``) a dataset folder of N images (SEGs of 20) and a scores CSV with M metric
columns (default 100,000 images x 180 metrics, about 200 MB), then runs, each under
``/usr/bin/time -v``:

* ``read``: ``read_scores(big.csv, dataset=ds)`` alone (every column), minus the dataset load;
* ``read 2 metrics``: the same with ``metrics=[m000, m001]``;
* ``leaderboard --metrics m000,m001 --seg 0-9``: the whole CLI command (10 SEGs evaluated, so that the
  meta-metrics do not dominate).

``--src`` is the root of a ts2viz checkout (default: this one), so an older version can be measured
in the same run for a ratio. Not pass/fail.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write_data(d: Path, n_images: int, n_metrics: int) -> tuple[Path, Path]:
    import numpy as np

    ds, big = d / "ds", d / "big.csv"
    if (ds / "metadata.csv").exists() and big.exists():
        return ds, big
    ds.mkdir(parents=True, exist_ok=True)
    labels = ["0", "1a", "1a", "1b", "1b", "2a", "2a", "2b", "2b", "2c", "3a", "3a", "3b", "3b", "3c",
              "4", "4", "4", "5", "5"]
    names = [f"img/{i // 20:05d}-{i % 20:02d}.jpg" for i in range(n_images)]
    with open(ds / "metadata.csv", "w") as f:
        f.write("id,target_prompt,file_name,image_source,rank\n")
        for i, fn in enumerate(names):
            f.write(f"{i // 20},prompt {i // 20},{fn},gen,{labels[i % 20]}\n")
    rng = np.random.default_rng(0)
    cols = [f"m{j:03d}" for j in range(n_metrics)]
    with open(big, "w") as f:
        f.write("file_name," + ",".join(cols) + "\n")
        for a in range(0, n_images, 5000):
            block = rng.random((min(5000, n_images - a), n_metrics))
            for k, row in enumerate(block):
                f.write(names[a + k] + "," + ",".join(f"{v:.8f}" for v in row) + "\n")
    return ds, big


def measure(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of ``cmd`` under /usr/bin/time -v."""
    out = cwd / "time.txt"
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", "-o", str(out), *cmd], env=env, cwd=cwd,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    text = out.read_text()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", text).group(1)) for k in ("User", "System"))
    if r.returncode != 0:
        print(r.stderr[-2000:], file=sys.stderr)
    return wall, cpu, rss, r.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(HERE.parent))
    ap.add_argument("--dir", default="/tmp/ts2viz-bench-read")
    ap.add_argument("--images", type=int, default=100_000)
    ap.add_argument("--metrics", type=int, default=180)
    args = ap.parse_args()
    d = Path(args.dir)
    ds, big = write_data(d, args.images, args.metrics)
    env = {**os.environ, "PYTHONPATH": str(Path(args.src).resolve()), "HF_HUB_OFFLINE": "1"}
    py = sys.executable
    load = f"from ts2viz.dataset import load_folder; from ts2viz.scores import read_scores; ds = load_folder({str(ds)!r})"
    runs = {
        "dataset load only (baseline)": [py, "-c", load],
        "read_scores, all columns": [py, "-c", load + f"; s = read_scores({str(big)!r}, dataset=ds)"],
        "read_scores, 2 metrics": [py, "-c", load + f"; s = read_scores({str(big)!r}, dataset=ds, metrics=['m000', 'm001'])"],
        "leaderboard --metrics m000,m001 --seg 0-9": [py, "-m", "ts2viz", "leaderboard", "--dataset", str(ds),
                                                     "--scores", str(big), "--metrics", "m000,m001", "--seg", "0-9"],
    }
    print(f"source: {args.src}; scores file {big.stat().st_size / 1e6:.0f} MB, {args.images} rows x "
          f"{args.metrics} metrics\n")
    print("| run | wall s | CPU s (user+sys) | peak RSS MB | exit |\n|---|---:|---:|---:|---:|")
    for name, cmd in runs.items():
        wall, cpu, rss, rc = measure(cmd, env, d)
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()
