"""Tags and slices: the bundled DSG-1K categories of TIFA160, Gecko2K's prompts, a user's tag CSV."""
import numpy as np
import pandas as pd
import pytest

from ts2viz.errors import InputError
from ts2viz.gold import load_gold
from ts2viz.gold.tags import gecko2k_prompts, rated_tags, read_tags, slices


@pytest.fixture(scope="module")
def tifa():
    return load_gold("tifa160", answers=False)


def test_dsg_categories_of_two_prompts(tifa):
    # read by hand from DSG's dsg-1k-anns.csv: tifa160_0 (coco_669925) has questions entity/whole x3 and
    # relation/spatial x2; tifa160_143 (partiprompt_366) entity/whole x2, relation/action, relation/spatial
    fr = rated_tags(tifa).frame
    got = lambda pid: set(fr[(fr.family == "dsg-category") & (fr.id == pid)].tag)    # noqa: E731
    assert got("coco_669925") == {"entity", "entity/whole", "relation", "relation/spatial"}
    assert got("partiprompt_366") == {"entity", "entity/whole", "relation", "relation/action", "relation/spatial"}


def test_slices_are_images_of_tagged_prompts(tifa):
    tags = rated_tags(tifa)
    sl = slices(tifa, tags, "dsg-category")
    assert sl.names[0] == "all" and sl.masks[0].all()
    fr = tags.frame[tags.frame.family == "dsg-category"]
    for name, mask in zip(sl.names[1:], sl.masks[1:]):
        pids = set(fr[fr.tag == name].id)
        assert set(tifa.images.prompt_id[mask]) == pids
        assert mask.sum() == tifa.images.prompt_id.isin(pids).sum()
    # a prompt is in several slices: more memberships than images
    assert sl.masks[1:].sum() > len(tifa)
    # per image: the T2I model family
    ms = slices(tifa, tags, "t2i-model", include_all=False)
    assert ms.masks.sum(0).tolist() == [1] * len(tifa) and len(ms) == 5


def test_unknown_family_is_one_line(tifa):
    with pytest.raises(InputError, match="no tag family 'skill'.*dsg-category"):
        slices(tifa, rated_tags(tifa), "skill")


def test_gecko2k_bundle_counts():
    prompts, tags, rel = gecko2k_prompts()
    # the release's SOURCE.md: 1,546 prompts, Gecko(S) 930, Gecko(R) 616
    sets = tags[tags.family == "gecko-prompt-set"].tag.value_counts()
    assert len(prompts) == 1546 and sets["Gecko(S)"] == 930 and sets["Gecko(R)"] == 616
    assert set(tags[tags.family == "gecko-category"].tag) == {"att", "lang", "ne", "rel", "render"}
    assert rel.columns[0] == "prompt_id" and "max_disagreement_less_0.5" in rel.columns


def _gecko_folder(tmp_path, texts, extra_ratings=()):
    rows = ["image_id,prompt_id,prompt,t2i_model"]
    ratings = ["image_id,rater,rating"]
    for i, t in enumerate(texts):
        for m in ("m1", "m2"):
            rows.append(f'p{i}_{m},p{i},"{t}",{m}')
            ratings += [f"p{i}_{m},r1,{(i + len(m)) % 5 + 1}", f"p{i}_{m},r2,{(i * 3) % 5 + 1}"]
    (tmp_path / "images.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "ratings.csv").write_text("\n".join(ratings + list(extra_ratings)) + "\n")
    (tmp_path / "scores.csv").write_text("image_id,s\n" + "".join(f"p{i}_{m},{i * 0.1 + (m == 'm1')}\n"
                                                                   for i in range(len(texts)) for m in ("m1", "m2")))
    return load_gold(str(tmp_path), answers=False)


def test_a_folder_of_gecko_prompts_gets_gecko_slices(tmp_path):
    prompts, tags, _ = gecko2k_prompts()
    pick = prompts.iloc[[0, 1, 700, 1500]]
    rated = _gecko_folder(tmp_path, [t.upper() for t in pick.prompt])      # matched on text, any case
    t = rated_tags(rated)
    assert {"gecko-prompt-set", "gecko-skill", "gecko-subskill"} <= set(t.families)
    want = tags[(tags.prompt_id == pick.prompt_id.iloc[0]) & (tags.family == "gecko-skill")].tag.iloc[0]
    assert want == "ne/landmarks"                # the release: prompt 0 is ne/landmarks:landmarks
    sl = slices(rated, t, "gecko-skill", include_all=False)
    skill = tags[tags.family == "gecko-skill"].set_index("prompt_id").tag
    expect = [skill.get(p) == want for p in pick.prompt_id for _ in ("m1", "m2")]
    assert expect[:2] == [True, True] and not all(expect)
    assert sl.masks[list(sl.names).index(want)].tolist() == expect


def test_user_tag_file(tmp_path, tifa):
    f = tmp_path / "tags.csv"
    f.write_text("prompt_id,image_id,family,tag\ncoco_669925,,topic,xmas\n,coco_669925_mini_dalle,odd,yes\n")
    t = rated_tags(tifa, [f])
    sl = slices(tifa, t, "topic", include_all=False)
    assert sl.masks[0].sum() == 5
    assert slices(tifa, t, "odd", include_all=False).masks[0].sum() == 1


@pytest.mark.parametrize("text,match", [
    ("family,tag\nx,y\n", "row 1: expected a prompt_id or image_id column"),
    ("prompt_id,image_id,family,tag\ncoco_669925,coco_669925_mini_dalle,f,t\n", "row 2: expected exactly one of"),
    ("prompt_id,family,tag\nnot_a_prompt,f,t\n", "row 2: prompt_id 'not_a_prompt' is not a prompt"),
    ("prompt_id,family,tag\ncoco_669925,,t\n", "row 2: empty family"),       # as a SEG tag file says it
    ("prompt_id,family,tag\ncoco_669925,f\x01,t\n", "row 2: family must be"),
    ("prompt_id,tag\ncoco_669925,t\n", "family"),
])
def test_bad_tag_file_is_one_line(tmp_path, tifa, text, match):
    f = tmp_path / "tags.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=match) as e:
        read_tags(f, tifa)
    assert "\n" not in str(e.value) and "tags.csv" in str(e.value)
