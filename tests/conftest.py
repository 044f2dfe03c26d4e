"""Fixtures shared by several test modules, and the tests' own helpers on the import path.

The tests live in folders by area (``core``, ``statistics``, ``metrics``, ``ui``, ``browser``, ...); the
helpers they share (tiny models, test servers, generated data) live in ``tests/support/`` and are imported
by their module names (``from tiny_models import tiny``).

``--perturb=SPEC`` (or ``TS2VIZ_TEST_PERTURB``) runs the tests with their float computations perturbed on
purpose (thread counts, denormals, batch sizes, kernels: tests/support/perturb.py), applied at session
start here and in every subprocess; see docs/development/tests.md.
"""
from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

import pytest


def pytest_addoption(parser):
    parser.addoption("--perturb", default=None, metavar="SPEC",
                     help="perturb float computations on purpose, e.g. threads1,denormal,batch3,nomkldnn,"
                          "isa=avx2 (tests/support/perturb.py; also TS2VIZ_TEST_PERTURB)")


def pytest_configure(config):
    import os

    spec = config.getoption("--perturb") or os.environ.get("TS2VIZ_TEST_PERTURB", "")
    if spec:
        import perturb

        try:
            perturb.apply(spec)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None


def pytest_report_header(config):
    import perturb

    what = perturb.describe()
    return [f"perturbed: {what}"] if what else []


def pytest_sessionfinish(session, exitstatus):
    import sys

    if "perturb" in sys.modules and sys.modules["perturb"].describe():
        session.config.get_terminal_writer().line(f"perturbed: {sys.modules['perturb'].describe()}")


@pytest.fixture(autouse=True)
def _exact_batches(request, monkeypatch):
    """A test marked ``exact_batches`` is about how a run is cut into batches: the ``batchN`` perturbation
    is lifted while it runs, here and in the subprocesses it starts (tests/support/perturb.py)."""
    import os

    import perturb

    spec = os.environ.get(perturb.ENV, "")
    if spec and request.node.get_closest_marker(perturb.MARKER) and "batch" in perturb.parse(spec):
        monkeypatch.setenv(perturb.ENV, perturb.without_batch(spec))
    yield


@pytest.fixture(autouse=True)
def _fresh_hub_probes():
    """Each test starts with no remembered hub probe (:func:`ts2viz.hub.reachable`): its test hubs are its own."""
    if "ts2viz.hub" in sys.modules:
        sys.modules["ts2viz.hub"].forget_probes()
    yield


@pytest.fixture(scope="module")
def hanging_hub():
    """HF_ENDPOINT of a server that accepts connections and never answers (a network that hangs)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held = []

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)

    threading.Thread(target=loop, daemon=True).start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    srv.close()
