"""CLI part of pairwise accuracy on SEGs: ``leaderboard --pairwise`` (its options, CSV columns and table)."""
from __future__ import annotations

import argparse

from ..errors import InputError


def add_pairwise_options(p: argparse.ArgumentParser) -> None:
    """Add ``--pairwise``, ``--pairwise-folds`` and ``--pairwise-gold-ties`` to ``ts2viz leaderboard``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--pairwise", action="store_true",
                   help="add pairwise accuracy on SEGs (Deutsch et al. 2023's acc_eq over the image pairs of a "
                        "common walk, same-node pairs as gold ties; tie threshold per metric cross-validated "
                        "over SEGs) with chance baselines (CSV: pacc_* columns; intervals with --ci)")
    p.add_argument("--pairwise-folds", default="5", metavar="K",
                   help="cross-validation folds over SEGs for the tie threshold (default 5)")
    p.add_argument("--pairwise-gold-ties", choices=["include", "exclude"], default="include",
                   help="include (default: acc_eq) or exclude the same-level pairs")


def pairwise_columns(mm, scores, args: argparse.Namespace, groups, settings=None):
    """Pairwise-accuracy columns for the leaderboard and the text block that shows them.

    Pairwise accuracy on SEGs (:func:`ts2viz.metaeval.seg_pairwise.seg_pairwise`) per group, with chance
    baselines, tie rates and each metric's tie threshold.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The leaderboard's meta-metrics.
    scores : ts2viz.scores.Scores
        The scores it was computed from.
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    groups : sequence of str
        The leaderboard's groups.
    settings : ts2viz.statistics.bootstrap.BootstrapSettings or None, default None
        The settings of ``--ci``: intervals drawn from the same SEG resamples as the other cells; ``None``:
        no intervals.

    Returns
    -------
    columns : dict of str to numpy.ndarray
        ``pacc_<group>`` (with ``_lo``/``_hi``), ``pacc_chance_avg``, ``pacc_chance_ties_avg``,
        ``pacc_tie_rate_avg``, ``pacc_epsilon``, in ``mm.metrics`` order.
    text : str
        The table (x100) sorted by ``pacc_avg``, and what it shows.

    Raises
    ------
    InputError
        For ``--pairwise-folds`` that is not an integer or does not fit the SEGs.
    """
    import numpy as np

    from ..metaeval.seg_pairwise import pairwise_intervals, seg_pairwise

    try:
        folds = int(args.pairwise_folds)
    except ValueError:
        raise InputError(f"--pairwise-folds: {args.pairwise_folds!r} is not an integer") from None
    try:
        res = seg_pairwise(mm, scores, folds=folds, gold_ties=args.pairwise_gold_ties)
    except InputError as e:
        raise InputError(f"--pairwise-folds: {e}") from None
    av = res.averages()
    M = len(mm.metrics)
    nan = np.full(M, np.nan)
    iv = None
    if settings is not None:
        from ..metametrics.intervals import resample_counts

        iv = pairwise_intervals(res, resample_counts(mm, n_resamples=settings.n_resamples, seed=settings.seed),
                                settings.confidence)
    cols = {}
    for g in groups:
        cols[f"pacc_{g}"] = av.get(f"pacc_{g}", nan)
        if iv is not None:
            k = iv.cells.index(f"pacc_{g}") if f"pacc_{g}" in iv.cells else None
            cols[f"pacc_{g}_lo"] = iv.low[k] if k is not None else nan
            cols[f"pacc_{g}_hi"] = iv.high[k] if k is not None else nan
    cols["pacc_chance_avg"] = av["pacc_chance_avg"]
    cols["pacc_chance_ties_avg"] = av["pacc_chance_ties_avg"]
    cols["pacc_tie_rate_avg"] = av["pacc_tie_rate_avg"]
    cols["pacc_epsilon"] = res.epsilon_all
    # the text block, sorted by pacc_avg
    order = np.argsort(-np.nan_to_num(av["pacc_avg"], nan=-np.inf), kind="stable")
    pct = lambda v: "-" if v != v else f"{100 * v:.1f}"   # noqa: E731
    heads = ["Metric"] + [f"PAcc{g.capitalize()}" for g in groups] + ["eps", "ties%", "chance", "chance@ties"]
    rows = []
    for i in order:
        cells = [mm.metrics[i]]
        for g in groups:
            t = pct(cols[f"pacc_{g}"][i])
            if iv is not None and t != "-":
                t += f" [{pct(cols[f'pacc_{g}_lo'][i])}, {pct(cols[f'pacc_{g}_hi'][i])}]"
            cells.append(t)
        cells += [f"{res.epsilon_all[i]:.3g}", pct(av["pacc_tie_rate_avg"][i]), pct(av["pacc_chance_avg"][i]),
                  pct(av["pacc_chance_ties_avg"][i])]
        rows.append(cells)
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
    fmt = lambda r: "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    lines = ["", "Pairwise accuracy on SEGs (x100)", fmt(heads), "-" * len(fmt(heads))] + [fmt(r) for r in rows]
    what = ("acc_eq: pairs of images on a common walk; a pair at different error levels is right when the metric "
            "orders it as the errors do, a same-node pair (gold tie) when the metric ties it"
            if res.gold_ties == "include" else "pairs of images on a common walk at different error levels; a metric "
            "tie is wrong")
    fitted = (f"fitted by tie calibration on the other {res.folds - 1} of {res.folds} folds of SEGs (never on the SEG "
              "it scores; eps shown: fitted on every averaged SEG)" if res.folds >= 2 else
              "0 (too few SEGs to fit it on other SEGs than the one it scores)")
    lines.append(f"{what}. A metric ties two scores within eps, its tie threshold, {fitted}. chance: random continuous scores; chance@ties: random scores with the "
                 "metric's own tie rate (ties%)."
                 + (f" [lo, hi]: {100 * settings.confidence:g}% bootstrap intervals (same SEG resamples; the tie "
                    "threshold held fixed)." if iv is not None else ""))
    return cols, "\n".join(lines)
