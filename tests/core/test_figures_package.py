"""The figures package keeps every builder: ``from ts2viz.figures import X`` works for every public name the
single module ``ts2viz/figures.py`` defined at main fed7861, before the figures became a package."""
from __future__ import annotations


def test_the_figures_package_keeps_every_builder():
    """``from ts2viz.figures import X`` works for every public name ``ts2viz/figures.py`` defined at fed7861."""
    import ts2viz.figures as figures

    old_public = [
        "CDF_Y_RANGE", "CORR_SCALE", "EVIDENCE_SCALE", "FAMILY_COLORS", "GOODNESS_SCALE", "GRID", "HIGHLIGHT", "INK",
        "KS_LABEL_SIZE", "KS_SLOT_PX", "LABEL_PLOT_WIDTH", "LABEL_RINGS", "LEGEND_WIDTH", "LEVEL_COLORS", "METRIC_A",
        "METRIC_B", "MIN_CONTRAST", "MUTED", "NOT_SIGNIFICANT", "PlainFigure", "SHADE_HUE_TURN", "SHADE_LIGHTNESS",
        "SIGNED_SCALE", "TITLE_CHARS", "TITLE_PX", "TOOLBAR_PX", "UNLABELLED_CHARS", "UNLABELLED_ROW_PX",
        "WALK_COLORS", "bottom_legends", "cdf_figure", "contrast_on_white", "corr_heatmap", "dense_cluster",
        "empty_figure", "family_color", "figure", "ks_label_slots", "landing_figure", "level_color", "mix",
        "node_colors", "ord_sep_scatter", "pair_scatter", "place_labels", "plain_figures", "question_node_heatmap",
        "significance_heatmap", "stack_legends", "text_width", "walk_figure"]
    missing = [n for n in old_public if not hasattr(figures, n)]
    assert not missing, f"ts2viz.figures lost {missing}"
    assert set(old_public) <= set(figures.__all__)
