"""``csv:``: precomputed per-image scores read from a scores file (``csv:PATH``), looked up by file name."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

CARD = Card(
    summary=("Precomputed per-image scores read from a scores file (`file_name` plus one metric column): each "
             "image is looked up by its file name."),
    fixture=('not compared: precomputed scores read from a file (no model, no original).'),
    output_range="whatever the file holds",
    higher_is_better=None,
    options=(
        Option("column", None, "The file's metric column to read (default: the only one; a file with several "
               "needs it)."),
    ),
    fidelity=(
        Fidelity("the metric", "the file's numbers, unchanged; the direction the file declares", "as the original"),
    ),
    limitations=(
        "Reads a file named by the spec: never offered to an untrusted caller (a public app's visitor).",
        "An image without a name (an in-memory PIL image) or without a row in the file gets NaN.",
    ),
    description="""A name matches a row of the file exactly or, for a path, by suffix
(`/data/ts2/images/000-01.jpg` matches `images/000-01.jpg`). The metric needs no pixels (the engine neither
reads nor hashes image files for it) and is not cached (a lookup is cheaper than the cache); its config holds
the file's path, size and modification time.
""",
)


class CSVMetric(Metric):
    """Precomputed scores: looks each image up by its file name in a scores file.

    It needs no pixels (the engine neither reads nor hashes image files for it) and is not cached (a
    lookup is cheaper than the cache). A name matches a row of the file exactly or, for a path, by
    suffix (``/data/ts2/images/000-01.jpg`` matches ``images/000-01.jpg``); an image without a name
    (an in-memory PIL image) or without a row gets NaN.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec.
    path : Path
        The scores file.
    column : str or None, optional
        The metric column to read; None: the file's only one.

    Raises
    ------
    InputError
        If the file cannot be read, has several metric columns and none is named, or lacks ``column``.
    """

    needs_pixels = False
    cacheable = False

    def __init__(self, spec: Spec, path: Path, column: str | None = None):
        from ...scores import read_scores

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
        """The image's file name (the pixels are not needed).

        Parameters
        ----------
        image : object
            Ignored (None: the engine does not read the pixels).
        file_name : str or None, optional
            The image's file name or path.

        Returns
        -------
        str or None
            ``file_name``.
        """
        return file_name

    def lookup(self, file_name: str | None) -> float:
        """The file's score for ``file_name``: the exact name's row, else the row whose name the path ends with.

        Parameters
        ----------
        file_name : str or None
            The image's file name or path.

        Returns
        -------
        float
            The score; NaN for no name or no matching row.
        """
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
        """The file's scores of a batch of file names (:meth:`lookup`).

        Parameters
        ----------
        items : sequence
            The images' file names (:meth:`prepare`).
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image (NaN where there is none).
        """
        return np.array([self.lookup(f) for f in items], dtype=np.float64)


def build(spec: Spec, device: str | None = None, column: str | None = None, **options) -> Metric:
    """The ``csv:`` metric of ``spec``: precomputed scores looked up by file name.

    Parameters
    ----------
    spec : Spec
        The parsed spec (its model is the scores file's path).
    device : str or None, optional
        The torch device; None picks one (unused).
    column : str or None, optional
        The metric column to read; its meaning is on the family's card (:data:`CARD`).
    **options
        Any other option: refused.

    Returns
    -------
    Metric
        The metric (a :class:`CSVMetric`).

    Raises
    ------
    InputError
        For an unknown option, a missing or unreadable file, or a column the file lacks.
    """
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    path = Path(spec.model).expanduser()
    if not path.is_file():
        raise InputError(f"metric {spec.raw!r}: no such scores file", file=path)
    return CSVMetric(spec, path, column)


#: the options :func:`build` takes beyond its keyword parameters (none: ``**options`` only catches typos)
build.extra_options = ()


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('csv',
                'precomputed per-image scores read from a scores file (file_name + one metric column)',
                build, CARD, example='csv:/data/my_scores.csv', group='user', trusted_only=True,
                needs_pixels=False, revisions=False, display='csv')
