"""The parts of issue 42's fixes one at a time, without an app: the API client's time bound, cancel and
masking against local listeners, the API budgets with a fake clock, the view lane's round-robin, IPv6
grouping, idle sessions yielding their slot, and the model lane's time budget."""
from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager

import pytest
from api_listener import CANARY, Listener

from ts2viz.errors import InputError
from ts2viz.metrics.backbones import openai_client as oc
from ts2viz.ui.serving.access import ApiBudget, Limits, public_limits
from ts2viz.ui.serving.api_budget import ApiMeter, BudgetSpent
from ts2viz.ui.serving.guard import client_group
from ts2viz.ui.serving.jobs import MODEL, Jobs, OverTime, checkpoint


@contextmanager
def listener(mode: str = "ok", **settings):
    """A local API (:class:`api_listener.Listener`) in ``mode``: its base URL and its request records."""
    api = Listener()
    api.mode = mode
    for k, v in settings.items():
        setattr(api, k, v)
    try:
        yield api.url, api.requests
    finally:
        api.close()


def test_an_error_body_reaches_the_operator_masked_and_the_visitor_not_at_all(caplog):
    with listener("refuse") as (url, bodies):
        with pytest.raises(oc.EndpointError) as e:
            oc.post_chat(url, {"model": "m", "messages": []}, api_key=CANARY, service="judge")
    assert bodies[0]["auth"] == f"Bearer {CANARY}"
    assert e.value.visitor == "the judge's service refused the request (HTTP 401)"
    assert CANARY not in str(e.value) and "Bearer ***" in str(e.value)
    assert f"{url}/chat/completions: HTTP 401" in str(e.value)          # the operator's line, with its "/"
    assert CANARY not in caplog.text and "10.9.8.7" in caplog.text


def test_credentials_in_the_url_become_the_key_and_are_never_shown():
    from ts2viz.metrics.backbones.judge import EndpointJudge
    from ts2viz.metrics.backbones.llm import OpenAIChat

    for client in (EndpointJudge(f"http://me:{CANARY}@127.0.0.1:9/v1", "m"),
                   OpenAIChat(f"http://me:{CANARY}@127.0.0.1:9/v1", "m")):
        assert client.api_key == CANARY and CANARY not in json.dumps(client.config)
    assert oc.mask(f"x http://me:{CANARY}@h/v1 Bearer {CANARY} y") == "x http://***@h/v1 Bearer *** y"


def test_the_total_time_of_a_call_is_bounded_even_when_the_reply_trickles():
    with listener("trickle", hang_s=20.0) as (url, _):
        t0 = time.monotonic()
        with pytest.raises(oc.EndpointError) as e:
            oc.post_chat(url, {"model": "m", "messages": []}, timeout=1.0, retries=3, retry_wait=0.1)
        took = time.monotonic() - t0
    assert took < 2.5, took          # a per-read timeout would let it go 20 s, every retry again
    assert "did not answer within 1 s" in e.value.visitor


def test_budgets_and_cancel_are_checked_before_each_request():
    with listener("ok") as (url, bodies):
        meter = ApiMeter(ApiBudget(visitor_requests_per_min=2))
        with oc.request_hooks(meter.hooks("1.2.3.4")):
            oc.post_chat(url, {"model": "m", "messages": []})
            oc.post_chat(url, {"model": "m", "messages": []})
            with pytest.raises(BudgetSpent, match="spent for this minute"):
                oc.post_chat(url, {"model": "m", "messages": []})
        assert len(bodies) == 2
        stop = threading.Event()

        def check():
            if stop.is_set():
                raise InputError("cancelled")

        with oc.request_hooks(oc.RequestHooks(check=check)):
            stop.set()
            with pytest.raises(InputError, match="cancelled"):
                oc.post_chat(url, {"model": "m", "messages": []})
        assert len(bodies) == 2


def test_a_cancel_stops_a_batch_without_waiting_for_the_requests_in_flight():
    stop = threading.Event()

    def check():
        if stop.is_set():
            raise InputError("cancelled")

    with listener("hang", hang_s=3.0) as (url, bodies):
        threading.Timer(0.5, stop.set).start()
        t0 = time.monotonic()
        with oc.request_hooks(oc.RequestHooks(check=check)):
            with pytest.raises(InputError, match="cancelled"):
                oc.send_all(lambda x: oc.post_chat(url, {"model": "m", "messages": []}, timeout=10), range(20), 4)
        took = time.monotonic() - t0
        time.sleep(0.5)
        assert len(bodies) == 4
    assert took < 1.5, took


def test_the_meter_counts_per_visitor_and_in_all_per_minute_and_per_day():
    t = [0.0]
    b = ApiBudget(visitor_requests_per_min=100, visitor_tokens_per_min=1_000, visitor_bytes_per_day=10_000,
                  all_requests_per_min=3)
    meter = ApiMeter(b, clock=lambda: t[0])
    meter.charge("a", 1, 600, 4_000)
    with pytest.raises(BudgetSpent, match=r"your API budget .* this minute \(1,000 tokens\)"):
        meter.charge("a", 1, 600, 4_000)           # refused: nothing counted
    meter.charge("b", 1, 600, 4_000)
    meter.charge("b", 1, 100, 100)
    with pytest.raises(BudgetSpent, match=r"this app's API budget is spent for this minute \(3 requests\)"):
        meter.charge("c", 1, 1, 1)
    t[0] = 61.0
    meter.charge("a", 1, 600, 4_000)
    with pytest.raises(BudgetSpent, match=r"today \(10,000 bytes\); try again tomorrow"):
        meter.charge("a", 1, 1, 4_000)
    t[0] = 61.0 + 86_401
    meter.charge("a", 1, 1, 4_000)
    meter.settle("a", -500)
    assert meter.used("a")["day"] == {"requests": 1, "tokens": 1 - 500, "bytes": 4_000}   # a day old: gone


def test_defaults_and_the_environment_set_the_budgets():
    lim = public_limits({})
    assert lim.api == ApiBudget() and lim.job_time_s == 40.0 and lim.ipv6_prefix == 64
    lim = public_limits({"TS2VIZ_API_ALL_TOKENS_PER_DAY": "7", "TS2VIZ_JOB_TIME_S": "12.5",
                         "TS2VIZ_VIEW_CALLS_PER_SESSION": "3"})
    assert lim.api.all_tokens_per_day == 7 and lim.job_time_s == 12.5 and lim.view_calls_per_session == 3
    with pytest.raises(InputError, match="TS2VIZ_API_VISITOR_BYTES_PER_MIN"):
        public_limits({"TS2VIZ_API_VISITOR_BYTES_PER_MIN": "lots"})


def test_images_go_at_the_apis_high_detail_size():
    from PIL import Image

    from ts2viz.metrics.backbones.judge import jpeg_data_url
    from ts2viz.metrics.families.vqascore.api import data_url

    assert oc.detail_size(6000, 4000) == (1152, 768) and oc.detail_size(300, 200) == (300, 200)
    big = Image.new("RGB", (6000, 4000), (200, 10, 10))
    assert len(data_url(big)) < 200_000
    small = Image.new("RGB", (30, 20))
    assert data_url(small) == data_url(small)
    assert oc.fit_detail(small) is small and jpeg_data_url(oc.fit_detail(big))


def test_the_view_lane_is_served_round_robin_by_page():
    from ts2viz.ui.page.queue_guard import fair_order

    flood = [("A", k) for k in range(500)]
    queue = fair_order(flood + [("B", 0)], key=lambda e: e[0])
    assert queue.index(("B", 0)) == 1
    assert fair_order([("A", 0), ("B", 0), ("A", 1)], key=lambda e: e[0]) == [("A", 0), ("B", 0), ("A", 1)]


def test_ipv6_addresses_are_grouped_by_their_network():
    assert client_group("2001:db8:1:2::1") == client_group("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert client_group("2001:db8:1:3::1") != client_group("2001:db8:1:2::1")
    assert client_group("2001:db8:1:2::1", 128) == "2001:db8:1:2::1"
    assert client_group("2001:db8:1:2::1", 48) == "2001:db8:1::/48"
    assert client_group("::ffff:203.0.113.9") == "203.0.113.9" and client_group("10.0.0.1") == "10.0.0.1"


def test_idle_sessions_yield_their_slot_to_a_new_visitor():
    from ts2viz.ui import load_state
    from ts2viz.ui.state.sessions import Workspaces

    lim = public_limits({})
    assert lim.keep_active_s <= 120
    t = [0.0]
    small = Limits(**{**lim.__dict__, "max_sessions": 3})
    spaces = Workspaces(load_state("ts2", fetch_images=False), small, clock=lambda: t[0])
    for k in range(3):
        spaces.get(f"s{k}", create=True, client=f"10.0.0.{k}")
    with pytest.raises(InputError, match="active sessions"):
        spaces.get("new", create=True, client="10.0.1.1")
    t[0] = lim.keep_active_s + 1
    spaces.get("s2", create=False)                    # one still calls
    assert spaces.get("new", create=True, client="10.0.1.1") is not None
    assert "s0" not in spaces and "s2" in spaces


def test_a_model_job_stops_at_its_time_budget():
    jobs = Jobs(job_time_s=0.3)
    t0 = time.monotonic()
    with pytest.raises(OverTime, match=r"time budget on this app \(0.3 s\)"):
        with jobs.running("p", "1.2.3.4", MODEL):
            while True:
                checkpoint()
                time.sleep(0.02)
    assert time.monotonic() - t0 < 1.0
    with jobs.running("p", "1.2.3.4", "files"):       # other lanes have no such budget
        time.sleep(0.35)
        checkpoint()


def test_a_job_nobody_listens_to_stops(monkeypatch):
    import ts2viz.ui.serving.jobs as jobs_mod
    from ts2viz.ui.serving.jobs import Cancelled

    monkeypatch.setattr(jobs_mod, "UNREAD_GRACE_S", 0.2)
    jobs = Jobs()
    jobs.listening = lambda session: session == "read"
    with jobs.running("read", None, MODEL):
        time.sleep(0.3)
        checkpoint()
    with pytest.raises(Cancelled, match="no page read"):
        with jobs.running("unread", None, MODEL):
            time.sleep(0.3)
            checkpoint()


def test_no_socket_is_left_half_open_by_a_refused_request():
    """A request refused by the budget opens no connection at all."""
    opened = []
    real = socket.create_connection

    def spy(*a, **k):
        opened.append(a)
        return real(*a, **k)

    meter = ApiMeter(ApiBudget(visitor_requests_per_min=0))
    socket.create_connection = spy
    try:
        with oc.request_hooks(meter.hooks("x")):
            with pytest.raises(BudgetSpent):
                oc.post_chat("http://127.0.0.1:9/v1", {"model": "m", "messages": []})
    finally:
        socket.create_connection = real
    assert not opened


def test_loading_a_model_is_not_counted_against_the_job():
    from ts2viz.ui.serving.jobs import off_the_clock

    jobs = Jobs(job_time_s=0.3)
    with jobs.running("p", None, MODEL):
        with off_the_clock():
            time.sleep(0.4)
        checkpoint()                                   # 0.4 s loading, then within the budget
        time.sleep(0.35)
        with pytest.raises(OverTime):
            checkpoint()
