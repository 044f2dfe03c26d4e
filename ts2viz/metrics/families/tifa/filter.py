r"""TIFA's question filter: UnifiedQA, reading only the prompt, must give the expected answer.

TIFA's pipeline (Yushi-Hu/tifa, ``tifascore/question_filter.py`` with ``unifiedqa.py``) runs every
generated question through UnifiedQA (``allenai/unifiedqa-v2-t5-large-1363200``, a T5) with the prompt
as the only context, and keeps a question only when:

1. it is not a repeat of an earlier question's text (the first is kept);
2. UnifiedQA's multiple-choice answer, generated greedily (30 new tokens at most) from
   ``"{question} \n {prompt} \n (A) c1 (B) c2 ... "`` (the first four choices, each followed by a
   space), decoded without special tokens, equals the expected answer exactly;
3. for a question whose expected answer is not "yes" or "no", UnifiedQA's free-form answer to
   ``"{question} \n {prompt}"`` (letters, digits and spaces kept, stripped, lower case; converted to
   digits with ``word2number`` when the expected answer is numeric) overlaps the expected answer
   with a word-level F1 above 0.6 (TIFA's ``compute_prf``).

``?qa_filter=unifiedqa`` (that model) or ``?qa_filter=unifiedqa:MODEL`` (any T5 seq2seq folder or hub
id) turns it on for TIFA; the filtered-out questions are not asked. Off by default: the TS2 question
sets are used as released (the fidelity rows of :data:`ts2viz.metrics.families.tifa.CARD`).
"""
from __future__ import annotations

from typing import Sequence

from ....errors import InputError
from ....qa.questions import Question

DEFAULT_UNIFIEDQA = "allenai/unifiedqa-v2-t5-large-1363200"
FREE_FORM_THRESHOLD = 0.6
HEADINGS = ("(A)", "(B)", "(C)", "(D)")
MAX_NEW_TOKENS = 30


def mcqa_input(question: str, context: str, choices: Sequence[str]) -> str:
    r"""UnifiedQA's multiple-choice input as TIFA writes it.

    Parameters
    ----------
    question : str
        The question.
    context : str
        The prompt (the only context).
    choices : sequence of str
        The choices; the first four are listed, each heading and choice followed by a space.

    Returns
    -------
    str
        ``"{question} \n {context} \n (A) c1 (B) c2 ... "``.

    Examples
    --------
    >>> from ts2viz.metrics.families.tifa.filter import mcqa_input
    >>> mcqa_input("is there a cat?", "a cat", ["yes", "no"])
    'is there a cat? \n a cat \n (A) yes (B) no '
    """
    choice_text = "".join(f"{h} {c} " for h, c in zip(HEADINGS, choices))
    return f"{question} \n {context} \n {choice_text}"


def qa_input(question: str, context: str) -> str:
    r"""UnifiedQA's free-form input as TIFA writes it.

    Parameters
    ----------
    question : str
        The question.
    context : str
        The prompt.

    Returns
    -------
    str
        ``"{question} \n {context}"``.
    """
    return f"{question} \n {context}"


def normalize_free_form(answer: str) -> str:
    """A free-form answer as TIFA's ``UnifiedQAModel.qa`` reads it: letters, digits and whitespace only, stripped, lower case.

    Parameters
    ----------
    answer : str
        UnifiedQA's answer.

    Returns
    -------
    str
        The normalised answer.

    Examples
    --------
    >>> from ts2viz.metrics.families.tifa.filter import normalize_free_form
    >>> normalize_free_form(" Two red-cats! ")
    'two redcats'
    """
    return "".join(c for c in answer if c.isalnum() or c.isspace()).strip().lower()


def word_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """TIFA's ``compute_prf``: the F1 of two word lists, by membership (not multiset counts).

    Parameters
    ----------
    gold : sequence of str
        The expected answer's words.
    pred : sequence of str
        The answer's words.

    Returns
    -------
    float
        The F1; 1 when both are empty, 0 when only the gold is empty.

    Examples
    --------
    >>> from ts2viz.metrics.families.tifa.filter import word_f1
    >>> word_f1(["red", "car"], ["red", "bus", "van"])
    0.4
    """
    if not gold:
        return 1.0 if not pred else 0.0
    tp = sum(1 for g in gold if g in pred)
    fn = len(gold) - tp
    fp = sum(1 for p in pred if p not in gold)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def as_number(text: str) -> str:
    """``text`` as digits where word2number reads a number in it (``str(w2n.word_to_num(text))``), else unchanged.

    Parameters
    ----------
    text : str
        A normalised free-form answer.

    Returns
    -------
    str
        The number's digits, or ``text``.

    Raises
    ------
    InputError
        If the word2number package is not installed.
    """
    try:
        from word2number import w2n
    except ImportError:
        raise InputError("TIFA's question filter needs the word2number package: pip install word2number") from None
    try:
        return str(w2n.word_to_num(text))
    except Exception:  # word2number raises ValueError (and others) on text without a number
        return text


class UnifiedQAFilter:
    """TIFA's filter over a T5 seq2seq model (``AutoModelForSeq2SeqLM`` + ``AutoTokenizer``).

    Parameters
    ----------
    model : str, default "allenai/unifiedqa-v2-t5-large-1363200"
        Hub id or local folder of the model.
    device : str or None, optional
        The torch device; None picks one.
    """

    def __init__(self, model: str = DEFAULT_UNIFIEDQA, device: str | None = None):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from ...common.device import resolve_device
        from ...common.pretrained import check_model_id, hf_load, model_identity
        from ...common.spec import Spec

        spec = Spec(f"unifiedqa:{model}", "unifiedqa", model)
        model_id = check_model_id(spec)
        self.tokenizer = hf_load("UnifiedQA tokenizer", AutoTokenizer.from_pretrained, model_id, spec)
        t5 = hf_load("UnifiedQA model", AutoModelForSeq2SeqLM.from_pretrained, model_id, spec)
        self.device = resolve_device(device)
        self.model = t5.to(self.device).eval()
        self._ident = model_identity(model_id, None, t5.config)

    @property
    def config(self) -> dict:
        """The filter (``unifiedqa``) and the model's identity."""
        return {"filter": "unifiedqa", **self._ident}

    def run(self, text: str) -> str:
        """UnifiedQA's answer to one input, as TIFA runs it.

        One generation with ``max_new_tokens=30`` and the model's own generation config (greedy for
        UnifiedQA); the first sequence, decoded without special tokens.

        Parameters
        ----------
        text : str
            The input (:func:`mcqa_input` or :func:`qa_input`).

        Returns
        -------
        str
            The answer.
        """
        import torch

        ids = self.tokenizer.encode(text, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            # only max_new_tokens, as TIFA: the rest is the model's own generation config (greedy for UnifiedQA)
            out = self.model.generate(ids, max_new_tokens=MAX_NEW_TOKENS)
        return self.tokenizer.batch_decode(out, skip_special_tokens=True)[0]

    def decisions(self, prompt: str, questions: Sequence[Question]) -> list[dict]:
        """Per question: whether TIFA's filter keeps it, and why not.

        Parameters
        ----------
        prompt : str
            The text-to-image prompt (UnifiedQA's only context).
        questions : sequence of Question
            The prompt's questions.

        Returns
        -------
        list of dict
            One record per question: ``question``, ``kept``, and where reached ``mc_answer``,
            ``free_form_answer`` and ``reason`` (``duplicate``, ``multiple-choice answer differs``,
            ``free-form answer differs``).
        """
        seen: set[str] = set()
        out = []
        for q in questions:
            rec = {"question": q.text, "kept": False}
            out.append(rec)
            if q.text in seen:
                rec["reason"] = "duplicate"
                continue
            seen.add(q.text)
            mc = self.run(mcqa_input(q.text, prompt, q.choices))
            rec["mc_answer"] = mc
            if mc != q.answer:
                rec["reason"] = "multiple-choice answer differs"
                continue
            if q.answer not in ("yes", "no"):
                free = normalize_free_form(self.run(qa_input(q.text, prompt)))
                if q.answer.isnumeric():
                    free = as_number(free)
                rec["free_form_answer"] = free
                if word_f1(q.answer.split(), free.split()) <= FREE_FORM_THRESHOLD:
                    rec["reason"] = "free-form answer differs"
                    continue
            rec["kept"] = True
        return out

    def keep(self, prompt: str, questions: Sequence[Question]) -> list[Question]:
        """The questions TIFA's filter keeps, in order.

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.
        questions : sequence of Question
            The prompt's questions.

        Returns
        -------
        list of Question
            The kept questions.
        """
        return [q for q, d in zip(questions, self.decisions(prompt, questions)) if d["kept"]]


class FilteredSource:
    """A question source whose questions pass a :class:`UnifiedQAFilter` (results memoised per prompt).

    Parameters
    ----------
    source : QuestionSource
        The unfiltered source.
    qa_filter : UnifiedQAFilter
        The filter.
    """

    def __init__(self, source, qa_filter: UnifiedQAFilter):
        self.source = source
        self.filter = qa_filter
        self._memo: dict[str, list[Question]] = {}

    @property
    def kind(self) -> str:
        """The wrapped source's kind (``tifa``)."""
        return self.source.kind

    @property
    def config(self) -> dict:
        """The wrapped source's config with the filter's under ``qa_filter``."""
        return {**self.source.config, "qa_filter": self.filter.config}

    def get(self, prompt: str) -> list[Question]:
        """The prompt's questions that pass the filter.

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.

        Returns
        -------
        list of Question
            The kept questions.

        Raises
        ------
        InputError
            If the filter drops every question of the prompt (or the wrapped source has none).
        """
        if prompt not in self._memo:
            kept = self.filter.keep(prompt, self.source.get(prompt))
            if not kept:
                short = prompt if len(prompt) <= 70 else prompt[:67] + "..."
                raise InputError(f"tifa: UnifiedQA's filter dropped every question of prompt {short!r}")
            self._memo[prompt] = kept
        return self._memo[prompt]


def load_filter(spec: str | None, device: str | None = None) -> UnifiedQAFilter | None:
    """The filter named by ``qa_filter=``.

    Parameters
    ----------
    spec : str or None
        ``none`` (or None, empty: no filter), ``unifiedqa`` (:data:`DEFAULT_UNIFIEDQA`) or
        ``unifiedqa:MODEL`` (a T5 folder or hub id).
    device : str or None, optional
        The torch device; None picks one.

    Returns
    -------
    UnifiedQAFilter or None
        The filter, or None for no filter.

    Raises
    ------
    InputError
        For any other value, or a model that cannot be loaded.
    """
    if spec in (None, "", "none"):
        return None
    spec = str(spec)
    if spec == "unifiedqa":
        return UnifiedQAFilter(DEFAULT_UNIFIEDQA, device)
    if spec.startswith("unifiedqa:") and spec[len("unifiedqa:"):].strip():
        return UnifiedQAFilter(spec[len("unifiedqa:"):].strip(), device)
    raise InputError(f"qa_filter {spec!r}: expected none, unifiedqa or unifiedqa:MODEL (a T5 folder or hub id)")
