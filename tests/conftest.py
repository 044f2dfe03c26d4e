"""Fixtures shared by several test modules."""
from __future__ import annotations

import socket
import threading

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
