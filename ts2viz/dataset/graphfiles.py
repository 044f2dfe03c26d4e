"""A SEG's graph files: ``edges.csv`` (parent -> child edges) and ``nodes.csv`` (the errors each node adds)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import Problems
from ..seg import edge_problem, parse_label
from .reading import FolderCaps, csv_records, read_text_utf8


#: columns of the optional ``nodes.csv`` (error descriptions of nodes)
NODES_COLUMNS = ("id", "rank", "errors")


#: separator of several error descriptions in one ``errors`` cell of ``nodes.csv``
ERROR_SEPARATOR = ";"


@dataclass
class EdgeList:
    """The rows of an ``edges.csv``.

    Attributes
    ----------
    path : pathlib.Path
        The file (for messages).
    by_seg : dict[int, list of (str, str, int)]
        Per SEG id, ``(parent, child, line)`` triples.
    """

    path: Path
    by_seg: dict[int, list[tuple[str, str, int]]]


def read_edges(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> EdgeList:
    """The rows of an ``edges.csv``, each checked on its own.

    An integer id; parent and child well-formed labels with the parent at a lower error level. Whether
    the SEG and nodes exist is checked by :func:`read_metadata`.

    Parameters
    ----------
    path : pathlib.Path
        The file (``id, parent, child``).
    problems : Problems, optional
        Where a bad row is reported (default: raise); it is then left out.

    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``) and rows (``max_edges``).

    Returns
    -------
    EdgeList
        The good rows.

    Raises
    ------
    InputError
        If the file cannot be read as CSV with those columns, is past ``caps``, or for a bad row when
        ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    out: dict[int, list[tuple[str, str, int]]] = {}
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    for line, rec in csv_records(path, text, ("id", "parent", "child"), problems=problems,
                                 max_rows=caps.max_edges if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id']!r} is not an integer", file=path, row=line)
            continue
        a, b = rec["parent"], rec["child"]
        try:
            problem = edge_problem(a, b)
        except ValueError as e:
            problem = str(e)
        else:
            problem = problem and f"SEG {sid}: {problem}"
        if problem:
            problems.report(problem, file=path, row=line)
            continue
        out.setdefault(sid, []).append((a, b, line))
    return EdgeList(path, out)


def parse_errors(cell: str) -> tuple[str, ...]:
    """The error descriptions in an ``errors`` cell of ``nodes.csv``.

    Parameters
    ----------
    cell : str
        The cell: descriptions separated by ``;``.

    Returns
    -------
    tuple of str
        The descriptions, blanks collapsed, empty parts dropped.

    Examples
    --------
    >>> from ts2viz.dataset import parse_errors
    >>> parse_errors("no teddy bear;  lights   off ;")
    ('no teddy bear', 'lights off')
    """
    return tuple(" ".join(e.split()) for e in cell.split(ERROR_SEPARATOR) if e.strip())


@dataclass
class NodeErrorList:
    """The rows of a ``nodes.csv``.

    Attributes
    ----------
    path : pathlib.Path
        The file (for messages).
    by_seg : dict[int, dict[str, (tuple of str, int)]]
        Per SEG id, node label -> (error descriptions, line).
    """

    path: Path
    by_seg: dict[int, dict[str, tuple[tuple[str, ...], int]]]


def read_node_errors(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> NodeErrorList:
    """The rows of a ``nodes.csv`` (``id, rank, errors``), each checked on its own.

    An integer id, a well-formed node label, each node once. Whether the SEG and node exist is checked
    by :func:`read_metadata`.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    problems : Problems, optional
        Where a bad row is reported (default: raise); it is then left out.

    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``) and rows (``max_nodes``).

    Returns
    -------
    NodeErrorList
        The good rows.

    Raises
    ------
    InputError
        If the file cannot be read as CSV with those columns, is past ``caps``, or for a bad row when
        ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    out: dict[int, dict[str, tuple[tuple[str, ...], int]]] = {}
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    for line, rec in csv_records(path, text, NODES_COLUMNS, problems=problems,
                                 max_rows=caps.max_nodes if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id']!r} is not an integer", file=path, row=line)
            continue
        label = rec["rank"]
        try:
            parse_label(label)
        except ValueError as e:
            problems.report(str(e), file=path, row=line)
            continue
        seen = out.setdefault(sid, {})
        if label in seen:
            problems.report(f"node {label} of SEG {sid} is listed twice (first at row {seen[label][1]})",
                            file=path, row=line)
            continue
        seen[label] = (parse_errors(rec["errors"]), line)
    return NodeErrorList(path, out)
