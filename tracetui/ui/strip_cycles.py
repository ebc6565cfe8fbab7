"""Textual's strips, mended: a strip that a division or a crop leaves whole no longer keeps itself.

`Strip.divide` keeps its result in the strip's own cache, and when the cuts leave the strip whole that
result is `[self]`; `Strip.crop_extend` keeps `self` when the crop is the whole strip. Either makes the
strip a reference cycle, and the compositor divides every line of every widget it draws: each strip
drawn ended as garbage that only a full collection finds (with its seven caches and its segments, some
45,000 objects a scroll of 300 pages here; see `collector`). `mend` answers those two cases at once,
with the same strip and no cache (strips do not change), and leaves every other case to Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.style import Style
from textual.strip import Strip

_divide = Strip.divide
_crop_extend = Strip.crop_extend


def _divided(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    """`Strip.divide`, without the cycle when the cuts leave the strip whole."""
    length = self.cell_length
    cuts = [cut for cut in cuts if cut <= length]
    if cuts == [length]:
        return [self]
    return _divide(self, cuts)


def _cropped(self: Strip, start: int, end: int, style: Style | None) -> Strip:
    """`Strip.crop_extend`, without the cycle when the crop is the whole strip."""
    if start <= 0 and end == self.cell_length:
        return self
    return _crop_extend(self, start, end, style)


def mend() -> None:
    """Use the mended methods from now on (again: no change)."""
    Strip.divide = _divided  # type: ignore[method-assign]
    Strip.crop_extend = _cropped  # type: ignore[method-assign]
