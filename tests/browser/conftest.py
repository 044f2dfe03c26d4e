"""The browser tests' guard: no Gradio toast and no red "Error" pill on an ordinary path (issue 40).

Every page of :func:`app_server.launch_chromium` reports its toasts and error pills
(:data:`app_server.ALARMS`); a test during which one appeared fails, unless it is marked
``@pytest.mark.toasts_expected(PATTERN, ...)`` (a path that makes an error on purpose) and every one
matches one of the regular expressions.
"""
from __future__ import annotations

import re

import pytest


@pytest.fixture(autouse=True)
def _no_toasts(request):
    import app_server

    start = len(app_server.ALARMS)
    yield
    seen = app_server.ALARMS[start:]
    marker = request.node.get_closest_marker("toasts_expected")
    allowed = [re.compile(p) for p in (marker.args if marker else ())]
    unexpected = [text for _, text in seen if not any(p.search(text) for p in allowed)]
    if unexpected:
        pytest.fail("the page showed a toast or an error pill on an ordinary path: " + " | ".join(unexpected),
                    pytrace=False)
