"""The significance statistics are pure numpy: importing them loads no torch, gradio, transformers or scipy."""
import subprocess
import sys


def test_pure_numpy():
    code = ("import sys, ts2viz.significance, ts2viz.significance.ts2, ts2viz.significance.two_level, "
            "ts2viz.significance.correlation, ts2viz.metaeval.seg_pairwise; "
            "print(sorted(m for m in ('torch', 'gradio', 'transformers', 'scipy', 'open_clip') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
