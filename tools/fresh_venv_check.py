"""Do the field's released checkpoint layouts load from a fresh ``pip install -r requirements.txt``?

    python3 -m venv /work/side/fresh && /work/side/fresh/bin/pip install -r requirements.txt
    PYTHONPATH=. HF_HUB_OFFLINE=1 /work/side/fresh/bin/python tools/fresh_venv_check.py

Builds a tiny checkpoint in each released layout of ``tests/support/released_layouts.py`` (slow-only
tokenizers such as ``spiece.model`` / ``tokenizer.model`` / ``vocab.txt``, processor files, detectors) and
loads it through ts2viz's own loading code, in the interpreter that runs this script. Prints one line per
layout (ok, or the one-line error) and exits 1 if any fails. The CI counterpart is
``tests/core/test_requirements_layouts.py``.
"""
from __future__ import annotations

import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]


def main() -> int:
    from released_layouts import LAYOUTS, check

    failed = 0
    with tempfile.TemporaryDirectory(prefix="ts2viz-layouts-") as tmp:
        for name, (what, _, _) in LAYOUTS.items():
            try:
                check(name, Path(tmp))
                print(f"ok    {name:38s} {what}")
            except Exception as e:  # noqa: BLE001 - reported, then the exit code says it
                failed += 1
                msg = (str(e).strip().splitlines() or [type(e).__name__])[0][:240]
                print(f"FAIL  {name:38s} {what}\n      {type(e).__name__}: {msg}")
                if "-v" in sys.argv:
                    traceback.print_exc()
    print(f"{len(LAYOUTS) - failed} of {len(LAYOUTS)} layouts load (python {sys.executable})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
