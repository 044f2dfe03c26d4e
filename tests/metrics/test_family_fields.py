"""Every family's record says how it is written and what details its metrics return (issue 41).

``Family.display`` and ``Family.details`` are read through :func:`ts2viz.metrics.registry.display_name` and
:func:`ts2viz.metrics.registry.details_kind`; the question views (:mod:`ts2viz.qa.details`, the Questions
tab) branch on the details kind, never on a family's name.
"""
from __future__ import annotations

import pytest

from ts2viz.errors import InputError
from ts2viz.metrics import registry
from ts2viz.qa.details import ANSWER_KINDS, BOX_KINDS, DETAIL_KINDS, RATING_KINDS, SOFT_KINDS
from ts2viz.scores.bundled import PUBLISHED_COLUMN_FAMILIES, published_family

FAMILIES = registry.builtin_families()
#: the details kind each family's metrics return, as their modules' docstrings describe the shapes
#: (written here, not read from the records under test)
EXPECTED_DETAILS = {"tifa": "questions", "dsg": "dependent", "gecko": "coverage", "fineeval": "crops",
                    "viescore": "aspects", "llmscore": "ratings"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_has_a_display_name_and_a_known_details_kind(name):
    fam = FAMILIES[name]
    assert fam.display.strip() and fam.display == fam.display.strip(), f"{name}: no display name"
    assert registry.display_name(name) == fam.display == registry.display_name(name.upper())
    assert fam.details == "" or fam.details in DETAIL_KINDS, f"{name}: unknown details kind {fam.details!r}"
    assert registry.details_kind(name) == fam.details
    assert fam.details == EXPECTED_DETAILS.get(name, "")


def test_display_names_are_distinct():
    shown = [f.display.lower() for f in FAMILIES.values()]
    assert len(set(shown)) == len(shown)


def test_the_kinds_are_consistent():
    assert set(ANSWER_KINDS) | set(SOFT_KINDS) == set(DETAIL_KINDS) and not set(ANSWER_KINDS) & set(SOFT_KINDS)
    assert set(RATING_KINDS) <= set(SOFT_KINDS) and set(BOX_KINDS) <= set(SOFT_KINDS)
    used = {f.details for f in FAMILIES.values()} - {""}
    assert used == set(DETAIL_KINDS), f"details kinds no family returns: {set(DETAIL_KINDS) - used}"


def test_unknown_names():
    assert registry.details_kind("no-such-family") == "" and registry.details_kind(None) == ""
    with pytest.raises(InputError, match="unknown metric family 'no-such-family'"):
        registry.display_name("no-such-family")


def test_a_registered_family_carries_its_fields():
    registry.register("demo-q", "demo", lambda spec, device=None: None, details="questions", display="Demo Q")
    try:
        assert registry.details_kind("demo-q") == "questions" and registry.display_name("demo-q") == "Demo Q"
    finally:
        registry.unregister("demo-q")
    registry.register("demo-plain", "demo", lambda spec, device=None: None)
    try:
        assert registry.details_kind("demo-plain") == "" and registry.display_name("demo-plain") == "demo-plain"
    finally:
        registry.unregister("demo-plain")


def test_published_columns_name_registered_families():
    assert set(PUBLISHED_COLUMN_FAMILIES.values()) <= set(FAMILIES)
    assert published_family("TIFA-BLIP1") == "tifa" and published_family("DSG-LLaVA-1.5-alt") == "dsg"
    assert published_family("LLMScore-EC") == "llmscore" and published_family("CLIPScore") == "clipscore"
    assert published_family("dsg:Salesforce/blip-vqa-base") is None and published_family("Mine") is None
    # every published column's head is in the table (the release's file, read as text)
    from ts2viz.paths import bundled_data_dir

    head = (bundled_data_dir() / "ts2" / "published_scores.csv").read_text(encoding="utf-8").splitlines()
    columns = next(line for line in head if not line.startswith("#")).split(",")[1:]
    assert columns and all(published_family(c) is not None for c in columns), columns
