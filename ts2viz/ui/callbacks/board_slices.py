"""The Leaderboard tab's slices of SEGs as plain functions of the session's view.

For a SEG tag family (``partition``: TS2's Synth, Nat and Real, and any family of the dataset folder's
``seg_tags.csv``): the leaderboard per slice (:func:`board_result`, :func:`ts2viz.metametrics.slices.board_slices`
on every metric the session sees), its metric x slice heatmap of Ord or signed Sep (:func:`slices_figure`,
non-significant cells marked), its table (:func:`slices_table`, values x100 with their intervals) and what they rest on
(:func:`slices_note`). Built once per mode, family and metrics, shared by the sessions that see the same
metrics. A visitor only picks among offered names: family and statistic are checked.
"""
from __future__ import annotations

from ...errors import InputError
from ...statistics.bootstrap import BootstrapSettings
from .common import interval_text

#: the slices' intervals and p-values (SEGs resampled within partitions, the leaderboard's seed)
BOARD_SLICE_BOOTSTRAP = BootstrapSettings(n_resamples=1000)
#: the leaderboard's statistics computed per slice (the table shows Ord and Sep)
BOARD_SLICE_STATS = ("ord", "sep", "signed_sep")
#: the statistics the heatmap offers: those with a null value, so a p-value to mark cells by (Sep, a
#: distance, has none)
HEATMAP_STATS = ("ord", "signed_sep")


def families(app) -> list[str]:
    """The SEG tag families the picker offers (``partition`` first).

    Parameters
    ----------
    app : AppView or AppState
        The session's view (or the app, while the page is built).

    Returns
    -------
    list of str
        The families (:func:`ts2viz.dataset.tags.seg_tags`; a few hundred rows, read again on each call).
    """
    from ...dataset.tags import seg_tags

    return seg_tags(app.dataset).families


def _check(app, family: str, stat: str | None = None) -> None:
    from ...dataset.tags import seg_tags

    seg_tags(app.dataset).check_family(family)
    if stat is not None and stat not in HEATMAP_STATS:
        raise InputError(f"statistic must be one of {', '.join(HEATMAP_STATS)}, not {str(stat)[:40]!r}")


def board_result(app, mode: str, family: str):
    """The leaderboard on each slice of a family, for every metric the session sees.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    family : str
        A family of :func:`families`.

    Returns
    -------
    ts2viz.metametrics.slices.BoardSlices
        The rows, resamples and notes per slice.

    Raises
    ------
    InputError
        For an unknown family or mode, or no scores.
    """
    _check(app, family)

    def build():
        from ...dataset.tags import seg_slices, seg_tags
        from ...metametrics.slices import board_slices

        ds = app.dataset
        return board_slices(ds, app.scores(), seg_slices(ds, family, seg_tags(ds)), family=family,
                            metrics=app.metrics, policy=mode, stats=BOARD_SLICE_STATS,
                            bootstrap=BOARD_SLICE_BOOTSTRAP)

    if not app.metrics:
        raise InputError("no scores loaded")
    return app.memo(("board-slices", mode, family), app.metrics, build)


def slices_figure(app, mode: str, family: str, stat: str = "ord"):
    """The metric x slice heatmap of one averaged cell (:func:`ts2viz.figures.slice_heatmap.board_slice_heatmap`).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    family : str
        A family of :func:`families`.
    stat : str, default "ord"
        One of :data:`HEATMAP_STATS`.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The heatmap (each cell's ``customdata``: ``[slice, metric]``).

    Raises
    ------
    InputError
        For an unknown family or statistic.
    """
    from ...figures.slice_heatmap import board_slice_heatmap

    _check(app, family, stat)
    return board_slice_heatmap(board_result(app, mode, family), stat)


def slices_table(app, mode: str, family: str):
    """The per-slice leaderboard as the tab shows it: one row per slice x metric, values x100.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    family : str
        A family of :func:`families`.

    Returns
    -------
    pandas.DataFrame
        ``slice``, ``SEGs``, ``metric``, ``Ord · Avg`` and ``Sep · Avg`` (value [interval], x100), ``Ord p``
        and ``note``; rows by slice, then by Ord (best first).
    """
    import pandas as pd

    res = board_result(app, mode, family)
    df = res.frame()
    ord_p = res.pvalue("ord")
    p = {(s, m): ord_p[i, j] for i, s in enumerate(res.slices) for j, m in enumerate(res.metrics)}
    rows = []
    for _, r in df.iterrows():
        pv = p[(r["slice"], r["metric"])]
        # no resample on the null's far side: the p-value is below the resolution of the resamples
        p_text = "–" if pv != pv else (f"< {2 / res.bootstrap.n_resamples:.2g}" if pv == 0 else f"{pv:.3g}")
        rows.append({"slice": r["slice"], "SEGs": int(r["n_segs"]), "metric": r["metric"],
                     "Ord · Avg": interval_text(r["ord_avg"], r["ord_avg_lo"], r["ord_avg_hi"], scale=100, digits=1),
                     "Sep · Avg": interval_text(r["sep_avg"], r["sep_avg_lo"], r["sep_avg_hi"], scale=100, digits=1),
                     "Ord p": p_text, "note": r["note"], "_ord": r["ord_avg"],
                     "_slice": res.slices.index(r["slice"])})
    out = pd.DataFrame(rows).sort_values(["_slice", "_ord"], ascending=[True, False], na_position="last",
                                         kind="stable")
    return out.drop(columns=["_ord", "_slice"]).reset_index(drop=True)


def slices_note(app, mode: str, family: str, stat: str = "ord") -> str:
    """What the heatmap and the table rest on: slices, resamples, marked cells, reversals, small slices.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    family : str
        A family of :func:`families`.
    stat : str, default "ord"
        The heatmap's statistic.

    Returns
    -------
    str
        Markdown.
    """
    from ...display import md_text, plural

    _check(app, family, stat)
    res = board_result(app, mode, family)
    _, rev = res.stability(stat)
    st = res.bootstrap
    marked = (f"cells whose bootstrap p-value of no association (`{stat}` = 0) is above 0.05 are dark, "
              "their value in brackets")
    small = [f"{md_text(s)} ({md_text(n)})" for s, n in zip(res.slices, res.notes) if n]
    return (f"The leaderboard ({md_text(mode)} mode) on each slice of SEGs of **{md_text(family)}**: "
            f"{plural(len(res.slices), 'slice')}, 95% intervals from {st.n_resamples:,} resamples of SEGs "
            f"within partitions (seed {st.seed}); {marked}. {plural(len(rev), 'significant reversal')} of two "
            f"metrics' {stat} between slices."
            + (" " + "; ".join(small) + "." if small else ""))
