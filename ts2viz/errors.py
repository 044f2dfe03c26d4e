"""Errors and warnings that carry a one-line, user-facing explanation of bad input."""
from __future__ import annotations

import warnings
from typing import Iterator


def _where(file: object, row: int | None) -> str:
    parts = []
    if file is not None and str(file):
        parts.append(str(file))
    if row is not None:
        parts.append(f"row {row}")
    return ", ".join(parts) + ": " if parts else ""


class InputError(ValueError):
    """Bad input data: a file, a row and what was expected, in one line.

    The CLI prints ``str(err)`` and exits with code 2; the UI shows it as a message.

    Parameters
    ----------
    problem : str
        What is wrong and what was expected.
    file : object, optional
        The file (any path-like; stored as text).
    row : int, optional
        The row (1-based line of a file).

    Attributes
    ----------
    problem : str
        The problem alone.
    file : str or None
        The file.
    row : int or None
        The row.

    Examples
    --------
    >>> from ts2viz.errors import InputError
    >>> str(InputError("missing column 'file_name'", file="scores.csv", row=1))
    "scores.csv, row 1: missing column 'file_name'"
    """

    def __init__(self, problem: str, *, file: object = None, row: int | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.row = row
        super().__init__(_where(self.file, row) + problem)


class InputWarning(UserWarning):
    """Input that is accepted, but not as the user may think.

    Scores treated as missing, partial coverage, a partition of its own. The CLI prints each as one line
    ``ts2viz: warning: ...``.
    """


def warn_input(problem: str, *, file: object = None, row: int | None = None, stacklevel: int = 2) -> None:
    """Issue an :class:`InputWarning` worded like an :class:`InputError` (file, row, problem; one line).

    Parameters
    ----------
    problem : str
        What is off.
    file : object, optional
        The file.
    row : int, optional
        The row.
    stacklevel : int, default 2
        As for :func:`warnings.warn`, counted from the caller of this function.
    """
    warnings.warn(_where(file, row) + problem, InputWarning, stacklevel=stacklevel + 1)


class Problems:
    """Where a reader reports bad input: raised at once (loading, the default) or collected (validating).

    ``ts2viz validate`` lists every problem of a dataset, not only the first. A reader calls
    :meth:`report` and, when it returns, skips what was bad and goes on, so that one code path holds each
    rule whether a dataset is loaded or validated.

    Parameters
    ----------
    collect : bool, default False
        Collect the problems instead of raising the first.
    limit : int, default 1000
        Keep at most this many; the others are only counted (``dropped``).

    Attributes
    ----------
    errors : list of InputError
        The problems collected.
    dropped : int
        Problems past ``limit``.
    """

    def __init__(self, collect: bool = False, limit: int = 1000):
        self.collect = collect
        self.limit = limit
        self.errors: list[InputError] = []
        self.dropped = 0

    def report(self, problem: str, *, file: object = None, row: int | None = None) -> None:
        """Raise :class:`InputError` (loading), or record it and return (validating).

        Parameters
        ----------
        problem : str
            What is wrong.
        file : object, optional
            The file.
        row : int, optional
            The row.

        Raises
        ------
        InputError
            When not collecting.
        """
        err = InputError(problem, file=file, row=row)
        if not self.collect:
            raise err
        if len(self.errors) < self.limit:
            self.errors.append(err)
        else:
            self.dropped += 1

    def __bool__(self) -> bool:
        """Whether any problem was collected."""
        return bool(self.errors)

    def __iter__(self) -> Iterator[InputError]:
        """The collected problems."""
        return iter(self.errors)
