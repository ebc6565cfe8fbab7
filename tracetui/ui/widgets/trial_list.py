"""The trial list: one line per trial, virtual, sorted and filtered by the screen."""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.strip import Strip

from ...data.session import Session
from .. import keymap
from ..format import OUTCOME_BADGES, fit, short_model
from .cursor_list import CursorList

SELECTED = Style(reverse=True)
SORTED_BY = {"": "outcome", "ep": "episodes", "msgs": "messages"}
"""Sort keys of the columns whose title is not their key."""
DIM = Style(dim=True)


class TrialList(CursorList):
    BINDINGS = keymap.TRIAL_LIST

    class Opened(Message):
        """Enter on a trial: the screen moves focus to the conversation."""

    def __init__(self, session: Session, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.order = np.zeros(0, dtype=np.int64)
        self.extra_columns: list[tuple[str, int, callable]] = []
        """(title, width, trial -> str) columns added by features such as tests and labels."""

    def set_column(self, title: str, width: int, value=None) -> None:
        """Add or replace an extra column (`value(trial) -> str`); without `value`, remove it."""
        self.extra_columns = [c for c in self.extra_columns if c[0] != title]
        if value is not None:
            self.extra_columns.append((title, width, value))
        self.refresh()

    def set_order(self, order: np.ndarray, keep: int | None = None) -> None:
        """Show trials in `order`; keep the cursor on trial `keep` when it is still listed."""
        self.order = order
        cursor = 0
        if keep is not None:
            hits = np.nonzero(order == keep)[0]
            cursor = int(hits[0]) if len(hits) else 0
        self.set_row_count(len(order), cursor)

    @property
    def current_trial(self) -> int | None:
        if not self.row_count:
            return None
        return int(self.order[self.cursor])

    def columns(self, width: int) -> list[tuple[str, int]]:
        """Column titles and widths; on narrow panes the date, then the message count, give way to the task."""
        multi = len(self.session.datasets) > 1
        fixed = [("", 2), ("model", 18 if width >= 90 else 12), ("ep", 4), ("msgs", 5), ("date", 10)]
        if multi:
            fixed.insert(1, ("dataset", 12))
        fixed.extend((title, w) for title, w, _ in self.extra_columns)
        for optional in ("date", "msgs"):
            if width - sum(w + 1 for _, w in fixed) - 1 >= 20:
                break
            fixed = [c for c in fixed if c[0] != optional]
        used = sum(w + 1 for _, w in fixed)
        fixed.insert(1 + multi, ("task", max(8, width - used - 1)))
        return fixed

    def header(self, width: int, sort_key: str, reverse: bool) -> Text:
        """Column titles, the sorted one marked ▲ / ▼ (the badge column sorts by outcome)."""
        text = Text(no_wrap=True, overflow="crop")
        for title, w in self.columns(width):
            sorted_here = SORTED_BY.get(title, title) == sort_key
            label = title + ((" ▼" if reverse else " ▲") if sorted_here else "")
            cell = fit(label, w)
            text.append((cell.rstrip().rjust(w) if title in ("ep", "msgs") else cell) + " ", style="bold")
        return text

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        info = self.session.info(int(self.order[index]))
        symbol, badge_style = OUTCOME_BADGES[info.outcome]
        cells = {
            "": (f" {symbol}", badge_style),
            "dataset": (info.dataset, DIM),
            "task": (info.task or info.trial_name, None),
            "model": (short_model(info.model), None),
            "ep": (str(info.episodes).rjust(4), None),
            "msgs": (str(info.messages).rjust(5), DIM),
            "date": (info.date[:10], DIM),
        }
        for title, _, value in self.extra_columns:
            cells[title] = (value(info.id), None)
        segments = []
        for title, w in self.columns(width):
            text, style = cells[title]
            segments.append(Segment(fit(text, w) + " ", style))
        strip = Strip(segments).crop_extend(0, width, None)
        base = self._base_style + SELECTED if selected else self._base_style
        return strip.apply_style(base)

    def action_open(self) -> None:
        self.activate()

    def activate(self) -> None:
        self.post_message(self.Opened())
