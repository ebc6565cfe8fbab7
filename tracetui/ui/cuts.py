"""Names cut to a column's width so that rows can still be told apart.

A plain cut keeps the head: `claude-sonnet-4-5-20250929` and `claude-sonnet-4-20250514` both become
`claude-sonn…`. `Cuts` knows every name a column (or a sidebar facet) may show, and cuts each one
where it stops being shared: it keeps the plain cut when that names one value only, else keeps most
of the head and the distinct tail (`polyglot_r…Pz9Jzic`), else drops the head the names share
(`…sonnet-4-5…`). A
cut names one value when no other name fits its pattern (`…` standing for any text).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator

from rich.cells import cell_len, set_cell_size

from ..trace.sanitize import sanitize

ELLIPSIS = "…"
SEPARATORS = frozenset("-_/.: ")
"""A cut starts or ends next to one of these, so it keeps whole words of a name."""
HEAD_KEEPS = 0.4
"""A head and a tail read well when the head keeps this share of the width at least."""
CHECK_ALL = 500
"""Up to this many names, a cut is checked against every other; beyond, against those whose plain
cut reads the same (the ones it would be confused with), so a task facet of 40,000 stays cheap."""


def plain_cut(text: str, width: int) -> str:
    """`text` cut to `width` cells with "…" at the end."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)).rstrip() + ELLIPSIS if width > 0 else ""


class Cuts:
    """The names of a column or a facet, each cut to a width so that it names one value."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted({sanitize(name).replace("\n", " ") for name in names})
        self._cut: dict[tuple[str, int], str] = {}

    def __call__(self, name: str, width: int) -> str:
        """`name` in at most `width` cells, telling it apart from the other names where it can."""
        name = sanitize(name).replace("\n", " ")
        if cell_len(name) <= width:
            return name
        key = (name, width)
        cut = self._cut.get(key)
        if cut is None:
            cut = self._cut[key] = self._distinct(name, width)
        return cut

    def _distinct(self, name: str, width: int) -> str:
        others = self._rivals(name, width)
        for cut in _candidates(name, width):
            pattern = _pattern(cut)
            if not any(pattern.match(other) for other in others):
                return cut
        return plain_cut(name, width)

    def _rivals(self, name: str, width: int) -> list[str]:
        if len(self.names) <= CHECK_ALL:
            return [n for n in self.names if n != name]
        head = plain_cut(name, width)[:-1]
        start = bisect_left(self.names, head)
        rivals = []
        for other in self.names[start:]:
            if not other.startswith(head):
                break
            if other != name:
                rivals.append(other)
        return rivals


def _candidates(name: str, width: int) -> Iterator[str]:
    """Cuts of `name` to `width` cells, the most readable first: without its first `/` parts (the
    provider of `openai/gpt-5-mini`); the plain cut; a good part of the
    head with a tail (an attempt id: `polyglot_r…Pz9Jzic`); the head dropped up to a word
    (`…sonnet-4-5…`); any head with a tail."""
    slashes = [i + 1 for i, c in enumerate(name[:-1]) if c == "/"]  # a path, an org/model id: its end says most
    yield from [ELLIPSIS + name[start:] for start in slashes if cell_len(name[start:]) < width][:1]
    for start in slashes:
        yield ELLIPSIS + plain_cut(name[start:], width - 1)
    yield plain_cut(name, width)
    starts = [i + 1 for i, c in enumerate(name[:-1]) if c in SEPARATORS]
    tails = [(name[start:], width - 1 - cell_len(name[start:])) for start in reversed(starts)]
    for tail, room in tails:
        if room >= HEAD_KEEPS * width:
            yield set_cell_size(name, room).rstrip() + ELLIPSIS + tail
    for start in starts:
        rest = name[start:]
        if cell_len(rest) + 1 <= width:
            yield ELLIPSIS + rest
        elif width >= 4:
            yield ELLIPSIS + plain_cut(rest, width - 1)
    for tail, room in tails:
        if room >= 2:
            yield set_cell_size(name, room).rstrip() + ELLIPSIS + tail


def _pattern(cut: str) -> re.Pattern[str]:
    """The names a cut could stand for: its pieces in order, `…` for any text between them."""
    return re.compile("^" + ".*".join(re.escape(piece) for piece in cut.split(ELLIPSIS)) + "$", re.DOTALL)
