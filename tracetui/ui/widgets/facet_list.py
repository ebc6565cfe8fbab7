"""The filter sidebar's value list: every facet as a section of toggleable values with live counts.

One virtual list for all facets keeps a task facet with thousands of values as cheap as a small one;
large facets show their top values and a "more" row that expands them. The cursor moves over values
only (section titles are skipped), `[` / `]` jump between sections, and a query typed after `/` keeps
only the values that contain it, in every facet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from ...data.facets import Facet, FacetResult, FilterState
from .. import keymap
from ..cuts import Cuts
from ..format import OUTCOME_BADGES, fit
from .cursor_list import CursorList
from .findings_panel import kind_badge

TOP_VALUES = 8
RESIZE_STEP = 4
"""Columns `+` / `-` add to or take from the sidebar."""
HEADER = Style(bold=True, underline=True)
SELECTED_ROW = Style(reverse=True)
DIM = Style(dim=True)
ON = Style(color="cyan", bold=True)
OWN_ORDER = ("outcome", "finding")
"""Facets whose values keep their own order (pass first; the findings that game the verifier first)
rather than the most frequent first."""


class RowKind(Enum):
    TITLE = "title"
    """A facet's title: the cursor skips it."""
    VALUE = "value"
    MORE = "more"
    """The "▾ N more" / "▴ fewer" row of a facet with many values."""


@dataclass(frozen=True, slots=True)
class Row:
    facet: str
    kind: RowKind
    code: int = -1
    """The value's code in its facet (VALUE rows)."""
    hidden: int = field(default=0, compare=False)
    """Values a MORE row hides (not part of which row it is)."""


class FacetList(CursorList):
    BINDINGS = [*keymap.FACETS]
    CLICKS_TO_ACTIVATE = 1
    SHOWS_FOCUS = True
    """The cursor shows only while the sidebar has focus: elsewhere it would read as a chosen value."""

    @dataclass
    class Toggled(Message):
        facet: str
        label: str

    class FilterValues(Message):
        """`/` in the sidebar: the screen asks for the text that narrows the values."""

    @dataclass
    class Resized(Message):
        """`+` / `-`: the sidebar `delta` columns wider (or narrower)."""

        delta: int

    state: reactive[FilterState] = reactive(FilterState, init=False)
    """The screen's filters (bound to them): which values are on."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.facets: list[Facet] = []
        self.names: dict[str, dict[str, str]] = {}
        self.result: FacetResult | None = None
        self.rows: list[Row] = []
        self.expanded: set[str] = set()
        self.narrowed_to = ""
        self._orders: dict[str, np.ndarray] = {}
        self._cuts: dict[str, Cuts] = {}
        """Per facet: its values' names cut so that each still names one value."""

    def set_facets(self, facets: list[Facet], totals: dict[str, np.ndarray], names: dict[str, dict[str, str]]) -> None:
        """The facets to show, the order of their values (by overall count, fixed from then on) and
        the names to show for some values (label -> shown name, e.g. models without their provider)."""
        current = self._value_row()
        self.facets, self.names = facets, names
        self._orders = {}
        for facet in facets:
            counts = totals[facet.name]
            if facet.name in OWN_ORDER:
                order = np.arange(len(facet.labels))
            else:
                order = np.argsort(-counts, kind="stable")
            self._orders[facet.name] = order[counts[order] > 0]
            self._cuts[facet.name] = Cuts(
                self.shown_label(facet.name, facet.labels[c]) for c in self._orders[facet.name]
            )
        self._build_rows(current)

    def update(self, result: FacetResult) -> None:
        """The counts of the filters applied."""
        self.result = result
        self.refresh()

    def watch_state(self) -> None:
        self.refresh()

    def value_codes(self, facet: str):
        """Codes of the facet's values that occur, most frequent first (the sidebar's order)."""
        return self._orders.get(facet, ())

    def shown_label(self, facet: str, label: str) -> str:
        return self.names.get(facet, {}).get(label, label)

    # --- rows ----------------------------------------------------------------------------------
    def _values_shown(self, facet: Facet) -> np.ndarray:
        order = self._orders[facet.name]
        if self.narrowed_to:
            needle = self.narrowed_to.lower()
            return np.asarray(
                [
                    c
                    for c in order
                    if needle in facet.labels[c].lower()
                    or needle in self.shown_label(facet.name, facet.labels[c]).lower()
                ],
                dtype=order.dtype,
            )
        if facet.name in self.expanded:
            return order
        selected = self.state.selected.get(facet.name, frozenset())
        extra = [c for c in order[TOP_VALUES:] if facet.labels[c] in selected]  # selected values stay visible
        return np.concatenate([order[:TOP_VALUES], np.asarray(extra, dtype=order.dtype)])

    def _build_rows(self, keep: Row | None = None) -> None:
        """Lay out the sections; the cursor stays on the row like `keep` when it is still shown."""
        rows: list[Row] = []
        for facet in self.facets:
            shown = self._values_shown(facet)
            if self.narrowed_to and not len(shown):
                continue
            rows.append(Row(facet.name, RowKind.TITLE))
            rows.extend(Row(facet.name, RowKind.VALUE, int(code)) for code in shown)
            if not self.narrowed_to and len(self._orders[facet.name]) > TOP_VALUES:
                rows.append(Row(facet.name, RowKind.MORE, hidden=len(self._orders[facet.name]) - len(shown)))
        self.rows = rows
        found = [i for i, r in enumerate(rows) if r == keep]
        self.set_row_count(len(rows), found[0] if found else self._selectable(0, +1))

    def _selectable(self, index: int, step: int) -> int:
        """The nearest row from `index` in direction `step` that is not a title (else the other way)."""
        for direction in (step, -step):
            position = index
            while 0 <= position < len(self.rows):
                if self.rows[position].kind is not RowKind.TITLE:
                    return position
                position += direction
        return 0

    def _value_row(self) -> Row | None:
        """The value row under the cursor (None on a "more" row or an empty list)."""
        if self.rows and self.cursor < len(self.rows) and self.rows[self.cursor].kind is RowKind.VALUE:
            return self.rows[self.cursor]
        return None

    def current_value(self) -> tuple[str, int] | None:
        """(facet, code) under the cursor, or None on a "more" row or an empty list."""
        row = self._value_row()
        return (row.facet, row.code) if row is not None else None

    def narrow_to(self, text: str) -> None:
        """Keep only the values containing `text` (any case), in every facet; "" shows all again."""
        keep = self._value_row()
        self.narrowed_to = text.strip()
        self._build_rows(None if self.narrowed_to else keep)

    # --- moving --------------------------------------------------------------------------------
    def validate_cursor(self, index: int) -> int:
        """The cursor skips section titles, in the direction it moves: it is always on a value or a
        "more" row, whatever moved it (keys, clicks, jumps)."""
        return self._selectable(index, +1 if index >= self.cursor else -1)

    def _section_starts(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r.kind is RowKind.TITLE]

    def action_next_section(self) -> None:
        later = [i for i in self._section_starts() if i > self.cursor]
        if later:
            self.move_to(later[0] + 1)

    def action_prev_section(self) -> None:
        """To the first value of this section, or of the one before when already there."""
        starts = [i for i in self._section_starts() if i < self.cursor]
        if not starts:
            return
        target = starts[-1] + 1
        if target == self.cursor and len(starts) > 1:
            target = starts[-2] + 1
        self.move_to(target)

    def action_filter_values(self) -> None:
        self.post_message(self.FilterValues())

    def action_grow(self) -> None:
        self.post_message(self.Resized(+RESIZE_STEP))

    def action_shrink(self) -> None:
        self.post_message(self.Resized(-RESIZE_STEP))

    # --- drawing -------------------------------------------------------------------------------
    def _facet(self, name: str) -> Facet:
        return next(f for f in self.facets if f.name == name)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        facet = self._facet(row.facet)
        if row.kind is RowKind.TITLE:
            chosen = len(self.state.selected.get(facet.name, ()))
            title = facet.title + (f" ({chosen})" if chosen else "")
            if self.narrowed_to:
                title += f" · “{self.narrowed_to}”"
            segments = [Segment(fit(title, width), HEADER)]
        elif row.kind is RowKind.MORE:
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
            if facet.name == "finding":
                badge = kind_badge(label)  # the letter of the trial list's findings column
            style = ON if on else (DIM if count == 0 else None)
            segments = [Segment(box, ON if on else DIM)]
            if badge:
                segments.append(Segment(badge[0] + " ", badge[1]))
                name_width -= 2
            segments += [
                Segment(
                    fit(self._cuts[facet.name](self.shown_label(facet.name, label), name_width), name_width), style
                ),
                Segment(" " + count_text, DIM),
            ]
        return self.line_strip(segments, width, SELECTED_ROW if selected and self.has_focus else None)

    # --- acting --------------------------------------------------------------------------------
    def action_toggle_value(self) -> None:
        self.activate()

    def activate(self) -> None:
        if not self.rows:
            return
        row = self.rows[self.cursor]
        if row.kind is RowKind.MORE:
            self.expanded ^= {row.facet}
            self._build_rows(row)
        elif row.kind is RowKind.VALUE:
            self.post_message(self.Toggled(row.facet, self._facet(row.facet).labels[row.code]))
