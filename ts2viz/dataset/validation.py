"""Every problem of a dataset folder at once (not only the first one loading stops at): ``ts2viz validate``."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, Problems
from .graphfiles import read_edges, read_node_errors
from .metadata import read_metadata
from .reading import csv_records, read_text_utf8


@dataclass
class ValidationReport:
    """Every problem of a dataset folder (:func:`validate_folder`).

    Attributes
    ----------
    folder : pathlib.Path
        The folder.
    errors : list of InputError
        The problems, each one line naming the file and row.
    warnings : list of str
        The warnings (one line each).
    n_segs : int
        SEGs that loaded without a problem.
    n_images : int
        Their image rows.
    missing_images : list of (str, int)
        Image files not under the folder: (file_name, metadata row).
    dropped : int
        Errors beyond the report's limit.
    """

    folder: Path
    errors: list[InputError]
    warnings: list[str]
    n_segs: int = 0             # SEGs that loaded without a problem
    n_images: int = 0           # their image rows
    missing_images: list[tuple[str, int]] = field(default_factory=list)   # (file_name, metadata row)
    dropped: int = 0            # errors beyond the report's limit

    @property
    def ok(self) -> bool:
        """Whether the folder has no error (warnings and missing images do not count)."""
        return not self.errors


def validate_folder(folder: str | os.PathLike, *, check_images: bool = True, limit: int = 1000) -> ValidationReport:
    r"""Check a dataset folder with every rule of :func:`load_folder` and report all problems.

    A bad row or SEG is set aside and checking goes on, so the report lists each independent problem; a
    problem that makes the rest of a file unreadable (not UTF-8, a missing column) ends that file's
    checks.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    check_images : bool, default True
        List image files that do not exist under the folder (not an error: a dataset can be
        meta-evaluated from scores without its images).
    limit : int, default 1000
        Keep at most this many errors.

    Returns
    -------
    ValidationReport
        Each problem one line naming the file, the row and what was expected.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.dataset import validate_folder
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "metadata.csv").write_text("id,target_prompt,file_name,image_source,rank\n"
    ...                                          "0,a red cube,a.png,SD,0\n0,a red cube,b.png,SD,1\n"
    ...                                          "0,a red cube,c.png,SD,x\n")
    >>> report = validate_folder(folder)
    >>> report.ok, report.n_segs, len(report.missing_images)
    (False, 1, 2)
    >>> print(report.errors[0])
    /.../metadata.csv, row 4: malformed node label 'x': expected an error count followed by optional letters, e.g. 0, 1a, 2b
    """
    import warnings

    folder = Path(folder)
    meta = folder / "metadata.csv"
    problems = Problems(collect=True, limit=limit)
    report = ValidationReport(folder, problems.errors, [])
    if not meta.is_file():
        problems.report("dataset folder has no metadata.csv", file=folder)
        return report
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        edges = None
        if (folder / "edges.csv").is_file():
            try:
                edges = read_edges(folder / "edges.csv", problems)
            except InputError as e:      # the file as a whole cannot be read
                problems.errors.append(e)
        nodes = None
        if (folder / "nodes.csv").is_file():
            try:
                nodes = read_node_errors(folder / "nodes.csv", problems)
            except InputError as e:
                problems.errors.append(e)
        try:
            ds = read_metadata(meta, name=folder.name, root=folder, edges=edges, node_errors=nodes,
                               problems=problems)
        except InputError as e:
            problems.errors.append(e)
            ds = None
    report.warnings = [" ".join(str(w.message).split()) for w in caught]
    report.dropped = problems.dropped
    if ds is not None:
        report.n_segs, report.n_images = len(ds.segs), len(ds.rows)
        if check_images:
            rows = _metadata_lines(meta)
            report.missing_images = [(r.file_name, rows.get(r.file_name, 0)) for r in ds.rows
                                     if not (folder / r.file_name).is_file()]
    return report


def _metadata_lines(meta: Path) -> dict[str, int]:
    """file_name -> its line in metadata.csv (for messages about image files)."""
    out: dict[str, int] = {}
    for line, rec in csv_records(meta, read_text_utf8(meta), ("file_name",), problems=Problems(collect=True)):
        out.setdefault(rec["file_name"], line)
    return out
