"""Malformed event calls to a public app answered with a one-line 400 before Gradio sees them.

A browser always sends a session id (``session_hash``, a random string) with an event; a script may
send an empty one, which Gradio answers with an HTTP 500 and a traceback in the log. This ASGI
middleware reads the JSON body of ``queue/join`` and ``run/...`` calls (small: component values and
references to uploaded files), refuses a missing-but-named, empty, non-text or overlong id, and
passes every other request on unchanged.
"""
from __future__ import annotations

import json

#: a session id longer than this is not one a browser made (Gradio's are 11 characters)
MAX_SESSION_HASH = 128
#: event calls with a body larger than this are refused (413): no page sends one
MAX_EVENT_BODY = 4 * 1024 * 1024


class EventGuard:
    def __init__(self, app) -> None:
        self.app = app

    @staticmethod
    def _watched(path: str) -> bool:
        return path.rstrip("/").endswith("/queue/join") or "/run/" in path or "/call/" in path

    @staticmethod
    async def _refuse(send, status: int, text: str) -> None:
        body = text.encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") != "POST" or not self._watched(scope.get("path", "")):
            return await self.app(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:
            msg = await receive()
            if msg.get("type") != "http.request":
                return await self.app(scope, receive, send)     # the client went away: let Gradio see it
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > MAX_EVENT_BODY:
                return await self._refuse(send, 413, "event call too large")
            chunks.append(chunk)
            more = msg.get("more_body", False)
        body = b"".join(chunks)
        try:
            data = json.loads(body) if body else None
        except ValueError:
            data = None
        if isinstance(data, dict) and "session_hash" in data:
            sid = data["session_hash"]
            if sid is not None and (not isinstance(sid, str) or not sid.strip() or len(sid) > MAX_SESSION_HASH):
                return await self._refuse(send, 400, "session_hash must be a non-empty string (the page's session id)")
        sent = {"done": False}

        async def replay():
            if not sent["done"]:
                sent["done"] = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)
