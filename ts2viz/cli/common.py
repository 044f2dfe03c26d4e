"""What the subcommands of ``ts2viz`` share: the meta-metric subcommands' options and inputs, and every output.

- the options of ``leaderboard``, ``compare``, ``significance`` and ``metametrics`` (:func:`add_eval_options`,
  :func:`add_bootstrap_options`) and their inputs, loaded and validated once per command (:func:`load_inputs`,
  :func:`compute_metametrics`);
- number options (:func:`number_arg`, :func:`alpha_arg`) with the one-line errors of the command line;
- the output: :func:`check_out`, :func:`write_csv` and :func:`emit` (``--out -``: the CSV alone on stdout).
"""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError, warn_input
from ..metametrics.policy import MODES, rules_help


def add_eval_options(p: argparse.ArgumentParser, metrics: bool = True) -> None:
    """Add the options every meta-metric subcommand reads: dataset, scores, metrics, policy, SEGs, DSG.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    metrics : bool, default True
        Add ``--metrics`` too (``compare`` names its two metrics as arguments).
    """
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


def compute_metametrics(args: argparse.Namespace, inputs, averaged_only: bool):
    """Meta-metrics and coverage of inputs loaded once; warns about metrics scored on part of the SEGs' images.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``--mode`` and ``--policy``).
    inputs : tuple
        ``load_inputs(args)``: dataset, scores, metrics, SEG ids (a command loads them once and passes them
        to everything that needs them).
    averaged_only : bool
        Count coverage over the SEGs that enter the averages (the leaderboard), not over every evaluated SEG
        (the per-SEG table).

    Returns
    -------
    mm : ts2viz.metametrics.results.MetaMetrics
        The meta-metrics.
    cov : list of ts2viz.scores.Coverage
        Per metric, its scored images.
    """
    from ..metametrics.policy import resolve_policy
    from ..metametrics.results import compute
    from ..scores import coverage

    ds, scores, metrics, seg_ids = inputs
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


def emit(frame, out: str | None, text, notes=()) -> int:
    """A subcommand's output: the table as CSV with ``--out``, and the readable text unless stdout is the CSV.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (written by :func:`write_csv`).
    out : str or None
        ``--out``: ``-`` writes the CSV to stdout and nothing else there (``notes`` go to stderr, as
        ``note: ...`` lines); a path writes the CSV there, then the text is printed; None prints the text only.
    text : callable
        ``text()`` gives the readable output (called only when it is printed).
    notes : iterable of str, default ()
        What the text would say that the CSV cannot (printed to stderr with ``--out -`` only).

    Returns
    -------
    int
        0, the exit code.
    """
    if out == "-":
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        write_csv(frame, "-")
        return 0
    if out:
        write_csv(frame, out)
    print(text())
    return 0


def bootstrap_settings(args: argparse.Namespace):
    """The bootstrap settings of ``--resamples``, ``--confidence`` and ``--seed``, validated.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    ts2viz.statistics.bootstrap.BootstrapSettings
        The settings.

    Raises
    ------
    InputError
        For a value that is not a number or out of range, naming the option.
    """
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


def cell_label(stat: str, group: str) -> str:
    """A leaderboard cell's column name in the paper's style.

    Parameters
    ----------
    stat : str
        The statistic (``ord``, ``sep``, ``signed_sep``, ...).
    group : str
        The SEG group (``avg``, ``synth``, ``nat``, ``real``).

    Returns
    -------
    str
        ``'ord', 'avg'`` -> ``'OrdAvg'``; ``'signed_sep', 'nat'`` -> ``'SignedSepNat'``.
    """
    return "".join(w.capitalize() for w in stat.split("_")) + group.capitalize()


def cell_text(value: float, stat: str) -> str:
    """A leaderboard value as printed.

    Parameters
    ----------
    value : float
        The cell's value (NaN: none).
    stat : str
        Its statistic.

    Returns
    -------
    str
        ord/sep/kendall x100 with one decimal (as in the paper), delta in score units with three; ``-``
        for NaN.
    """
    if value != value:
        return "-"
    return f"{value:.3f}" if stat == "delta" else f"{100 * value:.1f}"


def rank_spans(ranks: list[int]) -> str:
    """Ranks as spans of consecutive ranks.

    Parameters
    ----------
    ranks : list of int
        The ranks, in any order.

    Returns
    -------
    str
        E.g. ``[2, 3, 4, 7, 9, 10]`` -> ``'2-4, 7, 9-10'``; ``'none'`` for no rank.
    """
    out: list[list[int]] = []
    for r in sorted(ranks):
        if out and out[-1][1] == r - 1:
            out[-1][1] = r
        else:
            out.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out) or "none"


def alpha_arg(text: str) -> float:
    """``--alpha``: a significance level strictly between 0 and 1.

    Parameters
    ----------
    text : str
        The option's text.

    Returns
    -------
    float
        The level.

    Raises
    ------
    InputError
        For text that is not a number, or a level outside (0, 1).
    """
    try:
        a = float(text)
    except ValueError:
        raise InputError(f"--alpha: {text!r} is not a number") from None
    if not 0.0 < a < 1.0:
        raise InputError(f"--alpha: the significance level must be strictly between 0 and 1, got {text}")
    return a


def add_bootstrap_options(p: argparse.ArgumentParser) -> None:
    """Add ``--resamples``, ``--confidence`` and ``--seed`` (defaults: :data:`~ts2viz.statistics.bootstrap.DEFAULTS`).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    from ..statistics.bootstrap import DEFAULTS

    p.add_argument("--resamples", default=str(DEFAULTS.n_resamples), metavar="N",
                   help=f"bootstrap resamples (default {DEFAULTS.n_resamples})")
    p.add_argument("--confidence", default=str(DEFAULTS.confidence), metavar="C",
                   help=f"interval level, a fraction (default {DEFAULTS.confidence})")
    p.add_argument("--seed", default=str(DEFAULTS.seed), metavar="S",
                   help=f"seed of the resampling (default {DEFAULTS.seed})")
