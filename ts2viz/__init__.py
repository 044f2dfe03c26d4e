"""ts2viz: meta-evaluate text-to-image faithfulness metrics on semantic error graphs (T2IScoreScore).

Data flows one way: dataset -> scores table -> meta-metrics -> figures/ui.

The published TS2 leaderboard from the bundled data, in half a second (the paper's Table: CLIPScore's
average Ord 71.4 and Sep 90.7):

    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), policy="paper")
    >>> board = mm.leaderboard().set_index("metric")
    >>> (100 * board.loc["CLIPScore", ["ord_avg", "sep_avg"]]).round(1).tolist()
    [71.4, 90.7]

Heavy dependencies (torch, transformers, open_clip, gradio) are imported only where they are used, and
``import ts2viz`` imports none of its names' modules: each is imported the first time it is read (numpy and the
meta-metrics only with ``compute`` or ``MetaMetrics``), so that ``ts2viz --help`` starts without them.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .dataset import Dataset, load_dataset
    from .errors import InputError
    from .metametrics.policy import PAPER, SPEC, Policy
    from .metametrics.results import MetaMetrics, compute
    from .scores import Scores, bundled_scores, read_scores, write_scores
    from .seg import SEG, Node

#: each public name -> the module it lives in, imported when the name is first read
_HOMES = {"Dataset": ".dataset", "load_dataset": ".dataset", "InputError": ".errors",
          "MetaMetrics": ".metametrics.results", "compute": ".metametrics.results",
          "Policy": ".metametrics.policy", "PAPER": ".metametrics.policy", "SPEC": ".metametrics.policy",
          "Scores": ".scores", "bundled_scores": ".scores", "read_scores": ".scores", "write_scores": ".scores",
          "SEG": ".seg", "Node": ".seg"}

__all__ = [*_HOMES, "__version__"]


def __getattr__(name: str):
    """A public name, from its module (imported now, once: the name is then a plain attribute)."""
    if name not in _HOMES:
        raise AttributeError(f"module 'ts2viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
