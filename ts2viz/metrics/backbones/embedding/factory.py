"""The builder of the embedding metrics: a spec to a transformers or open_clip metric, and the families' factories."""
from __future__ import annotations

from ....errors import InputError
from ...common.base import Metric
from ...common.spec import Spec
from .hf import HFEmbeddingScore
from .openclip import OpenCLIPScore
from .options import BASE_VARIANTS


def build(spec: Spec, device: str | None = None, *, variants: tuple = BASE_VARIANTS, text_length: int | None = None,
          openclip: bool = False, **options) -> Metric:
    """The metric of an embedding family's spec (CLIPScore, ALIGNScore, SigLIP): its family says how.

    Parameters
    ----------
    spec : Spec
        The parsed spec: a transformers model (hub id or folder), or ``openclip:ARCH/TAG`` (where the family
        takes open_clip models).
    device : str or None, optional
        The torch device; None picks one.
    variants : tuple of str, optional
        The score variants the family offers (the default first).
    text_length : int or None, optional
        The text length the family's public checkpoints were trained with (prompts are cut there; None: the
        text encoder's positions).
    openclip : bool, optional
        Whether the family takes open_clip models (``openclip:ARCH/TAG``).
    **options
        ``batch_size``, ``dtype``, ``variant``, ``preprocess`` (:func:`~ts2viz.metrics.backbones.embedding.options.embedding_options`).

    Returns
    -------
    Metric
        An :class:`~ts2viz.metrics.backbones.embedding.openclip.OpenCLIPScore` or an
        :class:`~ts2viz.metrics.backbones.embedding.hf.HFEmbeddingScore`.

    Raises
    ------
    InputError
        If an open_clip model is given to another family than CLIPScore, an option is unknown or not
        accepted, or the model cannot be loaded.
    """
    if spec.is_openclip:
        if not openclip:
            raise InputError(f"metric {spec.raw!r}: openclip: models are only supported for clipscore")
        return OpenCLIPScore(spec, device, variants=variants, **options)
    return HFEmbeddingScore(spec, device, variants=variants, text_length=text_length, **options)


def family_factory(module: str, *, variants: tuple = BASE_VARIANTS, text_length: int | None = None,
                   openclip: bool = False):
    """The factory of an embedding family: :func:`build` with the family's variants, text length and backends.

    Parameters
    ----------
    module : str
        The family's module (``__name__``), which the factory is recorded in (its card and models are there).
    variants : tuple of str, optional
        The score variants the family offers (the default first).
    text_length : int or None, optional
        The text length the family's public checkpoints were trained with (None: the text encoder's positions).
    openclip : bool, optional
        Whether the family takes open_clip models (``openclip:ARCH/TAG``).

    Returns
    -------
    callable
        ``build(spec, device=None, *, batch_size=None, dtype=None, variant=None, preprocess="original")``.
    """
    def factory(spec: Spec, device: str | None = None, *, batch_size: int | None = None,
                dtype: str | None = None, variant: str | None = None, preprocess: str = "original") -> Metric:
        """The family's metric of ``spec`` on ``device``: the shared dual encoder with the family's defaults.

        Parameters
        ----------
        spec : Spec
            The parsed spec (``FAMILY:MODEL[?batch_size=N&dtype=...]``).
        device : str or None, optional
            The torch device; None picks one.
        batch_size, dtype, variant, preprocess
            The family's options; their meaning is on the family's card.

        Returns
        -------
        Metric
            The metric.
        """
        return build(spec, device, batch_size=batch_size, dtype=dtype, variant=variant, preprocess=preprocess,
                     variants=variants, text_length=text_length, openclip=openclip)

    factory.__module__ = module
    factory.__name__ = factory.__qualname__ = "build"
    return factory
