"""The bootstrap over prompts: every interval statistic of every metric, from one set of prompt resamples.

What :func:`ts2viz.metaeval.humaneval.evaluate` runs for its intervals.

A resample of prompts is a vector of prompt counts; Pearson, the pair-wise accuracies and the per-model means
are functions of per-prompt sums (:func:`prompt_sums`, :func:`pair_sums`, :func:`corr_from_sums`), so a
resample is one matrix product. Spearman and Kendall are re-ranked in each resample, exactly on small sets
and to first order in the counts on large ones (:func:`rank_interval_methods` says which, by the sizes and
:data:`RANK_EXACT_MAX_WORK`); :func:`resampled_statistics` runs them all. Pure numpy.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..parallel import one_blas_thread, pause_point
from ..statistics.bootstrap import BootstrapSettings
from ..statistics.rank_bootstrap import ResampledSpearman
from .humaneval_settings import HumanEvalSettings

#: ``rank_bootstrap="auto"``: Spearman's and Kendall's resamples are exact while images x prompts (their
#: cost per resample and metric; TIFA160 1.3e5, ImagenHub 1.9e5, GenAI-Bench 1.7e6) is at most this and
#: images at most RANK_EXACT_HARD_MAX_IMAGES, first-order above
RANK_EXACT_MAX_WORK = 2_000_000
#: ``rank_bootstrap="exact"`` refuses sets beyond these (Kendall's pair sums hold images^2 pairs,
#: Spearman's matrices images x prompts entries): an InputError instead of running out of memory
RANK_EXACT_HARD_MAX_IMAGES = 5_000
RANK_EXACT_HARD_MAX_WORK = 10_000_000
#: from this many prompts on, the resamples' matrix product runs in float32 (twice as fast; the
#: resampled statistics then differ from float64 by about 1e-8, ``tests/statistics/test_rank_bootstrap.py``)
FLOAT32_MIN_PROMPTS = 1000
#: the statistics with bootstrap intervals, as columns of :meth:`HumanEval.frame`
INTERVAL_STATS = ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq", "ordering_kendall")


def kendall_small(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the last axes of two arrays of a few values (the T2I models' means).

    Parameters
    ----------
    a, b : numpy.ndarray
        (..., M) values, M small (all M * (M - 1) / 2 pairs are formed); their leading axes broadcast
        (one row of the raters' means against many of the metrics').

    Returns
    -------
    numpy.ndarray
        (...,) tau-b; NaN where a side has no untied pair.

    Notes
    -----
    NaN policy: a pair with NaN on either side is left out.
    """
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    num = np.zeros(shape)
    na = np.zeros(shape, dtype=np.int64)
    nb = np.zeros(shape, dtype=np.int64)
    # pair by pair (M is small): the signs are -1, 0, 1 and NaN, so the sums are exact in any order, and no
    # (..., pairs) temporaries are formed
    for i, j in zip(*np.triu_indices(a.shape[-1], 1)):
        sa = np.sign(a[..., i] - a[..., j])
        sb = np.sign(b[..., i] - b[..., j])
        ok = ~(np.isnan(sa) | np.isnan(sb))
        num += np.where(ok, sa * sb, 0)
        na += ok & (sa != 0)
        nb += ok & (sb != 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((na > 0) & (nb > 0), num / np.sqrt(na * nb.astype(float)), np.nan)


def prompt_sums(x, y, ok, pc, P) -> np.ndarray:
    """Per-prompt sums behind Pearson's r, from which a resample's r is exact.

    Parameters
    ----------
    x : numpy.ndarray
        (k, n) scores.
    y : numpy.ndarray
        (n,) ratings.
    ok : numpy.ndarray
        (k, n) bool: the images each metric uses.
    pc : numpy.ndarray
        (n,) prompt codes 0 .. P - 1.
    P : int
        Number of prompts.

    Returns
    -------
    numpy.ndarray
        (P, k, 6): images, x, y, x^2, y^2, xy summed per prompt (centred on each metric's own images'
        means, so the products lose no precision); zeros for a metric with fewer than two images.
    """
    k, n = x.shape
    out = np.zeros((P, k, 6))
    for i in range(k):
        m = ok[i]
        xi, yi = x[i][m], y[m]
        if xi.size < 2:
            continue
        xi = xi - xi.mean()
        yi = yi - yi.mean()
        g = pc[m]
        for c, v in enumerate((None, xi, yi, xi * xi, yi * yi, xi * yi)):
            out[:, i, c] = np.bincount(g, weights=v, minlength=P)
    return out


def corr_from_sums(s: np.ndarray) -> np.ndarray:
    """Pearson's r from (weighted) sums.

    Parameters
    ----------
    s : numpy.ndarray
        (..., 6) sums as :func:`prompt_sums` makes them (weighted by a resample's prompt counts).

    Returns
    -------
    numpy.ndarray
        (...,) r; NaN where fewer than two images or a side is constant.
    """
    n = s[..., 0]
    sx, sy, sxx, syy, sxy = (s[..., c] for c in range(1, 6))
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n
        vx = sxx - sx * sx / n
        vy = syy - sy * sy / n
        r = cov / np.sqrt(vx * vy)
    return np.where((vx > 0) & (vy > 0) & (n >= 2), np.clip(r, -1, 1), np.nan)


def pair_sums(x, y, pairs, eps, pc, P, metric_ties: str):
    """Per-prompt counts of pair outcomes, from which a resample's pair-wise accuracies are exact.

    Parameters
    ----------
    x : numpy.ndarray
        (k, n) scores.
    y : numpy.ndarray
        (n,) ratings.
    pairs : ts2viz.metaeval.pairwise.PairIndex
        Image pairs, both of one prompt.
    eps : numpy.ndarray
        (k,) each metric's tie threshold for acc_eq.
    pc : numpy.ndarray
        (n,) prompt codes 0 .. P - 1.
    P : int
        Number of prompts.
    metric_ties : {'wrong', 'half'}
        The credit of a metric tie on a pair the raters order.

    Returns
    -------
    numpy.ndarray
        (P, k, 4): the gold-ordered task's numerator and denominator, acc_eq's numerator and denominator.
    """
    i, j = pairs.first, pairs.second
    dm = x[:, i] - x[:, j]
    dg = (y[i] - y[j])[None, :]
    valid = ~np.isnan(dm) & ~np.isnan(dg)
    g = pc[i]
    out = np.zeros((P, x.shape[0], 4))
    credit = 0.5 if metric_ties == "half" else 0.0
    for r in range(x.shape[0]):
        v = valid[r]
        d, gd = dm[r], dg[0]
        ordered = v & (gd != 0)
        exact_tie = d == 0
        conc = ordered & ~exact_tie & (np.sign(d) == np.sign(gd))
        num1 = conc + credit * (ordered & exact_tie)
        mt = np.abs(d) <= eps[r]
        gt = gd == 0
        num2 = v & ((~mt & ~gt & (np.sign(d) == np.sign(gd))) | (mt & gt))
        out[:, r, 0] = np.bincount(g, weights=num1.astype(float), minlength=P)
        out[:, r, 1] = np.bincount(g, weights=ordered.astype(float), minlength=P)
        out[:, r, 2] = np.bincount(g, weights=num2.astype(float), minlength=P)
        out[:, r, 3] = np.bincount(g, weights=v.astype(float), minlength=P)
    return out


def _distinct_drawn(values: np.ndarray, g: np.ndarray, P: int):
    """A function of counts (b, P) -> (b,): how many distinct ``values`` the resample holds.

    A value held only by images of undrawn prompts is absent.
    """
    codes, sizes = np.unique(values, return_inverse=True, return_counts=True)[1:]
    codes = codes.ravel()
    single = sizes[codes] == 1
    per_prompt = np.bincount(g[single], minlength=P).astype(np.float64)        # values held by one image
    multi = np.flatnonzero(~single)
    mcodes = np.unique(codes[multi], return_inverse=True)[1].ravel()
    shared = np.zeros((P, int(mcodes.max()) + 1 if multi.size else 0))
    np.add.at(shared, (g[multi], mcodes), 1.0)
    return lambda cnt: (cnt > 0) @ per_prompt + ((cnt @ shared) > 0).sum(1)


def _by_prompt_pairs(v: np.ndarray, starts: np.ndarray, present: np.ndarray, P: int) -> np.ndarray:
    """Sum of an (images x images) array over blocks of images of one prompt: (P, P) float32.

    Images are sorted by prompt, ``starts`` holds each present prompt's first row; zeros for absent
    prompts.
    """
    blocks = np.add.reduceat(np.add.reduceat(v, starts, axis=0, dtype=np.int32), starts, axis=1, dtype=np.int32)
    out = np.zeros((P, P), dtype=np.float32)
    out[np.ix_(present, present)] = blocks
    return out


def _kendall_matrices(x, y, ok, pc, P, variant: str = "b"):
    """Per metric, prompt-by-prompt sums over ordered image pairs, for the exact resampled tau-b and tau-c.

    The sums are: concordance sign products A, ties in the metric Tx, ties in the ratings Ty (each P x P;
    images of a prompt count against each other and, with i = j, themselves), images per prompt, and
    (tau-c) the counters of distinct values drawn on each side. (The image pairs are int8 signs of dense
    codes, summed over prompt blocks by ``reduceat``: O(images^2) bytes, not float64 words.)
    """
    out = []
    human_ties: dict = {}
    for r in range(x.shape[0]):
        m = ok[r]
        if m.sum() < 2:                                     # no pair: no interval
            out.append(None)
            continue
        order = np.argsort(pc[m], kind="stable")            # images grouped by prompt
        xi, yi, g = x[r][m][order], y[m][order], pc[m][order]
        present, starts = np.unique(g, return_index=True)
        cx = np.unique(xi, return_inverse=True)[1].astype(np.int32).ravel()
        cy = np.unique(yi, return_inverse=True)[1].astype(np.int32).ravel()
        sx = np.sign(cx[:, None] - cx[None, :]).astype(np.int8)
        key = m.tobytes()
        if key not in human_ties:                       # the ratings' ties depend only on the mask
            sy = np.sign(cy[:, None] - cy[None, :]).astype(np.int8)
            human_ties = {key: (sy, _by_prompt_pairs(sy == 0, starts, present, P))}
        sy, ty = human_ties[key]
        presence = (_distinct_drawn(xi, g, P), _distinct_drawn(yi, g, P)) if variant == "c" else ()
        out.append((_by_prompt_pairs(sx * sy, starts, present, P), _by_prompt_pairs(sx == 0, starts, present, P), ty,
                    np.bincount(g, minlength=P).astype(np.float64), presence))
    return out


def prompt_resamples(n_prompts: int, boot: BootstrapSettings, chunk_items: int = 10_000_000,
                     dtype=np.float64):
    """The bootstrap resamples of prompts, in chunks.

    Parameters
    ----------
    n_prompts : int
        Number of prompts.
    boot : BootstrapSettings
        Resample count and seed.
    chunk_items : int, default 10,000,000
        At most this many draws per chunk.
    dtype : numpy dtype, default numpy.float64
        The dtype of the count arrays.

    Yields
    ------
    start : int
        Index of the chunk's first resample.
    counts : numpy.ndarray
        (b, n_prompts): how often each prompt is drawn in resamples ``start .. start + b - 1``.

    Notes
    -----
    Each resample draws ``n_prompts`` prompts with replacement (``rng.integers(0, n_prompts)``,
    ``rng = numpy.random.default_rng(boot.seed)``, chunk by chunk), so the resamples depend only on the
    seed, the resample count and the number of prompts. (The draws are made as 32-bit integers, which
    numpy draws from the very same stream as 64-bit ones below 2**32 prompts, and counted 8 resamples
    at a time, whose counts stay in the cache.)

    Examples
    --------
    >>> from ts2viz.metaeval.prompt_bootstrap import prompt_resamples
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> start, counts = next(prompt_resamples(4, BootstrapSettings(n_resamples=3)))
    >>> start, counts.shape, counts.sum(axis=1).tolist()
    (0, (3, 4), [4.0, 4.0, 4.0])
    """
    B, P = boot.n_resamples, max(int(n_prompts), 1)
    rng = np.random.default_rng(boot.seed)
    chunk = max(1, min(B, chunk_items // P))
    small = np.int32 if P < 2 ** 31 else np.int64
    step = 8                                  # resamples per bincount: its counts stay in the L2 cache
    offsets = (np.arange(step, dtype=np.intp) * P)[:, None]
    for start in range(0, B, chunk):
        b = min(chunk, B - start)
        draws = rng.integers(0, P, size=(b, P), dtype=small)
        counts = np.empty((b, P), dtype=dtype)
        for r in range(0, b, step):
            block = draws[r:r + step].astype(np.intp)
            block += offsets[:block.shape[0]]
            counts[r:r + step] = np.bincount(block.ravel(), minlength=block.size).reshape(-1, P)
        yield start, counts


def rank_interval_methods(n_images: int, n_prompts: int, settings: HumanEvalSettings) -> dict:
    """How the Spearman and Kendall resamples are computed for a set of this size.

    Parameters
    ----------
    n_images : int
        Rated images.
    n_prompts : int
        Prompts.
    settings : HumanEvalSettings
        Its ``rank_bootstrap`` and ``spearman`` choices.

    Returns
    -------
    dict
        ``{"spearman": m, "kendall": m}`` with m ``"exact"`` (the resampled data's own statistic) or
        ``"linear"`` (its first-order expansion in the prompt counts,
        :mod:`ts2viz.statistics.rank_bootstrap`); Spearman is ``"pearson"`` with
        ``spearman="np-corrcoef"`` (that statistic is Pearson's r, always exact).

    Raises
    ------
    InputError
        With ``rank_bootstrap="exact"`` above :data:`RANK_EXACT_HARD_MAX_IMAGES` images or
        :data:`RANK_EXACT_HARD_MAX_WORK` images x prompts (it would not fit in memory).

    Notes
    -----
    ``"auto"`` is exact while ``n_images * n_prompts`` is at most :data:`RANK_EXACT_MAX_WORK` and there
    are at most :data:`RANK_EXACT_HARD_MAX_IMAGES` images (images x prompts is the work per resample and
    metric of either exact method: matrix products with prompts x values matrices for Spearman, prompts
    x prompts quadratic forms for Kendall), linear above; ``"exact"`` is exact (memory and time grow
    with images x prompts, Kendall's set-up with images**2); ``"linear"`` is linear for both.

    Examples
    --------
    >>> from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
    >>> from ts2viz.metaeval.prompt_bootstrap import rank_interval_methods
    >>> rank_interval_methods(800, 160, HumanEvalSettings())          # TIFA160
    {'spearman': 'exact', 'kendall': 'exact'}
    >>> rank_interval_methods(100_000, 10_000, HumanEvalSettings())
    {'spearman': 'linear', 'kendall': 'linear'}
    """
    how = settings.rank_bootstrap
    if how == "exact" and (n_images > RANK_EXACT_HARD_MAX_IMAGES or n_images * n_prompts > RANK_EXACT_HARD_MAX_WORK):
        raise InputError(f"exact rank resamples of {n_images:,} images x {n_prompts:,} prompts would not fit in memory "
                         f"(at most {RANK_EXACT_HARD_MAX_IMAGES:,} images and {RANK_EXACT_HARD_MAX_WORK:,} images x "
                         "prompts): use rank_bootstrap 'auto' or 'linear'")
    exact = how == "exact" or (how == "auto" and n_images * n_prompts <= RANK_EXACT_MAX_WORK
                               and n_images <= RANK_EXACT_HARD_MAX_IMAGES)
    method = "exact" if exact else "linear"
    return {"spearman": "pearson" if settings.spearman == "np-corrcoef" else method, "kendall": method}


def _spearman_exact(x, y, ok, pc, P) -> list:
    """Per metric, the arguments of its :class:`ResampledSpearman` (None when it scored fewer than two).

    Each is built when used and dropped after (its matrices: prompts x values).
    """
    return [(x[i][ok[i]], y[ok[i]], pc[ok[i]], P) if ok[i].sum() >= 2 else None for i in range(x.shape[0])]


def _influence_columns(ok, pc, P, influence: dict) -> tuple[np.ndarray, list]:
    """Per-prompt influences (P, columns) of the statistics resampled to first order.

    From per-image influences ``{(stat, metric): psi}``; also returns which (statistic, metric) each
    column is.
    """
    cols, which = [], []
    for (stat, i), psi in influence.items():
        if np.isnan(psi).any():                      # the statistic is undefined on the full set
            continue
        cols.append(np.bincount(pc[ok[i]], weights=psi, minlength=P))
        which.append((stat, i))
    return (np.stack(cols, axis=1) if cols else np.zeros((P, 0))), which


def _distinct_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``table`` (in first-seen order) and, per original column, its index among them.

    A hash of each column's bytes: ``np.unique(axis=1)`` sorts and costs seconds here.
    """
    cols = np.ascontiguousarray(table.T)
    first: dict = {}
    back = np.fromiter((first.setdefault(c.tobytes(), len(first)) for c in cols), dtype=np.int64, count=cols.shape[0])
    pick = np.empty(len(first), dtype=np.int64)
    pick[back] = np.arange(back.size)                                         # a column of each kind
    return np.ascontiguousarray(cols[pick].T), back


def resampled_statistics(x, y, ok, pc, P, cells, hcells, pairs, eps, st: HumanEvalSettings, boot: BootstrapSettings,
                         point: dict, methods: dict, influence: dict) -> dict:
    """Resampled values of every interval statistic over the prompts (the bootstrap of :func:`ts2viz.metaeval.humaneval.evaluate`).

    One matrix product per chunk of resamples serves every statistic that is a function of per-prompt
    sums: ``counts @ table`` is computed as ``table.sum(0) + (counts - 1) @ table`` with the second term in
    float32 (``counts - 1`` are small integers, exact in float32; the resample's departure from the full
    set is all float32 has to carry, so its rounding is ~1e-7 of the bootstrap spread, while the full
    set's sums stay float64) from :data:`FLOAT32_MIN_PROMPTS` prompts on, in float64 below.

    Parameters
    ----------
    x : numpy.ndarray
        (k, n) scores.
    y : numpy.ndarray
        (n,) ratings.
    ok : numpy.ndarray
        (k, n) bool: the images each metric uses.
    pc : numpy.ndarray
        (n,) prompt codes 0 .. P - 1.
    P : int
        Number of prompts.
    cells, hcells : numpy.ndarray
        (k, P, M) the metrics' and (1, P, M) the ratings' per-prompt means of each image model (NaN where a
        prompt has no image of the model).
    pairs : ts2viz.metaeval.pairwise.PairIndex
        Image pairs, both of one prompt.
    eps : numpy.ndarray
        (k,) each metric's tie threshold for acc_eq.
    st : HumanEvalSettings
        The settings (Kendall variant, metric ties).
    boot : BootstrapSettings
        Resamples, confidence and seed.
    point : dict
        The full set's value of each statistic (stat -> (k,)), the centre of the first-order resamples.
    methods : dict
        How the rank statistics are resampled (``"spearman"``, ``"kendall"`` -> ``"exact"``, ``"pearson"``
        or first order; from :func:`rank_interval_methods`).
    influence : dict
        ``{(stat, metric index): per-image influence}`` of the statistics resampled to first order.

    Returns
    -------
    dict
        stat -> (k, B) resampled values, for every statistic of :data:`INTERVAL_STATS`.
    """
    k, n = x.shape
    B = boot.n_resamples
    sums = prompt_sums(x, y, ok, pc, P).reshape(P, k * 6)
    psum = pair_sums(x, y, pairs, eps, pc, P, st.metric_ties).reshape(P, k * 4)
    M = cells.shape[2]
    cv = np.nan_to_num(cells).transpose(1, 0, 2).reshape(P, k * M)
    cm = (~np.isnan(cells)).transpose(1, 0, 2).reshape(P, k * M).astype(float)
    hv = np.nan_to_num(hcells[0])
    hm = (~np.isnan(hcells[0])).astype(float)
    infl, which = _influence_columns(ok, pc, P, influence)
    table = np.concatenate([sums, psum, cv, cm, hv, hm, infl], axis=1)
    # many columns repeat (rating sums and masks shared by metrics scored on the same images): the
    # resampled sums are computed once per distinct column
    table, back = _distinct_columns(table)
    base = table.sum(0)
    precision = np.float32 if P >= FLOAT32_MIN_PROMPTS else np.float64
    table32 = table.astype(precision)
    kmat = _kendall_matrices(x, y, ok, pc, P, st.kendall) if methods["kendall"] == "exact" else None
    sexact = _spearman_exact(x, y, ok, pc, P) if methods["spearman"] == "exact" else None
    out = {s: np.full((k, B), np.nan) for s in INTERVAL_STATS}
    # one BLAS thread: the products are many and mid-sized, and a BLAS library's threads spin-wait for
    # work, which on a busy machine cost 5x the wall time (TIFA160: 31 s instead of 6.9 s at load 10)
    with one_blas_thread():
        for start, counts in prompt_resamples(P, boot, dtype=precision):
            pause_point()                          # background work (the app's warm-up) may yield here
            b = counts.shape[0]
            counts -= 1.0
            t = ((counts @ table32).astype(np.float64) + base)[:, back]      # (b, columns)
            counts += 1.0
            s = t[:, :k * 6].reshape(b, k, 6)
            sl = slice(start, start + b)
            out["pearson"][:, sl] = corr_from_sums(s).T
            if methods["spearman"] == "pearson":
                out["spearman"][:, sl] = out["pearson"][:, sl]
            c0 = k * 6
            p4 = t[:, c0:c0 + 4 * k].reshape(b, k, 4)
            with np.errstate(invalid="ignore", divide="ignore"):
                out["pairwise_acc"][:, sl] = np.where(p4[..., 1] > 0, p4[..., 0] / p4[..., 1], np.nan).T
                out["pairwise_acc_eq"][:, sl] = np.where(p4[..., 3] > 0, p4[..., 2] / p4[..., 3], np.nan).T
                c1 = c0 + 4 * k
                mv = t[:, c1:c1 + k * M].reshape(b, k, M)
                mn = t[:, c1 + k * M:c1 + 2 * k * M].reshape(b, k, M)
                c2 = c1 + 2 * k * M
                hvv, hmm = t[:, c2:c2 + M], t[:, c2 + M:c2 + 2 * M]
                mm = np.where(mn > 0, mv / mn, np.nan)
                hh = np.where(hmm > 0, hvv / hmm, np.nan)
            out["ordering_kendall"][:, sl] = kendall_small(mm, np.broadcast_to(hh[:, None, :], mm.shape)).T
            c3 = c2 + 2 * M
            for c, (stat, i) in enumerate(which):               # first-order resamples: value + influence
                out[stat][i, sl] = np.clip(point[stat][i] + t[:, c3 + c] - base[back[c3 + c]], -1.0, 1.0)
            if sexact is not None or kmat is not None:
                _exact_rank_resamples(out, sl, counts, sexact, kmat, ok, st.kendall)
    return out


def _exact_rank_resamples(out: dict, sl: slice, counts: np.ndarray, sexact, kmat, ok, variant: str) -> None:
    """Exact Spearman and Kendall of the resamples ``sl`` into ``out``."""
    if sexact is not None:
        for i, args in enumerate(sexact):
            pause_point()
            if args is not None:
                out["spearman"][i, sl] = ResampledSpearman(*args)(counts)
    if kmat is not None:
        cnt = counts.astype(np.float64)
        c32 = counts.astype(np.float32)
        # quadratic forms c' Q c: (c @ Q) in float32 is exact (integer sums far below 2**24), the
        # products with c and their sums in float64
        quad = lambda Q: ((c32 @ Q).astype(np.float64) * cnt).sum(1)          # noqa: E731
        rating_ties: dict = {}
        for r, mats in enumerate(kmat):
            pause_point()
            if mats is None:
                continue
            A, Tx, Ty, sizes, presence = mats
            nn = cnt @ sizes
            s_ = quad(A) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                if variant == "b":
                    if id(Ty) not in rating_ties:           # one matrix per set of rated images
                        rating_ties[id(Ty)] = quad(Ty)
                    n0 = nn * (nn - 1) / 2
                    n1 = (quad(Tx) - nn) / 2
                    n2 = (rating_ties[id(Ty)] - nn) / 2
                    tau = s_ / np.sqrt((n0 - n1) * (n0 - n2))
                else:                                        # tau-c: distinct values drawn, per side
                    m = np.minimum(*((present(cnt) for present in presence)))
                    tau = np.where(m >= 2, 2.0 * s_ / (nn * nn * (m - 1) / np.maximum(m, 1)), np.nan)
            out["kendall"][r, sl] = np.clip(tau, -1, 1)

