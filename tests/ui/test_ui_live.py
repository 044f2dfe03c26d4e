"""Live scoring and upload scoring in the app, through the metric library with a tiny local CLIP."""
from __future__ import annotations

import numpy as np
import pytest

from ts2viz.display import md_text
from ts2viz.errors import InputError
from ts2viz.ui.callbacks import board as cb_board, correlations as cb_corr, live as cb_live
from ts2viz.ui.callbacks.explorer import view as cb_explorer_view
from ts2viz.ui import load_state
from tiny_models import tiny
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def spec():
    return f"clipscore:{tiny('clip')}"


@pytest.fixture()
def app(tmp_path):
    write_dataset(tmp_path / "ds", big_image=False)
    return load_state(str(tmp_path / "ds"), [str(write_scores(tmp_path, tmp_path / "ds"))],
                      cache_root=tmp_path / "cache").view()


def test_live_score_current_seg_joins_everything(app, spec):
    seen = []
    msg = cb_live.live_score(app, spec, "seg", 1, progress=lambda f, desc=None: seen.append(f))
    assert "SEG 1" in msg
    assert seen and 0 <= min(seen) and max(seen) <= 1
    assert spec in app.metrics and app.kind_of(spec) == "live"
    board = cb_board.leaderboard(app, "paper").set_index("metric")
    assert board.loc[spec, "segs"] == 1 and board.loc[spec, "source"] == "live"
    sc = app.image_scores([im.file_name for n in app.dataset[1].nodes for im in n.images], [spec])
    assert np.isfinite(sc).all()
    assert np.isnan(app.image_scores([app.dataset[0].nodes[0].images[0].file_name], [spec])).all()
    v = cb_explorer_view.seg_view(app, "paper", 1, spec, "GoodScore")
    # the header is Markdown: the spec is written escaped (a temp folder's "_" becomes "\_")
    assert md_text(spec) in v["header"] and len(v["walk_table"].data) == 4
    assert f"{spec} " in v["gallery"][0][1]
    # the same metric on another SEG is folded into the same column
    cb_live.live_score(app, spec, "seg", 0)
    assert app.metrics.count(spec) == 1
    assert cb_board.leaderboard(app, "paper").set_index("metric").loc[spec, "segs"] == 2
    # it reaches the correlations too
    assert spec in cb_corr.corr_matrix(app, "paper", "ord").columns


def test_upload_scoring_against_seg(app, spec, tmp_path):
    from PIL import Image

    ups = []
    for k, col in enumerate([(200, 40, 40), (40, 200, 40)]):
        p = tmp_path / f"mine{k}.png"
        Image.new("RGB", (80, 60), col).save(p)
        ups.append(str(p))
    r = cb_live.score_uploads(app, ups, "a red apple on a wooden table", spec, seg_id=0)
    t = r["table"]
    assert list(t["image"]) == ["mine0.png", "mine1.png"]
    assert list(t.columns) == list(cb_live.UPLOAD_COLUMNS)          # the headers the empty table shows
    assert np.isfinite(t["score"]).all()
    assert set(t["closest node (mean)"]) <= set(app.dataset[0].labels)
    # the SEG was scored with the same metric for the comparison, and the figure shows both
    assert spec in app.metrics
    fig = r["figure"]
    assert sum(tr.type == "box" for tr in fig.data) == len(app.dataset[0].nodes)
    assert len(fig.layout.shapes) == 2
    # same images, same prompt: same scores as scoring them directly through the library
    from ts2viz import engine

    direct = engine.score_images(spec, [Image.open(p).convert("RGB") for p in ups],
                                 ["a red apple on a wooden table"] * 2, use_cache=False)
    assert np.allclose(t["score"], np.round(direct, 4), atol=1e-4)


def test_upload_bad_input_keeps_app_working(app, spec, tmp_path):
    bad = tmp_path / "x.png"
    bad.write_text("hello")
    with pytest.raises(InputError, match="not a readable image"):
        cb_live.score_uploads(app, [str(bad)], "a prompt", spec, seg_id=0)
    with pytest.raises(InputError, match="prompt is empty"):
        cb_live.score_uploads(app, [str(bad)], "", spec, seg_id=0)
    with pytest.raises(InputError, match="at least one image"):
        cb_live.score_uploads(app, [], "a prompt", spec, seg_id=0)
    with pytest.raises(InputError):
        cb_live.live_score(app, "clipscore:/no/such/model/folder", "seg", 0)
    assert len(cb_board.leaderboard(app, "paper")) == 3


def test_live_score_without_images_is_a_message(tmp_path, spec):
    a = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        with pytest.raises(InputError):
            cb_live.live_score(a, spec, "seg", 0)
    finally:
        os.environ.pop("HF_HUB_OFFLINE", None)
    assert spec not in a.metrics
