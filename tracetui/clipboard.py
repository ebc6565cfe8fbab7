"""Copy text to the user's clipboard over SSH: the OSC 52 escape sequence, which the terminal acts on.

Inside tmux the sequence is wrapped for passthrough (tmux ≥ 3.3 also needs `allow-passthrough on`).
Terminals cap what they accept, and a sequence sent where there is no terminal goes nowhere, so large
text or a non-tty stdout is written to a file instead, and the status message says where.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

MAX_PAYLOAD = 100_000
"""Bytes of base64 payload sent at most; beyond it the text goes to a file."""


def osc52(text: str, tmux: bool) -> bytes:
    """The OSC 52 sequence that puts `text` on the clipboard, wrapped for tmux passthrough if asked."""
    sequence = b"\x1b]52;c;" + base64.b64encode(text.encode("utf-8")) + b"\x07"
    if tmux:
        return b"\x1bPtmux;" + sequence.replace(b"\x1b", b"\x1b\x1b") + b"\x1b\\"
    return sequence


def copy(
    text: str,
    write: Callable[[bytes], None] | None = None,
    *,
    tty: bool | None = None,
    suffix: str = ".txt",
) -> str:
    """Copy `text` and return the one-line status to show; never raises.

    `write` sends bytes to the terminal (the UI passes its driver's writer; default: the real stdout).
    `tty` says whether that is a terminal (default: whether the real stdout is one).
    """
    size = len(text.encode("utf-8"))
    payload = 4 * ((size + 2) // 3)
    if tty is None:
        tty = sys.__stdout__ is not None and sys.__stdout__.isatty()
    if tty and payload <= MAX_PAYLOAD:
        try:
            (write or _write_stdout)(osc52(text, tmux=bool(os.environ.get("TMUX"))))
        except OSError as exc:
            return f"copy failed: {exc.strerror or exc}"
        return f"copied {_size(size)} to the clipboard"
    why = "no terminal to copy to" if not tty else f"{_size(size)} is too large for the terminal clipboard"
    try:
        path = _save(text, suffix)
    except OSError as exc:
        return f"{why}, and it could not be saved ({exc.strerror or exc})"
    return f"{why}: saved to {path}"


def _write_stdout(data: bytes) -> None:
    sys.__stdout__.buffer.write(data)
    sys.__stdout__.flush()


def _save(text: str, suffix: str) -> Path:
    """A new file under the cache dir (kept: the user opens it after the message)."""
    from .paths import cache_dir

    folder = cache_dir() / "copied"
    folder.mkdir(parents=True, exist_ok=True)
    prefix = time.strftime("copy-%Y%m%d-%H%M%S-")
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=folder, prefix=prefix, suffix=suffix, delete=False
    ) as file:
        file.write(text)
    return Path(file.name)


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 10_000 else f"{count / 1000:,.0f} KB"
