"""Cast files for the recording tests: written event by event, long ones generated, hostile ones built
from every escape sequence the sanitizer handles."""

from __future__ import annotations

import json
import random
from pathlib import Path

from .test_hostile_pty import PAYLOAD
from .test_trace_sanitize import ESCAPES

SAMPLE = Path(__file__).parent / "fixtures" / "recordings" / "s-hello-world.cast"
"""terminus-2's recording of s-hello-world (harbor-jobs sample, job 2026-07-01__09-00-00): three episodes."""


def write_cast(path: Path, events: list, header: dict | None = None, tail: str = "") -> Path:
    """A v2 (or, with a v3 header, v3) cast: the header line, one line per event, then `tail` as is."""
    head = header if header is not None else {"version": 2, "width": 80, "height": 24}
    lines = [json.dumps(head)] + [json.dumps(event) for event in events]
    path.write_text("\n".join(lines) + "\n" + tail, encoding="utf-8")
    return path


def shell_output(rng: random.Random, lines: int) -> str:
    """What a shell in tmux prints: coloured lines, cursor moves, erases, scroll regions, wide and combined
    characters, a status line redrawn in place, now and then a resize of the screen's scroll region."""
    out = []
    for _ in range(lines):
        word = "".join(rng.choice("abcdefghij klmnop/._-") for _ in range(rng.randint(0, 90)))
        choice = rng.random()
        if choice < 0.4:
            out.append(f"\x1b[3{rng.randint(0, 7)};{rng.choice([1, 4, 7, 22])}m{word}\x1b[0m\r\n")
        elif choice < 0.55:
            out.append(f"\x1b[{rng.randint(1, 30)};{rng.randint(1, 100)}H\x1b[K{word}")
        elif choice < 0.62:
            out.append(
                f"\x1b[38;5;{rng.randint(0, 255)}m中文字符 e\u0301 ─│┌┐\x1b[48;2;10;{rng.randint(0, 255)};30m{word}\x1b[m\r\n"
            )
        elif choice < 0.67:
            out.append(f"\x1b7\x1b[{rng.randint(1, 24)};1H\x1b[7m[status {word[:20]}]\x1b[27m\x1b8")
        elif choice < 0.7:
            out.append(f"\x1b[{rng.randint(1, 5)};{rng.randint(10, 24)}r\x1b[{rng.randint(1, 3)}L\x1b[r")
        elif choice < 0.72:
            out.append("\x1b[2J\x1b[H")
        elif choice < 0.74:
            out.append(f"\x1b[4h{word[:10]}\x1b[4l\x1b[?7l{word * 3}\x1b[?7h")
        else:
            out.append(f"{word}\r\n")
    return "".join(out)


def long_cast(path: Path, episodes: int = 40, seed: int = 0, lines: int = 60) -> Path:
    """A long terminus-2-like recording: a marker per episode, then bursts of shell output cut into events
    at random places (escape sequences split across events included), and a resize now and then."""
    rng = random.Random(seed)
    events: list = []
    t = 0.0
    for episode in range(episodes):
        events.append([round(t, 3), "m", f"Episode {episode}"])
        text = shell_output(rng, lines)
        while text:
            cut = rng.randint(1, 400)
            t += rng.random() * 0.2
            events.append([round(t, 3), "o", text[:cut]])
            text = text[cut:]
        if rng.random() < 0.1:
            events.append([round(t, 3), "r", f"{rng.choice([80, 100, 132])}x{rng.choice([24, 30, 40])}"])
        t += 1.5
    return write_cast(path, events, {"version": 2, "width": 100, "height": 30})


def hostile_events() -> list:
    """Output events carrying every escape the sanitizer handles, the pty test's payload, and markup."""
    events: list = [[0.0, "m", "Episode 0" + ESCAPES["osc title bel"]]]
    t = 0.1
    for name, sequence in ESCAPES.items():
        events.append([t, "o", f"{name}: before{sequence}after\r\n"])
        t += 0.1
    events += [
        [t, "o", PAYLOAD + "\r\n"],
        [t + 0.1, "o", "\x1b[9999;9999H\x1b[9999L\x1b[9999@\x1b[?1049h\x1b[?2004h\x07\x07 bells\r\n"],
        [t + 0.2, "m", "Episode 1\x1b]52;c;SE9TVElMRQ==\x07"],
        [t + 0.3, "o", "\x1b[2J\x1b[1;1H[bold red]markup[/] [link=file:///etc/passwd]x[/link] abc\u202edcba\u200b\r\n"],
        [t + 0.4, "o", "\x1b]8;;file:///etc/passwd\x1b\\click me\x1b]8;;\x1b\\ \x1b]0;pwned-title\x07 end"],
    ]
    return events
