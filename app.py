"""The ts2viz inspection app, from the command line (and a Hugging Face Space's entry point).

``python app.py [--data ts2|DIR|HF_ID] [--scores FILE ...] [--gold FOLDER ...] [--host H] [--port P]``.

Defaults: the bundled TS2 data and published scores (no network, no GPU needed). The data may also be
set with the ``TS2VIZ_DATA`` environment variable; host and port default to Gradio's own
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` (127.0.0.1:7860 when unset; Hugging Face Spaces sets
them).

Trust level (:mod:`ts2viz.ui.serving.access`): on loopback this is the operator's own tool. On a Hugging
Face Space (``SPACE_ID``), with ``--public``, or when reachable from other machines (a non-loopback
``--host``, ``--share``) unless ``--trusted``, visitors are untrusted: they score only with the metrics
the operator lists (``--metric``, ``TS2VIZ_METRICS``, ``--metrics-file`` / ``TS2VIZ_METRICS_FILE``).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading


def parse_args(argv=None) -> argparse.Namespace:
    """The app's command line (``python app.py --help`` lists the options).

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name; ``None``: ``sys.argv[1:]``.

    Returns
    -------
    argparse.Namespace
        The options, with the environment's defaults (``TS2VIZ_DATA``, ``GRADIO_SERVER_NAME``,
        ``GRADIO_SERVER_PORT``) where not given.
    """
    ap = argparse.ArgumentParser(description="ts2viz: inspect text-to-image metrics on semantic error graphs")
    ap.add_argument("--data", default=os.environ.get("TS2VIZ_DATA", "ts2"),
                    help="'ts2' (bundled, default), a dataset folder with metadata.csv, or a Hugging Face "
                         "dataset id (env: TS2VIZ_DATA)")
    ap.add_argument("--scores", action="append", default=[], metavar="FILE",
                    help="a scores file (CSV/Parquet) to load, shared by every visitor; repeatable")
    ap.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                    help="a metric in --scores whose lower values are better; repeatable")
    ap.add_argument("--nuisance", action="append", default=[], metavar="FILE",
                    help="long table of `ts2viz nuisance` (repeatable): its metrics' nuisance views and stability "
                         "table for every visitor")
    ap.add_argument("--gold", action="append", default=[], metavar="FOLDER",
                    help="a rated-set folder (images.csv, ratings.csv, ...) offered in the Human ratings tab "
                         "beside the bundled sets, shared by every visitor; repeatable")
    ap.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
                    help="interface to listen on (env: GRADIO_SERVER_NAME; default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                    help="port (env: GRADIO_SERVER_PORT; default 7860)")
    ap.add_argument("--share", action="store_true", help="also make a public Gradio share link (public mode)")
    ap.add_argument("--public", action="store_true",
                    help="public mode even on loopback: visitors are untrusted (always on a Hugging Face Space)")
    ap.add_argument("--trusted", action="store_true",
                    help="operator mode even when reachable from other machines: every visitor may run any "
                         "metric spec, including code (callable:) and server files (csv:)")
    ap.add_argument("--metric", action="append", default=[], metavar="SPEC",
                    help="a metric spec offered for live scoring (in public mode the only ones); repeatable "
                         "(env: TS2VIZ_METRICS, specs separated by newlines or commas)")
    ap.add_argument("--metrics-file", default=None, metavar="FILE",
                    help="a file with one offered metric spec per line, # comments (env: TS2VIZ_METRICS_FILE)")
    ap.add_argument("--prefetch-images", action="store_true",
                    help="download the images of every SEG graph's thumbnails from the dataset's hub repo at "
                         "start-up, behind the visitors' own (env: TS2VIZ_PREFETCH=all; default: the first SEG's; "
                         "disk budget TS2VIZ_PREFETCH_MB)")
    return ap.parse_args(argv)


def trusted_proxies() -> None:
    """Set up how public mode learns a client's address, before the server starts.

    Public mode reads client addresses itself (:class:`ts2viz.ui.serving.guard.ClientAddress`: only what
    trusted proxies appended to ``X-Forwarded-For``, from the right; on a Space the Space's proxy,
    ``TS2VIZ_PROXY_HOPS=1``). uvicorn's own reading is switched off: with ``FORWARDED_ALLOW_IPS=*`` it
    takes the leftmost entry, which any visitor writes (ignored here, with one line on stderr). An
    operator's ``FORWARDED_ALLOW_IPS`` naming proxies is taken over as ``TS2VIZ_TRUSTED_PROXIES``.

    Raises
    ------
    SystemExit
        When the proxy settings of the environment are malformed (one line).
    """
    given = os.environ.get("FORWARDED_ALLOW_IPS", "").strip()
    if given and given != "*" and not os.environ.get("TS2VIZ_TRUSTED_PROXIES"):
        os.environ["TS2VIZ_TRUSTED_PROXIES"] = given
    elif given == "*":
        print("ts2viz: FORWARDED_ALLOW_IPS=* ignored in public mode (it would trust addresses any visitor "
              "writes); set TS2VIZ_TRUSTED_PROXIES or TS2VIZ_PROXY_HOPS", file=sys.stderr)
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    from ts2viz.ui.serving.guard import ProxySettings

    try:
        ProxySettings.from_env()
    except ValueError as e:
        raise SystemExit(f"ts2viz: {e}") from None


def main(argv=None) -> int:
    """Start the app: decide the trust level, load the data, serve until stopped.

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name; ``None``: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 when the server stops, 2 for bad input (one line on stderr: a data or scores file, a metric
        list, a gold folder, a nuisance table that does not load).
    """
    args = parse_args(argv)
    if args.prefetch_images:
        os.environ["TS2VIZ_PREFETCH"] = "all"
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from ts2viz.errors import InputError
    from ts2viz.ui.serving import access as acc
    from ts2viz.ui import build_app, load_state

    try:
        is_public, reason = acc.decide(host=args.host, share=args.share, public_flag=args.public,
                                       trusted=args.trusted)
        offered = acc.read_metric_list(args.metric, args.metrics_file)
        access = acc.public(offered, reason) if is_public else acc.Access(False, offered, acc.OPERATOR_LIMITS, reason)
        app = load_state(args.data, args.scores, lower_is_better=args.lower_is_better, access=access)
        if args.gold:
            from ts2viz.ui.callbacks.humaneval import add_operator_sets

            add_operator_sets(args.gold)
        if args.nuisance:
            from ts2viz.ui.state.nuisance_session import add_operator_nuisance

            add_operator_nuisance(app, args.nuisance)
    except InputError as e:
        print(f"ts2viz: {e}", file=sys.stderr)
        return 2
    if is_public:
        trusted_proxies()
    print(f"ts2viz: {reason}; {len(offered)} metric(s) offered for live scoring", file=sys.stderr)
    demo, kwargs, app = build_app(app=app)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, prevent_thread_lock=True,
                **kwargs)
    if app.metrics:  # the other mode in the background once serving, so that switching is instant
        threading.Thread(target=app.warm, daemon=True, name="ts2viz-warm").start()
    from ts2viz.ui.callbacks.humaneval import warm as warm_gold

    # the Human ratings tab's views too, so that none of its clicks computes one (issue 40 item 15)
    threading.Thread(target=warm_gold, daemon=True, name="ts2viz-gold-warm").start()
    demo.block_thread()
    return 0


if __name__ == "__main__":
    sys.exit(main())
