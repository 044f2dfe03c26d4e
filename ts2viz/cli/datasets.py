"""``ts2viz validate DIR`` and ``ts2viz push DIR --repo OWNER/NAME``: check a dataset folder, upload one.

``validate`` checks a SEG dataset folder made by hand or by another tool, listing every problem (file,
row, what was expected), not only the first one that loading stops at. ``push`` is the operator's upload
of a dataset folder (e.g. one exported by :func:`ts2viz.authoring.export_dataset`) to a Hugging Face
dataset repo, after the same checks.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError

#: image files listed by name before the rest are counted
SHOWN_MISSING = 5


def declare_validate(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz validate``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    p.description = ("Check a SEG dataset folder (metadata.csv, optional edges.csv and nodes.csv, images) with every "
                     "rule the loader applies, and list each problem as one line naming the file, the "
                     "row and what was expected. Exit code 0 when the folder loads, 2 otherwise.")
    p.add_argument("folder", metavar="DIR", help="dataset folder with metadata.csv")
    p.add_argument("--no-images", action="store_true", help="do not check that the image files exist")
    p.add_argument("--limit", type=int, default=1000, metavar="N", help="list at most N problems (default 1000)")
    p.set_defaults(func=run_validate)


def declare_push(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz push``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    p.description = ("Check a SEG dataset folder with every rule of the loader (and that its images exist), "
                     "then upload its files (metadata.csv, edges.csv, nodes.csv, README.md and the images "
                     "metadata.csv names; nothing else) in one commit to a Hugging Face dataset repo, created "
                     "if missing. The token comes from HF_TOKEN or `hf auth login`. Exit code 2 with one line "
                     "on a problem.")
    p.add_argument("folder", metavar="DIR", help="dataset folder with metadata.csv")
    p.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the dataset repo to push to")
    p.add_argument("--private", action="store_true", help="create the repo private (if it does not exist)")
    p.add_argument("--endpoint", metavar="URL", default=None,
                   help="hub endpoint (default: HF_ENDPOINT or https://huggingface.co)")
    p.add_argument("--message", metavar="TEXT", default=None, help="commit message")
    p.set_defaults(func=run_push)


def run_validate(args: argparse.Namespace) -> int:
    """``ts2viz validate DIR``: print every problem of a dataset folder, its warnings and a verdict line.

    Problems are ``error: FILE, row N: ...`` lines (at most ``--limit``), then the warnings and up to
    :data:`SHOWN_MISSING` missing image files by name (the rest counted).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        0 when the folder loads, 2 when it has problems.

    Raises
    ------
    InputError
        For ``--limit`` below 1.
    """
    from ..dataset import validate_folder

    if args.limit < 1:
        raise InputError(f"--limit: expected a positive number, got {args.limit}")
    rep = validate_folder(args.folder, check_images=not args.no_images, limit=args.limit)
    for e in rep.errors:
        print(f"error: {e}", file=sys.stdout)
    if rep.dropped:
        print(f"error: ... and {rep.dropped} more problem(s) (raise --limit to list them)")
    for w in rep.warnings:
        print(f"warning: {w}")
    if rep.missing_images:
        for fn, row in rep.missing_images[:SHOWN_MISSING]:
            print(f"warning: {rep.folder / 'metadata.csv'}, row {row}: image file {fn!r} not found")
        more = len(rep.missing_images) - SHOWN_MISSING
        if more > 0:
            print(f"warning: ... and {more} more image file(s) not found")
    n_err = len(rep.errors) + rep.dropped
    verdict = "OK" if rep.ok else f"{n_err} problem(s)"
    print(f"{rep.folder}: {verdict}; {rep.n_segs} SEG(s) and {rep.n_images} image row(s) load"
          + (f" ({len(rep.missing_images)} image file(s) missing)" if rep.missing_images else ""))
    return 0 if rep.ok else 2


def run_push(args: argparse.Namespace) -> int:
    """``ts2viz push DIR --repo OWNER/NAME``: upload a dataset folder (:func:`ts2viz.authoring.push_to_hub`).

    Prints the commit's URL and how to load the dataset.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    InputError
        For a folder with problems or missing images, a malformed repo id, or a hub error, in one line.
    """
    from ..authoring.hub import DEFAULT_COMMIT_MESSAGE, push_to_hub

    url = push_to_hub(args.folder, args.repo, endpoint=args.endpoint, private=args.private,
                      commit_message=args.message or DEFAULT_COMMIT_MESSAGE)
    print(f"pushed {args.folder} to dataset {args.repo}: {url}")
    print(f"load it with: ts2viz leaderboard --dataset {args.repo} --scores SCORES.csv")
    return 0
