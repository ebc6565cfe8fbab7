"""Copy text to the user's clipboard over SSH: the OSC 52 escape sequence, which the terminal acts on.

Inside tmux the text goes to tmux itself (`tmux load-buffer -w -`): tmux keeps it in its paste buffer
and, with its `set-clipboard` option on (the default is `external`), hands it to the outer terminal's
clipboard; an OSC 52 sent through tmux arrives only with `allow-passthrough on`, which is off by
default. Terminals cap what they accept, and a sequence sent where there is no terminal goes nowhere,
so large text or a non-tty stdout is written to a file instead. The line returned says only what is
known to have happened: the sequence sent, the buffer set, the file written.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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
    tmux: Callable[[list[str], bytes | None], str] | None = None,
) -> str:
    """Copy `text` and return the one-line status to show; never raises.

    `write` sends bytes to the terminal (the UI passes its driver's writer; default: the real stdout).
    `tty` says whether that is a terminal (default: whether the real stdout is one). `tmux` runs a
    tmux command with the given stdin and returns its output (default: the `tmux` program; raises
    OSError when it fails).
    """
    size = len(text.encode("utf-8"))
    payload = 4 * ((size + 2) // 3)
    if tty is None:
        tty = sys.__stdout__ is not None and sys.__stdout__.isatty()
    inside_tmux = bool(os.environ.get("TMUX"))
    if tty and inside_tmux:
        try:
            return _to_tmux(text, size, tmux or _run_tmux)
        except OSError:
            pass  # no usable tmux program: try the sequence, through tmux's passthrough
    if tty and payload <= MAX_PAYLOAD:
        try:
            (write or _write_stdout)(osc52(text, tmux=inside_tmux))
        except OSError as exc:
            return f"copy failed: {exc.strerror or exc}"
        if inside_tmux:
            return (
                f"sent {_size(size)} to the clipboard through tmux (it arrives only with tmux's allow-passthrough on)"
            )
        return f"sent {_size(size)} to the terminal's clipboard (OSC 52)"
    why = "no terminal to copy to" if not tty else f"{_size(size)} is too large for the terminal clipboard"
    try:
        path = _save(text, suffix)
    except OSError as exc:
        return f"{why}, and it could not be saved ({exc.strerror or exc})"
    return f"{why}: saved to {path}"


def _to_tmux(text: str, size: int, tmux: Callable[[list[str], bytes | None], str]) -> str:
    """Put `text` in tmux's paste buffer and, as tmux's `set-clipboard` allows, the terminal's clipboard."""
    data = text.encode("utf-8")
    try:
        tmux(["load-buffer", "-w", "-"], data)
    except OSError:
        tmux(["load-buffer", "-"], data)  # tmux before 3.2 has no -w: the buffer only
        return f"copied {_size(size)} into tmux's paste buffer (prefix ] pastes it; this tmux cannot pass it on)"
    try:
        clipboard = tmux(["show-options", "-gv", "set-clipboard"], None).strip()
    except OSError:
        clipboard = ""
    if clipboard == "off":
        return f"copied {_size(size)} into tmux's paste buffer (prefix ] pastes it; tmux's set-clipboard is off)"
    return f"copied {_size(size)} into tmux's paste buffer; tmux passes it to the terminal's clipboard"


def _run_tmux(arguments: list[str], stdin: bytes | None) -> str:
    try:
        done = subprocess.run(["tmux", *arguments], input=stdin, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise OSError(str(exc)) from exc
    if done.returncode != 0:
        raise OSError(done.stderr.decode("utf-8", "replace").strip() or f"tmux exited with {done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def _write_stdout(data: bytes) -> None:
    if sys.__stdout__ is None:
        raise OSError("no terminal")
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
