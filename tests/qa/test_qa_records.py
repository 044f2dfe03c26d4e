"""The bundled per-question answers of the TS2 release and the DSG accumulations.

Reference values come from outside the code under test: the released per-image scores
(data/ts2/published_scores.csv, read as a plain CSV here) and the bundled question files.
"""
from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from ts2viz import bundled_scores, load_dataset
from ts2viz.cli import main
from ts2viz.errors import InputError
from ts2viz.qa.accumulation import counted_flags, dsg_counted, dsg_score, gated_flags
from ts2viz.paths import bundled_data_dir
from ts2viz.qa.records import (BUNDLED_QA_METRICS, RECORD_COLUMNS, bundled_qa_records, image_scores,
                               records_from_details, with_counted)

TS2 = bundled_data_dir() / "ts2"


@pytest.fixture(scope="module")
def released():
    """The release's per-image scores, read with the csv module (not through ts2viz)."""
    with open(TS2 / "published_scores.csv", newline="", encoding="utf-8") as f:
        next(f)  # the ts2viz-scores header line
        rows = list(csv.DictReader(f))
    return pd.DataFrame(rows).set_index("file_name").replace("", np.nan).astype(float)


@pytest.fixture(scope="module")
def records():
    return bundled_qa_records()


def test_bundled_records_cover_every_image_and_question(records):
    ds = load_dataset("ts2")
    assert list(records.columns) == ["metric", "kind", "seg_id", *RECORD_COLUMNS[2:]]
    assert set(records["metric"].astype(str)) == set(BUNDLED_QA_METRICS) and len(BUNDLED_QA_METRICS) == 12
    for kind, qfile, n in (("tifa", "TS2_TIFA_Q.csv", 21466), ("dsg", "TS2_DSG_Q_dependency.csv", 17114)):
        qs = pd.read_csv(TS2 / qfile, dtype=str, keep_default_na=False)
        per_seg = qs.groupby(qs["id"].astype(int)).size()
        want_rows = sum(per_seg[r.seg_id] for r in ds.rows)
        assert want_rows == n
        sub = records[records["kind"] == kind]
        for m, g in sub.groupby("metric", observed=True):
            assert len(g) == n, m
            assert set(g["file_name"].astype(str)) == set(ds.file_names)
        # question text, choices, expected answer and parents agree with the bundled question file
        qs["key"] = qs["id"] + ":" + qs["question_id"]
        ref = qs.set_index("key")
        keys = sub["seg_id"].astype(str) + ":" + sub["question_id"].astype(str)
        assert (sub["question"].astype(str).to_numpy() == ref.loc[keys, "question"].to_numpy()).all()
        assert (sub["choices"].astype(str).to_numpy() == ref.loc[keys, "choices"].to_numpy()).all()
        assert (sub["expected"].astype(str).to_numpy() == ref.loc[keys, "answer"].to_numpy()).all()
        if kind == "dsg":
            want = ref.loc[keys, "parent_question_id"].replace("-1", "").to_numpy()
            assert (sub["parents"].astype(str).to_numpy() == want).all()
    assert not records["answer"].astype(str).str.contains("</s>", regex=False).any()


def test_tifa_per_image_score_is_the_mean_of_released_correct(records, released):
    tifa = records[records["kind"] == "tifa"]
    got = image_scores(tifa, "gated")
    for m in got.columns:
        want = released.loc[got.index, m].to_numpy()
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[m].to_numpy()[ok], want[ok], atol=1e-8)
        # the release has no per-image TIFA score for the very last image for four models
        assert list(got.index[~ok]) == ([] if m in ("TIFA-BLIP1", "TIFA-InstructBLIP") else ["images/164-04.jpg"])


def test_gated_dsg_matches_released_per_image_files_except_seg_65(records, released):
    dsg = records[records["kind"] == "dsg"]
    gated = image_scores(dsg, "gated")
    mean = image_scores(dsg, "mean")
    # images where the release's DSG score is not the gated one: SEG 65 for three models, where it
    # equals the score with "Is there a bed?" (question 3) as a root question
    expect_off = {"DSG-BLIP1": [6, 7, 8, 9, 10], "DSG-InstructBLIP": [6, 7, 8, 9, 10], "DSG-Fuyu": [6, 7, 8, 10]}
    for m in gated.columns:
        want = released.loc[gated.index, m].to_numpy()
        off = ~np.isclose(gated[m].to_numpy(), want)
        assert list(gated.index[off]) == [f"images/065-{k:02d}.jpg" for k in expect_off.get(m, [])], m
        # plain mean differs from the release on many images (the mean never gates)
        assert (~np.isclose(mean[m].to_numpy(), want)).mean() > 0.15
    seg65 = dsg[(dsg["seg_id"] == 65) & (dsg["metric"] == "DSG-BLIP1")].copy()
    seg65["parents"] = seg65["parents"].astype(str).where(seg65["question_id"] != 3, "")
    rerooted = image_scores(seg65, "gated")["DSG-BLIP1"]
    np.testing.assert_allclose(rerooted.to_numpy(), released.loc[rerooted.index, "DSG-BLIP1"].to_numpy())


def test_bundled_scores_dsg_setting(released):
    mean, gated = bundled_scores(), bundled_scores(dsg="gated")
    assert mean.metrics == gated.metrics == list(released.columns)
    for m in released.columns:
        r = released.loc[mean.file_names, m].to_numpy()
        if m.startswith("DSG-") and m != "DSG-GPT4V":
            assert np.isclose(gated.column(m), r).mean() > 0.998
            assert np.isclose(mean.column(m), r).mean() < 0.85
            assert (mean.column(m) >= gated.column(m) - 1e-12).all()  # gating only removes questions
        else:  # untouched columns (DSG-GPT4V has no per-question data): passed through, so exact
            np.testing.assert_array_equal(mean.column(m), r)
            np.testing.assert_array_equal(gated.column(m), r)
    with pytest.raises(InputError, match="unknown DSG accumulation"):
        bundled_scores(dsg="median")


def test_unknown_bundled_metric_is_an_input_error():
    with pytest.raises(InputError, match="no bundled per-question records for metric 'DSG-GPT4V'"):
        bundled_qa_records("DSG-GPT4V")
    one = bundled_qa_records("TIFA-Fuyu")
    assert set(one["metric"].astype(str)) == {"TIFA-Fuyu"} and len(one) == 21466


# -- accumulation rules on hand-made data -------------------------------------------------------------

def test_gated_accumulation_by_hand():
    # 0, 1 roots; 2 <- 0; 3 <- 0 and 1; 4 <- 3 (grandchild of 1); 5 <- 9 (no such question)
    ids = [0, 1, 2, 3, 4, 5]
    correct = [True, False, True, True, True, True]
    parents = [(), (), (0,), (0, 1), (3,), (9,)]
    assert counted_flags(ids, correct, parents, "gated") == [True, False, True, False, False, True]
    assert counted_flags(ids, correct, parents, "mean") == correct
    # order of the input does not matter (children before parents)
    rev = counted_flags(ids[::-1], correct[::-1], parents[::-1], "gated")
    assert rev[::-1] == [True, False, True, False, False, True]
    assert dsg_score(dict(zip(ids, correct)), dict(zip(ids, parents)), "gated") == pytest.approx(3 / 6)
    assert dsg_score(dict(zip(ids, correct)), dict(zip(ids, parents)), "mean") == pytest.approx(5 / 6)
    with pytest.raises(InputError, match="cycle"):
        dsg_counted({0: True, 1: True}, {0: (1,), 1: (0,)})
    with pytest.raises(InputError, match="unknown DSG accumulation"):
        counted_flags([0], [True], [()], "strict")
    # positions form: a chain 0 <- 1 <- 2 <- 3 where 0 fails gates everything below it
    np.testing.assert_array_equal(gated_flags(np.array([False, True, True, True]), np.array([1, 2, 3]),
                                              np.array([0, 1, 2])), [False, False, False, False])


def test_with_counted_on_a_table_equals_per_image_rule():
    rng = np.random.default_rng(0)
    rows = []
    for img in range(30):
        n = int(rng.integers(1, 7))
        for q in range(n):
            ps = sorted({int(p) for p in rng.integers(0, q, size=int(rng.integers(0, 3)))}) if q else []
            if q == 1 and img % 3 == 0:
                ps.append(7)  # a parent id that is no question of the image (ignored, never another image's)
            rows.append(("DSG-x", "dsg", f"im{img}", q, "q?", "yes|no", "yes", "-".join(map(str, ps)), "a",
                         "yes", bool(rng.random() < 0.6)))
        rows.append(("TIFA-x", "tifa", f"im{img}", 0, "q?", "yes|no", "yes", "", "a", "no", False))
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS)).sample(frac=1, random_state=1)  # shuffled rows
    got = with_counted(df, "gated")
    for img, g in got[got["kind"] == "dsg"].groupby("file_name"):
        want = dsg_counted(dict(zip(g["question_id"], g["correct"])),
                           {q: tuple(int(x) for x in p.split("-") if x) for q, p in zip(g["question_id"], g["parents"])},
                           "gated")
        assert dict(zip(g["question_id"], g["counted"])) == want
    assert (got.loc[got["kind"] == "tifa", "counted"] == got.loc[got["kind"] == "tifa", "correct"]).all()
    assert (with_counted(df, "mean")["counted"] == df["correct"]).all()
    sc = image_scores(df, "gated")
    assert list(sc.columns) == ["DSG-x", "TIFA-x"] or list(sc.columns) == ["TIFA-x", "DSG-x"]
    assert (sc["TIFA-x"] == 0).all()


def test_records_from_details_round_trip_and_errors():
    det = [[{"question_id": 0, "question": "Is there a cat?", "choices": ["yes", "no"], "expected": "yes",
             "parents": [], "answer": "Yes", "mapped": "yes", "correct": True, "counted": True},
            {"question_id": 1, "question": "Is the cat red?", "choices": ["yes", "no"], "expected": "yes",
             "parents": [0], "answer": "no", "mapped": "no", "correct": False, "counted": False}],
           None]
    df = records_from_details("dsg:m", "dsg", ["a.jpg", "b.jpg"], det)
    assert list(df.columns) == list(RECORD_COLUMNS) and len(df) == 2
    assert df["parents"].tolist() == ["", "0"] and df["choices"].tolist() == ["yes|no", "yes|no"]
    assert image_scores(df, "gated").loc["a.jpg", "dsg:m"] == 0.5
    with pytest.raises(InputError, match="malformed per-question record"):
        records_from_details("m", "tifa", ["a"], [[{"question": "x"}]])
    with pytest.raises(InputError, match="2 file names but 1"):
        records_from_details("m", "tifa", ["a", "b"], [[]])


def test_cli_dsg_option(tmp_path, capsys):
    assert main(["leaderboard", "--dsg", "gated", "--metrics", "DSG-Fuyu", "--out", str(tmp_path / "g.csv")]) == 0
    assert "gated accumulation" in capsys.readouterr().out
    g = pd.read_csv(tmp_path / "g.csv")
    assert main(["leaderboard", "--metrics", "DSG-Fuyu", "--out", str(tmp_path / "m.csv")]) == 0
    m = pd.read_csv(tmp_path / "m.csv")
    assert m.loc[0, "ord_avg"] == pytest.approx(0.358, abs=5e-4) and g.loc[0, "ord_avg"] != pytest.approx(0.358, abs=5e-4)
    scores = tmp_path / "s.csv"
    scores.write_text("file_name,X\nimages/000-00.jpg,1\n")
    assert main(["leaderboard", "--scores", str(scores), "--dsg", "mean"]) == 2
    assert "--dsg applies to the bundled TS2 scores only" in capsys.readouterr().err
