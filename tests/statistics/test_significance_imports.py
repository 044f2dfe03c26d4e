"""The statistics are pure numpy: importing every module of ts2viz.statistics and of the meta-evaluation built on it
loads no torch, gradio, transformers, open_clip, plotly or scipy."""
import subprocess
import sys


def test_pure_numpy():
    code = ("import importlib, pkgutil, sys, ts2viz.statistics, ts2viz.metaeval\n"
            "names = [m.name for p in (ts2viz.statistics, ts2viz.metaeval)\n"
            "         for m in pkgutil.iter_modules(p.__path__, p.__name__ + '.')]\n"
            "for n in names:\n"
            "    importlib.import_module(n)\n"
            "assert 'ts2viz.statistics.bootstrap' in sys.modules and 'ts2viz.metaeval.seg_pairwise' in sys.modules\n"
            "print(sorted(m for m in ('torch', 'gradio', 'transformers', 'scipy', 'open_clip', 'plotly')\n"
            "             if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
