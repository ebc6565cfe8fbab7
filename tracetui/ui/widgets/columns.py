"""Columns of a one-line-per-row list that give way on narrow panes, by priority.

Each column has a preferred width and ways to give way (narrow to a smaller width, or drop at 0), each
with a priority. When a row does not fit, the ways of lowest priority are taken first until it does;
the flexible column (the task) then gets all that is left. So a feature adds a column with the ways it
can give way, and nothing else needs to know about it. The column the list is sorted by narrows but
stays: an order by a figure no column shows cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style

FLEX_FLOOR = 8
"""The flexible column's width when nothing else can give way."""


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int
    """Preferred width; for the flexible column, the width it needs before others keep theirs."""
    value: Callable[[int, int], str]
    """(trial, width) -> the cell's text (a column may say less when narrowed)."""
    give_way: tuple[tuple[int, int], ...] = ()
    """(priority, width) steps: lower priorities give way first; width 0 drops the column."""
    style: Style | Callable[[int], Style | None] | None = None
    """A style, or trial -> style."""
    right: bool = False
    sort_key: str | None = None
    """The sort order whose mark (▲ / ▼) this column's title carries."""
    flex: bool = False
    grows_to: int = 0
    """The width a column widens to where the list has room: the flexible one first (the task column to
    its longest name), then the others (the model column to its longest), before the flexible one takes
    what is left."""


def fit_columns(columns: list[Column], width: int, keep: str | None = None) -> list[tuple[Column, int]]:
    """The columns shown in `width` cells (one space after each) and their widths, in display order;
    the one whose `sort_key` is `keep` is never dropped."""
    widths = {c.key: c.width for c in columns}

    def used() -> int:
        return sum(w + 1 for w in widths.values() if w > 0)

    steps = sorted(
        (priority, index, narrower)
        for index, c in enumerate(columns)
        for priority, narrower in c.give_way
        if narrower or keep is None or c.sort_key != keep
    )
    for _, index, narrower in steps:
        if used() <= width:
            break
        key = columns[index].key
        widths[key] = min(widths[key], narrower)
    spare = width - used()
    for column in sorted(columns, key=lambda c: not c.flex):  # the flexible column to its need first
        grow = min(column.grows_to - widths[column.key], spare) if widths[column.key] > 0 else 0
        if grow > 0:
            widths[column.key] += grow
            spare -= grow
    for column in columns:
        if column.flex:
            widths[column.key] = max(FLEX_FLOOR, width - (used() - widths[column.key] - 1) - 1)
    return [(c, widths[c.key]) for c in columns if widths[c.key] > 0]
