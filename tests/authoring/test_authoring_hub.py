"""Pushing an authored dataset to a Hugging Face dataset repo (issue 23), through the real
``huggingface_hub`` client against tests/support/hub_server.py (which speaks the hub's upload protocol), and
loading it back with ``ts2viz.dataset.load_hf`` through the same server. Never the real hub.

The test environment sets ``HF_HUB_OFFLINE=1``: each test unsets it for the client it drives."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from hub_server import HubServer, point_client_at
from test_authoring import apple_draft

from ts2viz.authoring import dataset_files, export_dataset, push_to_hub
from ts2viz.dataset import fetch_image, load_folder, load_hf
from ts2viz.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_test_token_123"


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub that wants a token for writes; the client pointed at it, an empty hub cache."""
    with HubServer(token=TOKEN) as srv:
        point_client_at(srv, monkeypatch, tmp_path / "hub-cache")
        yield srv


@pytest.fixture
def exported(tmp_path):
    d, blobs = apple_draft(0)
    d2, blobs2 = apple_draft(4, prefix="v")
    out = export_dataset([d, d2.add_edge("0", "2")], tmp_path / "apples", {**blobs, **blobs2})
    (out / ".DS_Store").write_bytes(b"junk")            # not part of the dataset: never pushed
    (out / "notes.txt").write_text("mine")
    return out


def _post(url: str, payload: dict, token: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_server_speaks_the_upload_protocol(hub):
    """The server's upload routes, checked without the client: what the hub answers."""
    status, _ = _post(f"{hub.url}/api/repos/create", {"name": "x", "organization": "me", "type": "dataset"})
    assert status == 401                                   # no token
    status, body = _post(f"{hub.url}/api/repos/create", {"name": "x", "organization": "me", "type": "dataset"}, TOKEN)
    assert status == 200 and body["url"] == f"{hub.url}/datasets/me/x"
    assert _post(f"{hub.url}/api/repos/create", {"name": "x", "organization": "me", "type": "dataset"}, TOKEN)[0] == 409
    status, body = _post(f"{hub.url}/api/datasets/me/x/preupload/main",
                         {"files": [{"path": "a.txt", "sample": "", "size": 3}]}, TOKEN)
    assert status == 200 and body["files"] == [{"path": "a.txt", "uploadMode": "regular", "shouldIgnore": False,
                                                "oid": None}]
    lines = [{"key": "header", "value": {"summary": "add a", "description": ""}},
             {"key": "file", "value": {"path": "a.txt", "encoding": "base64", "content": base64.b64encode(b"abc").decode()}}]
    req = urllib.request.Request(f"{hub.url}/api/datasets/me/x/commit/main", method="POST",
                                 data=b"".join(json.dumps(x).encode() + b"\n" for x in lines),
                                 headers={"Content-Type": "application/x-ndjson", "Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req) as r:
        commit = json.loads(r.read())
    assert commit["commitOid"] == hub.repos[("dataset", "me/x")].commit
    with urllib.request.urlopen(f"{hub.url}/datasets/me/x/resolve/main/a.txt") as r:
        assert r.read() == b"abc"
    status, body = _post(f"{hub.url}/api/validate-yaml", {"content": "---\n: [\n---\n# x", "repoType": "dataset"})
    assert status == 400 and body["errors"]


def test_push_then_load_back(hub, exported, tmp_path):
    url = push_to_hub(exported, "me/apples", token=TOKEN, endpoint=hub.url, private=True,
                      commit_message="SEGs of apples")
    repo = hub.repos[("dataset", "me/apples")]
    assert url == f"{hub.url}/datasets/me/apples/commit/{repo.commit}"
    assert repo.private and repo.commits == ["SEGs of apples"]
    # exactly the dataset's files, byte for byte
    want = dataset_files(exported)
    assert sorted(repo.files) == sorted(want) and ".DS_Store" not in repo.files and "notes.txt" not in repo.files
    assert all(repo.content(p) == (exported / p).read_bytes() for p in want)
    assert len(want) == 4 + 12

    # loaded back through the same server with the loader a user runs
    ds = load_hf("me/apples", cache_dir=tmp_path / "hub-cache")
    local = load_folder(exported)
    assert ds.hf_id == "me/apples" and sorted(ds.segs) == [0, 4]
    for sid in ds.segs:
        assert ds[sid] == local[sid] and ds[sid].nodes == local[sid].nodes   # nodes incl. their errors
        assert ds[sid].edges == local[sid].edges
    assert ds[4].node("2").errors == ("no apple", "table not wooden") and ds[4].edges is not None
    img = fetch_image(ds, "images/4/apple-3.png")
    assert img is not None and img.read_bytes() == (exported / "images/4/apple-3.png").read_bytes()

    # and imported back for authoring straight from the hub (images fetched on demand)
    from ts2viz.authoring import image_locator, import_dataset

    drafts = import_dataset("me/apples")
    assert drafts == import_dataset(exported)
    assert image_locator(ds)(drafts[1].images[0]).read_bytes() == (exported / drafts[1].images[0].file_name).read_bytes()

    # a second push of the same folder sends nothing new (the hub already has every file)
    push_to_hub(exported, "me/apples", token=TOKEN, endpoint=hub.url)
    assert repo.commits == ["SEGs of apples"]


def test_push_refuses_bad_folders_and_reports_hub_errors(hub, exported, tmp_path):
    (exported / "images/0/apple-2.png").unlink()
    with pytest.raises(InputError, match=r"metadata.csv, row 4: image file 'images/0/apple-2.png' not found"):
        push_to_hub(exported, "me/apples", token=TOKEN, endpoint=hub.url)
    (exported / "edges.csv").write_text("id,parent,child\n4,2,0\n")
    with pytest.raises(InputError, match="edge 2->0 goes from error level 2 to level 0"):
        push_to_hub(exported, "me/apples", token=TOKEN, endpoint=hub.url)
    with pytest.raises(InputError, match="--repo: expected OWNER/NAME"):
        push_to_hub(exported, "apples", token=TOKEN, endpoint=hub.url)
    assert hub.repos == {} and not hub.requests("POST")           # nothing sent
    good = export_dataset(apple_draft(1)[0], tmp_path / "good", apple_draft(1)[1])
    with pytest.raises(InputError) as e:
        push_to_hub(good, "me/apples", token="wrong", endpoint=hub.url)
    assert "could not push to the Hugging Face dataset repo" in str(e.value) and "\n" not in str(e.value)
    assert str(e.value).startswith("me/apples: ") and "wrong" not in str(e.value)


def _env(hub: HubServer, tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN")}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub"),
               PYTHONPATH=str(ROOT), **extra)
    return env


def test_cli_push_and_leaderboard_from_the_hub(hub, exported, tmp_path):
    r = subprocess.run([sys.executable, "-m", "ts2viz", "push", str(exported), "--repo", "me/apples", "--private"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, env=_env(hub, tmp_path, HF_TOKEN=TOKEN))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""                                  # no warning, no progress noise
    repo = hub.repos[("dataset", "me/apples")]
    assert r.stdout.splitlines()[0] == f"pushed {exported} to dataset me/apples: {hub.url}/datasets/me/apples/commit/{repo.commit}"
    assert repo.private

    # the operator's next step: a leaderboard on the pushed dataset, by its hub id
    scores = tmp_path / "scores.csv"
    rows = load_folder(exported).rows
    scores.write_text("file_name,falls\n" + "".join(f"{r.file_name},{1 - r.level / 10}\n" for r in rows))
    board = tmp_path / "board.csv"
    r = subprocess.run([sys.executable, "-m", "ts2viz", "leaderboard", "--dataset", "me/apples", "--scores", str(scores),
                        "--mode", "spec", "--out", str(board)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, env=_env(hub, tmp_path))
    assert r.returncode == 0, r.stderr
    import pandas as pd

    assert pd.read_csv(board).set_index("metric").loc["falls", "ord_avg"] == pytest.approx(1.0)

    # a bad folder: exit 2, one line
    (exported / "nodes.csv").write_text("id,rank,errors\n9,1a,x\n")
    r = subprocess.run([sys.executable, "-m", "ts2viz", "push", str(exported), "--repo", "me/apples"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, env=_env(hub, tmp_path, HF_TOKEN=TOKEN))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [f"ts2viz: error: {exported / 'nodes.csv'}, row 2: errors of node 1a are "
                                             f"for SEG 9, which metadata.csv does not have"]


def test_push_to_a_hub_that_hangs_fails_fast(exported, hanging_hub, monkeypatch):
    import time

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    t0 = time.monotonic()
    with pytest.raises(InputError, match=r"cannot reach the Hugging Face hub \(http://127.0.0.1:\d+\) within 1 s"):
        push_to_hub(exported, "me/apples", token=TOKEN, endpoint=hanging_hub, probe_timeout=1)
    assert time.monotonic() - t0 < 10
