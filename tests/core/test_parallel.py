"""ts2viz.parallel: never more threads than CPUs (or than pieces of work), results in order, errors raised."""
import os
import threading

import pytest

from ts2viz.parallel import array_threads, thread_map, usable_cpus


def test_threads_never_outnumber_the_cpus_or_the_work(monkeypatch):
    monkeypatch.delenv("TS2VIZ_THREADS", raising=False)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert usable_cpus() == cpus
    assert array_threads() == cpus and array_threads(limit=1) == 1
    monkeypatch.setenv("TS2VIZ_THREADS", "3")
    assert array_threads() == 3 and array_threads(limit=2) == 2
    for bad in ("0", "-2", "many", ""):
        monkeypatch.setenv("TS2VIZ_THREADS", bad)
        assert array_threads() == cpus


def test_thread_map_keeps_the_order_and_uses_at_most_the_threads_asked(monkeypatch):
    seen = set()
    barrier = threading.Barrier(2, timeout=30)

    def work(x):
        seen.add(threading.get_ident())
        if x < 2:
            barrier.wait()              # the first two run at once: two threads, or this times out
        return x * 10

    assert thread_map(work, range(6), threads=2) == [0, 10, 20, 30, 40, 50]
    assert len(seen) == 2
    seen.clear()
    monkeypatch.setenv("TS2VIZ_THREADS", "1")
    assert thread_map(lambda x: seen.add(threading.get_ident()) or x, range(4)) == [0, 1, 2, 3]
    assert seen == {threading.get_ident()}


def test_thread_map_raises_the_error_of_a_call():
    def work(x):
        if x == 3:
            raise ValueError("row 3")
        return x

    with pytest.raises(ValueError, match="row 3"):
        thread_map(work, range(5), threads=2)
