"""How numbers and counts are written for people: app tables, headers, figure labels and hover text.

One convention: meta-metric values (ord, sep, signed sep, kendall, a node pair's KS distance, a
correlation between metrics) are shown x100 with one decimal, as in the TS2 paper and in
``ts2viz leaderboard``. Metric scores and score gaps (delta, a node pair's mean gap) stay in the
metric's own units. Files (CSV downloads, ``--out``) keep fractions: only what is shown is scaled.
"""
from __future__ import annotations

import html
import math
import re

#: per-walk / per-SEG statistics shown x100 (delta is a score gap, in the metric's units)
SCALED_STATS = frozenset({"ord", "sep", "signed_sep", "kendall", "pacc"})

#: display names of the statistics
STAT_NAMES = {"ord": "ord", "sep": "sep", "signed_sep": "signed sep", "delta": "delta", "kendall": "kendall",
              "pacc": "pairwise acc"}

#: the one-line explanation of signed separation, wherever it is shown
SIGNED_SEP_NOTE = ("Signed sep: Sep (KS) with each node pair's distance signed by which node scores higher "
                   "on average; negative means images with more errors score higher, which Sep alone "
                   "cannot show.")
#: the same for tight places (the failure finder in the sidebar)
SIGNED_SEP_SHORT = "Signed sep < 0: images with more errors score higher (Sep cannot show this)."


def is_missing(v) -> bool:
    """Whether a value is missing: None or NaN (also numpy's and pandas' missing values).

    Parameters
    ----------
    v : object
        Any value.

    Returns
    -------
    bool
        True for None and NaN; False for anything else, including text.
    """
    if v is None:
        return True
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return False


def x100(v) -> float:
    """A meta-metric value (a fraction) as shown: times 100, rounded to one decimal.

    Parameters
    ----------
    v : float or None
        The fraction.

    Returns
    -------
    float
        ``round(100 v, 1)``; NaN for a missing value.

    Examples
    --------
    >>> from ts2viz.display import x100
    >>> x100(0.71414)
    71.4
    """
    if is_missing(v):
        return float("nan")
    return round(float(v) * 100.0, 1)


def fmt_x100(v, digits: int = 1) -> str:
    """A meta-metric value as text, x100: ``0.7956 -> '79.6'``, ``-1.0 -> '-100.0'``.

    Parameters
    ----------
    v : float or None
        The fraction.
    digits : int, default 1
        Decimals.

    Returns
    -------
    str
        The text; ``'–'`` for a missing value.
    """
    return "–" if is_missing(v) else fmt_score(float(v) * 100.0, digits)


def fmt_score(v, digits: int = 3) -> str:
    """A metric score (its own units) as text.

    Parameters
    ----------
    v : float or None
        The score.
    digits : int, default 3
        Decimals.

    Returns
    -------
    str
        The text; ``'–'`` for a missing value.
    """
    if is_missing(v):
        return "–"
    return f"{float(v):.{digits}f}"


def fmt_stat(stat: str, v) -> str:
    """A statistic's value as shown: x100 for :data:`SCALED_STATS`, the metric's units otherwise.

    Parameters
    ----------
    stat : str
        The statistic (``ord``, ``delta``, ...).
    v : float or None
        Its value.

    Returns
    -------
    str
        The text (:func:`fmt_x100` or :func:`fmt_score`).
    """
    return fmt_x100(v) if stat in SCALED_STATS else fmt_score(v)


def stat_name(stat: str) -> str:
    """The display name of a statistic (``signed_sep`` -> ``signed sep``).

    Parameters
    ----------
    stat : str
        The statistic's name in the data.

    Returns
    -------
    str
        Its name for people (:data:`STAT_NAMES`, else underscores as spaces).
    """
    return STAT_NAMES.get(stat, stat.replace("_", " "))


#: table headers as people read them, where the data's name is a snake_case one; the data underneath,
#: row clicks and CSV files keep the names (issue 21 item 4)
COLUMN_LABELS = {"segs": "SEGs", "seg_id": "SEG"}
#: the meta-metrics' names in headers: Ord and Sep as the paper writes them; "signed Sep" is Sep signed
_HEADER_STATS = {"ord": "Ord", "sep": "Sep", "signed_sep": "signed Sep"}
_PARTS = ("avg", "synth", "nat", "real")


def column_label(col) -> str:
    """The header of a table column as shown.

    ``ord_avg -> 'Ord avg'``, ``sep_synth -> 'Sep synth'``, ``signed_sep_avg -> 'signed Sep avg'``,
    ``segs -> 'SEGs'``, ``seg_id -> 'SEG'``; any other name unchanged (metric names, ``dir``, ``walk``,
    ``ord CLIPScore``).

    Parameters
    ----------
    col : object
        The column's name in the data.

    Returns
    -------
    str
        The header.
    """
    c = str(col)
    if c in COLUMN_LABELS:
        return COLUMN_LABELS[c]
    stat, _, part = c.rpartition("_")
    if stat in _HEADER_STATS and part in _PARTS:
        return f"{_HEADER_STATS[stat]} {part}"
    return c


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and the word in the right number, thousands separated.

    Parameters
    ----------
    n : int
        The count.
    word : str
        The singular.
    many : str, optional
        The plural (default: ``word + "s"``).

    Returns
    -------
    str
        E.g. ``'1 image'``, ``'3 images'``, ``'1,200 images'``.

    Examples
    --------
    >>> from ts2viz.display import plural
    >>> plural(1, "image"), plural(1200, "image"), plural(2, "walk", "walks")
    ('1 image', '1,200 images', '2 walks')
    """
    n = int(n)
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


#: Markdown's punctuation that can start emphasis, code, links, images, headings or tables (not "-": names
#: are shown inline, where it starts no list, and metric names are full of it)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+|!~])")


def md_text(text) -> str:
    r"""Any text, shown as it is in Markdown (a ``gr.Markdown``, a Markdown caption).

    HTML's ``<``, ``>`` and ``&`` become entities and Markdown's punctuation is backslash-escaped, so a
    visitor's metric name, file name or column header renders as those characters: no tag, emphasis, link
    or image (a Markdown image would make every browser that shows it fetch a remote URL).

    Parameters
    ----------
    text : object
        Any text (converted with ``str``).

    Returns
    -------
    str
        The escaped text.

    Examples
    --------
    >>> from ts2viz.display import md_text
    >>> md_text("a*b [x](y) <i>")
    'a\\*b \\[x\\]\\(y\\) &lt;i&gt;'
    """
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


#: characters of a caller's value a message quotes (:func:`echo`)
ECHO_CHARS = 80


def echo(value, n: int = ECHO_CHARS) -> str:
    r"""A caller's value as a message quotes it: one line, at most ``n`` characters and "…".

    Parameters
    ----------
    value : object
        Any value (its ``str``).
    n : int, default ECHO_CHARS
        The most characters kept.

    Returns
    -------
    str
        The value, on one line, cut.

    Examples
    --------
    >>> echo("x" * 200)[-3:], len(echo("x" * 200)), echo("a\nb")
    ('xx…', 81, 'a b')
    """
    text = " ".join(str(value).split())
    return text if len(text) <= n else text[:n] + "…"


def echo_words(text, n: int = ECHO_CHARS, total: int = 600) -> str:
    """A message with every overlong word (a pasted id, a blob) cut by :func:`echo`, and the whole cut too.

    Parameters
    ----------
    text : object
        The message (its ``str``).
    n : int, default ECHO_CHARS
        The most characters of one word.
    total : int, default 600
        The most characters of the message.

    Returns
    -------
    str
        The message.

    Examples
    --------
    >>> echo_words("not a SEG id: " + "9" * 500) == "not a SEG id: " + "9" * 80 + "…"
    True
    """
    out = re.sub(r"\S{%d,}" % (n + 1), lambda m: m.group(0)[:n] + "…", str(text))
    return out if len(out) <= total else out[:total] + "…"


def md_html_text(text) -> str:
    """Any text inside HTML that a Markdown component shows (``gr.Markdown`` holding a ``<div>``).

    HTML is escaped with quotes, and Markdown's punctuation becomes character references (``[`` ->
    ``&#91;``), which read as the characters whether or not the Markdown renderer looks inside the HTML (a
    backslash escape would show as a backslash where it does not): no tag, link or remote image either way.

    Parameters
    ----------
    text : object
        Any text (converted with ``str``).

    Returns
    -------
    str
        The escaped text.
    """
    return _MD_SPECIAL.sub(lambda m: f"&#{ord(m.group(1))};", html.escape(str(text), quote=True))


def html_text(text) -> str:
    """Any text inside HTML (an element's content or a quoted attribute): ``html.escape`` with quotes.

    Parameters
    ----------
    text : object
        Any text (converted with ``str``).

    Returns
    -------
    str
        The escaped text.
    """
    return html.escape(str(text), quote=True)


#: first characters that make a spreadsheet read a cell as a formula (or, with tab and CR, shift it)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """A text cell for a CSV download that spreadsheets show as text.

    A text starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets a leading ``'`` (OWASP's advice
    against CSV injection; Excel and LibreOffice hide the quote).

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    object
        The text with the quote added where needed; numbers and other non-text values as they are.

    Examples
    --------
    >>> from ts2viz.display import spreadsheet_safe
    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("CLIPScore"), spreadsheet_safe(-1.5)
    ("'=1+1", 'CLIPScore', -1.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def spreadsheet_safe_frame(df):
    """A copy of a DataFrame whose text cells and column names pass :func:`spreadsheet_safe`.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.

    Returns
    -------
    pandas.DataFrame
        The copy (numeric and boolean columns unchanged; missing values kept).
    """
    import pandas as pd

    out = df.copy()
    out.columns = [spreadsheet_safe(c) for c in out.columns]
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if not pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
            out.isetitem(j, col.map(spreadsheet_safe, na_action="ignore").astype(object))
    return out
