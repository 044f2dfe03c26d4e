"""Gecko's reliable prompts, against a direct computation from the ratings, and Gecko2K's released flags."""
import numpy as np
import pandas as pd
import pytest

from ts2viz.errors import InputError
from ts2viz.gold import load_gold
from ts2viz.gold.tags import gecko2k_prompts
from ts2viz.metaeval.reliable import reliable_prompts


def _direct(rated, x, ddof=0, std=False):
    """For each model and rating set: prompts with disagreement < x * max; then the intersection."""
    r = rated.ratings.merge(rated.images[["image_id", "prompt_id", "t2i_model"]], on="image_id")
    keep = set(rated.images.prompt_id)
    for (rs, model), g in r.groupby(["rating_set", "t2i_model"]):
        per = g.groupby("prompt_id").rating.agg(lambda v: (v.std(ddof=ddof) if std else v.var(ddof=ddof))
                                                if len(v) >= 2 else np.nan).dropna()
        if per.max() > 0:
            keep -= set(per.index[~(per < x * per.max())])
    return keep


@pytest.mark.parametrize("name,x", [("tifa160", 0.5), ("tifa160", 0.3), ("genaibench", 0.5), ("imagenhub-t2i", 0.4)])
def test_reliable_equals_direct_computation(name, x):
    rated = load_gold(name, answers=False)
    if name == "imagenhub-t2i":                # pq (perceptual quality) is not a faithfulness rating set
        from dataclasses import replace

        rel = reliable_prompts(rated, x, source="computed")
        assert rel.rating_sets == ("sc",)
        direct = _direct(replace(rated, ratings=rated.ratings[rated.ratings.rating_set == "sc"]), x)
    else:
        rel = reliable_prompts(rated, x, source="computed")
        direct = _direct(rated, x)
    assert set(rel.prompt_ids) == direct
    assert 0 < len(direct) < rated.images.prompt_id.nunique()
    assert rel.image_mask.sum() == rated.images.prompt_id.isin(direct).sum()


def test_std_measure():
    rated = load_gold("tifa160", answers=False)
    assert set(reliable_prompts(rated, 0.5, measure="std", source="computed").prompt_ids) == _direct(rated, 0.5, std=True)


def test_gecko_released_flags_are_used(tmp_path):
    prompts, _, flags = gecko2k_prompts()
    pick = prompts.iloc[:12]
    rows, ratings = ["image_id,prompt_id,prompt,t2i_model"], ["image_id,rater,rating"]
    for i, t in enumerate(pick.prompt):
        rows.append(f'i{i},p{i},"{t}",m1')
        ratings += [f"i{i},r1,{i % 5 + 1}", f"i{i},r2,{(i * 2) % 5 + 1}"]
    (tmp_path / "images.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "ratings.csv").write_text("\n".join(ratings) + "\n")
    rated = load_gold(str(tmp_path), answers=False)
    rel = reliable_prompts(rated, 0.5)
    want = [f"p{i}" for i, ok in enumerate(flags["max_disagreement_less_0.5"].iloc[:12]) if ok]
    assert rel.source == "released" and list(rel.prompt_ids) == want and 0 < len(want) < 12
    assert reliable_prompts(rated, 0.45, measure="std").source == "released"
    assert reliable_prompts(rated, 0.5, source="computed").source == "computed"
    with pytest.raises(InputError, match="released reliability flags do not cover"):
        reliable_prompts(rated, 0.6, source="released")


@pytest.mark.parametrize("x", [0, 1, 1.5, "half"])
def test_bad_threshold(x):
    with pytest.raises(InputError, match="threshold"):
        reliable_prompts(load_gold("tifa160", answers=False), x)
