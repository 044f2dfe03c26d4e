"""A real browser shows a judge's ratings: VIEScore scored live (canned OpenAI-compatible judge) on a
generated dataset, its reasoning per image in the Questions tab, an unreadable reply shown as such.

Screenshots go to ``tests/artifacts/judges-*.png``.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from app_server import CHROMIUM, browser_page
from test_browser import _shot
from test_browser_questions import _app, _cells, _gallery_item, _score_live
from judge_reference import encode_pil_image, original_output_to_dict, original_sc_score, vie_reply

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install chromium; .ci/run does this)")]


def test_live_viescore_reasoning_in_the_questions_tab(tmp_path):
    from PIL import Image
    from playwright.sync_api import expect

    from llm_server import serving_chat
    from judge_reference import _image_of
    from tiny_models import write_image_dataset
    from ts2viz import load_dataset

    ds_dir = write_image_dataset(tmp_path / "ds", n_segs=2)
    ds = load_dataset(ds_dir)
    (tmp_path / "scores.csv").write_text("file_name,GoodScore\n" + "".join(
        f"{im.file_name},{1 - 0.1 * int(n.label[0])}\n" for s in ds.segs for n in ds[s].nodes for im in n.images))
    images = ds[0].node("1a").images
    replies = [vie_reply("data:image/jpeg;base64," + encode_pil_image(Image.open(ds_dir / im.file_name).convert("RGB")))
               for im in images]
    with serving_chat(lambda body, headers: vie_reply(_image_of(body))) as judge, \
            _app(["--data", str(ds_dir), "--scores", str(tmp_path / "scores.csv")], tmp_path) as (url, log), \
            browser_page() as pg:
        spec = f"viescore:judge?endpoint={judge}&temperature=0"
        pg.goto(url)
        pg.wait_for_selector("#leaderboard .virtual-row")
        _score_live(pg, spec, 0)
        pg.get_by_role("tab", name="SEG explorer").click()
        pg.get_by_role("tab", name="Questions").click()
        expect(pg.locator("#qa-metric input")).to_have_value(re.compile("^viescore:"))
        pg.locator("#seg-graph [data-node='1a']").click()
        expect(pg.locator("#node-title")).to_contain_text("Node 1a")
        seen = set()
        for i, (im, reply) in enumerate(zip(images, replies)):
            _gallery_item(pg, i).click()
            expect(pg.locator("#qa-title")).to_contain_text(Path(im.file_name).name)
            cells = _cells(pg, "qa-table", 0)
            if math.isnan(original_sc_score(reply)):
                expect(pg.locator("#qa-title")).to_contain_text("could not be read")
                assert cells[3] == "unreadable" and cells[4] == "✗"
                seen.add("unreadable")
                pg.locator("#qa-table").scroll_into_view_if_needed()
                _shot(pg, "judges-02-unreadable", full=False)
            else:
                parsed = original_output_to_dict(reply)
                assert cells[1] == "SC" and float(cells[3]) == float(parsed["score"][0]) and cells[4] == "✓"
                assert cells[5] == parsed["reasoning"]
                seen.add("read")
                pg.locator("#qa-table").scroll_into_view_if_needed()
                _shot(pg, "judges-01-reasoning", full=False)
        assert seen == {"read", "unreadable"}, seen
        assert not pg.page_errors, pg.page_errors
        assert "Traceback" not in log.read_text()
