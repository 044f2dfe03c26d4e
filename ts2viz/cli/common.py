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


#: the name that stands for the bundled TS2 scores in ``--scores`` (as ``--dataset ts2`` does for the data)
BUNDLED = "ts2"


def uses_bundled(args: argparse.Namespace) -> bool:
    """Whether the bundled TS2 scores are among the inputs: no ``--scores``, or ``ts2`` among them.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    bool
        True when the bundled scores are read.
    """
    return not args.scores or BUNDLED in args.scores


def _folded(name: str, available) -> str:
    """``name``, or the one available name equal to it ignoring case."""
    if name in available:
        return name
    folded = [m for m in available if m.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else name


def _close(name: str, available) -> str:
    """The available names closest to ``name`` (ignoring case), as "'A' or 'B'" ('' if none is close)."""
    import difflib

    by_fold = {m.casefold(): m for m in available}
    close = [by_fold[c] for c in difflib.get_close_matches(name.casefold(), list(by_fold), n=3, cutoff=0.6)]
    return " or ".join(repr(c) for c in close)


def metric_name(name: str, available, option: str) -> str:
    """A metric name as one of the available names, matched exactly or ignoring case.

    Parameters
    ----------
    name : str
        The name the user gave (``"clipscore"`` finds ``CLIPScore``).
    available : iterable of str
        The metric names of the scores.
    option : str
        The option or subcommand that named it (for the message).

    Returns
    -------
    str
        ``name`` if available, else the one available name equal to it ignoring case.

    Raises
    ------
    InputError
        When there is no such metric, with the closest names ("did you mean ...").

    Examples
    --------
    >>> metric_name("clipscore", ["CLIPScore", "TIFA-GPT4V"], "--metrics")
    'CLIPScore'
    >>> metric_name("tifa-gpt4", ["CLIPScore", "TIFA-GPT4V"], "compare")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: compare: no metric 'tifa-gpt4' in the scores; did you mean 'TIFA-GPT4V'? ...
    """
    have = list(available)
    found = _folded(name, have)
    if found in have:
        return found
    close = _close(name, have)
    hint = f"; did you mean {close}?" if close else ""
    raise InputError(f"{option}: no metric {name!r} in the scores{hint} (have: {', '.join(have)})")


def warn_bundled_lookalikes(tables, bundled) -> None:
    """Warn when a scores file has a column named like a bundled TS2 metric but with other values.

    E.g. the release's gated DSG columns in ``published_scores.csv``, where the bundled scores (like the
    app) use the web leaderboard's accumulation. One :class:`~ts2viz.errors.InputWarning` per such
    column, naming the file and how many images differ (beyond 1e-9).

    Parameters
    ----------
    tables : sequence of ts2viz.scores.Scores
        The user's scores tables.
    bundled : ts2viz.scores.Scores
        The bundled TS2 scores.
    """
    import numpy as np

    for t in tables:
        for m in t.metrics:
            if m not in bundled.metrics:
                continue
            common = [f for f in t.file_names if f in set(bundled.file_names)]
            if not common:
                continue
            a = t.aligned(common, [m], oriented=False)[:, 0]
            b = bundled.aligned(common, [m], oriented=False)[:, 0]
            both = np.isfinite(a) & np.isfinite(b)
            if both.any() and not np.allclose(a[both], b[both], rtol=0, atol=1e-9):
                warn_input(f"column {m!r} has the name of a bundled TS2 metric but other values "
                           f"(on {int((~np.isclose(a[both], b[both], rtol=0, atol=1e-9)).sum())} of "
                           f"{int(both.sum())} images); for the bundled scores plus yours, as the app shows "
                           f"them, use --scores {BUNDLED} YOUR_FILE", file=t.source)


def load_inputs(args: argparse.Namespace):
    """Dataset, merged scores, metric list and SEG ids from the common options, all validated.

    ``--scores`` takes files and the name ``ts2`` (the bundled TS2 scores, with ``--dsg``'s accumulation
    of the DSG columns: what the app shows), so ``--scores ts2 mine.csv`` is the bundled scores plus one's
    own, as in the app after an upload. A metric in two inputs is an error (as in the app). With
    ``--metrics``, each file is read for the metrics it has among them only.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    dataset : ts2viz.dataset.Dataset
        The dataset (``--dataset``).
    scores : ts2viz.scores.Scores
        The merged scores, lower-is-better metrics recorded.
    metrics : list of str or None
        The metrics asked for (``--metrics``, spelled as in the scores), or ``None`` for all.
    seg_ids : list of int or None
        The SEGs asked for (``--seg``), or ``None`` for all.

    Raises
    ------
    InputError
        For a dataset or scores file that does not load, ``--dsg`` without the bundled scores, the
        bundled scores with another dataset, a metric or ``--lower-is-better`` name not in the scores, a
        malformed ``--seg``.
    """
    from ..dataset import load_dataset, parse_seg_ids
    from ..scores import bundled_scores, merge, read_scores

    ds = load_dataset(args.dataset)
    seg_ids = parse_seg_ids(args.seg, ds)
    lib = {m.strip() for item in args.lower_is_better for m in item.split(",") if m.strip()}
    metrics = None
    if args.metrics:
        metrics = list(dict.fromkeys(m.strip() for m in args.metrics.split(",") if m.strip()))
    files = [p for p in (args.scores or []) if p != BUNDLED]
    with_bundled = uses_bundled(args)
    if args.dsg and not with_bundled:
        raise InputError(f"--dsg applies to the bundled TS2 scores only (it recomputes their DSG columns); "
                         f"add them with --scores {BUNDLED} ... or drop --dsg")
    if with_bundled and not ds.is_ts2:   # TS2 by its content: the bundled name or a copy of the release
        if args.scores:
            raise InputError(f"--scores {BUNDLED} (the bundled TS2 scores) needs the TS2 data: --dataset ts2 or a "
                             f"folder of the TS2 release; {args.dataset} is not the TS2 release (its SEGs, "
                             "image names and node labels differ)")
        raise InputError("--scores is required with a dataset other than TS2")
    bundled = bundled_scores(dsg=args.dsg) if with_bundled else None
    headers = {p: scores_columns(p) for p in files}
    available = list(dict.fromkeys([*(bundled.metrics if bundled is not None else []),
                                    *(m for p in files for m in headers[p] if m != "file_name")]))
    if metrics is not None:
        metrics = list(dict.fromkeys(_folded(m, available) for m in metrics))
        if bundled is not None:       # (a file's reader names a column it lacks, and the file)
            for m in metrics:
                metric_name(m, available, "--metrics")
    lib = {_folded(m, available) for m in lib}
    tables = []
    if bundled is not None:
        bundled.lower_is_better |= {m for m in lib if m in bundled.metrics}
        if metrics is None or any(m in bundled.metrics for m in metrics):
            tables.append(bundled)
    for p in files:
        # With --metrics, a file is read for the metrics it has among them only (a file with none of
        # them is skipped), so a wide scores file costs the memory of the columns asked for.
        want = None
        if metrics is not None:
            want = [m for m in metrics if m in headers[p]]
            if not want:
                if (len(files) > 1 or bundled is not None) and headers[p]:
                    continue
                want = metrics    # the reader names the missing column (or the file's problem)
        tables.append(read_scores(p, dataset=ds, lower_is_better=lib, metrics=want))
    if not tables:
        raise InputError(f"--metrics: none of {', '.join(metrics)} is in the scores files")
    if bundled is None and ds.is_ts2:     # (with the bundled scores a shared name is an error)
        names = set(read_bundled_names())
        if any(m in names for t in tables for m in t.metrics):
            warn_bundled_lookalikes(tables, bundled_scores(dsg=None))
    scores = merge(tables)
    unknown = lib - set(available)
    if unknown:
        first = sorted(unknown)[0]
        hint = _close(first, available)
        raise InputError(f"--lower-is-better names a metric not in the scores: {first!r}"
                         + (f"; did you mean {hint}?" if hint else ""))
    if metrics is not None:
        for m in metrics:
            if m not in scores.metrics:
                raise InputError(f"--metrics: no metric {m!r} in the scores (have: {', '.join(scores.metrics)})")
    return ds, scores, metrics, seg_ids


def read_bundled_names() -> list[str]:
    """The metric names of the bundled TS2 scores (from the header of the released table only).

    Returns
    -------
    list of str
        The column names, ``file_name`` included.
    """
    from ..paths import bundled_data_dir

    return scores_columns(bundled_data_dir() / "ts2" / "published_scores.csv")


def scores_columns(path) -> list[str]:
    """The column names of a scores file, from its header only.

    Parameters
    ----------
    path : str or os.PathLike
        A scores file (CSV, or Parquet by its suffix ``.parquet`` / ``.pq``).

    Returns
    -------
    list of str
        The columns; empty if the file cannot be read (the scores reader then reports the problem).
    """
    from pathlib import Path

    p = Path(path)
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(p).names]
        import csv

        with open(p, encoding="utf-8-sig", errors="replace", newline="") as f:
            first = f.readline()
            if first.startswith("# ts2viz-scores"):
                first = f.readline()
        return next(csv.reader([first]), [])
    except Exception:  # noqa: BLE001 - read_scores gives the one-line error
        return []


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
    """'ord', 'avg' -> 'OrdAvg'; 'signed_sep', 'nat' -> 'SignedSepNat' (the paper's column style)."""
    return "".join(w.capitalize() for w in stat.split("_")) + group.capitalize()


def cell_text(value: float, stat: str) -> str:
    """A leaderboard value as printed: ord/sep/kendall x100 (as in the paper), delta in score units."""
    if value != value:
        return "-"
    return f"{value:.3f}" if stat == "delta" else f"{100 * value:.1f}"


def rank_spans(ranks: list[int]) -> str:
    """Ranks as spans: [2, 3, 4, 7, 9, 10] -> '2-4, 7, 9-10' ('none' for no rank)."""
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
