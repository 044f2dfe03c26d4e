"""HPS v2.1 against the hpsv2 package's own score function (tools/reference/hpsv2)."""
from __future__ import annotations

import shutil

import pytest
from reference_compare import compare_hpsv2
from reward_fixtures import assert_spread, fixture

from ts2viz.errors import InputError
from ts2viz.metrics import load

ROOT, EXP = fixture("hpsv2")
ARCH = str(ROOT / EXP["arch"])
CKPT = ROOT / EXP["checkpoints"]["v2.1"]


def test_score_is_hpsv2s_cosine_on_its_own_preprocessing():
    assert_spread([r["v2.1"] for r in EXP["rows"]])
    m, _ = compare_hpsv2()
    assert m.config["score"] == "cosine" and m.config["dtype"] == "float32"  # on the CPU autocast does nothing


def test_a_folder_with_one_released_checkpoint_loads_it(tmp_path):
    shutil.copy(CKPT, tmp_path / CKPT.name)
    compare_hpsv2(tmp_path, rows=lambda rows: rows[:2])
    shutil.copy(CKPT, tmp_path / "HPS_v2_compressed.pt")
    with pytest.raises(InputError, match="checkpoint=FILE"):
        load(f"hpsv2:{tmp_path}?arch={ARCH}", device="cpu")


def test_a_checkpoint_of_another_architecture_is_one_line():
    with pytest.raises(InputError) as e:
        load(f"hpsv2:{CKPT}", device="cpu")  # the default ViT-H-14 does not fit the tiny weights
    assert "\n" not in str(e.value) and "not an HPS v2 checkpoint of ViT-H-14" in str(e.value)
