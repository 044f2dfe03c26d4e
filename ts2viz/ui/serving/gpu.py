"""The model call on a ZeroGPU Space: wrapped with ``spaces.GPU`` when the ``spaces`` package is there.

On a ZeroGPU Hugging Face Space a process holds a GPU only while a function decorated with
``spaces.GPU`` runs. Elsewhere (``spaces`` not installed) :func:`on_gpu` returns the function as is.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

#: seconds of GPU one scoring call may hold on ZeroGPU (one SEG, or up to 16 uploaded images)
GPU_SECONDS = 120


@functools.lru_cache(maxsize=None)
def on_gpu(fn: F) -> F:
    """A scoring function as a ZeroGPU Space runs it: ``spaces.GPU(duration=GPU_SECONDS)(fn)``.

    Parameters
    ----------
    fn : callable
        The function that calls the model.

    Returns
    -------
    callable
        The wrapped function when ``spaces`` is importable, else ``fn`` itself (memoised: one wrapper per
        function).
    """
    try:
        import spaces  # type: ignore[import-not-found]
    except ImportError:
        return fn
    return spaces.GPU(duration=GPU_SECONDS)(fn)
