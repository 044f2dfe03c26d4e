"""``ts2viz significance``: which orderings of a leaderboard cell are significant (all pairs, Holm).

Wilcoxon signed-rank tests on per-SEG values, or permutation tests with significance clusters.
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
    load_inputs,
    rank_spans,
    write_csv,
)


def cmd_significance(args: argparse.Namespace) -> int:
    """``ts2viz significance``: which orderings of a leaderboard cell are significant (all pairs, Holm).

    Prints each metric's rank interval and the ranks it is not separated from; with ``--test permutation``
    the permutation test's clusters instead; ``--out`` writes every pair as CSV.

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
        For bad input, an unknown ``--cell``, or ``--alpha`` outside (0, 1).
    """
    from ..metametrics.comparison import pairwise
    from ..metametrics.intervals import bootstrap, cell_names
    from ..metametrics.ranks import rank_intervals

    check_out(args.out)
    settings = bootstrap_settings(args)
    alpha = alpha_arg(args.alpha)
    inputs = load_inputs(args)
    mm, _ = compute_metametrics(args, inputs, averaged_only=True)
    if args.cell not in cell_names(mm):
        raise InputError(f"--cell: unknown leaderboard cell {args.cell!r} (expected one of {', '.join(cell_names(mm))})")
    boot = bootstrap(mm, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed)
    if args.test == "permutation":
        from .permutation import cmd_significance_permutation

        print(cmd_significance_permutation(args, mm, alpha, boot, lambda: inputs[1], write_csv))
        return 0
    pw = pairwise(mm, args.cell, boot=boot)
    ranks = rank_intervals(mm, args.cell, boot=boot)
    if args.out:
        write_csv(pw.frame(), args.out)
    print(format_significance(pw, ranks, mm, alpha))
    return 0


def format_significance(pw, ranks, mm, alpha: float) -> str:
    """The leaderboard order by one cell, with rank intervals and the metrics not separated, as text.

    Parameters
    ----------
    pw : ts2viz.metametrics.comparison.PairwiseComparison
        All pairs' Wilcoxon tests on ``pw.cell``, Holm-corrected.
    ranks : ts2viz.metametrics.ranks.RankIntervals
        Each metric's rank interval.
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics (for the notes).
    alpha : float
        The significance level: a pair with Holm p >= alpha is not separated.

    Returns
    -------
    str
        The table and its note.
    """
    import numpy as np

    from ..metametrics.intervals import split_cell

    stat, group = split_cell(pw.cell)
    order = [int(i) for i in np.argsort(-np.nan_to_num(pw.estimate, nan=-np.inf), kind="stable")]
    place = {i: k + 1 for k, i in enumerate(order)}
    sig = pw.significant(alpha)
    head = cell_label(stat, group)
    rows = []
    for i in order:
        same = [place[j] for j in order if j != i and not sig[i, j]]
        lo, hi = ranks.low[i], ranks.high[i]
        rows.append([str(place[i]), pw.metrics[i], cell_text(pw.estimate[i], stat),
                     "-" if lo != lo else f"[{lo:.0f}, {hi:.0f}]", rank_spans(same)])
    heads = ["#", "Metric", head, f"Rank {100 * pw.settings.confidence:g}%", f"Not separated from (Holm p >= {alpha:g})"]
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
    fmt = lambda cells: "  ".join(c.rjust(w) if k in (0, 2, 3) else c.ljust(w)
                                  for k, (c, w) in enumerate(zip(cells, widths))).rstrip()
    n_pairs = len(pw.metrics) * (len(pw.metrics) - 1) // 2
    n_sig = int(sig.sum()) // 2
    st = pw.settings
    lines = [fmt(heads), "-" * len(fmt(heads))] + [fmt(r) for r in rows]
    note = f"mode={mm.mode}"
    if mm.excluded:
        note += f"; SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers"
    lines.append(f"{n_sig} of {n_pairs} pairs significantly ordered: two-sided Wilcoxon signed-rank on per-SEG "
                 f"values, Holm-corrected over all pairs ({note}). Rank interval: {st.n_resamples:,} bootstrap "
                 f"resamples of SEGs within partitions, seed {st.seed}.")
    return "\n".join(lines)


def declare_significance(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz significance``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    add_eval_options(p)
    p.add_argument("--cell", default="ord_avg", help="leaderboard cell to order by, e.g. ord_avg, sep_nat (default ord_avg)")
    p.add_argument("--alpha", default="0.05", help="significance level for Holm-corrected p-values (default 0.05)")
    p.add_argument("--out", help="also write every pair as CSV (a, b, difference, low, high, n, pvalue, pvalue_holm; "
                                 "with --test permutation: both tests' p-values and the clusters)")
    p.add_argument("--test", choices=["wilcoxon", "permutation"], default="wilcoxon",
                   help="wilcoxon: two-sided Wilcoxon signed-rank on per-SEG values, Holm (default); permutation: "
                        "paired permutation test swapping whole SEGs, with significance clusters and the pairs "
                        "where the two tests disagree")
    from .permutation import add_permutation_options

    add_permutation_options(p)
    add_bootstrap_options(p)
    p.set_defaults(func=cmd_significance)
