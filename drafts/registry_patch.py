"""Apply the rewards branch's registry changes to a copy of the house layout (scratch only)."""
import sys
from pathlib import Path

root = Path(sys.argv[1])
reg = root / "ts2viz/metrics/registry.py"
s = reg.read_text()
s = s.replace('''register("callable", "a Python function''', '''register("pickscore", "PickScore: CLIP-H fine-tuned on Pick-a-Pic preferences; logit_scale.exp() * cosine as its "
         "authors' code (?score=cosine: t2v_metrics' number)",
         ".families.pickscore:build", example="pickscore:pickscore-v1", hub_model=True)
register("hpsv2", "HPS v2 / v2.1: open_clip ViT-H-14 preference model; cosine on HPSv2's own preprocessing",
         ".families.hpsv2:build", example="hpsv2:hpsv2.1", hub_model=True)
register("imagereward", "ImageReward: BLIP image-grounded text encoder + MLP reward, standardised with the authors' "
         "mean and std", ".families.imagereward:build", example="imagereward:imagereward-v1.0", hub_model=True)
register("hpsv3", "HPSv3: Qwen2-VL-7B reward model; mu read at the <|Reward|> token of its instruction",
         ".families.hpsv3:build", example="hpsv3:hpsv3", hub_model=True)
register("callable", "a Python function''')
old = '''    if fam.hub_model:
        from .common.hub import check_hub_model_available

        check_hub_model_available(sp, opts)    # in a second, before torch and transformers are imported
    factory = fam.factory()
    check_options(sp, factory, opts)
    card = fam.card
'''
new = '''    card = fam.card
    if fam.hub_model:
        from .common.hub import check_hub_model_available

        # a field's model name (the card's model_names) is checked as the hub id it names; the family's
        # factory gets the spec as written and resolves the name itself
        hub_id = model_name_hub_id(sp, card)
        check_hub_model_available(replace(sp, model=hub_id) if hub_id else sp, opts)
    factory = fam.factory()
    check_options(sp, factory, opts)
'''
assert old in s
s = s.replace(old, new)
s = s.replace('''def record_dtype(''', '''def model_name_hub_id(spec: Spec, card: Card | None) -> str | None:
    """The hub id ``card.model_names`` gives ``spec``'s model (a field's short name, case-insensitive), or
    None: no card, a name it does not know, or a local file or folder of that name."""
    if card is None or not card.model_names:
        return None
    import os
    from pathlib import Path

    if Path(os.path.expanduser(spec.model)).exists():
        return None
    return {k.lower(): v for k, v in card.model_names.items()}.get(spec.model.lower())


def record_dtype(''')
s = s.replace("from dataclasses import dataclass, field", "from dataclasses import dataclass, field, replace")
reg.write_text(s)

tm = root / "tests/support/tiny_models.py"
t = tm.read_text()
add = '''    "pickscore": lambda tmp, url: _reward_spec("pickscore"),
    "hpsv2": lambda tmp, url: _reward_spec("hpsv2"),
    "imagereward": lambda tmp, url: _reward_spec("imagereward"),
    "hpsv3": lambda tmp, url: _reward_spec("hpsv3"),
}
'''
marker = '''    "csv": lambda tmp, url: _contract_csv(tmp),
}
'''
assert marker in t
t = t.replace(marker, '''    "csv": lambda tmp, url: _contract_csv(tmp),
''' + add)
t = t.replace('''def _contract_csv(''', '''def _reward_spec(family: str) -> str:
    """A preference reward on its tiny checkpoint: the reference fixture (tests/fixtures/reference/FAMILY), a
    random-weight model in the released layout (see tools/reference/FAMILY/README.md)."""
    from reward_specs import reward_specs

    return reward_specs()[family]


def _contract_csv(''')
tm.write_text(t)
