"""What the tables of the stats and head-to-head screens share: pass-rate colours and figures, fitted
cells, and the section that puts a title and a column header over a table."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from ...data.facets import FilterState
from ..format import fit
from .bars import InfoBar
from .cursor_list import CursorList

_STOPS = ((0.0, (225, 75, 60)), (0.5, (225, 195, 60)), (1.0, (90, 185, 90)))
NO_RATE = Style(color="black", bgcolor="grey50")
HEADER = Style(bold=True)
CURSOR = Style(reverse=True, bold=True)
DIM = Style(dim=True)


def rate_style(rate: float) -> Style:
    """Black on red (0) → yellow (0.5) → green (1); grey when nothing is graded."""
    if math.isnan(rate):
        return NO_RATE
    (r0, c0), (r1, c1) = _STOPS[:2] if rate < 0.5 else _STOPS[1:]
    f = (min(max(rate, 0.0), 1.0) - r0) / (r1 - r0)
    rgb = [round(a + (b - a) * f) for a, b in zip(c0, c1)]
    return Style(color="black", bgcolor=Color.from_rgb(*rgb))


def percent(rate: float) -> str:
    """Rounded, but never 100% short of a perfect rate nor 0% above nothing."""
    if math.isnan(rate):
        return "—"
    value = round(100 * rate)
    if 0 < rate < 1:
        value = min(99, max(1, value))
    return f"{value}%"


Cell = tuple[str, int, Style | None, bool]
"""A table cell: text, width, style, right-aligned."""


def cells(parts: list[Cell]) -> list[Segment]:
    """One segment per cell, each fitted to its width and followed by a space."""
    out = []
    for text, width, style, right in parts:
        cell = fit(text, width)
        out.append(Segment((cell.rstrip().rjust(width) if right else cell) + " ", style))
    return out


class TableView(CursorList):
    """A table of rows under a column header that follows its width (see TableSection)."""

    def header(self, width: int) -> Text:
        raise NotImplementedError


@dataclass
class Picked(Message):
    """Enter on a matrix cell or a table row: the filters to apply to the trial list."""

    filters: FilterState


class TableSection(Vertical):
    """A Line-API table under an optional title, with a column header that follows its width."""

    def __init__(self, table: TableView, heading: str | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="table-section")
        self.table = table
        self.heading = heading

    def compose(self) -> ComposeResult:
        if self.heading:
            yield Static(Text(self.heading), classes="section-title")
        yield InfoBar(classes="table-header")
        yield self.table

    def refresh_header(self) -> None:
        width = self.table.scrollable_content_region.width or self.size.width
        self.query_one(".table-header", InfoBar).update(self.table.header(width))

    def on_resize(self) -> None:
        self.refresh_header()

    @on(CursorList.CursorMoved)
    def _moved(self) -> None:
        self.refresh_header()
