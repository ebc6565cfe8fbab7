"""The Textual driver of one browser session: Textual's web driver, plus an exit when the server is gone.

textual-serve runs one app process per browser tab and talks to it over its stdin and stdout. If the
server dies without saying goodbye (killed, out of memory), stdin reaches end-of-file; Textual's web
driver then stops reading but leaves the app running, holding its memory maps, forever. This one quits.
"""

from __future__ import annotations

from textual import messages
from textual.drivers.web_driver import WebDriver


class SessionDriver(WebDriver):
    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # input ended before the app did: the server went away
            self._app.post_message(messages.ExitApp())
