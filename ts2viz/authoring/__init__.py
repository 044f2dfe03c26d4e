"""Authoring semantic error graphs: build, check, export, import and publish SEGs.

Build a SEG from a prompt and images (:class:`SegDraft`, immutable: every update returns a new
draft), check it with every rule of the dataset loader as it is built (:func:`draft_problems`,
:func:`draft_warnings`, :func:`seg_size` against :class:`SegLimits`), turn it into the
:class:`~ts2viz.seg.SEG` the explorer draws (:func:`draft_to_seg`, :func:`preview_seg`), score its
images live (:func:`score_drafts`), export it (with several others) as a dataset folder in ts2viz's
format (:func:`export_dataset`, :func:`pack_dataset`), import such a folder back
(:func:`import_dataset`, :func:`unpack_dataset`), push it to a Hugging Face dataset repo
(:func:`push_to_hub`).

Plain data and functions, no UI: the app's authoring tab calls these.

Examples
--------
>>> from ts2viz.authoring import SegDraft, draft_problems, draft_to_seg, seg_size
>>> d = (SegDraft("a red apple on a table", seg_id=0)
...      .add_node("0").add_node("1a", "no apple").add_node("2a", ["no apple", "no table"])
...      .add_image("k0", "images/apple-0.jpg", "0", "SD2.1")
...      .add_image("k1", "images/apple-1.jpg", "1a", "SD2.1"))
>>> [p.message for p in draft_problems(d)]
['node 2a has no images; a node of a dataset exists through its images']
>>> d = d.add_image("k2", "images/apple-2.jpg", "2a", "SD2.1")
>>> draft_problems(d)
[]
>>> draft_to_seg(d).walks()
[('0', '1a', '2a')]
>>> seg_size(d).walks
1

``export_dataset([d], "my_segs", {"k0": jpeg_bytes, ...})`` then writes it as a dataset folder that
``ts2viz validate my_segs`` and ``load_dataset("my_segs")`` read.
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
