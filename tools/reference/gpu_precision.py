"""Issue 39 item 10: every reference fixture scored on a device at ts2viz's default precision there.

    python tools/reference/gpu_precision.py --device cuda --out precision.json     # on a GPU machine
    python tools/reference/gpu_precision.py --device cpu --keep-dtype --only clipscore,hpsv2   # the check itself

The fixtures' expected scores were made by each original's own code in fp32 on the CPU
(``tests/fixtures/reference/``). This runs the very comparisons the reference tests run
(``tests/support/reference_compare.py``), with two changes: the metric is loaded on ``--device`` and, unless
``--keep-dtype``, without the tests' ``dtype=float32``, so it runs at the precision ts2viz picks there by default
(HPSv2's fp16 autocast, HPSv3's bf16 with an fp32 head, ...); and a difference is recorded, not raised. Printed
per comparison: the dtype the metric chose, the number of scores, the largest absolute and relative difference
from the original's fp32 scores, and how many exact comparisons (answers, choices) differed. The originals'
own code is not run here (their side environments need the package registry, which a lent GPU machine does
not reach), so this measures the distance of ts2viz's GPU default from the originals' fp32 reference, which is
an upper bound on its distance from an original run at that original's own GPU precision. Endpoint judges
(VIEScore, UnifiedReward, LLMScore) have no precision of their own and are left out.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT)]

import reference_compare as rc  # noqa: E402  (tests/support, on the path above)

def _hpsv3():
    from reward_fixtures import fixture, score_rows

    root, exp = fixture("hpsv3")
    m = rc.metrics.load(f"hpsv3:{root / 'HPSv3'}?base={root / exp['base']}", device="cpu")
    m.batch_size = len(exp["rows"])  # the fixture scored all images in one right-padded batch
    rc.check_close(score_rows(m, root, exp["rows"]), [r["mu"] for r in exp["rows"]], "hpsv3 mu")


#: comparison name -> how to run it (each a call of a reference_compare function)
CASES = {
    "clipscore": lambda: rc.compare_clipscore(None),
    "clipscore-hessel": lambda: rc.compare_clipscore("hessel"),
    "pickscore": lambda: rc.compare_pickscore(),
    "hpsv2": lambda: rc.compare_hpsv2(),
    "imagereward": lambda: rc.compare_imagereward(),
    "hpsv3": _hpsv3,
    **{f"vqascore-{name}": (lambda name=name: rc.compare_vqascore(name)) for name in rc.VQA_CASES},
    **{f"vqascore-{name}": (lambda name=name: rc.compare_vqascore_31(name, margins=False)) for name in rc.VQA31_CASES},
    "softtifa": lambda: rc.compare_softtifa(),
    "geneval2-vqascore": lambda: rc.compare_geneval2_vqascore(),
    "itmscore": lambda: rc.compare_itm("itmscore"),
    "itcscore": lambda: rc.compare_itm("itcscore"),
    "tifa-blip": lambda: rc.compare_tifa("blip", margins=False),
    "dsg": lambda: rc.compare_dsg(margins=False),
    "alignscore": lambda: rc.compare_ts2_embeddings("align"),
    "siglip": lambda: rc.compare_ts2_embeddings("siglip"),
    "oneig": lambda: rc.compare_oneig(margins=False),
}


class _Recorder:
    """Stands in for ``reference_compare``'s checks and loader while one comparison runs."""

    def __init__(self, device: str, keep_dtype: bool):
        self.device, self.keep_dtype = device, keep_dtype
        self.rows: list[dict] = []
        self.mismatches: list[str] = []
        self.dtypes: list[str] = []
        self._load = rc.metrics.load

    def load(self, spec: str, *args, **kwargs):
        kwargs["device"] = self.device
        if not self.keep_dtype:
            kwargs.pop("dtype", None)
            spec = re.sub(r"([?&])dtype=float32(&?)", lambda m: m.group(1) if m.group(2) else "", spec).rstrip("?&")
        m = self._load(spec, *args, **kwargs)
        self.dtypes.append(str(getattr(m, "config", {}).get("dtype")))
        return m

    def check_close(self, got, want, what: str, rtol: float = rc.RTOL, atol: float = 0.0) -> float:
        got, want = np.asarray(got, float).ravel(), np.asarray(want, float).ravel()
        if got.shape != want.shape:
            self.mismatches.append(f"{what}: {got.shape} scores, the original gave {want.shape}")
            return float("nan")
        bad, rel = rc.close_stats(got, want, rtol, atol)
        self.rows.append({"what": what, "n": int(got.size), "max_abs": float(np.abs(got - want).max(initial=0.0)),
                          "max_rel": rel, "within_test_tolerance": not bool(bad.any())})
        return rel

    def check_equal(self, got, want, what: str) -> None:
        if got != want:
            self.mismatches.append(what)


def run_case(name: str, device: str, keep_dtype: bool) -> dict:
    """One comparison of :data:`CASES` on ``device``; returns its record (never raises for a difference)."""
    rec = _Recorder(device, keep_dtype)
    saved = (rc.metrics, rc.check_close, rc.check_equal)
    rc.metrics = argparse.Namespace(load=rec.load)
    rc.check_close, rc.check_equal = rec.check_close, rec.check_equal
    t0 = time.perf_counter()
    error = None
    try:
        CASES[name]()
    except AssertionError as e:  # a count check inside a comparison (e.g. DSG's answers compared)
        error = str(e).splitlines()[0]
    finally:
        rc.metrics, rc.check_close, rc.check_equal = saved
    return {"case": name, "device": device, "dtypes": sorted(set(rec.dtypes)), "checks": rec.rows,
            "exact_mismatches": len(rec.mismatches), "first_mismatches": rec.mismatches[:3], "error": error,
            "seconds": round(time.perf_counter() - t0, 2)}


def main(argv: list[str] | None = None) -> int:
    """Run the comparisons; print one line each and write ``--out`` (JSON) when given. Returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--keep-dtype", action="store_true", help="keep the tests' dtype=float32 (a check of this tool)")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all): " + ", ".join(CASES))
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"gpu_precision: unknown case {unknown[0]!r}; expected one of {', '.join(CASES)}", file=sys.stderr)
        return 2
    import torch

    records = []
    print(f"device {a.device}" + (f" ({torch.cuda.get_device_name()})" if a.device.startswith("cuda") else ""))
    for name in names:
        r = run_case(name, a.device, a.keep_dtype)
        records.append(r)
        worst = max(r["checks"], key=lambda c: c["max_rel"], default=None)
        line = (f"{name:28s} dtype={','.join(r['dtypes']) or '-':18s} " +
                (f"n={worst['n']:3d} max_abs={worst['max_abs']:.3g} max_rel={worst['max_rel']:.3g}" if worst else "no scores") +
                f" exact_mismatches={r['exact_mismatches']}" + (f" error={r['error']}" if r["error"] else "") +
                f" ({r['seconds']} s)")
        print(line, flush=True)
    if a.out:
        a.out.write_text(json.dumps({"device": a.device, "keep_dtype": a.keep_dtype, "torch": torch.__version__,
                                     "card": torch.cuda.get_device_name() if a.device.startswith("cuda") else None,
                                     "cases": records}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
