"""The Live scoring tab: score the current SEG (or all) with library metrics, or score uploaded images.

Uploaded images are scored against the current SEG's node distributions. In public mode a visitor
picks metrics from the operator's list (no typed specs), the server chooses the device, and one call
scores one SEG. Results belong to the visitor's session.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from ..callbacks import live as cb_live
from ..glue.events import Page
from ..glue.plots import build_plain, plot_value


#: a successful run closes the error toasts still showing (one lasts 8 s and sits over the header,
#: where it would contradict the success just shown in the panel); Gradio has no server-side way to take
#: a toast back, so the page clicks their close buttons (Gradio's own dismissal, its toast store updated)
CLEAR_ERROR_TOASTS_JS = """() => {
  document.querySelectorAll("[data-testid='toast-body'] button.toast-close.error").forEach(b => b.click());
}"""


def clear_error_toasts_on_success(dep) -> None:
    """After an event succeeds, close the page's error toasts (in the browser, no server call).

    Parameters
    ----------
    dep : gradio.events.Dependency
        The event.
    """
    dep.success(None, None, None, js=CLEAR_ERROR_TOASTS_JS, queue=False, show_progress="hidden")


@dataclass
class LiveTab:
    """What the page wires across tabs: the two scoring actions (a new metric changes every view).

    Parameters
    ----------
    score_button : gradio.Button
        Scores the SEG(s).
    score_inputs : list
        Its inputs.
    score_message : gradio.Markdown
        Its status.
    score : callable
        ``(specs, scope, seg_id, device, request, progress) -> status line``.
    spec : gradio.Dropdown or gradio.Textbox
        The metric picker.
    upload_button : gradio.Button
        Scores the uploaded images.
    upload_inputs : list
        Its inputs.
    upload_outputs : list
        Its outputs.
    upload : callable
        ``(files, prompt, spec, seg_id, device, fmt, request, progress) -> outputs``.
    """

    score_button: Any
    score_inputs: list
    score_message: Any
    score: Callable          # (specs, scope, seg_id, device, request, progress) -> status line
    spec: Any
    upload_button: Any
    upload_inputs: list
    upload_outputs: list
    upload: Callable         # (files, prompt, spec, seg_id, device, fmt, request, progress) -> outputs


def build(page: Page) -> LiveTab:
    """Build the Live scoring tab (its model events are wired across tabs by the layout).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).

    Returns
    -------
    LiveTab
        What the page wires across tabs.
    """
    app = page.app
    access = app.access
    lib_md = "\n".join(f"- `{n}`: {d}" for n, d in cb_live.library_families()) or "_metric library not available_"
    with gr.Tab("Live scoring", id="live", elem_id="tab-live") as tab:
        with gr.Row():
            with gr.Column(scale=1):
                if access.public:
                    gr.Markdown("#### Score with a metric offered here\nThe results join your leaderboard "
                                "and every figure, in your session only."
                                + ("" if access.offered else "\n\n_This app offers no metrics for live scoring._"))
                    # display names (no folder path of the operator's); the server maps each to its spec
                    spec = gr.Dropdown(access.choices(), value=[], multiselect=True, max_choices=cb_live.MAX_SPECS,
                                       label="Metric(s)", elem_id="live-spec")
                else:
                    gr.Markdown("#### Score with a metric from the library\nSpec `FAMILY:MODEL`, e.g. "
                                "`clipscore:openai/clip-vit-base-patch32` or a local model folder. "
                                "Results join the leaderboard and every figure (in this browser session)."
                                + ("\n\nConfigured: " + ", ".join(f"`{o}`" for o in access.offered)
                                   if access.offered else ""))
                    spec = gr.Textbox(label="Metric spec(s), one per line", lines=2, elem_id="live-spec",
                                      value="\n".join(access.offered[:1]),
                                      placeholder="clipscore:openai/clip-vit-base-patch32")
                with gr.Row():
                    scope_choices = [("current SEG", "seg")] + ([("all SEGs", "all")] if access.limits.score_all_segs
                                                               else [])
                    scope = gr.Radio(scope_choices, value="seg", label="Score")
                    device = gr.Dropdown(["auto", "cpu", "cuda", "mps"], value="auto", label="Device",
                                         visible=not access.public)
                score_btn = gr.Button("Score", variant="primary", elem_id="live-score")
                # tall enough for Gradio's progress bar over it while a run lasts
                score_msg = gr.Markdown("*The outcome of a run shows here.*", elem_id="live-msg", min_height=72,
                                        container=True)
                with gr.Accordion("Metric families in the library", open=False):
                    gr.Markdown(lib_md)
            with gr.Column(scale=2):
                gr.Markdown("#### Score your own images against the current SEG")
                with gr.Row():
                    files = gr.File(label="Images (JPEG/PNG/WebP, up to 20 MB each)", file_count="multiple",
                                    file_types=["image"], elem_id="upload-images", scale=1)
                    with gr.Column(scale=1):
                        first = app.dataset[page.seg.value].prompt if page.seg.value is not None else ""
                        prompt = gr.Textbox(first, label="Prompt (default: the current SEG's prompt)", lines=2,
                                            max_length=cb_live.MAX_PROMPT_CHARS, elem_id="upload-prompt")
                        # per session: the SEG whose prompt the box was last given
                        prompt_for = gr.State(page.seg.value)
                        if access.public:
                            up_spec = gr.Dropdown(access.choices(), value=(access.choices() or [None])[0],
                                                  label="Metric", elem_id="upload-spec")
                        else:
                            up_spec = gr.Textbox(label="Metric spec", max_lines=1, elem_id="upload-spec")
                        up_btn = gr.Button("Score uploads", variant="primary", elem_id="upload-score")
                up_msg = gr.Markdown("*The outcome of a run shows here.*", elem_id="upload-msg", min_height=72,
                                     container=True)
                up_table = gr.Dataframe(interactive=False, elem_id="upload-table", label="Upload scores",
                                        headers=list(cb_live.UPLOAD_COLUMNS), column_count=len(cb_live.UPLOAD_COLUMNS))
                landing = gr.Plot(elem_id="landing-plot", show_label=False)

    # the upload prompt follows the current SEG; the upload spec follows the first live spec
    def seg_prompt(sid, last):
        # The SEG is picked in another tab: the prompt is set when this tab is opened with another SEG than
        # the prompt's (a visitor's own prompt stays while the SEG does), not at every SEG change, which
        # would cost every view change a call.
        try:
            seg_id = int(sid)
        except (TypeError, ValueError):
            return gr.skip(), gr.skip()
        if str(sid) == str(last) or seg_id not in app.dataset.segs:
            return gr.skip(), gr.skip()
        return app.dataset[seg_id].prompt, sid

    def first_spec(s):
        items = list(s) if isinstance(s, (list, tuple)) else (s or "").split("\n")
        first = next((str(x).strip() for x in items if str(x).strip()), "")
        return first if not access.public or first in access.choices() else gr.skip()

    # trivial: answered on their own requests, not queued behind views
    page.on(tab.select, seg_prompt, [page.seg, prompt_for], [prompt, prompt_for], show_progress="hidden", queue=False)
    page.on(spec.change, first_spec, spec, up_spec, show_progress="hidden", queue=False)

    def score(specs, scope_v, seg_id, dev, request: gr.Request, progress=gr.Progress()) -> str:
        view = page.view(request, create=True)
        return f"✓ {cb_live.live_score(view, specs, scope_v, seg_id, dev, progress=progress)}"

    def upload(files_v, prompt_v, spec_v, seg_id, dev, fmt, request: gr.Request, progress=gr.Progress()):
        view = page.view(request, create=True)
        # the figure is built as plain dicts (build_plain), the one form the page is sent
        r = build_plain(lambda: cb_live.score_uploads(view, files_v, prompt_v, spec_v or "", seg_id, dev, progress=progress))
        return r["message"], r["table"], plot_value(r["figure"], fmt)

    return LiveTab(score_btn, [spec, scope, page.seg, device], score_msg, score, spec,
                   up_btn, [files, prompt, up_spec, page.seg, device, page.fmt], [up_msg, up_table, landing], upload)
