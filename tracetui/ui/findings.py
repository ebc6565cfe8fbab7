"""Findings on the triage screen: the index built in the background, the Findings facet, the trial
list's findings column, the findings pane of the open trial, and the jumps to the evidence (Enter, `!`).

The screen owns one `FindingsController` and routes to it the messages its worker posts; what the
controller needs of the screen is `FindingsHost`. Until the
index is in, the facet is registered with no trial in it, so a `finding=` filter (given at start or
restored) is kept and lists nothing, and the list says it waits for the index.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np
from textual.message import Message
from textual.worker import Worker, get_current_worker

from ..data.findings_index import FACET, FindingsIndex, build_findings_index
from ..data.verifier_index import VerifierIndex
from ..findings import KIND_NAMES, Finding
from ..trace.sanitize import sanitize
from .evidence import FeatureHost, next_listed, reveal_message
from .format import counted
from .widgets.columns import Column
from .widgets.findings_panel import FindingsPanel, kind_style
from .widgets.reading_panes import ReadingPanes
from .work import in_thread

GROUP = "findings-index"
PROGRESS = "Finding what went wrong"
COLUMN = "findings"
COLUMN_MAX = 6
"""The findings column's widest (one letter per kind: `TCn`, under the title `!`, the key that steps
through them); narrow lists keep the first letters, the kinds that say most."""


@dataclass
class FindingsProgress(Message):
    fraction: float


@dataclass
class FindingsIndexed(Message):
    index: FindingsIndex


def evidence_pattern(content: str, finding: Finding) -> re.Pattern[str] | None:
    """The finding's evidence as the conversation shows it: the quoted part of the message's raw
    content (its JSON escapes read, or as it is), matched across any run of whitespace."""
    if finding.span is None:
        return None
    start, end = finding.span
    quoted = content[start:end]
    forms = [quoted]
    with contextlib.suppress(ValueError):  # not a JSON string's inside: the text as it is
        forms.insert(0, json.loads(f'"{quoted}"'))
    from ..data.search import loose_literal  # on first use: off the start-up

    patterns = [loose_literal(sanitize(form)) for form in forms]
    patterns = [p for p in dict.fromkeys(patterns) if p]
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


def worst_kind(findings: list[Finding]) -> str:
    """The kind that says most (the first in KINDS order)."""
    return min((f.kind for f in findings), key=KIND_NAMES.index)


class FindingsHost(FeatureHost, Protocol):
    """What the findings controller uses of the triage screen."""

    @property
    def findings_panel(self) -> FindingsPanel: ...
    @property
    def reading_panes(self) -> ReadingPanes: ...


class FindingsController:
    """What the triage screen shows of the findings."""

    def __init__(self, screen: FindingsHost) -> None:
        self.screen = screen
        self.session = screen.session
        self.index: FindingsIndex | None = None
        self.fraction = 0.0
        self.failure = ""
        self._has = np.zeros(0, dtype=bool)
        """Per trial: whether it has any finding (once the index is in)."""
        self._marker_width = 0
        """The longest trial's marker (its kinds' letters), found once per index: not per filter change."""
        self.hacked: np.ndarray | None = None
        """Per trial: whether it has a reward-hack finding; None until the index is in (the pass rate
        without hacks shows only then)."""
        if FACET not in self.session.facets.facets:
            self.session.facets.add(FindingsIndex([[] for _ in range(len(self.session))]).facet())

    @property
    def panel(self) -> FindingsPanel:
        return self.screen.findings_panel

    # --- the index, built in a worker ----------------------------------------------------------
    def start(self, verifiers: VerifierIndex | None = None) -> None:
        """Build (or read back) the index in a thread; `verifiers`, when built, spares reading the logs."""
        in_thread(self.screen, partial(self._build, verifiers), GROUP, "Findings index")

    def _build(self, verifiers: VerifierIndex | None) -> None:
        worker = get_current_worker()

        def progress(fraction: float) -> None:
            self.screen.post_message(FindingsProgress(fraction))

        try:
            index = build_findings_index(self.session, progress, lambda: worker.is_cancelled, verifiers)
        except InterruptedError:
            return
        self.screen.post_message(FindingsIndexed(index))

    def progress(self, fraction: float) -> None:
        self.fraction = fraction
        self._say(f"{PROGRESS}… {fraction:.0%}")
        self._say_why_empty()

    def indexed(self, index: FindingsIndex) -> None:
        """The index is in: the facet, the column and the pane show it (the screen then filters again)."""
        from ..data.stats import hacked_trials  # once the index is in: off the start-up

        self.index = index
        self._has = np.array([bool(found) for found in index.findings], dtype=bool)
        self._marker_width = max((len(index.marker(int(t))) for t in np.nonzero(self._has)[0]), default=0)
        self.hacked = hacked_trials(index)
        self.screen.trial_list.remove_column(COLUMN)  # `listed` makes it again, on this index
        self.session.facets.add(index.facet())
        self.show_trial(self.screen.trial)
        total = sum(len(found) for found in index.findings)
        self._say(f"{counted(total, 'finding')} in {counted(int(self._has.sum()), 'trial')} (! shows them one by one).")

    def _say(self, text: str) -> None:
        """Progress and the count in the message line, while it has nothing of the user's to say."""
        self.screen.status_line.news(text)

    def failed(self, worker: Worker[Any]) -> bool:
        """Whether `worker`, which raised, built the index: then the message line says so while it has
        nothing of the user's to say (and the list too if it was waiting for it; `!` says it again)."""
        if worker.group != GROUP:
            return False
        error = worker.error
        self.failure = sanitize(f"{type(error).__name__}: {error}".splitlines()[0])
        self._say(f"The findings could not be read ({self.failure}).")
        self._say_why_empty()
        return True

    # --- the trial list ------------------------------------------------------------------------
    def listed(self, order: np.ndarray) -> None:
        """After each filter change: the findings column shows while a listed trial has findings,
        and a list emptied by a `finding=` filter before the index is in says so."""
        self._say_why_empty()
        if not len(order):
            self.show_trial(None)
        if self.index is None:
            return
        trial_list = self.screen.trial_list
        wanted = bool(len(order)) and bool(self._has[order].any())
        if wanted == any(column.key == COLUMN for column in trial_list.extra_columns):
            return
        if not wanted:
            trial_list.remove_column(COLUMN)
            return
        index = self.index
        trial_list.set_column(
            Column(
                COLUMN,
                "!",
                min(COLUMN_MAX, self._marker_width),
                lambda trial, width: index.marker(trial)[:width],
                give_way=((36, 2),),
                style=lambda trial: kind_style(worst_kind(index.of(trial))) if self._has[trial] else None,
            )
        )

    def _say_why_empty(self) -> None:
        waiting = self.index is None and FACET in self.screen.state.selected
        trial_list = self.screen.trial_list
        if not waiting:
            text = ""
        elif self.failure:
            text = f"The findings could not be read ({self.failure}); x clears the filters."
        else:
            text = f"Waiting for the findings index… {self.fraction:.0%}"
        if text != trial_list.empty_text:
            trial_list.empty_text = text
            trial_list.refresh()

    def evidence_of(self, trial: int) -> list[int] | None:
        """The messages the trial's findings point at; None until the findings are in."""
        return None if self.index is None else [finding.message for finding in self.index.of(trial)]

    # --- the open trial ------------------------------------------------------------------------
    def show_trial(self, trial: int | None) -> None:
        """The pane lists the trial's findings (hidden when it has none)."""
        panel = self.panel
        lines = panel.lines
        panel.show(self.index.of(trial) if self.index is not None and trial is not None else [])
        if panel.lines != lines:
            self.screen.reading_panes.arrange_panes()

    def reveal(self, position: int, note: str = "") -> None:
        """The conversation, focused, at the message of the pane's finding `position`, its evidence
        highlighted as the current match (n / N go on to the same text elsewhere)."""
        panel, conversation = self.panel, self.screen.conversation
        finding = panel.findings[position]
        panel.mark_reached(position)
        head = f"Finding {position + 1}/{len(panel.findings)}: {finding.kind}"
        messages = conversation.history.messages if conversation.history is not None else ()  # the main history
        content = messages[finding.message].content if 0 <= finding.message < len(messages) else ""
        if not reveal_message(self.screen, finding.message, evidence_pattern(content, finding))[0]:
            self.screen.status(f"{head}: {finding.evidence}{note}", about=self.screen.about_trial)
            return
        self.screen.status(
            f"{head} at message {finding.message + 1}: {finding.evidence}{note}  (! next finding)",
            about=self.screen.about_trial,
        )

    def next_finding(self) -> None:
        """`!`: this trial's next finding; after its last, the first of the next listed trial that has any."""
        screen = self.screen
        if self.index is None:
            screen.status(
                f"The findings could not be read ({self.failure})."
                if self.failure
                else f"The findings are still being read ({self.fraction:.0%})…"
            )
            return
        panel = self.panel
        if panel.reached + 1 < len(panel.findings):
            self.reveal(panel.reached + 1)
            return
        note = next_listed(screen, self._has)
        if note is None:
            screen.status("No findings in the listed trials.", about=screen.about_filters)
            return
        self.reveal(0, note)
