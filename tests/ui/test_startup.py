"""The app's start-up path (issue 43): what building it imports, and what its pickers are built from."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: what building the app must not import (model code, plotting, scipy: none is needed before a view draws)
HEAVY = ("torch", "transformers", "open_clip", "plotly", "scipy")


def test_building_the_app_imports_no_model_or_plotting_library(tmp_path):
    code = ("import sys\n"
            "from ts2viz.ui import build_app, public\n"
            "demo, kwargs, app = build_app(fetch_images=False)\n"
            "assert len(app.metrics) == 19 and 'gradio' in sys.modules\n"
            "demo, kwargs, app = build_app(access=public([]), fetch_images=False)\n"
            "demo.ts2viz_janitor.stop()\n"
            "assert app.access.public\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "TS2VIZ_CACHE": str(tmp_path / "cache"), "GRADIO_TEMP_DIR": str(tmp_path / "gradio")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_the_rating_set_pickers_list_what_the_loaded_sets_have():
    # the page builds the Human ratings pickers from the sets without their answer-derived metric columns
    from ts2viz.ui.callbacks.humaneval import sets

    for name in sets.gold_sets():
        light, full = sets.listed(name), sets.rated(name)
        assert light.rating_sets == full.rating_sets and light.default_rating_set == full.default_rating_set
        assert light.meta == full.meta
    light, full = sets.listed("tifa160"), sets.rated("tifa160")
    assert set(light.metrics) < set(full.metrics)      # the answer columns: only the full set has them
