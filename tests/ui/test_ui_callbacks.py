"""The app's callbacks, without a browser: plain data in, plain data out."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ts2viz import figures
from ts2viz.metametrics import results as metametrics
from ts2viz.errors import InputError
from ts2viz.metametrics.definitions import ks_separation
from ts2viz.ui.callbacks import common as cb_common, board as cb_board, correlations as cb_corr, live as cb_live
from ts2viz.ui.callbacks.explorer import (nodes as cb_explorer_nodes, picking as cb_explorer_picking,
                                          view as cb_explorer_view, walks as cb_explorer_walks)
from ts2viz.ui import load_state
from ts2viz.metametrics.results import MetaMetrics
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("uids")
    write_dataset(d / "ds")
    return d


@pytest.fixture()
def app(folder, tmp_path):
    """One session's view of an app whose operator loaded the test scores."""
    return load_state(str(folder / "ds"), [str(write_scores(tmp_path, folder / "ds"))],
                      cache_root=tmp_path / "cache").view()


@pytest.fixture(scope="module")
def ts2(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2cache"), fetch_images=False).view()


# -- leaderboard ----------------------------------------------------------------------------------

def test_leaderboard_sorted_with_best_marked(app):
    b = cb_board.leaderboard(app, "paper", sort_by="ord_avg")
    assert list(b["metric"]) == ["GoodScore", "ErrCount", "NoisyScore"]
    assert (np.diff(b["ord_avg"].to_numpy()) <= 0).all()
    assert list(b["dir"]) == ["↑", "↓", "↑"]
    asc = cb_board.leaderboard(app, "paper", sort_by="sep_avg", best_first=False)
    assert (np.diff(asc["sep_avg"].to_numpy()) >= 0).all()
    # by name: "best first" is A to Z, the other order Z to A (sorted once, in the callback)
    assert list(cb_board.leaderboard(app, "paper", sort_by="metric")["metric"]) == ["ErrCount", "GoodScore", "NoisyScore"]
    assert list(cb_board.leaderboard(app, "paper", sort_by="metric", best_first=False)["metric"]) == [
        "NoisyScore", "GoodScore", "ErrCount"]
    best = cb_board.best_cells(b)
    assert best["ord_avg"] == 0
    html = cb_board.style_leaderboard(b).to_html()
    assert "font-weight:700" in html.replace(" ", "")


def test_leaderboard_matches_engine_and_csv(app):
    b = cb_board.leaderboard(app, "spec")
    ref = metametrics.compute(app.dataset, app.scores(), mode="spec").leaderboard().set_index("metric")
    for _, r in b.iterrows():
        assert r["ord_avg"] == pytest.approx(ref.loc[r["metric"], "ord_avg"])
    path = Path(cb_board.leaderboard_csv(app, "spec"))
    assert path.is_file() and app.workspace.exports_dir() in path.parents
    df = pd.read_csv(path)
    assert list(df.columns[:4]) == ["metric", "ord_avg", "sep_avg", "signed_sep_avg"]
    # the file keeps fractions, at full precision
    csv = df.set_index("metric")
    for m in ref.index:
        assert csv.loc[m, "ord_avg"] == pytest.approx(ref.loc[m, "ord_avg"], abs=1e-12)


def test_family_filter(ts2):
    b = cb_board.leaderboard(ts2, "paper", ["TIFA"])
    assert len(b) == 7 and set(b["family"]) == {"TIFA"}
    assert len(cb_board.leaderboard(ts2, "paper", ["All"])) == 19
    assert len(cb_common.metric_choices(ts2, ["DSG", "Embedding"])) == 9


def test_bundled_leaderboard_is_published_one(ts2):
    b = cb_board.leaderboard(ts2, "paper").set_index("metric")
    ref = metametrics.compute(ts2.dataset, ts2.scores(), mode="paper").leaderboard().set_index("metric")
    for m in ("CLIPScore", "TIFA-GPT4V", "LLMScore-EC"):
        assert b.loc[m, "ord_avg"] == pytest.approx(ref.loc[m, "ord_avg"])
        assert b.loc[m, "sep_real"] == pytest.approx(ref.loc[m, "sep_real"])


def test_ord_sep_figure(app):
    fig = cb_board.leaderboard_figure(app, "paper")
    names = [t.name for t in fig.data]
    assert set(names) == {"GoodScore", "NoisyScore", "ErrCount"}  # families of unknown metrics: their names


# -- picking SEGs ------------------------------------------------------------------------------------

def test_seg_search_and_partition(ts2):
    hits = cb_explorer_picking.seg_options(ts2, "teddy")
    assert hits and all("teddy" in label.lower() for label, _ in hits)
    assert cb_explorer_picking.seg_options(ts2, "9")[0][1] == 9 or any(v == 9 for _, v in cb_explorer_picking.seg_options(ts2, "9"))
    real = cb_explorer_picking.seg_options(ts2, "", "Real")
    assert len(real) == 29 and all(ts2.dataset[v].partition == "Real" for _, v in real)
    assert cb_explorer_picking.seg_options(ts2, "no such prompt at all") == []


def test_failure_finder_worst_first(ts2):
    t = cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "ord")
    vals = t["ord CLIPScore"].to_numpy()
    assert (np.diff(vals) >= 0).all()
    segs = metametrics.compute(ts2.dataset, ts2.scores(), ["CLIPScore"], mode="paper").segs()
    assert vals[0] == pytest.approx(segs["ord"].min())
    g = cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "sep", "TIFA-GPT4V", partition="Real")
    assert (np.diff(g["gap"].to_numpy()) >= 0).all() and set(g["partition"]) == {"Real"}
    with pytest.raises(InputError):
        cb_explorer_picking.failure_finder(ts2, "paper", "NoSuchMetric")


# -- SEG explorer --------------------------------------------------------------------------------------

def test_seg_view(app):
    v = cb_explorer_view.seg_view(app, "paper", 1, "GoodScore", "NoisyScore")
    seg = app.dataset[1]
    for lbl in seg.labels:
        assert f'data-node="{lbl}"' in v["graph"]
    assert v["graph"].count("data:image/jpeg;base64,") == sum(min(4, len(n.images)) for n in seg.nodes)
    assert v["node"] == "0" and 'class="seg-node selected"' in v["graph"]
    # gallery = the node's images, captioned with scores and image source
    assert len(v["gallery"]) == len(seg.node("0").images)
    path, cap = v["gallery"][0]
    assert Path(path).is_file() and "GoodScore" in cap and "NoisyScore" in cap and "SD2.1" in cap
    # walk table: worst first, the engine's numbers
    wt = v["walk_table"].data
    assert (np.diff(wt["ord"].to_numpy()) >= 0).all()
    ref = metametrics.compute(app.dataset, app.scores(), policy="paper").walks(1)
    ref = ref[ref["metric"] == "GoodScore"].set_index("walk")
    for r in wt.itertuples():
        assert r.ord == pytest.approx(ref.loc[r.walk, "ord"])
    assert np.allclose(wt["signed sep"], ref.loc[wt["walk"], "signed_sep"], equal_nan=True)
    assert len(v["walk_choices"]) == len(seg.walks(repeat_root=True))
    assert len(v["ks_table"].data) == len(seg.adjacent_pairs())
    assert "SEG 1" in v["header"] and seg.prompt in v["header"]


def test_node_click_gallery(app):
    seg = app.dataset[2]
    v = cb_explorer_view.select_node(app, "paper", 2, "GoodScore", None, "1a")
    files = [im.file_name for im in seg.node("1a").images]
    assert len(v["gallery"]) == len(files) == 3
    for (path, cap), fn in zip(v["gallery"], files):
        assert cap.startswith(Path(fn).name)
        expected = app.scores().get(fn, "GoodScore")
        assert f"GoodScore {expected:.3f}" in cap
    assert 'class="seg-node selected" data-node="1a"' in v["graph"]
    with pytest.raises(InputError, match="no node"):
        cb_explorer_view.select_node(app, "paper", 2, "GoodScore", None, "9z")


def test_walk_highlight(app):
    st = app.mm("spec").walk_stats(0)[0]
    v = cb_explorer_view.select_walk(app, "spec", 0, "GoodScore", "ErrCount", "2")
    walk = st.walks[2]
    assert v["graph"].count('class="edge edge-walk"') == len(walk) - 1
    assert v["graph"].count("in-walk") == len(walk)
    names = [t.name for t in v["walk_fig_a"].data]
    assert any(n.startswith("▶ walk 2") for n in names)
    assert any(n.startswith("▶ walk 2") for n in (t.name for t in v["walk_fig_b"].data))
    assert cb_explorer_walks.walk_from_row(cb_explorer_walks.walk_table(app, "spec", 0, "GoodScore"), 0) is not None
    assert cb_explorer_walks.walk_from_row(cb_explorer_view.seg_view(app, "spec", 0, "GoodScore")["walk_table"].data, 0) is not None


def test_ks_pairs_use_stats(app):
    pairs = cb_explorer_nodes.ks_pairs(app, 0, "NoisyScore")
    ns = app.node_scores(0, "NoisyScore")
    for p in pairs:
        r = ks_separation(ns[p["a"]], ns[p["b"]])
        assert p["statistic"] == r.statistic and p["location"] == r.location


def test_walk_and_cdf_figures(app):
    f = cb_explorer_walks.walk_figure(app, "paper", 0, "GoodScore")
    assert f.data[0].name == "all 4 walks" and f.data[-1].name == "images"
    assert len(f.data[-1].y) == app.dataset[0].n_images
    c = cb_explorer_nodes.cdf_figure(app, 0, "GoodScore")
    assert [t.name for t in c.data if t.name in app.dataset[0].labels] == list(app.dataset[0].labels)


def test_switching_is_fast_on_largest_ts2_seg(ts2):
    big = max(ts2.dataset, key=lambda s: s.n_images)
    cb_explorer_view.seg_view(ts2, "paper", big.id, "CLIPScore", "TIFA-GPT4V")  # warm caches
    for fn, args in [(cb_explorer_view.seg_view, ("paper", big.id, "ALIGNScore", "DSG-GPT4V")),
                     (cb_explorer_view.select_node, ("paper", big.id, "CLIPScore", "TIFA-GPT4V", "2a", None)),
                     (cb_explorer_view.select_walk, ("paper", big.id, "CLIPScore", "TIFA-GPT4V", "17", "0"))]:
        t = time.perf_counter()
        fn(ts2, *args)
        assert time.perf_counter() - t < 1.0  # generous here; benchmarks/bench_ui.py checks 300 ms


def test_bad_ids_are_readable(app):
    with pytest.raises(InputError, match="no SEG with id 99"):
        cb_explorer_view.seg_view(app, "paper", 99, "GoodScore")
    with pytest.raises(InputError, match="not a SEG id"):
        cb_explorer_view.seg_view(app, "paper", "abc", "GoodScore")
    with pytest.raises(InputError, match="unknown mode"):
        cb_board.leaderboard(app, "weird")


# -- correlations ----------------------------------------------------------------------------------------

def test_correlations(ts2):
    m = cb_corr.corr_matrix(ts2, "paper", "ord")
    assert m.shape == (19, 19)
    assert np.allclose(np.diag(m.to_numpy()), 1.0)
    assert np.allclose(m.to_numpy(), m.to_numpy().T, equal_nan=True)
    real = cb_corr.corr_matrix(ts2, "paper", "sep", "Real", ["Embedding"])
    assert list(real.columns) == ["CLIPScore", "ALIGNScore"]
    segs = ts2.mm("paper").segs()
    wide = segs[segs.partition == "Real"].pivot(index="seg_id", columns="metric", values="sep")
    assert real.iloc[0, 1] == pytest.approx(wide["CLIPScore"].corr(wide["ALIGNScore"]))
    pts = cb_corr.pair_points(ts2, "paper", "ord", "CLIPScore", "TIFA-GPT4V")
    assert len(pts) == 165 and (np.diff(pts["diff"].abs().to_numpy()) <= 1e-9).all()
    fig = cb_corr.corr_figure(ts2, "paper", "ord", selected=("CLIPScore", "TIFA-GPT4V"))
    assert fig.data[0].type == "heatmap" and fig.layout.shapes


# -- scores uploads -----------------------------------------------------------------------------------------

def test_add_scores_file_and_bad_one(app, tmp_path):
    good = tmp_path / "mine.csv"
    fns = app.dataset.file_names
    good.write_text("file_name,MyScore\n" + "\n".join(f"{f},{i % 5}" for i, f in enumerate(fns)) + "\n")
    msg = cb_board.add_scores_file(app, good, "mine.csv")
    assert "MyScore" in msg and "MyScore" in app.metrics and app.kind_of("MyScore") == "uploaded"
    assert "MyScore" in set(cb_board.leaderboard(app, "paper")["metric"])
    bad = tmp_path / "bad.csv"
    bad.write_text("file_name,Other\nimages/000-00.jpg,abc\n")
    with pytest.raises(InputError, match="not a number"):
        cb_board.add_scores_file(app, bad, "bad.csv")
    unknown = tmp_path / "unk.csv"
    unknown.write_text("file_name,Other\n../../etc/passwd,1\n")
    with pytest.raises(InputError, match="unknown file_name"):
        cb_board.add_scores_file(app, unknown, "unk.csv")
    with pytest.raises(InputError, match="already loaded"):
        cb_board.add_scores_file(app, good, "mine.csv")
    with pytest.raises(InputError, match=".csv or .parquet"):
        cb_board.add_scores_file(app, tmp_path / "x.txt", "x.txt")
    # the app keeps working
    assert len(cb_board.leaderboard(app, "paper")) == 4


def test_combined_metametrics_equal_one_compute(app, tmp_path):
    fns = app.dataset.file_names
    extra = tmp_path / "extra.csv"
    extra.write_text("file_name,Extra\n" + "\n".join(f"{f},{(i * 7) % 11}" for i, f in enumerate(fns)) + "\n")
    cb_board.add_scores_file(app, extra, "extra.csv")
    for mode in ("paper", "spec"):
        joined = app.mm(mode)
        ref = metametrics.compute(app.dataset, app.scores(), mode=mode)
        assert joined.metrics == ref.metrics
        for k in ("ord", "sep"):
            assert np.allclose(joined.seg_values[k], ref.seg_values[k], equal_nan=True)
        st, ws = joined.walk_stats(0)
        assert np.allclose(ws.ord, ref.walk_stats(0)[1].ord, equal_nan=True)
    assert MetaMetrics.join([app.mm("paper")]) is app.mm("paper")
    # the shared part is the operator's, computed once for every session
    assert app.app.mm("paper").metrics == ["GoodScore", "NoisyScore", "ErrCount"]


def test_metametrics_disk_cache(tmp_path):
    a = load_state("ts2", cache_root=tmp_path, fetch_images=False)
    lb1 = a.mm("spec").leaderboard()
    assert list((tmp_path / "metametrics").glob("*.npz"))
    b = load_state("ts2", cache_root=tmp_path, fetch_images=False)
    lb2 = b.mm("spec").leaderboard()
    pd.testing.assert_frame_equal(lb1, lb2)
    assert b.mm("spec").walk_stats(9)[0].seg is b.dataset[9]
    # exact: b's meta-metrics are a's, read back from the .npz disk cache
    np.testing.assert_array_equal(b.mm("spec").walk_stats(9)[1].ord, a.mm("spec").walk_stats(9)[1].ord)
    # A file of another format version is not trusted: recomputed, same numbers.
    for f in (tmp_path / "metametrics").glob("*.npz"):
        f.write_bytes(b"not a numpy file")
    c = load_state("ts2", cache_root=tmp_path, fetch_images=False)
    pd.testing.assert_frame_equal(c.mm("spec").leaderboard(), lb1)


# -- uploads: checks ------------------------------------------------------------------------------------------

def test_upload_checks(tmp_path):
    from PIL import Image

    ok = tmp_path / "ok.png"
    Image.new("RGB", (64, 48), (10, 20, 30)).save(ok)
    assert cb_live.check_upload(ok).size == (64, 48)
    txt = tmp_path / "notes.jpg"
    txt.write_text("not an image")
    with pytest.raises(InputError, match="not a readable image"):
        cb_live.check_upload(txt)
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        cb_live.check_upload(empty)
    big = tmp_path / "big.jpg"
    big.write_bytes(b"\xff\xd8" + b"\0" * (20 * 1024 * 1024 + 10))
    with pytest.raises(InputError, match="limit is 20 MB"):
        cb_live.check_upload(big)
    bomb = tmp_path / "bomb.png"
    Image.new("1", (12000, 12000)).save(bomb)  # a few KB on disk, 144 megapixels decoded
    assert bomb.stat().st_size < 1_000_000
    with pytest.raises(InputError, match="megapixels|decompression bomb"):
        cb_live.check_upload(bomb)
    with pytest.raises(InputError, match="empty"):
        cb_live.check_prompt("   ")
    with pytest.raises(InputError, match="limit is 1000"):
        cb_live.check_prompt("x" * 1001)
    assert cb_live.check_prompt("  a cat ") == "a cat"
    with pytest.raises(InputError):
        cb_live.parse_specs("")
    with pytest.raises(InputError, match="FAMILY:MODEL"):
        cb_live.parse_specs("nocolon")


# -- thumbnails -------------------------------------------------------------------------------------------------

def test_thumbnails(app):
    th = app.thumbs
    p, real = th.get("images/000-00.jpg", 96)  # the 9,000 px wide image
    from PIL import Image

    assert real and max(Image.open(p).size) <= 96
    t = time.perf_counter()
    assert th.get("images/000-00.jpg", 96)[0] == p
    assert time.perf_counter() - t < 0.05
    # unknown names and path tricks give a placeholder, never a file outside the dataset
    for name in ("../../etc/passwd", "/etc/passwd", "images/none.jpg"):
        q, real = th.get(name, 96)
        assert not real and th.folder in q.parents
    (app.dataset.root / "images" / "002-12.jpg").rename(app.dataset.root / "images" / "moved.jpg")
    try:
        q, real = th.get("images/002-12.jpg", 640)
        assert not real and q.suffix == ".png"
    finally:
        (app.dataset.root / "images" / "moved.jpg").rename(app.dataset.root / "images" / "002-12.jpg")


def test_offline_hub_images_do_not_hang(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a = load_state("ts2", cache_root=tmp_path).view()
    t = time.perf_counter()
    v = cb_explorer_view.seg_view(a, "paper", 9, "CLIPScore", None)
    assert time.perf_counter() - t < 5
    assert len(v["gallery"]) == len(a.dataset[9].node("0").images)
    assert all(Path(p).suffix == ".png" for p, _ in v["gallery"])  # placeholders


def test_empty_dataset_without_scores(folder, tmp_path):
    a = load_state(str(folder / "ds"), cache_root=tmp_path).view()
    assert a.metrics == []
    assert len(cb_board.leaderboard(a, "paper")) == 0
    v = cb_explorer_view.seg_view(a, "paper", 0, None)
    assert 'data-node="3a"' in v["graph"] and len(v["walk_choices"]) == 4


# -- signed separation, the x100 convention, counts (issue 14 items 5 and 8) -------------------------------

def _display(table) -> list[list[str]]:
    """The cells of a shown table as the browser gets them (gr.Dataframe's display values)."""
    gr = pytest.importorskip("gradio")
    meta = gr.Dataframe(interactive=False).postprocess(table).metadata
    return meta["display_value"] if meta else None


def test_seg125_clipscore_reversed_shows_signed_sep(ts2):
    # The numbers: CLIPScore orders SEG 125 backwards (ord -0.982) yet has sep 1.000; the engine
    # signs each pair's KS by its mean gap, giving -1.
    ref = metametrics.compute(ts2.dataset, ts2.scores(), ["CLIPScore"], policy="paper", seg_ids=[125])
    vals = {k: float(ref.seg_values[k][0, 0]) for k in ("ord", "sep", "signed_sep")}
    assert vals["ord"] == pytest.approx(-0.982, abs=5e-4)
    assert vals["sep"] == 1.0 and vals["signed_sep"] == -1.0
    v = cb_explorer_view.seg_view(ts2, "paper", 125, "CLIPScore", "TIFA-GPT4V")
    assert "**CLIPScore** ord -98.2 · sep 100.0 · signed sep -100.0" in v["header"]
    assert "Signed sep:" in v["header"] and "x100" in v["header"]
    # per walk: the engine's signed sep beside sep, shown x100, kept as fractions underneath
    walks = ref.walks(125).set_index("walk")
    wt = v["walk_table"].data
    assert list(wt.columns[2:5]) == ["ord", "sep", "signed sep"]
    assert np.allclose(wt["signed sep"], walks.loc[wt["walk"], "signed_sep"])
    shown = _display(v["walk_table"])
    assert shown[0][3:5] == ["100.0", "-100.0"]
    # per node pair: KS signed by the pair's mean gap (computed here from the scalar definitions)
    ks = v["ks_table"].data
    ns = ts2.node_scores(125, "CLIPScore")
    from ts2viz.metametrics.definitions import mean_gap

    for _, r in ks.iterrows():
        a, b = r["pair"].split(" – ")
        d = ks_separation(ns[a], ns[b]).statistic
        assert r["KS CLIPScore"] == d
        assert r["signed KS CLIPScore"] == pytest.approx(d * np.sign(mean_gap(ns[a], ns[b])))
    assert all(row[2] == "-100.0" for row in _display(v["ks_table"]))


def test_ks_table_signed_mean_is_engine_signed_sep_in_spec_mode(ts2):
    # spec mode averages sep and signed sep over a SEG's adjacent node pairs: the KS table's signed
    # column (scalar stats) must average to the engine's vectorised SEG value
    mm = metametrics.compute(ts2.dataset, ts2.scores(), ["CLIPScore", "DSG-Fuyu"], policy="spec",
                             seg_ids=[9, 40, 125, 161])
    for i, sid in enumerate(mm.seg_ids):
        for k, m in enumerate(mm.metrics):
            t = cb_explorer_nodes.ks_table(ts2, sid, m)
            assert t[f"signed KS {m}"].mean() == pytest.approx(mm.seg_values["signed_sep"][i, k])
            assert t[f"KS {m}"].mean() == pytest.approx(mm.seg_values["sep"][i, k])
            assert (np.diff(t[f"signed KS {m}"].to_numpy()) >= 0).all()       # lowest first


def test_failure_finder_ranks_by_signed_sep(ts2):
    t = cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "signed_sep")
    segs = metametrics.compute(ts2.dataset, ts2.scores(), ["CLIPScore"], policy="paper").segs().set_index("seg_id")
    assert list(t.columns[:3]) == ["SEG", "signed sep CLIPScore", "sep CLIPScore"]
    assert t.loc[0, "SEG"] == 125
    assert t["signed sep CLIPScore"].is_monotonic_increasing
    for r in t.head(10).itertuples(index=False):
        assert r[1] == pytest.approx(segs.loc[r[0], "signed_sep"]) and r[2] == pytest.approx(segs.loc[r[0], "sep"])
    assert _display(cb_common.shown(t))[0][:3] == ["125", "-100.0", "100.0"]
    # ranked by sep, signed sep is beside it; delta is a score gap, not scaled
    s = cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "sep")
    assert list(s.columns[:3]) == ["SEG", "sep CLIPScore", "signed sep CLIPScore"]
    d = cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "delta")
    first = d.loc[0, "delta CLIPScore"]
    assert _display(cb_common.shown(d))[0][1] == f"{first:.3f}"
    with pytest.raises(InputError, match="unknown statistic"):
        cb_explorer_picking.failure_finder(ts2, "paper", "CLIPScore", "median")


def test_tables_shown_x100_files_keep_fractions(ts2):
    # published TS2 numbers (the paper's Table): CLIPScore ord 71.4, sep 90.7 (Avg)
    b = cb_board.leaderboard(ts2, "paper")
    rows = _display(cb_board.style_leaderboard(b))
    i = list(b["metric"]).index("CLIPScore")
    cols = list(b.columns)
    assert rows[i][cols.index("ord_avg")] == "71.4" and rows[i][cols.index("sep_avg")] == "90.7"
    assert "signed_sep_avg" in cols
    path = cb_common.table_csv(ts2, cb_explorer_view.seg_view(ts2, "paper", 125, "CLIPScore")["walk_table"], "walks")
    assert pd.read_csv(path)["signed sep"].tolist() == [-1.0] * 4
    pts = cb_corr.pair_points(ts2, "paper", "signed_sep", "CLIPScore", "TIFA-GPT4V")
    row = pts[pts["seg_id"] == 125].iloc[0]
    assert (row["x"], row["y"]) == (-1.0, 1.0)
    shown = _display(cb_corr.pair_table(pts, "CLIPScore", "TIFA-GPT4V"))
    k = int(np.flatnonzero(pts["seg_id"].to_numpy() == 125)[0])
    assert shown[k][1:4] == ["-100.0", "100.0", "200.0"]
    fig = figures.pair_scatter(pts, x_name="CLIPScore", y_name="TIFA-GPT4V", stat="signed_sep")
    assert min(x for t in fig.data if t.name in ("Synth", "Nat", "Real") for x in t.x) == -100.0
    m = cb_corr.corr_matrix(ts2, "paper", "signed_sep")
    assert m.shape == (19, 19) and np.allclose(np.diag(m.to_numpy()), 1.0)


def test_counts_in_words(app, tmp_path):
    from ts2viz.display import plural

    assert [plural(n, "image") for n in (0, 1, 2, 2840)] == ["0 images", "1 image", "2 images", "2,840 images"]
    assert plural(1, "walk") == "1 walk" and plural(1, "error") == "1 error" and plural(3, "child", "children") == "3 children"
    # the header counts metrics as they are now
    assert "3 metrics" in cb_common.header_html(app)
    fns = app.dataset.file_names
    one = tmp_path / "one.csv"
    one.write_text("file_name,Fourth\n" + "\n".join(f"{f},{i % 3}" for i, f in enumerate(fns)) + "\n")
    assert cb_board.add_scores_file(app, one, "one.csv").startswith("Loaded 1 metric from one.csv")
    assert "4 metrics" in cb_common.header_html(app) and "39 images" in cb_common.header_html(app)


def test_one_image_and_one_walk_in_words(ts2):
    v = cb_explorer_view.seg_view(ts2, "paper", 125, "CLIPScore", node="0")
    assert "5 nodes · 6 images · 4 walks" in v["header"]
    assert "**Node 0** · 0 errors · 1 image ·" in v["node_title"]
    assert "· 1 error · 1 image ·" in cb_explorer_view.select_node(ts2, "paper", 125, "CLIPScore", None, "1a")["node_title"]
    assert 'title="node 0: 1 image,' in v["graph"] and "1 errors" not in v["graph"]
