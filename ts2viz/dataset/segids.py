"""SEG ids as a command line gives them (``--seg 0-10,15``), checked against a dataset's ids."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from .model import Dataset


#: the most SEG ids ``--seg`` may name when there is no dataset to resolve ranges against
MAX_SEG_IDS = 1_000_000


def parse_seg_ids(text: str | None, dataset: "Dataset | None" = None) -> list[int] | None:
    """SEG ids from text like ``'1,2,5-7'``; ``None`` for empty text (all SEGs).

    With ``dataset``, each part is checked against its SEG ids without expanding ranges (so
    ``0-99999999`` costs nothing): a single id must be one of the dataset's, a range ``a-b`` selects the
    dataset's SEGs with ``a <= id <= b`` and must lie within its id span. Without a dataset, ranges are
    expanded (at most :data:`MAX_SEG_IDS` ids).

    Parameters
    ----------
    text : str or None
        Ids and ranges separated by commas.
    dataset : Dataset, optional
        The dataset the ids must belong to.

    Returns
    -------
    list of int or None
        The ids in the order given, each once; None for empty text.

    Raises
    ------
    InputError
        One line starting ``--seg:``: a part that is neither an integer nor a range, a reversed range
        (``1-0``), an id the dataset lacks, a range outside its ids or selecting none of them, too many
        ids.

    Examples
    --------
    >>> from ts2viz.dataset import load_dataset, parse_seg_ids
    >>> parse_seg_ids("1,2,5-7")
    [1, 2, 5, 6, 7]
    >>> parse_seg_ids("160-1000", load_dataset("ts2"))
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: --seg: range 160-1000 goes beyond the SEG ids of dataset ts2 (0-164)
    """
    if not text or not text.strip():
        return None
    import bisect

    have = sorted(dataset.segs) if dataset is not None else None
    span = f"{have[0]}-{have[-1]}" if have else ""
    out: dict[int, None] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                cut = part.index("-", 1)
                a, b = int(part[:cut]), int(part[cut + 1:])
            else:
                a = b = int(part)
        except ValueError:
            raise InputError(f"--seg: {part!r} is not an id or a range like 3-7") from None
        if a > b:
            raise InputError(f"--seg: {part!r} is a reversed range (start above end); write {b}-{a}")
        if have is None:
            if len(out) + (b - a + 1) > MAX_SEG_IDS:
                raise InputError(f"--seg: {part!r} names more than {MAX_SEG_IDS:,} SEG ids")
            out.update(dict.fromkeys(range(a, b + 1)))
            continue
        if a == b and part.lstrip("-").isdigit():
            if a not in dataset.segs:
                raise InputError(f"--seg: no SEG with id {a} in dataset {dataset.name} (its ids: {span})")
            out[a] = None
            continue
        if a < have[0] or b > have[-1]:
            raise InputError(f"--seg: range {part} goes beyond the SEG ids of dataset {dataset.name} ({span})")
        picked = have[bisect.bisect_left(have, a):bisect.bisect_right(have, b)]
        if not picked:
            raise InputError(f"--seg: range {part} selects no SEG of dataset {dataset.name}")
        out.update(dict.fromkeys(picked))
    return list(out) or None
