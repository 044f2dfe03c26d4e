"""Human-judgment gold standards: rated sets of images with human ratings and metric scores.

- :mod:`.model`: :class:`RatedSet` (images, prompts, ratings per rater and rating set, scores);
- :mod:`.folder`: the folder format and its reader (bad input -> one-line :class:`InputError`);
- :mod:`.bundled`: TIFA160, ImagenHub text-to-image, GenAI-Bench (527 and the teaser subset);
- :mod:`.tags`: tags of prompts and images in families (DSG categories, Gecko2K skills, T2I models, the
  user's), the slices they define;
- :mod:`.answers`: DSG / VQ²A scores per image from released VQA answers, through the library's
  accumulation code;
- :mod:`.pairs`: side-by-side gold (pairs with a human verdict) and judges' verdicts, GenAI-Bench's and
  MMRB2's layouts, the bundled ``genaibench-pairwise``.

The statistics (Gecko's point-wise, pair-wise and model-ordering tasks) are in :mod:`ts2viz.metaeval`; the
same metric families ranked on every gold standard, TS2 included, in :mod:`ts2viz.crossgold`.
Pure numpy/pandas: never imports torch or gradio.
"""
from .answers import QA_METRICS, AnswerScoring, answer_scores
from .bundled import BUNDLED, load_gold
from .folder import load_folder, read_score_table
from .model import RatedSet

__all__ = ["BUNDLED", "QA_METRICS", "AnswerScoring", "RatedSet", "answer_scores", "load_folder", "load_gold",
           "read_score_table"]
