"""Gecko (Wiles et al., "One slice is not enough", Sec. 5): coverage-grounded QA with NLI filtering.

For a prompt T and an image I:

1. an LLM labels T's visually groundable words (coverage) and writes one yes/no QA pair per labelled
   word (:mod:`.questions`; the replies are cached on disk, :mod:`ts2viz.metrics.common.llmcache`);
2. an NLI model scores whether T entails each QA pair, read as a hypothesis
   (:func:`.questions.qa_hypothesis`); a pair scoring below ``nli_threshold`` (0.005, as in the
   paper) is dropped as a hallucination;
3. a VQA model gives the likelihood of every answer choice of every kept question; a question scores
   P(expected) / sum P(choices) (Eq. 2 with likelihoods, not negative log likelihoods:
   :mod:`ts2viz.metrics.common.choicescore`), and the image scores the mean over the kept questions (no dependencies).

The paper runs PaLM-2 (LLM), PaLI (VQA) and T5-11B TRUE (NLI). Here the VQA model is the spec's model
(PaliGemma is the open stand-in for PaLI; any model of :mod:`ts2viz.metrics.backbones.vqa` works), the LLM is the
``generator=`` option and the NLI model ``nli=`` (default ``google/t5_xxl_true_nli_mixture``).

Per-image details (``metric.last_details``): ``{"coverage": [...], "questions": [...], "n_kept": k}``;
each question record has its word, type, question, choices, expected answer, hypothesis, NLI score,
``kept`` and, when kept, each choice's likelihood (``probabilities``) and the normalised score
(``normalized``).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...backbones.llm import load_llm
from ...backbones.nli import DEFAULT_NLI, load_nli
from ...backbones.vqa.loader import load_vqa_model
from ...backbones.vqa.model import VQAModel
from ...common.base import Metric
from ...common.choicescore import choice_index, normalized_probability
from ...common.llmcache import cached_reply
from ...common.llmquestions import LLMQuestionsMetric, require_generator
from ...common.spec import Spec
from ...family import Card, Family, Fidelity, Option
from .questions import (
    COVERAGE_SYSTEM,
    QA_SYSTEM,
    QA_SYSTEMS,
    CoverageWord,
    QAPair,
    parse_coverage,
    parse_qa,
    qa_hypothesis,
    qa_user_message,
)

CARD = Card(
    summary=("Gecko: an LLM labels the prompt's visually groundable words and writes one QA pair per word; an NLI "
             "model drops pairs the prompt does not entail; each kept question scores the VQA model's normalised "
             "likelihood of the expected answer, P(expected) / Σ P(choices), and the image the mean."),
    paper=("O. Wiles, C. Zhang, I. Albuquerque, I. Kajić, S. Wang, E. Bugliarello, Y. Onoe, P. Papalampidi, "
           "I. Ktena, C. Knutsen, C. Rashtchian, A. Nawalgaria, J. Pont-Tuset, A. Nematzadeh. Revisiting "
           "Text-to-Image Evaluation with Gecko: On Metrics, Prompts, and Human Ratings. ICLR 2025 (Sec. 5). "
           "https://arxiv.org/abs/2404.16820"),
    citation="""@inproceedings{wiles2025revisiting,
  title     = {Revisiting Text-to-Image Evaluation with {Gecko}: On Metrics, Prompts, and Human Ratings},
  author    = {Wiles, Olivia and Zhang, Chuhan and Albuquerque, Isabela and Kaji{\\'c}, Ivana and Wang, Su and
               Bugliarello, Emanuele and Onoe, Yasumasa and Papalampidi, Pinelopi and Ktena, Ira and
               Knutsen, Chris and Rashtchian, Cyrus and Nawalgaria, Anant and Pont-Tuset, Jordi and
               Nematzadeh, Aida},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2025}
}""",
    original="The paper (Sec. 5, Eq. 2): the metric's code and its PaLM-2 prompts are not released.",
    fixture=("not compared: the authors' code and PaLM-2 prompts are not released; re-implemented "
             'from the paper (Sec. 5, Eq. 2). Image modes: not compared (a non-RGB image is read by '
             "ts2viz's `as_rgb`)."),
    output_range="[0, 1]",
    higher_is_better=True,
    options=(
        Option("generator", None, "Required: the LLM that labels words and writes QA pairs: the base URL of an "
               "OpenAI-compatible chat endpoint or `hf:MODEL` (a local transformers LLM)."),
        Option("generator_model", None, "The model name at the generator's endpoint (default `gpt-4o`)."),
        Option("api_key", None, "The generator endpoint's key, given directly (never recorded in the config; "
               "prefer `api_key_env`)."),
        Option("api_key_env", "OPENAI_API_KEY", "The environment variable holding the generator endpoint's key."),
        Option("nli", "google/t5_xxl_true_nli_mixture", "Seq2seq NLI model (`premise: … hypothesis: …` → "
               "`1`/`0`, score P(\"1\")), hub id or folder; `none` turns the filter off."),
        Option("nli_threshold", 0.005, "The paper's r: a QA pair whose entailment score is below it is dropped "
               "(in [0, 1])."),
        Option("hypothesis", "auto", "How a QA pair becomes an NLI hypothesis: `auto` (\"Is there X?\" / \"Are "
               "there X?\" → \"There is X.\" / \"There are X.\"; any other pair keeps its question with the "
               "answer appended) or a template with `{question}` and `{answer}`."),
        Option("min_groundability", 0.0, "Ask only about words the LLM rates at least this groundable (in [0, 1]; "
               "0: no filter)."),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        Option("pair_batch_size", None, "(image, question) pairs per VQA model call. Speed only."),
        Option("nli_batch_size", None, "Hypotheses per NLI model call. Speed only."),
        Option("dtype", None, "Compute dtype of the VQA model on GPU: `float32`, `float16` or `bfloat16` "
               "(default: the card's precision, else bfloat16 where the GPU supports it, else float16; always "
               "float32 on CPU).", ("float32", "float16", "bfloat16")),
        Option("template", None, "The VQA model's prompt template with `{question}` (default: the model's own; "
               "PaliGemma: `<image>answer en {question}`)."),
        Option("list_choices", None, "Spell out the choices in the question (default: on for chat VLMs)."),
        Option("llm_cache", True, "Read and fill the on-disk LLM reply cache (`$TS2VIZ_CACHE/llm/`); `false` "
               "bypasses it. Not part of the cache key."),
        Option("question_style", "tifa", "`tifa`: TIFA-style multiple-choice and yes/no questions (the paper "
               "reuses TIFA's question generation); `yes_no`: yes/no questions only (ts2viz's earlier prompt).",
               ("tifa", "yes_no")),
    ),
    fidelity=(
        Fidelity("question generation",
                 "coverage labelling (`{N}[phrase, type, groundability]`, types entity, activity, attribute, "
                 "counting, color, material, spatial, location, shape, style, other), then one TIFA-style QA pair "
                 "per labelled word, multiple-choice or yes/no (`question_style=tifa`)", "as the original",
                 "question_style", "tests/metrics/test_gecko_fidelity.py"),
        Fidelity("question generation (prompts)",
                 "the few-shot prompts are ts2viz's own in the paper's formats (the paper's PaLM-2 prompts are "
                 "not released); `question_style=yes_no` is ts2viz's earlier yes/no-only prompt",
                 "documented difference", "question_style", "tests/metrics/test_gecko_fidelity.py"),
        Fidelity("filters", "NLI entailment of each QA pair by the prompt, kept at ≥ 0.005 "
                 "(`google/t5_xxl_true_nli_mixture`)", "as the original", "nli_threshold",
                 "tests/metrics/test_metrics_gecko.py::test_gecko_score_is_mean_of_normalised_kept_answers"),
        Fidelity("filters (hypothesis wording)", "how a QA pair becomes a hypothesis is ts2viz's rule (the paper "
                 "does not say)", "documented difference", "hypothesis",
                 "tests/metrics/test_metrics_gecko.py::test_gecko_score_is_mean_of_normalised_kept_answers"),
        Fidelity("prompt template", "PaliGemma's `answer en {question}` (the open stand-in for PaLI)",
                 "documented difference", "template", "tests/metrics/test_metrics_gecko.py"),
        Fidelity("answer → score",
                 "Eq. 2: P(expected) / Σ P(choices) over each question's own choices, from teacher-forced "
                 "likelihoods (a choice's likelihood sums its spellings as written, lower case and capitalised; "
                 "BLIP-VQA scores `[DEC] choice [SEP]` through its answer decoder, generative VLMs the choice's "
                 "tokens after their prompt, no EOS). Documented choice: likelihoods, not the NLLs the equation "
                 "names (normalising NLLs would rank the least likely answer highest)", "as the original", "",
                 "tests/metrics/test_gecko_fidelity.py"),
        Fidelity("preprocessing", "the VQA model's own processor", "as the original"),
        Fidelity("default models", "PaLM-2 and PaLI are not public: any LLM endpoint, PaliGemma or any VQA model",
                 "documented difference", "generator"),
        Fidelity("aggregation", "mean over kept questions", "as the original", "",
                 "tests/metrics/test_gecko_fidelity.py"),
    ),
    limitations=(
        "Choice likelihoods of generative VLMs are taken without an end-of-sequence token, so choices that are "
        "prefixes of each other (\"red\" / \"red and white\") are not exclusive (issue 31, item 7).",
        "The groundability score does not filter words unless `min_groundability` is set.",
        "Throughput was measured on CPU with the tests' tiny models only (`benchmarks/bench_gecko_fineeval.py`); "
        "GPU images/s with the real models remain to be measured.",
    ),
    description="""Gecko writes its questions with an LLM (`generator=URL` of an OpenAI-compatible endpoint
with `generator_model=NAME` and the key in `$OPENAI_API_KEY` or `api_key_env=VAR`, or `generator=hf:MODEL`);
the few-shot prompts are ts2viz's own (the originals are not published) in the paper's formats
(`ts2viz/metrics/families/gecko/questions.py`). Every LLM reply is cached on disk in `$TS2VIZ_CACHE/llm/`
(default `~/.cache/ts2viz/llm/`), keyed by the LLM's identity, the system prompt and the user message, and
stored only once it parsed (`llm_cache=false` bypasses it).

The LLM labels the prompt's visually groundable words as `{N}[phrase, type, groundability]`, then writes one
QA pair per labelled word (`About {N}[word] (type): / Q: / Choices: / A:`) in TIFA's style, since the paper
reuses TIFA's question generation: multiple-choice questions ("What color is the dog? Choices: red, black,
white, brown") as well as yes/no ones. An NLI model scores whether the prompt entails each pair; a pair below
`nli_threshold` is dropped. Each kept question scores P(expected) / Σ P(choices) from the VQA model's
teacher-forced answer likelihoods (Eq. 2); the image scores their mean.

PaliGemma (`PaliGemmaForConditionalGeneration`, prompted with its `answer en` prefix) is the open stand-in for
the paper's PaLI; any VQA model of the backbone works. The paper's reference figures, to compare a run with
real models against (Table 6, TIFA160, Spearman ρ / Kendall τ with human Likert ratings, PaLM-2 + PaLI for
all QA metrics): **Gecko .64 / .50, DSG .57 / .46, TIFA .43 / .32, CLIP .33 / .23**. TIFA160 itself is not
bundled; on TS2 compare Gecko with the TIFA and DSG rows of the leaderboard.

Per-image details (`metric.last_details`, kept in the score cache): the coverage labels, and per question its
word, type, question, choices, expected answer, hypothesis, NLI score, `kept` and, when kept, each choice's
likelihood and the normalised score.
""",
)

NLI_THRESHOLD = 0.005
PROMPTS_ID = "ts2viz-gecko-v1:" + hashlib.sha1((COVERAGE_SYSTEM + QA_SYSTEM).encode()).hexdigest()[:12]
#: ``question_style=`` values (see :data:`.questions.QA_SYSTEMS`); ``tifa`` is the default.
QUESTION_STYLES = tuple(QA_SYSTEMS)


def prompts_id(question_style: str) -> str:
    """The identity of the few-shot prompts of a question style (part of the metric's config).

    Parameters
    ----------
    question_style : str
        A key of :data:`.questions.QA_SYSTEMS`.

    Returns
    -------
    str
        :data:`PROMPTS_ID` for ``yes_no`` (unchanged, so that caches of that style stay valid), else
        ``ts2viz-gecko-tifa-v1:`` and 12 hex digits of the prompts' SHA-1.
    """
    if question_style == "yes_no":
        return PROMPTS_ID  # unchanged, so that caches of the yes/no style stay valid
    return "ts2viz-gecko-tifa-v1:" + hashlib.sha1((COVERAGE_SYSTEM + QA_SYSTEMS[question_style]).encode()).hexdigest()[:12]


class GeckoQuestions:
    """A prompt's coverage labels and NLI-checked QA pairs, from an LLM (cached on disk) and an NLI model.

    Results are memoised per prompt.

    Parameters
    ----------
    llm : ChatLLM
        The question-generating LLM (:func:`ts2viz.metrics.backbones.llm.load_llm`).
    nli : NLIModel or None, optional
        The NLI model that filters QA pairs; None keeps every pair.
    nli_threshold : float, default 0.005
        A pair is kept when the prompt entails its hypothesis with at least this probability.
    hypothesis : str, default "auto"
        How a QA pair becomes an NLI hypothesis (:func:`.questions.qa_hypothesis`).
    min_groundability : float, default 0.0
        Words with a lower groundability get no question.
    use_cache : bool, default True
        Read and write the LLM reply cache (:mod:`ts2viz.metrics.common.llmcache`).
    question_style : str, default "tifa"
        A key of :data:`.questions.QA_SYSTEMS`.

    Raises
    ------
    InputError
        If ``question_style`` is unknown.
    """

    def __init__(self, llm, nli=None, *, nli_threshold: float = NLI_THRESHOLD, hypothesis: str = "auto",
                 min_groundability: float = 0.0, use_cache: bool = True, question_style: str = "tifa"):
        if question_style not in QA_SYSTEMS:
            raise InputError(f"gecko: question_style must be one of {', '.join(QA_SYSTEMS)}, not {question_style!r}")
        self.question_style = question_style
        self.llm = llm
        self.nli = nli
        self.nli_threshold = float(nli_threshold)
        self.hypothesis = hypothesis
        self.min_groundability = float(min_groundability)
        self.use_cache = use_cache
        self._memo: dict[str, tuple[list[CoverageWord], list[QAPair]]] = {}

    @property
    def config(self) -> dict:
        """The generator, prompts, NLI model and settings that decide the questions."""
        return {"generator": self.llm.config, "prompts": prompts_id(self.question_style), "min_groundability": self.min_groundability,
                "hypothesis": self.hypothesis, "nli": self.nli.config if self.nli is not None else None,
                "nli_threshold": self.nli_threshold if self.nli is not None else None}

    def coverage(self, prompt: str) -> list[CoverageWord]:
        """The LLM's coverage labels of ``prompt`` (cached reply).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.

        Returns
        -------
        list of CoverageWord
            The labelled words (:func:`.questions.parse_coverage`).
        """
        return cached_reply(self.llm, COVERAGE_SYSTEM, f"Prompt: {prompt}", parse_coverage, use_cache=self.use_cache)

    def qa_pairs(self, prompt: str, words: list[CoverageWord]) -> list[QAPair]:
        """The LLM's QA pairs for the labelled words of ``prompt`` (cached reply).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.
        words : list of CoverageWord
            The words to ask about.

        Returns
        -------
        list of QAPair
            The pairs (:func:`.questions.parse_qa`).
        """
        return cached_reply(self.llm, QA_SYSTEMS[self.question_style], qa_user_message(prompt, words), lambda r: parse_qa(r, words),
                            use_cache=self.use_cache)

    def get(self, prompt: str) -> tuple[list[CoverageWord], list[QAPair]]:
        """Coverage labels and QA pairs of ``prompt``, each pair with ``hypothesis``, ``nli`` and ``kept`` set.

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.

        Returns
        -------
        words : list of CoverageWord
            Every labelled word.
        pairs : list of QAPair
            The QA pairs of the words that reach ``min_groundability``.

        Raises
        ------
        InputError
            If no labelled word reaches ``min_groundability``, or a reply cannot be parsed.
        """
        if prompt in self._memo:
            return self._memo[prompt]
        words = self.coverage(prompt)
        asked = [w for w in words if w.groundability >= self.min_groundability]
        if not asked:
            raise InputError(f"gecko: no labelled word of {prompt[:70]!r} reaches min_groundability="
                             f"{self.min_groundability}")
        pairs = self.qa_pairs(prompt, asked)
        for p in pairs:
            p.hypothesis = qa_hypothesis(p.question, p.expected, self.hypothesis)
        if self.nli is not None:
            scores = self.nli.entailment([prompt] * len(pairs), [p.hypothesis for p in pairs])
            for p, s in zip(pairs, scores):
                p.nli = float(s)
                p.kept = bool(s >= self.nli_threshold)
                p.note = "" if p.kept else f"NLI entailment {s:.2g} < {self.nli_threshold}"
        self._memo[prompt] = (words, pairs)
        return words, pairs


def ask(q: QAPair, list_choices: bool) -> str:
    """The question put to the VQA model (for chat VLMs, with the choices spelt out).

    Parameters
    ----------
    q : QAPair
        The QA pair.
    list_choices : bool
        Add "Answer yes or no." or "Choose one: a, b." to the question.

    Returns
    -------
    str
        The question text.
    """
    if not list_choices:
        return q.question
    if {c.lower() for c in q.choices} == {"yes", "no"}:
        return f"{q.question} Answer yes or no."
    return f"{q.question} Choose one: {', '.join(q.choices)}."


class Gecko(LLMQuestionsMetric):
    """The Gecko metric over a :class:`VQAModel` and :class:`GeckoQuestions` (see the module docstring).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    vqa : VQAModel
        The VQA model whose choice likelihoods score the questions.
    questions : GeckoQuestions
        Gives each prompt's QA pairs.
    batch_size : int or None, optional
        Images per scoring call (default 4).
    list_choices : bool or None, optional
        Spell out the choices in the question; None: on for chat VLMs only.
    """

    name = "gecko"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, questions: GeckoQuestions, batch_size: int | None = None,
                 list_choices: bool | None = None):
        # Chat VLMs answer "yes"/"no" more reliably when told to (list_choices=None); PaliGemma/BLIP take the
        # bare question.
        score = "mean over kept questions of P(expected)/sum P(choices), likelihoods"
        super().__init__(spec, vqa, questions, list_choices, {"score": score}, batch_size or 4)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Gecko's scores of a batch of images: the mean normalised likelihood over each prompt's kept questions.

        Parameters
        ----------
        items : sequence
            The prepared images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image (NaN when no question was kept); the coverage labels and per-question
            records are in ``self.last_details``.
        """
        sets = [self.questions.get(p) for p in prompts]
        images, texts, choices, where = [], [], [], []
        for i, (im, (_, pairs)) in enumerate(zip(items, sets)):
            for k, q in enumerate(pairs):
                if q.kept:
                    images.append(im)
                    texts.append(ask(q, self.list_choices))
                    choices.append(q.choices)
                    where.append((i, k))
        logprobs = self.vqa.choice_logprobs(images, texts, choices) if images else []
        per_image: list[dict[int, tuple[np.ndarray, float]]] = [{} for _ in items]
        for (i, k), lp in zip(where, logprobs):
            q = sets[i][1][k]
            per_image[i][k] = (lp, normalized_probability(lp, choice_index(q.choices, q.expected)))
        scores = np.full(len(items), np.nan)
        details = []
        for i, (words, pairs) in enumerate(sets):
            recs = []
            for k, q in enumerate(pairs):
                r = q.record()
                if k in per_image[i]:
                    lp, norm = per_image[i][k]
                    r["probabilities"] = {c: float(np.exp(v)) for c, v in zip(q.choices, lp)}
                    r["normalized"] = norm
                recs.append(r)
            vals = [v for _, v in per_image[i].values()]
            scores[i] = float(np.mean(vals)) if vals else float("nan")
            details.append({"coverage": [asdict(w) for w in words], "questions": recs, "n_kept": len(vals)})
        self.last_details = details
        return scores


def build(spec: Spec, device: str | None = None, *, generator: str | None = None, generator_model: str | None = None,
          api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY", nli: str = DEFAULT_NLI,
          nli_threshold: float = NLI_THRESHOLD, hypothesis: str = "auto", min_groundability: float = 0.0,
          batch_size: int | None = None, pair_batch_size: int | None = None, nli_batch_size: int | None = None,
          dtype: str | None = None, template: str | None = None, list_choices: bool | None = None,
          llm_cache: bool = True, question_style: str = "tifa", **options) -> Metric:
    """The ``gecko:`` metric of ``spec``: ``gecko:VQA_MODEL?generator=URL|hf:MODEL&...``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the VQA model.
    device : str or None, optional
        The torch device; None picks one.
    generator, generator_model, api_key, api_key_env, nli, nli_threshold, hypothesis, min_groundability, batch_size, pair_batch_size, nli_batch_size, dtype, template, list_choices, llm_cache, question_style
        The family's options; their meaning is on the family's card (:data:`CARD`).
    **options
        Any other option: refused.

    Returns
    -------
    Metric
        A :class:`Gecko`.

    Raises
    ------
    InputError
        For an unknown option, no ``generator``, a threshold outside [0, 1], a hypothesis template without
        ``{question}`` and ``{answer}``, an unknown question style, or a model that cannot be loaded.
    """
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    require_generator(spec, generator, "Gecko writes its questions")
    try:
        thr = float(nli_threshold)
        min_g = float(min_groundability)
    except (TypeError, ValueError):
        raise InputError(f"metric {spec.raw!r}: nli_threshold and min_groundability must be numbers") from None
    if not 0.0 <= thr <= 1.0 or not 0.0 <= min_g <= 1.0:
        raise InputError(f"metric {spec.raw!r}: nli_threshold and min_groundability must lie in [0, 1]")
    if hypothesis != "auto" and ("{question}" not in str(hypothesis) or "{answer}" not in str(hypothesis)):
        raise InputError(f"metric {spec.raw!r}: hypothesis must be 'auto' or a template with {{question}} "
                         "and {answer}")
    if question_style not in QUESTION_STYLES:
        raise InputError(f"metric {spec.raw!r}: question_style must be one of {', '.join(QUESTION_STYLES)}")
    llm = load_llm(str(generator), model=generator_model, api_key=api_key, api_key_env=api_key_env, device=device)
    nli_model = None
    if str(nli).lower() not in ("none", "off", "false", ""):
        nli_model = load_nli(str(nli), device, batch_size=nli_batch_size, owner=spec.raw)
    questions = GeckoQuestions(llm, nli_model, nli_threshold=thr, hypothesis=str(hypothesis),
                               min_groundability=min_g, use_cache=bool(llm_cache), question_style=str(question_style))
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    return Gecko(spec, vqa, questions, batch_size, list_choices)


#: the options :func:`build` takes beyond its keyword parameters (none: ``**options`` only catches typos)
build.extra_options = ()


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('gecko',
                'Gecko: LLM coverage-labelled yes/no questions, NLI-filtered, mean normalised answer likelihood',
                build, CARD, example='gecko:google/paligemma-3b-mix-224?generator=https://api.openai.com/v1', group='questions', hub_model=True,
                display='Gecko', details='coverage')
