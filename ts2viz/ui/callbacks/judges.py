"""The Judges view of the Human ratings tab as plain functions of data (testable without a browser).

On a bundled side-by-side set (``genaibench-pairwise``): every judge's accuracy table with bootstrap
intervals over pairs (:func:`accuracy_table`), the position-bias bars (:func:`bias_figure`), a triage list
of the pairs where the judges and the raters disagree most (:func:`triage_table`), and one pair's prompt,
human verdict, images where the set has them, and a judge's text with the parsed verdict marked
(:func:`pair_detail`). Shared by every visitor and computed once per process (the data are bundled).
A visitor chooses only among offered names (set, parse rule, judge) and a pair id of the set.
"""
from __future__ import annotations

import functools
import html

import pandas as pd

from ...errors import InputError
from ...statistics.bootstrap import BootstrapSettings
from .common import interval_text

#: the side-by-side sets the view offers
JUDGE_SETS = ("genaibench-pairwise",)
#: the view's bootstrap (over pairs)
VIEW_BOOTSTRAP = BootstrapSettings(n_resamples=2000)
#: rows of the triage list
TRIAGE_ROWS = 50


def check_choice(name: str, parse: str) -> tuple[str, str]:
    """A set name and parse rule, checked against what the view offers.

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.

    Returns
    -------
    tuple of (str, str)
        ``(name, parse)``.

    Raises
    ------
    InputError
        For anything the view does not offer.
    """
    from ...gold.pairs import PARSE_RULES

    if name not in JUDGE_SETS:
        raise InputError(f"no side-by-side set {str(name)[:40]!r} (offered: {', '.join(JUDGE_SETS)})")
    if parse not in PARSE_RULES:
        raise InputError(f"no parse rule {str(parse)[:40]!r} (offered: {', '.join(PARSE_RULES)})")
    return name, parse


@functools.lru_cache(maxsize=None)
def _pair_set(name: str):
    """The bundled pair set of a name of :data:`JUDGE_SETS` (cached)."""
    from ...gold.pairs import load_pairs

    return load_pairs(name)


@functools.lru_cache(maxsize=None)
def _verdicts(name: str, parse: str) -> pd.DataFrame:
    """The bundled judges' verdicts on a set under a parse rule (cached)."""
    from ...gold.pairs import load_bundled_verdicts

    return load_bundled_verdicts(name, parse=parse)


@functools.lru_cache(maxsize=None)
def _result_frame(name: str, parse: str) -> pd.DataFrame:
    """Every judge's statistics with intervals (:func:`ts2viz.metaeval.judges.judge_table`), checked, cached."""
    from ...metaeval.judges import judge_table

    name, parse = check_choice(name, parse)
    return judge_table(_pair_set(name), _verdicts(name, parse), boot=VIEW_BOOTSTRAP).frame()


def _pct(v, lo, hi) -> str:
    return interval_text(v, lo, hi, scale=100, digits=2, ci_digits=1)


def accuracy_table(name: str, parse: str) -> pd.DataFrame:
    """The accuracy table people read: percentages with 95% intervals, counts of unparsed verdicts.

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.

    Returns
    -------
    pandas.DataFrame
        ``judge, pairs, unparsed, 4-label acc, acc (ties wrong), acc (no ties), first-image share``.
    """
    f = _result_frame(name, parse)
    return pd.DataFrame({
        "judge": f["judge"], "pairs": f["n_pairs"], "unparsed": f["n_unparsed"] + f["n_empty"],
        "4-label acc %": [_pct(r.acc_4label, r.acc_4label_lo, r.acc_4label_hi) for r in f.itertuples()],
        "acc, ties wrong %": [_pct(r.acc_ties_wrong, r.acc_ties_wrong_lo, r.acc_ties_wrong_hi) for r in f.itertuples()],
        "acc, no ties %": [_pct(r.acc_no_ties, r.acc_no_ties_lo, r.acc_no_ties_hi) for r in f.itertuples()],
        "first-image share %": [_pct(r.first_share, r.first_share_lo, r.first_share_hi) for r in f.itertuples()],
    })


def bias_figure(name: str, parse: str):
    """The position-bias bars of every judge.

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        :func:`ts2viz.figures.judge_bias.position_bias_bars`.
    """
    from ...figures.judge_bias import position_bias_bars

    return position_bias_bars(_result_frame(name, parse))


def judges_of(name: str, parse: str) -> list[str]:
    """The judges of a set, in table order.

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.

    Returns
    -------
    list of str
        Their names.
    """
    return list(_result_frame(name, parse)["judge"])


@functools.lru_cache(maxsize=None)
def _triage(name: str, parse: str) -> pd.DataFrame:
    from ...metaeval.judges import disagreement

    ps = _pair_set(name)
    d = disagreement(ps, _verdicts(name, parse)).head(TRIAGE_ROWS)
    prompts = dict(zip(ps.pairs["pair_id"], ps.pairs["prompt"]))
    return pd.DataFrame({"pair": d["pair_id"], "raters": d["human"],
                         "judges wrong %": (100 * d["wrong_share"]).round(1),
                         "prompt": [str(prompts[p])[:90] for p in d["pair_id"]]})


def triage_table(name: str, parse: str) -> pd.DataFrame:
    """The pairs where the judges and the raters disagree most (share of judges wrong, 4-label), first.

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.

    Returns
    -------
    pandas.DataFrame
        ``pair, raters, judges wrong %, prompt`` (the prompt cut at 90 characters), :data:`TRIAGE_ROWS` rows.
    """
    check_choice(name, parse)
    return _triage(name, parse)


def _marked(text: str, token: str | None) -> str:
    """The judge's text as HTML, the parsed token wrapped in ``<mark>`` (escaped, line breaks kept)."""
    if token and token in text:
        i = text.index(token)
        body = (html.escape(text[:i]) + '<mark class="judge-verdict">' + html.escape(token) + "</mark>"
                + html.escape(text[i + len(token):]))
    else:
        body = html.escape(text)
    return f'<div class="judge-text" style="white-space: pre-wrap; max-height: 420px; overflow: auto">{body}</div>'


def pair_detail(name: str, parse: str, pair_id, judge: str | None) -> str:
    """One pair as HTML: its prompt, the raters' verdict, images where the set has them, and a judge's text.

    The token the parse rule read is marked (``<mark class="judge-verdict">``).

    Parameters
    ----------
    name : str
        The set.
    parse : str
        The parse rule.
    pair_id : str
        A pair of the set.
    judge : str or None
        A judge of the set (default: the first).

    Returns
    -------
    str
        HTML (every text of the data escaped).

    Raises
    ------
    InputError
        For a pair or judge the set does not have.
    """
    from ...gold.pairs import extract_token

    name, parse = check_choice(name, parse)
    ps = _pair_set(name)
    pid = str(pair_id or "").strip()
    pos = ps.position()
    if pid not in pos:
        raise InputError(f"no pair {pid[:40]!r} in {name} (pair ids: {ps.pairs['pair_id'].iloc[0]} .. "
                         f"{ps.pairs['pair_id'].iloc[-1]})")
    judges = judges_of(name, parse)
    judge = judge or judges[0]
    if judge not in judges:
        raise InputError(f"no judge {str(judge)[:40]!r} in {name}")
    row = ps.pairs.iloc[pos[pid]]
    v = _verdicts(name, parse)
    mine = v[(v["judge"] == judge) & (v["pair_id"] == pid)]
    parts = [f'<div class="judge-pair" data-pair="{html.escape(pid)}">',
             f"<p><b>Pair {html.escape(pid)}</b>: <i>{html.escape(str(row['prompt']))}</i></p>",
             f'<p>Raters: <b class="judge-human">{html.escape(row["human"])}</b></p>']
    if row["image_a"] or row["image_b"]:
        parts.append(f"<p>Image A: {html.escape(str(row['image_a']))} · Image B: {html.escape(str(row['image_b']))}</p>")
    else:
        parts.append('<p class="stat-note">No images in this set (GenAI-Bench\'s are on the Hugging Face hub, '
                     'TIGER-Lab/GenAI-Bench).</p>')
    for r in mine.itertuples():
        raw = "" if r.raw is None else str(r.raw)
        token = extract_token(raw, parse) if r.verdict not in ("empty",) else None
        ok = r.verdict == row["human"] or (r.verdict == "tie" and row["human"].startswith("tie"))
        parts.append(f'<p>{html.escape(judge)} ({html.escape(r.order)}): parsed verdict '
                     f'<b class="judge-parsed">{html.escape(r.verdict)}</b> {"✓" if ok else "✗"} '
                     f'(rule {html.escape(parse)})</p>')
        parts.append(_marked(raw, token) if raw else "<p><i>(no text)</i></p>")
    parts.append("</div>")
    return "\n".join(parts)
