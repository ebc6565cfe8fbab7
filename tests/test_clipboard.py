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


def test_copy_writes_the_sequence_and_says_it_was_sent(monkeypatch):
    sent: list[bytes] = []
    monkeypatch.delenv("TMUX", raising=False)
    assert copy("hi", sent.append, tty=True) == "sent 2 bytes to the terminal's clipboard (OSC 52)"
    assert sent == [b"\x1b]52;c;aGk=\x07"]


class FakeTmux:
    """A tmux that answers `load-buffer` (with or without -w) and `show-options` as told."""

    def __init__(self, set_clipboard: str = "external", has_w: bool = True) -> None:
        self.set_clipboard, self.has_w = set_clipboard, has_w
        self.calls: list[tuple[list[str], bytes | None]] = []

    def __call__(self, arguments: list[str], stdin: bytes | None) -> str:
        self.calls.append((arguments, stdin))
        if arguments[:2] == ["load-buffer", "-w"] and not self.has_w:
            raise OSError("unknown flag -w")
        return self.set_clipboard + "\n" if arguments[0] == "show-options" else ""


def test_inside_tmux_the_text_goes_to_tmux_and_the_message_says_where_it_went(monkeypatch):
    """tmux with its defaults (allow-passthrough off) drops an OSC 52 sent through it, so the text
    goes to `tmux load-buffer -w -`; the message says what tmux does with it, nothing more."""
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    sent: list[bytes] = []
    tmux = FakeTmux()
    message = copy("héllo", sent.append, tty=True, tmux=tmux)
    assert sent == [] and tmux.calls[0] == (["load-buffer", "-w", "-"], "héllo".encode())
    assert message == "copied 6 bytes into tmux's paste buffer; tmux passes it to the terminal's clipboard"
    message = copy("hi", sent.append, tty=True, tmux=FakeTmux(set_clipboard="off"))
    assert message == "copied 2 bytes into tmux's paste buffer (prefix ] pastes it; tmux's set-clipboard is off)"
    old = FakeTmux(has_w=False)
    assert "cannot pass it on" in copy("hi", sent.append, tty=True, tmux=old)
    assert old.calls[-1] == (["load-buffer", "-"], b"hi") and sent == []


def test_inside_tmux_without_a_tmux_program_the_sequence_goes_through_passthrough(monkeypatch):
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    sent: list[bytes] = []

    def missing(arguments: list[str], stdin: bytes | None) -> str:
        raise OSError("no tmux")

    message = copy("hi", sent.append, tty=True, tmux=missing)
    assert sent == [b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"]
    assert message == "sent 2 bytes to the clipboard through tmux (it arrives only with tmux's allow-passthrough on)"


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
    assert copy(fits, sent.append, tty=True).startswith("sent") and len(sent[0]) == MAX_PAYLOAD + 8


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
