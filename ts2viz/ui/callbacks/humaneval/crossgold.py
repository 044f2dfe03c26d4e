"""The cross-gold view: the ranks of the metric families the rated sets share, with rank intervals."""
from __future__ import annotations

from ....statistics.bootstrap import BootstrapSettings
from .sets import OWN_MARK, session_rated, shared_once


#: the cross-gold view's rank intervals
CROSS_BOOTSTRAP = BootstrapSettings(1000)


@shared_once
def cross_long():
    """The cross-gold ranks of the bundled rated sets (:func:`ts2viz.crossgold.cross_gold`), once per process.

    Returns
    -------
    pandas.DataFrame
        The long table of :func:`ts2viz.crossgold.cross_gold`: each source's metrics, their ranks and
        rank intervals.
    """
    from ....crossgold import cross_gold

    return cross_gold(bootstrap=CROSS_BOOTSTRAP)


def cross_gold_table(own=None):
    """Metric families x gold standards: ``rank [low–high] (value)``, one row per family.

    A session's own metrics join as rows ``NAME (yours)`` on the sets it uploaded them for, ranked with the
    shared families of that set (the set's column is recomputed for that session).

    Parameters
    ----------
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    pandas.DataFrame
        ``metric family`` and one column per ``gold:statistic``.
    """
    from ....crossgold import CROSS_NAMES, rated_rank_rows

    t = cross_long()
    if own:
        import pandas as pd

        def build():
            parts = [t]
            for name in own.columns:
                g = session_rated(name, own)
                labels = {c: l for c, l in CROSS_NAMES.get(name, {}).items() if c in g.metrics}
                labels.update({m: m + OWN_MARK for m in own.metrics(name)})
                parts = [p[p["gold"] != f"{name}:spearman"] for p in parts]
                parts.append(pd.DataFrame(rated_rank_rows(g, labels, bootstrap=CROSS_BOOTSTRAP)))
            return pd.concat(parts, ignore_index=True)

        t = own.memo(("cross", own.version), build)
    return _cross_wide(t)


def cross_gold_shown(table):
    """The cross-gold table with headers for people.

    ``ts2:ord_avg`` -> ``TS2 Ord avg``, ``tifa160:spearman`` -> ``tifa160 Spearman`` (the table
    :func:`cross_gold_table` returns keeps the ``gold:statistic`` names).

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`cross_gold_table` returns.

    Returns
    -------
    pandas.DataFrame
        The renamed table.
    """
    from ....display import column_label

    def label(c: str) -> str:
        gold, sep, stat = str(c).partition(":")
        if not sep:
            return str(c)
        return f"{'TS2' if gold == 'ts2' else gold} {column_label(stat) if stat != 'spearman' else 'Spearman'}"

    return table.rename(columns={c: label(c) for c in table.columns})


def _cross_wide(t):
    t = t.assign(cell=[f"{int(r)} [{lo:g}–{hi:g}] ({v:.3f})" for r, lo, hi, v in
                       t[["rank", "rank_lo", "rank_hi", "value"]].to_numpy()])
    wide = t.pivot(index="label", columns="gold", values="cell").fillna("–")
    order = ["ts2:ord_avg", "ts2:sep_avg"] + [c for c in wide.columns if not c.startswith("ts2:")]
    wide = wide[[c for c in order if c in wide.columns]]
    return wide.reset_index().rename(columns={"label": "metric family"})
