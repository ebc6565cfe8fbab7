"""The filter sidebar's value list: every facet as a section of toggleable values with live counts.

One virtual list for all facets keeps a task facet with thousands of values as cheap as a small one;
large facets show their top values and a "more" row that expands them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.message import Message
from textual.strip import Strip

from ...data.facets import Facet, FacetResult, FilterState
from .. import keymap
from ..format import OUTCOME_BADGES, fit
from .cursor_list import CursorList

TOP_VALUES = 8
HEADER = Style(bold=True, underline=True)
SELECTED_ROW = Style(reverse=True)
DIM = Style(dim=True)
ON = Style(color="cyan", bold=True)


@dataclass(slots=True)
class Row:
    facet: str
    code: int = -1  # -1: the facet's title row; -2: the "more" row
    hidden: int = 0


class FacetList(CursorList):
    BINDINGS = keymap.FACETS
    CLICKS_TO_ACTIVATE = 1

    class Toggled(Message):
        def __init__(self, facet: str, label: str) -> None:
            super().__init__()
            self.facet = facet
            self.label = label

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.facets: list[Facet] = []
        self.result: FacetResult | None = None
        self.state = FilterState()
        self.rows: list[Row] = []
        self.expanded: set[str] = set()
        self._orders: dict[str, np.ndarray] = {}

    def set_facets(self, facets: list[Facet], totals: dict[str, np.ndarray]) -> None:
        """The facets to show and the order of their values (by overall count, fixed from then on)."""
        self.facets = facets
        self._orders = {}
        for facet in facets:
            counts = totals[facet.name]
            if facet.name == "outcome":
                order = np.arange(len(facet.labels))
            else:
                order = np.argsort(-counts, kind="stable")
            self._orders[facet.name] = order[counts[order] > 0]
        self._build_rows()

    def update(self, result: FacetResult, state: FilterState) -> None:
        self.result, self.state = result, state
        self.refresh()

    def _build_rows(self) -> None:
        rows: list[Row] = []
        for facet in self.facets:
            rows.append(Row(facet.name))
            order = self._orders[facet.name]
            shown = order if facet.name in self.expanded else order[:TOP_VALUES]
            selected = self.state.selected.get(facet.name, frozenset())
            if facet.name not in self.expanded:  # selected values always stay visible
                extra = [c for c in order[TOP_VALUES:] if facet.labels[c] in selected]
                shown = np.concatenate([shown, np.asarray(extra, dtype=order.dtype)])
            rows.extend(Row(facet.name, int(code)) for code in shown)
            if len(order) > TOP_VALUES:
                rows.append(Row(facet.name, -2, len(order) - len(shown)))
        self.rows = rows
        self.set_row_count(len(rows))

    def _facet(self, name: str) -> Facet:
        return next(f for f in self.facets if f.name == name)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        facet = self._facet(row.facet)
        if row.code == -1:
            chosen = len(self.state.selected.get(facet.name, ()))
            title = facet.title + (f" ({chosen})" if chosen else "")
            segments = [Segment(fit(title, width), HEADER)]
        elif row.code == -2:
            text = "  ▴ fewer" if row.hidden == 0 else f"  ▾ {row.hidden:,} more"
            segments = [Segment(fit(text, width), DIM)]
        else:
            label = facet.labels[row.code]
            on = label in self.state.selected.get(facet.name, frozenset())
            count = int(self.result.counts[facet.name][row.code]) if self.result else 0
            count_text = f"{count:,}"
            box = "■ " if on else "□ "
            name_width = max(1, width - len(box) - len(count_text) - 1)
            badge = OUTCOME_BADGES.get(label) if facet.name == "outcome" else None
            style = ON if on else (DIM if count == 0 else None)
            segments = [Segment(box, ON if on else DIM)]
            if badge:
                segments.append(Segment(badge[0] + " ", badge[1]))
                name_width -= 2
            segments += [Segment(fit(label, name_width), style), Segment(" " + count_text, DIM)]
        strip = Strip(segments).crop_extend(0, width, None)
        return strip.apply_style(self._base_style + SELECTED_ROW if selected else self._base_style)

    def action_toggle(self) -> None:
        self.activate()

    def activate(self) -> None:
        if not self.rows:
            return
        row = self.rows[self.cursor]
        if row.code == -2:
            self.expanded ^= {row.facet}
            self._build_rows()
        elif row.code >= 0:
            self.post_message(self.Toggled(row.facet, self._facet(row.facet).labels[row.code]))
