"""Issue 40 item 17 in Chromium: a row clicked in a table that opens a SEG leaves no cell selected.

Clicking a row of the SEG explorer's failure finder (or of the Correlations tab's pair table) opens that
SEG; Gradio's Dataframe used to keep the clicked cell in its selected state afterwards (a focus outline,
the "select row / column" buttons beside it), as if the table were waiting for an edit. The test clicks
a row and waits until the SEG has opened and no cell of the table is selected or focused.

Screenshot: ``tests/artifacts/finder-click.png``.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from app_server import ART, CHROMIUM, WAIT_MS, chromium_browser, open_tab, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

#: the table's cells in Gradio's selected state, and whether the page's focus is inside the table
SELECTED_JS = """(id) => {
  const t = document.getElementById(id);
  const a = document.activeElement;
  return {selected: t.querySelectorAll(".cell-selected, [role='gridcell'][aria-selected='true']").length,
          buttons: [...t.querySelectorAll('.selection-button')].filter(b => b.offsetParent).length,
          focused: !!(a && a !== document.body && t.contains(a))};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("finder-click")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--host", "127.0.0.1"], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio")}) as (url, _log):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def test_a_clicked_finder_row_opens_its_seg_and_leaves_no_cell_selected(browser, server):
    from playwright.sync_api import expect

    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    pg.set_default_timeout(WAIT_MS)
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    open_tab(pg, "SEG explorer")
    expect(pg.locator("#seg-header")).to_contain_text("SEG 0")
    pg.wait_for_selector("#finder-table .virtual-row")
    settle(pg)
    for row in (1, 2):
        cell = pg.locator(f"#finder-table [data-testid='cell-{row}-0']")
        sid = cell.inner_text().strip()
        assert sid.isdigit() and sid != "0", f"row {row} of the finder holds no other SEG: {sid!r}"
        cell.click()
        expect(pg.locator("#seg-header")).to_contain_text(f"SEG {sid} ")          # the SEG opened
        settle(pg)
        # a condition, not a sleep: the selection must be gone once the click's events have run
        pg.wait_for_function(f"() => {{ const s = ({SELECTED_JS})('finder-table'); "
                             "return !s.selected && !s.buttons && !s.focused; }")
    pg.screenshot(path=str(ART / "finder-click.png"))
    pg.close()
