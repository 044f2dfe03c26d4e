"""``callable:`` metrics for the nuisance tests: each reads one thing only, so what a transform does to it
is known without a model (tests/nuisance). Referenced as ``callable:<this file>:<function>``."""
from __future__ import annotations

import numpy as np


def height(images, prompts):
    """Minus the image's height in pixels: reads nothing a JPEG re-encoding or a brightness change alters."""
    return [-float(im.size[1]) for im in images]


def prompt_length(images, prompts):
    """The prompt's length in characters: reads no pixel, so it has no error steps on any SEG."""
    return [float(len(p)) for p in prompts]


def mean_brightness(images, prompts):
    """The mean of all channel values of the RGB image, over 255."""
    return [float(np.asarray(im, dtype=np.float64).mean() / 255.0) for im in images]
