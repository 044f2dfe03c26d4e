"""ts2viz inspection app: ``python app.py [--data ts2|DIR|HF_ID] [--scores FILE ...] [--host H] [--port P]``.

Defaults: the bundled TS2 data and published scores (no network, no GPU needed). The data may also be
set with the ``TS2VIZ_DATA`` environment variable; host and port default to Gradio's own
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` (127.0.0.1:7860 when unset; Hugging Face Spaces sets them).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="ts2viz: inspect text-to-image metrics on semantic error graphs")
    ap.add_argument("--data", default=os.environ.get("TS2VIZ_DATA", "ts2"),
                    help="'ts2' (bundled, default), a dataset folder with metadata.csv, or a Hugging Face "
                         "dataset id (env: TS2VIZ_DATA)")
    ap.add_argument("--scores", action="append", default=[], metavar="FILE",
                    help="a scores file (CSV/Parquet) to load; repeatable")
    ap.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                    help="a metric in --scores whose lower values are better; repeatable")
    ap.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
                    help="interface to listen on (env: GRADIO_SERVER_NAME; default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                    help="port (env: GRADIO_SERVER_PORT; default 7860)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Up to 4 events at a time. Set through Gradio's own variable (read when the Blocks is created)
    # rather than demo.queue(), which would rebuild the whole server app once more (~0.2 s of start).
    os.environ.setdefault("GRADIO_DEFAULT_CONCURRENCY_LIMIT", "4")
    from ts2viz.errors import InputError
    from ts2viz.ui import build_app, load_state

    try:
        app = load_state(args.data, args.scores, lower_is_better=args.lower_is_better)
    except InputError as e:
        print(f"ts2viz: {e}", file=sys.stderr)
        return 2
    demo, kwargs, app = build_app(app=app)
    demo.launch(server_name=args.host, server_port=args.port, prevent_thread_lock=True, **kwargs)
    if app.metrics:  # the other mode in the background once serving, so that switching is instant
        threading.Thread(target=app.warm, daemon=True, name="ts2viz-warm").start()
    demo.block_thread()
    return 0


if __name__ == "__main__":
    sys.exit(main())
