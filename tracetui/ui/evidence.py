"""Jumps to the evidence of something said about a trial (a finding, an answer to a question): the
conversation at the message that shows it, the evidence highlighted as the current match, and the step
to the next listed trial that has any. One mechanism, so `!` and `@` behave alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from textual.message import Message
from textual.worker import Worker

from ..data.facets import FilterState
from ..data.session import Session
from .widgets.conversation import ConversationView
from .widgets.status_line import StatusLine
from .widgets.trial_list import TrialList


class EvidenceHost(Protocol):
    """What a jump uses of the triage screen."""

    @property
    def trial_list(self) -> TrialList: ...
    @property
    def conversation(self) -> ConversationView: ...
    def show_main_conversation(self) -> None: ...


class FeatureHost(EvidenceHost, Protocol):
    """What a feature that says things about trials (findings, answers) uses of the triage screen."""

    session: Session
    state: FilterState

    @property
    def trial(self) -> int | None: ...
    @property
    def status_line(self) -> StatusLine: ...
    def status(
        self, message: str, hold: bool = False, background: bool = False, about: Callable[[], object] | None = None
    ) -> None: ...
    def about_trial(self) -> object: ...
    def about_filters(self) -> object: ...
    def post_message(self, message: Message) -> bool: ...
    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Worker[Any]: ...


def reveal_message(host: EvidenceHost, message: int, pattern: re.Pattern[str] | None) -> tuple[bool, bool]:
    """The main conversation, focused, at `message`, with `pattern` highlighted in it as the current
    match (n / N then go on to the same text elsewhere); no highlight when the message does not show
    it. (whether the trial has such a message, whether the pattern is highlighted in it)."""
    host.show_main_conversation()
    conversation = host.conversation
    conversation.focus()
    if not 0 <= message < len(conversation.messages):
        return False, False
    conversation.goto_message(message)
    if pattern is None or not conversation.find(pattern):
        return True, False
    if not conversation.goto_match_in(message):
        conversation.find(None)  # the text shows elsewhere only: no highlight away from the message
        return True, False
    return True, True


def next_listed(host: EvidenceHost, has: np.ndarray) -> str | None:
    """Move the list to the next listed trial after the cursor for which `has[trial]` (wrapping) and
    show it: the note for the message line (" (from the top of the list)" after wrapping), or None
    when no listed trial has any."""
    trial_list = host.trial_list
    order, start = trial_list.order, trial_list.cursor
    for step in range(1, len(order) + 1):
        position = (start + step) % len(order)
        if has[order[position]]:
            trial_list.move_to(position)  # the screen shows the trial the cursor is on
            return " (from the top of the list)" if position <= start else ""
    return None
