"""The ts2viz inspection app (Gradio): what a deployer calls.

:func:`build_app` returns the (unlaunched) ``gr.Blocks``, the keyword arguments its ``launch()`` needs
(:func:`launch_kwargs`: CSS, theme, the folders it may serve files from, and in public mode the
guards in front of Gradio) and the shared :class:`AppState` (:func:`load_state` makes one).
``ts2viz app`` (:mod:`ts2viz.cli.app`; ``app.py`` calls it on a Space) is the command-line entry point; it
decides the trust level
(:class:`Access`, :func:`operator`, :func:`public`; :mod:`ts2viz.ui.serving.access`). Gradio and plotly
are imported only when an app is built, lazily.

State: :class:`AppState` holds what the operator loaded (shared by every session); each browser
session's uploads and live-scored metrics live in its own :class:`Workspace`
(:mod:`ts2viz.ui.state.sessions`), seen by the callbacks through an :class:`AppView`.

Rooms, from the top down (each imports only the rooms after it): :mod:`.page` (the Gradio page's layout
and queue guards), :mod:`.tabs` (one builder per tab), :mod:`.glue` (callback results to component updates,
errors to messages, shared links), :mod:`.callbacks` (one module of plain callbacks per tab), :mod:`.views`
(views as plain functions of data), :mod:`.state` (shared and per-session state), then :mod:`.images` (hub
downloads, thumbnails, late redraws) and :mod:`.serving` (trust level, guard, upload folder, jobs, GPU).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Sequence

from .serving.access import Access, Limits, operator, public
from .state.app_state import AppState, AppView
from .state.workspace import Workspace

__all__ = ["AppState", "AppView", "Workspace", "Access", "Limits", "operator", "public", "load_state",
           "build_app", "launch_kwargs"]


def load_state(data: str = "ts2", scores: Sequence[str] = (), *, cache_root: Path | None = None,
               fetch_images: bool | None = None, lower_is_better: Sequence[str] = (),
               access: Access | None = None) -> AppState:
    """Load a dataset and its scores tables into an :class:`AppState`.

    With ``data='ts2'`` and no ``scores`` the bundled published scores are loaded, their DSG columns
    accumulated as on the web leaderboard (``mean``), with the release's ``gated`` accumulation as a variant
    (:meth:`AppState.variant`, built on first use). Score files given in ``scores`` are added as
    ``published`` tables (operator-supplied, like the bundled one), shared by every session.

    Parameters
    ----------
    data : str, default "ts2"
        ``"ts2"`` (the bundled data), a dataset folder, or a Hugging Face dataset id
        (:func:`ts2viz.dataset.load_dataset`).
    scores : sequence of str, default ()
        Scores files (CSV or Parquet) of the dataset's images, and ``ts2`` for the bundled TS2 scores; read
        by :func:`ts2viz.scores.load_inputs`, as the CLI reads its ``--scores``.
    cache_root : pathlib.Path or None, default None
        The cache folder (meta-metrics, thumbnails, downloads); ``None``: :func:`ts2viz.paths.cache_dir`.
    fetch_images : bool or None, default None
        Download a hub dataset's images for the thumbnails; ``None``: unless offline mode is on
        (:func:`ts2viz.hub.offline`).
    lower_is_better : sequence of str, default ()
        Metrics of ``scores`` whose smaller values mean more faithful.
    access : Access or None, default None
        The trust level (``None``: operator mode).

    Returns
    -------
    AppState
        The shared state.

    Raises
    ------
    InputError
        For a dataset or scores file that does not load, a file naming images the dataset lacks, a metric
        in two files, or a ``lower_is_better`` name not in the scores.

    Examples
    --------
    >>> app = load_state("ts2", fetch_images=False)
    >>> len(app.dataset), len(app.metrics), app.variant_names, app.access.public
    (165, 19, ['mean', 'gated'], False)
    """
    from ..qa.records import BUNDLED_DSG_ACCUMULATION
    from ..scores import BUNDLED, bundled_scores, load_inputs

    bundled = str(data) == "ts2" and not scores
    inputs = load_inputs(data, None if bundled else list(scores), lower_is_better=lower_is_better,
                         dsg=BUNDLED_DSG_ACCUMULATION if bundled else None)
    ds = inputs.dataset
    tables = [("TS2 published scores" if name == BUNDLED else Path(name).name, "published", t)
              for name, t in inputs.tables]
    if fetch_images is None:
        from ..hub import offline

        fetch_images = not offline()
    app = AppState.create(ds, tables, cache_root=cache_root, fetch_images=fetch_images, access=access)
    if bundled:
        # The bundled DSG columns, accumulated the other way: built on first use, shared by every session.
        other = "gated" if BUNDLED_DSG_ACCUMULATION == "mean" else "mean"
        app.add_variant(other, lambda: [(f"TS2 published scores (DSG {other})", "published", bundled_scores(dsg=other))],
                        this=BUNDLED_DSG_ACCUMULATION)
    return app


#: what a screen reader hears when an output has been updated: Gradio's status tracker announces the
#: translation of ``common.complete``, a key its own translations lack, so it read out "common.complete"
#: (issue 40 item 17)
SCREEN_READER_TEXTS = {"en": {"common.complete": "Updated"}}


def launch_kwargs(app: AppState) -> dict:
    """Arguments for ``demo.launch``: CSS, theme, and what the app may serve and keep.

    Thumbnails are served as static files (public dataset images, never copied per request); nothing else
    of the server's is (``allowed_paths`` is empty). Uploads are capped at :data:`MAX_FILE_SIZE`; sessions at
    the workspace limit (Gradio keeps a little state per session too). Gradio sends the text of any
    exception to the page only in operator mode (``show_error``); in public mode only the app's own
    messages go out, and three ASGI middlewares stand in front of Gradio:
    :class:`~ts2viz.ui.serving.guard.ClientAddress` (who a request comes from),
    :class:`~ts2viz.ui.serving.uploads.UploadBudget` (what one client may upload) and
    :class:`~ts2viz.ui.serving.guard.EventGuard` (malformed and abusive event calls).

    Parameters
    ----------
    app : AppState
        The app (its trust level and thumbnail folder).

    Returns
    -------
    dict
        Keyword arguments of ``gr.Blocks.launch`` (``css``, ``theme``, ``allowed_paths``,
        ``max_file_size``, ``show_error``, ``footer_links``, ``ssr_mode``, ``state_session_capacity``, and
        in public mode ``app_kwargs`` with the middlewares).
    """
    import gradio as gr

    from ..paths import assets_dir

    css_path = assets_dir() / "app.css"
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    theme = gr.themes.Default(
        primary_hue="indigo", secondary_hue="amber", neutral_hue="slate", radius_size="md",
        font=["Inter", "ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"])
    gr.set_static_paths([str(app.thumbs.folder)])
    # show_error: Gradio sends the text of any exception to the page; in public mode only the app's own
    # messages (gr.Error) go out, never Python's text about a malformed call
    out = dict(css=css, theme=theme, allowed_paths=[], max_file_size=MAX_FILE_SIZE, show_error=not app.access.public,
               footer_links=["gradio"], ssr_mode=False, i18n=gr.I18n(**SCREEN_READER_TEXTS),
               state_session_capacity=max(100, 2 * app.access.limits.max_sessions))
    if app.access.public:
        # who a request comes from (ts2viz.ui.serving.guard.ClientAddress: never the client's own
        # X-Forwarded-For entries), what one client may put on the server's disk (ts2viz.ui.serving.uploads),
        # malformed and abusive event calls (ts2viz.ui.serving.guard.EventGuard)
        from starlette.middleware import Middleware

        from .serving.guard import ClientAddress, EventGuard, Guard
        from .serving.uploads import UploadBudget

        guard = getattr(app, "guard", None) or Guard()
        out["app_kwargs"] = {"middleware": [Middleware(ClientAddress, ipv6_prefix=app.access.limits.ipv6_prefix), Middleware(UploadBudget),
                                            Middleware(EventGuard, guard=guard)]}
    return out


#: the largest file Gradio's upload route takes (an image for live scoring; score files are capped lower)
MAX_FILE_SIZE = "20mb"


#: optional packages that Gradio looks for on every event call (matplotlib twice around each call, polars
#: for each table, bokeh for each plot); the app needs none of them
GRADIO_PROBED_PACKAGES = ("matplotlib", "polars", "bokeh")


def skip_probes_of_absent_packages(names: Sequence[str] = GRADIO_PROBED_PACKAGES) -> list[str]:
    """Make Gradio's per-call checks for packages that are not installed answer at once.

    A failed ``import`` is not remembered: each one searches every folder of ``sys.path`` again, which
    Gradio does several times per event call (about 5 % of the server's time under load). A ``None``
    entry in ``sys.modules`` is Python's documented way to say a module cannot be imported: ``import``
    raises ``ImportError`` and ``importlib.util.find_spec`` returns ``None`` without a search, which is
    what a search finds for an absent package anyway. Installed packages are left alone.

    Parameters
    ----------
    names : sequence of str, default GRADIO_PROBED_PACKAGES
        The packages.

    Returns
    -------
    list of str
        The names marked (those not installed and not imported).
    """
    import importlib.util
    import sys

    marked = []
    for name in names:
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            sys.modules[name] = None  # type: ignore[assignment]
            marked.append(name)
    return marked


def draw_board_bootstraps(workspaces) -> None:
    """Draw the shared leaderboard bootstrap of every mode, the first page's (``paper``) first.

    Parameters
    ----------
    workspaces : ts2viz.ui.state.sessions.Workspaces
        The sessions' data (the shared view is ``workspaces.view(None)``).
    """
    from ..metametrics.policy import MODES
    from .callbacks.uncertainty.resampled import board_bootstrap

    for mode in sorted(MODES, key=lambda m: m != "paper"):
        board_bootstrap(workspaces.view(None), mode)


def build_app(data: str = "ts2", scores: Sequence[str] = (), *, cache_root: Path | None = None,
              fetch_images: bool | None = None, app: AppState | None = None, access: Access | None = None):
    """Build the app, ready to launch.

    Before the first visitor: both modes' meta-metrics are computed, their leaderboard bootstraps drawn
    beside the page build (:func:`draw_board_bootstraps`, in a thread; the first page load waits for the
    ``paper`` one if it is not drawn yet), a hub
    dataset's first images are fetched in the background (``TS2VIZ_PREFETCH``), and the queue is set up
    (view events one lane, heavy work in lanes of their own; :func:`ts2viz.ui.page.queue_guard.install`).
    The sessions' downloads are written into Gradio's upload folder (served from there, never copied). In
    public mode visitors' files must come from that folder, uploads older than the upload TTL are deleted,
    no queued event can be called around the queue, and a :class:`~ts2viz.ui.serving.guard.Guard` refuses
    malformed and abusive calls.

    Parameters
    ----------
    data : str, default "ts2"
        The dataset (as :func:`load_state`), when ``app`` is not given.
    scores : sequence of str, default ()
        Scores files, when ``app`` is not given.
    cache_root : pathlib.Path or None, default None
        The cache folder, when ``app`` is not given.
    fetch_images : bool or None, default None
        Download a hub dataset's images, when ``app`` is not given.
    app : AppState or None, default None
        A state already loaded (:func:`load_state`); ``None``: loaded here.
    access : Access or None, default None
        The trust level, when ``app`` is not given.

    Returns
    -------
    demo : gradio.Blocks
        The page, its queue set up (not launched).
    launch_kwargs : dict
        What ``demo.launch`` needs (:func:`launch_kwargs`).
    state : AppState
        The shared state (its ``access.upload_root`` set to Gradio's upload folder).

    Raises
    ------
    InputError
        For data or scores that do not load (when ``app`` is not given).

    Examples
    --------
    A public app offering one metric for live scoring (what ``app.py`` does on a Hugging Face Space):

    >>> demo, kwargs, app = build_app(access=public(["clipscore:openai/clip-vit-base-patch32"]),
    ...                               fetch_images=False)
    >>> app.access.public, app.access.choices(), kwargs["show_error"], kwargs["allowed_paths"]
    (True, ['clipscore:openai/clip-vit-base-patch32'], False, [])
    >>> demo.ts2viz_janitor.stop()

    Then ``demo.launch(server_name="0.0.0.0", server_port=7860, **kwargs)`` serves it.
    """
    # Gradio's queue recomputes a pandas summary of its last 10,000 events after every event (for
    # its monitoring page): with many visitors that is most of the server's time and a growing heap.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000000")
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "500")
    skip_probes_of_absent_packages()
    import gradio as gr

    from .glue.file_scan import skip_file_scan_of_fileless_outputs

    # Gradio walks every output's value looking for files (a third of a warm explorer view): not for
    # tables, plots, texts and dropdowns, which hold none
    skip_file_scan_of_fileless_outputs()

    from .page.layout import build_blocks
    from .state.sessions import Workspaces

    app = app or load_state(data, scores, cache_root=cache_root, fetch_images=fetch_images, access=access)
    upload_root = gr.utils.get_upload_folder()
    app.access = dataclasses.replace(app.access, upload_root=upload_root)
    if app.access.public and app.disk.per_session is None:     # made public after it was loaded
        from .state.disk import DiskLedger

        app.disk = DiskLedger.from_env(True)
    if app.metrics:
        # both modes' meta-metrics before the first visitor (a few tenths of a second each), not in the
        # first visitor's mode switch, with everyone else's views queued behind it
        from ..metametrics.policy import MODES

        for mode in MODES:
            app.mm(mode)
    if app.thumbs.fetcher is not None:
        # images of a hub dataset, fetched ahead of the first visitor (TS2VIZ_PREFETCH: "first", the
        # default, the first view every visitor sees; "all", every thumbnail; "off"), behind the visitors'
        # own images and within TS2VIZ_PREFETCH_MB; in a thread, as finding what is cached takes a moment
        import threading

        from .images.image_refresh import warm_start

        threading.Thread(target=warm_start, args=(app, os.environ.get("TS2VIZ_PREFETCH", "first")), daemon=True,
                         name="ts2viz-prefetch").start()
    workspaces = Workspaces(app, exports_root=Path(upload_root))
    if app.metrics:
        # the leaderboard's intervals too (a bootstrap, ~0.4 s a mode; else drawn by the first page load and
        # by the first mode switch, with every visitor's views queued behind it), in a thread beside the
        # page build and the launch: the page's first load event (paper mode) waits for it only if it is
        # not drawn yet (a bootstrap is drawn once: board_bootstrap), the matrix products run beside Python
        import threading

        threading.Thread(target=draw_board_bootstraps, args=(workspaces,), daemon=True,
                         name="ts2viz-bootstrap").start()
    demo = build_blocks(app, workspaces=workspaces)
    if app.access.public:
        # Uploads belong to no session (two visitors' identical files share a path): everything in the
        # upload folder goes after a while, but the open sessions' downloads (see ts2viz.ui.serving.uploads).
        from .serving.uploads import UPLOAD_TTL_S, UploadJanitor

        ttl = int(UPLOAD_TTL_S)
        demo.delete_cache = (max(1, min(60, ttl // 4)), ttl)     # Gradio's own files, by its own rule
        demo.ts2viz_janitor = UploadJanitor(upload_root, ttl, keep=workspaces.export_dirs)
        demo.ts2viz_janitor.start()
    # Queue positions are sent to waiting visitors once a second, not to all of them whenever any
    # event starts (that costs waiting x events messages under load). In public mode no queued event
    # can be called around the queue (Gradio opens its direct route to every event off a Space).
    demo.queue(status_update_rate=1.0, api_open=False if app.access.public else None)
    from .page.queue_guard import install

    if app.access.public:
        from .serving.guard import Guard

        app.guard = Guard(jobs=workspaces.jobs)
    install(demo, getattr(app, "guard", None), public=app.access.public, limits=app.access.limits)
    return demo, launch_kwargs(app), app
