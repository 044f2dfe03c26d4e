"""Wide margins before an expectation taken from an argmax, a sort, a threshold or a tie-break.

Tiny random-weight models give values that can lie within rounding of each other: two cosines equal to
the seventh digit, a detection score a hair above its threshold, two crops with the same P(yes). Which
one wins then depends on the order in which a sum was taken, and that changes with the CPU's vector
units, the BLAS library and its thread count, the batch size and the denormal mode. A test that expects
"the argmax is index 2" of such values passes on one machine and fails on another (issue 30: an AMD EPYC
machine flipped two tests that passed here).

So every test whose expected value comes from such a decision over floats from a random model first
calls one of these helpers on the values it decides over. A fixture that is ill-conditioned fails here,
with a message that says so, on every machine, instead of flipping on some: choose another seed or
input (one that gives a wide margin), never loosen the margin.

The margin is relative to the values' scale: ``rel * max(|values|)`` (or ``abs_tol`` if larger), 1e-3
of the scale by default: far above float32 rounding after a few hundred additions (about 1e-5), far
below any difference a test means.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

#: default relative margin (of the largest magnitude among the values compared)
REL = 1e-3


def _tol(values: np.ndarray, rel: float, abs_tol: float) -> float:
    finite = values[np.isfinite(values)]
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return max(rel * scale, abs_tol)


def _fail(what: str, gap: float, tol: float, context: str) -> None:
    where = f" ({context})" if context else ""
    raise AssertionError(
        f"ill-conditioned fixture{where}: {what} margin {gap:.3g} is below {tol:.3g}; the outcome could "
        "flip on another CPU, BLAS or batch size. Choose another seed or input that gives a wide margin.")


def assert_wide_argmax(values: Sequence[float] | np.ndarray, *, rel: float = REL, abs_tol: float = 0.0,
                       context: str = "", argmin: bool = False) -> int:
    """Assert that the best of ``values`` beats the runner-up by a wide margin; return its index.

    ``argmin=True`` checks the smallest value instead. NaNs are never the winner.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size < 2:
        return int(np.nanargmin(v) if argmin else np.nanargmax(v)) if v.size else -1
    w = -v if argmin else v
    w = np.where(np.isnan(w), -np.inf, w)
    order = np.argsort(-w, kind="stable")
    gap = float(w[order[0]] - w[order[1]])
    tol = _tol(v, rel, abs_tol)
    if not gap > tol:
        _fail("argmin" if argmin else "argmax", gap, tol, context)
    return int(order[0])


def assert_wide_threshold(values: Iterable[float] | float, threshold: float, *, rel: float = REL,
                          abs_tol: float = 0.0, context: str = "") -> None:
    """Assert that no value lies within the margin of ``threshold`` (so ``v >= threshold`` cannot flip)."""
    v = np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()
    v = v[np.isfinite(v)]
    if not v.size:
        return
    tol = _tol(np.append(v, threshold), rel, abs_tol)
    gap = float(np.min(np.abs(v - threshold)))
    if not gap > tol:
        _fail(f"threshold {threshold:g}", gap, tol, context)


def assert_distinct(values: Sequence[float] | np.ndarray, *, rel: float = REL, abs_tol: float = 0.0,
                    context: str = "") -> None:
    """Assert that every two values differ by a wide margin (so a sort or a ranking of them cannot flip)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size < 2:
        return
    tol = _tol(v, rel, abs_tol)
    gap = float(np.min(np.diff(np.sort(v))))
    if not gap > tol:
        _fail("sort", gap, tol, context)


def assert_wide_gap(a: float, b: float, *, rel: float = REL, abs_tol: float = 0.0, context: str = "") -> None:
    """Assert that ``a`` and ``b`` differ by a wide margin (a comparison ``a > b`` of the two cannot flip)."""
    assert_distinct([a, b], rel=rel, abs_tol=abs_tol, context=context)
