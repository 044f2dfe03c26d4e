"""Old import paths keep working: every public name that ``ts2viz.stats``, ``ts2viz.uncertainty``,
``ts2viz.significance`` (and its submodules), ``ts2viz.metaeval.rank_bootstrap`` and ``ts2viz.cost.figure``
defined before the statistics and figures moved into their packages (the lists below are those modules' own
definitions at main fed7861) is still importable from there, and is the very object of its new home."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

OLD = {
    "ts2viz.stats": ("ts2viz.statistics.ord_sep", [
        "CONSTANT_RANK_TOL", "KSResult", "kendall_ord", "ks_separation", "mean_gap", "node_means", "rankdata",
        "spearman_ord"]),
    "ts2viz.uncertainty": (None, [
        "BootstrapSettings", "DEFAULTS", "EXACT_MAX_N", "LeaderboardBootstrap", "MAX_RESAMPLES", "PERMUTATION_MAX_N",
        "PairedComparison", "PairwiseComparison", "RankIntervals", "WilcoxonResult", "averaged_segs", "bootstrap",
        "cell_names", "compare", "holm", "leaderboard_table", "pairwise", "quantiles", "rank_intervals",
        "resample_counts", "seg_values", "split_cell", "stratified_counts", "wilcoxon"]),
    "ts2viz.significance": (None, [
        "Clusters", "DEFAULT_SETTINGS", "PairwisePermutation", "PermutationResult", "PermutationSettings",
        "pairwise_unit_permutation", "permutation_test", "significance_clusters", "standardise"]),
    "ts2viz.significance.ts2": ("ts2viz.statistics.leaderboard_permutation", [
        "cell_unit_values", "leaderboard_clusters", "pairwise_permutation", "perm_both", "seg_sds", "seg_statistic"]),
    "ts2viz.significance.gold": ("ts2viz.statistics.gold_permutation", [
        "GoldStatistic", "STATISTICS", "VECTORISED", "gold_clusters", "gold_permutation_test", "inversions_rows",
        "kendall_rows", "metric_estimates", "pairwise_gold_permutation", "pooled_statistic"]),
    "ts2viz.significance.correlation": ("ts2viz.statistics.unit_correlation", [
        "METHODS", "correlation_statistic", "rank_rows"]),
    "ts2viz.significance.two_level": ("ts2viz.statistics.two_level_bootstrap", [
        "CHUNK", "image_pools", "node_resample_index", "two_level_bootstrap"]),
    "ts2viz.metaeval.rank_bootstrap": ("ts2viz.statistics.rank_bootstrap", [
        "ResampledSpearman", "kendall_influence", "kendall_influence_from_codes", "prefix_counts",
        "spearman_influence", "spearman_influence_from_ranks"]),
    "ts2viz.cost.figure": ("ts2viz.figures.cost_front", ["cost_figure"]),
}
#: where the names of the old modules that were split now live
SPLIT = {"ts2viz.uncertainty": ("ts2viz.statistics.bootstrap", "ts2viz.statistics.wilcoxon",
                                "ts2viz.statistics.paired_comparison", "ts2viz.statistics.rank_intervals"),
         "ts2viz.significance": ("ts2viz.statistics.permutation_tests", "ts2viz.statistics.clusters")}


def _defined(module) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments), not those it imports."""
    out = set()
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


@pytest.mark.parametrize("old", sorted(OLD))
def test_old_path_reexports_the_new_objects(old):
    new, names = OLD[old]
    mod = importlib.import_module(old)
    homes = [importlib.import_module(n) for n in ((new,) if new else SPLIT[old])]
    for name in names:
        obj = getattr(mod, name)
        defined = [h for h in homes if name in _defined(h)]
        assert len(defined) == 1, f"{old}.{name} should be defined in exactly one of {[h.__name__ for h in homes]}"
        assert obj is vars(defined[0])[name], f"{old}.{name} is not {defined[0].__name__}.{name}"
    assert sorted(mod.__all__) == sorted(names), f"{old}.__all__ differs from what the old module defined"


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
