"""The options and score variants of the embedding families (CLIPScore, ALIGNScore, SigLIP).

The variants themselves are described in :mod:`ts2viz.metrics.backbones.embedding`; their formulas over the
cosine are :mod:`~ts2viz.metrics.backbones.embedding.score`'s.
"""
from __future__ import annotations

from ....errors import InputError
from ...common.spec import Spec
from ...family import Option

#: the options of clipscore:, alignscore: and siglip: (their cards list them)
EMBEDDING_OPTIONS = (
    Option("batch_size", None, "Images per model call (default 32 on CPU, 256 on CUDA, 64 on MPS; halved on GPU "
           "out-of-memory). Speed only."),
    Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: the card's "
           "precision, else bfloat16 where the GPU supports it, else float16; always float32 on CPU).",
           ("float32", "float16", "bfloat16")),
)



def embedding_options(variants: tuple = ()) -> tuple:
    """The options of an embedding family (CLIPScore, ALIGNScore, SigLIP) as its card lists them.

    Parameters
    ----------
    variants : tuple of str, optional
        The score variants the family offers, the default first (empty: :data:`BASE_VARIANTS`); the
        ``variant`` option lists them.

    Returns
    -------
    tuple of Option
        ``batch_size``, ``dtype``, ``variant`` and ``preprocess``.

    Examples
    --------
    >>> [o.name for o in embedding_options()]
    ['batch_size', 'dtype', 'variant', 'preprocess']
    >>> embedding_options(("ts2", "cosine", "hessel"))[2].values
    ('ts2', 'cosine', 'hessel')
    """
    variants = variants or BASE_VARIANTS
    docs = {"ts2": "`ts2` (default: TS2's own code, the model's `logits_per_image` for the prompt as is)",
            "cosine": "`cosine` (the raw cosine in [-1, 1])",
            "hessel": "`hessel` (J. Hessel et al.'s CLIP-S: 2.5 · max(cos, 0) of \"A photo depicts \" + prompt, "
                      "their torchvision preprocessing, float16 on GPU)",
            "torchmetrics": "`torchmetrics` (torchmetrics' `clip_score`: 100 · max(cos, 0), over-long prompts "
                            "cut without an end token)"}
    return EMBEDDING_OPTIONS + (
        Option("variant", "ts2", "The score: " + ", ".join(docs[v] for v in variants) + ".", variants),
        Option("preprocess", "original", "`original` (the originals' image preparation: transformers' PIL "
               "processor, or Hessel's torchvision pipeline) or `fast` (the processor's torchvision backend: faster, "
               "numbers differ from the originals' in the 4th digit). transformers models only.", PREPROCESS),
    )

#: the score variants every embedding family offers (the package docstring); the first is the default
BASE_VARIANTS = ("ts2", "cosine")
#: every variant the embedding metrics compute (a family offers some of them)
ALL_VARIANTS = ("ts2", "cosine", "hessel", "torchmetrics")
DEFAULT_VARIANT = "ts2"
#: how images are prepared: as the variant's original did, or the processor's torchvision backend
PREPROCESS = ("original", "fast")
#: the compute dtype on GPU of each variant's original: Hessel's script runs CLIP in float16 on a GPU
#: (``clip.load``), TS2 and torchmetrics load transformers models in float32
VARIANT_PRECISION = {"ts2": "float32", "cosine": "float32", "hessel": "float16", "torchmetrics": "float32"}


def check_variant(spec: Spec, variant: str | None, allowed: tuple = BASE_VARIANTS) -> str:
    """``variant`` (default :data:`DEFAULT_VARIANT`) if the family offers it, else a one-line error.

    Parameters
    ----------
    spec : Spec
        The parsed spec (named in the message).
    variant : str or None
        The ``variant`` option; None or empty for the default.
    allowed : tuple of str, optional
        The variants the family offers.

    Returns
    -------
    str
        The variant.

    Raises
    ------
    InputError
        If the family does not offer it.

    Examples
    --------
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> check_variant(parse_spec("clipscore:openai/clip-vit-base-patch32"), None, ALL_VARIANTS)
    'ts2'
    >>> check_variant(parse_spec("siglip:google/siglip-base-patch16-224"), "hessel")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'siglip:google/siglip-base-patch16-224': variant must be one of ts2, cosine, not 'hessel'
    """
    v = DEFAULT_VARIANT if variant in (None, "") else str(variant)
    if v not in allowed:
        raise InputError(f"metric {spec.raw!r}: variant must be one of {', '.join(allowed)}, not {v!r}")
    return v


def variant_dtype(device: str, variant: str, dtype: str | None) -> str | None:
    """The dtype option to load with: ``dtype`` when given, else the variant's original precision on a GPU.

    The variant's precision is :data:`VARIANT_PRECISION`'s; on MPS a float32 variant stays float32; None
    (the family's default) elsewhere.

    Parameters
    ----------
    device : str
        The resolved torch device.
    variant : str
        The score variant.
    dtype : str or None
        The ``dtype`` option (None, empty or ``auto``: not given).

    Returns
    -------
    str or None
        A dtype name for :func:`~ts2viz.metrics.common.device.resolve_dtype`, or None.

    Examples
    --------
    >>> variant_dtype("cuda:0", "hessel", None), variant_dtype("cuda", "ts2", "bfloat16"), variant_dtype("cpu", "ts2", None)
    ('float16', 'bfloat16', None)
    """
    if dtype not in (None, "", "auto"):
        return dtype
    if device.startswith("cuda"):
        return VARIANT_PRECISION[variant]
    if device.startswith("mps") and VARIANT_PRECISION[variant] == "float32":
        return "float32"
    return None
