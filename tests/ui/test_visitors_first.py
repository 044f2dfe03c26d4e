"""Visitors first (issue 38): the background warm-up waits at its pause points while a visitor's call runs,
resumes when it ends, never waits more than its cap, lets on the computation a visitor waits for, and the
start-up warm-up computes the slices section's default heatmap.

A thread that waits is seen waiting through ``join(timeout)`` returning with the thread alive (a bounded
wait on a condition, not a sleep); each resumption is waited for on its event.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ts2viz import parallel
from ts2viz.ui.serving import priority

#: long enough that a thread free to run would have finished (each step is microseconds of work)
BLOCKED_S = 0.5
#: a resumed thread finishes within this (it waits on a condition notified at once)
RESUME_S = 10.0


@pytest.fixture(autouse=True)
def _clean():
    old_hook = parallel.set_pause_hook(None)
    old = priority.set_enabled(True)
    assert priority.active_visitors() == 0
    yield
    priority.set_enabled(old)
    parallel.set_pause_hook(old_hook)


def _warm_up(steps: int, done: threading.Event, progress: list, cap_s: float = priority.CAP_S, started=None):
    def run():
        with priority.background(cap_s) as waited:
            if started is not None:
                started.set()
            for _ in range(steps):
                priority.pause_point()
                progress.append(time.monotonic())
            progress.append(waited[0])
        done.set()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_warm_up_pauses_while_a_visitor_call_runs_and_resumes_after():
    done, progress = threading.Event(), []
    with priority.visitor_call():
        assert priority.active_visitors() == 1
        t = _warm_up(3, done, progress)
        t.join(BLOCKED_S)
        assert t.is_alive() and progress == []           # waiting at its first pause point
    assert done.wait(RESUME_S)                           # the visitor left: it ran on and finished
    assert len(progress) == 4 and BLOCKED_S * 0.9 <= progress[-1] < RESUME_S
    assert priority.active_visitors() == 0


def test_the_visitor_count_follows_nested_and_failing_calls():
    @priority.visitor
    def click(fail: bool):
        assert priority.active_visitors() >= 1
        if fail:
            raise ValueError("bad input")
        return priority.active_visitors()

    assert click.__wrapped__.__name__ == "click"
    with priority.visitor_call():
        assert click(False) == 2
    with pytest.raises(ValueError):
        click(True)
    assert priority.active_visitors() == 0


def test_pauses_are_capped_so_the_warm_up_finishes():
    done, progress = threading.Event(), []
    cap = 0.3
    with priority.visitor_call():                        # a visitor who never leaves
        t = _warm_up(5, done, progress, cap_s=cap)
        assert done.wait(RESUME_S)                       # finished while the visitor is still there
        t.join(RESUME_S)
    waited = progress[-1]
    assert cap * 0.9 <= waited < cap + 2.0               # its five pauses waited the cap once, in all


def test_only_background_work_waits_and_the_switch_turns_it_off():
    with priority.visitor_call():
        t0 = time.monotonic()
        for _ in range(100):
            priority.pause_point()                       # a visitor's own (or a test's) loop: no wait
        assert time.monotonic() - t0 < BLOCKED_S
        assert not priority.is_background()
        priority.set_enabled(False)                      # the baseline: the warm-up never yields
        done, progress = threading.Event(), []
        _warm_up(3, done, progress)
        assert done.wait(RESUME_S) and progress[-1] == 0.0


def test_statistics_loops_pause_through_the_parallel_hook():
    """``evaluate_slices_arrays`` reaches ``ts2viz.parallel.pause_point`` once per slice and resample chunk."""
    from ts2viz.metaeval.slices import evaluate_slices_arrays
    from ts2viz.statistics.bootstrap import BootstrapSettings

    rng = np.random.default_rng(0)
    y = rng.normal(size=40)
    prompts, models = np.repeat(np.arange(20), 2), np.tile([0, 1], 20)
    x = np.stack([y + rng.normal(size=40), rng.normal(size=40)])
    masks = np.stack([prompts < 20, prompts < 10, prompts >= 10])

    def evaluate():
        return evaluate_slices_arrays(x, y, prompts, models, ["a", "b"], masks, ["all", "lo", "hi"],
                                      bootstrap=BootstrapSettings(n_resamples=50))

    calls = []
    parallel.set_pause_hook(lambda: calls.append(threading.get_ident()))
    evaluate()
    assert len(calls) >= 3 + 1                           # each slice, then each chunk of resamples
    out, done = {}, threading.Event()

    def run():
        with priority.background():                      # installs priority's hook
            out["res"] = evaluate()
        done.set()

    with priority.visitor_call():
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(BLOCKED_S)
        assert t.is_alive() and "res" not in out         # held inside the statistics' loop
    assert done.wait(RESUME_S)
    np.testing.assert_array_equal(out["res"].point["spearman"], evaluate().point["spearman"])


def test_a_visitor_waiting_for_the_warm_ups_value_lets_it_run_on():
    from ts2viz.ui.callbacks.humaneval.sets import shared_once

    inside = threading.Event()

    @shared_once
    def view(key):
        inside.set()
        for _ in range(3):
            parallel.pause_point()                       # the warm-up's loop, with a visitor waiting
        return key * 2

    started = threading.Event()

    def warm():
        with priority.background():
            started.set()
            view(21)

    with priority.visitor_call():                        # the visitor's click arrives first
        t = threading.Thread(target=warm, daemon=True)
        t.start()
        assert inside.wait(RESUME_S)                     # the warm-up is computing the view
        t0 = time.monotonic()
        assert view(21) == 42                            # the click waits for that computation...
        assert time.monotonic() - t0 < priority.CAP_S / 3  # ...which did not pause for it until the cap
    t.join(RESUME_S)


def test_page_events_are_visitor_calls(monkeypatch):
    from ts2viz.ui import load_state
    from ts2viz.ui.glue.events import Page

    page = Page(load_state("ts2", fetch_images=False), mode=None, fmt=None)
    wired = {}

    def trigger(fn, inputs, outputs, **kw):
        wired["fn"] = fn

    page.on(trigger, lambda: priority.active_visitors(), None, None, queue=False)
    assert wired["fn"]() == 1 and priority.active_visitors() == 0


def test_start_up_warm_up_computes_the_default_slice_heatmap(monkeypatch):
    import ts2viz.metaeval.slices as ms
    from ts2viz.figures.style import plain_figures
    from ts2viz.ui.callbacks import humaneval_slices as hs
    from ts2viz.ui.callbacks.humaneval import sets as gc_sets, warmup

    calls = []
    monkeypatch.setattr(warmup, "board", lambda *a: calls.append(("board", a)))
    monkeypatch.setattr(warmup, "cross_long", lambda: calls.append(("cross", ())))
    monkeypatch.setattr(warmup, "default_slices", lambda name: calls.append(("slices", (name,))))
    warmup.warm(["tifa160"])
    assert calls[:3] == [("board", ("tifa160", "dsg", "point-wise")), ("cross", ()), ("slices", ("tifa160",))]
    monkeypatch.undo()
    warmup.default_slices("tifa160")

    def computed(*a, **k):
        raise AssertionError("the first draw computed the slices the warm-up should have")

    monkeypatch.setattr(ms, "evaluate_slices", computed)
    rs = gc_sets.rated("tifa160").default_rating_set
    with plain_figures():
        fig = hs.slice_figure("tifa160", rs, hs.families("tifa160")[0])
    assert fig.data[0]["type"] == "heatmap"
