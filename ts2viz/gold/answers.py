"""Per-image QA metric scores computed from released per-question VQA answers.

The DSG release (j-min/DSG ``vqa_answers_release``) holds every answer of three VQA models
(mPLUG-large, InstructBLIP, PaLI-17B) to three question sets (DSG, TIFA, VQ²A) for each TIFA160
image. Scores here come from those answers through the library's own accumulation code
(:mod:`ts2viz.qa.accumulation`, the code the DSG metric uses), so a QA metric's row is computed,
not copied:

``dsg:VQA``            DSG questions, accumulation ``direct`` (DSG's ``calc_vqa_score``)
``dsg-transitive:VQA`` DSG questions, accumulation ``transitive`` (DSG's README; TS2's release files)
``dsg-nodep:VQA``      DSG questions, parents ignored (``mean``; "DSG without dependency")
``vq2a:VQA``           VQ²A questions (expected answer yes), fraction answered yes

A question is met when its answer is "yes" under the yes rule (``exact``, DSG's code, by default).
An image with no released answer for a question set scores 0 by default, as DSG's scoring code does
(``missing="zero"``; ``missing="nan"`` leaves it out instead). A parent list with a non-integer id
(``1, outside`` in one prompt) leaves that image's questions ungated, as DSG's parser does
(``malformed_parents="no_gating"``; ``"skip_part"`` drops the bad id only). The TIFA question set is not scored:
its multiple-choice questions need TIFA v1.0's answer key, which is in neither release.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..qa.accumulation import DEFAULT_ACCUMULATION, canonical_accumulation, counted_by_edges
from ..qa.mapping import DSG_YES_RULE, check_yes_rule, is_yes

#: metric prefix -> (question set, accumulation)
QA_METRICS: dict[str, tuple[str, str]] = {
    "dsg": ("dsg", "direct"),
    "dsg-transitive": ("dsg", "transitive"),
    "dsg-nodep": ("dsg", "mean"),
    "vq2a": ("vq2a", "mean"),
}
MISSING = ("zero", "nan")
MALFORMED = ("no_gating", "skip_part")


@dataclass(frozen=True)
class AnswerScoring:
    """Everything that changes a score computed from released answers.

    Parameters
    ----------
    yes_rule : {'exact', 'chat', 'contains'}, default 'exact'
        ``exact`` (DSG's InstructBLIP path), ``chat`` (DSG's chat-model path: lower-cased, punctuation
        stripped) or ``contains`` (TS2's code); see :func:`ts2viz.qa.mapping.is_yes`.
    missing : {'zero', 'nan'}, default 'zero'
        ``zero`` (DSG's code: an image without answers scores 0) or ``nan`` (left out).
    malformed_parents : {'no_gating', 'skip_part'}, default 'no_gating'
        ``no_gating`` (DSG's code) or ``skip_part``; see :func:`question_scores`.

    Raises
    ------
    InputError
        If a setting is not one of its allowed values.
    """

    yes_rule: str = DSG_YES_RULE
    missing: str = "zero"
    malformed_parents: str = "no_gating"

    def __post_init__(self) -> None:
        """Check every setting (see the class's Raises)."""
        check_yes_rule(self.yes_rule)
        if self.missing not in MISSING:
            raise InputError(f"missing= must be one of {', '.join(MISSING)}, not {self.missing!r}")
        if self.malformed_parents not in MALFORMED:
            raise InputError(f"malformed_parents= must be one of {', '.join(MALFORMED)}, not {self.malformed_parents!r}")


def _parse_parents(text: str) -> list[int] | None:
    """Parent ids of ``1,2`` (``0`` = none); None when a part is not an integer.

    One TIFA160 prompt, coco_100240, has a dependency ``1, outside``.
    """
    out = []
    for part in str(text).replace("-", ",").split(","):
        part = part.strip()
        if not part.isdigit():
            if part:
                return None
            continue
        if part != "0":
            out.append(int(part))
    return out


def question_scores(answers, accumulation: str = DEFAULT_ACCUMULATION, *, yes_rule: str = DSG_YES_RULE,
                    malformed: str = "no_gating") -> np.ndarray:
    """Whether each row of an answers table counts toward its image's score.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``vqa_model, question_set, image_id, question_id, parents, answer``; parent links join
        questions of the same (vqa_model, question_set, image_id).
    accumulation : str, default DEFAULT_ACCUMULATION
        The accumulation rule (:mod:`ts2viz.qa.accumulation`: ``direct``, ``transitive``, ``mean``, ...).
    yes_rule : str, default DSG_YES_RULE
        How an answer is read as yes (:func:`ts2viz.qa.mapping.is_yes`).
    malformed : {'no_gating', 'skip_part'}, default 'no_gating'
        What a parent list with a non-integer id does: ``no_gating`` (DSG's code: that image's questions
        are not gated at all) or ``skip_part`` (only the bad part is ignored).

    Returns
    -------
    numpy.ndarray
        Bool array, one entry per row of ``answers``.

    Raises
    ------
    InputError
        If the accumulation or the yes rule is unknown.

    Notes
    -----
    Vectorised over the whole table (one call of the accumulation rule on all edges). A parent id the
    image does not have is ignored.
    """
    import pandas as pd

    correct = is_yes(answers["answer"].tolist(), yes_rule)
    rule = canonical_accumulation(accumulation)
    if rule == "mean":
        return correct
    group = pd.factorize(pd.MultiIndex.from_frame(answers[["vqa_model", "question_set", "image_id"]]))[0]
    qid = answers["question_id"].to_numpy(dtype=np.int64)
    span = int(qid.max()) + 1 if len(qid) else 1
    parsed = [_parse_parents(p) for p in answers["parents"].tolist()]
    if malformed == "no_gating":
        # DSG's data_utils parses an item's dependencies in one try block: one bad id leaves the
        # item with no dependencies at all, so none of its questions is gated
        bad_groups = {group[i] for i, ps in enumerate(parsed) if ps is None}
        parsed = [[] if group[i] in bad_groups else ps for i, ps in enumerate(parsed)]
    else:
        parsed = [[] if ps is None else ps for ps in parsed]     # the bad part alone is dropped
    span = max([span] + [p + 1 for ps in parsed for p in ps])
    key = group.astype(np.int64) * span + qid
    order = np.argsort(key, kind="stable")
    child = np.fromiter((i for i, ps in enumerate(parsed) for _ in ps), dtype=np.int64)
    pkey = np.fromiter((group[i] * span + p for i, ps in enumerate(parsed) for p in ps), dtype=np.int64)
    if not len(child):
        return correct
    found = np.minimum(np.searchsorted(key[order], pkey), len(order) - 1)
    exists = key[order][found] == pkey          # a parent id the image does not have is ignored
    return counted_by_edges(correct, child[exists], order[found[exists]], rule)


def answer_scores(rated, *, scoring: AnswerScoring = AnswerScoring(), metrics=None):
    """The QA metrics of :data:`QA_METRICS` for every VQA model of ``rated.qa_answers``.

    Parameters
    ----------
    rated : RatedSet
        A rated set with released answers.
    scoring : AnswerScoring, default AnswerScoring()
        Yes rule, missing answers, malformed parent lists.
    metrics : sequence of str, optional
        Restrict the prefixes (default: all of :data:`QA_METRICS`).

    Returns
    -------
    pandas.DataFrame
        Aligned with ``rated.images``, columns ``PREFIX:VQA`` (e.g. ``dsg:PaLI-17B``); empty when the
        set has no released answers.

    Raises
    ------
    InputError
        If a prefix is unknown.

    Notes
    -----
    NaN policy: an image without answers scores 0 (``missing="zero"``, DSG's code) or NaN
    (``missing="nan"``).

    Examples
    --------
    >>> from ts2viz.gold import AnswerScoring, answer_scores, load_gold
    >>> gold = load_gold("tifa160", answers=False)
    >>> dsg = answer_scores(gold, metrics=["dsg"])
    >>> dsg.columns.tolist()
    ['dsg:mPLUG-large', 'dsg:InstructBLIP', 'dsg:PaLI-17B']
    >>> round(float(dsg["dsg:PaLI-17B"].mean()), 4)
    0.8338
    >>> int(answer_scores(gold, metrics=["dsg"], scoring=AnswerScoring(missing="nan"))["dsg:PaLI-17B"].isna().sum())
    5
    """
    import pandas as pd

    qa = rated.qa_answers
    if qa is None or not len(qa):
        return pd.DataFrame(index=range(len(rated.images)))
    prefixes = list(QA_METRICS) if metrics is None else list(metrics)
    for p in prefixes:
        if p not in QA_METRICS:
            raise InputError(f"unknown answer-based metric {p!r}: expected one of {', '.join(QA_METRICS)}")
    ids = pd.Index(rated.image_ids)
    cols = {}
    for p in prefixes:
        qset, acc = QA_METRICS[p]
        sub = qa[qa["question_set"] == qset]
        if not len(sub):
            continue
        counted = question_scores(sub, acc, yes_rule=scoring.yes_rule, malformed=scoring.malformed_parents)
        frame = pd.DataFrame({"vqa_model": sub["vqa_model"].to_numpy(), "image_id": sub["image_id"].to_numpy(),
                              "counted": counted.astype(np.float64)})
        means = frame.groupby(["vqa_model", "image_id"], sort=False)["counted"].mean()
        for vqa in dict.fromkeys(sub["vqa_model"]):
            col = means.loc[vqa].reindex(ids).to_numpy(dtype=np.float64)
            if scoring.missing == "zero":
                col = np.where(np.isnan(col), 0.0, col)
            cols[f"{p}:{vqa}"] = col
    return pd.DataFrame(cols)


def answer_metric(name: str) -> tuple[str, str, str] | None:
    """Parse the name of an answer-based QA metric.

    Parameters
    ----------
    name : str
        A metric name such as ``dsg:PaLI-17B``.

    Returns
    -------
    tuple of str or None
        ``(prefix, question set, VQA model)``, e.g. ``("dsg", "dsg", "PaLI-17B")``; None for any other
        name.

    Examples
    --------
    >>> from ts2viz.gold.answers import answer_metric
    >>> answer_metric("dsg-transitive:PaLI-17B"), answer_metric("clipscore")
    (('dsg-transitive', 'dsg', 'PaLI-17B'), None)
    """
    prefix, sep, vqa = str(name).partition(":")
    if not sep or prefix not in QA_METRICS or not vqa:
        return None
    return prefix, QA_METRICS[prefix][0], vqa


def answer_records(rated, metric: str, image_id: str, *, scoring: AnswerScoring = AnswerScoring()):
    """One image's released answers behind an answer-based QA metric, as QA records.

    The records (:data:`ts2viz.qa.records.RECORD_COLUMNS`) are what the question table of the Questions
    tab (:func:`ts2viz.qa.views.image_question_table`) shows: one row per question, choices yes/no,
    expected yes, the raw answer, ``mapped`` by ``scoring.yes_rule``, parents as DSG's data give them (a
    malformed list treated as ``scoring.malformed_parents`` says, as :func:`question_scores` does).

    Parameters
    ----------
    rated : RatedSet
        A rated set with released answers.
    metric : str
        An answer-based metric name (``dsg:PaLI-17B``).
    image_id : str
        The image.
    scoring : AnswerScoring, default AnswerScoring()
        Yes rule and malformed parent lists.

    Returns
    -------
    records : pandas.DataFrame
        The records; empty when the image has no answers.
    kind : str
        ``dsg`` (parents gate) or ``tifa`` (VQ²A: every question counts on its own).
    accumulation : str
        The accumulation the metric uses, for :func:`ts2viz.qa.records.with_counted`.

    Raises
    ------
    InputError
        For a name that is not an answer-based metric.
    """
    import pandas as pd

    from ..qa.questions import DEPENDENT_KIND, INDEPENDENT_KIND
    from ..qa.records import RECORD_COLUMNS

    parsed_name = answer_metric(metric)
    if parsed_name is None:
        raise InputError(f"{metric!r} is not a metric computed from released answers "
                         f"(expected PREFIX:VQA with PREFIX one of {', '.join(QA_METRICS)})")
    prefix, qset, vqa = parsed_name
    kind = DEPENDENT_KIND if qset == DEPENDENT_KIND else INDEPENDENT_KIND
    accumulation = QA_METRICS[prefix][1]
    qa = rated.qa_answers
    if qa is None or not len(qa):
        return pd.DataFrame(columns=list(RECORD_COLUMNS)), kind, accumulation
    sub = qa[(qa["question_set"] == qset) & (qa["vqa_model"] == vqa) & (qa["image_id"] == str(image_id))]
    sub = sub.sort_values("question_id", kind="stable")
    parents = []
    for text in sub["parents"].tolist():
        ps = _parse_parents(text)
        if ps is None and scoring.malformed_parents == "skip_part":
            ps = [int(p) for p in str(text).replace("-", ",").split(",") if p.strip().isdigit() and p.strip() != "0"]
        parents.append(ps)
    if kind != DEPENDENT_KIND or (scoring.malformed_parents == "no_gating" and any(ps is None for ps in parents)):
        parents = [[] for _ in parents]       # DSG's parser: one bad id leaves the image's questions ungated
    answers = ["" if not isinstance(a, str) else a for a in sub["answer"].tolist()]
    yes = is_yes(sub["answer"].tolist(), scoring.yes_rule)
    recs = pd.DataFrame({
        "metric": metric, "kind": kind, "file_name": str(image_id),
        "question_id": sub["question_id"].astype(int).to_numpy(), "question": sub["question"].astype(str).to_numpy(),
        "choices": "yes|no", "expected": "yes", "parents": ["-".join(map(str, ps)) for ps in parents],
        "answer": answers, "mapped": ["yes" if y else "no" for y in yes], "correct": yes,
    }, columns=list(RECORD_COLUMNS))
    return recs, kind, accumulation
