"""``ts2viz judges``: judges (multimodal LLMs, reward models, point-wise metrics) on side-by-side gold.

Examples of the command line::

    ts2viz judges                                          # GenAI-Bench's 1,735 pairs, its 18 judges
    ts2viz judges --parse canonical --out -                # the template's four tokens only, CSV on stdout
    ts2viz judges --gold t2i.json --verdicts preds.json    # MMRB2: a benchmark and a predictions JSON
    ts2viz judges --gold pairs.csv --scores scores.csv     # point-wise metrics as judges (tie band: acc_eq)
    ts2viz judges --gold pairs.csv --task ordering         # T2I models ordered from the SxS votes (Gecko)
    ts2viz judges --gold pairs.csv --task templates --rated FOLDER   # absolute templates vs SxS (Gecko)
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from .common import emit, number_arg

TASKS = ("judges", "ordering", "templates", "disagreement")


def declare_judges(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz judges``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    from ..gold.pairs import BUNDLED_PAIRS, PARSE_RULES

    p.description = ("One row per judge: accuracy against the human side-by-side verdicts, "
                     "position-swap accuracy and position bias, unparsed verdicts counted; bootstrap intervals "
                     "over pairs. --task ordering: T2I models ordered from the votes; --task templates: "
                     "absolute templates against SxS; --task disagreement: pairs judges and raters disagree on.")
    p.add_argument("--gold", default="genaibench-pairwise", metavar="NAME|PAIRS",
                   help=f"bundled pair set ({', '.join(BUNDLED_PAIRS)}), a folder with pairs.csv, a pair CSV, an "
                        "MMRB2 benchmark JSON or a GenAI-Bench pairwise.jsonl (default genaibench-pairwise)")
    p.add_argument("--verdicts", nargs="+", action="extend", default=[], metavar="FILE",
                   help="judges' verdicts: ts2viz CSV/parquet, a GenAI-Bench pairwise.jsonl or results folder, an "
                        "MMRB2 predictions JSON (default: the bundled set's judges)")
    p.add_argument("--parse", choices=list(PARSE_RULES), default="genaibench",
                   help="how a judge's text becomes a verdict: genaibench (the release's rule, default) or "
                        "canonical (the template's four tokens only)")
    p.add_argument("--judges", help="comma-separated judges to keep (default: all)")
    p.add_argument("--scores", nargs="+", action="extend", default=[], metavar="FILE",
                   help="point-wise metric scores (image_id, one column per metric) of the pairs' images: each "
                        "metric becomes a judge")
    p.add_argument("--tie-band", default="calibrated", metavar="calibrated|NUMBER",
                   help="a metric's tie band: calibrated (acc_eq's tie calibration on the pairs, default) or a "
                        "number (0: exact ties only)")
    p.add_argument("--task", choices=list(TASKS), default="judges", help="what to compute (default judges)")
    p.add_argument("--rated", metavar="NAME|FOLDER", help="--task templates: the rated set with the absolute "
                   "ratings of the pairs' images")
    p.add_argument("--alpha", default="0.001", help="--task ordering: Wilcoxon p below this is significant "
                   "(default 0.001, Gecko's)")
    p.add_argument("--top", default="20", help="--task disagreement: rows to write (default 20)")
    p.add_argument("--out", help="write CSV here ('-' for stdout; default: a readable table)")
    p.add_argument("--no-ci", action="store_true", help="no bootstrap intervals")
    p.add_argument("--resamples", default="2000", help="bootstrap resamples of pairs (default 2000)")
    p.add_argument("--confidence", default="0.95", help="interval level (default 0.95)")
    p.add_argument("--seed", default="0", help="resampling seed (default 0)")
    p.set_defaults(func=cmd_judges)


def judge_inputs(args: argparse.Namespace):
    """The pair set and every verdict (files, bundled, metrics) that ``args`` names.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``judges`` command line.

    Returns
    -------
    pairs : ts2viz.gold.pairs.PairSet
        The gold.
    verdicts : pandas.DataFrame
        The verdict table.

    Raises
    ------
    InputError
        A file that does not load, no verdicts, an unknown judge.
    """
    import pandas as pd

    from ..gold.folder import read_score_table
    from ..gold.pairs import BUNDLED_PAIRS, load_bundled_verdicts, load_pairs, load_verdicts
    from ..metaeval.judges import metric_verdicts

    pairs = load_pairs(args.gold)
    frames = [load_verdicts(f, pairs, parse=args.parse) for f in args.verdicts]
    if not args.verdicts and str(args.gold) in BUNDLED_PAIRS:
        frames.append(load_bundled_verdicts(str(args.gold), parse=args.parse))
    if args.scores:
        band = args.tie_band if args.tie_band == "calibrated" else number_arg(args.tie_band, float, "--tie-band")
        ids = sorted(set(pairs.pairs["image_a"]) | set(pairs.pairs["image_b"]))
        if ids == [""]:
            raise InputError(f"--scores: pair set {pairs.name!r} has no image ids (image_a, image_b) to score")
        for path in args.scores:
            table = read_score_table(path, ids)
            table.index = ids
            for m in table.columns:
                col = table[m]
                frames.append(metric_verdicts(pairs, col.reindex(pairs.pairs["image_a"]).to_numpy(float),
                                              col.reindex(pairs.pairs["image_b"]).to_numpy(float), judge=m,
                                              epsilon=band))
    if not frames:
        raise InputError(f"no verdicts: pair set {pairs.name!r} bundles none; give --verdicts FILE or --scores FILE")
    verdicts = pd.concat(frames, ignore_index=True)
    dup = verdicts.duplicated(["judge", "pair_id", "order"])
    if dup.any():
        raise InputError(f"judge {verdicts['judge'][dup].iloc[0]!r} comes from two sources; rename one")
    if args.judges:
        keep = [j.strip() for j in args.judges.split(",") if j.strip()]
        known = list(dict.fromkeys(verdicts["judge"]))
        for j in keep:
            if j not in known:
                raise InputError(f"--judges: no judge {j!r} (judges: {', '.join(known)})")
        verdicts = verdicts[verdicts["judge"].isin(keep)]
    return pairs, verdicts


def cmd_judges(args: argparse.Namespace) -> int:
    """``ts2viz judges``: one row per judge (or per model pair, template, disputed pair with ``--task``).

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
        For bad input, in one line.
    """
    from ..statistics.bootstrap import BootstrapSettings
    from .common import check_out

    check_out(args.out)
    boot = None if args.no_ci else BootstrapSettings(number_arg(args.resamples, int, "--resamples"),
                                                     number_arg(args.confidence, float, "--confidence"),
                                                     number_arg(args.seed, int, "--seed"))
    if args.task == "ordering":
        from ..gold.pairs import load_pairs
        from ..metaeval.sxs import sxs_model_ordering

        frame = sxs_model_ordering(load_pairs(args.gold), alpha=number_arg(args.alpha, float, "--alpha"))
    elif args.task == "templates":
        from ..gold import load_gold
        from ..gold.pairs import load_pairs
        from ..metaeval.sxs import template_sxs_accuracy

        if not args.rated:
            raise InputError("--task templates needs --rated NAME|FOLDER (the absolute ratings of the pairs' images)")
        frame = template_sxs_accuracy(load_pairs(args.gold), load_gold(args.rated, answers=False))
    else:
        pairs, verdicts = judge_inputs(args)
        if args.task == "disagreement":
            from ..metaeval.judges import disagreement

            top = number_arg(args.top, int, "--top")
            frame = disagreement(pairs, verdicts).head(max(top, 0))
            frame.insert(1, "prompt", frame["pair_id"].map(dict(zip(pairs.pairs["pair_id"], pairs.pairs["prompt"]))))
        else:
            from ..metaeval.judges import judge_table

            frame = judge_table(pairs, verdicts, boot=boot).frame()
    def text() -> str:
        shown = frame
        if "prompt" in frame.columns:               # the readable table cuts long prompts (the CSV keeps them)
            shown = frame.assign(prompt=[" ".join(str(p).split())[:60] for p in frame["prompt"]])
        return format_judges(shown) if args.task == "judges" else shown.to_string(index=False)

    return emit(frame, args.out, text)


def format_judges(frame) -> str:
    """The judge table as plain text: accuracies in percent with their intervals.

    Parameters
    ----------
    frame : pandas.DataFrame
        :meth:`ts2viz.metaeval.judges.JudgeResult.frame`.

    Returns
    -------
    str
        A header and one line per judge.
    """
    def cell(r, s):
        v = r[s]
        if v != v:
            return "-"
        if f"{s}_lo" in r and r[f"{s}_lo"] == r[f"{s}_lo"]:
            return f"{100 * v:.2f} [{100 * r[f'{s}_lo']:.1f}, {100 * r[f'{s}_hi']:.1f}]"
        return f"{100 * v:.2f}"

    head = ["judge", "pairs", "unparsed", "acc_4label", "acc_ties_wrong", "acc_no_ties", "swap_acc", "first_share"]
    rows = [[r["judge"], str(r["n_pairs"]), str(r["n_unparsed"]), *(cell(r, s) for s in head[3:])]
            for _, r in frame.iterrows()]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["accuracy in % of pairs (4-label: GenAI-Bench's; first_share: verdicts naming the first image shown)",
             "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows)
    return "\n".join(lines)
