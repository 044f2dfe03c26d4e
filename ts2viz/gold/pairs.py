r"""Side-by-side gold (pairs of images with a human verdict) and judges' verdicts on them.

A **pair set** holds, per pair: ``pair_id``, ``prompt``, ``image_a``, ``image_b`` (image ids or paths, may be
empty), ``model_a``, ``model_b`` (the T2I models, may be empty) and the human verdict ``human``: ``A`` (the
first image is better), ``B``, ``tie-good`` (both good) or ``tie-bad`` (both bad).

A **verdict table** holds, per judge and pair: ``pair_id``, ``order`` (``forward``: image A shown first;
``reverse``: image B shown first), ``judge``, ``raw`` (the judge's text) and ``verdict``, in the order the
images were *shown*: ``A`` means the first image shown, so a reverse verdict ``A`` prefers ``image_b``.
Verdicts are ``A``, ``B``, ``tie-good``, ``tie-bad``, ``tie`` (a tie without good/bad), ``unparsed`` (a text
with no verdict in it) or ``empty`` (no text: the judge gave nothing).

Files
-----
Pair CSV (a folder's ``pairs.csv`` or any CSV): ``pair_id`` and either ``human`` (one of the four labels,
GenAI-Bench's ``leftvote``/``rightvote``/``tievote``/``bothbad_vote`` accepted) or vote counts ``votes_a``,
``votes_b``, ``votes_tie`` (optional ``votes_tie_bad``); optional ``prompt``, ``image_a``, ``image_b``,
``model_a``, ``model_b``. From counts, the verdict is Gecko's: ``A`` when A has more votes than B and than
the ties together, ``B`` likewise, else a tie (``tie-bad`` when it has more votes than ``votes_tie``).

Verdict CSV or parquet: ``pair_id``, ``judge``, optional ``order`` (default ``forward``), ``verdict`` and/or
``raw`` (a verdict cell, when present and non-empty, wins; else the verdict is parsed from ``raw``).

Released layouts:

- GenAI-Bench (TIGER-AI-Lab/GenAI-Bench): ``results/image_generation/<judge>/pairwise.jsonl`` (``idx``,
  ``prompt``, ``response``, ``human_vote``): :func:`load_genaibench_pairs` and :func:`load_verdicts` on the
  folder or one file;
- MMRB2 (facebookresearch/MMRB2, CC BY-NC 4.0, so never bundled): a benchmark JSON ``{"pairs": [{"id",
  "chosen": "A"|"B", "response_a": {"model_name", "response_content": [["image", path]]}, ...}]}`` and a
  predictions JSON ``{pair_id: {"forward": [{"judgement", "evaluator", "metadata"}], "reverse": [...]}}``
  (the layout of MMRB2's ``evaluate/compute_scores/compute_accuracy.py`` and its sample outputs).

Parsing a judge's text (:func:`parse_verdict`) is a named rule:

- ``genaibench``: GenAI-Bench's ``inference.py`` ``parse_response``: the first match of the greedy regular
  expression ``\[\[.*\]\]`` (one line, from its first ``[[`` to its last ``]]``); ``[[A>B]]`` and
  ``[[A>>B]]`` are ``A``, ``[[B>A]]`` and ``[[B>>A]]`` are ``B``, ``[[A=B=Good]]`` / ``[[A=B=Bad]]`` the two ties
  and ``[[A=B]]`` a ``tie`` that the release counts right for either tie vote; anything else is unparsed.
  This reproduces the release's ``correct`` field on every line of all 18 judges.
- ``canonical``: the same extraction, but only the four canonical tokens of GenAI-Bench's template
  (``[[A>B]]``, ``[[B>A]]``, ``[[A=B=Good]]``, ``[[A=B=Bad]]``) are verdicts.

Pure numpy/pandas; bad input raises a one-line :class:`~ts2viz.errors.InputError` (file, row, problem).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..dataset import csv_records, read_text_utf8
from ..errors import InputError

#: the human verdicts of a pair, in code order (codes 0..3)
HUMAN_LABELS = ("A", "B", "tie-good", "tie-bad")
#: a judge's verdicts, in code order (codes 0..6)
VERDICTS = ("A", "B", "tie-good", "tie-bad", "tie", "unparsed", "empty")
#: the rules of :func:`parse_verdict`
PARSE_RULES = ("genaibench", "canonical")
ORDERS = ("forward", "reverse")
#: GenAI-Bench's vote names
GENAIBENCH_VOTES = {"leftvote": "A", "rightvote": "B", "tievote": "tie-good", "bothbad_vote": "tie-bad"}

_TOKEN = re.compile(r"\[\[.*\]\]")
_CANONICAL = {"[[A>B]]": "A", "[[B>A]]": "B", "[[A=B=Good]]": "tie-good", "[[A=B=Bad]]": "tie-bad"}
_GENAIBENCH = {**_CANONICAL, "[[A>>B]]": "A", "[[B>>A]]": "B", "[[A=B]]": "tie"}
_PLAIN = {"a": "A", "b": "B", "tie-good": "tie-good", "tie-bad": "tie-bad", "tie": "tie"}


def extract_token(text: str | None, rule: str = "genaibench") -> str | None:
    r"""The bracketed verdict token a rule finds in a judge's text (``None``: none).

    Parameters
    ----------
    text : str or None
        The judge's text.
    rule : {"genaibench", "canonical"}
        Both extract the first match of GenAI-Bench's greedy ``\[\[.*\]\]``; they differ in
        :func:`parse_verdict`.

    Returns
    -------
    str or None
        The token, e.g. ``"[[A>B]]"``.

    Examples
    --------
    >>> from ts2viz.gold.pairs import extract_token
    >>> extract_token("Final Verdict: Model A is better: [[A>B]]")
    '[[A>B]]'
    >>> extract_token("[[A>B]] or [[A=B=Good]]")
    '[[A>B]] or [[A=B=Good]]'
    """
    _check_rule(rule)
    if not text:
        return None
    m = _TOKEN.search(text)
    return m.group() if m else None


def parse_verdict(text: str | None, rule: str = "genaibench") -> str:
    """A judge's verdict from its text, by a named rule (see the module's notes).

    Parameters
    ----------
    text : str or None
        The judge's full text.
    rule : {"genaibench", "canonical"}
        ``genaibench`` (the release's rule, with ``[[A>>B]]``, ``[[B>>A]]`` and ``[[A=B]]``) or
        ``canonical`` (the template's four tokens only).

    Returns
    -------
    str
        One of :data:`VERDICTS`: ``empty`` for no text, ``unparsed`` for a text without a verdict.

    Examples
    --------
    >>> from ts2viz.gold.pairs import parse_verdict
    >>> parse_verdict("... [[A=B]]"), parse_verdict("... [[A=B]]", "canonical")
    ('tie', 'unparsed')
    >>> parse_verdict(""), parse_verdict("no verdict here")
    ('empty', 'unparsed')
    """
    if text is None or (isinstance(text, float) and np.isnan(text)) or not str(text).strip():
        _check_rule(rule)
        return "empty"
    token = extract_token(str(text), rule)
    table = _GENAIBENCH if rule == "genaibench" else _CANONICAL
    return table.get(token, "unparsed") if token is not None else "unparsed"


def _check_rule(rule: str) -> None:
    if rule not in PARSE_RULES:
        raise InputError(f"unknown parse rule {rule!r}: expected one of {', '.join(PARSE_RULES)}")


@dataclass(frozen=True)
class PairSet:
    """Side-by-side gold: one row per pair of images with the human verdict.

    Attributes
    ----------
    name : str
        The set's name.
    pairs : pandas.DataFrame
        ``pair_id, prompt, image_a, image_b, model_a, model_b, human`` (strings; ``human`` one of
        :data:`HUMAN_LABELS`), one row per pair, unique ``pair_id``.
    meta : dict
        The set's ``gold.json`` (title, sources, notes; ``judges`` for a bundled set).
    folder : pathlib.Path or None
        Where relative image paths start.
    """

    name: str
    pairs: pd.DataFrame
    meta: dict = field(default_factory=dict)
    folder: Path | None = None

    def __len__(self) -> int:
        """The number of pairs."""
        return len(self.pairs)

    def human_codes(self) -> np.ndarray:
        """The human verdicts as codes 0..3 (positions in :data:`HUMAN_LABELS`).

        Returns
        -------
        numpy.ndarray
            int64, one per pair.
        """
        return self.pairs["human"].map({h: i for i, h in enumerate(HUMAN_LABELS)}).to_numpy(np.int64)

    def position(self) -> dict[str, int]:
        """``pair_id -> row position``.

        Returns
        -------
        dict
            Each pair's position.
        """
        return {p: i for i, p in enumerate(self.pairs["pair_id"])}


def _human_from_counts(a: float, b: float, tie: float, tie_bad: float) -> str:
    ties = tie + tie_bad
    if a > b and a > ties:
        return "A"
    if b > a and b > ties:
        return "B"
    return "tie-bad" if tie_bad > tie else "tie-good"


def _count(text: str, col: str, path, row: int) -> float:
    try:
        v = float(text or 0)
    except ValueError:
        raise InputError(f"{col} {text[:40]!r} is not a number", file=path, row=row) from None
    if not np.isfinite(v) or v < 0:
        raise InputError(f"{col} {text[:40]!r}: expected a non-negative count", file=path, row=row)
    return v


_PAIR_COLS = ("prompt", "image_a", "image_b", "model_a", "model_b")


def read_pairs_csv(path: str | os.PathLike, *, name: str | None = None) -> PairSet:
    """Read a pair CSV (see the module's notes).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    name : str, optional
        The set's name (default: the file's stem, or its folder's name for ``pairs.csv``).

    Returns
    -------
    PairSet
        The pairs.

    Raises
    ------
    InputError
        A missing column, a repeated or empty pair id, an unknown verdict, a bad count.
    """
    path = Path(path)
    text = read_text_utf8(path)
    header = text.splitlines()[0] if text.strip() else ""
    counts = "votes_a" in header and "human" not in header.split(",")
    required = ["pair_id", "votes_a", "votes_b"] if counts else ["pair_id", "human"]
    optional = list(_PAIR_COLS) + (["votes_tie", "votes_tie_bad"] if counts else [])
    rows, seen = [], set()
    for line, rec in csv_records(path, text, required, optional):
        pid = rec["pair_id"]
        if not pid:
            raise InputError("empty pair_id", file=path, row=line)
        if pid in seen:
            raise InputError(f"pair_id {pid!r} repeated: each pair once", file=path, row=line)
        seen.add(pid)
        if counts:
            human = _human_from_counts(*(_count(rec.get(c, ""), c, path, line)
                                         for c in ("votes_a", "votes_b", "votes_tie", "votes_tie_bad")))
        else:
            human = GENAIBENCH_VOTES.get(rec["human"], rec["human"])
            if human not in HUMAN_LABELS:
                raise InputError(f"human verdict {rec['human'][:40]!r}: expected one of {', '.join(HUMAN_LABELS)}",
                                 file=path, row=line)
        rows.append({"pair_id": pid, **{c: rec.get(c, "") or "" for c in _PAIR_COLS}, "human": human})
    if not rows:
        raise InputError("no pairs: expected a header and at least one row", file=path)
    if name is None:
        name = path.parent.name if path.name == "pairs.csv" else path.stem
    return PairSet(name, pd.DataFrame(rows, columns=["pair_id", *_PAIR_COLS, "human"]), {}, path.parent)


def load_genaibench_pairs(path: str | os.PathLike, *, name: str = "genaibench-pairs") -> PairSet:
    """The pairs of one GenAI-Bench ``pairwise.jsonl`` (``idx``, ``prompt``, ``human_vote``).

    Parameters
    ----------
    path : str or os.PathLike
        A ``pairwise.jsonl`` of the release (every judge's file has the same pairs).
    name : str, default "genaibench-pairs"
        The set's name.

    Returns
    -------
    PairSet
        ``pair_id`` is ``str(idx)``; no images or models (the release has none).

    Raises
    ------
    InputError
        A line that is not a JSON object, or an unknown ``human_vote``.
    """
    rows = []
    for line, rec in _jsonl(path):
        vote = rec.get("human_vote")
        if vote not in GENAIBENCH_VOTES:
            raise InputError(f"human_vote {vote!r}: expected one of {', '.join(GENAIBENCH_VOTES)}", file=path, row=line)
        rows.append({"pair_id": str(rec.get("idx")), "prompt": str(rec.get("prompt") or ""), "image_a": "",
                     "image_b": "", "model_a": "", "model_b": "", "human": GENAIBENCH_VOTES[vote]})
    return PairSet(name, pd.DataFrame(rows), {}, None)


def _jsonl(path):
    text = read_text_utf8(path)
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"not JSON ({e.msg})", file=path, row=i) from None
        if not isinstance(rec, dict):
            raise InputError("expected a JSON object per line", file=path, row=i)
        yield i, rec


def _json(path):
    try:
        return json.loads(read_text_utf8(path))
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON ({e.msg}, line {e.lineno})", file=path) from None


def _mmrb2_image(resp: dict) -> str:
    for item in resp.get("response_content") or []:
        if isinstance(item, (list, tuple)) and len(item) == 2 and item[0] == "image":
            return str(item[1])
    return ""


def load_mmrb2_pairs(path: str | os.PathLike, *, name: str | None = None) -> PairSet:
    """The pairs of an MMRB2 benchmark JSON (``pairs[].id``, ``chosen``, ``response_a``/``response_b``).

    Parameters
    ----------
    path : str or os.PathLike
        A task file (``t2i.json`` of MMRB2's ``benchmark/``), from the user's disk.
    name : str, optional
        The set's name (default: the file's stem).

    Returns
    -------
    PairSet
        ``human`` is ``chosen`` (MMRB2 has no ties); images are the responses' first image, the prompt the
        text items of ``prompt_content`` (empty in the ``*_response_only.json`` files).

    Raises
    ------
    InputError
        A file that is not such a JSON, a pair without ``id``, a ``chosen`` other than A or B, a repeated id.
    """
    path = Path(path)
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise InputError('expected an MMRB2 benchmark JSON: {"pairs": [...]}', file=path)
    rows, seen = [], set()
    for i, p in enumerate(data["pairs"], 1):
        if not isinstance(p, dict) or "id" not in p:
            raise InputError(f"pairs[{i - 1}]: expected an object with an 'id'", file=path)
        pid, chosen = str(p["id"]), p.get("chosen")
        if chosen not in ("A", "B"):
            raise InputError(f"pairs[{i - 1}] ({pid}): chosen {chosen!r}, expected 'A' or 'B'", file=path)
        if pid in seen:
            raise InputError(f"pairs[{i - 1}]: id {pid!r} repeated", file=path)
        seen.add(pid)
        ra, rb = p.get("response_a") or {}, p.get("response_b") or {}
        prompt = " ".join(str(c[1]) for c in p.get("prompt_content") or []
                          if isinstance(c, (list, tuple)) and len(c) == 2 and c[0] == "text")
        rows.append({"pair_id": pid, "prompt": prompt, "image_a": _mmrb2_image(ra), "image_b": _mmrb2_image(rb),
                     "model_a": str(ra.get("model_name") or ra.get("model") or ""),
                     "model_b": str(rb.get("model_name") or rb.get("model") or ""), "human": chosen})
    if not rows:
        raise InputError("no pairs in the benchmark JSON", file=path)
    return PairSet(name or path.stem, pd.DataFrame(rows), {}, path.parent)


def load_pairs(spec: str | os.PathLike) -> PairSet:
    """A pair set: bundled, a folder, a pair CSV, an MMRB2 benchmark JSON or a GenAI-Bench ``pairwise.jsonl``.

    A name of :data:`BUNDLED_PAIRS`, or a folder with ``pairs.csv`` (and an optional ``gold.json``).

    Parameters
    ----------
    spec : str or os.PathLike
        The name or path.

    Returns
    -------
    PairSet
        The pairs.

    Raises
    ------
    InputError
        An unknown name or a path that is none of these.

    Examples
    --------
    >>> from ts2viz.gold.pairs import load_pairs
    >>> gb = load_pairs("genaibench-pairwise")
    >>> len(gb), int((gb.pairs["human"] == "A").sum())
    (1735, 643)
    """
    s = str(spec)
    if s in BUNDLED_PAIRS:
        folder = _bundled_folder(s)
        ps = read_pairs_csv(folder / "pairs.csv", name=s)
        meta = json.loads((folder / "gold.json").read_text(encoding="utf-8"))
        return PairSet(s, ps.pairs, meta, folder)
    p = Path(s)
    if p.is_dir():
        if not (p / "pairs.csv").is_file():
            raise InputError("a pair-set folder needs pairs.csv", file=p)
        ps = read_pairs_csv(p / "pairs.csv")
        meta = json.loads(read_text_utf8(p / "gold.json")) if (p / "gold.json").is_file() else {}
        return PairSet(meta.get("name", ps.name), ps.pairs, meta, p)
    if p.is_file():
        if p.suffix == ".jsonl":
            return load_genaibench_pairs(p)
        if p.suffix == ".json":
            return load_mmrb2_pairs(p)
        return read_pairs_csv(p)
    raise InputError(f"no pair set {s!r}: expected one of {', '.join(BUNDLED_PAIRS)}, a folder with pairs.csv, "
                     "a pair CSV, an MMRB2 benchmark JSON or a GenAI-Bench pairwise.jsonl")


#: bundled side-by-side sets -> folder under data/goldsets
BUNDLED_PAIRS: dict[str, str] = {"genaibench-pairwise": "genaibench-pairwise"}


def _bundled_folder(name: str) -> Path:
    from ..paths import bundled_data_dir

    return bundled_data_dir() / "goldsets" / BUNDLED_PAIRS[name]


_VERDICT_COLS = ["pair_id", "order", "judge", "verdict", "raw"]


def _plain_verdict(v: str, path, row) -> str:
    key = v.strip()
    out = _PLAIN.get(key.lower()) if key not in VERDICTS else key
    if out is None:
        raise InputError(f"verdict {v[:40]!r}: expected one of {', '.join(VERDICTS)} (or an empty cell)",
                         file=path, row=row)
    return out


def _check_against(df: pd.DataFrame, pairs: PairSet | None, path, rows: list[int] | None = None) -> pd.DataFrame:
    if pairs is not None:
        known = set(pairs.pairs["pair_id"])
        bad = ~df["pair_id"].isin(known)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"verdict for pair {df['pair_id'].iloc[i]!r}, which is not in the gold "
                             f"{pairs.name!r}", file=path, row=None if rows is None else rows[i])
    dup = df.duplicated(["judge", "pair_id", "order"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        r = df.iloc[i]
        raise InputError(f"a second {r['order']} verdict of judge {r['judge']!r} for pair {r['pair_id']!r}",
                         file=path, row=None if rows is None else rows[i])
    return df.reset_index(drop=True)


def verdict_frame(records, *, parse: str = "genaibench", path=None, rows=None,
                  pairs: PairSet | None = None) -> pd.DataFrame:
    """A verdict table from records (dicts with ``pair_id``, ``judge``, ``order``, ``verdict`` and/or ``raw``).

    Parameters
    ----------
    records : iterable of dict
        One per verdict; ``verdict`` (when non-empty) wins over parsing ``raw``.
    parse : {"genaibench", "canonical"}
        The rule of :func:`parse_verdict` for ``raw``.
    path : optional
        The source file, for messages.
    rows : list of int, optional
        Each record's file row, for messages.
    pairs : PairSet, optional
        When given, a verdict for a pair not in it is an error.

    Returns
    -------
    pandas.DataFrame
        ``pair_id, order, judge, verdict, raw``.

    Raises
    ------
    InputError
        An unknown parse rule, order or verdict label, an empty judge, no records, a verdict for a pair not
        in ``pairs``, a second verdict of one judge for one pair and order.
    """
    _check_rule(parse)
    out = []
    for k, rec in enumerate(records):
        row = None if rows is None else rows[k]
        order = (rec.get("order") or "forward").strip()
        if order not in ORDERS:
            raise InputError(f"order {order[:40]!r}: expected forward or reverse", file=path, row=row)
        judge = str(rec.get("judge") or "").strip()
        if not judge:
            raise InputError("empty judge", file=path, row=row)
        raw = rec.get("raw")
        raw = None if raw is None or (isinstance(raw, float) and np.isnan(raw)) else str(raw)
        v = rec.get("verdict")
        v = "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
        verdict = _plain_verdict(v, path, row) if v.strip() else parse_verdict(raw, parse)
        out.append({"pair_id": str(rec.get("pair_id")), "order": order, "judge": judge, "verdict": verdict,
                    "raw": raw})
    if not out:
        raise InputError("no verdicts", file=path)
    return _check_against(pd.DataFrame(out, columns=_VERDICT_COLS), pairs, path, rows)


def load_verdicts(path: str | os.PathLike, pairs: PairSet | None = None, *, parse: str = "genaibench",
                  judge: str | None = None) -> pd.DataFrame:
    """Judges' verdicts from a file or folder: ts2viz CSV/parquet, GenAI-Bench or MMRB2 layout.

    Parameters
    ----------
    path : str or os.PathLike
        A verdict CSV or parquet; a GenAI-Bench ``pairwise.jsonl`` (the judge is its folder's name) or a folder
        of ``<judge>/pairwise.jsonl`` (``results/image_generation``); an MMRB2 predictions JSON.
    pairs : PairSet, optional
        The gold: a verdict for a pair not in it is an error.
    parse : {"genaibench", "canonical"}
        How a judge's text becomes a verdict (:func:`parse_verdict`).
    judge : str, optional
        The judge's name for an MMRB2 file (default: its ``evaluator`` field, else the file's stem) or a
        GenAI-Bench file.

    Returns
    -------
    pandas.DataFrame
        ``pair_id, order, judge, verdict, raw``.

    Raises
    ------
    InputError
        An unreadable file, a bad row, a verdict for a pair not in ``pairs``, a repeated verdict.
    """
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*/pairwise.jsonl"))
        if not files:
            raise InputError("expected <judge>/pairwise.jsonl files (GenAI-Bench's results layout)", file=p)
        return _check_against(pd.concat([load_verdicts(f, None, parse=parse) for f in files], ignore_index=True),
                              pairs, p)
    if not p.is_file():
        raise InputError("no such verdict file", file=p)
    if p.suffix == ".jsonl":
        name = judge or p.parent.name
        recs, rows = [], []
        for line, rec in _jsonl(p):
            recs.append({"pair_id": str(rec.get("idx")), "judge": name, "order": "forward",
                         "raw": rec.get("response")})
            rows.append(line)
        return verdict_frame(recs, parse=parse, path=p, rows=rows, pairs=pairs)
    if p.suffix == ".json":
        return _mmrb2_verdicts(p, pairs, judge)
    if p.suffix == ".parquet":
        df = pd.read_parquet(p)
        missing = {"pair_id", "judge"} - set(df.columns)
        if missing or not ({"verdict", "raw"} & set(df.columns)):
            raise InputError("expected columns pair_id, judge and verdict or raw", file=p)
        return verdict_frame(df.to_dict("records"), parse=parse, path=p, pairs=pairs)
    text = read_text_utf8(p)
    recs, rows = [], []
    for line, rec in csv_records(p, text, ["pair_id", "judge"], ["order", "verdict", "raw"]):
        recs.append(rec)
        rows.append(line)
    if recs and "verdict" not in text.splitlines()[0] and "raw" not in text.splitlines()[0]:
        raise InputError("expected a verdict or raw column", file=p, row=1)
    return verdict_frame(recs, parse=parse, path=p, rows=rows, pairs=pairs)


def _mmrb2_verdicts(p: Path, pairs: PairSet | None, judge: str | None) -> pd.DataFrame:
    data = _json(p)
    if not isinstance(data, dict):
        raise InputError("expected an MMRB2 predictions JSON: {pair_id: {forward: [...], reverse: [...]}}", file=p)
    recs = []
    for pid, pred in data.items():
        if not isinstance(pred, dict):
            raise InputError(f"pair {pid!r}: expected an object with forward/reverse", file=p)
        for order in ORDERS:
            items = pred.get(order) or []
            if not items:
                continue
            first = items[0] if isinstance(items[0], dict) else {}
            j = first.get("judgement")
            meta = first.get("metadata")
            raw = json.dumps(meta, ensure_ascii=False) if meta else (None if j is None else str(j))
            verdict = _PLAIN.get(str(j).strip().lower(), "unparsed") if j else "empty"
            recs.append({"pair_id": str(pid), "order": order, "verdict": verdict, "raw": raw,
                         "judge": judge or first.get("evaluator") or p.stem})
    return verdict_frame(recs, path=p, pairs=pairs)


def load_bundled_verdicts(name: str = "genaibench-pairwise", *, parse: str = "genaibench") -> pd.DataFrame:
    """The judges' verdicts bundled with a pair set, parsed from their texts by ``parse``.

    Parameters
    ----------
    name : str, default "genaibench-pairwise"
        A name of :data:`BUNDLED_PAIRS`.
    parse : {"genaibench", "canonical"}
        The parsing rule.

    Returns
    -------
    pandas.DataFrame
        ``pair_id, order, judge, verdict, raw``.

    Raises
    ------
    InputError
        An unknown set or parse rule.
    """
    if name not in BUNDLED_PAIRS:
        raise InputError(f"no bundled pair set {name!r}: expected one of {', '.join(BUNDLED_PAIRS)}")
    _check_rule(parse)
    df = pd.read_parquet(_bundled_folder(name) / "verdicts.parquet")
    df["verdict"] = [parse_verdict(t, parse) for t in df["raw"]]
    return df[_VERDICT_COLS]
