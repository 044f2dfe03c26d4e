"""A public app's front door: who a request comes from, and malformed or abusive calls refused in one line.

Both are refused before Gradio sees them.

- :class:`ClientAddress` sets each request's client (an IPv6 address stands for its /64,
  :func:`client_group`) from the connection, or behind proxies
  from ``X-Forwarded-For`` as far as the proxies are trusted: only entries that a trusted proxy
  appended are believed, read from the right (the client writes whatever it likes at the left). On a
  Hugging Face Space the Space's proxy is the one hop (``TS2VIZ_PROXY_HOPS=1``: the rightmost entry is
  the visitor's address); behind proxies of your own, list them in ``TS2VIZ_TRUSTED_PROXIES``
  (addresses or networks). uvicorn's own reading of the header is switched off in public mode
  (``FORWARDED_ALLOW_IPS`` empty), since with ``*`` it takes the leftmost entry, which anyone can forge.
- :class:`EventGuard` reads the JSON body of event calls (``queue/join``, ``run/...``, ``call/...``;
  small: component values and references to uploaded files) and refuses an empty, non-text or
  overlong session id; limits how many *new* session ids one address may start
  (:class:`SessionRate`), so that a script cannot flush Gradio's table of sessions (2,000 entries,
  least recently used dropped) and with it other visitors' pages; answers ``queue/data`` for a
  session the queue does not know with a one-line 404 (Gradio raised inside its stream and logged a
  5 KB traceback for each); tells :class:`~ts2viz.ui.serving.jobs.Jobs` of ``/cancel`` calls, and counts
  each session's open event streams (:meth:`Guard.streaming`).

Every refusal is one line to the client and one line in the log, with any value from the request
truncated (:func:`log_refusal`).
"""
from __future__ import annotations

import ipaddress
import json
import logging
import os
import threading
import time
from collections import OrderedDict, defaultdict
from typing import Callable

log = logging.getLogger("ts2viz.ui")

#: a session id longer than this is not one a browser made (Gradio's are 11 characters)
MAX_SESSION_HASH = 128
#: event calls with a body larger than this are refused (413): no page sends one
MAX_EVENT_BODY = 4 * 1024 * 1024
#: characters of a request's value a log line quotes
LOG_VALUE_CHARS = 60


def short(value, n: int = LOG_VALUE_CHARS) -> str:
    r"""A value from a request, as a log line quotes it: one line, at most ``n`` characters.

    Parameters
    ----------
    value : object
        Any value (its ``str``).
    n : int, default LOG_VALUE_CHARS
        The most characters kept.

    Returns
    -------
    str
        The value on one line, cut with its length noted.

    Examples
    --------
    >>> short("a\n  b"), short("x" * 100, 10)
    ('a b', 'xxxxxxxxxx…(100 chars)')
    """
    from ...display import echo

    text = " ".join(str(value).split())
    return echo(text, n) + ("" if len(text) <= n else f"({len(text):,} chars)")


def log_refusal(what: str, client: str | None, why: str) -> None:
    """One warning line in the ``ts2viz.ui`` log for one refused request (values cut by :func:`short`).

    Parameters
    ----------
    what : str
        What was refused (a path, an event).
    client : str or None
        The client's address.
    why : str
        The reason, as told to the client.
    """
    log.warning("refused %s from %s: %s", short(what, 80), short(client or "?", 45), short(why, 160))


async def refuse(send, status: int, text: str, what: str, client: str | None) -> None:
    """Refuse one HTTP request: log it (:func:`log_refusal`) and answer ``status`` with ``text`` as plain text.

    Parameters
    ----------
    send : callable
        The ASGI send channel.
    status : int
        The HTTP status.
    text : str
        The reason, as told to the client.
    what : str
        What was refused (for the log).
    client : str or None
        The client's address.
    """
    log_refusal(what, client, text)
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# -- client addresses -------------------------------------------------------------------------------------

def _networks(text: str | None):
    out = []
    for part in (text or "").replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"TS2VIZ_TRUSTED_PROXIES: {part[:40]!r} is not an address or network") from None
    return tuple(out)


def _host(entry: str) -> str | None:
    """The address in one ``X-Forwarded-For`` entry (a port or brackets dropped), or ``None``."""
    e = entry.strip().strip('"')
    if e.startswith("["):
        e = e[1:e.find("]")] if "]" in e else e[1:]
    elif e.count(":") == 1:
        e = e.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(e))
    except ValueError:
        return None


class ProxySettings:
    """Which proxies in front of the app are trusted to append the address they saw to ``X-Forwarded-For``.

    Parameters
    ----------
    hops : int, default 0
        Proxies trusted whatever their address (the rightmost entries).
    trusted : iterable of ipaddress networks, default ()
        Proxies trusted by address.

    Examples
    --------
    One proxy (a Space's): the rightmost entry is the visitor's, whatever the visitor wrote at the left:

    >>> ProxySettings(hops=1).client("10.0.0.2", ["6.6.6.6", "203.0.113.7"])
    '203.0.113.7'
    >>> ProxySettings().client("10.0.0.2", ["6.6.6.6"])
    '10.0.0.2'
    """

    def __init__(self, hops: int = 0, trusted=()) -> None:
        self.hops = max(0, int(hops))
        self.trusted = tuple(trusted)

    @classmethod
    def from_env(cls, env=None) -> "ProxySettings":
        """The settings of the environment.

        ``TS2VIZ_PROXY_HOPS`` (default 1 on a Hugging Face Space, where the Space's proxy is in front; 0
        elsewhere) and ``TS2VIZ_TRUSTED_PROXIES`` (addresses or networks, comma-separated).

        Parameters
        ----------
        env : mapping or None, default None
            The environment (``None``: ``os.environ``).

        Returns
        -------
        ProxySettings
            The settings.

        Raises
        ------
        ValueError
            For a hop count that is not a whole number, or an entry that is no address or network.
        """
        env = os.environ if env is None else env
        default = 1 if env.get("SPACE_ID") else 0
        try:
            hops = int(env.get("TS2VIZ_PROXY_HOPS") or default)
        except ValueError:
            raise ValueError("TS2VIZ_PROXY_HOPS must be a whole number") from None
        return cls(hops, _networks(env.get("TS2VIZ_TRUSTED_PROXIES")))

    def _is_trusted(self, host: str | None) -> bool:
        if host is None or not self.trusted:
            return False
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(ip in net for net in self.trusted)

    def client(self, peer: str | None, forwarded: list[str]) -> str | None:
        """The client's address, given the connection's and the ``X-Forwarded-For`` entries.

        From the right: the peer, then each entry a trusted hop appended, until an address that is no trusted
        proxy. An entry that is no address stops the walk at the hop that wrote it.

        Parameters
        ----------
        peer : str or None
            The connection's address.
        forwarded : list of str
            The ``X-Forwarded-For`` entries in order (leftmost first).

        Returns
        -------
        str or None
            The client's address.
        """
        addr = peer
        hops = self.hops
        i = len(forwarded) - 1
        while i >= 0:
            if hops > 0:
                hops -= 1
            elif not self._is_trusted(addr):
                break
            nxt = _host(forwarded[i])
            if nxt is None:
                break
            addr, i = nxt, i - 1
        return addr


def client_group(address: str | None, ipv6_prefix: int = 64) -> str | None:
    """The client an address counts as: an IPv4 address itself, an IPv6 address its network.

    One host or home is given a whole IPv6 /64 (and can pick any address in it): per-client caps count the
    network, ``ipv6_prefix`` bits long.

    Parameters
    ----------
    address : str or None
        The address.
    ipv6_prefix : int, default 64
        The prefix length of an IPv6 client's network (128: each address on its own).

    Returns
    -------
    str or None
        The address (IPv4, or anything that is no address), or the IPv6 network (``2001:db8::/64``).

    Examples
    --------
    >>> client_group("2001:db8::1"), client_group("2001:db8::ffff:2"), client_group("203.0.113.7")
    ('2001:db8::/64', '2001:db8::/64', '203.0.113.7')
    """
    if not address or ":" not in address or ipv6_prefix >= 128:
        return address
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return address
    if ip.version != 6:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/{max(0, int(ipv6_prefix))}", strict=False))


def forwarded_entries(headers) -> list[str]:
    """Every ``X-Forwarded-For`` entry of a request's headers, in order (several headers joined).

    Parameters
    ----------
    headers : iterable of (bytes, bytes) or None
        The ASGI scope's headers (lower-case names).

    Returns
    -------
    list of str
        The entries, leftmost first.
    """
    out: list[str] = []
    for name, value in headers or ():
        if name == b"x-forwarded-for":
            out += [p for p in value.decode("latin-1").split(",") if p.strip()]
    return out


class ClientAddress:
    """ASGI middleware: ``scope["client"]`` becomes the client's address (:meth:`ProxySettings.client`).

    For everything after it: Gradio's ``gr.Request.client``, the per-client caps, the upload budget. The
    first request with ``X-Forwarded-For`` logs one line saying how the address was read (what an operator
    needs to check the setting).

    Parameters
    ----------
    app : ASGI app
        The app behind it.
    settings : ProxySettings or None, default None
        The trusted proxies (``None``: :meth:`ProxySettings.from_env`).
    ipv6_prefix : int, default 64
        An IPv6 client is its network of this prefix (:func:`client_group`): every per-client cap counts it
        as one.
    """

    def __init__(self, app, settings: ProxySettings | None = None, ipv6_prefix: int = 64) -> None:
        self.app = app
        self.settings = settings or ProxySettings.from_env()
        self.ipv6_prefix = ipv6_prefix
        self._told = False

    async def __call__(self, scope, receive, send):
        """Handle one ASGI connection with the client's address set.

        Parameters
        ----------
        scope : dict
            The ASGI connection scope.
        receive : callable
            The ASGI receive channel.
        send : callable
            The ASGI send channel.

        Returns
        -------
        object
            What the app behind returns.
        """
        if scope.get("type") in ("http", "websocket"):
            peer = (scope.get("client") or (None, 0))[0]
            entries = forwarded_entries(scope.get("headers"))
            addr = peer
            if entries or self.settings.hops:
                addr = self.settings.client(peer, entries)
                if not self._told and entries:
                    self._told = True          # once: what the operator needs to check the setting
                    log.warning("client addresses: X-Forwarded-For has %d entr%s; TS2VIZ_PROXY_HOPS=%d and %d trusted "
                                "network(s) give the client %s", len(entries), "y" if len(entries) == 1 else "ies",
                                self.settings.hops, len(self.settings.trusted), short(addr, 45))
            addr = client_group(addr, self.ipv6_prefix)
            if addr != peer:
                scope = dict(scope)
                scope["client"] = (addr, 0)
        return await self.app(scope, receive, send)


# -- new sessions per address -------------------------------------------------------------------------------

class SessionRate:
    """How many new session ids one client address may start: a token bucket per address.

    ``burst`` at once, then one every ``60 / per_min`` seconds. Session ids seen before are not counted
    again. A page load is one session; a visitor reloading a few times a minute never meets the limit.

    Parameters
    ----------
    burst : int, default 30
        New sessions one address may start at once (``TS2VIZ_NEW_SESSIONS_BURST``).
    per_min : float, default 6.0
        New sessions per minute after that (``TS2VIZ_NEW_SESSIONS_PER_MIN``); 0: none.
    remember : int, default 50_000
        Session ids (and addresses) remembered.
    clock : callable, default time.monotonic
        The clock, in seconds.

    Examples
    --------
    >>> t = [0.0]
    >>> rate = SessionRate(burst=2, per_min=6, clock=lambda: t[0])
    >>> [rate.allow(s, "1.2.3.4") for s in ("a", "b", "c", "a")]
    [True, True, False, True]
    >>> t[0] = 10.0
    >>> rate.allow("c", "1.2.3.4"), rate.allow("d", "5.6.7.8")
    (True, True)
    """

    def __init__(self, burst: int = 30, per_min: float = 6.0, remember: int = 50_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = max(1, int(burst))
        self.every_s = 60.0 / per_min if per_min > 0 else float("inf")
        self.remember = remember
        self.clock = clock
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._buckets: dict[str, tuple[float, float]] = {}      # address -> (tokens, at)
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> "SessionRate":
        """The rate of the environment (``TS2VIZ_NEW_SESSIONS_BURST``, ``TS2VIZ_NEW_SESSIONS_PER_MIN``).

        Returns
        -------
        SessionRate
            The rate.

        Raises
        ------
        ValueError
            For a setting that is not a number.
        """
        return cls(int(float(os.environ.get("TS2VIZ_NEW_SESSIONS_BURST") or 30)),
                   float(os.environ.get("TS2VIZ_NEW_SESSIONS_PER_MIN") or 6))

    def allow(self, session: str, client: str | None) -> bool:
        """Whether a session id may be used now: seen before, or a new one within its address's bucket.

        Parameters
        ----------
        session : str
            The session id.
        client : str or None
            The client's address.

        Returns
        -------
        bool
            True if allowed (a new session takes a token).
        """
        with self._lock:
            if session in self._seen:
                self._seen.move_to_end(session)
                return True
            now = self.clock()
            key = client or "?"
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) / self.every_s)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return False
            self._buckets[key] = (tokens - 1.0, now)
            self._seen[session] = None
            while len(self._seen) > self.remember:
                self._seen.popitem(last=False)
            if len(self._buckets) > self.remember:     # full buckets of addresses long gone
                for k in [k for k, (t, a) in self._buckets.items() if t >= self.burst - 1][: len(self._buckets) // 2]:
                    self._buckets.pop(k, None)
            return True


# -- the event guard ---------------------------------------------------------------------------------------

class Guard:
    """What the event guard shares with the app.

    The rate of new sessions, the heavy lanes' jobs (:class:`~ts2viz.ui.serving.jobs.Jobs`), the queue
    (set once the app's queue exists), the open event streams per session, and a count of refusals.

    Parameters
    ----------
    jobs : ts2viz.ui.serving.jobs.Jobs or None, default None
        The jobs told of ``/cancel`` calls.
    rate : SessionRate or None, default None
        The rate of new sessions (``None``: :meth:`SessionRate.from_env`).
    """

    def __init__(self, jobs=None, rate: SessionRate | None = None) -> None:
        self.jobs = jobs
        if jobs is not None:
            jobs.listening = self.is_streaming
        self.rate = rate or SessionRate.from_env()
        self.queue = None
        self._streams: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self.refused = 0

    def is_streaming(self, session: str) -> bool:
        """Whether a session has an open event stream now.

        Parameters
        ----------
        session : str
            The session id.

        Returns
        -------
        bool
            True while a page listens for its results.
        """
        with self._lock:
            return self._streams.get(session, 0) > 0

    def streaming(self) -> set[str]:
        """Sessions with an open event stream now (a page listening for its results).

        Returns
        -------
        set of str
            Their session ids.
        """
        with self._lock:
            return {k for k, n in self._streams.items() if n > 0}

    def _stream(self, session: str, delta: int) -> None:
        with self._lock:
            n = self._streams[session] + delta
            if n > 0:
                self._streams[session] = n
            else:
                self._streams.pop(session, None)

    def known(self, session: str) -> bool:
        """Whether the queue knows a session (always True before the queue is set).

        Parameters
        ----------
        session : str
            A session id.

        Returns
        -------
        bool
            True if the queue has messages pending for it.
        """
        q = self.queue
        return q is None or session in q.pending_messages_per_session

    def known_event(self, event_id: str) -> bool:
        """Whether the queue knows an event id (always True before the queue is set).

        Parameters
        ----------
        event_id : str
            An event id.

        Returns
        -------
        bool
            True if the event is queued, running or has results pending.
        """
        q = self.queue
        if q is None:
            return True
        if event_id in q.event_ids_to_events:
            return True
        return any(event_id in ids for ids in list(q.pending_event_ids_session.values()))


class EventGuard:
    """ASGI middleware of a public app: malformed and abusive event calls refused in one line.

    What it refuses, each with one line to the client and one in the log:

    - an event call (``queue/join``, ``run/...``, ``call/...``) with a body over :data:`MAX_EVENT_BODY`
      (413);
    - an event call or ``/cancel`` whose ``session_hash`` is empty, not text or longer than
      :data:`MAX_SESSION_HASH` (400);
    - an event call that starts a new session past its address's :class:`SessionRate` (429);
    - ``queue/data`` for a session the queue does not know (404), and ``GET call/...`` for an event it does
      not know (404).

    A ``/cancel`` call is also told to the guard's jobs; ``queue/data`` streams are counted per session.
    Everything else passes as it is (the body read is replayed to the app).

    Parameters
    ----------
    app : ASGI app
        The app behind it.
    guard : Guard or None, default None
        What it shares with the app (``None``: a new one).
    """

    def __init__(self, app, guard: Guard | None = None) -> None:
        self.app = app
        self.guard = guard or Guard()

    @staticmethod
    def _watched(path: str) -> bool:
        return path.rstrip("/").endswith("/queue/join") or "/run/" in path or "/call/" in path

    async def _refuse(self, send, status: int, text: str, what: str, client: str | None) -> None:
        self.guard.refused += 1
        await refuse(send, status, text, what, client)

    async def _body(self, receive) -> bytes | int | None:
        """The request's body; ``None`` when the client went away, ``413`` when it is too large."""
        chunks, size, more = [], 0, True
        while more:
            msg = await receive()
            if msg.get("type") != "http.request":
                return None
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > MAX_EVENT_BODY:
                return 413
            chunks.append(chunk)
            more = msg.get("more_body", False)
        return b"".join(chunks)

    async def __call__(self, scope, receive, send):
        """Handle one ASGI connection: refuse it, or pass it to the app.

        Parameters
        ----------
        scope : dict
            The ASGI connection scope.
        receive : callable
            The ASGI receive channel.
        send : callable
            The ASGI send channel.

        Returns
        -------
        object
            What the app behind returns (``None`` after a refusal).
        """
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        method = scope.get("method")
        client = (scope.get("client") or (None, 0))[0]
        if method == "GET" and path.rstrip("/").endswith("/queue/data"):
            return await self._data(scope, receive, send, client)
        if method == "GET" and "/call/" in path:          # /call/API/EVENT: the results of one event
            eid = path.rstrip("/").rsplit("/", 1)[-1]
            if not self.guard.known_event(eid):
                return await self._refuse(send, 404, "no such event", "call results " + short(eid, 20), client)
            return await self.app(scope, receive, send)
        cancel = method == "POST" and path.rstrip("/").endswith("/cancel")
        if method != "POST" or not (cancel or self._watched(path)):
            return await self.app(scope, receive, send)
        body = await self._body(receive)
        if body is None:
            return await self.app(scope, receive, send)     # the client went away: let Gradio see it
        if body == 413:
            return await self._refuse(send, 413, "event call too large", path, client)
        try:
            data = json.loads(body) if body else None
        except ValueError:
            data = None
        if isinstance(data, dict) and "session_hash" in data:
            sid = data["session_hash"]
            if sid is not None and (not isinstance(sid, str) or not sid.strip() or len(sid) > MAX_SESSION_HASH):
                return await self._refuse(send, 400, "session_hash must be a non-empty string (the page's session id)",
                                          path, client)
            if cancel:
                if self.guard.jobs is not None and isinstance(sid, str):
                    eid = data.get("event_id")
                    self.guard.jobs.cancel(sid, eid if isinstance(eid, str) else None)
            elif isinstance(sid, str) and not self.guard.rate.allow(sid, client):
                return await self._refuse(send, 429, "too many new sessions from your address; try again in a "
                                                     "minute", path, client)
        sent = {"done": False}

        async def replay():
            if not sent["done"]:
                sent["done"] = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _data(self, scope, receive, send, client):
        from urllib.parse import parse_qs

        qs = parse_qs((scope.get("query_string") or b"").decode("latin-1"))
        sid = (qs.get("session_hash") or [""])[0]
        if not sid or len(sid) > MAX_SESSION_HASH or not self.guard.known(sid):
            return await self._refuse(send, 404, "no such session: open the page again", "queue/data "
                                      + short(sid, 20), client)
        self.guard._stream(sid, +1)
        try:
            return await self.app(scope, receive, send)
        finally:
            self.guard._stream(sid, -1)
