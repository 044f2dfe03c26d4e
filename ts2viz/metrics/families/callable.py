"""``callable:``: a user's Python function ``f(images, prompts) -> scores`` as a metric (``callable:module:function``)."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

CARD = Card(
    summary=("A Python function `f(images, prompts) -> scores` as a metric: `callable:module:function` (a "
             "module importable from the current folder, as with `python -m`) or "
             "`callable:path/file.py:function`; it gets RGB PIL images and one prompt per image and returns one "
             "number per image."),
    fixture=("not compared: the user's own function is the metric (there is no original)."),
    output_range="whatever the function returns",
    higher_is_better=None,
    options=(
        Option("batch_size", 32, "Images per call of the function."),
        Option("lower_is_better", None, "Declare the scores lower-is-better (default: the function's "
               "`higher_is_better` attribute, else higher is better)."),
    ),
    fidelity=(
        Fidelity("the metric", "the function's own numbers, unchanged", "as the original"),
    ),
    limitations=(
        "Runs code named by the spec: never offered to an untrusted caller (a public app's visitor).",
        "The cache key holds a hash of the function's source file and its `version` attribute: editing the "
        "file invalidates its cached scores, a change in a module it imports does not.",
    ),
    description="""The function may carry the attributes `higher_is_better` (default True) and `version` (part
of the cache key). The cache key also includes a hash of the function's source file, so editing the function
invalidates its cached scores.

```python
# mypkg/metrics.py
def my_score(images, prompts):
    return [float(len(p)) for p in prompts]
my_score.version = "1"
```

`ts2viz score --metric callable:mypkg.metrics:my_score ...`
""",
)


def import_from_here(mod_name: str):
    """Import a module as ``python -m`` would: the current working folder first on the path.

    The ``ts2viz`` console script, unlike ``python -m ts2viz``, does not put the current folder on
    ``sys.path``; ``callable:redness:score`` in the folder that holds ``redness.py`` works either way.

    Parameters
    ----------
    mod_name : str
        A dotted module name.

    Returns
    -------
    module
        The imported module.
    """
    here = os.getcwd()
    added = not any(p in ("", here) for p in sys.path)
    if added:
        sys.path.insert(0, here)
    try:
        return importlib.import_module(mod_name)
    finally:
        if added and here in sys.path:
            sys.path.remove(here)


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
            module = import_from_here(mod_name)
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

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec (its model is ``module:function``).
    fn : callable
        The function.
    batch_size : int, default 32
        Images per call of the function.
    lower_is_better : bool or None, optional
        Declare the scores lower-is-better; None: the function's ``higher_is_better`` attribute.
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
        """The function's scores of a batch of RGB PIL images, flattened to float64.

        Parameters
        ----------
        items : sequence
            The prepared images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            The function's numbers, one per image.

        Raises
        ------
        InputError
            If the function returns something that is not a sequence of numbers.
        """
        out = self.fn(images=list(items), prompts=list(prompts))
        try:
            arr = np.asarray(out, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"metric {self.spec!r}: the function returned {type(out).__name__}, "
                             "not a sequence of numbers") from None
        return arr


def build(spec: Spec, device: str | None = None, **options) -> Metric:
    """The ``callable:`` metric of ``spec``: a user's function as a metric.

    Parameters
    ----------
    spec : Spec
        The parsed spec (its model is ``module:function`` or ``path/file.py:function``).
    device : str or None, optional
        The torch device; None picks one (unused: the function runs as it runs).
    **options
        ``batch_size`` and ``lower_is_better``; their meaning is on the family's card (:data:`CARD`).

    Returns
    -------
    Metric
        The metric (a :class:`CallableMetric`).

    Raises
    ------
    InputError
        For an unknown option, a malformed spec, or a module or function that cannot be imported.
    """
    fn = _import_callable(spec.model, spec)
    allowed = {"batch_size", "lower_is_better"}
    bad = set(options) - allowed
    if bad:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(bad))}")
    return CallableMetric(spec, fn, **options)


#: the options :func:`build` takes through ``**options``
build.extra_options = ("batch_size", "lower_is_better")


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('callable',
                'a Python function f(images, prompts) -> scores, named module:function',
                build, CARD, example='callable:mypkg.metrics:my_score', group='user', trusted_only=True, revisions=False,
                display='callable')
