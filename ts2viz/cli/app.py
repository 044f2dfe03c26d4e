"""``ts2viz app``: start the inspection app (the same function a Hugging Face Space's ``app.py`` calls).

``ts2viz app [--data ts2|DIR|HF_ID] [--scores FILE ...] [--gold FOLDER ...] [--host H] [--port P]``.

Defaults: the bundled TS2 data and published scores (no network, no GPU needed). The data may also be
set with the ``TS2VIZ_DATA`` environment variable; host and port default to Gradio's own
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` (127.0.0.1:7860 when unset; Hugging Face Spaces sets
them).

Trust level (:mod:`ts2viz.ui.serving.access`): on loopback this is the operator's own tool. On a Hugging
Face Space (``SPACE_ID``), with ``--public``, or when reachable from other machines (a non-loopback
``--host``, ``--share``) unless ``--trusted``, visitors are untrusted: they score only with the metrics
the operator lists (``--metric``, ``TS2VIZ_METRICS``, ``--metrics-file`` / ``TS2VIZ_METRICS_FILE``).

Every start error (a data, scores, gold or nuisance input that does not load, malformed proxy
settings, a port already in use) is one line on stderr and exit code 2 (:func:`ts2viz.cli.main`).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import threading

from ..errors import InputError

#: the port when neither ``--port`` nor ``GRADIO_SERVER_PORT`` gives one (Gradio's own default)
DEFAULT_PORT = 7860


def declare_app(p: argparse.ArgumentParser) -> None:
    """Declare ``ts2viz app``'s arguments on its parser, and ``func``, the function that runs it.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, with its help line (:func:`ts2viz.cli.build_parser`).
    """
    p.description = ("Start the ts2viz app: the leaderboard, the SEG explorer, live scoring, authoring and the "
                     "human-rated sets, served until stopped (Ctrl-C). A start error is one line and exit code 2.")
    p.add_argument("--data", default=None,
                   help="'ts2' (bundled, default), a dataset folder with metadata.csv, or a Hugging Face "
                        "dataset id (env: TS2VIZ_DATA)")
    p.add_argument("--scores", action="append", default=[], metavar="FILE",
                   help="a scores file (CSV/Parquet) to load, shared by every visitor; repeatable")
    p.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                   help="a metric in --scores whose lower values are better; repeatable")
    p.add_argument("--nuisance", action="append", default=[], metavar="FILE",
                   help="long table of `ts2viz nuisance` (repeatable): its metrics' nuisance views and stability "
                        "table for every visitor")
    p.add_argument("--gold", action="append", default=[], metavar="FOLDER",
                   help="a rated-set folder (images.csv, ratings.csv, ...) offered in the Human ratings tab "
                        "beside the bundled sets, shared by every visitor; repeatable")
    p.add_argument("--host", default=None,
                   help="interface to listen on (env: GRADIO_SERVER_NAME; default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None,
                   help=f"port (env: GRADIO_SERVER_PORT; default {DEFAULT_PORT})")
    p.add_argument("--share", action="store_true", help="also make a public Gradio share link (public mode)")
    p.add_argument("--public", action="store_true",
                   help="public mode even on loopback: visitors are untrusted (always on a Hugging Face Space)")
    p.add_argument("--trusted", action="store_true",
                   help="operator mode even when reachable from other machines: every visitor may run any "
                        "metric spec, including code (callable:) and server files (csv:)")
    p.add_argument("--metric", action="append", default=[], metavar="SPEC",
                   help="a metric spec offered for live scoring (in public mode the only ones); repeatable "
                        "(env: TS2VIZ_METRICS, specs separated by newlines or commas)")
    p.add_argument("--metrics-file", default=None, metavar="FILE",
                   help="a file with one offered metric spec per line, # comments (env: TS2VIZ_METRICS_FILE)")
    p.add_argument("--prefetch-images", action="store_true",
                   help="download the images of every SEG graph's thumbnails from the dataset's hub repo at "
                        "start-up, behind the visitors' own (env: TS2VIZ_PREFETCH=all; default: the first SEG's; "
                        "disk budget TS2VIZ_PREFETCH_MB)")
    p.set_defaults(func=run_app)


def with_env_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """The ``app`` options with the environment's defaults where not given on the command line.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``ts2viz app`` command line.

    Returns
    -------
    argparse.Namespace
        A copy with ``data`` (``TS2VIZ_DATA``, else ``"ts2"``), ``host`` (``GRADIO_SERVER_NAME``, else
        ``127.0.0.1``) and ``port`` (``GRADIO_SERVER_PORT``, else 7860) filled in.

    Raises
    ------
    InputError
        When ``GRADIO_SERVER_PORT`` is not a number.

    Examples
    --------
    >>> from ts2viz.cli import build_parser
    >>> a = with_env_defaults(build_parser().parse_args(["app", "--port", "8000"]))
    >>> a.port, a.data in ("ts2", os.environ.get("TS2VIZ_DATA"))
    (8000, True)
    """
    out = argparse.Namespace(**vars(args))
    if out.data is None:
        out.data = os.environ.get("TS2VIZ_DATA") or "ts2"
    if out.host is None:
        out.host = os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    if out.port is None:
        given = os.environ.get("GRADIO_SERVER_PORT") or str(DEFAULT_PORT)
        try:
            out.port = int(given)
        except ValueError:
            raise InputError(f"GRADIO_SERVER_PORT={given!r}: expected a port number") from None
    return out


def trusted_proxies() -> None:
    """Set up how public mode learns a client's address, before the server starts.

    Public mode reads client addresses itself (:class:`ts2viz.ui.serving.guard.ClientAddress`: only what
    trusted proxies appended to ``X-Forwarded-For``, from the right; on a Space the Space's proxy,
    ``TS2VIZ_PROXY_HOPS=1``). uvicorn's own reading is switched off: with ``FORWARDED_ALLOW_IPS=*`` it
    takes the leftmost entry, which any visitor writes (ignored here, with one line on stderr). An
    operator's ``FORWARDED_ALLOW_IPS`` naming proxies is taken over as ``TS2VIZ_TRUSTED_PROXIES``.

    Raises
    ------
    InputError
        When the proxy settings of the environment are malformed (one line).
    """
    given = os.environ.get("FORWARDED_ALLOW_IPS", "").strip()
    if given and given != "*" and not os.environ.get("TS2VIZ_TRUSTED_PROXIES"):
        os.environ["TS2VIZ_TRUSTED_PROXIES"] = given
    elif given == "*":
        print("ts2viz: warning: FORWARDED_ALLOW_IPS=* ignored in public mode (it would trust addresses any "
              "visitor writes); set TS2VIZ_TRUSTED_PROXIES or TS2VIZ_PROXY_HOPS", file=sys.stderr)
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    from ..ui.serving.guard import ProxySettings

    try:
        ProxySettings.from_env()
    except ValueError as e:
        raise InputError(str(e)) from None


def port_error(host: str, port: int, e: OSError) -> InputError:
    """The one-line error for a port that cannot be served on (in use, or an address not of this machine).

    Parameters
    ----------
    host : str
        The interface (``--host``).
    port : int
        The port (``--port``).
    e : OSError
        What binding or Gradio's launch raised.

    Returns
    -------
    InputError
        The error to raise: the address, the first sentence of ``e``, and what to do.
    """
    first = " ".join(str(e).split(". ")[0].split())
    return InputError(f"cannot serve on {host}:{port} ({first}); is another app running there? choose another "
                      "with --port")


def check_port(host: str, port: int) -> None:
    """Fail at once, in one line, when ``host:port`` cannot be listened on (before any data is loaded).

    Parameters
    ----------
    host : str
        The interface (``--host``).
    port : int
        The port (``--port``).

    Raises
    ------
    InputError
        When the port is out of range, in use or the address is not this machine's.
    """
    import socket

    if not 0 < port < 65536:
        raise InputError(f"--port {port}: expected a port number from 1 to 65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # (as the server binds: a TIME_WAIT port is free)
        try:
            s.bind((host, port))
        except OSError as e:
            raise port_error(host, port, e) from None


def load_and_build(args: argparse.Namespace):
    """Decide the trust level, load the data and build the app (not launched).

    Parameters
    ----------
    args : argparse.Namespace
        The ``ts2viz app`` command line, the environment's defaults filled in (:func:`with_env_defaults`).

    Returns
    -------
    tuple
        What :func:`ts2viz.ui.build_app` returns: the page, its launch arguments and the shared state.

    Raises
    ------
    InputError
        For a data, scores, gold or nuisance input that does not load, or malformed proxy settings.
    """
    from ..ui import build_app, load_state
    from ..ui.serving import access as acc

    is_public, reason = acc.decide(host=args.host, share=args.share, public_flag=args.public, trusted=args.trusted)
    offered = acc.read_metric_list(args.metric, args.metrics_file)
    access = acc.public(offered, reason) if is_public else acc.Access(False, offered, acc.OPERATOR_LIMITS, reason)
    app = load_state(args.data, args.scores, lower_is_better=args.lower_is_better, access=access)
    if args.gold:
        from ..ui.callbacks.humaneval.sets import add_operator_sets

        add_operator_sets(args.gold)
    if args.nuisance:
        from ..ui.state.nuisance_session import add_operator_nuisance

        add_operator_nuisance(app, args.nuisance)
    if is_public:
        trusted_proxies()
    print(f"ts2viz: {reason}; {len(offered)} metric(s) offered for live scoring", file=sys.stderr)
    return build_app(app=app)


@contextlib.contextmanager
def startup_heap():
    """No garbage collection while the app loads and builds; what it built is then left out of later ones.

    Loading the data, importing Gradio and building the page allocate a few hundred thousand objects, nearly all
    kept for the server's life, which Python's collector would scan again and again meanwhile. After a start
    without an error one collection frees the start's garbage and ``gc.freeze`` moves the survivors to the
    permanent generation, which later collections (while serving) do not scan.

    Yields
    ------
    None
        While the app loads and builds.
    """
    gc.disable()
    try:
        yield
    except BaseException:
        gc.enable()
        raise
    gc.collect()
    gc.freeze()
    gc.enable()


def run_app(args: argparse.Namespace) -> int:
    """Start the app: decide the trust level, load the data, serve until stopped.

    Parameters
    ----------
    args : argparse.Namespace
        The command line of ``ts2viz app``, parsed.

    Returns
    -------
    int
        0 when the server stops.

    Raises
    ------
    InputError
        For bad input (a data or scores file, a metric list, a gold folder, a nuisance table that does not
        load, malformed proxy settings) and for a server that cannot start (a port in use).
    """
    args = with_env_defaults(args)
    check_port(args.host, args.port)      # before the data loads: a clash is said at once
    if args.prefetch_images:
        os.environ["TS2VIZ_PREFETCH"] = "all"
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    with startup_heap():
        demo, kwargs, app = load_and_build(args)
    try:
        demo.launch(server_name=args.host, server_port=args.port, share=args.share, prevent_thread_lock=True,
                    **kwargs)
    except OSError as e:   # Gradio's "Cannot find empty port in range: P-P" (taken since check_port)
        raise port_error(args.host, args.port, e) from None
    if app.metrics:  # the other mode in the background once serving, so that switching is instant
        threading.Thread(target=app.warm, daemon=True, name="ts2viz-warm").start()
    if os.environ.get("TS2VIZ_WARM_GOLD", "1").strip() != "0":
        from ..ui.callbacks.humaneval.warmup import warm as warm_gold

        # the Human ratings tab's views too, so that none of its clicks computes one (TS2VIZ_WARM_GOLD=0: not)
        threading.Thread(target=warm_gold, daemon=True, name="ts2viz-gold-warm").start()
    demo.block_thread()
    return 0
