"""Who may do what in the app: the operator's own tool, or a public app for untrusted visitors.

``python app.py`` on a laptop is the operator's tool: any metric spec (a hub id, a model folder, a
``callable:``, a ``csv:`` file) may be typed. A public app (a Hugging Face Space, ``--public``, or a
server reachable from other machines unless ``--trusted``) serves visitors who must not run code, read
files or probe paths on the server: they choose metrics only from the list the operator configured,
and every visitor's data stays in their own session, within the caps of :class:`Limits`.
"""
from __future__ import annotations

import functools
import ipaddress
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import parse_qsl

from ...errors import InputError

#: environment variables an operator may set instead of command-line flags
METRICS_ENV = "TS2VIZ_METRICS"            # specs separated by newlines or commas
METRICS_FILE_ENV = "TS2VIZ_METRICS_FILE"  # a file with one spec per line (# comments)


@dataclass(frozen=True)
class Limits:
    """Per-session caps on what a visitor may add, and how long an idle session's data is kept."""

    max_uploads: int              # score files a session may add
    max_upload_bytes: int         # size of one score file
    max_rows: int                 # rows of one score file
    max_metrics: int              # metrics (uploaded columns + live-scored) a session may hold
    max_sessions: int             # sessions with data held at once (see keep_active_s)
    idle_timeout_s: float         # a session's data is dropped after this long without a request
    score_all_segs: bool          # whether one live-scoring call may score every SEG
    #: sessions with data held at once for one client (address): past it, that client's own least
    #: recently used goes, never another client's
    max_sessions_per_client: int = 1_000_000
    #: a session used within this many seconds is never dropped to make room for another; when every
    #: held session is that recent, a new one is refused instead
    keep_active_s: float = 0.0


#: the operator's own tool: generous, the operator is trusted
OPERATOR_LIMITS = Limits(max_uploads=64, max_upload_bytes=200 * 1024 * 1024, max_rows=5_000_000,
                         max_metrics=256, max_sessions=64, idle_timeout_s=12 * 3600, score_all_segs=True)
#: a public app: small enough that many visitors fit in memory and one cannot hold the model for long
PUBLIC_LIMITS = Limits(max_uploads=5, max_upload_bytes=5 * 1024 * 1024, max_rows=50_000, max_metrics=8,
                       max_sessions=300, idle_timeout_s=30 * 60, score_all_segs=False,
                       max_sessions_per_client=16, keep_active_s=10 * 60)


@dataclass(frozen=True)
class Access:
    """The trust level of an app process and what follows from it.

    ``public``: visitors are untrusted. ``offered``: the metric specs the operator configured (in public
    mode the only ones a visitor may score with; in operator mode suggestions). ``reason`` says why
    the mode was chosen (shown at start). ``upload_root`` is set by the app to its upload folder.
    """

    public: bool = False
    offered: tuple[str, ...] = ()
    limits: Limits = OPERATOR_LIMITS
    reason: str = "operator mode: listening on a loopback address"
    #: in public mode, files handed in by visitors must lie under this folder (the app's upload folder)
    upload_root: str | None = None

    def metric_spec(self, spec: str) -> str:
        """The spec a caller chose, checked. In public mode the caller names an offered metric by its
        display name (:meth:`choices`), never by the spec itself (which may hold the operator's
        folder paths): the spec is found from the name here, on the server."""
        if not self.public:
            return spec
        from ...metrics import check_offered

        name = check_offered(spec, tuple(self._specs_by_name))
        return self._specs_by_name[name]

    def display_name(self, spec: str) -> str:
        """What a visitor sees for a spec: in public mode an offered spec's display name (see
        :func:`display_names`), anything else unchanged; in operator mode the spec itself."""
        if not self.public:
            return spec
        return self._names.get(spec.strip(), spec) if isinstance(spec, str) else spec

    def choices(self) -> list[str]:
        """The offered metrics as a visitor picks them: display names in public mode, specs otherwise."""
        return [self.display_name(s) for s in self.offered]

    @functools.cached_property
    def _names(self) -> dict[str, str]:
        return display_names(self.offered)

    @functools.cached_property
    def _specs_by_name(self) -> dict[str, str]:
        return {name: spec for spec, name in self._names.items()}

    def device(self, device: str | None) -> str | None:
        """The device to score on: the visitor's choice in operator mode, the server's own in public mode."""
        if self.public or device in (None, "", "auto"):
            return None
        return device


def operator(offered: Sequence[str] = ()) -> Access:
    """Operator mode (the default for tests and ``python app.py`` on loopback)."""
    return Access(False, tuple(offered), OPERATOR_LIMITS)


def public(offered: Sequence[str] = (), reason: str = "public mode") -> Access:
    return Access(True, tuple(offered), PUBLIC_LIMITS, reason)


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (an interface to listen on) is reachable only from this machine."""
    h = (host or "").strip().strip("[]").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def decide(*, host: str, share: bool = False, public_flag: bool = False, trusted: bool = False,
           env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """``(public, reason)``: public on a Hugging Face Space (``SPACE_ID`` set) or with ``--public``;
    also when listening on a non-loopback address or making a share link, unless ``--trusted``."""
    env = os.environ if env is None else env
    if public_flag and trusted:
        raise InputError("--public and --trusted contradict each other; give one")
    if env.get("SPACE_ID"):
        return True, f"public mode: running on a Hugging Face Space ({env['SPACE_ID']})"
    if public_flag:
        return True, "public mode: --public"
    exposed = share or not is_loopback(host)
    if exposed and trusted:
        return False, "operator mode (--trusted): reachable from other machines, every visitor is trusted"
    if share:
        return True, "public mode: a share link makes the app reachable by anyone with the link"
    if exposed:
        return True, f"public mode: listening on {host}, reachable from other machines (--trusted to override)"
    return False, f"operator mode: listening on {host} (loopback)"


#: a path by its form: absolute, home-relative or dot-relative
_PATH_START = re.compile(r"^(?:~|\.{1,2})?/")


def _short(text: str) -> str:
    """``text`` if it names no path, else the path's last part (a model folder's name)."""
    t = text.rstrip("/")
    if not t:
        return text
    if _PATH_START.match(text) or ("/" in t and Path(os.path.expanduser(t)).exists()):
        return Path(t).name or t
    return text


def shown_spec(spec: str) -> str:
    """A metric spec with every path in it (the model folder, an open_clip checkpoint, a file, an
    option's value) cut to its last part: ``clipscore:/models/my-clip`` -> ``clipscore:my-clip``. Hub ids
    (``owner/name``), revisions, URLs and other options are kept as they are."""
    fam, sep, rest = spec.strip().partition(":")
    if not sep:
        return spec.strip()
    query = ""
    if "?" in rest:      # options, split as ts2viz.metrics.common.spec.parse_spec does
        head, _, q = rest.rpartition("?")
        pairs = parse_qsl(q, keep_blank_values=True)
        if pairs and all(k for k, _ in pairs) and "=" in q:
            rest, query = head, "?" + "&".join(f"{k}={_short(v)}" for k, v in pairs)
    rev = ""
    if "@" in rest and not Path(os.path.expanduser(rest)).exists():
        head, _, r = rest.rpartition("@")
        if head and r and "/" not in r:
            rest, rev = head, "@" + r
    if rest.startswith("openclip:"):
        arch, slash, tag = rest[len("openclip:"):].partition("/")
        model = f"openclip:{arch}{slash}{_short(tag) if tag else ''}"
    else:
        model = _short(rest)
    return f"{fam}:{model}{rev}{query}"


def display_names(specs: Sequence[str]) -> dict[str, str]:
    """A public app's name for each offered spec (:func:`shown_spec`), unique: what visitors see in the
    dropdowns, the leaderboard, the figures and the messages, so that no folder path of the operator's
    reaches them. A spec without a path keeps its text; two folders with one name get `` (2)``, ``(3)``..."""
    specs = [s.strip() for s in specs]
    shown = {s: shown_spec(s) for s in specs}
    out = {s: s for s in specs if shown[s] == s}
    taken = set(out.values())
    for s in specs:
        if s in out:
            continue
        base = name = shown[s]
        k = 2
        while name in taken:
            name, k = f"{base} ({k})", k + 1
        out[s] = name
        taken.add(name)
    return out


def parse_metric_list(text: str) -> list[str]:
    """Specs from text: one per line or comma-separated; blank lines and ``#`` comments skipped."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = re.split(r"\s#", line, maxsplit=1)[0]
        for part in line.split(","):
            part = part.strip()
            if part:
                out.append(part)
    return out


def read_metric_list(specs: Sequence[str] = (), file: str | os.PathLike | None = None,
                     env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The operator's metric list: ``--metric`` flags, then ``TS2VIZ_METRICS``, then a file
    (``--metrics-file`` or ``TS2VIZ_METRICS_FILE``); duplicates dropped, order kept.

    Each spec must parse (family known, FAMILY:MODEL form); models are not loaded here.
    """
    from ...metrics import family, parse_spec

    env = os.environ if env is None else env
    items = [s.strip() for s in specs if s and s.strip()]
    items += parse_metric_list(env.get(METRICS_ENV, ""))
    path = file or env.get(METRICS_FILE_ENV)
    if path:
        p = Path(path).expanduser()
        try:
            items += parse_metric_list(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read the metric list ({type(e).__name__})", file=p) from None
    out = list(dict.fromkeys(items))
    for s in out:
        family(parse_spec(s).family)
    return tuple(out)
