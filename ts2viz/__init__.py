"""ts2viz: meta-evaluate text-to-image faithfulness metrics on semantic error graphs (T2IScoreScore).

Data flows one way: dataset -> scores table -> meta-metrics -> figures/ui.

The published TS2 leaderboard from the bundled data, in half a second (the paper's Table: CLIPScore's
average Ord 71.4 and Sep 90.7):

    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), policy="paper")
    >>> board = mm.leaderboard().set_index("metric")
    >>> (100 * board.loc["CLIPScore", ["ord_avg", "sep_avg"]]).round(1).tolist()
    [71.4, 90.7]

Heavy dependencies (torch, transformers, open_clip, gradio) are imported only where they are used.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .dataset import Dataset, load_dataset  # noqa: E402
from .errors import InputError  # noqa: E402
from .metametrics.policy import PAPER, SPEC, Policy  # noqa: E402
from .metametrics.results import MetaMetrics, compute  # noqa: E402
from .scores import Scores, bundled_scores, read_scores, write_scores  # noqa: E402
from .seg import SEG, Node  # noqa: E402

__all__ = ["Dataset", "load_dataset", "InputError", "MetaMetrics", "compute", "Policy", "PAPER", "SPEC", "Scores",
           "bundled_scores", "read_scores", "write_scores", "SEG", "Node", "__version__"]
