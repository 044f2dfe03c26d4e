"""Gecko's tasks per slice (skill, prompt set, DSG category, T2I model, ...), with one set of resamples for all.

"One slice is not enough" (Gecko, Wiles et al.): a metric's correlation with the raters, its pair-wise
accuracy and its model ordering change with the slice of prompts (Fig. 3: a metric x skill table with
the cells whose p-value exceeds 0.05 marked). :func:`evaluate_slices` runs every task of
:func:`ts2viz.metaeval.humaneval.evaluate` on each slice's images:

- point values: :func:`~ts2viz.metaeval.humaneval.evaluate` on the slice's images alone (the slice's
  own tie threshold, its own model ordering), so they equal scipy's statistics on the slice's rows;
- intervals and p-values: percentile bootstrap over the **prompts of the whole set**, one resample matrix
  (:func:`~ts2viz.metaeval.prompt_bootstrap.prompt_resamples`) for every slice, metric and statistic, so that
  differences between metrics and between slices are paired. A slice's resampled statistic is computed
  from its prompts' counts in the resample: Pearson, pair-wise accuracies (acc_eq at the slice's fitted
  epsilon) and the model-ordering Kendall exactly (functions of per-prompt sums), Spearman and Kendall to
  first order in the prompt counts (:mod:`ts2viz.statistics.rank_bootstrap`);
- p-values: two-sided bootstrap p-values of "no association": the fraction of resamples on the far
  side of the null value (0 for correlations, 0.5 for the pair-wise accuracy on ordered pairs), doubled
  and capped at 1 (the smallest is 2 / resamples); acc_eq has no null value and no p-value;
- a slice with fewer than two rated images is a marked row (``note``) with no number; a slice with
  fewer than :data:`FEW_PROMPTS` prompts says that its interval rests on few prompts.

:meth:`SliceEval.stability` says how stable the ranking of the metrics is across slices: Kendall's tau
between every two slices' orderings of the metrics, and the *significant reversals*: a pair of metrics
ordered one way with a paired interval excluding 0 on one slice and the other way on another. Intervals,
p-values and stability are :mod:`ts2viz.statistics.slice_table`'s, shared with the leaderboard's slices of
SEGs (:mod:`ts2viz.metametrics.slices`).

Pure numpy: no scipy, torch or gradio.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..display import plural
from ..errors import InputError
from ..parallel import one_blas_thread, pause_point, thread_map
from ..statistics.bootstrap import DEFAULTS, BootstrapSettings
from ..statistics.correlation import ranks_codes
from ..statistics.rank_bootstrap import kendall_influence_from_codes, spearman_influence_from_ranks
from ..statistics.slice_table import bootstrap_pvalue, percentile_interval, slice_stability
from .prompt_bootstrap import (FLOAT32_MIN_PROMPTS, corr_from_sums, kendall_small, pair_sums,
                               prompt_resamples, prompt_sums)
from .humaneval_settings import HumanEvalSettings
from .humaneval import average_correlations, evaluate, prompt_model_means
from .rated import rated_score_rows
from .pairwise import pairs_within

#: the statistics with intervals per slice
SLICE_STATS = ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq", "ordering_kendall")
#: the value a statistic takes with no association (its bootstrap p-value's null), None: no p-value
NULL_VALUE = {"spearman": 0.0, "kendall": 0.0, "pearson": 0.0, "pairwise_acc": 0.5, "pairwise_acc_eq": None,
              "ordering_kendall": 0.0}
#: a slice with fewer prompts than this says its interval rests on few prompts
FEW_PROMPTS = 10
#: at most this many resampled values (resamples x columns) per chunk
CHUNK_ITEMS = 5_000_000


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class SliceEval:
    """Result of :func:`evaluate_slices`: one row per slice x metric.

    Attributes
    ----------
    family : str
        The tag family the slices are tags of.
    slices : tuple of str
        The slices.
    metrics : tuple of str
        The metrics.
    n_images, n_prompts : numpy.ndarray
        (slices,) rated images and prompts of each slice.
    point : dict
        Statistic -> (slices, metrics) point values (also ``ordering_agreement`` and
        ``spearman_model_avg``).
    samples : dict
        Statistic of :data:`SLICE_STATS` -> (slices, metrics, B) float32 resampled values (empty without
        a bootstrap).
    bootstrap : BootstrapSettings or None
        The resampling settings.
    settings : HumanEvalSettings
        The statistics' choices.
    notes : tuple of str
        Per slice, why it has no number or why its interval is weak (empty when neither).
    info : dict
        What the results rest on (``rating_set``, ``aggregate``, ``reliable``), written with them.
    """

    family: str
    slices: tuple
    metrics: tuple
    n_images: np.ndarray
    n_prompts: np.ndarray
    point: dict
    samples: dict = field(default_factory=dict)
    bootstrap: BootstrapSettings | None = None
    settings: HumanEvalSettings = HumanEvalSettings()
    notes: tuple = ()
    info: dict = field(default_factory=dict)

    def interval(self, stat: str) -> tuple[np.ndarray, np.ndarray]:
        """The percentile interval of one statistic on every slice and metric.

        Parameters
        ----------
        stat : str
            One of :data:`SLICE_STATS`.

        Returns
        -------
        low, high : numpy.ndarray
            (slices, metrics) bounds; NaN without resamples.
        """
        shape = (len(self.slices), len(self.metrics))
        if stat not in self.samples or self.bootstrap is None:
            return np.full(shape, np.nan), np.full(shape, np.nan)
        return percentile_interval(self.samples[stat], self.bootstrap.confidence)

    def pvalue(self, stat: str) -> np.ndarray:
        """Two-sided bootstrap p-value of no association (see the module docstring).

        Parameters
        ----------
        stat : str
            One of :data:`SLICE_STATS`.

        Returns
        -------
        numpy.ndarray
            (slices, metrics); NaN without resamples or a null value.
        """
        null = NULL_VALUE.get(stat)
        shape = (len(self.slices), len(self.metrics))
        if null is None or stat not in self.samples or self.bootstrap is None:
            return np.full(shape, np.nan)
        return bootstrap_pvalue(self.samples[stat], null)

    def frame(self):
        """The results as a long table: one row per slice x metric.

        Returns
        -------
        pandas.DataFrame
            ``family``, ``slice``, ``n_images``, ``n_prompts``, ``metric``; each statistic of
            :data:`SLICE_STATS` with ``_lo``, ``_hi`` and ``_p``; ``spearman_model_avg``,
            ``ordering_agreement``, ``note``, and the entries of :attr:`info` (``rating_set``,
            ``aggregate``, ...).
        """
        import pandas as pd

        S, k = len(self.slices), len(self.metrics)
        cols: dict = {"family": [self.family] * (S * k), "slice": np.repeat(self.slices, k).tolist(),
                      "n_images": np.repeat(self.n_images, k), "n_prompts": np.repeat(self.n_prompts, k),
                      "metric": list(self.metrics) * S}
        # each statistic's intervals and p-values are independent array work: side by side on the CPUs
        done = thread_map(lambda stat: (self.interval(stat), self.pvalue(stat)), SLICE_STATS)
        for stat, ((lo, hi), p) in zip(SLICE_STATS, done):
            cols[stat] = self.point[stat].ravel()
            cols[f"{stat}_lo"], cols[f"{stat}_hi"] = lo.ravel(), hi.ravel()
            cols[f"{stat}_p"] = p.ravel()
        cols["spearman_model_avg"] = self.point["spearman_model_avg"].ravel()
        cols["ordering_agreement"] = self.point["ordering_agreement"].ravel()
        cols["note"] = np.repeat(np.array(self.notes or [""] * S, dtype=object), k).tolist()
        for key, value in self.info.items():
            cols[key] = [value] * (S * k)
        return pd.DataFrame(cols)

    def stability(self, stat: str = "spearman"):
        """How stable the ranking of the metrics is across slices.

        Parameters
        ----------
        stat : str, default "spearman"
            The statistic the metrics are ranked by.

        Returns
        -------
        rank_corr : pandas.DataFrame
            (slices x slices) Kendall's tau-b between the slices' point values of ``stat`` over the metrics
            (NaN for a slice with no number).
        reversals : pandas.DataFrame
            One row per significant reversal: ``metric_a``, ``metric_b``, ``slice_a`` (where a is
            significantly better: the paired interval of a - b excludes 0), ``slice_b`` (where b is),
            ``diff_a``, ``diff_b`` (a - b on each); empty without resamples.
        """
        has = stat in self.samples and self.bootstrap is not None
        return slice_stability(self.point[stat], self.samples[stat] if has else None,
                               self.bootstrap.confidence if has else 0.95, self.slices, self.metrics)


def _slice_columns(x, y, ok, pc, mc, P, M, eps, point_sp, point_kd, settings):
    """The per-prompt columns of one slice's resampled statistics (prompts of the slice only).

    Returns the prompts (rows), the table (rows, columns) and the column layout ``(k, M)``.
    """
    k = x.shape[0]
    rows = np.unique(pc)
    sums = prompt_sums(x, y, ok, pc, P)[rows].reshape(rows.size, k * 6)
    pairs = pairs_within(pc)
    psum = pair_sums(x, y, pairs, eps, pc, P, settings.metric_ties)[rows].reshape(rows.size, k * 4)
    infl = np.zeros((rows.size, 2 * k))
    for i in range(k):
        m = ok[i]
        if m.sum() < 2:
            continue
        xv, yv = x[i][m], y[m]
        ox, oy = np.argsort(xv, kind="stable"), np.argsort(yv, kind="stable")
        rx, cx = ranks_codes(xv, ox)
        ry, cy = ranks_codes(yv, oy)
        for c, (val, psi) in enumerate((spearman_influence_from_ranks(rx, cx, ry, cy),
                                        kendall_influence_from_codes(cx, cy, ox, settings.kendall))):
            if not np.isnan(psi).any():
                infl[:, 2 * i + c] = np.bincount(pc[m], weights=psi, minlength=P)[rows]
    cells = prompt_model_means(x, pc, mc, P, M)[:, rows]                    # (k, rows, M)
    hcells = prompt_model_means(y[None, :], pc, mc, P, M)[0, rows]         # (rows, M)
    cv = np.nan_to_num(cells).transpose(1, 0, 2).reshape(rows.size, k * M)
    cm = (~np.isnan(cells)).transpose(1, 0, 2).reshape(rows.size, k * M).astype(float)
    table = np.concatenate([sums, psum, infl, cv, cm, np.nan_to_num(hcells), (~np.isnan(hcells)).astype(float)], axis=1)
    return rows, table


def _decode(t, k, M, point_sp, point_kd, base_infl):
    """The resampled statistics of one slice, each (k, b), from its resampled column sums ``t`` (columns, b)."""
    b = t.shape[1]
    out = {}
    sums = t[:k * 6].reshape(k, 6, b)
    out["pearson"] = corr_from_sums(np.moveaxis(sums, 1, -1))
    c0 = k * 6
    p4 = t[c0:c0 + 4 * k].reshape(k, 4, b)
    c1 = c0 + 4 * k
    infl = t[c1:c1 + 2 * k].reshape(k, 2, b) - base_infl.reshape(k, 2, 1)
    c2 = c1 + 2 * k
    mv = t[c2:c2 + k * M].reshape(k, M, b)
    mn = t[c2 + k * M:c2 + 2 * k * M].reshape(k, M, b)
    c3 = c2 + 2 * k * M
    hv, hm = t[c3:c3 + M], t[c3 + M:c3 + 2 * M]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pairwise_acc"] = np.where(p4[:, 1] > 0, p4[:, 0] / p4[:, 1], np.nan)
        out["pairwise_acc_eq"] = np.where(p4[:, 3] > 0, p4[:, 2] / p4[:, 3], np.nan)
        mm = np.where(mn > 0, mv / mn, np.nan)
        hh = np.where(hm > 0, hv / hm, np.nan)
    out["ordering_kendall"] = kendall_small(np.moveaxis(mm, 1, -1), hh.T[None])      # the raters' side once
    drawn = sums[:, 0] >= 2                                                  # the slice has images drawn
    out["spearman"] = np.where(drawn, np.clip(point_sp[:, None] + infl[:, 0], -1, 1), np.nan)
    out["kendall"] = np.where(drawn, np.clip(point_kd[:, None] + infl[:, 1], -1, 1), np.nan)
    return out


def evaluate_slices_arrays(scores, human, prompts, models, metrics: Sequence[str], masks, slice_names: Sequence[str],
                           *, family: str = "slices", settings: HumanEvalSettings = HumanEvalSettings(),
                           bootstrap: BootstrapSettings | None = DEFAULTS, info: dict | None = None) -> SliceEval:
    """Gecko's tasks on each slice of a set of images (see the module docstring).

    Parameters
    ----------
    scores : array_like
        (k, n) metric scores, NaN where not scored.
    human : array_like
        (n,) gold per image (NaN: not rated).
    prompts, models : array_like
        (n,) prompt and T2I model of each image.
    metrics : sequence of str
        The k metric names.
    masks : array_like
        (slices, n) bool: the images of each slice.
    slice_names : sequence of str
        The slices' names.
    family : str, default "slices"
        The tag family (for the table).
    settings : HumanEvalSettings, default HumanEvalSettings()
        The statistics' choices.
    bootstrap : BootstrapSettings or None, default DEFAULTS
        Resampling settings (prompts of the whole set), or None for no intervals.
    info : dict, optional
        What the results rest on, written as columns of :meth:`SliceEval.frame`.

    Returns
    -------
    SliceEval
        Point values, resamples and notes per slice and metric.

    Raises
    ------
    ValueError
        If the shapes do not match.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metaeval.slices import evaluate_slices_arrays
    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=40)
    >>> scores = np.stack([human + rng.normal(size=40), rng.normal(size=40)])
    >>> prompts, models = np.repeat(np.arange(20), 2), np.tile(["m1", "m2"], 20)
    >>> masks = np.stack([np.ones(40, bool), prompts < 10, prompts >= 19])
    >>> res = evaluate_slices_arrays(scores, human, prompts, models, ["good", "noise"], masks, ["all", "first", "last"],
    ...                              bootstrap=None)
    >>> res.point["spearman"].round(2).tolist(), res.n_images.tolist()
    ([[0.36, 0.12], [0.51, -0.14], [1.0, 1.0]], [40, 20, 2])
    >>> res.notes
    ('', '', 'only 1 prompt: intervals rest on few prompts')
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(human, dtype=np.float64).ravel()
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    k, n = x.shape
    if y.size != n or len(metrics) != k or masks.shape[1] != n or masks.shape[0] != len(slice_names):
        raise ValueError("scores, human, metrics, masks and slice names do not match in shape")
    prompts, models = np.asarray(prompts), np.asarray(models)
    pc, mc = _codes(prompts), _codes(models)
    mnames = np.unique(mc)
    P, M, S = (int(pc.max()) + 1 if n else 0), len(mnames), masks.shape[0]
    point = {s: np.full((S, k), np.nan) for s in (*SLICE_STATS, "ordering_agreement", "spearman_model_avg")}
    n_img, n_pr = np.zeros(S, dtype=np.int64), np.zeros(S, dtype=np.int64)
    rated = ~np.isnan(y)

    def one_slice(s: int):
        # the slice's point values and its per-prompt columns (many small numpy calls: threads would only
        # contend for the interpreter lock, so the slices run one after the other)
        sel = masks[s] & rated
        n_img[s], n_pr[s] = int(sel.sum()), int(np.unique(pc[sel]).size)
        if n_img[s] < 2:
            return f"fewer than 2 rated images ({n_img[s]}): no statistic", None
        few = n_pr[s] < FEW_PROMPTS
        note = f"only {plural(int(n_pr[s]), 'prompt')}: intervals rest on few prompts" if few else ""
        he = evaluate(x[:, sel], y[sel], pc[sel], mc[sel], list(metrics), settings=settings, bootstrap=None,
                      per_model_all=False)
        for stat in (*SLICE_STATS, "ordering_agreement"):
            point[stat][s] = he.point[stat]
        point["spearman_model_avg"][s] = average_correlations(he.per_model["spearman"], settings.model_average)
        if bootstrap is None:
            return note, None
        xs, ys = x[:, sel], y[sel]
        ok = ~np.isnan(xs)
        return note, _slice_columns(xs, ys, ok, pc[sel], mc[sel], P, M, he.epsilon, point["spearman"][s],
                                    point["kendall"][s], settings)

    done = []
    for s in range(S):
        pause_point()                         # background work (the app's warm-up) may yield here
        done.append(one_slice(s))
    notes = [note for note, _ in done]
    built = [b for _, b in done]
    samples: dict = {}
    if bootstrap is not None:
        samples = _resample(built, point, k, M, P, bootstrap, settings.spearman == "np-corrcoef")
    return SliceEval(family, tuple(slice_names), tuple(metrics), n_img, n_pr, point, samples, bootstrap, settings,
                     tuple(notes), dict(info or {}))


def _codes(values) -> np.ndarray:
    """Integer codes of labels, in order of first appearance."""
    index: dict = {}
    return np.fromiter((index.setdefault(v, len(index)) for v in np.asarray(values).tolist()), dtype=np.int64,
                       count=len(values))


def _resample(built, point, k, M, P, boot: BootstrapSettings, spearman_is_pearson: bool) -> dict:
    """Resampled statistics (stat -> (slices, k, B) float32): one resample matrix for every slice."""
    S, B = len(built), boot.n_resamples
    out = {s: np.empty((S, k, B), dtype=np.float32) for s in SLICE_STATS}
    for s, b in enumerate(built):
        if b is None:                         # every other slice's rows are all written below
            for stat in SLICE_STATS:
                out[stat][s] = np.nan
    # (counts - 1) @ table in float32 (counts - 1 are small integers, exact; the resample's departure from
    # the full slice's sums is all float32 carries), the full slice's sums in float64, as humaneval does
    precision = np.float32 if P >= FLOAT32_MIN_PROMPTS else np.float64
    prepared = []
    for s, b in enumerate(built):
        if b is None:
            prepared.append(None)
            continue
        rows, table = b
        base = table.sum(0)
        c1 = k * 10
        prepared.append((rows, np.ascontiguousarray(table.T, dtype=precision), base, base[c1:c1 + 2 * k]))
    width = max([p[1].shape[1] for p in prepared if p is not None] or [1])
    chunk_items = max(1, min(CHUNK_ITEMS // width, CHUNK_ITEMS // max(P, 1))) * max(P, 1)
    live = [s for s, prep in enumerate(prepared) if prep is not None]
    with one_blas_thread():
        for start, counts in prompt_resamples(P, boot, chunk_items=chunk_items, dtype=precision):
            pause_point()
            sl = slice(start, start + counts.shape[0])
            counts -= 1.0

            def one_slice(s: int) -> None:
                # one slice's resamples of this chunk: its own rows of ``out``, so the slices of a chunk
                # run side by side (ts2viz.parallel) on one BLAS thread each
                rows, table, base, base_infl = prepared[s]
                t = (table @ counts[:, rows].T).astype(np.float64) + base[:, None]
                res = _decode(t, k, M, point["spearman"][s], point["kendall"][s], base_infl)
                if spearman_is_pearson:
                    res["spearman"] = res["pearson"]
                for stat in SLICE_STATS:
                    out[stat][s, :, sl] = res[stat]

            thread_map(one_slice, live)
    return out


def evaluate_slices(rated, sl, *, rating_set: str | None = None, metrics: Sequence[str] | None = None,
                    aggregate: str = "mean", settings: HumanEvalSettings = HumanEvalSettings(),
                    bootstrap: BootstrapSettings | None = DEFAULTS, info: dict | None = None) -> SliceEval:
    """Gecko's tasks on each slice of a rated set (:func:`evaluate_slices_arrays` on its arrays).

    Parameters
    ----------
    rated : RatedSet
        The rated set.
    sl : ts2viz.gold.tags.Slices
        The slices (:func:`ts2viz.gold.tags.slices`).
    rating_set : str, optional
        The gold rating set (default: the set's default).
    metrics : sequence of str, optional
        Metric columns (default: all).
    aggregate : {'mean', 'median', 'majority'}, default 'mean'
        How an image's ratings become its gold.
    settings : HumanEvalSettings, default HumanEvalSettings()
        The statistics' choices.
    bootstrap : BootstrapSettings or None, default DEFAULTS
        Resampling settings, or None.
    info : dict, optional
        More columns for the table (``reliable``, ...); ``rating_set`` and ``aggregate`` are always
        written.

    Returns
    -------
    SliceEval
        The results.

    Raises
    ------
    InputError
        If the rating set, a metric or the aggregation is unknown.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.gold.tags import rated_tags, slices
    >>> from ts2viz.metaeval.slices import evaluate_slices
    >>> gold = load_gold("tifa160", answers=False)
    >>> sl = slices(gold, rated_tags(gold), "dsg-category")
    >>> res = evaluate_slices(gold, sl, metrics=["clipscore_vitb32", "tifa_mplug-large"], bootstrap=None)
    >>> res.frame().query("slice in ['all', 'attribute/color']")[["slice", "n_images", "metric", "spearman"]].round(3)
                  slice  n_images            metric  spearman
    0               all       800  clipscore_vitb32     0.276
    1               all       800  tifa_mplug-large     0.608
    16  attribute/color       180  clipscore_vitb32     0.083
    17  attribute/color       180  tifa_mplug-large     0.606
    """
    rs = rated.check_rating_set(rating_set)
    x, names = rated_score_rows(rated, rs, metrics, ceiling=False)
    if x.shape[1] != sl.masks.shape[1]:
        raise InputError("the slices are not of this rated set's images")
    return evaluate_slices_arrays(x, rated.human(rs, aggregate), rated.images["prompt_id"].to_numpy(),
                                  rated.images["t2i_model"].to_numpy(), names, sl.masks, sl.names, family=sl.family,
                                  settings=settings, bootstrap=bootstrap,
                                  info={"rating_set": rs, "aggregate": aggregate, **(info or {})})
