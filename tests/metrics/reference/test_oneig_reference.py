"""OneIG-Bench alignment against OneIG-Bench's own code (reference fixture).

``tests/fixtures/reference/oneig/`` holds four grid images, questions in OneIG's ``Q_D`` layout and a prompt
table in ``OneIG-Bench.csv``'s layout (all written for the fixture: OneIG's repository has no licence), a tiny
sharpened Qwen2.5-VL in the released layout, and what OneIG-Bench/OneIG-Benchmark (commit 41b4983)
``alignment_score`` computed with it standing in for ``Qwen/Qwen2.5-VL-7B-Instruct``: the answers of
``infer_semantic`` per question and cell, and each grid's score. Made by ``tools/reference/oneig/make_fixture.py``
in a side venv (transformers 4.50.0, OneIG's pin). Answers compared as strings (every greedy step of ts2viz's
generation checked for a wide margin), scores within 1e-9.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from reference_compare import FIXTURES, compare_oneig

from ts2viz import metrics
from ts2viz.errors import InputError

ROOT = FIXTURES / "oneig"
EXP = json.loads((ROOT / "expected.json").read_text())
CKPT = ROOT / EXP["checkpoint"]


def test_oneig_equals_oneigs_code():
    m, details = compare_oneig()
    assert m.config["family"] == "oneig" and m.config["yes"] == "exact 'Yes'"
    # the grid with a black cell is scored on its three other cells, as OneIG's split_mxn_grid leaves them
    black = [g for g in EXP["grids"] if g["black_cell"] is not None]
    assert black and all(len(a) == 3 for g in black for a in g["answers"].values())


def _raw(answers):
    return {int(q): [float(a == "Yes") for a in cells] for q, cells in answers.items()}


def test_the_fixture_exercises_each_rule():
    """The answers (OneIG's) hold what each rule needs to be told apart: exact 'Yes', ' Yes', 'No'; a child with a
    raw 'Yes' zeroed by its parent; a grandchild counted under the direct rule that a transitive one would zero."""
    qd = json.loads((ROOT / "object.json").read_text())
    answers = [a for g in EXP["grids"] for cells in g["answers"].values() for a in cells]
    assert {"Yes", " Yes", "No"} <= set(answers)
    zeroed = direct_only = 0
    for g in EXP["grids"]:
        deps = {int(k): v for k, v in json.loads(qd[g["prompt_id"]]["dependency"]).items()}
        raw = _raw(g["answers"])
        for c in range(len(raw[1])):
            for q, parents in deps.items():
                ps = [p for p in parents if p]
                if raw[q][c] == 1 and any(raw[p][c] == 0 for p in ps):
                    zeroed += 1
                if raw[q][c] == 1 and ps and all(raw[p][c] == 1 for p in ps) and any(
                        raw[gp][c] == 0 for p in ps for gp in deps.get(p, []) if gp):
                    direct_only += 1
    assert zeroed >= 2 and direct_only >= 1
    scores = [g["score"] for g in EXP["grids"]]
    assert len(set(scores)) == len(scores) and 0 < min(scores) and max(scores) <= 1


def test_missing_files_and_bad_cells_fail_in_one_line(tmp_path):
    with pytest.raises(InputError, match="oneig needs questions="):
        metrics.load(f"oneig:{CKPT}", device="cpu")
    q, p = ROOT / EXP["questions"], ROOT / EXP["prompts"]
    with pytest.raises(InputError, match="cells must be MxN"):
        metrics.load(f"oneig:{CKPT}?questions={q}&prompts={p}&cells=2by2", device="cpu")
    bad = tmp_path / "object.json"
    bad.write_text(json.dumps({"000": {"question": {"1": "Is there a cat?", "3": "Is it red?"}, "dependency": {}}}))
    with pytest.raises(InputError, match=r"object.json: prompt 000: question ids must be 1..2"):
        metrics.load(f"oneig:{CKPT}?questions={bad}&prompts={p}", device="cpu")


def test_an_unknown_prompt_fails_before_scoring():
    m = metrics.load(f"oneig:{CKPT}?questions={ROOT / EXP['questions']}&prompts={ROOT / EXP['prompts']}",
                     device="cpu", dtype="float32")
    with pytest.raises(InputError, match="the prompt table has no row for the prompt 'a cat'"):
        m.check_prompts(["a cat"])


def test_an_all_black_grid_scores_nan():
    from PIL import Image

    m = metrics.load(f"oneig:{CKPT}?questions={ROOT / EXP['questions']}&prompts={ROOT / EXP['prompts']}",
                     device="cpu", dtype="float32")
    got = m([Image.new("RGB", (112, 112))], [EXP["grids"][0]["prompt"]])
    assert np.isnan(got[0]) and m.last_details[0]["cells"] == 0


def test_benchmark_total_equals_oneigs_main():
    """OneIG's ``main()`` over two models' image folders (``images/object/<model>/<id>.png``, its ``image_grid``
    per model): ts2viz's per-image scores are its per-prompt table, their mean its alignment score."""
    by_image = {g["image"]: g for g in EXP["grids"]}
    for model, run in EXP["main"]["models"].items():
        m = metrics.load(f"oneig:{CKPT}?questions={ROOT / EXP['questions']}&prompts={ROOT / EXP['prompts']}"
                         f"&cells={run['image_grid']}", device="cpu", dtype="float32")
        got = m([str(ROOT / i) for i in run["images"]], [by_image[i]["prompt"] for i in run["images"]])
        table = {f"object_{by_image[i]['prompt_id']}": float(s) for i, s in zip(run["images"], got)}
        assert table == {k: v for k, v in run["per_prompt"].items() if v is not None}, model
        assert abs(float(np.mean(got)) - run["alignment"]) <= 1e-9, model


def test_a_q_d_folder_gives_each_category_its_file(tmp_path):
    """``questions=`` a folder: a prompt's questions come from the file of its table category (General_Object ->
    object.json); a category whose file is absent fails in one line before scoring."""
    import shutil

    shutil.copy(ROOT / EXP["questions"], tmp_path / "object.json")
    table = tmp_path / "prompts.csv"
    table.write_text((ROOT / EXP["prompts"]).read_text() + "Portrait,000,a portrait of a sailor,NP,short,\n")
    m = metrics.load(f"oneig:{CKPT}?questions={tmp_path}&prompts={table}", device="cpu", dtype="float32")
    assert m.questions(EXP["grids"][0]["prompt"])[0][1] == "Is there an apple?"
    with pytest.raises(InputError, match="no questions for prompt 000 of Portrait"):
        m.check_prompts(["a portrait of a sailor"])
