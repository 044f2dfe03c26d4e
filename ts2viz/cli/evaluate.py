"""``ts2viz leaderboard``, ``metametrics``, ``compare`` and ``significance``: meta-metrics of scores tables.

Over a SEG dataset, and how sure they are (bootstrap intervals, paired tests, permutation tests,
significance clusters).
"""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError, warn_input
from ..policy import MODES, rules_help

METAMETRICS_COLUMNS = ["seg_id", "partition", "metric", "ord", "sep", "delta", "kendall", "signed_sep", "n_walks"]


def _add_eval_options(p: argparse.ArgumentParser, metrics: bool = True) -> None:
    p.add_argument("--dataset", default="ts2",
                   help="'ts2' (bundled metadata), a dataset folder with metadata.csv, or a HF dataset id")
    p.add_argument("--scores", nargs="+", action="extend", metavar="PATH",
                   help="scores file(s), CSV or Parquet; 'ts2' names the bundled TS2 scores, e.g. --scores ts2 "
                        "mine.csv: the bundled scores plus yours, as the app shows them after an upload "
                        "(default: the bundled TS2 scores alone)")
    if metrics:
        p.add_argument("--metrics", help="comma-separated metric names to evaluate (default: all)")
    else:
        p.set_defaults(metrics=None)
    p.add_argument("--mode", choices=list(MODES), default="paper",
                   help="meta-metric policy preset: paper reproduces the published numbers (default); spec "
                        "follows the paper's text")
    p.add_argument("--policy", metavar="RULE=VALUE,...",
                   help="change rules of the preset, e.g. walk_weights=uniform,leave_out=none (rules: "
                        + rules_help() + ")")
    p.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                   help="treat metric NAME as lower-is-better (repeatable or comma-separated)")
    p.add_argument("--seg", help="evaluate only these SEG ids (comma-separated, ranges like 0-10)")
    p.add_argument("--dsg", choices=["mean", "transitive", "gated", "direct"], default=None,
                   help="accumulation of the bundled DSG columns, recomputed from the per-question answers: "
                        "mean (default; what the published web leaderboard used), transitive (alias gated: a "
                        "question fails when any ancestor fails, as DSG's README describes it and the TS2 "
                        "release's per-image files use) or direct (a question fails when a direct parent was "
                        "answered no, as DSG's scoring code does)")


def load_inputs(args: argparse.Namespace):
    """Dataset, merged scores, metric list and SEG ids from the common options (:func:`ts2viz.scores.load_inputs`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    tuple
        ``(dataset, scores, metrics, seg_ids)`` of :class:`ts2viz.scores.Inputs`.
    """
    from ..scores import load_inputs as read_inputs

    inp = read_inputs(args.dataset, args.scores, metrics=args.metrics, lower_is_better=args.lower_is_better,
                      dsg=args.dsg, seg=args.seg)
    return inp.dataset, inp.scores, inp.metrics, inp.seg_ids


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
    """Fail before any work when ``--out`` cannot be written.

    Parameters
    ----------
    path : str or None
        The ``--out`` value; ``None`` and ``-`` (stdout) are not checked.

    Raises
    ------
    InputError
        When the file cannot be written (:func:`ts2viz.atomic.check_writable`).
    """
    from ..atomic import check_writable

    if path and path != "-":
        check_writable(path)


def number_arg(text: str, kind, flag: str):
    """``text`` as a number of type ``kind``, or a one-line error naming the option (not argparse's usage block).

    Parameters
    ----------
    text : str
        The option's value as typed.
    kind : type
        ``int`` or ``float``.
    flag : str
        The option, for the message (``--resamples``).

    Returns
    -------
    int or float
        The value.

    Raises
    ------
    InputError
        If ``text`` is not such a number.
    """
    try:
        return kind(text)
    except ValueError:
        raise InputError(f"{flag}: {text!r} is not {'an integer' if kind is int else 'a number'}") from None


def write_csv(df, path: str) -> None:
    """Write a table as CSV with 6 decimals: to stdout, or to a file written atomically (never half-written).

    Every subcommand's ``--out`` goes through here.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (its index is not written).
    path : str
        ``-`` for stdout, else the file.
    """
    from ..atomic import atomic_path

    if path == "-":
        df.to_csv(sys.stdout, index=False, float_format="%.6f", lineterminator="\n")
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6f")


GROUPS = ("avg", "synth", "nat", "real")   # the CSV always has these columns (NaN if absent)


def leaderboard_groups(partitions) -> list[str]:
    """The leaderboard's groups: the average and TS2's three partitions always, then any others.

    Parameters
    ----------
    partitions : iterable of str
        The dataset's partitions.

    Returns
    -------
    list of str
        ``["avg", "synth", "nat", "real", ...]``, lower case.

    Examples
    --------
    >>> leaderboard_groups(["Nat", "Custom", "Synth"])
    ['avg', 'synth', 'nat', 'real', 'custom']
    """
    from ..metametrics import ordered_partitions

    return list(GROUPS) + [p.lower() for p in ordered_partitions(partitions) if p not in ("Synth", "Nat", "Real")]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``ts2viz leaderboard``: Ord/Sep (and more) per partition, printed as a table and/or written as CSV.

    With ``--ci``, bootstrap intervals and rank intervals (two-level with ``--image-resamples``);
    ``--clusters``, ``--pairwise``, ``--nuisance`` and ``--cost`` add their columns and notes.

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
    from ..scores import uses_bundled
    from ..statistics.bootstrap import bootstrap, leaderboard_table
    from ..statistics.rank_intervals import rank_intervals

    check_out(args.out)
    stats = _parse_stats(args.stats)
    settings = _bootstrap_settings(args)      # validated even without --ci
    from .permutation import two_level_note, two_level_settings

    settings = two_level_settings(args, settings)
    mm, cov = _compute(args, averaged_only=True)
    boot = ranks = None
    if args.ci and settings.image_resamples:
        from ..statistics.two_level_bootstrap import two_level_bootstrap

        boot = two_level_bootstrap(mm, load_inputs(args)[1], settings)
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

        lb["cluster"], cluster_note = cluster_column(mm, args, _alpha(args.alpha), lambda: load_inputs(args)[1])
    pairwise_text = None
    if args.pairwise:
        from .pairwise import pairwise_columns

        extra, pairwise_text = pairwise_columns(mm, load_inputs(args)[1], args, groups, settings if args.ci else None)
        for k, v in extra.items():
            lb[k] = v
    nuisance_text = None
    if args.nuisance:
        from .nuisance import nuisance_columns

        extra, nuisance_text = nuisance_columns(mm, load_inputs(args)[0], args, settings)
        for k, v in extra.items():
            lb[k] = v
    cost_text = None
    if args.cost:
        from .cost import cost_columns

        extra, cost_text = cost_columns(mm, args)
        for k, v in extra.items():
            lb[k] = v
    if args.out == "-":
        write_csv(lb, "-")
        return 0
    if args.out:
        write_csv(lb, args.out)
    print(format_leaderboard(lb, mm, stats, boot, groups, {c.metric: c for c in cov}))
    if boot is not None and settings.image_resamples:
        print(two_level_note(settings))
    if cluster_note:
        print(cluster_note)
    if pairwise_text:
        print(pairwise_text)
    if cost_text:
        print(cost_text)
    if nuisance_text:
        print(nuisance_text)
    if uses_bundled(args.scores):
        from ..qa.records import BUNDLED_DSG_ACCUMULATION

        print(f"DSG columns: {args.dsg or BUNDLED_DSG_ACCUMULATION} accumulation of the released per-question "
              "answers (DSG-GPT4V: released per-image scores, no per-question data)")
    return 0


def _parse_stats(text: str) -> list[str]:
    from ..metametrics import STATS

    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    for s in names:
        if s not in STATS:
            raise InputError(f"--stats: unknown statistic {s!r} (expected some of {','.join(STATS)})")
    if not names:
        raise InputError(f"--stats: name at least one of {','.join(STATS)}")
    return [s for s in STATS if s in names]


def _bootstrap_settings(args: argparse.Namespace):
    from ..statistics.bootstrap import BootstrapSettings

    def number(text: str, kind, flag: str):
        try:
            return kind(text)
        except ValueError:
            raise InputError(f"{flag}: {text!r} is not {'an integer' if kind is int else 'a number'}") from None

    try:
        return BootstrapSettings(number(args.resamples, int, "--resamples"),
                                 number(args.confidence, float, "--confidence"), number(args.seed, int, "--seed"))
    except InputError as e:
        if str(e).startswith("--"):
            raise
        flag = next(f for f in ("--resamples", "--confidence", "--seed") if f[2:7] in str(e))
        raise InputError(f"{flag}: {e}") from None


def _label(stat: str, group: str) -> str:
    """'ord', 'avg' -> 'OrdAvg'; 'signed_sep', 'nat' -> 'SignedSepNat' (the paper's column style)."""
    return "".join(w.capitalize() for w in stat.split("_")) + group.capitalize()


def _cell(value: float, stat: str) -> str:
    """A leaderboard value as printed: ord/sep/kendall x100 (as in the paper), delta in score units."""
    if value != value:
        return "-"
    return f"{value:.3f}" if stat == "delta" else f"{100 * value:.1f}"


def format_leaderboard(lb, mm, stats=("ord", "sep"), boot=None, groups=GROUPS, cov: dict | None = None) -> str:
    """The leaderboard as a plain-text table, sorted by ``ord_avg``.

    Values x100, as in the paper (delta in score units). With ``boot``, each value is followed by its
    interval and a rank column ends each row; a ``cluster`` column of ``lb`` is shown too. A metric
    without any score in the evaluated SEGs gets a note instead of a row of dashes.

    Parameters
    ----------
    lb : pandas.DataFrame
        The leaderboard (:func:`ts2viz.statistics.bootstrap.leaderboard_table`).
    mm : ts2viz.metametrics.MetaMetrics
        The meta-metrics it was made from (for the order and the notes).
    stats : sequence of str, default ("ord", "sep")
        The statistics to show.
    boot : ts2viz.statistics.bootstrap.LeaderboardBootstrap or None, default None
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
    cols = [(f"{s}_{g}", s, _label(s, g)) for g in groups for s in stats]
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
            text = _cell(row[c], s)
            if boot is not None and text != "-":
                text += f" [{_cell(row[c + '_lo'], s)}, {_cell(row[c + '_hi'], s)}]"
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
    from ..metametrics import compute
    from ..policy import resolve_policy
    from ..scores import metric_name
    from ..statistics.bootstrap import bootstrap
    from ..statistics.paired_comparison import compare

    settings = _bootstrap_settings(args)
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
    from ..statistics.bootstrap import bootstrap, cell_names
    from ..statistics.paired_comparison import pairwise
    from ..statistics.rank_intervals import rank_intervals

    check_out(args.out)
    settings = _bootstrap_settings(args)
    alpha = _alpha(args.alpha)
    mm, _ = _compute(args, averaged_only=True)
    if args.cell not in cell_names(mm):
        raise InputError(f"--cell: unknown leaderboard cell {args.cell!r} (expected one of {', '.join(cell_names(mm))})")
    boot = bootstrap(mm, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed)
    if args.test == "permutation":
        from .permutation import cmd_significance_permutation

        print(cmd_significance_permutation(args, mm, alpha, boot, lambda: load_inputs(args)[1], write_csv))
        return 0
    pw = pairwise(mm, args.cell, boot=boot)
    ranks = rank_intervals(mm, args.cell, boot=boot)
    if args.out:
        write_csv(pw.frame(), args.out)
    print(format_significance(pw, ranks, mm, alpha))
    return 0


def _alpha(text: str) -> float:
    try:
        a = float(text)
    except ValueError:
        raise InputError(f"--alpha: {text!r} is not a number") from None
    if not 0.0 < a < 1.0:
        raise InputError(f"--alpha: the significance level must be strictly between 0 and 1, got {text}")
    return a


def _spans(ranks: list[int]) -> str:
    """[2, 3, 4, 7, 9, 10] -> '2-4, 7, 9-10'."""
    out: list[str] = []
    for r in sorted(ranks):
        if out and out[-1][1] == r - 1:
            out[-1][1] = r
        else:
            out.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out) or "none"


def format_significance(pw, ranks, mm, alpha: float) -> str:
    """The leaderboard order by one cell, with rank intervals and the metrics not separated, as text.

    Parameters
    ----------
    pw : ts2viz.statistics.paired_comparison.PairwiseComparison
        All pairs' Wilcoxon tests on ``pw.cell``, Holm-corrected.
    ranks : ts2viz.statistics.rank_intervals.RankIntervals
        Each metric's rank interval.
    mm : ts2viz.metametrics.MetaMetrics
        The meta-metrics (for the notes).
    alpha : float
        The significance level: a pair with Holm p >= alpha is not separated.

    Returns
    -------
    str
        The table and its note.
    """
    import numpy as np

    from ..statistics.bootstrap import split_cell

    stat, group = split_cell(pw.cell)
    order = [int(i) for i in np.argsort(-np.nan_to_num(pw.estimate, nan=-np.inf), kind="stable")]
    place = {i: k + 1 for k, i in enumerate(order)}
    sig = pw.significant(alpha)
    head = _label(stat, group)
    rows = []
    for i in order:
        same = [place[j] for j in order if j != i and not sig[i, j]]
        lo, hi = ranks.low[i], ranks.high[i]
        rows.append([str(place[i]), pw.metrics[i], _cell(pw.estimate[i], stat),
                     "-" if lo != lo else f"[{lo:.0f}, {hi:.0f}]", _spans(same)])
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


def _pvalue(p: float) -> str:
    return "-" if p != p else (f"{p:.3f}" if p >= 0.001 else f"{p:.1e}")


def format_comparison(pc, mm, perm=None) -> str:
    """A paired comparison as a plain-text table, one row per leaderboard cell.

    Parameters
    ----------
    pc : ts2viz.statistics.paired_comparison.PairedComparison
        The comparison.
    mm : ts2viz.metametrics.MetaMetrics
        The meta-metrics (for the notes).
    perm : (numpy.ndarray, str) or None, default None
        A permutation test's p-values per cell and its note, shown in a column before ``n``.

    Returns
    -------
    str
        The table and its notes.
    """
    from ..statistics.bootstrap import split_cell

    heads = ["Cell", pc.a, pc.b, "A-B", f"{100 * pc.settings.confidence:g}% interval", "n", "Wilcoxon p"]
    if perm is not None:
        heads.insert(5, "Perm p")
    rows = []
    for k, cell in enumerate(pc.cells):
        stat, group = split_cell(cell)
        rows.append([_label(stat, group), _cell(pc.estimate_a[k], stat),
                     _cell(pc.estimate_b[k], stat), _cell(pc.difference[k], stat),
                     "-" if pc.low[k] != pc.low[k] else f"[{_cell(pc.low[k], stat)}, {_cell(pc.high[k], stat)}]",
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


def cmd_metametrics(args: argparse.Namespace) -> int:
    """``ts2viz metametrics``: per-SEG ord, sep, delta, kendall (and coverage) of every metric, as CSV.

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
        For bad input.
    """
    import numpy as np

    check_out(args.out)
    mm, cov = _compute(args, averaged_only=False)
    df = mm.segs()[METAMETRICS_COLUMNS]
    # scored images of each (SEG, metric): the per-SEG side of the coverage warnings
    df["n_images"] = np.repeat(cov[0].seg_images if cov else [], len(mm.metrics)).astype(int)
    df["n_scored"] = np.stack([c.seg_scored for c in cov], axis=1).ravel().astype(int) if cov else []
    write_csv(df, args.out)
    print(f"wrote {len(df)} rows ({len(mm.seg_ids)} SEGs x {len(mm.metrics)} metrics) to "
          f"{'stdout' if args.out == '-' else args.out}", file=sys.stderr if args.out == "-" else sys.stdout)
    return 0


def add_subcommands(sub) -> None:
    """Add ``leaderboard``, ``compare``, ``significance`` and ``metametrics`` to the parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The parser's subparsers object.
    """
    p = sub.add_parser("leaderboard", help="Ord/Sep leaderboard (overall and per partition)")
    _add_eval_options(p)
    p.add_argument("--out", help="also write the leaderboard as CSV (fractions, not x100); - for stdout "
                                 "(CSV only)")
    p.add_argument("--stats", default="ord,sep", metavar="LIST",
                   help="statistics to show, some of ord,sep,delta,kendall (default: ord,sep)")
    p.add_argument("--ci", action="store_true",
                   help="add bootstrap intervals to every cell (CSV: {cell}_lo, {cell}_hi) and rank intervals")
    _add_bootstrap_options(p)
    from .permutation import add_cluster_options, add_permutation_options

    add_cluster_options(p)
    from .permutation import add_two_level_option

    add_two_level_option(p)
    from .pairwise import add_pairwise_options

    add_pairwise_options(p)
    from .cost import add_cost_options

    add_cost_options(p)
    from .nuisance import add_leaderboard_options

    add_leaderboard_options(p)
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("compare", help="paired comparison of two metrics in every leaderboard cell")
    p.add_argument("a", metavar="A", help="metric name")
    p.add_argument("b", metavar="B", help="metric name")
    p.add_argument("--permutation", action="store_true",
                   help="add a two-sided paired permutation-test p-value per cell (whole SEGs swapped between A and "
                        "B; --permutations, --permutation-seed) and say where it disagrees with Wilcoxon")
    from .permutation import add_permutation_count_options

    add_permutation_count_options(p)
    _add_eval_options(p, metrics=False)
    _add_bootstrap_options(p)
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("significance", help="which leaderboard orderings are significant (all pairs, Holm)")
    _add_eval_options(p)
    p.add_argument("--cell", default="ord_avg", help="leaderboard cell to order by, e.g. ord_avg, sep_nat (default ord_avg)")
    p.add_argument("--alpha", default="0.05", help="significance level for Holm-corrected p-values (default 0.05)")
    p.add_argument("--out", help="also write every pair as CSV (a, b, difference, low, high, n, pvalue, pvalue_holm; "
                                 "with --test permutation: both tests' p-values and the clusters)")
    p.add_argument("--test", choices=["wilcoxon", "permutation"], default="wilcoxon",
                   help="wilcoxon: two-sided Wilcoxon signed-rank on per-SEG values, Holm (default); permutation: "
                        "paired permutation test swapping whole SEGs, with significance clusters and the pairs "
                        "where the two tests disagree")
    add_permutation_options(p)
    _add_bootstrap_options(p)
    p.set_defaults(func=cmd_significance)
    p = sub.add_parser("metametrics", help="per-SEG ord, sep, delta, kendall for every metric")
    _add_eval_options(p)
    p.add_argument("--out", required=True, help="CSV file to write; - for stdout")
    p.set_defaults(func=cmd_metametrics)


def _add_bootstrap_options(p: argparse.ArgumentParser) -> None:
    from ..statistics.bootstrap import DEFAULTS

    p.add_argument("--resamples", default=str(DEFAULTS.n_resamples), metavar="N",
                   help=f"bootstrap resamples (default {DEFAULTS.n_resamples})")
    p.add_argument("--confidence", default=str(DEFAULTS.confidence), metavar="C",
                   help=f"interval level, a fraction (default {DEFAULTS.confidence})")
    p.add_argument("--seed", default=str(DEFAULTS.seed), metavar="S",
                   help=f"seed of the resampling (default {DEFAULTS.seed})")

