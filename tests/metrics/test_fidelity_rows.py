"""The classic families' fidelity rows (on each family's card, in its own module) name real tests and options."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ts2viz import metrics
from ts2viz.metrics.family import FIDELITY_STATUSES

ROOT = Path(__file__).resolve().parents[2]
#: the classic families, whose cards were checked against the originals' own code (issue 31)
CLASSIC = ("alignscore", "clipscore", "dsg", "fineeval", "siglip", "tifa")


@pytest.mark.parametrize("family", CLASSIC)
def test_rows_name_existing_tests_and_accepted_options(family):
    fam = metrics.family(family)
    factory = fam.factory()
    rows = fam.card.fidelity
    assert rows, f"{family}: no fidelity rows"
    for row in rows:
        assert row.status in FIDELITY_STATUSES and row.aspect and row.ts2viz
        if row.status == "as the original" and row.aspect != "precision":
            assert row.test, f"{family}: '{row.aspect}' is 'as the original' without a test"
        for ref in filter(None, (t.strip() for t in row.test.split(","))):
            path, _, name = ref.partition("::")
            assert (ROOT / path).is_file(), ref
            if name:
                base = re.sub(r"\[.*\]$", "", name)
                assert re.search(rf"^def {re.escape(base)}\(", (ROOT / path).read_text(), re.M), ref
        accepted = metrics.registry.accepted_options(factory)
        for opt in filter(None, (o.strip() for o in row.option.split(","))):
            assert accepted is None or opt in accepted, (family, opt)
    assert fam.card.precision in ("float32", "float16", "bfloat16")


@pytest.mark.parametrize("family", sorted(metrics.registry.builtin_families()))
def test_every_family_says_which_code_made_its_fixture(family):
    """Every card's ``fixture`` names the code its reference fixture came from and the folder, or says "not
    compared" (issue 39); every folder it names exists, and a family with the ``image_mode`` option has its
    per-mode fixture there."""
    card = metrics.family(family).card
    text = card.fixture.strip()
    assert text, f"{family}: the card does not say which code made its fixture"
    dirs = re.findall(r"`(tests/fixtures/reference/[^`]+)`", text)
    assert dirs or text.startswith("not compared"), f"{family}: neither a fixture folder nor 'not compared': {text}"
    for d in dirs:
        assert (ROOT / d).is_dir() and any((ROOT / d).rglob("*")), f"{family}: {d} does not exist or is empty"
    if dirs:  # which code: a repository at a commit, or a package with its version
        assert re.search(r"\b[0-9a-f]{7}\b|\b\d+\.\d+(\.\d+)?\b", text), f"{family}: no version or commit: {text}"
    if "image_mode" in card.option_names:
        assert "Image modes" in text and "compared, `modes/`" in text, family
        assert (ROOT / dirs[0] / "modes" / "expected.json").is_file(), family
    elif dirs:
        assert "Image modes: not compared" in text, family
