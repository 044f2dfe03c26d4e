"""``ts2viz metametrics``: per-SEG ord, sep, delta, kendall and signed sep of every metric, as CSV."""
from __future__ import annotations

import argparse
import sys

from .common import (
    add_eval_options,
    check_out,
    compute_metametrics,
    load_inputs,
    write_csv,
)

METAMETRICS_COLUMNS = ["seg_id", "partition", "metric", "ord", "sep", "delta", "kendall", "signed_sep", "n_walks"]


def cmd_metametrics(args: argparse.Namespace) -> int:
    """``ts2viz metametrics``: per-SEG ord, sep, delta, kendall (and coverage) of every metric, as CSV.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    int
        0.

    Raises
    ------
    InputError
        For bad input.
    """
    import numpy as np

    check_out(args.out)
    mm, cov = compute_metametrics(args, load_inputs(args), averaged_only=False)
    df = mm.segs()[METAMETRICS_COLUMNS]
    # scored images of each (SEG, metric): the per-SEG side of the coverage warnings
    df["n_images"] = np.repeat(cov[0].seg_images if cov else [], len(mm.metrics)).astype(int)
    df["n_scored"] = np.stack([c.seg_scored for c in cov], axis=1).ravel().astype(int) if cov else []
    write_csv(df, args.out)
    print(f"wrote {len(df)} rows ({len(mm.seg_ids)} SEGs x {len(mm.metrics)} metrics) to "
          f"{'stdout' if args.out == '-' else args.out}", file=sys.stderr if args.out == "-" else sys.stdout)
    return 0


def declare_metametrics(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz metametrics``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    add_eval_options(p)
    p.add_argument("--out", required=True, help="CSV file to write; - for stdout")
    p.set_defaults(func=cmd_metametrics)
