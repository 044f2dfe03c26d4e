"""``ts2viz validate DIR``: every problem of a hand-made dataset folder, one line each (file, row,
what was expected), through the real CLI in a subprocess; and loading still stops at the first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core_helpers import write_folder
from ts2viz.dataset import load_folder, validate_folder
from ts2viz.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
GOOD = [
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-00.jpg", "image_source": "SD", "rank": "0"},
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-01.jpg", "image_source": "SD", "rank": "1a"},
    {"id": 0, "target_prompt": "a red cube", "file_name": "images/000-02.jpg", "image_source": "SD", "rank": "2"},
    {"id": 1, "target_prompt": "two dogs", "file_name": "images/001-00.jpg", "image_source": "SD", "rank": "0"},
    {"id": 1, "target_prompt": "two dogs", "file_name": "images/001-01.jpg", "image_source": "SD", "rank": "1"},
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ts2viz", "validate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_a_good_folder_validates(tmp_path):
    d = write_folder(tmp_path / "ok", GOOD, images=True)
    r = cli(str(d))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == f"{d}: OK; 2 SEG(s) and 5 image row(s) load"
    assert "Traceback" not in r.stderr


def test_every_problem_is_listed_with_file_and_row(tmp_path):
    rows = GOOD + [
        {"id": "x", "target_prompt": "p", "file_name": "images/a.jpg", "image_source": "SD", "rank": "0"},   # row 7
        {"id": 2, "target_prompt": "p", "file_name": "images/000-01.jpg", "image_source": "SD", "rank": "0"},  # 8: dup
        {"id": 3, "target_prompt": "p", "file_name": "images/003-00.jpg", "image_source": "SD", "rank": "1a"},  # 9
        {"id": 4, "target_prompt": "p", "file_name": "images/004-00.jpg", "image_source": "SD", "rank": "one"},  # 10
    ]
    d = write_folder(tmp_path / "bad", rows, images=False)
    # (row 6 keeps node 2 of SEG 0 reachable once row 3 is set aside)
    (d / "edges.csv").write_text("id,parent,child\n0,0,1a\n0,2,1a\n1,0,7\n9,0,1\n0,1a,2\n")
    r = cli(str(d))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith("error: ")]
    meta, edges = d / "metadata.csv", d / "edges.csv"
    want = [
        f"error: {edges}, row 3: SEG 0: edge 2->1a goes from error level 2 to level 1",
        f"error: {meta}, row 7: id 'x' is not an integer",
        f"error: {meta}, row 8: duplicate file_name 'images/000-01.jpg' (first at row 3)",
        f"error: {meta}, row 10: malformed node label 'one'",
        f"error: {edges}, row 4: edge 0->7: SEG 1 has no node '7' (nodes: 0, 1)",
        f"error: {edges}, row 5: edge 0->1 is for SEG 9, which metadata.csv does not have",
        f"error: {meta}, row 9: SEG 3 has no error-0 node (labels: 1a)",
    ]
    assert len(errors) == len(want), r.stdout
    for w, got in zip(want, errors):
        assert got.startswith(w), (w, got)
    # SEG 0 (its bad edge row set aside) still loads; SEG 1 has an edge to a node it lacks
    assert r.stdout.strip().splitlines()[-1].startswith(f"{d}: 7 problem(s); 1 SEG(s) and 3 image row(s) load")
    assert "image file 'images/000-00.jpg' not found" in r.stdout
    # loading stops at the first problem, with the same words
    with pytest.raises(InputError) as e:
        load_folder(d)
    assert str(e.value) == errors[0][len("error: "):]


def test_unreadable_files_and_limits(tmp_path):
    d = tmp_path / "latin"
    d.mkdir()
    (d / "metadata.csv").write_bytes("id,target_prompt,file_name,image_source,rank\n0,caf\xe9,a.jpg,SD,0\n".encode("latin-1"))
    rep = validate_folder(d)
    assert not rep.ok and "not UTF-8 text (byte 0xe9)" in str(rep.errors[0]) and rep.errors[0].row == 2
    r = cli(str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "dataset folder has no metadata.csv" in r.stdout
    rows = [{"id": 0, "target_prompt": "p", "file_name": f"{i}.jpg", "image_source": "SD", "rank": "zz"}
            for i in range(12)]
    d2 = write_folder(tmp_path / "many", rows)
    r = cli(str(d2), "--limit", "3", "--no-images")
    lines = r.stdout.splitlines()
    assert r.returncode == 2 and sum(ln.startswith("error: ") for ln in lines) == 4
    assert "... and 9 more problem(s)" in r.stdout and "not found" not in r.stdout
    assert cli(str(d2), "--limit", "0").returncode == 2
