"""Plotly figures of the app: pure functions of data (arrays, dicts, DataFrames) to ``go.Figure``.

No statistics are computed here: callers pass meta-metric values from :mod:`ts2viz.metametrics` and
:mod:`ts2viz.statistics` (node means come from :func:`ts2viz.metametrics.definitions.node_means`). Meta-metric
values are shown x100 and counts in the right number (:mod:`ts2viz.display`). Plotly is imported when a
figure is built. One module per view, the shared parts apart:

- :mod:`.style`: the palette and colour scales, WCAG contrast (luminance, ratio, text colour on a background),
  node and family colours (with their contrast on white),
  the figure constructor (:func:`figure`, :func:`plain_figures`), text widths, legends, the empty figure;
- :mod:`.labels`: label placement, deterministic: scatter labels greedily at a nominal plot size
  (:func:`place_labels`), KS labels in separate vertical slots (:func:`ks_label_slots`);
- :mod:`.seg_views`: one SEG: scores by error count per walk, node score CDFs with KS distances, where
  uploaded images land;
- :mod:`.leaderboard`: Ord against Sep, one point per metric;
- :mod:`.comparisons`: metric-metric correlation and significance heatmaps, two metrics' per-SEG values;
- :mod:`.question_heatmap`: questions x nodes of one SEG;
- :mod:`.slice_heatmap`: metrics x slices of a rated set (Gecko's Fig. 3), non-significant cells marked;
- :mod:`.cell_text`: the heatmaps' cell text, each cell's in black or white for its own colour (WCAG 4.5:1);
- :mod:`.cost_front`: quality against cost with the Pareto front;
- :mod:`.nuisance_overlay`: a nuisance test on one SEG: node distributions with the transformed copies, the walk with
  its nuisance band.

The builders, the palette and the layout helpers are importable from here
(``from ts2viz.figures import walk_figure``), as they were from the single module ``figures.py``.
"""
from __future__ import annotations

from .comparisons import corr_heatmap, pair_scatter, significance_heatmap
from .cost_front import cost_figure
from .labels import (KS_LABEL_SIZE, KS_SLOT_PX, LABEL_PLOT_WIDTH, LABEL_RINGS, dense_cluster, ks_label_slots,
                     place_labels)
from .leaderboard import UNLABELLED_CHARS, UNLABELLED_ROW_PX, ord_sep_scatter
from .question_heatmap import question_node_heatmap
from .slice_heatmap import slice_heatmap
from .seg_views import CDF_Y_RANGE, cdf_figure, landing_figure, walk_figure
from .style import (CORR_SCALE, EVIDENCE_SCALE, FAMILY_COLORS, GOODNESS_SCALE, GRID, HIGHLIGHT, INK, LEGEND_WIDTH,
                    LEVEL_COLORS, METRIC_A, METRIC_B, MIN_CONTRAST, MUTED, NOT_SIGNIFICANT, SHADE_HUE_TURN,
                    SHADE_LIGHTNESS, SIGNED_SCALE, TITLE_CHARS, TITLE_PX, TOOLBAR_PX, WALK_COLORS, PlainFigure,
                    bottom_legends, contrast_on_white, empty_figure, family_color, figure, level_color, mix,
                    node_colors, plain_figures, stack_legends, text_width)

__all__ = ["CDF_Y_RANGE", "CORR_SCALE", "EVIDENCE_SCALE", "FAMILY_COLORS", "GOODNESS_SCALE", "GRID", "HIGHLIGHT",
           "INK", "KS_LABEL_SIZE", "KS_SLOT_PX", "LABEL_PLOT_WIDTH", "LABEL_RINGS", "LEGEND_WIDTH", "LEVEL_COLORS",
           "METRIC_A", "METRIC_B", "MIN_CONTRAST", "MUTED", "NOT_SIGNIFICANT", "PlainFigure", "SHADE_HUE_TURN",
           "SHADE_LIGHTNESS", "SIGNED_SCALE", "TITLE_CHARS", "TITLE_PX", "TOOLBAR_PX", "UNLABELLED_CHARS",
           "UNLABELLED_ROW_PX", "WALK_COLORS", "bottom_legends", "cdf_figure", "contrast_on_white", "corr_heatmap",
           "cost_figure", "dense_cluster", "empty_figure", "family_color", "figure", "ks_label_slots",
           "landing_figure", "level_color", "mix", "node_colors", "ord_sep_scatter", "pair_scatter",
           "place_labels", "plain_figures", "question_node_heatmap", "significance_heatmap", "slice_heatmap",
           "stack_legends", "text_width", "walk_figure"]
