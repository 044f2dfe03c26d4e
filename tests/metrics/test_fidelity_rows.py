"""The classic families' fidelity rows (ts2viz/metrics/families/fidelity.py) name real tests and options."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ts2viz import metrics
from ts2viz.metrics.families.fidelity import AS, FIDELITY, PRECISION
from ts2viz.metrics.family import FIDELITY_STATUSES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("family", sorted(FIDELITY))
def test_rows_name_existing_tests_and_accepted_options(family):
    factory = metrics.family(family).factory()
    for aspect, what, status, option, tests in FIDELITY[family]:
        assert status in FIDELITY_STATUSES and aspect and what
        if status == AS and aspect != "precision":
            assert tests, f"{family}: '{aspect}' is 'as the original' without a test"
        for ref in filter(None, (t.strip() for t in tests.split(","))):
            path, _, name = ref.partition("::")
            assert (ROOT / path).is_file(), ref
            if name:
                base = re.sub(r"\[.*\]$", "", name)
                assert re.search(rf"^def {re.escape(base)}\(", (ROOT / path).read_text(), re.M), ref
        accepted = metrics.registry.accepted_options(factory)
        for opt in filter(None, (o.strip() for o in option.split(","))):
            assert accepted is None or opt in accepted, (family, opt)
    assert PRECISION[family] in ("float32", "float16", "bfloat16")
