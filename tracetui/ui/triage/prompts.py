"""The answers to the triage screen's prompt (find, search, export, episode, a question…): each mode's
answer goes to the part that asked. The filter-values prompt answers the sidebar; every other answer
acts on the conversation, which is kept in view and focused first. An empty answer (Esc) is dropped,
except the question before a file is replaced, where Esc keeps the file and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..widgets.bars import PromptBar, PromptMode
from .layout import PaneLayout


class PromptAnswers:
    def __init__(self, layout: PaneLayout, answers: Mapping[PromptMode, Callable[[str], object]]) -> None:
        self.layout = layout
        self.answers = answers

    def answered(self, event: PromptBar.Answered) -> None:
        answer = self.answers[event.mode]
        if event.mode is PromptMode.VALUES:
            answer(event.value)
            return
        self.layout.show_conversation()
        if event.value or event.mode is PromptMode.OVERWRITE:
            answer(event.value)
