"""Write the documentation pages that are generated from the code (run after changing the CLI or a card).

    python tools/gen_docs.py          # write them
    python tools/gen_docs.py --check  # exit 1 and name the stale pages, write nothing

Pages: ``docs/reference/cli.md`` from the argument parser (:func:`ts2viz.cli.reference.cli_reference_markdown`).
``tests/docs/test_docs.py`` fails when a committed page differs from what this writes.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def families_table() -> str:
    """The registry's families as a Markdown table (name, what it computes, an example spec)."""
    from ts2viz import metrics

    rows = ["| family | what it computes | example |", "|---|---|---|"]
    for fam in metrics.families():
        desc = " ".join(fam.description.split()).replace("|", "\\|")
        rows.append(f"| `{fam.name}` | {desc} | `{fam.example}` |")
    return "\n".join(rows)


def _fill(text: str, name: str, content: str) -> str:
    """``text`` with the region between ``<!-- generated:NAME ... -->`` and ``<!-- /generated:NAME -->``
    replaced by ``content``."""
    start = re.search(rf"<!-- generated:{name}\b[^>]*-->\n", text)
    end = text.find(f"<!-- /generated:{name} -->")
    if not start or end < 0:
        raise SystemExit(f"no generated:{name} region")
    return text[:start.end()] + content.rstrip("\n") + "\n" + text[end:]


#: hand-written pages with generated regions: path -> {region name: generator}
REGIONS = {Path("README.md"): {"families": families_table},
           Path("docs/metrics/index.md"): {"families": families_table}}


def generated_pages() -> dict[Path, str]:
    """Every generated page: path under the repository -> its text (whole pages, and hand-written pages
    with their generated regions filled in)."""
    from ts2viz.cli.reference import cli_reference_markdown

    pages = {Path("docs/reference/cli.md"): cli_reference_markdown()}
    for rel, regions in REGIONS.items():
        text = (ROOT / rel).read_text(encoding="utf-8")
        if not any(f"<!-- generated:{name}" in text for name in regions):
            continue
        for name, make in regions.items():
            text = _fill(text, name, make())
        pages[rel] = text
    return pages


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for rel, text in generated_pages().items():
        path = ROOT / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(rel))
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if check and stale:
        print("stale generated pages (run python tools/gen_docs.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    print(("up to date" if not stale else "wrote " + ", ".join(stale)) if not check else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
