"""A recording's screen (a `Frame` from `data.recordings`) as rows of Rich segments, one cell per column.

The recording's colours and attributes become Rich styles (named colours as the terminal's ANSI colours,
so the user's palette applies; 256-colour and true-colour ones as RGB); the cursor is drawn reversed. The
text is what the emulator put in its cells, made safe once more: any control or invisible character
left shows as U+FFFD (so the row keeps its width), and segments are never parsed as markup.
"""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.color import Color, ColorParseError
from rich.segment import Segment
from rich.style import Style

from ..data.recordings import Frame, Pen
from ..data.recordings.player import Row
from ..trace.sanitize import REPLACEMENT, clean_chars

_ANSI = {
    name: number for number, name in enumerate(("black", "red", "green", "brown", "blue", "magenta", "cyan", "white"))
}
CURSOR = Style(reverse=True)
_LINE_BREAKS = str.maketrans(dict.fromkeys("\t\n\r", REPLACEMENT))


def colour(name: str) -> Color | None:
    """pyte's colour: "default" (None), a name ("red", "brightblue"), or six hex digits."""
    if name == "default":
        return None
    bright = name.startswith("bright")
    number = _ANSI.get(name[6:] if bright else name)
    if number is not None:
        return Color.from_ansi(number + 8 if bright else number)
    try:
        return Color.parse(f"#{name}") if len(name) == 6 else None
    except ColorParseError:
        return None


@lru_cache(maxsize=1024)
def pen_style(pen: Pen) -> Style | None:
    if pen == _PLAIN:
        return None
    return Style(
        color=colour(pen.fg),
        bgcolor=colour(pen.bg),
        bold=pen.bold or None,
        italic=pen.italic or None,
        underline=pen.underline or None,
        strike=pen.strike or None,
        reverse=pen.reverse or None,
    )


_PLAIN = Pen("default", "default", False, False, False, False, False)


def safe_cells(text: str) -> str:
    """Cell text with nothing a terminal would act on: a character `clean_chars` would drop or change,
    and tabs and line breaks, become U+FFFD one for one."""
    if clean_chars(text) == text and not any(c in text for c in "\t\n\r"):
        return text
    return "".join(c if clean_chars(c) == c else REPLACEMENT for c in text.translate(_LINE_BREAKS))


def frame_lines(frame: Frame) -> list[list[Segment]]:
    """Every row of the frame as segments, `frame.columns` cells wide."""
    lines = []
    for y, row in enumerate(frame.rows):
        cursor = frame.cursor[0] if frame.cursor is not None and frame.cursor[1] == y else None
        lines.append(_row_segments(row, cursor))
    return lines


def _row_segments(row: Row, cursor: int | None) -> list[Segment]:
    segments: list[Segment] = []
    column = 0
    for text, pen in row:
        text = safe_cells(text)
        style = pen_style(pen)
        if cursor is not None and column <= cursor < column + cell_len(text):
            before, at, after = _split_at(text, cursor - column)
            if before:
                segments.append(Segment(before, style))
            segments.append(Segment(at, (style or Style()) + CURSOR))
            if after:
                segments.append(Segment(after, style))
        else:
            segments.append(Segment(text, style))
        column += cell_len(text)
    return segments


def _split_at(text: str, cells: int) -> tuple[str, str, str]:
    """`text` around the character that covers cell `cells`."""
    position = 0
    for index, character in enumerate(text):
        width = cell_len(character)
        if position + width > cells:
            return text[:index], character, text[index + 1 :]
        position += width
    return text, " ", ""
