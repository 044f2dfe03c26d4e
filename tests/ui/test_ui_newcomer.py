"""Issue 14 without a browser: live scoring fails fast and says what to do; bad input is no fault in the log.

- images are checked before a model is loaded (``ts2viz.dataset.images_available``), in well under a second;
- a hub model on a network where the hub does not answer fails in seconds with advice, probing once;
- the UI glue: an InputError becomes a message without a traceback (an unexpected error keeps its
  traceback in the log), the message can be kept for the session's panel, and is shown as plain text.
"""
from __future__ import annotations

import logging
import shutil
import time

import pytest
from tiny_models import tiny

from ts2viz.errors import InputError


@pytest.fixture
def offline(monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)   # read at import time; patch the live value too


def test_images_available(tmp_path, offline):
    from ui_helpers import write_dataset

    from ts2viz.dataset import images_available, load_dataset

    ds = load_dataset(write_dataset(tmp_path / "ds", big_image=False))
    names = [r.file_name for r in ds.rows if r.seg_id == 1]
    assert images_available(ds, names)
    for n in names[1:]:
        (tmp_path / "ds" / n).unlink()
    assert images_available(ds, names)                      # one is enough to score something
    (tmp_path / "ds" / names[0]).unlink()
    assert not images_available(ds, names)
    assert not images_available(ds, ["images/not-in-the-dataset.jpg"])
    ts2 = load_dataset("ts2")                                # metadata only; offline, nothing cached
    t = time.perf_counter()
    assert not images_available(ts2, ts2.file_names)
    assert time.perf_counter() - t < 1.0


def test_live_score_without_images_says_so_before_loading_the_model(tmp_path, offline, monkeypatch):
    import ts2viz.metrics
    from ts2viz.engine import cached_metrics
    from ts2viz.ui.callbacks import live as cb_live
    from ts2viz.ui import load_state

    # the process keeps loaded models (another test may have loaded this one): count the loads instead
    real_load, loads = ts2viz.metrics.load, []
    monkeypatch.setattr(ts2viz.metrics, "load", lambda *a, **k: loads.append(a) or real_load(*a, **k))
    spec = f"clipscore:{tiny('clip')}"
    before = cached_metrics()
    app = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    for scope, where in (("seg", "SEG 0"), ("all", "all SEGs")):
        t = time.perf_counter()
        with pytest.raises(InputError, match=rf"the images of {where} are not available: .* offline mode .*"
                                             r"Nothing was scored"):
            cb_live.live_score(app, spec, scope, 0)
        assert time.perf_counter() - t < 1.0
    assert not loads and cached_metrics() == before, "the model was loaded or asked for"
    assert spec not in app.metrics

    # a dataset folder without its image files: said the same way
    from ui_helpers import write_dataset

    folder = write_dataset(tmp_path / "ds", big_image=False)
    shutil.rmtree(folder / "images")
    app = load_state(str(folder), cache_root=tmp_path / "c2", fetch_images=False).view()
    with pytest.raises(InputError, match="the dataset's folder does not hold its image files"):
        cb_live.live_score(app, spec, "seg", 1)


def test_hub_model_on_a_hanging_network_fails_fast_with_advice(monkeypatch, hanging_hub):
    from hub_server import go_online
    from ts2viz import metrics

    go_online(monkeypatch, hanging_hub)
    metrics.load(f"clipscore:{tiny('clip')}", device="cpu")          # torch and transformers imported: not timed
    t = time.perf_counter()
    with pytest.raises(InputError) as e:
        metrics.load("clipscore:nobody/not-cached-ts2viz", device="cpu")
    first = time.perf_counter() - t
    msg = str(e.value)
    assert "the Hugging Face hub does not answer" in msg and "not in the local hub cache" in msg, msg
    assert "local model folder" in msg and "FAMILY:/path/to/folder" in msg, msg
    assert "\n" not in msg
    # one probe (3 s at most), not the hub client's retries (half a minute and more)
    assert first < 8, f"{first:.1f} s"
    t = time.perf_counter()
    with pytest.raises(InputError, match="does not answer"):
        metrics.load("clipscore:nobody/another-ts2viz", device="cpu")
    assert time.perf_counter() - t < 2, "the hub was probed again"    # the probe's answer is remembered


def test_hub_model_offline_mode_gives_the_same_advice(offline):
    from ts2viz import metrics

    t = time.perf_counter()
    with pytest.raises(InputError, match=r"offline mode \(HF_HUB_OFFLINE is set\).*local model folder"):
        metrics.load("clipscore:nobody/not-cached-ts2viz", device="cpu")
    assert time.perf_counter() - t < 30        # the first import of torch and transformers included


# -- the UI glue ---------------------------------------------------------------------------------------------

class Req:
    """Stands for the gr.Request Gradio passes to a callback (only its session id is read)."""

    def __init__(self, sid):
        self.session_hash = sid


def test_bad_input_is_a_message_without_a_traceback(caplog):
    import gradio as gr

    from ts2viz.ui.glue.errors import safe

    seen = []

    def bad(x, request: gr.Request):
        raise InputError("no SEG with id 999", file="data.csv")

    req = gr.Request(username=None, session_hash="s1")
    with caplog.at_level(logging.DEBUG, logger="ts2viz.ui"):
        with pytest.raises(gr.Error) as e:
            safe(bad, on_error=lambda text, r: seen.append((text, r.session_hash)))(1, req)
    assert e.value.message == "data.csv: no SEG with id 999"
    assert e.value.print_exception is False                 # Gradio prints no traceback for it
    assert "Traceback" not in caplog.text
    assert seen == [("data.csv: no SEG with id 999", "s1")]


def test_unexpected_error_keeps_its_traceback_once(caplog):
    import gradio as gr

    from ts2viz.ui.glue.errors import safe

    def broken(x):
        return {}["missing"]

    with caplog.at_level(logging.ERROR, logger="ts2viz.ui"):
        with pytest.raises(gr.Error) as e:
            safe(broken)(1)
    assert "KeyError" in e.value.message
    assert caplog.text.count("Traceback") == 1 and "broken" in caplog.text
    assert e.value.print_exception is False                 # logged above, not printed a second time


def test_last_errors_are_per_session_and_bounded():
    from ts2viz.ui.glue.errors import LastErrors

    errs = LastErrors(size=2)
    errs.put("a failed", Req("s1"))
    errs.put("b failed", Req("s2"))
    assert errs.pop(Req("s2")) == "b failed"
    assert errs.pop(Req("s2")) is None                      # shown once
    errs.put("c failed", Req("s3"))
    errs.put("d failed", Req("s4"))                         # s1's, never collected, is dropped
    assert errs.pop(Req("s1")) is None
    assert errs.pop(Req("s4")) == "d failed"
    errs.put("no session", Req(None))
    assert errs.pop(Req(None)) is None


def test_messages_show_as_plain_text_in_markdown():
    import markdown_it

    from ts2viz.display import md_text

    text = "metric 'clip_vit_b*': see [docs](http://x) <b>bold</b> # not a heading `code`"
    html = markdown_it.MarkdownIt().render(md_text(text))
    assert "<em>" not in html and "<a " not in html and "<b>" not in html and "<code>" not in html, html
    assert "clip_vit_b*" in html and "[docs](http://x)" in html
