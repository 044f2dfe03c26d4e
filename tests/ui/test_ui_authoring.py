"""The authoring tab's callbacks without a browser (issue 23): building a SEG in a session, its problems
and graph, scoring it, export / import (folder and .zip) and, in public mode, privacy, caps and the
refusal of paths and unsafe .zip members."""
from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ts2viz.authoring import canonical, import_dataset
from ts2viz.dataset import load_folder
from ts2viz.errors import InputError
from ts2viz.ui.serving import access
from ts2viz.ui import load_state
from ts2viz.ui.state.authoring_session import PUBLIC_CAPS, drafts_of
from ts2viz.ui.callbacks.authoring import drafts as cb_drafts, images as cb_images, nodes as cb_nodes
from ts2viz.ui.callbacks.authoring import scoring as cb_scoring, transfer as cb_transfer, view as cb_view
from ts2viz.ui.state.sessions import Workspaces
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("authoring")
    write_dataset(d / "ds", big_image=False)
    write_scores(d, d / "ds")
    return d


def _state(folder, tmp_path, acc=None):
    return load_state(str(folder / "ds"), [str(folder / "scores.csv")], cache_root=tmp_path / "cache", access=acc)


def _pngs(where: Path, n: int, prefix: str = "pic") -> list[Path]:
    from PIL import Image

    where.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        p = where / f"{prefix} {i}!.png"          # a name that needs tidying
        Image.fromarray(np.full((24, 32, 3), 30 * i, np.uint8)).save(p)
        out.append(p)
    return out


def _build(view, pngs) -> list[str]:
    """A 3-level SEG: 2 images per node, error descriptions on 1a and 2a; returns the image keys."""
    cb_drafts.start_draft(view, "a red cube on a table")
    cb_images.add_uploads(view, [str(p) for p in pngs], "MyModel")
    keys = [k for _, k in cb_view.authoring_state(view)["images"]]
    cb_nodes.save_node(view, "0")
    cb_nodes.save_node(view, "1a", "cube not red")
    cb_nodes.save_node(view, "2a", "cube not red; no table")
    for lbl, ks in (("0", keys[:2]), ("1a", keys[2:4]), ("2a", keys[4:6])):
        cb_images.assign_images(view, ks, lbl)
    return keys


def test_build_a_seg_problems_graph_and_export_roundtrip(folder, tmp_path):
    view = Workspaces(_state(folder, tmp_path), exports_root=tmp_path / "sessions").view("s", create=True)
    with pytest.raises(InputError, match="start a SEG first"):
        cb_nodes.save_node(view, "0")
    with pytest.raises(InputError, match="nothing to undo"):
        cb_drafts.undo(view)
    cb_drafts.start_draft(view, "a red cube on a table")
    cb_images.add_uploads(view, [str(p) for p in _pngs(tmp_path / "up", 6)], "MyModel")
    st = cb_view.authoring_state(view)
    # names tidied by the server, distinct, in images/
    assert [c.split(" [")[0] for c, _ in st["images"]] == [f"images/pic-{i}.png" for i in range(6)]
    assert sum("is not in a node" in p for p in st["problems"]) == 6
    assert any("no nodes" in p for p in st["problems"]) and "No SEG" not in st["graph"]
    keys = [k for _, k in st["images"]]
    cb_nodes.save_node(view, "0")
    cb_nodes.save_node(view, "1a", "cube not red")
    cb_nodes.save_node(view, "2a", "cube not red; no table")
    cb_images.assign_images(view, keys[:2], "0")
    cb_images.assign_images(view, keys[2:4], "1a")
    # a node without images, an edge going the wrong way: the loader's words
    st = cb_view.authoring_state(view)
    assert any("node 2a has no images" in p for p in st["problems"])
    # drawn as it is built: the sound part (2a has no images yet, so it is not drawn)
    assert st["graph"].count('class="seg-node') == 2 and 'data-node="2a"' not in st["graph"]
    cb_images.assign_images(view, keys[4:], "2a")
    cb_nodes.add_edge(view, "1a", "0")
    st = cb_view.authoring_state(view)
    assert st["follow"] is False and any("1a->0" in p or "1a" in p and "0" in p for p in st["problems"])
    cb_nodes.remove_edge(view, "1a", "0")
    cb_nodes.set_edges_follow(view, True)
    st = cb_view.authoring_state(view)
    assert st["problems"] == [] and "No problems" in st["problems_md"]
    assert st["graph"].count('class="seg-node') == 3 and "+ cube not red; no table" in st["graph"]
    assert [r["errors"] for r in st["nodes"]] == ["", "cube not red", "cube not red; no table"]
    # undo: a removed node comes back with its images; removed images with their files
    before = drafts_of(view).draft
    cb_nodes.remove_node(view, "1a")
    cb_images.remove_images(view, keys[2:4])
    assert not drafts_of(view).draft.has_node("1a")
    cb_drafts.undo(view)
    cb_drafts.undo(view)
    assert drafts_of(view).draft == before and all(drafts_of(view).files[k].is_file() for k in keys)
    # the operator renames an image as typed; a name that cannot be one is a problem, not a path
    cb_images.rename_image(view, keys[:1], "images/red/first.png")
    assert cb_view.authoring_state(view)["images"][0][0] == "images/red/first.png [0]"
    cb_images.rename_image(view, keys[:1], "../first.png")
    assert any("'..'" in p for p in cb_view.authoring_state(view)["problems"])
    with pytest.raises(InputError, match="cannot export"):
        cb_transfer.export_folder(view, str(tmp_path / "never"))
    assert not (tmp_path / "never").exists() and not (tmp_path / "first.png").exists()
    cb_images.rename_image(view, keys[:1], "images/pic-0.png")
    with pytest.raises(InputError, match="exactly one"):
        cb_images.rename_image(view, keys[:2], "images/x.png")
    with pytest.raises(InputError, match="no node '3a'"):
        cb_images.assign_images(view, keys[:1], "3a")

    # export to a folder: the loader reads it back, error descriptions included
    out = tmp_path / "exported"
    assert "Exported 1 SEG" in cb_transfer.export_folder(view, str(out), False, "demo")
    ds = load_folder(out)
    seg = ds[0]
    assert [n.label for n in seg.nodes] == ["0", "1a", "2a"] and seg.node("2a").errors == ("cube not red", "no table")
    assert {r.image_source for r in ds.rows} == {"MyModel"}
    # the bytes exported are the uploaded files'
    assert (out / "images" / "pic-3.png").read_bytes() == (tmp_path / "up" / "pic 3!.png").read_bytes()
    with pytest.raises(InputError, match="already exists"):
        cb_transfer.export_folder(view, str(out), False, "demo")
    # the .zip download, imported back: the same SEG (canonical order, keys made by the session)
    z = Path(cb_transfer.export_zip(view, "demo"))
    assert z.is_file() and z.suffix == ".zip" and str(z).startswith(str(tmp_path / "sessions"))
    before = canonical(drafts_of(view).draft, rekey=True)
    assert "Imported 1 SEG" in cb_transfer.import_zip(view, str(z))
    got = drafts_of(view).draft
    assert dataclasses.replace(canonical(got, rekey=True)) == before
    # and the folder, too; two SEGs with id 0 are one problem of the dataset, not of each SEG
    cb_transfer.import_folder(view, str(out))
    assert len(cb_view.authoring_state(view)["drafts"]) == 3
    assert "SEG id 0 is used by 3 SEGs" in cb_view.all_problems_md(view)
    assert import_dataset(out)[0].nodes == before.nodes


def test_variant_of_a_dataset_seg_scored_with_loaded_scores(folder, tmp_path):
    app = _state(folder, tmp_path)
    view = Workspaces(app, exports_root=tmp_path / "sessions").view("s", create=True)
    cb_drafts.start_from_seg(view, 1)
    st = cb_view.authoring_state(view)
    assert st["problems"] == [] and st["header"][1] == 1 and len(st["images"]) == 13
    # Ord/Sep of the unchanged SEG equal the explorer's (the whole dataset's meta-metrics)
    r = cb_scoring.score_draft(view, "loaded", "GoodScore", "paper")
    want = app.mm("paper").segs().set_index(["seg_id", "metric"]).loc[(1, "GoodScore")]
    assert f"Ord {100 * want['ord']:.1f}" in r["summary"] and f"Sep {100 * want['sep']:.1f}" in r["summary"]
    assert len(r["walks"]) == int(want["n_walks"]) and "seg-node" in r["graph"]
    # the same SEG imported from the loaded dataset's folder: its loaded scores apply as well
    cb_transfer.import_folder(view, str(folder / "ds"))
    cb_drafts.select_draft(view, 2)                    # SEG 1 of the import (after the variant, SEG 0 of the import)
    assert drafts_of(view).draft.seg_id == 1
    r_imp = cb_scoring.score_draft(view, "loaded", "GoodScore", "paper")
    assert r_imp["summary"] == r["summary"]
    for _ in range(3):
        cb_drafts.remove_draft(view)
    cb_drafts.start_from_seg(view, 1)
    # a variant: node 3a dropped (its images out of the SEG), then scored again
    d = drafts_of(view)
    gone = [im.key for im in d.draft.images_of("3a")]
    cb_images.remove_images(view, gone)
    cb_nodes.remove_node(view, "3a")
    r2 = cb_scoring.score_draft(view, "loaded", "GoodScore", "paper")
    assert "0>1a>2a" in set(r2["walks"]["path"]) and not any("3a" in p for p in r2["walks"]["path"])
    # an uploaded image has no loaded score: a SEG of uploads only cannot be scored from loaded scores
    cb_drafts.start_draft(view, "fresh")
    cb_images.add_uploads(view, [str(p) for p in _pngs(tmp_path / "up", 2)])
    keys = [k for _, k in cb_view.authoring_state(view)["images"]]
    cb_nodes.save_node(view, "0")
    cb_nodes.save_node(view, "1a", "x")
    cb_images.assign_images(view, keys[:1], "0")
    cb_images.assign_images(view, keys[1:], "1a")
    with pytest.raises(InputError, match="has no score for any image"):
        cb_scoring.score_draft(view, "loaded", "GoodScore")


def _public(folder, tmp_path, **limits):
    upload_root = tmp_path / "uploads"
    upload_root.mkdir(parents=True, exist_ok=True)
    acc = dataclasses.replace(access.public([], "test"), upload_root=str(upload_root))
    if limits:
        acc = dataclasses.replace(acc, limits=dataclasses.replace(acc.limits, **limits))
    store = Workspaces(_state(folder, tmp_path, acc), exports_root=upload_root)
    return store, upload_root


def test_public_sessions_are_private_and_go_with_the_session(folder, tmp_path):
    store, up = _public(folder, tmp_path)
    a, b = store.view("a", create=True), store.view("b", create=True)
    _build(a, _pngs(up / "h1", 6))
    assert cb_view.authoring_state(a)["problems"] == []
    # b sees nothing of a's
    assert cb_view.authoring_state(b)["drafts"] == [] and drafts_of(b) is None
    with pytest.raises(InputError, match="start a SEG first"):
        cb_nodes.save_node(b, "0")
    files = list(drafts_of(a).files.values())
    assert files and all(f.is_file() for f in files)
    zipped = Path(cb_transfer.export_zip(a, "mine"))
    assert zipped.is_file()
    # the session ends: drafts, copies, downloads and the visitor's uploads go
    store.end("a")
    assert not any(f.exists() for f in files) and not zipped.exists()
    assert not any((up / "h1").glob("*.png"))
    assert cb_view.authoring_state(store.view("a"))["drafts"] == []


def test_public_mode_refuses_paths(folder, tmp_path):
    store, up = _public(folder, tmp_path)
    v = store.view("v", create=True)
    cb_drafts.start_draft(v, "p")
    outside = _pngs(tmp_path / "elsewhere", 1)[0]
    for call in (lambda: cb_images.add_folder(v, str(tmp_path / "elsewhere")),
                 lambda: cb_transfer.export_folder(v, str(tmp_path / "x")),
                 lambda: cb_transfer.import_folder(v, str(folder / "ds")),
                 lambda: cb_transfer.push(v, "me/segs")):
        with pytest.raises(InputError, match="not available here"):
            call()
    # an upload must come from the upload folder; the same answer whether the file exists or not
    msgs = set()
    for p in (str(outside), "/etc/passwd", str(up / ".." / "elsewhere" / outside.name)):
        with pytest.raises(InputError) as e:
            cb_images.add_uploads(v, [p])
        msgs.add(str(e.value))
    assert msgs == {"upload the file through the page"}
    assert not (tmp_path / "x").exists()
    # what a visitor names never reaches a path: the dataset file name is the server's tidy one
    evil = up / "h2" / "..%2F..%2Fetc%2Fpasswd.png"
    evil.parent.mkdir()
    _pngs(up / "h2", 1)[0].rename(evil)
    cb_images.add_uploads(v, [str(evil)])
    (name, _), = cb_view.authoring_state(v)["images"]
    assert name == "images/2f-2fetc-2fpasswd.png [no node]"
    # a name the visitor types for an image is tidied by the server too
    (_, key), = cb_view.authoring_state(v)["images"]
    cb_images.rename_image(v, [key], "../../../etc/cron.d/x.png")
    assert cb_view.authoring_state(v)["images"][0][0] == "images/x.png [no node]"


def test_public_caps(folder, tmp_path):
    store, up = _public(folder, tmp_path, max_upload_bytes=2000)
    v = store.view("v", create=True)
    for i in range(PUBLIC_CAPS.max_drafts):
        cb_drafts.start_draft(v, f"p{i}")
    with pytest.raises(InputError, match=f"at most {PUBLIC_CAPS.max_drafts} SEGs"):
        cb_drafts.start_draft(v, "one more")
    # one image larger than the app's upload cap
    from PIL import Image

    big = up / "h3" / "big.png"
    big.parent.mkdir()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(big)
    with pytest.raises(InputError, match="limit is"):
        cb_images.add_uploads(v, [str(big)])
    # not an image
    txt = up / "h4" / "notes.png"
    txt.parent.mkdir()
    txt.write_text("hello")
    with pytest.raises(InputError, match="not a readable image"):
        cb_images.add_uploads(v, [str(txt)])
    assert cb_view.authoring_state(v)["images"] == []
    # the number of images over the session
    store2, up2 = _public(folder, tmp_path / "two")
    w = store2.view("w", create=True)
    cb_drafts.start_draft(w, "many")
    pngs = _pngs(up2 / "h5", 3)
    from ts2viz.authoring import DraftImage

    d = drafts_of(w)       # the session holds all but two of its images already
    d.drafts[0] = dataclasses.replace(d.drafts[0], images=tuple(
        DraftImage(f"k{i}", f"images/{i}.png") for i in range(PUBLIC_CAPS.max_images - 2)))
    with pytest.raises(InputError, match=f"at most {PUBLIC_CAPS.max_images} images"):
        cb_images.add_uploads(w, [str(p) for p in pngs])


def _zip(path: Path, members: dict[str, bytes], *, link: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
    return path


def test_zip_import_refuses_unsafe_members_and_bombs(folder, tmp_path):
    store, up = _public(folder, tmp_path)
    v = store.view("v", create=True)
    meta = b"id,target_prompt,file_name,image_source,rank\n0,p,images/a.png,x,0\n"
    for i, members in enumerate(({"metadata.csv": meta, "../evil.png": b"x"},
                                 {"metadata.csv": meta, "/tmp/evil.png": b"x"},
                                 {"metadata.csv": meta, "images/..\\..\\evil.png": b"x"})):
        z = _zip(up / f"z{i}" / "ds.zip", members)
        with pytest.raises(InputError, match="zip entry"):
            cb_transfer.import_zip(v, str(z))
    with pytest.raises(InputError, match="not a plain file"):
        cb_transfer.import_zip(v, str(_zip(up / "zl" / "ds.zip", {"metadata.csv": meta}, link="images/a.png")))
    assert not (tmp_path / "evil.png").exists() and not (up / "evil.png").exists()
    # a bomb: small zipped, large unzipped
    bomb = up / "zb" / "ds.zip"
    bomb.parent.mkdir()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("metadata.csv", meta)
        z.writestr("images/a.png", b"\0" * (PUBLIC_CAPS.max_unzipped_bytes + 1))
    assert bomb.stat().st_size < PUBLIC_CAPS.max_zip_bytes
    with pytest.raises(InputError, match="unpacks to"):
        cb_transfer.import_zip(v, str(bomb))
    # not a zip; a zip with no dataset; a dataset that does not load: one line, nothing kept
    notzip = up / "zn" / "ds.zip"
    notzip.parent.mkdir()
    notzip.write_bytes(b"PK not really")
    with pytest.raises(InputError, match="not a zip file"):
        cb_transfer.import_zip(v, str(notzip))
    with pytest.raises(InputError, match="no metadata.csv"):
        cb_transfer.import_zip(v, str(_zip(up / "ze" / "ds.zip", {"readme.txt": b"hi"})))
    with pytest.raises(InputError, match="metadata.csv") as e:
        cb_transfer.import_zip(v, str(_zip(up / "zbad" / "ds.zip", {"metadata.csv": b"id,target_prompt,secret_column\n0,p,hunter2\n"})))
    assert "hunter2" not in str(e.value)
    d = drafts_of(v)
    imports = Path(v.workspace.exports_path()) / "authoring" / "imports"
    assert d.drafts == [] and (not imports.exists() or not any(imports.iterdir()))
    # a zip outside the upload folder is refused like any other path
    with pytest.raises(InputError, match="upload the file through the page"):
        cb_transfer.import_zip(v, str(_zip(tmp_path / "outside" / "ds.zip", {"metadata.csv": meta})))


def test_public_zip_roundtrip_and_caps_on_members(folder, tmp_path):
    store, up = _public(folder, tmp_path)
    a = store.view("a", create=True)
    _build(a, _pngs(up / "h1", 6))
    z = Path(cb_transfer.export_zip(a, "../../mine"))
    assert z.name == "mine.zip"              # the name a visitor typed is tidied, never a path
    # the download is the visitor's; uploaded again by another visitor it imports into their session
    again = up / "h9" / "mine.zip"
    again.parent.mkdir()
    again.write_bytes(z.read_bytes())
    b = store.view("b", create=True)
    assert "Imported 1 SEG" in cb_transfer.import_zip(b, str(again))
    st = cb_view.authoring_state(b)
    assert st["problems"] == [] and [r["errors"] for r in st["nodes"]] == ["", "cube not red", "cube not red; no table"]
    # too many members
    many = _zip(up / "hm" / "many.zip", {f"images/{i}.png": b"x" for i in range(PUBLIC_CAPS.max_zip_members + 1)})
    with pytest.raises(InputError, match="holds"):
        cb_transfer.import_zip(b, str(many))


def test_export_zip_bytes_are_a_loadable_dataset(folder, tmp_path):
    view = Workspaces(_state(folder, tmp_path), exports_root=tmp_path / "sessions").view("s", create=True)
    _build(view, _pngs(tmp_path / "up", 6))
    z = Path(cb_transfer.export_zip(view, "demo"))
    dest = tmp_path / "unzipped"
    with zipfile.ZipFile(io.BytesIO(z.read_bytes())) as zf:
        zf.extractall(dest)
    ds = load_folder(dest / "demo")          # the dataset's files under one folder named for it
    assert ds[0].node("1a").errors == ("cube not red",) and len(ds.rows) == 6
    assert "cube not red" in (dest / "demo" / "README.md").read_text()


def test_score_uploads_with_a_library_metric(folder, tmp_path):
    """A SEG of uploaded images scored with a tiny CLIP of the library (real weights file, random values):
    every image scored once, the scores reused, Ord/Sep and walks shown; in public mode only the offered
    metric, by its display name."""
    from ts2viz import engine
    from ts2viz.metametrics.results import compute
    from tiny_models import tiny

    spec = f"clipscore:{tiny('clip')}"
    store, up = _public(folder, tmp_path)
    store.app.access = dataclasses.replace(store.app.access, offered=(spec,))
    name = store.app.access.choices()[0]
    assert str(tiny("clip")) not in name
    v = store.view("v", create=True)
    pngs = _pngs(up / "h1", 6)
    _build(v, pngs)
    with pytest.raises(InputError):
        cb_scoring.score_draft(v, "library", "clipscore:/some/other/folder")
    r = cb_scoring.score_draft(v, "library", name)
    d = drafts_of(v)
    assert len(d.scores) == 6 and all(np.isfinite(x) for x in d.scores.values())
    assert len(r["walks"]) == 1 and r["walks"]["path"][0] == "0>1a>2a" and "Ord" in r["summary"]
    # the scores are the metric's on the uploaded files (scored here again, outside the tab)
    from PIL import Image

    direct = engine.score_images(spec, [Image.open(p).convert("RGB") for p in pngs], ["a red cube on a table"] * 6,
                                 use_cache=False)
    by_file = {im.file_name: d.scores[(next(iter(k for k, _ in d.scores)), im.key)] for im in d.draft.images}
    assert np.allclose([by_file[f"images/pic-{i}.png"] for i in range(6)], direct, atol=1e-5)
    # Ord as the meta-metrics compute it on a dataset folder of the export (the CLI's path)
    out = tmp_path / "exp"
    from ts2viz.authoring import export_dataset

    export_dataset(d.draft, out, {im.key: d.files[im.key] for im in d.draft.images})
    from ts2viz.scores import Scores

    ds = load_folder(out)
    sc = Scores(list(by_file), ["m"], np.array(list(by_file.values())).reshape(-1, 1))
    ordv = compute(ds, sc, ["m"], "paper").segs().iloc[0]["ord"]
    assert f"Ord {100 * ordv:.1f}" in r["summary"]
    # scored again: nothing new to score
    before = dict(d.scores)
    cb_scoring.score_draft(v, "library", name)
    assert d.scores == before


def test_one_level_seg_is_a_warning_not_a_problem(folder, tmp_path):
    view = Workspaces(_state(folder, tmp_path), exports_root=tmp_path / "sessions").view("s", create=True)
    cb_drafts.start_draft(view, "first", 5)
    assert "id 5 is taken" in cb_drafts.start_draft(view, "flat", 5)        # the id field still shows SEG 5's
    assert [x.seg_id for x in drafts_of(view).drafts] == [5, 6]
    cb_images.add_uploads(view, [str(p) for p in _pngs(tmp_path / "up", 2)])
    cb_nodes.save_node(view, "0")
    cb_images.assign_images(view, [k for _, k in cb_view.authoring_state(view)["images"]], "0")
    st = cb_view.authoring_state(view)
    assert st["problems"] == [] and any("one error level" in w for w in st["warnings"])
    assert "No problems" in st["problems_md"] and "⚠" in st["problems_md"]


def test_error_descriptions_in_the_explorer_and_the_questions_tab(folder, tmp_path):
    """A dataset with nodes.csv, loaded by the app: the explorer's node cards carry each node's errors
    (card and hover text, HTML-escaped), and the Questions tab's note lists them beside the questions."""
    import shutil

    from ts2viz.ui.callbacks.explorer import view as cb_explorer_view
    from ts2viz.ui.callbacks.questions.nodes import node_errors_md

    ds = tmp_path / "ds"
    shutil.copytree(folder / "ds", ds)
    (ds / "nodes.csv").write_text('id,rank,errors\n0,1a,no apple\n0,2a,"no apple; <b>no</b> table"\n')
    app = load_state(str(ds), [str(folder / "scores.csv")], cache_root=tmp_path / "cache").view()
    html_ = cb_explorer_view.graph_html(app, "paper", 0, "GoodScore")
    assert '<div class="errs">+ no apple</div>' in html_
    assert "+ no apple; &lt;b&gt;no&lt;/b&gt; table" in html_ and "<b>no</b>" not in html_
    assert "· adds: no apple" in html_
    assert 'data-node="1b"' in html_ and html_.count('class="errs"') == 2
    # the explorer's title of an open node says what it adds
    title = cb_explorer_view.select_node(app, "paper", 0, "GoodScore", None, "2a")["node_title"]
    assert title.startswith("**Node 2a**") and "adds: *no apple; " in title and "<b>" not in title
    assert "adds" not in cb_explorer_view.select_node(app, "paper", 0, "GoodScore", None, "1b")["node_title"]
    md = node_errors_md(app.dataset[0])
    assert md.startswith("\n\n**Errors the nodes add**") and "**1a**: no apple" in md and "<b>" not in md
    assert node_errors_md(app.dataset[1]) == ""


def test_public_page_has_no_path_fields(folder, tmp_path):
    """The public page offers no field whose text could name a server path (folders, export and import
    paths, a hub repo); the operator's page has them."""
    from ts2viz.ui.page.layout import build_blocks

    path_fields = {"author-folder", "author-export-dir", "author-import-dir", "author-repo"}

    def elem_ids(acc):
        demo = build_blocks(_state(folder, tmp_path, acc))
        return {c.get("props", {}).get("elem_id") for c in demo.config["components"]}

    public = elem_ids(dataclasses.replace(access.public([], "test"), upload_root=str(tmp_path)))
    operator = elem_ids(None)
    assert {"author-files", "author-zip", "author-zip-in", "author-graph"} <= public
    assert not (path_fields & public) and path_fields <= operator


def test_operator_imports_a_dataset_by_name_without_fetching_its_images(folder, tmp_path, monkeypatch):
    """'ts2' (or a hub id): every SEG becomes a draft at once; no image is fetched until it is needed."""
    import ts2viz.dataset as dataset_mod

    fetched = []
    monkeypatch.setattr(dataset_mod, "fetch_image", lambda ds, fn, **k: fetched.append(fn))
    view = Workspaces(_state(folder, tmp_path), exports_root=tmp_path / "sessions").view("s", create=True)
    assert "Imported 165 SEGs" in cb_transfer.import_folder(view, "ts2")
    st = cb_view.authoring_state(view)
    assert len(st["drafts"]) == 165 and st["problems"] == [] and fetched == []
    # the images of the bundled metadata are not on this machine: an export says which one, and writes nothing
    with pytest.raises(InputError, match="cannot be had here"):
        cb_transfer.export_folder(view, str(tmp_path / "ts2copy"))
    assert fetched and not (tmp_path / "ts2copy").exists()


def test_operator_pushes_to_a_hub_and_imports_it_back(folder, tmp_path, monkeypatch):
    """The tab's push (token and endpoint from the environment) against tests/support/hub_server.py, never the real
    hub; the pushed repo imported back by its id, its images fetched from the hub only at export."""
    from hub_server import HubServer, point_client_at

    token = "hf_test_token_456"
    with HubServer(token=token) as srv:
        point_client_at(srv, monkeypatch, tmp_path / "hub-cache")
        monkeypatch.setenv("HF_TOKEN", token)
        view = Workspaces(_state(folder, tmp_path), exports_root=tmp_path / "sessions").view("s", create=True)
        pngs = _pngs(tmp_path / "up", 6)
        _build(view, pngs)
        msg = cb_transfer.push(view, "me/cubes", True, "My cubes")
        assert "Pushed 1 SEG to me/cubes" in msg
        repo = srv.repos[("dataset", "me/cubes")]
        assert repo.private and "nodes.csv" in repo.files and repo.content("images/pic-5.png") == pngs[5].read_bytes()
        with pytest.raises(InputError, match="OWNER/NAME"):
            cb_transfer.push(view, "cubes")
        # back by its id (a second SEG of the session), exported again: the images come from the hub
        assert "Imported 1 SEG" in cb_transfer.import_folder(view, "me/cubes")
        d = drafts_of(view)
        assert d.draft.node("2a").errors == ("cube not red", "no table")
        cb_drafts.select_draft(view, 0)
        cb_drafts.remove_draft(view)            # the session's own SEG goes: only the imported one is left
        assert len(d.drafts) == 1 and all(k in d.remote for k in (im.key for im in d.draft.images))
        out = tmp_path / "again"
        cb_transfer.export_folder(view, str(out))
        assert (out / "images" / "pic-5.png").read_bytes() == pngs[5].read_bytes()
