"""Gradio's scan of every output for files, left out for the components whose values hold none.

After each output's postprocess Gradio walks its value element by element, twice
(``gradio.processing_utils.async_move_files_to_cache``), looking for file dicts to copy into its cache.
For a table of a few hundred cells (the explorer's walk table with its display values) that walk was about
a third of a warm view's time. A table, a plot, a Markdown text or a dropdown update holds no file: for
the components in :data:`FILELESS` an output's value is returned as the walk would return it (a pydantic
model as its dict), without the walk. Inputs (``postprocess=False``) are always walked: that walk is also
where Gradio checks that a visitor's file is one it may read.
"""
from __future__ import annotations

#: Gradio components whose values hold no file (a Dataframe only without image or file columns)
FILELESS = ("Markdown", "HTML", "Plot", "Dataframe", "Dropdown", "Radio", "CheckboxGroup", "Checkbox", "Textbox",
            "Number", "Slider", "Timer", "Button")


def holds_no_file(block) -> bool:
    """Whether a component's values hold no file (:data:`FILELESS`).

    Parameters
    ----------
    block : gradio.blocks.Block
        The component.

    Returns
    -------
    bool
        ``True`` for the classes of :data:`FILELESS` (their subclasses are walked as before), a Dataframe
        only when none of its columns is of an ``image`` or ``file`` datatype.
    """
    name = type(block).__name__
    if name not in FILELESS or type(block).__module__.split(".")[0] != "gradio":
        return False
    if name == "Dataframe":
        kinds = getattr(block, "datatype", None)
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        return not any(k in ("image", "file", "gallery") for k in kinds)
    return True


def skip_file_scan_of_fileless_outputs() -> bool:
    """Make Gradio leave out its file scan of the outputs of :func:`holds_no_file` components.

    Idempotent; call before the app serves.

    Returns
    -------
    bool
        ``True`` when installed now, ``False`` when it already was.
    """
    from gradio import processing_utils
    from gradio.data_classes import GradioModel, GradioRootModel

    original = processing_utils.async_move_files_to_cache
    if getattr(original, "ts2viz_fileless", False):
        return False

    async def async_move_files_to_cache(data, block, postprocess=False, check_in_upload_folder=False,
                                        keep_in_cache=False):
        if postprocess and holds_no_file(block):
            return data.model_dump() if isinstance(data, (GradioModel, GradioRootModel)) else data
        return await original(data, block, postprocess=postprocess, check_in_upload_folder=check_in_upload_folder,
                              keep_in_cache=keep_in_cache)

    async_move_files_to_cache.ts2viz_fileless = True
    async_move_files_to_cache.__wrapped__ = original
    processing_utils.async_move_files_to_cache = async_move_files_to_cache
    return True
