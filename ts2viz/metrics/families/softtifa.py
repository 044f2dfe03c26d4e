"""Soft-TIFA (GenEval 2; Kamath et al., 2025): per atom the VQA model's probability of the right answer, averaged.

Each of a prompt's atoms is a question with its expected answer (GenEval 2's ``geneval2_data.jsonl``
``vqa_list``, or TIFA's / DSG's questions that ts2viz already has). The model is asked
``'{question} Answer in one word.'``; its first generated token's softmax is read and the probabilities of
the first tokens of the answer's spellings are *added up* (:func:`answer_spellings`: ``Yes``, ``yes``, `` yes``,
`` Yes``; for a ``How many`` question the number word, capitalised, with a leading space, and its digit).
Soft-TIFA AM (atom level) is the arithmetic mean of a prompt's atom scores, Soft-TIFA GM (prompt level) their
geometric mean (``mean=``). This is facebookresearch/GenEval2 ``evaluation.py`` (``soft_tifa``,
``send_message_with_image``, ``main``), proved on a reference fixture its own code made
(``tests/metrics/reference/test_softtifa_reference.py``); the same file's VQAScore variant is
``vqascore:MODEL?recipe=geneval2``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...qa.questions import QuestionSource, prompt_key
from ..backbones.vqa.generative import GenerativeVQA
from ..backbones.vqa.loader import load_vqa_model
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

#: GenEval 2's question to the VQA model for one atom
ATOM_TEMPLATE = "{} Answer in one word."
#: the spellings of "yes" whose probabilities are added (GenEval 2's ``answer_list``)
YES_SPELLINGS = ("Yes", "yes", " yes", " Yes")
#: GenEval 2's ``return_numeric_string``: the number words it knows (any other count answer gives 'other')
NUMBER_WORDS = {w: str(k) for k, w in enumerate(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"), start=1)}
#: ``mean=``: how a prompt's atom scores become its score
MEANS = {"gm": "geometric mean (Soft-TIFA GM, prompt level)", "am": "arithmetic mean (Soft-TIFA AM, atom level)"}


def answer_spellings(question: str, answer: str) -> tuple[str, ...]:
    """The spellings whose first tokens' probabilities Soft-TIFA adds, as GenEval 2's ``soft_tifa`` lists them.

    A question starting ``How many``: the answer, capitalised, each with a leading space, then its digit
    (GenEval 2's ``return_numeric_string``: ``'other'`` for a word beyond ten) with and without a space.
    Any other question: the spellings of yes (GenEval 2 asks only yes/no questions besides counts).

    Parameters
    ----------
    question : str
        The atom's question.
    answer : str
        Its expected answer.

    Returns
    -------
    tuple of str
        The spellings, repeats kept (GenEval 2 counts a repeated first token twice).

    Examples
    --------
    >>> answer_spellings("How many cats are in the image?", "two")
    ('two', 'Two', ' two', ' Two', '2', ' 2')
    >>> answer_spellings("How many trees are there?", "eleven")[-2:]
    ('other', ' other')
    >>> answer_spellings("Is the cat red?", "Yes")
    ('Yes', 'yes', ' yes', ' Yes')
    """
    if question.startswith("How many"):
        digit = NUMBER_WORDS.get(answer, "other")
        return (answer, answer.capitalize(), " " + answer, " " + answer.capitalize(), digit, " " + digit)
    return YES_SPELLINGS


def read_geneval2_questions(path: str | Path) -> dict[str, list[tuple[str, str]]]:
    """Atoms by prompt from a file in GenEval 2's ``geneval2_data.jsonl`` layout.

    One JSON object a line with ``prompt`` and ``vqa_list`` (a list of ``[question, answer]`` pairs); other
    keys (``atom_count``, ``skills``) are ignored.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.jsonl`` file.

    Returns
    -------
    dict of str to list of (str, str)
        ``(question, answer)`` pairs by :func:`~ts2viz.qa.questions.prompt_key` of the prompt.

    Raises
    ------
    InputError
        If the file cannot be read, or a line (named by its number) is not such an object.
    """
    p = Path(path).expanduser()
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{p}: cannot read the question file ({e})") from None
    out: dict[str, list[tuple[str, str]]] = {}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            atoms = [(str(q), str(a)) for q, a in row["vqa_list"]]
            prompt = str(row["prompt"])
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{p}: line {n}: expected a JSON object with 'prompt' and 'vqa_list' (a list of "
                             f"[question, answer] pairs), as GenEval 2's geneval2_data.jsonl ({e})") from None
        if not atoms:
            raise InputError(f"{p}: line {n}: 'vqa_list' is empty")
        out[prompt_key(prompt)] = atoms
    if not out:
        raise InputError(f"{p}: no questions")
    return out


def geometric_mean(values: Sequence[float]) -> float:
    """``exp(mean(log v))``, as ``scipy.stats.gmean`` computes it (GenEval 2's Soft-TIFA GM); 0 if any value is 0.

    Parameters
    ----------
    values : sequence of float
        Non-negative values.

    Returns
    -------
    float
        Their geometric mean.

    Examples
    --------
    >>> round(geometric_mean([0.25, 1.0]), 12), geometric_mean([0.5, 0.0])
    (0.5, 0.0)
    """
    with np.errstate(divide="ignore"):
        return float(np.exp(np.mean(np.log(np.asarray(values, dtype=np.float64)))))


class SoftTIFA(Metric):
    """Soft-TIFA of ``vqa`` on the atoms of each prompt (see the module docstring).

    Per image, :attr:`last_details` lists its atoms: question, expected answer, spellings and probability.
    """

    name = "softtifa"
    has_details = True

    def __init__(self, spec: Spec, vqa: GenerativeVQA, atoms, source_config: dict, mean: str = "gm",
                 batch_size: int | None = None):
        if mean not in MEANS:
            raise InputError(f"metric {spec.raw!r}: mean must be one of {', '.join(MEANS)}, not {mean!r}")
        config = {"family": "softtifa", **vqa.config, **source_config, "atom_template": ATOM_TEMPLATE,
                  "mean": MEANS[mean]}
        super().__init__(spec, config, vqa.device, batch_size or 4)
        self.vqa, self.atoms, self.mean = vqa, atoms, mean

    def check_prompt(self, prompt: str) -> None:
        """Fail before any image is scored if the prompt has no atoms.

        Parameters
        ----------
        prompt
            As :meth:`Metric.check_prompt <ts2viz.metrics.common.base.Metric.check_prompt>` takes it.
        """
        self.atoms(prompt)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Soft-TIFA of a batch of images (:class:`~ts2viz.metrics.common.base.Metric`).

        Parameters
        ----------
        items : sequence of PIL.Image.Image
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 scores (a sum of probabilities per atom, so an atom, and AM, can exceed 1 where spellings
            share a first token).
        """
        from ..backbones.vqa.t2v import variant_sum_scores

        per_image = [self.atoms(p) for p in prompts]
        pair_images, pairs = [], []
        for im, atoms in zip(items, per_image):
            for q, a in atoms:
                pair_images.append(im)
                pairs.append((ATOM_TEMPLATE.format(q), answer_spellings(q, a)))
        probs = self.vqa._batched(lambda ims, its: variant_sum_scores(self.vqa, ims, its), pair_images, pairs)
        out, self.last_details, k = [], [], 0
        for atoms in per_image:
            v = probs[k:k + len(atoms)]
            k += len(atoms)
            out.append(geometric_mean(v) if self.mean == "gm" else sum(v) / len(v))
            self.last_details.append([{"question": q, "answer": a, "spellings": list(answer_spellings(q, a)),
                                       "probability": float(p)} for (q, a), p in zip(atoms, v)])
        return np.asarray(out, dtype=np.float64)


def build(spec: Spec, device: str | None = None, *, questions: str = "ts2", source: str = "tifa", mean: str = "gm",
          dtype: str | None = None, batch_size: int | None = None, pair_batch_size: int | None = None) -> Metric:
    """The ``softtifa:MODEL[?questions=FILE.jsonl|ts2|FILE.csv&source=tifa|dsg&mean=gm|am]`` metric.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is a generative VLM (GenEval 2: ``Qwen/Qwen3-VL-8B-Instruct``).
    device : str or None, optional
        The torch device; None picks one.
    questions : str
        A ``.jsonl`` file in GenEval 2's layout, or ``ts2`` / a question CSV of ts2viz's TIFA or DSG format.
    source : str
        ``tifa`` or ``dsg``: which kind of question CSV ``questions`` is (not for a ``.jsonl``).
    mean : str
        ``gm`` (Soft-TIFA GM) or ``am`` (Soft-TIFA AM).
    dtype : str, optional
        Compute dtype (default: bfloat16 on a GPU, as GenEval 2's ``dtype="auto"`` loads Qwen3-VL; float32 on CPU).
    batch_size, pair_batch_size : int, optional
        Images per scoring call; (image, atom) pairs per model call. Speed only.

    Returns
    -------
    Metric
        A :class:`SoftTIFA`.

    Raises
    ------
    InputError
        An unknown option value, a question file that cannot be read, a model that is not a decoder-only
        generative VLM.
    """
    if str(questions).endswith(".jsonl"):
        sets = read_geneval2_questions(questions)
        import hashlib

        p = Path(str(questions)).expanduser()
        source_config = {"questions": f"{p.name}:{hashlib.sha1(p.read_bytes()).hexdigest()[:16]}",
                         "question_format": "geneval2"}

        def atoms(prompt: str) -> list[tuple[str, str]]:
            got = sets.get(prompt_key(prompt))
            if got is None:
                raise InputError(f"softtifa: {p.name} has no questions for the prompt {prompt!r}")
            return got
    else:
        if source not in ("tifa", "dsg"):
            raise InputError(f"metric {spec.raw!r}: source must be tifa or dsg, not {source!r}")
        src = QuestionSource(source, questions)
        source_config = {**src.config, "question_format": source}

        def atoms(prompt: str) -> list[tuple[str, str]]:
            return [(q.text, q.answer) for q in src.get(prompt)]
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size)
    if not isinstance(vqa, GenerativeVQA) or vqa.encoder_decoder:
        raise InputError(f"metric {spec.raw!r}: Soft-TIFA reads a decoder-only generative VLM's first token "
                         f"(GenEval 2: Qwen/Qwen3-VL-8B-Instruct); {spec.model} is not one")
    return SoftTIFA(spec, vqa, atoms, source_config, mean, batch_size)


_R = "tests/metrics/reference/test_softtifa_reference.py::"

CARD = Card(
    summary=("Soft-TIFA (GenEval 2): each of the prompt's atoms (a question and its expected answer) is asked as "
             "`{question} Answer in one word.`; the atom's score is the sum of the first generated token's "
             "probabilities of the answer's spellings (`Yes`, `yes`, ` yes`, ` Yes`; for a count the number word, "
             "capitalised, spaced, and its digit); the image's score is the geometric (Soft-TIFA GM, prompt "
             "level) or arithmetic (Soft-TIFA AM, atom level) mean over its atoms. Proved per image against "
             "GenEval 2's own code."),
    paper=("A. Kamath, K.-W. Chang, R. Krishna, L. Zettlemoyer, Y. Hu, M. Ghazvininejad. GenEval 2: Addressing "
           "Benchmark Drift in Text-to-Image Evaluation. arXiv:2512.16853, 2025. https://arxiv.org/abs/2512.16853"),
    citation="""@article{kamath2025geneval,
  title   = {{GenEval 2}: Addressing Benchmark Drift in Text-to-Image Evaluation},
  author  = {Kamath, Amita and Chang, Kai-Wei and Krishna, Ranjay and Zettlemoyer, Luke and Hu, Yushi and
             Ghazvininejad, Marjan},
  journal = {arXiv preprint arXiv:2512.16853},
  year    = {2025}
}""",
    original="facebookresearch/GenEval2 (commit a6e82d2): `evaluation.py` (`soft_tifa`, `send_message_with_image`, "
             "`return_numeric_string`, `main`); run on a reference fixture by tools/reference/geneval2/.",
    fixture=('`tests/fixtures/reference/geneval2/`: facebookresearch/GenEval2 a6e82d2 '
             '(`evaluation.py`: `soft_tifa`, `main()`) on transformers 4.57.3, on a tiny Qwen3-VL. '
             "Image modes: not compared (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range="[0, 1] for yes/no atoms; a count atom's sum can exceed 1 where two spellings share a first token",
    higher_is_better=True,
    precision="bfloat16",
    options=(
        Option("questions", "ts2", "A `.jsonl` file in GenEval 2's `geneval2_data.jsonl` layout (`prompt`, "
               "`vqa_list` of [question, answer] pairs), or `ts2` / a question CSV of ts2viz's TIFA or DSG format "
               "(`source=`)."),
        Option("source", "tifa", "Which kind of question CSV `questions` is: `tifa` or `dsg` (each question's "
               "expected answer is its atom's answer).", ("tifa", "dsg")),
        Option("mean", "gm", "`gm`: geometric mean of the atom scores (Soft-TIFA GM, GenEval 2's prompt-level "
               "estimate, its README's example); `am`: arithmetic mean (Soft-TIFA AM, atom level).",
               tuple(MEANS)),
        Option("dtype", None, "Compute dtype on GPU (default bfloat16, Qwen3-VL's `dtype=\"auto\"`); float32 on "
               "CPU.", ("float32", "float16", "bfloat16")),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        Option("pair_batch_size", None, "(image, atom) pairs per model call. Speed only."),
    ),
    fidelity=(
        Fidelity("atom question", "`{question} Answer in one word.` in the model's chat template with the image "
                 "first, the processor's own image preprocessing", "as the original", "",
                 f"{_R}test_softtifa_equals_geneval2_per_image"),
        Fidelity("atom score", "the first generated step's softmax (after the checkpoint's greedy logits "
                 "processors) summed over the first tokens of the answer's spellings, a repeated first token "
                 "counted again; counts: the word, capitalised, spaced, its digit (`other` beyond ten)",
                 "as the original", "", f"{_R}test_softtifa_equals_geneval2_per_image"),
        Fidelity("prompt score", "geometric (`gm`) or arithmetic (`am`) mean over the prompt's atoms "
                 "(`exp(mean(log))`, scipy's `gmean` as GenEval 2's `main` calls it)", "as the original", "mean",
                 f"{_R}test_softtifa_equals_geneval2_per_image, {_R}test_benchmark_total_equals_geneval2_main"),
        Fidelity("benchmark total", "GenEval 2's `main` prints 100 x the mean over prompts; ts2viz gives the "
                 "per-image scores (the leaderboard averages them)", "as the original", "",
                 f"{_R}test_benchmark_total_equals_geneval2_main"),
        Fidelity("questions from TIFA / DSG", "each TS2 TIFA or DSG question with its expected answer as an atom; "
                 "a non-count question is scored with the spellings of yes whatever its expected answer, as "
                 "GenEval 2's code does", "not in the original", "source"),
        Fidelity("batching", "several (image, atom) pairs per forward pass, left-padded; GenEval 2 asks one at a "
                 "time (the scores do not depend on it within the fixture's tolerance)", "documented difference",
                 "pair_batch_size", f"{_R}test_softtifa_equals_geneval2_per_image"),
    ),
    limitations=(
        "The fixture is a tiny random-weight Qwen3-VL in the released layout; no released checkpoint was loaded "
        "here (no hub access).",
        "GenEval 2's data (geneval2_data.jsonl) is CC BY-NC 4.0 and not bundled: give your copy with "
        "`questions=`.",
    ),
    description="""```python
from ts2viz import metrics
m = metrics.load("softtifa:Qwen/Qwen3-VL-8B-Instruct?questions=geneval2_data.jsonl")       # Soft-TIFA GM
am = metrics.load("softtifa:Qwen/Qwen3-VL-8B-Instruct?questions=geneval2_data.jsonl&mean=am")
m.last_details[0]   # per atom: question, answer, spellings, probability
```
""",
)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('softtifa',
                "Soft-TIFA (GenEval 2): per atom the summed first-token probability of the answer's spellings, "
                'geometric (GM) or arithmetic (AM) mean over atoms',
                build, CARD, example='softtifa:Qwen/Qwen3-VL-8B-Instruct', group='questions', hub_model=True,
                display='Soft-TIFA')
