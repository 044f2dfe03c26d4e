"""Dataset loaders, the data model and the scores format, including every bad-input path."""
import math

import numpy as np
import pytest

from ts2viz.dataset import load_dataset, load_folder, load_hf
from ts2viz.errors import InputError
from ts2viz.scores import Scores, merge, read_scores, write_scores
from ts2viz.seg import parse_label
from core_helpers import ROWS, _fake_hub_cache, write_folder



def test_parse_label():
    assert parse_label("0") == 0 and parse_label("12b") == 12 and parse_label(" 1a ") == 1
    for bad in ("", "a1", "1-a", "x", "1.5"):
        with pytest.raises(ValueError, match="malformed node label"):
            parse_label(bad)


def test_folder_loader_and_implied_edges(tmp_path):
    ds = load_folder(write_folder(tmp_path / "ds", ROWS, images=True))
    assert len(ds) == 2 and len(ds.rows) == 6
    seg = ds[0]
    assert seg.prompt == "a red cube" and seg.partition == "Synth"
    assert seg.levels == (0, 1, 2)
    assert seg.walks() == [("0", "1a", "2"), ("0", "1b", "2")]
    assert seg.walks(repeat_root=True) == [("0", "0", "1a", "2"), ("0", "0", "1b", "2")]
    # SEG 1 skips level 1: the root connects to the next level present
    assert ds[1].walks() == [("0", "2a")]
    assert ds.image_path("images/000-01.jpg").is_file()
    assert ds.image_path("../../etc/passwd") is None


def test_folder_edges_and_partition_column(tmp_path):
    rows = [dict(r, partition="Real") for r in ROWS]
    root = write_folder(tmp_path / "ds", rows)
    (root / "edges.csv").write_text("id,parent,child\n0,0,1a\n0,1a,2\n0,0,1b\n")
    ds = load_folder(root)
    assert ds[0].partition == "Real"
    assert ds[0].walks() == [("0", "1a", "2"), ("0", "1b")]
    assert ds[1].walks() == [("0", "2a")]     # no edges given for SEG 1: implied


@pytest.mark.parametrize("mutate, message", [
    (lambda rows: rows + [dict(rows[0])], "duplicate file_name 'images/000-00.jpg'"),
    (lambda rows: [dict(r, rank="x1") if i == 2 else r for i, r in enumerate(rows)], "row 4: malformed node label"),
    (lambda rows: [r for r in rows if not (r["id"] == 1 and r["rank"] == "0")], "SEG 1 has no error-0 node"),
    (lambda rows: [dict(r, id="one") if i == 1 else r for i, r in enumerate(rows)], "row 3: id 'one' is not an integer"),
])
def test_folder_bad_input(tmp_path, mutate, message):
    root = write_folder(tmp_path / "ds", mutate([dict(r) for r in ROWS]))
    with pytest.raises(InputError, match=message) as e:
        load_folder(root)
    assert "metadata.csv" in str(e.value) and "\n" not in str(e.value)


def test_folder_missing_and_empty(tmp_path):
    with pytest.raises(InputError, match="no metadata.csv"):
        load_folder(tmp_path)
    (tmp_path / "metadata.csv").write_text("")
    with pytest.raises(InputError, match="empty file"):
        load_folder(tmp_path)
    (tmp_path / "metadata.csv").write_text("id,target_prompt,file_name\n")
    with pytest.raises(InputError, match="missing column 'image_source'"):
        load_folder(tmp_path)
    with pytest.raises(InputError, match="no such dataset"):
        load_dataset(str(tmp_path / "nope"))


def test_hf_loader_uses_hub_cache_offline(tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    cache = _fake_hub_cache(tmp_path / "hub")
    ds = load_hf("me/tiny", cache_dir=cache)
    assert ds.hf_id == "me/tiny" and len(ds.rows) == 6 and ds[0].prompt == "a red cube"


def test_hf_loader_offline_fails_fast(tmp_path, monkeypatch):
    import time

    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    t = time.perf_counter()
    with pytest.raises(InputError, match="could not load Hugging Face dataset"):
        load_hf("me/not-cached", cache_dir=tmp_path)
    assert time.perf_counter() - t < 5


# -- scores format --------------------------------------------------------------------------------

def _ds(tmp_path):
    return load_folder(write_folder(tmp_path / "ds", ROWS))


def test_scores_roundtrip_csv_and_parquet(tmp_path):
    ds = _ds(tmp_path)
    sc = Scores(ds.file_names, ["a", "b"], np.arange(12, dtype=float).reshape(6, 2), {"b"})
    sc.values[2, 0] = np.nan
    for name in ("s.csv", "s.parquet"):
        write_scores(sc, tmp_path / name)
        back = read_scores(tmp_path / name, dataset=ds)
        assert back.metrics == ["a", "b"] and back.lower_is_better == {"b"}
        np.testing.assert_array_equal(back.values, sc.values)     # exact: small integers round-trip
    assert (tmp_path / "s.csv").read_text().startswith("# ts2viz-scores lower_is_better=b")


@pytest.mark.parametrize("text, message", [
    ("", "empty file"),
    ("file_name,m\n", "no rows below the header"),
    ("name,m\nimages/000-00.jpg,1\n", "no file_name column"),
    ("file_name,m\nimages/000-00.jpg,1\nimages/zzz.jpg,2\n", "row 3: unknown file_name 'images/zzz.jpg'"),
    ("file_name,m\nimages/000-00.jpg,1\nimages/000-00.jpg,2\n", "row 3: duplicate file_name"),
    ("file_name,m\nimages/000-00.jpg,1\nimages/000-01.jpg,high\n", "row 3: column 'm': 'high' is not a number"),
    ("file_name,id\nimages/000-00.jpg,1\n", "no metric columns"),
])
def test_scores_bad_input(tmp_path, text, message):
    ds = _ds(tmp_path)
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(InputError, match=message) as e:
        read_scores(p, dataset=ds)
    assert str(e.value).startswith(str(p))


def test_scores_missing_metric_and_merge(tmp_path):
    ds = _ds(tmp_path)
    p = tmp_path / "a.csv"
    p.write_text("file_name,m\nimages/000-00.jpg,1\n")
    with pytest.raises(InputError, match="missing metric column 'x'"):
        read_scores(p, dataset=ds, metrics=["x"])
    q = tmp_path / "b.csv"
    q.write_text("file_name,n\nimages/000-01.jpg,2\n")
    both = merge([read_scores(p), read_scores(q)])
    assert both.metrics == ["m", "n"]
    assert both.get("images/000-00.jpg", "m") == 1 and math.isnan(both.get("images/000-00.jpg", "n"))
    with pytest.raises(InputError, match="appears in two scores files"):
        merge([read_scores(p), read_scores(p)])
