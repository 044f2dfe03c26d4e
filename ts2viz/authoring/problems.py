"""Every check of the dataset loader, applied to a draft as it is being built (:func:`draft_problems`).

The rules are the loader's own functions (:mod:`ts2viz.seg`: ``parse_label``, ``edge_problem``,
``no_root_problem``, ``missing_node_problem``, ``unreachable_problem``), so a draft's messages read
like ``ts2viz validate``'s. A few rules exist only here, because only an export needs them: a file name
must be a relative path inside the dataset folder, a node must have images (in a dataset a node exists
through its images), an error description cannot hold the ``;`` that separates descriptions.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable, Sequence

from ..dataset import ERROR_SEPARATOR
from ..seg import edge_problem, missing_node_problem, no_root_problem, parse_label, unreachable_problem
from .draft import SegDraft

#: extensions :func:`safe_file_name` keeps
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "webp", "gif", "bmp", "tif", "tiff")

#: names an image cannot take: the dataset's own files
RESERVED_NAMES = frozenset({"metadata.csv", "edges.csv", "nodes.csv", "README.md"})


@dataclass(frozen=True)
class DraftProblem:
    """One problem of a draft, in one readable line, with what it is about so a UI can point at it.

    Parameters
    ----------
    message : str
        The problem, worded as ``ts2viz validate`` words the loader's (``str()`` of the problem).
    node : str or None, default None
        The node label it is about.
    image : str or None, default None
        The image key it is about.
    edge : (str, str) or None, default None
        The edge it is about.
    """

    message: str
    node: str | None = None
    image: str | None = None
    edge: tuple[str, str] | None = None

    def __str__(self) -> str:
        """The message."""
        return self.message


def file_name_problem(file_name: str) -> str | None:
    """Why a file name cannot be an image's path in an exported dataset folder.

    It must be a relative POSIX path inside the folder (no ``..``, no absolute path, no backslash, no
    hidden or empty part, no control character) and not one of the dataset's own files
    (:data:`RESERVED_NAMES`).

    Parameters
    ----------
    file_name : str
        The candidate path.

    Returns
    -------
    str or None
        The problem in one line, or ``None`` when the name is fine.

    Examples
    --------
    >>> file_name_problem("images/a.jpg") is None
    True
    >>> file_name_problem("../a.jpg")
    "file_name '../a.jpg' has an empty, '.' or '..' part; expected a path like images/a.jpg"
    """
    fn = file_name
    if not fn:
        return "empty file_name"
    if any(ord(c) < 32 or c == "\x7f" for c in fn):
        return f"file_name {fn!r} contains a control character"
    if "\\" in fn:
        return f"file_name {fn!r} contains a backslash; use / between folders"
    if fn.startswith("/") or (len(fn) > 1 and fn[1] == ":"):
        return f"file_name {fn!r} is an absolute path; expected a path inside the dataset folder, e.g. images/a.jpg"
    parts = fn.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"file_name {fn!r} has an empty, '.' or '..' part; expected a path like images/a.jpg"
    if any(p.startswith(".") for p in parts):
        return f"file_name {fn!r} has a hidden part (starting with '.')"
    if str(PurePosixPath(fn)) in RESERVED_NAMES:
        return f"file_name {fn!r} is one of the dataset's own files ({', '.join(sorted(RESERVED_NAMES))})"
    return None


def safe_file_name(name: str, taken: Iterable[str] = (), folder: str = "images") -> str:
    r"""A dataset file name for an image uploaded under a visitor's file name.

    The visitor's name is never used as a path as such: the result is ``folder/<stem>.<ext>`` with the
    stem reduced to lower-case letters, digits, ``-`` and ``_`` (``image`` if nothing is left), the
    extension kept if it is an image type's (else ``.png``), and ``-2``, ``-3``, ... added until it is not
    in ``taken``. The result passes :func:`file_name_problem`.

    Parameters
    ----------
    name : str
        The uploaded file's name (any folders in it are dropped).
    taken : iterable of str, default ()
        File names already used.
    folder : str, default "images"
        The folder inside the dataset (unsafe parts dropped; ``""``: the dataset's top).

    Returns
    -------
    str
        The file name.

    Examples
    --------
    >>> safe_file_name("C:\\Users\\me\\My Cat (1).JPG", taken=["images/my-cat-1.jpg"])
    'images/my-cat-1-2.jpg'
    >>> safe_file_name("../../etc/passwd")
    'images/passwd.png'
    """
    import re

    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = ext, ""
    stem = re.sub(r"[^a-z0-9_-]+", "-", stem.lower()).strip("-_")[:60] or "image"
    ext = ext.lower() if ext.lower() in IMAGE_EXTENSIONS else "png"
    folder = "/".join(p for p in str(folder).split("/") if p and p not in (".", "..") and not p.startswith("."))
    prefix = f"{folder}/" if folder else ""
    taken = set(taken)
    out, k = f"{prefix}{stem}.{ext}", 1
    while out in taken:
        k += 1
        out = f"{prefix}{stem}-{k}.{ext}"
    return out


def _nested_problem(file_name: str, is_image: Callable[[str], bool]) -> str | None:
    """Why ``file_name`` cannot be written: one of its folders is another image's file (``is_image``)."""
    parts = file_name.split("/")
    for i in range(1, len(parts)):
        parent = "/".join(parts[:i])
        if is_image(parent):
            return f"file_name {file_name!r} is inside {parent!r}, which is another image's file"
    return None


def draft_problems(draft: SegDraft) -> list[DraftProblem]:
    """Every problem that would stop a draft from exporting and loading, in a stable order.

    The checks are the dataset loader's own (:mod:`ts2viz.seg`), so the messages read like
    ``ts2viz validate``'s, in this order: the SEG (id, prompt, partition), node labels (well-formed,
    distinct), error descriptions, images (in a node that exists, file names valid and distinct), empty
    nodes, edges (existing nodes, lower to higher error level), an error-0 node, every node reachable
    from one.

    Parameters
    ----------
    draft : SegDraft
        The draft.

    Returns
    -------
    list of DraftProblem
        The problems; empty when the draft is good.

    See Also
    --------
    draft_warnings : what loads but may not be what the author means.
    drafts_problems : several drafts as one dataset.

    Examples
    --------
    >>> d = SegDraft("a red apple").add_node("1a", "no apple").add_image("k", "images/a.png", "1a")
    >>> [p.message for p in draft_problems(d)]
    ['SEG 0 has no error-0 node (labels: 1a)']
    >>> d = d.add_node("0").add_image("k0", "images/a.png", "0")
    >>> [str(p) for p in draft_problems(d)]
    ["duplicate file_name 'images/a.png' (images 'k' and 'k0')"]
    >>> draft_problems(d.set_image("k0", file_name="images/b.png"))
    []
    """
    out: list[DraftProblem] = []
    sid = draft.seg_id
    if isinstance(sid, bool) or not isinstance(sid, int) or sid < 0:
        out.append(DraftProblem(f"SEG id {sid!r} is not a non-negative integer"))
    if not draft.prompt:
        out.append(DraftProblem("the SEG has no prompt"))
    if not draft.partition:
        out.append(DraftProblem("the SEG has no partition (e.g. Custom, Synth, Nat, Real)"))
    elif "\n" in draft.partition or "\r" in draft.partition:
        out.append(DraftProblem(f"partition {draft.partition!r} spans lines"))

    # nodes
    good: list[str] = []                       # well-formed labels, each once
    counts = Counter(draft.labels)
    for label, n in counts.items():
        try:
            parse_label(label)
        except ValueError as e:
            out.append(DraftProblem(str(e), node=label))
            continue
        if n > 1:
            out.append(DraftProblem(f"node {label} appears {n} times; node labels must be distinct", node=label))
        good.append(label)
    for node in draft.nodes:
        for err in node.errors:
            if not err.strip():
                out.append(DraftProblem(f"node {node.label}: an error description is empty", node=node.label))
            elif ERROR_SEPARATOR in err:
                out.append(DraftProblem(f"node {node.label}: error description {err!r} contains "
                                        f"'{ERROR_SEPARATOR}', which separates descriptions in nodes.csv",
                                        node=node.label))
            elif "\n" in err or "\r" in err:
                out.append(DraftProblem(f"node {node.label}: error description {err!r} spans lines",
                                        node=node.label))

    # images
    seen: dict[str, str] = {}
    for im in draft.images:
        what = im.file_name or repr(im.key)
        if im.node is None:
            out.append(DraftProblem(f"image {what} is not in a node", image=im.key))
        elif im.node not in counts:
            out.append(DraftProblem(f"image {what} is in node {im.node!r}, which the SEG does not have",
                                    image=im.key, node=im.node))
        problem = file_name_problem(im.file_name)
        if problem:
            out.append(DraftProblem(f"image {im.key!r}: {problem}", image=im.key))
        elif im.file_name in seen:
            out.append(DraftProblem(f"duplicate file_name {im.file_name!r} (images {seen[im.file_name]!r} and "
                                    f"{im.key!r})", image=im.key))
        else:
            seen[im.file_name] = im.key
        if "\n" in im.source or "\r" in im.source:
            out.append(DraftProblem(f"image {what}: image_source {im.source!r} spans lines", image=im.key))
    for fn, key in seen.items():
        problem = _nested_problem(fn, seen.__contains__)
        if problem:
            out.append(DraftProblem(problem, image=key))
    filled = {im.node for im in draft.images}
    for label in counts:
        if label not in filled:
            out.append(DraftProblem(f"node {label} has no images; a node of a dataset exists through its images",
                                    node=label))

    # edges
    edges_ok = True
    if draft.edges is not None:
        for a, b in draft.edges:
            try:
                problem = missing_node_problem(sid, a, b, good) or edge_problem(a, b)
            except ValueError as e:         # a malformed label (reported above when it is a node's)
                problem = f"edge {a}->{b}: {e}"
            if problem:
                edges_ok = False
                if f"SEG {sid}" not in problem:         # as the loader words it: edge_problem's with the SEG
                    problem = f"SEG {sid}: {problem}"
                out.append(DraftProblem(problem, edge=(a, b)))

    # walks
    if good:
        problem = no_root_problem(sid, good)
        if problem:
            out.append(DraftProblem(problem))
        elif draft.edges is not None and edges_ok:
            problem = unreachable_problem(sid, good, draft.edges)
            if problem:
                out.append(DraftProblem(problem))
    elif not draft.nodes:
        out.append(DraftProblem("the SEG has no nodes; add an error-0 node (label 0) first"))
    return out


def drafts_problems(drafts: Sequence[SegDraft]) -> list[DraftProblem]:
    """The problems of several drafts exported together as one dataset.

    Each draft's :func:`draft_problems` (messages prefixed ``SEG <id>: `` where they do not name it),
    then the problems of the drafts together: at least one SEG, SEG ids distinct, image file names
    distinct across SEGs (and no image inside another's file name).

    Parameters
    ----------
    drafts : sequence of SegDraft
        The drafts.

    Returns
    -------
    list of DraftProblem
        The problems; empty when the drafts export and load as one dataset.

    Examples
    --------
    >>> d = SegDraft("p", seg_id=1).add_node("0").add_image("k", "images/a.png", "0")
    >>> [p.message for p in drafts_problems([d, d.with_prompt("q")])]
    ['SEG id 1 is used by 2 SEGs; ids must be distinct']
    """
    out: list[DraftProblem] = []
    if not drafts:
        return [DraftProblem("no SEG to export")]
    ids = Counter(d.seg_id for d in drafts)
    for sid, n in ids.items():
        if n > 1:
            out.append(DraftProblem(f"SEG id {sid} is used by {n} SEGs; ids must be distinct"))
    where: dict[str, int] = {}
    for d in drafts:
        for p in draft_problems(d):
            msg = p.message if p.message.startswith(f"SEG {d.seg_id}") else f"SEG {d.seg_id}: {p.message}"
            out.append(DraftProblem(msg, p.node, p.image, p.edge))
        for fn in dict.fromkeys(im.file_name for im in d.images):
            if fn in where and where[fn] != d.seg_id:
                out.append(DraftProblem(f"duplicate file_name {fn!r} (SEG {where[fn]} and SEG {d.seg_id})"))
            where.setdefault(fn, d.seg_id)
    for fn, sid in where.items():          # across SEGs (within one, draft_problems says it)
        problem = _nested_problem(fn, lambda p, sid=sid: where.get(p, sid) != sid)
        if problem:
            out.append(DraftProblem(f"SEG {sid}: {problem}"))
    return out


def draft_warnings(draft: SegDraft) -> list[DraftProblem]:
    """What loads but may not be what the author means (an export goes ahead), one line each.

    A SEG with one error level only (no walk has two levels, so Ord and Sep are undefined for it), an
    error-0 node that lists errors (it should match the prompt), a node listing more errors than its
    error count.

    Parameters
    ----------
    draft : SegDraft
        The draft.

    Returns
    -------
    list of DraftProblem
        The warnings; empty when there are none.

    Examples
    --------
    >>> d = SegDraft("p").add_node("0", "a blue sky").add_node("1a", "no cat; no dog")
    >>> [w.message for w in draft_warnings(d)]
    ['node 0 is an error-0 node (it matches the prompt) but lists errors: a blue sky',
     'node 1a lists 2 errors but its label says 1']
    """
    out: list[DraftProblem] = []
    levels: dict[str, int] = {}
    for n in draft.nodes:
        try:
            levels[n.label] = parse_label(n.label)
        except ValueError:
            continue
    if levels and len(set(levels.values())) == 1:
        out.append(DraftProblem(f"the SEG has one error level ({next(iter(levels.values()))}); a walk needs two, "
                                f"so Ord and Sep are undefined for it"))
    for n in draft.nodes:
        lv = levels.get(n.label)
        if lv is None or not n.errors:
            continue
        if lv == 0:
            out.append(DraftProblem(f"node {n.label} is an error-0 node (it matches the prompt) but lists "
                                    f"errors: {'; '.join(n.errors)}", node=n.label))
        elif len(n.errors) > lv:
            out.append(DraftProblem(f"node {n.label} lists {len(n.errors)} errors but its label says "
                                    f"{lv}", node=n.label))
    return out
