"""The Gradio app: the whole layout in one place, wired to the plain callbacks in :mod:`.callbacks`.

Everything here is glue: it turns component values into callback arguments and callback results
into component updates, and it turns :class:`~ts2viz.errors.InputError` (and any other exception)
into a readable message while the app keeps running.
"""
from __future__ import annotations

import functools
import json
import logging
import traceback

import gradio as gr  # this module is imported only when the app is built

from ..errors import InputError
from . import callbacks as cb
from .state import AppState

log = logging.getLogger("ts2viz.ui")

MODES = ["paper", "spec"]
STATS = [("Ord (Spearman)", "ord"), ("Sep (KS)", "sep")]
SORT_CHOICES = [("Ord · Avg", "ord_avg"), ("Sep · Avg", "sep_avg"), ("Ord · Synth", "ord_synth"),
                ("Sep · Synth", "sep_synth"), ("Ord · Nat", "ord_nat"), ("Sep · Nat", "sep_nat"),
                ("Ord · Real", "ord_real"), ("Sep · Real", "sep_real"), ("Metric name", "metric")]

GRAPH_JS = """
element.addEventListener('click', (e) => {
  const card = e.target.closest('[data-node]');
  if (card) { trigger('click', {node: card.dataset.node}); }
});
element.addEventListener('keydown', (e) => {
  const card = e.target.closest ? e.target.closest('[data-node]') : null;
  if (card && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); trigger('click', {node: card.dataset.node}); }
});
"""


def plot_value(fig, fmt: str = "png"):
    """A plotly figure as Gradio plot data, with the modebar's download button set to ``fmt``."""
    from gradio.components.plot import PlotData

    if fig is None:
        return None
    data = json.loads(fig.to_json())
    fmt = fmt if fmt in ("png", "svg") else "png"
    data["config"] = {"displaylogo": False, "responsive": True,
                      "toImageButtonOptions": {"format": fmt, "filename": "ts2viz-figure", "scale": 2},
                      "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
    return PlotData(type="plotly", plot=json.dumps(data))


def _message(e: BaseException) -> str:
    if isinstance(e, InputError):
        return str(e)
    log.error("callback failed:\n%s", traceback.format_exc())
    return f"Something went wrong ({type(e).__name__}: {e}). The app is still running; try another choice."


def safe(fn):
    """Run a callback; on failure show the message in a toast and leave the outputs as they are."""
    import gradio as gr

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except BaseException as e:  # noqa: BLE001 - every failure becomes a message
            raise gr.Error(_message(e), duration=8) from None

    return run


def build_blocks(app: AppState, *, title: str = "ts2viz"):
    """The gr.Blocks of the app (not launched)."""
    import gradio as gr

    metrics = app.metrics
    m_a = "CLIPScore" if "CLIPScore" in metrics else (metrics[0] if metrics else None)
    m_b = next((m for m in ("TIFA-GPT4V", "DSG-GPT4V") if m in metrics), None)
    if m_b is None and len(metrics) > 1:
        m_b = next(m for m in metrics if m != m_a)
    first_seg = next(iter(app.dataset.segs))
    fams = [cb.ALL] + cb.families(app)
    lib_fams = cb.library_families()
    lib_md = "\n".join(f"- `{n}`: {d}" for n, d in lib_fams) or "_metric library not available_"

    def metric_dd(value, **kw):
        return gr.Dropdown(choices=cb.metric_choices(app), value=value, **kw)

    with gr.Blocks(title=title, fill_width=True) as demo:
        # ---------------------------------------------------------------- header
        with gr.Row(elem_classes="app-header", equal_height=False):
            gr.HTML(f"<div class='brand'><span class='logo'>TS2</span><div><h1>ts2viz</h1>"
                    f"<p>Text-to-image faithfulness metrics, meta-evaluated on semantic error graphs · dataset "
                    f"<b>{app.dataset.name}</b>: {len(app.dataset)} SEGs, {len(app.dataset.rows)} images, "
                    f"{len(metrics)} metrics</p></div></div>", elem_classes="brand-wrap", js_on_load=None, scale=4)
            mode = gr.Radio(MODES, value="paper", label="Mode (paper = published numbers, spec = as defined)",
                            scale=2, min_width=280, elem_id="mode", elem_classes="compact")
            fmt = gr.Radio(["png", "svg"], value="png", label="Figure download (camera icon)", scale=1,
                           min_width=200, elem_id="fmt", elem_classes="compact")

        with gr.Tabs(elem_id="tabs") as tabs:
            # ------------------------------------------------------------ leaderboard
            with gr.Tab("Leaderboard", id="board", elem_id="tab-board"):
                with gr.Row(equal_height=False, elem_classes="board-controls"):
                    fam_f = gr.Dropdown(fams, value=[cb.ALL], multiselect=True, label="Metric family", scale=2,
                                        elem_id="family-filter")
                    sort_by = gr.Dropdown(SORT_CHOICES, value="ord_avg", label="Sort by", scale=1, elem_id="sort-by")
                    order = gr.Radio(["best first", "worst first"], value="best first", label="Order", scale=1)
                    board_csv = gr.DownloadButton("Download CSV", scale=0, min_width=150, size="md",
                                                  elem_id="board-csv", elem_classes="dl-btn")
                board0 = cb.leaderboard(app, "paper") if metrics else None
                board = gr.Dataframe(cb.style_leaderboard(board0) if metrics else None,
                                     label="Leaderboard (best value per column highlighted)", interactive=False,
                                     elem_id="leaderboard", max_height=620, wrap=False, pinned_columns=1)
                # filled by the load event: a figure in the initial page makes the browser load plotly.js
                # (1.3 MB) before it shows anything
                board_plot = gr.Plot(label="Ord vs Sep", elem_id="board-scatter")
                with gr.Accordion("Add a scores file (CSV or Parquet: file_name + one column per metric)", open=False):
                    with gr.Row():
                        up_scores = gr.File(label="Scores file", file_types=[".csv", ".parquet"], scale=2)
                        with gr.Column(scale=1):
                            up_lib = gr.Textbox(label="Lower-is-better metrics (comma-separated)", max_lines=1)
                            up_btn = gr.Button("Add scores", variant="primary")
                    up_msg = gr.Markdown()

            # ------------------------------------------------------------ SEG explorer
            with gr.Tab("SEG explorer", id="seg", elem_id="tab-seg"):
                with gr.Row():
                    with gr.Column(scale=1, min_width=360, elem_classes="sidebar"):
                        search = gr.Textbox(label="Search prompts (or type a SEG id)", placeholder="e.g. teddy bear",
                                            max_lines=1, elem_id="seg-search")
                        part = gr.Radio(cb.partitions(app), value=cb.ALL, label="Partition")
                        seg_dd = gr.Dropdown(cb.seg_options(app), value=first_seg, label="SEG", elem_id="seg-pick")
                        metric_a = metric_dd(m_a, label="Metric", elem_id="metric-a")
                        metric_b = metric_dd(m_b, label="Compare with", elem_id="metric-b")
                        with gr.Accordion("Failure finder", open=True, elem_id="finder"):
                            with gr.Row():
                                ff_stat = gr.Radio(STATS, value="ord", label="Rank by", scale=1)
                                ff_gap = gr.Checkbox(label="by gap to the 'compare with' metric", value=False,
                                                     scale=1)
                            finder = gr.Dataframe(interactive=False, max_height=360, elem_id="finder-table",
                                                  label="Worst first · click a row to open", wrap=True)
                            finder_csv = gr.DownloadButton("Download CSV", size="sm")
                    with gr.Column(scale=4):
                        seg_md = gr.Markdown(elem_id="seg-header", elem_classes="seg-header")
                        graph = gr.HTML(elem_id="seg-graph", js_on_load=GRAPH_JS, min_height=200)
                        with gr.Row(equal_height=True):
                            node_dd = gr.Dropdown([], label="Node", scale=1, elem_id="node-pick")
                            walk_dd = gr.Dropdown([], label="Highlight a walk", scale=3, elem_id="walk-pick")
                        node_md = gr.Markdown(elem_id="node-title")
                        gal = gr.Gallery(label="Node images", columns=6, height=380, object_fit="contain",
                                         elem_id="node-gallery", allow_preview=True, preview=False)
                        with gr.Tabs():
                            with gr.Tab("Walks (ordering)"):
                                with gr.Row():
                                    walk_a = gr.Plot(elem_id="walk-plot-a", show_label=False)
                                    walk_b = gr.Plot(elem_id="walk-plot-b", show_label=False)
                                walks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="walk-table",
                                                        label="Walks, worst ord first · click a row to highlight")
                                walks_csv = gr.DownloadButton("Download CSV", size="sm")
                            with gr.Tab("Nodes (separation)"):
                                with gr.Row():
                                    cdf_a = gr.Plot(elem_id="cdf-plot-a", show_label=False)
                                    cdf_b = gr.Plot(elem_id="cdf-plot-b", show_label=False)
                                ks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="ks-table",
                                                     label="KS distance of adjacent node pairs, smallest first")
                                ks_csv = gr.DownloadButton("Download CSV", size="sm")

            # ------------------------------------------------------------ correlations
            with gr.Tab("Correlations", id="corr", elem_id="tab-corr"):
                with gr.Row():
                    c_stat = gr.Radio(STATS, value="ord", label="Per-SEG statistic")
                    c_part = gr.Radio(cb.partitions(app), value=cb.ALL, label="SEGs")
                    c_method = gr.Radio(["pearson", "spearman"], value="pearson", label="Correlation")
                    c_fam = gr.Dropdown(fams, value=[cb.ALL], multiselect=True, label="Metric family")
                heat = gr.Plot(elem_id="heatmap", show_label=False)
                with gr.Row():
                    c_x = metric_dd(m_a, label="Cell: metric (x)", elem_id="corr-x")
                    c_y = metric_dd(m_b or m_a, label="Cell: metric (y)", elem_id="corr-y")
                with gr.Row():
                    pair_plot = gr.Plot(elem_id="pair-plot", show_label=False)
                    with gr.Column():
                        pair_tb = gr.Dataframe(interactive=False, max_height=420, elem_id="pair-table",
                                               label="SEGs, largest disagreement first · click a row to open it")
                        pair_csv = gr.DownloadButton("Download CSV", size="sm")

            # ------------------------------------------------------------ live scoring
            with gr.Tab("Live scoring", id="live", elem_id="tab-live"):
                with gr.Row():
                    with gr.Column(scale=1):
                        gr.Markdown("#### Score with a metric from the library\nSpec `FAMILY:MODEL`, e.g. "
                                    "`clipscore:openai/clip-vit-base-patch32` or a local model folder. "
                                    "Results join the leaderboard and every figure.")
                        spec = gr.Textbox(label="Metric spec(s), one per line", lines=2, elem_id="live-spec",
                                          placeholder="clipscore:openai/clip-vit-base-patch32")
                        with gr.Row():
                            scope = gr.Radio([("current SEG", "seg"), ("all SEGs", "all")], value="seg",
                                             label="Score")
                            device = gr.Dropdown(["auto", "cpu", "cuda", "mps"], value="auto", label="Device")
                        live_btn = gr.Button("Score", variant="primary", elem_id="live-score")
                        live_msg = gr.Markdown(elem_id="live-msg")
                        with gr.Accordion("Metric families in the library", open=False):
                            gr.Markdown(lib_md)
                    with gr.Column(scale=2):
                        gr.Markdown("#### Score your own images against the current SEG")
                        with gr.Row():
                            files = gr.File(label="Images (JPEG/PNG/WebP, up to 20 MB each)", file_count="multiple",
                                            file_types=["image"], elem_id="upload-images", scale=1)
                            with gr.Column(scale=1):
                                prompt = gr.Textbox(label="Prompt (default: the current SEG's prompt)", lines=2,
                                                    max_length=cb.MAX_PROMPT_CHARS, elem_id="upload-prompt")
                                up_spec = gr.Textbox(label="Metric spec", max_lines=1, elem_id="upload-spec")
                                up_score = gr.Button("Score uploads", variant="primary", elem_id="upload-score")
                        up_res_msg = gr.Markdown(elem_id="upload-msg")
                        up_table = gr.Dataframe(interactive=False, elem_id="upload-table", label="Upload scores")
                        land = gr.Plot(elem_id="landing-plot", show_label=False)

        # ================================================================ wiring
        P = lambda f, fm: plot_value(f, fm)  # noqa: E731

        def dd(choices, value):
            return gr.Dropdown(choices=choices, value=value)

        # -- leaderboard
        def refresh_board(mode_v, fam_v, sort_v, order_v, fm):
            b = cb.leaderboard(app, mode_v, fam_v, sort_v or "ord_avg", order_v != "worst first")
            if sort_v == "metric":
                b = b.sort_values("metric", ascending=order_v != "worst first").reset_index(drop=True)
            path = cb.leaderboard_csv(app, mode_v, fam_v)
            fig = cb.figures.ord_sep_scatter(b, title=f"Ord vs Sep ({mode_v} mode)")
            return cb.style_leaderboard(b), P(fig, fm), path

        board_out = [board, board_plot, board_csv]
        board_in = [mode, fam_f, sort_by, order, fmt]
        for ev in (fam_f.change, sort_by.change, order.change):
            ev(safe(refresh_board), board_in, board_out)

        def add_scores(path, lib, mode_v, fam_v, sort_v, order_v, fm):
            import os

            msg = cb.add_scores_file(app, path, os.path.basename(str(path)) if path else None, lib)
            return f"✓ {msg}"

        def metric_lists(first_metric=None):
            """New metric choices everywhere (after scores were added)."""
            ch = cb.metric_choices(app)
            a = gr.Dropdown(choices=ch, value=first_metric) if first_metric else gr.Dropdown(choices=ch)
            return (a, gr.Dropdown(choices=ch), gr.Dropdown(choices=ch), gr.Dropdown(choices=ch),
                    gr.Dropdown(choices=[cb.ALL] + cb.families(app)))

        # -- SEG explorer
        def seg_outputs(v, fm):
            return (v["header"], v["graph"], dd(v["nodes"], v["node"]), v["node_title"], v["gallery"],
                    dd(v["walk_choices"], v["walk"]), P(v["walk_fig_a"], fm), P(v["walk_fig_b"], fm),
                    v["walk_table"], cb.table_csv(app, v["walk_table"], "walks"),
                    P(v["cdf_a"], fm), P(v["cdf_b"], fm), v["ks_table"], cb.table_csv(app, v["ks_table"], "ks"),
                    v["prompt"])

        seg_out = [seg_md, graph, node_dd, node_md, gal, walk_dd, walk_a, walk_b, walks_tb, walks_csv,
                   cdf_a, cdf_b, ks_tb, ks_csv, prompt]

        def show_seg(mode_v, sid, ma, mb, fm):
            if sid in (None, ""):
                return tuple(gr.skip() for _ in seg_out)
            return seg_outputs(cb.seg_view(app, mode_v, sid, ma, mb), fm)

        seg_in = [mode, seg_dd, metric_a, metric_b, fmt]
        seg_dd.change(safe(show_seg), seg_in, seg_out)
        for ev in (metric_a.input, metric_b.input):
            ev(safe(show_seg), seg_in, seg_out)

        def filter_segs(q, p, cur):
            opts = cb.seg_options(app, q, p)
            ids = [o[1] for o in opts]
            if not opts:
                gr.Info("No SEG matches that search")
                return gr.Dropdown(choices=[], value=None)
            return gr.Dropdown(choices=opts, value=cur if cur in ids else ids[0])

        search.submit(safe(filter_segs), [search, part, seg_dd], seg_dd)
        search.change(safe(filter_segs), [search, part, seg_dd], seg_dd, trigger_mode="always_last",
                      show_progress="hidden")
        part.change(safe(filter_segs), [search, part, seg_dd], seg_dd)

        def node_chosen(mode_v, sid, ma, mb, node, walk):
            v = cb.select_node(app, mode_v, sid, ma, mb, node, walk)
            return v["graph"], v["gallery"], v["node_title"]

        node_dd.input(safe(node_chosen), [mode, seg_dd, metric_a, metric_b, node_dd, walk_dd],
                      [graph, gal, node_md])

        def node_clicked(mode_v, sid, ma, mb, walk, evt: gr.EventData):
            data = getattr(evt, "_data", None) or {}
            node = data.get("node") if isinstance(data, dict) else None
            if not node:
                return gr.skip(), gr.skip(), gr.skip(), gr.skip()
            v = cb.select_node(app, mode_v, sid, ma, mb, node, walk)
            return v["graph"], v["gallery"], v["node_title"], gr.Dropdown(value=node)

        graph.click(safe(node_clicked), [mode, seg_dd, metric_a, metric_b, walk_dd],
                    [graph, gal, node_md, node_dd])

        def walk_chosen(mode_v, sid, ma, mb, walk, node, fm):
            v = cb.select_walk(app, mode_v, sid, ma, mb, walk, node)
            return v["graph"], P(v["walk_fig_a"], fm), P(v["walk_fig_b"], fm)

        walk_dd.input(safe(walk_chosen), [mode, seg_dd, metric_a, metric_b, walk_dd, node_dd, fmt],
                      [graph, walk_a, walk_b])

        def walk_row(mode_v, sid, ma, mb, node, fm, table, evt: gr.SelectData):
            w = cb.walk_from_row(table, evt.index[0])
            if w is None:
                return gr.skip(), gr.skip(), gr.skip(), gr.skip()
            v = cb.select_walk(app, mode_v, sid, ma, mb, w, node)
            return v["graph"], P(v["walk_fig_a"], fm), P(v["walk_fig_b"], fm), gr.Dropdown(value=w)

        walks_tb.select(safe(walk_row), [mode, seg_dd, metric_a, metric_b, node_dd, fmt, walks_tb],
                        [graph, walk_a, walk_b, walk_dd])

        def find(mode_v, ma, mb, stat, gap, p):
            t = cb.failure_finder(app, mode_v, ma, stat, mb if gap else None, p)
            return t, cb.table_csv(app, t, "failures")

        ff_in = [mode, metric_a, metric_b, ff_stat, ff_gap, part]
        for ev in (ff_stat.change, ff_gap.change, metric_a.change, metric_b.change):
            ev(safe(find), ff_in, [finder, finder_csv])

        def open_row(table, evt: gr.SelectData):
            try:
                sid = int(table.iloc[int(evt.index[0]), 0])
            except Exception:
                return gr.skip(), gr.skip(), gr.skip()
            return gr.Dropdown(choices=cb.seg_options(app), value=sid), gr.Tabs(selected="seg"), ""

        finder.select(safe(open_row), finder, [seg_dd, tabs, search])
        pair_tb.select(safe(open_row), pair_tb, [seg_dd, tabs, search])

        # -- correlations
        def corr(mode_v, stat, p, method, fam_v, x, y, fm):
            heat_fig = cb.corr_figure(app, mode_v, stat, p, fam_v, method, selected=(x, y))
            pts = cb.pair_points(app, mode_v, stat, x, y, p)
            pfig = cb.figures.pair_scatter(pts, x_name=x, y_name=y, stat=stat)
            table = pts[["seg_id", "x", "y", "diff", "partition", "prompt"]].rename(
                columns={"x": x, "y": y if y != x else f"{y} ", "diff": "y - x"})
            return P(heat_fig, fm), P(pfig, fm), table, cb.table_csv(app, pts, "pairs")

        corr_in = [mode, c_stat, c_part, c_method, c_fam, c_x, c_y, fmt]
        corr_out = [heat, pair_plot, pair_tb, pair_csv]
        for ev in (c_stat.change, c_part.change, c_method.change, c_fam.change, c_x.change, c_y.change):
            ev(safe(corr), corr_in, corr_out)

        # -- mode / format: everything that depends on them
        mode.change(safe(refresh_board), board_in, board_out).then(
            safe(show_seg), seg_in, seg_out).then(safe(find), ff_in, [finder, finder_csv]).then(
            safe(corr), corr_in, corr_out)
        fmt.change(safe(refresh_board), board_in, board_out).then(safe(show_seg), seg_in, seg_out).then(
            safe(corr), corr_in, corr_out)

        metric_outs = [metric_a, metric_b, c_x, c_y, fam_f]
        up_btn.click(safe(add_scores), [up_scores, up_lib, mode, fam_f, sort_by, order, fmt], up_msg).success(
            lambda: metric_lists(), None, metric_outs).then(safe(refresh_board), board_in, board_out).then(
            safe(show_seg), seg_in, seg_out).then(safe(corr), corr_in, corr_out)

        # -- live scoring
        def do_live(spec_v, scope_v, sid, dev, progress=gr.Progress()):
            msg = cb.live_score(app, spec_v, scope_v, sid, dev, progress=progress)
            return f"✓ {msg}"

        def first_live(spec_v):
            specs = cb.parse_specs(spec_v)
            return metric_lists(next((m for m in app.metrics if m in specs), None))

        live_btn.click(safe(do_live), [spec, scope, seg_dd, device], live_msg).success(
            first_live, spec, metric_outs).then(
            safe(refresh_board), board_in, board_out).then(safe(show_seg), seg_in, seg_out).then(
            safe(corr), corr_in, corr_out)

        def do_upload(fs, prompt_v, spec_v, sid, dev, fm, progress=gr.Progress()):
            spec_v = spec_v or ""
            r = cb.score_uploads(app, fs, prompt_v, spec_v, sid, dev, progress=progress)
            return r["message"], r["table"], P(r["figure"], fm)

        up_score.click(safe(do_upload), [files, prompt, up_spec, seg_dd, device, fmt],
                       [up_res_msg, up_table, land]).success(lambda: metric_lists(), None, metric_outs).then(
            safe(refresh_board), board_in, board_out)
        spec.change(lambda s: (s or "").split("\n")[0].strip(), spec, up_spec, show_progress="hidden")

        # -- first render
        def first(mode_v, fam_v, sort_v, order_v, sid, ma, mb, stat, gap, p, cstat, cpart, cmethod, cfam, x, y, fm):
            # the leaderboard table itself is in the page already (initial value): its scatter and CSV here
            _, scatter, path = refresh_board(mode_v, fam_v, sort_v, order_v, fm)
            return (scatter, path,
                    *show_seg(mode_v, sid, ma, mb, fm),
                    *find(mode_v, ma, mb, stat, gap, p),
                    *corr(mode_v, cstat, cpart, cmethod, cfam, x, y, fm))

        if metrics:
            demo.load(safe(first), [mode, fam_f, sort_by, order, seg_dd, metric_a, metric_b, ff_stat, ff_gap, part,
                                    c_stat, c_part, c_method, c_fam, c_x, c_y, fmt],
                      [board_plot, board_csv, *seg_out, finder, finder_csv, *corr_out], show_progress="hidden")
        else:
            demo.load(safe(show_seg), seg_in, seg_out)
    # The events are the page's own wiring, not an API: left out of the API docs (and so out of the
    # ~400 KB of API description Gradio would embed in every page load), still callable by clients.
    for fn in demo.fns.values():
        if fn.api_visibility == "public":
            fn.api_visibility = "undocumented"
    return demo
