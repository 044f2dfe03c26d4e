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

Decisions inside models have their own helpers, built on the same rule: :func:`generation_margins`
(every greedy step and beam-search choice of ``generate`` calls in a block), :func:`assert_wide_detections`
(a detector's threshold, NMS and cap, and T2I-FineEval's crops) and :func:`assert_wide_rounding` (values
compared after rounding). docs/development/tests.md says when a test needs them and lists the tests that
use them.
"""
from __future__ import annotations

from contextlib import contextmanager
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


def assert_wide_rounding(values: Iterable[float] | float, decimals: int = 0, *, rel: float = REL,
                         abs_tol: float = 0.0, context: str = "") -> None:
    """Assert that no value lies within the margin of a rounding boundary at ``decimals`` places.

    For an expectation that compares rounded numbers (a table cell written ``f"{v:.3f}"``, a pixel box
    rounded to whole pixels) computed twice: a value near ``...5`` rounds either way. The margin is
    ``rel`` of the rounding unit ``10**-decimals`` (or ``abs_tol`` if larger).
    """
    v = np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()
    v = v[np.isfinite(v)]
    if not v.size:
        return
    unit = 10.0 ** -decimals
    frac = np.abs((v / unit) % 1.0 - 0.5) * unit        # distance to the nearest rounding boundary
    tol = max(rel * unit, abs_tol)
    gap = float(frac.min())
    if not gap > tol:
        _fail(f"rounding to {decimals} decimals", gap, tol, context)


def assert_wide_choices(mapper, answers: Sequence[str], choices: Sequence[Sequence[str]], *, rel: float = REL,
                        context: str = "") -> None:
    """Assert that a Sentence-BERT mapper (``ts2viz.metrics.backbones.sbert.SBERTMapper``) picks each answer's choice by
    a wide margin: the cosine argmax over its choices, for every answer that is not one of them (TIFA's
    rule sends those to Sentence-BERT; an answer that is a choice is taken as is)."""
    for a, cs in zip(answers, choices):
        cs = list(cs)
        if a in cs or len(cs) < 2:
            continue
        sims = mapper.embed(cs) @ mapper.embed([str(a)])[0]
        assert_wide_argmax(sims, rel=rel, context=f"{context + ': ' if context else ''}{a!r} among {cs}")


# -- decisions inside models: generation and detection ------------------------------------------------------

class _Generation:
    """What :func:`generation_margins` saw: one entry per decision that was too narrow."""

    def __init__(self) -> None:
        self.calls = 0
        self.steps = 0
        self.narrow: list[tuple[float, float, str]] = []   # (gap, tol, where)


def _eos_ids(model, kwargs: dict) -> set[int]:
    eos = kwargs.get("eos_token_id")
    if eos is None:
        cfg = kwargs.get("generation_config") or getattr(model, "generation_config", None)
        eos = getattr(cfg, "eos_token_id", None)
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def _greedy_steps(rec: _Generation, model, kwargs: dict, out, rel: float, abs_tol: float) -> None:
    """Top-1 minus top-2 of the processed scores at every step of every row still generating."""
    import torch

    scores = out.scores or ()
    if not scores:
        return
    new = out.sequences[:, -len(scores):]
    eos = _eos_ids(model, kwargs)
    live = torch.ones(new.shape[0], dtype=torch.bool)
    for t, s in enumerate(scores):
        s = s.detach().double().cpu()
        for b in torch.nonzero(live).flatten().tolist():
            row = s[b]
            finite = row[torch.isfinite(row)]
            top = torch.topk(row, 2)
            if int(top.indices[0]) != int(new[b, t]) and float(top.values[0] - top.values[1]) > 0:
                raise AssertionError("generation_margins: the chosen token is not the argmax of the scores "
                                     "(not greedy decoding?)")
            tol = max(rel * float(finite.abs().max()) if finite.numel() else 0.0, abs_tol)
            gap = float(top.values[0] - top.values[1])
            rec.steps += 1
            if not gap > tol:
                rec.narrow.append((gap, tol, f"call {rec.calls}, row {b}, step {t}"))
        if eos:
            live &= ~torch.isin(new[:, t].cpu(), torch.tensor(sorted(eos)))


def _beam_gaps(rec: _Generation, values, cuts, step: int, rows, rel: float, abs_tol: float, what: str) -> None:
    """For each row of ``values`` (scores of a beam search, -1e9 marking unusable slots) still searching,
    the gap at each cut of its descending order: ``cuts(order, row)`` gives pairs of positions in it,
    the last one kept and the first one dropped. The scale is one step's log-probability: the best
    accumulated score over the steps taken (at least 1)."""
    import torch

    v = values.detach().double().cpu()
    v = v.reshape(v.shape[0], -1)
    for b in range(v.shape[0]):
        if rows is not None and not bool(rows[b]):
            continue
        valid = torch.nonzero(v[b] > -1e8).flatten()
        if valid.numel() < 2:
            continue
        order = valid[torch.argsort(v[b][valid], descending=True, stable=True)]
        tol = max(rel * max(1.0, abs(float(v[b][order[0]])) / (step + 1)), abs_tol)
        for i, j in cuts(order.tolist(), b):
            if j < len(order):
                gap = float(v[b][order[i]] - v[b][order[j]])
                rec.steps += 1
                if not gap > tol:
                    rec.narrow.append((gap, tol, f"call {rec.calls}, row {b}, step {step}, {what} {i + 1}/{j + 1}"))


@contextmanager
def generation_margins(*, rel: float = REL, abs_tol: float = 0.0, context: str = "", only=None):
    """Within the block, every ``generate`` of a transformers model decides with a wide margin.

    Greedy decoding takes an argmax at every step, so a generated answer compared with another
    computation of it (another batch, a reference written from the original's code) is an expectation
    from an argmax over a random model's floats. This wraps ``GenerationMixin.generate`` (so models
    whose own ``generate`` calls a language model's, like BLIP and InstructBLIP, are covered too) and
    checks every decision of every sequence still being generated:

    * greedy: the best processed score against the second best, at every step;
    * beam search, at every step: the last continuation it keeps (of ``2 * num_beams``) against the
      first it drops, the same at ``num_beams`` (where a finished one is taken) and among the
      continuations that go on; the best finished hypothesis against the second, and the last one kept
      against the first dropped; its early-stopping comparison (best running score against the worst
      finished one). The scale is one step's log-probability (the best accumulated score over the
      steps taken, at least 1).

    ``only``: a predicate on the model; calls of models it rejects are not checked (a captioner whose
    caption the test takes as given, say: ``only=lambda model: "llm" in model.name_or_path``).

    On leaving the block it fails, as ill-conditioned, if any gap is below ``rel`` of the scale (or
    ``abs_tol``). Sampling is refused (tests never sample). Beam-search hooks follow transformers'
    ``_get_top_k_continuations`` / ``_update_finished_beams`` / ``_check_early_stop_heuristic``
    (transformers 5); with another version a beam search fails here instead of passing unchecked.

    Yields the record (``calls``, ``steps`` checked, ``narrow`` decisions).
    """
    from transformers.generation.utils import GenerationMixin

    rec = _Generation()
    names = ("generate", "_get_top_k_continuations", "_update_finished_beams", "_check_early_stop_heuristic")
    orig = {n: GenerationMixin.__dict__.get(n) for n in names}
    state: dict = {"step": 0, "alive": None, "eos": set(), "skip": False}

    def generate(self, *args, **kwargs):
        cfg = kwargs.get("generation_config") or getattr(self, "generation_config", None)
        asked = kwargs.get("return_dict_in_generate", getattr(cfg, "return_dict_in_generate", False))
        beams = int(kwargs.get("num_beams") or getattr(cfg, "num_beams", 1) or 1)
        if only is not None and not only(self):
            state["skip"] = True
            try:
                return orig["generate"](self, *args, **kwargs)
            finally:
                state["skip"] = False
        if kwargs.get("do_sample", getattr(cfg, "do_sample", False)):
            raise AssertionError("generation_margins: sampling has no margin to check")
        if beams > 1 and any(orig[n] is None for n in names):
            raise AssertionError("generation_margins: this transformers has no beam-search hooks to check")
        rec.calls += 1
        state.update(step=0, alive=None, eos=_eos_ids(self, kwargs))
        out = orig["generate"](self, *args, **{**kwargs, "output_scores": True, "return_dict_in_generate": True})
        if beams == 1:
            _greedy_steps(rec, self, kwargs, out, rel, abs_tol)
        return out if asked else out.sequences

    def top_k(self, *args, **kwargs):
        if state["skip"]:
            return orig["_get_top_k_continuations"](self, *args, **kwargs)
        values, keep, beams = kwargs["accumulated_log_probs"], int(kwargs["beams_to_keep"]), int(kwargs["num_beams"])
        vocab = values.shape[-1] // beams

        def cuts(order, row):
            # the continuations kept (the best beams_to_keep), those among the best num_beams (a finished
            # one counts only there), and the best num_beams of those that go on (no end token)
            out = [(beams - 1, beams), (keep - 1, keep)]
            going = [i for i, k in enumerate(order[:keep]) if k % vocab not in state["eos"]]
            if len(going) > beams:
                out.append((going[beams - 1], going[beams]))
            return out

        _beam_gaps(rec, values, cuts, state["step"], state["alive"], rel, abs_tol, "continuation")
        state["step"] += 1
        return orig["_get_top_k_continuations"](self, *args, **kwargs)

    def finished(self, *args, **kwargs):
        import torch

        if state["skip"]:
            return orig["_update_finished_beams"](self, *args, **kwargs)
        # the finished hypotheses of the previous steps and this step's new ones (before the code's own
        # exclusions, so a little stricter than needed): the best num_beams are kept, the best one returned
        new = kwargs["topk_log_probs"] / ((kwargs["cur_len"] + 1 - kwargs["decoder_prompt_len"])
                                          ** kwargs["length_penalty"])
        ok = kwargs["next_token_hits_stopping_criteria"] & kwargs["top_num_beam_mask"][None, :]
        merged = torch.cat((kwargs["beam_scores"], torch.where(ok, new, torch.full_like(new, -1e9))), dim=1)
        beams = int(kwargs["num_beams"])
        _beam_gaps(rec, merged, lambda order, row: [(0, 1), (beams - 1, beams)], state["step"] - 1, state["alive"],
                   rel, abs_tol, "finished")
        return orig["_update_finished_beams"](self, *args, **kwargs)

    def early_stop(*args, **kwargs):
        import torch

        res = orig["_check_early_stop_heuristic"].__func__(*args, **kwargs)
        if state["skip"]:
            return res
        running, done, fin = kwargs["running_beam_scores"], kwargs["beam_scores"], kwargs["is_sent_finished"]
        length = kwargs["cur_len"] - kwargs["decoder_prompt_len"]
        if kwargs["early_stopping"] == "never" and kwargs["length_penalty"] > 0.0:
            length = kwargs["max_length"] - kwargs["decoder_prompt_len"]
        best = running[:, 0] / (length ** kwargs["length_penalty"])
        for b in range(best.shape[0]):
            if (state["alive"] is None or bool(state["alive"][b])) and bool(fin[b].any()):
                worst = float(torch.min(done[b]))
                gap = abs(float(best[b]) - worst)
                tol = max(rel * max(1.0, abs(worst) / max(1, state["step"])), abs_tol)
                rec.steps += 1
                if not gap > tol:
                    rec.narrow.append((gap, tol, f"call {rec.calls}, row {b}, step {state['step']}, early stop"))
        state["alive"] = res.reshape(-1).cpu()
        return res

    patched = {"generate": generate, "_get_top_k_continuations": top_k, "_update_finished_beams": finished,
               "_check_early_stop_heuristic": staticmethod(early_stop)}
    for n in names:
        if orig[n] is not None:
            setattr(GenerationMixin, n, patched[n])
    try:
        yield rec
    finally:
        for n in names:
            if orig[n] is not None:
                setattr(GenerationMixin, n, orig[n])
    if rec.narrow:
        gap, tol, where = min(rec.narrow, key=lambda n: n[0] - n[1])
        _fail(f"generation ({len(rec.narrow)} of {rec.steps} decisions narrow; narrowest at {where})", gap, tol,
              context)


def _iou(a, b) -> float:
    def area(x):
        return max(0.0, x[2] - x[0]) * max(0.0, x[3] - x[1])

    inter = area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


#: the decisions a ts2viz detector takes (``assert_wide_detections(decisions=...)``); ``order`` (the
#: listing order of all kept detections) is not among them: compare detections regardless of order
DETECTOR_DECISIONS = ("threshold", "size", "nms", "cap", "query")
#: the decisions T2I-FineEval takes from the detections
CROP_DECISIONS = ("rounding", "pairs")


def _same(a, b) -> bool:
    """Two raw detections that are one: same label, box and confidence (a model's duplicate query)."""
    return a[1] == b[1] and a[2] == b[2] and tuple(a[0]) == tuple(b[0])


def assert_wide_detections(detector, images: Sequence, queries: Sequence[Sequence[str]] | None = None, *,
                           decisions: Sequence[str] = DETECTOR_DECISIONS, pseudo_box: bool = True,
                           top_pairs: int = 10, rel: float = REL, context: str = "") -> None:
    """Assert that the decisions of a ts2viz detector (``ts2viz.metrics.backbones.detect.Detector``) on ``images``
    that a test's expectation depends on are taken with a wide margin.

    ``decisions`` (:data:`DETECTOR_DECISIONS`, :data:`CROP_DECISIONS`, ``order``):

    * ``threshold``: each raw detection's confidence against the confidence threshold;
    * ``size``: a kept box's width and height against the 1-pixel minimum;
    * ``nms``: the IoU of two kept boxes of one label against the NMS IoU, and where one suppresses
      the other, their confidences (the more confident one stays);
    * ``cap``: where more boxes than ``max_boxes`` survive NMS, the last one kept against the first
      one dropped;
    * ``query``: for an open-vocabulary detector, each kept box's best query against its second best;
    * ``order``: the listing order of every kept detection (all confidences apart): only for a test
      that compares lists of detections in order;
    * ``rounding`` (T2I-FineEval's crops): each coordinate of a returned box against the half pixel
      where it rounds;
    * ``pairs`` (T2I-FineEval's relation candidates): where there are more pairs than ``top_pairs``,
      the last product of confidences kept against the first dropped (with the whole-image
      pseudo-box's 0.51 when ``pseudo_box``, as the authors' code does).

    Pick the decisions the expectation depends on: "some box is found" depends on ``threshold`` only;
    "the same detections in another batch" on :data:`DETECTOR_DECISIONS`. Detections that are exact
    duplicates (a model's duplicate query: same label, box and confidence) count once.
    """
    import copy

    import torch

    from ts2viz.metrics.backbones.detect import Detection, nms

    unknown = set(decisions) - set(DETECTOR_DECISIONS) - set(CROP_DECISIONS) - {"order"}
    if unknown:
        raise ValueError(f"unknown detector decisions {sorted(unknown)}")
    raw = copy.copy(detector)
    raw.threshold = 0.0
    raw._finish = lambda dets, image: dets                          # every candidate, unclipped
    logits: list = []
    hook = None
    if detector.open_vocab and "query" in decisions:
        hook = raw.model.register_forward_hook(lambda mod, args, out: logits.append(out.logits.detach().cpu()))
    try:
        every = raw.detect(list(images), queries)
    finally:
        if hook is not None:
            hook.remove()
    t, u = detector.threshold, detector.nms_iou
    for k, (image, dets) in enumerate(zip(images, every)):
        where = f"{context}: image {k}" if context else f"image {k}"
        if "threshold" in decisions:
            assert_wide_threshold([d.score for d in dets], t, rel=rel, context=f"{where}, confidence threshold")
        w, h = image.size
        kept: list = []
        for d in sorted(dets, key=lambda d: -d.score):
            if d.score < t:
                continue
            b = (max(0.0, min(w, d.box[0])), max(0.0, min(h, d.box[1])),
                 max(0.0, min(w, d.box[2])), max(0.0, min(h, d.box[3])))
            if "size" in decisions:
                assert_wide_threshold([b[2] - b[0], b[3] - b[1]], 1.0, rel=rel, context=f"{where}, 1-pixel minimum")
            if b[2] - b[0] >= 1 and b[3] - b[1] >= 1 and not any(_same((b, d.label, d.score), x) for x in kept):
                kept.append((b, d.label, d.score))
        if "order" in decisions:
            assert_distinct([s for *_, s in kept], rel=rel, context=f"{where}, order of confidences")
        if "nms" in decisions and u < 1:
            pairs = [(a, b, _iou(a[0], b[0])) for i, a in enumerate(kept) for b in kept[i + 1:] if a[1] == b[1]]
            assert_wide_threshold([x for *_, x in pairs], u, rel=rel, context=f"{where}, NMS IoU")
            for a, b, x in pairs:
                if x > u:
                    assert_wide_gap(a[2], b[2], rel=rel, context=f"{where}, NMS: which of two boxes stays")
        survivors = [(d.box, d.label, d.score) for d in nms([Detection(*x) for x in kept], u)]
        if "cap" in decisions and len(survivors) > detector.max_boxes:
            n = detector.max_boxes
            assert_wide_gap(survivors[n - 1][2], survivors[n][2], rel=rel, context=f"{where}, max_boxes={n}")
        final = survivors[:detector.max_boxes]
        if "rounding" in decisions:
            assert_wide_rounding([v for b, *_ in final for v in b], 0, rel=rel, context=f"{where}, pixel rounding")
        if "pairs" in decisions:
            from ts2viz.metrics.families.fineeval.regions import PSEUDO_BOX_CONFIDENCE

            conf = [s for *_, s in final]
            if pseudo_box:
                conf = (conf + conf[:2] if len(conf) < 2 else conf) + [PSEUDO_BOX_CONFIDENCE]
            products = np.unique([a * b for i, a in enumerate(conf) for b in conf[i + 1:]])[::-1]
            if len(products) > top_pairs:
                assert_wide_gap(products[top_pairs - 1], products[top_pairs], rel=rel,
                                context=f"{where}, top {top_pairs} relation pairs")
    n = 0
    for batch in logits:        # per box, the best query's sigmoid against the second best (kept boxes)
        for lg in batch:
            p = torch.sigmoid(lg.double())
            if p.shape[-1] >= 2:
                top = torch.topk(p, 2, dim=-1).values
                for a, b in top[top[:, 0] >= t].tolist():
                    assert_wide_gap(a, b, rel=rel, context=f"{context + ': ' if context else ''}detector call item "
                                                           f"{n}, best query")
            n += 1
