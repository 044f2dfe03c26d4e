"""SEG authoring without a browser (issue 23): build a SEG through ts2viz.authoring, check every rule as
it is built, export it as a dataset folder, and use that folder through the real loader and CLI
(``ts2viz validate``, ``ts2viz leaderboard``); import it back; the same rules as the loader's."""
from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core_helpers import write_folder
from ts2viz.authoring import (DraftImage, DraftNode, SegDraft, canonical, draft_from_seg, draft_problems,
                              draft_to_seg, drafts_problems, export_dataset, import_dataset)
from ts2viz.dataset import load_bundled, load_folder, validate_folder
from ts2viz.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "a red apple on a wooden table"


def png(seed: int, size: int = 24) -> bytes:
    """A small PNG, distinct per seed (made here, never downloaded)."""
    from PIL import Image

    im = Image.new("RGB", (size, size), ((seed * 70) % 256, (seed * 130 + 40) % 256, (seed * 30 + 90) % 256))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def apple_draft(seg_id: int = 0, prefix: str = "u") -> tuple[SegDraft, dict[str, bytes]]:
    """A 3-level SEG (0; 1a, 1b; 2) with 6 images, built through the API as the app's tab does:
    images added unassigned first, then put into nodes."""
    d = SegDraft(PROMPT, seg_id=seg_id)
    blobs = {}
    for i in range(6):
        key = f"{prefix}{i}"
        blobs[key] = png(seg_id * 10 + i)
        d = d.add_image(key, f"images/{seg_id}/apple-{i}.png", source="SD2.1" if i % 2 else "Natural")
    d = (d.add_node("0").add_node("1a", "no apple").add_node("1b", "table not wooden")
         .add_node("2", ["no apple", "table not wooden"]))
    for keys, node in (([f"{prefix}0", f"{prefix}1"], "0"), ([f"{prefix}2"], "1a"), ([f"{prefix}3"], "1b"),
                       ([f"{prefix}4", f"{prefix}5"], "2")):
        d = d.assign(keys, node)
    return d, blobs


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "ts2viz", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=None if env is None else {**os.environ, **env})


# -- building -------------------------------------------------------------------------------------------

def test_a_three_level_seg_built_through_the_api():
    d, _ = apple_draft()
    assert draft_problems(d) == []
    assert d.implied_edges == (("0", "1a"), ("0", "1b"), ("1a", "2"), ("1b", "2"))
    seg = draft_to_seg(d)
    assert seg.walks() == [("0", "1a", "2"), ("0", "1b", "2")]
    assert seg.node("2").errors == ("no apple", "table not wooden") and seg.node("0").errors == ()
    assert [im.file_name for im in seg.node("2").images] == ["images/0/apple-4.png", "images/0/apple-5.png"]
    assert seg.n_images == 6 and seg.partition == "Custom"


def test_updates_are_pure_and_carry_images_and_edges():
    d, _ = apple_draft()
    e = d.add_edge("0", "2")                      # implied edges become explicit, plus the new one
    assert d.edges is None and e.edges == d.implied_edges + (("0", "2"),)
    r = e.rename_node("1a", "1c")
    assert r.images_of("1c") == tuple(DraftImage(im.key, im.file_name, "1c", im.source) for im in e.images_of("1a"))
    assert ("0", "1c") in r.edges and ("1c", "2") in r.edges and not any("1a" in x for x in r.edges)
    assert e.has_node("1a") and not r.has_node("1a")          # e unchanged
    gone = r.remove_node("1c")
    assert [im.key for im in gone.unassigned] == ["u2"] and not any("1c" in x for x in gone.edges)
    assert gone.remove_edge("0", "2").edges == (("0", "1b"), ("1b", "2"))
    assert d.set_node_errors("1a", "no apple ;  apple is green ;").node("1a").errors == ("no apple", "apple is green")
    assert d.follow_error_counts() == d and e.follow_error_counts().edges is None
    with pytest.raises(ValueError):
        d.add_image("u0", "images/x.png")            # keys are the caller's handles: one per image
    with pytest.raises(KeyError):
        d.assign("nope", "0")


# -- every rule ---------------------------------------------------------------------------------------------

def _bad(mutate) -> list[str]:
    d, _ = apple_draft()
    return [p.message for p in draft_problems(mutate(d))]


@pytest.mark.parametrize("mutate, says", [
    (lambda d: d.add_node("x").assign("u0", "x"), "malformed node label 'x'"),
    (lambda d: d.add_node("1a"), "node 1a appears 2 times"),
    (lambda d: d.unassign("u2"), "image images/0/apple-2.png is not in a node"),
    (lambda d: d.add_image("z", "images/z.png", "3"), "image images/z.png is in node '3', which the SEG does not have"),
    (lambda d: d.set_image("u1", file_name="../apple.png"), "file_name '../apple.png' has an empty, '.' or '..' part"),
    (lambda d: d.set_image("u1", file_name="/tmp/apple.png"), "file_name '/tmp/apple.png' is an absolute path"),
    (lambda d: d.set_image("u1", file_name="images\\a.png"), "contains a backslash"),
    (lambda d: d.set_image("u1", file_name="metadata.csv"), "is one of the dataset's own files"),
    (lambda d: d.set_image("u1", file_name="images/.a.png"), "has a hidden part"),
    (lambda d: d.set_image("u1", file_name=""), "empty file_name"),
    (lambda d: d.set_image("u1", file_name="images/0/apple-0.png"), "duplicate file_name 'images/0/apple-0.png'"),
    (lambda d: d.add_node("3"), "node 3 has no images"),
    (lambda d: d.add_edge("2", "1a"), "SEG 0: edge 2->1a goes from error level 2 to level 1; an edge must go"),
    (lambda d: d.add_edge("1a", "1a"), "SEG 0: edge 1a->1a is a self-loop"),
    (lambda d: d.add_edge("1a", "1b"), "edge 1a->1b goes from error level 1 to level 1"),
    (lambda d: d.add_edge("1a", "3"), "edge 1a->3: SEG 0 has no node '3' (nodes: 0, 1a, 1b, 2)"),
    (lambda d: d.remove_edge("0", "1b"), "SEG 0: node 1b cannot be reached from an error-0 node"),
    (lambda d: d.rename_node("0", "1c"), "SEG 0 has no error-0 node (labels: 1a, 1b, 1c, 2)"),
    (lambda d: d.with_prompt("   "), "the SEG has no prompt"),
    (lambda d: d.with_seg_id(-1), "SEG id -1 is not a non-negative integer"),
    (lambda d: d.with_partition(""), "the SEG has no partition"),
    (lambda d: d.set_node_errors("1a", ["no apple; no pear"]), "contains ';', which separates descriptions"),
])
def test_each_rule_is_one_readable_line(mutate, says):
    msgs = _bad(mutate)
    assert any(says in m for m in msgs), msgs
    assert all("\n" not in m for m in msgs)


def test_an_empty_draft_and_several_drafts():
    assert [p.message for p in draft_problems(SegDraft("p"))] == ["the SEG has no nodes; add an error-0 node "
                                                                  "(label 0) first"]
    a, _ = apple_draft(0)
    b, _ = apple_draft(0, prefix="v")
    msgs = [p.message for p in drafts_problems([a, b])]
    assert "SEG id 0 is used by 2 SEGs; ids must be distinct" in msgs
    assert "duplicate file_name 'images/0/apple-0.png' (SEG 0 and SEG 0)" not in msgs
    c = b.with_seg_id(1)
    assert [p.message for p in drafts_problems([a, c])][0] == \
        "duplicate file_name 'images/0/apple-0.png' (SEG 0 and SEG 1)"
    assert drafts_problems([]) and drafts_problems([a]) == []
    # a problem of one draft names its SEG
    assert [p.message for p in drafts_problems([a.add_node("3")])] == ["SEG 0: node 3 has no images; a node of "
                                                                      "a dataset exists through its images"]


def test_draft_to_seg_raises_one_line():
    d, _ = apple_draft()
    with pytest.raises(InputError) as e:
        draft_to_seg(d.add_edge("2", "1a").add_node("4"))
    assert str(e.value).startswith("SEG 0: node 4 has no images") and "(and 1 more problem(s))" in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("edges, mutate", [
    ("id,parent,child\n0,0,1a\n0,1a,2\n", lambda d: d.remove_edge("0", "1b").remove_edge("1b", "2")),
    ("id,parent,child\n0,0,1a\n0,0,1b\n0,1a,2\n0,1b,2\n0,1a,5\n", lambda d: d.add_edge("1a", "5")),
])
def test_the_draft_and_the_validator_word_a_rule_alike(tmp_path, edges, mutate):
    """One truth per rule: the message for a draft is the message `ts2viz validate` gives for the same
    SEG written by hand (after the validator's 'file, row: ' prefix)."""
    d, _ = apple_draft()
    rows = [{"id": 0, "target_prompt": PROMPT, "file_name": im.file_name, "image_source": im.source,
             "rank": im.node} for im in d.images]
    folder = write_folder(tmp_path / "hand", rows)
    (folder / "edges.csv").write_text(edges)
    rep = validate_folder(folder, check_images=False)
    assert len(rep.errors) == 1
    msgs = [p.message for p in draft_problems(mutate(d))]
    assert msgs == [rep.errors[0].problem]


# -- export, load, CLI ----------------------------------------------------------------------------------

def test_export_loads_validates_and_ranks_a_metric(tmp_path):
    d, blobs = apple_draft(0)
    d2, blobs2 = apple_draft(7, prefix="v")
    d2 = d2.add_edge("0", "2").remove_edge("1b", "2").with_partition("Synth")
    out = export_dataset([d2, d], tmp_path / "my_segs", {**blobs, **blobs2})
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "edges.csv", "images", "metadata.csv", "nodes.csv"]
    assert list(tmp_path.iterdir()) == [out]                  # no temp folder left beside it

    # the files, as written (read here with the csv module, not the loader)
    meta = list(csv.DictReader(open(out / "metadata.csv", encoding="utf-8")))
    assert list(meta[0]) == ["id", "target_prompt", "file_name", "image_source", "rank", "partition"]
    assert [(r["id"], r["rank"], r["file_name"]) for r in meta[:6]] == [
        ("0", "0", "images/0/apple-0.png"), ("0", "0", "images/0/apple-1.png"), ("0", "1a", "images/0/apple-2.png"),
        ("0", "1b", "images/0/apple-3.png"), ("0", "2", "images/0/apple-4.png"), ("0", "2", "images/0/apple-5.png")]
    assert (out / "images/0/apple-3.png").read_bytes() == blobs["u3"]
    assert (out / "edges.csv").read_text() == "id,parent,child\n7,0,1a\n7,0,1b\n7,0,2\n7,1a,2\n"
    nodes = (out / "nodes.csv").read_text().splitlines()
    assert nodes[0] == "id,rank,errors" and "0,2,no apple; table not wooden" in nodes and len(nodes) == 7
    card = (out / "README.md").read_text()
    assert "### SEG 7: a red apple on a wooden table" in card and "| 1b | table not wooden | 1 |" in card
    assert "Edges: 0 → 1a, 0 → 1b, 0 → 2, 1a → 2." in card and "Edges: follow the error counts." in card

    ds = load_folder(out)
    assert sorted(ds.segs) == [0, 7]
    assert ds[0].walks() == [("0", "1a", "2"), ("0", "1b", "2")] and ds[0].edges is None
    assert ds[7].walks() == [("0", "1a", "2"), ("0", "1b"), ("0", "2")] and ds[7].partition == "Synth"
    assert ds[7].node("1b").errors == ("table not wooden",)
    assert ds[0] == draft_to_seg(d) and ds[0].nodes == draft_to_seg(d).nodes
    assert all(ds.image_path(r.file_name) is not None for r in ds.rows)

    r = cli("validate", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == f"{out}: OK; 2 SEG(s) and 12 image row(s) load"

    # a scores CSV keyed by file_name: 'falls' drops with every error (the same score within a node),
    # 'rises' grows with them
    level = {r["file_name"]: int(r["rank"][0]) for r in meta}
    scores = tmp_path / "scores.csv"
    scores.write_text("file_name,falls,rises\n" + "".join(
        f"{fn},{1 - lv / 10:.4f},{lv / 10 + i / 1000:.4f}\n" for i, (fn, lv) in enumerate(level.items())))
    board = tmp_path / "board.csv"
    r = cli("leaderboard", "--dataset", str(out), "--scores", str(scores), "--mode", "spec", "--out", str(board))
    assert r.returncode == 0, r.stderr
    lb = pd.read_csv(board).set_index("metric")
    # a score that falls with every error has Spearman 1 on every walk; one that rises ranks below it
    assert lb.loc["falls", "ord_avg"] == pytest.approx(1.0)
    assert lb.loc["rises", "ord_avg"] < lb.loc["falls", "ord_avg"]


def test_a_dataset_of_its_own_partitions_loads_without_a_warning(tmp_path):
    """An authored dataset's own partition ("Custom") is a choice, not a typo: no warning on each load.
    Beside a SEG in one of TS2's partitions, the same value is reported (a likely misspelling)."""
    import warnings

    d, blobs = apple_draft(0)
    out = export_dataset([d, apple_draft(1, prefix="v")[0].with_partition("Medical")], tmp_path / "own",
                         {**blobs, **apple_draft(1, prefix="v")[1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_folder(out)
    assert {s.partition for s in ds} == {"Custom", "Medical"}
    mixed = export_dataset([d, apple_draft(1, prefix="v")[0].with_partition("Synth")], tmp_path / "mixed",
                           {**blobs, **apple_draft(1, prefix="v")[1]})
    with pytest.warns(UserWarning, match="partition 'Custom' .* is not one of Synth, Nat, Real"):
        load_folder(mixed)


def test_import_round_trip(tmp_path):
    d, blobs = apple_draft(0)
    d2, blobs2 = apple_draft(3, prefix="v")
    d2 = d2.add_edge("0", "2").with_partition("Real").set_image("v1", source="DALL-E2")
    # nodes and images in a shuffled order: the export writes them in canonical order
    d2 = SegDraft(d2.prompt, d2.seg_id, d2.partition, d2.nodes[::-1], d2.images[::-1], d2.edges[::-1])
    out = export_dataset([d, d2], tmp_path / "ds", {**blobs, **blobs2})
    back = import_dataset(out)
    assert back == [canonical(d, rekey=True), canonical(d2, rekey=True)]
    assert back[1].node("2").errors == ("no apple", "table not wooden") and back[1].image("images/3/apple-1.png").source == "DALL-E2"
    # and again: export of the imported drafts (bytes from the files) gives the same files
    from ts2viz.authoring import image_locator

    again = export_dataset(back, tmp_path / "again", image_locator(load_folder(out)), name="ds")
    for name in ("metadata.csv", "edges.csv", "nodes.csv", "README.md"):
        assert (again / name).read_text() == (out / name).read_text(), name
    assert all((again / im.file_name).read_bytes() == (out / im.file_name).read_bytes() for im in back[1].images)
    assert import_dataset(again) == back


def test_a_variant_of_a_ts2_seg():
    ts2 = load_bundled()
    d = draft_from_seg(ts2, 0)
    assert draft_to_seg(d) == ts2[0] and len(d.images) == ts2[0].n_images
    assert d.images[0].key == d.images[0].file_name and d.edges is None and d.partition == "Synth"
    variant = d.with_seg_id(1000).set_node_errors("1a", "no teddy bear")
    assert draft_problems(variant) == [] and draft_to_seg(variant).node("1a").errors == ("no teddy bear",)
    with pytest.raises(InputError, match="no SEG with id 9999"):
        draft_from_seg(ts2, 9999)


def test_export_refuses_and_leaves_nothing(tmp_path):
    d, blobs = apple_draft()
    with pytest.raises(InputError, match=r"cannot export: SEG 0: edge 2->1a goes"):
        export_dataset([d.add_edge("2", "1a")], tmp_path / "bad", blobs)
    with pytest.raises(InputError, match=r"no bytes given for image images/0/apple-5.png \(key 'u5'\)"):
        export_dataset([d], tmp_path / "bad", {k: v for k, v in blobs.items() if k != "u5"})
    with pytest.raises(InputError, match="images/0/apple-2.png is not an image file"):
        export_dataset([d], tmp_path / "bad", {**blobs, "u2": b"<html>not an image</html>"})
    assert list(tmp_path.iterdir()) == []                   # no folder, no temp folder

    out = export_dataset(d, tmp_path / "ds", lambda im: blobs[im.key])
    with pytest.raises(InputError, match="already exists"):
        export_dataset(d, out, blobs)
    other = tmp_path / "home"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="is not a dataset folder"):
        export_dataset(d, other, blobs, overwrite=True)
    assert (other / "notes.txt").read_text() == "mine"
    # overwrite replaces a dataset folder as a whole (no stale files survive)
    (out / "images" / "stale.png").write_bytes(png(99))
    d1 = d.remove_image("u5")
    export_dataset(d1, out, blobs, overwrite=True)
    assert not (out / "images" / "stale.png").exists() and len(load_folder(out).rows) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "home"]
    # bytes may also come as paths to files
    files = {}
    for k, v in blobs.items():
        (tmp_path / f"{k}.png").write_bytes(v)
        files[k] = tmp_path / f"{k}.png"
    assert len(load_folder(export_dataset(d, tmp_path / "frompaths", files)).rows) == 6


# -- nodes.csv in the loader and the validator ----------------------------------------------------------

def test_nodes_csv_is_checked_with_file_and_row(tmp_path):
    d, blobs = apple_draft()
    out = export_dataset(d, tmp_path / "ds", blobs)
    (out / "nodes.csv").write_text("id,rank,errors\n0,1a,no apple\n5,1a,x\n0,3,y\n0,1a,again\n0,2b!,z\nq,1,w\n")
    rep = validate_folder(out)
    nodes = out / "nodes.csv"
    assert [str(e) for e in rep.errors] == [
        f"{nodes}, row 5: node 1a of SEG 0 is listed twice (first at row 2)",
        f"{nodes}, row 6: malformed node label '2b!': expected an error count followed by optional letters, "
        f"e.g. 0, 1a, 2b",
        f"{nodes}, row 7: id 'q' is not an integer",
        f"{nodes}, row 4: SEG 0 has no node '3' (nodes: 0, 1a, 1b, 2)",
        f"{nodes}, row 3: errors of node 1a are for SEG 5, which metadata.csv does not have",
    ]
    r = cli("validate", str(out))
    assert r.returncode == 2 and f"error: {nodes}, row 4: SEG 0 has no node '3'" in r.stdout
    with pytest.raises(InputError, match="row 5: node 1a of SEG 0 is listed twice"):
        load_folder(out)
    (out / "nodes.csv").write_text("id,rank\n0,1a\n")
    with pytest.raises(InputError, match="missing column 'errors'"):
        load_folder(out)
    (out / "nodes.csv").write_text("id,rank,errors\n0,1a,\n0,2, a ;; b \n")
    ds = load_folder(out)
    assert ds[0].node("1a").errors == () and ds[0].node("2").errors == ("a", "b")


def test_draft_node_and_image_are_plain_data():
    assert DraftNode(" 1a ", ("x",)).label == "1a" and DraftNode("1a").level == 1 and DraftNode("zz").level is None
    assert DraftImage("k", " images/a.png ", " 0 ", " SD ") == DraftImage("k", "images/a.png", "0", "SD")
    assert SegDraft("  p  ", partition=" Real ") == SegDraft("p", partition="Real")


def test_safe_file_names_for_uploads():
    from ts2viz.authoring import file_name_problem, safe_file_name

    assert safe_file_name("My Photo (1).JPG") == "images/my-photo-1.jpg"
    assert safe_file_name("../../etc/passwd") == "images/passwd.png"
    assert safe_file_name("C:\\Users\\me\\a b.webp", folder="images/3") == "images/3/a-b.webp"
    assert safe_file_name("....", taken={"images/image.png"}) == "images/image-2.png"
    assert safe_file_name("x.png", taken={"images/x.png", "images/x-2.png"}) == "images/x-3.png"
    assert safe_file_name("metadata.csv", folder="") == "metadata.png"
    for name in ("a/../../b.png", ".hidden.png", "\x00.png", "é.png", "README.md", ""):
        assert file_name_problem(safe_file_name(name)) is None and file_name_problem(safe_file_name(name, folder="")) is None


def test_drafts_as_a_dataset_for_live_scoring(tmp_path):
    """Meta-metrics of drafts (no export): the same numbers as on the exported folder."""
    from ts2viz.authoring import drafts_to_dataset
    from ts2viz.metametrics.results import compute
    from ts2viz.scores import Scores
    import numpy as np

    d, blobs = apple_draft(0)
    d2, blobs2 = apple_draft(2, prefix="v")
    d2 = d2.add_edge("0", "2")
    live = drafts_to_dataset([d2, d])
    out = export_dataset([d, d2], tmp_path / "ds", {**blobs, **blobs2})
    disk = load_folder(out)
    assert live.segs == disk.segs and [r.__dict__ for r in live.rows] == [r.__dict__ for r in disk.rows]
    names = disk.file_names
    rng = np.random.default_rng(0)
    sc = Scores(names, ["m"], rng.normal(size=(len(names), 1)), set())
    a = compute(live, sc, mode="spec").segs()
    b = compute(disk, sc, mode="spec").segs()
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(InputError, match="SEG 0: node 3 has no images"):
        drafts_to_dataset([d.add_node("3")])


def test_importing_authoring_is_light():
    code = ("import sys, ts2viz.authoring\n"
            "bad = [m for m in ('gradio', 'torch', 'huggingface_hub', 'PIL', 'pandas') if m in sys.modules]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr


def test_an_image_inside_another_image_and_unwritable_places(tmp_path):
    d, blobs = apple_draft()
    nested = d.set_image("u1", file_name="images/0/apple-0.png/b.png")
    assert [p.message for p in draft_problems(nested)] == [
        "file_name 'images/0/apple-0.png/b.png' is inside 'images/0/apple-0.png', which is another image's file"]
    other, _ = apple_draft(1, prefix="v")
    other = other.set_image("v0", file_name="images/0/apple-0.png/c.png")
    assert [p.message for p in drafts_problems([d, other])] == [
        "SEG 1: file_name 'images/0/apple-0.png/c.png' is inside 'images/0/apple-0.png', which is another image's file"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot create the dataset folder here"):
        export_dataset(d, blocker / "ds", blobs)


BRIGHTNESS = '''
import numpy as np
def brightness(images, prompts):
    return [float(np.asarray(im.convert("L"), dtype=np.float64).mean()) for im in images]
'''


def solid_png(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (size, size), rgb).save(buf, format="PNG")
    return buf.getvalue()


def test_live_scoring_of_a_draft_with_a_user_metric(tmp_path):
    """Score a draft (finished or not) with a metric through the engine; meta-metrics of the drafts."""
    from ts2viz.authoring import drafts_to_dataset, score_drafts
    from ts2viz.metametrics.results import compute

    (tmp_path / "usermetric.py").write_text(BRIGHTNESS)
    spec = f"callable:{tmp_path / 'usermetric.py'}:brightness"
    d, _ = apple_draft()
    grey = {"u0": 250, "u1": 250, "u2": 180, "u3": 170, "u4": 60, "u5": 60}  # darker with every error
    blobs = {k: solid_png((v, v, v)) for k, v in grey.items()}
    unfinished = d.add_image("extra", "images/0/extra.png")       # not in a node yet: still scored
    blobs["extra"] = solid_png((10, 20, 30))
    files = {"u5": tmp_path / "u5.png"}
    files["u5"].write_bytes(blobs["u5"])
    source = lambda im: files.get(im.key) or blobs[im.key]        # paths and bytes alike
    sc = score_drafts(unfinished, [spec], source, cache_dir=tmp_path / "cache")
    assert sc.file_names == [im.file_name for im in unfinished.images]
    # a grey pixel's luma is its grey level; (10, 20, 30) -> ITU-R 601: 0.299*10 + 0.587*20 + 0.114*30
    want = [grey[f"u{i}"] for i in range(6)] + [0.299 * 10 + 0.587 * 20 + 0.114 * 30]
    assert sc.column(sc.metrics[0]) == pytest.approx(want, abs=0.51)
    mm = compute(drafts_to_dataset(d), sc, mode="spec").segs().set_index("metric")
    assert mm.loc[sc.metrics[0], "ord"] == pytest.approx(1.0)        # falls along both walks
    # an image whose pixels cannot be had scores NaN (with a warning), not an error
    with pytest.warns(UserWarning):
        sc2 = score_drafts(d, spec, lambda im: None if im.key == "u2" else blobs[im.key], cache_dir=tmp_path / "cache")
    assert np.isnan(sc2.get("images/0/apple-2.png", sc2.metrics[0])) and sc2.get("images/0/apple-0.png", sc2.metrics[0]) == pytest.approx(250, abs=0.51)
    with pytest.raises(InputError, match="duplicate file_name"):
        score_drafts([d, d.with_seg_id(1)], spec, blobs)


# -- zip download / upload ------------------------------------------------------------------------------

def _zip(path: Path, entries: dict[str, bytes], *, symlink: str | None = None) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
    return path


def test_pack_and_unpack_a_dataset(tmp_path):
    import zipfile

    from ts2viz.authoring import pack_dataset, unpack_dataset

    d, blobs = apple_draft()
    out = export_dataset(d, tmp_path / "apples", blobs)
    (out / "stray.txt").write_text("not part of the dataset")
    z = pack_dataset(out, tmp_path / "apples.zip")
    with zipfile.ZipFile(z) as zf:
        names = sorted(zf.namelist())
    assert names == sorted(["apples/metadata.csv", "apples/nodes.csv", "apples/README.md"]
                           + [f"apples/{im.file_name}" for im in d.images])
    back = unpack_dataset(z, tmp_path / "unpacked")
    assert import_dataset(back) == [canonical(d, rekey=True)]
    assert (back / "images/0/apple-4.png").read_bytes() == blobs["u4"]
    # a zip made by hand with the files at its top works too
    flat = _zip(tmp_path / "flat.zip", {n: (out / n).read_bytes() for n in ["metadata.csv", "nodes.csv"]
                                        + [im.file_name for im in d.images]}
                | {"page.html": b"<script>", "images/extra/x.png": png(5)})
    got = unpack_dataset(flat, tmp_path / "flat")
    assert load_folder(got).segs == load_folder(out).segs
    # files that are not the dataset's are not kept
    assert sorted(p.relative_to(got).as_posix() for p in got.rglob("*") if p.is_file()) == \
        sorted(["metadata.csv", "nodes.csv"] + [im.file_name for im in d.images])
    assert not (got / "images" / "extra").exists()


@pytest.mark.parametrize("entries, says", [
    ({"metadata.csv": b"x", "../evil.png": b"x"}, "zip entry: file_name '../evil.png' has an empty, '.' or '..' part"),
    ({"metadata.csv": b"x", "/abs.png": b"x"}, "is an absolute path"),
    ({"a.png": b"x"}, "the zip holds no metadata.csv"),
    ({"metadata.csv": b"id,target_prompt,file_name,image_source,rank\n0,p,a.png,SD,1\n", "a.png": b"x"},
     "metadata.csv, row 2: SEG 0 has no error-0 node (labels: 1)"),
    ({"metadata.csv": b"x" * 3000}, "the zip unpacks to 3,000 bytes; at most 2,000 are accepted"),
])
def test_unpack_refuses_bad_zips_and_leaves_nothing(tmp_path, entries, says):
    from ts2viz.authoring import unpack_dataset

    z = _zip(tmp_path / "in.zip", entries)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(InputError) as e:
        unpack_dataset(z, work / "ds", max_total_bytes=2000)
    assert says in str(e.value) and "\n" not in str(e.value) and str(tmp_path) not in str(e.value)
    assert list(work.iterdir()) == []


def test_unpack_refuses_links_caps_and_non_zips(tmp_path):
    from ts2viz.authoring import unpack_dataset

    z = _zip(tmp_path / "link.zip", {"metadata.csv": b"x"}, symlink="images/a.png")
    with pytest.raises(InputError, match="'images/a.png' is not a plain file"):
        unpack_dataset(z, tmp_path / "a")
    z = _zip(tmp_path / "many.zip", {"metadata.csv": b"x", **{f"images/{i}.png": b"x" for i in range(5)}})
    with pytest.raises(InputError, match="the zip holds 6 files; at most 5 are accepted"):
        unpack_dataset(z, tmp_path / "b", max_files=5)
    (tmp_path / "no.zip").write_bytes(b"PK but not really")
    with pytest.raises(InputError, match="not a zip file"):
        unpack_dataset(tmp_path / "no.zip", tmp_path / "c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.zip", "many.zip", "no.zip"]


def test_preview_draws_the_sound_part_of_an_unfinished_draft():
    from ts2viz.authoring import preview_seg

    d, _ = apple_draft()
    assert preview_seg(d) == draft_to_seg(d) and preview_seg(d).nodes == draft_to_seg(d).nodes
    assert preview_seg(SegDraft("p")) is None
    assert preview_seg(d.rename_node("0", "1c")) is None                    # no error-0 node yet
    messy = (d.unassign("u2")                       # 1a loses its only image
             .add_node("x").add_image("z", "images/z.png", "x")            # malformed label
             .add_edge("2", "1b")                                           # backwards: left out
             .remove_edge("0", "1b"))                                       # 1b now unreachable
    assert draft_problems(messy)
    seg = preview_seg(messy)
    # explicit edges kept: 0->1a (1a has no image, dropped), 1a->2, 1b->2; so 2 is reachable only via 1a/1b
    assert seg.labels == ("0",) and seg.walks() == [("0",)]
    seg = preview_seg(messy, include_empty=True)
    assert seg.labels == ("0", "1a", "2") and seg.walks() == [("0", "1a", "2")]
    assert seg.node("2").errors == ("no apple", "table not wooden") and len(seg.node("1a").images) == 0


def test_the_documented_example_runs(tmp_path, monkeypatch):
    """The authoring guide's example (docs/guide/authoring.md), as written, on generated images in renders/."""
    text = (ROOT / "docs" / "guide" / "authoring.md").read_text(encoding="utf-8")
    section = text[text.index("# Authoring your own SEGs"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[:code.index("```")]
    (tmp_path / "renders").mkdir()
    for i, name in enumerate(["a0.png", "a1.png", "b.png", "c.png", "d0.png", "d1.png"]):
        (tmp_path / "renders" / name).write_bytes(png(i))
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "docs/guide/authoring.md", "exec"), scope)
    d = scope["d"]
    assert draft_problems(d) == [] and d.edges[-1] == ("0", "2")
    assert import_dataset(tmp_path / "my_segs") == [canonical(d, rekey=True)]


def test_all_of_ts2_as_drafts():
    """Every TS2 SEG as a draft passes every check and gives back the same SEGs (and rows)."""
    from ts2viz.authoring import drafts_to_dataset

    ts2 = load_bundled()
    drafts = [draft_from_seg(ts2, s) for s in ts2.segs]
    assert drafts_problems(drafts) == []
    ds = drafts_to_dataset(drafts, name="ts2")
    assert ds.segs == ts2.segs and ds.is_ts2
    assert sorted((r.seg_id, r.file_name, r.label, r.partition, r.image_source) for r in ds.rows) == \
        sorted((r.seg_id, r.file_name, r.label, r.partition, r.image_source) for r in ts2.rows)
    # a draft has one prompt per SEG: the SEG's (the release's one stray row, in SEG 3, takes it)
    stray = [(r.seg_id, r.file_name) for r in ts2.rows if r.prompt != ts2[r.seg_id].prompt]
    assert stray == [(3, "images/003-08.jpg")]
    assert all(r.prompt == ts2[r.seg_id].prompt for r in ds.rows)


def test_warnings_that_do_not_stop_an_export():
    from ts2viz.authoring import draft_warnings

    d, _ = apple_draft()
    assert draft_warnings(d) == []
    w = [p.message for p in draft_warnings(d.set_node_errors("0", "no table").set_node_errors("1a", "no apple; no table"))]
    assert w == ["node 0 is an error-0 node (it matches the prompt) but lists errors: no table",
                 "node 1a lists 2 errors but its label says 1"]
    flat = SegDraft("p").add_node("0").add_image("k", "images/k.png", "0")
    assert [p.message for p in draft_warnings(flat)] == [
        "the SEG has one error level (0); a walk needs two, so Ord and Sep are undefined for it"]
    assert draft_problems(flat) == []


def test_partition_spelling_is_the_loaders():
    assert SegDraft("p", partition=" synth ").partition == "Synth" and SegDraft("p", partition="REAL").partition == "Real"
    assert SegDraft("p", partition="custom").partition == "custom"
