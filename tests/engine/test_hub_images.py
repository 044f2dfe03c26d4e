"""Images, datasets and models from a hub that speaks the real file protocol (tests/support/hub_server.py),
through the real ``huggingface_hub`` client (issue 26).

In-process tests point the client's live settings at the test server (``huggingface_hub`` reads
``HF_ENDPOINT``, ``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` at import); the CLI and app tests set the
environment of a subprocess, as an operator would. The test environment sets ``HF_HUB_OFFLINE=1``:
each test that talks to the server unsets it.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hub_server import HubServer, generated_image, point_client_at, ts2_image_repo

ROOT = Path(__file__).resolve().parents[2]
TS2_META = ROOT / "data" / "ts2" / "metadata.csv"


def _wait(cond, timeout: float, step: float = 0.05):
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, "condition not met in time"
        time.sleep(step)
    return time.monotonic() - t0


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A hub with the TS2 image repo, the client pointed at it, an empty hub cache."""
    with HubServer() as srv:
        ts2_image_repo(srv, TS2_META)
        point_client_at(srv, monkeypatch, tmp_path / "hub-cache")
        yield srv


@pytest.fixture
def ts2_app(hub, tmp_path, monkeypatch):
    import ts2viz.ui.images.image_fetch as imf
    from ts2viz.ui import load_state

    monkeypatch.setattr(imf, "BACKOFF_S", 0.5)     # recovery within the test
    view = load_state("ts2", cache_root=tmp_path / "cache").view()
    yield view
    # no download outlives the test's settings (it would write into the user's own hub cache)
    assert view.thumbs.fetcher.close(wait=30)


def _graph_states(html: str) -> dict[str, int]:
    import re

    out = {"img": html.count("<img ")}
    for st in re.findall(r'class="ph" data-state="(\w+)"', html):
        out[st] = out.get(st, 0) + 1
    return out


def test_server_speaks_the_protocol(hub):
    """The test server answers as the hub does (headers, error codes): checked without the client."""
    import urllib.error
    import urllib.request

    repo = hub.repos[("dataset", "saxon/T2IScoreScore")]
    url = f"{hub.url}/datasets/saxon/T2IScoreScore/resolve/main/images/000-00.jpg"
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as r:
        assert r.headers["X-Repo-Commit"] == repo.commit
        assert r.headers["ETag"].strip('"') == repo.blob_id(generated_image("images/000-00.jpg"))
        assert int(r.headers["Content-Length"]) == len(generated_image("images/000-00.jpg"))
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{hub.url}/datasets/saxon/T2IScoreScore/resolve/main/images/nope.jpg")
    assert e.value.code == 404 and e.value.headers["X-Error-Code"] == "EntryNotFound"
    assert e.value.headers["X-Repo-Commit"] == repo.commit


def test_probe_honours_the_endpoints_scheme_and_port(ts2_app, hub):
    """The mirror listens on a high port over plain HTTP: the probe reaches it (before issue 26 it tried
    port 443 of the host and called every image offline for 5 minutes)."""
    f = ts2_app.thumbs.fetcher
    assert f.reachable()
    assert [e for e in hub.requests("HEAD") if e[2] == "/"], "the probe asked the mirror itself"


def test_view_images_arrive_and_the_tick_redraws_once(ts2_app, hub):
    from ts2viz.ui.callbacks.explorer import view as cb_explorer_view
    from ts2viz.ui.images import image_refresh as ir

    hub.delay = 0.3
    v = ts2_app
    v.mm("paper")                   # the meta-metrics first: the view below then takes milliseconds
    rec = ir.shown(v, 0)
    first = cb_explorer_view.seg_view(v, "paper", 0, "CLIPScore")
    assert _graph_states(first["graph"]) == {"img": 0, "loading": 11}   # SEG 0 shows 11 thumbnails
    assert ir.timer_on(rec)
    ticks, redraws, graph = 0, 0, first["graph"]
    t0 = time.monotonic()
    while rec is not None:
        time.sleep(ir.TICK_S)
        ticks += 1
        g, gal, rec = ir.tick(v, rec, 0, None)
        if g or gal:
            redraws += 1
            graph = cb_explorer_view.select_node(v, "paper", 0, "CLIPScore", None, "0")["graph"]
        assert time.monotonic() - t0 < 15
    assert _graph_states(graph) == {"img": 11}
    took = time.monotonic() - t0
    # one redraw when all have landed, plus at most one per PROGRESS_S while they arrive: not one per image
    assert 1 <= redraws <= 1 + int(took / ir.PROGRESS_S) and redraws < 11, (redraws, took)
    # each image: one HEAD and one GET through the real client
    heads = {e[2] for e in hub.requests("HEAD", "/resolve/")}
    assert sum("/images/000-" in p for p in heads) >= 11
    # the neighbours were not requested by this call (no event asked for them): the view's own images only
    assert ts2_app.thumbs.fetcher.downloads >= 11


def test_neighbours_are_warmed_behind_the_view_and_within_the_disk_budget(ts2_app, hub):
    from ts2viz.ui.images import image_refresh as ir
    from ts2viz.ui.images.thumbs import thumb_files

    v = ts2_app
    f = v.thumbs.fetcher
    assert ir.warm_neighbours(v, 1) == len(thumb_files(v.dataset[0])) + len(thumb_files(v.dataset[2]))
    _wait(lambda: f.pending() == 0, 30)
    assert all(v.thumbs.state(x) == "ready" for x in thumb_files(v.dataset[2]))
    # the budget for fetching ahead is spent: nothing more is queued ahead of a visitor, their own still is
    f.ahead_budget = f.bytes_fetched
    assert ir.warm_neighbours(v, 5) == 0
    assert v.thumbs.request(thumb_files(v.dataset[5])) > 0
    _wait(lambda: f.pending() == 0, 30)


def test_view_images_go_before_warming(ts2_app, hub):
    from ts2viz.ui.images import image_refresh as ir
    from ts2viz.ui.images.thumbs import thumb_files

    hub.delay = 0.2
    v = ts2_app
    f = v.thumbs.fetcher
    f.workers = 1
    ir.warm_segs(v, range(20, 40))              # a long warm-up queue
    time.sleep(0.3)
    ir.shown(v, 60)                             # then a visitor opens SEG 60
    _wait(lambda: all(v.thumbs.state(x) == "ready" for x in thumb_files(v.dataset[60])), 20)
    fetched = [e[2] for e in hub.requests("GET", "/resolve/")]
    seg60 = max(i for i, p in enumerate(fetched) if "/images/060-" in p)
    assert seg60 < 2 + len(thumb_files(v.dataset[60])), "the visitor's images jumped the warm-up queue"


def test_missing_file_is_missing_not_offline(ts2_app, hub):
    repo = hub.repos[("dataset", "saxon/T2IScoreScore")]
    gone = "images/000-00.jpg"
    del repo.files[gone]
    v = ts2_app
    v.thumbs.request([gone, "images/000-01.jpg"])
    _wait(lambda: v.thumbs.state(gone) == "missing" and v.thumbs.state("images/000-01.jpg") == "ready", 20)
    assert not v.thumbs.fetcher.offline


@pytest.mark.parametrize("mode", ["stall", "error"])
def test_stalled_or_failing_hub_leaves_the_app_responsive_then_recovers(ts2_app, hub, mode):
    from ts2viz.ui.callbacks.explorer import view as cb_explorer_view
    from ts2viz.ui.images import image_refresh as ir

    hub.mode = mode
    v = ts2_app
    v.mm("paper")                   # computed once per app, hub or no hub: not what is timed here
    t = time.monotonic()
    rec = ir.shown(v, 3)
    view = cb_explorer_view.seg_view(v, "paper", 3, "CLIPScore")
    assert time.monotonic() - t < 3.0, "a view never waits on the hub"
    states = _graph_states(view["graph"])
    assert states["img"] == 0 and set(states) - {"img"} <= {"loading", "offline"}
    # one short timeout (the probe's 2 s; a 500 is answered at once) and the tiles say offline
    _wait(lambda: v.thumbs.fetcher.offline, 6)
    if ir.timer_on(rec):
        g, gal, rec = ir.tick(v, {**rec, "drawn": 0}, 3, None)
        assert g and rec is None, "the view is redrawn once with its offline tiles, then the timer stops"
    else:
        assert mode == "error" and set(rec["graph"]) == {"offline"}, "a 500 at the probe: offline at once"
    graph = cb_explorer_view.select_node(v, "paper", 3, "CLIPScore", None, None)["graph"]
    assert _graph_states(graph).get("offline") == len(ir.view_files(v.dataset[3], None)[0])
    assert "image offline" in graph
    # the hub answers again: after the back-off the next view gets its images, without a restart
    hub.mode = "ok"
    _wait(lambda: not v.thumbs.fetcher.offline, 5)
    rec = ir.shown(v, 3)
    _wait(lambda: all(s == "ready" for s in ir.shown(v, 3)["graph"]), 20)


def test_hf_hub_offline_means_offline_tiles_and_no_requests(hub, tmp_path, monkeypatch):
    import huggingface_hub.constants as hc
    from ts2viz.ui.callbacks.explorer import view as cb_explorer_view
    from ts2viz.ui import load_state

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    v = load_state("ts2", cache_root=tmp_path / "c").view()
    graph = cb_explorer_view.seg_view(v, "paper", 0, "CLIPScore")["graph"]
    assert _graph_states(graph) == {"img": 0, "offline": 11}
    time.sleep(0.5)
    assert not hub.requests(contains="/resolve/")


def test_without_downloads_a_tile_found_offline_is_not_looked_for_at_every_view(tmp_path, monkeypatch):
    """A view's signature reads every tile of its SEG; without a fetcher, a tile found not ready is looked for
    on disk again only after ``ABSENT_RECHECK_S`` (each look is two file checks), and then it is."""
    import huggingface_hub.constants as hc
    import ts2viz.ui.images.thumbs as th
    from ts2viz.ui import load_state

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    v = load_state("ts2", cache_root=tmp_path / "c").view()
    thumbs = v.thumbs
    assert thumbs.fetcher is None
    files = [r.file_name for r in v.dataset.rows[:20]]
    looked = []
    real = type(v.dataset).image_path
    monkeypatch.setattr(type(v.dataset), "image_path", lambda ds, f: looked.append(f) or real(ds, f))
    clock = [1000.0]
    monkeypatch.setattr(th.time, "monotonic", lambda: clock[0])
    assert set(thumbs.states(files)) == {"offline"} and len(looked) == 20
    clock[0] += th.ABSENT_RECHECK_S / 2
    assert set(thumbs.states(files)) == {"offline"} and len(looked) == 20      # not looked for again
    clock[0] += th.ABSENT_RECHECK_S
    assert set(thumbs.states(files)) == {"offline"} and len(looked) == 40      # looked for again


# -- a dataset and a model by hub id, from the same server, in a subprocess as an operator runs them ----------

def _serve_folder_as_dataset(srv: HubServer, repo_id: str, folder: Path) -> None:
    srv.add_dataset(repo_id, {p.relative_to(folder).as_posix(): p.read_bytes()
                              for p in sorted(folder.rglob("*")) if p.is_file()})


def _env(srv: HubServer, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=srv.url, HF_HOME=str(tmp / "hf"), HF_HUB_CACHE=str(tmp / "hf" / "hub"),
               TS2VIZ_CACHE=str(tmp / "cache"), PYTHONPATH=str(ROOT), HF_HUB_DISABLE_TELEMETRY="1")
    return env


@pytest.mark.slow
def test_dataset_and_model_by_hub_id(tmp_path):
    """``ts2viz score --dataset owner/name --metric clipscore:owner/model``: the dataset's metadata and
    images and the model's files all come from the server through the real client, and the scores are
    the ones the same model gives from its local folder."""
    pytest.importorskip("torch")
    from tiny_models import tiny
    from ui_helpers import write_dataset

    ds = write_dataset(tmp_path / "ds", big_image=False)
    clip = tiny("clip")
    with HubServer(delay=0.05) as srv:
        _serve_folder_as_dataset(srv, "lab/tiny-segs", ds)
        srv.add_model("lab/tiny-clip", clip)
        env = _env(srv, tmp_path)
        out = tmp_path / "hub.csv"
        r = subprocess.run([sys.executable, "-m", "ts2viz", "score", "--dataset", "lab/tiny-segs", "--seg", "0",
                            "--metric", "clipscore:lab/tiny-clip", "--out", str(out), "--device", "cpu", "-q",
                            "--no-cache"], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        got = srv.requests()
    paths = [e[2] for e in got]
    assert any(p.startswith("/api/datasets/lab/tiny-segs/revision/") for p in paths)
    assert any("/datasets/lab/tiny-segs/resolve/" in p and p.endswith("/metadata.csv") for p in paths)
    assert any("/datasets/lab/tiny-segs/resolve/" in p and "/images/000-" in p for p in paths)
    assert any(p.startswith("/lab/tiny-clip/resolve/") and p.endswith("config.json") for p in paths)
    # the same metric from the model's local folder, on the local dataset: the same numbers
    local = tmp_path / "local.csv"
    r = subprocess.run([sys.executable, "-m", "ts2viz", "score", "--dataset", str(ds), "--seg", "0",
                        "--metric", f"clipscore:{clip}", "--out", str(local), "--device", "cpu", "-q", "--no-cache"],
                       env={**env, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]

    def scores(p):
        rows = [row for row in csv.reader(line for line in open(p) if not line.startswith("#"))]
        return {row[0]: [float(x) for x in row[1:]] for row in rows[1:]}

    a, b = scores(out), scores(local)
    assert a.keys() == b.keys() and len(a) == 13
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-5)


@pytest.mark.slow
def test_app_loads_a_hub_dataset(tmp_path):
    """``app.py --data owner/name`` starts from the server; its SEG graph then gets the repo's images."""
    from app_server import running_app
    from ui_helpers import write_dataset

    ds = write_dataset(tmp_path / "ds", big_image=False)
    with HubServer(delay=0.05) as srv:
        _serve_folder_as_dataset(srv, "lab/tiny-segs", ds)
        env = _env(srv, tmp_path)
        with running_app(["--data", "lab/tiny-segs"], tmp_path, env=env,
                         drop_env=("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")) as (url, log):
            import urllib.request

            cfg = urllib.request.urlopen(url + "/config", timeout=10).read().decode()
            assert "lab/tiny-segs" in cfg
        paths = [e[2] for e in srv.requests()]
    assert any(p.endswith("/metadata.csv") for p in paths)


def test_tick_leaves_a_view_in_transition_alone(ts2_app, hub):
    """A tick that reads a SEG or node other than the drawn one (the view event for it is still on its
    way) redraws nothing: the node may not even belong to the new SEG yet."""
    from ts2viz.ui.images import image_refresh as ir

    hub.mode = "stall"
    rec = ir.shown(ts2_app, 0)
    assert ir.tick(ts2_app, rec, 5, "1a") == (False, False, rec)
    assert ir.tick(ts2_app, {**rec, "t0": 0.0}, 5, "1a") == (False, False, None)   # given up


def test_probe_of_a_hanging_refusing_or_failing_endpoint(hanging_hub, hub, monkeypatch):
    """What a dead mirror costs: one short timeout (hanging), nothing (refused, 5xx)."""
    import socket

    import huggingface_hub.constants as hc
    from ts2viz.hub import probe

    with socket.socket() as s:      # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}"
    for endpoint, limit in ((hanging_hub, 2.0 + 1.5), (refused, 1.0)):
        monkeypatch.setattr(hc, "ENDPOINT", endpoint)
        t = time.monotonic()
        assert not probe(2.0)
        assert time.monotonic() - t < limit
    monkeypatch.setattr(hc, "ENDPOINT", hub.url)
    assert probe(2.0)
    hub.mode = "error"
    assert not probe(2.0)
