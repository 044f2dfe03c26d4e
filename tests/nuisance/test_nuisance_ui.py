"""The nuisance test in the app, without a browser: the Nuisance tab's views from an operator's long table
and from a live run (tiny CLIP), their figures as the page receives them (checked against Plotly's schema
and against the scores), the gallery's transformed images, the stability table, and the caps of public
mode on a live run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from plotly_schema import schema_errors
from tiny_models import tiny
from ts2viz.cli import main
from ts2viz.errors import InputError
from ts2viz.nuisance import read_nuisance, transforms as T
from ts2viz.ui import load_state
from ts2viz.ui.serving.access import public
from ts2viz.ui.callbacks import nuisance as cb
from ts2viz.ui.state import nuisance_session as ns_store
from ts2viz.ui.glue.plots import build_plain, page_plot
from ui_helpers import write_dataset, write_scores

TRANSFORMS = "jpeg:quality=30,blur:sigma=2,hflip,prefix"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("nui")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    spec = f"clipscore:{tiny('clip')}"
    assert main(["nuisance", "--metric", spec, "--dataset", str(d / "ds"), "--transforms", TRANSFORMS, "--out",
                 str(d / "n.csv"), "--cache", str(d / "cache"), "--resamples", "200", "-q"]) == 0
    return d, scores, spec


@pytest.fixture()
def app(made, tmp_path):
    d, scores, spec = made
    state = load_state(str(d / "ds"), [str(scores)], cache_root=tmp_path / "appcache")
    assert ns_store.add_operator_nuisance(state, [str(d / "n.csv")]) == [spec]
    return state


def sent(fig) -> dict:
    return json.loads(page_plot(lambda: fig, "png").plot)


def test_the_tab_from_an_operator_long_table(made, app):
    d, _, spec = made
    view = app.view()
    run = read_nuisance(d / "n.csv").runs[0]
    v = build_plain(lambda: cb.seg_view(view, spec, 1, "blur:sigma=2", None, "1a"))
    assert v["metric"] == spec and v["transform"] == "blur:sigma=2" and "operator's results" in v["note"]
    seg = view.dataset[1]
    idx = {f: i for i, f in enumerate(run.file_names)}
    # the node distributions, as the page gets them: a box per transform, each node's scores exactly
    f = sent(v["dist"])
    assert schema_errors(f) == []
    boxes = [t for t in f["data"] if t["type"] == "box"]
    assert [t["name"] for t in boxes] == ["clean", "jpeg:quality=30", "blur:sigma=2", "hflip †", "prefix:text=a photo of"]
    for k, t in enumerate(boxes):
        col = run.clean if k == 0 else run.transformed[:, k - 1]
        for node in seg.nodes:
            got = [y for x, y in zip(t["x"], t["y"]) if x == node.label]
            assert got == pytest.approx([col[idx[im.file_name]] for im in node.images], rel=1e-12)
    # the walk with its band: at each node of the walk, the lowest and highest node mean over the clean
    # scores and the transforms that keep the meaning (hflip left out)
    w = sent(v["walk"])
    assert schema_errors(w) == []
    band_hi, band_lo = [t for t in w["data"] if t.get("legendgroup") == "band"]
    assert band_lo["fill"] == "tonexty"
    walk_line = next(t for t in w["data"] if str(t.get("name", "")).startswith("walk "))
    path = walk_line["name"].split(": ", 1)[1].split(" · ")[0].split(">")
    for k, lbl in enumerate(path):
        files = [idx[im.file_name] for im in seg.node(lbl).images]
        means = [run.clean[files].mean()] + [run.transformed[files, j].mean() for j in (0, 1, 3)]
        assert band_lo["y"][k] == pytest.approx(min(means), rel=1e-12)
        assert band_hi["y"][k] == pytest.approx(max(means), rel=1e-12)
        assert walk_line["y"][k] == pytest.approx(means[0], rel=1e-12)
    # the gallery: each image, then its blurred copy (the full image blurred, then reduced), both scores
    gal = v["gallery"]
    imgs = seg.node("1a").images
    assert len(gal) == 2 * len(imgs)
    for k, im in enumerate(imgs):
        (orig, cap0), (copy, cap1) = gal[2 * k], gal[2 * k + 1]
        i = idx[im.file_name]
        assert Path(orig).is_file() and Path(orig) != Path(copy)
        assert f"clean {run.clean[i]:.4f}" in cap0
        assert f"blur:sigma=2 {run.transformed[i, 1]:.4f}" in cap1
        full = T.parse("blur:sigma=2").image(Image.open(view.dataset.image_path(im.file_name)).convert("RGB"))
        full.thumbnail((640, 640), Image.Resampling.LANCZOS)
        assert np.array_equal(np.asarray(Image.open(copy)), np.asarray(full))
    # a text transform shows the same image, captioned with the changed prompt
    v = build_plain(lambda: cb.seg_view(view, spec, 1, "prefix:text=a photo of", None, "0"))
    assert v["gallery"][0][0] == v["gallery"][1][0] and "“a photo of " in v["gallery"][1][1]
    # this SEG's statistics
    assert list(v["table"]["transform"]) == ["jpeg:quality=30 *", "blur:sigma=2 *", "hflip †", "prefix:text=a photo of"]


def test_stability_table_has_intervals(made, app):
    _, _, spec = made
    t = cb.stability_table(app.view(), "paper")
    assert list(t["metric"]) == [spec] * 4 and set(t["source"]) == {"shared"}
    assert all("[" in c for c in t["NSR"]) and all("[" in c for c in t["ΔOrd"])
    assert (t["SEGs"] == 3).all()


def test_a_live_run_joins_the_session_only(made, tmp_path):
    d, scores, spec = made
    state = load_state(str(d / "ds"), [str(scores)], cache_root=tmp_path / "appcache")
    view, other = state.view(), state.view()
    seen = []
    msg = cb.live_nuisance(view, spec, ["jpeg:quality=30", "period"], 0, progress=lambda f, desc=None: seen.append(f))
    assert "SEG 0" in msg and seen[0] == 0 and seen[-1] == pytest.approx(1.0)
    assert cb.metric_choices(view) == [spec] and cb.metric_choices(other) == []
    assert spec in view.metrics and spec not in other.metrics          # its clean scores: a live metric
    v = build_plain(lambda: cb.seg_view(view, spec, 0, "period"))
    assert "this session's live run" in v["note"]
    v1 = build_plain(lambda: cb.seg_view(view, spec, 1, "period"))
    assert "none for SEG 1" in v1["note"]
    cb.live_nuisance(view, spec, ["jpeg:quality=30", "period"], 1)      # a second SEG: merged
    run = cb.run_of(view, spec)[0]
    assert len(run.file_names) == 26
    t = cb.stability_table(view, "paper")
    assert set(t["source"]) == {"this session"} and (t["SEGs"] == 2).all()
    view.workspace.close()                                             # the session ends: its results go
    assert cb.session_results(view) is None


def test_public_mode_caps_a_live_run(made, tmp_path):
    d, scores, spec = made
    state = load_state(str(d / "ds"), [str(scores)], cache_root=tmp_path / "appcache", access=public([spec]))
    view = state.view()
    name = state.access.display_name(spec)
    assert "/" not in name.split(":", 1)[1]                             # the folder is not shown
    with pytest.raises(InputError, match="not offered"):
        cb.live_nuisance(view, spec, ["jpeg:quality=30"], 0)             # the spec itself: not a choice
    with pytest.raises(InputError, match="not accepted here"):
        cb.live_nuisance(view, "callable:os:system", ["jpeg:quality=30"], 0)
    with pytest.raises(InputError, match="that transform is not offered"):
        cb.live_nuisance(view, name, ["resize:side=4096"], 0)
    with pytest.raises(InputError, match="at most 8 transforms"):
        cb.live_nuisance(view, name, list(cb.PUBLIC_TRANSFORMS[:9]), 0)
    store = cb.session_results(view, create=True)
    for k in range(cb.MAX_SESSION_METRICS):                             # a session full of results
        r = read_nuisance(d / "n.csv").runs[0]
        store.add(type(r)(f"m{k}", True, "", r.file_names, r.clean, r.transforms, r.transformed))
    with pytest.raises(InputError, match="at most 4 metrics"):
        cb.live_nuisance(view, name, ["jpeg:quality=30"], 0)
    store.runs.clear()
    msg = cb.live_nuisance(view, name, ["jpeg:quality=30", "period"], 2)
    assert name in msg and tiny("clip").parent.name not in msg
    assert cb.metric_choices(view) == [name]


def test_the_page_builds_with_the_tab(app):
    from ts2viz.ui import build_app

    demo, kwargs, _ = build_app(app=app)
    page = demo.ts2viz_page
    assert {"nuisance", "stability"} <= set(page.refresh)
