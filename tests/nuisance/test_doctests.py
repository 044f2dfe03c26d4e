"""The examples in the nuisance modules' docstrings run and give what they say."""
from __future__ import annotations

import doctest

import pytest

from ts2viz import nuisance
from ts2viz.nuisance import run, summary, transforms


@pytest.mark.parametrize("module", [nuisance, transforms, run, summary])
def test_docstring_examples(module):
    res = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and (res.attempted > 0 or module is run)
