"""Image preparation of the transformers embedding metrics besides the processor's own call: the processor's steps on tensors (Hessel et al.'s pipeline is :mod:`ts2viz.metrics.common.clip_prep`'s)."""
from __future__ import annotations


#: torchvision-backed image processors whose preprocessing is the backend's generic resize / crop /
#: rescale-normalise pipeline (transformers 5), so that :func:`clip_fast_preprocess` may run its steps
GENERIC_PIPELINE_PROCESSORS = frozenset({"CLIPImageProcessor", "SiglipImageProcessor"})


def clip_fast_preprocess(ip):
    """A faster call of a torchvision-backed image processor (CLIP's in transformers 5) on one image.

    Runs the processor's own resize, centre-crop and fused rescale-normalise steps on a uint8 tensor,
    so the numbers are the processor's (tested), skipping its per-call argument validation and
    grouping, which cost as much as a ViT-B/32 forward pass per image. Falls back to the full call for
    any image the shortcut cannot take.

    Parameters
    ----------
    ip : transformers.BaseImageProcessor
        The image processor.

    Returns
    -------
    callable or None
        ``prepare(image) -> torch.Tensor`` (the image's pixel values, unbatched); None when ``ip`` is not
        a torchvision-backed processor of :data:`GENERIC_PIPELINE_PROCESSORS`, pads, or does not resize.
    """
    try:
        from transformers.image_processing_backends import TorchvisionBackend
    except ImportError:
        return None
    # Only processors known to use the backend's generic pipeline unchanged (CLIP's, SigLIP's, checked
    # against the full call in the tests); others (EfficientNet's extra rescale offset, for ALIGN) take
    # the reference path.
    if not isinstance(ip, TorchvisionBackend) or type(ip).__name__ not in GENERIC_PIPELINE_PROCESSORS:
        return None
    if getattr(ip, "do_pad", False) or not getattr(ip, "do_resize", False):
        return None
    try:
        from torchvision.transforms.functional import pil_to_tensor
    except ImportError:
        return None

    def prepare(image):
        try:
            t = pil_to_tensor(image)
            t = ip.resize(image=t, size=ip.size, resample=ip.resample)
            if ip.do_center_crop:
                t = ip.center_crop(t, ip.crop_size)
            return ip.rescale_and_normalize(t, ip.do_rescale, ip.rescale_factor, ip.do_normalize,
                                            ip.image_mean, ip.image_std)
        except Exception:  # noqa: BLE001 - an unusual image or processor: the reference path decides
            return ip(images=image, return_tensors="pt")["pixel_values"][0]

    return prepare
