"""``ts2viz leaderboard`` and ``ts2viz metametrics``: meta-metrics of scores tables over a SEG dataset."""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError, warn_input
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


def load_inputs(args: argparse.Namespace):
    """Dataset, merged scores, metric list and SEG ids from the common options (all validated)."""
    from ..dataset import load_dataset, parse_seg_ids
    from ..scores import bundled_scores, merge, read_scores

    ds = load_dataset(args.dataset)
    seg_ids = parse_seg_ids(args.seg, ds)
    lib = {m.strip() for item in args.lower_is_better for m in item.split(",") if m.strip()}
    metrics = None
    if args.metrics:
        metrics = list(dict.fromkeys(m.strip() for m in args.metrics.split(",") if m.strip()))
    if args.scores:
        # With --metrics, a file is read for the metrics it has among them only (a file with none of
        # them is skipped), so a wide scores file costs the memory of the columns asked for.
        headers = {p: scores_columns(p) for p in args.scores}
        available = set().union(*map(set, headers.values()))
        tables = []
        for p in args.scores:
            want = None
            if metrics is not None:
                want = [m for m in metrics if m in headers[p]]
                if not want:
                    if len(args.scores) > 1 and headers[p]:
                        continue
                    want = metrics    # the reader names the missing column (or the file's problem)
            tables.append(read_scores(p, dataset=ds, lower_is_better=lib, metrics=want))
        if not tables:
            raise InputError(f"--metrics: none of {', '.join(metrics)} is in the scores files")
        scores = merge(tables)
    else:
        if args.dataset != "ts2":
            raise InputError("--scores is required with a dataset other than the bundled 'ts2'")
        scores = bundled_scores()
        available = set(scores.metrics)
        scores.lower_is_better |= {m for m in lib if m in scores.metrics}
    unknown = lib - available
    if unknown:
        raise InputError(f"--lower-is-better names a metric not in the scores: {sorted(unknown)[0]!r}")
    if metrics is not None:
        for m in metrics:
            if m not in scores.metrics:
                raise InputError(f"--metrics: no metric {m!r} in the scores (have: {', '.join(scores.metrics)})")
    return ds, scores, metrics, seg_ids


def scores_columns(path) -> list[str]:
    """The column names of a scores file, from its header only (empty if it cannot be read: the reader
    then reports the problem)."""
    from pathlib import Path

    p = Path(path)
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(p).names]
        import csv

        with open(p, encoding="utf-8-sig", errors="replace", newline="") as f:
            first = f.readline()
            if first.startswith("# ts2viz-scores"):
                first = f.readline()
        return next(csv.reader([first]), [])
    except Exception:  # noqa: BLE001 - read_scores gives the one-line error
        return []


def _compute(args, averaged_only: bool):
    """Meta-metrics and coverage; warns about metrics scored on part of the SEGs' images only.

    ``averaged_only``: count coverage over the SEGs that enter the averages (the leaderboard), not over
    every evaluated SEG (the per-SEG table).
    """
    from ..metametrics import compute
    from ..policy import resolve_policy
    from ..scores import coverage

    ds, scores, metrics, seg_ids = load_inputs(args)
    policy = resolve_policy(args.mode, args.policy)
    mm = compute(ds, scores, metrics, policy=policy, seg_ids=seg_ids)
    ids = [s for s in mm.seg_ids if not (averaged_only and s in mm.excluded)]
    cov = coverage(scores, ds, mm.metrics, ids)
    for c in cov:
        if c.n_scored == 0:
            warn_input(f"metric {c.metric!r} has no scores for any image of the evaluated SEGs; its results "
                       f"are empty")
        elif not c.complete:
            warn_input(c.describe() + "; its ord and sep use the scored images only")
    return mm, cov


def check_out(path: str | None) -> None:
    """Fail before any work when ``--out`` cannot be written (``-`` is stdout)."""
    from ..atomic import check_writable

    if path and path != "-":
        check_writable(path)


def _write_csv(df, path: str) -> None:
    from ..atomic import atomic_path

    if path == "-":
        df.to_csv(sys.stdout, index=False, float_format="%.6f", lineterminator="\n")
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6f")


def leaderboard_columns(partitions) -> list[str]:
    """The leaderboard CSV's columns: TS2's three partitions always, then any others in the dataset."""
    from ..metametrics import ordered_partitions

    extra = [p for p in ordered_partitions(partitions) if p not in ("Synth", "Nat", "Real")]
    return LEADERBOARD_COLUMNS + [f"{k}_{p.lower()}" for p in extra for k in ("ord", "sep")]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    check_out(args.out)
    mm, cov = _compute(args, averaged_only=True)
    lb = mm.leaderboard()
    cols = leaderboard_columns(mm.partitions)
    for c in cols:
        if c not in lb.columns:
            lb[c] = float("nan")
    lb = lb[cols]
    if args.out == "-":
        _write_csv(lb, "-")
        return 0
    if args.out:
        _write_csv(lb, args.out)
    print(format_leaderboard(lb, mm, {c.metric: c for c in cov}))
    return 0


def format_leaderboard(lb, mm, cov: dict | None = None) -> str:
    """Plain-text table (values x100, as in the paper), sorted by ord_avg.

    A metric without any score in the evaluated SEGs gets a note instead of a row of dashes.
    """
    lb = lb.sort_values("ord_avg", ascending=False, na_position="last")
    cols = list(lb.columns[1:])
    heads = ["Metric"] + [c.split("_", 1)[0].title() + c.split("_", 1)[1].title() for c in cols]
    width = max(len("Metric"), *(len(str(m)) for m in lb["metric"]))
    wcol = max(8, *(len(h) for h in heads[1:]))
    lines = [f"{heads[0]:<{width}}  " + "  ".join(f"{h:>{wcol}}" for h in heads[1:])]
    lines.append("-" * len(lines[0]))
    for _, row in lb.iterrows():
        c = (cov or {}).get(row["metric"])
        if c is not None and c.n_scored == 0:
            lines.append(f"{row['metric']:<{width}}  (no scores for any of the {c.n_images} images)")
            continue
        vals = []
        for col in cols:
            v = row[col]
            vals.append(f"{'-':>{wcol}}" if v != v else f"{100 * v:{wcol}.1f}")
        lines.append(f"{row['metric']:<{width}}  " + "  ".join(vals))
    note = f"mode={mm.mode}; {len(mm.seg_ids) - len(mm.excluded)} SEGs averaged"
    if mm.excluded:
        note += f" (SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers)"
    partial = [c for c in (cov or {}).values() if 0 < c.n_scored < c.n_images]
    if partial:
        note += f"; {len(partial)} metric(s) scored on part of the images only (see the warnings)"
    lines.append(note)
    return "\n".join(lines)


def cmd_metametrics(args: argparse.Namespace) -> int:
    import numpy as np

    check_out(args.out)
    mm, cov = _compute(args, averaged_only=False)
    df = mm.segs()[METAMETRICS_COLUMNS]
    # scored images of each (SEG, metric): the per-SEG side of the coverage warnings
    df["n_images"] = np.repeat(cov[0].seg_images if cov else [], len(mm.metrics)).astype(int)
    df["n_scored"] = np.stack([c.seg_scored for c in cov], axis=1).ravel().astype(int) if cov else []
    _write_csv(df, args.out)
    print(f"wrote {len(df)} rows ({len(mm.seg_ids)} SEGs x {len(mm.metrics)} metrics) to "
          f"{'stdout' if args.out == '-' else args.out}", file=sys.stderr if args.out == "-" else sys.stdout)
    return 0


def add_subcommands(sub) -> None:
    """Add ``leaderboard`` and ``metametrics`` to an ``argparse`` subparsers object."""
    p = sub.add_parser("leaderboard", help="Ord/Sep leaderboard (overall and per partition)")
    _add_eval_options(p)
    p.add_argument("--out", help="also write the leaderboard as CSV (fractions, not x100); - for stdout "
                                 "(CSV only)")
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("metametrics", help="per-SEG ord, sep, delta, kendall for every metric")
    _add_eval_options(p)
    p.add_argument("--out", required=True, help="CSV file to write; - for stdout")
    p.set_defaults(func=cmd_metametrics)
