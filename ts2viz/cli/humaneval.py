"""``ts2viz humaneval``: meta-evaluate metrics against human ratings (Gecko's three tasks).

Examples of the command line::

    ts2viz humaneval --gold tifa160                       # readable table, DSG raters' mean
    ts2viz humaneval --gold tifa160 --out -               # CSV on stdout
    ts2viz humaneval --gold my_set/ --scores mine.csv     # a user's own rated set and scores
    ts2viz humaneval --gold tifa160 --clusters            # + significance clusters (permutation tests)
    ts2viz humaneval --gold tifa160 --compare A B         # paired permutation test of two metrics
    ts2viz humaneval --gold tifa160 --spa                 # + soft pairwise accuracy of the model ordering
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from .common import emit, number_arg, write_csv


def declare_humaneval(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz humaneval``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    from ..gold.bundled import BUNDLED
    from ..qa.mapping import DSG_YES_RULE, YES_RULES

    p.description = ("Correlations (Spearman, Kendall, Pearson; pooled and per T2I model), pair-wise "
                     "accuracy on same-prompt image pairs (and tie-calibrated acc_eq) and model-ordering agreement "
                     "(Wilcoxon signed-rank tests over prompts) of each metric with the mean human rating.")
    p.add_argument("--gold", default="tifa160", metavar="NAME|FOLDER",
                   help=f"bundled rated set ({', '.join(BUNDLED)}) or a folder with images.csv and ratings.csv "
                        "(default tifa160)")
    p.add_argument("--ratings", metavar="NAME", help="rating set to use as gold (default: the set's default; "
                   "tifa160: dsg, the DSG raters' mean)")
    p.add_argument("--scores", nargs="+", action="extend", default=[], metavar="FILE",
                   help="more metric scores: CSV with image_id and one column per metric (higher = better)")
    p.add_argument("--metrics", help="comma-separated metrics to evaluate (default: all)")
    p.add_argument("--out", help="write CSV here ('-' for stdout; default: a readable table)")
    p.add_argument("--kendall", choices=["b", "c"], default="b", help="Kendall's tau variant (default b, scipy's)")
    p.add_argument("--spearman", choices=["textbook", "np-corrcoef"], default="textbook",
                   help="textbook Spearman (default) or np-corrcoef: Pearson's r, what TIFA's notebook labels "
                        "Spearman")
    p.add_argument("--model-average", choices=["fisher", "mean"], default="fisher",
                   help="per-T2I-model average: fisher (tanh of mean Fisher z, default) or mean (plain mean: a "
                        "'Fisher average' without the transform)")
    p.add_argument("--metric-ties", choices=["wrong", "half"], default="wrong",
                   help="pair-wise task: a metric tie on a pair the raters order counts wrong (default) or half")
    p.add_argument("--alpha", default="0.001", help="model ordering: Wilcoxon p below this is significant "
                   "(default 0.001, Gecko's)")
    p.add_argument("--dsg-missing", choices=["zero", "nan"], default="zero",
                   help="scores from released answers: an image without answers scores 0 (default, DSG's code) "
                        "or is left out")
    p.add_argument("--yes-rule", choices=list(YES_RULES), default=DSG_YES_RULE,
                   help="scores from released answers: 'yes' exactly (default, DSG's code) or containing yes "
                        "(TS2's rule)")
    p.add_argument("--no-ceiling", action="store_true", help="leave out the human:OTHER rows (other rating sets)")
    p.add_argument("--no-ci", action="store_true", help="no bootstrap intervals (faster)")
    p.add_argument("--resamples", default="10000", help="bootstrap resamples of prompts (default 10000)")
    p.add_argument("--confidence", default="0.95", help="interval level (default 0.95)")
    p.add_argument("--seed", default="0", help="resampling seed (default 0)")
    p.add_argument("--rank-bootstrap", choices=["auto", "exact", "linear"], default="auto",
                   help="Spearman's and Kendall's resamples: exact (re-ranked) or first-order; auto (default) is "
                        "exact while images x prompts <= 2,000,000 and images <= 5,000")
    p.add_argument("--spa", action="store_true", help="model ordering: add soft pairwise accuracy (WMT24/25's, "
                   "mt-metrics-eval's pce.py: permutation p-values per T2I-model pair, humans vs metric; 1000 "
                   "permutations, seed 4) beside the Wilcoxon agreement")
    from .humaneval_significance import add_significance_options

    add_significance_options(p)
    from .humaneval_slices import add_slice_options

    p.add_argument("--slices", metavar="FAMILY", help="every task per slice of a tag family (dsg-category, "
                   "t2i-model, gecko-skill, ..., 'reliable', or one of --tags): one row per slice x metric")
    add_slice_options(p)
    p.set_defaults(func=cmd_humaneval)


def load_rated(args: argparse.Namespace):
    """The rated set of ``--gold``, with its answer-based scores and the scores of ``--scores`` added.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    ts2viz.gold.RatedSet
        The rated set and every metric's scores.

    Raises
    ------
    InputError
        For a rated set or scores file that does not load, or a scores column named like a metric the set
        already has.
    """
    from ..gold import AnswerScoring, answer_scores, load_gold, read_score_table

    rated = load_gold(args.gold, answers=False)
    scoring = AnswerScoring(yes_rule=args.yes_rule, missing=args.dsg_missing)
    extra = answer_scores(rated, scoring=scoring)
    if len(extra.columns):
        rated = rated.with_scores(extra)
    for path in args.scores:
        table = read_score_table(path, rated.image_ids)
        clash = [m for m in table.columns if m in rated.metrics]
        if clash:
            raise InputError(f"metric {clash[0]!r} is already a metric of rated set {rated.name!r}; rename the column",
                             file=path)
        rated = rated.with_scores(table)
    return rated


def cmd_humaneval(args: argparse.Namespace) -> int:
    """``ts2viz humaneval``: correlations, pairwise accuracy and model ordering against human ratings.

    Printed as a table (with a leave-one-rater-out human row unless ``--no-ceiling``) and/or written as CSV;
    ``--clusters`` adds significance clusters, ``--compare A B`` runs a paired permutation test instead.

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
        For bad input (options, files, metrics), in one line.
    """
    from ..metaeval.humaneval_settings import HumanEvalSettings
    from ..metaeval.rated import evaluate_rated
    from ..statistics.bootstrap import BootstrapSettings
    from .common import check_out

    check_out(args.out)
    settings = HumanEvalSettings(kendall=args.kendall, spearman=args.spearman, model_average=args.model_average,
                                 metric_ties=args.metric_ties, alpha=number_arg(args.alpha, float, "--alpha"),
                                 rank_bootstrap=args.rank_bootstrap)
    boot = BootstrapSettings(number_arg(args.resamples, int, "--resamples"),
                             number_arg(args.confidence, float, "--confidence"), number_arg(args.seed, int, "--seed"))
    rated = load_rated(args)
    from .humaneval_slices import apply_reliable

    rated, reliable_note = apply_reliable(args, rated)
    metrics = None
    if args.metrics:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        for m in metrics:
            if m not in rated.metrics:
                raise InputError(f"--metrics: rated set {rated.name!r} has no metric {m!r} "
                                 f"(its metrics: {', '.join(rated.metrics) or 'none'})")
    if args.slices:
        from .humaneval_slices import cmd_slices

        return cmd_slices(args, rated, settings, None if args.no_ci else boot, reliable_note)
    result = evaluate_rated(rated, rating_set=args.ratings, metrics=metrics, ceiling=not args.no_ceiling,
                            settings=settings, bootstrap=None if args.no_ci else boot, aggregate=args.aggregate)
    if args.compare:
        from .humaneval_significance import cmd_compare

        return cmd_compare(args, rated, result, settings, write_csv)
    frame = result.frame()
    cluster_note = None
    if args.clusters:
        from .humaneval_significance import cluster_column

        import pandas as pd

        cluster, cluster_note = cluster_column(args, rated, result, settings)
        frame["cluster"] = pd.array(cluster, dtype="Int64")     # integers in the CSV, empty where none
    if args.spa:
        from ..metaeval.spa import spa_rated

        spa = spa_rated(rated, rating_set=args.ratings, metrics=metrics, ceiling=not args.no_ceiling)
        frame = frame.merge(spa[["metric", "spa"]], on="metric", how="left")
    if not args.no_ceiling:
        import pandas as pd

        from ..metaeval.rated import leave_one_rater_out

        loo = leave_one_rater_out(rated, args.ratings, kendall_variant=args.kendall)
        if loo["n"]:
            frame = pd.concat([frame, pd.DataFrame([{"metric": "human:leave-one-rater-out", **loo}])],
                              ignore_index=True)
    if args.aggregate != "mean" or reliable_note:
        frame["aggregate"] = args.aggregate
        frame["reliable"] = reliable_note or "all prompts"
    def text() -> str:
        table = format_humaneval(frame, rated, args.ratings or rated.default_rating_set, result,
                                 sort=args.cluster_stat if args.clusters else "spearman")
        return table + ("\n" + cluster_note if cluster_note else "")

    return emit(frame, args.out, text, notes=result.interval_notes())      # with --out -, stdout is the CSV


def _ci(v: float, lo: float, hi: float) -> str:
    from ..display import is_missing

    if is_missing(v):
        return "-"
    if is_missing(lo) or is_missing(hi):
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def format_humaneval(frame, rated, rating_set: str, result, sort: str = "spearman") -> str:
    """The ``humaneval`` result as a plain-text table, best first.

    Parameters
    ----------
    frame : pandas.DataFrame
        The result's frame (:meth:`ts2viz.metaeval.humaneval.HumanEval.frame`), with a
        ``cluster`` column when clusters were formed.
    rated : ts2viz.gold.RatedSet
        The rated set (for the title line).
    rating_set : str
        The rating set the gold is the mean of.
    result : ts2viz.metaeval.humaneval.HumanEval
        The result (its settings and bootstrap, for the notes).
    sort : str, default "spearman"
        The column to sort by.

    Returns
    -------
    str
        Header lines, then one row per metric.
    """
    import pandas as pd

    st = result.settings
    title = rated.meta.get("title") or rated.name
    lines = [f"{title}: {len(rated)} images, {rated.images['prompt_id'].nunique()} prompts, "
             f"{len(rated.t2i_models)} T2I models; gold = mean of rating set {rating_set!r}",
             f"point-wise: Spearman, Kendall tau-{st.kendall}, Pearson over all images; per-model average "
             f"({st.model_average}) of Spearman; pair-wise: same-prompt pairs the raters order (metric ties "
             f"{st.metric_ties}), acc_eq: tie-calibrated; ordering: model pairs with the humans' outcome "
             f"(Wilcoxon p < {st.alpha:g})"]
    if result.bootstrap is not None:
        lines.append(f"[{result.bootstrap.confidence:.0%} bootstrap intervals over prompts, "
                     f"{result.bootstrap.n_resamples:,} resamples, seed {result.bootstrap.seed}]")
        lines.extend(f"[{note}]" for note in result.interval_notes())
    rows = []
    for r in frame.fillna(float("nan")).sort_values(sort, ascending=False, na_position="last").itertuples(index=False):
        rows.append([r.metric, str(r.n), _ci(r.spearman, r.spearman_lo, r.spearman_hi),
                     _ci(r.kendall, r.kendall_lo, r.kendall_hi), _ci(r.pearson, r.pearson_lo, r.pearson_hi),
                     "-" if r.spearman_model_avg != r.spearman_model_avg else f"{r.spearman_model_avg:.3f}",
                     _ci(r.pairwise_acc, r.pairwise_acc_lo, r.pairwise_acc_hi),
                     _ci(r.pairwise_acc_eq, r.pairwise_acc_eq_lo, r.pairwise_acc_eq_hi),
                     "-" if r.ordering_agreement != r.ordering_agreement else f"{r.ordering_agreement:.2f}"]
                    + (["-" if pd.isna(r.spa) else f"{r.spa:.3f}"] if "spa" in frame.columns else [])
                    + (["-" if pd.isna(r.cluster) or r.cluster <= 0 else str(int(r.cluster))]
                       if "cluster" in frame.columns else []))
    head = ["metric", "n", "spearman", f"kendall_{st.kendall}", "pearson", "sp/model", "pairwise_acc",
            "acc_eq", "ordering"] + (["spa"] if "spa" in frame.columns else []) + (["cluster"] if "cluster" in frame.columns else [])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows)
    return "\n".join(lines)
