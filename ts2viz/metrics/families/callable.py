"""User metrics: a Python callable (``callable:module:function``) or precomputed scores (``csv:PATH``)."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError
from .base import Metric
from .spec import Spec


def _import_callable(target: str, spec: Spec):
    mod_name, sep, fn_name = target.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise InputError(f"metric {spec.raw!r}: expected callable:module:function or callable:path/file.py:function")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name).expanduser().resolve()
            if not path.is_file():
                raise InputError(f"metric {spec.raw!r}: no such file {mod_name!r}")
            name = f"ts2viz_user_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
            module = sys.modules.get(name)
            if module is None:
                ms = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(ms)
                sys.modules[name] = module
                ms.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except InputError:
        raise
    except Exception as e:  # the user's module failed to import: say which and why, in one line
        raise InputError(f"metric {spec.raw!r}: cannot import {mod_name!r} ({type(e).__name__}: {e})") from e
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise InputError(f"metric {spec.raw!r}: {mod_name!r} has no function {fn_name!r}")
    return fn


class CallableMetric(Metric):
    """Wraps ``f(images=[PIL RGB images], prompts=[str]) -> array-like`` of per-image scores.

    The function may carry attributes ``higher_is_better`` (default True) and ``version`` (part of the
    cache key). The cache key also includes a hash of the function's source file, so editing the
    function invalidates its cached scores.
    """

    def __init__(self, spec: Spec, fn, *, batch_size: int = 32, lower_is_better: bool | None = None):
        try:
            src = inspect.getsourcefile(fn)
            source_hash = hashlib.sha1(Path(src).read_bytes()).hexdigest()[:16] if src else None
        except (TypeError, OSError):
            source_hash = None
        config = {"family": "callable", "callable": spec.model, "source": source_hash,
                  "version": getattr(fn, "version", None)}
        super().__init__(spec, config, "cpu", batch_size)
        self.name = "callable"
        self.fn = fn
        hib = getattr(fn, "higher_is_better", True)
        self.higher_is_better = (not lower_is_better) if lower_is_better is not None else bool(hib)
        self.config["higher_is_better"] = self.higher_is_better

    def score_prepared(self, items, prompts) -> np.ndarray:
        out = self.fn(images=list(items), prompts=list(prompts))
        try:
            arr = np.asarray(out, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"metric {self.spec!r}: the function returned {type(out).__name__}, "
                             "not a sequence of numbers") from None
        return arr


def build_callable(spec: Spec, device: str | None = None, **options) -> Metric:
    fn = _import_callable(spec.model, spec)
    allowed = {"batch_size", "lower_is_better"}
    bad = set(options) - allowed
    if bad:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(bad))}")
    return CallableMetric(spec, fn, **options)


class CSVMetric(Metric):
    """Precomputed scores: looks each image up by its file name in a scores file.

    It needs no pixels (the engine neither reads nor hashes image files for it) and is not cached (a
    lookup is cheaper than the cache). A name matches a row of the file exactly or, for a path, by
    suffix (``/data/ts2/images/000-01.jpg`` matches ``images/000-01.jpg``); an image without a name
    (an in-memory PIL image) or without a row gets NaN.
    """

    needs_pixels = False
    cacheable = False

    def __init__(self, spec: Spec, path: Path, column: str | None = None):
        from ..scores import read_scores

        sc = read_scores(path)
        if column is None:
            if len(sc.metrics) != 1:
                raise InputError(f"metric {spec.raw!r}: the file has {len(sc.metrics)} metric columns "
                                 f"({', '.join(sc.metrics)}); pick one with ?column=NAME", file=path)
            column = sc.metrics[0]
        elif column not in sc.metrics:
            raise InputError(f"metric {spec.raw!r}: no column {column!r} (have: {', '.join(sc.metrics)})", file=path)
        st = path.stat()
        config = {"family": "csv", "path": str(path), "column": column, "size": st.st_size,
                  "mtime_ns": st.st_mtime_ns}
        super().__init__(spec, config, "cpu", 1 << 16)
        self.name = "csv"
        self.higher_is_better = column not in sc.lower_is_better
        self._values = dict(zip(sc.file_names, sc.column(column).tolist()))

    def prepare(self, image, file_name: str | None = None) -> str | None:
        return file_name

    def lookup(self, file_name: str | None) -> float:
        """The file's score for ``file_name`` (exact name, else the row whose name the path ends with)."""
        if not file_name:
            return float("nan")
        hit = self._values.get(file_name)
        if hit is not None:
            return float(hit)
        s = Path(file_name).as_posix()
        for name, v in self._values.items():
            if s.endswith("/" + name):
                return float(v)
        return float("nan")

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        return np.array([self.lookup(f) for f in items], dtype=np.float64)


def build_csv(spec: Spec, device: str | None = None, column: str | None = None, **options) -> Metric:
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    path = Path(spec.model).expanduser()
    if not path.is_file():
        raise InputError(f"metric {spec.raw!r}: no such scores file", file=path)
    return CSVMetric(spec, path, column)
