"""The documentation site: it builds strictly (no broken link or anchor), offline; its generated pages are
what the code generates today; the README is a landing page whose links resolve; the app's screenshots
are the ones the browser tests take."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gen_docs  # noqa: E402


@pytest.mark.parametrize("rel", sorted(str(p) for p in gen_docs.generated_pages()))
def test_generated_pages_are_current(rel):
    want = gen_docs.generated_pages()[Path(rel)]
    path = ROOT / rel
    assert path.is_file(), f"{rel} is missing: run python tools/gen_docs.py"
    assert path.read_text(encoding="utf-8") == want, f"{rel} is stale: run python tools/gen_docs.py"


def test_mkdocs_builds_strictly_offline(tmp_path):
    env = {"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
           "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=600, env=env,
                       cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


def _links(md: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", md)


def test_readme_is_a_landing_page_whose_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 160, "README.md is a landing page: move details into docs/"
    for link in _links(text):
        if link.startswith(("http://", "https://", "mailto:", "#")):
            continue
        target = (ROOT / link.split("#")[0]).resolve()
        assert target.exists(), f"README.md links to {link}, which does not exist"


def test_screenshots_in_the_docs_come_from_the_browser_tests():
    """Every screenshot a page shows is one a browser test writes with ``docs_shot(page, NAME)``: a UI change
    that breaks the picture breaks the test, and a re-run of the browser tests renews every picture."""
    written = set()
    for f in (ROOT / "tests" / "browser").glob("test_*.py"):
        written |= set(re.findall(r"docs_shot\([^,]+,\s*[\"']([\w.-]+)[\"']", f.read_text()))
    shown = set()
    for page in (ROOT / "docs").rglob("*.md"):
        for link in _links(page.read_text(encoding="utf-8")):
            if "screenshots/" in link:
                shown.add(Path(link).stem)
    missing = shown - written
    assert not missing, f"screenshots in the docs that no browser test takes: {sorted(missing)}"
    for name in shown:
        assert (ROOT / "docs" / "screenshots" / f"{name}.png").is_file(), f"docs/screenshots/{name}.png is missing"
