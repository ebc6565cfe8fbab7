"""How the triage screen shares its height between the trial list, the conversation, the findings
and the verifier.

On a short terminal (80x24) the pane in use gets the room: 8 trial rows while you choose a trial,
3 while you read it (the trial's findings then take their lines from the verifier), a tall verifier
while it has focus (the findings hide meanwhile); `+` / `-` and zoom (`z`) adjust the rest.
"""

from __future__ import annotations

from ..widgets.bars import PromptBar

LIST_ROWS = 8
"""Trial rows the list shows while you choose (list or sidebar focused): 8 fit at 80x24."""
SHORT_BODY = 30
"""Panes shorter than this together give the room to the pane in use: the list keeps a few rows
(`READING_ROWS`) while you read, and the verifier grows when focused."""
READING_ROWS = 3
CHROME_LINES = 4
"""The header, position, status and key lines around the panes."""


class PaneArrangement:
    """Mixed into TriageScreen (needs `trial_list`, `conversation`, `verifier`, `findings`, `prompt`)."""

    _verifier_delta = 0  # lines added or taken by + / -
    _pane_in_use = None  # the pane last focused (a prompt keeps the arrangement of the pane it serves)

    def on_resize(self) -> None:
        self.arrange_panes()

    def on_descendant_focus(self, event) -> None:
        if not isinstance(event.widget, PromptBar):
            self._pane_in_use = event.widget
        self.arrange_panes()

    def watch_maximized(self) -> None:
        self.arrange_panes()

    def arrange_panes(self) -> None:
        """Heights of the trial list and the verifier. On a short terminal the pane in use gets the room:
        8 trial rows while choosing, 3 while reading, a tall verifier when it has focus."""
        if not self.is_mounted:
            return
        body = self.size.height - CHROME_LINES - self.prompt.display
        short = body < SHORT_BODY
        focused = self._pane_in_use
        findings = self.findings.panel
        reading = focused in (self.conversation, findings, self.verifier)
        rows = READING_ROWS if short and reading else max(LIST_ROWS, int(body * 0.3) - 1)
        self.query_one("#list-pane").styles.height = rows + 1
        findings.give_room(short and focused is self.verifier)
        verifier = max(3, round(body * 0.3) + self._verifier_delta)
        if short and focused is self.verifier:
            verifier = max(verifier, body // 2 + 2)
        elif short:
            verifier = max(3, verifier - findings.lines)  # the trial's findings take their lines from it
        verifier = min(verifier, max(3, body - rows - 1 - findings.lines - 5))  # the conversation keeps 4 lines
        self.verifier.styles.height = "1fr" if self.maximized is self.verifier else verifier

    def resize_verifier(self, delta: int) -> None:
        """`+` / `-` in the verifier panel: grow or shrink it by whole lines, from the height it shows."""
        shown = self.verifier.outer_size.height
        self._verifier_delta = shown + delta - round((self.size.height - CHROME_LINES) * 0.3)
        self.arrange_panes()
