"""Errors and warnings that carry a one-line, user-facing explanation of bad input."""
from __future__ import annotations

import warnings


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
