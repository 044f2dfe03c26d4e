"""Rated sets: the bundled sets load with the documented contents, a user's own folder and score file
work end to end through the CLI, and bad input gets one line naming file and row, exit code 2, and
no output file."""
import io
import contextlib

import numpy as np
import pandas as pd
import pytest

from gold_helpers import make_folder

from ts2viz.cli import main
from ts2viz.errors import InputError
from ts2viz.gold import BUNDLED, load_folder, load_gold


@pytest.mark.parametrize("name, images, prompts, models, rating_sets", [
    ("tifa160", 800, 160, 5, {"dsg", "tifa"}),
    ("imagenhub-t2i", 985, 197, 5, {"sc", "pq"}),
    ("genaibench", 3162, 527, 6, {"likert"}),
    ("genaibench-teaser", 220, 55, 4, {"likert", "released_mean"}),
])
def test_bundled_sets(name, images, prompts, models, rating_sets):
    g = load_gold(name)
    assert len(g) == images and g.images["prompt_id"].nunique() == prompts and len(g.t2i_models) == models
    assert set(g.rating_sets) == rating_sets and g.default_rating_set in rating_sets
    assert not np.isnan(g.human()).any()
    assert (g.source / "LICENSE").is_file() and "licen" in (g.source / "LICENSE").read_text().lower()


def test_bundled_contents_match_the_releases():
    t = load_gold("tifa160")
    # SOURCE.md: about 5 DSG ratings per image (3,995 in all) and 2 TIFA ratings
    assert t.ratings_per_image("dsg").sum() == 3995 and (t.ratings_per_image("tifa") == 2).all()
    row = t.images.index[t.images["image_id"] == "coco_669925_mini_dalle"][0]
    assert t.prompt_text("coco_669925_mini_dalle") == "A Christmas tree with lights and teddy bear"
    assert t.scores.loc[row, "clipscore_vitb32"] == pytest.approx(33.55949401855469)
    assert {"dsg:PaLI-17B", "vq2a:mPLUG-large", "dsg-nodep:InstructBLIP"} <= set(t.metrics)
    ih = load_gold("imagenhub-t2i")
    assert sum(c.startswith("viescore_sc:") for c in ih.metrics) == 16 and "clipscore" in ih.metrics
    assert set(ih.human("sc")) <= {0, 1 / 3, 0.5, 2 / 3, 1, 1 / 6, 5 / 6} or ih.human("sc").max() <= 1
    # the two corrupt GenAI-Bench ratings (41, 33) are left out: those images keep 2 ratings
    gb = load_gold("genaibench")
    assert gb.ratings["rating"].between(1, 5).all() and (gb.ratings_per_image() == 2).sum() == 2
    teaser = load_gold("genaibench-teaser")
    np.testing.assert_allclose(teaser.human("likert"), teaser.human("released_mean"), atol=0.006)


@pytest.mark.parametrize("name", list(BUNDLED))
def test_every_task_runs_on_every_bundled_set(name, tmp_path):
    g = load_gold(name)
    args = ["humaneval", "--gold", name, "--resamples", "200", "--out", str(tmp_path / "h.csv")]
    if not g.metrics:      # GenAI-Bench 527 has no released scores: a generated score file joins
        rng = np.random.default_rng(0)
        pd.DataFrame({"image_id": g.image_ids, "noisy_human": g.human() + rng.normal(size=len(g))}).to_csv(
            tmp_path / "s.csv", index=False)
        args += ["--scores", str(tmp_path / "s.csv")]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(args) == 0
    f = pd.read_csv(tmp_path / "h.csv")
    f = f[f["metric"] != "human:leave-one-rater-out"]      # point values only, checked elsewhere
    assert len(f) >= 1 and f["spearman"].notna().all() and f["pairwise_acc"].notna().all()
    assert f["ordering_kendall"].notna().all()


def test_user_folder_and_score_file_end_to_end(tmp_path, capsys):
    folder = make_folder(tmp_path / "myset")
    g = load_folder(folder)
    assert len(g) == 60 and g.rating_sets == ["default"] and g.metrics == ["good", "bad"]
    assert g.prompt_text("p3-B") == "prompt number 3"
    extra = pd.DataFrame({"image_id": g.image_ids[::-1], "mine": np.arange(60.0)})
    extra.to_csv(tmp_path / "mine.csv", index=False)
    out = tmp_path / "res.csv"
    assert main(["humaneval", "--gold", str(folder), "--scores", str(tmp_path / "mine.csv"), "--resamples", "300",
                 "--out", str(out)]) == 0
    f = pd.read_csv(out).set_index("metric")
    assert list(f.index) == ["good", "bad", "mine", "human:leave-one-rater-out"]
    assert f.loc["good", "spearman"] > f.loc["bad", "spearman"]
    assert f.loc["good", "spearman_lo"] > f.loc["bad", "spearman_hi"]      # clearly separated
    table = capsys.readouterr().out
    assert "good" in table and "spearman" in table and "bootstrap intervals over prompts" in table


BAD = [
    ("ratings.csv", "image_id,rater,rating\np0-A,r0,5\np9-Z,r0,3\n", "ratings.csv, row 3: image_id 'p9-Z' is not in images.csv"),
    ("ratings.csv", "image_id,rater,rating\np0-A,r0,five\n", "ratings.csv, row 2: rating 'five' is not a number"),
    ("ratings.csv", "image_id,rater\np0-A,r0\n", "ratings.csv: missing column 'rating'"),
    ("images.csv", "image_id,prompt,t2i_model\na,x,A\na,y,B\n", "images.csv, row 3: image_id 'a' appears twice (first on row 2)"),
    ("images.csv", "image_id,t2i_model\na,A\n", "images.csv: missing column 'prompt_id' or 'prompt'"),
    ("scores.csv", "image_id,good\np0-A,0.5\np0-A,0.7\n", "scores.csv, row 3: image_id 'p0-A' appears twice"),
    ("scores.csv", "image_id,good\np0-A,high\n", "scores.csv, row 2: score of 'good' 'high' is not a number"),
]


@pytest.mark.parametrize("fname, text, message", BAD)
def test_bad_input_is_one_line_exit_2_no_output(tmp_path, capsys, fname, text, message):
    folder = make_folder(tmp_path / "s")
    (folder / fname).write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["humaneval", "--gold", str(folder), "--no-ci", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_bad_names(tmp_path, capsys):
    assert main(["humaneval", "--gold", "nosuchset", "--no-ci"]) == 2
    assert "no such rated set" in capsys.readouterr().err
    assert main(["humaneval", "--gold", "tifa160", "--ratings", "experts", "--no-ci"]) == 2
    assert "has no rating set 'experts' (its rating sets: tifa, dsg)" in capsys.readouterr().err
    assert main(["humaneval", "--gold", "tifa160", "--metrics", "nope", "--no-ci"]) == 2
    assert "has no metric 'nope'" in capsys.readouterr().err
    folder = make_folder(tmp_path / "s")
    with pytest.raises(InputError, match="no such scores file"):
        from ts2viz.gold import read_score_table

        read_score_table(folder / "absent.csv", ["a"])
