"""The options of the question-answering families (``tifa:``, ``dsg:``): their card rows and value checks."""
from __future__ import annotations

from ...errors import InputError
from ..common.spec import Spec
from ..family import Option

#: the values of ``score=``: 0/1 per question, or Gecko's normalised answer likelihood
SCORE_MODES = ("accuracy", "normalized")
#: how a mapped choice is compared with the expected answer (:meth:`~.metric.QAMetric.is_correct`)
CORRECTNESS = ("exact", "normalized")
#: the values of ``prompt_style=`` (a family may refuse one: :attr:`~.metric.QAMetric.refused`)
PROMPT_STYLES = ("default", "tifa_blip2", "dsg_chat")


def check_score_option(spec: Spec, score: str) -> None:
    """Check the ``score=`` option of ``tifa:`` and ``dsg:``.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec (named in the error message).
    score : str
        The option's value.

    Raises
    ------
    InputError
        If ``score`` is not one of :data:`SCORE_MODES` (``accuracy``, ``normalized``).
    """
    if score not in SCORE_MODES:
        raise InputError(f"metric {spec.raw!r}: score must be 'accuracy' or 'normalized', not {score!r}")


def check_correctness(spec: Spec, correctness: str) -> None:
    """Check the ``correctness=`` option, as :func:`check_score_option` checks ``score=``.

    Parameters
    ----------
    spec, correctness
        The metric's parsed spec (named in the error message) and the option's value.

    Raises
    ------
    InputError
        If ``correctness`` is not one of :data:`CORRECTNESS`.
    """
    if correctness not in CORRECTNESS:
        raise InputError(f"metric {spec.raw!r}: correctness must be one of {', '.join(CORRECTNESS)}, "
                         f"not {correctness!r}")


def qa_options(elsewhere: dict | None = None, accumulation: str | None = None) -> tuple:
    """The options of a question-answering family (:func:`~.build.build_qa`'s), as its card lists them.

    :func:`~.build.build_qa` takes the same options for every such family; an option that applies to another
    family only is refused with a one-line error (:attr:`~.metric.QAMetric.refused`), and its doc says so on the card.

    Parameters
    ----------
    elsewhere : dict of str to str, optional
        The options this family refuses -> the family they apply to (their docs say so).
    accumulation : str or None, optional
        The default of ``accumulation=`` (None: the family has no parent questions).

    Returns
    -------
    tuple of Option
        One row per keyword option of :func:`~.build.build_qa` (:data:`~.build.QA_OPTION_NAMES`).
    """
    only = dict(elsewhere or {})

    def note(name: str) -> str:
        o = only.get(name)
        return "" if o is None else f" Applies to `{o}:` only (an error here)."

    rows = (
        Option("questions", "ts2", "Where the questions come from: `ts2` (the TS2 question sets shipped in "
               "`data/ts2/`), a question file of your own (`PATH.csv`, the TS2 format; `ts2viz questions` "
               "writes one), or `none` (questions only from the generator)."),
        Option("generator", None, "An LLM that writes questions for prompts the question file does not have: the "
               "base URL of an OpenAI-compatible chat endpoint or `hf:MODEL` (a local transformers LLM). "
               "Generation follows the original's structure with ts2viz's own prompts and examples; questions are "
               "cached on disk per (generator, prompt) under `$TS2VIZ_CACHE/questions/`."),
        Option("generator_model", None, "The model name at the generator's endpoint (default `gpt-4o`)."),
        Option("api_key", None, "The generator endpoint's key, given directly (never recorded in the config; "
               "prefer `api_key_env`)."),
        Option("api_key_env", "OPENAI_API_KEY", "The environment variable holding the generator endpoint's key."),
        Option("batch_size", None, "Images per scoring call (default 4). Speed only."),
        Option("pair_batch_size", None, "(image, question) pairs per VQA model call (default 8 on CPU, 32 on "
               "CUDA). Speed only."),
        Option("dtype", None, "Compute dtype of the VQA model on GPU: `float32`, `float16` or `bfloat16` "
               "(default: the card's precision, else bfloat16 where the GPU supports it, else float16; always "
               "float32 on CPU).", ("float32", "float16", "bfloat16")),
        Option("template", None, "The VQA model's prompt template with `{question}` (default: the model's own; "
               "a decoding preset may set it, e.g. `decoding=dsg` asks the bare question)."),
        Option("max_new_tokens", None, "New tokens of a free-form answer under `decoding=greedy` (default 10; "
               "20 on DSG's chat path, its `GPT4o.vqa` `max_tokens=20`)."),
        Option("list_choices", None, "Spell out the choices in the question (\"Choose one: a, b.\"; yes/no: "
               "\"Answer yes or no.\"). Default: on for generative VLMs, off for BLIP-VQA, as the decoding preset "
               "says where it says."),
        Option("mapper", "sbert:sentence-transformers/all-mpnet-base-v2", "How a free-form answer is mapped to a "
               "choice: `sbert:MODEL` (the choice with the highest cosine between Sentence-BERT embeddings, "
               "tokens mean-pooled under the attention mask, L2-normalised; TIFA's and the TS2 release's) or "
               "`lexical` (a model-free fallback: normalised exact match, a choice contained in the answer, then "
               "string similarity; **not** what TIFA does). Not with `score=normalized`."),
        Option("accumulation", accumulation, "How a question's parents gate it: `direct` "
               "(DSG's scoring code: it and each direct parent answered correctly), `transitive` (alias `gated`: "
               "every parent counts too, DSG's README and the TS2 release's per-image files) or `mean` (parents "
               "ignored, the TS2 web leaderboard's DSG rows)." + note("accumulation"),
               ("direct", "transitive", "gated", "mean")),
        Option("score", "accuracy", "`accuracy` (0/1 per question) or `normalized` (Gecko's normalised answer "
               "likelihood P(expected) / Σ P(choices) per question; DSG: a question counts 0 when a direct parent "
               "— with `transitive`, any ancestor — has its most likely choice wrong).",
               ("accuracy", "normalized")),
        Option("qa_filter", None, "TIFA's UnifiedQA question filter: `unifiedqa` "
               "(`allenai/unifiedqa-v2-t5-large-1363200`) or `unifiedqa:MODEL`; duplicates dropped, UnifiedQA's "
               "multiple-choice answer from the prompt alone must equal the expected answer, free-form answer "
               "F1 > 0.6 for non-yes/no questions. Off by default." + note("qa_filter")),
        Option("prompt_style", None, "`tifa_blip2` (TIFA's prompt for BLIP-2: \"Answer the multiple-choice "
               "question. Question: … Choices: a, b Answer:\"; the default of `tifa:` for BLIP-2 models, "
               "`tifa:` only), `dsg_chat` (DSG's `GPT4o.vqa` instruction \"Answer only with 'yes' or 'no'. Do not "
               "give other outputs or punctuation marks. Question: …\" in the model's chat template; the default "
               "of `dsg:` for chat VLMs, `dsg:` only) or `default` (the question in the model's own template).",
               ("default", "tifa_blip2", "dsg_chat")),
        Option("mapper_rule", None, "Which answers the Sentence-BERT mapper sees: `tifa` (TIFA's "
               "`multiple_choice_vqa`, the default of `tifa:`: an answer that is a choice is taken, every other "
               "goes to Sentence-BERT, yes/no included), `ts2` (the TS2 release's `freeform_to_multiple_choice.py`: "
               "fewer than three choices → yes when the answer contains \"yes\"; others to Sentence-BERT even when "
               "a choice) or `contains_yes` (the default of `dsg:`: \"contains yes\" for yes/no, TIFA's rule for "
               "the others). Not with `score=normalized`.", ("tifa", "ts2", "contains_yes")),
        Option("decoding", None, "How free-form answers are decoded: the name of a source's setting a "
               "question-answering family defines (its module's `decoding.py`; "
               "`ts2viz.metrics.registry.decoding_presets()`, each for the model types its source ran: `dsg`, "
               "DSG's InstructBLIP call; `tifa`, TIFA's call for BLIP-VQA, GIT and BLIP-2; the default of each "
               "family on those models) or `greedy` (ts2viz's: the model's template, greedy, `max_new_tokens`; "
               "every other default)."),
        Option("yes_rule", None, "How a yes/no answer is read: `exact` (DSG's InstructBLIP path, "
               "`answer == 'yes'`; the default for InstructBLIP and BLIP-VQA), `chat` (DSG's `GPT4o.vqa`: lower "
               "case, stripped, `. , ? !` removed, then `== 'yes'`; the default for generative VLMs) or `contains` "
               "(TS2's code: \"yes\" anywhere, case-insensitive). Not with `score=normalized`." + note("yes_rule"),
               ("exact", "chat", "contains")),
        Option("correctness", "exact", "How a mapped choice is compared with the expected answer: `exact` (TIFA's "
               "`int(mc_answer == answer)`, DSG's `== 'yes'`) or `normalized` (after lower-casing and removing "
               "articles and punctuation, ts2viz's former rule).", ("exact", "normalized")),
    )
    return rows
