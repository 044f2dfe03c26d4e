"""Side-by-side pair sets and verdict tables: formats, released layouts, bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ts2viz.errors import InputError
from ts2viz.gold.pairs import load_bundled_verdicts, load_pairs, load_verdicts

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "reference"
ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_genaibench_pairwise_is_small_and_attributed():
    folder = ROOT / "data" / "goldsets" / "genaibench-pairwise"
    size = sum(f.stat().st_size for f in folder.iterdir())
    assert size < 2_000_000
    assert "MIT" in (folder / "LICENSE").read_text() and "TIGER-AI-Lab/GenAI-Bench" in (folder / "LICENSE").read_text()
    v = load_bundled_verdicts()
    assert v.groupby("judge").size().eq(1735).all() and v["judge"].nunique() == 18
    assert (v["order"] == "forward").all()


def test_pair_csv_labels_and_gecko_vote_counts(tmp_path):
    ps = load_pairs(write(tmp_path / "p.csv", "pair_id,human,prompt\n1,A,a cat\n2,rightvote,a dog\n3,tie-bad,x\n"))
    assert list(ps.pairs["human"]) == ["A", "B", "tie-bad"] and ps.pairs["prompt"][0] == "a cat"
    counts = write(tmp_path / "c.csv", "pair_id,votes_a,votes_b,votes_tie,votes_tie_bad\n"
                   "1,3,1,0,0\n2,2,1,2,0\n3,1,4,1,1\n4,1,1,0,2\n5,0,0,3,1\n")
    # A needs more votes than B and than the ties together (Gecko: "more often than the competitor and Unsure")
    assert list(load_pairs(counts).pairs["human"]) == ["A", "tie-good", "B", "tie-bad", "tie-good"]


@pytest.mark.parametrize("text, message", [
    ("pair_id,human\n1,A\n1,B\n", "row 3: pair_id '1' repeated"),
    ("pair_id,human\n1,better\n", "row 2: human verdict 'better'"),
    ("pair_id,prompt\n1,x\n", "human"),
    ("pair_id,votes_a,votes_b\n1,2,-1\n", "row 2: votes_b '-1'"),
])
def test_bad_pair_csv_is_one_line(tmp_path, text, message):
    with pytest.raises(InputError) as e:
        load_pairs(write(tmp_path / "p.csv", text))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_verdict_for_a_pair_not_in_the_gold(tmp_path):
    pairs = load_pairs(write(tmp_path / "p.csv", "pair_id,human\n1,A\n2,B\n"))
    v = write(tmp_path / "v.csv", "pair_id,judge,verdict\n1,j,A\n9,j,B\n")
    with pytest.raises(InputError, match=r"v\.csv, row 3: verdict for pair '9', which is not in the gold"):
        load_verdicts(v, pairs)
    bad = write(tmp_path / "w.csv", "pair_id,judge,verdict\n1,j,maybe\n")
    with pytest.raises(InputError, match="row 2: verdict 'maybe'"):
        load_verdicts(bad, pairs)
    twice = write(tmp_path / "t.csv", "pair_id,judge,order,verdict\n1,j,reverse,A\n1,j,reverse,B\n")
    with pytest.raises(InputError, match="row 3: a second reverse verdict"):
        load_verdicts(twice, pairs)


def test_verdict_csv_raw_texts_are_parsed_by_the_named_rule(tmp_path):
    pairs = load_pairs(write(tmp_path / "p.csv", "pair_id,human\n1,A\n2,B\n"))
    v = write(tmp_path / "v.csv", 'pair_id,judge,raw\n1,j,"... [[A>>B]]"\n2,j,\n')
    assert list(load_verdicts(v, pairs)["verdict"]) == ["A", "empty"]
    assert list(load_verdicts(v, pairs, parse="canonical")["verdict"]) == ["unparsed", "empty"]


def test_genaibench_release_layout(tmp_path):
    rows = [{"idx": 0, "prompt": "p0", "response": "x [[B>A]]", "model_vote": "[[B>A]]", "human_vote": "rightvote"},
            {"idx": 1, "prompt": "p1", "response": "x [[A=B]]", "model_vote": "[[A=B]]", "human_vote": "tievote"}]
    for judge in ("j1", "j2"):
        (tmp_path / "image_generation" / judge).mkdir(parents=True)
        write(tmp_path / "image_generation" / judge / "pairwise.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    pairs = load_pairs(tmp_path / "image_generation" / "j1" / "pairwise.jsonl")
    assert list(pairs.pairs["human"]) == ["B", "tie-good"]
    v = load_verdicts(tmp_path / "image_generation", pairs)
    assert sorted(v["judge"].unique()) == ["j1", "j2"] and list(v["verdict"][:2]) == ["B", "tie"]


def test_mmrb2_layout_from_a_generated_file():
    pairs = load_pairs(FIX / "mmrb2" / "t2i.json")
    assert len(pairs) == 60 and set(pairs.pairs["human"]) <= {"A", "B"}
    assert pairs.pairs["image_a"][0].endswith("_0.jpg") and pairs.pairs["model_a"][0]
    v = load_verdicts(FIX / "mmrb2" / "judge_noisy.json", pairs)
    assert set(v["order"]) == {"forward", "reverse"} and set(v["verdict"]) <= {"A", "B", "tie", "empty"}
    assert v["raw"].str.contains("raw_response").all()


def test_mmrb2_bad_files(tmp_path):
    with pytest.raises(InputError, match="expected an MMRB2 benchmark JSON"):
        load_pairs(write(tmp_path / "b.json", "[1, 2]"))
    with pytest.raises(InputError, match="chosen 'C'"):
        load_pairs(write(tmp_path / "c.json", json.dumps({"pairs": [{"id": "x", "chosen": "C"}]})))
    pairs = load_pairs(FIX / "mmrb2" / "t2i.json")
    with pytest.raises(InputError, match="verdict for pair 'nope'"):
        load_verdicts(write(tmp_path / "p.json", json.dumps({"nope": {"forward": [{"judgement": "A"}]}})), pairs)


def test_unknown_pair_set():
    with pytest.raises(InputError, match="no pair set 'nope': expected one of genaibench-pairwise"):
        load_pairs("nope")
