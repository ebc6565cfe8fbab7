"""A recording's frame as segments: the recording's colours as styles, the cursor, nothing unsafe."""

from __future__ import annotations

from rich.cells import cell_len
from rich.color import Color

from tracetui.data.recordings import Cast, Frame, Pen, Player
from tracetui.render.terminal_screen import colour, frame_lines, safe_cells

from .casts import hostile_events, write_cast
from .test_trace_sanitize import UNSAFE

PLAIN = Pen("default", "default", False, False, False, False, False)


def test_pyte_colours_become_rich_colours():
    assert colour("default") is None
    assert colour("red") == Color.from_ansi(1) and colour("brown") == Color.from_ansi(3)
    assert colour("brightblue") == Color.from_ansi(12)
    assert colour("ff8700") == Color.from_rgb(255, 135, 0)
    assert colour("nonsense") is None and colour("zzzzzz") is None


def test_styles_and_the_cursor():
    red = Pen("red", "default", True, False, True, False, False)
    frame = Frame(0, 6, 2, ((("ab", red), ("cd  ", PLAIN)), (("中xyz", PLAIN),)), (3, 1))
    first, second = frame_lines(frame)
    assert [s.text for s in first] == ["ab", "cd  "]
    assert first[0].style.color == Color.from_ansi(1) and first[0].style.bold and first[0].style.underline
    assert first[1].style is None
    assert [s.text for s in second] == ["中x", "y", "z"]  # the cursor on column 3: after the wide character
    assert second[1].style.reverse


def test_unsafe_cell_text_keeps_its_width():
    assert safe_cells("plain text") == "plain text"
    assert safe_cells("a\x1bb\x07c\td\u202ee") == "a\ufffdb\ufffdc\ufffdd\ufffde"


def test_a_hostile_recording_renders_to_safe_segments(tmp_path):
    cast = Cast.open(write_cast(tmp_path / "h.cast", hostile_events(), {"version": 2, "width": 120, "height": 40}))
    player = Player(cast)
    for t in [*cast.times, cast.duration]:
        player.seek(t)
        frame = player.frame()
        for segments in frame_lines(frame):
            assert sum(cell_len(s.text) for s in segments) == frame.columns
            for segment in segments:
                assert not UNSAFE.search(segment.text), repr(segment.text)
                assert segment.style is None or segment.style.link is None
