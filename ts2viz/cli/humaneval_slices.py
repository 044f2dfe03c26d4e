"""``ts2viz humaneval --slices``, ``--reliable``, ``--aggregate`` and ``ts2viz agreement``.

Examples of the command line::

    ts2viz humaneval --gold tifa160 --slices dsg-category --out slices.csv    # one row per slice x metric
    ts2viz humaneval --gold tifa160 --slices reliable --out rel.csv           # all / reliable / unreliable
    ts2viz humaneval --gold tifa160 --reliable 0.5                            # the reliable prompts only
    ts2viz humaneval --gold my_set/ --tags my_tags.csv --slices topic         # a user's tags
    ts2viz agreement --gold tifa160 --out alpha.csv                           # Krippendorff's alpha
"""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from .common import check_out, emit, number_arg

#: the tag family ``--slices reliable`` builds: the reliable and the other prompts
RELIABLE_FAMILY = "reliable"


def add_slice_options(p: argparse.ArgumentParser) -> None:
    """Add ``--slices``, ``--tags``, ``--reliable``, ``--reliable-measure`` and ``--aggregate`` to a parser.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The ``humaneval`` (or ``agreement``) parser.
    """
    from ..gold.model import AGGREGATES
    from ..metaeval.reliable import MEASURES

    p.add_argument("--tags", nargs="+", action="extend", default=[], metavar="FILE",
                   help="more tags: CSV with prompt_id or image_id, family, tag")
    p.add_argument("--reliable", metavar="X", help="only Gecko's reliable prompts: inter-rater disagreement below X of "
                   "the largest for every model and rating set (the paper: 0.5; Gecko2K's released flags where "
                   "the prompts are Gecko2K's)")
    p.add_argument("--reliable-measure", choices=list(MEASURES), default="variance",
                   help="disagreement of an image's ratings: variance (default, the paper's) or std")
    p.add_argument("--aggregate", choices=list(AGGREGATES), default="mean",
                   help="an image's gold from its ratings: mean (default), median or majority (recorded in the "
                        "output)")


def declare_agreement(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz agreement``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    from ..gold.bundled import BUNDLED
    from ..metaeval.agreement import AGREEMENT_RESAMPLES, LEVELS

    p.description = ("Krippendorff's alpha (the krippendorff package's; interval, ordinal, nominal) of "
                     "each rating set of a rated set, overall, per T2I model and per slice of the tag families "
                     "asked, with percentile bootstrap intervals over prompts.")
    p.add_argument("--gold", default="tifa160", metavar="NAME|FOLDER",
                   help=f"bundled rated set ({', '.join(BUNDLED)}) or a folder (default tifa160)")
    p.add_argument("--ratings", metavar="SET", help="one rating set (default: all)")
    p.add_argument("--by", nargs="+", action="extend", default=None, metavar="FAMILY",
                   help="tag families to group by besides all (default t2i-model)")
    p.add_argument("--levels", default=",".join(LEVELS), help=f"levels of measurement (default {','.join(LEVELS)})")
    p.add_argument("--out", help="write CSV here ('-' for stdout; default: a readable table)")
    p.add_argument("--no-ci", action="store_true", help="no bootstrap intervals (faster)")
    p.add_argument("--resamples", default=str(AGREEMENT_RESAMPLES),
                   help=f"bootstrap resamples of prompts (default {AGREEMENT_RESAMPLES}: one alpha per resample)")
    p.add_argument("--confidence", default="0.95", help="interval level (default 0.95)")
    p.add_argument("--seed", default="0", help="resampling seed (default 0)")
    add_slice_options(p)
    p.set_defaults(func=cmd_agreement)


def apply_reliable(args: argparse.Namespace, rated):
    """The rated set restricted to its reliable prompts when ``--reliable X`` is given (a note on stderr).

    With ``--slices reliable`` (or ``--by reliable``) the set is kept whole: X is then the threshold of
    the ``reliable`` and ``unreliable`` slices.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``reliable``, ``reliable_measure``).
    rated : ts2viz.gold.RatedSet
        The rated set.

    Returns
    -------
    rated : ts2viz.gold.RatedSet
        The set itself, or its reliable prompts' images.
    description : str
        What was kept ("" without ``--reliable``).

    Raises
    ------
    InputError
        For a threshold that is not a number in (0, 1), or no reliable prompt left.
    """
    if args.reliable is None or RELIABLE_FAMILY in (getattr(args, "slices", None), *(getattr(args, "by", None) or ())):
        return rated, ""                    # --slices/--by reliable: X is the slices' threshold
    from ..metaeval.reliable import reliable_prompts

    rel = reliable_prompts(rated, number_arg(args.reliable, float, "--reliable"), measure=args.reliable_measure)
    if not rel.prompt_ids:
        raise InputError(f"--reliable {args.reliable}: no prompt of rated set {rated.name!r} is reliable")
    print(f"note: {rel.describe()}", file=sys.stderr)
    return rated.subset(rel.image_mask), rel.describe()


def slice_tags(args: argparse.Namespace, rated):
    """The rated set's tags, the ``--tags`` files', and (for ``--slices reliable``) the reliable prompts'.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``tags``, ``slices``, ``reliable``, ``reliable_measure``).
    rated : ts2viz.gold.RatedSet
        The rated set.

    Returns
    -------
    ts2viz.gold.tags.Tags
        The tags.

    Raises
    ------
    InputError
        For a bad tag file or threshold.
    """
    from ..gold.tags import rated_tags

    tags = rated_tags(rated, args.tags)
    if getattr(args, "slices", None) == RELIABLE_FAMILY or RELIABLE_FAMILY in (getattr(args, "by", None) or []):
        from ..metaeval.reliable import reliability_tags, reliable_prompts

        x = number_arg(args.reliable, float, "--reliable") if args.reliable is not None else 0.5
        tags = tags.merged(reliability_tags(rated, reliable_prompts(rated, x, measure=args.reliable_measure),
                                            RELIABLE_FAMILY))
    return tags


def cmd_slices(args: argparse.Namespace, rated, settings, boot, reliable_note: str) -> int:
    """``ts2viz humaneval --slices FAMILY``: every task per slice, one row per slice x metric.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    rated : ts2viz.gold.RatedSet
        The rated set (already restricted by ``--reliable``).
    settings : ts2viz.metaeval.humaneval_settings.HumanEvalSettings
        The statistics' choices.
    boot : ts2viz.statistics.bootstrap.BootstrapSettings or None
        The resampling settings.
    reliable_note : str
        What ``--reliable`` kept, recorded in a column (empty: all prompts).

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    InputError
        For an unknown tag family or metric, a bad tag file, or ``--clusters``/``--compare`` beside it.
    """
    from ..gold.tags import slices
    from ..metaeval.slices import evaluate_slices

    if getattr(args, "clusters", False) or getattr(args, "compare", None):
        raise InputError("--slices cannot be combined with --clusters or --compare: run them on one slice's "
                         "folder, or without --slices")
    tags = slice_tags(args, rated)
    sl = slices(rated, tags, args.slices)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    res = evaluate_slices(rated, sl, rating_set=args.ratings, metrics=metrics, aggregate=args.aggregate,
                          settings=settings, bootstrap=boot, info={"reliable": reliable_note or "all prompts"})
    return emit(res.frame(), args.out, lambda: format_slices(res))


def format_slices(res, stat: str = "spearman") -> str:
    """A per-slice result as text: slices x metrics, non-significant values marked, then the reversals.

    Parameters
    ----------
    res : ts2viz.metaeval.slices.SliceEval
        The result.
    stat : str, default "spearman"
        The statistic shown.

    Returns
    -------
    str
        Lines: a header, one line per slice (its n, then each metric's value; ``*`` marks p > 0.05, ``-``
        no value), the slices' rank correlation with ``all`` and the number of significant reversals.
    """
    import math

    v, p = res.point[stat], res.pvalue(stat)
    rank, rev = res.stability(stat)
    head = ["slice", "images", "prompts"] + list(res.metrics) + (["tau vs all"] if "all" in res.slices else [])
    rows = []
    for s, name in enumerate(res.slices):
        cells = [name, str(res.n_images[s]), str(res.n_prompts[s])]
        for i in range(len(res.metrics)):
            val = v[s, i]
            cells.append("-" if math.isnan(val) else f"{val:.3f}" + ("*" if not p[s, i] <= 0.05 else ""))
        if "all" in res.slices:
            t = rank.loc[name, "all"]
            cells.append("-" if math.isnan(t) else f"{t:.2f}")
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = [f"{stat} per slice of {res.family} ({res.info.get('rating_set', '')} raters' "
             f"{res.info.get('aggregate', 'mean')}; * p > 0.05 or no p-value, - no value)"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)
    lines.extend(f"note: {name}: {n}" for name, n in zip(res.slices, res.notes) if n)
    lines.append(f"significant reversals of two metrics between slices: {len(rev)}")
    return "\n".join(lines)


def cmd_agreement(args: argparse.Namespace) -> int:
    """``ts2viz agreement``: Krippendorff's alpha per rating set, group and level, written or printed.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    InputError
        For bad input (rated set, rating set, family, level, options), in one line.
    """
    from ..gold import load_gold
    from ..metaeval.agreement import agreement
    from ..statistics.bootstrap import BootstrapSettings

    check_out(args.out)
    boot = None if args.no_ci else BootstrapSettings(number_arg(args.resamples, int, "--resamples"),
                                                     number_arg(args.confidence, float, "--confidence"),
                                                     number_arg(args.seed, int, "--seed"))
    levels = [lv.strip() for lv in args.levels.split(",") if lv.strip()]
    rated = load_gold(args.gold, answers=False)
    rated, note = apply_reliable(args, rated)
    tags = slice_tags(args, rated)
    by = ["t2i-model"] if args.by is None else args.by
    res = agreement(rated, None if args.ratings is None else [args.ratings], levels=levels, by=by, tags=tags,
                    bootstrap=boot)
    frame = res.frame
    frame["reliable"] = note or "all prompts"
    show = frame[["rating_set", "group_by", "group", "level", "n_images", "alpha", "alpha_lo", "alpha_hi", "note"]]
    head = (f"Krippendorff's alpha of {rated.meta.get('title') or rated.name}"
            + ("" if boot is None else f" [{boot.confidence:.0%} bootstrap intervals over prompts, "
               f"{boot.n_resamples:,} resamples, seed {boot.seed}]"))
    return emit(frame, args.out, lambda: head + "\n" + show.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
