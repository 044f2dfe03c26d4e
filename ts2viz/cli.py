"""Command-line interface: ``ts2viz leaderboard``, ``ts2viz metametrics`` (and ``score``/``metrics``
from the metric library).

Exit codes: 0 success, 2 bad input (one line on stderr naming file, row and problem), 1 other errors.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .errors import InputError

LEADERBOARD_COLUMNS = ["metric", "ord_avg", "sep_avg", "ord_synth", "sep_synth", "ord_nat", "sep_nat",
                       "ord_real", "sep_real"]
METAMETRICS_COLUMNS = ["seg_id", "partition", "metric", "ord", "sep", "delta", "kendall", "n_walks"]


def _add_eval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", default="ts2",
                   help="'ts2' (bundled metadata), a dataset folder with metadata.csv, or a HF dataset id")
    p.add_argument("--scores", nargs="+", action="extend", metavar="PATH",
                   help="scores file(s), CSV or Parquet (default: the bundled published TS2 scores)")
    p.add_argument("--metrics", help="comma-separated metric names to evaluate (default: all)")
    p.add_argument("--mode", choices=["paper", "spec"], default="paper",
                   help="paper: reproduce the published numbers (default); spec: the paper's stated definitions")
    p.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                   help="treat metric NAME as lower-is-better (repeatable or comma-separated)")
    p.add_argument("--seg", help="evaluate only these SEG ids (comma-separated, ranges like 0-10)")
    p.add_argument("--dsg", choices=["mean", "gated"], default=None,
                   help="accumulation of the bundled DSG columns, recomputed from the per-question answers: "
                        "mean (default; what the published web leaderboard used) or gated (a question fails "
                        "when a parent fails, as DSG defines it)")


def parse_ids(text: str | None) -> list[int] | None:
    """Parse '1,2,5-7' into [1, 2, 5, 6, 7]."""
    if not text:
        return None
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                a, b = part.split("-", 1)
                out.extend(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise InputError(f"--seg: {part!r} is not an id or a range like 3-7") from None
    return out


def load_inputs(args: argparse.Namespace):
    """Dataset, merged scores and metric list from the common options."""
    from .dataset import load_dataset
    from .scores import bundled_scores, merge, read_scores

    ds = load_dataset(args.dataset)
    lib = {m.strip() for item in args.lower_is_better for m in item.split(",") if m.strip()}
    if args.scores and args.dsg:
        raise InputError("--dsg applies to the bundled TS2 scores only (it recomputes their DSG columns); "
                         "drop it when giving --scores")
    if args.scores:
        tables = [read_scores(p, dataset=ds, lower_is_better=lib) for p in args.scores]
        scores = merge(tables)
    else:
        if args.dataset != "ts2":
            raise InputError("--scores is required with a dataset other than the bundled 'ts2'")
        scores = bundled_scores(dsg=args.dsg)
        scores.lower_is_better |= {m for m in lib if m in scores.metrics}
    unknown = lib - set(scores.metrics)
    if unknown:
        raise InputError(f"--lower-is-better names a metric not in the scores: {sorted(unknown)[0]!r}")
    metrics = None
    if args.metrics:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        for m in metrics:
            if m not in scores.metrics:
                raise InputError(f"--metrics: no metric {m!r} in the scores (have: {', '.join(scores.metrics)})")
    return ds, scores, metrics


def _compute(args):
    from .metametrics import compute

    ds, scores, metrics = load_inputs(args)
    return compute(ds, scores, metrics, mode=args.mode, seg_ids=parse_ids(args.seg))


def _write_csv(df, path: str) -> None:
    from .atomic import atomic_path

    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6f")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    mm = _compute(args)
    lb = mm.leaderboard()
    for c in LEADERBOARD_COLUMNS:
        if c not in lb.columns:
            lb[c] = float("nan")
    lb = lb[LEADERBOARD_COLUMNS]
    if args.out:
        _write_csv(lb, args.out)
    print(format_leaderboard(lb, mm))
    if not args.scores:
        from .qa_records import BUNDLED_DSG_ACCUMULATION

        print(f"DSG columns: {args.dsg or BUNDLED_DSG_ACCUMULATION} accumulation of the released per-question "
              "answers (DSG-GPT4V: released per-image scores, no per-question data)")
    return 0


def format_leaderboard(lb, mm) -> str:
    """Plain-text table (values x100, as in the paper), sorted by ord_avg."""
    lb = lb.sort_values("ord_avg", ascending=False, na_position="last")
    heads = ["Metric", "OrdAvg", "SepAvg", "OrdSynth", "SepSynth", "OrdNat", "SepNat", "OrdReal", "SepReal"]
    width = max(len("Metric"), *(len(str(m)) for m in lb["metric"]))
    lines = [f"{heads[0]:<{width}}  " + "  ".join(f"{h:>8}" for h in heads[1:])]
    lines.append("-" * len(lines[0]))
    for _, row in lb.iterrows():
        vals = []
        for c in LEADERBOARD_COLUMNS[1:]:
            v = row[c]
            vals.append(f"{'-':>8}" if v != v else f"{100 * v:8.1f}")
        lines.append(f"{row['metric']:<{width}}  " + "  ".join(vals))
    note = f"mode={mm.mode}; {len(mm.seg_ids) - len(mm.excluded)} SEGs averaged"
    if mm.excluded:
        note += f" (SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers)"
    lines.append(note)
    return "\n".join(lines)


def cmd_metametrics(args: argparse.Namespace) -> int:
    mm = _compute(args)
    df = mm.segs()[METAMETRICS_COLUMNS]
    _write_csv(df, args.out)
    print(f"wrote {len(df)} rows ({len(mm.seg_ids)} SEGs x {len(mm.metrics)} metrics) to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ts2viz", description="Meta-evaluate text-to-image faithfulness "
                                     "metrics on semantic error graphs (T2IScoreScore).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("leaderboard", help="Ord/Sep leaderboard (overall and per partition)")
    _add_eval_options(p)
    p.add_argument("--out", help="also write the leaderboard as CSV (fractions, not x100)")
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("metametrics", help="per-SEG ord, sep, delta, kendall for every metric")
    _add_eval_options(p)
    p.add_argument("--out", required=True, help="CSV file to write")
    p.set_defaults(func=cmd_metametrics)
    _add_library_subcommands(sub)
    return parser


def _add_library_subcommands(sub) -> None:
    """``score`` and ``metrics`` come from the metric library; its CLI module is cheap to import (no torch)."""
    from .engine.cli import add_subcommands

    add_subcommands(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        print(f"ts2viz: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ts2viz: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
