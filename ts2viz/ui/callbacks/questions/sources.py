"""The question metrics a session can read (bundled TIFA/DSG columns, live-scored metrics) and their records."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from ....errors import InputError
from ....qa.details import DEPENDENT, DETAIL_KINDS, detail_records
from ....qa.records import BUNDLED_DSG_ACCUMULATION, BUNDLED_QA_METRICS, bundled_qa_records
from ....engine.details import cached_details
from ....metrics.registry import details_kind
from ....scores.bundled import published_family
from ...state.app_state import AppView
from ..common import get_seg


@dataclass(frozen=True)
class QASource:
    """Where a question metric's per-question details come from.

    Parameters
    ----------
    metric : str
        The metric's name.
    family : str
        The metric's family (``tifa``, ``dsg``, ``gecko``, ``fineeval``, a judge's).
    details : str
        The kind of its details (:data:`ts2viz.qa.details.DETAIL_KINDS`, the family's
        :func:`~ts2viz.metrics.registry.details_kind`): what the views branch on.
    bundled : bool
        The TS2 release's records (else: live details in the score cache).
    config_hash : str or None
        Live metrics: the cache key of their details.
    accumulation : str or None
        DSG: what decides whether a question counts.
    normalized : bool, default False
        TIFA/DSG with ``score=normalized``.
    """

    metric: str
    family: str                  # tifa, dsg, gecko, fineeval, a judge's
    details: str                 # the details kind (ts2viz.qa.details.DETAIL_KINDS)
    bundled: bool                # the TS2 release's records (else: live details in the score cache)
    config_hash: str | None      # live metrics: the cache key of their details
    accumulation: str | None     # DSG: what decides whether a question counts
    normalized: bool = False     # TIFA/DSG with score=normalized


def qa_source(app: AppView, metric) -> QASource | None:
    """The source of a metric's per-question details.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str or None
        A metric.

    Returns
    -------
    QASource or None
        ``None`` when it has none (not a question metric, not loaded, or a live metric scored elsewhere).
    """
    if not metric or metric not in app.metrics:
        return None
    metric = str(metric)
    if (metric in BUNDLED_QA_METRICS and not app.workspace.has(metric) and app.kind_of(metric) == "published"
            and app.dataset.is_ts2):
        family = published_family(metric)
        kind = details_kind(family)
        acc = None
        if kind == DEPENDENT:
            acc = app.app.variant_name if app.app.variant_name in ("mean", "gated") else BUNDLED_DSG_ACCUMULATION
        return QASource(metric, family, kind, True, None, acc)
    info = app.workspace.metric_info.get(metric) if app.workspace.has(metric) else None
    kind = details_kind(info.get("family")) if info else ""
    if not info or not info.get("has_details") or kind not in DETAIL_KINDS:
        return None
    return QASource(metric, info["family"], kind, False, info["config_hash"], info.get("accumulation"),
                    info.get("score") == "normalized")


def qa_metrics(app: AppView, metrics: Sequence) -> list[str]:
    """Those of some metrics that are question metrics, once each.

    Parameters
    ----------
    app : AppView
        The session's view.
    metrics : sequence
        Metric names (e.g. the explorer's two; empty entries skipped).

    Returns
    -------
    list of str
        The question metrics among them.
    """
    return [m for m in dict.fromkeys(m for m in metrics if m) if qa_source(app, m) is not None]


def qa_metric_choice(app: AppView, preferred: Sequence = (), current=None, *, follow: bool = False):
    """The Questions tab's metric picker: its choices and value.

    Called when the tab is opened and when the explorer's metrics change.

    Parameters
    ----------
    app : AppView
        The session's view.
    preferred : sequence, default ()
        The explorer's two metrics: their question metrics come first.
    current : str or None, default None
        The picker's value now.
    follow : bool, default False
        The explorer's metrics were just changed.

    Returns
    -------
    choices : list of str
        Every question metric the session sees, those of ``preferred`` first.
    value : str or None
        The first of ``preferred`` that is a question metric when ``follow`` or when ``current`` is not a
        choice; else ``current``; else the first choice (``None`` when there is none).
    """
    first = qa_metrics(app, preferred)
    choices = first + [m for m in qa_metrics(app, app.metrics) if m not in first]
    if first and (follow or current not in choices):
        return choices, first[0]
    if current in choices:
        return choices, current
    return choices, (choices[0] if choices else None)


def substitute_note(app: AppView, preferred: Sequence, metric) -> str:
    """A line for the Questions tab when it shows another metric than the explorer's metric A.

    That happens when metric A has no per-question details (e.g. TIFA-GPT4V: the TS2 release has its
    per-image scores only).

    Parameters
    ----------
    app : AppView
        The session's view.
    preferred : sequence
        The explorer's metrics (the first is metric A).
    metric : str or None
        The metric the tab shows.

    Returns
    -------
    str
        The line (Markdown), or ``""``.
    """
    wanted = next((m for m in preferred if m), None)
    if not wanted or metric is None or wanted == metric or qa_source(app, wanted) is not None:
        return ""
    shown = f"showing **{short_name(str(metric))}** instead" if metric else "nothing to show"
    return f"_**{short_name(str(wanted))}** has no per-question details (only its per-image scores are loaded): {shown}._"


def short_name(metric: str, limit: int = 40) -> str:
    """A metric's name short enough for a figure title: a live spec as ``family:model-folder?…``.

    Parameters
    ----------
    metric : str
        The name.
    limit : int, default 40
        The most characters.

    Returns
    -------
    str
        The short name.

    Examples
    --------
    >>> short_name("tifa:/models/blip-vqa-capfilt-large?questions=/data/q.csv")
    'tifa:blip-vqa-capfilt-large?…'
    """
    if len(metric) <= limit or ":" not in metric:
        return metric
    family, rest = metric.split(":", 1)
    model, _, query = rest.partition("?")
    short = f"{family}:{model.rstrip('/').rsplit('/', 1)[-1]}" + ("?…" if query else "")
    return short if len(short) <= limit else short[:limit - 1] + "…"


def source_of(app: AppView, metric) -> QASource:
    """The question source of a metric (:func:`qa_source`), refused for a metric without per-question details.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        The metric.

    Returns
    -------
    QASource
        Where its questions come from.

    Raises
    ------
    InputError
        For a metric whose questions the app cannot read.
    """
    src = qa_source(app, metric)
    if src is None:
        raise InputError(f"{str(metric)[:80]!r} has no per-question details here: choose a bundled TIFA/DSG "
                         "column or a TIFA, DSG, Gecko or T2I-FineEval metric scored live in this session")
    return src


def node_of(seg, node) -> str:
    """A node label of the SEG: ``node`` if the SEG has it, else its first node.

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.
    node : str or None
        The label asked for.

    Returns
    -------
    str
        The label.
    """
    return node if node in seg.labels else seg.labels[0]


def image_of_seg(seg, file_name) -> str:
    """An image of the SEG, checked.

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.
    file_name : str
        The image's file name.

    Returns
    -------
    str
        ``file_name``.

    Raises
    ------
    InputError
        When no node of the SEG holds that image.
    """
    names = {im.file_name for n in seg.nodes for im in n.images}
    if file_name not in names:
        raise InputError(f"SEG {seg.id} has no image {str(file_name)[:80]!r}")
    return str(file_name)


@functools.lru_cache(maxsize=1)
def _bundled():
    """All bundled records once per process, with row positions per (metric, SEG) and per metric."""
    recs = bundled_qa_records()
    by_seg = {(str(m), int(s)): ix for (m, s), ix in recs.groupby(["metric", "seg_id"], observed=True).indices.items()}
    by_metric = {str(m): ix for m, ix in recs.groupby("metric", observed=True).indices.items()}
    return recs, by_seg, by_metric


def _live_details(app: AppView, src: QASource, seg) -> dict:
    """``{file_name: details}`` of a live metric for one SEG's images, from the score cache."""
    files = [im.file_name for n in seg.nodes for im in n.images]
    return app.memo(("qa_details", src.metric, src.config_hash, seg.id), [src.metric],
                    lambda: cached_details(src.config_hash, app.dataset, files, app.cache_root))


def seg_records(app: AppView, metric, seg_id):
    """QA records of a metric for one SEG's images (:data:`ts2viz.qa.details.DETAIL_RECORD_COLUMNS`).

    Cheap: the bundled table is held once per process, live details once per session and SEG.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.

    Returns
    -------
    pandas.DataFrame
        One row per (image, question).

    Raises
    ------
    InputError
        For a metric without per-question details here, or a SEG the dataset lacks.
    """
    src = source_of(app, metric)
    seg = get_seg(app, seg_id)
    if src.bundled:
        recs, by_seg, _ = _bundled()
        ix = by_seg.get((src.metric, seg.id))
        out = recs.iloc[ix if ix is not None else []].reset_index(drop=True)
        return out.assign(score=out["correct"].astype(float))
    got = _live_details(app, src, seg)
    return detail_records(src.metric, src.family, src.details, list(got), list(got.values()))


def all_records(app: AppView, metric):
    """QA records of a metric for every image of the dataset that has them (not kept: the views built from them are).

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.

    Returns
    -------
    pandas.DataFrame
        One row per (image, question).

    Raises
    ------
    InputError
        For a metric without per-question details here.
    """
    src = source_of(app, metric)
    if src.bundled:
        recs, _, by_metric = _bundled()
        out = recs.iloc[by_metric[src.metric]].reset_index(drop=True)
        return out.assign(score=out["correct"].astype(float))
    got = cached_details(src.config_hash, app.dataset, None, app.cache_root)
    return detail_records(src.metric, src.family, src.details, list(got), list(got.values()))


def image_detail(app: AppView, src: QASource, seg, file_name):
    """One image's details in the metric's own shape (bundled: rebuilt from its records), or ``None``.

    Parameters
    ----------
    app : AppView
        The session's view.
    src : QASource
        The metric's question source.
    seg : ts2viz.seg.SEG
        The SEG.
    file_name : str
        The image.

    Returns
    -------
    dict or None
        The details; ``None`` when the image has none.
    """
    if src.bundled:
        recs = seg_records(app, src.metric, seg.id)
        sub = recs[recs["file_name"].astype(str) == file_name]
        if not len(sub):
            return None
        return [{"question_id": int(r.question_id), "question": str(r.question), "choices": str(r.choices).split("|"),
                 "expected": str(r.expected), "parents": [int(p) for p in str(r.parents).split("-") if p],
                 "answer": str(r.answer), "mapped": str(r.mapped), "correct": bool(r.correct)}
                for r in sub.itertuples()]
    return _live_details(app, src, seg).get(file_name)
