"""Building a question-answering metric (:func:`build_qa`): a family's subclass of QAMetric on a VQA model."""
from __future__ import annotations

import inspect
import textwrap
from typing import Callable

from ...errors import InputError
from ...qa.accumulation import DEFAULT_ACCUMULATION, check_accumulation
from ...qa.mapping import check_yes_rule
from ...qa.questions import QuestionSource
from ..backbones.llm import load_llm
from ..backbones.sbert import load_mapper
from ..backbones.vqa.loader import load_vqa_model
from ..common.base import Metric
from ..common.decoding import GREEDY, check_decoding, default_decoding
from ..common.question_gen import QuestionGenerator
from ..common.spec import Spec
from ..registry import question_writers
from .metric import QAMetric
from .options import PROMPT_STYLES, check_correctness, check_score_option


def _generator(generator: str | None, generator_model: str | None, api_key: str | None, api_key_env: str,
               device: str | None) -> QuestionGenerator | None:
    if not generator:
        return None
    return QuestionGenerator(load_llm(generator, model=generator_model, api_key=api_key, api_key_env=api_key_env,
                                      device=device), question_writers())



def build_qa(metric: type[QAMetric], spec: Spec, device: str | None, *, questions: str = "ts2", generator: str | None = None,
           generator_model: str | None = None, api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
           batch_size: int | None = None, pair_batch_size: int | None = None, dtype: str | None = None,
           template: str | None = None, max_new_tokens: int | None = None, list_choices: bool | None = None,
           mapper: str | None = None, accumulation: str | None = None, score: str = "accuracy",
           qa_filter: str | None = None, prompt_style: str | None = None, mapper_rule: str | None = None,
           decoding: str | None = None, yes_rule: str | None = None, correctness: str = "exact",
           **options) -> Metric:
    """The question-answering metric ``metric`` (a family's :class:`QAMetric` subclass) on the VQA model of ``spec``.

    The family's subclass says what differs (:class:`QAMetric`: the options it refuses, its decodings, its
    prompt style, mapper rule and yes/no reading). TIFA's and DSG's, as their modules define them:

    How a VQA model is asked and read by default (``dsg:``; options override each part):

    * InstructBLIP: DSG's InstructBLIP path: the bare question, ``decoding=dsg``, ``yes_rule=exact``;
    * BLIP-VQA (and other non-generative VQA models): the bare question, greedy, ``yes_rule=exact`` (DSG's
      mPLUG path: such models answer in their vocabulary's lower case);
    * a chat VLM (a chat template: LLaVA, Qwen2-VL, ...): DSG's chat path (``GPT4o.vqa``):
      ``prompt_style=dsg_chat`` ("Answer only with 'yes' or 'no'. Do not give other outputs or punctuation
      marks. Question: ..."), greedy, ``max_new_tokens=20`` (DSG's ``max_tokens=20``), ``yes_rule=chat``;
    * another generative VLM (a plain template: BLIP-2, PaliGemma): its template, greedy, ``yes_rule=chat``.

    ``tifa:`` decodes as TIFA's code does on BLIP-VQA, GIT and BLIP-2 (``decoding=tifa``), greedily
    elsewhere, maps by TIFA's rule and compares with ``==`` (``correctness=exact``).

    Parameters
    ----------
    metric : type of QAMetric
        The family's subclass (it is built and returned).
    spec : Spec
        The metric's parsed spec (its model is the VQA model).
    device : str or None
        The torch device; None picks one (:func:`ts2viz.metrics.common.device.resolve_device`).
    questions, generator, generator_model, api_key, api_key_env, batch_size, pair_batch_size, dtype, template, max_new_tokens, list_choices, mapper, accumulation, score, qa_filter, prompt_style, mapper_rule, decoding, yes_rule, correctness
        The spec's options, as the ``tifa`` and ``dsg`` family cards describe them (:func:`~.options.qa_options`).
    **options
        Any other option: refused.

    Returns
    -------
    Metric
        A ``metric``.

    Raises
    ------
    InputError
        For an unknown option, an option that applies to the other family only, a value not accepted,
        options that contradict each other (e.g. ``decoding=`` with ``score=normalized``), or a model,
        question file or generator that cannot be loaded.
    """
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if accumulation is not None:
        metric.refuse(spec, "accumulation")
    acc = check_accumulation(accumulation or DEFAULT_ACCUMULATION)
    check_score_option(spec, str(score))
    source = QuestionSource(metric.name, questions,
                            _generator(generator, generator_model, api_key, api_key_env, device))
    if qa_filter not in (None, "", "none"):
        metric.refuse(spec, "qa_filter")
        source = metric.filtered(source, qa_filter, device)
    if yes_rule not in (None, ""):
        metric.refuse(spec, "yes_rule")
        if score == "normalized":
            raise InputError(f"metric {spec.raw!r}: yes_rule= reads free-form answers, not score=normalized")
        try:
            check_yes_rule(str(yes_rule))
        except InputError as e:
            raise InputError(f"metric {spec.raw!r}: {e.problem}") from None
    style = _prompt_style(metric, spec, prompt_style)
    own = metric.prompt_styles.get(style)
    if own is not None and own.template is not None:
        template = own.template  # the style's own prompt (TIFA's BLIP-2 text is the whole prompt)
    check_correctness(spec, correctness)
    model_type = _model_type(spec) if score != "normalized" or decoding else None
    if decoding in (None, ""):
        chosen = default_decoding(metric.decodings, model_type)
    else:
        from ..registry import decoding_presets

        chosen = check_decoding(str(decoding), model_type, f"metric {spec.raw!r}", decoding_presets())
    if score == "normalized":
        if decoding not in (None, "") and chosen is not GREEDY:
            raise InputError(f"metric {spec.raw!r}: decoding= decodes free-form answers, not score=normalized")
        chosen = GREEDY  # the likelihood scores decode nothing
    if template is None and chosen.template:
        template = chosen.template  # the source's own prompt (DSG: the bare question)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    if score == "normalized" and mapper is not None:
        raise InputError(f"metric {spec.raw!r}: mapper= maps free-form answers; score=normalized reads the "
                         "choices' likelihoods and maps nothing")
    # the likelihood scores need no answer mapper (and so no Sentence-BERT download)
    if score == "normalized" and mapper_rule:
        raise InputError(f"metric {spec.raw!r}: mapper_rule= applies to free-form answers, not score=normalized")
    # the family's own rule (TIFA's: answers that are choices taken, all others to Sentence-BERT; DSG keeps
    # the "contains yes" rule: the fidelity rows of the TIFA card)
    rule = mapper_rule or metric.mapper_rule
    answer_mapper = None if score == "normalized" else load_mapper(mapper, vqa.device, rule=rule)
    rule_for_yes = None
    if score != "normalized":
        rule_for_yes, style = metric.yes_reading(vqa, chosen, str(yes_rule) if yes_rule else None, prompt_style,
                                                 style)
    own = metric.prompt_styles.get(style)   # yes_reading may have chosen the family's own style (DSG's chat path)
    if own is not None:
        if list_choices is None:
            list_choices = own.list_choices
        if max_new_tokens in (None, "") and own.max_new_tokens is not None:
            max_new_tokens = own.max_new_tokens
    new_tokens = DEFAULT_MAX_NEW_TOKENS if max_new_tokens in (None, "") else int(max_new_tokens)
    return metric(spec, vqa, source, answer_mapper, batch_size, new_tokens, list_choices, acc, str(score), style,
                  decoding=chosen, yes_rule=rule_for_yes, correctness=str(correctness))


def qa_factory(metric: type[QAMetric], usage: str) -> Callable[..., Metric]:
    """The factory of a question-answering family: :func:`build_qa` with the family's subclass ``metric``.

    The factory takes ``(spec, device=None, **options)``, says which options it takes (its ``extra_options``:
    :data:`QA_OPTION_NAMES`), names the subclass (its ``metric``: the registry reads the family's decodings
    there, :func:`ts2viz.metrics.registry.decoding_presets`) and belongs to ``metric``'s module (the family's: its ``__module__``), where the
    family's record names it.

    Parameters
    ----------
    metric : type of QAMetric
        The family's subclass.
    usage : str
        The spec's syntax and defaults, the first paragraph of the factory's docstring (its Parameters,
        Returns and Raises sections follow, written here once for every such family).

    Returns
    -------
    callable
        ``build(spec, device=None, **options) -> Metric``.
    """
    def build(spec: Spec, device: str | None = None, **options) -> Metric:
        return build_qa(metric, spec, device, **options)

    build.__module__ = metric.__module__
    build.extra_options = QA_OPTION_NAMES
    build.metric = metric
    build.__doc__ = f"""{textwrap.indent(usage.strip(), "    ").lstrip()}

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the VQA model (hub id or local folder).
    device : str or None, optional
        The torch device; None picks one.
    **options
        The spec's options (:data:`~ts2viz.metrics.qametric.build.QA_OPTION_NAMES`); their meaning is on
        the family's card.

    Returns
    -------
    Metric
        A :class:`{metric.__name__}` (:func:`~ts2viz.metrics.qametric.build.build_qa`).

    Raises
    ------
    InputError
        For an unknown option, an option's value that is not accepted, or a model or question source that
        cannot be loaded.
    """
    return build


#: new tokens of ts2viz's greedy decoding (a family's prompt style may have its own: ``PromptStyle.max_new_tokens``)
DEFAULT_MAX_NEW_TOKENS = 10


#: the options of ``tifa:`` and ``dsg:``: :func:`build_qa`'s keyword parameters
QA_OPTION_NAMES: tuple[str, ...] = tuple(
    p.name for p in inspect.signature(build_qa).parameters.values() if p.kind == p.KEYWORD_ONLY)



def _model_type(spec: Spec) -> str | None:
    """The VQA model's ``model_type`` from its config (None when it cannot be read: the loader then says why)."""
    from transformers import PretrainedConfig

    from ..common.pretrained import check_model_id, hf_load

    try:  # hf_load: a hub id on a network without the hub fails in seconds, not after retries
        raw, _ = hf_load("config", PretrainedConfig.get_config_dict, check_model_id(spec), spec,
                         **({"revision": spec.revision} if spec.revision else {}))
    except Exception:  # load_vqa_model reports a bad model with its own message
        return None
    return raw.get("model_type")


def _prompt_style(metric: type[QAMetric], spec: Spec, prompt_style: str | None) -> str:
    """The prompt style a QA metric uses, checked (the family may refuse one, and gives its default).

    ``default`` is ts2viz's question text in the model's own template.
    """
    if prompt_style not in (None, "", *PROMPT_STYLES):
        raise InputError(f"metric {spec.raw!r}: prompt_style must be one of {', '.join(PROMPT_STYLES)}")
    if prompt_style:
        metric.refuse(spec, f"prompt_style={prompt_style}")
        return prompt_style
    return metric.default_prompt_style(spec)


def model_type_of(spec: Spec) -> str:
    """The ``model_type`` of the spec's model's config (empty when it cannot be read: the loader says why).

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec.

    Returns
    -------
    str
        The config's ``model_type`` (``blip-2``, ``instructblip``, ...), or ``""``.
    """
    from transformers import AutoConfig

    from ..common.pretrained import check_model_id

    try:
        cfg = AutoConfig.from_pretrained(check_model_id(spec), **({"revision": spec.revision} if spec.revision else {}))
    except Exception:  # load_vqa_model reports a bad model with its own message
        return ""
    return getattr(cfg, "model_type", "")
