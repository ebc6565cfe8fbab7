"""Getting text out of the app: the clipboard (OSC 52, through the terminal the app draws on), and
`$PAGER` / `$EDITOR` run on a temporary file while the app is suspended. In a browser session the
clipboard is the browser's and the programs are off (`browser`).

Each returns the line for the message line (None when there is nothing to say)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable

from textual.app import App

from .browser import PROGRAMS_OFF, copy_in_browser, in_browser

PAGER = ("PAGER", "less -R")
EDITOR = ("EDITOR", "vi")
"""(environment variable, the command when it is not set)."""


def copy_text(app: App[object], text: str, say: Callable[[str], object], suffix: str = ".txt") -> str:
    """Put `text` on the clipboard (a file when there is no terminal, or it is too long; in a browser, see
    `browser.copy_in_browser`, which tells `say` later what became of a download)."""
    from ...clipboard import copy

    if in_browser(app):
        return copy_in_browser(app, text, suffix, say)

    def write(data: bytes) -> None:
        driver = app._driver  # Textual has no public raw-write API; OSC 52 must reach the terminal
        if driver is None:
            raise OSError("no terminal")
        driver.write(data.decode("ascii"))
        driver.flush()

    return copy(text, write, suffix=suffix)


def open_external(app: App[object], program: tuple[str, str], text: str, suffix: str) -> str | None:
    """Run `program` (the pager or the editor) on `text` in a temporary file, the app suspended."""
    variable, fallback = program
    if in_browser(app):
        return PROGRAMS_OFF.format(f"${variable}")
    command = os.environ.get(variable) or fallback
    with tempfile.NamedTemporaryFile("w", suffix=suffix, prefix="tracetui-", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        with app.suspend():
            subprocess.run([*shlex.split(command), f.name], check=False)
    except Exception as exc:  # no terminal to hand over (headless), or no such program
        return f"Could not run {command!r}: {exc}. The text is in {f.name}"
    finally:
        app.screen.refresh()
    os.unlink(f.name)
    return None
