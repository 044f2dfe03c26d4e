"""Shared by the judge fixture makers: the fixture images and a local chat endpoint that records requests.

Runs in the side venv (Pillow only; no numpy): the images are drawn with PIL, the endpoint is the project's
test endpoint (standard library only). Nothing of the originals is here.
"""
from __future__ import annotations

import json
import platform
import sys
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
    """A local OpenAI-compatible chat endpoint: ``reply(body) -> text``; every request body is kept in order.

    The project's test endpoint (``tests/support/llm_server.py``: ``serving_chat``, standard library only);
    ``base`` is its URL without the ``/v1``.
    """

    def __init__(self, reply):
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.reply = reply

    def _answer(self, body, headers):
        self.bodies.append(body)
        self.headers.append({"authorization": headers.get("Authorization")})
        return self.reply(body)

    def __enter__(self):
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        from llm_server import serving_chat

        self._serving = serving_chat(self._answer)
        self.base = self._serving.__enter__().removesuffix("/v1")
        return self

    def __exit__(self, *exc):
        return self._serving.__exit__(*exc)


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
