"""LLMScore's LLM steps against its own code (``tests/fixtures/reference/judges/llmscore``).

The fixture was made by ``tools/reference/judges/llmscore.py``: YujieLu10/LLMScore's ``VisualDescriptor`` and
``EvaluationInstructor`` (openai 0.28's ``ChatCompletion``) run from a checkout in a side venv against a local
endpoint that replied recorded texts. LLMScore's repository has no licence, so ts2viz words the two
instructions itself (a documented difference); what must equal the original is everything else: the request's
fields, its framing around the instruction (``Global Description:`` ... ``The image resolution is:WxH``,
``Text Prompt:`` ... ``Image Description:``), the visual description passed on (stripped, newlines to spaces),
and the ratings and rationales read from each reply (NaN where the original's unpacking fails).
"""
from __future__ import annotations

import pytest
from reference_compare import compare_llmscore


@pytest.mark.parametrize("score", ["overall", "error_counting"])
def test_llmscore_requests_and_readings_equal_llmscores_own_code(score):
    m, received = compare_llmscore(score)
    assert len(received) == 8 and m.unparsed == 1
