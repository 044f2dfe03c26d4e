"""Bad inputs for the command line, each built from tiny generated data in a folder.

Shared by ``tests/cli/test_bad_input.py`` (which asserts what the user must see) and
``benchmarks/bad_inputs.py`` (which runs every case against a source tree and prints what happened,
for before/after tables). Nothing here imports ts2viz: the same cases run against any version.

A case is a function ``build(d: Path) -> Run``: it writes its inputs under ``d`` (a fresh folder with the
base dataset in ``d/ds`` and good scores in ``d/scores.csv``) and returns the CLI arguments.
"""
from __future__ import annotations

import os
import struct
import textwrap
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# 3 SEGs, 14 images. SEG 1 has two error-0 images in one node; SEG 2 skips no level.
NODES = {0: ["0", "1a", "1a", "1b", "2", "2"], 1: ["0", "0", "1", "2"], 2: ["0", "1", "2a", "3"]}
PROMPTS = {0: "a red cube on a table", 1: "two dogs and a cat", 2: "a green tree with lights"}
HEADER = "id,target_prompt,file_name,image_source,rank"


def image_rows() -> list[tuple[int, str, str]]:
    """(seg id, file name, label) of the base dataset, in metadata order."""
    return [(s, f"images/{s:03d}-{k:02d}.png", lab) for s, labels in NODES.items() for k, lab in enumerate(labels)]


def metadata_lines(extra: dict[int, str] | None = None) -> list[str]:
    """metadata.csv lines; ``extra`` maps a data-row index to a string appended to that row."""
    out = [HEADER]
    for i, (s, fn, lab) in enumerate(image_rows()):
        out.append(f"{s},{PROMPTS[s]},{fn},SDX,{lab}" + (extra or {}).get(i, ""))
    return out


def score_of(seg: int, label: str, k: int) -> float:
    """A good metric: falls with the error count, small distinct offsets (no ties)."""
    return round(1.0 - 0.2 * int(label[0]) + 0.01 * k + 0.001 * seg, 6)


def scores_lines(metrics=("good",), keep: Callable[[int], bool] = lambda i: True) -> list[str]:
    out = ["file_name," + ",".join(metrics)]
    for i, (s, fn, lab) in enumerate(image_rows()):
        if keep(i):
            out.append(fn + "," + ",".join(str(score_of(s, lab, i)) for _ in metrics))
    return out


def write_base(d: Path, images: bool = True) -> Path:
    """The base dataset folder ``d/ds`` (metadata + 8x8 PNGs) and good scores ``d/scores.csv``."""
    ds = d / "ds"
    (ds / "images").mkdir(parents=True, exist_ok=True)
    (ds / "metadata.csv").write_text("\n".join(metadata_lines()) + "\n", encoding="utf-8")
    if images:
        for _, fn, lab in image_rows():
            (ds / fn).write_bytes(png_bytes(8, 8, shade=40 * int(lab[0])))
    (d / "scores.csv").write_text("\n".join(scores_lines()) + "\n", encoding="utf-8")
    return ds


def png_bytes(width: int, height: int, shade: int = 0, bit_depth: int = 8) -> bytes:
    """A valid greyscale PNG of any size, built without an image library (fast for huge sizes at 1 bit)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row_bytes = (width * bit_depth + 7) // 8
    row = b"\x00" + bytes([shade if bit_depth == 8 else 0]) * row_bytes
    comp = zlib.compressobj(1)
    data = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


# A user metric for `ts2viz score`: mean brightness; it leaves a marker file when it runs, so a test
# can tell whether scoring started.
USER_METRIC = textwrap.dedent("""
    import os
    import numpy as np
    def brightness(images, prompts):
        open(os.environ["TS2VIZ_TEST_MARKER"], "a").write("scored %d\\n" % len(images))
        return [float(np.asarray(im.convert("L"), dtype=np.float64).mean()) for im in images]
""")


@dataclass
class Run:
    """What a case runs: ``ts2viz ARGV`` with extra environment; ``out`` is the output it must not leave."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    out: Path | None = None
    marker: Path | None = None          # exists after the run iff scoring started


def leaderboard(d: Path, *extra: str, dataset: Path | None = None, scores: Path | None = None,
                out: Path | None = None) -> Run:
    out = out if out is not None else d / "board.csv"
    return Run(["leaderboard", "--dataset", str(dataset or d / "ds"), "--scores", str(scores or d / "scores.csv"),
                "--out", str(out), *extra], out=out)


def score(d: Path, *extra: str, out: Path | None = None, dataset: Path | None = None) -> Run:
    (d / "usermetric.py").write_text(USER_METRIC)
    out = out if out is not None else d / "scored.csv"
    marker = d / "scoring-started"
    return Run(["score", "--metric", f"callable:{d / 'usermetric.py'}:brightness", "--dataset",
                str(dataset or d / "ds"), "--out", str(out), "--cache", str(d / "cache"), "-q", *extra],
               env={"TS2VIZ_TEST_MARKER": str(marker)}, out=out, marker=marker)


# -- the cases ---------------------------------------------------------------------------------------

def _edges(text: str):
    def build(d: Path) -> Run:
        (d / "ds" / "edges.csv").write_text("id,parent,child\n" + text)
        return leaderboard(d)
    return build


def _nodes(text: str):
    def build(d: Path) -> Run:
        (d / "ds" / "nodes.csv").write_text(text)
        return leaderboard(d)
    return build


def _metadata(lines: Callable[[], list[str]] | None = None, raw: bytes | None = None):
    def build(d: Path) -> Run:
        p = d / "ds" / "metadata.csv"
        p.write_bytes(raw if raw is not None else ("\n".join(lines()) + "\n").encode())
        return leaderboard(d)
    return build


def _scores(lines: Callable[[], list[str]] | None = None, raw: bytes | None = None, *extra: str):
    def build(d: Path) -> Run:
        p = d / "bad.csv"
        p.write_bytes(raw if raw is not None else ("\n".join(lines()) + "\n").encode())
        return leaderboard(d, *extra, scores=p)
    return build


def _replace_row(i: int, new: str) -> Callable[[], list[str]]:
    def lines() -> list[str]:
        out = metadata_lines()
        out[i] = new
        return out
    return lines


def _with_partition(value_of: Callable[[int], str]) -> Callable[[], list[str]]:
    def lines() -> list[str]:
        out = [HEADER + ",partition"]
        for s, fn, lab in image_rows():
            out.append(f"{s},{PROMPTS[s]},{fn},SDX,{lab},{value_of(s)}")
        return out
    return lines


def _latin1_metadata() -> bytes:
    lines = metadata_lines()
    lines[3] = lines[3].replace("a red cube", "a red cube in a caf\u00e9")
    return ("\n".join(lines) + "\n").encode("latin-1")


def scores_cells(cells: dict[int, str], metrics=("good",)) -> Callable[[], list[str]]:
    """Scores lines with some data rows' first metric cell replaced (by data-row index)."""
    def lines() -> list[str]:
        out = scores_lines(metrics)
        for i, v in cells.items():
            fn, *vals = out[i + 1].split(",")
            out[i + 1] = ",".join([fn, v, *vals[1:]])
        return out
    return lines


def _all_nan() -> list[str]:
    out = ["file_name,good,empty"]
    for i, (s, fn, lab) in enumerate(image_rows()):
        out.append(f"{fn},{score_of(s, lab, i)},")
    return out


def _big_png(d: Path) -> Run:
    # 11,000 x 11,000 = 121 megapixels, 1 bit per pixel (a 2 MB file that decodes to 363 MB of RGB)
    (d / "ds" / "images" / "002-03.png").write_bytes(png_bytes(11_000, 11_000, bit_depth=1))
    return score(d)


def _out_case(path_of: Callable[[Path], Path], cmd: str = "leaderboard"):
    def build(d: Path) -> Run:
        out = path_of(d)
        return score(d, out=out) if cmd == "score" else leaderboard(d, out=out)
    return build


def _readonly(d: Path) -> Path:
    ro = d / "readonly"
    ro.mkdir()
    ro.chmod(0o555)
    return ro / "board.csv"


def _is_dir(d: Path) -> Path:
    (d / "adir.csv").mkdir()
    return d / "adir.csv"


def _under_file(d: Path) -> Path:
    (d / "afile").write_text("x")
    return d / "afile" / "board.csv"


def _cache_not_sqlite(d: Path) -> Run:
    (d / "cache.sqlite").write_text("this is not a database\n" * 100)
    r = score(d)
    i = r.argv.index("--cache")
    r.argv[i + 1] = str(d / "cache.sqlite")
    return r


def _with_metric(run: Run, spec: str) -> Run:
    run.argv[run.argv.index("--metric") + 1] = spec
    return run


def _hub_offline(d: Path) -> Run:
    # HF_ENDPOINT points at a server that accepts connections and never answers (set by the runner).
    return Run(["leaderboard", "--dataset", "nobody/no-such-dataset", "--scores", str(d / "scores.csv")],
               env={"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": ""})


def _partial(d: Path) -> Run:
    p = d / "partial.csv"
    # 5 of 14 images scored: SEG 0 partly (3 of 6), SEG 1 partly (2 of 4), SEG 2 not at all
    keep = {0, 2, 4, 6, 8}
    p.write_text("\n".join(scores_lines(keep=lambda i: i in keep)) + "\n")
    return leaderboard(d, scores=p)


def _leave_out(d: Path) -> Run:
    return leaderboard(d, "--mode", "paper")


def _seg_huge(d: Path) -> Run:
    return leaderboard(d, "--seg", "0-99999999")


def _seg_tags(text: str) -> Callable[[Path], Run]:
    def build(d: Path) -> Run:
        (d / "seg_tags.csv").write_text(text, encoding="utf-8")
        return leaderboard(d, "--slices", "topic", "--tags", str(d / "seg_tags.csv"))
    return build


CASES: dict[str, Callable[[Path], Run]] = {
    # edges.csv
    "edges: cycle 1a->2->1a": _edges("0,0,1a\n0,1a,2\n0,2,1a\n"),
    "edges: self-loop 1a->1a": _edges("0,0,1a\n0,1a,1a\n"),
    "edges: back to level 0 (2->0)": _edges("0,0,1a\n0,1a,2\n0,2,0\n"),
    "edges: same level 1a->1b": _edges("0,0,1a\n0,1a,1b\n0,1b,2\n"),
    "edges: row for a SEG that does not exist": _edges("0,0,1a\n7,0,1\n"),
    "edges: node that does not exist": _edges("0,0,1a\n0,1a,3z\n"),
    "edges: not an integer id": _edges("x,0,1a\n"),
    "edges: a node no walk reaches": _edges("0,0,1a\n0,1a,2\n"),
    # nodes.csv (error descriptions)
    "nodes: row for a SEG that does not exist": _nodes("id,rank,errors\n0,1a,no cube\n9,1,no dog\n"),
    "nodes: node that does not exist": _nodes("id,rank,errors\n0,1a,no cube\n1,1b,no dog\n"),
    "nodes: node listed twice": _nodes("id,rank,errors\n0,1a,no cube\n0,1a,cube is blue\n"),
    "nodes: malformed label": _nodes("id,rank,errors\n0,1a!,no cube\n"),
    "nodes: missing column": _nodes("id,rank\n0,1a\n"),
    # metadata.csv
    "metadata: not UTF-8 (Latin-1)": _metadata(raw=_latin1_metadata()),
    "metadata: UTF-8 BOM": _metadata(raw=("\ufeff" + "\n".join(metadata_lines()) + "\n").encode("utf-8")),
    "metadata: row with an extra field": _metadata(lambda: metadata_lines({4: ",extra"})),
    "metadata: row with a missing field": _metadata(_replace_row(5, "0,a red cube on a table,images/000-04.png,SDX")),
    "metadata: unknown partition": _metadata(_with_partition(lambda s: "Synthetic" if s == 2 else "Synth")),
    "metadata: SEG with two partitions": _metadata(lambda: _with_partition(lambda s: "Synth")()[:-1]
                                                   + ["2,a green tree with lights,images/002-03.png,SDX,3,Real"]),
    "metadata: duplicate file_name": _metadata(_replace_row(3, "0,a red cube on a table,images/000-00.png,SDX,1b")),
    "metadata: malformed node label": _metadata(_replace_row(4, "0,a red cube on a table,images/000-03.png,SDX,x1")),
    "metadata: SEG without an error-0 node": _metadata(lambda: [ln for ln in metadata_lines() if ln != metadata_lines()[11]]),
    "metadata: id not an integer": _metadata(_replace_row(2, "zero,a red cube on a table,images/000-01.png,SDX,1a")),
    "metadata: missing column": _metadata(lambda: ["id,target_prompt,file_name,rank", "0,p,images/000-00.png,0"]),
    "metadata: empty file": _metadata(raw=b""),
    # scores files
    "scores: inf, -inf, 1e999": _scores(scores_cells({1: "inf", 5: "-inf", 9: "1e999"})),
    "scores: duplicate metric column": _scores(lambda: scores_lines(("m", "m"))),
    "scores: partial coverage (5 of 14 images)": _partial,
    "scores: all-NaN metric column": _scores(_all_nan),
    "scores: row with an extra field": _scores(lambda: scores_lines()[:3] + [scores_lines()[3] + ",2"] + scores_lines()[4:]),
    "scores: not UTF-8": _scores(raw=("\n".join(scores_lines()) + "\n").replace("good", "g\u00f6\u00f6d").encode("latin-1")),
    "scores: UTF-8 BOM": _scores(raw=("\ufeff" + "\n".join(scores_lines()) + "\n").encode("utf-8")),
    "scores: unknown file_name": _scores(lambda: scores_lines() + ["images/nope.png,1"]),
    "scores: duplicate file_name": _scores(lambda: scores_lines() + [scores_lines()[1]]),
    "scores: non-numeric cell": _scores(scores_cells({2: "high"})),
    "scores: empty file": _scores(raw=b""),
    "scores: no file_name column": _scores(lambda: ["name,good", "images/000-00.png,1"]),
    "scores: no rows below the header": _scores(lambda: ["file_name,good"]),
    "scores: no metric columns": _scores(lambda: ["file_name,id", "images/000-00.png,0"]),
    "scores: a .parquet file that is not Parquet": lambda d: (d / "bad.parquet").write_text("file_name,good\n")
                                                             and leaderboard(d, scores=d / "bad.parquet"),
    "scores: the same metric in two files": lambda d: leaderboard(d, "--scores", str(d / "scores.csv")),
    # datasets
    "--dataset: no such folder": lambda d: leaderboard(d, dataset=d / "nope"),
    "--dataset: folder without metadata.csv": lambda d: (d / "empty").mkdir() or leaderboard(d, dataset=d / "empty"),
    # command-line arguments
    "--seg 1-0 (reversed range)": lambda d: leaderboard(d, "--seg", "1-0"),
    "--seg 0-99999999": _seg_huge,
    "--seg 999 (no such SEG)": lambda d: leaderboard(d, "--seg", "999"),
    "--seg abc": lambda d: leaderboard(d, "--seg", "abc"),
    "--metrics with an unknown metric": lambda d: leaderboard(d, "--metrics", "nosuch"),
    "--lower-is-better with an unknown metric": lambda d: leaderboard(d, "--lower-is-better", "nosuch"),
    "--policy with an unknown rule": lambda d: leaderboard(d, "--policy", "nosuch=1"),
    "--policy with an unknown value": lambda d: leaderboard(d, "--policy", "walk_weights=bogus"),
    "paper mode on a user dataset (leave-out)": _leave_out,
    # SEG tags and the leaderboard's slices
    "seg tags: SEG that does not exist": _seg_tags("seg_id,family,tag\n0,topic,a\n9,topic,b\n"),
    "seg tags: empty tag": _seg_tags("seg_id,family,tag\n0,topic,\n"),
    "seg tags: missing column": _seg_tags("seg_id,family\n0,topic\n"),
    "--slices with an unknown family": lambda d: leaderboard(d, "--slices", "topic"),
    "--slices with --clusters": lambda d: leaderboard(d, "--slices", "partition", "--clusters"),
    # output paths
    "--out in a read-only folder": _out_case(_readonly),
    "--out is a folder": _out_case(_is_dir),
    "--out under /proc": _out_case(lambda d: Path("/proc/ts2viz-board.csv")),
    "--out under /sys (read-only to root too)": _out_case(lambda d: Path("/sys/ts2viz-board.csv")),
    "--out inside a file": _out_case(_under_file),
    "score --out is a folder (before scoring)": _out_case(_is_dir, "score"),
    "score --out under /proc (before scoring)": _out_case(lambda d: Path("/proc/ts2viz-scores.csv"), "score"),
    "score --out with a wrong suffix": _out_case(lambda d: d / "scores.txt", "score"),
    # scoring
    "score: cache file is not SQLite": _cache_not_sqlite,
    "score: unknown metric family": lambda d: _with_metric(score(d), "nosuchfamily:x/y"),
    "score: model folder that does not exist": lambda d: _with_metric(score(d), f"clipscore:{d}/missing-model"),
    "score: --batch-size 0": lambda d: score(d, "--batch-size", "0"),
    "score: 121-megapixel PNG in the dataset": _big_png,
    "--dataset hub id, network hangs, HF_HUB_OFFLINE unset": _hub_offline,
}


def build(name: str, d: Path) -> Run:
    """Build case ``name`` in the empty folder ``d`` (base data first)."""
    write_base(d)
    return CASES[name](d)


def cleanup(d: Path) -> None:
    """Undo what a case did outside normal permissions (so the folder can be deleted)."""
    ro = d / "readonly"
    if ro.exists():
        ro.chmod(0o755)
    for p in (Path("/proc/ts2viz-board.csv"), Path("/proc/ts2viz-scores.csv")):
        if p.exists() and p.is_file():  # pragma: no cover - /proc never holds such files
            os.remove(p)
