"""A session in a web browser (`tracetui web`): what leaves the app goes to the browser, never to the
server's files or programs.

textual-serve runs one app per browser tab on the server, where writing a file the user names or
starting `$PAGER` would act on the server (and another user's files, perhaps). So in a browser session:
an export is written to a private temporary folder and handed to the browser as a download (Textual's
`deliver_binary`, which textual-serve serves once, at a random URL), then removed; a copy goes to the
browser's clipboard through the page's terminal (OSC 52, which the page turns into a clipboard write),
or, where the page may not write the clipboard or the text is too long for it, as a download; the
pager and the editor are off. Each says what happened only once it happened: a download is "sent" when
the browser has fetched its last byte.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from textual import events
from textual.app import App
from textual.timer import Timer

from ...clipboard import MAX_PAYLOAD

LOCAL_PAGE = "TRACETUI_WEB_LOCAL"
"""Set by `tracetui web` for its sessions when it answers this machine only: the page is then on
localhost, where the browser lets it write the clipboard (over plain http elsewhere, it may not)."""
FETCH_WAIT = 15.0
"""Seconds after which a download the browser has not fetched is said to be waiting."""
PROGRAMS_OFF = "{} would run on the server, not in your browser: off in a browser session (y copies, ctrl+e exports)."
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

Say = Callable[[str], object]


def in_browser(app: App[object]) -> bool:
    return app.is_web


def download_name(answer: str, fallback: str) -> str:
    """The file name the browser saves under: the last part of what the user typed, in safe characters."""
    name = _UNSAFE.sub("-", Path(answer.strip()).name).strip("-.")
    return name or fallback


class Download:
    """A file written for the browser: alone in a private temporary folder, gone from the disk once taken."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._folder = Path(tempfile.mkdtemp(prefix="tracetui-download-"))
        self.path = self._folder / name

    def take(self) -> BinaryIO:
        """The file, open; its folder is removed (the open file stays readable until delivered)."""
        file = self.path.open("rb")
        self.discard()
        return file

    def discard(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


class Deliveries:
    """The files handed to the browser, and what to say when it has fetched each one (or has not yet)."""

    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._pending: dict[str, tuple[str, Say, Timer]] = {}

    def send(self, file: BinaryIO, name: str, done: str, say: Say) -> None:
        """Hand `file` to the browser as `name`; `say(done + …)` once it is fetched, or fails."""
        key = self._app.deliver_binary(file, save_filename=name)
        if key is None:
            file.close()
            say(f"{done}, but there is no browser to send {name} to.")
            return
        waiting = self._app.set_timer(
            FETCH_WAIT,
            lambda: say(
                f"{done}: {name} is waiting for your browser to fetch it "
                "(if it blocked a pop-up, allow pop-ups for this page and try again)."
            ),
        )
        self._pending[key] = (f"{done}: {name}", say, waiting)

    def finished(self, key: str, error: BaseException | None) -> None:
        found = self._pending.pop(key, None)
        if found is None:
            return
        what, say, waiting = found
        waiting.stop()
        say(f"{what} sent to your browser (its downloads)." if error is None else f"{what} not sent: {error}")


_DELIVERIES: weakref.WeakKeyDictionary[App, Deliveries] = weakref.WeakKeyDictionary()


def deliveries(app: App[object]) -> Deliveries:
    """The app's deliveries (one book per app)."""
    found = _DELIVERIES.get(app)
    if found is None:
        found = _DELIVERIES[app] = Deliveries(app)
    return found


def delivery_ended(app: App[object], event: events.DeliveryComplete | events.DeliveryFailed) -> None:
    """For the app's handlers of Textual's delivery events."""
    deliveries(app).finished(event.key, getattr(event, "exception", None))


def copy_in_browser(app: App[object], text: str, suffix: str, say: Say) -> str:
    """`y` in a browser: the browser's clipboard when the page may write it and the text is not too long
    for the page's terminal, else a download. Returns the line to show now."""
    size = len(text.encode("utf-8"))
    shown = f"{size:,} bytes" if size < 10_000 else f"{size / 1000:,.0f} KB"
    if os.environ.get(LOCAL_PAGE) and 4 * ((size + 2) // 3) <= MAX_PAYLOAD:
        app.copy_to_clipboard(text)  # OSC 52 through the page's terminal: it writes the browser's clipboard
        return f"copied {shown} to your browser's clipboard"
    name = time.strftime("copy-%Y%m%d-%H%M%S") + suffix
    why = (
        f"{shown} is too long for the clipboard"
        if os.environ.get(LOCAL_PAGE)
        else "a page that is not on localhost may not write the clipboard"
    )
    deliveries(app).send(io.BytesIO(text.encode("utf-8")), name, f"Copied {shown}", say)
    return f"{why}: sending it to your browser as {name}…"
