"""A straightforward, independent implementation of the TS2 meta-metrics.

Per walk: pandas filtering, ``scipy.stats.spearmanr``, ``kendalltau`` and ``ks_2samp``, written from
the definitions in the issue / paper, not from ts2viz.metametrics. The tests compare the vectorised
engine against it, and ``benchmarks/bench_metametrics.py`` uses it as the speed baseline.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats


def _walks(nodes: dict[str, int], mode: str, edges=None) -> list[list[str]]:
    levels = sorted(set(nodes.values()))
    roots = [n for n, lv in nodes.items() if lv == 0]

    def kids(n):
        if edges is not None:
            return [b for a, b in edges if a == n]
        nxt = [lv for lv in levels if lv > nodes[n]]
        return [m for m, lv in nodes.items() if nxt and lv == nxt[0]]

    out = []

    def extend(w):
        k = kids(w[-1])
        if not k:
            out.append(w)
        for c in k:
            extend(w + [c])

    if mode == "spec":
        for r in roots:
            extend([r])
    else:
        for r in roots:
            for r2 in roots:
                if edges is not None and r2 != r and (r, r2) not in edges:
                    continue
                extend([r, r2])
    return out


def _rho(x, y, fn):
    if len(x) < 2:
        return math.nan
    if len(set(x)) < 2 or len(set(y)) < 2:
        return 0.0
    r = fn(x, y)[0]
    return 0.0 if math.isnan(r) else -float(r)


def seg_metametrics(df: pd.DataFrame, metric: str, mode: str, edges=None) -> dict:
    """df: one SEG's rows with columns label, level, <metric> (oriented: higher = better)."""
    nodes = dict(zip(df["label"], df["level"]))
    walks = _walks(nodes, mode, edges)
    rows = []
    for w in walks:
        parts = [df[df["label"] == n] for n in w]
        walk = pd.concat(parts)
        walk = walk[~walk[metric].isna()]
        x, y = walk["level"].to_numpy(float), walk[metric].to_numpy(float)
        if len(x) < 2:
            continue
        o = _rho(x, y, stats.spearmanr)
        k = _rho(x, y, stats.kendalltau)
        if mode == "paper":
            # KS over every pair of levels in the walk; the mean gap over consecutive levels only
            lv = sorted(set(x))
            pops = [(y[x == a], y[x == b]) for a, b in itertools.combinations(lv, 2)]
            gap_pops = [(y[x == a], y[x == b]) for a, b in zip(lv, lv[1:])]
        else:
            pops = []
            for a, b in zip(w, w[1:]):
                pa = df.loc[(df["label"] == a), metric].dropna().to_numpy()
                pb = df.loc[(df["label"] == b), metric].dropna().to_numpy()
                if len(pa) and len(pb):
                    pops.append((pa, pb))
            gap_pops = pops
        ks = [stats.ks_2samp(a, b).statistic for a, b in pops]
        # signed separation: each KS statistic with the sign of its pair's mean gap
        sks = [stats.ks_2samp(a, b).statistic * np.sign(a.mean() - b.mean()) for a, b in pops]
        gaps = [a.mean() - b.mean() for a, b in gap_pops]
        empty = 0.0 if mode == "paper" else math.nan
        rows.append((o, k, float(np.mean(ks)) if ks else empty, float(np.mean(gaps)) if gaps else empty,
                     len(x), float(np.mean(sks)) if sks else empty))
    if not rows:
        return {"ord": math.nan, "kendall": math.nan, "sep": math.nan, "delta": math.nan, "signed_sep": math.nan,
                "n_walks": 0}
    r = np.array(rows, dtype=float)
    if mode == "paper":
        wt = r[:, 4]
        out = {k: float(np.average(r[:, i], weights=wt))
               for i, k in [(0, "ord"), (1, "kendall"), (2, "sep"), (3, "delta"), (5, "signed_sep")]}
    else:
        out = {"ord": float(r[:, 0].mean()), "kendall": float(r[:, 1].mean())}
        # spec sep/delta: over the SEG's distinct adjacent node pairs
        if edges is None:
            levels = sorted(set(nodes.values()))
            pairs = [(a, b) for a in nodes for b in nodes
                     if nodes[b] > nodes[a] and nodes[b] == min([lv for lv in levels if lv > nodes[a]], default=-1)]
        else:
            pairs = list(edges)
        ks, gaps, sks = [], [], []
        for a, b in pairs:
            pa = df.loc[df["label"] == a, metric].dropna().to_numpy()
            pb = df.loc[df["label"] == b, metric].dropna().to_numpy()
            if len(pa) and len(pb):
                ks.append(stats.ks_2samp(pa, pb).statistic)
                gaps.append(pa.mean() - pb.mean())
                sks.append(ks[-1] * np.sign(gaps[-1]))
        out["sep"] = float(np.mean(ks)) if ks else math.nan
        out["delta"] = float(np.mean(gaps)) if gaps else math.nan
        out["signed_sep"] = float(np.mean(sks)) if sks else math.nan
    out["n_walks"] = len(rows)
    return out


def leaderboard(images: pd.DataFrame, scores: pd.DataFrame, metrics, mode: str = "paper",
                lower_is_better=()) -> pd.DataFrame:
    """images: seg_id, file_name, label, level, partition; scores: file_name + metric columns."""
    df = images.merge(scores, on="file_name", how="left")
    for m in lower_is_better:
        df[m] = -df[m]
    seg_ids = sorted(df["seg_id"].unique())
    keep = seg_ids[:-1] if mode == "paper" else seg_ids
    rows = []
    for m in metrics:
        per = []
        for sid in seg_ids:
            res = seg_metametrics(df[df["seg_id"] == sid], m, mode)
            per.append((sid, df.loc[df["seg_id"] == sid, "partition"].iloc[0], res["ord"], res["sep"]))
        p = pd.DataFrame(per, columns=["seg_id", "partition", "ord", "sep"])
        p = p[p["seg_id"].isin(keep)]
        row = {"metric": m, "ord_avg": p["ord"].mean(), "sep_avg": p["sep"].mean()}
        for part in ("Synth", "Nat", "Real"):
            q = p[p["partition"] == part]
            row[f"ord_{part.lower()}"] = q["ord"].mean()
            row[f"sep_{part.lower()}"] = q["sep"].mean()
        rows.append(row)
    return pd.DataFrame(rows)
