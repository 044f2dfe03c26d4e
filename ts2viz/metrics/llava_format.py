"""LLaVA-1.5's input conventions, which t2v_metrics uses for both its LLaVA-1.5 and CLIP-FlanT5 VQAScore.

The system message and ``USER: <image>\\n... ASSISTANT:`` turn, the ``<image>`` placeholder and the id
that stands for it in token lists, the context length, and the square padding of images.
"""
from __future__ import annotations

from typing import Sequence

#: the placeholder t2v_metrics writes where the image goes (LLaVA's DEFAULT_IMAGE_TOKEN)
IMAGE_PLACEHOLDER = "<image>"
#: the id t2v_metrics gives that placeholder in token lists (LLaVA's IMAGE_TOKEN_INDEX)
IMAGE_SENTINEL = -200
#: LLaVA-1.5's system message, which t2v_metrics puts before CLIP-FlanT5's and LLaVA-1.5's questions
SYSTEM_MESSAGE = ("A chat between a curious user and an artificial intelligence assistant. The assistant gives "
                  "helpful, detailed, and polite answers to the user's questions.")
#: token budget t2v_metrics truncates CLIP-FlanT5's prompts and answers to (its CONTEXT_LEN)
CONTEXT_LEN = 2048


def chat_question(question: str) -> str:
    """The stage-2 conversation turn before the answer (t2v_metrics' ``chat`` / ``t5_chat``)."""
    return f"{SYSTEM_MESSAGE} USER: {IMAGE_PLACEHOLDER}\n{question} ASSISTANT: "


def expand_to_square(image, mean: Sequence[float]):
    """``image`` centred on a square canvas of the processor's mean colour (LLaVA-1.5's ``expand2square``,
    which t2v_metrics applies before CLIP-FlanT5's and LLaVA-1.5's image processor)."""
    from PIL import Image

    w, h = image.size
    if w == h:
        return image
    side = max(w, h)
    canvas = Image.new(image.mode, (side, side), tuple(int(x * 255) for x in mean))
    canvas.paste(image, ((side - w) // 2, (side - h) // 2))
    return canvas
