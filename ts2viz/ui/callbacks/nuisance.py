"""The nuisance test in the app: the explorer's Nuisance tab and the leaderboard's stability table.

The tab shows a stress-tested metric's node distributions with the transformed copies overlaid, the
walk plot with the nuisance band, the node gallery with each original and transformed image and both
scores, and runs the test live on the current SEG. Plain functions of data (see
:mod:`ts2viz.ui.callbacks`).

Where results come from (kept by :mod:`ts2viz.ui.state.nuisance_session`): the operator's long tables
(``python app.py --nuisance FILE``, from ``ts2viz nuisance``), shared by every session, their
statistics computed once per mode; and a session's live runs (:func:`live_nuisance`), one SEG per call,
kept with the session (dropped when it ends) and merged per metric across SEGs.

A live run is a model call under the caps of public mode, as live scoring is: the metric must be one
the operator offered (named by its display name), the server picks the device, one call covers the
current SEG only, the transforms are chosen from :data:`PUBLIC_TRANSFORMS` (at most
:data:`MAX_TRANSFORMS`), a session keeps results for :data:`MAX_SESSION_METRICS` metrics at most, and the
model runs in the app's one model queue (:func:`ts2viz.ui.serving.gpu.on_gpu` on a ZeroGPU Space).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ...display import md_text, plural
from ...errors import InputError
from ...nuisance.run import MetricRun, NuisanceScores
from ...nuisance.hooks import ImageHook
from ...nuisance.transforms import DEFAULT, parse, parse_list
from ..serving.jobs import batch_size, checkpoint
from ..state.app_state import AppView
from ..state.nuisance_session import metric_choices, run_of, session_results, shared_results
from .common import get_seg

#: the transforms a visitor may choose in public mode (canonical specs; an exact match is required)
PUBLIC_TRANSFORMS = tuple(DEFAULT) + ("hflip", "roundtrip:quality=95", "resize:side=512", "contrast:factor=1.2",
                                      "saturation:factor=1.5", "period", "spaces", "blank:value=128", "static")
#: transforms one live run may use
MAX_TRANSFORMS = 8
#: metrics a session may keep live nuisance results for (public mode; the operator's own tool: more)
MAX_SESSION_METRICS = 4
#: resamples of the bootstrap over a session's few SEGs (the shared results use the CLI's 10,000)
SESSION_RESAMPLES = 2000
ALL_TRANSFORMS = "all transforms"
NO_RESULTS = ("_No nuisance results yet. Run the test on this SEG below (a metric from the library and a few "
              "transforms), or start the app with `--nuisance FILE` (the long table of `ts2viz nuisance`)._")
#: the Leaderboard's stability table without results (no SEG or run button there: they are in the explorer)
NO_STABILITY = ("_No nuisance results yet. Run the nuisance test on a SEG in the SEG explorer's Nuisance tab, or "
                "start the app with `--nuisance FILE` (the long table of `ts2viz nuisance`)._")
#: what the tables of nuisance results show while there are none (plain text: a table cell)
NO_RESULTS_TABLE = "No nuisance results for this metric yet (see the note above)"


def transform_choices(access) -> list[str]:
    """The transforms a visitor may pick for a live run (the tab's transform picker).

    Parameters
    ----------
    access : ts2viz.ui.serving.access.Access
        The app's trust level.

    Returns
    -------
    list of str
        Transform specs: :data:`PUBLIC_TRANSFORMS` in public mode, else the default set and every kind but
        ``mismatch`` (a live run tests one SEG: there is no other SEG's prompt to draw; ``ts2viz nuisance
        --baselines`` runs it over a dataset).
    """
    if access.public:
        return list(PUBLIC_TRANSFORMS)
    from ...nuisance.transforms import kinds

    return list(dict.fromkeys(list(DEFAULT) + [parse(k.name).spec for k in kinds() if k.name != "mismatch"]))


def check_transforms(view, transforms) -> list:
    """The chosen transforms, checked.

    In public mode each must be one of :data:`PUBLIC_TRANSFORMS` exactly (nothing is parsed before that).

    Parameters
    ----------
    view : AppView
        The session's view.
    transforms : str or list of str
        The picker's value (a list, or specs separated by commas).

    Returns
    -------
    list of ts2viz.nuisance.transform_types.Transform
        The transforms.

    Raises
    ------
    InputError
        For none, more than :data:`MAX_TRANSFORMS`, one not offered (public mode), or one that does not
        parse.
    """
    items = [str(t).strip() for t in (transforms if isinstance(transforms, (list, tuple)) else
                                      str(transforms or "").split(",")) if str(t).strip()]
    if not items:
        raise InputError("choose at least one transform")
    if len(items) > MAX_TRANSFORMS:
        raise InputError(f"at most {MAX_TRANSFORMS} transforms at a time")
    if view.access.public:
        allowed = set(PUBLIC_TRANSFORMS)
        if any(t not in allowed for t in items):
            raise InputError("that transform is not offered here; choose from the list")
    return parse_list(items)


def live_nuisance(view: AppView, spec, transforms, seg_id, device: str | None = None, progress=None,
                  seed: int = 0) -> str:
    """Run the nuisance test on the current SEG with a library metric: the tab's "Run" button (a model call).

    The results join the session (its Nuisance tab and stability table) and the metric's clean scores its
    leaderboard, as live scoring's do; the page then redraws the header, the leaderboard and its stability
    table. The caps of public mode apply (see the module docstring); a cancel stops it between batches.

    Parameters
    ----------
    view : AppView
        The session's view.
    spec : str or list of str
        One metric (public mode: an offered metric's display name).
    transforms : str or list of str
        The transforms (:func:`check_transforms`).
    seg_id : int or str
        The current SEG.
    device : str or None, default None
        The visitor's device choice (operator mode only).
    progress : callable or None, default None
        Gradio's progress callback.
    seed : int, default 0
        The seed of random transforms.

    Returns
    -------
    str
        The status line (Markdown).

    Raises
    ------
    InputError
        For more or fewer than one metric, one not offered (public mode), bad transforms, a session at its
        caps, images that cannot be had, a metric that does not load, or no image scored.
    """
    from ...nuisance.run import run
    from ...scores import Scores
    from ..serving.gpu import on_gpu
    from .live import load_metric, parse_specs, require_images

    specs = parse_specs(spec)
    if len(specs) != 1:
        raise InputError("choose one metric for the nuisance test")
    spec = view.access.metric_spec(specs[0])
    shown = view.access.display_name(spec)
    ts = check_transforms(view, transforms)
    seg = get_seg(view, seg_id)
    dev = view.access.device(device)
    store = session_results(view, create=True)
    if store is None:
        raise InputError("this session cannot hold results; reload the page")
    if view.access.public and shown not in store.runs and len(store.runs) >= MAX_SESSION_METRICS:
        raise InputError(f"a session may keep nuisance results for at most {MAX_SESSION_METRICS} metrics; reload "
                         "the page to start a new session")
    if not view.app.has(shown):
        view.workspace.require_room([shown])
    require_images(view, [seg.id])          # in a second, before a model is loaded
    if progress is not None:
        progress(0.0, desc=f"{shown}: loading the model")
    metric = load_metric(view, spec, dev)
    labels = [f"{metric.spec} [clean]"] + [f"{metric.spec} [{t.spec}]" for t in ts]

    def prog(label, done, total):
        # between batches: a cancelled run stops here, and the model's turn may pass, but not after the last
        # (ts2viz.ui.serving.jobs)
        checkpoint(turn=done < total or label != labels[-1])
        if progress is None:
            return
        try:
            k = labels.index(label) if label in labels else 0
            frac = (k + (done / total if total else 1.0)) / len(labels)
            progress(frac, desc=f"{label.split(' [')[-1].rstrip(']')}: {done}/{total} images")
        except Exception:     # noqa: BLE001 - a progress bar never stops a run
            pass

    ns = on_gpu(run)(view.dataset, metric, ts, seed=seed, seg_ids=[seg.id], batch_size=batch_size(metric),
                     cache_dir=view.cache_root, progress=prog)
    r = ns.runs[0]
    if not np.isfinite(r.clean).any():
        raise InputError(f"{shown}: no image of SEG {seg.id} could be scored")
    store.add(r)
    if not view.app.has(r.metric):      # an operator's metric keeps its shared scores
        lib = set() if r.higher_is_better else {r.metric}
        view.add_table(Scores(list(r.file_names), [r.metric], r.clean[:, None], lib, source="live"), kind="live",
                       name=f"live:{r.metric}")
    moved = [t.spec for k, t in enumerate(ts) if np.nanmax(np.abs(r.transformed[:, k] - r.clean), initial=0) > 0]
    return (f"Stress-tested {md_text(r.metric)} on SEG {seg.id} ({plural(len(r.file_names), 'image')}) under "
            f"{plural(len(ts), 'transform')}; {len(moved)} moved its scores. The results are in the plots below "
            "and the leaderboard's stability table.")


# -- one SEG ------------------------------------------------------------------------------------------

def _by_node(seg, run: MetricRun, values: np.ndarray) -> dict[str, np.ndarray]:
    idx = {f: i for i, f in enumerate(run.file_names)}
    out = {}
    for n in seg.nodes:
        out[n.label] = np.array([values[idx[im.file_name]] if im.file_name in idx else np.nan for im in n.images])
    return out


def seg_statistics(seg, run: MetricRun, mode: str = "paper"):
    """The SEG's statistics under each transform (a small table for people).

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.
    run : ts2viz.nuisance.run.MetricRun
        The metric's nuisance results.
    mode : str, default "paper"
        The meta-metric policy preset (the walks).

    Returns
    -------
    pandas.DataFrame
        One row per transform: NSR, flip %, up %, median |change| and the SEG's step.
    """
    import pandas as pd

    from ...metametrics.structure import seg_structure
    from ...nuisance.summary import seg_nuisance

    st = seg_structure(seg, mode)
    idx = {f: i for i, f in enumerate(run.file_names)}
    rows = [idx.get(f, -1) for f in st.file_names]
    clean = np.array([run.clean[i] if i >= 0 else np.nan for i in rows])
    tr = np.array([run.transformed[i] if i >= 0 else np.full(len(run.transforms), np.nan) for i in rows])
    r = seg_nuisance(st, seg.adjacent_pairs(), clean, tr.reshape(len(rows), -1), run.higher_is_better)

    def ratio(v, undefined):
        if undefined:
            return "0/0"
        return "–" if np.isnan(v) else ("inf" if np.isinf(v) else f"{v:.3f}")

    pct = lambda v: "–" if np.isnan(v) else f"{100 * v:.1f}"     # noqa: E731
    return pd.DataFrame({
        "transform": [t.spec + (" †" if t.changes_meaning else " *" if t.degrading else "") for t in run.transforms],
        "NSR": [ratio(v, u) for v, u in zip(r["ratio"], r["undefined"])],
        "flip %": [pct(v) for v in r["flip_rate"]], "up %": [pct(v) for v in r["up_share"]],
        "median |Δ|": ["–" if np.isnan(v) else f"{v:.4f}" for v in r["median_change"]],
        "step": ["–" if np.isnan(v) else f"{v:.4f}" for v in r["step"]]})


def seg_view(view: AppView, metric, seg_id, transform=None, walk=None, node=None, mode: str = "paper") -> dict:
    """Everything the Nuisance tab shows for one SEG.

    Called while the tab is open: on opening it, and when the SEG, node, walk, metric A, the chosen metric or
    transform, the mode or the figure format change.

    Parameters
    ----------
    view : AppView
        The session's view.
    metric : str or None
        The stress-tested metric (default: the first with results).
    seg_id : int or str
        The SEG.
    transform : str or None, default None
        The transform emphasised on the walk plot and shown in the gallery (default: the run's first).
    walk : str or int or None, default None
        The walk of the walk plot.
    node : str or None, default None
        The node of the gallery (default: the SEG's first).
    mode : str, default "paper"
        The meta-metric policy preset.

    Returns
    -------
    dict
        ``note`` (Markdown), ``metrics`` and ``metric`` (the picker), ``transforms`` and ``transform``,
        ``dist`` and ``walk`` (figures, or ``None``), ``table`` (this SEG's statistics), ``gallery``
        (original and transformed images with both scores).

    Raises
    ------
    InputError
        For a SEG the dataset lacks.
    """
    from ...figures import nuisance_overlay as NF
    from ...figures.style import empty_figure
    from ...metametrics.structure import seg_structure
    from ...metametrics.walks import walk_stats

    seg = get_seg(view, seg_id)
    metrics = metric_choices(view)
    if metric not in metrics:
        metric = metrics[0] if metrics else None
    run, source = run_of(view, metric) if metric else (None, "")
    out = {"metrics": metrics, "metric": metric, "transforms": [], "transform": None, "dist": None, "walk": None,
           "table": None, "gallery": [], "note": NO_RESULTS}
    if run is None:
        return out
    specs = [t.spec for t in run.transforms]
    transform = transform if transform in specs else specs[0]
    out.update(transforms=specs, transform=transform)
    files = [im.file_name for n in seg.nodes for im in n.images]
    have = set(run.file_names)
    if not any(f in have for f in files):
        out["note"] = (f"_{md_text(metric)} has nuisance results ({'this session' if source == 'session' else 'shared'}), "
                       f"but none for SEG {seg.id}: run the test on this SEG below._")
        out["dist"] = out["walk"] = empty_figure(f"No nuisance results for SEG {seg.id}")
        return out
    levels = {n.label: n.level for n in seg.nodes}
    node_files = {n.label: [im.file_name for im in n.images] for n in seg.nodes}
    clean = _by_node(seg, run, run.clean)
    trans = {t: _by_node(seg, run, run.transformed[:, k]) for k, t in enumerate(specs)}
    meaning = [t.spec for t in run.transforms if t.changes_meaning]
    lib = not run.higher_is_better
    out["dist"] = NF.node_distributions(levels, clean, trans, metric=metric, lower_is_better=lib, node_files=node_files,
                                        changes_meaning=meaning)
    st = seg_structure(seg, mode)
    aligned = np.array([[clean[n.label][k] for n in seg.nodes for k in range(len(n.images))]])
    sign = -1.0 if lib else 1.0
    ords = walk_stats(st, sign * aligned, mode).ord[0]
    w = None
    try:
        w = int(str(walk)) if walk not in (None, "", "—") else None
    except ValueError:
        w = None
    out["walk"] = NF.walk_band(levels, clean, trans, st.walks, ords, metric=metric, walk=w, selected=transform,
                               lower_is_better=lib, changes_meaning=meaning)
    out["table"] = seg_statistics(seg, run, mode)
    node = node if node in seg.labels else seg.labels[0]
    out["gallery"] = gallery(view, seg, node, run, transform)
    where = "this session's live run" if source == "session" else "the operator's results"
    out["note"] = (f"**{md_text(metric)}** under {plural(len(specs), 'transform')} ({where}; seed {run.seed}). "
                   f"* degrading, † changes meaning. The gallery shows node **{md_text(node)}**: each image, then its "
                   f"copy under **{md_text(transform)}**, with both scores.")
    out["node"] = node
    return out


def transformed_image(view, file_name: str, transform: str, seed: int = 0) -> Path | None:
    """A gallery-sized PNG of one dataset image under an image transform, made once and kept with the thumbnails.

    The transform is applied to the full image as the metric saw it, then reduced for display.

    Parameters
    ----------
    view : AppView
        The session's view.
    file_name : str
        The image.
    transform : str
        An image transform's spec.
    seed : int, default 0
        The seed of a random transform.

    Returns
    -------
    pathlib.Path or None
        The PNG; ``None`` when the image is not on this machine.
    """
    from PIL import Image

    from ...dataset import cached_image
    from ...engine.batches import MAX_IMAGE_PIXELS
    from ..images.thumbs import GALLERY

    t = parse(transform)
    key = hashlib.sha1(f"{file_name}|{t.cache_key(seed)}|{GALLERY}".encode()).hexdigest()
    out = Path(view.thumbs.folder) / "nuisance" / f"{key}.png"
    if out.is_file():
        return out
    src = view.dataset.image_path(file_name) or cached_image(view.dataset, file_name)
    if src is None:
        return None
    try:
        with Image.open(src) as im:
            if im.size[0] * im.size[1] > MAX_IMAGE_PIXELS:
                return None
            im.load()
            rgb = im.convert("RGB")
        shown = ImageHook(t.spec, seed)(rgb, src)
        shown.thumbnail((GALLERY, GALLERY), Image.Resampling.LANCZOS)
    except Exception:       # noqa: BLE001 - an unreadable image: no tile
        return None
    from ...atomic import atomic_path

    with atomic_path(out) as tmp:
        shown.save(tmp, format="PNG")
    return out


def gallery(view, seg, node: str, run: MetricRun, transform: str) -> list[tuple[str, str]]:
    """The Nuisance tab's gallery: each image of a node (clean score), then its transformed copy.

    The copy is captioned with the transform's score and the change. A text transform shows the same image,
    captioned with the prompt.

    Parameters
    ----------
    view : AppView
        The session's view.
    seg : ts2viz.seg.SEG
        The SEG.
    node : str
        The node.
    run : ts2viz.nuisance.run.MetricRun
        The metric's nuisance results.
    transform : str
        The transform's spec.

    Returns
    -------
    list of (str, str)
        (image path, caption) pairs.
    """
    from ..images.thumbs import GALLERY

    t = parse(transform)
    k = [x.spec for x in run.transforms].index(t.spec)
    idx = {f: i for i, f in enumerate(run.file_names)}
    fmt = lambda v: "–" if not np.isfinite(v) else f"{v:.4f}"       # noqa: E731
    out = []
    for im in seg.node(node).images:
        i = idx.get(im.file_name)
        c = run.clean[i] if i is not None else np.nan
        v = run.transformed[i, k] if i is not None else np.nan
        name = Path(im.file_name).name
        orig = str(view.thumbs.path(im.file_name, GALLERY))
        out.append((orig, f"{name} · clean {fmt(c)}"))
        if t.side == "text":
            # mismatch: the other SEG's prompt was drawn over the whole run (the long table names it)
            said = "another SEG's prompt" if t.name == "mismatch" else f"prompt “{t.text(seg.prompt)}”"
            out.append((orig, f"{name} · {said} {fmt(v)} (Δ {fmt(v - c)})"))
            continue
        p = transformed_image(view, im.file_name, t.spec, run.seed)
        delta = f"{v - c:+.4f}" if np.isfinite(v - c) else "–"
        out.append((str(p) if p is not None else orig,
                    f"{name} · {t.spec} {fmt(v)} (Δ {delta})" + ("" if p is not None else " · (not on this machine)")))
    return out


# -- the leaderboard's stability table ------------------------------------------------------------------

def _summary(view, mode: str):
    """The shared results' summary in ``mode`` (computed once), and the session's (its SEGs only)."""
    from ...nuisance.summary import summarize

    out = []
    sh = shared_results(view)
    if sh is not None and sh.scores.runs:
        with sh.lock:
            hit = sh.summaries.get(mode)
            if hit is None:
                hit = sh.summaries[mode] = summarize(sh.scores, view.dataset, mode=mode)
        out.append(("shared", hit))
    own = session_results(view)
    if own:
        with own.lock:
            runs = list(own.runs.values())
        ns = NuisanceScores(view.dataset.name, runs)
        out.append(("session", summarize(ns, view.dataset, mode=mode, n_resamples=SESSION_RESAMPLES)))
    return out


def stability_table(view, mode: str = "paper"):
    """The leaderboard's stability table: one row per (metric, transform), with bootstrap intervals over SEGs.

    For every metric with nuisance results (shared, then this session's): NSR, flip %, up %, ΔOrd and ΔSep
    (x100) with 95 % intervals. Drawn when the accordion is opened, and again when the mode changes or a
    live run adds results while it is open.

    Parameters
    ----------
    view : AppView
        The session's view.
    mode : str, default "paper"
        The meta-metric policy preset.

    Returns
    -------
    pandas.DataFrame or None
        The table; ``None`` when there is nothing to show.
    """
    import pandas as pd

    parts = _summary(view, mode)
    if not parts:
        return None
    rows = []

    def iv(v, lo, hi, f):
        return "–" if v != v else f"{f(v)} [{f(lo)}, {f(hi)}]"

    r3 = lambda v: "–" if v != v else ("inf" if np.isinf(v) else f"{v:.3f}")     # noqa: E731
    pct = lambda v: "–" if v != v else f"{100 * v:.1f}"                          # noqa: E731
    sg = lambda v: "–" if v != v else f"{100 * v:+.1f}"                           # noqa: E731
    for source, sm in parts:
        segs = sm.segs()
        for r in sm.frame().itertuples(index=False):
            n = int(segs[(segs["metric"] == r.metric) & (segs["transform"] == r.transform) & segs["averaged"]].shape[0])
            rows.append({"metric": r.metric,
                         "transform": r.transform + (" †" if r.changes_meaning else " *" if r.degrading else ""),
                         "NSR": iv(r.ratio, r.ratio_lo, r.ratio_hi, r3) if r.ratio == r.ratio else
                         ("0/0 (no error steps)" if r.n_undefined else "–"),
                         "flip %": iv(r.flip_rate, r.flip_rate_lo, r.flip_rate_hi, pct),
                         "up %": iv(r.up_share, r.up_share_lo, r.up_share_hi, pct),
                         "ΔOrd": iv(r.ord_diff, r.ord_diff_lo, r.ord_diff_hi, sg),
                         "ΔSep": iv(r.sep_diff, r.sep_diff_lo, r.sep_diff_hi, sg),
                         "SEGs": n, "source": "this session" if source == "session" else "shared"})
    return pd.DataFrame(rows)


STABILITY_NOTE = ("<small>**Stability under nuisance** (`ts2viz nuisance`, or the explorer's Nuisance tab). **NSR**: "
                  "nuisance-to-step ratio, the median over SEGs of (median |transformed − clean| score ÷ the SEG's "
                  "median node-mean gap along its edges): 0 = the metric does not move, 1 = a nuisance change as "
                  "large as a real error step; 0/0: no error steps (a metric that reads only the prompt). **flip %**: "
                  "correctly ordered image pairs on a common walk that are no longer ordered once one image is "
                  "transformed. **up %**: images whose score rises; for a degrading transform (*) above 50 rewards a "
                  "worse image. **ΔOrd, ΔSep**: under nuisance minus clean, x100. † changes meaning. [lo, hi]: 95 % "
                  "bootstrap over SEGs (a session's live runs cover few SEGs: their intervals are wide or "
                  "degenerate).</small>")


__all__ = ["PUBLIC_TRANSFORMS", "MAX_TRANSFORMS", "MAX_SESSION_METRICS", "transform_choices", "check_transforms",
           "live_nuisance", "seg_view", "seg_statistics", "gallery", "transformed_image", "stability_table",
           "metric_choices", "run_of", "session_results"]
