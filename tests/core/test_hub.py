"""ts2viz.hub: the hub-id check, offline mode as huggingface_hub reads it, the probe's rule and its cache,
and the callers that ask it (dataset images, the app's image fetcher). Never the real hub: a local server
answers with a status set per test."""
from __future__ import annotations

import http.server
import socket
import threading

import pytest

from ts2viz import hub


class _StatusServer:
    """A local HTTP server that answers every request with ``status`` and counts the requests."""

    def __init__(self):
        self.status = 200
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                outer.requests += 1
                self.send_response(outer.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_HEAD = do_GET = _answer

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def status_hub(monkeypatch, tmp_path):
    """The hub client pointed at a :class:`_StatusServer`, online, with an empty hub cache."""
    import huggingface_hub.constants as hc

    srv = _StatusServer()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "ENDPOINT", srv.url)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    hub.forget_probes()
    yield srv
    srv.close()


@pytest.mark.parametrize("text, two, one", [
    ("saxon/T2IScoreScore", True, True),
    ("bert-base-uncased", False, True),
    ("a/b/c", False, False),
    ("./a/b", False, False),
    ("/a/b", False, False),
    ("~/a", False, False),
    ("a/", False, False),
    ("/a", False, False),
    ("", False, False),
])
def test_hub_id_form(text, two, one):
    assert hub.is_hub_id(text) is two
    assert hub.is_hub_id(text, one_part=True) is one


@pytest.mark.parametrize("value, expected", [
    ("1", True), ("yes", True), ("YES", True), ("On", True), ("true", True), ("TRUE", True),
    ("0", False), ("no", False), ("off", False), ("false", False), ("", False), ("2", False), ("banana", False),
])
def test_offline_takes_the_hub_clients_true_values(monkeypatch, value, expected):
    """``HF_HUB_OFFLINE=no`` is online, ``yes`` offline: the values huggingface_hub's constants take as true."""
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert hub.offline() is expected


def test_offline_falls_back_to_transformers_offline_and_the_clients_import_time_value(monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert hub.offline() is True
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")          # set: TRANSFORMERS_OFFLINE is not looked at
    assert hub.offline() is False
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE")
    assert hub.offline() is False
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)    # the client was imported offline: it stays offline
    assert hub.offline() is True


@pytest.mark.parametrize("status, up", [(200, True), (302, True), (404, True), (401, True), (500, False),
                                        (503, False)])
def test_probe_counts_answers_below_500(status_hub, status, up):
    status_hub.status = status
    assert hub.probe(2.0) is up
    assert hub.probe(2.0, status_hub.url) is up


def test_probe_of_a_refused_port_or_a_bad_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}"
    assert hub.probe(1.0, refused) is False
    assert hub.probe(1.0, "not a url") is False


def test_reachable_remembers_its_answer_per_endpoint(status_hub):
    status_hub.status = 503
    assert hub.reachable() is False and status_hub.requests == 1
    status_hub.status = 200
    assert hub.reachable() is False and status_hub.requests == 1        # the remembered answer
    assert hub.reachable(max_age=0) is True and status_hub.requests == 2  # a fresh probe, remembered
    assert hub.reachable() is True and status_hub.requests == 2
    other = _StatusServer()
    try:
        other.status = 500
        assert hub.reachable(1.0, other.url) is False and other.requests == 1   # its own entry
        assert hub.reachable() is True and status_hub.requests == 2
    finally:
        other.close()
    hub.forget_probes()
    status_hub.status = 500
    assert hub.reachable() is False and status_hub.requests == 3


def test_dataset_images_follow_the_probe_rule(status_hub):
    """A hub answering 5xx cannot serve images: the dataset says none can be had (it used to count any
    answer as up); a 404 at the root is a hub that answers."""
    from ts2viz.dataset import images_available, load_bundled

    ds = load_bundled()
    names = [r.file_name for r in ds.rows[:3]]
    status_hub.status = 503
    assert images_available(ds, names) is False
    hub.forget_probes()
    status_hub.status = 404
    assert images_available(ds, names) is True


def test_image_fetcher_follows_the_probe_rule_and_offline_mode(status_hub, monkeypatch):
    from ts2viz.dataset import load_bundled
    from ts2viz.ui.images.image_fetch import ImageFetcher

    ds = load_bundled()
    status_hub.status = 503
    f = ImageFetcher(ds, workers=1, probe_timeout=1.0)
    assert f.reachable() is False and f.offline          # a failed probe starts the back-off
    g = ImageFetcher(ds, workers=1, probe_timeout=1.0)
    status_hub.status = 404
    assert g.reachable() is True and not g.offline        # a fresh probe, not the remembered 503
    monkeypatch.setenv("HF_HUB_OFFLINE", "no")
    assert not ImageFetcher(ds, workers=1).offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "yes")
    assert ImageFetcher(ds, workers=1).offline


def test_model_hub_id_is_case_insensitive_and_a_local_path_wins(tmp_path, monkeypatch):
    names = {"PickScore-v1": "yuvalkirstain/PickScore_v1"}
    assert hub.model_hub_id("pickscore-V1", names) == "yuvalkirstain/PickScore_v1"
    assert hub.model_hub_id("pickscore", names) is None
    assert hub.model_hub_id("pickscore-v1", None) is None
    (tmp_path / "PickScore-v1").mkdir()
    monkeypatch.chdir(tmp_path)
    assert hub.model_hub_id("PickScore-v1", names) is None
