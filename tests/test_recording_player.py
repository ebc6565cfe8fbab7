"""The terminal of a recording at time t: keyframes give the screen a full replay gives, the fast draw
path draws what pyte draws, frames are exact grids of safe cells."""

from __future__ import annotations

import random
import time

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyte.screens import Cursor, Savepoint

from tracetui.data.recordings import Cast, Player
from tracetui.data.recordings.screen import FastScreen

from .casts import SAMPLE, hostile_events, long_cast, write_cast


def plain(value):
    """pyte's state with its cursors (compared by identity) as tuples."""
    if isinstance(value, Cursor):
        return (value.x, value.y, value.attrs, value.hidden)
    if isinstance(value, Savepoint):
        return tuple(plain(field) for field in value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def screen_state(screen: pyte.Screen) -> dict:
    """Everything of a screen that the next output or the display depends on."""
    state = {name: plain(value) for name, value in vars(screen).items() if name not in ("buffer", "dirty", "_cells")}
    state["buffer"] = {y: (row.default, dict(row)) for y, row in screen.buffer.items()}
    return state


@pytest.fixture(scope="module")
def long_recording(tmp_path_factory):
    return Cast.open(long_cast(tmp_path_factory.mktemp("casts") / "long.cast", episodes=40))


def test_the_sample_screen_at_each_episode():
    player = Player(Cast.open(SAMPLE))
    player.seek(3.5)
    rows = ["".join(text for text, _ in row).rstrip() for row in player.frame().rows]
    assert rows[:3] == [
        "root@9e1f:/app# python3 -c 'print(\"step 0\")'",
        "HELDOUT-CAST step 0 of s-hello-world",
        "root@9e1f:/app#",
    ]
    assert player.frame().rows[1][0][1].fg == "green"
    assert player.frame().cursor == (16, 2)
    player.seek(8.5)
    assert "HELDOUT-CAST step 2 of s-hello-world" in "".join(text for text, _ in player.frame().rows[5])


def test_a_screen_from_a_keyframe_equals_a_full_replay(long_recording):
    cast = long_recording
    rng = random.Random(1)
    times = sorted([rng.uniform(0, cast.duration) for _ in range(25)] + [m.time for m in cast.markers[::7]])
    replay = Player(cast, keyframe_bytes=1 << 40)  # no keyframes: one replay from the start, forwards
    expected = {}
    for t in times:
        replay.seek(t)
        expected[t] = (replay.event, screen_state(replay.screen), replay.frame())
    player = Player(cast, keyframe_bytes=4096)
    assert player.seek(cast.duration)
    assert len(player.keyframes) > 20  # taken on the way, between escape sequences only
    rng.shuffle(times)
    for t in times:  # back and forth: each seek restores the keyframe before t
        player.seek(t)
        event, state, frame = expected[t]
        assert player.event == event == cast.events_until(t)
        assert screen_state(player.screen) == state, t
        assert player.frame() == frame


def test_a_seek_replays_only_from_the_keyframe_before_it(long_recording):
    cast = long_recording
    player = Player(cast, keyframe_bytes=4096)
    player.seek(cast.duration)
    keyframe = player.keyframes[len(player.keyframes) // 2]
    target = keyframe.event + 10
    assert player.seek_event(target, deadline=0.0)  # one batch from the keyframe: there at once
    fresh = Player(cast, keyframe_bytes=4096)
    assert not fresh.seek_event(target, deadline=0.0)  # from the start: not in one batch
    while not fresh.seek_event(target, deadline=time.monotonic() + 1):
        pass
    assert screen_state(fresh.screen) == screen_state(player.screen)


def test_a_deadline_leaves_the_screen_part_way_and_the_next_call_goes_on(long_recording):
    player = Player(long_recording)
    calls = 1
    while not player.seek(long_recording.duration, deadline=time.monotonic()):
        calls += 1
    assert calls > 1 and player.event == len(long_recording)


def test_keyframes_are_spaced_for_long_recordings(long_recording):
    assert Player(long_recording).keyframe_bytes == 32 * 1024
    assert Player(long_recording, keyframe_bytes=100).keyframe_bytes == 100


def test_a_resize_event_resizes_the_screen(tmp_path):
    cast = Cast.open(write_cast(tmp_path / "r.cast", [[0.0, "o", "hello"], [1.0, "r", "40x10"], [2.0, "r", "junk"]]))
    player = Player(cast)
    player.seek(0.5)
    assert (player.frame().columns, player.frame().lines) == (80, 24)
    player.seek(3.0)
    frame = player.frame()
    assert (frame.columns, frame.lines, len(frame.rows)) == (40, 10, 10)
    assert frame.rows[0][0][0].startswith("hello")


def test_frames_are_exact_grids_and_shared_while_nothing_changes(long_recording):
    player = Player(long_recording)
    for t in (1.0, 20.0, long_recording.duration):
        player.seek(t)
        frame = player.frame()
        assert frame is player.frame()
        from rich.cells import cell_len

        for row in frame.rows:
            assert sum(cell_len(text) for text, _ in row) == frame.columns


def test_wide_characters_keep_the_grid(tmp_path):
    # a wide character, one whose stub is overwritten, one in the last column, a combined one
    events = [[0.0, "o", "中x\x1b[1;4H文\x1b[1;5Hy\x1b[1;10He\u0301\x1b[1;80H字"]]
    player = Player(Cast.open(write_cast(tmp_path / "w.cast", events)))
    player.seek(1.0)
    row = "".join(text for text, _ in player.frame().rows[0])
    assert row.startswith("中x y    \u00e9")  # pyte composes e + U+0301
    assert row.endswith(" ")  # the last column cannot hold a wide character


def test_invisible_characters_show_and_nothing_hostile_is_in_a_cell(tmp_path):
    cast = Cast.open(
        write_cast(tmp_path / "hostile.cast", hostile_events(), {"version": 2, "width": 120, "height": 40})
    )
    player = Player(cast)
    for t in [*cast.times, cast.duration]:
        player.seek(t)
        for row in player.frame().rows:
            for text, _ in row:
                assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text), repr(text)
                assert not any(c in "\u202e\u200b\u2066\u2069\ufeff" for c in text), repr(text)
    screen = "\n".join("".join(text for text, _ in row) for row in player.frame().rows)
    assert "[bold red]markup[/]" in screen and "abc\ufffddcba\ufffd" in screen
    assert "pwned-title" not in screen and "SE9TVElMRQ" not in screen and "file:///etc/passwd\x1b" not in screen


# --- the fast draw path draws what pyte's draw does --------------------------------------------
PIECES = st.sampled_from(
    [
        "a",
        "hello ",
        "x" * 13,
        "中",
        "e\u0301",
        "─│",
        "\r",
        "\n",
        "\t",
        "\x08",
        "\x01",
        "\x1b[4h",
        "\x1b[4l",
        "\x1b[?7l",
        "\x1b[?7h",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[1;7m",
        "\x1b[3G",
        "\x1b[2;5H",
        "\x1b[K",
        "\x1b[2@",
        "\x1b[P",
        "\x1bM",
        "\x1b7",
        "\x1b8",
        "\x1b[?5h",
        "\x1b[?5l",
        "\x1b(0lqk\x1b(B",
        "\x0e",
        "\x0f",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=40), st.integers(1, 12), st.integers(1, 4))
def test_the_fast_draw_path_draws_what_pyte_draws(pieces, columns, lines):
    fast, slow = FastScreen(columns, lines), pyte.Screen(columns, lines)
    fast_stream, slow_stream = pyte.Stream(fast), pyte.Stream(slow)
    for piece in pieces:
        fast_stream.feed(piece)
        slow_stream.feed(piece)
    assert screen_state(fast) == screen_state(slow)
