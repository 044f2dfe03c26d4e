"""The running app and the browser, for the tests that talk to ``app.py`` as its visitors do.

``running_app`` starts ``python app.py`` in a subprocess on a free loopback port, waits until it
serves its page config, and stops it afterwards; ``launch_chromium`` starts Debian's Chromium through
Playwright (never a downloaded browser). Used by the browser tests and the raw-HTTP public-app tests.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ART = ROOT / "tests" / "artifacts"
#: the documentation's screenshots: taken only by browser tests (docs_shot), renewed by every run
DOCS_SHOTS = ROOT / "docs" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: settings of the test environment that would change where or how the app runs
DROPPED_ENV = ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serves(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/config", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running_app(args: Sequence[str], folder: Path, *, env: dict | None = None, drop_env: Sequence[str] = (),
                timeout: float = 90.0, log_name: str = "app.log") -> Iterator[tuple[str, Path]]:
    """``python app.py ARGS --port PORT`` with its cache under ``folder``, offline, its output in
    ``folder/log_name``; yields ``(url, log_path)`` (``url`` without a trailing slash) once the app
    answers ``/config``, and stops it on exit. ``env`` adds variables, ``drop_env`` removes some; an
    app that exits or does not answer within ``timeout`` s fails with its log."""
    port = free_port()
    full_env = {**os.environ, "TS2VIZ_CACHE": str(folder / "cache"), "GRADIO_ANALYTICS_ENABLED": "False",
                "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                # no background warm-up of the Human ratings views (minutes of CPU beside every test's app);
                # a test of the warm-up passes env={"TS2VIZ_WARM_GOLD": "1"}
                "TS2VIZ_WARM_GOLD": "0", **(env or {})}
    for k in (*DROPPED_ENV, *drop_env):
        full_env.pop(k, None)
    url = f"http://127.0.0.1:{port}"
    log_path = folder / log_name
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), *args, "--port", str(port)], cwd=ROOT,
                                env=full_env, stdout=log, stderr=subprocess.STDOUT)
        try:
            t0 = time.time()
            while not _serves(url):
                if proc.poll() is not None:
                    raise RuntimeError("app exited:\n" + log_path.read_text())
                if time.time() - t0 > timeout:
                    raise RuntimeError(f"app did not start in {timeout:.0f} s:\n" + log_path.read_text())
                time.sleep(0.3)
            yield url, log_path
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


#: how long a browser test waits for a condition (a Playwright ``expect`` or action): generous, because
#: a condition that holds returns at once and a loaded 2-core machine can take many seconds per event
#: (Playwright's own default for ``expect`` is 5 s, which failed tests at load 7)
WAIT_MS = 90_000


def generous_waits() -> None:
    """Make every ``expect(...)`` without its own timeout wait up to :data:`WAIT_MS`."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)


#: the page's Gradio status trackers that are showing (an event is pending or running on that output)
_BUSY = "[data-testid='status-tracker']:not(.hide)"


def settle(pg, timeout_ms: int = 30_000) -> None:
    """Wait until no output of the page shows Gradio's pending/running state, then two animation
    frames (the page has painted the outputs); a condition, not a fixed sleep. Gives up quietly
    after ``timeout_ms`` (for screenshots: a tracker left showing an error must not fail a test)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        pg.wait_for_function(f"() => document.querySelectorAll(\"{_BUSY}\").length === 0", timeout=timeout_ms)
    except PlaywrightError:
        pass
    pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def click_until_started(pg, button, started_js: str, *, tries: int = 3, wait_ms: int = 15_000) -> int:
    """Click ``button`` until its event has visibly started (``started_js``, a JavaScript expression, is
    true); returns the number of clicks.

    Gradio skips a click on a ``trigger_mode="once"`` event (a button's default) while it still holds the
    previous run's submission, and it closes that a moment after the run's output is shown: on a loaded
    machine a click right after a run can be dropped, as a visitor's would be, who clicks again. A
    condition, not a fixed sleep; after ``tries`` clicks the test goes on and fails on its own check.
    """
    from playwright.sync_api import Error as PlaywrightError

    for k in range(1, tries + 1):
        button.click()
        try:
            pg.wait_for_function(f"() => Boolean({started_js})", timeout=wait_ms)
            return k
        except PlaywrightError:
            continue
    return tries


#: every Gradio toast and red "Error" status pill any page of this process showed, in order: ``(url, text)``.
#: A toast means something went wrong (issue 40): ``tests/browser/conftest.py`` fails a test during which
#: one appeared, unless the test is marked ``toasts_expected(PATTERN, ...)`` and each text matches a pattern.
ALARMS: list[tuple[str, str]] = []
#: reports, from the page, each toast (its text) and each output that turns to Gradio's "Error" pill
ALARM_WATCH_JS = """(() => {
  const seen = new WeakSet();
  const say = (what) => console.warn('ts2viz-alarm: ' + what);
  const look = () => {
    document.querySelectorAll("[data-testid='toast-body']").forEach(t => {
      if (!seen.has(t)) { seen.add(t); say('toast: ' + t.innerText.replace(/\\s+/g, ' ').trim()); }
    });
    document.querySelectorAll("[data-testid='status-tracker'] .error").forEach(e => {
      if (seen.has(e) || !e.offsetParent) return;
      seen.add(e);
      const owner = e.closest('[id]');
      say('error pill on #' + (owner ? owner.id : '?') + ': ' + e.innerText.replace(/\\s+/g, ' ').trim());
    });
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true, attributes: true,
                                                attributeFilter: ['class']});
})();"""


def watch_alarms(pg) -> None:
    """Record the toasts and error pills of a page in :data:`ALARMS` (every page of :func:`launch_chromium`)."""
    def heard(msg) -> None:
        if msg.text.startswith("ts2viz-alarm: "):
            ALARMS.append((pg.url, msg.text[len("ts2viz-alarm: "):]))

    pg.on("console", heard)
    pg.add_init_script(ALARM_WATCH_JS)


def launch_chromium(playwright):
    """Debian's Chromium, headless, through a started ``sync_playwright()`` (and generous waits); every
    page it opens reports its toasts and error pills to :data:`ALARMS`."""
    generous_waits()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    new_page = browser.new_page

    def watched_page(*args, **kwargs):
        pg = new_page(*args, **kwargs)
        watch_alarms(pg)
        return pg

    browser.new_page = watched_page
    return browser


def chromium_browser() -> Iterator:
    """A module's Chromium (``yield from chromium_browser()`` in a module-scoped ``browser`` fixture):
    launched once for the module's tests, closed after them; screenshots go to :data:`ART`."""
    from playwright.sync_api import sync_playwright

    ART.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@contextmanager
def browser_page(width: int = 1500, height: int = 1000) -> Iterator:
    """A page of Debian's Chromium ``width`` x ``height`` px with a generous default timeout (a loaded
    2-core machine renders slowly); the page's JavaScript errors collect in ``page.page_errors``."""
    from playwright.sync_api import sync_playwright

    ART.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            pg = browser.new_page(viewport={"width": width, "height": height})
            pg.set_default_timeout(WAIT_MS)
            pg.page_errors = []
            pg.on("pageerror", lambda e: pg.page_errors.append(str(e)))
            yield pg
        finally:
            browser.close()


def open_tab(pg, name: str) -> None:
    """Click the top-level tab ``name``; on a narrow window Gradio folds the tabs that do not fit into
    its overflow menu (the "..." button), from which it is opened as a visitor would."""
    tab = pg.get_by_role("tab", name=name)
    if tab.count() and tab.first.is_visible():
        tab.first.click()
        return
    pg.locator(".overflow-menu > button").first.click()
    pg.locator(".overflow-dropdown button", has_text=name).first.click()


def docs_shot(pg, name: str, *, full: bool = False) -> Path:
    """A screenshot for the documentation, ``docs/screenshots/NAME.png`` (and a copy in tests/artifacts/).

    The docs show no other pictures of the app (``tests/docs/test_docs.py`` checks that every screenshot a
    page shows is taken by a ``docs_shot`` call of a browser test), so a run of the browser tests renews
    every one of them and none can go stale unnoticed: ``git status`` shows the ones that changed.
    """
    import shutil

    settle(pg)
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    ART.mkdir(parents=True, exist_ok=True)
    path = DOCS_SHOTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=full)
    shutil.copyfile(path, ART / f"{name}.png")
    return path
