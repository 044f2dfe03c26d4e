"""A real browser checks the question views: per-question tables, questions x nodes, DSG accumulation.

Two app processes:

* ``app.py`` on the bundled TS2 data (no image files: thumbnails are placeholders): a bundled DSG
  column's questions for a gallery image, the questions x nodes heatmap, the failure finder ranked by
  questions, and the DSG accumulation switched from the web leaderboard's ``mean`` to the release's
  ``gated`` (leaderboard, explorer and question table follow);
* ``app.py`` on a generated image dataset, scored live with tiny local models: TIFA (tiny BLIP-VQA,
  lexical mapper, TS2's questions for the prompt) and T2I-FineEval (tiny BLIP-VQA + tiny RT-DETR,
  prompts decomposed by the canned local LLM server of ``tests/llm_server.py``), whose detection boxes
  and a chosen question's best crop are drawn on the image.

Screenshots go to ``tests/artifacts/questions-*.png``.
"""
from __future__ import annotations

import base64
import io
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from test_browser import ART, CHROMIUM, ROOT, _free_port, _row, _shot

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install chromium; .ci/run does this)")]

#: a TS2 prompt (TIFA has questions for it) and one the canned LLM decomposes (T2I-FineEval)
TIFA_PROMPT = "A Christmas tree with lights and teddy bear"
FINE_PROMPT = "a red cat on the tree"


@contextmanager
def _app(args: list[str], folder: Path):
    port = _free_port()
    env = {**os.environ, "TS2VIZ_CACHE": str(folder / "cache"), "GRADIO_ANALYTICS_ENABLED": "False",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("GRADIO_SERVER_NAME", None)
    env.pop("GRADIO_SERVER_PORT", None)
    log_path = folder / f"app-{port}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), *args, "--host", "127.0.0.1",
                                 "--port", str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            t0 = time.time()
            while True:
                if proc.poll() is not None:
                    raise RuntimeError("app exited:\n" + log_path.read_text())
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if time.time() - t0 > 120:
                        raise RuntimeError("app did not start in 120 s:\n" + log_path.read_text()) from None
                    time.sleep(0.3)
            yield f"http://127.0.0.1:{port}/", log_path
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def _browser():
    from playwright.sync_api import sync_playwright

    ART.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            pg = browser.new_page(viewport={"width": 1500, "height": 1000})
            pg.set_default_timeout(60_000)
            errors: list[str] = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.page_errors = errors
            yield pg
        finally:
            browser.close()


def _pick(pg, elem_id: str, option: str) -> None:
    """Choose ``option`` in the gr.Dropdown ``elem_id`` as a user does: type, then click the option."""
    box = pg.locator(f"#{elem_id} input")
    box.click()
    box.fill(option)
    pg.get_by_role("option", name=option, exact=True).click()


def _cells(pg, table_id: str, row: int) -> list[str]:
    return [c.strip() for c in _row(pg, table_id, row).locator("[data-testid^='cell-']").all_inner_texts()]


def _gallery_item(pg, i: int):
    return pg.locator("#node-gallery .thumbnail-item").nth(i)


def _leaderboard_value(pg, metric: str, column: int = 4) -> str:
    row = pg.locator("#leaderboard .virtual-row", has_text=metric).first
    return row.locator("[data-testid^='cell-']").nth(column).inner_text().strip()


# -- bundled TS2 data ------------------------------------------------------------------------------------

def test_bundled_questions_and_dsg_accumulation(tmp_path):
    from playwright.sync_api import expect

    from ts2viz import load_dataset
    from ts2viz.qa_records import bundled_qa_records, with_counted

    with _app([], tmp_path) as (url, log), _browser() as pg:
        pg.goto(url)
        pg.wait_for_selector("#leaderboard .virtual-row")
        expect(pg.locator("#dsg-accumulation")).to_contain_text("mean (web leaderboard)")
        mean_value = _leaderboard_value(pg, "DSG-BLIP1")

        # the explorer, SEG 0, DSG-BLIP1 as the second metric, its Questions tab
        pg.get_by_role("tab", name="SEG explorer").click()
        expect(pg.locator("#seg-header")).to_contain_text("SEG 0")
        _pick(pg, "metric-b", "DSG-BLIP1")
        pg.get_by_role("tab", name="Questions").click()
        expect(pg.locator("#qa-metric")).to_contain_text("DSG-BLIP1")
        expect(pg.locator("#qa-title")).to_contain_text("000-00.jpg")
        expect(pg.locator("#qa-table")).to_contain_text("Is there a Christmas tree?")

        # node 1a, its third image clicked in the gallery: its questions, as the release answered them
        pg.locator("#seg-graph [data-node='1a']").click()
        expect(pg.locator("#node-title")).to_contain_text("Node 1a")
        _gallery_item(pg, 2).click()
        recs = bundled_qa_records("DSG-BLIP1")
        fn = load_dataset("ts2")[0].node("1a").images[2].file_name
        expect(pg.locator("#qa-title")).to_contain_text(Path(fn).name)
        mine = with_counted(recs[recs["file_name"] == fn], "mean").sort_values("question_id")
        for i, r in enumerate(mine.itertuples()):
            cells = _cells(pg, "qa-table", i)
            assert cells[1] == r.question and cells[4] == r.answer and cells[5] == r.mapped
            assert cells[6] == ("✓" if r.correct else "✗") and cells[8] == ("✓" if r.counted else "✗")
        # questions x nodes: one row per question, one column per node
        expect(pg.locator("#qa-heatmap")).to_contain_text("accuracy of each DSG-BLIP1 question per node")
        expect(pg.locator("#qa-nodes-table")).to_contain_text("Is there a teddy bear?")
        expect(pg.locator("#qa-nodes-table")).to_contain_text("0→1a")
        pg.locator("#qa-heatmap").scroll_into_view_if_needed()
        _shot(pg, "questions-01-bundled")

        # the failure finder ranks SEGs by questions (metric A = DSG-BLIP1)
        _pick(pg, "metric-a", "DSG-BLIP1")
        pg.locator("#finder").get_by_label("Questions (QA metric)").check()
        expect(pg.locator("#finder-table")).to_contain_text("worst edge")
        assert int(_cells(pg, "finder-table", 0)[1]) >= 1          # the worst SEG misses at least one error
        _shot(pg, "questions-02-finder", full=False)

        # the release's gated accumulation: the question table counts by parents, the board changes
        gated_counts = with_counted(recs[recs["file_name"] == fn], "gated").sort_values("question_id")["counted"]
        pg.locator("#dsg-accumulation").get_by_label("gated (release files)").check()
        expect(pg.locator("#qa-title")).to_contain_text("gated accumulation")
        expect(pg.locator("#node-title")).to_contain_text("Node 0")   # the SEG view was redrawn
        pg.locator("#seg-graph [data-node='1a']").click()
        _gallery_item(pg, 2).click()
        expect(pg.locator("#qa-title")).to_contain_text(Path(fn).name)
        got = [_cells(pg, "qa-table", i)[8] for i in range(len(gated_counts))]
        assert got == ["✓" if c else "✗" for c in gated_counts]
        pg.get_by_role("tab", name="Leaderboard").click()
        expect(pg.locator("#leaderboard .virtual-row", has_text="DSG-BLIP1").first).not_to_contain_text(mean_value)
        _shot(pg, "questions-03-gated-board", full=False)
        assert not pg.page_errors, pg.page_errors
        assert "Traceback" not in log.read_text()
