"""``ts2viz score`` and ``ts2viz metrics``: the engine's subcommands, added to the main parser."""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError


def add_subcommands(subparsers) -> None:
    """Add ``score`` and ``metrics`` to an ``argparse`` subparsers object (each sets ``func``)."""
    p = subparsers.add_parser(
        "score", help="run metrics over a SEG dataset and write a scores file",
        description="Run one or more metrics over every image of a SEG dataset and write the scores "
                    "file that `ts2viz leaderboard --scores` reads. Finished scores are cached, so an "
                    "interrupted or repeated run only computes what is missing.")
    p.add_argument("--metric", "-m", action="append", required=True, metavar="SPEC",
                   help="metric SPEC, e.g. clipscore:openai/clip-vit-base-patch32 (repeatable; "
                        "`ts2viz metrics` lists the families)")
    p.add_argument("--dataset", default="ts2", metavar="ts2|DIR|HF_ID",
                   help="'ts2', a dataset folder with metadata.csv and images, or a hub dataset id")
    p.add_argument("--seg", default=None, metavar="IDS", help="SEG ids to score, e.g. 0-10,15 (default: all)")
    p.add_argument("--out", "-o", required=True, help="output scores file (.csv or .parquet)")
    p.add_argument("--device", default=None, help="cuda, cpu or mps (default: best available)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="images per model call (default: per metric and device)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="score cache folder (default: $TS2VIZ_CACHE or ~/.cache/ts2viz)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                   help="score on Ray actors: alone, a new local Ray instance (or $RAY_ADDRESS); with "
                        "ADDRESS, join that cluster (auto, ray://HOST:10001). Needs ts2viz[ray]")
    p.add_argument("--ray-actors", type=int, default=None, metavar="N",
                   help="with --ray: metric actors to start (default: one per GPU, else one per CPU)")
    p.set_defaults(func=run_score)

    q = subparsers.add_parser("metrics", help="list the metric families",
                              description="List the metric families and an example SPEC for each.")
    q.set_defaults(func=run_metrics)


class _Bars:
    """One tqdm bar per metric, showing images/s."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bars: dict = {}

    def __call__(self, spec: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        bar = self.bars.get(spec)
        if bar is None:
            bar = self.bars[spec] = tqdm(total=total, desc=spec if len(spec) < 40 else "..." + spec[-37:],
                                         unit="img", dynamic_ncols=True, file=sys.stderr,
                                         initial=done)  # cache hits start the bar, not its rate
            if done >= total:
                bar.close()
            return
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    def close(self) -> None:
        for b in self.bars.values():
            b.close()


def run_score(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz score``."""
    from ..cli import parse_ids
    from ..scores import write_scores
    from .core import score_dataset

    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if args.ray_actors is not None and (args.ray is None or args.ray_actors < 1):
        raise InputError("--ray-actors needs --ray and must be at least 1")
    out = str(args.out)
    if not out.lower().endswith((".csv", ".parquet", ".pq")):
        raise InputError("--out must end in .csv or .parquet", file=out)
    bars = _Bars(args.quiet)
    try:
        scores = score_dataset(args.dataset, args.metric, seg_ids=parse_ids(args.seg), device=args.device,
                               batch_size=args.batch_size, cache_dir=args.cache, progress=bars,
                               use_cache=not args.no_cache, ray=args.ray, ray_actors=args.ray_actors)
    finally:
        bars.close()
    write_scores(scores, out)
    import numpy as np

    n_ok = int(np.isfinite(scores.values).all(axis=1).sum())
    print(f"wrote {out}: {len(scores.file_names)} images x {len(scores.metrics)} metric(s), "
          f"{n_ok} images fully scored")
    return 0


def run_metrics(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz metrics``."""
    from ..metrics import families

    fams = families()
    width = max(len(f.name) for f in fams)
    for f in fams:
        print(f"{f.name:<{width}}  {f.description}")
        if f.example:
            print(f"{'':<{width}}  e.g. {f.example}")
    return 0
