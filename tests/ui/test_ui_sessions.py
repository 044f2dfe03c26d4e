"""Trust levels, the operator's metric list, per-session workspaces, the view memo and the model cache."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ts2viz import engine
from ts2viz.errors import InputError
from ts2viz.metrics import check_offered
from ts2viz.ui.serving import access
from ts2viz.ui import load_state
from ts2viz.ui.callbacks import board as cb_board, live as cb_live
from ts2viz.ui.state.memo import Memo
from ts2viz.ui.state.sessions import Workspaces
from ui_helpers import write_dataset, write_scores


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("sessions")
    write_dataset(d / "ds", big_image=False)
    write_scores(d, d / "ds")
    return d


def _app(folder, tmp_path, acc=None):
    return load_state(str(folder / "ds"), [str(folder / "scores.csv")], cache_root=tmp_path / "cache", access=acc)


def _csv(folder, path: Path, columns: dict[str, float]) -> Path:
    import csv

    rows = list(csv.DictReader(open(folder / "ds" / "metadata.csv", newline="")))
    path.write_text("file_name," + ",".join(columns) + "\n" + "".join(
        f"{r['file_name']}," + ",".join(f"{v + 0.01 * i:.3f}" for v in columns.values()) + "\n"
        for i, r in enumerate(rows)))
    return path


# -- trust level ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("host, share, pub, trusted, env, expected", [
    ("127.0.0.1", False, False, False, {}, False),
    ("localhost", False, False, False, {}, False),
    ("::1", False, False, False, {}, False),
    ("0.0.0.0", False, False, False, {}, True),
    ("192.168.1.5", False, False, False, {}, True),
    ("0.0.0.0", False, False, True, {}, False),
    ("127.0.0.1", True, False, False, {}, True),
    ("127.0.0.1", True, False, True, {}, False),
    ("127.0.0.1", False, True, False, {}, True),
    ("127.0.0.1", False, False, False, {"SPACE_ID": "me/ts2viz"}, True),
    ("0.0.0.0", False, False, True, {"SPACE_ID": "me/ts2viz"}, True),      # a Space is always public
])
def test_trust_level(host, share, pub, trusted, env, expected):
    public, reason = access.decide(host=host, share=share, public_flag=pub, trusted=trusted, env=env)
    assert public is expected and reason.startswith("public" if expected else "operator")


def test_public_and_trusted_contradict():
    with pytest.raises(InputError, match="contradict"):
        access.decide(host="127.0.0.1", public_flag=True, trusted=True, env={})


def test_operator_metric_list(tmp_path):
    f = tmp_path / "metrics.txt"
    f.write_text("# offered on the Space\nclipscore:openai/clip-vit-base-patch32\n\n"
                 "siglip:google/siglip-base-patch16-224  # fast\n")
    got = access.read_metric_list(["tifa:Salesforce/blip-vqa-base"], f,
                                  env={access.METRICS_ENV: "alignscore:kakaobrain/align-base, tifa:Salesforce/blip-vqa-base"})
    assert got == ("tifa:Salesforce/blip-vqa-base", "alignscore:kakaobrain/align-base",
                   "clipscore:openai/clip-vit-base-patch32", "siglip:google/siglip-base-patch16-224")
    with pytest.raises(InputError, match="unknown metric family"):
        access.read_metric_list(["nosuchfamily:x"], env={})
    with pytest.raises(InputError, match="cannot read the metric list"):
        access.read_metric_list([], tmp_path / "missing.txt", env={})


def test_check_offered_never_touches_the_file_system(monkeypatch):
    import builtins
    import os

    def no(*a, **k):
        raise AssertionError("the file system was consulted for a visitor's spec")

    offered = ["clipscore:openai/clip-vit-base-patch32"]
    monkeypatch.setattr(os, "stat", no)
    monkeypatch.setattr(os.path, "exists", no)
    monkeypatch.setattr(builtins, "open", no)
    assert check_offered(" clipscore:openai/clip-vit-base-patch32 ", offered) == offered[0]
    for spec, match in [("callable:os:system", "run code or read files"), ("csv:/etc/passwd", "run code or read files"),
                        ("CALLABLE:x.py:f", "run code or read files"), ("clipscore:/root", "not offered"),
                        ("clipscore:openai/clip-vit-base-patch32@main", "not offered"), ("", "not offered"),
                        (None, "not offered")]:
        with pytest.raises(InputError, match=match) as e:
            check_offered(spec, offered)
        assert "/root" not in str(e.value) and "passwd" not in str(e.value)
    with pytest.raises(InputError, match="offers no metrics"):
        check_offered("clipscore:x", [])


# -- public mode in the callbacks ----------------------------------------------------------------------

def test_public_callbacks_refuse_code_files_and_paths(folder, tmp_path, monkeypatch):
    marker = tmp_path / "marker.txt"
    mod = tmp_path / "evilmod.py"
    mod.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                   "def f(images, prompts):\n    return [0.0] * len(images)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    upload_root = tmp_path / "uploads"
    upload_root.mkdir()
    acc = access.public(["clipscore:/definitely/not/offered/by/visitor"], "test")
    import dataclasses

    acc = dataclasses.replace(acc, upload_root=str(upload_root))
    view = _app(folder, tmp_path, acc).view()
    for spec in ("callable:evilmod:f", f"callable:{mod}:f", f"csv:{folder / 'scores.csv'}", "clipscore:/root"):
        with pytest.raises(InputError):
            cb_live.live_score(view, spec, "seg", 0)
    assert not marker.exists()
    with pytest.raises(InputError, match="all SEGs at once is not available"):
        cb_live.live_score(view, "clipscore:visitor", "all", 0)     # the offered folder, by its display name
    # files must come from the upload folder; the answer does not depend on whether they exist
    msgs = set()
    for p in ("/etc/passwd", "/no/such/file.csv", str(folder / "scores.csv"), str(upload_root / ".." / "x.csv")):
        with pytest.raises(InputError) as e:
            cb_board.add_scores_file(view, p, "x.csv")
        msgs.add(str(e.value))
    assert msgs == {"upload the file through the page"}
    # an uploaded file that is not a valid scores file: the row, not its content
    bad = upload_root / "h" / "bad.csv"
    bad.parent.mkdir()
    bad.write_text("file_name,Mine\nimages/000-00.jpg,hunter2\n")
    with pytest.raises(InputError) as e:
        cb_board.add_scores_file(view, bad, "bad.csv")
    assert "row 2" in str(e.value) and "hunter2" not in str(e.value)
    # the visitor's file goes with the session
    view.workspace.close()
    assert not bad.exists()


# -- workspaces -----------------------------------------------------------------------------------------

def test_workspaces_are_private_and_expire(folder, tmp_path):
    app = _app(folder, tmp_path)
    now = [0.0]
    limits = access.Limits(max_uploads=2, max_upload_bytes=1 << 20, max_rows=1000, max_metrics=3, max_sessions=2,
                           idle_timeout_s=60, score_all_segs=False)
    store = Workspaces(app, limits, exports_root=tmp_path / "exports", clock=lambda: now[0])
    a, b = store.view("a", create=True), store.view("b", create=True)
    cb_board.add_scores_file(a, _csv(folder, tmp_path / "a.csv", {"OnlyA": 0.5}), "a.csv")
    assert "OnlyA" in a.metrics and "OnlyA" not in b.metrics
    assert "OnlyA" in set(cb_board.leaderboard(a, "paper")["metric"]) and "OnlyA" not in set(cb_board.leaderboard(b, "paper")["metric"])
    # meta-metrics of the shared tables are computed once and joined with the session's own
    assert a.mm("paper").metrics == ["GoodScore", "NoisyScore", "ErrCount", "OnlyA"]
    assert b.mm("paper") is app.mm("paper")
    # names are the session's own: b may use the same name
    cb_board.add_scores_file(b, _csv(folder, tmp_path / "b.csv", {"OnlyA": 0.1}), "b.csv")
    assert a.node_scores(0, "OnlyA")["0"][0] != b.node_scores(0, "OnlyA")["0"][0]
    with pytest.raises(InputError, match="already loaded"):
        cb_board.add_scores_file(a, _csv(folder, tmp_path / "c.csv", {"GoodScore": 0.1}), "c.csv")
    # caps: files and metrics
    with pytest.raises(InputError, match="at most 3 metrics"):
        cb_board.add_scores_file(a, _csv(folder, tmp_path / "d.csv", {"X1": 0.1, "X2": 0.2, "X3": 0.3}), "d.csv")
    cb_board.add_scores_file(a, _csv(folder, tmp_path / "e.csv", {"X1": 0.1}), "e.csv")
    with pytest.raises(InputError, match="at most 2 score files"):
        cb_board.add_scores_file(a, _csv(folder, tmp_path / "f.csv", {"X2": 0.1}), "f.csv")
    dl = Path(cb_board.leaderboard_csv(a, "paper"))
    assert dl.is_file() and "OnlyA" in dl.read_text()
    # a view of a session that holds nothing cannot be written to by mistake
    with pytest.raises(RuntimeError):
        store.view("nobody").add_table(app.scores(), kind="uploaded", name="x")
    # idle sessions go (and their downloads with them); busy ones stay
    now[0] = 50
    store.get("b", create=False)
    now[0] = 100
    store.sweep()
    assert "a" not in store and "b" in store and not dl.exists()
    # at most max_sessions: the least recently used goes first
    store.get("c", create=True)
    store.get("d", create=True)
    assert "b" not in store and "c" in store and "d" in store
    assert store.end("c") and "c" not in store and not store.end("c")


# -- memo and model cache ----------------------------------------------------------------------------------

def test_memo_is_bounded_and_builds_once():
    m = Memo(10_000, sizer=lambda v: 1_000)
    for k in range(50):
        m.get(k, lambda k=k: k)
    assert len(m) == 10 and m.bytes == 10_000
    assert m.get(49, lambda: "rebuilt") == 49 and m.get(0, lambda: "rebuilt") == "rebuilt"
    calls = []
    gate = threading.Event()

    def slow():
        calls.append(1)
        gate.wait(5)
        return "v"

    out = []
    threads = [threading.Thread(target=lambda: out.append(m.get("k", slow))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join()
    assert out == ["v"] * 8 and len(calls) == 1

    def boom():
        raise ValueError("x")

    with pytest.raises(ValueError):
        m.get("bad", boom)
    assert m.get("bad", lambda: "ok") == "ok"     # a failure is not kept


def test_model_cache_keeps_a_few(tmp_path, monkeypatch):
    monkeypatch.setattr(engine.models, "MODEL_CACHE_SIZE", 2)
    specs = []
    for k in range(3):
        p = tmp_path / f"s{k}.csv"
        p.write_text(f"file_name,M{k}\na.jpg,{k}\n")
        specs.append(f"csv:{p}")
    first = engine.get_metric(specs[0])
    assert engine.get_metric(specs[0]) is first
    engine.get_metric(specs[1])
    engine.get_metric(specs[2])
    keys = [k[0] for k in engine.cached_metrics()]
    assert specs[0] not in keys and keys[-2:] == specs[1:]
    assert engine.get_metric(specs[0]) is not first          # dropped, loaded again
    assert len(engine.cached_metrics()) == 2
    assert np.isclose(engine.get_metric(specs[2]).lookup("a.jpg"), 2.0)


def test_probes_of_absent_packages_answer_at_once(monkeypatch):
    """Gradio imports matplotlib, polars and bokeh on every event call; when they are not installed the
    app makes those imports fail at once, as they would after a search, and leaves installed ones alone."""
    import importlib.util
    import sys

    from ts2viz.ui import skip_probes_of_absent_packages

    absent = "ts2viz_no_such_package_xyz"
    monkeypatch.delitem(sys.modules, absent, raising=False)
    installed = "this"                                   # in the standard library, never imported by ts2viz
    assert installed not in sys.modules and importlib.util.find_spec(absent) is None
    marked = skip_probes_of_absent_packages([absent, installed])
    try:
        assert marked == [absent]
        assert importlib.util.find_spec(absent) is None
        with pytest.raises(ImportError):
            __import__(absent)
        assert installed not in sys.modules and importlib.util.find_spec(installed) is not None
        # the marks of the first call are kept; a second call marks nothing new
        assert skip_probes_of_absent_packages([absent]) == []
    finally:
        sys.modules.pop(absent, None)


def test_display_names_hide_folders_keep_hub_ids_and_are_unique(tmp_path):
    rel = tmp_path / "models" / "rel-clip"
    rel.mkdir(parents=True)
    offered = ["clipscore:/srv/models/my-clip", "clipscore:openai/clip-vit-base-patch32", "clipscore:/other/my-clip",
               "clipscore:my-clip", "tifa:/srv/vqa?questions=/srv/q/tifa.json&batch_size=4",
               "clipscore:openclip:ViT-B-32//srv/ckpt/ep5.pt", "clipscore:openclip:ViT-B-32/openai",
               "siglip:google/siglip-base-patch16-224@main", "gecko:/srv/pali?generator=https://api.example.com/v1",
               f"alignscore:{rel.relative_to(tmp_path)}"]
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)          # the relative folder exists from here, as it does for the operator's app
    try:
        names = access.display_names(offered)
        pub = access.public(offered)
        choices = pub.choices()         # computed once, where the app starts
    finally:
        os.chdir(cwd)
    assert names == {
        "clipscore:/srv/models/my-clip": "clipscore:my-clip (2)",        # the hub-style name came first
        "clipscore:openai/clip-vit-base-patch32": "clipscore:openai/clip-vit-base-patch32",
        "clipscore:/other/my-clip": "clipscore:my-clip (3)",
        "clipscore:my-clip": "clipscore:my-clip",
        "tifa:/srv/vqa?questions=/srv/q/tifa.json&batch_size=4": "tifa:vqa?questions=tifa.json&batch_size=4",
        "clipscore:openclip:ViT-B-32//srv/ckpt/ep5.pt": "clipscore:openclip:ViT-B-32/ep5.pt",
        "clipscore:openclip:ViT-B-32/openai": "clipscore:openclip:ViT-B-32/openai",
        "siglip:google/siglip-base-patch16-224@main": "siglip:google/siglip-base-patch16-224@main",
        "gecko:/srv/pali?generator=https://api.example.com/v1": "gecko:pali",   # an address is never shown to a visitor (issue 42)
        "alignscore:models/rel-clip": "alignscore:rel-clip"}
    assert choices == pub.choices() == [names[s] for s in offered]
    assert pub.metric_spec("clipscore:my-clip (3)") == "clipscore:/other/my-clip"
    with pytest.raises(InputError, match="not offered"):
        pub.metric_spec("clipscore:/srv/models/my-clip")   # the spec itself is not a visitor's choice
    # the operator's own tool: specs as typed, nothing renamed
    op = access.operator(offered)
    assert op.choices() == offered and op.display_name("clipscore:/srv/models/my-clip") == "clipscore:/srv/models/my-clip"
    assert op.metric_spec("clipscore:/srv/models/my-clip") == "clipscore:/srv/models/my-clip"
