"""Command-line interface: one parser owning every subcommand.

* ``leaderboard``, ``metametrics`` (:mod:`.evaluate`): meta-metrics of scores tables;
* ``score``, ``metrics`` (:mod:`.scoring`): run library metrics over a dataset, list the families.

Exit codes: 0 success, 2 bad input (one line on stderr naming file, row and problem), 1 other errors,
130 interrupted. Importing this package imports no torch, transformers or gradio.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..errors import InputError
from . import evaluate, scoring

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ts2viz", description="Meta-evaluate text-to-image faithfulness "
                                     "metrics on semantic error graphs (T2IScoreScore).")
    sub = parser.add_subparsers(dest="command", required=True)
    evaluate.add_subcommands(sub)
    scoring.add_subcommands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        print(f"ts2viz: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ts2viz: interrupted", file=sys.stderr)
        return 130
