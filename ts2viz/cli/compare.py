"""``ts2viz compare``: a paired comparison of two metrics in every leaderboard cell.

Paired bootstrap intervals and Wilcoxon p-values, and optionally a permutation test per cell.
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from .common import (
    add_bootstrap_options,
    add_eval_options,
    bootstrap_settings,
    cell_label,
    cell_text,
    load_inputs,
)
from ..scores import metric_name


def cmd_compare(args: argparse.Namespace) -> int:
    """``ts2viz compare A B``: paired comparison of two metrics in every leaderboard cell, printed.

    Paired bootstrap intervals of the difference and Wilcoxon p-values; with ``--permutation``, permutation
    p-values too.

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
        For bad input, an unknown metric, or the same metric named twice.
    """
    from ..metametrics.comparison import compare
    from ..metametrics.intervals import bootstrap
    from ..metametrics.policy import resolve_policy
    from ..metametrics.results import compute

    settings = bootstrap_settings(args)
    ds, scores, _, seg_ids = load_inputs(args)
    args.a, args.b = (metric_name(m, scores.metrics, "compare") for m in (args.a, args.b))
    if args.a == args.b:
        raise InputError(f"compare: name two different metrics (got {args.a!r} twice)")
    mm = compute(ds, scores, [args.a, args.b], policy=resolve_policy(args.mode, args.policy), seg_ids=seg_ids)
    boot = bootstrap(mm, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed)
    pc = compare(mm, args.a, args.b, boot=boot)
    perm = None
    if args.permutation:
        from .permutation import comparison_pvalues

        perm = comparison_pvalues(mm, args, scores, pc.cells, pc.pvalue)
    print(format_comparison(pc, mm, perm))
    return 0


def _pvalue(p: float) -> str:
    return "-" if p != p else (f"{p:.3f}" if p >= 0.001 else f"{p:.1e}")


def format_comparison(pc, mm, perm=None) -> str:
    """A paired comparison as a plain-text table, one row per leaderboard cell.

    Parameters
    ----------
    pc : ts2viz.metametrics.comparison.PairedComparison
        The comparison.
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics (for the notes).
    perm : (numpy.ndarray, str) or None, default None
        A permutation test's p-values per cell and its note, shown in a column before ``n``.

    Returns
    -------
    str
        The table and its notes.
    """
    from ..metametrics.intervals import split_cell

    heads = ["Cell", pc.a, pc.b, "A-B", f"{100 * pc.settings.confidence:g}% interval", "n", "Wilcoxon p"]
    if perm is not None:
        heads.insert(5, "Perm p")
    rows = []
    for k, cell in enumerate(pc.cells):
        stat, group = split_cell(cell)
        rows.append([cell_label(stat, group), cell_text(pc.estimate_a[k], stat),
                     cell_text(pc.estimate_b[k], stat), cell_text(pc.difference[k], stat),
                     "-" if pc.low[k] != pc.low[k] else f"[{cell_text(pc.low[k], stat)}, {cell_text(pc.high[k], stat)}]",
                     str(int(pc.n[k])), _pvalue(pc.pvalue[k])])
        if perm is not None:
            rows[-1].insert(5, _pvalue(perm[0][k]))
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
    fmt = lambda cells: "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))
    note = f"mode={mm.mode}"
    if mm.excluded:
        note += f"; SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers"
    st = pc.settings
    lines = [f"{pc.a} vs {pc.b}, paired over the same SEGs ({note})", fmt(heads), "-" * len(fmt(heads))]
    lines += [fmt(r) for r in rows]
    lines.append(f"A-B = {pc.a} - {pc.b}; ord, sep, kendall x100, delta in score units. Interval: paired "
                 f"percentile bootstrap, SEGs resampled within partitions ({st.n_resamples:,} resamples, seed "
                 f"{st.seed}). p: two-sided Wilcoxon signed-rank on the per-SEG values (n SEGs with both), "
                 "not corrected for multiple comparisons.")
    if perm is not None:
        lines.append(perm[1])
    return "\n".join(lines)


def declare_compare(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz compare``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    p.add_argument("a", metavar="A", help="metric name")
    p.add_argument("b", metavar="B", help="metric name")
    p.add_argument("--permutation", action="store_true",
                   help="add a two-sided paired permutation-test p-value per cell (whole SEGs swapped between A and "
                        "B; --permutations, --permutation-seed) and say where it disagrees with Wilcoxon")
    from .permutation import add_permutation_count_options

    add_permutation_count_options(p)
    add_eval_options(p, metrics=False)
    add_bootstrap_options(p)
    p.set_defaults(func=cmd_compare)
