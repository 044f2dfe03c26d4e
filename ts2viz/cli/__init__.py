"""Command-line interface: one parser owning every subcommand.

* ``leaderboard`` (:mod:`.board`), ``compare`` (:mod:`.compare`), ``significance`` (:mod:`.significance`),
  ``metametrics`` (:mod:`.metametrics`): meta-metrics of scores tables, with intervals and paired tests (their
  shared options, inputs and outputs: :mod:`.common`);
* ``score``, ``questions``, ``metrics`` (:mod:`.scoring`): run library metrics over a dataset, list the
  families;
* ``validate``, ``push`` (:mod:`.datasets`): every problem of a dataset folder; upload one to the hub;
* ``humaneval`` (:mod:`.humaneval`): metrics against human ratings (rated sets, Gecko's three tasks);
* ``agreement``, ``humaneval --slices`` (:mod:`.humaneval_slices`): raters' agreement, Gecko's tasks per slice;
* ``judges`` (:mod:`.judges`): judges and metrics on side-by-side gold (GenAI-Bench, MMRB2 layouts);
* ``nuisance``, ``transforms`` (:mod:`.nuisance`): does a metric move more for nuisance than for errors?
* ``app`` (:mod:`.app`): start the inspection app (what a Hugging Face Space's ``app.py`` calls).

Exit codes: 0 success, 2 bad input (one line on stderr naming file, row and problem), 1 other errors,
130 interrupted. Warnings (input accepted, but not as the user may think) are one line each on stderr,
``ts2viz: warning: ...``. ``--out -`` writes CSV to stdout. Importing this package imports no torch,
transformers or gradio; ``ts2viz --help`` imports none of the subcommands' modules (their help lines are
:data:`COMMANDS`'), and ``ts2viz CMD ...`` only CMD's (its ``declare_CMD`` declares its arguments; what runs it
is imported when it runs).

The ``ts2viz`` command and ``python -m ts2viz`` call :func:`main`; the page
``docs/reference/cli.md`` lists every subcommand and option, generated from :func:`build_parser`.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from typing import Iterator, Sequence

from .. import __version__
from ..errors import InputError, InputWarning

__all__ = ["main", "build_parser", "COMMANDS"]

#: every subcommand, in ``ts2viz --help``'s order: its name -> (the module of ``ts2viz.cli`` whose
#: ``declare_<name>`` declares its arguments, its help line)
COMMANDS: dict[str, tuple[str, str]] = {
    "leaderboard": ("board", "Ord/Sep leaderboard (overall and per partition)"),
    "compare": ("compare", "paired comparison of two metrics in every leaderboard cell"),
    "significance": ("significance", "which leaderboard orderings are significant (all pairs, Holm)"),
    "metametrics": ("metametrics", "per-SEG ord, sep, delta, kendall for every metric"),
    "score": ("scoring", "run metrics over a SEG dataset and write a scores file"),
    "questions": ("scoring", "generate TIFA/DSG questions with an LLM and write them as a question CSV"),
    "metrics": ("scoring", "list the metric families"),
    "validate": ("datasets", "check a dataset folder and list every problem"),
    "push": ("datasets", "upload a dataset folder to a Hugging Face dataset repo"),
    "humaneval": ("humaneval", "meta-evaluate metrics against human ratings (point-wise, pair-wise, model ordering; "
                  "Gecko's tasks) with bootstrap intervals over prompts"),
    "judges": ("judges", "judges on side-by-side gold: 4-label accuracy (GenAI-Bench), accuracy with and without "
               "ties, position-swap accuracy (MMRB2), position bias, with intervals over pairs"),
    "nuisance": ("nuisance", "does a metric move more for nuisance (JPEG, resize, blur...) than for errors?"),
    "transforms": ("nuisance", "list the nuisance transforms"),
    "agreement": ("humaneval_slices", "raters' agreement: Krippendorff's alpha per rating set, T2I model and "
                  "slice, with bootstrap intervals over prompts"),
    "app": ("app", "start the inspection app (Gradio) on the bundled TS2 data or a dataset"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``ts2viz`` argument parser, with every subcommand (:data:`COMMANDS`).

    Each parsed namespace carries ``func``, the subcommand's function (``func(args) -> exit code``).

    Parameters
    ----------
    only : str or None, default None
        Declare only this subcommand's arguments, importing only its module; every other subcommand has its
        name and help line (all that ``ts2viz --help`` and an unknown subcommand's error show), no arguments
        and no ``func``. ``None``: every subcommand's arguments.

    Returns
    -------
    argparse.ArgumentParser
        A new parser.

    Examples
    --------
    >>> args = build_parser().parse_args(["leaderboard", "--mode", "spec", "--ci"])
    >>> args.command, args.mode, args.ci, args.dataset
    ('leaderboard', 'spec', True, 'ts2')
    """
    parser = argparse.ArgumentParser(prog="ts2viz", description="Meta-evaluate text-to-image faithfulness "
                                     "metrics on semantic error graphs (T2IScoreScore).")
    parser.add_argument("--version", action="version", version=f"ts2viz {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_line) in COMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if only is None or only == name:
            getattr(importlib.import_module(f".{module}", __name__), f"declare_{name}")(p)
    return parser


def close_options(parser: argparse.ArgumentParser, given: Sequence[str]) -> str:
    """A "did you mean" hint for unrecognised options: the parser's closest option strings.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The (sub)command's parser.
    given : sequence of str
        The unrecognised arguments.

    Returns
    -------
    str
        ``"; did you mean --ci?"`` (each option given that has a close one), or ``""``.

    Examples
    --------
    >>> sub = build_parser()._subparsers._group_actions[0].choices["leaderboard"]
    >>> close_options(sub, ["--cis"])
    '; did you mean --ci?'
    """
    import difflib

    known = [s for a in parser._actions for s in a.option_strings if s.startswith("--")]
    close = [c for g in given if g.startswith("--")
             for c in difflib.get_close_matches(g.split("=")[0], known, n=1, cutoff=0.7)]
    return f"; did you mean {' or '.join(dict.fromkeys(close))}?" if close else ""


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Print every warning raised inside as one line on stderr (``ts2viz: warning: ...``), each time.

    :class:`~ts2viz.errors.InputWarning` and ``UserWarning`` are printed with their message only, other
    categories with their name first.

    Yields
    ------
    None
        Inside the block, warnings are shown that way.
    """
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        kind = "" if issubclass(category, (InputWarning,)) or category is UserWarning else f"{category.__name__}: "
        print(f"ts2viz: warning: {kind}{text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ts2viz`` command line and return its exit code.

    Bad input (:class:`~ts2viz.errors.InputError`) is one line on stderr, ``ts2viz: error: ...``, and exit
    code 2; warnings are one line each (:func:`one_line_warnings`); an interrupt is 130; a closed stdout
    (``ts2viz leaderboard --out - | head``) ends quietly with 0. ``--help``, ``--version`` and a
    malformed command line exit through ``argparse`` (``SystemExit``, code 0 or 2).

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name; ``None``: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code: 0 success, 2 bad input, 130 interrupted.

    Examples
    --------
    The published TS2 leaderboard of three bundled metrics, as CSV on stdout (fractions, not x100):

    >>> main(["leaderboard", "--metrics", "CLIPScore,TIFA-GPT4V,DSG-GPT4V", "--out", "-"])
    metric,ord_avg,sep_avg,ord_synth,sep_synth,ord_nat,sep_nat,ord_real,sep_real
    CLIPScore,0.714139,0.906539,0.749702,0.905356,0.579941,0.915259,0.692976,0.903442
    TIFA-GPT4V,0.778654,0.831812,0.836384,0.861905,0.616170,0.804529,0.694870,0.736871
    DSG-GPT4V,0.795807,0.841730,0.825662,0.866366,0.737113,0.817209,0.729856,0.765958
    0

    Bad input is exit code 2, with one line on stderr (here ``ts2viz: error: --metrics: no metric 'clipscor' in
    the scores; did you mean 'CLIPScore' ...``):

    >>> main(["leaderboard", "--metrics", "clipscor"])
    2
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    # the top level has options without values only (-h, --version): its first other word is the subcommand
    parser = build_parser(only=next((a for a in argv if not a.startswith("-")), ""))
    args, extra = parser.parse_known_args(argv)
    if extra:     # argparse's own message, with the subcommand's closest options
        sub = parser._subparsers._group_actions[0].choices[args.command]
        sub.error(f"unrecognized arguments: {' '.join(extra)}{close_options(sub, extra)}")
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
