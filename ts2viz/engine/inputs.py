"""What the single-process and the Ray engines share: where a dataset's images are, the progress
callback's shape, and the one warning about images that could not be scored."""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

#: progress(spec, done, total): called after every batch (cache hits count as done at once)
Progress = Callable[[str, int, int], None]


def image_sources(ds, file_names: Sequence[str]) -> list:
    """Local paths of the dataset's images, fetching from the hub when the dataset has no local copy."""
    from ..dataset import fetch_image

    out: list = []
    fails = 0
    for fn in file_names:
        p = ds.image_path(fn)
        if p is None and ds.hf_id is not None and fails < 3:
            # After a few failed downloads (offline), stop trying instead of timing out per image.
            p = fetch_image(ds, fn)
            fails = 0 if p is not None else fails + 1
        out.append(p)
    return out


def warn_unscored(names: Sequence[str], errors: Sequence[str | None], stacklevel: int = 3) -> int:
    """Warn once about the images that could not be scored (``errors[i]`` says why, ``None`` if scored).

    Returns how many there are.
    """
    bad = [(n, e) for n, e in zip(names, errors) if e is not None]
    if bad:
        first = "; ".join(f"{n}: {e}" for n, e in bad[:3])
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        warnings.warn(f"{len(bad)} image(s) could not be scored and get NaN: {first}{more}", stacklevel=stacklevel)
    return len(bad)
