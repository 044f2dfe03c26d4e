"""Devices, compute dtypes and GPU out-of-memory handling, shared by every family and backbone."""
from __future__ import annotations

import contextlib
import warnings
from contextvars import ContextVar
from typing import Any, Callable, Iterator

from ...errors import InputError

# -- devices and dtypes ----------------------------------------------------------------------------

def resolve_device(device: str | None) -> str:
    """A torch device name, checked against what torch can use.

    Parameters
    ----------
    device : str or None
        ``cuda``, ``cuda:N``, ``mps`` or ``cpu`` (any case); None or ``auto`` picks cuda, then mps, then
        cpu, whichever torch can use first.

    Returns
    -------
    str
        The device name, lower-cased.

    Raises
    ------
    InputError
        If the device kind is unknown, or CUDA or MPS is requested but not available to torch.
    """
    import torch

    if device is None or device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    d = str(device).lower()
    device_type = d.split(":")[0]
    if device_type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r} requested but no CUDA GPU is available to torch "
                         "(use --device cpu)")
    if device_type == "mps" and not (getattr(torch.backends, "mps", None) is not None
                              and torch.backends.mps.is_available()):
        raise InputError(f"device {device!r} requested but Apple MPS is not available (use --device cpu)")
    if device_type not in ("cuda", "cpu", "mps"):
        raise InputError(f"unknown device {device!r}: expected cuda, cpu or mps")
    return d


#: the dtype names :func:`resolve_dtype` accepts, and what they mean
DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16"}
#: the default GPU dtype of the family being built (its card's precision), see :func:`family_precision`
_PRECISION: ContextVar[str | None] = ContextVar("ts2viz_family_precision", default=None)
#: the dtypes resolved while a family is built, see :func:`family_precision`
_RESOLVED: ContextVar[list | None] = ContextVar("ts2viz_resolved_dtypes", default=None)


@contextlib.contextmanager
def family_precision(precision: str | None) -> Iterator[list]:
    """A context in which a family's metric is built with the family's GPU precision.

    Inside it, ``precision`` (the family card's, the original's compute dtype on GPU) is the default GPU
    dtype of :func:`resolve_dtype`, and every dtype resolved is collected in the yielded list.

    :func:`ts2viz.metrics.load` builds every metric inside this, and records what was collected in the
    metric's ``config["dtype"]``. ``precision=None`` keeps ts2viz's generic default (bfloat16 on a GPU that
    supports it, else float16). A ``dtype`` option still wins, and the CPU stays float32.

    Parameters
    ----------
    precision : str or None
        A name of :data:`DTYPES` (``float32``, ``fp16``, ``bfloat16``, ...), or None.

    Yields
    ------
    list of str
        The names of the dtypes resolved inside the context, in order (filled as they are resolved).

    Raises
    ------
    InputError
        If ``precision`` is not a name of :data:`DTYPES`.

    Examples
    --------
    >>> with family_precision("float16") as used:
    ...     pass
    >>> used
    []
    """
    if precision is not None and precision not in DTYPES:
        raise InputError(f"unknown precision {precision!r}: expected float32, float16 or bfloat16")
    used: list = []
    t1, t2 = _PRECISION.set(None if precision is None else DTYPES[precision]), _RESOLVED.set(used)
    try:
        yield used
    finally:
        _PRECISION.reset(t1)
        _RESOLVED.reset(t2)


def dtype_name(dtype) -> str:
    """The name a config records for a torch dtype.

    Parameters
    ----------
    dtype : torch.dtype or object
        A dtype; its ``str`` is cut after the last dot.

    Returns
    -------
    str
        ``"float32"`` for ``torch.float32``.

    Examples
    --------
    >>> from ts2viz.metrics.common.device import dtype_name
    >>> dtype_name("torch.bfloat16")
    'bfloat16'
    """
    return str(dtype).rpartition(".")[2]


def resolve_dtype(device: str, dtype: str | None = None):
    """The compute dtype of a model on ``device``.

    ``dtype`` (an option: float32, float16, bfloat16) when given; else float32 on CPU; on a CUDA GPU the
    precision of the family being built (:func:`family_precision`), else bfloat16 (float16 without bf16
    support); float16 on MPS (float32 when the family's precision is float32). A bfloat16 precision on a GPU
    without bf16 support gives float16. The result is collected for the metric's config while a family is
    built (:func:`family_precision`).

    Parameters
    ----------
    device : str
        A device name as :func:`resolve_device` gives it.
    dtype : str or None, optional
        A name of :data:`DTYPES`; None or ``auto`` for the default above.

    Returns
    -------
    torch.dtype
        ``torch.float32``, ``torch.float16`` or ``torch.bfloat16``.

    Raises
    ------
    InputError
        If ``dtype`` is not a name of :data:`DTYPES`.
    """
    dt = _resolve_dtype(device, dtype)
    used = _RESOLVED.get()
    if used is not None:
        used.append(dtype_name(dt))
    return dt


def _resolve_dtype(device: str, dtype: str | None):
    import torch

    names = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    if dtype not in (None, "auto"):
        try:
            return names[DTYPES[str(dtype)]]
        except KeyError:
            raise InputError(f"unknown dtype {dtype!r}: expected float32, float16 or bfloat16") from None
    precision = _PRECISION.get()
    if device.startswith("cuda"):
        if precision is not None and (precision != "bfloat16" or torch.cuda.is_bf16_supported()):
            return names[precision]
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float32 if precision == "float32" else torch.float16
    return torch.float32


def autocast(device: str, dtype):
    """Mixed precision on GPU (a no-op context on CPU or for float32).

    Parameters
    ----------
    device : str
        The device name (``cuda``, ``cuda:N``, ``mps``, ``cpu``).
    dtype : torch.dtype
        The compute dtype.

    Returns
    -------
    contextlib.AbstractContextManager
        ``torch.autocast`` for the device's kind and ``dtype`` on CUDA or MPS with a dtype other than
        float32, else a null context.
    """
    import torch

    if dtype == torch.float32 or not (device.startswith("cuda") or device.startswith("mps")):
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.split(":")[0], dtype=dtype)



def on_device(inputs, device: str, dtype) -> dict:
    """A processor's outputs moved to the model: every tensor on ``device``, floating ones also in ``dtype``.

    Parameters
    ----------
    inputs : Mapping
        The processor's outputs (a ``BatchFeature`` or a dict); entries without a ``to`` method are dropped.
    device : str
        The torch device name.
    dtype : torch.dtype
        The model's dtype, for the floating tensors (pixel values).

    Returns
    -------
    dict
        The moved tensors, by name, in the processor's order.
    """
    return {k: (v.to(device).to(dtype) if v.is_floating_point() else v.to(device))
            for k, v in inputs.items() if hasattr(v, "to")}

# -- out of memory ---------------------------------------------------------------------------------

def is_oom(err: BaseException) -> bool:
    """Whether an exception is a GPU out-of-memory error.

    Parameters
    ----------
    err : BaseException
        The exception caught.

    Returns
    -------
    bool
        True for torch's ``OutOfMemoryError`` or a ``RuntimeError`` whose message says "out of memory".

    Examples
    --------
    >>> from ts2viz.metrics.common.device import is_oom
    >>> is_oom(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB")), is_oom(ValueError("out of memory"))
    (True, False)
    """
    import sys

    torch = sys.modules.get("torch")       # no torch loaded, no torch error: not imported here (seconds, on a
    if torch is not None and isinstance(err, getattr(torch.cuda, "OutOfMemoryError", ())):  # job's error path)
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

    Parameters
    ----------
    call : callable
        ``call(start, stop)`` processes items ``start`` to ``stop - 1`` and returns their result.
    n : int
        The number of items.
    batch_size : int
        The first chunk size (at least 1 is used).
    label : str
        Names the work in the warning issued when the chunk size is halved.

    Returns
    -------
    results : list
        The results of the calls, in order (one per chunk).
    batch_size : int
        The chunk size that worked last.

    Examples
    --------
    >>> from ts2viz.metrics.common.device import run_halving_on_oom
    >>> run_halving_on_oom(lambda start, stop: list(range(start, stop)), 5, 2, "demo")
    ([[0, 1], [2, 3], [4]], 2)
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


