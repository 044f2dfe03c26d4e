"""What a newcomer reads first (issue 40): the docs' landing page, the header link, the reference README."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_landing_page_says_what_ts2viz_is_and_where_to_start():
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert len(text.split()) > 150, "docs/index.md is nearly empty"
    assert "getting-started.md" in text and "Where to start" in text
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images and all((ROOT / "docs" / p).is_file() for p in images), images


def test_the_header_link_is_not_the_spaces_front_page():
    cfg = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    url = re.search(r"^repo_url:\s*(\S+)", cfg, re.M)
    # absent (no project URL is known to the README), or a project's own page, never a front page
    assert url is None or url.group(1).rstrip("/") not in ("https://huggingface.co/spaces", "https://github.com")


def test_the_reference_readme_names_only_fixtures_that_exist():
    text = (ROOT / "tools" / "reference" / "README.md").read_text(encoding="utf-8")
    fixtures = ROOT / "tests" / "fixtures" / "reference"
    named = set(re.findall(r"`([a-z0-9_]+)/`", text))             # "* `clipscore/`: ..." entries
    named |= set(re.findall(r"tests/fixtures/reference/([a-z0-9_]+)", text))
    assert named, "the README names no fixture"
    # a fixture folder may be nested (judges/viescore/); `t2v_metrics_3_1/` style names are fixture makers'
    # folders in tools/reference/, whose fixtures the same paragraph names
    existing = {d.name for d in fixtures.rglob("*") if d.is_dir()}
    existing |= {d.name for d in (ROOT / "tools" / "reference").iterdir() if d.is_dir()}
    missing = sorted(n for n in named if n not in existing)
    assert not missing, f"tools/reference/README.md names fixtures that do not exist: {missing}"
    title = text.splitlines()[0]
    listed = re.findall(r"\(([^)]*)\)", title)
    for name in (n.strip().lower() for group in listed for n in group.split(",")):
        assert (fixtures / name).is_dir(), f"the README's title lists {name}, which has no fixture"
