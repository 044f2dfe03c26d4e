"""A SEG's Ord for two metrics' scores swapped image by image, for many pairs and swap patterns at once.

PERM-BOTH (:func:`ts2viz.metametrics.permutation.perm_both_pairs`) recomputes each SEG's Ord for every
permutation of every pair of metrics: per pair (a, b) and swap pattern z (one bit per image), row A takes
b's standardised score where z is 1 and a's elsewhere, row B the reverse (row A of the complement of z).
:class:`SwapOrd` holds what does not depend on z, per SEG and group of pairs, so that a block of patterns
costs a few matrix products instead of a sort per row (:func:`ts2viz.metametrics.walks.seg_ord`).

How. Per walk, Ord is minus Pearson's r of centred mid-ranks (each image counted as often as its node
occurs in the walk), and with fixed NaN images the level side (its centred ranks and variance) is fixed.

- Covariance: with s the row's scores, ``cov_w = 1/2 sum_(a<b) C_wa C_wb (dy_wa - dy_wb) Q[a, b]``, where
  ``Q[a, b] = sum_(i in a, j in b) sign(s_i - s_j)`` over nodes a, b at different levels (``C``: node
  counts of the walks, ``dy``: a node's centred level rank in the walk; sign is antisymmetric, so Q[a, a]
  = 0). Each image takes one of two values, so ``sign(s_i - s_j)`` is bilinear in (z_i, z_j) and
  ``Q[a, b] = x_a' M_ab x_b`` with ``x_a`` node a's bits followed by a 1: one matrix product per node
  pair over all patterns and pairs of metrics, then one with the walk table.
- Variance of the score ranks: ``(S**3 - sum_v t_v**3) / 12``, t_v the walk's count of images holding
  value v (S the walk's scored images). Only values that two images can hold need the cube; they are
  few per pair (ties of the QA metrics' discrete scores), and each one's per-node count is linear in z. An
  image holding a value no other image can hold is a group of its node's multiplicity (linear in z too).

Every count is an integer (twice a product of half-integers at most), so covariances and variances are
exact in float64; the result equals :func:`~ts2viz.metametrics.walks.seg_ord` on the same rows up to the
rounding of the last divisions (``tests/statistics/test_perm_both.py``).
"""
from __future__ import annotations

import numpy as np

from .definitions import CONSTANT_RANK_TOL
from .policy import Policy
from .structure import SegStructure

#: elements of one (walks x values x pairs x rows) temporary: the pairs are processed in groups that keep each
#: such array near this size (4 MB in float32, within a core's cache)
SWAP_CHUNK_ELEMENTS = 1_000_000

#: swap patterns scored at once (twice as many rows: A and B)
SWAP_ROWS = 100


class SwapOrd:
    """What a SEG's Ord for swapped rows of some pairs of metrics needs that does not depend on the swaps.

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    alpha, beta : numpy.ndarray
        (P, n) the pairs' two metrics' scores, aligned to ``st.file_names`` (standardised or not: Ord is
        a rank statistic). Every row of both must leave out (NaN) the same images.
    policy : Policy
        The resolved policy (its ``walk_weights``).

    Raises
    ------
    ValueError
        If the rows do not all leave out the same images.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz import load_dataset
    >>> from ts2viz.metametrics.policy import PAPER
    >>> from ts2viz.metametrics.structure import seg_structure
    >>> from ts2viz.metametrics.swap_ord import SwapOrd
    >>> from ts2viz.metametrics.walks import seg_ord
    >>> st = seg_structure(load_dataset("ts2")[3])
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.integers(0, 3, (2, 1, len(st.file_names))).astype(float)   # tied scores
    >>> z = rng.random((4, len(st.file_names))) < 0.5
    >>> fast = SwapOrd(st, a, b, PAPER)(z)                                    # (2, 4, 1): rows A, B
    >>> rows = np.concatenate([np.where(z, b, a), np.where(z, a, b)])
    >>> bool(np.allclose(fast.ravel(), seg_ord(st, rows), rtol=0, atol=1e-14))
    True
    """

    def __init__(self, st: SegStructure, alpha: np.ndarray, beta: np.ndarray, policy: Policy):
        alpha = np.atleast_2d(np.asarray(alpha, dtype=np.float64))
        beta = np.atleast_2d(np.asarray(beta, dtype=np.float64))
        keep = ~np.isnan(alpha[:1])
        if (np.isnan(alpha) == keep).any() or (np.isnan(beta) == keep).any():
            raise ValueError("every row of alpha and beta must leave out the same images")
        self.images = np.flatnonzero(keep[0])
        self.n_pairs = P = alpha.shape[0]
        a_, b_ = alpha[:, self.images], beta[:, self.images]
        node = st.node_of[self.images]
        N = st.node_counts.shape[1]
        pos = [np.flatnonzero(node == a) for a in range(N)]
        self.node_images = pos
        # level side, per distinct walk (walks with equal node counts have equal Ord)
        C, inv = np.unique(st.node_counts, axis=0, return_inverse=True)
        mult = np.bincount(inv.ravel(), minlength=len(C)).astype(np.float64)
        n_scored = np.array([p.size for p in pos], dtype=np.float64)
        sw = C @ n_scored
        t = (C * n_scored) @ st.node_level                                   # (K, L) scored images per level
        dy = np.cumsum(t, -1) - t / 2 - sw[:, None] / 2                     # centred mid-rank of each level
        vy = (t * dy * dy).sum(-1)
        tol = CONSTANT_RANK_TOL * np.maximum(sw, 1.0) ** 3
        used = sw >= 2
        wt = (np.where(used, sw, 0.0) if policy.walk_weights == "scored-images" else used.astype(np.float64)) * mult
        den = wt.sum()
        self.empty = not den > 0                                             # no walk with two scored images
        live = used & (vy > tol) if not self.empty else np.zeros(len(C), bool)   # the others' rho is 0
        # rho = cov / sqrt(vx * vy) with vx = v12 / 12; the SEG's Ord is -sum_w wt_w rho_w / den
        self.weight = (wt[live] / den) * np.sqrt(12.0 / vy[live])
        C, dyn = C[live], (dy @ st.node_level.T)[live]                       # (K, N)
        K = C.shape[0]
        self.cube = sw[live] ** 3
        self.tol12 = 12.0 * tol[live]
        # pairs in order of their number of tied values, in groups of similar size (see _ties)
        slot_a, slot_b = self._slots(a_, b_)                                # (P, n): -1 = a lone value
        n_tied = np.maximum(1, np.maximum(slot_a.max(1, initial=-1), slot_b.max(1, initial=-1)) + 1)
        self.order = np.argsort(n_tied, kind="stable")
        groups, s = [], 0
        while s < P:
            e = s + 1
            while e < P and K * SWAP_ROWS * 2 * n_tied[self.order[e]] * (e + 1 - s) <= SWAP_CHUNK_ELEMENTS:
                e += 1
            groups.append((s, e))
            s = e
        a_, b_ = a_[self.order], b_[self.order]
        slot_a, slot_b = slot_a[self.order], slot_b[self.order]
        # covariances: the node pairs at different levels that share a walk
        width = np.array([p.size + 1 for p in pos])
        start = np.r_[0, np.cumsum(width)[:-1]]
        self.width = int(width.sum())
        self.columns = np.empty(len(self.images), dtype=np.int64)
        for a in range(N):
            self.columns[pos[a]] = start[a] + np.arange(pos[a].size)
        level = st.node_level.argmax(1)
        blocks, tabs, sizes = [], [], []
        for a in range(N):
            for b in range(a + 1, N):
                if not (pos[a].size and pos[b].size) or level[a] == level[b]:
                    continue
                tab = C[:, a] * C[:, b] * (dyn[:, a] - dyn[:, b]) / 2
                if not tab.any():
                    continue
                blocks.append((slice(start[a], start[a] + width[a]), slice(start[b], start[b] + width[b]),
                               self._bilinear(a_, b_, pos[a], pos[b])))
                tabs.append(tab)
                sizes.append(pos[a].size * pos[b].size)
        table = np.array(tabs).reshape(len(tabs), K)                       # (B, K)
        # float32 holds every covariance exactly (multiples of 1/4) while 4 x its bound stays under 2**24,
        # and every tie count, cube and sum of cubes while a walk has at most 255 images
        bound = 4 * np.abs(table).T @ np.array(sizes, dtype=np.float64)
        self.cov_dtype = np.float32 if not bound.size or bound.max() < 2.0 ** 24 else np.float64
        self.tie_dtype = np.float32 if not K or self.cube.max() < 2.0 ** 24 else np.float64
        self.table_t = np.ascontiguousarray(table.T, dtype=self.cov_dtype)
        self.blocks = [(sa, sb, M.astype(self.cov_dtype)) for sa, sb, M in blocks]
        self.c = C.astype(self.tie_dtype)
        self.c3 = (C ** 3).astype(self.tie_dtype)
        self.groups = [self._ties(slot_a[s:e], slot_b[s:e], s, e, int(n_tied[self.order[e - 1]]), node, N)
                       for s, e in groups]

    @staticmethod
    def _slots(a_: np.ndarray, b_: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per pair and image, the slot of its a-value and of its b-value.

        The slots number the pair's shared values (values that two images can hold) in increasing order;
        a lone value gets -1.
        """
        P, n = a_.shape
        both = np.concatenate([a_, b_], axis=1)                                 # (P, 2n)
        order = np.argsort(both, axis=1, kind="stable")
        srt = np.take_along_axis(both, order, axis=1)
        code_sorted = np.cumsum(np.concatenate([np.zeros((P, 1), bool), srt[:, 1:] != srt[:, :-1]], axis=1), axis=1)
        code = np.empty_like(code_sorted)
        np.put_along_axis(code, order, code_sorted, axis=1)                     # value index of each entry
        ia, ib = code[:, :n], code[:, n:]
        base = (np.arange(P) * 2 * n)[:, None]
        holders = np.bincount((base + ia).ravel(), minlength=P * 2 * n) \
            + np.bincount((base + ib).ravel(), minlength=P * 2 * n) \
            - np.bincount((base + ia)[ia == ib], minlength=P * 2 * n)
        shared = (holders >= 2).reshape(P, 2 * n)
        slot = np.where(shared, np.cumsum(shared, axis=1) - 1, -1)
        return np.take_along_axis(slot, ia, axis=1), np.take_along_axis(slot, ib, axis=1)

    @staticmethod
    def _bilinear(a_: np.ndarray, b_: np.ndarray, ia: np.ndarray, jb: np.ndarray) -> np.ndarray:
        """(P, (|a|+1)(|b|+1)): Q[a, b] = x_a' M x_b for every pair, x = (bits, 1)."""
        aa, ba, ab, bb = a_[:, ia, None], b_[:, ia, None], a_[:, None, jb], b_[:, None, jb]
        s00, s10, s01, s11 = np.sign(aa - ab), np.sign(ba - ab), np.sign(aa - bb), np.sign(ba - bb)
        P, m, k = s00.shape
        M = np.empty((P, m + 1, k + 1))
        M[:, :m, :k] = s11 - s10 - s01 + s00
        M[:, :m, k] = (s10 - s00).sum(2)
        M[:, m, :k] = (s01 - s00).sum(1)
        M[:, m, k] = s00.sum((1, 2))
        return np.ascontiguousarray(M.reshape(P, -1))

    def _ties(self, slot_a: np.ndarray, slot_b: np.ndarray, s: int, e: int, slots: int, node: np.ndarray, N: int):
        """One group of pairs: per node, how each image's swap changes the holders of each value.

        Shared values get ``slots`` per pair, zero-padded; the values no other image can hold are the lone
        values.

        Returns ``(s, e, slots, delta, count0)``: ``delta[a]`` ((slots + 1) * pairs, |a|): the change of
        node a's holders if image i swaps, values slot-major, the lone values last; ``count0`` (N,
        (slots + 1) * pairs): the holders with no swap.
        """
        P, n = e - s, node.size
        sa = np.where(slot_a < 0, slots, slot_a)                            # lone values: the last slot
        sb = np.where(slot_b < 0, slots, slot_b)
        j = np.broadcast_to(np.arange(P)[:, None], (P, n))
        i = np.broadcast_to(np.arange(n)[None, :], (P, n))
        size = (slots + 1) * P * n
        delta = (np.bincount(((sb * P + j) * n + i).ravel(), minlength=size)
                 - np.bincount(((sa * P + j) * n + i).ravel(), minlength=size)).reshape((slots + 1) * P, n)
        count0 = np.bincount(((node[None, :] * (slots + 1) + sa) * P + j).ravel(),
                             minlength=N * (slots + 1) * P).reshape(N, (slots + 1) * P)
        return (s, e, slots, [np.ascontiguousarray(delta[:, p], dtype=self.tie_dtype) for p in self.node_images],
                count0.astype(self.tie_dtype))

    def __call__(self, bits: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """Ord of rows A and B of the pairs for each swap pattern.

        Parameters
        ----------
        bits : numpy.ndarray
            (k, n) bool, over all the SEG's images (those left out are ignored): True = swap.
        pairs : numpy.ndarray, optional
            (pairs,) bool: the pairs to score (default: all); the others get NaN.

        Returns
        -------
        numpy.ndarray
            (2, k, pairs): ``[0]`` rows A (a's scores, b's where swapped), ``[1]`` rows B; NaN everywhere
            when no walk has two scored images.
        """
        P, k = self.n_pairs, bits.shape[0]
        active = np.ones(P, bool) if pairs is None else np.asarray(pairs, dtype=bool)
        out = np.full((2 * k, P), np.nan)
        if self.empty or not active.any():
            return out.reshape(2, k, P)
        out[:, active] = 0.0
        if self.c.shape[0]:
            on = active[self.order]
            for r in range(0, k, SWAP_ROWS):
                z = bits[r:r + SWAP_ROWS, self.images]
                m = z.shape[0]
                part = self._rows(np.concatenate([z, ~z]), on)                 # rows A, then rows B
                cols = self.order[on]
                out[r:r + m, cols] = part[on, :m].T
                out[k + r:k + r + m, cols] = part[on, m:].T
        return out.reshape(2, k, P)

    def _rows(self, z: np.ndarray, on: np.ndarray) -> np.ndarray:
        """(pairs in ``self.order``, rows) Ord of the rows of bits ``z`` for the pairs ``on`` (same order)."""
        R, (K, N), P = z.shape[0], self.c.shape, self.n_pairs
        x = np.ones((R, self.width), dtype=self.cov_dtype)
        x[:, self.columns] = z
        # covariances: Q[a, b] for every node pair and pair of metrics, then the walk table per group
        B = len(self.blocks)
        Q = np.empty((B, P, R), dtype=self.cov_dtype)
        for q, (sa, sb, M) in enumerate(self.blocks):
            zz = (x[:, sa, None] * x[:, None, sb]).reshape(R, -1)
            np.matmul(M, zz.T, out=Q[q])
        zt = [np.ascontiguousarray(z[:, p].T, dtype=self.tie_dtype) for p in self.node_images]   # (|a|, R)
        out = np.zeros((P, R))
        for s, e, slots, delta, count0 in self.groups:
            sel = np.flatnonzero(on[s:e])
            if not sel.size:
                continue
            G, full = sel.size, sel.size == e - s
            Qg = Q[:, s:e] if full else Q[:, s + sel]
            cov = (self.table_t @ Qg.reshape(B, G * R)).reshape(K, G * R) if B else \
                np.zeros((K, G * R), dtype=self.cov_dtype)
            if not full:
                rows = (np.arange(slots + 1)[:, None] * (e - s) + sel[None, :]).ravel()
                delta = [d[rows] for d in delta]
                count0 = count0[:, rows]
            # holders of each shared value (slot-major) and of the lone values, per node, then per walk
            counts = np.empty((N, (slots + 1) * G, R), dtype=self.tie_dtype)
            for a in range(N):
                if zt[a].shape[0]:
                    np.matmul(delta[a], zt[a], out=counts[a])
                    counts[a] += count0[a][:, None]
                else:
                    counts[a] = count0[a][:, None]
            t = (self.c @ counts[:, :slots * G].reshape(N, slots * G * R)).reshape(K, slots, G * R)
            ties = (self.c3 @ counts[:, slots * G:].reshape(N, G * R))        # (K, G * R)
            for v in range(slots):
                tv = t[:, v]
                cube = tv * tv
                cube *= tv
                ties += cube
            v12 = np.subtract(self.cube[:, None], ties, dtype=np.float64)    # 12 x the score ranks' variance
            ok = v12 > self.tol12[:, None]
            np.sqrt(v12, out=v12)
            r = np.divide(cov, v12, out=np.zeros_like(v12), where=ok)
            out[s + sel] = -(self.weight @ r).reshape(G, R)
        return out


__all__ = ["SWAP_CHUNK_ELEMENTS", "SWAP_ROWS", "SwapOrd"]
