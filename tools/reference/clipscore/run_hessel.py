"""J. Hessel et al.'s ``clipscore.py`` run as a user runs it, on a local CLIP checkpoint (side environment only).

    SIDE_PYTHON tools/reference/clipscore/run_hessel.py CLIPSCORE_CHECKOUT CLIP_PT -- candidates.json IMAGE_DIR [...]

Everything after ``--`` is the script's own command line (``candidates_json image_dir [--save_per_instance
FILE]``). The one change: its ``clip.load("ViT-B/32", ...)`` loads ``CLIP_PT`` (a TorchScript archive written by
``bench_original.py build``, which ``clip.load`` reads as it reads the downloaded checkpoint) instead of downloading OpenAI's weights. ``clipscore.py`` then runs as ``__main__`` from the
checkout, with its imports (``generation_eval_utils`` and pycocoevalcap included).
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--")
    checkout, pt = Path(argv[0]), argv[1]
    import clip

    real = clip.load
    clip.load = lambda name, *a, **kw: real(pt, *a, **kw)
    sys.path.insert(0, str(checkout))
    sys.argv = [str(checkout / "clipscore.py"), *argv[cut + 1:]]
    runpy.run_path(str(checkout / "clipscore.py"), run_name="__main__")


if __name__ == "__main__":
    main()
