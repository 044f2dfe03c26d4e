"""CLI parts of the permutation tests and significance clusters, and of the two-level bootstrap.

``leaderboard --clusters`` and ``significance --test permutation`` (options, the cluster column, the
significance table), and ``leaderboard --ci --image-resamples N``.
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from .common import cell_label, cell_text, rank_spans

TESTS = ("wilcoxon", "permutation")


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """Add ``--clusters``, ``--cluster-cell`` and the permutation options to ``ts2viz leaderboard``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--clusters", action="store_true",
                   help="add a significance-cluster column (CSV: cluster): greedy from the top, a new cluster "
                        "when a metric is significantly worse than its cluster's best (one-sided SEG-swap "
                        "permutation test, see --cluster-cell, --alpha, --correction)")
    p.add_argument("--cluster-cell", default="ord_avg", metavar="CELL",
                   help="leaderboard cell the clusters are formed on (default ord_avg)")
    p.add_argument("--alpha", default="0.05", help="significance level of the clusters (default 0.05)")
    add_permutation_options(p)


def add_permutation_options(p: argparse.ArgumentParser) -> None:
    """Add ``--correction`` and the permutation count options.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--correction", choices=["none", "holm"], default=None,
                   help="multiple-comparison correction of the permutation p-values (clusters: default none, "
                        "as WMT; significance: default holm)")
    add_permutation_count_options(p)


def add_permutation_count_options(p: argparse.ArgumentParser) -> None:
    """Add ``--permutations`` and ``--permutation-seed``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--permutations", default="auto", metavar="N",
                   help="permutations per test (default auto: 1000 with early stopping below p=0.02 and above 0.5, "
                        "as mt-metrics-eval; 10000 without the early stop below 0.02 when p-values are "
                        "Holm-corrected, whose smallest reachable p must be below alpha / pairs)")
    p.add_argument("--permutation-seed", default="0", metavar="S", help="seed of the permutations (default 0)")


def permutation_settings(args: argparse.Namespace, corrected: bool = False):
    """Permutation-test settings from the options.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    corrected : bool, default False
        The p-values will be Holm-corrected (or shown): the test does not stop early on a small p-value
        (its precise size matters) and ``--permutations auto`` draws 10,000 (else 1,000).

    Returns
    -------
    ts2viz.statistics.permutation_tests.PermutationSettings
        The settings.

    Raises
    ------
    InputError
        For ``--permutations`` or ``--permutation-seed`` that is not an integer or out of range.
    """
    from ..statistics.permutation_tests import PermutationSettings

    text = str(args.permutations).strip().lower()
    try:
        n = (10_000 if corrected else 1000) if text == "auto" else int(text)
    except ValueError:
        raise InputError(f"--permutations: {args.permutations!r} is not an integer (or auto)") from None
    try:
        seed = int(args.permutation_seed)
    except ValueError:
        raise InputError(f"--permutation-seed: {args.permutation_seed!r} is not an integer") from None
    try:
        return PermutationSettings(n_permutations=n, block_size=min(100, n), seed=seed,
                                   early_min=0.0 if corrected else PermutationSettings.early_min)
    except InputError as e:
        raise InputError(f"--permutations/--permutation-seed: {e}") from None


def _scores_if_delta(load_scores, cell: str):
    from ..metametrics.intervals import split_cell

    return load_scores() if split_cell(cell)[0] == "delta" else None


def check_cell(mm, cell: str, flag: str) -> None:
    """Refuse a leaderboard cell the meta-metrics do not have.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics.
    cell : str
        A cell name (``ord_avg``, ``sep_nat``, ...).
    flag : str
        The option that named it (for the message).

    Raises
    ------
    InputError
        For an unknown cell, listing the known ones.
    """
    from ..metametrics.intervals import cell_names

    if cell not in cell_names(mm):
        raise InputError(f"{flag}: unknown leaderboard cell {cell!r} (expected one of {', '.join(cell_names(mm))})")


def cluster_column(mm, args: argparse.Namespace, alpha: float, load_scores):
    """The ``cluster`` column of ``leaderboard --clusters`` and a one-line note saying how it was formed.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The leaderboard's meta-metrics.
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    alpha : float
        The significance level of a new cluster.
    load_scores : callable
        ``load_scores()`` gives the scores (read only for a delta cell, standardised per SEG).

    Returns
    -------
    cluster : numpy.ndarray
        Cluster numbers in ``mm.metrics`` order.
    note : str
        How the clusters were formed.

    Raises
    ------
    InputError
        For an unknown ``--cluster-cell`` or permutation options out of range.
    """
    from ..metametrics.permutation import leaderboard_clusters

    check_cell(mm, args.cluster_cell, "--cluster-cell")
    correction = args.correction or "none"
    settings = permutation_settings(args, corrected=correction == "holm")
    cl = leaderboard_clusters(mm, args.cluster_cell, alpha=alpha, correction=correction, settings=settings,
                              scores=_scores_if_delta(load_scores, args.cluster_cell))
    n = len(cl.members())
    note = (f"Cluster: {n} significance cluster(s) by {args.cluster_cell}, greedy from the top: a new cluster when "
            f"a metric is worse than its cluster's best with one-sided SEG-swap permutation p <= {alpha:g} "
            f"({settings.n_permutations:,} permutations at most, seed {settings.seed}, "
            f"{'no correction' if correction == 'none' else 'Holm-corrected over all ordered pairs'})"
            + ("; delta ordered and tested in SD units per SEG" if args.cluster_cell.startswith("delta_") else ""))
    return cl.cluster, note


def cmd_significance_permutation(args: argparse.Namespace, mm, alpha: float, boot, load_scores, write_csv) -> str:
    """The significance table of ``significance --test permutation``.

    Two-sided SEG-swap permutation tests of all pairs (Holm by default), significance clusters (one-sided,
    uncorrected unless ``--correction``), rank intervals, and the pairs where Wilcoxon-Holm disagrees;
    ``--out`` writes every pair as CSV.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    mm : ts2viz.metametrics.results.MetaMetrics
        The leaderboard's meta-metrics.
    alpha : float
        The significance level.
    boot : ts2viz.metametrics.intervals.LeaderboardBootstrap
        The bootstrap (for the rank intervals and the Wilcoxon comparison).
    load_scores : callable
        ``load_scores()`` gives the scores (read only for a delta cell).
    write_csv : callable
        ``write_csv(frame, path)`` (:func:`ts2viz.cli.common.write_csv`).

    Returns
    -------
    str
        The table and its notes.

    Raises
    ------
    InputError
        For permutation options out of range.
    """
    import numpy as np

    from ..metametrics.comparison import pairwise
    from ..metametrics.intervals import split_cell
    from ..metametrics.permutation import leaderboard_clusters, pairwise_permutation
    from ..metametrics.ranks import rank_intervals
    from ..statistics.wilcoxon import holm

    cell = args.cell
    correction = args.correction or "holm"
    settings = permutation_settings(args, corrected=correction == "holm")
    scores = _scores_if_delta(load_scores, cell)
    two = pairwise_permutation(mm, cell, alternative="two-sided", settings=settings, scores=scores)
    one = pairwise_permutation(mm, cell, alternative="greater", settings=settings, scores=scores)
    M = len(mm.metrics)
    I, J = np.triu_indices(M, 1)
    p_raw = two.pvalue
    p_adj = np.full((M, M), np.nan)
    if correction == "holm":
        h = holm(p_raw[I, J])
        p_adj[I, J] = p_adj[J, I] = h
    else:
        p_adj = p_raw.copy()
    sig = np.nan_to_num(p_adj, nan=1.0) <= alpha
    np.fill_diagonal(sig, False)
    cluster_correction = "none" if args.correction is None else correction
    clusters = leaderboard_clusters(mm, cell, alpha=alpha, correction=cluster_correction, tests=one)
    wil = pairwise(mm, cell, boot=boot)
    wsig = wil.significant(alpha)
    ranks = rank_intervals(mm, cell, boot=boot)
    est = two.estimate
    order = [int(i) for i in np.argsort(-np.nan_to_num(est, nan=-np.inf), kind="stable")]
    place = {i: k + 1 for k, i in enumerate(order)}
    stat, group = split_cell(cell)
    rows = []
    for i in order:
        same = [place[j] for j in order if j != i and not sig[i, j]]
        lo, hi = ranks.low[i], ranks.high[i]
        rows.append([str(place[i]), mm.metrics[i], cell_text(est[i], stat), str(int(clusters.cluster[i])),
                     "-" if lo != lo else f"[{lo:.0f}, {hi:.0f}]", rank_spans(same)])
    corr_text = "Holm" if correction == "holm" else "uncorrected"
    heads = ["#", "Metric", cell_label(stat, group), "Cluster", f"Rank {100 * boot.settings.confidence:g}%",
             f"Not separated from (permutation, {corr_text} p > {alpha:g})"]
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
    fmt = lambda cells: "  ".join(c.rjust(w) if k in (0, 2, 3, 4) else c.ljust(w)   # noqa: E731
                                  for k, (c, w) in enumerate(zip(cells, widths))).rstrip()
    lines = [fmt(heads), "-" * len(fmt(heads))] + [fmt(r) for r in rows]
    n_pairs = M * (M - 1) // 2
    lines.append(f"{int(sig[I, J].sum())} of {n_pairs} pairs significantly different: two-sided paired permutation "
                 f"test swapping whole SEGs between the two metrics ({settings.n_permutations:,} permutations at "
                 f"most, stopping early {'only above p=0.5' if settings.early_min == 0 else 'below p=0.02 and above 0.5'}, "
                 f"seed {settings.seed}), {corr_text} over all pairs"
                 + ("; delta standardised per SEG" if stat == "delta" else "") + ".")
    lines.append(f"Cluster: greedy from the top, a new cluster when a metric is worse than its cluster's best with "
                 f"one-sided permutation p <= {alpha:g} "
                 f"({'no correction, as WMT' if cluster_correction == 'none' else 'Holm'}).")
    if correction == "holm" and 1.0 / (settings.n_permutations + 1) > alpha / n_pairs:
        lines.append(f"Note: with {settings.n_permutations:,} permutations the smallest p-value is "
                     f"1/{settings.n_permutations + 1:,}, above alpha / pairs = {alpha / n_pairs:.2g}: Holm cannot "
                     "reach significance; use more --permutations.")
    disagree = [(int(i), int(j)) for i, j in zip(I, J) if sig[i, j] != wsig[i, j]]
    if disagree:
        lines.append(f"The tests disagree on {len(disagree)} pair(s) (permutation {corr_text} vs Wilcoxon "
                     f"signed-rank Holm, at {alpha:g}):")
        shown = 15
        for i, j in disagree[:shown]:
            lines.append(f"  {mm.metrics[i]} vs {mm.metrics[j]}: permutation p={p_adj[i, j]:.3g} "
                         f"({'significant' if sig[i, j] else 'not significant'}), Wilcoxon p={wil.pvalue_holm[i, j]:.3g} "
                         f"({'significant' if wsig[i, j] else 'not significant'})")
        if len(disagree) > shown:
            lines.append(f"  ... and {len(disagree) - shown} more" + (" (every pair is in --out)" if args.out else
                                                                      " (--out writes every pair)"))
    else:
        lines.append(f"Wilcoxon signed-rank with Holm agrees on every pair at {alpha:g}.")
    if args.out:
        import pandas as pd

        names = np.asarray(mm.metrics, dtype=object)
        write_csv(pd.DataFrame({
            "a": names[I], "b": names[J], "difference": two.difference[I, J],
            "pvalue_permutation": p_raw[I, J], "pvalue_permutation_adj": p_adj[I, J],
            "n_permutations": two.n_used[I, J], "pvalue_wilcoxon": wil.pvalue[I, J],
            "pvalue_wilcoxon_holm": wil.pvalue_holm[I, J], "cluster_a": clusters.cluster[I],
            "cluster_b": clusters.cluster[J]}), args.out)
    return "\n".join(lines)


def add_two_level_option(p: argparse.ArgumentParser) -> None:
    """Add ``--image-resamples`` (the two-level bootstrap) to ``ts2viz leaderboard``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--image-resamples", default="0", metavar="P",
                   help="with --ci: two-level bootstrap, SEGs resampled and then the images within each node, "
                        "from a pool of P image resamples per SEG (default 0: SEGs only)")


def two_level_settings(args: argparse.Namespace, settings):
    """Bootstrap settings with ``image_resamples`` from ``--image-resamples``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    settings : ts2viz.statistics.bootstrap.BootstrapSettings
        The settings of the other bootstrap options.

    Returns
    -------
    ts2viz.statistics.bootstrap.BootstrapSettings
        A copy with ``image_resamples`` set.

    Raises
    ------
    InputError
        For ``--image-resamples`` that is not an integer or out of range.
    """
    import dataclasses

    try:
        n = int(args.image_resamples)
    except ValueError:
        raise InputError(f"--image-resamples: {args.image_resamples!r} is not an integer") from None
    try:
        return dataclasses.replace(settings, image_resamples=n)
    except InputError as e:
        raise InputError(f"--image-resamples: {e}") from None


def two_level_note(settings) -> str:
    """The note printed under a two-level bootstrap leaderboard.

    Parameters
    ----------
    settings : ts2viz.statistics.bootstrap.BootstrapSettings
        The settings (their ``image_resamples``).

    Returns
    -------
    str
        One paragraph.
    """
    return (f"Two-level bootstrap: in every resample the drawn SEGs' images were resampled within each node "
            f"(a pool of {settings.image_resamples} image resamples per SEG), so the intervals include the "
            "uncertainty from which images happened to be in a node")


def comparison_pvalues(mm, args: argparse.Namespace, scores, cells, wilcoxon_p, alpha: float = 0.05):
    """Permutation p-values of ``compare --permutation`` in every cell, and a note.

    Two-sided SEG-swap permutation tests of ``args.a`` vs ``args.b`` (10,000 permutations by default, no
    early stop below 0.02: the p-values are shown).

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics of the two metrics.
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    scores : ts2viz.scores.Scores
        The scores (for the delta cells, standardised per SEG).
    cells : sequence of str
        The leaderboard cells.
    wilcoxon_p : array_like
        The Wilcoxon p-values of the same cells.
    alpha : float, default 0.05
        The level at which disagreements with Wilcoxon are reported.

    Returns
    -------
    pvalue : numpy.ndarray
        One p-value per cell.
    note : str
        What they are and where they disagree with Wilcoxon.

    Raises
    ------
    InputError
        For permutation options out of range.
    """
    import numpy as np

    from ..metametrics.permutation import pairwise_permutation

    settings = permutation_settings(args, corrected=True)
    a, b = mm.metrics.index(args.a), mm.metrics.index(args.b)
    p = np.array([pairwise_permutation(mm, c, alternative="two-sided", settings=settings, scores=scores).pvalue[a, b]
                  for c in cells])
    w = np.asarray(wilcoxon_p, dtype=float)
    differ = [c for c, pp, ww in zip(cells, p, w) if pp == pp and ww == ww and (pp <= alpha) != (ww <= alpha)]
    note = (f"Perm p: two-sided paired permutation test, whole SEGs swapped between the two metrics "
            f"({settings.n_permutations:,} permutations at most, seed {settings.seed}; delta in SD units per SEG), "
            "not corrected. ")
    note += (f"At {alpha:g} it disagrees with Wilcoxon on: {', '.join(differ)}." if differ else
             f"At {alpha:g} it agrees with Wilcoxon on every cell.")
    return p, note
