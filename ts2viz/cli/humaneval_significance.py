"""CLI parts of the permutation tests on human gold standards: ``humaneval --clusters`` and ``--compare``.

``humaneval --clusters`` adds a ``cluster`` column; ``humaneval --compare A B`` runs a paired
permutation test of two metrics on every statistic.

Option names follow ``ts2viz leaderboard --clusters`` and ``ts2viz significance --test permutation``
(``--correction``, ``--permutations``, ``--permutation-seed``); ``--cluster-stat`` plays the part of
``--cluster-cell`` and ``--cluster-alpha`` that of the leaderboard's ``--alpha`` (``humaneval --alpha``
is already the model-ordering level).
"""
from __future__ import annotations

import argparse

from ..errors import InputError


def add_significance_options(p: argparse.ArgumentParser) -> None:
    """Add ``--clusters``, ``--compare``, ``--cluster-stat``, ``--cluster-alpha`` and permutation options to humaneval.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    from ..metaeval.permutation import STATISTICS
    from .permutation import add_permutation_options

    p.add_argument("--clusters", action="store_true",
                   help="add a significance-cluster column (CSV: cluster): greedy from the top, a new cluster when a "
                        "metric is significantly worse than its cluster's best (one-sided paired permutation test "
                        "swapping images' standardised scores, see --cluster-stat, --cluster-alpha, --correction)")
    p.add_argument("--cluster-stat", choices=list(STATISTICS), default="spearman",
                   help="pooled statistic the clusters are formed on and the table is sorted by (default spearman)")
    p.add_argument("--cluster-alpha", default="0.05", help="significance level of the clusters and of --compare "
                   "(default 0.05)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="paired comparison of two metrics on every pooled statistic: two-sided permutation p-value "
                        "(images' standardised scores swapped between A and B) beside the paired bootstrap interval "
                        "of the difference; --out writes it as CSV")
    add_permutation_options(p)


def _alpha(text: str) -> float:
    try:
        a = float(text)
    except ValueError:
        raise InputError(f"--cluster-alpha: {text!r} is not a number") from None
    if not 0.0 < a < 1.0:
        raise InputError(f"--cluster-alpha must be strictly between 0 and 1, got {text}")
    return a


def _inputs(args: argparse.Namespace, rated, result):
    """The score rows the humaneval table shows (same names, same order), the gold and the prompts."""
    from ..metaeval.rated import rated_score_rows

    x, names = rated_score_rows(rated, args.ratings, None, ceiling=not args.no_ceiling)
    rows = [names.index(m) for m in result.metrics]
    return x[rows], rated.human(args.ratings), rated.images["prompt_id"].to_numpy()


def _progress() -> bool:
    import sys

    return sys.stderr.isatty()


def cluster_column(args: argparse.Namespace, rated, result, settings):
    """The ``cluster`` column of ``humaneval --clusters`` and a note saying how it was formed.

    Greedy significance clusters by the pooled ``--cluster-stat`` with one-sided paired permutation tests
    (:func:`ts2viz.metaeval.permutation.gold_clusters`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    rated : ts2viz.gold.RatedSet
        The rated set with every metric's scores.
    result : ts2viz.metaeval.humaneval.HumanEval
        The ``humaneval`` result (its metrics, in order; for ``--compare``, its bootstrap too).
    settings : ts2viz.metaeval.humaneval_settings.HumanEvalSettings
        The statistics' settings (Kendall variant, ties, ...).

    Returns
    -------
    cluster : numpy.ndarray
        Cluster numbers in ``result.metrics`` order (0 for a metric without a value).
    note : str
        One line: the statistic, the test, its permutations and correction.

    Raises
    ------
    InputError
        For ``--cluster-alpha`` or permutation options out of range.
    """
    import numpy as np

    from ..metaeval.permutation import GoldStatistic, gold_clusters
    from .permutation import permutation_settings

    alpha = _alpha(args.cluster_alpha)
    correction = args.correction or "none"
    perm = permutation_settings(args, corrected=correction == "holm")
    spec = GoldStatistic.from_settings(args.cluster_stat, settings)
    x, human, prompts = _inputs(args, rated, result)
    cl, tests = gold_clusters(result.metrics, x, human, prompts, spec, alpha=alpha, correction=correction,
                              settings=perm, progress=_progress())
    n_tests = int((~np.isnan(tests.pvalue)).sum())
    note = (f"Cluster: {len(cl.members())} significance cluster(s) by pooled {spec.label()}, greedy from the top: "
            f"a new cluster when a metric is worse than its cluster's best with one-sided paired permutation "
            f"p <= {alpha:g} (each image's two z-scored scores swapped at random, the statistic recomputed over "
            f"all images; {perm.n_permutations:,} permutations at most, seed {perm.seed}; {n_tests} tests, "
            f"{'no correction, as WMT' if correction == 'none' else 'Holm-corrected over all ordered pairs'})")
    return cl.cluster, note


def cmd_compare(args: argparse.Namespace, rated, result, settings, write_csv) -> int:
    """``humaneval --compare A B``: a paired comparison of two metrics on every statistic.

    Per statistic: both values, the difference, the two-sided permutation p-value and (with intervals) the
    paired bootstrap interval and one-sided bootstrap p; printed, and/or written as CSV (``--out``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    rated : ts2viz.gold.RatedSet
        The rated set with every metric's scores.
    result : ts2viz.metaeval.humaneval.HumanEval
        The ``humaneval`` result (its metrics, in order; for ``--compare``, its bootstrap too).
    settings : ts2viz.metaeval.humaneval_settings.HumanEvalSettings
        The statistics' settings (Kendall variant, ties, ...).
    write_csv : callable
        ``write_csv(frame, path)`` (:func:`ts2viz.cli.common.write_csv`).

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    InputError
        For a metric the result lacks, the same metric twice, or options out of range.
    """
    import pandas as pd

    from ..metaeval.permutation import STATISTICS, GoldStatistic, gold_permutation_test
    from .permutation import permutation_settings

    a, b = args.compare
    for m in (a, b):
        if m not in result.metrics:
            raise InputError(f"--compare: no metric {m!r} in rated set {rated.name!r} (have: "
                             f"{', '.join(result.metrics)})")
    if a == b:
        raise InputError("--compare: give two different metrics")
    alpha = _alpha(args.cluster_alpha)
    perm = permutation_settings(args, corrected=True)      # the p-values are shown: no early stop below 0.02
    x, human, prompts = _inputs(args, rated, result)
    i, j = result.metrics.index(a), result.metrics.index(b)
    rows = []
    for stat in STATISTICS:
        spec = GoldStatistic.from_settings(stat, settings)
        r = gold_permutation_test(x[i], x[j], human, prompts, spec, alternative="two-sided", settings=perm)
        boot = result.compare(a, b, stat)
        rows.append({"a": a, "b": b, "statistic": stat, "estimate_a": float(r.estimate_a),
                     "estimate_b": float(r.estimate_b), "difference": float(r.difference),
                     "pvalue_permutation": float(r.pvalue), "n_permutations": int(r.n_used),
                     "diff_lo": boot["lo"], "diff_hi": boot["hi"], "p_bootstrap_le_0": boot["p_le_0"]})
    frame = pd.DataFrame(rows)
    if args.out == "-":
        write_csv(frame, "-")
        return 0
    if args.out:
        write_csv(frame, args.out)
    print(format_compare(frame, rated, args.ratings or rated.default_rating_set, settings, perm, alpha,
                         result.bootstrap))
    return 0


def format_compare(frame, rated, rating_set: str, settings, perm, alpha: float, boot) -> str:
    """The ``humaneval --compare`` table as plain text, one row per statistic.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per statistic (what :func:`cmd_compare` writes as CSV).
    rated : ts2viz.gold.RatedSet
        The rated set (for the title).
    rating_set : str
        The rating set the gold is the mean of.
    settings : ts2viz.metaeval.humaneval_settings.HumanEvalSettings
        The statistics' settings (for the Kendall label).
    perm : ts2viz.statistics.permutation_tests.PermutationSettings
        The permutation test's settings (for the note).
    alpha : float
        The significance level of the ``significant`` column.
    boot : ts2viz.statistics.bootstrap.BootstrapSettings or None
        The bootstrap's settings (for the note), or ``None`` without intervals.

    Returns
    -------
    str
        The title, the table and its notes.
    """
    def f(v, d=3):
        return "-" if v != v else f"{v:.{d}f}"

    title = rated.meta.get("title") or rated.name
    a, b = frame["a"].iloc[0], frame["b"].iloc[0]
    lines = [f"{title}: {a} vs {b} against the mean of rating set {rating_set!r} (pooled over images)"]
    head = ["statistic", a, b, "A - B", "perm p", "significant", "bootstrap interval"]
    rows = []
    for r in frame.itertuples(index=False):
        label = f"kendall_{settings.kendall}" if r.statistic == "kendall" else r.statistic
        rows.append([label, f(r.estimate_a), f(r.estimate_b), f(r.difference), f(r.pvalue_permutation, 4),
                     "yes" if r.pvalue_permutation <= alpha else "no",
                     "-" if r.diff_lo != r.diff_lo else f"[{r.diff_lo:.3f}, {r.diff_hi:.3f}]"])
    widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(head)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)
    lines.append(f"perm p: two-sided paired permutation test (PERM-BOTH): each image's two scores, z-scored per "
                 f"metric, swapped at random and the statistic recomputed over all images ({perm.n_permutations:,} "
                 f"permutations at most, seed {perm.seed}), not corrected; significant: p <= {alpha:g}.")
    if boot is not None:
        lines.append(f"bootstrap interval: {boot.confidence:.0%} paired percentile interval of A - B over "
                     f"{boot.n_resamples:,} resamples of prompts.")
    return "\n".join(lines)
