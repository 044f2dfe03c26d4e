"""Kept for old imports: :class:`Metric` lives in :mod:`ts2viz.metrics.common.base`, devices in ``.common.device``, model loading in ``.common.hub``."""
from .common.base import Metric, load_image, score_with_oom_retry
from .common.device import autocast, free_gpu, is_oom, resolve_device, resolve_dtype, run_halving_on_oom
from .common.hub import (OFFLINE_ADVICE, check_hub_model_available, check_model_id, file_fingerprint,
                         folder_fingerprint, hf_load, hub_answers, is_local_model, model_identity)

__all__ = ["Metric", "load_image", "score_with_oom_retry", "autocast", "free_gpu", "is_oom", "resolve_device",
           "resolve_dtype", "run_halving_on_oom", "OFFLINE_ADVICE", "check_hub_model_available", "check_model_id",
           "file_fingerprint", "folder_fingerprint", "hf_load", "hub_answers", "is_local_model", "model_identity"]
