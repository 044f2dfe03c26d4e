"""Shared by the judge fixture makers: the fixture images and a local chat endpoint that records requests.

Runs in the side venv (Pillow only; no numpy): the images are drawn with PIL, the endpoint is the standard
library's ``http.server``. Nothing of the originals is here.
"""
from __future__ import annotations

import json
import platform
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "reference" / "judges"


def make_images(folder: Path) -> dict[str, Path]:
    """Three small RGB PNGs of different sizes and content (drawn, deterministic), written to ``folder``."""
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    specs = {"wide.png": ((48, 32), (200, 40, 40), "ellipse"), "tall.png": ((32, 44), (30, 120, 220), "rectangle"),
             "square.png": ((40, 40), (240, 220, 60), "polygon")}
    out = {}
    for name, (size, colour, shape) in specs.items():
        im = Image.new("RGB", size, (250, 250, 245))
        d = ImageDraw.Draw(im)
        w, h = size
        if shape == "ellipse":
            d.ellipse([4, 4, w - 8, h - 6], fill=colour, outline=(0, 0, 0))
        elif shape == "rectangle":
            d.rectangle([6, 10, w - 6, h - 4], fill=colour)
            d.line([0, 0, w, h], fill=(0, 0, 0), width=2)
        else:
            d.polygon([(w // 2, 3), (w - 3, h - 3), (3, h - 3)], fill=colour, outline=(20, 20, 20))
        im.save(folder / name)
        out[name] = folder / name
    return out


class Recorder:
    """A local OpenAI-compatible chat endpoint: ``reply(body) -> text``; every request body is kept in order."""

    def __init__(self, reply):
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                recorder.bodies.append(body)
                recorder.headers.append({"authorization": self.headers.get("Authorization")})
                text = reply(body)
                data = json.dumps({"id": "chatcmpl-local", "object": "chat.completion", "created": 0,
                                   "model": body.get("model", ""),
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": text}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def provenance(original: str, commit: str, command: str, changes: list[str]) -> dict:
    """What produced a fixture: the original, its commit, the command, the side venv's versions, the changes."""
    import PIL

    versions = {"python": platform.python_version(), "pillow": PIL.__version__}
    for mod in ("requests", "openai", "tqdm"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return {"original": original, "commit": commit, "command": command, "versions": versions, "changes": changes}


def write(name: str, expected: dict) -> Path:
    """``tests/fixtures/reference/judges/<name>/expected.json``."""
    folder = FIXTURES / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{name}: {folder}", file=sys.stderr)
    return folder
