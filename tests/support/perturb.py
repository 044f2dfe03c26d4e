"""Float computations perturbed on purpose: the nearest thing to another CPU on this machine.

A test whose expectation hangs on a near-tie passes on one machine and fails on another (issue 30). The
margins of ``margins.py`` guard against that; these perturbations check the guard: run the tests that
involve models with the sums taken in other orders and other kernels, and they must pass under each.

``pytest --perturb=SPEC`` (tests/conftest.py; or the environment variable ``TS2VIZ_TEST_PERTURB``),
SPEC a comma-separated list of:

``threadsN``
    N threads for torch (``torch.set_num_threads``) and for the BLAS and OpenMP pools
    (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``; ``threadpoolctl`` where a
    pool is already loaded): matrix products split their sums differently.
``denormal``
    ``torch.set_flush_denormal(True)``: numbers below 1.2e-38 become 0.
``batchN``
    every batch of a metric, detector, VQA model, NLI model and Sentence-BERT mapper at most N items
    (default batches are 8 to 64): other padding, other shapes for the kernels. A test about how a run is
    cut into batches (calls per batch, batches finished before an interruption, bit-identical scores from
    identical batches) is marked ``@pytest.mark.exact_batches`` (``MARKER``): while it runs, the cap is
    lifted in this process and left out of the variable its subprocesses inherit
    (``tests/conftest.py``); the other perturbations stay in effect.
``nomkldnn``
    ``torch.backends.mkldnn.enabled = False``: PyTorch's own kernels instead of oneDNN's.
``isa=LEVEL``
    ``ATEN_CPU_CAPABILITY=LEVEL`` (``default``, ``avx2`` or ``avx512``): PyTorch's vectorised kernels of
    another instruction set, as on another CPU. Must be in effect before torch is imported, so it is
    refused once torch is loaded (set the variable in the environment instead).

The settings reach subprocesses (the app servers of the browser tests, CLI runs, Ray workers): the
variables are exported, and ``perturb_site/sitecustomize.py`` (put first on ``PYTHONPATH``) applies the
rest in every Python process that starts, when torch or ts2viz's modules are imported, so nothing heavy
is imported early.
"""
from __future__ import annotations

import importlib.abc
import os
import re
import sys
from pathlib import Path

ENV = "TS2VIZ_TEST_PERTURB"
SITE = Path(__file__).resolve().parent / "perturb_site"
ISA_LEVELS = ("default", "avx2", "avx512")
#: the marker of a test that the batch cap does not apply to (it is about the batches themselves)
MARKER = "exact_batches"


def parse(spec: str) -> dict:
    """``"threads1,batch3,denormal"`` -> ``{"threads": 1, "batch": 3, "denormal": True}``; a one-line
    ValueError for anything else."""
    out: dict = {}
    for part in (p.strip() for p in str(spec or "").split(",")):
        if not part:
            continue
        m = re.fullmatch(r"(threads|batch)(\d+)", part)
        if m and int(m.group(2)) >= 1:
            out[m.group(1)] = int(m.group(2))
        elif part in ("denormal", "nomkldnn"):
            out[part] = True
        elif part.startswith("isa=") and part[4:] in ISA_LEVELS:
            out["isa"] = part[4:]
        else:
            raise ValueError(f"--perturb: unknown perturbation {part!r}: expected threadsN, batchN, denormal, "
                             f"nomkldnn or isa={'|'.join(ISA_LEVELS)}")
    return out


def unparse(p: dict) -> str:
    """The inverse of :func:`parse`: ``{"threads": 1, "batch": 3}`` -> ``"threads1,batch3"``."""
    return ",".join(f"{k}{v}" if k in ("threads", "batch") else (f"isa={v}" if k == "isa" else k)
                    for k, v in p.items())


def without_batch(spec: str) -> str:
    """``spec`` without its ``batchN`` (what a test marked ``exact_batches`` runs under)."""
    p = parse(spec)
    p.pop("batch", None)
    return unparse(p)


def batch_cap() -> int | None:
    """The batch cap in effect now (read from ``TS2VIZ_TEST_PERTURB`` at each call, so that a test
    marked ``exact_batches`` can lift it), or None."""
    return parse(os.environ.get(ENV, "")).get("batch")


def _on_import(names: tuple[str, ...], action) -> None:
    """Run ``action(module)`` right after a module whose name is in ``names`` (or starts with a name
    ending in ``.``) is imported, or now if it already is."""
    def wanted(name: str) -> bool:
        return any(name == n or (n.endswith(".") and name.startswith(n)) for n in names)

    for name, mod in list(sys.modules.items()):
        if mod is not None and wanted(name):
            action(mod)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if not wanted(name):
                return None
            for finder in sys.meta_path:
                if isinstance(finder, Finder) or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            run = loader.exec_module

            def exec_module(module):
                run(module)
                action(module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())


def _cap_batches():
    """Wrap ts2viz's batching helper (wherever a module bound it) and the Sentence-BERT mapper's loop; the
    cap is :func:`batch_cap` at the time of the call."""
    wrapped: dict[int, object] = {}

    def action(module) -> None:
        fn = getattr(module, "run_halving_on_oom", None)
        if callable(fn) and not getattr(fn, "_perturbed", False):
            if id(fn) not in wrapped:
                def capped(call, total, batch_size, label, _fn=fn):
                    n = batch_cap()
                    return _fn(call, total, min(int(batch_size), n) if n else batch_size, label)

                capped._perturbed = True
                wrapped[id(fn)] = capped
            module.run_halving_on_oom = wrapped[id(fn)]
        cls = getattr(module, "SBERTMapper", None)
        if isinstance(cls, type) and not getattr(cls.__init__, "_perturbed", False):
            init = cls.__init__

            def __init__(self, *args, _init=init, **kwargs):
                _init(self, *args, **kwargs)
                n = batch_cap()
                if n:
                    self.batch_size = min(self.batch_size, n)

            __init__._perturbed = True
            cls.__init__ = __init__

    return action


def apply(spec: str | dict, *, export: bool = True) -> dict:
    """Apply the perturbations of ``spec`` to this process (and, with ``export``, to its subprocesses).
    Returns the parsed settings."""
    p = parse(spec) if isinstance(spec, str) else dict(spec)
    if not p:
        return p
    if export:
        os.environ[ENV] = unparse(p)
        paths = [str(SITE)] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x and x != str(SITE)]
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    if "isa" in p:
        if "torch" in sys.modules and os.environ.get("ATEN_CPU_CAPABILITY") != p["isa"]:
            raise ValueError(f"--perturb isa={p['isa']}: torch is already imported; set ATEN_CPU_CAPABILITY="
                             f"{p['isa']} in the environment instead")
        os.environ["ATEN_CPU_CAPABILITY"] = p["isa"]
    if "threads" in p:
        n = str(p["threads"])
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = n

        def limit_blas(_module) -> None:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                return
            threadpool_limits(p["threads"])

        _on_import(("numpy",), limit_blas)
    if any(k in p for k in ("threads", "denormal", "nomkldnn")):
        def torch_settings(torch) -> None:
            if "threads" in p:
                torch.set_num_threads(p["threads"])
            if p.get("denormal"):
                torch.set_flush_denormal(True)
            if p.get("nomkldnn"):
                import torch.backends.mkldnn

                torch.backends.mkldnn.enabled = False

        _on_import(("torch",), torch_settings)
    if "batch" in p:
        _on_import(("ts2viz.",), _cap_batches())
    return p


def describe() -> str:
    """The perturbations in effect in this process, for the test report header."""
    spec = os.environ.get(ENV, "")
    if not spec:
        return ""
    bits = [spec]
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        bits.append(f"torch threads {torch.get_num_threads()}, CPU capability {torch.backends.cpu.get_cpu_capability()}"
                    f", mkldnn {'on' if torch.backends.mkldnn.enabled else 'off'}")
    return "; ".join(bits)
