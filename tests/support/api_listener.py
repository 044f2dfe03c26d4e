"""A local stand-in for a paid OpenAI-compatible API (issue 42's tests and ``benchmarks/bench_attacks.py``).

:class:`Listener` answers, refuses with an error body that repeats the key it was sent, or hangs, as a
test sets it, and records every request it received (its time, size, key and image sizes).
"""
from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: the key every test gives the app: it must never appear in anything a visitor can see
CANARY = "sk-test-canary"


class Listener:
    """An OpenAI-compatible endpoint on a free loopback port: ``mode`` says what it does with a request.

    ``ok``: a VIEScore-shaped JSON reply, with log-probabilities when asked (VQAScore), and its usage;
    ``refuse``: HTTP 401 whose body repeats the key it was sent and an internal address; ``hang``: no
    reply for ``hang_s`` seconds; ``trickle``: a reply of one byte every 0.2 s for ``hang_s`` seconds. ``requests`` records (time, body size, Authorization, image sizes).
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.hang_s = 30.0
        self.delay_s = 0.0
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(raw)
                auth = self.headers.get("Authorization") or ""
                with outer.lock:
                    outer.requests.append({"t": time.monotonic(), "bytes": len(raw), "auth": auth,
                                           "images": _image_sizes(body), "text": json.dumps(body)[:2000]})
                mode = outer.mode
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                if mode == "hang":
                    time.sleep(outer.hang_s)
                if mode == "trickle":                   # a reply that never ends, one byte at a time
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    try:
                        for _ in range(int(outer.hang_s * 5)):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.2)
                    except OSError:
                        pass
                    return
                if mode == "refuse":
                    out = json.dumps({"error": {"message": f"Incorrect API key provided: {auth}. internal host "
                                                           "10.9.8.7 (billing account 42)"}}).encode()
                    self.send_response(401)
                else:
                    choice = {"message": {"role": "assistant",
                                          "content": '{"score": [7], "reasoning": "fine"}'}}
                    if body.get("logprobs"):
                        choice["logprobs"] = {"content": [{"token": "Yes", "logprob": -0.25, "top_logprobs": [
                            {"token": "Yes", "logprob": -0.25}, {"token": "No", "logprob": -1.5}]}]}
                    out = json.dumps({"choices": [choice], "usage": {"prompt_tokens": 900, "completion_tokens": 20,
                                                                     "total_tokens": 920}}).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                try:
                    self.wfile.write(out)
                except OSError:
                    pass

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _image_sizes(body: dict) -> list[tuple[int, int]]:
    from PIL import Image

    out = []
    for m in body.get("messages") or ():
        for part in m.get("content") if isinstance(m.get("content"), list) else ():
            if isinstance(part, dict) and part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                out.append(Image.open(io.BytesIO(base64.b64decode(data))).size)
    return out
