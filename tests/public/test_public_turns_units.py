"""Turns on the model (issue 42 item 7): the :class:`~ts2viz.ui.serving.turns.Turnstile` as plain threads.

Several jobs are admitted into the model lane; one holds the model, and a job that has held it for
``turn_s`` passes it at its next check-in when another waits, to the page served longest ago. Real
threads; where a test needs a time, a counter clock set by the test stands in for it, and every wait on
another thread is bounded. The raw-HTTP check on a running app is in tests/public/test_public_api.py.
(The whole module: about 8 s.)
"""
from __future__ import annotations

import re
import threading
import time

import pytest

from ts2viz.errors import InputError

WAIT_S = 10.0       # the most any test waits on another thread


def _until(cond, what: str) -> None:
    """Wait (bounded) until ``cond()`` holds."""
    end = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.005)


class Clock:
    """A clock the test moves (or one that ticks by one at every reading)."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick = 0.0, tick
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            self.now += self.tick
            return self.now


def _thread(fn, *args) -> threading.Thread:
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


# -- settings --------------------------------------------------------------------------------------------

def test_width_bounds_and_the_lanes_width():
    from ts2viz.ui.serving.access import OPERATOR_LIMITS, PUBLIC_LIMITS, public_limits
    from ts2viz.ui.serving.jobs import FILES, MODEL, Jobs
    from ts2viz.ui.serving.turns import Turnstile

    for bad in ({"width": 0}, {"turn_s": -1.0}, {"slice_size": 0}):
        with pytest.raises(ValueError):
            Turnstile(**bad)
    assert (PUBLIC_LIMITS.turn_jobs, PUBLIC_LIMITS.turn_s, PUBLIC_LIMITS.turn_slice) == (5, 3.0, 4)
    assert OPERATOR_LIMITS.turn_jobs == 1
    lim = public_limits({"TS2VIZ_TURN_JOBS": "2", "TS2VIZ_TURN_S": "1.5", "TS2VIZ_TURN_SLICE": "2"})
    assert (lim.turn_jobs, lim.turn_s, lim.turn_slice) == (2, 1.5, 2)
    for name, value in (("TS2VIZ_TURN_JOBS", "0"), ("TS2VIZ_TURN_JOBS", "many"), ("TS2VIZ_TURN_S", "-2"),
                        ("TS2VIZ_TURN_SLICE", "0")):
        with pytest.raises(InputError, match=name):
            public_limits({name: value})
    # the model lane's Gradio concurrency limit is the turnstile's width; the other heavy lanes run one job
    jobs = Jobs(turnstile=Turnstile(width=5))
    assert (jobs.width(MODEL), jobs.width(FILES)) == (5, 1)
    assert Jobs().width(MODEL) == 1


def test_an_api_metrics_batch_is_bounded_while_jobs_take_turns():
    from ts2viz.ui.serving.turns import Turnstile, slice_size

    class Api:
        workers, batch_size = 4, 16

    class Judged:
        batch_size = 8

        class judge:
            workers = 4

    class Local:
        batch_size = 32

    turns = Turnstile(width=5, slice_size=3)
    assert slice_size(Api(), turns) == 3 and slice_size(Judged(), turns) == 3
    assert slice_size(Local(), turns) is None                   # a local model keeps its own batch
    assert slice_size(Api(), Turnstile(width=1)) is None        # one job at a time: nothing to pass to
    assert slice_size(Api(), None) is None


# -- turns -----------------------------------------------------------------------------------------------

def test_the_turn_passes_only_after_turn_s_and_only_when_another_waits():
    from ts2viz.ui.serving.turns import Turnstile

    clock = Clock()
    ts = Turnstile(width=3, turn_s=3.0, clock=clock)
    a = ts.enter("a")                                 # this (main) thread holds the model from 0
    # past its turn but nobody waits: it keeps the model
    clock.now = 10.0
    assert ts.check_in(a) == 0.0 and ts.holder() is a
    ts.leave(a)
    a = ts.enter("a")                                 # a fresh turn, from 10
    got_b = threading.Event()

    def job_b():
        b = ts.enter("b")
        got_b.set()
        clock.now = 20.0                              # b holds the model until 20
        ts.leave(b)

    tb = _thread(job_b)
    _until(lambda: ts.waiting() == 1, "b waiting")
    clock.now = 12.9                                  # 2.9 s into a's turn: not over
    assert ts.check_in(a) == 0.0 and ts.holder() is a and not got_b.is_set()
    # 3.5 s in, but a check-in from another thread (an API request's worker) never passes the turn
    clock.now = 13.5
    other = []
    _thread(lambda: other.append(ts.check_in(a))).join(WAIT_S)
    assert other == [0.0] and ts.holder() is a and not got_b.is_set()
    # from a's own thread: the turn goes to b, and a waits until b is done
    waited = ts.check_in(a)
    tb.join(WAIT_S)
    assert got_b.is_set() and waited == pytest.approx(20.0 - 13.5)
    assert ts.holder() is a and ts.passes == 1
    ts.leave(a)
    assert ts.holder() is None


def test_turns_go_round_robin_to_the_page_served_longest_ago():
    from ts2viz.ui.serving.turns import Turnstile

    ts = Turnstile(width=4, turn_s=0.5, clock=Clock(tick=1.0))   # every reading one second later
    order: list[str] = []
    start = threading.Event()

    def job(name: str, turns: int, first: threading.Event | None = None):
        t = ts.enter(name)
        if first is not None:
            first.set()
            assert start.wait(WAIT_S)
        for k in range(turns):
            order.append(name)
            if k < turns - 1:
                ts.check_in(t)
        ts.leave(t)

    # page x was served before (a short job), then holds again
    job("x", 1)
    x_in = threading.Event()
    threads = [_thread(job, "a", 3, x_in)]
    assert x_in.wait(WAIT_S)
    # x arrives first with a second job, then y and z, never served: y and z go before x
    threads.append(_thread(job, "x", 2))
    _until(lambda: ts.waiting() == 1, "x waiting")
    threads.append(_thread(job, "y", 2))
    _until(lambda: ts.waiting() == 2, "y waiting")
    threads.append(_thread(job, "z", 2))
    _until(lambda: ts.waiting() == 3, "z waiting")
    start.set()
    for t in threads:
        t.join(WAIT_S)
    assert not any(t.is_alive() for t in threads)
    # a passes to y and z (never served), then x (served before a was), then a; then each next turn by
    # how long ago its page was served
    assert order == ["x", "a", "y", "z", "x", "a", "y", "z", "x", "a"], order


def test_the_estimate_comes_from_measured_turns_and_the_jobs_ahead():
    from ts2viz.ui.serving.jobs import MODEL, Jobs
    from ts2viz.ui.serving.turns import TURN_WEIGHT, Turnstile

    clock = Clock()
    ts = Turnstile(width=3, turn_s=2.0, clock=clock)
    # one measured turn of 6 s: the mean moves from 2 s (turn_s) by the weight
    t = ts.enter("m")
    clock.now = 6.0
    ts.leave(t)
    mean = 2.0 + TURN_WEIGHT * (6.0 - 2.0)
    assert ts.mean_turn_s == pytest.approx(mean)
    a = ts.enter("a")                     # holds from 6
    clock.now = 7.0
    reports_b, reports_c = [], []
    tb = _thread(lambda: ts.leave(ts.enter("b", report=lambda s, k: reports_b.append((s, k)))))
    _until(lambda: ts.waiting() == 1 and reports_b, "b's first estimate")
    tc = _thread(lambda: ts.leave(ts.enter("c", report=lambda s, k: reports_c.append((s, k)))))
    _until(lambda: ts.waiting() == 2 and reports_c, "c's first estimate")
    # b: the rest of a's mean turn; c: that plus one mean turn (b's), two jobs ahead
    assert reports_b[0] == (pytest.approx(mean - 1.0), 1)
    assert reports_c[0] == (pytest.approx(mean - 1.0 + mean), 2)
    ts.leave(a)
    tb.join(WAIT_S)
    tc.join(WAIT_S)
    # what the visitor reads: the job's gr.Progress gets the line while it waits
    jobs = Jobs(turnstile=Turnstile(width=2, turn_s=20.0))
    lines = []

    class Progress:
        def __call__(self, value, desc=None):
            lines.append(desc)

    hold, holding = threading.Event(), threading.Event()

    def first():
        with jobs.running("p1", "1.1.1.1", MODEL):
            holding.set()
            hold.wait(WAIT_S)

    def second():
        with jobs.running("p2", "2.2.2.2", MODEL, Progress()):
            pass

    t1 = _thread(first)
    assert holding.wait(WAIT_S)
    t2 = _thread(second)
    _until(lambda: lines, "the waiting line")
    hold.set()
    t1.join(WAIT_S)
    t2.join(WAIT_S)
    m = re.fullmatch(r"waiting for the model: ~(\d+) s, 1 job ahead", lines[0])
    assert m and 10 <= int(m.group(1)) <= 20, lines       # the rest of p1's 20 s turn


def test_time_waiting_for_a_turn_does_not_count_against_the_jobs_budget():
    from ts2viz.ui.serving.jobs import MODEL, Jobs, OverTime, checkpoint
    from ts2viz.ui.serving.turns import Turnstile

    jobs = Jobs(job_time_s=1.5, turnstile=Turnstile(width=2, turn_s=0.5))
    a_in, b_in = threading.Event(), threading.Event()
    result = {}

    def job_a():
        try:
            with jobs.running("a", "1.1.1.1", MODEL):
                a_in.set()
                _until(lambda: jobs.turnstile.waiting() == 1, "b waiting")
                threading.Event().wait(0.6)   # 0.6 s of its own work: its turn is over
                t0 = time.monotonic()
                checkpoint()                  # passes the turn to b, waits for it to come back
                result["waited"] = time.monotonic() - t0
                checkpoint()                  # 2.6 s since it started, 0.6 s of them its own: not over
                result["after wait"] = "ok"
                threading.Event().wait(1.2)   # its own work past the budget (1.8 s)
                checkpoint()
                result["end"] = "finished"
        except OverTime as e:
            result["end"] = str(e)

    def job_b():
        with jobs.running("b", "2.2.2.2", MODEL):
            b_in.set()
            threading.Event().wait(2.0)       # holds the model for 2 s

    ta = _thread(job_a)
    assert a_in.wait(WAIT_S)
    tb = _thread(job_b)
    ta.join(WAIT_S)
    tb.join(WAIT_S)
    assert b_in.is_set() and result["waited"] >= 2.0 > 1.5
    assert result["after wait"] == "ok"
    assert "time budget" in result["end"], result


def test_a_cancel_stops_a_job_waiting_for_its_turn():
    from ts2viz.ui.serving.jobs import MODEL, Cancelled, Jobs
    from ts2viz.ui.serving.turns import Turnstile

    jobs = Jobs(turnstile=Turnstile(width=2))
    holding, release = threading.Event(), threading.Event()
    ran, outcome = [], []

    def holder():
        with jobs.running("a", "1.1.1.1", MODEL):
            holding.set()
            release.wait(WAIT_S)

    def waiter():
        try:
            with jobs.running("b", "2.2.2.2", MODEL):
                ran.append("b")
        except Cancelled:
            outcome.append("cancelled")

    ta = _thread(holder)
    assert holding.wait(WAIT_S)
    jobs.joined("eb", "b", "2.2.2.2", MODEL)
    tb = _thread(waiter)
    _until(lambda: jobs.turnstile.waiting() == 1, "b waiting")
    t0 = time.monotonic()
    assert jobs.cancel("b", "eb")
    tb.join(WAIT_S)
    took = time.monotonic() - t0
    assert outcome == ["cancelled"] and ran == [] and took < 2.0
    assert jobs.turnstile.waiting() == 0 and jobs.stopped == 1
    release.set()
    ta.join(WAIT_S)
    assert jobs.turnstile.holder() is None

