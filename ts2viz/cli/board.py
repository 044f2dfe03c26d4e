"""``ts2viz leaderboard``: Ord/Sep (and more) per partition, as a table and as CSV.

With bootstrap and rank intervals, significance clusters, pairwise accuracy, nuisance and cost columns.
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from .common import (
    add_bootstrap_options,
    add_eval_options,
    alpha_arg,
    bootstrap_settings,
    cell_label,
    cell_text,
    check_out,
    compute_metametrics,
    emit,
    load_inputs,
)
from ..metametrics.table import GROUPS, leaderboard_groups
from ..scores import uses_bundled

def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``ts2viz leaderboard``: Ord/Sep (and more) per partition, printed as a table and/or written as CSV.

    With ``--ci``, bootstrap intervals and rank intervals (two-level with ``--image-resamples``);
    ``--clusters``, ``--pairwise``, ``--nuisance`` and ``--cost`` add their columns and notes; ``--slices``
    gives the rows per slice of SEGs instead (:mod:`ts2viz.cli.board_slices`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        0.

    Raises
    ------
    InputError
        For bad input (options, files, metrics).
    """
    from ..metametrics.intervals import bootstrap
    from ..metametrics.ranks import rank_intervals
    from ..metametrics.table import leaderboard_table

    check_out(args.out)
    stats = _parse_stats(args.stats)
    settings = bootstrap_settings(args)      # validated even without --ci
    from .permutation import two_level_note, two_level_settings

    settings = two_level_settings(args, settings)
    from .board_slices import cmd_board_slices, refuse_combinations

    refuse_combinations(args, settings.image_resamples)
    if args.slices:
        return cmd_board_slices(args, stats, settings)
    inputs = load_inputs(args)                # once: every column below reads these
    ds, scores = inputs[0], inputs[1]
    mm, cov = compute_metametrics(args, inputs, averaged_only=True)
    boot = ranks = None
    if args.ci and settings.image_resamples:
        from ..metametrics.two_level import two_level_bootstrap

        boot = two_level_bootstrap(mm, scores, settings)
        ranks = rank_intervals(mm, "ord_avg", boot=boot)
    elif args.ci:
        boot = bootstrap(mm, n_resamples=settings.n_resamples, confidence=settings.confidence,
                         seed=settings.seed)
        ranks = rank_intervals(mm, "ord_avg", boot=boot)
    groups = leaderboard_groups(mm.partitions)
    lb = leaderboard_table(mm, stats, groups=groups, boot=boot, ranks=ranks)
    cluster_note = None
    if args.clusters:
        from .permutation import cluster_column

        lb["cluster"], cluster_note = cluster_column(mm, args, alpha_arg(args.alpha), lambda: scores)
    pairwise_text = None
    if args.pairwise:
        from .pairwise import pairwise_columns

        extra, pairwise_text = pairwise_columns(mm, scores, args, groups, settings if args.ci else None)
        for k, v in extra.items():
            lb[k] = v
    nuisance_text = None
    if args.nuisance:
        from .nuisance import nuisance_columns

        extra, nuisance_text = nuisance_columns(mm, ds, args, settings)
        for k, v in extra.items():
            lb[k] = v
    cost_text = None
    if args.cost:
        from .cost import cost_columns

        extra, cost_text = cost_columns(mm, args)
        for k, v in extra.items():
            lb[k] = v
    def text() -> str:
        parts = [format_leaderboard(lb, mm, stats, boot, groups, {c.metric: c for c in cov}),
                 two_level_note(settings) if boot is not None and settings.image_resamples else None,
                 cluster_note, pairwise_text, cost_text, nuisance_text]
        if uses_bundled(args.scores):
            from ..qa.records import BUNDLED_DSG_ACCUMULATION

            parts.append(f"DSG columns: {args.dsg or BUNDLED_DSG_ACCUMULATION} accumulation of the released "
                         "per-question answers (DSG-GPT4V: released per-image scores, no per-question data)")
        return "\n".join(p for p in parts if p)

    return emit(lb, args.out, text)


def _parse_stats(text: str) -> list[str]:
    from ..metametrics.walks import STATS

    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    for s in names:
        if s not in STATS:
            raise InputError(f"--stats: unknown statistic {s!r} (expected some of {','.join(STATS)})")
    if not names:
        raise InputError(f"--stats: name at least one of {','.join(STATS)}")
    return [s for s in STATS if s in names]


def format_leaderboard(lb, mm, stats=("ord", "sep"), boot=None, groups=GROUPS, cov: dict | None = None) -> str:
    """The leaderboard as a plain-text table, sorted by ``ord_avg``.

    Values x100, as in the paper (delta in score units). With ``boot``, each value is followed by its
    interval and a rank column ends each row; a ``cluster`` column of ``lb`` is shown too. A metric
    without any score in the evaluated SEGs gets a note instead of a row of dashes.

    Parameters
    ----------
    lb : pandas.DataFrame
        The leaderboard (:func:`ts2viz.metametrics.table.leaderboard_table`).
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics it was made from (for the order and the notes).
    stats : sequence of str, default ("ord", "sep")
        The statistics to show.
    boot : ts2viz.metametrics.intervals.LeaderboardBootstrap or None, default None
        The bootstrap whose intervals ``lb`` holds.
    groups : sequence of str, default GROUPS
        The groups to show (:func:`leaderboard_groups`).
    cov : dict or None, default None
        Coverage per metric (:func:`ts2viz.scores.coverage`, by metric name).

    Returns
    -------
    str
        The table and its notes, lines joined.
    """
    ord_avg = dict(zip(mm.metrics, mm.averages()["ord_avg"]))           # the order even when ord is hidden
    lb = lb.assign(_order=lb["metric"].map(ord_avg)).sort_values("_order", ascending=False, na_position="last")
    cols = [(f"{s}_{g}", s, cell_label(s, g)) for g in groups for s in stats]
    rows = []
    empty = {}
    for _, row in lb.iterrows():
        c = (cov or {}).get(row["metric"])
        if c is not None and c.n_scored == 0:
            empty[str(row["metric"])] = f"(no scores for any of the {c.n_images} images)"
            rows.append((str(row["metric"]), None))
            continue
        cells = []
        for c, s, _ in cols:
            text = cell_text(row[c], s)
            if boot is not None and text != "-":
                text += f" [{cell_text(row[c + '_lo'], s)}, {cell_text(row[c + '_hi'], s)}]"
            cells.append(text)
        if boot is not None:
            r = row["rank"]
            cells.append("-" if r != r else f"{r:.0f} [{row['rank_lo']:.0f}, {row['rank_hi']:.0f}]")
        if "cluster" in lb.columns:
            cells.append(str(int(row["cluster"])) if row["cluster"] > 0 else "-")
        rows.append((str(row["metric"]), cells))
    heads = [h for _, _, h in cols] + (["Rank"] if boot is not None else []) + \
        (["Cluster"] if "cluster" in lb.columns else [])
    widths = [max([8, len(h)] + [len(cells[k]) for _, cells in rows if cells is not None])
              for k, h in enumerate(heads)]
    width = max(len("Metric"), *(len(m) for m, _ in rows)) if rows else len("Metric")
    lines = [f"{'Metric':<{width}}  " + "  ".join(f"{h:>{w}}" for h, w in zip(heads, widths))]
    lines.append("-" * len(lines[0]))
    for metric, cells in rows:
        if cells is None:
            lines.append(f"{metric:<{width}}  {empty[metric]}")
            continue
        lines.append(f"{metric:<{width}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(cells, widths)))
    note = f"mode={mm.mode}; {len(mm.seg_ids) - len(mm.excluded)} SEGs averaged"
    if mm.excluded:
        note += f" (SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers)"
    partial = [c for c in (cov or {}).values() if 0 < c.n_scored < c.n_images]
    if partial:
        note += f"; {len(partial)} metric(s) scored on part of the images only (see the warnings)"
    lines.append(note)
    if "delta" in stats:
        lines.append("delta columns are in score units (not x100)")
    if boot is not None:
        st = boot.settings
        lines.append(f"[lo, hi]: {100 * st.confidence:g}% percentile bootstrap intervals, SEGs resampled within "
                     f"partitions ({st.n_resamples:,} resamples, seed {st.seed}); Rank: by OrdAvg, "
                     "with its interval over the resamples")
    return "\n".join(lines)


def declare_leaderboard(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz leaderboard``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    add_eval_options(p)
    p.add_argument("--out", help="also write the leaderboard as CSV (fractions, not x100); - for stdout "
                                 "(CSV only)")
    p.add_argument("--stats", default="ord,sep", metavar="LIST",
                   help="statistics to show, some of ord,sep,delta,kendall (default: ord,sep)")
    p.add_argument("--ci", action="store_true",
                   help="add bootstrap intervals to every cell (CSV: {cell}_lo, {cell}_hi) and rank intervals")
    add_bootstrap_options(p)
    from .permutation import add_cluster_options

    add_cluster_options(p)
    from .permutation import add_two_level_option

    add_two_level_option(p)
    from .pairwise import add_pairwise_options

    add_pairwise_options(p)
    from .cost import add_cost_options

    add_cost_options(p)
    from .nuisance import add_leaderboard_options

    add_leaderboard_options(p)
    from .board_slices import add_board_slice_options

    add_board_slice_options(p)
    p.set_defaults(func=cmd_leaderboard)
