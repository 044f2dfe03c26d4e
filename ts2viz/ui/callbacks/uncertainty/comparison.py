"""Two metrics compared on one statistic: the paired difference with its interval and tests."""
from __future__ import annotations

import numpy as np

from ....metametrics import comparison as pcmp
from ....display import SCALED_STATS, fmt_stat, md_text
from ....errors import InputError
from ..common import ALL
from ...state.app_state import AppView
from .resampled import ALPHA, board_bootstrap, cell_label, cell_name, check_cell


def pair_comparison(app: AppView, mode: str, stat: str, x, y, partition: str = ALL) -> dict | None:
    """One metric against another in one leaderboard cell, paired over the same SEGs.

    :func:`ts2viz.metametrics.comparison.compare`; called by the Correlations tab's redraw for the
    caption under the pair scatter.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str
        A per-SEG statistic.
    x : str
        The x metric.
    y : str
        The y metric.
    partition : str, default ALL
        The SEGs.

    Returns
    -------
    dict or None
        ``cell``, ``x``, ``y``, ``estimate_x``, ``estimate_y``, ``difference`` (y - x, as the pair table's
        column), ``low``, ``high`` (its paired bootstrap interval), ``n`` (SEGs with both values),
        ``pvalue`` (Wilcoxon signed-rank, two-sided, not corrected) and ``confidence``; ``None`` when x and
        y are the same metric.

    Raises
    ------
    InputError
        For a metric the session does not have, an unknown statistic, or a partition without SEGs.
    """
    for m in (x, y):
        if m not in app.metrics:
            raise InputError(f"no metric {str(m)[:80]!r} loaded; choose one from the list")
    cell = cell_name(stat, partition)
    if x == y:
        return None
    entry = board_bootstrap(app, mode, [x, y])
    check_cell(entry, cell)
    c = pcmp.compare(entry.mm, y, x, boot=entry.boot)
    k = c.cells.index(cell)
    return {"cell": cell, "x": x, "y": y, "estimate_x": float(c.estimate_b[k]), "estimate_y": float(c.estimate_a[k]),
            "difference": float(c.difference[k]), "low": float(c.low[k]), "high": float(c.high[k]),
            "n": int(c.n[k]), "pvalue": float(c.pvalue[k]), "confidence": c.settings.confidence}


def _p(p: float) -> str:
    return "n/a" if np.isnan(p) else (f"{p:.3f}" if p >= 0.001 else f"{p:.1e}")


def pair_comparison_md(cmp: dict | None, stat: str) -> str:
    """The caption under the pair scatter: the difference, its interval and the Wilcoxon p.

    Parameters
    ----------
    cmp : dict or None
        What :func:`pair_comparison` returns.
    stat : str
        The per-SEG statistic (x100 or score units).

    Returns
    -------
    str
        The caption (Markdown, metric names escaped).
    """
    if cmp is None:
        return "Choose two different metrics to compare them."

    def f(v):
        return fmt_stat(stat, v)

    d = cmp["difference"]
    signed = f(d) if np.isnan(d) or d < 0 else "+" + f(d)
    unit = " (x100)" if stat in SCALED_STATS else " (score units)"
    p = cmp["pvalue"]
    zero = "includes 0" if np.isnan(cmp["low"]) or cmp["low"] <= 0 <= cmp["high"] else "excludes 0"
    verdict = ("significant" if p < ALPHA else "not significant") if not np.isnan(p) else "not testable"
    return (f"**{md_text(cmp['y'])} − {md_text(cmp['x'])}** in {cell_label(cmp['cell'])}{unit}: {f(cmp['estimate_y'])} − "
            f"{f(cmp['estimate_x'])} = **{signed}**, {cmp['confidence']:.0%} paired bootstrap interval "
            f"[{f(cmp['low'])}, {f(cmp['high'])}], which {zero}. Wilcoxon signed-rank p = {_p(p)} on the per-SEG "
            f"values of the {cmp['n']} SEGs the leaderboard averages (with both values): **{verdict}** at {ALPHA:g} for this pair alone (uncorrected; "
            "the significance heatmap above corrects for all pairs shown).")
