"""A hostile recording played for real in a pty: none of its escape sequences reaches the terminal.

The recording carries every sequence the sanitizer handles and the trace pty test's payload (OSC 52, OSC 8,
title sets, DCS and tmux passthrough, bells, cursor moves, bidi overrides). We play it through, seek back
and forth and pan, capturing every byte the app writes, as `test_hostile_pty` does for a trace."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pyte
import pytest

from .casts import hostile_events, write_cast
from .test_hostile_pty import FORBIDDEN, Capture


@pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pty")
def test_no_recorded_escape_sequence_reaches_the_terminal(tmp_path):
    path = write_cast(tmp_path / "hostile.cast", hostile_events(), {"version": 2, "width": 100, "height": 30})
    capture = Capture("tests.recording_viewer", str(path), cwd=str(Path(__file__).parents[1]))
    child, pump = capture.child, capture.pump
    capture.pump_until(b"From the start", 30)
    for keys in (">", ">", ">", " ", "", "", "G", "[", "g", "]", "]", "l", "l", "j", "k", "h", "h", "G"):
        child.send(keys)
        pump(0.5)
    capture.pump_until(b"[bold red]markup[/]", 15)  # the end of the recording is on the screen
    pump(0.5)
    child.send("\x1b")
    pump(2)
    child.close(force=True)

    data = re.sub(rb"\x1b\]22;[a-z-]*\x07", b"", bytes(capture.output))  # Textual's pointer shape (OSC 22)
    assert b"markup" in data, "the app did not get as far as the end of the recording"
    for sequence in FORBIDDEN:
        assert sequence not in data, f"{sequence!r} from the recording reached the terminal"

    screen = pyte.Screen(120, 40)
    pyte.ByteStream(screen).feed(data[: data.rfind(b"\x1b[?1049l")] if b"\x1b[?1049l" in data else data)
    text = "\n".join(screen.display)
    assert "[bold red]markup[/]" in text and "Recording a trial" in screen.display[0], "\n".join(screen.display)
