"""``ts2viz leaderboard --slices FAMILY``: the leaderboard's rows per slice of SEGs (partitions, SEG tags).

Examples of the command line::

    ts2viz leaderboard --slices partition --ci --out slices.csv        # all / Synth / Nat / Real
    ts2viz leaderboard --tags seg_tags.csv --slices topic --ci          # the user's SEG tags
"""
from __future__ import annotations

import argparse

from ..errors import InputError

#: options of ``leaderboard`` that ``--slices`` does not combine with: (dest, flag)
REFUSED = (("clusters", "--clusters"), ("pairwise", "--pairwise"), ("nuisance", "--nuisance"), ("cost", "--cost"))


def add_board_slice_options(p: argparse.ArgumentParser) -> None:
    """Add ``--slices`` and ``--tags`` to the ``leaderboard`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The ``leaderboard`` parser.
    """
    p.add_argument("--slices", metavar="FAMILY",
                   help="the leaderboard per slice of SEGs of a tag family ('partition': Synth/Nat/Real, or a "
                        "family of --tags): one row per slice x metric, the slice's name in a column")
    p.add_argument("--tags", nargs="+", action="extend", default=[], metavar="FILE",
                   help="SEG tags for --slices: CSV with seg_id, family, tag (several rows for several tags)")


def refuse_combinations(args: argparse.Namespace, image_resamples: int) -> None:
    """A one-line error for the options ``--slices`` does not combine with (and ``--tags`` without it).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``leaderboard`` command line.
    image_resamples : int
        ``--image-resamples`` as validated.

    Raises
    ------
    InputError
        For ``--clusters``, ``--pairwise``, ``--nuisance``, ``--cost`` or ``--image-resamples`` beside
        ``--slices``, and ``--tags`` without ``--slices``.
    """
    if getattr(args, "tags", None) and not getattr(args, "slices", None):
        raise InputError("--tags: name the family to slice by with --slices FAMILY")
    if not getattr(args, "slices", None):
        return
    given = [flag for dest, flag in REFUSED if getattr(args, dest, None)]
    if image_resamples:
        given.append("--image-resamples")
    if given:
        raise InputError(f"--slices cannot be combined with {', '.join(given)}: run them with --seg on one slice's "
                         "SEGs, or without --slices")


def cmd_board_slices(args: argparse.Namespace, stats, settings) -> int:
    """``ts2viz leaderboard --slices FAMILY``: one row per slice x metric, through :func:`~ts2viz.cli.common.emit`.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    stats : list of str
        The statistics (``--stats``).
    settings : ts2viz.statistics.bootstrap.BootstrapSettings
        The bootstrap settings (used with ``--ci``).

    Returns
    -------
    int
        0.

    Raises
    ------
    InputError
        For an unknown family, a bad tag file, or the inputs' errors.
    """
    from ..dataset.tags import seg_slices, seg_tags
    from ..metametrics.policy import resolve_policy
    from ..metametrics.slices import board_slices
    from .common import emit, load_inputs

    ds, scores, metrics, seg_ids = load_inputs(args)
    tags = seg_tags(ds, args.tags)
    sl = seg_slices(ds, args.slices, tags)
    if seg_ids is not None:
        keep = set(seg_ids)
        sl = {name: [s for s in ids if s in keep] for name, ids in sl.items()}
    res = board_slices(ds, scores, sl, family=args.slices, metrics=metrics,
                       policy=resolve_policy(args.mode, args.policy), stats=stats,
                       bootstrap=settings if args.ci else None)
    return emit(res.frame(), args.out, lambda: format_board_slices(res))


def format_board_slices(res, stat: str = "ord") -> str:
    """The board's slices as text: slices x metrics of one averaged cell (x100), non-significant values marked.

    Parameters
    ----------
    res : ts2viz.metametrics.slices.BoardSlices
        The result.
    stat : str, default "ord"
        The statistic shown (its averaged cell).

    Returns
    -------
    str
        A header, one line per slice (its SEGs, then each metric's value; ``*`` marks p > 0.05 or no
        p-value, ``-`` no value; the slice's rank correlation with ``all``), the notes, and the number of
        significant reversals with resamples.
    """
    import math

    from .common import cell_text

    stat = stat if stat in res.stats else res.stats[0]
    v, p = res.point[f"{stat}_avg"], res.pvalue(stat)
    rank, rev = res.stability(stat)
    with_p = res.bootstrap is not None
    head = ["slice", "SEGs"] + list(res.metrics) + (["tau vs all"] if "all" in res.slices else [])
    rows = []
    for s, name in enumerate(res.slices):
        cells = [name, str(res.n_segs[s])]
        for i in range(len(res.metrics)):
            text = cell_text(v[s, i], stat)
            cells.append(text + ("*" if with_p and text != "-" and not p[s, i] <= 0.05 else ""))
        if "all" in res.slices:
            t = rank.loc[name, "all"]
            cells.append("-" if math.isnan(t) else f"{t:.2f}")
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    marks = "* p > 0.05 or no p-value, " if with_p else ""
    lines = [f"{stat}_avg x100 per slice of {res.family} (mode={res.mode}; {marks}- no value)"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)
    for name, note in zip(res.slices, res.notes):
        if note:
            lines.append(f"{name}: {note}")
    if with_p:
        st = res.bootstrap
        lines.append(f"{len(rev)} significant reversal(s) of two metrics' {stat}_avg between slices; intervals: "
                     f"{100 * st.confidence:g}% percentile bootstrap, SEGs resampled within partitions "
                     f"({st.n_resamples:,} resamples, seed {st.seed}, on every slice)")
    else:
        lines.append("add --ci for intervals, p-values and reversals")
    return "\n".join(lines)
