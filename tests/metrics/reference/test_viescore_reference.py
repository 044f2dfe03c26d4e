"""VIEScore against its own code (``tests/fixtures/reference/judges/viescore``).

The fixture was made by ``tools/reference/judges/viescore.py``: TIGER-AI-Lab/VIEScore's ``VIEScore`` class with
its GPT-4o backbone, run from a checkout in a side venv, its ``evaluate`` asking a local endpoint that replied
recorded texts (JSON with text around it, the delimiters, a bare list, a bare number, JSON that its
``fix_json`` repairs). ts2viz must send the same SC and PQ request bodies (prompt text, JPEG bytes, model,
``max_tokens``) with the same key, and give VIEScore's SC, PQ and O for every image.
"""
from __future__ import annotations

import pytest
from reference_compare import compare_viescore


@pytest.mark.parametrize("aspect", ["sc", "pq", "overall"])
def test_viescore_requests_and_scores_equal_viescores_own_code(aspect):
    m, received = compare_viescore(aspect)
    assert len(received) == 4 * (2 if aspect == "overall" else 1)
    assert m.unparsed == 0 and all(d["parsed"] for d in m.last_details)
