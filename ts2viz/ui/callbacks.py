"""The app's callbacks: plain functions of data, testable without a browser.

Each takes the :class:`~ts2viz.ui.state.AppView` (the app as one session sees it: the operator's
shared tables and the session's own) first and plain values (strings, numbers, lists, file paths)
after it, and returns plain values: DataFrames, plotly figures, HTML strings, lists of (path,
caption) pairs, dicts of those. :mod:`ts2viz.ui.layout` wires them to Gradio components. Bad input
raises :class:`ts2viz.errors.InputError` with a readable message; in public mode
(``app.access.public``) messages about a visitor's file never quote its contents.

Tables are built in fractions (what a CSV download holds); :func:`shown` turns one into what people
read, meta-metric columns x100 (:mod:`ts2viz.display`), without changing the data underneath.

Parts of a view that depend only on (SEG, metric, mode) go through ``app.memo`` and are built once
for every session that shows them.
"""
from __future__ import annotations

import html
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .. import figures
from ..display import (SCALED_STATS, SIGNED_SEP_NOTE, fmt_score, fmt_x100, md_text, plural,
                       spreadsheet_safe_frame, stat_name)
from ..errors import InputError
from ..metametrics import signed
from ..stats import ks_separation, mean_gap, node_means
from .graph import seg_graph_html, thumb_files
from .state import AppView, metric_family
from .thumbs import GALLERY, THUMB

log = logging.getLogger("ts2viz.ui")

ALL = "All"
BOARD_STATS = ("ord_avg", "sep_avg", "signed_sep_avg", "ord_synth", "sep_synth", "ord_nat", "sep_nat",
               "ord_real", "sep_real")
#: the statistics a SEG can be ranked or correlated by
SEG_STATS = ("ord", "sep", "signed_sep", "delta", "kendall")
#: the columns of the upload scores table (also its headers while it is empty)
UPLOAD_COLUMNS = ("image", "score", "closest node (mean)", "percentile in SEG", "vs error-0 mean")
MAX_PROMPT_CHARS = 1000
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_UPLOAD_PIXELS = 50_000_000
MAX_UPLOADS = 16
#: the longest side an uploaded image is kept at (every metric's processor resizes to far less)
UPLOAD_DECODE_SIDE = 2048
IMAGE_FORMATS = {"JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF"}
MAX_SPECS = 4
#: uncompressed bytes a scores file's columns may hold per allowed row (Parquet metadata, checked before reading)
SCORES_DECODED_BYTES_PER_ROW = 1024

#: how seg_view and select_walk produce a figure: ``plot(key, metrics, build)`` with a key naming all
#: the figure depends on besides the metrics' data, the metrics it shows, and a builder of the figure.
#: The default builds it; the app passes one that returns cached, serialised plot data.
Plot = Callable[[tuple, Sequence[str | None], Callable[[], Any]], Any]


def build_figure(key: tuple, metrics: Sequence[str | None], build: Callable[[], Any]):
    return build()


# -- helpers ---------------------------------------------------------------------------------------

def _seg(app: AppView, seg_id):
    try:
        sid = int(seg_id)
    except (TypeError, ValueError):
        raise InputError(f"not a SEG id: {seg_id!r}") from None
    if sid not in app.dataset.segs:
        raise InputError(f"no SEG with id {sid} in dataset {app.dataset.name}")
    return app.dataset[sid]


def _metric(app: AppView, metric, *, required: bool = True) -> str | None:
    if metric in (None, "", "—", "(none)"):
        if required:
            raise InputError("choose a metric")
        return None
    if metric not in app.metrics:
        raise InputError(f"no metric {metric!r} loaded (have: {', '.join(app.metrics) or 'none'})")
    return str(metric)


def _families_filter(families) -> set[str] | None:
    if not families:
        return None
    fam = {str(f) for f in families}
    return None if ALL in fam else fam


def family_selection(chosen) -> list[str]:
    """A family filter's value after the visitor added or removed an entry: picking a family while
    "All" is selected drops "All" (else nothing would change), picking "All" drops the families, and
    an empty selection means "All" again. ``chosen`` is in the order picked (the last is the newest)."""
    picked = [str(f) for f in (chosen or [])]
    if not picked:
        return [ALL]
    if ALL in picked and len(picked) > 1:
        return [ALL] if picked[-1] == ALL else [f for f in picked if f != ALL]
    return picked


def _write_csv(app: AppView, df, stem: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:60] or "table"
    p = app.new_download(f"{stem}.csv")
    # names and texts from visitors (metric names, file names) never act as spreadsheet formulas
    spreadsheet_safe_frame(df).to_csv(p, index=False)
    return str(p)


def table_csv(app: AppView, df, stem: str) -> str | None:
    """Write a table to a CSV file in the session's own downloads folder (made when asked for).

    ``df`` is a DataFrame or a table from :func:`shown`: the file holds the data (fractions), not
    the x100 display."""
    from pandas.io.formats.style import Styler

    if isinstance(df, Styler):
        df = df.data
    if df is None or len(getattr(df, "columns", [])) == 0:
        return None
    return _write_csv(app, df, f"ts2viz-{stem}")


def mark_columns(df, *, x100=(), scores=()):
    """Record which columns of a table hold meta-metric values (shown x100) and which hold metric
    scores (shown with three decimals), for :func:`shown`. Returns ``df``."""
    df.attrs["x100"] = [c for c in x100 if c in df.columns]
    df.attrs["scores"] = [c for c in scores if c in df.columns]
    return df


def shown(df):
    """A table as people read it: the columns :func:`mark_columns` marked are formatted (meta-metric
    values x100 with one decimal, scores with three, '–' for missing) while the data underneath (what
    a row click or a CSV download gets) stays in fractions. A pandas Styler, which ``gr.Dataframe``
    displays."""
    fmt = {c: fmt_x100 for c in df.attrs.get("x100", []) if c in df.columns}
    fmt.update({c: fmt_score for c in df.attrs.get("scores", []) if c in df.columns})
    return df.style.format(fmt)


def header_html(app: AppView) -> str:
    """The page header: the dataset and what is loaded (counts as they are now)."""
    ds = app.dataset
    return (f"<div class='brand'><span class='logo'>TS2</span><div><h1>ts2viz</h1>"
            f"<p>Text-to-image faithfulness metrics, meta-evaluated on semantic error graphs · dataset "
            f"<b>{html.escape(str(ds.name))}</b>: {plural(len(ds), 'SEG')}, {plural(len(ds.rows), 'image')}, "
            f"{plural(len(app.metrics), 'metric')}</p></div></div>")


def walk_label(walk: Sequence[str]) -> str:
    return ">".join(dict.fromkeys(walk))


# -- metric lists ------------------------------------------------------------------------------------

def families(app: AppView) -> list[str]:
    return list(dict.fromkeys(metric_family(m) for m in app.metrics))


def metric_choices(app: AppView, families_sel=None) -> list[str]:
    fam = _families_filter(families_sel)
    return [m for m in app.metrics if fam is None or metric_family(m) in fam]


# -- leaderboard -------------------------------------------------------------------------------------

def leaderboard(app: AppView, mode: str = "paper", families_sel=None, sort_by: str = "ord_avg",
                best_first: bool = True):
    """The leaderboard table: one row per metric, Ord/Sep x Avg/Synth/Nat/Real and the average
    signed separation (fractions; :func:`style_leaderboard` shows them x100).

    Sorted by ``sort_by`` (a stat column, or ``metric`` for the name); ``best_first`` puts the largest
    values first, or for names A to Z.
    """
    import pandas as pd

    if not app.metrics:
        return pd.DataFrame(columns=["metric", "dir", *BOARD_STATS, "segs", "family", "source"])
    mm = app.mm(mode)
    board = mm.leaderboard(("ord", "sep", "signed_sep"))
    board = board[["metric"] + [c for c in BOARD_STATS if c in board.columns]]
    fam = _families_filter(families_sel)
    segs = mm.segs()
    scored = segs.groupby("metric", sort=False)["ord"].apply(lambda s: int(s.notna().sum()))
    # the scores right after the name (on a phone the first columns are all that shows), then where it is from
    board.insert(1, "dir", ["↓" if app.lower_is_better(m) else "↑" for m in board["metric"]])
    board["segs"] = [int(scored.get(m, 0)) for m in board["metric"]]
    board["family"] = [metric_family(m) for m in board["metric"]]
    board["source"] = [app.kind_of(m) for m in board["metric"]]
    if fam is not None:
        board = board[board["family"].isin(fam)]
    if sort_by not in board.columns:
        sort_by = "ord_avg"
    ascending = best_first if sort_by == "metric" else not best_first
    board = board.sort_values(sort_by, ascending=ascending, na_position="last", kind="stable")
    return mark_columns(pd.DataFrame(board).reset_index(drop=True), x100=BOARD_STATS)


def best_cells(board) -> dict[str, int]:
    """Row position of the best (largest) value of each stat column."""
    out = {}
    for c in BOARD_STATS:
        if c in board.columns and board[c].notna().any():
            out[c] = int(np.nanargmax(board[c].to_numpy(dtype=float)))
    return out


def style_leaderboard(board):
    """The board as people read it (:func:`shown`: values x100): best value per column bold on a tinted cell."""
    best = best_cells(board)
    nums = [c for c in BOARD_STATS if c in board.columns]

    def mark(col):
        i = best.get(col.name)
        return ["font-weight:700;background-color:#e0e7ff;color:#3730a3" if k == i else "" for k in range(len(col))]

    return mark_columns(board, x100=nums).pipe(shown).apply(mark, subset=nums)


def leaderboard_csv(app: AppView, mode: str = "paper", families_sel=None, sort_by: str = "ord_avg",
                    best_first: bool = True) -> str:
    """The leaderboard as a CSV (fractions), its rows in the order the table shows them."""
    board = leaderboard(app, mode, families_sel, sort_by, best_first)
    cols = ["metric"] + [c for c in BOARD_STATS if c in board.columns]
    return _write_csv(app, board[cols], f"ts2viz-leaderboard-{mode}")


def leaderboard_figure(app: AppView, mode: str = "paper", families_sel=None):
    return figures.ord_sep_scatter(leaderboard(app, mode, families_sel), title=f"Ord vs Sep ({mode} mode)")


def visitor_file(app: AppView, path) -> Path:
    """The path of a file a visitor uploaded. In public mode it must lie in the upload folder
    (``app.access.upload_root``); anything else gets the same message whether it exists or not."""
    p = Path(str(path))
    if app.access.public:
        root = app.access.upload_root
        real = os.path.realpath(p)
        base = os.path.realpath(root) if root else None
        if base is None or os.path.commonpath([real, base]) != base or real == base:
            raise InputError("upload the file through the page")
    return p


def uploaded_scores_file(app: AppView, path, display_name: str | None, suffixes: tuple[str, ...],
                         wrong_type: str) -> tuple[Path, str]:
    """A visitor's scores file, checked before anything of it is read: from the upload folder
    (:func:`visitor_file`), owned by the session in public mode (deleted with it, whether it loads or
    not), one of ``suffixes`` (else ``wrong_type`` is the message) and within the session's byte cap.
    Returns the path and the name messages use (``display_name``, else the file's name)."""
    p = visitor_file(app, path)
    if app.access.public:
        app.workspace.own_file(p)
    name = display_name or p.name
    if p.suffix.lower() not in suffixes:
        raise InputError(wrong_type, file=name)
    try:
        size = p.stat().st_size
    except OSError:
        raise InputError("upload the file through the page", file=name) from None
    cap = app.limits.max_upload_bytes
    if size > cap:
        mib = 1024 * 1024
        raise InputError(f"scores file is {size / mib:.1f} MB; the limit is {cap / mib:g} MB", file=name)
    return p, name


def add_scores_file(app: AppView, path, display_name: str | None = None, lower_is_better: str = "") -> str:
    """Load an uploaded scores file (CSV or Parquet) into the session's workspace. Returns a status line.

    The session's caps hold (files, bytes, rows, metrics). In public mode a file that cannot be read
    gets a message naming the row but quoting nothing from the file.
    """
    from ..scores import IGNORED_COLUMNS, ReadCaps, TooLarge, read_scores

    if not path:
        raise InputError("choose a scores file (CSV or Parquet) first")
    p, name = uploaded_scores_file(app, path, display_name, (".csv", ".parquet", ".pq"),
                                   "scores must be a .csv or .parquet file")
    limits = app.limits
    lib = [s.strip() for s in (lower_is_better or "").split(",") if s.strip()]
    # the caps are checked before the data is read (a few KB of Parquet can stand for gigabytes)
    caps = ReadCaps(max_rows=limits.max_rows, max_metrics=limits.max_metrics,
                    max_columns=limits.max_metrics + len(IGNORED_COLUMNS) + 2,
                    max_decoded_bytes=SCORES_DECODED_BYTES_PER_ROW * limits.max_rows)
    try:
        sc = read_scores(p, dataset=app.dataset, lower_is_better=lib, caps=caps)
    except TooLarge as e:       # names a cap, quotes nothing from the file
        raise InputError(e.problem, file=name, row=e.row) from None
    except InputError as e:
        if app.access.public:
            at = f"row {e.row}: " if e.row is not None else ""
            raise InputError(f"{at}not a valid scores file for this dataset (expected a file_name column "
                             "naming the dataset's images and numeric metric columns)", file=name) from None
        raise InputError(str(e).replace(str(p), name)) from None
    if len(sc.file_names) > limits.max_rows:
        raise InputError(f"{len(sc.file_names)} rows; the limit is {limits.max_rows}", file=name)
    sc.source = name
    app.add_table(sc, kind="uploaded", name=name)
    return f"Loaded {plural(len(sc.metrics), 'metric')} from {name}: {', '.join(sc.metrics)}"


# -- SEG picking ----------------------------------------------------------------------------------------

def seg_options(app: AppView, query: str = "", partition: str = ALL, limit: int = 300) -> list[tuple[str, int]]:
    """(label, id) of the SEGs matching a prompt search (or an id) and a partition."""
    q = (query or "").strip().lower()[:200]
    out = []
    for seg in app.dataset:
        if partition not in (None, "", ALL) and seg.partition != partition:
            continue
        if q and not (q in seg.prompt.lower() or (q.isdigit() and int(q) == seg.id)):
            continue
        out.append((f"{seg.id} · {seg.partition} · {seg.prompt[:80]}", seg.id))
        if len(out) >= limit:
            break
    return out


def seg_choice(app: AppView, query: str = "", partition: str = ALL, current=None):
    """The SEG picker after a search: ``(options, value)``; the current SEG stays chosen while it
    still matches, else the first match; ``value`` is ``None`` when nothing matches."""
    opts = seg_options(app, query, partition)
    ids = [o[1] for o in opts]
    try:
        cur = int(current)
    except (TypeError, ValueError):
        cur = None
    if not ids:
        return opts, None
    return opts, cur if cur in ids else ids[0]


def seg_from_row(table, row) -> int | None:
    """The SEG id in row ``row`` of a table whose first column holds SEG ids (finder, pair table)."""
    try:
        return int(table.iloc[int(row), 0])
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


def partitions(app: AppView) -> list[str]:
    return [ALL] + list(dict.fromkeys(s.partition for s in app.dataset))


def _check_stat(stat: str) -> str:
    if stat not in SEG_STATS:
        raise InputError(f"unknown statistic {stat!r}: expected one of {', '.join(SEG_STATS)}")
    return stat


def failure_finder(app: AppView, mode: str, metric, stat: str = "ord", metric_b=None,
                   partition: str = ALL, limit: int = 50):
    """SEGs ranked worst first by a metric's ord, sep or signed sep (or delta, kendall), or by how much
    worse it does than ``metric_b``.

    Ranked by sep or signed sep, the other of the two is shown beside it: a SEG where they differ in
    sign is one the metric orders backwards. Values are fractions (:func:`shown` displays them x100).
    """
    metric = _metric(app, metric)
    metric_b = _metric(app, metric_b, required=False)
    if stat == "pacc":      # pairwise accuracy on SEGs (ts2viz.metaeval.seg_pairwise), worst SEGs first
        from .significance_view import seg_pacc_long

        segs = seg_pacc_long(app, mode)
    else:
        _check_stat(stat)
        segs = app.mm(mode).segs()
    import pandas as pd

    def wide(k):
        return segs.pivot(index="seg_id", columns="metric", values=k)

    main = wide(stat)
    df = pd.DataFrame({"SEG": main.index.astype(int)})
    df["partition"] = [app.dataset[s].partition for s in df["SEG"]]
    df["prompt"] = [app.dataset[s].prompt for s in df["SEG"]]
    col = f"{stat_name(stat)} {metric}"
    df[col] = main[metric].to_numpy()
    kinds = {col: stat}                       # column -> the statistic it holds
    if partition not in (None, "", ALL):
        keep = (df["partition"] == partition).to_numpy()
    else:
        keep = np.ones(len(df), bool)
    if metric_b and metric_b != metric:
        col_b = f"{stat_name(stat)} {metric_b}"
        df[col_b] = main[metric_b].to_numpy()
        df["gap"] = df[col] - df[col_b]
        kinds.update({col_b: stat, "gap": stat})
        key = "gap"
    else:
        key = col
    companion = {"sep": "signed_sep", "signed_sep": "sep"}.get(stat)
    if companion:
        df[f"{stat_name(companion)} {metric}"] = wide(companion)[metric].to_numpy()
        kinds[f"{stat_name(companion)} {metric}"] = companion
    df = df[keep & df[key].notna().to_numpy()]
    df = df[[c for c in df.columns if c not in ("partition", "prompt")] + ["partition", "prompt"]]
    df = df.sort_values([key, "SEG"], kind="stable").head(limit).reset_index(drop=True)
    return mark_columns(df, x100=[c for c, k in kinds.items() if k in SCALED_STATS],
                        scores=[c for c, k in kinds.items() if k not in SCALED_STATS])


# -- SEG explorer ----------------------------------------------------------------------------------------

def _walk_data(app: AppView, mode: str, seg_id: int, metric: str):
    mm = app.mm(mode)
    st, ws = mm.walk_stats(seg_id)
    i = mm.metrics.index(metric)
    return st, {"ord": ws.ord[i], "sep": ws.sep[i], "signed_sep": ws.signed_sep[i], "delta": ws.delta[i],
                "n_images": ws.n_images[i]}


WALK_STATS = ("ord", "sep", "signed_sep")


def walk_table(app: AppView, mode: str, seg_id, metric, metric_b=None):
    """One row per walk, worst ord first: walk, path, ord, sep, signed sep (and the second metric's);
    fractions, shown x100 by :func:`shown`."""
    import pandas as pd

    seg = _seg(app, seg_id)
    metric = _metric(app, metric)
    metric_b = _metric(app, metric_b, required=False)
    st, wa = _walk_data(app, mode, seg.id, metric)
    df = pd.DataFrame({"walk": np.arange(len(st.walks)), "path": [walk_label(w) for w in st.walks],
                       **{stat_name(k): wa[k] for k in WALK_STATS}})
    cols = [stat_name(k) for k in WALK_STATS]
    if metric_b and metric_b != metric:
        _, wb = _walk_data(app, mode, seg.id, metric_b)
        for k in WALK_STATS:
            df[f"{stat_name(k)} {metric_b}"] = wb[k]
            cols.append(f"{stat_name(k)} {metric_b}")
    df = df.sort_values(["ord", "walk"], na_position="last", kind="stable").reset_index(drop=True)
    return mark_columns(df, x100=cols)


def _node_info(seg):
    levels = {n.label: n.level for n in seg.nodes}
    files = {n.label: [im.file_name for im in n.images] for n in seg.nodes}
    return levels, files


def ks_pairs(app: AppView, seg_id, metric) -> list[dict]:
    """KS statistic (and where it is attained) and mean gap of every adjacent node pair of a SEG."""
    seg = _seg(app, seg_id)
    metric = _metric(app, metric)

    def build() -> list[dict]:
        ns = app.node_scores(seg.id, metric)
        out = []
        lib = app.lower_is_better(metric)
        for a, b in seg.adjacent_pairs():
            r = ks_separation(ns[a], ns[b])
            gap = -mean_gap(ns[a], ns[b]) if lib else mean_gap(ns[a], ns[b])
            out.append({"a": a, "b": b, "statistic": r.statistic, "location": r.location,
                        "cdf_a": r.cdf_a, "cdf_b": r.cdf_b, "mean_gap": gap,
                        "signed": float(signed(np.float64(r.statistic), np.float64(gap)))})
        return out

    return app.memo(("ks_pairs", seg.id, metric), [metric], build)


KS_COLUMNS = ("pair", "KS", "signed KS", "at", "Δmean")


def ks_table(app: AppView, seg_id, metric, metric_b=None):
    """KS distance of every adjacent node pair for one or two metrics, signed KS (negative: the node
    with more errors scores higher), where the KS distance is attained and the mean gap (better-oriented
    mean of the node with fewer errors minus the other's). Lowest signed KS first. KS values are
    fractions shown x100 by :func:`shown`; the location and gap are scores."""
    import pandas as pd

    metric = _metric(app, metric)
    metric_b = _metric(app, metric_b, required=False)
    pa = ks_pairs(app, seg_id, metric)
    df = pd.DataFrame({"pair": [f"{p['a']} – {p['b']}" for p in pa],
                       f"KS {metric}": [p["statistic"] for p in pa],
                       f"signed KS {metric}": [p["signed"] for p in pa],
                       f"at {metric}": [p["location"] for p in pa],
                       f"Δmean {metric}": [p["mean_gap"] for p in pa]})
    scaled, scores = [f"KS {metric}", f"signed KS {metric}"], [f"at {metric}", f"Δmean {metric}"]
    if metric_b and metric_b != metric:
        pb = ks_pairs(app, seg_id, metric_b)
        df[f"KS {metric_b}"] = [p["statistic"] for p in pb]
        df[f"signed KS {metric_b}"] = [p["signed"] for p in pb]
        df[f"Δmean {metric_b}"] = [p["mean_gap"] for p in pb]
        scaled += [f"KS {metric_b}", f"signed KS {metric_b}"]
        scores.append(f"Δmean {metric_b}")
    df = df.sort_values(f"signed KS {metric}", na_position="last", kind="stable").reset_index(drop=True)
    return mark_columns(df, x100=scaled, scores=scores)


def graph_html(app: AppView, mode: str, seg_id, metric, walk=None, node=None) -> str:
    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    means = node_means(app.node_scores(seg.id, metric)) if metric else {}
    wpath, wname = None, ""
    w = _walk_index(walk)
    if w is not None:
        from ..metametrics import seg_structure

        st = seg_structure(seg, mode)
        if 0 <= w < len(st.walks):
            wpath, wname = st.walks[w], f"walk {w} ({walk_label(st.walks[w])})"
    return seg_graph_html(seg, node_means=means, metric=metric,
                          lower_is_better=bool(metric) and app.lower_is_better(metric),
                          thumb_uri=lambda fn: app.thumbs.data_uri(fn, THUMB, placeholder=False), walk=wpath, walk_name=wname,
                          selected=node, thumb_note=lambda fn: app.thumbs.state(fn, THUMB))


def _walk_index(walk) -> int | None:
    if walk in (None, "", "—"):
        return None
    try:
        return int(str(walk).split(":")[0].replace("walk", "").strip())
    except ValueError:
        return None


def walk_figure(app: AppView, mode: str, seg_id, metric, walk=None, *, color: str = figures.METRIC_A):
    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    if not metric:
        return figures.empty_figure("Choose a second metric to compare")
    st, wa = _walk_data(app, mode, seg.id, metric)
    levels, files = _node_info(seg)
    return figures.walk_figure(levels, app.node_scores(seg.id, metric), st.walks, wa["ord"], metric=metric,
                               highlight=_walk_index(walk), lower_is_better=app.lower_is_better(metric),
                               node_files=files, color=color)


def cdf_figure(app: AppView, seg_id, metric):
    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    if not metric:
        return figures.empty_figure("Choose a second metric to compare")
    levels, _ = _node_info(seg)
    return figures.cdf_figure(levels, app.node_scores(seg.id, metric), ks_pairs(app, seg.id, metric),
                              metric=metric, lower_is_better=app.lower_is_better(metric))


def gallery(app: AppView, seg_id, node, metrics: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(image path, caption) for every image of a node; captions carry the metrics' scores and source."""
    seg = _seg(app, seg_id)
    if node in (None, ""):
        return []
    if node not in seg.labels:
        raise InputError(f"SEG {seg.id} has no node {node!r} (nodes: {', '.join(seg.labels)})")
    ms = [m for m in dict.fromkeys(metrics) if m and m in app.metrics]
    imgs = seg.node(node).images
    vals = app.image_scores([im.file_name for im in imgs], ms) if ms else np.zeros((len(imgs), 0))
    out = []
    for im, row in zip(imgs, vals):
        sc = " · ".join(f"{m} {'–' if math.isnan(v) else f'{v:.3f}'}" for m, v in zip(ms, row))
        cap = f"{Path(im.file_name).name} · {im.image_source or 'unknown source'}" + (f" · {sc}" if sc else "")
        out.append((str(app.thumbs.path(im.file_name, GALLERY)), cap))
    return out


def seg_header(app: AppView, mode: str, seg_id, metric, metric_b=None) -> str:
    from ..metametrics import seg_structure

    seg = _seg(app, seg_id)
    st = seg_structure(seg, mode)
    mm = app.mm(mode) if app.metrics else None
    bits = []
    for m in [x for x in (metric, metric_b) if x and x in app.metrics]:
        row = mm.seg_values
        i, k = mm.seg_ids.index(seg.id), mm.metrics.index(m)
        from .significance_view import seg_pacc

        pacc, eps = seg_pacc(app, mode, seg.id, m)
        bits.append(f"**{md_text(m)}** ord {fmt_x100(row['ord'][i, k])} · sep {fmt_x100(row['sep'][i, k])} · "
                    f"signed sep {fmt_x100(row['signed_sep'][i, k])} · pairwise acc {fmt_x100(pacc)} "
                    f"(tie ε {eps:.3g})")
    note = f"  \n<small>Values x100, as in the paper. {SIGNED_SEP_NOTE}</small>" if bits else ""
    return (f"### SEG {seg.id} · {seg.partition}\n**Prompt:** {seg.prompt}\n\n"
            f"{plural(len(seg.nodes), 'node')} · {plural(seg.n_images, 'image')} · "
            f"{plural(len(st.walks), 'walk')} ({mode} mode)"
            + ("  \n" + "  \n".join(bits) if bits else "") + note)


def _graph(app: AppView, mode: str, seg, metric, walk, node) -> str:
    w = _walk_index(walk)
    # keyed by what its thumbnails show (ready, loading, offline, missing): an image landing for another
    # SEG leaves this one's memo alone
    return app.memo(("graph", mode, seg.id, metric, w, node, app.thumbs.states(thumb_files(seg), THUMB)), [metric],
                    lambda: graph_html(app, mode, seg.id, metric, w, node))


def _gallery(app: AppView, seg, node, metrics) -> list[tuple[str, str]]:
    ms = tuple(m for m in dict.fromkeys(metrics) if m)
    files = [im.file_name for im in seg.node(node).images] if node in seg.labels else []
    return app.memo(("gallery", seg.id, node, ms, app.thumbs.states(files, GALLERY)), ms,
                    lambda: gallery(app, seg.id, node, ms))


def _walk_plot(app: AppView, mode: str, seg, metric, w, color: str, plot: Plot):
    return plot(("walk", mode, seg.id, metric, w, color), [metric],
                lambda: walk_figure(app, mode, seg.id, metric, w, color=color))


def seg_view(app: AppView, mode: str, seg_id, metric, metric_b=None, node=None, walk=None, *,
             plot: Plot = build_figure, nodes: bool = True) -> dict:
    """Everything the explorer shows for one SEG, as a dict of plain values.

    Figures come from ``plot`` (default: plotly figures; see :data:`Plot`). Parts that depend only on
    (SEG, metrics, mode) are memoised (``app.memo``) and shared with every session showing them.
    ``nodes=False`` leaves out the node-separation part (``cdf_a``, ``cdf_b``, ``ks_table`` are None),
    for a page that does not show it.
    """
    import pandas as pd

    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    metric_b = _metric(app, metric_b, required=False)
    ms = [metric, metric_b]
    if node not in seg.labels:
        node = seg.labels[0]
    if metric:
        wt = app.memo(("walk_table", mode, seg.id, metric, metric_b), ms,
                      lambda: walk_table(app, mode, seg.id, metric, metric_b))
        st = app.mm(mode).walk_stats(seg.id)[0]
        walk_choices = app.memo(("walk_choices", mode, seg.id, metric, metric_b), ms, lambda: [
            (f"walk {int(r.walk)}: {r.path} (ord {fmt_x100(r.ord)})", str(int(r.walk))) for r in wt.itertuples()])
    else:
        from ..metametrics import seg_structure

        st = seg_structure(seg, mode)
        wt = pd.DataFrame({"walk": np.arange(len(st.walks)), "path": [walk_label(w) for w in st.walks]})
        walk_choices = [(f"walk {i}: {walk_label(w)}", str(i)) for i, w in enumerate(st.walks)]
    w = _walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    no_metric = "No scores loaded: add a scores file or score live"
    return {
        "header": app.memo(("header", mode, seg.id, metric, metric_b), ms,
                           lambda: seg_header(app, mode, seg.id, metric, metric_b)),
        "graph": _graph(app, mode, seg, metric, w, node),
        "nodes": list(seg.labels),
        "node": node,
        "node_title": _node_title(app, seg, node),
        "gallery": _gallery(app, seg, node, ms),
        "walk_table": shown(wt),
        "walk_choices": walk_choices,
        "walk": None if w is None else str(w),
        "walk_fig_a": (_walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot) if metric else
                       plot(("empty", no_metric), [], lambda: figures.empty_figure(no_metric))),
        "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot),
        "prompt": seg.prompt,
        **(node_separation_view(app, seg.id, metric, metric_b, plot=plot) if nodes
           else {"cdf_a": None, "cdf_b": None, "ks_table": None}),
    }


def node_separation_view(app: AppView, seg_id, metric, metric_b=None, *, plot: Plot = build_figure) -> dict:
    """The explorer's node-separation part for one SEG: each metric's node-wise CDF figure (``cdf_a``,
    ``cdf_b``) and the KS table of adjacent node pairs (``ks_table``), memoised like :func:`seg_view`."""
    import pandas as pd

    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    metric_b = _metric(app, metric_b, required=False)
    ms = [metric, metric_b]
    no_metric = "No scores loaded: add a scores file or score live"
    return {
        "cdf_a": (plot(("cdf", seg.id, metric), [metric], lambda: cdf_figure(app, seg.id, metric)) if metric else
                  plot(("empty", no_metric), [], lambda: figures.empty_figure(no_metric))),
        "cdf_b": plot(("cdf", seg.id, metric_b), [metric_b], lambda: cdf_figure(app, seg.id, metric_b)),
        "ks_table": shown(app.memo(("ks_table", seg.id, metric, metric_b), ms,
                                   lambda: ks_table(app, seg.id, metric, metric_b)) if metric
                          else pd.DataFrame(columns=KS_COLUMNS)),
    }


#: the one command that puts a hub dataset's images on this machine (then ``python app.py --data FOLDER``)
GET_IMAGES = "hf download {hf_id} --repo-type dataset --local-dir {folder}"


def image_links(ds, file_names: Sequence[str]) -> str:
    """Markdown for images this machine does not hold (offline, the gallery shows placeholders): a link
    to each on the dataset's Hugging Face page and the one command that gets them all; "" when the
    images are local or the dataset has no hub copy."""
    from urllib.parse import quote

    from ..dataset import cached_image

    if ds.hf_id is None:
        return ""
    missing = [f for f in file_names if ds.image_path(f) is None and cached_image(ds, f) is None]
    if not missing:
        return ""
    base = f"https://huggingface.co/datasets/{quote(ds.hf_id)}/blob/main/"
    links = " · ".join(f"[{Path(f).name}]({base}{quote(f)})" for f in missing[:12])
    more = f" (and {len(missing) - 12} more)" if len(missing) > 12 else ""
    cmd = GET_IMAGES.format(hf_id=ds.hf_id, folder="ts2-data")
    return (f"<small>Images not on this machine; open them on the Hugging Face dataset: {links}{more}. "
            f"To have them all here: `{cmd}` then `python app.py --data ts2-data`.</small>")


def _node_title(app: AppView, seg, node) -> str:
    if node not in seg.labels:
        return ""
    n = seg.node(node)
    title = (f"**Node {node}** · {plural(n.level, 'error')} · {plural(len(n.images), 'image')} "
             f"· click an image to enlarge")
    links = image_links(app.dataset, [im.file_name for im in n.images])
    return f"{title}\n\n{links}" if links else title


def select_node(app: AppView, mode: str, seg_id, metric, metric_b, node, walk=None) -> dict:
    """Clicking a node: the graph with the node marked, and its gallery."""
    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    metric_b = _metric(app, metric_b, required=False)
    return {"graph": _graph(app, mode, seg, metric, walk, node),
            "gallery": _gallery(app, seg, node, [metric, metric_b]),
            "node_title": _node_title(app, seg, node)}


def select_walk(app: AppView, mode: str, seg_id, metric, metric_b, walk, node=None, *,
                plot: Plot = build_figure) -> dict:
    """Choosing a walk: the graph with it highlighted and the Spearman plots with it emphasised."""
    from ..metametrics import seg_structure

    seg = _seg(app, seg_id)
    metric = _metric(app, metric, required=False)
    metric_b = _metric(app, metric_b, required=False)
    st = seg_structure(seg, mode)
    w = _walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    return {"graph": _graph(app, mode, seg, metric, w, node),
            "walk_fig_a": _walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot),
            "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot)}


def walk_from_row(table, row: int) -> str | None:
    """The walk id (as a string) in row ``row`` of a walk table."""
    try:
        return str(int(table.iloc[int(row)]["walk"]))
    except Exception:
        return None


# -- correlations -------------------------------------------------------------------------------------------

def _seg_wide(app: AppView, mode: str, stat: str, partition: str = ALL, metrics=None):
    _check_stat(stat)
    segs = app.mm(mode).segs()
    if partition not in (None, "", ALL):
        segs = segs[segs["partition"] == partition]
    wide = segs.pivot(index="seg_id", columns="metric", values=stat)
    cols = [m for m in (metrics or app.metrics) if m in wide.columns]
    return wide[cols]


def corr_matrix(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                method: str = "pearson"):
    """Metric-metric correlation of per-SEG ``stat`` values (over SEGs where both have values)."""
    if method not in ("pearson", "spearman", "kendall"):
        raise InputError(f"unknown correlation method {method!r}")
    wide = _seg_wide(app, mode, stat, partition, metric_choices(app, families_sel))
    return wide.corr(method=method, min_periods=3)


def corr_figure(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                method: str = "pearson", selected=None):
    m = corr_matrix(app, mode, stat, partition, families_sel, method)
    where = "all SEGs" if partition in (None, "", ALL) else f"{partition} SEGs"
    name = {"ord": "Ord (Spearman)", "sep": "Sep (KS)", "signed_sep": "signed Sep"}.get(stat, stat_name(stat))
    return figures.corr_heatmap(m, title=f"Correlation of per-SEG {name} between metrics, {where} "
                                         f"({method}, x100)", selected=selected)


def pair_points(app: AppView, mode: str, stat: str, x, y, partition: str = ALL):
    """Per-SEG values of two metrics, largest disagreement first (fractions; x, y and diff are marked
    for display x100 when ``stat`` is one of :data:`ts2viz.display.SCALED_STATS`)."""
    x, y = _metric(app, x), _metric(app, y)
    wide = _seg_wide(app, mode, stat, partition, [x, y] if x != y else [x])
    import pandas as pd

    df = pd.DataFrame({"seg_id": wide.index.astype(int)})
    df["partition"] = [app.dataset[s].partition for s in df["seg_id"]]
    df["prompt"] = [app.dataset[s].prompt for s in df["seg_id"]]
    df["x"] = wide[x].to_numpy()
    df["y"] = wide[y].to_numpy()
    df = df.dropna(subset=["x", "y"])
    df["diff"] = df["y"] - df["x"]
    df = df.reindex(df["diff"].abs().sort_values(ascending=False, kind="stable").index).reset_index(drop=True)
    cols = ["x", "y", "diff"]
    return mark_columns(df, x100=cols if stat in SCALED_STATS else (), scores=() if stat in SCALED_STATS else cols)


# -- live scoring ---------------------------------------------------------------------------------------------

def pair_table(points, x: str, y: str):
    """The per-SEG table beside the pair scatter as people read it (:func:`shown`): seg_id, the two
    metrics, y - x, partition, prompt."""
    names = {"x": x, "y": y if y != x else f"{y} ", "diff": "y - x"}
    df = points[["seg_id", "x", "y", "diff", "partition", "prompt"]].rename(columns=names)
    mark_columns(df, x100=[names[c] for c in points.attrs.get("x100", [])],
                 scores=[names[c] for c in points.attrs.get("scores", [])])
    return shown(df)


def library_families() -> list[tuple[str, str]]:
    """The metric library's families (name, description); empty if the library is unavailable."""
    try:
        from ..metrics import families as fams

        return [(f.name, f.description) for f in fams()]
    except Exception:
        return []


def parse_specs(text) -> list[str]:
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
    """The loaded metric for a checked spec. In public mode a failure to load is one generic line
    (the detail, which may name the server's folders, goes to the log)."""
    try:
        return app.metric_object(spec, device=device)
    except Exception as e:  # noqa: BLE001 - public mode hides every detail of a failed load
        if not app.access.public:
            raise
        log.warning("metric %s could not be loaded: %s: %s", spec, type(e).__name__, e)
        raise InputError(f"{app.access.display_name(spec)}: this metric could not be loaded on the server") from None


def require_images(app: AppView, seg_ids: Sequence[int] | None) -> None:
    """:class:`InputError` unless some images of these SEGs (``None``: all) can be had to score: on disk,
    in the local hub cache, or from the hub (:func:`ts2viz.dataset.images_available`; a second at most)."""
    from ..dataset import images_available

    ds = app.dataset
    wanted = None if seg_ids is None else set(seg_ids)
    names = [r.file_name for r in ds.rows if wanted is None or r.seg_id in wanted]
    if images_available(ds, names):
        return
    where = "all SEGs" if seg_ids is None else (f"SEG {seg_ids[0]}" if len(seg_ids) == 1 else "these SEGs")
    if ds.hf_id is not None:
        import huggingface_hub.constants as hub_constants

        hub = "offline mode is on (HF_HUB_OFFLINE)" if hub_constants.HF_HUB_OFFLINE else "the Hugging Face hub does not answer"
        why = f"the dataset has no image files here, they are not in the local hub cache, and {hub}"
    else:
        why = "the dataset's folder does not hold its image files"
    raise InputError(f"the images of {where} are not available: {why}. Nothing was scored; scoring needs the "
                     f"images (start the app on a dataset folder with them: python app.py --data FOLDER)")


def live_score(app: AppView, specs, scope: str, seg_id=None, device: str | None = None,
               progress=None) -> str:
    """Score the current SEG (``scope='seg'``) or all SEGs with library metrics; the results join the
    session's workspace (its leaderboard and every figure), not other sessions'.

    In public mode each spec must be one the operator offered, the server chooses the device, and
    one call scores one SEG. The model runs through :func:`ts2viz.ui.gpu.on_gpu`.
    """
    from .. import engine
    from .gpu import on_gpu

    specs = [app.access.metric_spec(s) for s in parse_specs(specs)]
    shown = app.access.display_name       # what the visitor sees of a spec (public mode: no folder paths)
    if scope == "seg":
        seg_ids = [_seg(app, seg_id).id]
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
            if progress is not None:
                try:
                    frac = (done_n / total) if total else 0.0
                    progress((_k + frac) / len(specs), desc=f"{_spec}: {done_n}/{total} images")
                except Exception:
                    pass

        sc = on_gpu(engine.score_dataset)(app.dataset, [metric], seg_ids=seg_ids, device=dev,
                                          cache_dir=app.cache_root, progress=prog)
        if not np.isfinite(sc.values).any():
            raise InputError(f"{shown(spec)}: no image could be scored (are the dataset's images available?)")
        app.add_table(sc, kind="live", name=f"live:{shown(spec)}")
        n = int(np.isfinite(sc.values).sum())
        missing = int(sc.values.size) - n   # e.g. a judge's reply that could not be read: NaN, never 0
        done.append(f"{sc.metrics[0]} ({plural(n, 'image')}" + (f"; {missing} without a score: see the Questions tab "
                                                                 "or the warnings" if missing else "") + ")")
    where = f"SEG {seg_ids[0]}" if seg_ids else "all SEGs"
    return f"Scored {where} with {', '.join(done)}. The results are in the leaderboard and every figure."


def check_upload(path, *, max_bytes: int = MAX_UPLOAD_BYTES, max_pixels: int = MAX_UPLOAD_PIXELS):
    """Open an uploaded image safely: type, file size and pixel count checked. Returns an RGB PIL image."""
    from PIL import Image, UnidentifiedImageError

    p = Path(str(path))
    name = p.name
    try:
        size = p.stat().st_size
    except OSError:
        raise InputError("upload could not be read", file=name) from None
    if size == 0:
        raise InputError("empty file", file=name)
    if size > max_bytes:
        raise InputError(f"file is {size / 1e6:.1f} MB; the limit is {max_bytes // (1024 * 1024)} MB", file=name)
    try:
        with Image.open(p) as im:
            fmt = im.format
            w, h = im.size
            if fmt not in IMAGE_FORMATS:
                raise InputError(f"unsupported image type {fmt}; use JPEG, PNG, WebP, BMP, GIF or TIFF", file=name)
            if w * h > max_pixels:
                raise InputError(f"image is {w}x{h} pixels; the limit is {max_pixels // 1_000_000} megapixels",
                                 file=name)
            if fmt == "JPEG":  # decode large JPEGs at reduced scale; the metrics resize anyway
                im.draft("RGB", (UPLOAD_DECODE_SIDE, UPLOAD_DECODE_SIDE))
            im.seek(0)         # an animation's first frame only (the others are never decoded)
            im.load()
            frame = im.convert("RGB") if im.mode in ("P", "PA", "1") else im   # palettes resize poorly
            # kept at most UPLOAD_DECODE_SIDE px a side: 16 uploads of 49 megapixels must not stay in memory
            # at full size (each is decoded, reduced, and let go before the next; the RGB copy is made of
            # the reduced one)
            if max(frame.size) > UPLOAD_DECODE_SIDE:
                frame.thumbnail((UPLOAD_DECODE_SIDE, UPLOAD_DECODE_SIDE), Image.Resampling.LANCZOS, reducing_gap=3.0)
            out = frame.convert("RGB") if frame.mode != "RGB" or frame is im else frame
    except InputError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError):
        raise InputError("not a readable image (or a decompression bomb)", file=name) from None
    except Exception as e:
        raise InputError(f"not a readable image ({type(e).__name__})", file=name) from None
    return out


def check_prompt(prompt) -> str:
    p = (prompt or "").strip()
    if not p:
        raise InputError("the prompt is empty")
    if len(p) > MAX_PROMPT_CHARS:
        raise InputError(f"the prompt has {len(p)} characters; the limit is {MAX_PROMPT_CHARS}")
    return p


def score_uploads(app: AppView, files, prompt, spec, seg_id=None, device: str | None = None,
                  progress=None) -> dict:
    """Score uploaded images with one library metric and place them against the current SEG's nodes.

    Returns ``{"table": DataFrame, "figure": fig, "message": str}``. The SEG is scored with the same
    metric first if it has no scores for it yet (so the comparison is like for like). In public mode
    the uploads' scores are not kept in the score cache, and the uploaded files are deleted with the
    session.
    """
    import pandas as pd
    from .. import engine
    from .gpu import on_gpu

    paths = [f if isinstance(f, (str, Path)) else getattr(f, "name", None) for f in (files or [])]
    paths = [p for p in paths if p]
    if not paths:
        raise InputError("upload at least one image")
    if len(paths) > MAX_UPLOADS:
        raise InputError(f"at most {MAX_UPLOADS} images at a time")
    prompt = check_prompt(prompt)
    spec = app.access.metric_spec(parse_specs(spec)[0])
    paths = [visitor_file(app, p) for p in paths]
    if app.access.public:
        for p in paths:
            app.workspace.own_file(p)
    images = [check_upload(p) for p in paths]
    if app.access.public:
        # the full-size decodes are freed, but the allocator keeps their pages: hand them back now
        from .sessions import release_memory

        release_memory()
    names = [p.name for p in paths]
    dev = app.access.device(device)
    metric = load_metric(app, spec, dev)
    if progress is not None:
        progress(0.1, desc=f"scoring {plural(len(images), 'upload')} with {app.access.display_name(spec)}")
    vals = np.asarray(on_gpu(engine.score_images)(metric, images, [prompt] * len(images), cache_dir=app.cache_root,
                                                   use_cache=not app.access.public), dtype=float)
    spec = metric.spec
    seg = _seg(app, seg_id) if seg_id not in (None, "") else None
    msg = f"Scored {plural(len(images), 'image')} with {spec}."
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
