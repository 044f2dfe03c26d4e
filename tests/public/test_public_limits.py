"""The public app's limits as plain functions (issue 22): the scores reader's caps, the workspaces'
room rules, the upload folder's janitor and registry, escaping for Markdown and spreadsheets.
The raw-HTTP attacks on a running app are in tests/public/test_public_attacks.py."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from ts2viz.display import md_text, spreadsheet_safe, spreadsheet_safe_frame
from ts2viz.errors import InputError
from ts2viz.scores import ReadCaps, TooLarge, read_scores
from ts2viz.ui.serving import access
from ts2viz.ui import load_state
from ts2viz.ui.state.sessions import Workspaces
from ts2viz.ui.serving.uploads import UploadJanitor, UploadRegistry
from ui_helpers import write_dataset, write_scores

CAPS = ReadCaps(max_rows=1000, max_metrics=4, max_columns=20, max_decoded_bytes=1 << 20)


# -- the reader's caps ------------------------------------------------------------------------------------

def test_parquet_caps_are_checked_from_metadata(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 2_000_000
    t = pa.table({"file_name": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array(["a.jpg"])),
                  "M": pa.array(np.zeros(n))})
    pq.write_table(t, tmp_path / "rows.parquet", compression="zstd")
    t0 = time.perf_counter()
    with pytest.raises(TooLarge, match="2,000,000 rows; the limit is 1,000"):
        read_scores(tmp_path / "rows.parquet", caps=CAPS)
    assert time.perf_counter() - t0 < 1.0          # nothing was decoded
    pq.write_table(pa.table({"file_name": ["a.jpg"], **{f"m{i}": [0.0] for i in range(5)}}), tmp_path / "m.parquet")
    with pytest.raises(TooLarge, match="5 metric columns; a session may hold at most 4"):
        read_scores(tmp_path / "m.parquet", caps=CAPS)
    pq.write_table(pa.table({"file_name": ["a.jpg"], **{f"m{i}": [0.0] for i in range(5000)}}), tmp_path / "w.parquet")
    with pytest.raises(TooLarge, match="Parquet metadata"):
        read_scores(tmp_path / "w.parquet", caps=ReadCaps(max_rows=1000, max_footer_bytes=64 * 1024))
    t = pa.table({"file_name": pa.DictionaryArray.from_arrays(pa.array(np.zeros(1000, dtype=np.int32)),
                                                              pa.array(["x" * 100_000])), "M": np.zeros(1000)})
    pq.write_table(t, tmp_path / "long.parquet", compression="zstd")
    with pytest.raises(TooLarge, match="text of 100,000 characters"):
        read_scores(tmp_path / "long.parquet", caps=CAPS)
    # within the caps: read as before
    pq.write_table(pa.table({"file_name": ["a.jpg", "b.jpg"], "M": [0.5, 0.25]}), tmp_path / "ok.parquet")
    assert read_scores(tmp_path / "ok.parquet", caps=CAPS).metrics == ["M"]


def test_csv_caps_and_malformed_csv(tmp_path):
    (tmp_path / "rows.csv").write_text("file_name,M\n" + "".join(f"f{i},1\n" for i in range(5000)))
    with pytest.raises(TooLarge, match="more than 1,000 rows"):
        read_scores(tmp_path / "rows.csv", caps=CAPS)
    assert len(read_scores(tmp_path / "rows.csv").file_names) == 5000       # no caps: the operator's file
    (tmp_path / "line.csv").write_bytes(b"file_name,M\n" + b"a" * (3 << 20) + b",1\n")
    with pytest.raises(InputError, match="a row longer than 1 MB"):
        read_scores(tmp_path / "line.csv", caps=CAPS)
    (tmp_path / "head.csv").write_text("file_name," + ",".join(f"m{i}" for i in range(20_000)) + "\n")
    with pytest.raises(TooLarge, match="header line is longer"):
        read_scores(tmp_path / "head.csv", caps=CAPS)
    # CR-only line ends (old Excel): read
    (tmp_path / "cr.csv").write_bytes(b"file_name,M\ra.jpg,1\rb.jpg,2\r")
    sc = read_scores(tmp_path / "cr.csv", caps=CAPS)
    assert sc.file_names == ["a.jpg", "b.jpg"] and sc.values[:, 0].tolist() == [1.0, 2.0]
    # an unterminated quote, in the header or below it: a one-line InputError naming the row
    (tmp_path / "q1.csv").write_text('"file_name,M\na.jpg,1\n')
    (tmp_path / "q2.csv").write_text('file_name,M\n"a.jpg,1\nb.jpg,2\n')
    (tmp_path / "q3.csv").write_text('file_name,M\na.jpg,1\nb.jpg,"2\n' + "x" * 200_000 + "\n")
    for f in ("q1.csv", "q2.csv", "q3.csv"):
        with pytest.raises(InputError) as e:
            read_scores(tmp_path / f)
        assert "\n" not in str(e.value) and "row" in str(e.value), (f, str(e.value))


# -- workspaces: room is not free ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def app(tmp_path_factory):
    d = tmp_path_factory.mktemp("limits")
    write_dataset(d / "ds", big_image=False)
    return load_state(str(d / "ds"), [str(write_scores(d, d / "ds"))], cache_root=d / "cache", fetch_images=False,
                      access=access.public())


def test_workspaces_refuse_rather_than_push_out_active_sessions(app, tmp_path):
    now = [0.0]
    limits = access.Limits(max_uploads=2, max_upload_bytes=1 << 20, max_rows=1000, max_metrics=3, max_sessions=4,
                           idle_timeout_s=3600, score_all_segs=False, max_sessions_per_client=2, keep_active_s=600)
    store = Workspaces(app, limits, exports_root=tmp_path, clock=lambda: now[0])
    store.get("victim", create=True, client="1.1.1.1")
    # one client's third session pushes out that client's own oldest, never another's
    for k in range(3):
        now[0] += 1
        store.get(f"a{k}", create=True, client="2.2.2.2")
    assert "victim" in store and "a0" not in store and {"a1", "a2"} <= set(store._items)
    store.get("b0", create=True, client="3.3.3.3")
    with pytest.raises(InputError, match="try again"):           # full, every session active: refused
        store.get("c0", create=True, client="4.4.4.4")
    assert "victim" in store and "c0" not in store
    now[0] += 601                                                  # all idle past keep_active_s: LRU goes
    store.get("b0", create=False)
    store.get("c0", create=True, client="4.4.4.4")
    assert "victim" not in store and "c0" in store
    # a failed call's workspace holds nothing and is dropped; one with data stays
    assert store.discard_if_empty("c0") and "c0" not in store
    ws = store.get("e0", create=True, client="5.5.5.5")
    ws.new_download("x.csv")
    assert not store.discard_if_empty("e0") and "e0" in store


# -- the upload folder ----------------------------------------------------------------------------------

def test_janitor_and_registry(tmp_path):
    root = tmp_path / "uploads"
    old, new, keep = root / "aaa", root / "bbb", root / "ts2viz-keep"
    for d in (old, new, keep):
        d.mkdir(parents=True)
        (d / "f.csv").write_text("x")
    (root / "tmpleft").write_text("")
    past = time.time() - 1000
    for p in (old, old / "f.csv", keep, keep / "f.csv", root / "tmpleft"):
        os.utime(p, (past, past))
    j = UploadJanitor(root, ttl_s=100, keep=lambda: [keep])
    assert j.sweep() >= 1
    assert not old.exists() and not (root / "tmpleft").exists() and new.exists() and keep.exists()
    reg = UploadRegistry()
    p = str(new / "f.csv")
    reg.uploaded([p, p])           # the same bytes under the same name, by two visitors
    assert not reg.release(p)      # the first session to end leaves it for the other
    assert reg.release(p)          # the last one deletes it


# -- escaping -----------------------------------------------------------------------------------------------

def test_markdown_and_spreadsheet_escaping():
    import pandas as pd

    for raw in ("<img src=http://x/y.png>", "![a](http://x/y.png)", "<b>b</b>", "**x**", "[l](javascript:1)"):
        out = md_text(raw)
        assert "<" not in out and "](" not in out and "**" not in out and "![" not in out, out
    assert spreadsheet_safe("=1+2") == "'=1+2" and spreadsheet_safe("ok") == "ok" and spreadsheet_safe(-1.5) == -1.5
    df = pd.DataFrame({"metric": ["@SUM(1)", "-x", "fine"], "=col": [1.0, -2.0, 3.0]})
    safe = spreadsheet_safe_frame(df)
    assert list(safe.columns) == ["metric", "'=col"]
    assert safe["metric"].tolist() == ["'@SUM(1)", "'-x", "fine"] and safe["'=col"].tolist() == [1.0, -2.0, 3.0]
    assert df["metric"].tolist() == ["@SUM(1)", "-x", "fine"]      # the caller's table is unchanged


# -- images within the caps ---------------------------------------------------------------------------------

def test_large_uploaded_images_are_kept_small(tmp_path):
    """8 uploads of 49 megapixels each (under the 50 MP cap): each is decoded, reduced to at most
    2048 px a side and let go before the next, so the call's peak is about one full-size decode
    (not 8 x 147 MB) and, once the allocator's free pages are handed back, what stays is the reduced
    images; an animation gives its first frame."""
    import gc
    import threading

    import psutil
    from PIL import Image

    from ts2viz.ui.callbacks import live as cb_live
    from ts2viz.ui.state.sessions import release_memory

    big = tmp_path / "big.png"
    Image.new("RGB", (7000, 7000), (200, 30, 30)).save(big, compress_level=1)
    frames = [Image.new("RGB", (800, 600), (k, 255 - k, 0)) for k in range(0, 250, 5)]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:], duration=40)
    del frames
    gc.collect()
    release_memory(force=True)
    proc = psutil.Process()
    before = proc.memory_info().rss
    peak, stop = [before], threading.Event()

    def sample():
        while not stop.wait(0.02):
            peak[0] = max(peak[0], proc.memory_info().rss)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    kept = [cb_live.check_upload(big, max_pixels=50_000_000) for _ in range(8)]
    stop.set()
    t.join()
    release_memory(force=True)
    held = (proc.memory_info().rss - before) / 2**20
    peak_mb = (peak[0] - before) / 2**20
    assert all(max(im.size) == cb_live.UPLOAD_DECODE_SIDE and im.mode == "RGB" for im in kept)
    assert peak_mb < 450, f"peak {peak_mb:.0f} MB while reducing 8 images of 49 MP"
    assert held < 200, f"{held:.0f} MB held for 8 reduced images"
    gif = cb_live.check_upload(tmp_path / "anim.gif")
    assert gif.size == (800, 600) and gif.getpixel((0, 0)) == (0, 255, 0)      # the first frame
