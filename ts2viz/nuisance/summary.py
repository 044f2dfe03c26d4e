"""Does a metric move more for nuisance than for errors? The statistics of a nuisance test.

Every SEG edge is a measured semantic step, so a change that keeps the meaning (a transform of
:mod:`ts2viz.nuisance.transforms`) can be put in the units of that SEG's own error steps. Per metric,
transform and SEG (scores oriented so that higher is better where it matters):

- **nuisance-to-step ratio** = median over the SEG's images of ``|transformed - clean|``, divided by the
  median over the SEG's edges (parent node, child node: the adjacent error levels) of ``|mean(parent) -
  mean(child)|``, the node means of the clean scores. 0: the metric does not move at all; 1: a
  nuisance change is as large as a typical error step. **0 / 0** (no error step and no change: e.g. a
  metric that reads only the prompt, whose scores are equal across the SEG, under an image transform) is
  *undefined*: NaN, counted in ``n_undefined``, left out of the pooled value. ``x / 0`` with ``x > 0``
  (the metric moves under the transform but never between error levels) is ``+inf``. A SEG without
  an edge (one node) has no step: NaN.
- **flip rate**: the image pairs on a common walk at different error levels that the clean scores
  order correctly (the image with fewer errors scores strictly higher) give two replacement events
  each (either image replaced by its transformed copy); the flip rate is the share of events after
  which the pair is no longer ordered correctly (a tie counts as not correct). NaN without a correctly
  ordered pair.
- **Ord and Sep under nuisance**: TS2's meta-metrics (:func:`ts2viz.metametrics.results.compute`, the chosen
  policy) with every image replaced by its transformed copy, beside the clean values.
- **direction** (``up_share``): the share of images whose score goes up (for a lower-is-better metric:
  down, i.e. toward "more faithful"), strictly. Reported for every transform; for a *degrading* one
  (blur, JPEG, noise, down-up scaling) a share above 0.5 rewards a worse image: a reward-hacking signal.

Pooled over the dataset (the SEGs the leaderboard averages; :func:`summarize`): the ratio as the
**median** over SEGs (robust to SEGs with tiny steps; the undefined ones left out, ``+inf`` counted as
the largest), the flip rate and the direction as the **mean** over SEGs, Ord and Sep as the leaderboard's
averages. Intervals are percentile bootstrap intervals over SEGs from the leaderboard's own resamples
(:func:`ts2viz.metametrics.intervals.resample_counts`: SEGs drawn within partitions, the same draws for every
metric and transform, so all are paired); the difference of Ord (Sep) under nuisance and clean has the
paired interval of :func:`ts2viz.metametrics.comparison.compare`.

Pure numpy/pandas (no torch, no gradio).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from .run import NuisanceScores

#: the pooled statistics of :meth:`NuisanceSummary.frame`, each with ``_lo`` and ``_hi``
POOLED = ("ratio", "flip_rate", "up_share", "ord_diff", "sep_diff")
#: short column names of the leaderboard's stability columns
LEADERBOARD_STATS = {"ratio": "nsr", "flip_rate": "flip", "ord_diff": "dord", "sep_diff": "dsep", "up_share": "up"}


@dataclass(frozen=True)
class SegNuisance:
    """The per-SEG statistics of one metric under one transform (arrays over the SEGs of ``seg_ids``).

    Attributes
    ----------
    median_change : numpy.ndarray
        Median |transformed - clean| over the SEG's images.
    step : numpy.ndarray
        Median |node mean gap| over the SEG's edges (clean scores).
    ratio : numpy.ndarray
        median_change / step (NaN: 0/0 or no step; inf: x/0).
    undefined : numpy.ndarray
        Bool: the ratio is 0/0.
    n_images : numpy.ndarray
        Images with both scores.
    correct_pairs : numpy.ndarray
        Pairs on a common walk at different levels ordered correctly (clean).
    flip_events : numpy.ndarray
        Replacement events counted (a transformed score present).
    flips : numpy.ndarray
        Events after which the pair is no longer ordered correctly.
    flip_rate : numpy.ndarray
        flips / flip_events.
    up_share : numpy.ndarray
        Share of images whose (oriented) score goes up.
    """

    median_change: np.ndarray     # median |transformed - clean| over the SEG's images
    step: np.ndarray              # median |node mean gap| over the SEG's edges (clean scores)
    ratio: np.ndarray             # median_change / step (NaN: 0/0 or no step; inf: x/0)
    undefined: np.ndarray         # bool: the ratio is 0/0
    n_images: np.ndarray          # images with both scores
    correct_pairs: np.ndarray     # pairs on a common walk at different levels ordered correctly (clean)
    flip_events: np.ndarray       # replacement events counted (a transformed score present)
    flips: np.ndarray             # events after which the pair is no longer ordered correctly
    flip_rate: np.ndarray
    up_share: np.ndarray


def seg_nuisance(structure, edges: Sequence[tuple[str, str]], clean: np.ndarray, transformed: np.ndarray,
                 higher_is_better: bool = True) -> dict:
    """The statistics of one SEG (see the module docstring) for one metric under one or more transforms.

    Parameters
    ----------
    structure : SegStructure
        The SEG's :class:`ts2viz.metametrics.structure.SegStructure` (its images in ``file_names`` order, their
        ``levels`` and nodes).
    edges : sequence of (str, str)
        The SEG's edges as (parent label, child label) pairs (:meth:`ts2viz.seg.SEG.adjacent_pairs`).
    clean : numpy.ndarray
        (n,) clean scores in the structure's image order (NaN: no score).
    transformed : numpy.ndarray
        (n, T) scores under each transform.
    higher_is_better : bool, default True
        The metric's direction (flip and direction use oriented scores).

    Returns
    -------
    dict
        Arrays (T,): ``median_change``, ``step`` (the same for every transform), ``ratio``,
        ``undefined``, ``n_images``, ``correct_pairs``, ``flip_events``, ``flips``, ``flip_rate``,
        ``up_share``.

    Notes
    -----
    NaN policy: images without a clean or a transformed score are left out of everything that needs
    them; a node without a clean score leaves its edges out of the step.

    Examples
    --------
    A SEG of two nodes, 0 and 1 (two images each), whose node means are 0.9 and 0.5 (step 0.4), and a
    transform that lowers every score by 0.1 (ratio 0.25):

    >>> import numpy as np
    >>> from ts2viz.seg import build_seg
    >>> from ts2viz.metametrics.structure import seg_structure
    >>> seg = build_seg(0, "p", "Synth", [("a", "", "0"), ("b", "", "0"), ("c", "", "1"), ("d", "", "1")])
    >>> st = seg_structure(seg, "spec")
    >>> r = seg_nuisance(st, seg.adjacent_pairs(), np.array([1.0, 0.8, 0.6, 0.4]),
    ...                  np.array([[0.9], [0.7], [0.5], [0.3]]))
    >>> float(r["step"][0]), float(r["ratio"][0]), float(r["up_share"][0])
    (0.4, 0.25, 0.0)
    """
    from ..metaeval.seg_pairwise import walk_pairs

    s = np.asarray(clean, dtype=np.float64)
    t = np.asarray(transformed, dtype=np.float64).reshape(len(s), -1)
    T = t.shape[1]
    sign = 1.0 if higher_is_better else -1.0
    both = np.isfinite(s)[:, None] & np.isfinite(t)                           # (n, T)
    change = np.abs(t - s[:, None])
    median_change = np.array([np.median(change[both[:, k], k]) if both[:, k].any() else np.nan for k in range(T)])
    # the step: node means of the clean scores, the median absolute gap over the SEG's edges
    labels = list(structure.seg.labels)
    means = {}
    for j, lbl in enumerate(labels):
        v = s[structure.node_of == j]
        v = v[np.isfinite(v)]
        means[lbl] = float(v.mean()) if v.size else np.nan
    gaps = [abs(means[a] - means[b]) for a, b in edges if np.isfinite(means[a]) and np.isfinite(means[b])]
    step = float(np.median(gaps)) if gaps else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(step > 0, median_change / step,
                         np.where(median_change > 0, np.inf, np.nan)) if np.isfinite(step) else np.full(T, np.nan)
    undefined = np.isfinite(step) & (step == 0) & (median_change == 0)
    # pairs on a common walk at different error levels, a = fewer errors
    pairs, _ = walk_pairs(structure)
    i, j = pairs.first, pairs.second
    lv = np.asarray(structure.levels)
    keep = lv[i] != lv[j]
    i, j = i[keep], j[keep]
    swap = lv[i] > lv[j]
    a, b = np.where(swap, j, i), np.where(swap, i, j)
    os_, ot = sign * s, sign * t
    correct = np.isfinite(os_[a]) & np.isfinite(os_[b]) & (os_[a] > os_[b])
    a, b = a[correct], b[correct]
    # replacing a (the better image): still correct if t[a] > s[b]; replacing b: if s[a] > t[b]
    ev_a, ev_b = np.isfinite(ot[a]), np.isfinite(ot[b])                      # (P, T)
    bad_a = ev_a & ~(ot[a] > os_[b][:, None])
    bad_b = ev_b & ~(os_[a][:, None] > ot[b])
    events = ev_a.sum(0) + ev_b.sum(0)
    flips = bad_a.sum(0) + bad_b.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        flip_rate = np.where(events > 0, flips / np.maximum(events, 1), np.nan)
        n_both = both.sum(0)
        up = (both & (ot > os_[:, None])).sum(0)
        up_share = np.where(n_both > 0, up / np.maximum(n_both, 1), np.nan)
    return {"median_change": median_change, "step": np.full(T, step), "ratio": ratio, "undefined": undefined,
            "n_images": n_both, "correct_pairs": np.full(T, int(correct.sum())), "flip_events": events,
            "flips": flips, "flip_rate": flip_rate, "up_share": up_share}


def pooled_median(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The median of the multiset that each resample draws: ``counts[b, s]`` copies of ``values[s]``.

    Parameters
    ----------
    values : numpy.ndarray
        (S,) per-SEG values; NaN left out, ``+inf`` allowed (it sorts last).
    counts : numpy.ndarray
        (B, S) non-negative integer counts (e.g. :func:`ts2viz.metametrics.intervals.resample_counts`).

    Returns
    -------
    numpy.ndarray
        (B,) the median of each resample's multiset, as :func:`numpy.median` of it with the copies spelt
        out (the mean of the two middle values for an even size; a middle ``inf`` gives ``inf``); NaN
        for a resample that draws no non-NaN value.

    Examples
    --------
    >>> import numpy as np
    >>> pooled_median(np.array([3.0, 1.0, np.inf, np.nan]),
    ...               np.array([[1, 1, 1, 1], [0, 2, 1, 5], [0, 0, 0, 4]])).tolist()
    [3.0, 1.0, nan]
    """
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts)
    ok = ~np.isnan(v)
    B = c.shape[0]
    out = np.full(B, np.nan)
    if not ok.any():
        return out
    order = np.argsort(v[ok], kind="stable")
    vs = v[ok][order]
    cum = np.cumsum(c[:, ok][:, order], axis=1)
    n = cum[:, -1]
    has = n > 0
    lo = (n - 1) // 2
    hi = n // 2
    i_lo = (cum > lo[:, None]).argmax(axis=1)
    i_hi = (cum > hi[:, None]).argmax(axis=1)
    a, b = vs[i_lo], vs[i_hi]
    with np.errstate(invalid="ignore"):
        med = np.where(a == b, a, (a + b) / 2)
    out[has] = med[has]
    return out


def interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along the last axis of ``samples``, with ``+inf`` handled exactly.

    Parameters
    ----------
    samples : numpy.ndarray
        (rows, B) resampled values (a 1-D array is one row).
    confidence : float
        Two-sided level.

    Returns
    -------
    low : numpy.ndarray
        (rows,) the lower bounds, numpy's linear method; a quantile falling between a finite value and
        ``inf`` is ``inf`` (at ``inf`` itself, ``inf``).
    high : numpy.ndarray
        (rows,) the upper bounds, the same way.

    Notes
    -----
    NaN policy: NaN values are left out; an all-NaN row gives NaN.
    """
    x = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    alpha = 1.0 - confidence
    out = np.full((2, x.shape[0]), np.nan)
    for r, row in enumerate(x):
        v = np.sort(row[~np.isnan(row)])
        if not v.size:
            continue
        for k, q in enumerate((alpha / 2, 1 - alpha / 2)):
            h = (v.size - 1) * q
            lo = int(np.floor(h))
            hi = min(lo + 1, v.size - 1)
            t = h - lo
            a, b = v[lo], v[hi]
            out[k, r] = a if (t == 0 or a == b) else (np.inf if np.isinf(b) else a + (b - a) * t)
    return out[0], out[1]


@dataclass(frozen=True, eq=False)     # holds arrays and frames: compared by identity
class NuisanceSummary:
    """The statistics of a nuisance test (see :func:`summarize`).

    Attributes
    ----------
    mode : str
        The meta-metric policy's name.
    settings : BootstrapSettings
        The bootstrap settings.
    metrics : tuple of str
        The metrics.
    pooled : pandas.DataFrame
        The table :meth:`frame` copies.
    per_seg : pandas.DataFrame
        The table :meth:`segs` copies.
    """

    mode: str
    settings: object
    metrics: tuple[str, ...]
    pooled: object        # the DataFrame :meth:`frame` copies
    per_seg: object       # the DataFrame :meth:`segs` copies

    def frame(self):
        """One row per (metric, transform): its description, then each pooled statistic with its interval.

        Returns
        -------
        pandas.DataFrame
            Columns ``metric, transform, side, changes_meaning, degrading, baseline, seed, n_segs, n_undefined,
            ratio, ratio_lo, ratio_hi, flip_rate, flip_rate_lo, flip_rate_hi, up_share, up_share_lo,
            up_share_hi, ord_clean, ord_nuisance, ord_diff, ord_diff_lo, ord_diff_hi, sep_clean,
            sep_nuisance, sep_diff, sep_diff_lo, sep_diff_hi`` (``n_segs``: averaged SEGs with a defined
            ratio; ``n_undefined``: averaged SEGs where it is 0/0). A copy.
        """
        return self.pooled.copy()

    def segs(self):
        """One row per (metric, transform, SEG).

        Returns
        -------
        pandas.DataFrame
            Columns ``seg_id, partition, averaged`` (whether the pooled values use it), ``n_images,
            median_change, step, ratio, undefined, correct_pairs, flip_events, flips, flip_rate, up_share,
            ord_clean, ord_nuisance, sep_clean, sep_nuisance``. A copy.
        """
        return self.per_seg.copy()

    def leaderboard_columns(self, metrics: Sequence[str]) -> dict[str, np.ndarray]:
        """Stability columns for a leaderboard of ``metrics``.

        Parameters
        ----------
        metrics : sequence of str
            The leaderboard's metrics (rows in that order).

        Returns
        -------
        dict[str, numpy.ndarray]
            Per transform ``T`` and statistic, ``{short}[T]``, ``{short}[T]_lo``, ``{short}[T]_hi`` with
            ``short`` in ``nsr`` (ratio), ``flip``, ``dord``, ``dsep``, ``up``; and ``nsr_worst``: the
            largest pooled ratio over the transforms that keep the meaning. NaN for a metric without nuisance
            results.
        """
        df = self.pooled
        pos = {m: k for k, m in enumerate(metrics)}
        cols: dict[str, np.ndarray] = {}
        for t in dict.fromkeys(df["transform"]):
            for stat, short in LEADERBOARD_STATS.items():
                for suffix in ("", "_lo", "_hi"):
                    cols[f"{short}[{t}]{suffix}"] = np.full(len(metrics), np.nan)
        worst = np.full(len(metrics), np.nan)
        for r in df.itertuples(index=False):
            k = pos.get(r.metric)
            if k is None:
                continue
            for stat, short in LEADERBOARD_STATS.items():
                for suffix in ("", "_lo", "_hi"):
                    cols[f"{short}[{r.transform}]{suffix}"][k] = getattr(r, stat + suffix)
            if not r.changes_meaning and not np.isnan(r.ratio):
                worst[k] = r.ratio if np.isnan(worst[k]) else max(worst[k], r.ratio)
        cols["nsr_worst"] = worst
        return cols


def summarize(scores: NuisanceScores, dataset, *, mode="paper", seg_ids: Sequence[int] | None = None,
              n_resamples: int | None = None, confidence: float | None = None,
              seed: int | None = None) -> NuisanceSummary:
    """The statistics of a nuisance test, per metric, transform and SEG, pooled with bootstrap intervals.

    Parameters
    ----------
    scores : NuisanceScores
        From :func:`ts2viz.nuisance.run.run` or :func:`ts2viz.nuisance.run.read_nuisance`.
    dataset : Dataset
        The dataset the scores are of.
    mode : str or Policy, default "paper"
        The meta-metric policy (``paper``, ``spec``, a Policy, or a preset with overrides).
    seg_ids : sequence of int, optional
        Restrict to these SEGs (default: every SEG with an image in the scores).
    n_resamples : int, optional
        Resamples of the bootstrap (default :data:`ts2viz.statistics.bootstrap.DEFAULTS`).
    confidence : float, optional
        Its confidence level.
    seed : int, optional
        Its seed.

    Returns
    -------
    NuisanceSummary
        Pooled and per-SEG statistics.

    Raises
    ------
    InputError
        If there are no results, an image is not in the dataset, or a setting is invalid.

    Notes
    -----
    NaN policy: see :func:`seg_nuisance`; per-SEG NaN values are left out of the pooled ones (as the
    leaderboard leaves out NaN SEG values); a pooled value with no SEG is NaN, its interval too.

    Examples
    --------
    A metric that loses 0.01 everywhere under JPEG (made-up transformed scores beside CLIPScore's
    bundled ones, on 20 SEGs): its nuisance is small against the SEGs' error steps, and it never moves
    up:

    >>> from ts2viz import bundled_scores, load_dataset
    >>> from ts2viz.nuisance.run import MetricRun, NuisanceScores
    >>> from ts2viz.nuisance.summary import summarize
    >>> from ts2viz.nuisance.transforms import parse_list
    >>> ds = load_dataset("ts2").subset(range(20))
    >>> files = [im.file_name for seg in ds for node in seg.nodes for im in node.images]
    >>> clean = bundled_scores().aligned(files, ["CLIPScore"])[:, 0]
    >>> ns = NuisanceScores(ds.name, [MetricRun("CLIPScore", True, "", tuple(files), clean,
    ...                                         tuple(parse_list("jpeg:quality=30")), (clean - 0.01)[:, None])])
    >>> summary = summarize(ns, ds, n_resamples=1000)
    >>> summary.frame()[["transform", "n_segs", "ratio", "flip_rate", "up_share", "ord_diff"]].round(3)
             transform  n_segs  ratio  flip_rate  up_share  ord_diff
    0  jpeg:quality=30      20  0.068      0.006       0.0       0.0
    """
    from ..metametrics.results import compute
    from ..scores import Scores
    from ..statistics.bootstrap import DEFAULTS, BootstrapSettings
    from ..metametrics.intervals import averaged_segs, bootstrap, resample_counts
    from ..metametrics.comparison import compare

    st = BootstrapSettings(DEFAULTS.n_resamples if n_resamples is None else n_resamples,
                           DEFAULTS.confidence if confidence is None else confidence,
                           DEFAULTS.seed if seed is None else seed)
    runs = list(scores.runs)
    if not runs:
        raise InputError("no nuisance results to summarise")
    # one column per (metric, clean or transform), named by position: one compute and one bootstrap for all
    names, values, lib, cols_of = [], [], set(), []
    files = list(dict.fromkeys(f for r in runs for f in r.file_names))
    index = {f: i for i, f in enumerate(files)}
    for m, r in enumerate(runs):
        rows = np.array([index[f] for f in r.file_names], dtype=np.int64)
        cols = []
        for k, v in enumerate([r.clean] + [r.transformed[:, j] for j in range(len(r.transforms))]):
            col = np.full(len(files), np.nan)
            col[rows] = v
            name = f"m{m}:c{k}"
            names.append(name)
            values.append(col)
            cols.append(name)
            if not r.higher_is_better:
                lib.add(name)
        cols_of.append(cols)
    for f in files:
        if not dataset.has_image(f):
            raise InputError(f"unknown file_name {f[:80]!r}: not an image of dataset {dataset.name}")
    table = Scores(files, names, np.stack(values, axis=1), lib, source="nuisance")
    if seg_ids is None:
        have = set(files)
        seg_ids = [s.id for s in dataset if any(im.file_name in have for n in s.nodes for im in n.images)]
    mm = compute(dataset, table, policy=mode, seg_ids=seg_ids)
    boot = bootstrap(mm, n_resamples=st.n_resamples, confidence=st.confidence, seed=st.seed)
    counts = resample_counts(mm, n_resamples=st.n_resamples, seed=st.seed)
    avg = averaged_segs(mm)["avg"]
    used = np.zeros(len(mm.seg_ids), dtype=bool)
    used[avg] = True
    c_avg = counts[:, avg].astype(np.float64)
    rows_out, seg_rows = [], []
    for m, r in enumerate(runs):
        T = len(r.transforms)
        per = {k: np.full((len(mm.seg_ids), T), np.nan) for k in SegNuisance.__dataclass_fields__}
        for si, sid in enumerate(mm.seg_ids):
            stc = mm.walk_stats(sid)[0]
            mat = table.aligned(stc.file_names, cols_of[m], oriented=False)
            res = seg_nuisance(stc, dataset[sid].adjacent_pairs(), mat[:, 0], mat[:, 1:], r.higher_is_better)
            for k in per:
                per[k][si] = res[k]
        i_clean = mm.metrics.index(cols_of[m][0])
        for k, t in enumerate(r.transforms):
            ratio = per["ratio"][:, k]
            ratio_avg = ratio[avg]
            def_ = ratio_avg[~np.isnan(ratio_avg)]
            pooled_ratio = float(np.median(def_)) if def_.size else np.nan
            r_lo, r_hi = interval(pooled_median(ratio_avg, counts[:, avg])[None, :], st.confidence)
            stats = {"ratio": (pooled_ratio, r_lo[0], r_hi[0])}
            for name in ("flip_rate", "up_share"):
                x = per[name][avg, k]
                ok = ~np.isnan(x)
                est = float(x[ok].mean()) if ok.any() else np.nan
                with np.errstate(invalid="ignore", divide="ignore"):
                    res_ = (c_avg @ np.where(ok, x, 0.0)) / (c_avg @ ok.astype(np.float64))
                lo, hi = interval(res_[None, :], st.confidence)
                stats[name] = (est, lo[0], hi[0]) if ok.any() else (np.nan, np.nan, np.nan)
            pc = compare(mm, cols_of[m][k + 1], cols_of[m][0], boot=boot)
            cell = {c: n for n, c in enumerate(pc.cells)}
            for stat in ("ord", "sep"):
                j = cell[f"{stat}_avg"]
                stats[f"{stat}_diff"] = (float(pc.difference[j]), float(pc.low[j]), float(pc.high[j]))
                stats[f"{stat}_clean"] = float(pc.estimate_b[j])
                stats[f"{stat}_nuisance"] = float(pc.estimate_a[j])
            row = {"metric": r.metric, "transform": t.spec, "side": t.side, "changes_meaning": t.changes_meaning,
                   "degrading": t.degrading, "baseline": t.kind.baseline, "seed": int(r.seed),
                   "n_segs": int(def_.size), "n_undefined": int(per["undefined"][avg, k].astype(bool).sum())}
            for name in POOLED:
                est, lo, hi = stats[name]
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est, lo, hi
            for stat in ("ord", "sep"):
                row[f"{stat}_clean"], row[f"{stat}_nuisance"] = stats[f"{stat}_clean"], stats[f"{stat}_nuisance"]
            rows_out.append(row)
            i_t = mm.metrics.index(cols_of[m][k + 1])
            for si, sid in enumerate(mm.seg_ids):
                seg_rows.append({
                    "metric": r.metric, "transform": t.spec, "seg_id": int(sid), "partition": mm.partitions[si],
                    "averaged": bool(used[si]), **{f: (bool(per[f][si, k]) if f == "undefined" else per[f][si, k])
                                                   for f in SegNuisance.__dataclass_fields__},
                    "ord_clean": mm.seg_values["ord"][si, i_clean], "ord_nuisance": mm.seg_values["ord"][si, i_t],
                    "sep_clean": mm.seg_values["sep"][si, i_clean], "sep_nuisance": mm.seg_values["sep"][si, i_t]})
    import pandas as pd

    order = ["metric", "transform", "side", "changes_meaning", "degrading", "baseline", "seed", "n_segs", "n_undefined"]
    for name in POOLED:
        if name == "ord_diff":
            order += ["ord_clean", "ord_nuisance"]
        if name == "sep_diff":
            order += ["sep_clean", "sep_nuisance"]
        order += [name, f"{name}_lo", f"{name}_hi"]
    frame = pd.DataFrame(rows_out)[order]
    segs = pd.DataFrame(seg_rows)
    for c in ("n_images", "correct_pairs", "flip_events", "flips"):
        segs[c] = segs[c].astype(int)
    return NuisanceSummary(mm.mode, st, tuple(r.metric for r in runs), frame, segs)


def format_summary(summary: NuisanceSummary) -> str:
    """The summary as a plain-text table, one row per (metric, transform), with the intervals.

    Ratio as a number, flip and up as %, Ord and Sep x100 as in the paper; a note on the definitions
    follows the table.

    Parameters
    ----------
    summary : NuisanceSummary
        The statistics.

    Returns
    -------
    str
        The table and the note.
    """
    df = summary.pooled
    pct = lambda v: "-" if v != v else f"{100 * v:.1f}"          # noqa: E731

    def ratio(v):
        if v != v:
            return "-"
        return "inf" if np.isinf(v) else f"{v:.3f}"

    heads = ["Metric", "Transform", "NSR", "Flip%", "Up%", "Ord", "ΔOrd", "Sep", "ΔSep"]
    rows = []
    for r in df.itertuples(index=False):
        mark = " ‡" if r.baseline else (" †" if r.changes_meaning else (" *" if r.degrading else ""))
        nsr = ratio(r.ratio)
        if nsr != "-":
            nsr += f" [{ratio(r.ratio_lo)}, {ratio(r.ratio_hi)}]"
        elif r.n_undefined:
            nsr = "0/0 (no error steps)"
        flip = pct(r.flip_rate) + (f" [{pct(r.flip_rate_lo)}, {pct(r.flip_rate_hi)}]" if r.flip_rate == r.flip_rate else "")
        up = pct(r.up_share) + (f" [{pct(r.up_share_lo)}, {pct(r.up_share_hi)}]" if r.up_share == r.up_share else "")
        dord = (f"{100 * r.ord_diff:+.1f} [{100 * r.ord_diff_lo:+.1f}, {100 * r.ord_diff_hi:+.1f}]"
                if r.ord_diff == r.ord_diff else "-")
        dsep = (f"{100 * r.sep_diff:+.1f} [{100 * r.sep_diff_lo:+.1f}, {100 * r.sep_diff_hi:+.1f}]"
                if r.sep_diff == r.sep_diff else "-")
        rows.append([str(r.metric), r.transform + mark, nsr, flip, up, pct(r.ord_clean), dord, pct(r.sep_clean), dsep])
    widths = [max(len(h), *(len(x[k]) for x in rows)) for k, h in enumerate(heads)]
    fmt = lambda cells: "  ".join(c.ljust(w) if k < 2 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    st = summary.settings
    lines = [fmt(heads), "-" * len(fmt(heads))] + [fmt(x) for x in rows]
    lines.append(f"NSR: nuisance-to-step ratio, median over SEGs of (median |transformed - clean| / median node-mean gap "
                 f"along the SEG's edges); 0 = stable, 1 = as large as an error step. Flip%: correctly ordered pairs on a "
                 f"common walk no longer ordered once one image is transformed. Up%: images whose score rises "
                 f"(* degrading transform: above 50 rewards a worse image). Ord, Sep: clean, x100; Δ: under nuisance "
                 f"minus clean. † changes meaning. ‡ blind or mismatched-image baseline (the image blanked, "
                 f"replaced by noise, or paired with another SEG's prompt): here an NSR near 0 is the warning, the "
                 f"metric answers from the text. [lo, hi]: {100 * st.confidence:g}% bootstrap over SEGs "
                 f"({st.n_resamples:,} resamples within partitions, seed {st.seed}; mode={summary.mode}).")
    return "\n".join(lines)


__all__ = ["POOLED", "SegNuisance", "NuisanceSummary", "seg_nuisance", "pooled_median", "interval", "summarize",
           "format_summary"]
