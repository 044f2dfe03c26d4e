"""The reference tests catch wrong formulas (issues 31 and 33).

Each case below changes one aspect of ts2viz's formula the way a plausible misreading of the original would
(a missing prefix, 100x for 2.5x, CLIP's usual 100 for the checkpoint's learnt logit scale, unnormalised
rewards, a generic question template instead of the model's own, no end-of-sequence token, greedy for beam
search, normalised for exact correctness, the README's accumulation for the code's ...) with ``monkeypatch``,
and runs the SAME comparison the family's reference test runs (``tests/support/reference_compare.py``): it
must raise the comparison's ``AssertionError``. Each family's unmodified comparison passes in its reference
test (``test_*_reference.py``); here the unmodified run is checked once per mutated family too, in the same
process, so a mutation that leaks (a patch not undone) would show.

For TIFA and DSG the mutated runs skip the generation-margin checks (issue 30): a changed decoding may well
have narrow margins, and what is shown here is that the string/score comparison itself sees the change.
"""
from __future__ import annotations

import dataclasses
import math

import pytest
from reference_compare import (
    compare_clipscore,
    compare_dsg,
    compare_hpsv2,
    compare_imagereward,
    compare_itm,
    compare_pickscore,
    compare_tifa,
    compare_vqascore,
)

MISMATCH = "reference mismatch"


# -- the mutations: each a function of monkeypatch ----------------------------------------------------------

def _set(module: str, **values):
    def apply(mp):
        import importlib

        mod = importlib.import_module(module)
        for k, v in values.items():
            assert hasattr(mod, k), f"{module}.{k} is gone: update this mutation"
            mp.setattr(mod, k, v)
    return apply


def _pickscore_logit_100(mp):
    """CLIP's usual ``100 * cos`` instead of the checkpoint's ``logit_scale.exp()``."""
    import torch

    from ts2viz.metrics.families import pickscore

    init = pickscore.PickScore.__init__

    def patched(self, *a, **k):
        init(self, *a, **k)
        self.model.logit_scale.data = torch.tensor(math.log(100.0), dtype=self.model.logit_scale.dtype)
    mp.setattr(pickscore.PickScore, "__init__", patched)


def _processor_mean_half(mp):
    """The image normalised with mean = std = 0.5 (a common default) instead of the processor's OpenAI values."""
    from ts2viz.metrics.common import pixels

    proc = pixels.processor_pixels

    def patched(image_processor, image, *a, **k):
        image_processor.image_mean, image_processor.image_std = [0.5] * 3, [0.5] * 3
        return proc(image_processor, image, *a, **k)
    mp.setattr(pixels, "processor_pixels", patched)


def _recipe(question=None, answer=None):
    """The recipe ts2viz picks by architecture, with another question template or answer."""
    def apply(mp):
        from ts2viz.metrics.families import vqascore_recipes as r

        pick = r.recipe_for

        def patched(vqa):
            rec = pick(vqa)
            return dataclasses.replace(rec, question=question or rec.question, answer=answer or rec.answer)
        mp.setattr(r, "recipe_for", patched)
    return apply


def _clip_flant5_no_eos(mp):
    """CLIP-FlanT5's answer scored without T5's ``</s>`` (the answer's tokens only)."""
    from ts2viz.metrics.backbones import clip_flant5

    tok = clip_flant5.tokens_around_image

    def patched(text, tokenizer):
        ids = tok(text, tokenizer)
        return ids[:-1] if text in ("Yes", "yes") and ids and ids[-1] == tokenizer.eos_token_id else ids
    mp.setattr(clip_flant5, "tokens_around_image", patched)


def _decoding(name):
    """``default_decoding`` giving greedy (no template, no beam) instead of the original's own call."""
    def apply(mp):
        from ts2viz.metrics.common import decoding, qametric

        mp.setattr(qametric, "default_decoding", lambda kind, model_type: decoding.GREEDY)
    apply.__doc__ = name
    return apply


def _normalised_correctness(mp):
    """Correct when equal after normalising (case, articles, punctuation) instead of TIFA's/DSG's ``==``."""
    from ts2viz.metrics.common import qametric
    from ts2viz.qa.mapping import normalize_answer

    mp.setattr(qametric.QAMetric, "is_correct",
               lambda self, mapped, expected: normalize_answer(mapped) == normalize_answer(expected))


def _accumulation(name):
    def apply(mp):
        from ts2viz.metrics.common import qametric

        score = qametric.dsg_score
        mp.setattr(qametric, "dsg_score", lambda correct, parents, accumulation="direct": score(correct, parents, name))
    return apply


GENERIC_Q = 'Does this image show "{}"?'          # the template of Qwen2-VL's recipe (and LLaVA-OneVision's)
FIGURE_Q = 'Does this figure show "{}"? Please answer yes or no.'  # CLIP-FlanT5's, ts2viz's generic recipe

#: (id, compare, mutation)
CASES = [
    ("clipscore-hessel-no-prefix", lambda: compare_clipscore("hessel"),
     _set("ts2viz.metrics.backbones.embedding", HESSEL_PREFIX="")),
    ("clipscore-hessel-weight-100", lambda: compare_clipscore("hessel"),
     _set("ts2viz.metrics.backbones.embedding", HESSEL_WEIGHT=100.0)),
    ("clipscore-torchmetrics-scale-2.5", lambda: compare_clipscore("torchmetrics"),
     _set("ts2viz.metrics.backbones.embedding", TORCHMETRICS_SCALE=2.5)),
    ("pickscore-logit-scale-100", lambda: compare_pickscore("authors"), _pickscore_logit_100),
    ("pickscore-mean-std-0.5", lambda: compare_pickscore("authors"), _processor_mean_half),
    ("hpsv2-mean-std-0.5", compare_hpsv2,
     _set("ts2viz.metrics.families.hpsv2", OPENAI_MEAN=(0.5,) * 3, OPENAI_STD=(0.5,) * 3)),
    ("imagereward-no-standardising", lambda: compare_imagereward("score"),
     _set("ts2viz.metrics.families.imagereward", MEAN=0.0, STD=1.0)),
    ("imagereward-mean-std-0.5", lambda: compare_imagereward("score"),
     _set("ts2viz.metrics.families.imagereward", CLIP_MEAN=(0.5,) * 3, CLIP_STD=(0.5,) * 3)),
    ("vqascore-clip-flant5-generic-question", lambda: compare_vqascore("clip-flant5"), _recipe(question=GENERIC_Q)),
    ("vqascore-clip-flant5-no-eos", lambda: compare_vqascore("clip-flant5"), _clip_flant5_no_eos),
    ("vqascore-clip-flant5-answer-lowercase", lambda: compare_vqascore("clip-flant5"), _recipe(answer="yes")),
    ("vqascore-llava-1.5-generic-question", lambda: compare_vqascore("llava-v1.5"), _recipe(question=GENERIC_Q)),
    ("vqascore-instructblip-no-question-prefix", lambda: compare_vqascore("instructblip-flant5"),
     _recipe(question=FIGURE_Q)),
    ("vqascore-qwen2-vl-figure-question", lambda: compare_vqascore("qwen2-vl"), _recipe(question=FIGURE_Q)),
    ("vqascore-qwen2-vl-answer-lowercase", lambda: compare_vqascore("qwen2-vl"), _recipe(answer="yes")),
    ("itmscore-mean-std-0.5", lambda: compare_itm("itmscore"),
     _set("ts2viz.metrics.backbones.blip2_retrieval", MEAN=(0.5,) * 3, STD=(0.5,) * 3)),
    ("itcscore-mean-std-0.5", lambda: compare_itm("itcscore"),
     _set("ts2viz.metrics.backbones.blip2_retrieval", MEAN=(0.5,) * 3, STD=(0.5,) * 3)),
    ("tifa-git-greedy-no-template", lambda: compare_tifa("git", margins=False), _decoding("greedy")),
    ("tifa-blip-greedy-default-length", lambda: compare_tifa("blip", margins=False), _decoding("greedy")),
    ("tifa-blip-normalised-correctness", lambda: compare_tifa("blip", margins=False), _normalised_correctness),
    ("dsg-greedy-for-beam", lambda: compare_dsg(margins=False), _decoding("greedy")),
    ("dsg-transitive-accumulation", lambda: compare_dsg(margins=False), _accumulation("transitive")),
    ("dsg-mean-accumulation", lambda: compare_dsg(margins=False), _accumulation("mean")),
]


#: FINDINGS: mutations the reference fixtures do NOT catch (their tiny models' answers and questions do not
#: exercise the aspect); strict xfail, so a better fixture that catches them turns these red until moved.
NOT_CAUGHT = {
    "tifa-blip-greedy-default-length": "the tiny BLIP's answers are shorter than greedy's default length: "
                                       "TIFA's max_length=50 is not tested by the fixture",
    "tifa-blip-normalised-correctness": "every mapped choice and expected answer in the fixture is already "
                                        "normalised: exact vs normalised correctness is not tested",
    "dsg-transitive-accumulation": "the fixture's DSG graphs/answers give the same score under direct and "
                                   "transitive parent rules",
    "dsg-mean-accumulation": "the fixture's DSG answers never have a wrong parent with a right child: the "
                             "parent rule is not tested",
}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=NOT_CAUGHT[c[0]]))
                                  if c[0] in NOT_CAUGHT else c for c in CASES], ids=[c[0] for c in CASES])
def test_reference_comparison_fails_on_a_changed_formula(case, monkeypatch):
    _, compare, mutate = case
    with monkeypatch.context() as mp:
        mutate(mp)
        with pytest.raises(AssertionError, match=MISMATCH):
            compare()
    compare()  # the formula restored, the same comparison passes again (nothing leaked)
