r"""t2v_metrics 3.0's model-specific inputs and scoring rules, on transformers' models (for :mod:`.generative`).

t2v_metrics' VQAScore asks every VLM in that model's own way (``t2v_metrics/models/vqascore_models/*``);
this module is ts2viz's own implementation of those ways for the architectures :class:`.generative.GenerativeVQA`
loads, proved against t2v_metrics' code on reference fixtures (``tests/metrics/reference``):

* **LAVIS' Flan-T5 format** (InstructBLIP Flan-T5; BLIP-2 Flan-T5 the same way without the Q-Former's text):
  the image resized on its shorter side to 224 and centre-cropped (t2v_metrics' torchvision transform, PIL
  bicubic), the question to the Q-Former and, after the 32 query outputs, to T5's encoder; the answer and
  T5's ``</s>`` to the decoder (teacher forced); score ``exp(-mean cross-entropy)``
  (:func:`lavis_t5_answer_scores`).
* **first-token probability** (Qwen2-VL / Qwen2.5-VL, PaliGemma, LLaVA-OneVision, Llama-3.2-Vision): the
  softmax of the first generated token's scores at the answer's first token, as ``generate(max_new_tokens=1,
  do_sample=False, output_scores=True)`` returns them: after the checkpoint's greedy logits processors
  (Qwen2-VL-Instruct's ``repetition_penalty`` 1.05 over the prompt's tokens) (:func:`first_token_scores`).
  Qwen2-VL's image is resized by ``qwen_vl_utils.fetch_image``'s rule first (:func:`qwen_resize`);
  PaliGemma gets the question without a task prefix, as t2v_metrics passes it (``<image>``s, ``<bos>``, the
  question, ``\n``).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...common.device import autocast, on_device
from .model import image_chat_prompt

#: t2v_metrics' LAVIS image size and transform (InstructBLIP: Resize(224) on the shorter side, CenterCrop(224))
LAVIS_SIZE = 224
#: LAVIS' Q-Former and T5 truncation lengths (``max_txt_len``, ``max_output_txt_len``)
LAVIS_MAX_TXT, LAVIS_MAX_OUT = 128, 256
#: qwen_vl_utils' image rule: sides multiples of 28 (patch 14 x merge 2; Qwen3-VL 32), 4 to 16384 merged patches
QWEN_FACTOR, QWEN_MIN_TOKENS, QWEN_MAX_TOKENS, QWEN_MAX_RATIO = 28, 4, 16384, 200


def resize_shorter_center_crop(image, size: int):
    """Shorter side to ``size`` then the centre square, as t2v_metrics prepares InstructBLIP's images.

    torchvision's ``Resize(size)`` (shorter side to ``size``, PIL bicubic) then ``CenterCrop(size)``.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    size : int
        The side of the square result in pixels.

    Returns
    -------
    PIL.Image.Image
        A ``size`` x ``size`` image.

    Examples
    --------
    >>> from PIL import Image
    >>> resize_shorter_center_crop(Image.new("RGB", (40, 20)), 16).size
    (16, 16)
    """
    from PIL import Image

    w, h = image.size
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size, int(size * long / short)
    nw, nh = (new_short, new_long) if w <= h else (new_long, new_short)
    if (nw, nh) != (w, h):
        image = image.resize((nw, nh), Image.BICUBIC)
    top, left = int(round((nh - size) / 2.0)), int(round((nw - size) / 2.0))
    return image.crop((left, top, left + size, top + size))


def normalized_pixels(images: Sequence, mean, std):
    """PIL images as one normalised float32 batch (torchvision's ``ToTensor`` then ``Normalize``).

    Parameters
    ----------
    images : sequence of PIL.Image.Image
        Images of one size.
    mean, std : sequence of float
        Per-channel mean and standard deviation (of pixel values in [0, 1]).

    Returns
    -------
    torch.Tensor
        float32 ``(n, 3, h, w)``: each pixel /255, then ``(x - mean) / std``.

    Examples
    --------
    >>> from PIL import Image
    >>> normalized_pixels([Image.new("RGB", (4, 2), (255, 0, 0))], [0.5] * 3, [0.5] * 3)[0, :, 0, 0].tolist()
    [1.0, -1.0, -1.0]
    """
    import torch

    m = np.asarray(mean, dtype=np.float32).reshape(3, 1, 1)
    s = np.asarray(std, dtype=np.float32).reshape(3, 1, 1)
    arr = [(np.asarray(im.convert("RGB"), dtype=np.float32).transpose(2, 0, 1) / np.float32(255) - m) / s
           for im in images]
    return torch.from_numpy(np.stack(arr).astype(np.float32))


def lavis_t5_answer_scores(vqa, images: Sequence, items: Sequence[tuple[str, str]]) -> list[float]:
    """t2v_metrics' InstructBLIP VQAScore on transformers' InstructBLIP / BLIP-2 Flan-T5.

    LAVIS' Flan-T5 format (module docstring): the image centre-cropped to the model's size, the query outputs
    and the question into T5's encoder, the answer's tokens and ``</s>`` as the decoder's target.

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded InstructBLIP or BLIP-2 model with a Flan-T5 language model.
    images : sequence of PIL.Image.Image
        One image per item.
    items : sequence of (str, str)
        ``(question, answer)`` per image.

    Returns
    -------
    list of float
        ``exp(-mean cross-entropy)`` of each answer's tokens and ``</s>``, as LAVIS computes it.

    Raises
    ------
    ts2viz.errors.InputError
        When an answer has no tokens.
    """
    import torch

    model, proc = vqa.model, vqa.processor
    ip = proc.image_processor
    size = int((getattr(ip, "size", None) or {}).get("height", LAVIS_SIZE))
    pix = normalized_pixels([resize_shorter_center_crop(im.convert("RGB"), size) for im in images],
                            ip.image_mean, ip.image_std).to(vqa.device, model.dtype)
    questions, answers = [q for q, _ in items], [a for _, a in items]
    qtok = getattr(proc, "qformer_tokenizer", None)
    with autocast(vqa.device, vqa.dtype):
        if qtok is not None:  # InstructBLIP: the question goes to the Q-Former too
            q = _tokenize(qtok, questions, LAVIS_MAX_TXT, "left")
            feats = model.get_image_features(pixel_values=pix, qformer_input_ids=q["input_ids"].to(vqa.device),
                                             qformer_attention_mask=q["attention_mask"].to(vqa.device),
                                             return_dict=True).pooler_output
        else:
            feats = model.get_image_features(pixel_values=pix, return_dict=True).pooler_output
    tok = vqa.tokenizer
    enc = _tokenize(tok, questions, LAVIS_MAX_TXT, "left", pad_right=True)
    lab = _tokenize(tok, answers, LAVIS_MAX_OUT, "right", pad_right=True)
    lm = model.language_model
    ids, mask = enc["input_ids"].to(vqa.device), enc["attention_mask"].to(vqa.device)
    labels = lab["input_ids"].masked_fill(lab["attention_mask"] == 0, -100).to(vqa.device)
    if bool((labels[:, 0] == -100).any()):
        raise InputError(f"VQA {vqa.model_id}: an answer to score has no tokens")
    with autocast(vqa.device, vqa.dtype):
        embeds = torch.cat([feats.to(lm.get_input_embeddings().weight.dtype), lm.get_input_embeddings()(ids)], dim=1)
        att = torch.cat([torch.ones(feats.shape[:2], dtype=mask.dtype, device=mask.device), mask], dim=1)
        start = lm.config.decoder_start_token_id
        dec = torch.cat([torch.full_like(labels[:, :1], start), labels[:, :-1]], dim=1)
        dec = dec.masked_fill(dec == -100, lm.config.pad_token_id)
        logits = lm(inputs_embeds=embeds, attention_mask=att, decoder_input_ids=dec,
                    decoder_attention_mask=lab["attention_mask"].to(vqa.device)).logits
    logp = torch.log_softmax(logits.float(), dim=-1).double().cpu()
    labels = labels.cpu()
    out = []
    for r in range(len(items)):
        pos = (labels[r] != -100).nonzero().flatten()
        out.append(float(np.exp(np.mean([float(logp[r, t, labels[r, t]]) for t in pos]))))
    return out


def _tokenize(tok, texts, max_length: int, side: str, pad_right: bool = False) -> dict:
    """``tok(texts)`` padded to the longest, truncated on ``side`` to ``max_length`` (as LAVIS' tokenizers)."""
    saved = (tok.truncation_side, tok.padding_side)
    tok.truncation_side = side
    if pad_right:
        tok.padding_side = "right"
    try:
        return dict(tok(list(texts), padding="longest", truncation=True, max_length=max_length, return_tensors="pt"))
    finally:
        tok.truncation_side, tok.padding_side = saved


def qwen_resize(image, factor: int = QWEN_FACTOR):
    """``qwen_vl_utils.fetch_image``'s resize, as t2v_metrics' Qwen-VL paths prepare an image.

    Both sides rounded to multiples of ``factor`` (the patch size x the merge size 2: 28 for Qwen2-VL and
    Qwen2.5-VL, 32 for Qwen3-VL), the pixel count kept within 4 to 16384 tokens of ``factor`` x ``factor``,
    PIL's default (bicubic) resampling.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    factor : int, optional
        The side of one merged patch in pixels.

    Returns
    -------
    PIL.Image.Image
        The resized image (the same object when no resize is needed).

    Raises
    ------
    ts2viz.errors.InputError
        When the aspect ratio exceeds qwen_vl_utils' limit (200).

    Examples
    --------
    >>> from PIL import Image
    >>> qwen_resize(Image.new("RGB", (100, 60))).size
    (112, 56)
    >>> qwen_resize(Image.new("RGB", (100, 60)), factor=32).size
    (96, 64)
    """
    w, h = image.size
    if max(w, h) / min(w, h) > QWEN_MAX_RATIO:
        raise InputError(f"Qwen-VL: image aspect ratio {max(w, h) / min(w, h):.0f} is above {QWEN_MAX_RATIO}")
    f = int(factor)
    hb, wb = smart_size(h, w, f, QWEN_MIN_TOKENS * f * f, QWEN_MAX_TOKENS * f * f)
    return image.resize((wb, hb))


def smart_size(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen-VL's ``smart_resize`` size: both sides multiples of ``factor``, the area within the bounds.

    Each side is rounded to the nearest multiple of ``factor`` (at least ``factor``); an area above
    ``max_pixels`` is scaled down (sides floored), one below ``min_pixels`` up (sides ceiled), keeping the
    aspect ratio as near as the multiples allow. The aspect-ratio limit is the caller's to check.

    Parameters
    ----------
    height, width : int
        The original size in pixels.
    factor : int
        The side of one merged patch in pixels.
    min_pixels, max_pixels : int
        The bounds on the resized area, in pixels.

    Returns
    -------
    tuple of int
        ``(height, width)``.

    Examples
    --------
    >>> smart_size(60, 100, 28, 4 * 28 * 28, 16384 * 28 * 28)
    (56, 112)
    """
    f = factor
    hb, wb = max(f, round(height / f) * f), max(f, round(width / f) * f)
    if hb * wb > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        hb, wb = math.floor(height / beta / f) * f, math.floor(width / beta / f) * f
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        hb, wb = math.ceil(height * beta / f) * f, math.ceil(width * beta / f) * f
    return hb, wb


def paligemma_inputs(vqa, images: Sequence, questions: Sequence[str]) -> dict:
    r"""PaliGemma's input as t2v_metrics builds it (the processor given the bare question).

    ``<image>`` x the image's token count, ``<bos>``, the question and ``\n``; no task prefix. Left-padded.

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded PaliGemma model.
    images : sequence of PIL.Image.Image
        One image per question.
    questions : sequence of str
        The questions, as asked (no template applied here).

    Returns
    -------
    dict
        The model's keyword inputs (``input_ids``, ``attention_mask``, ``pixel_values``), on its device.
    """
    import torch

    proc, tok = vqa.processor, vqa.tokenizer
    n_img = int(getattr(proc, "image_seq_length", 0) or proc.image_processor.image_seq_length)
    image_id = vqa.model.config.image_token_id
    rows = [[image_id] * n_img + [tok.bos_token_id] + tok.encode(q + "\n", add_special_tokens=False)
            for q in questions]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r):] = torch.tensor(r)
        mask[i, width - len(r):] = 1
    pix = proc.image_processor(images=list(images), return_tensors="pt")["pixel_values"]
    return {"input_ids": ids.to(vqa.device), "attention_mask": mask.to(vqa.device),
            "token_type_ids": torch.zeros_like(ids).to(vqa.device), "pixel_values": pix.to(vqa.device, vqa.model.dtype)}


#: LLaVA-NeXT's ``qwen_1_5`` conversation (ChatML), which t2v_metrics' LLaVA-OneVision prompt is written in
ONEVISION_PROMPT = ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<image>\n"
                    "{question}<|im_end|>\n<|im_start|>assistant\n")


def first_token_inputs(vqa, images: Sequence, questions: Sequence[str]) -> dict:
    """The prompt batch (left-padded) whose next token t2v_metrics reads, for the model's architecture.

    PaliGemma gets t2v_metrics' own prompt layout (:func:`paligemma_inputs`), Qwen2-VL and Qwen2.5-VL
    images are resized first as t2v_metrics does (:func:`qwen_resize`), LLaVA-OneVision gets t2v_metrics'
    ChatML string (:data:`ONEVISION_PROMPT`) instead of the processor's chat template; other models get
    the VQA model's own prompt batch.

    Parameters
    ----------
    vqa : VQAModel
        The loaded VQA model.
    images : sequence of PIL.Image.Image
        The images.
    questions : sequence of str
        One question per image.

    Returns
    -------
    dict
        The model's keyword inputs (tensors on the model's device; pixel values in its dtype).
    """
    kind = getattr(vqa.model.config, "model_type", "")
    if kind == "paligemma":
        return paligemma_inputs(vqa, images, questions)
    if kind in ("qwen2_vl", "qwen2_5_vl"):
        images = [qwen_resize(im.convert("RGB")) for im in images]
    if kind == "llava_onevision":  # t2v_metrics' own ChatML string, not the processor's chat template
        enc = vqa.processor(images=list(images), text=[ONEVISION_PROMPT.format(question=q) for q in questions],
                            padding=True, return_tensors="pt")
        return on_device(enc, vqa.device, vqa.model.dtype)
    return vqa._inputs(images, questions)


def greedy_processors(generation_config) -> tuple[list, dict]:
    """The logits processors greedy ``generate`` applies to the first step's scores for a generation config.

    Only those that can act on the first step (repetition penalty, suppressed tokens); sampling settings
    (temperature, top-k, top-p) play no part in greedy decoding.

    Parameters
    ----------
    generation_config : transformers.GenerationConfig
        The checkpoint's generation config.

    Returns
    -------
    tuple of (list, dict)
        The processors, and their settings for the metric's config.
    """
    from transformers import (RepetitionPenaltyLogitsProcessor, SuppressTokensAtBeginLogitsProcessor,
                              SuppressTokensLogitsProcessor)

    procs, used = [], {}
    g = generation_config
    rp = getattr(g, "repetition_penalty", None)
    if rp is not None and float(rp) != 1.0:
        procs.append(RepetitionPenaltyLogitsProcessor(penalty=float(rp)))
        used["repetition_penalty"] = float(rp)
    for name, cls in (("suppress_tokens", SuppressTokensLogitsProcessor),
                      ("begin_suppress_tokens", SuppressTokensAtBeginLogitsProcessor)):
        val = getattr(g, name, None)
        if val:
            procs.append(cls(list(val)) if name == "suppress_tokens" else cls(list(val), 0))
            used[name] = list(val)
    return procs, used


def first_step_probabilities(vqa, enc: dict):
    """The softmax of the first generated token's scores, as ``generate(output_scores=True)`` returns them.

    The last position's logits after the greedy logits processors of the checkpoint's generation config
    (:func:`greedy_processors`), each row's processors seeing that row's prompt tokens only (unpadded).

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded decoder-only VLM.
    enc : dict
        Its left-padded prompt batch (:func:`first_token_inputs`).

    Returns
    -------
    torch.Tensor
        float64 ``(rows, vocabulary)`` probabilities on the CPU.
    """
    import torch

    with autocast(vqa.device, vqa.dtype):
        if vqa._keeps_logits:
            logits = vqa.model(**enc, logits_to_keep=1).logits[:, -1, :]
        else:
            logits = vqa.model(**enc).logits[:, -1, :]
    scores = logits.float()
    procs, _ = greedy_processors(vqa.model.generation_config)
    rows = []
    for r in range(scores.shape[0]):
        row = scores[r:r + 1]
        prompt = enc["input_ids"][r][enc["attention_mask"][r].bool()].unsqueeze(0)
        for p in procs:
            row = p(prompt, row)
        rows.append(torch.softmax(row.double(), dim=-1)[0])
    return torch.stack(rows).cpu()


def first_token_scores(vqa, images: Sequence, items: Sequence[tuple[str, str]]) -> list[float]:
    """P(answer's first token) at the first generated position, as t2v_metrics reads ``generate``'s scores.

    After the greedy logits processors of the checkpoint's generation config (:func:`first_step_probabilities`).

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded decoder-only VLM (Qwen2-VL, PaliGemma, LLaVA-OneVision, ...).
    images : sequence of PIL.Image.Image
        One image per item.
    items : sequence of (str, str)
        ``(question, answer)`` per image.

    Returns
    -------
    list of float
        The softmax probability of each answer's first token.

    Raises
    ------
    ts2viz.errors.InputError
        When an answer has no tokens.
    """
    ids = []
    for _, answer in items:
        enc_a = vqa.tokenizer.encode(answer, add_special_tokens=False)
        if not enc_a:
            raise InputError(f"VQA {vqa.model_id}: the answer {answer!r} has no tokens")
        ids.append(enc_a[0])
    probs = first_step_probabilities(vqa, first_token_inputs(vqa, images, [q for q, _ in items]))
    return [float(probs[r, i]) for r, i in enumerate(ids)]


def variant_sum_scores(vqa, images: Sequence, items: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
    """GenEval 2's reading: the *sum* over an answer's spellings of P(the spelling's first token), one step.

    GenEval 2's ``send_message_with_image`` (facebookresearch/GenEval2 ``evaluation.py``): the processor's
    own chat prompt and image processing, ``generate(max_new_tokens=1, do_sample=False)``, the softmax of
    the first step's scores, and for each spelling ``tokenizer.encode(spelling)[0]``'s probability added
    up: a spelling listed twice, or two spellings that start with the same token, count twice.

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded decoder-only VLM (GenEval 2 uses Qwen3-VL-8B-Instruct).
    images : sequence of PIL.Image.Image
        One image per item.
    items : sequence of (str, sequence of str)
        ``(question, spellings)`` per image.

    Returns
    -------
    list of float
        The summed probabilities (not capped at 1).

    Raises
    ------
    ts2viz.errors.InputError
        When a spelling has no tokens.
    """
    ids = []
    for _, spellings in items:
        row = []
        for w in spellings:
            enc_w = vqa.tokenizer.encode(w)
            if not enc_w:
                raise InputError(f"VQA {vqa.model_id}: the answer {w!r} has no tokens")
            row.append(enc_w[0])
        ids.append(row)
    probs = first_step_probabilities(vqa, vqa._inputs(images, [q for q, _ in items]))
    return [float(sum(float(probs[r, i]) for i in row)) for r, row in enumerate(ids)]


def end_token_inputs(vqa, image, question: str) -> dict:
    """One prompt as t2v_metrics 3.1 builds it for the architecture (a batch of one).

    Qwen2-VL / Qwen2.5-VL / Qwen3-VL / Qwen3.5: the chat template (Qwen3.5 with ``enable_thinking=False``),
    the image resized by ``qwen_vl_utils`` (factor 28, Qwen3-VL and Qwen3.5 two image patches) and the
    processor called with ``do_resize=False``; other models (Gemma 3): the processor's chat prompt and image
    processing (:meth:`~ts2viz.metrics.backbones.vqa.generative.GenerativeVQA._inputs`).

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        The loaded VLM.
    image : PIL.Image.Image
        The image.
    question : str
        The question, as asked.

    Returns
    -------
    dict
        The model's keyword inputs (on its device; pixel values in its dtype).
    """
    kind = getattr(vqa.model.config, "model_type", "")
    if kind not in QWEN_VL_KINDS:
        return vqa._inputs([image], [question])
    factor = QWEN_FACTOR if kind in ("qwen2_vl", "qwen2_5_vl") else 2 * int(vqa.processor.image_processor.patch_size)
    extra = {"enable_thinking": False} if kind.startswith("qwen3_5") else {}
    text = image_chat_prompt(vqa.processor, question, **extra)
    enc = vqa.processor(text=[text], images=[qwen_resize(image.convert("RGB"), factor)], padding=True,
                        return_tensors="pt", do_resize=False)
    return on_device(enc, vqa.device, vqa.model.dtype)


#: the model types t2v_metrics 3.1 reads through qwen_vl_utils (``qwen2vl_model.py``, ``qwen3vl_model.py``)
QWEN_VL_KINDS = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe")


def end_token_scores(vqa, images: Sequence, items: Sequence[tuple[str, str]], *, temperature: float = 1.0,
                     max_new_tokens: int = 1) -> list[tuple[float, str]]:
    """t2v_metrics 3.1's VQAScore reading: the answer's tokens scored at the end of greedy generation.

    As ``qwen2vl_model.py`` / ``qwen3vl_model.py`` / ``gemma3_model.py`` ``forward`` in v3.1: one prompt at a
    time, ``generate(max_new_tokens, do_sample=False, output_scores=True)``; when the last generated token
    is the end, begin or padding token it is skipped (at most ``len(scores) - 1`` answer tokens); when fewer
    tokens were generated than the answer has, only the answer's first ones are scored; the ``k`` answer
    tokens are compared with the last ``k`` scored steps, each step's probability
    ``softmax(scores / temperature)`` at the answer's token, and the score is their geometric mean.

    Parameters
    ----------
    vqa : ts2viz.metrics.backbones.vqa.generative.GenerativeVQA
        A loaded decoder-only VLM.
    images : sequence of PIL.Image.Image
        One image per item.
    items : sequence of (str, str)
        ``(question, answer)`` per image.
    temperature : float, optional
        Divides the scores before the softmax (t2v_metrics 3.1's ``temperature``; generation itself is greedy).
    max_new_tokens : int, optional
        Tokens generated (t2v_metrics 3.1: 1).

    Returns
    -------
    list of (float, str)
        Per item its score and the generated text. The score is NaN where t2v_metrics 3.1 raises
        ``ValueError`` (nothing left to score: the only generated token is the end token).

    Raises
    ------
    ts2viz.errors.InputError
        When an answer has no tokens.
    """
    import torch

    tok = vqa.tokenizer
    special = {tok.eos_token_id, tok.bos_token_id, tok.pad_token_id} - {None}
    out = []
    for image, (question, answer) in zip(images, items):
        ids = tok.encode(answer, add_special_tokens=False)
        if not ids:
            raise InputError(f"VQA {vqa.model_id}: the answer {answer!r} has no tokens")
        enc = end_token_inputs(vqa, image, question)
        with torch.inference_mode(), autocast(vqa.device, vqa.dtype):
            gen = vqa.model.generate(**enc, max_new_tokens=int(max_new_tokens), do_sample=False, temperature=1.0,
                                     output_scores=True, return_dict_in_generate=True)
        new = gen.sequences[0][enc["input_ids"].shape[1]:]
        text = tok.decode(new, skip_special_tokens=True)
        n, offset = len(ids), 0
        if int(new[-1]) in special:
            n, offset = min(n, len(gen.scores) - 1), 1
            if n <= 0:
                out.append((float("nan"), text))
                continue
        if len(gen.scores) < n:
            n = len(gen.scores)
            ids = ids[:n]
        logps = [float(torch.log_softmax(gen.scores[s][0].double().cpu() / float(temperature), dim=-1)[ids[i]])
                 for i, s in enumerate(scored_steps(len(gen.scores), n, offset))]
        out.append((geometric_mean_probability(logps), text))
    return out


def scored_steps(n_steps: int, n_answer: int, offset: int) -> list[int]:
    """The generated steps t2v_metrics 3.1 reads the answer's tokens at: the last ``n_answer`` before ``offset``.

    Parameters
    ----------
    n_steps : int
        Steps generated.
    n_answer : int
        Answer tokens scored.
    offset : int
        1 when the last generated token (an end token) is skipped, else 0.

    Returns
    -------
    list of int
        Indices into ``generate``'s ``scores``, in the answer's order.

    Examples
    --------
    >>> scored_steps(3, 2, 0), scored_steps(3, 2, 1), scored_steps(1, 1, 0)
    ([1, 2], [0, 1], [0])
    """
    return [n_steps - (n_answer - i + offset) for i in range(n_answer)]


def geometric_mean_probability(logps: Sequence[float]) -> float:
    """``exp(mean(log p))``: the geometric mean of the answer tokens' probabilities (t2v_metrics 3.1).

    Parameters
    ----------
    logps : sequence of float
        The tokens' log-probabilities.

    Returns
    -------
    float
        The geometric mean probability.

    Examples
    --------
    >>> round(geometric_mean_probability([math.log(0.25), math.log(1.0)]), 12)
    0.5
    """
    return math.exp(sum(logps) / len(logps))
