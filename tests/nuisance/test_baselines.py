"""The blind and mismatched-image baselines of the nuisance test (issue 39, item 5).

``blank`` (a uniform grey image), ``static`` (random pixels, seeded) and ``mismatch`` (the image scored against
the prompt of a random other SEG, seeded) are transforms of the nuisance registry marked ``baseline``: their
statistics come out beside the nuisance ratio, per metric, with the bootstrap intervals over SEGs, in
``ts2viz nuisance --baselines``, its summary file and ``ts2viz leaderboard --nuisance``. Here a metric that
reads only what the baselines leave alone (the image's height, the prompt's length) shows a ratio of exactly
0 where it ignores the replaced input, and one that reads the pixels (mean brightness, a tiny CLIP) moves.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from nuisance_data import write_height_dataset
from PIL import Image

from ts2viz.cli import main
from ts2viz.dataset import load_dataset
from ts2viz.nuisance import run as R
from ts2viz.nuisance import summary as S
from ts2viz.nuisance import transforms as T

CALLABLES = Path(__file__).resolve().parents[1] / "support" / "nuisance_callables.py"
BASE = ["blank:value=128", "static", "mismatch"]


@pytest.fixture(scope="module")
def heights(tmp_path_factory):
    return write_height_dataset(tmp_path_factory.mktemp("baselines") / "ds")


def test_blank_and_static_keep_the_size_and_replace_the_content():
    im = Image.fromarray(np.random.default_rng(0).integers(0, 256, (20, 30, 3), dtype=np.uint8))
    blank = T.apply("blank:value=7", im)
    assert blank.size == im.size and set(np.asarray(blank).ravel()) == {7}
    a, b = T.apply("static", im, seed=0), T.apply("static", im, seed=0)
    assert a.size == im.size and np.array_equal(np.asarray(a), np.asarray(b))
    assert not np.array_equal(np.asarray(a), np.asarray(T.apply("static", im, seed=1)))
    assert np.asarray(a).std() > 60            # uniform 0-255 noise, not the image
    assert all(T.kind(n).baseline and T.kind(n).changes_meaning for n in ("blank", "static", "mismatch"))
    assert not any(k.baseline for k in T.kinds() if k.name not in ("blank", "static", "mismatch"))


def test_mismatch_pairs_every_prompt_with_another_segs_prompt(heights):
    ds = load_dataset(heights)
    pairs = R.mismatch_pairs(ds, seed=0)
    prompts = {g.prompt for g in ds}
    assert {a for a, _ in pairs} == prompts and all(b in prompts and b != a for a, b in pairs)
    assert R.mismatch_pairs(ds, seed=0) == pairs
    assert len({R.mismatch_pairs(ds, seed=s) for s in range(6)}) > 1        # the draw depends on the seed
    with pytest.raises(Exception, match="cannot be applied to one prompt alone"):
        T.apply("mismatch", "a cat")


def test_baselines_through_the_engine(heights, tmp_path):
    ds = load_dataset(heights)
    ns = R.run(ds, [f"callable:{CALLABLES}:height", f"callable:{CALLABLES}:mean_brightness",
                    f"callable:{CALLABLES}:prompt_length"], ",".join(BASE), cache_dir=tmp_path / "cache")
    f = S.summarize(ns, ds, n_resamples=300).frame()
    assert f["baseline"].all()
    get = lambda m, t: f[(f["metric"].str.endswith(":" + m)) & (f["transform"] == t)].iloc[0]  # noqa: E731
    # the image's height survives a blank or noise image and does not read the prompt: exactly 0, interval too
    for t in BASE:
        assert get("height", t)["ratio"] == 0 and get("height", t)["ratio_hi"] == 0
    # the pixels' mean moves when the image is blanked or replaced by noise, and not with another prompt
    for t in ("blank:value=128", "static"):
        r = get("mean_brightness", t)
        assert r["ratio"] > 0.5 and r["ratio_lo"] > 0 and r["ratio_lo"] <= r["ratio"] <= r["ratio_hi"]
    assert get("mean_brightness", "mismatch")["ratio"] == 0
    # the prompt's length changes with another SEG's prompt (never between error levels: x/0)
    assert np.isinf(get("prompt_length", "mismatch")["ratio"])
    long = ns.frame(ds)
    mism = long[(long["transform"] == "mismatch") & long["metric"].str.endswith(":prompt_length")]
    pairs = dict(R.mismatch_pairs(ds, seed=0))
    own = mism["seg_id"].map({g.id: g.prompt for g in ds})
    # the long table names the prompt each image was scored against: its SEG's pair, never its own
    assert (mism["prompt"] == own.map(pairs)).all() and (mism["prompt"] != own).all()
    assert (mism["transformed"] == mism["prompt"].str.len()).all()


def test_cli_nuisance_baselines_summary_and_leaderboard(heights, tmp_path, capsys):
    spec = f"callable:{CALLABLES}:mean_brightness"
    out = tmp_path / "n.csv"
    assert main(["score", "--metric", spec, "--dataset", str(heights), "--out", str(tmp_path / "s.csv"),
                 "--cache", str(tmp_path / "c"), "-q"]) == 0
    capsys.readouterr()
    assert main(["nuisance", "--metric", spec, "--dataset", str(heights), "--transforms", "blur", "--baselines",
                 "--out", str(out), "--cache", str(tmp_path / "c"), "--resamples", "300", "-q"]) == 0
    text = capsys.readouterr().out
    assert "blank:value=128 ‡" in text and "static ‡" in text and "mismatch ‡" in text and "answers from the text" in text
    summ = pd.read_csv(tmp_path / "n.summary.csv").set_index("transform")
    assert list(summ.index) == ["blur:sigma=2", *BASE]
    assert summ.loc[BASE, "baseline"].all() and not summ.loc["blur:sigma=2", "baseline"]
    assert np.isfinite(summ.loc["blank:value=128", ["ratio", "ratio_lo", "ratio_hi"]].astype(float)).all()
    assert main(["leaderboard", "--dataset", str(heights), "--scores", str(tmp_path / "s.csv"), "--nuisance", str(out),
                 "--resamples", "300", "--out", str(tmp_path / "b.csv")]) == 0
    board = pd.read_csv(tmp_path / "b.csv").set_index("metric")
    assert board.loc[spec, "nsr[blank:value=128]"] == pytest.approx(summ.loc["blank:value=128", "ratio"], abs=1e-6)
    assert np.isfinite(board.loc[spec, "nsr[static]_lo"])
    # nsr_worst is over the transforms that keep the meaning: the baselines are not in it
    assert board.loc[spec, "nsr_worst"] == pytest.approx(summ.loc["blur:sigma=2", "ratio"], abs=1e-6)


def test_released_scores_cannot_give_a_baseline(heights, tmp_path, capsys):
    """A scores file holds one score per image, for its own prompt: no baseline can be made from it."""
    spec = f"callable:{CALLABLES}:height"
    assert main(["score", "--metric", spec, "--dataset", str(heights), "--out", str(tmp_path / "s.csv"), "-q",
                 "--no-cache"]) == 0
    capsys.readouterr()
    out = tmp_path / "n.csv"
    rc = main(["nuisance", "--metric", f"csv:{tmp_path / 's.csv'}", "--dataset", str(heights), "--transforms",
               "period", "--baselines", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and err.strip().count("\n") == 0 and "need new (image, prompt) pairs scored by a model" in err
    assert not out.exists()


def test_bundled_data_with_its_released_scores_gets_no_baseline(tmp_path, capsys):
    """On the bundled TS2 data, the published metrics' released scores cannot give a baseline (one score per
    image, for its own prompt; the bundle has no images to score anew): one line, exit 2, nothing written."""
    released = Path(__file__).resolve().parents[2] / "data" / "ts2" / "published_scores.csv"
    out = tmp_path / "n.csv"
    capsys.readouterr()
    rc = main(["nuisance", "--metric", f"csv:{released}", "--dataset", "ts2", "--transforms", "period",
               "--baselines", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and err.strip().count("\n") == 0 and "need new (image, prompt) pairs scored by a model" in err
    assert not out.exists() and not (tmp_path / "n.summary.csv").exists()


def test_the_app_offers_the_image_baselines_for_a_live_run():
    from types import SimpleNamespace

    from ts2viz.ui.callbacks.nuisance import transform_choices

    public = transform_choices(SimpleNamespace(public=True))
    operator = transform_choices(SimpleNamespace(public=False))
    assert {"blank:value=128", "static"} <= set(public) and {"blank:value=128", "static"} <= set(operator)
    assert "mismatch" not in public and "mismatch" not in operator      # one SEG: no other SEG's prompt


def test_the_app_shows_an_operator_long_table_with_the_baselines(tmp_path):
    """``ts2viz nuisance --baselines`` with a tiny CLIP, and the app's nuisance view of its long table: the
    mismatch gallery names no prompt it cannot know (the pairs were drawn over the whole run), the blank gallery
    shows the grey copy."""
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    from ts2viz.nuisance import read_nuisance
    from ts2viz.ui.callbacks import nuisance as cb
    from ts2viz.ui.glue.plots import build_plain
    from ts2viz.ui.state import nuisance_session as ns_store
    from ts2viz.ui import load_state

    write_dataset(tmp_path / "ds", big_image=False)
    scores = write_scores(tmp_path, tmp_path / "ds")
    spec = f"clipscore:{tiny('clip')}"
    assert main(["nuisance", "--metric", spec, "--dataset", str(tmp_path / "ds"), "--transforms", "blur",
                 "--baselines", "--out", str(tmp_path / "n.csv"), "--cache", str(tmp_path / "c"),
                 "--resamples", "100", "-q"]) == 0
    # with a model (a tiny random CLIP on the CPU) every baseline has a ratio and an interval
    summ = pd.read_csv(tmp_path / "n.summary.csv").set_index("transform")
    for t in BASE:
        assert summ.loc[t, "baseline"] and np.isfinite(summ.loc[t, ["ratio", "ratio_lo", "ratio_hi"]].astype(float)).all()
        assert summ.loc[t, "ratio_lo"] <= summ.loc[t, "ratio"] <= summ.loc[t, "ratio_hi"]
    long = pd.read_csv(tmp_path / "n.csv")
    assert set(long["transform"]) == {"blur:sigma=2", *BASE} and long["transformed"].notna().all()
    state = load_state(str(tmp_path / "ds"), [str(scores)], cache_root=tmp_path / "appcache")
    assert ns_store.add_operator_nuisance(state, [str(tmp_path / "n.csv")]) == [spec]
    view = state.view()
    run = read_nuisance(tmp_path / "n.csv").runs[0]
    k = [t.spec for t in run.transforms].index("mismatch")
    v = build_plain(lambda: cb.seg_view(view, spec, 1, "mismatch", None, "0"))
    caps = [c for _, c in v["gallery"]]
    assert caps[1].split(" · ")[1].startswith("another SEG's prompt")
    i = list(run.file_names).index(view.dataset[1].node("0").images[0].file_name)
    assert f"{run.transformed[i, k]:.4f}" in caps[1]
    v = build_plain(lambda: cb.seg_view(view, spec, 1, "blank:value=128", None, "0"))
    grey = np.asarray(Image.open(v["gallery"][1][0]).convert("RGB"))
    assert set(grey.ravel()) == {128}
