"""A small raw-HTTP client for a running Gradio app, as a browser (or an attacker) talks to it.

No gradio_client: that client uploads local files itself and hides the protocol. Here every request
is one ``httpx`` call: ``GET /config``, ``POST /gradio_api/upload``, ``POST /gradio_api/queue/join``
and the session's ``GET /gradio_api/queue/data`` event stream. A :class:`Session` keeps the page's
component values like a browser tab does and fires the events wired to a component, following
``.then``/``.success`` chains and ``.change`` events of outputs whose value changed, so one user action
costs the calls it costs in a browser. Used by the tests (public mode, isolation, load) and by
``benchmarks/bench_load.py``.
"""
from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

PREFIX = "/gradio_api"


@dataclass
class Result:
    """One event call: its function, whether it succeeded, its outputs or error text, and how long
    it took from the join request to its completion message (queue wait included)."""

    fn: int
    api_name: str
    success: bool
    data: list | None
    error: str | None
    seconds: float
    #: seconds from the join request until the queue started it (its wait in the queue), when the
    #: stream said so (``process_starts``)
    waited: float | None = None


class AppConfig:
    """The page as ``/config`` describes it: components (by id and elem_id) and event dependencies."""

    def __init__(self, config: dict):
        self.config = config
        self.components = {c["id"]: c for c in config["components"]}
        self.deps = {d["id"]: d for d in config["dependencies"]}
        self.by_elem = {c["props"].get("elem_id"): c["id"] for c in config["components"] if c["props"].get("elem_id")}

    @classmethod
    async def fetch(cls, client: httpx.AsyncClient, url: str) -> "AppConfig":
        r = await client.get(url.rstrip("/") + "/config")
        r.raise_for_status()
        return cls(r.json())

    def cid(self, elem_id: str) -> int:
        return self.by_elem[elem_id]

    def fn(self, api_name: str) -> int:
        return next(d["id"] for d in self.deps.values() if d.get("api_name") == api_name)

    def triggered(self, component: int | None, event: str) -> list[int]:
        """Server-side dependencies fired by ``event`` of ``component`` (``load``: component None)."""
        out = []
        for d in self.deps.values():
            hit = any((t[0] == component or event == "load") and t[1] == event for t in d["targets"])
            if hit and d.get("backend_fn"):
                out.append(d["id"])
        return out

    def followers(self, fn: int, success: bool) -> list[int]:
        """Dependencies chained after ``fn`` (``.then``, or ``.success`` when it succeeded)."""
        out = []
        for d in self.deps.values():
            if d.get("trigger_after") == fn and d.get("backend_fn"):
                if d.get("trigger_only_on_success") and not success:
                    continue
                if d.get("trigger_only_on_failure") and success:
                    continue
                out.append(d["id"])
        return out

    def initial_values(self) -> dict[int, Any]:
        return {cid: c["props"].get("value") for cid, c in self.components.items()}


@dataclass
class Session:
    """One browser tab: a random session id, the page's component values, and an HTTP client."""

    client: httpx.AsyncClient
    url: str
    app: AppConfig
    session_hash: str = field(default_factory=lambda: secrets.token_hex(6))
    values: dict[int, Any] = field(default_factory=dict)
    choices: dict[int, list] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    follow_changes: bool = True

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")
        if not self.values:
            self.values = self.app.initial_values()

    # -- the protocol -----------------------------------------------------------------------------
    async def upload(self, name: str, content: bytes) -> dict:
        """Upload a file through ``/gradio_api/upload``; returns the FileData a component value holds."""
        r = await self.client.post(f"{self.url}{PREFIX}/upload", files={"files": (name, content)})
        r.raise_for_status()
        path = r.json()[0]
        return {"path": path, "orig_name": name, "size": len(content), "meta": {"_type": "gradio.FileData"}}

    async def run(self, calls: list[tuple[int, list, Any]]) -> list[Result]:
        """Join the queue with each ``(fn, data, event_data)`` at once, then read the session's event
        stream until all have completed. Results in the order given."""
        t0 = time.perf_counter()
        ids: dict[str, int] = {}
        out: list[Result | None] = [None] * len(calls)
        for k, (fn, data, event_data) in enumerate(calls):
            if self.app.deps[fn].get("queue") is False:      # answered on the request itself
                out[k] = await self._direct(fn, data, event_data, t0)
                continue
            body = {"data": data, "fn_index": fn, "session_hash": self.session_hash, "event_data": event_data,
                    "trigger_id": None}
            r = await self.client.post(f"{self.url}{PREFIX}/queue/join", json=body)
            if r.status_code != 200:
                raise RuntimeError(f"queue/join {r.status_code}: {r.text[:200]}")
            ids[r.json()["event_id"]] = k
        pending = set(ids)
        starts: dict[str, float] = {}
        while pending:
            async with self.client.stream("GET", f"{self.url}{PREFIX}/queue/data",
                                          params={"session_hash": self.session_hash}) as resp:
                async for line in resp.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    msg = json.loads(line[5:])
                    kind = msg.get("msg")
                    if kind == "process_starts" and msg.get("event_id") in pending:
                        starts.setdefault(msg["event_id"], time.perf_counter() - t0)
                    if kind == "process_completed" and msg.get("event_id") in pending:
                        eid = msg["event_id"]
                        k = ids[eid]
                        fn = calls[k][0]
                        ok = bool(msg.get("success"))
                        output = msg.get("output") or {}
                        out[k] = Result(fn, self.app.deps[fn].get("api_name") or "", ok,
                                        output.get("data") if ok else None,
                                        None if ok else str(output.get("error") or output),
                                        time.perf_counter() - t0, starts.get(eid))
                        pending.discard(eid)
                    elif kind in ("unexpected_error", "close_stream") and pending:
                        if kind == "unexpected_error":
                            for eid in list(pending):
                                k = ids[eid]
                                out[k] = Result(calls[k][0], "", False, None, str(msg.get("message")),
                                                time.perf_counter() - t0)
                            pending.clear()
                        break
                    if not pending:
                        break
        results = [r for r in out if r is not None]
        self.results += results
        return results

    async def _direct(self, fn: int, data: list, event_data: Any, t0: float) -> Result:
        api = self.app.deps[fn].get("api_name") or "predict"
        body = {"data": data, "fn_index": fn, "session_hash": self.session_hash, "event_data": event_data,
                "trigger_id": None}
        try:
            r = await self.client.post(f"{self.url}{PREFIX}/run/{api}", json=body)
        except httpx.HTTPError as e:        # a dropped connection is a failed call, not a crash
            return Result(fn, api, False, None, f"{type(e).__name__}: {e}", time.perf_counter() - t0)
        ok = r.status_code == 200
        payload = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        return Result(fn, api, ok, payload.get("data") if ok else None,
                      None if ok else str(payload.get("error") or r.text[:300]), time.perf_counter() - t0)

    async def call(self, fn: int | str, data: list | None = None, event_data: Any = None) -> Result:
        """One event with explicit input data (an attacker's call), or the current values if None."""
        fn = self.app.fn(fn) if isinstance(fn, str) else fn
        if data is None:
            data = [self.values.get(c) for c in self.app.deps[fn]["inputs"]]
        return (await self.run([(fn, data, event_data)]))[0]

    # -- as a browser tab -----------------------------------------------------------------------
    def value(self, elem_id: str) -> Any:
        return self.values.get(self.app.cid(elem_id))

    def options(self, elem_id: str) -> list:
        """The choices a dropdown or radio offers now (as last updated, else as the page was built)."""
        cid = self.app.cid(elem_id)
        if cid in self.choices:
            return self.choices[cid]
        return [c[1] if isinstance(c, (list, tuple)) else c
                for c in self.app.components[cid]["props"].get("choices") or []]

    def output(self, result: Result, elem_id: str) -> Any:
        """The value an event gave a component (an update's ``value``, or the plain value)."""
        cid = self.app.cid(elem_id)
        outs = self.app.deps[result.fn]["outputs"]
        if cid not in outs or result.data is None:
            raise KeyError(f"{elem_id} is not an output of {result.api_name}")
        v = result.data[outs.index(cid)]
        return v.get("value") if isinstance(v, dict) and v.get("__type__") == "update" else v

    def _apply(self, fn: int, data: list) -> list[int]:
        """Set the page's values from an event's outputs; returns the components whose value changed."""
        changed = []
        for cid, v in zip(self.app.deps[fn]["outputs"], data):
            if isinstance(v, dict) and v.get("__type__") == "update":
                if "choices" in v:
                    self.choices[cid] = [c[1] if isinstance(c, (list, tuple)) else c for c in v["choices"]]
                if "value" not in v:
                    continue
                v = v["value"]
            if self.values.get(cid) != v:
                self.values[cid] = v
                changed.append(cid)
        return changed

    async def fire(self, fns: list[int], event_data: Any = None, depth: int = 0) -> list[Result]:
        """Run events as the page does: concurrently, with the current input values; then what they
        trigger (chained events, ``.change`` of outputs that changed)."""
        if not fns:
            return []
        calls = [(fn, [self.values.get(c) for c in self.app.deps[fn]["inputs"]], event_data) for fn in fns]
        results = await self.run(calls)
        nxt: list[int] = []
        for r in results:
            if r.success and r.data is not None:
                for cid in self._apply(r.fn, r.data):
                    if self.follow_changes and depth < 4:
                        nxt += self.app.triggered(cid, "change")
            nxt += self.app.followers(r.fn, r.success)
        # What they trigger runs as the next wave, together (one event stream per session at a time).
        return results + await self.fire(list(dict.fromkeys(nxt)), None, depth + 1)

    async def load(self) -> list[Result]:
        """Open the page: the load event(s)."""
        return await self.fire(self.app.triggered(None, "load"))

    async def change(self, elem_id: str, value: Any, events: tuple[str, ...] = ("input", "change")) -> list[Result]:
        """The user sets a component (a dropdown, a radio): every event wired to it fires."""
        cid = self.app.cid(elem_id)
        self.values[cid] = value
        fns = [fn for ev in events for fn in self.app.triggered(cid, ev)]
        return await self.fire(list(dict.fromkeys(fns)))

    def keep_alive(self) -> "asyncio.Task":
        """Hold the session's heartbeat stream open, as an open browser tab does; cancel the task
        (or call :meth:`close`) to close the tab."""

        async def hold() -> None:
            try:
                async with self.client.stream("GET", f"{self.url}{PREFIX}/heartbeat/{self.session_hash}",
                                              timeout=httpx.Timeout(10.0, read=None)) as resp:
                    async for _ in resp.aiter_lines():
                        pass
            except httpx.HTTPError:
                pass

        self._heartbeat = asyncio.get_running_loop().create_task(hold())
        return self._heartbeat

    async def close(self) -> None:
        """Close the tab: the heartbeat stream ends, and Gradio runs the page's unload event."""
        task = getattr(self, "_heartbeat", None)
        if task is None:
            self.keep_alive()
            await asyncio.sleep(0.3)
            task = self._heartbeat
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass


def elem_value(app: AppConfig, elem_id: str, key: str = "value") -> Any:
    return app.components[app.cid(elem_id)]["props"].get(key)
