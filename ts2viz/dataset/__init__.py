"""SEG datasets and their loaders: the bundled TS2 metadata, a local folder, a Hugging Face dataset id.

A dataset folder is laid out like the released TS2 dataset: ``metadata.csv`` with the columns
``id, target_prompt, file_name, image_source, rank`` (``rank`` is the node label) and the image files at
``file_name`` relative to the folder. Optional: a ``partition`` column (otherwise TS2's id ranges are
used), ``edges.csv`` with columns ``id, parent, child`` (otherwise every node of error level k
connects to every node of the next error level present), and ``nodes.csv`` with columns
``id, rank, errors``: the error(s) each node adds relative to its parent, in words, several separated by
``;`` (read into :attr:`ts2viz.seg.Node.errors`).

The package's interface is what it exports here; its modules, one concept each:

- :mod:`.model`: the dataset and its image rows (:class:`Dataset`, :class:`ImageRow`);
- :mod:`.loaders`: :func:`load_dataset` and its three sources (:func:`load_bundled`, :func:`load_folder`,
  :func:`load_hf`);
- :mod:`.validation`: every problem of a folder at once (:func:`validate_folder`);
- :mod:`.images`: a dataset's image files, local, cached or downloaded (:func:`fetch_image`);
- :mod:`.reading`: UTF-8 CSV text and records (:func:`csv_records`), and :class:`FolderCaps`;
- :mod:`.metadata`: ``metadata.csv`` (:func:`read_metadata`);
- :mod:`.graphfiles`: ``edges.csv`` and ``nodes.csv`` (:func:`read_edges`, :func:`read_node_errors`);
- :mod:`.segids`: ``--seg`` ids (:func:`parse_seg_ids`);
- :mod:`.tags`: tags of SEGs in families (``partition`` for every dataset, the user's ``seg_id,family,tag``
  files) and the slices of SEGs they define (:func:`seg_slices`).
"""
from __future__ import annotations

from .graphfiles import (ERROR_SEPARATOR, NODES_COLUMNS, EdgeList, NodeErrorList, parse_errors, read_edges,
                         read_node_errors)
from .images import cached_image, fetch_image, images_available
from .loaders import load_bundled, load_dataset, load_folder, load_hf
from .metadata import REQUIRED_COLUMNS, canonical_partition, read_metadata
from .model import PARTITIONS, TS2_FINGERPRINT, TS2_HF_ID, Dataset, ImageRow, ts2_partition
from .reading import FolderCaps, csv_records, read_text_utf8
from .segids import MAX_SEG_IDS, parse_seg_ids
from .tags import PARTITION_FAMILY, SegTags, read_seg_tags, seg_slices, seg_tags
from .validation import ValidationReport, validate_folder

__all__ = ["Dataset", "ImageRow", "PARTITIONS", "TS2_HF_ID", "TS2_FINGERPRINT", "ts2_partition",
           "load_dataset", "load_bundled", "load_folder", "load_hf",
           "ValidationReport", "validate_folder",
           "cached_image", "images_available", "fetch_image",
           "FolderCaps", "read_text_utf8", "csv_records",
           "REQUIRED_COLUMNS", "canonical_partition", "read_metadata",
           "NODES_COLUMNS", "ERROR_SEPARATOR", "EdgeList", "NodeErrorList", "parse_errors", "read_edges",
           "read_node_errors",
           "MAX_SEG_IDS", "parse_seg_ids",
           "PARTITION_FAMILY", "SegTags", "read_seg_tags", "seg_tags", "seg_slices"]
