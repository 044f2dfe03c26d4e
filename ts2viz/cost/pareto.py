"""Costs per metric and the Pareto front of quality (higher better) against cost (lower better).

A metric is on the front when no other metric is at least as good and at most as costly, and strictly
better in one of the two. Costs come from the user (seconds per image measured on their hardware, or
model size): nothing here guesses them.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..errors import InputError

#: the kinds of cost a user can give (the unit is only a label: any positive number works)
COST_UNITS = ("seconds per image", "parameters (billions)")


def pareto_front(quality, cost) -> np.ndarray:
    """Which points are Pareto-optimal for maximising ``quality`` and minimising ``cost``.

    Parameters
    ----------
    quality : array_like
        (n,) quality of each point (higher better).
    cost : array_like
        (n,) cost of each point (lower better).

    Returns
    -------
    numpy.ndarray
        Bool mask (n,): the points no other point dominates (at least as good and at most as costly, and
        strictly better in one of the two). Equal points are all on the front when none dominates them.

    Raises
    ------
    ValueError
        If ``quality`` and ``cost`` are not vectors of one length.

    Notes
    -----
    NaN policy: a point with a NaN quality or cost is never on the front and dominates nothing.

    Examples
    --------
    >>> from ts2viz.cost import pareto_front
    >>> pareto_front([0.5, 0.7, 0.6, 0.9], [1, 2, 3, 4]).tolist()
    [True, True, False, True]
    """
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    if q.shape != c.shape or q.ndim != 1:
        raise ValueError(f"quality and cost must be vectors of one length, got {q.shape} and {c.shape}")
    ok = ~np.isnan(q) & ~np.isnan(c)
    qq, cc = np.where(ok, q, -np.inf), np.where(ok, c, np.inf)
    # dominated[i]: some j with q_j >= q_i, c_j <= c_i and one of them strict
    ge = (qq[None, :] >= qq[:, None]) & (cc[None, :] <= cc[:, None])
    strict = (qq[None, :] > qq[:, None]) | (cc[None, :] < cc[:, None])
    dominated = (ge & strict & ok[None, :]).any(axis=1)
    return ok & ~dominated


def _cost_value(text: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{where}: cost {text.strip()!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"{where}: cost must be a positive number, got {text.strip()}")
    return v


def parse_costs(text: str, metrics: Sequence[str] | None = None) -> dict[str, float]:
    """Costs typed as ``name=cost`` pairs separated by commas, semicolons or new lines.

    Parameters
    ----------
    text : str
        E.g. ``"CLIPScore=0.02, TIFA-GPT4V=3.1"``; empty entries are skipped.
    metrics : sequence of str, optional
        The known metric names; each name must be among them when given.

    Returns
    -------
    dict[str, float]
        Metric -> cost.

    Raises
    ------
    InputError
        For an entry without ``=``, an unknown metric, or a cost that is not a positive finite number.

    Examples
    --------
    >>> from ts2viz.cost import parse_costs
    >>> parse_costs("CLIPScore=0.01, TIFA-mPLUG=2.5")
    {'CLIPScore': 0.01, 'TIFA-mPLUG': 2.5}
    """
    out: dict[str, float] = {}
    for k, item in enumerate(p for line in (text or "").splitlines() for p in line.replace(";", ",").split(",")):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise InputError(f"cost entry {item[:40]!r}: expected name=cost")
        name, value = (s.strip() for s in item.rsplit("=", 1))
        if metrics is not None and name not in metrics:
            raise InputError(f"cost entry {name[:60]!r}: no such metric")
        out[name] = _cost_value(value, f"cost of {name[:60]!r}")
    return out


def read_costs(path: str | os.PathLike, metrics: Sequence[str] | None = None) -> dict[str, float]:
    """Costs from a CSV with columns ``metric`` and ``cost`` (one row per metric).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (UTF-8, header ``metric,cost``; blank rows are skipped).
    metrics : sequence of str, optional
        The known metric names; each row's metric must be among them when given.

    Returns
    -------
    dict[str, float]
        Metric -> cost.

    Raises
    ------
    InputError
        One line naming the file and row: an unreadable file, a missing header, a short row, an unknown
        or repeated metric, a cost that is not a positive finite number.
    """
    p = os.fspath(path)
    try:
        with open(p, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise InputError(f"cannot read the costs file: {e.strerror}", file=p) from None
    if not rows or [h.strip().lower() for h in rows[0][:2]] != ["metric", "cost"]:
        raise InputError("the costs file needs a header 'metric,cost'", file=p)
    out: dict[str, float] = {}
    for r, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2:
            raise InputError(f"row {r}: expected metric,cost", file=p)
        name = row[0].strip()
        if metrics is not None and name not in metrics:
            raise InputError(f"row {r}: no metric {name[:60]!r} in the scores", file=p)
        if name in out:
            raise InputError(f"row {r}: metric {name[:60]!r} given twice", file=p)
        out[name] = _cost_value(row[1], f"{p}, row {r}")
    return out


@dataclass(frozen=True, eq=False)
class CostTable:
    """Costs and Pareto fronts of some metrics (:func:`cost_table`).

    Attributes
    ----------
    metrics : tuple of str
        The metrics, in the order of the arrays.
    cost : numpy.ndarray
        Cost per metric (NaN if not given).
    quality : dict
        Quality cell name (``ord_avg``, ...) -> values per metric.
    front : dict
        Quality cell name -> bool per metric: on the Pareto front of that cell against cost.
    unit : str
        The cost's unit (a label, :data:`COST_UNITS`).
    """

    metrics: tuple[str, ...]
    cost: np.ndarray
    quality: dict
    front: dict
    unit: str

    def frame(self):
        """The table as a DataFrame.

        Returns
        -------
        pandas.DataFrame
            ``metric``, ``cost``, then per quality cell its values and ``pareto_{cell}``.
        """
        import pandas as pd

        df = pd.DataFrame({"metric": self.metrics, "cost": self.cost})
        for k, v in self.quality.items():
            df[k] = v
            df[f"pareto_{k}"] = self.front[k]
        return df


def cost_table(metrics: Sequence[str], costs: Mapping[str, float], quality: Mapping[str, np.ndarray],
               unit: str = COST_UNITS[0]) -> CostTable:
    """Costs aligned to ``metrics`` and, for each quality cell, the Pareto front of quality against cost.

    Parameters
    ----------
    metrics : sequence of str
        The metrics.
    costs : Mapping[str, float]
        Metric -> cost (metrics without one get NaN).
    quality : Mapping[str, numpy.ndarray]
        Quality cell (e.g. ``ord_avg``, ``sep_avg``) -> values per metric, in ``metrics`` order.
    unit : str, default "seconds per image"
        The cost's unit (a label).

    Returns
    -------
    CostTable
        Costs, qualities and fronts; only metrics with a cost can be on a front.

    Examples
    --------
    >>> from ts2viz.cost import cost_table
    >>> table = cost_table(["A", "B", "C"], {"A": 0.01, "C": 3.0}, {"ord_avg": [0.71, 0.74, 0.69]})
    >>> table.front["ord_avg"].tolist()
    [True, False, False]
    """
    c = np.array([costs.get(m, np.nan) for m in metrics], dtype=np.float64)
    q = {k: np.asarray(v, dtype=np.float64) for k, v in quality.items()}
    return CostTable(tuple(metrics), c, q, {k: pareto_front(v, c) for k, v in q.items()}, unit)
