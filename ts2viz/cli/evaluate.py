"""``ts2viz leaderboard`` and ``ts2viz metametrics``: meta-metrics of scores tables over a SEG dataset."""
from __future__ import annotations

import argparse

from ..errors import InputError
from ..policy import MODES, rules_help

LEADERBOARD_COLUMNS = ["metric", "ord_avg", "sep_avg", "ord_synth", "sep_synth", "ord_nat", "sep_nat",
                       "ord_real", "sep_real"]
METAMETRICS_COLUMNS = ["seg_id", "partition", "metric", "ord", "sep", "delta", "kendall", "signed_sep", "n_walks"]


def _add_eval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", default="ts2",
                   help="'ts2' (bundled metadata), a dataset folder with metadata.csv, or a HF dataset id")
    p.add_argument("--scores", nargs="+", action="extend", metavar="PATH",
                   help="scores file(s), CSV or Parquet (default: the bundled published TS2 scores)")
    p.add_argument("--metrics", help="comma-separated metric names to evaluate (default: all)")
    p.add_argument("--mode", choices=list(MODES), default="paper",
                   help="meta-metric policy preset: paper reproduces the published numbers (default); spec "
                        "follows the paper's text")
    p.add_argument("--policy", metavar="RULE=VALUE,...",
                   help="change rules of the preset, e.g. walk_weights=uniform,leave_out=none (rules: "
                        + rules_help() + ")")
    p.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                   help="treat metric NAME as lower-is-better (repeatable or comma-separated)")
    p.add_argument("--seg", help="evaluate only these SEG ids (comma-separated, ranges like 0-10)")
    p.add_argument("--dsg", choices=["mean", "gated"], default=None,
                   help="accumulation of the bundled DSG columns, recomputed from the per-question answers: "
                        "mean (default; what the published web leaderboard used) or gated (a question fails "
                        "when a parent fails, as DSG defines it)")


def load_inputs(args: argparse.Namespace):
    """Dataset, merged scores and metric list from the common options."""
    from ..dataset import load_dataset
    from ..scores import bundled_scores, merge, read_scores

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
    from ..dataset import parse_seg_ids
    from ..metametrics import compute
    from ..policy import resolve_policy

    ds, scores, metrics = load_inputs(args)
    policy = resolve_policy(args.mode, args.policy)
    return compute(ds, scores, metrics, policy=policy, seg_ids=parse_seg_ids(args.seg))


def _write_csv(df, path: str) -> None:
    from ..atomic import atomic_path

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
        from ..qa_records import BUNDLED_DSG_ACCUMULATION

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


def add_subcommands(sub) -> None:
    """Add ``leaderboard`` and ``metametrics`` to an ``argparse`` subparsers object."""
    p = sub.add_parser("leaderboard", help="Ord/Sep leaderboard (overall and per partition)")
    _add_eval_options(p)
    p.add_argument("--out", help="also write the leaderboard as CSV (fractions, not x100)")
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("metametrics", help="per-SEG ord, sep, delta, kendall for every metric")
    _add_eval_options(p)
    p.add_argument("--out", required=True, help="CSV file to write")
    p.set_defaults(func=cmd_metametrics)
