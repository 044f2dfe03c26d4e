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
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import parse_qsl

from ...errors import InputError

#: environment variables an operator may set instead of command-line flags
METRICS_ENV = "TS2VIZ_METRICS"            # specs separated by newlines or commas
METRICS_FILE_ENV = "TS2VIZ_METRICS_FILE"  # a file with one spec per line (# comments)


@dataclass(frozen=True)
class ApiBudget:
    """What a public app's visitors may spend of the operator's paid APIs, per visitor and in all.

    Every request to an API (:mod:`ts2viz.metrics.backbones.openai_client`) is charged before it is sent: one
    request, its estimated tokens (:func:`~ts2viz.metrics.backbones.openai_client.estimate_tokens`; set
    right to the endpoint's count when the reply comes) and its bytes; one past any budget is refused
    before it is sent, with one line. A visitor is a client address (IPv6: its network,
    :attr:`Limits.ipv6_prefix`). Each field can be set by the environment variable ``TS2VIZ_API_`` + its
    name in capitals (``TS2VIZ_API_VISITOR_REQUESTS_PER_MIN=10``); 0 refuses every request.

    Parameters
    ----------
    visitor_requests_per_min, visitor_requests_per_day : int
        Requests one visitor may send in a minute, in a day.
    visitor_tokens_per_min, visitor_tokens_per_day : int
        Tokens one visitor may use in a minute, in a day.
    visitor_bytes_per_min, visitor_bytes_per_day : int
        Request bytes one visitor may send in a minute, in a day.
    all_requests_per_min, all_requests_per_day : int
        Requests all visitors together may send in a minute, in a day.
    all_tokens_per_min, all_tokens_per_day : int
        Tokens all visitors together may use in a minute, in a day.
    all_bytes_per_min, all_bytes_per_day : int
        Request bytes all visitors together may send in a minute, in a day.
    """

    visitor_requests_per_min: int = 30
    visitor_requests_per_day: int = 300
    visitor_tokens_per_min: int = 60_000
    visitor_tokens_per_day: int = 600_000
    visitor_bytes_per_min: int = 20 * 1024 * 1024
    visitor_bytes_per_day: int = 200 * 1024 * 1024
    all_requests_per_min: int = 120
    all_requests_per_day: int = 5_000
    all_tokens_per_min: int = 240_000
    all_tokens_per_day: int = 10_000_000
    all_bytes_per_min: int = 80 * 1024 * 1024
    all_bytes_per_day: int = 2 * 1024 * 1024 * 1024

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ApiBudget":
        """The defaults, with each field the environment sets (``TS2VIZ_API_`` + its name in capitals).

        Parameters
        ----------
        env : mapping or None, default None
            The environment (``None``: ``os.environ``).

        Returns
        -------
        ApiBudget
            The budget.

        Raises
        ------
        InputError
            For a value that is not a whole number of at least 0.

        Examples
        --------
        >>> ApiBudget.from_env({"TS2VIZ_API_VISITOR_REQUESTS_PER_MIN": "5"}).visitor_requests_per_min
        5
        """
        env = os.environ if env is None else env
        kw = {}
        for f in fields(cls):
            name = "TS2VIZ_API_" + f.name.upper()
            if env.get(name):
                try:
                    kw[f.name] = int(env[name])
                except ValueError:
                    kw[f.name] = -1
                if kw[f.name] < 0:
                    raise InputError(f"{name}: expected a whole number of at least 0, not {env[name][:40]!r}")
        return cls(**kw)


@dataclass(frozen=True)
class Limits:
    """Per-session caps on what a visitor may add, and how long an idle session's data is kept.

    Parameters
    ----------
    max_uploads : int
        Score files a session may add.
    max_upload_bytes : int
        Size of one score file, in bytes.
    max_rows : int
        Rows of one score file.
    max_metrics : int
        Metrics (uploaded columns + live-scored) a session may hold.
    max_sessions : int
        Sessions with data held at once (see ``keep_active_s``).
    idle_timeout_s : float
        A session's data is dropped after this long without a request.
    score_all_segs : bool
        Whether one live-scoring call may score every SEG.
    max_sessions_per_client : int, default 1_000_000
        Sessions with data held at once for one client (address): past it, that client's own least
        recently used goes, never another client's.
    keep_active_s : float, default 0.0
        A session used within this many seconds is never dropped to make room for another; when every
        held session is that recent, a new one is refused instead.
    api : ApiBudget or None, default None
        What visitors may spend of the operator's paid APIs; ``None``: unbounded.
    job_time_s : float or None, default None
        Seconds one heavy job may run before it stops with a one-line message (``TS2VIZ_JOB_TIME_S``);
        ``None``: no limit.
    view_calls_per_session : int or None, default None
        View calls one session may have waiting or running at once (``TS2VIZ_VIEW_CALLS_PER_SESSION``).
    view_calls_per_client : int or None, default None
        View calls one client address may have waiting or running at once (``TS2VIZ_VIEW_CALLS_PER_CLIENT``).
    ipv6_prefix : int, default 64
        IPv6 addresses count as one client per network of this prefix (``TS2VIZ_IPV6_PREFIX``).
    turn_jobs : int, default 1
        Jobs admitted into the model lane at once, taking turns on the model (``TS2VIZ_TURN_JOBS``;
        :class:`~ts2viz.ui.serving.turns.Turnstile`); 1: a job holds the model until it ends.
    turn_s : float, default 3.0
        Seconds a job holds the model before the turn passes to a waiting job (``TS2VIZ_TURN_S``).
    turn_slice : int, default 4
        Images per batch of an API metric while jobs take turns (``TS2VIZ_TURN_SLICE``).

    See Also
    --------
    OPERATOR_LIMITS : the operator's own tool (generous).
    PUBLIC_LIMITS : a public app (small enough that many visitors fit in memory).
    """

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
    #: what visitors may spend of the operator's paid APIs (None: unbounded, the operator's own tool)
    api: ApiBudget | None = None
    #: seconds one heavy job (live scoring) may run before it is stopped (None: no limit)
    job_time_s: float | None = None
    #: view calls one session may have waiting or running at once (None: no cap)
    view_calls_per_session: int | None = None
    #: view calls one client address may have waiting or running at once (None: no cap)
    view_calls_per_client: int | None = None
    #: IPv6 addresses are one client per network of this prefix length (a home or a host gets a /64)
    ipv6_prefix: int = 64
    #: jobs admitted into the model lane at once, taking turns on the model (1: one job holds it to its end)
    turn_jobs: int = 1
    #: seconds a job holds the model before the turn passes to a waiting job
    turn_s: float = 3.0
    #: images per batch of an API metric while jobs take turns
    turn_slice: int = 4


#: the operator's own tool: generous, the operator is trusted
OPERATOR_LIMITS = Limits(max_uploads=64, max_upload_bytes=200 * 1024 * 1024, max_rows=5_000_000,
                         max_metrics=256, max_sessions=64, idle_timeout_s=12 * 3600, score_all_segs=True)
#: a public app: small enough that many visitors fit in memory and one cannot hold the model for long
PUBLIC_LIMITS = Limits(max_uploads=5, max_upload_bytes=5 * 1024 * 1024, max_rows=50_000, max_metrics=8,
                       max_sessions=300, idle_timeout_s=30 * 60, score_all_segs=False,
                       max_sessions_per_client=8, keep_active_s=2 * 60, api=ApiBudget(), job_time_s=40.0,
                       view_calls_per_session=8, view_calls_per_client=128, turn_jobs=5)


def public_limits(env: Mapping[str, str] | None = None) -> Limits:
    """:data:`PUBLIC_LIMITS` with what the operator set in the environment.

    ``TS2VIZ_API_*`` (:meth:`ApiBudget.from_env`), ``TS2VIZ_JOB_TIME_S``, ``TS2VIZ_VIEW_CALLS_PER_SESSION``,
    ``TS2VIZ_VIEW_CALLS_PER_CLIENT``, ``TS2VIZ_IPV6_PREFIX``, ``TS2VIZ_SESSIONS_PER_CLIENT``,
    ``TS2VIZ_KEEP_ACTIVE_S``, ``TS2VIZ_TURN_JOBS``, ``TS2VIZ_TURN_S`` and ``TS2VIZ_TURN_SLICE``.

    Parameters
    ----------
    env : mapping or None, default None
        The environment (``None``: ``os.environ``).

    Returns
    -------
    Limits
        The limits of a public app.

    Raises
    ------
    InputError
        For a value that is not a number of at least 0 (a prefix: 0 to 128; turn jobs and slice: at least 1).

    Examples
    --------
    >>> lim = public_limits({"TS2VIZ_JOB_TIME_S": "20"})
    >>> lim.job_time_s, lim.ipv6_prefix, lim.api.visitor_requests_per_min
    (20.0, 64, 30)
    >>> lim.turn_jobs, lim.turn_s
    (5, 3.0)
    """
    env = os.environ if env is None else env
    kw: dict = {"api": ApiBudget.from_env(env)}
    for name, field, kind in (("TS2VIZ_JOB_TIME_S", "job_time_s", float),
                              ("TS2VIZ_VIEW_CALLS_PER_SESSION", "view_calls_per_session", int),
                              ("TS2VIZ_VIEW_CALLS_PER_CLIENT", "view_calls_per_client", int),
                              ("TS2VIZ_IPV6_PREFIX", "ipv6_prefix", int),
                              ("TS2VIZ_SESSIONS_PER_CLIENT", "max_sessions_per_client", int),
                              ("TS2VIZ_KEEP_ACTIVE_S", "keep_active_s", float),
                              ("TS2VIZ_TURN_JOBS", "turn_jobs", int), ("TS2VIZ_TURN_S", "turn_s", float),
                              ("TS2VIZ_TURN_SLICE", "turn_slice", int)):
        if env.get(name):
            least = 1 if field in ("turn_jobs", "turn_slice") else 0
            try:
                kw[field] = kind(env[name])
            except ValueError:
                kw[field] = -1
            if kw[field] < least or (field == "ipv6_prefix" and kw[field] > 128):
                raise InputError(f"{name}: expected a number of at least {least}, not {env[name][:40]!r}")
    return replace(PUBLIC_LIMITS, **kw)


@dataclass(frozen=True)
class Access:
    """The trust level of an app process and what follows from it.

    A deployer makes one with :func:`operator` or :func:`public` (``app.py`` decides which with
    :func:`decide`) and hands it to :func:`ts2viz.ui.build_app` / :func:`ts2viz.ui.load_state`.

    Parameters
    ----------
    public : bool, default False
        Visitors are untrusted: they score only with the offered metrics (named by display name, never by
        spec), on the server's device, within :data:`PUBLIC_LIMITS`, and every file they hand in must lie
        in the app's upload folder.
    offered : tuple of str, default ()
        The metric specs the operator configured: in public mode the only ones a visitor may score with;
        in operator mode suggestions.
    limits : Limits, default OPERATOR_LIMITS
        The per-session caps.
    reason : str, default "operator mode: listening on a loopback address"
        Why the mode was chosen (shown at start).
    upload_root : str or None, default None
        In public mode, files handed in by visitors must lie under this folder; set by
        :func:`ts2viz.ui.build_app` to Gradio's upload folder.

    Examples
    --------
    >>> acc = public(["clipscore:/srv/models/my-clip", "clipscore:openai/clip-vit-base-patch32"])
    >>> acc.choices()
    ['clipscore:my-clip', 'clipscore:openai/clip-vit-base-patch32']
    >>> acc.metric_spec("clipscore:my-clip")
    'clipscore:/srv/models/my-clip'
    >>> acc.device("cuda:1") is None, operator().device("cuda:1")
    (True, 'cuda:1')
    """

    public: bool = False
    offered: tuple[str, ...] = ()
    limits: Limits = OPERATOR_LIMITS
    reason: str = "operator mode: listening on a loopback address"
    #: in public mode, files handed in by visitors must lie under this folder (the app's upload folder)
    upload_root: str | None = None

    def metric_spec(self, spec: str) -> str:
        """The spec behind a metric a caller chose, checked.

        In public mode the caller names an offered metric by its display name (:meth:`choices`), never by the
        spec itself (which may hold the operator's folder paths): the spec is found from the name here, on
        the server. In operator mode the caller's spec is taken as it is.

        Parameters
        ----------
        spec : str
            What the caller chose.

        Returns
        -------
        str
            The spec to load.

        Raises
        ------
        InputError
            In public mode, for anything but an offered metric's display name (what
            :func:`ts2viz.metrics.check_offered` refuses: code, files, models not offered).
        """
        if not self.public:
            return spec
        from ...metrics import check_offered

        name = check_offered(spec, tuple(self._specs_by_name))
        return self._specs_by_name[name]

    def display_name(self, spec: str) -> str:
        """What a visitor sees for a spec.

        Parameters
        ----------
        spec : str
            A metric spec.

        Returns
        -------
        str
            In public mode an offered spec's display name (:func:`display_names`), anything else unchanged; in
            operator mode the spec itself.
        """
        if not self.public:
            return spec
        return self._names.get(spec.strip(), spec) if isinstance(spec, str) else spec

    def choices(self) -> list[str]:
        """The offered metrics as a visitor picks them.

        Returns
        -------
        list of str
            Display names in public mode, specs otherwise, in the operator's order.
        """
        return [self.display_name(s) for s in self.offered]

    @functools.cached_property
    def _names(self) -> dict[str, str]:
        return display_names(self.offered)

    @functools.cached_property
    def _specs_by_name(self) -> dict[str, str]:
        return {name: spec for spec, name in self._names.items()}

    def device(self, device: str | None) -> str | None:
        """The device to score on.

        Parameters
        ----------
        device : str or None
            The visitor's choice (``"auto"``, ``""`` and ``None`` mean the server's choice).

        Returns
        -------
        str or None
            The visitor's choice in operator mode; ``None`` (the server's own) in public mode.
        """
        if self.public or device in (None, "", "auto"):
            return None
        return device


def operator(offered: Sequence[str] = ()) -> Access:
    """Operator mode: the operator's own tool (the default for tests and ``python app.py`` on loopback).

    Parameters
    ----------
    offered : sequence of str, default ()
        Metric specs suggested for live scoring (any spec may be typed too).

    Returns
    -------
    Access
        Operator mode with :data:`OPERATOR_LIMITS`.
    """
    return Access(False, tuple(offered), OPERATOR_LIMITS)


def public(offered: Sequence[str] = (), reason: str = "public mode") -> Access:
    """Public mode: visitors are untrusted.

    Parameters
    ----------
    offered : sequence of str, default ()
        The only metric specs visitors may score with (shown by :func:`display_names`).
    reason : str, default "public mode"
        Why the mode was chosen (shown at start).

    Returns
    -------
    Access
        Public mode with :data:`PUBLIC_LIMITS` and what the environment sets (:func:`public_limits`).
    """
    return Access(True, tuple(offered), public_limits(), reason)


def is_loopback(host: str | None) -> bool:
    """Whether an interface to listen on is reachable only from this machine.

    Parameters
    ----------
    host : str or None
        A host name or address (``[::1]`` brackets allowed).

    Returns
    -------
    bool
        True for ``localhost`` and loopback addresses.

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    h = (host or "").strip().strip("[]").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def decide(*, host: str, share: bool = False, public_flag: bool = False, trusted: bool = False,
           env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Whether the app runs in public mode, and why.

    Public on a Hugging Face Space (``SPACE_ID`` set) or with ``--public``; also when listening on a
    non-loopback address or making a share link, unless ``--trusted``.

    Parameters
    ----------
    host : str
        The interface the server listens on.
    share : bool, default False
        A Gradio share link is made.
    public_flag : bool, default False
        ``--public`` was given.
    trusted : bool, default False
        ``--trusted`` was given.
    env : mapping or None, default None
        The environment (``None``: ``os.environ``).

    Returns
    -------
    public : bool
        Public mode.
    reason : str
        Why, in one line.

    Raises
    ------
    InputError
        When ``--public`` and ``--trusted`` are both given.

    Examples
    --------
    >>> decide(host="127.0.0.1", env={})
    (False, 'operator mode: listening on 127.0.0.1 (loopback)')
    >>> decide(host="0.0.0.0", env={})
    (True, 'public mode: listening on 0.0.0.0, reachable from other machines (--trusted to override)')
    >>> decide(host="0.0.0.0", env={"SPACE_ID": "me/ts2viz"}, trusted=True)[1]
    'public mode: running on a Hugging Face Space (me/ts2viz)'
    """
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


#: options never shown to a visitor: keys and where they are read from
SECRET_OPTIONS = ("api_key", "api_key_env")


def _hidden_option(key: str, value: str) -> bool:
    """Whether an option is left out of what a visitor sees: a key, or an address (a URL: the endpoint)."""
    return key in SECRET_OPTIONS or "://" in value or "@" in value


def shown_spec(spec: str) -> str:
    """A metric spec with every path in it cut to its last part, and no key or address in it.

    The model folder, an open_clip checkpoint, a file, an option's value: ``clipscore:/models/my-clip`` ->
    ``clipscore:my-clip``. Options that hold a key (:data:`SECRET_OPTIONS`) or an address (a URL, such as
    an API's ``endpoint=``, with or without ``user:pass@``) are left out: an API metric is shown as its
    family and model. Hub ids (``owner/name``), revisions and other options are kept as they are.

    Parameters
    ----------
    spec : str
        A metric spec.

    Returns
    -------
    str
        The spec as a visitor may see it.

    Examples
    --------
    >>> shown_spec("tifa:/srv/models/blip-vqa?questions=/srv/q/tifa.csv")
    'tifa:blip-vqa?questions=tifa.csv'
    >>> shown_spec("vqascore:zhiqiulin/clip-flant5-xl@main")
    'vqascore:zhiqiulin/clip-flant5-xl@main'
    >>> shown_spec("viescore:gpt-4o?endpoint=http://u:sk-1@10.0.0.5:8081/v1&api_key=sk-2&aspect=sc")
    'viescore:gpt-4o?aspect=sc'
    """
    fam, sep, rest = spec.strip().partition(":")
    if not sep:
        return spec.strip()
    query = ""
    if "?" in rest:      # options, split as ts2viz.metrics.common.spec.parse_spec does
        head, _, q = rest.rpartition("?")
        pairs = parse_qsl(q, keep_blank_values=True)
        if pairs and all(k for k, _ in pairs) and "=" in q:
            kept = [f"{k}={_short(v)}" for k, v in pairs if not _hidden_option(k, v)]
            rest, query = head, ("?" + "&".join(kept)) if kept else ""
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
    """A public app's name for each offered spec, unique.

    What visitors see in the dropdowns, the leaderboard, the figures and the messages, so that no folder
    path of the operator's reaches them: :func:`shown_spec`; a spec without a path keeps its text; two
    folders with one name get `` (2)``, `` (3)``, ...

    Parameters
    ----------
    specs : sequence of str
        The offered specs.

    Returns
    -------
    dict of str to str
        Display name by spec (stripped).

    Examples
    --------
    >>> display_names(["clipscore:/a/clip", "clipscore:/b/clip", "clipscore:openai/clip-vit-base-patch32"])
    {'clipscore:openai/clip-vit-base-patch32': 'clipscore:openai/clip-vit-base-patch32',
     'clipscore:/a/clip': 'clipscore:clip', 'clipscore:/b/clip': 'clipscore:clip (2)'}
    """
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
    r"""Metric specs from text: one per line or comma-separated; blank lines and ``#`` comments skipped.

    Parameters
    ----------
    text : str
        The text (``TS2VIZ_METRICS``, or a metric-list file's contents).

    Returns
    -------
    list of str
        The specs, in order (not checked).

    Examples
    --------
    >>> parse_metric_list("# offered\nclipscore:openai/clip-vit-base-patch32, siglip:google/siglip-base-patch16-224\n"
    ...                   "tifa:Salesforce/blip-vqa-base  # slow")
    ['clipscore:openai/clip-vit-base-patch32', 'siglip:google/siglip-base-patch16-224', 'tifa:Salesforce/blip-vqa-base']
    """
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
    """The operator's metric list: ``--metric`` flags, then ``TS2VIZ_METRICS``, then a file.

    The file is ``--metrics-file`` or ``TS2VIZ_METRICS_FILE``; duplicates are dropped, order kept. Each spec
    must parse (family known, ``FAMILY:MODEL`` form); models are not loaded here.

    Parameters
    ----------
    specs : sequence of str, default ()
        The ``--metric`` flags.
    file : str or os.PathLike or None, default None
        The ``--metrics-file`` (``None``: ``TS2VIZ_METRICS_FILE``, if set).
    env : mapping or None, default None
        The environment (``None``: ``os.environ``).

    Returns
    -------
    tuple of str
        The specs.

    Raises
    ------
    InputError
        For a file that cannot be read, or a spec that does not parse or names no known family.

    Examples
    --------
    >>> env = {"TS2VIZ_METRICS": "clipscore:openai/clip-vit-base-patch32,pickscore:pickscore-v1"}
    >>> read_metric_list(["clipscore:openai/clip-vit-base-patch32"], env=env)
    ('clipscore:openai/clip-vit-base-patch32', 'pickscore:pickscore-v1')
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
