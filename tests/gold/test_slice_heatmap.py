"""The metric x slice heatmap marks exactly the cells whose p-value is above 0.05 and says each slice's size."""
import numpy as np

from ts2viz.figures import slice_heatmap
from ts2viz.figures.style import plain_figures
from ts2viz.metaeval.slices import evaluate_slices_arrays
from ts2viz.statistics.bootstrap import BootstrapSettings


def test_marks_follow_the_pvalues():
    rng = np.random.default_rng(4)
    y = rng.normal(size=200)
    prompts, models = np.repeat(np.arange(100), 2), np.tile([0, 1], 100)
    x = np.stack([y + 0.3 * rng.normal(size=200), rng.normal(size=200)])
    masks = np.stack([np.ones(200, bool), prompts < 50, prompts == 0])
    res = evaluate_slices_arrays(x, y, prompts, models, ["good", "noise"], masks, ["all", "half", "one"],
                                 bootstrap=BootstrapSettings(n_resamples=300))
    with plain_figures():
        fig = slice_heatmap(res)
    heat, dark = fig.data[0], fig.data[1]
    p = res.pvalue("spearman").T
    # wide margins: the good metric's p-value is at the floor, the noise metric's far above 0.05
    assert p[0, 0] <= 2 / 300 and p[1, 0] > 0.2
    for i in range(2):
        for s in range(3):
            text = heat["text"][i][s]
            marked = not p[i, s] <= 0.05
            assert text.startswith("(") == marked or text == "n/a"
            assert (dark["z"][i][s] is not None and not np.isnan(dark["z"][i][s])) == (marked and text != "n/a")
    assert heat["customdata"][1][2] == ["one", "noise"]
    assert heat["x"][2] == "one<br>2 images, 1 prompt"
