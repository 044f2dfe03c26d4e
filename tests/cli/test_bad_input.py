"""Every bad input of issue 10 through the command line, table-driven (cases in ``bad_input_cases.py``).

A rejected input must give exit code 2, exactly one stderr line ``ts2viz: error: FILE, row N: PROBLEM``
(no traceback), and leave no output file (nor a temporary one), and a `score` run must fail before
scoring starts. An input accepted with a warning must give exit code 0, one ``ts2viz: warning: ...``
line per problem and nothing else on stderr (no raw numpy RuntimeWarning).

Most cases call ``ts2viz.cli.main`` in this process (the same code path, milliseconds each); the ones
where the process matters (a RecursionError or a traceback before, time, memory, the network, progress
bars printed by libraries) run ``python -m ts2viz`` in a subprocess, as a user would.
"""
from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bad_input_cases as bic
from ts2viz.cli import main

REPO = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Expect:
    """What the user must see. ``rc`` 2: ``file`` (a path ending), ``row`` and ``says`` in the one error
    line. ``rc`` 0: each of ``warns`` in its own warning line (and no other stderr line)."""

    rc: int
    file: str | None = None
    row: int | None = None
    says: str = ""
    warns: tuple[str, ...] = ()
    subprocess: bool = False


E = Expect
LEVEL = "an edge must go from a lower to a higher error level"
FIELDS = "but the header has 5 (id, target_prompt, file_name, image_source, rank)"

EXPECT: dict[str, Expect] = {
    # edges.csv: validated when loading, one line naming file, row and edge (was a RecursionError)
    "edges: cycle 1a->2->1a": E(2, "edges.csv", 4, f"SEG 0: edge 2->1a goes from error level 2 to level 1; {LEVEL}",
                                subprocess=True),
    "edges: self-loop 1a->1a": E(2, "edges.csv", 3, f"edge 1a->1a is a self-loop; {LEVEL}"),
    "edges: back to level 0 (2->0)": E(2, "edges.csv", 4, f"edge 2->0 goes from error level 2 to level 0; {LEVEL}"),
    "edges: same level 1a->1b": E(2, "edges.csv", 3, f"edge 1a->1b goes from error level 1 to level 1; {LEVEL}"),
    "edges: row for a SEG that does not exist": E(2, "edges.csv", 3, "is for SEG 7, which metadata.csv does not have"),
    "edges: node that does not exist": E(2, "edges.csv", 3, "edge 1a->3z: SEG 0 has no node '3z' (nodes: 0, 1a, 1b, 2)"),
    "edges: not an integer id": E(2, "edges.csv", 2, "id 'x' is not an integer"),
    "edges: a node no walk reaches": E(2, "edges.csv", 2, "SEG 0: node 1b cannot be reached from an error-0 node "
                                       "along the SEG's edges; add an edge into it"),
    # nodes.csv: the error descriptions of nodes (issue 23)
    "nodes: row for a SEG that does not exist": E(2, "nodes.csv", 3, "errors of node 1 are for SEG 9, which "
                                                  "metadata.csv does not have"),
    "nodes: node that does not exist": E(2, "nodes.csv", 3, "SEG 1 has no node '1b' (nodes: 0, 1, 2)"),
    "nodes: node listed twice": E(2, "nodes.csv", 3, "node 1a of SEG 0 is listed twice (first at row 2)"),
    "nodes: malformed label": E(2, "nodes.csv", 2, "malformed node label '1a!'"),
    "nodes: missing column": E(2, "nodes.csv", None, "missing column 'errors' (expected id, rank, errors)"),
    # metadata.csv
    "metadata: not UTF-8 (Latin-1)": E(2, "metadata.csv", 4, "not UTF-8 text (byte 0xe9); save the file as UTF-8",
                                       subprocess=True),
    "metadata: UTF-8 BOM": E(0),
    "metadata: row with an extra field": E(2, "metadata.csv", 6, f"6 fields, {FIELDS}"),
    "metadata: row with a missing field": E(2, "metadata.csv", 6, f"4 fields, {FIELDS}"),
    "metadata: unknown partition": E(0, warns=("metadata.csv, row 12: partition 'Synthetic' (SEG 2) is not one of "
                                               "Synth, Nat, Real; its 1 SEG(s) form a partition of their own",)),
    "metadata: SEG with two partitions": E(2, "metadata.csv", 15, "SEG 2 is in partition 'Real' here but in 'Synth' "
                                           "at row 12"),
    "metadata: duplicate file_name": E(2, "metadata.csv", 4, "duplicate file_name 'images/000-00.png' (first at row 2)"),
    "metadata: malformed node label": E(2, "metadata.csv", 5, "malformed node label 'x1'"),
    "metadata: SEG without an error-0 node": E(2, "metadata.csv", 12, "SEG 2 has no error-0 node (labels: 1, 2a, 3)"),
    "metadata: id not an integer": E(2, "metadata.csv", 3, "id 'zero' is not an integer"),
    "metadata: missing column": E(2, "metadata.csv", None, "missing column 'image_source'"),
    "metadata: empty file": E(2, "metadata.csv", None, "empty file"),
    # scores files
    "scores: inf, -inf, 1e999": E(0, warns=(
        "bad.csv: 3 non-finite score(s) (inf, -inf, or too large for float64) treated as missing: 'good' 3 "
        "(first at row 3)",
        "metric 'good' has scores for 11 of 14 images: 2 of 3 SEGs partly scored (SEGs 0, 1)"), subprocess=True),
    "scores: duplicate metric column": E(2, "bad.csv", 1, "column 'm' appears twice in the header (columns 2 and 3)"),
    "scores: partial coverage (5 of 14 images)": E(0, warns=(
        "metric 'good' has scores for 5 of 14 images: 2 of 3 SEGs partly scored (SEGs 0, 1); 1 of 3 SEGs not "
        "scored at all (SEG 2); its ord and sep use the scored images only",)),
    "scores: all-NaN metric column": E(0, warns=(
        "bad.csv: metric column 'empty' has no scores (every cell is empty or not finite)",
        "metric 'empty' has no scores for any image of the evaluated SEGs")),
    "scores: row with an extra field": E(2, "bad.csv", 4, "3 fields, but the header has 2 (file_name, good)"),
    "scores: not UTF-8": E(2, "bad.csv", 1, "not UTF-8 text (byte 0xf6)"),
    "scores: UTF-8 BOM": E(0),
    "scores: unknown file_name": E(2, "bad.csv", 16, "unknown file_name 'images/nope.png'"),
    "scores: duplicate file_name": E(2, "bad.csv", 16, "duplicate file_name 'images/000-00.png' (first at row 2)"),
    "scores: non-numeric cell": E(2, "bad.csv", 4, "column 'good': 'high' is not a number"),
    "scores: empty file": E(2, "bad.csv", None, "empty file"),
    "scores: no file_name column": E(2, "bad.csv", None, "no file_name column (columns: name, good)"),
    "scores: no rows below the header": E(2, "bad.csv", None, "no rows below the header"),
    "scores: no metric columns": E(2, "bad.csv", None, "no metric columns"),
    "scores: a .parquet file that is not Parquet": E(2, "bad.parquet", None, "not a readable Parquet file"),
    "scores: the same metric in two files": E(2, "scores.csv", None, "metric 'good' appears in two scores files"),
    # datasets
    "--dataset: no such folder": E(2, "nope", None, "no such dataset"),
    "--dataset: folder without metadata.csv": E(2, "empty", None, "dataset folder has no metadata.csv"),
    # command-line arguments
    "--seg 1-0 (reversed range)": E(2, None, None, "--seg: '1-0' is a reversed range (start above end); write 0-1"),
    "--seg 0-99999999": E(2, None, None, "--seg: range 0-99999999 goes beyond the SEG ids of dataset ds (0-2)",
                          subprocess=True),
    "--seg 999 (no such SEG)": E(2, None, None, "--seg: no SEG with id 999 in dataset ds (its ids: 0-2)"),
    "--seg abc": E(2, None, None, "--seg: 'abc' is not an id or a range like 3-7"),
    "--metrics with an unknown metric": E(2, "scores.csv", None, "missing metric column 'nosuch' (have: good)"),
    "--lower-is-better with an unknown metric": E(2, None, None, "--lower-is-better names a metric not in the "
                                                  "scores: 'nosuch'"),
    "--policy with an unknown rule": E(2, None, None, "policy override 'nosuch=1'"),
    "--policy with an unknown value": E(2, None, None, "policy walk_weights='bogus'"),
    # SEG tags (--tags) and the leaderboard's slices (issue 38)
    "seg tags: SEG that does not exist": E(2, "seg_tags.csv", 3, "seg_id 9 is not a SEG of dataset ds (its ids: 0-2)"),
    "seg tags: empty tag": E(2, "seg_tags.csv", 2, "empty tag"),
    "seg tags: missing column": E(2, "seg_tags.csv", None, "missing column 'tag' (expected seg_id, family, tag)"),
    "--slices with an unknown family": E(2, None, None, "no SEG tag family 'topic' (families here: partition)"),
    "--slices with --clusters": E(2, None, None, "--slices cannot be combined with --clusters"),
    "paper mode on a user dataset (leave-out)": E(0),
    # output paths: checked before any work
    "--out in a read-only folder": E(0) if IS_ROOT else E(2, "readonly/board.csv", None, "cannot write in folder"),
    "--out is a folder": E(2, "adir.csv", None, "is a folder; expected a file name"),
    "--out under /proc": E(2, "/proc/ts2viz-board.csv", None, "cannot write in folder /proc", subprocess=True),
    "--out under /sys (read-only to root too)": E(2, "/sys/ts2viz-board.csv", None, "cannot write in folder /sys"),
    "--out inside a file": E(2, "afile/board.csv", None, "is not a folder"),
    "score --out is a folder (before scoring)": E(2, "adir.csv", None, "is a folder", subprocess=True),
    "score --out under /proc (before scoring)": E(2, "/proc/ts2viz-scores.csv", None, "cannot write in folder /proc"),
    "score --out with a wrong suffix": E(2, "scores.txt", None, "--out must end in .csv or .parquet"),
    # scoring
    "score: cache file is not SQLite": E(2, "cache.sqlite", None, "not a usable SQLite score cache (file is not a "
                                         "database); delete the file or run with --no-cache"),
    "score: unknown metric family": E(2, None, None, "unknown metric family 'nosuchfamily'"),
    "score: model folder that does not exist": E(2, None, None, "missing-model': no model folder"),
    "score: --batch-size 0": E(2, None, None, "--batch-size must be at least 1"),
    "score: 121-megapixel PNG in the dataset": E(0, warns=(
        "1 image(s) could not be scored and get NaN: images/002-03.png: image is 11000x11000 = 121 megapixels; "
        "the limit is 50 megapixels",), subprocess=True),
    "--dataset hub id, network hangs, HF_HUB_OFFLINE unset": E(2, "nobody/no-such-dataset", None,
                                                               "cannot reach the Hugging Face hub", subprocess=True),
}

#: limits the subprocess cases must stay under (seconds, MB of peak RSS); before, e.g. --seg 0-99999999
#: took 21-60 s and 5.5 GB, the 121-MP PNG 1.7 GB, the hub id minutes
LIMITS = {"--seg 0-99999999": (15, 400), "score: 121-megapixel PNG in the dataset": (30, 500),
          "--dataset hub id, network hangs, HF_HUB_OFFLINE unset": (15, 400)}


def test_every_case_has_an_expectation():
    assert set(EXPECT) == set(bic.CASES)


# -- running ------------------------------------------------------------------------------------------

@dataclass
class Result:
    rc: int
    out: str
    err: str
    seconds: float
    rss_mb: float | None = None


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (Linux VmHWM; None elsewhere or once it has exited).

    Not ``wait4``'s ru_maxrss: a child forked from this (large) test process keeps the parent's peak.
    """
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_subprocess(argv, env_extra: dict, cwd: Path, timeout: float = 120) -> Result:
    """``python -m ts2viz ARGV`` as a user runs it, with its wall time and peak RSS (sampled)."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for k, v in env_extra.items():
        if v == "":
            env.pop(k, None)
        else:
            env[k] = v
    with open(cwd / ".stdout", "w+") as so, open(cwd / ".stderr", "w+") as se:
        t = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-m", "ts2viz", *argv], stdout=so, stderr=se, cwd=cwd, env=env)
        rss = None
        while p.poll() is None:
            # VmHWM is the peak of the process image after exec, so sampling misses no peak but one in
            # the last few milliseconds of its life
            rss = max(filter(None, [rss, peak_rss_mb(p.pid)]), default=None)
            if time.perf_counter() - t > timeout:
                p.kill()
            time.sleep(0.01)
        seconds = time.perf_counter() - t
        so.seek(0)
        se.seek(0)
        return Result(p.returncode, so.read(), se.read(), seconds, rss)


def run_inprocess(argv, env_extra: dict, monkeypatch, capsys) -> Result:
    for k, v in env_extra.items():
        monkeypatch.setenv(k, v) if v else monkeypatch.delenv(k, raising=False)
    capsys.readouterr()
    t = time.perf_counter()
    rc = main(argv)
    cap = capsys.readouterr()
    return Result(rc, cap.out, cap.err, time.perf_counter() - t)


def err_lines(r: Result) -> list[str]:
    return [ln for ln in r.err.splitlines() if ln.strip()]


# -- the table ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(EXPECT))
def test_case(name, tmp_path, monkeypatch, capsys, hanging_hub):
    exp = EXPECT[name]
    d = tmp_path / "case"
    d.mkdir()
    try:
        run = bic.build(name, d)
        monkeypatch.chdir(d)
        if exp.subprocess:
            r = run_subprocess(run.argv, {**run.env, "HF_ENDPOINT": hanging_hub}, d)
        else:
            r = run_inprocess(run.argv, run.env, monkeypatch, capsys)
        lines = err_lines(r)
        assert "Traceback" not in r.err and "RuntimeWarning" not in r.err, r.err
        assert r.rc == exp.rc, r.err
        if exp.rc == 2:
            assert len(lines) == 1, r.err
            line = lines[0]
            assert line.startswith("ts2viz: error: ") and exp.says in line, line
            if exp.file is not None:
                where = line[len("ts2viz: error: "):].split(": ", 1)[0]
                assert where.split(", ")[0].endswith(exp.file), line
                assert (f", row {exp.row}" in where) if exp.row is not None else ", row" not in where, line
            if run.out is not None:
                assert not (run.out.exists() and run.out.is_file()), "output written"
                if run.out.parent.is_dir() and os.access(run.out.parent, os.R_OK):
                    assert not list(run.out.parent.glob(f".{run.out.name}.*")), "temporary file left"
            if run.marker is not None:
                assert not run.marker.exists(), "scoring started before the error"
        else:
            assert all(ln.startswith("ts2viz: warning: ") for ln in lines), r.err
            assert len(lines) == len(exp.warns), r.err
            for w in exp.warns:
                assert any(w in ln for ln in lines), (w, r.err)
            if run.out is not None and run.out.parent.is_dir():
                assert run.out.is_file()
        if name in LIMITS:
            secs, mb = LIMITS[name]
            assert r.seconds < secs and (r.rss_mb is None or r.rss_mb < mb), (r.seconds, r.rss_mb)
        check_result(name, d, run, r)
    finally:
        bic.cleanup(d)


def board(path: Path) -> pd.DataFrame:
    return pd.read_csv(path).set_index("metric")


def check_result(name: str, d: Path, run, r: Result) -> None:
    """What an accepted input must produce, beyond its warnings."""
    if name in ("metadata: UTF-8 BOM", "scores: UTF-8 BOM"):
        # the same numbers as from the file without the byte-order mark
        clean = d / "clean"
        bic.write_base(clean, images=False)
        assert main(bic.leaderboard(clean).argv) == 0
        pd.testing.assert_frame_equal(board(run.out), board(clean / "board.csv"))
    elif name == "scores: inf, -inf, 1e999":
        # exactly as if those three cells were empty
        empty = d / "empty.csv"
        empty.write_text("\n".join(bic.scores_cells({1: "", 5: "", 9: ""})()) + "\n")
        assert main(bic.leaderboard(d, scores=empty, out=d / "empty-board.csv").argv) == 0
        pd.testing.assert_frame_equal(board(run.out), board(d / "empty-board.csv"))
    elif name == "scores: all-NaN metric column":
        row = [ln for ln in r.out.splitlines() if ln.startswith("empty ")]
        assert len(row) == 1 and row[0].endswith("(no scores for any of the 14 images)"), r.out
        assert board(run.out).loc["empty"].isna().all() and board(run.out).loc["good"].notna()[["ord_avg"]].all()
    elif name == "scores: partial coverage (5 of 14 images)":
        assert "1 metric(s) scored on part of the images only" in r.out
    elif name == "metadata: unknown partition":
        b = board(run.out)
        # SEG 2 is a partition of its own: not dropped, and the others are still Synth
        assert {"ord_synthetic", "sep_synthetic"} <= set(b.columns) and np.isfinite(b.loc["good", "ord_synthetic"])
        assert np.isfinite(b.loc["good", "ord_synth"]) and "OrdSynthetic" in r.out
    elif name == "paper mode on a user dataset (leave-out)":
        # only the TS2 dataset loses its last SEG in paper mode
        assert "3 SEGs averaged" in r.out and "left out" not in r.out
    elif name == "score: 121-megapixel PNG in the dataset":
        sc = pd.read_csv(run.out).set_index("file_name").iloc[:, 0]
        assert np.isnan(sc["images/002-03.png"]) and sc.drop("images/002-03.png").notna().all()
        assert run.marker.exists()


# -- issue 14 item 10: --version, --out -, the umask ---------------------------------------------------

def test_version_and_stdout(tmp_path):
    import ts2viz

    r = run_subprocess(["--version"], {}, tmp_path)
    assert r.rc == 0 and r.out.strip() == f"ts2viz {ts2viz.__version__}"
    bic.write_base(tmp_path, images=False)
    r = run_subprocess(["leaderboard", "--dataset", "ds", "--scores", "scores.csv", "--out", "-"], {}, tmp_path)
    assert r.rc == 0 and r.err == "" and not (tmp_path / "-").exists()
    lines = r.out.splitlines()
    assert lines[0] == "metric,ord_avg,sep_avg,ord_synth,sep_synth,ord_nat,sep_nat,ord_real,sep_real"
    assert len(lines) == 2 and lines[1].startswith("good,")


def test_metametrics_and_score_to_stdout(tmp_path, monkeypatch, capsys):
    bic.write_base(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = run_inprocess(["metametrics", "--dataset", "ds", "--scores", "scores.csv", "--out", "-"], {}, monkeypatch, capsys)
    assert r.rc == 0 and not (tmp_path / "-").exists()
    df = pd.read_csv(io.StringIO(r.out))
    assert list(df.seg_id) == [0, 1, 2] and list(df.n_images) == [6, 4, 4] and list(df.n_scored) == [6, 4, 4]
    assert "wrote 3 rows" in r.err
    run = bic.score(tmp_path, out=Path("-"))
    run.argv[run.argv.index("--out") + 1] = "-"
    r = run_inprocess(run.argv, run.env, monkeypatch, capsys)
    assert r.rc == 0 and not (tmp_path / "-").exists()
    df = pd.read_csv(io.StringIO(r.out))
    assert list(df.columns) == ["file_name", run.argv[run.argv.index("--metric") + 1]] and len(df) == 14


@pytest.mark.parametrize("umask", [0o077, 0o022, 0o002])
def test_outputs_respect_the_umask(tmp_path, umask, monkeypatch, capsys):
    bic.write_base(tmp_path)
    monkeypatch.chdir(tmp_path)
    old = os.umask(umask)
    try:
        assert main(bic.leaderboard(tmp_path).argv) == 0
        assert main(["metametrics", "--dataset", "ds", "--scores", "scores.csv", "--out", "mm.csv"]) == 0
        run = bic.score(tmp_path, out=tmp_path / "s.parquet")
        monkeypatch.setenv("TS2VIZ_TEST_MARKER", str(run.marker))
        assert main(run.argv) == 0
    finally:
        os.umask(old)
    for f in ("board.csv", "mm.csv", "s.parquet"):
        assert stat.S_IMODE((tmp_path / f).stat().st_mode) == 0o666 & ~umask, f


# -- -q silences the model loader's progress bars too ---------------------------------------------------

@pytest.mark.slow
def test_quiet_silences_loading_weights_bar(tmp_path, monkeypatch, capsys):
    import shutil

    from tiny_models import tiny

    bic.write_base(tmp_path)
    monkeypatch.chdir(tmp_path)
    # fresh model folders: the engine keeps loaded metrics per spec, and only a load shows the bar
    for name in ("clip-a", "clip-b"):
        shutil.copytree(tiny("clip"), tmp_path / name)

    def argv(model, *extra):
        return ["score", "--metric", f"clipscore:{tmp_path / model}", "--dataset", "ds", "--out", "s.csv",
                "--no-cache", "--device", "cpu", *extra]

    r = run_inprocess(argv("clip-a"), {}, monkeypatch, capsys)          # without -q: the bars are there
    assert r.rc == 0 and "Loading weights" in r.err and "14/14" in r.err, r.err
    r = run_inprocess(argv("clip-b", "-q"), {}, monkeypatch, capsys)    # transformers already imported
    assert r.rc == 0 and r.err == "", r.err
    r = run_subprocess(argv("clip-b", "-q"), {}, tmp_path, timeout=300)  # imported inside the quiet run
    assert r.rc == 0 and r.err == "", r.err
    assert "wrote s.csv: 14 images" in r.out


# -- the same rules below the CLI: every way a score enters, and the helpers -------------------------

def test_non_finite_scores_in_code_are_missing_everywhere(tmp_path):
    import warnings

    from core_helpers import make_dataset
    from ts2viz import compute
    from ts2viz.errors import InputWarning
    from ts2viz.scores import Scores, read_scores, write_scores

    ds = make_dataset({0: {"0": 2, "1a": 2, "2": 2}, 1: {"0": 1, "1": 2}})
    good = np.array([0.9, 0.8, 0.5, 0.6, 0.1, 0.2, 0.7, 0.3, 0.4])
    raw = good.copy()
    raw[[1, 4]] = [np.inf, -np.inf]
    # Scores built in code: NaN in place of inf, one warning naming the image, the caller's array untouched
    with pytest.warns(InputWarning, match=r"2 non-finite score\(s\).*'m' 2 \(first at image '0-0-1.jpg'\)"):
        sc = Scores(ds.file_names, ["m"], raw.reshape(-1, 1))
    assert np.isinf(raw).sum() == 2 and np.isnan(sc.values[[1, 4], 0]).all()
    nan_version = good.copy()
    nan_version[[1, 4]] = np.nan
    ref = Scores(ds.file_names, ["m"], nan_version.reshape(-1, 1))
    # values changed in place after construction: aligned() (what compute reads) still hands out no inf
    sc.values[2, 0] = np.inf
    ref.values[2, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # no raw numpy warning
        with pytest.warns(InputWarning, match="1 non-finite"):
            a = compute(ds, sc, policy="spec").segs()
        b = compute(ds, ref, policy="spec").segs()
    pd.testing.assert_frame_equal(a, b)
    # Parquet: the same rule, rows are data rows
    pq = tmp_path / "s.parquet"
    write_scores(Scores(ds.file_names, ["m"], good.reshape(-1, 1)), pq)
    import pyarrow.parquet as papq

    t = papq.read_table(pq).to_pandas()
    t.loc[3, "m"] = np.inf
    t.to_parquet(pq)
    with pytest.warns(InputWarning, match=r"'m' 1 \(first at row 4\)"):
        back = read_scores(pq, dataset=ds)
    assert np.isnan(back.values[3, 0]) and np.isfinite(np.delete(back.values[:, 0], 3)).all()


def test_engine_turns_a_metrics_inf_into_nan_with_a_warning(tmp_path, monkeypatch):
    from ts2viz import engine
    from ts2viz.errors import InputWarning

    bic.write_base(tmp_path)
    (tmp_path / "infmetric.py").write_text(
        "def f(images, prompts):\n    return [float('inf') if i == 1 else 0.5 for i in range(len(images))]\n")
    with pytest.warns(InputWarning, match=r"4 image\(s\) could not be scored.*000-01.png: the metric returned inf"):
        sc = engine.score_dataset(tmp_path / "ds", [f"callable:{tmp_path / 'infmetric.py'}:f"],
                                  cache_dir=tmp_path / "cache", batch_size=4)
    col = sc.values[:, 0]
    assert np.isnan(col).sum() == 4 and not np.isinf(col).any()    # the second image of each batch of 4


def test_coverage_counts_by_hand():
    from core_helpers import make_dataset, make_scores
    from ts2viz.scores import coverage

    ds = make_dataset({0: {"0": 2, "1": 2}, 1: {"0": 1, "1": 1}, 2: {"0": 1, "1": 1}})
    # images: SEG 0: 4, SEG 1: 2, SEG 2: 2; metric a misses one image of SEG 0 and all of SEG 2
    a = {f: 1.0 for f in ds.file_names}
    a["0-0-1.jpg"] = np.nan
    a["2-0-0.jpg"] = a["2-1-0.jpg"] = np.nan
    b = {f: 1.0 for f in ds.file_names}
    cov = coverage(make_scores(ds, {"a": a, "b": b}), ds)
    assert [c.metric for c in cov] == ["a", "b"]
    assert (cov[0].n_images, cov[0].n_scored, cov[0].partial_segs, cov[0].unscored_segs) == (8, 5, [0], [2])
    assert list(cov[0].seg_scored) == [3, 2, 0] and cov[1].complete and not cov[0].complete
    assert cov[0].describe() == ("metric 'a' has scores for 5 of 8 images: 1 of 3 SEGs partly scored (SEG 0); "
                                 "1 of 3 SEGs not scored at all (SEG 2)")
    assert coverage(make_scores(ds, {"a": a}), ds, seg_ids=[1])[0].complete


def test_seg_ids_against_a_dataset_without_expanding():
    from core_helpers import make_dataset
    from ts2viz.dataset import MAX_SEG_IDS, parse_seg_ids
    from ts2viz.errors import InputError

    ds = make_dataset({s: {"0": 1} for s in (0, 2, 5, 9)})
    assert parse_seg_ids("0-5", ds) == [0, 2, 5]           # a range picks the ids the dataset has
    assert parse_seg_ids("9, 2-5, 2", ds) == [9, 2, 5]     # in the order given, each once
    assert parse_seg_ids(" ", ds) is None and parse_seg_ids(None, ds) is None
    for text, says in [("3", "no SEG with id 3"), ("6-8", "selects no SEG"), ("0-10", "goes beyond"),
                       ("-1-2", "goes beyond"), ("5-2", "reversed range"), ("1-x", "not an id")]:
        with pytest.raises(InputError, match=says):
            parse_seg_ids(text, ds)
    t = time.perf_counter()
    with pytest.raises(InputError, match="goes beyond"):
        parse_seg_ids("0-99999999999", ds)
    assert time.perf_counter() - t < 0.1
    assert parse_seg_ids("1-3,7") == [1, 2, 3, 7]          # no dataset: expanded, with a bound
    with pytest.raises(InputError, match="names more than"):
        parse_seg_ids(f"0-{MAX_SEG_IDS}")


def test_check_writable_refuses_what_a_rename_would_break(tmp_path):
    from ts2viz.atomic import check_writable
    from ts2viz.errors import InputError

    assert check_writable(tmp_path / "new" / "deeper" / "x.csv") == tmp_path / "new" / "deeper" / "x.csv"
    assert not (tmp_path / "new").exists() and list(tmp_path.iterdir()) == []   # no folder, no probe left
    with pytest.raises(InputError, match="not a regular file"):
        check_writable("/dev/null")                        # renaming over it would replace the device
    with pytest.raises(InputError, match="is a folder"):
        check_writable(tmp_path)


def test_hub_dataset_with_a_hanging_network_uses_the_cache_or_fails_fast(tmp_path, monkeypatch, hanging_hub):
    from core_helpers import _fake_hub_cache
    from hub_server import go_online
    from ts2viz.dataset import load_hf
    from ts2viz.hub import reachable
    from ts2viz.errors import InputError

    go_online(monkeypatch, hanging_hub)
    t = time.perf_counter()
    assert reachable(timeout=0.5) is False
    assert time.perf_counter() - t < 2
    cache = _fake_hub_cache(tmp_path / "hub")
    ds = load_hf("me/tiny", cache_dir=cache, probe_timeout=0.5)          # cached: loads without the network
    assert ds.hf_id == "me/tiny" and len(ds.rows) == 6
    t = time.perf_counter()
    with pytest.raises(InputError, match=r"cannot reach the Hugging Face hub .* within 0.5 s"):
        load_hf("me/not-cached", cache_dir=cache, probe_timeout=0.5)
    assert time.perf_counter() - t < 5
