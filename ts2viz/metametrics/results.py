"""Meta-metric results of a dataset: :func:`compute` for every walk, SEG and metric, and :class:`MetaMetrics`.

:func:`compute` resolves the policy once, lays out every SEG (:mod:`ts2viz.metametrics.structure`), runs the
vectorised statistics (:mod:`ts2viz.metametrics.walks`) on SEGs of one shape together, and returns a
:class:`MetaMetrics`: per-walk, per-SEG and averaged results with their tables, joins and on-disk form.
"""
from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError
from . import walks
from .policy import Policy, resolve_policy
from .structure import SegStructure, layout, shape_key
from .walks import STATS, WALK_FIELDS, WalkStats, prepare, seg_arrays, walk_arrays

#: version of the on-disk format of :meth:`MetaMetrics.save`; bump it when the format or the numbers change
FORMAT_VERSION = 3


@dataclass
class MetaMetrics:
    """Meta-metric results for a dataset, a set of metrics and a policy.

    Use :meth:`segs`, :meth:`walks` and :meth:`leaderboard` for tables, :meth:`walk_stats` for the arrays
    of one SEG, :meth:`join` to put results for other metrics beside these, and :meth:`save`/:meth:`load`
    to keep them on disk.

    Attributes
    ----------
    policy : Policy
        The :class:`~ts2viz.metametrics.policy.Policy` that made the numbers.
    metrics : list of str
        The metrics.
    seg_ids : list of int
        The SEGs.
    partitions : list of str
        Each SEG's partition.
    seg_values : dict[str, numpy.ndarray]
        ``seg_values[stat]`` is an array (SEGs, metrics) in the order of ``seg_ids`` x ``metrics``.
    n_walks : numpy.ndarray
        (SEGs, metrics) walks with at least two scored images.
    excluded : list of int
        SEG ids left out of the overall and partition averages (the policy's ``leave_out``).
    walk_results : dict
        SEG id -> (SegStructure, WalkStats).

    See Also
    --------
    compute : how these are made.
    ts2viz.metametrics.intervals.bootstrap : intervals for every leaderboard cell.
    """

    policy: Policy
    metrics: list[str]
    seg_ids: list[int]
    partitions: list[str]
    seg_values: dict[str, np.ndarray]
    n_walks: np.ndarray
    excluded: list[int]
    walk_results: dict[int, tuple[SegStructure, WalkStats]] = field(default_factory=dict, repr=False)

    @property
    def mode(self) -> str:
        """The policy's name (``paper``, ``spec``, or a preset with overrides)."""
        return self.policy.name

    def segs(self):
        """The per-SEG values as a table.

        Returns
        -------
        pandas.DataFrame
            One row per (SEG, metric): ``seg_id``, ``partition``, ``metric``, ``ord``, ``sep``, ``delta``,
            ``kendall``, ``signed_sep``, ``n_walks``.

        Examples
        --------
        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "DSG-mPLUG"], seg_ids=[0, 1])
        >>> segs = mm.segs()
        >>> segs.columns.tolist()
        ['seg_id', 'partition', 'metric', 'ord', 'sep', 'delta', 'kendall', 'signed_sep', 'n_walks']
        >>> segs[["seg_id", "metric", "ord", "sep", "n_walks"]].round(3)
           seg_id     metric    ord    sep  n_walks
        0       0  CLIPScore  0.885  0.951        2
        1       0  DSG-mPLUG  0.802  0.790        2
        2       1  CLIPScore  0.798  1.000        2
        3       1  DSG-mPLUG -0.265  0.500        2
        """
        import pandas as pd

        S, M = len(self.seg_ids), len(self.metrics)
        df = pd.DataFrame({
            "seg_id": np.repeat(self.seg_ids, M),
            "partition": np.repeat(self.partitions, M),
            "metric": np.tile(self.metrics, S),
        })
        for k in STATS:
            df[k] = self.seg_values[k].ravel()
        df["n_walks"] = self.n_walks.ravel().astype(int)
        return df

    def walks(self, seg_id: int | None = None):
        """The per-walk values as a table.

        Parameters
        ----------
        seg_id : int, optional
            One SEG (default: all).

        Returns
        -------
        pandas.DataFrame
            One row per (SEG, walk, metric): ``seg_id``, ``walk``, ``path`` (node labels joined by ``>``),
            ``metric``, then :data:`STATS` and ``n_images``.

        Raises
        ------
        InputError
            If there are no results for ``seg_id``.

        Examples
        --------
        Under the paper's policy each walk takes the error-0 node twice:

        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], policy="paper", seg_ids=[0])
        >>> mm.walks(0)[["walk", "path", "ord", "n_images"]].round(3)
           walk      path    ord  n_images
        0     0  0>0>1a>2  0.930      10.0
        1     1  0>0>1b>2  0.829       8.0
        """
        import pandas as pd

        frames = []
        for sid in ([seg_id] if seg_id is not None else self.seg_ids):
            st, ws = self.walk_stats(sid)
            K, M = len(st.walks), len(self.metrics)
            df = pd.DataFrame({
                "seg_id": sid,
                "walk": np.tile(np.arange(K), M),
                "path": np.tile([">".join(w) for w in st.walks], M),
                "metric": np.repeat(self.metrics, K),
            })
            for k in STATS:
                df[k] = getattr(ws, k).ravel()
            df["n_images"] = ws.n_images.ravel()
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def walk_stats(self, seg_id: int) -> tuple[SegStructure, WalkStats]:
        """The walk layout and per-walk statistics (metrics x walks) of one SEG.

        Parameters
        ----------
        seg_id : int
            A SEG of the results.

        Returns
        -------
        tuple of (SegStructure, WalkStats)
            The layout and the statistics.

        Raises
        ------
        InputError
            If there are no results for the SEG.
        """
        try:
            return self.walk_results[seg_id]
        except KeyError:
            raise InputError(f"no results for SEG {seg_id} (evaluated: {len(self.seg_ids)} SEGs)") from None

    def averages(self) -> dict[str, np.ndarray]:
        """Per-metric means of each stat over all (non-excluded) SEGs and per partition.

        Returns
        -------
        dict[str, numpy.ndarray]
            Keys ``{stat}_avg`` and ``{stat}_{partition lower-case}``, partitions in display order
            (:func:`ordered_partitions`); each (metrics,).

        Notes
        -----
        NaN policy: NaN SEG values are skipped; a group without any value is NaN.
        """
        keep = np.array([s not in set(self.excluded) for s in self.seg_ids])
        parts = np.asarray(self.partitions)
        out = {}
        groups = [("avg", keep)] + [(p.lower(), keep & (parts == p)) for p in ordered_partitions(self.partitions)]
        for name, mask in groups:
            for k in STATS:
                vals = self.seg_values[k][mask]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)   # nanmean of an all-NaN column
                    out[f"{k}_{name}"] = np.nanmean(vals, axis=0) if len(vals) else np.full(len(self.metrics), np.nan)
        return out

    def leaderboard(self, stats: Sequence[str] = ("ord", "sep")):
        """The leaderboard: one row per metric, averages over SEGs.

        Parameters
        ----------
        stats : sequence of str, default ("ord", "sep")
            The statistics to show (of :data:`STATS`).

        Returns
        -------
        pandas.DataFrame
            ``metric``, then ``{stat}_avg`` and ``{stat}_{partition}`` for ``stats`` (fractions; delta in
            score units).

        Raises
        ------
        KeyError
            For an unknown statistic.

        See Also
        --------
        ts2viz.metametrics.table.leaderboard_table : the same with intervals and rank columns.

        Examples
        --------
        The published TS2 numbers (the paper's Table: CLIPScore's average Ord 71.4 and Sep 90.7):

        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "DSG-mPLUG"], policy="paper")
        >>> board = mm.leaderboard().set_index("metric")
        >>> (100 * board[["ord_avg", "sep_avg", "ord_real", "sep_real"]]).round(1)
                   ord_avg  sep_avg  ord_real  sep_real
        metric
        CLIPScore     71.4     90.7      69.3      90.3
        DSG-mPLUG     68.8     75.5      56.4      73.1
        """
        import pandas as pd

        av = self.averages()
        cols = [f"{k}_avg" for k in stats]
        for p in ordered_partitions(self.partitions):
            cols += [f"{k}_{p.lower()}" for k in stats]
        return pd.DataFrame({"metric": self.metrics, **{c: av[c] for c in cols}})

    # -- combining and keeping results -------------------------------------------------------------
    @classmethod
    def join(cls, parts: Sequence["MetaMetrics"]) -> "MetaMetrics":
        """Results for disjoint metric sets over the same SEGs and policy, side by side (metrics in order).

        Parameters
        ----------
        parts : sequence of MetaMetrics
            The results to join.

        Returns
        -------
        MetaMetrics
            One result holding every part's metrics (a single part is returned as it is).

        Raises
        ------
        InputError
            If there is no part.
        ValueError
            If the parts differ in SEGs or policy, or share a metric.
        """
        parts = list(parts)
        if not parts:
            raise InputError("no meta-metric results to join")
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        for p in parts[1:]:
            if p.seg_ids != first.seg_ids or p.policy != first.policy:
                raise ValueError("meta-metric results over different SEGs or policies cannot be joined")
        names = [m for p in parts for m in p.metrics]
        if len(set(names)) != len(names):
            raise ValueError("meta-metric results to join share a metric")
        walks = {}
        for sid in first.seg_ids:
            st = first.walk_results[sid][0]
            wss = [p.walk_results[sid][1] for p in parts]
            walks[sid] = (st, WalkStats(**{f: np.concatenate([getattr(w, f) for w in wss], axis=0)
                                           for f in WALK_FIELDS}))
        return cls(first.policy, names, list(first.seg_ids), list(first.partitions),
                   {k: np.concatenate([p.seg_values[k] for p in parts], axis=1) for k in STATS},
                   np.concatenate([p.n_walks for p in parts], axis=1), list(first.excluded), walks)

    def save(self, path: str | os.PathLike) -> None:
        """Write the results to one ``.npz`` file (atomically), with :data:`FORMAT_VERSION`.

        Walk layouts are not stored: they are structural, and :meth:`load` rebuilds them from the dataset.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        """
        from ..atomic import atomic_path

        meta = {"format": FORMAT_VERSION, "policy": {"name": self.policy.name, **self.policy.rules()},
                "metrics": self.metrics, "seg_ids": self.seg_ids, "partitions": self.partitions,
                "excluded": self.excluded}
        arrays = {f"seg_{k}": self.seg_values[k] for k in STATS}
        arrays["n_walks"] = self.n_walks
        for f in WALK_FIELDS:
            arrays[f"walk_{f}"] = np.concatenate([getattr(self.walk_results[s][1], f) for s in self.seg_ids], axis=1)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike, dataset) -> "MetaMetrics":
        """Read results written by :meth:`save`, bound to ``dataset``'s SEGs.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        dataset : Dataset
            The dataset the results are of.

        Returns
        -------
        MetaMetrics
            The results.

        Raises
        ------
        ValueError
            When the file is of another format version or does not fit the dataset (the caller then
            recomputes).
        """
        with np.load(Path(path), allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT_VERSION:
                raise ValueError(f"meta-metric file format {meta.get('format')}, expected {FORMAT_VERSION}")
            arrays = {k: z[k] for k in z.files if k != "meta"}
        rules = dict(meta["policy"])
        name = rules.pop("name")
        policy = Policy(name, **rules)
        seg_ids = [int(s) for s in meta["seg_ids"]]
        walks, pos = {}, 0
        for sid in seg_ids:
            if sid not in dataset.segs:
                raise ValueError(f"SEG {sid} is not in dataset {dataset.name}")
            st = layout(dataset[sid], policy)
            k = len(st.walks)
            walks[sid] = (st, WalkStats(**{f: arrays[f"walk_{f}"][:, pos:pos + k] for f in WALK_FIELDS}))
            pos += k
        if pos != arrays["walk_ord"].shape[1]:
            raise ValueError("meta-metric file does not fit the dataset's walks")
        return cls(policy, list(meta["metrics"]), seg_ids, list(meta["partitions"]),
                   {k: arrays[f"seg_{k}"] for k in STATS}, arrays["n_walks"], [int(s) for s in meta["excluded"]],
                   walks)


def ordered_partitions(parts: Sequence[str]) -> list[str]:
    """Distinct partitions in display order: TS2's Synth, Nat, Real first, then any others as they come.

    Parameters
    ----------
    parts : sequence of str
        Partition names (repeats allowed).

    Returns
    -------
    list of str
        The distinct names.

    Examples
    --------
    >>> from ts2viz.metametrics.results import ordered_partitions
    >>> ordered_partitions(["Real", "Custom", "Synth", "Real"])
    ['Synth', 'Real', 'Custom']
    """
    seen = list(dict.fromkeys(parts))
    known = [p for p in ("Synth", "Nat", "Real") if p in seen]
    return known + [p for p in seen if p not in known]


def left_out(dataset, seg_ids: Sequence[int], policy: Policy) -> list[int]:
    """SEG ids the policy leaves out of averages: TS2's last SEG under ``leave_out='ts2-last'``.

    Parameters
    ----------
    dataset : Dataset
        The dataset.
    seg_ids : sequence of int
        The SEGs evaluated.
    policy : Policy
        The policy.

    Returns
    -------
    list of int
        ``[164]`` for TS2 under the paper's policy (when evaluated), else empty.
    """
    if policy.leave_out == "ts2-last" and dataset.is_ts2:
        last = max(dataset.segs)
        return [last] if last in seg_ids else []
    return []


def compute(dataset, scores, metrics: Sequence[str] | None = None, policy: "Policy | str" = "paper",
            seg_ids: Sequence[int] | None = None, *, mode: "Policy | str | None" = None) -> MetaMetrics:
    """Meta-metrics of ``metrics`` (default: all in ``scores``) over ``dataset`` under ``policy``.

    Parameters
    ----------
    dataset : Dataset
        The SEGs (:func:`ts2viz.dataset.load_dataset`).
    scores : Scores
        :class:`ts2viz.scores.Scores`; images without a score count as NaN.
    metrics : sequence of str, optional
        Metric names to evaluate; each must be in ``scores``.
    policy : Policy or str, default "paper"
        A :class:`~ts2viz.metametrics.policy.Policy`, a preset name (``"paper"``, ``"spec"``) or preset text with
        overrides (``"paper:walk_weights=uniform"``).
    seg_ids : sequence of int, optional
        Restrict to these SEGs (default: all).
    mode : Policy or str, optional
        Another name for ``policy`` (it wins when given).

    Returns
    -------
    MetaMetrics
        Per-walk, per-SEG and averaged results, recording the policy.

    Raises
    ------
    InputError
        For an unknown SEG, metric or policy, or an unscored image under ``nan_policy=raise`` (naming
        the metric and the image).

    See Also
    --------
    MetaMetrics.leaderboard : the averages as a table.
    ts2viz.metametrics.intervals.bootstrap : intervals.
    ts2viz.metametrics.definitions.spearman_ord : Ord of one walk, the readable definition.

    Notes
    -----
    Per walk, Ord = -rho(error count, score) (Spearman), Sep = the mean two-sample KS statistic over the
    population pairs the policy names, delta the mean score gap; a SEG averages its walks, the
    leaderboard averages the SEGs (see the module docstring and :mod:`ts2viz.metametrics.policy`). SEGs of one shape
    share a walk layout and are computed together, as if they were more metrics.

    NaN policy: by the policy's ``nan_policy`` (``omit``: an unscored image is left out of every walk and
    population; ``raise``: :class:`InputError` naming the metric and an unscored image).

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], policy="paper")
    >>> mm.mode, len(mm.seg_ids), mm.excluded
    ('paper', 165, [164])
    >>> round(100 * float(mm.averages()["ord_avg"][0]), 1)
    71.4
    """
    pol = resolve_policy(mode if mode is not None else policy)
    metrics = list(scores.metrics if metrics is None else metrics)
    ids = list(dataset.segs) if seg_ids is None else [int(s) for s in seg_ids]
    missing = [s for s in ids if s not in dataset.segs]
    if missing:
        raise InputError(f"no SEG with id {missing[0]} in dataset {dataset.name}")
    # SEGs of the same shape share one walk layout and are computed together: their score rows are
    # stacked as if they were more metrics, which removes the per-SEG cost of many small numpy calls.
    groups: dict[tuple, list[int]] = {}
    for i, sid in enumerate(ids):
        groups.setdefault(shape_key(dataset[sid]), []).append(i)
    structures: list[SegStructure] = [None] * len(ids)  # type: ignore[list-item]
    for members in groups.values():
        first = layout(dataset[ids[members[0]]], pol)
        structures[members[0]] = first
        for i in members[1:]:
            seg = dataset[ids[i]]
            structures[i] = seg.memo(("walk-layout", pol.repeat_root), lambda seg=seg: first.rebind(seg))
    offsets = np.cumsum([0] + [len(st.file_names) for st in structures])
    all_fn = [fn for st in structures for fn in st.file_names]
    mat = scores.aligned(all_fn, metrics).T                              # (M, N)
    if pol.nan_policy == "raise" and np.isnan(mat).any():
        m, i = np.argwhere(np.isnan(mat))[0]
        raise InputError(f"metric {metrics[m]!r} has no score for {int(np.isnan(mat[m]).sum())} image(s), e.g. "
                         f"{all_fn[i]!r} (policy nan_policy=raise)")
    M = len(metrics)
    vals = {k: np.full((len(ids), M), np.nan) for k in STATS}
    n_walks = np.zeros((len(ids), M), dtype=np.int64)
    walk_parts: list = [None] * len(ids)
    for members in groups.values():
        st = structures[members[0]]
        n, K = len(st.file_names), len(st.walk_nodes)
        # rows per batch: keep the (rows x images x images) and (rows x walks) temporaries bounded
        per_row = max(n * n, K * len(st.pairs), K, 1)
        segs_per_batch = max(1, walks.CHUNK_ELEMENTS // (per_row * max(M, 1)))
        for b in range(0, len(members), segs_per_batch):
            batch = members[b:b + segs_per_batch]
            block = np.concatenate([mat[:, offsets[i]:offsets[i + 1]] for i in batch], axis=0)   # (B*M, n)
            prep = prepare(st, block)
            ws = walk_arrays(st, prep, pol)
            res = seg_arrays(st, prep, ws, pol)
            for j, i in enumerate(batch):
                rows = slice(j * M, (j + 1) * M)
                for k in STATS:
                    vals[k][i] = res[k][rows]
                n_walks[i] = res["n_walks"][rows]
                walk_parts[i] = WalkStats(**{f: getattr(ws, f)[rows] for f in WALK_FIELDS})
    results = {sid: (structures[i], walk_parts[i]) for i, sid in enumerate(ids)}
    parts = [dataset[s].partition for s in ids]
    return MetaMetrics(pol, metrics, ids, parts, vals, n_walks, left_out(dataset, ids, pol), results)
