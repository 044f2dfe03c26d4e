"""ts2viz.scores.load_inputs: the one reader of a meta-evaluation's dataset and scores, for the CLI and the app."""
from __future__ import annotations

import numpy as np
import pytest

from ts2viz.errors import InputError
from ts2viz.scores import BUNDLED, bundled_scores, load_inputs


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    """A scores file of the TS2 images: one metric, MyScore = 1 - CLIPScore / 100."""
    b = bundled_scores()
    path = tmp_path_factory.mktemp("scores") / "mine.csv"
    clip = b.values[:, b.metrics.index("CLIPScore")]
    lines = ["file_name,MyScore"] + [f"{f},{float(1 - c / 100)!r}" for f, c in zip(b.file_names, clip)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_no_scores_means_the_bundled_ones(mine):
    inp = load_inputs("ts2")
    assert [n for n, _ in inp.tables] == [BUNDLED] and inp.scores is inp.tables[0][1]
    assert inp.metrics is None and inp.seg_ids is None and len(inp.scores.metrics) == 19
    assert load_inputs("ts2", []).tables == [] and load_inputs("ts2", []).scores is None


def test_bundled_plus_a_file_folded_names_and_seg_ids(mine):
    inp = load_inputs("ts2", [BUNDLED, str(mine)], metrics="clipscore, myscore", lower_is_better=["myscore"],
                      seg="0-2,5")
    assert [n for n, _ in inp.tables] == [BUNDLED, str(mine)]
    assert inp.metrics == ["CLIPScore", "MyScore"] and inp.seg_ids == [0, 1, 2, 5]
    assert inp.scores.metrics[:1] == ["CLIPScore"] and "MyScore" in inp.scores.metrics
    assert "MyScore" in inp.scores.lower_is_better
    b = bundled_scores()
    got = inp.scores.aligned(b.file_names[:3], ["MyScore"], oriented=False)[:, 0]
    want = 1 - b.values[:3, b.metrics.index("CLIPScore")] / 100
    assert np.allclose(got, want, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("kwargs, message", [
    (dict(scores=["mine"], dsg="gated"), r"--dsg applies to the bundled TS2 scores only"),
    (dict(metrics="nosuch"), r"--metrics: no metric 'nosuch' in the scores"),
    (dict(lower_is_better=["clipscor"]), r"--lower-is-better names a metric not in the scores: 'clipscor'; did you mean 'CLIPScore'"),
    (dict(seg="999"), r"--seg: no SEG with id 999"),
])
def test_one_line_errors(mine, kwargs, message):
    if kwargs.get("scores") == ["mine"]:
        kwargs = {**kwargs, "scores": [str(mine)]}
    with pytest.raises(InputError, match=message):
        load_inputs("ts2", **kwargs)


def test_bundled_scores_need_the_ts2_data(tmp_path):
    import csv

    from ts2viz.paths import bundled_data_dir

    rows = list(csv.reader(open(bundled_data_dir() / "ts2" / "metadata.csv", encoding="utf-8")))
    head, ids = rows[0], {"0", "1"}
    (tmp_path / "metadata.csv").write_text("\n".join(",".join(r) for r in [head] + [r for r in rows[1:] if r[0] in ids]) + "\n")
    with pytest.raises(InputError, match="--scores is required with a dataset other than TS2"):
        load_inputs(str(tmp_path))
    with pytest.raises(InputError, match=r"--scores ts2 \(the bundled TS2 scores\) needs the TS2 data"):
        load_inputs(str(tmp_path), [BUNDLED])
    assert load_inputs(str(tmp_path), []).tables == []        # the app: a dataset without scores


def test_the_app_reads_its_scores_through_it(mine):
    """load_state names each table as before; 'ts2' among its scores is the bundled table, as on the CLI."""
    from ts2viz.ui import load_state

    app = load_state("ts2", [BUNDLED, str(mine)], fetch_images=False)
    assert "MyScore" in app.metrics and "CLIPScore" in app.metrics and len(app.metrics) == 20
    with pytest.raises(InputError, match="--lower-is-better names a metric not in the scores"):
        load_state("ts2", [str(mine)], lower_is_better=["nosuch"], fetch_images=False)
