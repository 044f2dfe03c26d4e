"""Errors that carry a one-line, user-facing explanation of bad input."""
from __future__ import annotations


class InputError(ValueError):
    """Bad input data: a file, a row and what was expected, in one line.

    The CLI prints ``str(err)`` and exits with code 2; the UI shows it as a message.
    """

    def __init__(self, problem: str, *, file: object = None, row: int | None = None):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.row = row
        where = []
        if self.file:
            where.append(self.file)
        if row is not None:
            where.append(f"row {row}")
        prefix = ": ".join([", ".join(where)]) + ": " if where else ""
        super().__init__(prefix + problem)
