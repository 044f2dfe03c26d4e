"""Fixtures shared by several test modules, and the tests' own helpers on the import path.

The tests live in folders by area (``core``, ``statistics``, ``metrics``, ``ui``, ``browser``, ...); the
helpers they share (tiny models, test servers, generated data) live in ``tests/support/`` and are imported
by their module names (``from tiny_models import tiny``).
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
