"""OSC 52 copy: the exact bytes, tmux passthrough, and the file fallback for big text or no terminal."""

from __future__ import annotations

import base64
from pathlib import Path

from tracetui.clipboard import MAX_PAYLOAD, copy, osc52


def test_osc52_bytes():
    assert osc52("hi", tmux=False) == b"\x1b]52;c;aGk=\x07"
    assert osc52("héllo\n", tmux=False) == b"\x1b]52;c;" + base64.b64encode("héllo\n".encode()) + b"\x07"


def test_osc52_tmux_passthrough_doubles_every_escape():
    assert osc52("hi", tmux=True) == b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"


def test_copy_writes_the_sequence_and_wraps_it_inside_tmux(monkeypatch):
    sent: list[bytes] = []
    monkeypatch.delenv("TMUX", raising=False)
    assert copy("hi", sent.append, tty=True) == "copied 2 bytes to the clipboard"
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    copy("hi", sent.append, tty=True)
    assert sent == [b"\x1b]52;c;aGk=\x07", b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"]


def test_big_text_goes_to_a_file_instead(isolated_dirs):
    sent: list[bytes] = []
    text = "x" * (MAX_PAYLOAD // 4 * 3 + 1)  # one byte past the payload limit
    message = copy(text, sent.append, tty=True, suffix=".md")
    assert sent == []
    assert "too large" in message
    path = Path(message.rsplit("saved to ", 1)[1])
    assert path.parent == isolated_dirs / "cache" / "copied" and path.suffix == ".md"
    assert path.read_text() == text

    fits = "x" * (MAX_PAYLOAD // 4 * 3)
    assert copy(fits, sent.append, tty=True).startswith("copied") and len(sent[0]) == MAX_PAYLOAD + 8


def test_no_terminal_goes_to_a_file(isolated_dirs):
    sent: list[bytes] = []
    message = copy("a trial", sent.append, tty=False)
    assert sent == [] and message.startswith("no terminal to copy to: saved to ")
    assert Path(message.rsplit("saved to ", 1)[1]).read_text() == "a trial"


def test_failures_become_messages(isolated_dirs, monkeypatch):
    def broken(data: bytes) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    assert copy("hi", broken, tty=True) == "copy failed: Broken pipe"
    (isolated_dirs / "cache").write_text("not a folder")
    assert "could not be saved" in copy("hi", tty=False)
