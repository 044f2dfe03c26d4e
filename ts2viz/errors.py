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
    """

    def __init__(self, problem: str, *, file: object = None, row: int | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.row = row
        super().__init__(_where(self.file, row) + problem)


class InputWarning(UserWarning):
    """Input that is accepted, but not as the user may think: scores treated as missing, partial coverage,
    a partition of its own. The CLI prints each as one line ``ts2viz: warning: ...``."""


def warn_input(problem: str, *, file: object = None, row: int | None = None, stacklevel: int = 2) -> None:
    """Issue an :class:`InputWarning` worded like an :class:`InputError` (file, row, problem; one line)."""
    warnings.warn(_where(file, row) + problem, InputWarning, stacklevel=stacklevel + 1)


class Problems:
    """Where a reader reports bad input: raised at once (loading, the default) or collected
    (validating: ``ts2viz validate`` lists every problem of a dataset, not only the first).

    A reader calls :meth:`report` and, when it returns, skips what was bad and goes on, so that one
    code path holds each rule whether a dataset is loaded or validated.
    """

    def __init__(self, collect: bool = False, limit: int = 1000):
        self.collect = collect
        self.limit = limit
        self.errors: list[InputError] = []
        self.dropped = 0

    def report(self, problem: str, *, file: object = None, row: int | None = None) -> None:
        """Raise :class:`InputError` (loading), or record it and return (validating)."""
        err = InputError(problem, file=file, row=row)
        if not self.collect:
            raise err
        if len(self.errors) < self.limit:
            self.errors.append(err)
        else:
            self.dropped += 1

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __iter__(self) -> Iterator[InputError]:
        return iter(self.errors)
