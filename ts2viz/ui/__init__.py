"""The ts2viz inspection app (Gradio).

``build_app(data, scores)`` returns the (unlaunched) ``gr.Blocks`` and the keyword arguments its
``launch()`` needs (CSS, theme, the one folder it may serve files from). ``app.py`` at the repository
root is the command-line entry point. Gradio and plotly are imported only here, lazily.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .state import AppState

__all__ = ["AppState", "load_state", "build_app", "launch_kwargs"]


def load_state(data: str = "ts2", scores: Sequence[str] = (), *, cache_root: Path | None = None,
               fetch_images: bool | None = None, lower_is_better: Sequence[str] = ()) -> AppState:
    """Load a dataset (``ts2``, a folder or a hub id) and its scores tables into an :class:`AppState`.

    With ``data='ts2'`` and no ``scores`` the bundled published scores are loaded. Score files given
    in ``scores`` are added as ``published`` tables (operator-supplied, like the bundled one).
    """
    from ..dataset import load_dataset
    from ..scores import bundled_scores, read_scores

    ds = load_dataset(data)
    tables = []
    if str(data) == "ts2" and not scores:
        tables.append(("TS2 published scores", "published", bundled_scores()))
    for s in scores:
        tables.append((Path(s).name, "published", read_scores(s, dataset=ds, lower_is_better=lower_is_better)))
    if fetch_images is None:
        fetch_images = os.environ.get("HF_HUB_OFFLINE", "0") in ("", "0", "false", "False")
    return AppState.create(ds, tables, cache_root=cache_root, fetch_images=fetch_images)


def launch_kwargs(app: AppState) -> dict:
    """Arguments for ``demo.launch``: CSS, theme, and the cache folders the app may serve files from."""
    import gradio as gr

    from ..paths import assets_dir

    css_path = assets_dir() / "app.css"
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    theme = gr.themes.Default(
        primary_hue="indigo", secondary_hue="amber", neutral_hue="slate", radius_size="md",
        font=["Inter", "ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"])
    return dict(css=css, theme=theme, allowed_paths=[str(app.thumbs.folder), str(app.cache_root / "exports")],
                max_file_size="20mb", show_error=True, footer_links=["gradio"], ssr_mode=False)


def build_app(data: str = "ts2", scores: Sequence[str] = (), *, cache_root: Path | None = None,
              fetch_images: bool | None = None, app: AppState | None = None):
    """Build the app: returns ``(demo, launch_kwargs, state)``."""
    from .layout import build_blocks

    app = app or load_state(data, scores, cache_root=cache_root, fetch_images=fetch_images)
    if app.metrics:
        app.mm("paper")
    demo = build_blocks(app)
    return demo, launch_kwargs(app), app
