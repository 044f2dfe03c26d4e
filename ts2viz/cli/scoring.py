"""``ts2viz score`` and ``ts2viz metrics``: run library metrics over a dataset; list the metric families."""
from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Iterator

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
    p.add_argument("--out", "-o", required=True, help="output scores file (.csv or .parquet); - for CSV on stdout")
    p.add_argument("--device", default=None, help="cuda, cpu or mps (default: best available)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="images per model call (default: per metric and device)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="score cache folder (default: $TS2VIZ_CACHE or ~/.cache/ts2viz)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars (neither ts2viz's nor the model loaders')")
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


@contextlib.contextmanager
def quiet_progress(quiet: bool) -> Iterator[None]:
    """With ``quiet``, no progress bars from the hub client or transformers (its "Loading weights" bar)
    inside; the previous settings come back afterwards."""
    if not quiet:
        yield
        return
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    hub_was_off = are_progress_bars_disabled()
    tf = sys.modules.get("transformers.utils.logging")
    # transformers reads the hub's setting once, when it is imported (possibly inside this block)
    tf_was_on = tf.is_progress_bar_enabled() if tf is not None else not hub_was_off
    disable_progress_bars()
    if tf is not None:
        tf.disable_progress_bar()
    try:
        yield
    finally:
        if not hub_was_off:
            enable_progress_bars()
        tf = sys.modules.get("transformers.utils.logging")
        if tf is not None and tf_was_on:
            tf.enable_progress_bar()


def run_score(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz score``."""
    from ..atomic import check_writable
    from ..dataset import load_dataset, parse_seg_ids
    from ..engine import score_dataset
    from ..scores import write_scores

    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    out = str(args.out)
    if out != "-":
        if not out.lower().endswith((".csv", ".parquet", ".pq")):
            raise InputError("--out must end in .csv or .parquet (or be - for CSV on stdout)", file=out)
        check_writable(out)     # before any model is loaded or image scored
    ds = load_dataset(args.dataset)
    seg_ids = parse_seg_ids(args.seg, ds)
    bars = _Bars(args.quiet)
    try:
        with quiet_progress(args.quiet):
            scores = score_dataset(ds, args.metric, seg_ids=seg_ids, device=args.device,
                                   batch_size=args.batch_size, cache_dir=args.cache, progress=bars,
                                   use_cache=not args.no_cache)
    finally:
        bars.close()
    import numpy as np

    n_ok = int(np.isfinite(scores.values).all(axis=1).sum())
    if out == "-":
        write_scores(scores, sys.stdout)
        sys.stdout.flush()
    else:
        write_scores(scores, out)
    print(f"wrote {'stdout' if out == '-' else out}: {len(scores.file_names)} images x {len(scores.metrics)} "
          f"metric(s), {n_ok} images fully scored", file=sys.stderr if out == "-" else sys.stdout)
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
