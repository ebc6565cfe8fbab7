"""The stats screen's pass@k table: per model (and model · dataset), pass@1 … pass@k over its tasks.

A k that left tasks out (they have fewer graded attempts than k) says over how many tasks it averages,
`83% (8)`; with reward hacks among the passes, a second line gives the same without them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.strip import Strip

from ...data.estimates import PassAtK
from ...data.facets import FilterState
from ...data.stats import PassAtKRow
from .. import keymap
from ..format import distinct_cuts, model_names
from .table import CURSOR, DIM, HEADER, Cell, Picked, TableView, cells, percent, rate_style

TASKS = 5
LABEL_MIN = 20
"""The label keeps this much (or all it needs) before a k column is shown."""
HACK_FREE = "  without hacks"


@dataclass(frozen=True, slots=True)
class _Line:
    row: PassAtKRow
    ks: list[PassAtK]
    hack_free: bool


class PassAtKTable(TableView):
    """pass@k per group; Enter filters the trial list to the group."""

    BINDINGS = [*keymap.GROUP_TABLE]
    SHOWS_FOCUS = True

    def __init__(self, *columns: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = columns
        self.lines: list[_Line] = []
        self.ks: list[int] = []
        self.widths: dict[int, int] = {}

    def set_rows(self, rows: list[PassAtKRow]) -> None:
        self.lines = []
        for row in rows:
            self.lines.append(_Line(row, row.ks, False))
            if row.without_hacks is not None and row.without_hacks != row.ks:
                self.lines.append(_Line(row, row.without_hacks, True))
        self.ks = sorted({k.k for row in rows for k in row.ks})
        self.widths = {
            k: max(6, *(cell_len(_cell(p)) + 1 for line in self.lines for p in line.ks if p.k == k)) for k in self.ks
        }
        names = model_names(row.key[0] for row in rows)
        self.labels = [
            " · ".join([names.get(line.row.key[0], line.row.key[0]), *line.row.key[1:]]) for line in self.lines
        ]
        self.set_row_count(len(self.lines), 0)
        self.refresh(layout=True)

    def _layout(self, width: int) -> tuple[int, list[int]]:
        """(label width, the ks shown): the label up to its longest, the ks that fit after it."""
        longest = max((cell_len(label) for label in self.labels), default=8)
        if any(line.hack_free for line in self.lines):
            longest = max(longest, cell_len(HACK_FREE))
        room = width - TASKS - 1 - sum(w + 1 for w in self.widths.values()) - 1
        label = max(min(longest, LABEL_MIN), min(longest, 40, room))  # names before the higher ks
        room, shown = width - label - 1 - TASKS - 1, []
        for k in self.ks:
            if room < self.widths[k] + 1:
                break
            shown.append(k)
            room -= self.widths[k] + 1
        return label, shown

    def header(self, width: int) -> Text:
        label, shown = self._layout(width)
        parts: list[Cell] = [(" · ".join(self.columns), label, None, False), ("tasks", TASKS, None, True)]
        parts += [(f"pass@{k}", self.widths[k], None, True) for k in shown]
        text = Text("".join(s.text for s in cells(parts)), style=HEADER, no_wrap=True, overflow="crop")
        if len(shown) < len(self.ks):
            text.append(f"… to pass@{self.ks[-1]}", DIM)
        return text

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        line = self.lines[index]
        label, shown = self._layout(width)
        name = HACK_FREE if line.hack_free else distinct_cuts(self.labels, label)[self.labels[index]]
        found = {p.k: p for p in line.ks}
        tasks = str(line.ks[0].tasks) if line.ks and not line.hack_free else ""
        parts: list[Cell] = [(name, label, DIM if line.hack_free else None, False), (tasks, TASKS, DIM, True)]
        for k in shown:
            p = found.get(k)
            parts.append(
                ("" if p is None else _cell(p), self.widths[k], None if p is None else rate_style(p.value), True)
            )
        return self.line_strip(cells(parts), width, CURSOR if selected and self.has_focus else None)

    def action_pick(self) -> None:
        if self.lines:
            key = self.lines[self.cursor].row.key
            self.post_message(Picked(FilterState(selected={c: frozenset({v}) for c, v in zip(self.columns, key)})))

    def activate(self) -> None:
        self.action_pick()


def _cell(p: PassAtK) -> str:
    return percent(p.value) + (f" ({p.tasks})" if p.left_out else "")
