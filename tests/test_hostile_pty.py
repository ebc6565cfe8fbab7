"""Hostile trace content, run for real in a pty: none of the data's escape sequences reaches the terminal.

The app runs in a pseudo-terminal (pexpect); every byte it writes is captured while we open the hostile
trial, unfold its reasoning, page through it and its verifier log; pyte then renders the final screen.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

import pexpect
import pyte
import pytest

from .conftest import write_parquet

OSC52 = "\x1b]52;c;SE9TVElMRQ==\x07"  # would put "HOSTILE" on the clipboard
OSC8 = "\x1b]8;;file:///etc/passwd\x1b\\click me\x1b]8;;\x1b\\"
DCS = "\x1bPtmux;\x1b\x1b]52;c;SE9TVElMRQ==\x07\x1b\\"
TITLE = "\x1b]0;pwned-title\x07"
CURSOR = "\x1b[2J\x1b[H\x1b[10;10H\x1b[?1049l\x1b[?25l"
BIDI = "abc\u202edcba\u200b"
PAYLOAD = f"{OSC52}{OSC8}{DCS}{TITLE}{CURSOR}\x07[bold red]markup[/] [link=file:///etc/passwd]x[/link] {BIDI} \x1b[31mred\x1b[0m"
FORBIDDEN = [b"\x1b]52", b"\x1b]8;", b"\x1bP", b"\x07", b"pwned-title", b"SE9TVElMRQ", b"\x1b]0;", b"\xe2\x80\xae"]


def hostile_rows() -> list[dict]:
    prompt = (
        "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n"
        + PAYLOAD
    )
    reply = (
        "<think>"
        + PAYLOAD
        + "</think>\n"
        + json.dumps(
            {
                "analysis": PAYLOAD,
                "plan": PAYLOAD,
                "commands": [{"keystrokes": f"printf '{PAYLOAD}'\n", "duration": 0.1}],
                "task_complete": False,
            }
        )
    )
    conversation = [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "New Terminal Output:\n" + PAYLOAD * 3},
        {"role": "system", "content": PAYLOAD},
        {"role": "tool", "content": PAYLOAD},
        {
            "role": "assistant",
            "content": f"<tool_call>\n{json.dumps({'name': 'bash_command', 'arguments': {'command': PAYLOAD}})}\n</tool_call>",
        },
    ]
    return [
        {
            "conversations": conversation,
            "agent": "terminus-2" + OSC52,
            "model": "evil/model" + TITLE,
            "task": "hostile" + OSC52 + "task",
            "episode": "episode-0",
            "run_id": "run",
            "trial_name": "hostile__x" + DCS,
            "result": "0.0",
            "verifier_output": "collected 1 item\n"
            + PAYLOAD
            + "\nFAILED ../tests/test_x.py::test_x - "
            + PAYLOAD
            + "\n=== 1 failed in 0.1s ===",
        }
    ]


class Capture:
    """`python -m MODULE ARGS` in a 120x40 pty, every byte it writes kept in `output`."""

    def __init__(self, module: str, *args: str, cwd: str | None = None) -> None:
        env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", "TMUX": ""}
        self.child = pexpect.spawn(
            sys.executable, ["-m", module, *args], cwd=cwd, env=env, dimensions=(40, 120), timeout=30
        )
        self.output = bytearray()

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.output.extend(self.child.read_nonblocking(65536, timeout=0.1))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    def pump_until(self, text: bytes, seconds: float) -> None:
        """Read until the app has written `text`; fails when it has not within `seconds` (a wait that ran
        out quietly let a test go on before what it waited for, 30 s later)."""
        end = time.monotonic() + seconds
        while text not in self.output and time.monotonic() < end:
            self.pump(0.2)
        assert text in self.output, f"{text!r} not written within {seconds} s"


@pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pty")
def test_no_data_escape_sequence_reaches_the_terminal(tmp_path, isolated_dirs):
    path = write_parquet(tmp_path / "hostile.parquet", hostile_rows())
    capture = Capture("tracetui", str(path))
    child, output, pump, pump_until = capture.child, capture.output, capture.pump, capture.pump_until

    # the findings index is in ("1 finding in 1 trial (! shows them one by one)"): `!` and the tabs below land
    # where meant (this waited for "findings in", which one finding never says: 30 s each run)
    pump_until(b"(! shows them one by one)", 30)
    # ! focuses the conversation at the trial's finding; four tabs then go on to the findings pane, the
    # verifier, the name filter and the filters
    for keys in ("l", "l", "t", "l", "l", "l", "G", "!", "\t", "\t", "\t", "\t", "j", "j", "\r", "G", "v", "v", "?"):
        child.send(keys)
        pump(0.4)
    child.send("\x1b")
    pump(0.4)
    child.send("q")
    pump(3)
    child.close(force=True)

    # Textual's own pointer-shape sequence (OSC 22) ends in a bell; everything else here would be the data's
    data = re.sub(rb"\x1b\]22;[a-z-]*\x07", b"", bytes(output))
    assert b"markup" in data, "the app did not get as far as showing the trial"
    for sequence in FORBIDDEN:
        assert sequence not in data, f"{sequence!r} from the data reached the terminal"

    # what a user sees: the markup shows literally, the header is still at the top
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    stream.feed(data[: data.rfind(b"\x1b[?1049l")] if b"\x1b[?1049l" in data else data)
    text = "\n".join(screen.display)
    assert "[bold red]markup[/]" in text or "[link=file:///etc/passwd]" in text
    assert "hostile.parquet" in screen.display[0] and "pass" in screen.display[0]  # the header
