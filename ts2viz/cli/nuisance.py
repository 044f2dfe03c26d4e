"""``ts2viz nuisance`` and ``ts2viz transforms``: the nuisance test of a metric, and its transforms.

``nuisance`` scores every image of a SEG dataset with a metric, as it is and under each nuisance
transform; ``transforms`` lists the transforms it can use; and ``leaderboard --nuisance FILE`` adds
the stability columns beside Ord and Sep.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError, warn_input

#: the suffixes a long table or summary may be written as
SUFFIXES = (".csv", ".parquet", ".pq")


def declare_nuisance(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz nuisance``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    from ..nuisance.transforms import BASELINES, DEFAULT
    from ..metametrics.policy import MODES
    from ..statistics.bootstrap import DEFAULTS

    p.description = ("Score every image of a SEG dataset with a metric, as it is and under each nuisance transform "
                     "(through the batch engine: batched, cached with the transform in the key, resumable, GPU, "
                     "Ray), then write the per-image long table (--out) and the per-metric summary: "
                     "nuisance-to-step ratio, flip rate, Ord and Sep under nuisance, direction, with bootstrap "
                     "intervals over SEGs. `ts2viz leaderboard --nuisance FILE` adds them beside Ord and Sep.")
    p.add_argument("--metric", "-m", action="append", required=True, metavar="SPEC",
                   help="metric SPEC, e.g. clipscore:openai/clip-vit-base-patch32 (repeatable)")
    p.add_argument("--dataset", default="ts2", metavar="ts2|DIR|HF_ID", help="the SEG dataset (needs its images)")
    p.add_argument("--transforms", default=None, metavar="LIST",
                   help="comma-separated transform specs, e.g. jpeg:quality=30,blur:sigma=2 (default: "
                        + ",".join(DEFAULT) + "; `ts2viz transforms` lists them)")
    p.add_argument("--baselines", action="store_true",
                   help="also score the blind and mismatched-image baselines (" + ",".join(BASELINES) + "): every "
                        "prompt with a blank image, with noise, and with a random other SEG's image; a metric whose "
                        "score barely moves answers from the text (needs a metric that loads a model)")
    p.add_argument("--seed", default="0", metavar="S",
                   help="seed of the random transforms (noise, static, mismatch; default 0)")
    p.add_argument("--seg", default=None, metavar="IDS", help="SEG ids, e.g. 0-10,15 (default: all)")
    p.add_argument("--out", "-o", required=True, metavar="FILE",
                   help="the per-image long table (.csv or .parquet); the per-metric summary goes beside it "
                        "(FILE's name + .summary.csv) unless --summary says where")
    p.add_argument("--summary", default=None, metavar="FILE", help="where to write the per-metric summary (.csv)")
    p.add_argument("--mode", choices=list(MODES), default="paper", help="meta-metric policy for Ord and Sep")
    p.add_argument("--resamples", default=str(DEFAULTS.n_resamples), metavar="N",
                   help=f"bootstrap resamples of SEGs (default {DEFAULTS.n_resamples})")
    p.add_argument("--confidence", default=str(DEFAULTS.confidence), metavar="C", help="interval level (default 0.95)")
    p.add_argument("--device", default=None, help="cuda, cpu or mps (default: best available)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N", help="images per model call")
    p.add_argument("--cache", default=None, metavar="DIR", help="score cache folder (default: $TS2VIZ_CACHE)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                   help="score on Ray actors (a local instance, or the cluster at ADDRESS); needs ts2viz[ray]")
    p.add_argument("--ray-actors", type=int, default=None, metavar="N", help="with --ray: metric actors to start")
    p.set_defaults(func=run_nuisance)


def declare_transforms(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz transforms``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    p.description = "List the nuisance transforms, their parameters and defaults."
    p.set_defaults(func=run_transforms)


def summary_path(out: str, summary: str | None) -> str:
    """Where the summary goes: ``--summary``, else beside ``--out``.

    Parameters
    ----------
    out : str
        The ``--out`` file.
    summary : str or None
        The ``--summary`` file, if given.

    Returns
    -------
    str
        The summary's path.

    Examples
    --------
    >>> summary_path("runs/clip.csv", None)
    'runs/clip.summary.csv'
    """
    if summary:
        return summary
    p = Path(out)
    return str(p.with_name(p.stem + ".summary.csv"))


def _settings(args):
    from ..statistics.bootstrap import BootstrapSettings

    try:
        n = int(args.resamples)
    except ValueError:
        raise InputError(f"--resamples: {args.resamples!r} is not an integer") from None
    try:
        c = float(args.confidence)
    except ValueError:
        raise InputError(f"--confidence: {args.confidence!r} is not a number") from None
    try:
        return BootstrapSettings(n, c, 0)
    except InputError as e:
        flag = "--resamples" if "resamples" in str(e) else "--confidence"
        raise InputError(f"{flag}: {e}") from None


def run_nuisance(args: argparse.Namespace) -> int:
    """``ts2viz nuisance``: score a metric under nuisance transforms and summarise how much it moves.

    Every input is checked before a model is loaded; the long table (``--out``) and the summary are
    both written only when everything succeeded (each atomically). The summary is printed.

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
        For bad input (transforms, seed, bootstrap settings, batch size, Ray options, file names), in one line.
    """
    from ..atomic import atomic_path, check_writable
    from ..dataset import load_dataset, parse_seg_ids
    from ..nuisance.run import check_seed, run
    from ..nuisance.summary import format_summary, summarize
    from ..nuisance.transforms import BASELINES, parse_list
    from .scoring import Bars, quiet_progress

    try:
        transforms = parse_list(args.transforms)
    except InputError as e:
        raise InputError(f"--transforms: {e}") from None
    if getattr(args, "baselines", False):
        have = {t.spec for t in transforms}
        transforms += [t for t in parse_list(",".join(BASELINES)) if t.spec not in have]
    try:
        seed = check_seed(args.seed)
    except InputError as e:
        raise InputError(f"--seed: {e}") from None
    settings = _settings(args)
    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if args.ray_actors is not None and (args.ray is None or args.ray_actors < 1):
        raise InputError("--ray-actors needs --ray and must be at least 1")
    out, summ = str(args.out), summary_path(str(args.out), args.summary)
    if not out.lower().endswith(SUFFIXES):
        raise InputError("--out must end in .csv or .parquet", file=out)
    if not summ.lower().endswith(".csv"):
        raise InputError("--summary must end in .csv", file=summ)
    if Path(out).absolute() == Path(summ).absolute():
        raise InputError("--summary must be another file than --out", file=summ)
    check_writable(out)
    check_writable(summ)
    ds = load_dataset(args.dataset)
    seg_ids = parse_seg_ids(args.seg, ds)
    bars = Bars(args.quiet)
    try:
        with quiet_progress(args.quiet):
            ns = run(ds, args.metric, transforms, seed=seed, seg_ids=seg_ids, device=args.device,
                     batch_size=args.batch_size, cache_dir=args.cache, use_cache=not args.no_cache,
                     progress=bars, ray=args.ray, ray_actors=args.ray_actors)
    finally:
        bars.close()
    sub = ds.subset(seg_ids) if seg_ids is not None else ds
    sm = summarize(ns, sub, mode=args.mode, n_resamples=settings.n_resamples, confidence=settings.confidence,
                   seed=settings.seed)
    long = ns.frame(sub)
    # both files or neither: written to temporary files first, renamed together at the end
    with atomic_path(out) as tmp_out, atomic_path(summ) as tmp_sum:
        if out.lower().endswith((".parquet", ".pq")):
            long.to_parquet(tmp_out, index=False)
        else:
            long.to_csv(tmp_out, index=False, lineterminator="\n")
        sm.frame().to_csv(tmp_sum, index=False, lineterminator="\n")
    print(format_summary(sm))
    print(f"wrote {out}: {len(long)} rows ({len(ns.runs)} metric(s) x {len(transforms)} transform(s) x "
          f"{len(ns.runs[0].file_names) if ns.runs else 0} images); summary: {summ}")
    return 0


def run_transforms(args: argparse.Namespace) -> int:
    """``ts2viz transforms``: list the nuisance transforms, their parameters and defaults, and the default set.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        The exit code, 0.
    """
    from ..nuisance.transforms import DEFAULT, kinds

    ks = kinds()
    width = max(len(k.name) for k in ks)
    for k in ks:
        flags = [f for f, on in (("changes meaning", k.changes_meaning), ("random: seeded", k.random)) if on]
        deg = k.degrading if isinstance(k.degrading, bool) else None
        if deg:
            flags.append("degrading")
        print(f"{k.name:<{width}}  [{k.side}] {k.summary}" + (f" ({'; '.join(flags)})" if flags else ""))
        for p in k.params:
            print(f"{'':<{width}}    {p.name}={p.default_text}: {p.doc}; {p.allowed()}")
    print(f"default set: {','.join(DEFAULT)}")
    return 0


# -- leaderboard --nuisance ---------------------------------------------------------------------------

def add_leaderboard_options(p: argparse.ArgumentParser) -> None:
    """Add ``--nuisance FILE ...`` to ``ts2viz leaderboard``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    p.add_argument("--nuisance", nargs="+", action="extend", metavar="FILE",
                   help="long tables of `ts2viz nuisance`: adds stability columns beside Ord and Sep (per "
                        "transform: nsr[T], flip[T], dord[T], dsep[T], up[T], each with _lo/_hi; nsr_worst) and "
                        "prints the stability table")


def nuisance_columns(mm, dataset, args: argparse.Namespace, settings):
    """Stability columns for the leaderboard and the text block of the stability table.

    The statistics use the leaderboard's policy and SEGs, and its bootstrap settings. A metric of a
    nuisance file that is not in the scores is left out with one warning.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The leaderboard's meta-metrics.
    dataset : ts2viz.dataset.Dataset
        The dataset.
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).
    settings : ts2viz.statistics.bootstrap.BootstrapSettings
        The leaderboard's bootstrap settings.

    Returns
    -------
    columns : dict of str to numpy.ndarray
        The summary's leaderboard columns, in ``mm.metrics`` order (empty when no metric matches).
    text : str
        The stability table ("" when no metric matches).

    Raises
    ------
    InputError
        For a nuisance file that does not load, or a metric with results in two files.
    """
    from ..nuisance.run import NuisanceScores, read_nuisance
    from ..nuisance.summary import format_summary, summarize

    merged = NuisanceScores(dataset.name)
    for path in args.nuisance:
        ns = read_nuisance(path, dataset)
        for r in ns.runs:
            if r.metric in merged.metrics:
                raise InputError(f"metric {r.metric!r} has nuisance results in two files", file=path)
            if r.metric not in mm.metrics:
                warn_input(f"metric {r.metric!r} is not in the scores: its stability columns are left out (add its "
                           "scores with --scores)", file=path)
                continue
            merged.runs.append(r)
    if not merged.runs:
        return {}, ""
    sub = dataset.subset(mm.seg_ids)
    sm = summarize(merged, sub, mode=mm.policy, seg_ids=mm.seg_ids, n_resamples=settings.n_resamples,
                   confidence=settings.confidence, seed=settings.seed)
    cols = sm.leaderboard_columns(mm.metrics)
    return cols, "\nStability under nuisance (ts2viz nuisance)\n" + format_summary(sm)
