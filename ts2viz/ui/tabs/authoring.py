"""The Authoring tab: build semantic error graphs of your own, checked, drawn, scored and exported.

See them drawn as the explorer draws them with every problem the dataset loader would find, score them
while building, and export / import / push them as a dataset (several SEGs per dataset).

Operator mode may also name folders of this machine (images, an export target, a dataset to import)
and push to the Hugging Face hub; a public app's visitor works within their own session only
(uploads, a .zip download, a .zip upload), all of it gone when the session ends.
"""
from __future__ import annotations

import inspect

import gradio as gr

from ..callbacks.authoring import drafts as cb_drafts, images as cb_images, nodes as cb_nodes
from ..callbacks.authoring import scoring as cb_scoring, transfer as cb_transfer, view as cb_view
from ..callbacks import live as cb_live
from ..glue.errors import Selection
from ..glue.events import Page
from ..glue.tables import empty_table
from ..serving.jobs import FILES
from .explorer import GRAPH_JS

INTRO = ("#### Build your own semantic error graphs\n"
         "1. **Start a SEG** from a prompt, or vary the explorer's current SEG.\n"
         "2. **Add images** (upload{folder}).\n"
         "3. **Add nodes**: label = error count + letter (`0`, `1a`, `1b`, `2a`), and the error each adds in words "
         "(`no fruit`; several separated by `;`).\n"
         "4. **Select images and put them into a node.**\n"
         "5. **Edges** follow the error counts, or draw them.\n\n"
         "The graph and the problem list update as you go; score the SEG to see whether a metric ranks it right, "
         "then export the session's SEGs as a dataset `ts2viz leaderboard --dataset` reads.")


def _with_request(fn, n: int):
    """``fn(v0, ..., v{n-1}, request)`` with a signature Gradio reads.

    Gradio passes the request to the parameter annotated ``gr.Request``.
    """
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD

    def run(*args):
        return fn(*args)

    run.__signature__ = inspect.Signature([inspect.Parameter(f"v{i}", kind) for i in range(n)]
                                          + [inspect.Parameter("request", kind, annotation=gr.Request)])
    run.__annotations__ = {"request": gr.Request}
    # API names of their own (other tabs' events are looked up by theirs: "score", "node_clicked", ...)
    run.__name__ = "author_" + getattr(fn, "__name__", "action").replace("<lambda>", "action")
    return run


def build(page: Page) -> None:
    """Build the Authoring tab and wire its events (each action redraws the session's SEGs).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    """
    app = page.app
    public = app.access.public
    with gr.Tab("Authoring", id="author", elem_id="tab-author"):
        gr.Markdown(INTRO.format(folder="" if public else ", or a folder of this machine"))
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=320):
                with gr.Group():
                    drafts = gr.Dropdown([], label="SEGs of this session", elem_id="author-drafts",
                                         allow_custom_value=True)
                    prompt = gr.Textbox(label="Prompt", lines=2, max_length=cb_live.MAX_PROMPT_CHARS,
                                        elem_id="author-prompt", placeholder="a red apple on a wooden table")
                    with gr.Row():
                        seg_id = gr.Number(None, label="SEG id (empty: next free)", precision=0, minimum=0,
                                           elem_id="author-seg-id", min_width=120)
                        partition = gr.Textbox("Custom", label="Partition", max_lines=1, elem_id="author-partition",
                                               min_width=120)
                with gr.Row():
                    new_btn = gr.Button("New SEG", variant="primary", size="sm", elem_id="author-new")
                    header_btn = gr.Button("Save prompt / id", size="sm", elem_id="author-header")
                    vary_btn = gr.Button("Vary the explorer's SEG", size="sm", elem_id="author-vary")
                    undo_btn = gr.Button("Undo", size="sm", elem_id="author-undo")
                    drop_btn = gr.Button("Remove SEG", size="sm", variant="stop", elem_id="author-remove")
                gr.Markdown("##### Images")
                files = gr.File(label="Images (JPEG/PNG/WebP)", file_count="multiple", file_types=["image"],
                                elem_id="author-files", height=120)
                source = gr.Textbox(label="Image source (e.g. SDXL, DALL-E3)", max_lines=1, elem_id="author-source")
                add_btn = gr.Button("Add uploaded images", size="sm", elem_id="author-add")
                if not public:
                    with gr.Row():
                        folder = gr.Textbox(label="…or a folder of images on this machine", max_lines=1, scale=3,
                                            elem_id="author-folder")
                        folder_btn = gr.Button("Add folder", size="sm", scale=1, elem_id="author-add-folder")
                gr.Markdown("##### Nodes")
                with gr.Row():
                    label = gr.Textbox(label="Node label", max_lines=1, placeholder="1a", elem_id="author-node-label",
                                       min_width=90, scale=1)
                    errors = gr.Textbox(label="Error(s) it adds (several: separate with ;)", max_lines=1,
                                        placeholder="no fruit", elem_id="author-node-errors", scale=3)
                with gr.Row():
                    node_btn = gr.Button("Add node / set its errors", size="sm", elem_id="author-save-node")
                    rm_node_btn = gr.Button("Remove node", size="sm", elem_id="author-remove-node")
                gr.Markdown("##### Put images into nodes")
                pick = gr.CheckboxGroup([], label="Images (select)", elem_id="author-pick")
                with gr.Row():
                    target = gr.Dropdown([], label="Node", elem_id="author-target", allow_custom_value=True,
                                         min_width=100)
                    assign_btn = gr.Button("Put into node", size="sm", variant="primary", elem_id="author-assign")
                    out_btn = gr.Button("Take out", size="sm", elem_id="author-unassign")
                    rm_img_btn = gr.Button("Remove images", size="sm", elem_id="author-remove-images")
                with gr.Row():
                    new_name = gr.Textbox(label="File name in the dataset (one image selected)", max_lines=1,
                                          placeholder="images/apple-0.png", elem_id="author-file-name", scale=3)
                    rename_btn = gr.Button("Rename", size="sm", scale=1, elem_id="author-rename")
                gr.Markdown("##### Edges")
                follow = gr.Checkbox(True, label="Edges follow the error counts (every node of k errors to every "
                                                 "node of the next level)", elem_id="author-follow")
                with gr.Row():
                    parent = gr.Dropdown([], label="From (fewer errors)", elem_id="author-parent",
                                         allow_custom_value=True, min_width=100)
                    child = gr.Dropdown([], label="To (more errors)", elem_id="author-child",
                                        allow_custom_value=True, min_width=100)
                with gr.Row():
                    edge_btn = gr.Button("Add edge", size="sm", elem_id="author-add-edge")
                    rm_edge_btn = gr.Button("Remove edge", size="sm", elem_id="author-remove-edge")
            with gr.Column(scale=2, min_width=320):
                msg = gr.Markdown("*What each action did shows here.*", elem_id="author-msg", container=True)
                problems = gr.Markdown(elem_id="author-problems")
                graph = gr.HTML('<div class="authoring-empty">No SEG yet.</div>', elem_id="author-graph",
                                min_height=120, js_on_load=GRAPH_JS)
                nodes_tb = gr.Dataframe(interactive=False, wrap=True, elem_id="author-nodes",
                                        headers=["node", "errors", "images"], column_count=3,
                                        label="Nodes: the error(s) each adds, its images")
                gallery = gr.HTML(elem_id="author-gallery")
                with gr.Accordion("Score this SEG while building it", open=False, elem_id="author-score-box"):
                    how = gr.Radio([("a loaded metric (its scores of the dataset's images)", "loaded"),
                                    ("a metric of the library (scores every image now)", "library")],
                                   value="loaded", label="Score with", elem_id="author-score-source")
                    loaded = gr.Dropdown(cb_scoring.loaded_metric_choices(app),
                                         value=(cb_scoring.loaded_metric_choices(app) or [None])[0],
                                         label="Loaded metric", elem_id="author-loaded-metric")
                    if public:
                        spec = gr.Dropdown(app.access.choices(), value=(app.access.choices() or [None])[0],
                                           label="Library metric", elem_id="author-spec")
                    else:
                        spec = gr.Textbox("\n".join(app.access.offered[:1]), label="Library metric spec",
                                          max_lines=1, elem_id="author-spec",
                                          placeholder="clipscore:openai/clip-vit-base-patch32")
                    score_btn = gr.Button("Score", variant="primary", size="sm", elem_id="author-score")
                    summary = gr.Markdown(elem_id="author-score-summary")
                    walks = gr.Dataframe(empty_table("No walks scored yet: score this SEG (the Score button above)"),
                                         interactive=False, elem_id="author-walks", label="Walks, worst Ord first (x100)")
                with gr.Accordion("Export, import, push", open=True, elem_id="author-io"):
                    export_note = gr.Markdown(elem_id="author-export-note")
                    name = gr.Textbox("my-segs", label="Dataset name", max_lines=1, elem_id="author-name")
                    zip_btn = gr.Button("Download the session's SEGs as a dataset (.zip)", size="sm",
                                        elem_id="author-zip")
                    if not public:
                        with gr.Row():
                            out_dir = gr.Textbox(label="Export to a folder of this machine", max_lines=1, scale=3,
                                                 elem_id="author-export-dir")
                            overwrite = gr.Checkbox(False, label="replace", scale=1, min_width=80,
                                                    elem_id="author-overwrite")
                        export_btn = gr.Button("Export", size="sm", elem_id="author-export")
                        with gr.Row():
                            in_dir = gr.Textbox(label="Import a dataset folder of this machine (or a hub dataset id)",
                                                max_lines=1, scale=3,
                                                elem_id="author-import-dir")
                            import_btn = gr.Button("Import", size="sm", scale=1, elem_id="author-import")
                    zip_in = gr.File(label="Import a dataset .zip", file_count="single", file_types=[".zip"],
                                     elem_id="author-zip-in", height=120)
                    zip_in_btn = gr.Button("Import .zip", size="sm", elem_id="author-import-zip")
                    if not public:
                        with gr.Row():
                            repo = gr.Textbox(label="Push to a Hugging Face dataset repo (OWNER/NAME; token from "
                                                    "HF_TOKEN)", max_lines=1, scale=3, elem_id="author-repo")
                            private = gr.Checkbox(False, label="private", scale=1, min_width=80)
                        push_btn = gr.Button("Push", size="sm", elem_id="author-push")

    shown = [drafts, prompt, seg_id, partition, pick, target, parent, child, follow, problems, graph, nodes_tb,
             gallery, export_note]

    def render(view) -> tuple:
        st = cb_view.authoring_state(view)
        labels = st["labels"]
        text, sid, part = st["header"]
        return (gr.update(choices=st["drafts"], value=st["current"]), text, sid, part,
                gr.update(choices=st["images"], value=[]), gr.update(choices=labels),
                gr.update(choices=labels), gr.update(choices=labels), st["follow"], st["problems_md"], st["graph"],
                cb_view.nodes_table(st), cb_view.gallery_html(st), cb_view.all_problems_md(view))

    def action(button_or_event, fn, inputs, *, trigger=None, lane=None):
        """Wire an action: ``fn(view, *values) -> message``; then the tab shows the session's SEGs again.

        ``lane``: heavy work (images checked, a .zip unpacked) in a queue group of its own
        (:mod:`ts2viz.ui.serving.jobs`), never in the views' one.
        """
        def run(*values):
            *vals, request = values
            view = page.view(request, create=True)
            text = fn(view, *vals)
            return (text, *render(view))

        run.__name__ = getattr(fn, "__name__", "action")
        ev = trigger if trigger is not None else button_or_event.click
        page.on(ev, _with_request(run, len(inputs)), inputs, [msg, *shown], errors_to=msg, lane=lane)

    action(new_btn, cb_drafts.start_draft, [prompt, seg_id, partition])
    action(header_btn, cb_drafts.set_header, [prompt, seg_id, partition])
    action(vary_btn, cb_drafts.start_from_seg, [page.seg])
    action(drop_btn, cb_drafts.remove_draft, [])
    action(undo_btn, cb_drafts.undo, [])
    action(None, cb_drafts.select_draft, [drafts], trigger=drafts.input)
    action(add_btn, cb_images.add_uploads, [files, source], lane=FILES)
    if not public:
        action(folder_btn, cb_images.add_folder, [folder, source], lane=FILES)
    action(node_btn, cb_nodes.save_node, [label, errors])
    action(rm_node_btn, cb_nodes.remove_node, [label])
    action(assign_btn, cb_images.assign_images, [pick, target])
    def unassign_images(view, keys):
        return cb_images.assign_images(view, keys, None)

    action(out_btn, unassign_images, [pick])
    action(rm_img_btn, cb_images.remove_images, [pick])
    action(rename_btn, cb_images.rename_image, [pick, new_name])
    action(None, cb_nodes.set_edges_follow, [follow], trigger=follow.input)
    action(edge_btn, cb_nodes.add_edge, [parent, child])
    action(rm_edge_btn, cb_nodes.remove_edge, [parent, child])
    action(zip_in_btn, cb_transfer.import_zip, [zip_in], lane=FILES)
    if not public:
        action(export_btn, cb_transfer.export_folder, [out_dir, overwrite, name], lane=FILES)
        action(import_btn, cb_transfer.import_folder, [in_dir], lane=FILES)
        action(push_btn, cb_transfer.push, [repo, private, name])

    # a click on a node of the graph fills the node form (label and errors) and the target node
    def author_node_clicked(evt: Selection, request: gr.Request):
        st = cb_view.authoring_state(page.view(request))
        row = next((r for r in st["nodes"] if r["node"] == evt.value), None)
        return (row["node"], row["errors"], row["node"]) if row else (gr.skip(), gr.skip(), gr.skip())

    page.on(graph.select, author_node_clicked, None, [label, errors, target], show_progress="hidden")

    def author_score(how_v, loaded_v, spec_v, mode, request: gr.Request, progress=gr.Progress()):
        view = page.view(request, create=True)
        r = cb_scoring.score_draft(view, how_v, loaded_v if how_v == "loaded" else spec_v, mode, progress=progress)
        return f"✓ {r['message']}", r["summary"], r["walks"], r["graph"]

    page.on(score_btn.click, author_score, [how, loaded, spec, page.mode], [msg, summary, walks, graph],
            model=True, errors_to=msg)
    page.metric_pickers.append(loaded)

    def author_zip(name_v, request: gr.Request):
        return cb_transfer.export_zip(page.view(request, create=True), name_v)

    page.download(zip_btn, author_zip, [name], lane=FILES)
