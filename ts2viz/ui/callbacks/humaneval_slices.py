"""The Human ratings tab's slices, agreement and triage views as plain functions of data.

Per rated set (a bundled one or the operator's): the metric x slice heatmap of one tag family
(:func:`slice_figure`, Gecko's Fig. 3, from :func:`ts2viz.metaeval.slices.evaluate_slices`) and the
images of one cell (:func:`slice_rows`); Krippendorff's alpha per rating set and T2I model
(:func:`agreement_table`, :func:`ts2viz.metaeval.agreement.agreement`); and the triage lists
(:func:`triage_metric`, :func:`triage_raters`): the images where a metric and the raters disagree most,
and those where the raters disagree among themselves. Each view can be restricted to Gecko's reliable
prompts (``reliable=True``: :func:`ts2viz.metaeval.reliable.reliable_prompts` at X = 0.5).

Everything is computed on first use and cached per process (the shared metrics only; a session's
uploaded scores are not sliced). A visitor only picks among offered names: rated set, rating set, tag
family, slice, metric and image are checked against the set.
"""
from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

from ...display import md_text
from ...errors import InputError
from ...statistics.bootstrap import BootstrapSettings
from ..serving import priority
from .common import interval_text
from .humaneval import image as gc_image, sets as gc_sets

#: the slices' intervals and p-values (modest, so that a family's first drawing stays near a second)
SLICE_BOOTSTRAP = BootstrapSettings(n_resamples=200)
#: alpha's intervals (one ``krippendorff`` call per resample, group and rating set)
AGREEMENT_BOOTSTRAP = BootstrapSettings(n_resamples=50)
#: Gecko's reliable prompts: disagreement below this fraction of the largest
RELIABLE_X = 0.5
#: the statistics the heatmap can show
HEATMAP_STATS = ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq")
#: rows of each triage list
TRIAGE_ROWS = 25
#: what a heatmap cell's text holds between slice and metric (the click writes it)
CELL_SEP = " | "
#: guards :data:`_WARMED`
_WARMED_LOCK = threading.Lock()
#: the (set, rating set) pairs whose slices are being computed ahead (:func:`warm`)
_WARMED: set = set()


def _per_set(fn):
    """Cache ``fn(name, *args)`` once per process and rated set (keyed on the loaded set, not its name).

    On :func:`~ts2viz.ui.callbacks.humaneval.sets.shared_once`: a second caller waits for the first one's value
    instead of computing it again; a set loaded again (an operator's, in tests) is a new key.
    """
    sig = inspect.signature(fn)
    once = gc_sets.shared_once(lambda g, args: fn(*args))

    @functools.wraps(fn)
    def cached(name, *args, **kw):
        bound = sig.bind(name, *args, **kw)
        bound.apply_defaults()
        return once(gc_sets.listed(name), tuple(bound.arguments.values()))
    return cached


@_per_set
def tags(name: str):
    """The tags of a rated set (:func:`ts2viz.gold.tags.rated_tags`), once per process.

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    ts2viz.gold.tags.Tags
        Its tags.
    """
    from ...gold.tags import rated_tags

    return rated_tags(gc_sets.listed(name))      # images and prompts: the answer columns are not needed


def families(name: str) -> list[str]:
    """The tag families the family picker offers for a rated set.

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    list of str
        The families (``t2i-model`` first).
    """
    return tags(gc_sets.check_gold(name)).families


@_per_set
def reliable(name: str):
    """Gecko's reliable prompts of a set at X = 0.5 (variance, every faithfulness rating set).

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    ts2viz.metaeval.reliable.ReliablePrompts
        The reliable prompts and their images.
    """
    from ...metaeval.reliable import reliable_prompts

    return reliable_prompts(gc_sets.rated(name), RELIABLE_X)


def kept(name: str, only_reliable: bool) -> np.ndarray:
    """The images a view uses: all, or those of the reliable prompts.

    Parameters
    ----------
    name : str
        The rated set's name.
    only_reliable : bool
        Only the reliable prompts' images.

    Returns
    -------
    numpy.ndarray
        (images,) bool, in the set's order.
    """
    return reliable(name).image_mask if only_reliable else np.ones(len(gc_sets.rated(name)), dtype=bool)


def reliable_note(name: str, only_reliable: bool) -> str:
    """One line on the reliable switch: what it keeps, or what it would keep.

    Parameters
    ----------
    name : str
        The rated set's name.
    only_reliable : bool
        Whether the switch is on.

    Returns
    -------
    str
        Markdown.
    """
    rel = reliable(gc_sets.check_gold(name))
    return (f"Reliable prompts only: {md_text(rel.describe())}." if only_reliable else
            f"All prompts (the switch keeps Gecko's {md_text(rel.describe())}).")


@_per_set
def family_slices(name: str, family: str):
    """The slices of one tag family (:func:`ts2viz.gold.tags.slices`, ``all`` first), once per process.

    Parameters
    ----------
    name : str
        The rated set's name.
    family : str
        The tag family.

    Returns
    -------
    ts2viz.gold.tags.Slices
        Its slices.

    Raises
    ------
    InputError
        For an unknown family.
    """
    from ...gold.tags import slices

    return slices(gc_sets.rated(name), tags(name), family)


def warm(name: str, rating_set: str) -> None:
    """Compute every family's slices of a set and rating set ahead, both switch positions, in the background.

    Once per process and pair; each result lands in the cache the views read (a view asking for one that
    is being computed waits for it rather than computing it again). Background work
    (:func:`ts2viz.ui.serving.priority.background`): it waits while visitors' calls run.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set.
    """
    key = (gc_sets.rated(gc_sets.check_gold(name)), rating_set)
    if rating_set not in gc_sets.rating_sets(name) or not gc_sets.rated(name).metrics:
        return
    with _WARMED_LOCK:
        if key in _WARMED:
            return
        _WARMED.add(key)

    def run() -> None:
        with priority.background():          # behind every visitor's call (up to priority.CAP_S in all)
            for only in (False, True):
                for fam in families(name):
                    priority.pause_point()
                    slice_eval(name, rating_set, fam, only)

    threading.Thread(target=run, name=f"warm-slices-{name}", daemon=True).start()


def _rated(name: str, rating_set: str):
    """The rated set, its name and rating set checked."""
    g = gc_sets.rated(gc_sets.check_gold(name))
    if rating_set not in gc_sets.rating_sets(name):
        raise InputError(f"rated set {name!r} has no rating set {rating_set!r}")
    return g


def _check(name: str, rating_set: str, family: str) -> None:
    _rated(name, rating_set)
    tags(name).check_family(family)


@_per_set
def slice_eval(name: str, rating_set: str, family: str, only_reliable: bool = False):
    """Gecko's tasks on every slice of one tag family (:data:`SLICE_BOOTSTRAP`), once per process.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    family : str
        The tag family.
    only_reliable : bool, default False
        Every slice restricted to the reliable prompts (the ``all`` slice too).

    Returns
    -------
    ts2viz.metaeval.slices.SliceEval
        The per-slice results.

    Raises
    ------
    InputError
        For an unknown set, rating set or family, or a set without shared scores.
    """
    from ...gold.tags import Slices
    from ...metaeval.slices import evaluate_slices

    _check(name, rating_set, family)
    g = gc_sets.rated(name)
    if not g.metrics:
        raise InputError(f"rated set {name!r} has no shared metric scores to slice")
    sl = family_slices(name, family)
    if only_reliable:
        sl = Slices(sl.family, sl.names, sl.masks & kept(name, True)[None, :])
    info = {"reliable": RELIABLE_X if only_reliable else ""}
    return evaluate_slices(g, sl, rating_set=rating_set, bootstrap=SLICE_BOOTSTRAP, info=info)


def slice_figure(name: str, rating_set: str, family: str, stat: str = "spearman", only_reliable: bool = False):
    """The metric x slice heatmap (:func:`ts2viz.figures.slice_heatmap.slice_heatmap`).

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set.
    family : str
        The tag family.
    stat : str, default "spearman"
        One of :data:`HEATMAP_STATS`.
    only_reliable : bool, default False
        On the reliable prompts only.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The heatmap (each cell's ``customdata``: ``[slice, metric]``).

    Raises
    ------
    InputError
        For an unknown statistic (or set, rating set, family).
    """
    from ...figures.slice_heatmap import slice_heatmap

    if stat not in HEATMAP_STATS:
        raise InputError(f"statistic must be one of {', '.join(HEATMAP_STATS)}, not {stat!r}")
    res = slice_eval(name, rating_set, family, only_reliable)
    return slice_heatmap(res, stat)          # what it shows: the note above it (slice_note)


def slice_note(name: str, rating_set: str, family: str, only_reliable: bool = False) -> str:
    """What the heatmap rests on: slices, resamples, marked cells, the small slices named.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set.
    family : str
        The tag family.
    only_reliable : bool, default False
        On the reliable prompts only.

    Returns
    -------
    str
        Markdown.
    """
    from ...metaeval.slices import FEW_PROMPTS

    res = slice_eval(name, rating_set, family, only_reliable)
    small = [f"{md_text(s)} ({int(n)})" for s, n in zip(res.slices, res.n_prompts) if n < FEW_PROMPTS]
    text = (f"{len(res.slices)} slices of **{md_text(family)}** (an image is in slice T when it or its prompt has tag T; "
            f"`all` first), {len(res.metrics)} metrics; 95 % percentile intervals and p-values from "
            f"{SLICE_BOOTSTRAP.n_resamples} prompt resamples. Dark cells in brackets: p > 0.05 (not significant). "
            "Click a cell to list its images.")
    if small:
        text += f" **Small slices** (fewer than {FEW_PROMPTS} prompts; weak intervals): {', '.join(small)}."
    return text + " " + reliable_note(name, only_reliable)


def parse_cell(name: str, rating_set: str, family: str, cell: str, only_reliable: bool = False) -> tuple[str, str]:
    """A clicked (or typed) cell: ``slice | metric``, both checked against the heatmap.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set.
    family : str
        The tag family.
    cell : str
        ``"slice | metric"``.
    only_reliable : bool, default False
        On the reliable prompts only.

    Returns
    -------
    slice, metric : str
        The cell.

    Raises
    ------
    InputError
        For text that is not a slice and a metric of the heatmap.
    """
    res = slice_eval(name, rating_set, family, only_reliable)
    s, _, m = str(cell or "").partition(CELL_SEP)
    s, m = s.strip(), m.strip()
    if s not in res.slices or m not in res.metrics:
        raise InputError(f"click a cell of the heatmap (expected 'slice{CELL_SEP}metric' with a slice of "
                         f"{family} and a metric of {name})")
    return s, m


def slice_rows(name: str, rating_set: str, family: str, cell: str, only_reliable: bool = False):
    """The images of one heatmap cell: image, T2I model, human gold, the metric's score, prompt.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    family : str
        The tag family.
    cell : str
        ``"slice | metric"`` (:func:`parse_cell`).
    only_reliable : bool, default False
        On the reliable prompts only.

    Returns
    -------
    markdown : str
        The cell: slice, metric, n (images, prompts), its value with interval and p-value, its note.
    rows : pandas.DataFrame
        One row per image of the slice, in the set's order.

    Raises
    ------
    InputError
        For a cell that is not the heatmap's.
    """
    import pandas as pd

    s, m = parse_cell(name, rating_set, family, cell, only_reliable)
    res = slice_eval(name, rating_set, family, only_reliable)
    g = gc_sets.rated(name)
    si, mi = res.slices.index(s), res.metrics.index(m)
    sl = family_slices(name, family)
    mask = sl.masks[sl.names.index(s)] & kept(name, only_reliable)
    idx = np.flatnonzero(mask)
    ims = g.images.iloc[idx]
    human = g.human(rating_set)[idx]
    score = g.scores[m].to_numpy(float)[idx]
    rows = pd.DataFrame({"image_id": ims["image_id"].to_numpy(), "t2i_model": ims["t2i_model"].to_numpy(),
                         f"human ({rating_set})": np.round(human, 3), m: np.round(score, 4),
                         "prompt": [g.prompt_text(i) for i in ims["image_id"]]})
    lo, hi = (a[si, mi] for a in res.interval("spearman"))
    p = res.pvalue("spearman")[si, mi]
    v = res.point["spearman"][si, mi]
    val = "n/a" if v != v else interval_text(v, lo, hi) + ("" if p != p else f", p = {p:.3g}")
    note = res.notes[si] if res.notes else ""
    md = (f"**{md_text(m)}** on slice **{md_text(s)}**: n = {int(res.n_images[si])} images, "
          f"{int(res.n_prompts[si])} prompts; Spearman {val}" + (f" — _{md_text(note)}_" if note else ""))
    return md, rows


@_per_set
def agreement_frame(name: str, only_reliable: bool = False):
    """Krippendorff's alpha (interval) of every rating set, overall and per T2I model, once per process.

    Parameters
    ----------
    name : str
        The rated set's name.
    only_reliable : bool, default False
        On the reliable prompts' images only.

    Returns
    -------
    pandas.DataFrame
        :class:`ts2viz.metaeval.agreement.Agreement`'s frame (:data:`AGREEMENT_BOOTSTRAP` resamples).
    """
    from ...metaeval.agreement import agreement

    g = gc_sets.rated(gc_sets.check_gold(name))
    if only_reliable:
        g = g.subset(kept(name, True))
    return agreement(g, levels=["interval"], by=["t2i-model"], tags=tags(name), bootstrap=AGREEMENT_BOOTSTRAP).frame


def agreement_table(name: str, only_reliable: bool = False):
    """The agreement view: alpha [95 % interval] per rating set (columns) and group (rows).

    Parameters
    ----------
    name : str
        The rated set's name.
    only_reliable : bool, default False
        On the reliable prompts' images only.

    Returns
    -------
    pandas.DataFrame
        ``group`` (``all``, then each T2I model), ``n images`` and one column per rating set; a group
        without a value shows its note.
    """
    import pandas as pd

    f = agreement_frame(name, only_reliable)
    out = {}
    for (grp, n), sub in f.groupby(["group", "n_images"], sort=False):
        row = out.setdefault(grp, {"group": grp, "n images": int(n)})
        row["n images"] = max(row["n images"], int(n))
        for r in sub.itertuples():
            row[r.rating_set] = (interval_text(r.alpha, r.alpha_lo, r.alpha_hi) + (f" ({r.note})" if r.note else "")
                                 if r.alpha == r.alpha else f"– ({r.note})")
    return pd.DataFrame(list(out.values()))


def _triage_frame(g, idx, rating_set: str):
    import pandas as pd

    ims = g.images.iloc[idx]
    return pd.DataFrame({"image_id": ims["image_id"].to_numpy(), "t2i_model": ims["t2i_model"].to_numpy(),
                         f"human ({rating_set})": np.round(g.human(rating_set)[idx], 3)})


def triage_metric(name: str, rating_set: str, metric: str, only_reliable: bool = False):
    """The images where a metric and the raters disagree most: largest rank gap.

    Ranks are average ranks scaled to [0, 1] over the images kept (the gap ``|rank(metric) - rank(human)|``
    is 1 when the metric puts last what the raters put first).

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    metric : str
        A shared metric of the set.
    only_reliable : bool, default False
        On the reliable prompts' images only.

    Returns
    -------
    pandas.DataFrame
        :data:`TRIAGE_ROWS` rows, largest gap first: image, T2I model, human gold, score, ranks, gap, prompt.

    Raises
    ------
    InputError
        For an unknown set, rating set or metric.
    """
    import pandas as pd

    g = _rated(name, rating_set)
    if metric not in g.metrics:
        raise InputError(f"rated set {name!r} has no shared metric {metric!r}")
    idx = np.flatnonzero(kept(name, only_reliable))
    h = pd.Series(g.human(rating_set)[idx])
    x = pd.Series(g.scores[metric].to_numpy(float)[idx])
    ok = (h.notna() & x.notna()).to_numpy()
    idx, h, x = idx[ok], h[ok].reset_index(drop=True), x[ok].reset_index(drop=True)
    n = max(len(idx) - 1, 1)
    rh, rx = (h.rank() - 1) / n, (x.rank() - 1) / n
    gap = (rx - rh).abs().to_numpy()
    top = np.argsort(-gap, kind="stable")[:TRIAGE_ROWS]
    out = _triage_frame(g, idx[top], rating_set)
    out[metric] = np.round(x.to_numpy()[top], 4)
    out["rank human"], out["rank metric"] = np.round(rh.to_numpy()[top], 3), np.round(rx.to_numpy()[top], 3)
    out["gap"] = np.round(gap[top], 3)
    out["prompt"] = [g.prompt_text(i) for i in out["image_id"]]
    return out


def triage_raters(name: str, rating_set: str, only_reliable: bool = False):
    """The images where the raters disagree most among themselves: largest variance of their ratings.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set.
    only_reliable : bool, default False
        On the reliable prompts' images only.

    Returns
    -------
    pandas.DataFrame
        :data:`TRIAGE_ROWS` rows, largest variance (ddof 0) first: image, T2I model, human gold, ratings,
        variance, prompt; empty for a set rated once per image.

    Raises
    ------
    InputError
        For an unknown set or rating set.
    """
    from ...metaeval.reliable import image_disagreement

    g = _rated(name, rating_set)
    d = image_disagreement(g, rating_set)
    idx = np.flatnonzero(kept(name, only_reliable) & ~np.isnan(d))
    top = idx[np.argsort(-d[idx], kind="stable")[:TRIAGE_ROWS]]
    out = _triage_frame(g, top, rating_set)
    out["ratings"] = g.ratings_per_image(rating_set)[top]
    out["variance"] = np.round(d[top], 3)
    out["prompt"] = [g.prompt_text(i) for i in out["image_id"]]
    return out


def triage_detail(name: str, table, row: int | None):
    """The details of the image of a clicked triage row (:func:`ts2viz.ui.callbacks.humaneval.image.image_detail`).

    Parameters
    ----------
    name : str
        The rated set's name.
    table : pandas.DataFrame or None
        The triage table as the page holds it (its ``image_id`` column is read; the id is checked
        against the set).
    row : int or None
        The clicked row.

    Returns
    -------
    markdown : str
        The prompt, T2I model and every rater's rating.
    scores : pandas.DataFrame
        Each metric's score.
    image_path : str or None
        The image file inside the operator's folder, if any.

    Raises
    ------
    InputError
        For no row, or an image the set does not have.
    """
    if table is None or row is None or "image_id" not in getattr(table, "columns", ()) or not 0 <= int(row) < len(table):
        raise InputError("click a row of a triage list")
    md, scores, _, path = gc_image.image_detail(gc_sets.check_gold(name), str(table["image_id"].iloc[int(row)]))
    return md, scores, path
