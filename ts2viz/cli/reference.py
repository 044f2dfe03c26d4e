"""The command-line reference as Markdown, generated from the argument parser itself.

The documentation's CLI reference page (``docs/reference/cli.md``) is this function's output, written by
``python tools/gen_docs.py``; a test fails when the page and the parser disagree, so the page cannot
go stale.
"""
from __future__ import annotations

import argparse
import os
from contextlib import contextmanager
from typing import Iterator

__all__ = ["cli_reference_markdown"]

#: the width the usage lines are wrapped at (fixed, so that the page does not depend on the terminal)
WIDTH = 100


@contextmanager
def _columns(width: int) -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.dest}`"
    names = ", ".join(f"`{s}`" for s in action.option_strings)
    if action.nargs == 0:
        return names
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return f"{names} `{metavar}`"


def _default(action: argparse.Action) -> str:
    d = action.default
    if action.nargs == 0 or d is None or d is argparse.SUPPRESS or d == [] or d is False:
        return ""
    return f"`{d}`"


def _is_help(action: argparse.Action) -> bool:
    return "-h" in action.option_strings or "--help" in action.option_strings


def _is_subparsers(action: argparse.Action) -> bool:
    return isinstance(action.choices, dict) and bool(action.choices) and all(
        isinstance(p, argparse.ArgumentParser) for p in action.choices.values())


def _arguments_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:  # noqa: SLF001 - argparse has no public list of a parser's actions
        if _is_help(action) or _is_subparsers(action):
            continue
        if action.help is argparse.SUPPRESS:
            continue
        help_text = action.help or ""
        if "%(" in help_text:
            help_text = help_text % {**vars(action), "prog": parser.prog,
                                     "default": action.default}
        choices = f" (one of: {', '.join(map(str, action.choices))})" if action.choices and not isinstance(
            action.choices, dict) else ""
        rows.append(f"| {_flags(action)} | {_cell(help_text + choices)} | {_default(action)} |")
    if not rows:
        return []
    return ["| argument | what it does | default |", "|---|---|---|", *rows]


def cli_reference_markdown(parser: argparse.ArgumentParser | None = None) -> str:
    """The reference of every ``ts2viz`` subcommand (usage, description, arguments) as Markdown.

    Parameters
    ----------
    parser : argparse.ArgumentParser, optional
        The parser to document; default: :func:`ts2viz.cli.build_parser`'s.

    Returns
    -------
    str
        One Markdown page: a section per subcommand, in the order the parser defines them, each with its
        usage line, its description and a table of its arguments with their defaults.

    Examples
    --------
    >>> page = cli_reference_markdown()
    >>> page.splitlines()[0]
    '# Command-line reference'
    >>> "## ts2viz leaderboard" in page
    True
    """
    if parser is None:
        from . import build_parser

        parser = build_parser()
    with _columns(WIDTH):
        out = ["# Command-line reference", "",
               "Generated from the argument parser (`ts2viz.cli.build_parser`) by `python tools/gen_docs.py`; "
               "do not edit by hand. Exit codes: 0 success, 2 bad input (one line on stderr naming the file, "
               "row and problem, and no output file), 1 other errors, 130 interrupted.", "",
               "```text", parser.format_usage().strip(), "```", ""]
        subs = [a for a in parser._actions if _is_subparsers(a)]  # noqa: SLF001
        helps = {}
        for sub in subs:
            for choice in sub._choices_actions:  # noqa: SLF001
                helps[choice.dest] = choice.help or ""
            for name, sp in sub.choices.items():
                out += [f"## ts2viz {name}", ""]
                if helps.get(name):
                    h = _cell(helps[name]).rstrip(".")
                    out += [h[:1].upper() + h[1:] + ".", ""]
                out += ["```text", sp.format_usage().strip(), "```", ""]
                if sp.description and _cell(sp.description) != _cell(helps.get(name, "")):
                    out += [sp.description.strip(), ""]
                table = _arguments_table(sp)
                if table:
                    out += [*table, ""]
                if sp.epilog:
                    out += [sp.epilog.strip(), ""]
    return "\n".join(out).rstrip() + "\n"
