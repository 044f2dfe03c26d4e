"""Run every bad-input case of ``tests/support/bad_input_cases.py`` through the CLI of a source tree; print a table.

    python benchmarks/bad_inputs.py [--src DIR] [--only SUBSTRING] [--timeout S]

``--src`` is the root of a ts2viz checkout (default: this one), so the same cases can be run against an
older version (``git archive COMMIT | tar -x -C /tmp/old``) for before/after tables. Not pass/fail: the
assertions are in ``tests/cli/test_bad_input.py``. For each case: exit code, stderr lines, whether a
traceback was printed, whether an output file was left, whether scoring started, wall time, peak RSS
(from ``/usr/bin/time -v`` when present) and the first stderr line.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

import bad_input_cases as bic  # noqa: E402


def blackhole() -> int:
    """A local TCP server that accepts connections and never answers: a network that hangs."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    held = []

    def loop():
        while True:
            c, _ = srv.accept()
            held.append(c)

    threading.Thread(target=loop, daemon=True).start()
    return srv.getsockname()[1]


def run_case(name: str, src: Path, port: int, timeout: float) -> dict:
    d = Path(tempfile.mkdtemp(prefix="ts2viz-bad-"))
    try:
        run = bic.build(name, d)
        env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "HF_ENDPOINT": f"http://127.0.0.1:{port}", **run.env}
        for k, v in run.env.items():
            if v == "":
                env.pop(k, None)
        cmd = [sys.executable, "-m", "ts2viz", *run.argv]
        timed = Path("/usr/bin/time").exists()
        if timed:
            cmd = ["/usr/bin/time", "-v", "-o", str(d / "time.txt"), *cmd]
        t = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=d, env=env, timeout=timeout)
            rc, err, out = r.returncode, r.stderr, r.stdout
        except subprocess.TimeoutExpired as e:
            rc, err, out = "timeout", (e.stderr or b"").decode(errors="replace"), ""
        wall = time.perf_counter() - t
        rss = None
        if timed and (d / "time.txt").exists():
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", (d / "time.txt").read_text())
            rss = int(m.group(1)) / 1024 if m else None
        lines = [ln for ln in err.splitlines() if ln.strip()]
        return {"case": name, "rc": rc, "lines": len(lines), "traceback": "Traceback" in err,
                "out_left": bool(run.out and run.out.exists() and run.out.is_file()),
                "scored": bool(run.marker and run.marker.exists()), "wall": wall, "rss": rss,
                "first": lines[0] if lines else "", "last": lines[-1] if lines else "", "stdout": out}
    finally:
        bic.cleanup(d)
        shutil.rmtree(d, ignore_errors=True)


def short(text: str, n: int = 150) -> str:
    text = re.sub(r"/tmp/ts2viz-bad-\w+/", "", text).replace("|", "\\|")
    return text if len(text) <= n else text[: n - 1] + "…"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(HERE.parent))
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=150)
    args = ap.parse_args()
    src = Path(args.src).resolve()
    port = blackhole()
    print(f"source: {src}\n")
    print("| case | exit | stderr lines | traceback | output left | scoring ran | s | RSS MB | stderr (first line; last if a traceback) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in bic.CASES:
        if args.only and args.only not in name:
            continue
        r = run_case(name, src, port, args.timeout)
        msg = r["last"] if r["traceback"] else r["first"]
        if r["rc"] == 0 and not r["lines"]:
            msg = "(stdout) " + " / ".join(ln for ln in r["stdout"].splitlines() if "SEGs averaged" in ln or "no scores" in ln)
        rss = f"{r['rss']:.0f}" if r["rss"] is not None else "?"
        print(f"| {name} | {r['rc']} | {r['lines']} | {'yes' if r['traceback'] else 'no'} | "
              f"{'yes' if r['out_left'] else 'no'} | {'yes' if r['scored'] else 'no'} | {r['wall']:.1f} | {rss} | "
              f"{short(msg)} |", flush=True)


if __name__ == "__main__":
    main()
