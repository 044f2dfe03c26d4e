"""Devices, compute dtypes and GPU out-of-memory handling, shared by every family and backbone."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

from ...errors import InputError


# -- devices and dtypes ----------------------------------------------------------------------------

def resolve_device(device: str | None) -> str:
    """``device`` checked against what torch can use; ``None`` picks cuda, then mps, then cpu."""
    import torch

    if device is None or device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    d = str(device).lower()
    kind = d.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r} requested but no CUDA GPU is available to torch "
                         "(use --device cpu)")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) is not None
                              and torch.backends.mps.is_available()):
        raise InputError(f"device {device!r} requested but Apple MPS is not available (use --device cpu)")
    if kind not in ("cuda", "cpu", "mps"):
        raise InputError(f"unknown device {device!r}: expected cuda, cpu or mps")
    return d


def resolve_dtype(device: str, dtype: str | None = None):
    """The compute dtype: float32 on CPU, bfloat16 (or float16 without bf16 support) on GPU by default."""
    import torch

    if dtype not in (None, "auto"):
        try:
            return {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                    "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}[str(dtype)]
        except KeyError:
            raise InputError(f"unknown dtype {dtype!r}: expected float32, float16 or bfloat16") from None
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def autocast(device: str, dtype):
    """Mixed precision on GPU (a no-op context on CPU or for float32)."""
    import torch

    if dtype == torch.float32 or not (device.startswith("cuda") or device.startswith("mps")):
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.split(":")[0], dtype=dtype)


# -- out of memory ---------------------------------------------------------------------------------

def is_oom(err: BaseException) -> bool:
    """Whether ``err`` is a GPU out-of-memory error (torch's own class or a RuntimeError saying so)."""
    import torch

    if isinstance(err, getattr(torch.cuda, "OutOfMemoryError", ())):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def free_gpu() -> None:
    """Release cached GPU memory (after an out-of-memory error, or when a model is dropped)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_halving_on_oom(call: Callable[[int, int], Any], n: int, batch_size: int, label: str) -> tuple[list, int]:
    """Run ``call(start, stop)`` over ``range(n)`` in chunks of ``batch_size``, halving on GPU out-of-memory.

    This is the one place where ts2viz survives running out of GPU memory: the chunk that failed is
    retried at half the size, and the smaller size sticks so that a run does not keep hitting the
    limit. Out of memory at chunk size 1, and every other error, is re-raised.

    Returns ``(results of the calls in order, batch size that worked)``.
    """
    results: list = []
    batch_size = max(1, int(batch_size))
    i = 0
    while i < n:
        m = min(batch_size, n - i)
        try:
            results.append(call(i, i + m))
        except Exception as e:  # noqa: BLE001 - only OOM is handled, the rest re-raised
            if not is_oom(e) or m == 1:
                raise
            free_gpu()
            batch_size = max(1, m // 2)
            warnings.warn(f"{label}: out of GPU memory at batch size {m}; retrying with {batch_size}",
                          stacklevel=3)
            continue
        i += m
    return results, batch_size


