"""The open_clip backend of CLIPScore: ``openclip:ARCH/TAG``, a pretrained tag or a checkpoint file."""
from __future__ import annotations

from ....errors import InputError
from ...common.device import autocast, resolve_device, resolve_dtype
from ...common.pretrained import file_fingerprint
from ...common.spec import Spec
from .options import ALL_VARIANTS, check_variant, variant_dtype
from .score import EmbeddingScore, logit_constants


class OpenCLIPScore(EmbeddingScore):
    """CLIPScore through open_clip: ``openclip:ARCH/TAG`` with TAG a pretrained tag or a checkpoint file.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    batch_size, dtype, variant, preprocess
        The family's options (:func:`~ts2viz.metrics.backbones.embedding.options.embedding_options`); ``preprocess`` must be ``original`` (the model's
        own transform).
    variants : tuple of str, optional
        The variants the family offers (``variant`` must be one).
    **options
        Anything else is refused.

    Raises
    ------
    InputError
        For an unknown option, ``preprocess=fast``, a missing TAG, a checkpoint file that does not exist,
        or a model open_clip cannot load.
    """

    def __init__(self, spec: Spec, device: str | None = None, batch_size: int | None = None,
                 dtype: str | None = None, variant: str | None = None, preprocess: str = "original", *,
                 variants: tuple = ALL_VARIANTS, **options):
        import os

        import open_clip

        if options:
            raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(options)}")
        self.variant = check_variant(spec, variant, variants)
        if preprocess != "original":
            raise InputError(f"metric {spec.raw!r}: open_clip models prepare images with their own transform "
                             "(preprocess=original only)")
        arch, tag = spec.openclip_parts()
        if not tag:
            raise InputError(f"metric {spec.raw!r}: give the weights as openclip:{arch}/TAG, TAG a pretrained "
                             f"tag (e.g. {_example_tag(arch)}) or a checkpoint file")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, variant_dtype(dev, self.variant, dtype))
        ckpt = os.path.expanduser(tag)
        is_file = os.path.isfile(ckpt)
        if not is_file and ("/" in tag or tag.endswith((".pt", ".bin", ".safetensors"))):
            raise InputError(f"metric {spec.raw!r}: no checkpoint file {tag!r}")
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                arch, pretrained=ckpt if is_file else tag, device=dev)
            tokenizer = open_clip.get_tokenizer(arch)
        except Exception as e:  # open_clip raises RuntimeError for unknown arch/tag, OSError offline
            msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"metric {spec.raw!r}: cannot load open_clip model {arch}/{tag}: {msg[:300]}") from e
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.context_length = int(getattr(tokenizer, "context_length", None) or 77)
        self.logit_scale, self.logit_bias = logit_constants(model)
        config = {"family": spec.family, "backend": "open_clip", "arch": arch,
                  "pretrained": os.path.abspath(ckpt) if is_file else tag, **self._variant_config()}
        if is_file:
            config["fingerprint"] = file_fingerprint(ckpt)
        super().__init__(spec, config, dev, batch_size, dt)

    def prepare(self, image, file_name: str | None = None):
        """One image through the open_clip model's own transform (thread-safe).

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str or None, optional
            Its file (unused).

        Returns
        -------
        torch.Tensor
            The pixel values, ``(3, n, n)``.
        """
        return self.preprocess(image)

    def _encode_images(self, batch):
        with autocast(self.device, self.dtype):
            return self.model.encode_image(batch.to(self.device))

    def _encode_texts(self, prompts):
        enc = getattr(self.tokenizer, "encode", None)
        if enc is not None:
            for p in prompts:
                try:
                    n = len(enc(p)) + 2  # + start/end tokens
                except Exception:  # an HF-backed open_clip tokenizer: no cheap count, skip the warning
                    break
                if n > self.context_length:
                    self._warn_truncated(p, n, self.context_length)
        tokens = self.tokenizer(prompts).to(self.device)
        with autocast(self.device, self.dtype):
            return self.model.encode_text(tokens)


def _example_tag(arch: str) -> str:
    try:
        import open_clip

        tags = open_clip.list_pretrained_tags_by_model(arch)
        return tags[0] if tags else "laion2b_s34b_b79k"
    except Exception:
        return "laion2b_s34b_b79k"
