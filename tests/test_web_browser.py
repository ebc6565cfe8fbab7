"""`tracetui web` in a real browser: the system Chromium, headless, driven by Playwright.

The page loads, the trial list appears, keys change the screen, and a trial full of HTML, script and
terminal escape sequences stays text: nothing runs, no element or title comes from it, no escape
sequence of it reaches the page's terminal, nothing reaches the clipboard. Without the token there is
no app and no WebSocket; with it, an export arrives as a download and nothing is written or run on the
server. xterm.js draws on a canvas, so the screen is read from its own buffer: an init script keeps the
Terminal the page creates.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .test_hostile_pty import FORBIDDEN
from .web_helpers import IMG, SCRIPT, WAIT, hostile_dataset, served

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="follows the server's processes in /proc"),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium: apt-get install chromium (.ci/run installs it)"),
]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PROBES = """
// keep the xterm.js Terminal that the page creates (its constructor assigns `_core`) to read its screen
Object.defineProperty(Object.prototype, "_core", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "_core", {value, writable: true, configurable: true, enumerable: true});
    if (typeof this.loadAddon === "function") window.__terminal = this;
  },
});
// everything the app sends to the page's terminal, and how many WebSockets the page opened
window.__received = "";
window.__sockets = 0;
const decoder = new TextDecoder();
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    window.__sockets += 1;
    this.addEventListener("message", (event) => {
      if (typeof event.data !== "string") window.__received += decoder.decode(event.data, {stream: true});
    });
  }
};
// what reaches the clipboard: xterm.js's clipboard addon acts on OSC 52 through this
window.__clipboard = [];
navigator.clipboard.writeText = async (text) => { window.__clipboard.push(text); };
"""

SCREEN = """() => {
  const terminal = window.__terminal, buffer = terminal.buffer.active, rows = [];
  for (let y = 0; y < terminal.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y).translateToString(true));
  return rows.join("\\n");
}"""


def test_the_app_in_chromium_with_hostile_content(tmp_path):
    with served(str(hostile_dataset(tmp_path))) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)  # a fresh profile each time
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(PROBES)
            # the page links a web font; a test never touches the network
            page.route(lambda url: not url.startswith(server.url), lambda route: route.abort())
            page.goto(server.page)

            screen = wait_for_screen(page, "calm-task")  # the trial list, with the calm trial open
            assert "hostile-task" in screen and "calm__1 reply 0" in screen

            page.focus(".xterm-helper-textarea")
            page.keyboard.press("j")  # the next trial: the hostile one, its HTML shown as plain text
            screen = wait_for_screen(page, SCRIPT)
            # the HTML and the Rich markup of the trace shown as they are; the model's HTML-like name too
            # (the list shows its last path segment, the provider facet its first)
            assert IMG in screen and "[bold red]markup[/]" in screen and "b>" in screen and "evil" in screen

            page.keyboard.press("?")
            wait_for_screen(page, "tracetui keys")

            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.evaluate("document.querySelectorAll('img, b, [onerror], [onmouseover]').length") == 0
            assert page.evaluate("[...document.scripts].map(s => s.src || 'inline')") == [
                f"{server.url}/static/js/textual.js",
                "inline",
            ]
            assert "pwned" not in page.title()
            assert page.evaluate("window.__clipboard") == []
            # Textual's own pointer-shape sequence (OSC 22) ends in a bell; everything else would be the data's
            received = re.sub(r"\x1b\]22;[a-z-]*\x07", "", page.evaluate("window.__received"))
            assert "calm-task" in received
            for sequence in FORBIDDEN:
                assert sequence.decode() not in received, f"{sequence!r} from the data reached the page"

            # the clipboard probe is live: an OSC 52 written to this terminal does reach it
            page.evaluate("window.__terminal.write('\\x1b]52;c;' + btoa('probe') + '\\x07')")
            page.wait_for_function("window.__clipboard.includes('probe')", timeout=WAIT * 1000)
        finally:
            browser.close()


def wait_for_screen(page: Page, text: str) -> str:
    """The terminal's rows once they show `text` (what they showed instead, if they never do)."""
    try:
        page.wait_for_function(
            f"(text) => window.__terminal !== undefined && ({SCREEN})().includes(text)", arg=text, timeout=WAIT * 1000
        )
    except PlaywrightTimeout:
        shown = page.evaluate(f"window.__terminal === undefined ? '(no terminal)' : ({SCREEN})()")
        raise AssertionError(f"the page never showed {text!r}; its last lines:\n{shown[-800:]}") from None
    return page.evaluate(SCREEN)


def test_the_token_the_export_and_the_server_left_alone(tmp_path):
    """No token or a wrong one: no app and no WebSocket. With it: ctrl+e downloads the listed trials to the
    browser, y writes the browser's clipboard, P runs nothing on the server, and no file lands there."""
    started = time.time()
    working = tmp_path / "server-cwd"  # where an export to a relative path would land on the server
    working.mkdir()
    with served(str(hostile_dataset(tmp_path)), cwd=working) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
            context.add_init_script(PROBES)
            context.route(lambda url: not url.startswith(server.url), lambda route: route.abort())
            downloads: list = []
            context.on("page", lambda popup: popup.on("download", lambda download: downloads.append(download)))
            page = context.new_page()
            for url in (server.url, f"{server.url}/?token=wrong"):
                response = page.goto(url)
                assert response is not None and response.status == 403
                assert "/?token=" in page.inner_text("body")  # says which URL to open
                assert page.evaluate("window.__sockets") == 0 and page.evaluate("typeof window.__terminal") == (
                    "undefined"
                )
            # a WebSocket opened by hand from this origin, without the token: refused before any app starts
            refused = page.evaluate(
                """(url) => new Promise((done) => {
                  const socket = new WebSocket(url);
                  socket.onopen = () => done("opened");
                  socket.onerror = () => done("refused");
                })""",
                server.url.replace("http", "ws") + "/ws?token=wrong",
            )
            assert refused == "refused"

            page.goto(server.page)
            wait_for_screen(page, "calm-task")
            page.focus(".xterm-helper-textarea")
            page.keyboard.press("Control+e")
            wait_for_screen(page, " tracetui-export-")  # the prompt, with the name the browser will save
            page.keyboard.press("Enter")
            wait_for_screen(page, "sent to your browser")
            assert len(downloads) == 1
            download = downloads[0]
            assert re.fullmatch(r"tracetui-export-\d{8}-\d{6}\.jsonl", download.suggested_filename)
            rows = [json.loads(line) for line in open(download.path(), encoding="utf-8")]  # noqa: SIM115
            assert sorted({row["trial_name"] for row in rows}) == ["calm__1", "hostile__1"] and len(rows) == 4

            page.keyboard.press("y")  # the message, to the browser's clipboard (the page is on localhost)
            wait_for_screen(page, "copied 20 bytes to your browser's clipboard")
            page.wait_for_function("window.__clipboard.includes('prompt for calm-task')", timeout=WAIT * 1000)
            page.keyboard.press("P")
            wait_for_screen(page, "$PAGER would run on the server, not in your browser")
        finally:
            browser.close()
    assert list(working.iterdir()) == []
    leftovers = [p for p in Path(tempfile.gettempdir()).glob("tracetui-download-*") if p.stat().st_mtime > started]
    assert not leftovers
