"""Cheap line wrapping on plain text, so the view knows every block's height without styling it."""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size


def wrap_spans(text: str, width: int, words: bool) -> list[tuple[int, int]]:
    """(start, end) character offsets of each visual line of `text` at `width` cells.

    Newlines end lines and are not part of any span. `words` breaks at the last space that fits (a
    word longer than the width is broken where it must); otherwise each line is cut at the width,
    never wrapped (a rule drawn with ─ stays one line).
    """
    width = max(1, width)
    spans: list[tuple[int, int]] = []
    start = 0
    length = len(text)
    ascii_text = text.isascii()
    while True:
        end = text.find("\n", start)
        if end < 0:
            end = length
        if end - start <= width and (ascii_text or cell_len(text[start:end]) <= width):
            spans.append((start, end))
        elif not words:
            spans.append((start, _fit(text, start, end, width, ascii_text)))
        else:
            _wrap_words(text, start, end, width, ascii_text, spans)
        if end >= length:
            return spans
        start = end + 1


def _wrap_words(text: str, start: int, end: int, width: int, ascii_text: bool, spans: list[tuple[int, int]]) -> None:
    position = start
    while position < end:
        cut = _fit(text, position, end, width, ascii_text)
        if cut < end:
            space = text.rfind(" ", position + 1, cut + 1)
            if space > position:
                spans.append((position, space))
                position = space + 1
                continue
        spans.append((position, cut))
        position = cut


def _fit(text: str, start: int, end: int, width: int, ascii_text: bool) -> int:
    """The largest offset such that text[start:offset] fits in `width` cells (at least one character)."""
    if ascii_text:
        return min(end, start + width)
    cells = 0
    position = start
    while position < end:
        size = get_character_cell_size(text[position])
        if cells + size > width and position > start:
            break
        cells += size
        position += 1
    return position
