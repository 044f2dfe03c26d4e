"""Command-line interface: one parser owning every subcommand.

* ``leaderboard``, ``metametrics`` (:mod:`.evaluate`): meta-metrics of scores tables;
* ``score``, ``metrics`` (:mod:`.scoring`): run library metrics over a dataset, list the families;
* ``validate``, ``push`` (:mod:`.datasets`): every problem of a dataset folder; upload one to the hub;
* ``humaneval`` (:mod:`.humaneval`): metrics against human ratings (rated sets, Gecko's three tasks);
* ``nuisance``, ``transforms`` (:mod:`.nuisance`): does a metric move more for nuisance than for errors?

Exit codes: 0 success, 2 bad input (one line on stderr naming file, row and problem), 1 other errors,
130 interrupted. Warnings (input accepted, but not as the user may think) are one line each on stderr,
``ts2viz: warning: ...``. ``--out -`` writes CSV to stdout. Importing this package imports no torch,
transformers or gradio.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from typing import Iterator, Sequence

from .. import __version__
from ..errors import InputError, InputWarning
from . import datasets, evaluate, humaneval, nuisance, scoring

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ts2viz", description="Meta-evaluate text-to-image faithfulness "
                                     "metrics on semantic error graphs (T2IScoreScore).")
    parser.add_argument("--version", action="version", version=f"ts2viz {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    evaluate.add_subcommands(sub)
    scoring.add_subcommands(sub)
    datasets.add_subcommands(sub)
    humaneval.add_subcommands(sub)
    nuisance.add_subcommands(sub)
    return parser


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Print every warning raised inside as one line on stderr (``ts2viz: warning: ...``), each time."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        kind = "" if issubclass(category, (InputWarning,)) or category is UserWarning else f"{category.__name__}: "
        print(f"ts2viz: warning: {kind}{text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with one_line_warnings():
            return int(args.func(args) or 0)
    except InputError as e:
        print(f"ts2viz: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ts2viz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (`ts2viz leaderboard --out - | head`): not an error worth a traceback.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
