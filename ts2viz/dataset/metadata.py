"""A dataset's ``metadata.csv``: one row per image, read into SEGs with their partitions, edges and errors."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..errors import InputError, Problems, warn_input
from ..seg import (SEG, build_seg, label_sort_key, missing_node_problem, no_root_problem, parse_label,
                   unreachable_problem)
from .graphfiles import EdgeList, NodeErrorList
from .model import PARTITIONS, Dataset, ImageRow, ts2_partition
from .reading import FolderCaps, csv_records, read_text_utf8


REQUIRED_COLUMNS = ("id", "target_prompt", "file_name", "image_source", "rank")


def canonical_partition(value: str) -> str:
    """The canonical spelling of a partition name: TS2's (``synth`` -> ``Synth``), else ``value`` as is.

    Parameters
    ----------
    value : str
        A partition name.

    Returns
    -------
    str
        The name.
    """
    for p in PARTITIONS:
        if value.lower() == p.lower():
            return p
    return value


def _partition(value: str, sid: int, path: Path, line: int, unknown: dict[str, tuple[int, int]]) -> str:
    """The canonical spelling of a partition cell (``synth`` -> ``Synth``).

    An unknown value is kept as a partition of its own and reported once (``unknown`` collects value ->
    (SEG, line)).
    """
    value = canonical_partition(value)
    if value not in PARTITIONS:
        unknown.setdefault(value, (sid, line))
    return value


def read_metadata(path: Path, *, name: str, root: Path | None, edges: EdgeList | None = None,
                  problems: Problems | None = None, node_errors: NodeErrorList | None = None,
                  caps: FolderCaps | None = None) -> Dataset:
    """Parse a TS2-style ``metadata.csv`` into a :class:`Dataset`, validating every row.

    A ``partition`` value other than Synth, Nat, Real (any case) is kept as a partition of its own;
    beside SEGs in TS2's partitions it is also reported with an :class:`~ts2viz.errors.InputWarning` (a
    likely misspelling), alone it is the user's choice. With explicit edges, every node must be reachable
    from an error-0 node. A SEG whose rows give several prompts takes the most common one (the TS2
    release has one such SEG, 3).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    name : str
        The dataset's name.
    root : pathlib.Path or None
        The folder the image file names are relative to.
    edges : EdgeList, optional
        The rows of the dataset's ``edges.csv``: each must name a SEG and nodes that exist.
    problems : Problems, optional
        Receives every problem (default: raise the first). When it collects them instead
        (:func:`validate_folder`), a bad row or SEG is left out and reading goes on, so that each later
        problem is found too; the returned dataset then holds only the good SEGs.
    node_errors : NodeErrorList, optional
        The rows of ``nodes.csv``: each must name a SEG and a node that exist.
    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``), its rows (``max_images``) and its SEGs (``max_segs``).

    Returns
    -------
    Dataset
        The dataset, rows in SEG order.

    Raises
    ------
    InputError
        Naming the file (``metadata.csv``, ``edges.csv`` or ``nodes.csv``) and the row (1-based file
        line; the header is line 1): a bad id, an empty or repeated file name, a malformed label, a SEG in
        two partitions, no rows, a SEG without an error-0 node, an edge or node entry naming what does not
        exist, a node no walk reaches, a file past ``caps``.

    Warns
    -----
    InputWarning
        For a partition that is likely misspelt, and a SEG with several prompts (other than TS2's).
    """
    problems = Problems() if problems is None else problems
    path = Path(path)
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    rows: list[ImageRow] = []
    first_row: dict[int, int] = {}
    seen: dict[str, int] = {}
    seg_partition: dict[int, tuple[str, int]] = {}
    unknown: dict[str, tuple[int, int]] = {}
    for i, rec in csv_records(path, text, REQUIRED_COLUMNS, ("partition",), problems=problems,
                              max_rows=caps.max_images if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id'][:40]!r} is not an integer", file=path, row=i)
            continue
        if caps is not None and sid not in seg_partition and len(seg_partition) >= caps.max_segs:
            raise InputError(f"more than {caps.max_segs:,} SEGs; the limit is {caps.max_segs:,}", file=path, row=i)
        fn = rec["file_name"]
        if not fn:
            problems.report("empty file_name", file=path, row=i)
            continue
        if fn in seen:
            problems.report(f"duplicate file_name {fn!r} (first at row {seen[fn]})", file=path, row=i)
            continue
        seen[fn] = i
        label = rec["rank"]
        try:
            level = parse_label(label)
        except ValueError as e:
            problems.report(str(e), file=path, row=i)
            continue
        part = rec.get("partition", "")
        part = _partition(part, sid, path, i, unknown) if part else ts2_partition(sid)
        if sid in seg_partition and seg_partition[sid][0] != part:
            problems.report(f"SEG {sid} is in partition {part!r} here but in {seg_partition[sid][0]!r} at row "
                            f"{seg_partition[sid][1]}: a SEG belongs to one partition", file=path, row=i)
            continue
        seg_partition.setdefault(sid, (part, i))
        first_row.setdefault(sid, i)
        rows.append(ImageRow(sid, fn, rec["target_prompt"], rec["image_source"], label, level, part))
    if not rows and not problems:
        raise InputError("no image rows below the header", file=path)
    # A partition of the user's own ("Custom", "Medical") is a choice when no SEG uses TS2's names; beside
    # TS2's names it is more likely a misspelling ("Synthetic" for "Synth"), so it is reported then.
    mixed = any(p in PARTITIONS for p, _ in seg_partition.values())
    for value, (sid, line) in (unknown.items() if mixed else ()):
        n = sum(1 for p, _ in seg_partition.values() if p == value)
        warn_input(f"partition {value!r} (SEG {sid}) is not one of {', '.join(PARTITIONS)}; its {n} SEG(s) "
                   f"form a partition of their own", file=path, row=line)

    by_seg: dict[int, list[ImageRow]] = {}
    for r in rows:
        by_seg.setdefault(r.seg_id, []).append(r)
    bad_segs: set[int] = set()
    if edges is not None:
        for sid, items in edges.by_seg.items():
            if sid not in by_seg:
                problems.report(f"edge {items[0][0]}->{items[0][1]} is for SEG {sid}, which {path.name} does "
                                f"not have", file=edges.path, row=items[0][2])
                continue
            labels = {r.label for r in by_seg[sid]}
            for a, b, line in items:
                problem = missing_node_problem(sid, a, b, labels)
                if problem:
                    problems.report(problem, file=edges.path, row=line)
                    bad_segs.add(sid)
        # after every row's own checks: a node no walk reaches (the SEG's edges as a whole)
        for sid, items in edges.by_seg.items():
            if sid in by_seg and sid not in bad_segs:
                problem = unreachable_problem(sid, {r.label for r in by_seg[sid]}, [(a, b) for a, b, _ in items])
                if problem:
                    problems.report(problem, file=edges.path, row=items[0][2])
                    bad_segs.add(sid)
    errors_of: dict[int, dict[str, tuple[str, ...]]] = {}
    if node_errors is not None:
        for sid, entries in node_errors.by_seg.items():
            for label, (errs, line) in entries.items():
                if sid not in by_seg:
                    problems.report(f"errors of node {label} are for SEG {sid}, which {path.name} does not have",
                                    file=node_errors.path, row=line)
                    break
                labels = {r.label for r in by_seg[sid]}
                if label not in labels:
                    problems.report(f"SEG {sid} has no node {label!r} (nodes: "
                                    f"{', '.join(sorted(labels, key=label_sort_key))})",
                                    file=node_errors.path, row=line)
                    continue
                errors_of.setdefault(sid, {})[label] = errs
    segs: dict[int, SEG] = {}
    for sid in sorted(by_seg):
        if sid in bad_segs:
            continue
        members = by_seg[sid]
        prompts = Counter(r.prompt for r in members)
        prompt = prompts.most_common(1)[0][0]
        if len(prompts) > 1 and name != "ts2":
            # The TS2 release itself has one such row (SEG 3); the SEG's prompt is the majority one.
            warn_input(f"SEG {sid} has {len(prompts)} different prompts; using {prompt!r}", file=path,
                       row=first_row[sid])
        problem = no_root_problem(sid, (r.label for r in members))
        if problem:
            problems.report(problem, file=path, row=first_row[sid])
            continue
        # A SEG without rows in edges.csv keeps the implied edges.
        seg_edges = None
        if edges is not None and sid in edges.by_seg:
            seg_edges = [(a, b) for a, b, _ in edges.by_seg[sid]]
        try:
            segs[sid] = build_seg(sid, prompt, members[0].partition,
                                  ((r.file_name, r.image_source, r.label) for r in members),
                                  edges=seg_edges, node_errors=errors_of.get(sid))
        except ValueError as e:
            problems.report(str(e), file=path, row=first_row[sid])
            continue
    # Keep rows in SEG order so that per-SEG slices are contiguous (and only rows of good SEGs).
    rows = [r for r in rows if r.seg_id in segs]
    rows.sort(key=lambda r: r.seg_id)
    return Dataset(name=name, segs=segs, rows=rows, root=root)
