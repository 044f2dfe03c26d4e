"""Reference fixture for ``softtifa:`` and ``vqascore:...?recipe=geneval2``, made by GenEval 2's own code (side venv).

GenEval 2's ``evaluation.py`` (facebookresearch/GenEval2 commit a6e82d2, unpacked into ``$SIDE/geneval2`` by
``tools/reference/t2v_metrics_3_1/setup_side_venv.sh``; never copied here) loads ``Qwen/Qwen3-VL-8B-Instruct``
when imported. The tiny random-weight Qwen3-VL of the t2v_metrics 3.1 fixture
(``tests/fixtures/reference/vqascore/qwen3-vl-3.1/qwen3-vl-tiny``, the released layout) is put in the side hub
cache under that id, the module is imported, and its own ``soft_tifa`` and ``vqa_score`` score every image of
``tests/fixtures/reference/vqascore/images`` with every prompt of ``tests/fixtures/reference/geneval2/
questions.jsonl`` (GenEval 2's ``geneval2_data.jsonl`` layout; questions written here: GenEval 2's data is
CC BY-NC). Its ``main()`` is then run for ``soft_tifa_gm``, ``soft_tifa_am`` and ``vqascore`` with prompt k on
image k, and the total it prints is recorded. float32 on the CPU (``dtype="auto"`` loads the saved float32).

Usage (from the repository root)::

    tools/reference/t2v_metrics_3_1/run.sh ../geneval2/make_fixture.py
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import common as C

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FIX = REPO / "tests" / "fixtures" / "reference" / "geneval2"
CKPT = REPO / "tests" / "fixtures" / "reference" / "vqascore" / "qwen3-vl-3.1" / "qwen3-vl-tiny"
COMMIT = "a6e82d2"


def main() -> int:
    C.put_in_hub_cache("Qwen/Qwen3-VL-8B-Instruct", CKPT)
    src = Path(os.environ.get("SIDE", "/work/side/t2v31")) / "geneval2" / "evaluation.py"
    spec = importlib.util.spec_from_file_location("geneval2_evaluation", src)
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    ev.qwen_model.float()
    rows = [json.loads(line) for line in (FIX / "questions.jsonl").read_text().splitlines()]
    images = sorted((C.IMAGES).glob("*.png"))
    images = [p for p in images if p.name != C.LARGE_SPEC[0]]
    pairs = []
    for im in images:
        for r in rows:
            _, soft = ev.soft_tifa(r["vqa_list"], str(im))
            pairs.append({"image": C.rel(im), "prompt": r["prompt"], "soft_tifa_atoms": soft,
                          "vqascore": ev.vqa_score(r["prompt"], str(im))})
    totals = {}
    tmp = Path(tempfile.mkdtemp())
    mapping = {r["prompt"]: str(images[k % len(images)]) for k, r in enumerate(rows)}
    (tmp / "images.json").write_text(json.dumps(mapping))
    for method in ("soft_tifa_gm", "soft_tifa_am", "vqascore"):
        out = tmp / f"{method}.json"
        buf = io.StringIO()
        argv = sys.argv
        sys.argv = ["evaluation.py", "--benchmark_data", str(FIX / "questions.jsonl"), "--image_filepath_data",
                    str(tmp / "images.json"), "--method", method, "--output_file", str(out)]
        try:
            with contextlib.redirect_stdout(buf):
                ev.main()
        finally:
            sys.argv = argv
        printed = [ln for ln in buf.getvalue().splitlines() if ln.startswith("Score: ")][-1]
        totals[method] = {"score_lists": json.loads(out.read_text()), "printed": float(printed.split()[1])}
    exp = {"geneval2_commit": COMMIT, "checkpoint": "../vqascore/qwen3-vl-3.1/qwen3-vl-tiny",
           "questions": "questions.jsonl",
           "scoring": "GenEval2 evaluation.py soft_tifa (per atom '{q} Answer in one word.', the first step's "
                      "softmax summed over the answer's spellings) and vqa_score; main() for the totals",
           "pairs": pairs, "main": {"images": {p: C.rel(Path(v)) for p, v in mapping.items()}, **totals}}
    (FIX / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")
    prov = {"made_by": "tools/reference/geneval2/make_fixture.py",
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "versions": C.versions(),
            "geneval2": f"facebookresearch/GenEval2 commit {COMMIT} evaluation.py, from a checkout",
            "precision": "float32 on CPU",
            "changes_to_run_offline": ["the tiny Qwen3-VL put in the side hub cache as Qwen/Qwen3-VL-8B-Instruct",
                                       "qwen_model.float() after import (a no-op: the checkpoint is float32)"],
            "note": "The scores are GenEval 2's own functions on this tiny random-weight checkpoint; no GenEval 2 "
                    "code or data is in this repository."}
    (FIX / "provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    print(FIX, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
