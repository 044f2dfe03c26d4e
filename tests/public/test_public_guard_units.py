"""The public app's guards as plain functions (issue 32): client addresses from trusted proxies only, new
sessions per address, one heavy job per visitor and cancels, where an image ends and how many frames it
has, dataset CSV files read within caps, the disk ledger. The raw-HTTP attacks on a running app are in
tests/public/test_public_guard.py. (The whole module: about 5 s.)"""
from __future__ import annotations

import io
import ipaddress
import threading

import pytest

from ts2viz.errors import InputError


# -- client addresses ------------------------------------------------------------------------------------

def test_forwarded_addresses_are_read_from_the_right_as_far_as_trusted():
    from ts2viz.ui.serving.guard import ProxySettings

    # no proxy trusted: the connection's address, whatever the header says
    assert ProxySettings().client("127.0.0.9", ["1.2.3.4"]) == "127.0.0.9"
    # a Space: its proxy appends the address it saw; the client's own entries (left) are not believed
    space = ProxySettings(hops=1)
    assert space.client("10.0.0.2", ["6.6.6.6", "7.7.7.7", "203.0.113.5"]) == "203.0.113.5"
    assert space.client("10.0.0.2", ["203.0.113.5:4711"]) == "203.0.113.5"
    assert space.client("10.0.0.2", []) == "10.0.0.2"                   # a request that came around the proxy
    assert space.client("10.0.0.2", ["not-an-address"]) == "10.0.0.2"    # the walk stops at the hop that wrote it
    # the operator's proxies, by network: each skipped from the right, the first other address is the client
    own = ProxySettings(trusted=[ipaddress.ip_network("10.0.0.0/8")])
    assert own.client("10.0.0.7", ["6.6.6.6", "198.51.100.9", "10.0.0.5"]) == "198.51.100.9"
    assert own.client("198.51.100.1", ["6.6.6.6"]) == "198.51.100.1"     # not from a trusted proxy: header ignored
    assert own.client("10.0.0.7", ["[2001:db8::1]:443"]) == "2001:db8::1"


def test_proxy_settings_from_the_environment():
    from ts2viz.ui.serving.guard import ProxySettings

    assert ProxySettings.from_env({}).hops == 0
    assert ProxySettings.from_env({"SPACE_ID": "me/app"}).hops == 1
    s = ProxySettings.from_env({"TS2VIZ_PROXY_HOPS": "2", "TS2VIZ_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.1"})
    assert s.hops == 2 and len(s.trusted) == 2
    with pytest.raises(ValueError, match="TS2VIZ_TRUSTED_PROXIES"):
        ProxySettings.from_env({"TS2VIZ_TRUSTED_PROXIES": "proxy.example"})


def test_new_sessions_per_address_are_rate_limited():
    from ts2viz.ui.serving.guard import SessionRate

    now = [0.0]
    rate = SessionRate(burst=3, per_min=6, clock=lambda: now[0])
    assert [rate.allow(f"s{k}", "1.1.1.1") for k in range(5)] == [True, True, True, False, False]
    assert rate.allow("s0", "1.1.1.1")                   # a session seen before is not new
    assert rate.allow("t0", "2.2.2.2")                   # another address has its own
    now[0] += 10.0                                       # one more every 10 s
    assert rate.allow("s5", "1.1.1.1") and not rate.allow("s6", "1.1.1.1")


# -- heavy lanes ------------------------------------------------------------------------------------------

def test_one_job_per_visitor_and_a_cancel_stops_the_work():
    from ts2viz.ui.serving.jobs import FILES, GOLD, MODEL, Cancelled, Jobs, checkpoint

    jobs = Jobs(per_client=1)
    live = {"e1", "e2"}
    assert jobs.admit("s1", "1.1.1.1", MODEL, live) is None
    jobs.joined("e1", "s1", "1.1.1.1", MODEL)
    assert "this page" in jobs.admit("s1", "1.1.1.1", MODEL, live)          # the same page
    assert "your address" in jobs.admit("s2", "1.1.1.1", MODEL, live)       # another page, same address
    assert jobs.admit("s3", "3.3.3.3", MODEL, live) is None                 # another visitor
    assert jobs.admit("s1", "1.1.1.1", FILES, live) is None                 # another lane
    assert jobs.admit("s1", "1.1.1.1", GOLD, live) is None                  # a lane without the rule
    # a cancel reaches the thread that runs the job; the work stops at its next checkpoint
    started, stop = threading.Event(), threading.Event()
    seen = []

    def work():
        try:
            with jobs.running("s1", "1.1.1.1", MODEL):
                started.set()
                for _ in range(200):
                    checkpoint()
                    stop.wait(0.01)
                seen.append("finished")
        except Cancelled:
            seen.append("cancelled")

    t = threading.Thread(target=work)
    t.start()
    assert started.wait(10)
    # the queue let go of the event (Gradio frees a cancelled event's place at once): the thread still counts
    assert "this page" in jobs.admit("s1", "1.1.1.1", MODEL, set())
    assert jobs.cancel("s1", "e1") and not jobs.cancel("s9", "e1")         # only the page's own event
    t.join(10)
    assert seen == ["cancelled"] and jobs.stopped == 1
    assert jobs.admit("s1", "1.1.1.1", MODEL, set()) is None               # over: the visitor may start another
    # an event cancelled while it waits stops as soon as it starts
    jobs.joined("e2", "s2", "2.2.2.2", MODEL)
    jobs.cancel("s2", "e2")
    with pytest.raises(Cancelled), jobs.running("s2", "2.2.2.2", MODEL):
        checkpoint()
    checkpoint()                                                             # outside a job: nothing


def test_a_lane_runs_one_job_at_a_time_even_after_a_cancel():
    from ts2viz.ui.serving.jobs import MODEL, Cancelled, Jobs, checkpoint

    jobs = Jobs()
    inside, most = [0], [0]
    lock = threading.Lock()
    go = threading.Event()

    def work(session):
        try:
            with jobs.running(session, session, MODEL):
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                go.wait(0.3)
                with lock:
                    inside[0] -= 1
                checkpoint()
        except Cancelled:
            pass

    threads = [threading.Thread(target=work, args=(f"s{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert most[0] == 1


# -- images: where they end, their frames ------------------------------------------------------------------

def _image(fmt: str, frames: int = 1, **kw) -> bytes:
    from PIL import Image

    pics = [Image.new("RGB", (40, 30), (k * 7 % 256, 80, 160)) for k in range(frames)]
    buf = io.BytesIO()
    if frames > 1:
        pics[0].save(buf, fmt, save_all=True, append_images=pics[1:], **kw)
    else:
        pics[0].save(buf, fmt, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("fmt, kw", [("PNG", {}), ("JPEG", {}), ("JPEG", {"progressive": True}), ("GIF", {}),
                                     ("WEBP", {}), ("BMP", {}), ("TIFF", {}), ("TIFF", {"compression": "tiff_lzw"})])
def test_each_format_ends_where_its_structure_says(fmt, kw):
    from ts2viz.imagecheck import structure

    data = _image(fmt, **kw)
    end, frames = structure(data)
    assert (end, frames) == (len(data), 1)
    end2, _ = structure(data + bytes(1000))              # what follows is not the image
    assert end2 == len(data)


@pytest.mark.parametrize("fmt", ["PNG", "GIF", "WEBP", "TIFF"])
def test_animations_count_their_frames(fmt):
    from ts2viz.imagecheck import structure

    assert structure(_image(fmt, frames=12))[1] == 12


def test_open_checked_refuses_what_an_upload_may_not_be(tmp_path):
    from ts2viz.imagecheck import ImageCaps, open_checked

    caps = ImageCaps(max_bytes=1 << 20, max_pixels=10_000, max_frames=5, max_trailing_bytes=100)
    cases = {"tail.png": _image("PNG") + bytes(5000), "frames.gif": _image("GIF", frames=9),
             "big.png": _image("PNG"), "cut.jpg": _image("JPEG")[:300], "empty.png": b"",
             "text.png": b"not an image at all"}
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (200, 100)).save(buf, "PNG")
    cases["big.png"] = buf.getvalue()
    expect = {"tail.png": "5,000 bytes after the end", "frames.gif": "9 frames; the limit is 5",
              "big.png": "200x100 pixels", "cut.jpg": "not a readable image", "empty.png": "empty file",
              "text.png": "not a readable image"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError) as e:
            open_checked(tmp_path / name, caps)
        assert expect[name] in str(e.value) and "\n" not in str(e.value), (name, str(e.value))
    (tmp_path / "ok.gif").write_bytes(_image("GIF", frames=3))
    pic, info = open_checked(tmp_path / "ok.gif", caps)
    assert info.frames == 3 and pic.mode == "RGB" and pic.size == (40, 30)


# -- dataset files read within caps -------------------------------------------------------------------------

def test_dataset_csv_files_are_read_within_caps(tmp_path):
    from ts2viz.dataset import FolderCaps, load_folder

    caps = FolderCaps(max_bytes=20_000, max_images=10, max_edges=5, max_nodes=5, max_segs=2)
    head = "id,target_prompt,file_name,image_source,rank\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "metadata.csv").write_text(head + "".join(f"0,p,i{k}.png,SD,{k % 2}\n" for k in range(11)))
    with pytest.raises(InputError, match=r"row 12: more than 10 rows; the limit is 10"):
        load_folder(tmp_path / "a", caps=caps)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "metadata.csv").write_text(head + "".join(f"{k},p,i{k}.png,SD,0\n" for k in range(3)))
    with pytest.raises(InputError, match="more than 2 SEGs"):
        load_folder(tmp_path / "b", caps=caps)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "metadata.csv").write_text(head + "0,p," + "x" * 30_000 + ",SD,0\n")
    with pytest.raises(InputError, match="the file is 30,0[0-9][0-9] bytes; the limit is 20,000"):
        load_folder(tmp_path / "c", caps=caps)
    # a cell over the CSV reader's own field limit: one line naming the row, not csv.Error
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "metadata.csv").write_text(head + '0,p,"' + "x" * 140_000 + '",SD,0\n')
    with pytest.raises(InputError, match=r"row 2: the row cannot be read as CSV \(field larger than field limit"):
        load_folder(tmp_path / "d")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "metadata.csv").write_text(head + "0,p,a.png,SD,0\n0,p,b.png,SD,1\n")
    (tmp_path / "e" / "edges.csv").write_text("id,parent,child\n" + "0,0,1\n" * 6)
    with pytest.raises(InputError, match="edges.csv, row 7: more than 5 rows"):
        load_folder(tmp_path / "e", caps=caps)
    assert len(load_folder(tmp_path / "a").rows) == 11       # no caps: the operator's own folder


def test_gold_score_header_over_the_field_limit_is_one_line(tmp_path):
    from ts2viz.gold import read_score_table

    p = tmp_path / "s.csv"
    p.write_text("image_id," + "m" * 140_000 + "\na,1\n")
    with pytest.raises(InputError, match="the header cannot be read as CSV"):
        read_score_table(p, ["a"])
    p.write_text("image_id,m\n" + "a,1\n" * 3)
    with pytest.raises(InputError, match="more than 1 rows"):
        read_score_table(p, ["a"])
    with pytest.raises(InputError, match="the limit is 10"):
        read_score_table(p, ["a"], max_bytes=10)


# -- the disk ledger ------------------------------------------------------------------------------------------

def test_disk_ledger_budgets(tmp_path):
    from ts2viz.ui.state.disk import DiskLedger

    class Ws:
        def __init__(self, name, client):
            self.client, self._files = client, []
            self.folder = tmp_path / name
            self.folder.mkdir()

        def exports_path(self):
            return self.folder

    ledger = DiskLedger(per_session=1000, per_client=1500, total=2500)
    a, b, c = Ws("a", "1.1.1.1"), Ws("b", "1.1.1.1"), Ws("c", "2.2.2.2")
    (a.folder / "x").write_bytes(bytes(900))
    ledger.require(a, 100, "this")                    # 900 + 100: within the session's 1,000
    with pytest.raises(InputError, match="this session's files already take"):
        ledger.require(a, 101, "this")
    (b.folder / "y").write_bytes(bytes(500))
    with pytest.raises(InputError, match="your sessions' files"):
        ledger.require(b, 200, "this")                # the client's: 900 + 500 + 200 > 1,500
    (c.folder / "z").write_bytes(bytes(1000))
    ledger.refresh(c)
    with pytest.raises(InputError, match="the app's files"):
        ledger.require(c, 0, "this") or ledger.require(Ws("d", "3.3.3.3"), 200, "this")
    ledger.forget(a)
    assert ledger.used() == 1500
