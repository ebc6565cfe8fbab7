"""The findings pane: what went wrong in the open trial (see `tracetui.findings`), one finding a line.

It shows under the conversation only while the trial has findings. Enter on one posts `Chosen`; the
screen then shows the message that shows it in the conversation, with the evidence highlighted.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.message import Message
from textual.strip import Strip

from ...findings import HACKS, KINDS, Finding, marker
from .. import keymap
from ..format import fit
from .cursor_list import CursorList

MAX_ROWS = 3
"""Findings shown at once; more scroll (a trial rarely has more)."""
SELECTED = Style(reverse=True)
DIM = Style(dim=True)
KIND_WIDTH = max(len(kind.name) for kind in KINDS)
_STYLES = {
    **dict.fromkeys(HACKS, Style(color="red", bold=True)),
    **dict.fromkeys(("timeout", "context-overflow", "infra-error"), Style(color="magenta", bold=True)),
    **dict.fromkeys(("repeat-loop", "parse-error-loop", "no-tests-run"), Style(color="yellow")),
    "summarized": DIM,
}


def kind_style(kind: str) -> Style:
    """Red for what games the verifier, magenta for what broke the run, yellow for wasted or missing work."""
    return _STYLES.get(kind, DIM)


def kind_badge(kind: str) -> tuple[str, Style]:
    """The kind's letter (as in the trial list's findings column) and its style."""
    return marker((kind,)) or "?", kind_style(kind)


class FindingsPanel(CursorList):
    BINDINGS = [*keymap.FINDINGS]
    SHOWS_FOCUS = True
    """The cursor shows only while the pane has focus (elsewhere ▶ marks the finding shown)."""
    CLICKS_TO_ACTIVATE = 1

    @dataclass
    class Chosen(Message):
        """Enter (or a click) on a finding: `position` in the pane's list."""

        position: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: list[Finding] = []
        self.reached = -1
        """The finding last shown in the conversation (marked ▶), -1 for none yet."""
        self.giving_room = False
        self.display = False

    @property
    def lines(self) -> int:
        """Lines the pane takes (its title included); 0 while hidden."""
        return 1 + min(len(self.findings), MAX_ROWS) if self.findings and not self.giving_room else 0

    def give_room(self, give: bool) -> None:
        """Hide while `give` (a short terminal's verifier in use needs the lines), else show if any."""
        self.giving_room = give
        self.display = bool(self.lines)
        self.styles.height = self.lines

    def show(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.reached = -1
        self.give_room(self.giving_room)
        self._title()
        self.set_row_count(len(findings), 0)

    def _title(self) -> None:
        """The title says the count and the keys, in fewer words when the pane is narrow."""
        count = f"findings ({len(self.findings)})"
        width = self.size.width - 4  # the border's corners and the title's spaces
        versions = (f"{count} · Enter shows the evidence · ! next", f"{count} · Enter: evidence · ! next", count)
        self.border_title = next((v for v in versions if len(v) <= width), count)

    def on_resize(self) -> None:
        super().on_resize()
        self._title()

    def mark_reached(self, position: int) -> None:
        self.reached = position
        self.move_to(position)
        self.refresh()

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        finding = self.findings[index]
        where = f"#{finding.message + 1}" if finding.message >= 0 else ""
        evidence = max(1, width - 2 - 2 - KIND_WIDTH - 1 - 7)
        segments = [
            Segment("▶ " if index == self.reached else "  ", DIM),
            Segment(*kind_badge(finding.kind)),
            Segment(" "),
            Segment(fit(finding.kind, KIND_WIDTH) + " "),
            Segment(f"{where:<6} ", DIM),
            Segment(fit(finding.evidence, evidence)),
        ]
        return self.line_strip(segments, width, SELECTED if selected and self.has_focus else None)

    def action_open(self) -> None:
        self.activate()

    def activate(self) -> None:
        if self.findings:
            self.post_message(self.Chosen(self.cursor))
