"""Time to first screen in a real pseudo-terminal: spawn the app under pexpect, emulate the screen with pyte,
and stop at the first frame that shows every marker (regexes over the screen text)."""

from __future__ import annotations

import re
import time

import pexpect
import pyte

ROWS, COLS = 40, 120
TRACETUI_MARKERS = (
    r"▕ [✔◐✘⚠?] \S",  # a row of the trial list (outcome badge, task)
    r"#1/\d+ · ",  # the first message's header in the conversation pane
    r"▌ \S",  # a line of the current (first) message
)


def first_frame(argv: list[str], markers: tuple[str, ...], env: dict, cwd: str, timeout: float = 120) -> float:
    """Seconds from spawning `argv` until the emulated screen matches every marker."""
    patterns = [re.compile(m) for m in markers]
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.ByteStream(screen)
    text = ""
    began = time.monotonic()
    child = pexpect.spawn(argv[0], argv[1:], dimensions=(ROWS, COLS), env=env, cwd=cwd)
    try:
        while time.monotonic() - began < timeout:
            try:
                stream.feed(child.read_nonblocking(1 << 16, timeout=1))
            except pexpect.TIMEOUT:
                continue
            now = time.monotonic()
            text = "\n".join(screen.display)
            if all(p.search(text) for p in patterns):
                return now - began
        raise TimeoutError(f"{argv}: no first screen after {timeout} s:\n{text}")
    except pexpect.EOF:
        raise RuntimeError(f"{argv} exited before its first screen:\n" + "\n".join(screen.display)) from None
    finally:
        child.terminate(force=True)
