"""Scoring the SEG being built with a loaded or live metric, its Ord, Sep and walks."""
from __future__ import annotations

import numpy as np

from ....authoring import drafts_to_dataset
from ....display import plural
from ....errors import InputError
from ...state.authoring_session import Drafts, caps_for
from ..live import load_metric, parse_specs
from .drafts import DATASET_KEY, current_draft
from .view import draft_graph_html, image_file, md_line


def loaded_metric_choices(app) -> list[str]:
    """The loaded metrics (shared and the session's): their scores serve the images of the loaded dataset.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of str
        The metric names.
    """
    return list(app.metrics)


def _loaded_name(app, d: Drafts, key: str) -> str | None:
    """The loaded dataset's file name of a draft image, when it is one of the loaded dataset's images.

    Taken from it, or imported from the same dataset (same SEGs, file names and labels); else ``None``.
    """
    if key.startswith(DATASET_KEY):
        return key[len(DATASET_KEY):]
    if key in d.remote:
        ds, fn = d.remote[key]
        if ds is app.dataset or (app.dataset.has_image(fn) and ds.fingerprint() == app.dataset.fingerprint()):
            return fn
    return None


def score_draft(app, source: str, metric, mode: str = "paper", device: str | None = None, progress=None) -> dict:
    """Ord/Sep and the walks of the SEG being edited, scored: the tab's "Score" button.

    With a loaded metric (``source='loaded'``: its scores of the loaded dataset's images; images from
    elsewhere stay unscored) or with a metric of the library (``source='library'``: every image scored now,
    in the model lane; in public mode only the metrics the app offers, by display name). The SEG's walks
    are counted first: past the session's walk cap it is refused (a visitor) or warned about (the
    operator).

    Parameters
    ----------
    app : AppView
        The session's view.
    source : str
        ``"loaded"`` or ``"library"``.
    metric : str or list of str
        A loaded metric's name, or a library spec.
    mode : str, default "paper"
        The meta-metric policy preset.
    device : str or None, default None
        The visitor's device choice (operator mode only).
    progress : callable or None, default None
        Gradio's progress callback.

    Returns
    -------
    dict
        ``message``, ``summary`` (Markdown: Ord, Sep, signed Sep, the hardest walk), ``walks`` (a DataFrame,
        worst Ord first, x100) and ``graph`` (HTML, nodes coloured by their mean, the hardest walk drawn).

    Raises
    ------
    InputError
        When no SEG is being edited, for a SEG with problems (the first), too many walks (a visitor), a metric not
        loaded or not offered, one that does not load, or no image scored.
    """
    import pandas as pd

    from ....metametrics.results import compute
    from ....scores import Scores
    from ....metametrics.definitions import node_means
    from ..common import get_metric, walk_label

    from ....metametrics.policy import resolve_policy

    d, draft = current_draft(app)
    ds = drafts_to_dataset(draft, name=f"draft SEG {draft.seg_id}")   # an InputError: the first problem
    seg = ds[draft.seg_id]
    # the cost first: one row per walk is built below (counted here, none enumerated)
    caps = caps_for(app)
    n_walks = seg.n_walks(resolve_policy(mode).repeat_root)
    warn = ""
    if n_walks > caps.max_walks:
        if caps.refuse_walks:
            raise InputError(f"SEG {seg.id} has {n_walks:,} walks; at most {caps.max_walks:,} are scored here "
                             "(remove nodes or draw fewer edges)")
        warn = f" ⚠ {n_walks:,} walks (more than {caps.max_walks:,}): this takes memory and time."
    names = [im.file_name for n in seg.nodes for im in n.images]
    by_name = {im.file_name: im for im in draft.images}
    if source == "loaded":
        name = get_metric(app, metric)
        vals = np.full(len(names), np.nan)
        for i, fn in enumerate(names):
            own = _loaded_name(app, d, by_name[fn].key)
            if own is not None:
                vals[i] = app.image_scores([own], [name])[0, 0]
        lower = app.lower_is_better(name)
    else:
        spec = app.access.metric_spec(parse_specs(metric)[0])
        dev = app.access.device(device)
        m = load_metric(app, spec, dev)
        name = m.spec
        lower = not getattr(m, "higher_is_better", True)
        todo = [fn for fn in names if (name, by_name[fn].key) not in d.scores]
        if todo:
            from PIL import Image

            from .... import engine
            from ...serving.gpu import on_gpu

            from ...serving.jobs import batch_size, checkpoint

            imgs = []
            for fn in todo:
                checkpoint()
                p = image_file(app, d, by_name[fn])
                if p is None:
                    raise InputError(f"the image {fn} cannot be had to score (not on disk here)")
                with Image.open(p) as pic:
                    if pic.size[0] * pic.size[1] > caps.max_pixels:     # an operator's own file, unchecked
                        raise InputError(f"the image {fn} is over {caps.max_pixels:,} pixels")
                    pic.draft("RGB", (2048, 2048))
                    pic.seek(0)
                    one = pic.convert("RGB")
                    if max(one.size) > 2048:     # kept small: every metric's processor resizes to far less
                        one.thumbnail((2048, 2048))
                    imgs.append(one)
            if progress is not None:
                progress(0.2, desc=f"scoring {plural(len(imgs), 'image')} with {app.access.display_name(spec)}")

            def batches(_spec, done, total):     # between the engine's batches: a cancel stops the work here,
                checkpoint(turn=done < total)    # and the model's turn may pass (not after the last)

            got = np.asarray(on_gpu(engine.score_images)(m, imgs, [seg.prompt] * len(imgs),
                                                         cache_dir=app.cache_root, use_cache=not app.access.public,
                                                         progress=batches, batch_size=batch_size(m)),
                             dtype=float)
            with d.lock:
                for fn, v in zip(todo, got):
                    d.scores[(name, by_name[fn].key)] = float(v)
        vals = np.array([d.scores.get((name, by_name[fn].key), np.nan) for fn in names])
    n_scored = int(np.isfinite(vals).sum())
    if n_scored == 0:
        raise InputError(f"{name} has no score for any image of this SEG (only images of the loaded dataset "
                         "have loaded scores; score with a metric of the library instead)")
    sc = Scores(names, [name], vals.reshape(-1, 1), {name} if lower else set(), source="draft")
    mm = compute(ds, sc, [name], mode)
    row = mm.segs().iloc[0]
    walks = mm.walks(seg.id)
    ns = {n.label: np.array([vals[names.index(im.file_name)] for im in n.images]) for n in seg.nodes}
    # the walk's scored images, each once (the meta-metrics' n_images counts node 0's twice in paper mode,
    # which repeats the root as the published code does: "3/3 images scored" beside "images 4" read wrong)
    scored = {label: int(np.isfinite(v).sum()) for label, v in ns.items()}
    table = pd.DataFrame({"walk": walks["walk"], "path": [walk_label(p.split(">")) for p in walks["path"]],
                          "ord": walks["ord"] * 100, "sep": walks["sep"] * 100,
                          "signed sep": walks["signed_sep"] * 100,
                          "images": [sum(scored.get(x, 0) for x in dict.fromkeys(p.split(">"))) for p in walks["path"]]})
    table = table.sort_values(["ord", "walk"], na_position="last", kind="stable").reset_index(drop=True)
    means = node_means(ns)
    worst = table.iloc[0] if len(table) else None
    wpath = list(walks["path"][walks["walk"] == int(worst["walk"])].iloc[0].split(">")) if worst is not None else None

    def pct(v) -> str:
        return "–" if v is None or not np.isfinite(v) else f"{100 * v:.1f}"

    summary = (f"**{md_line(name)}** on SEG {seg.id} ({mode}): **Ord {pct(row['ord'])}**, **Sep {pct(row['sep'])}**, "
               f"signed Sep {pct(row['signed_sep'])} over {plural(int(row['n_walks']), 'walk')} "
               f"({n_scored}/{len(names)} images scored; x100, higher = the metric tells the errors apart better)."
               + (" Paper mode counts node 0's images twice in each walk's Ord, as the published code does."
                  if resolve_policy(mode).repeat_root else "")
               + (f" Hardest walk: {md_line(walk_label(wpath))} (Ord {worst['ord']:.1f})." if worst is not None
                  and np.isfinite(worst["ord"]) else ""))
    graph = draft_graph_html(app, d, draft, means, name, lower, wpath,
                             f"hardest walk ({walk_label(wpath)})" if wpath else "")
    return {"message": f"Scored SEG {seg.id} with {name}." + warn, "summary": summary, "walks": table, "graph": graph}
