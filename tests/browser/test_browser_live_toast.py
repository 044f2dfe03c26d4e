"""A successful live-scoring run closes the error toast a failed run left over the header (issue 21,
item 11), in Chromium.

An error toast lasts 8 s; a successful run that ends within them used to leave it showing, an error
over a page whose panel says the run succeeded. The model is loaded and the SEG scored once first, so
that the run after the failure is quick (its scores come from the cache) and ends while the toast is
still there; if the machine is so slow that the toast has gone by itself, the check cannot be made and
the test says so (skip) rather than pass.
"""
from __future__ import annotations

import time

import pytest
from app_server import ART, WAIT_MS, click_until_started, launch_chromium, running_app, settle

#: the failed run's toast and its panel's pill, on purpose (tests/browser/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.toasts_expected(r"^toast: ", "error pill on #live-msg")]

ERROR_TOASTS = "[data-testid='toast-body'] button.toast-close.error"
#: the run has started (the panel's progress tracker shows) or already ended in an error (toast or panel)
FAILED_RUN_STARTED = ("document.querySelector(\"#live-msg [data-testid='status-tracker']:not(.hide)\") || "
                      f"document.querySelector(\"{ERROR_TOASTS}\") || "
                      "(document.querySelector('#live-msg')?.innerText || '').includes('Error')")
SUCCESS_STARTED = ("document.querySelector(\"#live-msg [data-testid='status-tracker']:not(.hide)\") || "
                   "(document.querySelector('#live-msg')?.innerText || '').includes('Scored SEG')")
TOAST_S = 8.0     # ts2viz.ui.glue.errors.safe: gr.Error(duration=8)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("toast")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--host", "127.0.0.1"], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio")}) as (url, log_path):
        yield {"url": url + "/", "spec": f"clipscore:{tiny('clip')}", "dir": d, "log": log_path}


def test_success_closes_the_error_toast(server):
    from playwright.sync_api import expect, sync_playwright

    ART.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 1000})
            pg.set_default_timeout(WAIT_MS)
            pg.goto(server["url"])
            pg.wait_for_selector("#leaderboard .virtual-row")
            pg.get_by_role("tab", name="Live scoring").click()
            msg, spec, score = pg.locator("#live-msg"), pg.locator("#live-spec textarea"), pg.locator("#live-score")
            # once, so that the model is loaded and the SEG's scores are cached
            spec.fill(server["spec"])
            score.click()
            expect(msg).to_contain_text("Scored SEG", timeout=180_000)
            settle(pg)
            # a failure: its toast over the header, its message in the panel
            spec.fill("clipscore:/no/such/model/folder")
            clicks = click_until_started(pg, score, FAILED_RUN_STARTED)
            try:
                expect(pg.locator(ERROR_TOASTS)).not_to_have_count(0)
            except AssertionError as e:
                log = server["log"].read_text(errors="replace")[-3000:] if server["log"].exists() else "(no log)"
                raise AssertionError(f"no error toast after {clicks} click(s); the panel says "
                                     f"{msg.inner_text()!r}; the app's log ends:\n{log}") from e
            shown = time.monotonic()
            expect(msg).to_contain_text("Error")
            pg.screenshot(path=str(ART / "live-toast-error.png"))
            # then a success, while the toast would still be there
            spec.fill(server["spec"])
            click_until_started(pg, score, SUCCESS_STARTED, wait_ms=5_000)
            expect(msg).to_contain_text("Scored SEG")
            success_at = time.monotonic() - shown
            # the toast must go well before its own 8 s are up (it is closed on the success, in the page)
            deadline = shown + TOAST_S - 1.5
            while pg.locator(ERROR_TOASTS).count() and time.monotonic() < deadline:
                pg.wait_for_timeout(100)
            gone_at = time.monotonic() - shown if not pg.locator(ERROR_TOASTS).count() else None
            settle(pg)
            pg.screenshot(path=str(ART / "live-toast-after-success.png"))
        finally:
            browser.close()
    if success_at >= TOAST_S - 1.5:
        pytest.skip(f"the successful run ended {success_at:.1f} s after the toast appeared: too late to tell a "
                    "closed toast from one that went by itself")
    assert gone_at is not None, f"the error toast still shows {TOAST_S - 1.5:.1f} s after it appeared, over a " \
                                f"success shown at {success_at:.1f} s"
    print(f"success at {success_at:.1f} s, toast gone at {gone_at:.1f} s")
