"""Question-level views: per-image question tables, questions x nodes accuracy, edge drops and the
question-level SEG ranking, on the bundled release data, on hand-made records and on live-scored
details read back from the score cache."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core_helpers import make_dataset
from margins import generation_margins
from tiny_models import tiny, write_image_dataset
from ts2viz import engine, load_dataset, metrics
from ts2viz.errors import InputError
from ts2viz.paths import bundled_data_dir
from ts2viz.qa.records import RECORD_COLUMNS, bundled_qa_records, records_from_details
from ts2viz.engine.details import cached_qa_records
from ts2viz.qa.views import (edge_question_drops, image_question_table, question_node_accuracy,
                             rank_segs_by_questions)


@pytest.fixture(scope="module")
def ts2():
    return load_dataset("ts2")


@pytest.fixture(scope="module")
def dsg_blip():
    return bundled_qa_records("DSG-BLIP1")


def test_image_question_table_bundled_dsg_and_tifa(dsg_blip):
    t = image_question_table(dsg_blip, "images/065-06.jpg")
    assert list(t.columns) == ["question_id", "question", "choices", "expected", "answer", "mapped", "correct",
                               "parents", "counted"]
    assert t["question"].tolist() == ["Is there a group of stuffed animals?", "Are the stuffed animals sitting?",
                                      "Are the stuffed animals next to the bed?", "Is there a bed?"]
    assert t["parents"].tolist() == [[], [0], [0], [0]] and t["choices"][0] == ["yes", "no"]
    assert t["correct"].tolist() == [False, False, False, True]
    assert t["counted"].tolist() == [False, False, False, False]        # gated: the bed question needs q0
    mean = image_question_table(dsg_blip, "images/065-06.jpg", accumulation="mean")
    assert mean["counted"].tolist() == [False, False, False, True]
    tifa = image_question_table(bundled_qa_records("TIFA-Fuyu"), "images/000-00.jpg")
    assert "parents" not in tifa.columns and len(tifa) == 6
    assert tifa.loc[1, "mapped"] == "Christmas tree" and tifa.loc[1, "answer"] == "1. Wreaths 2. Ornaments 3. Presents"
    assert image_question_table(dsg_blip, "images/nope.jpg").empty
    both = bundled_qa_records(["DSG-BLIP1", "TIFA-BLIP1"])
    with pytest.raises(InputError, match="several metrics"):
        image_question_table(both, "images/000-00.jpg")
    assert len(image_question_table(both, "images/000-00.jpg", metric="TIFA-BLIP1")) == 6
    with pytest.raises(InputError, match="no records for metric 'DSG-Fuyu'"):
        image_question_table(both, "images/000-00.jpg", metric="DSG-Fuyu")


def test_question_node_accuracy_matches_an_independent_count(ts2, dsg_blip):
    seg = ts2[65]
    acc = question_node_accuracy(dsg_blip, seg)
    assert list(acc.columns) == ["question"] + [n.label for n in seg.nodes]
    # independent: straight from the Parquet file and metadata.csv
    raw = pd.read_parquet(bundled_data_dir() / "ts2" / "qa_answers.parquet")
    raw = raw[(raw["metric"] == "DSG-BLIP1") & (raw["seg_id"] == 65)]
    meta = pd.read_csv(bundled_data_dir() / "ts2" / "metadata.csv", dtype=str)
    node = dict(zip(meta["file_name"], meta["rank"]))
    raw = raw.assign(node=raw["file_name"].astype(str).map(node))
    for (qid, lbl), g in raw.groupby(["question_id", "node"]):
        assert acc.loc[qid, lbl] == pytest.approx(g["correct"].mean())
    assert acc.attrs["n_images"] == {n.label: len(n.images) for n in seg.nodes}
    counted = question_node_accuracy(dsg_blip, seg, value="counted")
    assert (counted.iloc[:, 1:].to_numpy() <= acc.iloc[:, 1:].to_numpy() + 1e-12).all()
    # records without a value of their own: "score" is the 0/1 correctness
    pd.testing.assert_frame_equal(question_node_accuracy(dsg_blip, seg, value="score"), acc)
    with pytest.raises(InputError, match="value must be one of"):
        question_node_accuracy(dsg_blip, seg, value="mean")


def _records(rows):
    return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))


def test_edge_drops_and_ranking_by_hand():
    # SEG 0: nodes 0 -> {1a, 1b} -> 2a. q0 catches 1a (drops 1.0), nothing catches 1b (drop 0.25),
    # q1 catches 2a from 1a (drop 1.0) but from 1b only 0.5. SEG 1: 0 -> 1a, caught by q0.
    ds = make_dataset({0: {"0": 2, "1a": 2, "1b": 4, "2a": 2}, 1: {"0": 1, "1a": 1}})
    correct = {  # (seg, label) -> [q0, q1] correctness per image
        (0, "0"): [[1, 1], [1, 1]], (0, "1a"): [[0, 1], [0, 1]], (0, "1b"): [[1, 1], [1, 1], [1, 1], [0, 0]],
        (0, "2a"): [[0, 0], [0, 0]], (1, "0"): [[1, 1]], (1, "1a"): [[0, 1]]}
    rows = []
    for (sid, lbl), per_image in correct.items():
        for i, qs in enumerate(per_image):
            for q, ok in enumerate(qs):
                rows.append(("M", "tifa", f"{sid}-{lbl}-{i}.jpg", q, f"q{q}?", "yes|no", "yes", "", "x",
                             "yes" if ok else "no", bool(ok)))
    recs = _records(rows)
    drops = edge_question_drops(recs, ds[0])
    got = {(r.parent, r.child, r.question_id): r.drop for r in drops.itertuples()}
    assert got == {("0", "1a", 0): 1.0, ("0", "1a", 1): 0.0, ("0", "1b", 0): 0.25, ("0", "1b", 1): 0.25,
                   ("1a", "2a", 0): 0.0, ("1a", "2a", 1): 1.0, ("1b", "2a", 0): 0.75, ("1b", "2a", 1): 0.75}
    rank = rank_segs_by_questions(recs, ds)
    assert rank["seg_id"].tolist() == [0, 1]
    r0 = rank.iloc[0]
    assert (r0.n_edges, r0.missed_edges) == (4, 1) and r0.missed_fraction == pytest.approx(0.25)
    assert r0.mean_best_drop == pytest.approx((1.0 + 0.25 + 1.0 + 0.75) / 4)
    assert r0.worst_edge == "0->1b"
    assert rank.iloc[1].missed_edges == 0
    strict = rank_segs_by_questions(recs, ds, min_drop=0.8)
    assert strict.set_index("seg_id").loc[0, "missed_edges"] == 2
    assert rank_segs_by_questions(recs, ds, seg_ids=[1])["seg_id"].tolist() == [1]
    with pytest.raises(InputError, match="min_drop"):
        rank_segs_by_questions(recs, ds, min_drop=0)


def test_ranking_on_bundled_data(ts2, dsg_blip):
    rank = rank_segs_by_questions(dsg_blip, ts2)
    assert 150 <= len(rank) <= 165 and rank["seg_id"].is_unique
    assert (np.diff(rank["missed_fraction"].to_numpy()) <= 1e-12).all()
    assert ((rank["missed_edges"] <= rank["n_edges"]) & (rank["n_edges"] > 0)).all()
    # the worst SEG's worst edge really has no question dropping by 0.5
    top = rank.iloc[0]
    d = edge_question_drops(dsg_blip, ts2[int(top.seg_id)])
    a, b = top.worst_edge.split("->")
    assert d[(d.parent == a) & (d.child == b)]["drop"].max() < 0.5


def test_cached_records_of_a_live_metric(tmp_path):
    ds_dir = write_image_dataset(tmp_path / "ds", n_segs=2)
    import csv

    rows = list(csv.DictReader(open(ds_dir / "metadata.csv")))
    for r in rows:
        r["target_prompt"] = "A Christmas tree with lights and teddy bear"
    with open(ds_dir / "metadata.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ds = load_dataset(ds_dir)
    spec = f"dsg:{tiny('blip')}?mapper=lexical&max_new_tokens=2"
    margins = generation_margins(context="DSG answers")   # answers of a SEG's batch and of one image: wide argmaxes
    with margins:
        engine.score_dataset(ds, [spec], seg_ids=[0], device="cpu", cache_dir=tmp_path / "c")
    m = metrics.load(spec, device="cpu")
    recs = cached_qa_records(m, ds, cache_dir=tmp_path / "c")
    seg0 = [im.file_name for n in ds[0].nodes for im in n.images]
    assert set(recs["file_name"]) == set(seg0)  # SEG 1 was not scored: no records, and no scoring happened
    assert (recs["metric"] == spec).all() and (recs["kind"] == "dsg").all()
    # the same records as the metric's own details for one image
    from PIL import Image

    fn = seg0[0]
    with generation_margins(context="DSG answers, one image"):
        _, det = m.score_with_details([Image.open(ds_dir / fn).convert("RGB")], [ds.row(fn).prompt])
    want = records_from_details(spec, "dsg", [fn], det)
    got = recs[recs["file_name"] == fn].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    table = image_question_table(recs, fn)
    assert table["question"].tolist()[0] == "Is there a Christmas tree?"
    with pytest.raises(InputError, match="not a TIFA/DSG metric"):
        cached_qa_records(metrics.load(f"vqascore:{tiny('blip')}", device="cpu"), ds, cache_dir=tmp_path / "c")
