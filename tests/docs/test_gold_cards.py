"""The card of each bundled rated set (docs/gold/NAME.md) states what the bundled files hold."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ts2viz.gold import BUNDLED, load_gold
from ts2viz.gold.tags import gecko2k_prompts, rated_tags
from ts2viz.metaeval.reliable import reliable_prompts

ROOT = Path(__file__).resolve().parents[2]


def _rows(name: str) -> dict:
    text = (ROOT / "docs" / "gold" / f"{name}.md").read_text(encoding="utf-8")
    return {m.group(1).strip(): m.group(2).strip() for m in re.finditer(r"^\| ([^|]+) \| (.+) \|$", text, re.M)
            if m.group(1).strip() not in ("", "---")}


@pytest.mark.parametrize("name", list(BUNDLED))
def test_card_matches_the_bundle(name):
    rows = _rows(name)
    g = load_gold(name, answers=False)
    assert int(rows["images"]) == len(g) and int(rows["prompts"]) == g.images.prompt_id.nunique()
    assert rows["T2I models"] == ", ".join(g.t2i_models)
    for rs in g.rating_sets:
        assert rows[f"rating set `{rs}`"].startswith(f"{int((g.ratings.rating_set == rs).sum())} ratings")
    assert rows["default rating set (the gold)"] == f"`{g.default_rating_set}`"
    rel = reliable_prompts(g)
    assert rows["reliable prompts at 0.5"] == f"{len(rel.prompt_ids)} of {rel.n_prompts}"
    assert rows["tag families"] == ", ".join(f"`{f}`" for f in rated_tags(g).families)
    assert int(rows["released metric scores"]) == len(g.metrics)
    krippendorff = pytest.importorskip("krippendorff")
    for rs in g.rating_sets:
        m, _ = g.rater_matrix(rs)
        cell = rows[f"Krippendorff's alpha (interval), `{rs}`"]
        if (~np.isnan(m)).sum(1).max() < 2:
            assert cell.startswith("n/a")
        else:
            assert float(cell) == round(krippendorff.alpha(reliability_data=m.T, level_of_measurement="interval"), 3)


def test_gecko2k_card():
    rows = _rows("gecko2k")
    prompts, tags, rel = gecko2k_prompts()
    sets = tags[tags.family == "gecko-prompt-set"].tag.value_counts()
    assert int(rows["prompts"]) == len(prompts)
    assert int(rows["Gecko(S) prompts"]) == sets["Gecko(S)"] and int(rows["Gecko(R) prompts"]) == sets["Gecko(R)"]
    assert rows["`gecko-category` tags"] == ", ".join(sorted(tags[tags.family == "gecko-category"].tag.unique()))
    assert int(rows["`gecko-skill` tags"]) == tags[tags.family == "gecko-skill"].tag.nunique()
    assert int(rows["`gecko-subskill` tags"]) == tags[tags.family == "gecko-subskill"].tag.nunique()
    assert int(rows["reliable at 0.5 (released flag, variance)"]) == int(rel["max_disagreement_less_0.5"].sum())
