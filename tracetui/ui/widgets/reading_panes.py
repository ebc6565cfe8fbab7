"""The triage screen's right-hand column, which shares its height between the trial list, the conversation,
the trial's findings and the verifier.

On a short terminal (80x24) the pane in use gets the room: 8 trial rows while you choose a trial (fewer
when fewer are listed), 3 while you read it (the trial's findings then take their lines from the verifier), a tall verifier while it has
focus (the findings hide meanwhile); `+` / `-` in the verifier and zoom (`z`) adjust the rest.
The container follows the screen's focus and zoom, and its own height, which is the screen's less the
bars around it.
"""

from __future__ import annotations

from textual.containers import Vertical
from textual.widget import Widget

from .bars import PromptBar
from .conversation import ConversationView
from .findings_panel import FindingsPanel
from .trial_list import TrialList
from .verifier_panel import VerifierPanel

LIST_ROWS = 8
"""Trial rows the list shows while you choose (list or sidebar focused): 8 fit at 80x24."""
SHORT_BODY = 30
"""Panes shorter than this together give the room to the pane in use: the list keeps a few rows
(`READING_ROWS`) while you read, and the verifier grows when focused."""
READING_ROWS = 3
VERIFIER_SHARE = 0.3
"""The verifier's share of the height, before `+` / `-`."""
CONVERSATION_KEEPS = 5
"""Lines the conversation keeps, its title included, however the others grow."""


class ReadingPanes(Vertical):
    """Holds the list pane (`#list-pane`), the conversation, the findings and the verifier, and sets their
    heights."""

    def __init__(self, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        self._verifier_delta = 0  # lines added or taken by + / -
        self._pane_in_use: Widget | None = None  # the prompt keeps the arrangement of the pane it serves

    def on_mount(self) -> None:
        self.watch(self.screen, "focused", self._focus_moved)
        self.watch(self.screen, "maximized", self.arrange_panes)

    def _focus_moved(self, focused: Widget | None) -> None:
        if focused is not None and not isinstance(focused, PromptBar):
            self._pane_in_use = focused
        self.arrange_panes()

    def on_resize(self) -> None:
        self.arrange_panes()

    def arrange_panes(self) -> None:
        """Heights of the trial list, the findings and the verifier; the conversation takes the rest."""
        if not self.is_mounted:
            return
        verifier = self.query_one(VerifierPanel)
        rows, base, limit = self._heights()
        self.query_one("#list-pane").styles.height = rows + 1
        height = max(3, min(base + self._verifier_delta, limit))
        verifier.styles.height = "1fr" if self.screen.maximized is verifier else height

    def _heights(self) -> tuple[int, int, int]:
        """(trial rows, the verifier's height before + / -, its greatest height); sets the findings'."""
        body = self.size.height
        short = body < SHORT_BODY
        verifier = self.query_one(VerifierPanel)
        findings = self.query_one(FindingsPanel)
        in_use = self._pane_in_use
        reading = in_use in (verifier, findings, self.query_one(ConversationView))
        rows = READING_ROWS if short and reading else max(LIST_ROWS, int(body * VERIFIER_SHARE) - 1)
        rows = min(rows, max(1, self.query_one(TrialList).row_count))  # a short list gives the rest away
        findings.give_room(short and in_use is verifier)
        base = max(3, round(body * VERIFIER_SHARE))
        if short and in_use is verifier:
            base = max(base, body // 2 + 2)
        elif short:
            base = max(3, base - findings.lines)  # the trial's findings take their lines from it
        limit = max(3, body - rows - 1 - findings.lines - CONVERSATION_KEEPS)
        return rows, base, limit

    def resize_verifier(self, delta: int) -> int | None:
        """`+` / `-` in the verifier panel: `delta` more (or fewer) lines, as far as they go; returns
        its new height, or None at its limit (3 lines, or the conversation's last 5)."""
        _, base, limit = self._heights()
        before = max(3, min(base + self._verifier_delta, limit))
        after = max(3, min(before + delta, limit))
        self._verifier_delta = after - base
        self.arrange_panes()
        return after if after != before else None
