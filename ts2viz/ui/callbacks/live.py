"""The live scoring tab's callbacks: metric specs, scoring SEGs with a library metric, scoring uploaded images.

Scoring the dataset's SEGs with a library metric, and scoring a visitor's uploaded images against a SEG
(with the upload checks).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

from ... import figures
from ...display import plural
from ...errors import InputError
from ...metametrics.definitions import node_means
from ..serving.jobs import batch_size, checkpoint
from ..state.app_state import AppView
from .common import get_seg, log, owned_visitor_files, uploaded_image_paths

#: the columns of the upload scores table (also its headers while it is empty)
UPLOAD_COLUMNS = ("image", "score", "closest node (mean)", "percentile in SEG", "vs error-0 mean")
MAX_PROMPT_CHARS = 1000
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_UPLOAD_PIXELS = 50_000_000
MAX_UPLOADS = 16
#: the longest side an uploaded image is kept at (every metric's processor resizes to far less)
UPLOAD_DECODE_SIDE = 2048
IMAGE_FORMATS = {"JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF"}
#: frames an uploaded image may have (only the first is decoded) and bytes after the end of its image
MAX_UPLOAD_FRAMES = 500
MAX_TRAILING_BYTES = 64 * 1024
MAX_SPECS = 4


# -- live scoring ---------------------------------------------------------------------------------------------

def library_families() -> list[tuple[str, str]]:
    """The metric library's families, listed in the Live scoring tab.

    Returns
    -------
    list of (str, str)
        ``(name, description)``; empty if the library is unavailable.
    """
    try:
        from ...metrics import families as fams

        return [(f.name, f.description) for f in fams()]
    except Exception:
        return []


def parse_specs(text) -> list[str]:
    r"""Metric specs from the metric box (text, or a dropdown's list), checked for form only.

    Parameters
    ----------
    text : str or list of str
        Specs separated by newlines or commas, or a list of them (public mode: display names).

    Returns
    -------
    list of str
        The specs, stripped.

    Raises
    ------
    InputError
        For no spec, more than :data:`MAX_SPECS`, or one longer than 300 characters or without ``:``.

    Examples
    --------
    >>> parse_specs("clipscore:openai/clip-vit-base-patch32,\n siglip:google/siglip-base-patch16-224")
    ['clipscore:openai/clip-vit-base-patch32', 'siglip:google/siglip-base-patch16-224']
    """
    if isinstance(text, (list, tuple)):
        items = [str(t) for t in text]
    else:
        items = re.split(r"[\n,]+", str(text or ""))
    specs = [s.strip() for s in items if s and s.strip()]
    if not specs:
        raise InputError("enter a metric spec such as clipscore:openai/clip-vit-base-patch32")
    if len(specs) > MAX_SPECS:
        raise InputError(f"at most {MAX_SPECS} metrics at a time")
    for s in specs:
        if len(s) > 300 or ":" not in s:
            raise InputError(f"malformed metric spec {s[:80]!r}: expected FAMILY:MODEL")
    return specs


def load_metric(app: AppView, spec: str, device: str | None = None):
    """The loaded metric for a checked spec.

    In public mode a failure to load is one generic line (the detail, which may name the server's folders,
    goes to the log).

    Parameters
    ----------
    app : AppView
        The session's view.
    spec : str
        The spec (checked against the trust level).
    device : str or None, default None
        Where it runs.

    Returns
    -------
    ts2viz.metrics.Metric
        The metric.

    Raises
    ------
    InputError
        In public mode, for any failure to load; in operator mode, the loader's own errors pass as they
        are.
    """
    from ..serving.jobs import off_the_clock

    try:
        with off_the_clock():       # loading is the server's cost, not the visitor's job's time
            return app.metric_object(spec, device=device)
    except Exception as e:  # noqa: BLE001 - public mode hides every detail of a failed load
        if not app.access.public:
            raise
        log.warning("metric %s could not be loaded: %s: %s", spec, type(e).__name__, e)
        raise InputError(f"{app.access.display_name(spec)}: this metric could not be loaded on the server") from None


def check_spec(spec: str) -> None:
    """Refuse a spec whose family or options the library does not have, before anything else is looked at.

    What :func:`ts2viz.metrics.load` checks first, without loading the model: a typo in the family
    (``clipscor:...``) or an option gets its own message, not the images' or the model's.

    Parameters
    ----------
    spec : str
        The spec (checked against the trust level).

    Raises
    ------
    InputError
        For a malformed spec, an unknown family, or an option the family does not take.
    """
    from ...metrics import check_options, family, parse_spec

    sp = parse_spec(spec)
    check_options(sp, family(sp.family).factory(), sp.options)


def require_images(app: AppView, seg_ids: Sequence[int] | None) -> None:
    """Refuse to score SEGs whose images cannot be had, before a model is loaded.

    Images count when on disk, in the local hub cache, or on the hub
    (:func:`ts2viz.dataset.images_available`; a second at most).

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_ids : sequence of int or None
        The SEGs (``None``: all).

    Raises
    ------
    InputError
        When none of their images can be had, saying why and how to start the app with them.
    """
    from ...dataset import images_available

    ds = app.dataset
    wanted = None if seg_ids is None else set(seg_ids)
    names = [r.file_name for r in ds.rows if wanted is None or r.seg_id in wanted]
    if images_available(ds, names):
        return
    where = "all SEGs" if seg_ids is None else (f"SEG {seg_ids[0]}" if len(seg_ids) == 1 else "these SEGs")
    if ds.hf_id is not None:
        from ...hub import offline

        hub = "offline mode is on (HF_HUB_OFFLINE)" if offline() else "the Hugging Face hub does not answer"
        why = f"the dataset has no image files here, they are not in the local hub cache, and {hub}"
    else:
        why = "the dataset's folder does not hold its image files"
    raise InputError(f"the images of {where} are not available: {why}. Nothing was scored; scoring needs the "
                     f"images (start the app on a dataset folder with them: python app.py --data FOLDER)")


def live_score(app: AppView, specs, scope: str, seg_id=None, device: str | None = None,
               progress=None) -> str:
    """Score the current SEG or all SEGs with library metrics: the "Score" button of the Live scoring tab.

    The results join the session's workspace (its leaderboard and every figure), not other sessions'; the
    page then redraws every tab and picks the new metric. In public mode each spec must be one the
    operator offered (:meth:`~ts2viz.ui.serving.access.Access.metric_spec`), the server chooses the device,
    and one call scores one SEG. The model runs through :func:`ts2viz.ui.serving.gpu.on_gpu`, in the model
    lane (one at a time); a cancel stops it between batches.

    Parameters
    ----------
    app : AppView
        The session's view.
    specs : str or list of str
        The metrics (:func:`parse_specs`).
    scope : str
        ``"seg"``: the current SEG; anything else: all SEGs.
    seg_id : int or str or None, default None
        The current SEG.
    device : str or None, default None
        The visitor's device choice (operator mode only).
    progress : callable or None, default None
        Gradio's progress callback.

    Returns
    -------
    str
        The status line shown under the button.

    Raises
    ------
    InputError
        For specs that are malformed or not offered (public mode), all SEGs where the session may not, a
        session at its metric cap, images that cannot be had, a metric that does not load, or no image
        scored.
    """
    from ... import engine
    from ..serving.gpu import on_gpu

    specs = [app.access.metric_spec(s) for s in parse_specs(specs)]
    for s in specs:
        check_spec(s)                         # a typo is named before the images are looked for
    shown = app.access.display_name       # what the visitor sees of a spec (public mode: no folder paths)
    if scope == "seg":
        seg_ids = [get_seg(app, seg_id).id]
    elif app.limits.score_all_segs:
        seg_ids = None
    else:
        raise InputError("scoring all SEGs at once is not available here; score the current SEG")
    dev = app.access.device(device)
    app.workspace.require_room([shown(s) for s in specs])
    require_images(app, seg_ids)              # in a second, before a model is loaded
    done = []
    for k, spec in enumerate(specs):
        if progress is not None:
            progress(k / len(specs), desc=f"{shown(spec)}: loading the model")
        metric = load_metric(app, spec, dev)

        def prog(_spec, done_n, total, _k=k):
            # between batches: a cancelled job stops here, and the model's turn may pass (not after the last)
            checkpoint(turn=done_n < total or _k < len(specs) - 1)
            if progress is not None:
                try:
                    frac = (done_n / total) if total else 0.0
                    progress((_k + frac) / len(specs), desc=f"{_spec}: {done_n}/{total} images")
                except Exception:
                    pass

        sc = on_gpu(engine.score_dataset)(app.dataset, [metric], seg_ids=seg_ids, device=dev,
                                          batch_size=batch_size(metric), cache_dir=app.cache_root, progress=prog)
        if not np.isfinite(sc.values).any():
            raise InputError(f"{shown(spec)}: no image could be scored (are the dataset's images available?)")
        app.add_table(sc, kind="live", name=f"live:{shown(spec)}")
        n = int(np.isfinite(sc.values).sum())
        missing = int(sc.values.size) - n   # e.g. a judge's reply that could not be read: NaN, never 0
        done.append(f"{sc.metrics[0]} ({plural(n, 'image')}" + (f"; {missing} without a score: see the Questions tab "
                                                                 "or the warnings" if missing else "") + ")")
    where = f"SEG {seg_ids[0]}" if seg_ids else "all SEGs"
    return f"Scored {where} with {', '.join(done)}. The results are in the leaderboard and every figure."


def check_upload(path, *, max_bytes: int = MAX_UPLOAD_BYTES, max_pixels: int = MAX_UPLOAD_PIXELS,
                 max_frames: int = MAX_UPLOAD_FRAMES, max_trailing_bytes: int = MAX_TRAILING_BYTES,
                 info: list | None = None):
    """Open an uploaded image safely.

    :func:`ts2viz.imagecheck.open_checked`: bytes, structure, frames, bytes beyond the image's end, type,
    pixels, a first frame that decodes.

    Parameters
    ----------
    path : str or os.PathLike
        The uploaded file.
    max_bytes : int, default MAX_UPLOAD_BYTES
        Bytes of the file.
    max_pixels : int, default MAX_UPLOAD_PIXELS
        Pixels of its first frame.
    max_frames : int, default MAX_UPLOAD_FRAMES
        Frames.
    max_trailing_bytes : int, default MAX_TRAILING_BYTES
        Bytes after the end of the image.
    info : list or None, default None
        Gets the file's :class:`~ts2viz.imagecheck.ImageInfo` appended.

    Returns
    -------
    PIL.Image.Image
        RGB, at most :data:`UPLOAD_DECODE_SIDE` pixels a side.

    Raises
    ------
    InputError
        One line naming the file, for any refusal of :func:`~ts2viz.imagecheck.open_checked`.
    """
    from ...imagecheck import ImageCaps, open_checked

    caps = ImageCaps(max_bytes=max_bytes, max_pixels=max_pixels, max_frames=max_frames,
                     max_trailing_bytes=max_trailing_bytes)
    out, found = open_checked(path, caps, name=Path(str(path)).name, reduce_to=UPLOAD_DECODE_SIDE)
    if info is not None:
        info.append(found)
    return out


def asked_line(details) -> str:
    """The sentence that says what a VQAScore model was asked, for the upload scoring's message.

    Parameters
    ----------
    details : list of dict or None
        The per-image details of a scoring run (``engine.score_images(..., return_details=True)``); the
        first one that has a ``question`` and an ``answer`` is read (VQAScore's).

    Returns
    -------
    str
        `` Asked: "QUESTION" (score: the likelihood of the answer "ANSWER").`` with a leading space, or an
        empty string when no detail says what was asked (ITMScore, CLIPScore, ...).

    Examples
    --------
    >>> asked_line([{"question": 'Does this image show "a cat"?', "answer": "Yes"}])
    ' Asked: "Does this image show "a cat"?" (score: the likelihood of the answer "Yes").'
    >>> asked_line([{"score": 0.3}])
    ''
    """
    d = next((x for x in (details or []) if isinstance(x, dict) and "question" in x and "answer" in x), None)
    if d is None:
        return ""
    from ...display import md_text

    # the question holds the visitor's prompt: shown as its characters, never as Markdown or HTML
    return f' Asked: "{md_text(d["question"])}" (score: the likelihood of the answer "{md_text(d["answer"])}").'


def check_prompt(prompt) -> str:
    """A typed prompt, checked.

    Parameters
    ----------
    prompt : str or None
        The prompt.

    Returns
    -------
    str
        The prompt, stripped.

    Raises
    ------
    InputError
        For an empty prompt or one over :data:`MAX_PROMPT_CHARS` characters.
    """
    p = (prompt or "").strip()
    if not p:
        raise InputError("the prompt is empty")
    if len(p) > MAX_PROMPT_CHARS:
        raise InputError(f"the prompt has {len(p)} characters; the limit is {MAX_PROMPT_CHARS}")
    return p


def score_uploads(app: AppView, files, prompt, spec, seg_id=None, device: str | None = None,
                  progress=None) -> dict:
    """Score uploaded images with one library metric and place them against the current SEG's nodes.

    The "Score uploads" button of the Live scoring tab (a model call). The SEG is scored with the same
    metric first if it has no scores for it yet (so the comparison is like for like). Each image is
    checked (:func:`check_upload`) before the model is loaded. In public mode the files must have come
    through the page, the uploads' scores are not kept in the score cache, and the uploaded files are
    deleted with the session.

    Parameters
    ----------
    app : AppView
        The session's view.
    files : list
        The uploaded files (paths or Gradio file objects), at most :data:`MAX_UPLOADS`.
    prompt : str
        The prompt they are scored against.
    spec : str or list of str
        The metric (the first of :func:`parse_specs`).
    seg_id : int or str or None, default None
        The SEG to compare with (``None``: no comparison).
    device : str or None, default None
        The visitor's device choice (operator mode only).
    progress : callable or None, default None
        Gradio's progress callback.

    Returns
    -------
    dict
        ``table`` (a DataFrame with :data:`UPLOAD_COLUMNS`: each image's score, the closest node by mean,
        its percentile in the SEG and its difference to the error-0 mean), ``figure`` (where the uploads
        land among the nodes) and ``message``.

    Raises
    ------
    InputError
        For no image or too many, a bad prompt, a spec not offered (public mode), a file outside the upload
        folder (public mode), an image refused by :func:`check_upload`, or a metric that does not load.
    """
    import pandas as pd
    from ... import engine
    from ..serving.gpu import on_gpu

    paths = uploaded_image_paths(files, MAX_UPLOADS)
    prompt = check_prompt(prompt)
    spec = app.access.metric_spec(parse_specs(spec)[0])
    paths = owned_visitor_files(app, paths)
    images = []
    for p in paths:
        checkpoint()
        images.append(check_upload(p))
    if app.access.public:
        # the full-size decodes are freed, but the allocator keeps their pages: hand them back now
        from ..state.sessions import release_memory

        release_memory()
    names = [p.name for p in paths]
    dev = app.access.device(device)
    metric = load_metric(app, spec, dev)
    if progress is not None:
        progress(0.1, desc=f"scoring {plural(len(images), 'upload')} with {app.access.display_name(spec)}")
    vals, dets = on_gpu(engine.score_images)(metric, images, [prompt] * len(images), cache_dir=app.cache_root,
                                             use_cache=not app.access.public, progress=lambda _s, done, total: checkpoint(turn=done < total),
                                             return_details=True, batch_size=batch_size(metric))
    vals = np.asarray(vals, dtype=float)
    spec = metric.spec
    seg = get_seg(app, seg_id) if seg_id not in (None, "") else None
    msg = f"Scored {plural(len(images), 'image')} with {spec}." + asked_line(dets)
    node_scores: dict[str, np.ndarray] = {}
    if seg is not None:
        have = spec in app.metrics and np.isfinite(
            app.image_scores([im.file_name for n in seg.nodes for im in n.images], [spec])).any()
        if not have:
            try:
                if progress is not None:
                    progress(0.4, desc=f"scoring SEG {seg.id} with {spec} for comparison")
                live_score(app, [spec], "seg", seg.id, device)
                have = True
            except InputError as e:
                msg += f" The SEG could not be scored for comparison: {e}"
        if have:
            node_scores = app.node_scores(seg.id, spec)
    levels = {n.label: n.level for n in seg.nodes} if seg is not None else {}
    lib = not getattr(metric, "higher_is_better", True)
    rows = []
    c_image, c_score, c_node, c_pct, c_vs0 = UPLOAD_COLUMNS
    for name, v in zip(names, vals):
        row = {c_image: name, c_score: round(float(v), 4)}
        if node_scores:
            means = node_means(node_scores)
            closest = min((k for k in means if np.isfinite(means[k])), key=lambda k: abs(means[k] - v), default=None)
            row[c_node] = closest
            allv = np.concatenate([x[~np.isnan(x)] for x in node_scores.values()])
            row[c_pct] = round(float((allv < v).mean() * 100), 1) if allv.size else float("nan")
            n0 = np.concatenate([node_scores[k][~np.isnan(node_scores[k])] for k in levels if levels[k] == 0])
            row[c_vs0] = round(float(v - n0.mean()), 4) if n0.size else float("nan")
        rows.append(row)
    fig = figures.landing_figure(levels if node_scores else {}, node_scores, list(zip(names, vals.tolist())),
                                 metric=spec, lower_is_better=lib)
    return {"table": pd.DataFrame(rows), "figure": fig, "message": msg}
