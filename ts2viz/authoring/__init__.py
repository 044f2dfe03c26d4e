"""Authoring semantic error graphs: build a SEG from a prompt and images, check it with every rule of
the dataset loader as it is built, export it (with several others) as a dataset folder in ts2viz's
format, import such a folder back, push it to a Hugging Face dataset repo.

Plain data and functions, no UI: the app's authoring tab calls these.

    from ts2viz.authoring import SegDraft, draft_problems, export_dataset
    d = (SegDraft("a red apple on a table", seg_id=0)
         .add_node("0").add_node("1a", "no apple").add_node("2a", ["no apple", "no table"])
         .add_image("k0", "images/apple-0.jpg", "0", "SD2.1") ...)
    draft_problems(d)          # [] when it would load
    export_dataset([d], "my_segs", {"k0": b"...jpeg bytes...", ...})
"""
from .archive import pack_dataset, unpack_dataset
from .convert import draft_from_seg, draft_to_seg, drafts_to_dataset, preview_seg
from ..dataset import ERROR_SEPARATOR
from .draft import DraftImage, DraftNode, SegDraft, canonical, clean_errors
from .export import dataset_card, export_dataset, image_locator, import_dataset
from .hub import dataset_files, push_to_hub
from .limits import SegLimits, SegSize, seg_size
from .scoring import score_drafts
from .problems import DraftProblem, draft_problems, draft_warnings, drafts_problems, file_name_problem, safe_file_name

__all__ = [
    "DraftNode", "DraftImage", "SegDraft", "clean_errors", "ERROR_SEPARATOR",
    "DraftProblem", "draft_problems", "draft_warnings", "drafts_problems", "file_name_problem",
    "draft_to_seg", "draft_from_seg", "drafts_to_dataset", "preview_seg", "safe_file_name",
    "export_dataset", "import_dataset", "image_locator", "canonical", "dataset_card",
    "push_to_hub", "dataset_files", "score_drafts", "pack_dataset", "unpack_dataset",
    "SegLimits", "SegSize", "seg_size",
]
