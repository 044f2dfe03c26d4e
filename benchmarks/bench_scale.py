"""Meta-metrics at scale: 1x, 10x, 100x TS2, and one walk-heavy SEG, against the per-SEG baseline.

Datasets are TS2-shaped: the 165 real SEG structures of the bundled TS2 metadata (node labels and
sizes), replicated k times with fresh SEG ids and file names, and random scores for 19 metrics
(NaNs sprinkled in). The walk-heavy SEG has 4 nodes at each of the error levels 0..5 (200 images),
16,384 walks in paper mode. Each measurement runs in its own process, so its peak RSS
(``ru_maxrss``) is its own; both engines compute the same thing and the results are compared.

    python benchmarks/bench_scale.py [--scales 1,10,100] [--metrics 19] [--skip-baseline-above 100]

Baseline: ``benchmarks/baseline_metametrics.py``, the engine before SEG batching and walk chunking
(one SEG at a time), measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ts2_shaped(scale: int, n_metrics: int, seed: int = 0):
    """A Dataset of ``scale`` copies of TS2's SEG structures and a Scores table of random scores."""

    from ts2viz.dataset import Dataset, ImageRow, load_dataset
    from ts2viz.seg import build_seg

    ts2 = load_dataset("ts2")
    segs, rows = {}, []
    sid = 0
    for copy in range(scale):
        for seg in ts2:
            items = []
            for node in seg.nodes:
                for k, _ in enumerate(node.images):
                    fn = f"c{copy}/{seg.id}/{node.label}-{k}.jpg"
                    items.append((fn, "SDX", node.label))
                    rows.append(ImageRow(sid, fn, seg.prompt, "SDX", node.label, node.level, seg.partition))
            segs[sid] = build_seg(sid, seg.prompt, seg.partition, items)
            sid += 1
    ds = Dataset(f"ts2x{scale}", segs, rows)
    return ds, _random_scores(ds, n_metrics, seed)


def walk_heavy(n_metrics: int, seed: int = 0):
    """One SEG: 4 nodes at each error level 0..5, 200 images (16,384 walks in paper mode)."""
    from ts2viz.dataset import Dataset, ImageRow
    from ts2viz.seg import build_seg

    items, rows = [], []
    sizes = [12, 12] + [8] * 22            # 200 images
    labels = [f"{lv}{c}" for lv in range(6) for c in "abcd"]
    for label, n in zip(labels, sizes):
        for k in range(n):
            fn = f"{label}-{k}.jpg"
            items.append((fn, "SDX", label))
            rows.append(ImageRow(0, fn, "p", "SDX", label, int(label[0]), "Synth"))
    ds = Dataset("walk-heavy", {0: build_seg(0, "p", "Synth", items)}, rows)
    return ds, _random_scores(ds, n_metrics, seed)


def _random_scores(ds, n_metrics: int, seed: int):
    import numpy as np

    from ts2viz.scores import Scores

    rng = np.random.default_rng(seed)
    levels = np.array([r.level for r in ds.rows], dtype=float)
    vals = -levels[:, None] * rng.uniform(0, 0.3, n_metrics) + rng.normal(0, 1, (len(levels), n_metrics))
    vals[rng.random(vals.shape) < 0.01] = np.nan
    return Scores(ds.file_names, [f"m{j}" for j in range(n_metrics)], vals)


def measure(engine: str, which: str, scale: int, n_metrics: int, policy: str) -> dict:
    """Run in a child process: build the data, time ``compute``, report peak RSS and a checksum."""
    import resource

    import numpy as np

    sys.path.insert(0, str(HERE))
    ds, sc = walk_heavy(n_metrics) if which == "heavy" else ts2_shaped(scale, n_metrics)
    if engine == "baseline":
        from baseline_metametrics import compute
    else:
        from ts2viz.metametrics.results import compute
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    mm = compute(ds, sc, policy=policy)
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    vals = np.stack([mm.seg_values[k] for k in ("ord", "sep", "delta", "kendall")])
    return {"seconds": dt, "peak_mib": rss / 1024, "data_mib": rss0 / 1024, "segs": len(mm.seg_ids),
            "images": len(ds.rows), "walks": int(sum(len(mm.walk_stats(s)[0].walks) for s in mm.seg_ids)),
            "checksum": vals.tolist() if vals.size < 2_000_000 else None,
            "nansum": float(np.nansum(vals))}


def run_child(engine: str, which: str, scale: int, n_metrics: int, policy: str) -> dict:
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_scale as b; "
            f"print(json.dumps(b.measure({engine!r}, {which!r}, {scale}, {n_metrics}, {policy!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,10,100")
    ap.add_argument("--metrics", type=int, default=19)
    ap.add_argument("--policy", default="paper")
    ap.add_argument("--skip-baseline-above", type=int, default=1000,
                    help="do not run the baseline at scales above this (it is slow)")
    args = ap.parse_args()
    print(f"{'data':<22}{'SEGs':>7}{'images':>9}{'walks':>9}  {'baseline s':>10} {'MiB':>7}   "
          f"{'ts2viz s':>9} {'MiB':>7}   {'speed-up':>8}  same")
    cases = [("ts2", int(s)) for s in args.scales.split(",")] + [("heavy", 1)]
    for which, scale in cases:
        new = run_child("ts2viz", which, scale, args.metrics, args.policy)
        base = None
        if scale <= args.skip_baseline_above:
            base = run_child("baseline", which, scale, args.metrics, args.policy)
        same = "-"
        if base is not None:
            if new["checksum"] is not None and base["checksum"] is not None:
                import numpy as np

                same = "yes" if np.allclose(np.array(new["checksum"], float), np.array(base["checksum"], float),
                                            atol=1e-9, equal_nan=True) else "NO"
            else:
                same = "yes" if abs(new["nansum"] - base["nansum"]) < 1e-6 * max(1, abs(base["nansum"])) else "NO"
        name = f"{scale}x TS2 shapes" if which == "ts2" else "walk-heavy SEG"
        b_s = f"{base['seconds']:10.2f} {base['peak_mib']:7.0f}" if base else f"{'-':>10} {'-':>7}"
        ratio = f"{base['seconds'] / new['seconds']:7.1f}x" if base else f"{'-':>8}"
        print(f"{name:<22}{new['segs']:>7}{new['images']:>9}{new['walks']:>9}  {b_s}   "
              f"{new['seconds']:9.2f} {new['peak_mib']:7.0f}   {ratio}  {same}", flush=True)
    print(f"({args.metrics} metrics, policy {args.policy}; MiB = peak RSS of the process, data included; "
          "baseline = benchmarks/baseline_metametrics.py)")


if __name__ == "__main__":
    main()
