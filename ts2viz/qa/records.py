"""Per-question records of question-answering metrics (TIFA, DSG): what was asked, answered and counted.

A *QA records* table is a pandas DataFrame with one row per (metric, image, question) and the columns
:data:`RECORD_COLUMNS`:

``metric``       the metric's name (a scores column: ``TIFA-BLIP1``, or a live metric's SPEC)
``kind``         ``tifa`` or ``dsg``
``file_name``    the image (a dataset ``file_name``)
``question_id``  the question's id within its prompt's question set
``question``     the question text
``choices``      the answer choices, ``|``-separated (the TS2 question-file format)
``expected``     the answer an image faithful to the prompt gives
``parents``      DSG parent question ids, ``-``-separated (``0-2``); empty for a root and for TIFA
``answer``       the VQA model's free-form answer
``mapped``       the choice the answer was mapped to
``correct``      whether ``mapped`` is the expected answer

Two sources give the same table:

* :func:`bundled_qa_records`: the TS2 release's answers for six VQA models (``data/ts2/qa_answers.parquet``,
  built by ``data/ts2/make_qa_bundle.py``): the ``TIFA-*`` and ``DSG-*`` columns of the bundled scores
  except GPT4V (the release has no per-question data for it). ``mapped`` and ``correct`` are the
  release's own (Sentence-BERT mapping; yes/no questions by whether the answer contains "yes").
* :func:`records_from_details`: the per-question details a live TIFA/DSG metric returns
  (``score_with_details``, or the score cache through ``ts2viz.engine.score_images(...,
  return_details=True)``).

:func:`with_counted` adds whether each question counts under a DSG accumulation and
:func:`image_scores` turns records into per-image scores.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..errors import InputError
from .accumulation import canonical_accumulation, counted_by_edges
from .questions import DEPENDENT_KIND, QUESTION_KINDS, parse_parents
from ..paths import bundled_data_dir

#: the columns of a QA records table (module docstring)
RECORD_COLUMNS = ("metric", "kind", "file_name", "question_id", "question", "choices", "expected", "parents",
                  "answer", "mapped", "correct")

#: the accumulation of the bundled DSG columns by default: the published web leaderboard's DSG rows
#: are reproduced by the plain mean of the released per-question correctness (see README)
BUNDLED_DSG_ACCUMULATION = "mean"

#: bundled metric columns that have per-question records, in the bundled scores' column order
BUNDLED_QA_METRICS: tuple[str, ...] = tuple(
    f"{kind}-{model}" for kind in ("TIFA", "DSG")
    for model in ("BLIP1", "InstructBLIP", "LLaVA-1.5", "LLaVA-1.5-alt", "mPLUG", "Fuyu"))


def bundled_qa_path():
    """The bundled per-question records of the TS2 release.

    Returns
    -------
    pathlib.Path
        ``ts2/qa_answers.parquet`` under the bundled data folder (built by ``data/ts2/make_qa_bundle.py``).
    """
    return bundled_data_dir() / "ts2" / "qa_answers.parquet"


def bundled_qa_records(metric: str | Sequence[str] | None = None):
    """The TS2 release's per-question records (see the module docstring for the columns).

    ``mapped`` and ``correct`` are the release's own: its Sentence-BERT mapping, yes/no questions
    answered "yes" when the answer contains "yes".

    Parameters
    ----------
    metric : str or sequence of str, optional
        A bundled metric column (``TIFA-BLIP1``, ``DSG-LLaVA-1.5-alt``, ...; one of
        :data:`BUNDLED_QA_METRICS`), several of them, or None for all twelve.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric, kind, seg_id`` and the rest of :data:`RECORD_COLUMNS`; rows in the release's
        order (per metric, image by image, questions by id). String columns are pandas categoricals.

    Raises
    ------
    InputError
        For a metric without bundled per-question records (e.g. ``DSG-GPT4V``, ``CLIPScore``).

    Examples
    --------
    >>> from ts2viz.qa.records import bundled_qa_records
    >>> recs = bundled_qa_records("DSG-BLIP1")
    >>> len(recs), recs["kind"].unique().tolist()
    (17114, ['dsg'])
    >>> one = recs[recs["file_name"] == "images/065-06.jpg"]
    >>> one["parents"].tolist(), one["correct"].tolist()
    (['', '0', '0', '0'], [False, False, False, True])
    """
    import pyarrow.parquet as pq

    names = list(BUNDLED_QA_METRICS) if metric is None else [metric] if isinstance(metric, str) else list(metric)
    for m in names:
        if m not in BUNDLED_QA_METRICS:
            raise InputError(f"no bundled per-question records for metric {m!r} "
                             f"(have: {', '.join(BUNDLED_QA_METRICS)})")
    table = pq.read_table(bundled_qa_path(), filters=[("metric", "in", names)])
    df = table.to_pandas().rename(columns={"mc_answer": "mapped"})
    df["kind"] = df["metric"].map(lambda m: m.split("-", 1)[0].lower()).astype("category")
    df["metric"] = df["metric"].cat.remove_unused_categories()
    return df[["metric", "kind", "seg_id", *RECORD_COLUMNS[2:]]]


def records_from_details(metric: str, kind: str, file_names: Sequence[str], details: Sequence):
    """QA records from a live TIFA/DSG metric's per-image details.

    Parameters
    ----------
    metric : str
        The name the records get (e.g. the metric's SPEC).
    kind : {'tifa', 'dsg'}
        The metric's kind.
    file_names : sequence of str
        One name per image (a dataset ``file_name`` or a label for a loose image).
    details : sequence
        One entry per image: the list of per-question dicts the metric returns (keys ``question_id,
        question, choices, expected, answer, mapped, correct`` and optionally ``parents``), or None (or
        an empty list) for an image that was not scored: it gets no rows.

    Returns
    -------
    pandas.DataFrame
        :data:`RECORD_COLUMNS`, images in input order, each image's questions in the details' order.

    Raises
    ------
    InputError
        If ``kind`` is not ``tifa`` or ``dsg``, if ``file_names`` and ``details`` differ in length, or
        if a per-question record lacks a key or holds a value of the wrong type (the message names the
        image).

    Examples
    --------
    >>> from ts2viz.qa.records import records_from_details
    >>> q = dict(choices=["yes", "no"], expected="yes")
    >>> detail = [dict(q, question_id=0, question="Is there a cat?", answer="no", mapped="no", correct=False),
    ...           dict(q, question_id=1, question="Is the cat black?", parents=[0], answer="yes", mapped="yes",
    ...                correct=True)]
    >>> recs = records_from_details("dsg:demo", "dsg", ["a.png"], [detail])
    >>> recs[["file_name", "question_id", "parents", "mapped", "correct"]]
      file_name  question_id parents mapped  correct
    0     a.png            0            no    False
    1     a.png            1       0   yes     True
    """
    import pandas as pd

    if kind not in QUESTION_KINDS:
        raise InputError(f"kind must be {' or '.join(map(repr, QUESTION_KINDS))}, not {kind!r}")
    if len(file_names) != len(details):
        raise InputError(f"{len(file_names)} file names but {len(details)} detail lists")
    rows = []
    for fn, recs in zip(file_names, details):
        for r in recs or ():
            try:
                rows.append((metric, kind, str(fn), int(r["question_id"]), str(r["question"]),
                             "|".join(map(str, r["choices"])), str(r["expected"]),
                             "-".join(str(int(p)) for p in r.get("parents") or ()), str(r["answer"]),
                             str(r["mapped"]), bool(r["correct"])))
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(f"{metric}: malformed per-question record for {fn} ({type(e).__name__}: {e})") from None
    return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))


def with_counted(records, accumulation: str):
    """QA records plus a ``counted`` column: whether each question counts toward its image's score.

    For TIFA rows ``counted == correct``. For DSG rows it follows ``accumulation``: ``gated`` =
    ``transitive`` (a question counts when it is correct and all its parents count), ``direct`` (when it
    and its direct parents are correct) or ``mean`` (``counted == correct``); see
    :mod:`ts2viz.qa.accumulation`. Parents are looked up among the questions of the same metric and
    image; a parent id the image does not have is ignored. Vectorised over the whole table.

    Parameters
    ----------
    records : pandas.DataFrame
        QA records (:data:`RECORD_COLUMNS`; at least ``metric, kind, file_name, question_id, parents,
        correct``).
    accumulation : str
        A DSG accumulation or alias (:data:`ts2viz.qa.accumulation.ACCUMULATIONS`, ``gated``).

    Returns
    -------
    pandas.DataFrame
        A copy of ``records`` with the bool column ``counted``; ``records`` is not changed.

    Raises
    ------
    InputError
        If ``accumulation`` is unknown, or if some image's parent links form a cycle (``transitive``).

    Examples
    --------
    >>> from ts2viz.qa.records import records_from_details, with_counted
    >>> q = dict(choices=["yes", "no"], expected="yes")
    >>> detail = [dict(q, question_id=0, question="Is there a cat?", answer="no", mapped="no", correct=False),
    ...           dict(q, question_id=1, question="Is the cat black?", parents=[0], answer="yes", mapped="yes",
    ...                correct=True)]
    >>> recs = records_from_details("dsg:demo", "dsg", ["a.png"], [detail])
    >>> with_counted(recs, "gated")["counted"].tolist(), with_counted(recs, "mean")["counted"].tolist()
    ([False, False], [False, True])
    """
    rule = canonical_accumulation(accumulation)
    out = records.copy()
    correct = out["correct"].to_numpy(dtype=bool)
    counted = correct.copy()
    dsg = (out["kind"] == DEPENDENT_KIND).to_numpy(dtype=bool)
    if rule != "mean" and dsg.any():
        group = _image_groups(out)
        parents_text = out["parents"].to_numpy()
        qids = out["question_id"].to_numpy()
        parsed = {t: parse_parents(t) for t in set(parents_text[dsg])}
        sub = np.flatnonzero(dsg)
        # Positions of each DSG question's parents (same metric and image), found by a sorted search
        # over (image, question id) keys; then the one gating rule runs over the whole table at once.
        # span exceeds every question and parent id, so keys of different images never collide
        span = max([int(qids[sub].max())] + [p for ps in parsed.values() for p in ps]) + 1
        key = group[sub].astype(np.int64) * span + qids[sub]
        order = np.argsort(key, kind="stable")
        child, parent_key = [], []
        for pos, (g, t) in enumerate(zip(group[sub].tolist(), parents_text[sub])):
            for p in parsed[t]:
                child.append(pos)
                parent_key.append(g * span + p)
        child = np.asarray(child, dtype=np.int64)
        parent_key = np.asarray(parent_key, dtype=np.int64)
        found = np.searchsorted(key[order], parent_key)
        found = np.minimum(found, len(order) - 1)
        exists = key[order][found] == parent_key  # a parent id outside the image's set is ignored
        counted[sub] = counted_by_edges(correct[sub], child[exists], order[found[exists]], rule)
    out["counted"] = counted
    return out


def _image_groups(records) -> np.ndarray:
    """One integer per (metric, file_name) pair of ``records``."""
    import pandas as pd

    m = pd.factorize(records["metric"])[0].astype(np.int64)
    f, names = pd.factorize(records["file_name"])
    return m * max(1, len(names)) + f


def image_scores(records, accumulation: str):
    """Per-image scores from QA records: the fraction of an image's questions that count.

    Parameters
    ----------
    records : pandas.DataFrame
        QA records of one or several metrics (:data:`RECORD_COLUMNS`).
    accumulation : str
        The accumulation of the DSG rows (:func:`with_counted`); TIFA columns are the fraction correct
        whatever it says.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``file_name`` (in order of first appearance), one float column per metric (in order
        of first appearance); NaN where a metric has no records for an image.

    Raises
    ------
    InputError
        If ``accumulation`` is unknown, or if some image's parent links form a cycle.

    Examples
    --------
    >>> from ts2viz.qa.records import image_scores, records_from_details
    >>> q = dict(choices=["yes", "no"], expected="yes")
    >>> detail = [dict(q, question_id=0, question="Is there a cat?", answer="no", mapped="no", correct=False),
    ...           dict(q, question_id=1, question="Is the cat black?", parents=[0], answer="yes", mapped="yes",
    ...                correct=True)]
    >>> recs = records_from_details("dsg:demo", "dsg", ["a.png"], [detail])
    >>> image_scores(recs, "direct")
               dsg:demo
    file_name
    a.png           0.0
    >>> image_scores(recs, "mean")
               dsg:demo
    file_name
    a.png           0.5
    """
    import pandas as pd

    counted = with_counted(records, accumulation)["counted"].to_numpy(dtype=float)
    m_codes, metrics = pd.factorize(records["metric"])
    f_codes, files = pd.factorize(records["file_name"])
    n_f = max(1, len(files))
    key = m_codes.astype(np.int64) * n_f + f_codes
    size = len(metrics) * n_f
    total = np.bincount(key, minlength=size)
    hits = np.bincount(key, weights=counted, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(total > 0, hits / np.maximum(total, 1), np.nan).reshape(len(metrics), n_f).T
    return pd.DataFrame(values, index=pd.Index([str(f) for f in files], name="file_name"),
                        columns=[str(m) for m in metrics])


def bundled_qa_scores(accumulation: str = BUNDLED_DSG_ACCUMULATION, metrics: Iterable[str] | None = None):
    """Per-image scores of bundled QA metrics, recomputed from the TS2 release's per-question records.

    Parameters
    ----------
    accumulation : str, default BUNDLED_DSG_ACCUMULATION
        The accumulation of the DSG columns (default ``mean``, which reproduces the published web
        leaderboard's DSG rows; ``gated``/``transitive`` is the rule of the release's per-image DSG files).
    metrics : iterable of str, optional
        Bundled metric columns (:data:`BUNDLED_QA_METRICS`); None for all twelve.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``file_name`` (the TS2 metadata's images), one column per metric.

    Raises
    ------
    InputError
        For a metric without bundled per-question records, or an unknown accumulation.

    Examples
    --------
    >>> from ts2viz.qa.records import bundled_qa_scores
    >>> scores = bundled_qa_scores(metrics=["TIFA-BLIP1", "DSG-BLIP1"])
    >>> scores.loc["images/065-06.jpg"].round(3).tolist()
    [0.429, 0.25]
    >>> float(bundled_qa_scores("gated", metrics=["DSG-BLIP1"]).loc["images/065-06.jpg", "DSG-BLIP1"])
    0.0
    """
    return image_scores(bundled_qa_records(None if metrics is None else list(metrics)), accumulation)
