"""What the raw-HTTP attack tests measure while a hostile visitor works: a bystander's view changes
(their latency, and their wait in the queue), the server's memory (RSS, sampled) and disk (bytes under
a folder); and a few attack files (zips of datasets, images) made here, small on disk."""
from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import httpx

from gradio_http import AppConfig, Session


def server_pid(url: str) -> int:
    """The process id of the ``app.py`` serving ``url``."""
    import psutil

    port = url.rsplit(":", 1)[1]
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info.get("cmdline") or []
        if any(str(c).endswith("app.py") for c in cmd) and port in cmd:
            return p.pid
    raise RuntimeError("the app's process was not found")


def disk_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


class Rss:
    """The server's resident memory: at the start, its peak while sampling (every 50 ms), and now."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.proc = psutil.Process(pid)
        self.start = self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
            except Exception:  # noqa: BLE001 - the process went away
                return

    def now(self) -> int:
        return self.proc.memory_info().rss

    def stop(self) -> None:
        self._stop.set()
        self._t.join(1)

    @property
    def peak_mb(self) -> float:
        return (self.peak - self.start) / 2**20


@contextlib.asynccontextmanager
async def client(url: str, address: str = "127.0.0.1", headers: dict | None = None):
    """An HTTP client whose connections come from ``address`` (a loopback address: another visitor),
    with ``headers`` on every request (e.g. ``X-Forwarded-For``), and the page's config."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), transport=transport, headers=headers or {},
                                 limits=httpx.Limits(max_connections=64)) as c:
        yield c, await AppConfig.fetch(c, url)


class Bystander:
    """Another visitor changing SEGs the whole time (each change: all the calls it costs in a browser),
    from its own address. ``times``: each change's seconds; ``waits``: each call's wait in the queue."""

    def __init__(self, url: str, address: str = "127.0.0.1") -> None:
        self.url, self.address = url, address
        self.times: list[float] = []
        self.waits: list[float] = []
        self.failed: list[str] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        async with client(self.url, self.address) as (c, app):
            s = Session(c, self.url, app)
            await s.load()
            segs = s.options("seg-pick")
            self.ready.set()
            k = 0
            while not self._stop.is_set():
                k += 1
                t0 = time.perf_counter()
                res = await s.change("seg-pick", segs[k % len(segs)])
                self.times.append(time.perf_counter() - t0)
                self.waits += [r.waited for r in res if r.waited is not None]
                self.failed += [r.error for r in res if not r.success]

    async def __aenter__(self) -> "Bystander":
        self.ready = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())
        await asyncio.wait_for(self.ready.wait(), 120)
        return self

    async def __aexit__(self, *exc) -> None:
        self._stop.set()
        await self._task

    def summary(self) -> str:
        if not self.times:
            return "bystander: no view change"
        return (f"bystander {len(self.times)} view changes, max {max(self.times):.2f} s, queue wait max "
                f"{max(self.waits, default=0):.2f} s")

    def check(self, max_wait: float = 3.0, max_change: float = 10.0) -> None:
        """At least one view change during the attack; none failed; no call waited in the queue longer
        than ``max_wait`` s; no change took longer than ``max_change`` s.

        The margins are for a loaded machine, not for the claim: on an idle machine a view waits well
        under a second; on this shared 2-core machine at load average 14 a view waited up to 1.9 s with
        its lane empty (the server's process itself waiting for a core). A view queued behind the
        attack's heavy work would wait for all of it: 4 to 37 s in the issue's measurements, at least
        the attack's own duration in these tests (printed with each)."""
        assert self.times, "the bystander changed no view during the attack"
        assert not self.failed, self.failed[:3]
        assert max(self.waits, default=0) < max_wait, f"a view waited {max(self.waits):.2f} s in the queue"
        assert max(self.times) < max_change, f"a view change took {max(self.times):.2f} s"


# -- attack files ----------------------------------------------------------------------------------------------

def png(w: int = 8, h: int = 8, color=(200, 30, 30), **save) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, "PNG", **save)
    return buf.getvalue()


def dataset_zip(segs: dict[int, list[tuple[str, str]]], images: dict[str, bytes] | None = None, *,
                edges: list[tuple[int, str, str]] | None = None, metadata: bytes | None = None,
                prompt: str = "a red apple") -> bytes:
    """A zipped dataset: ``segs`` maps a SEG id to its (file_name, node label) rows; ``images`` the bytes
    of each file (default: a tiny PNG each); ``metadata`` replaces metadata.csv as given."""
    lines = ["id,target_prompt,file_name,image_source,rank,partition"]
    for sid, rows in segs.items():
        lines += [f"{sid},{prompt},{fn},SD,{label},Custom" for fn, label in rows]
    buf = io.BytesIO()
    tiny = png()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ds/metadata.csv", metadata if metadata is not None else ("\n".join(lines) + "\n"))
        if edges:
            z.writestr("ds/edges.csv", "id,parent,child\n" + "".join(f"{s},{a},{b}\n" for s, a, b in edges))
        for rows in segs.values():
            for fn, _ in rows:
                z.writestr(f"ds/{fn}", (images or {}).get(fn, tiny))
    return buf.getvalue()


# -- the queue's protocol, one request at a time (joins, the event stream, cancels) ----------------------------

async def join(c: httpx.AsyncClient, url: str, session: str, fn: int, data: list, event_data=None) -> httpx.Response:
    """``POST queue/join``: the answer (200 with the event id, or a refusal)."""
    body = {"data": data, "fn_index": fn, "session_hash": session, "event_data": event_data, "trigger_id": None}
    return await c.post(f"{url}/gradio_api/queue/join", json=body)


class Stream:
    """A session's event stream read in the background: ``messages`` as ``(time.perf_counter(), message)``."""

    def __init__(self, c: httpx.AsyncClient, url: str, session: str) -> None:
        import json

        self.messages: list[tuple[float, dict]] = []
        self.t0 = time.perf_counter()
        self.status: int | None = None

        async def read() -> None:
            while True:
                try:
                    async with c.stream("GET", f"{url}/gradio_api/queue/data", params={"session_hash": session},
                                        timeout=httpx.Timeout(10.0, read=None)) as resp:
                        self.status = resp.status_code
                        if resp.status_code != 200:
                            return
                        async for line in resp.aiter_lines():
                            if line.startswith("data:"):
                                self.messages.append((time.perf_counter(), json.loads(line[5:])))
                except httpx.HTTPError:
                    return
                await asyncio.sleep(0.05)     # the stream closes when nothing is pending; read it again

        self.task = asyncio.get_running_loop().create_task(read())

    def of(self, event_id: str, kind: str | None = None) -> list[tuple[float, dict]]:
        return [(t, m) for t, m in self.messages if m.get("event_id") == event_id
                and (kind is None or m.get("msg") == kind)]

    async def wait(self, event_id: str, kind: str, timeout: float = 120.0) -> dict:
        """The first message ``kind`` of the event (a condition, polled every 50 ms up to ``timeout``)."""
        t_end = time.perf_counter() + timeout
        while time.perf_counter() < t_end:
            got = self.of(event_id, kind)
            if got:
                return got[0][1]
            await asyncio.sleep(0.05)
        raise TimeoutError(f"no {kind} for event {event_id} in {timeout:.0f} s")

    def close(self) -> None:
        self.task.cancel()
