"""Kept for old imports: ``Metric``, image loading, devices and model loading now live in :mod:`ts2viz.metrics.common`."""
from .common.base import Metric, load_image, score_with_oom_retry  # noqa: F401
from .common.device import autocast, free_gpu, is_oom, resolve_device, resolve_dtype, run_halving_on_oom  # noqa: F401
from .common.hub import (OFFLINE_ADVICE, check_hub_model_available, check_model_id, file_fingerprint,  # noqa: F401
                         folder_fingerprint, hf_load, is_local_model, model_identity)
