"""Questions asked of the listed trials from the triage screen (`A`, and the palette), and their answers
as the app shows them: an `ask: NAME` facet per question, a list column for the one asked last, and
`@`, which steps through the answers' evidence as `!` steps through the findings' (`ui/evidence.py`).

A run is a thread worker (group "ask": Esc cancels it) that posts `AskNews`; the screen hands each to
its `AskController`. Answers arrive one by one: the facet, its counts and a filter on it follow them
a few times a second. The answers given before (to any question, by `tracetui ask` too) load after the
first frame.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from rich.style import Style
from textual.message import Message
from textual.timer import Timer
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...data.facets import ASK_PREFIX, MultiFacet
from ..evidence import FeatureHost, next_listed, reveal_message
from ..widgets.bars import PromptBar, PromptMode
from ..widgets.columns import Column
from ..widgets.verifier_panel import VerifierPanel
from ..work import in_thread
from .routes import WhenWhole

if TYPE_CHECKING:  # the rest of `tracetui.ask` (the prompt reads verifier logs) loads when first used, off start-up
    from ...ask.endpoint import Settings
    from ...ask.index import AskIndex
    from ...ask.run import Asked, Summary

GROUP = "ask"
COLUMN = "ask"
REFRESH = 0.5
"""Seconds between updates of the facet and the list while answers arrive."""
VALUE_STYLES = {
    "yes": Style(bold=True),
    "no": Style(dim=True),
    "unclear": Style(dim=True, italic=True),
    "unverified": Style(color="yellow"),
}


SHORT_VALUES = {"yes": "yes", "no": "no", "unclear": "?", "unverified": "unv"}
"""An answer in a narrow column."""


class AskNews(Message):
    """What an ask worker reports to its screen."""


@dataclass
class AskStarted(AskNews):
    index: AskIndex
    model: str
    budget: int
    total: int
    before: int
    tokens: int
    note: str


@dataclass
class AskAnswered(AskNews):
    asked: Asked
    done: int


@dataclass
class AskFinished(AskNews):
    text: str


@dataclass
class AnswersLoaded(AskNews):
    indexes: list[AskIndex]


class AskHost(FeatureHost, Protocol):
    """What the ask controller uses of the triage screen."""

    @property
    def verifier(self) -> VerifierPanel: ...
    @property
    def prompt(self) -> PromptBar: ...
    def facets_changed(self) -> None: ...
    def set_timer(self, delay: float, callback: Any) -> Timer: ...


class AskController:
    def __init__(self, screen: AskHost, evidence_of: Callable[[int], list[int] | None], when_whole: WhenWhole) -> None:
        self.screen = screen
        self.when_whole = when_whole
        self.evidence_of = evidence_of
        """The messages a trial's findings point at (None until the findings are in)."""
        self.session = screen.session
        self.indexes: dict[str, AskIndex] = {}
        """Every question with answers here, by facet name (`ask:NAME`)."""
        self.current: AskIndex | None = None
        """The question the column shows and `@` steps through: the one asked last."""
        self.question = ""
        self.budget: int | None = None
        """A trial's budget at the last run (for the estimate before the next)."""
        self.running: AskIndex | None = None
        self._total = 0
        self._failed = 0
        self._timer: Timer | None = None
        self._dirty = False
        """Answers came since the facet was last rebuilt."""
        self._revealed: int | None = None
        """The trial whose answer `@` showed last."""
        for name in screen.state.selected:  # a filter on a question lists nothing until its answers load
            if name.startswith(ASK_PREFIX) and name not in self.session.facets.facets:
                from ...ask.verify import VALUES

                empty = np.zeros(0, dtype=np.int64)
                self.session.facets.add(MultiFacet(name, f"ask: {name[len(ASK_PREFIX) :]}", list(VALUES), empty, empty))

    # --- the answers given before ---------------------------------------------------------------
    def load(self) -> None:
        in_thread(self.screen, self._load, "ask-load", "Answers")

    def _load(self) -> None:
        from ...ask.index import session_indexes

        self.screen.post_message(AnswersLoaded(session_indexes(self.session)))

    # --- asking ---------------------------------------------------------------------------------
    def begin(self) -> None:
        """`A`: the question prompt, saying how many trials it goes to and what that may cost."""
        from ...ask.prompt import DEFAULT_TRIAL_TOKENS, estimate_tokens

        if self.running is not None:
            self.screen.status("A question is being asked (Esc cancels it).")
            return
        if self.session.growing is not None:  # its answer waits for the whole list (`WhenWhole`)
            self.screen.prompt.ask(
                PromptMode.ASK, "a yes/no question for the listed trials, asked once the list is whole", self.question
            )
            return
        order = self.screen.trial_list.order
        if not len(order):
            self.screen.status("No trials listed to ask (x clears the filters).", about=self.screen.about_filters)
            return
        tokens = estimate_tokens(self.session, order, self.budget or DEFAULT_TRIAL_TOKENS)
        count = f"{len(order):,} listed trial{'s' * (len(order) != 1)}"
        self.screen.status(f"A question to the {count} costs ~{tokens:,} prompt tokens at most.")
        self.screen.prompt.ask(
            PromptMode.ASK, f"ask the {count} a yes/no question (Enter asks, Esc cancels)", self.question
        )

    def ask(self, question: str) -> None:
        """The prompt's answer: ask it of the trials listed, in a worker (once a growing list is whole),
        unless no endpoint is set."""
        from ...ask.endpoint import resolve_settings
        from ...store.config import config_path, load_config

        question = " ".join(question.split())
        config, _ = load_config()
        try:
            settings = resolve_settings(config.ask, os.environ, where=str(config_path()))
        except SourceError as exc:
            self.screen.status(f'{exc} (see README, "Ask every trial").')
            return
        self.question = question
        self.when_whole.run(f"Asking {question!r}", partial(self._begin, question, settings))

    def _begin(self, question: str, settings: Settings) -> None:
        trials = [int(t) for t in self.screen.trial_list.order]
        if not trials:  # asked while the list grew, and none listed once it was whole
            self.screen.status("No trials listed to ask (x clears the filters).", about=self.screen.about_filters)
            return
        self.screen.status(f"Asking {settings.endpoint.url} which model it serves…")
        in_thread(self.screen, partial(self._run, question, trials, settings), GROUP, "Ask")

    def _run(self, question: str, trials: list[int], settings: Settings) -> None:
        """In the worker's thread: connect, then ask, posting the news."""
        from ...ask.client import EndpointError
        from ...ask.index import AskIndex
        from ...ask.prompt import estimate_tokens
        from ...ask.run import AskRun, connect

        worker = get_current_worker()
        post = self.screen.post_message
        try:
            target = connect(settings, question)
        except (EndpointError, SourceError) as exc:
            post(AskFinished(f"Cannot ask {settings.endpoint.url}: {exc}"))
            return
        run = AskRun(self.session, trials, target.book, target.client, target.budget, settings.parallel, self._evidence)
        new = run.unanswered()
        tokens = estimate_tokens(self.session, new, target.budget)
        index = AskIndex(target.book, self.session)
        before = len(trials) - len(new)
        post(AskStarted(index, target.model.id, target.budget, len(trials), before, tokens, target.note))
        done = 0

        def answered(asked: Asked) -> None:
            nonlocal done
            done += 1
            post(AskAnswered(asked, done))

        summary = run.run(answered, lambda: worker.is_cancelled)
        post(AskFinished(self._summary_line(index.name, summary, target.book.problem)))

    def _evidence(self, trial: int) -> list[int]:
        """A long trial keeps its findings' messages: from the index when it is in."""
        known = self.evidence_of(trial)
        if known is not None:
            return known
        from ...ask.run import findings_evidence

        return findings_evidence(self.session, trial)

    @staticmethod
    def _summary_line(name: str, summary: Summary, problem: str | None) -> str:
        how = "cancelled" if summary.cancelled else "stopped" if summary.stopped else "done"
        text = f"ask:{name} {how}: {summary.answered:,} answered, {summary.cached:,} before, {summary.failed:,} failed"
        if summary.stopped:
            text += f" ({summary.stopped})"
        if summary.cancelled or summary.stopped:
            text += "; A asks the rest"
        return text + (f". {problem}" if problem else ". @ shows each answer's evidence.")

    # --- news from the worker -------------------------------------------------------------------
    def news(self, event: AskNews) -> None:
        if isinstance(event, AskStarted):
            self._started(event)
        elif isinstance(event, AskAnswered):
            self._answered(event)
        elif isinstance(event, AskFinished):
            self._finished(event)
        elif isinstance(event, AnswersLoaded):
            self._loaded(event)

    def _started(self, event: AskStarted) -> None:
        index = event.index
        self.running = index
        self.budget = event.budget
        self._total, self._failed = event.total, 0
        self._show(index)
        self._timer = self.screen.set_timer(REFRESH, self._tick)
        before = f", {event.before:,} answered before" if event.before else ""
        note = f" ({event.note})" if event.note else ""
        self.screen.status_line.working(
            f"Asking {event.model} about {event.total:,} trials{before}: ~{event.tokens:,} prompt tokens{note} (Esc cancels)",
            0.0,
        )

    def _answered(self, event: AskAnswered) -> None:
        asked, index = event.asked, self.running
        if index is None:
            return
        if asked.answer is not None:
            index.add(asked.trial, asked.answer)
            self._dirty = True
        elif asked.failure != "cancelled":
            self._failed += 1
            name = self.session.info(asked.trial).trial_name or f"trial {asked.trial}"
            self.screen.status(f"{name}: {asked.failure}", hold=True)
        failed = f", {self._failed:,} failed" if self._failed else ""
        self.screen.status_line.working(
            f"Asking ask:{index.name}: {event.done:,}/{self._total:,}{failed} (Esc cancels)",
            event.done / max(1, self._total),
        )

    def _tick(self) -> None:
        """While answers arrive: the facet, its counts and the list follow them."""
        if self.running is None:
            return
        if self._dirty:
            self._refresh(self.running)
        self._timer = self.screen.set_timer(REFRESH, self._tick)

    def _finished(self, event: AskFinished) -> None:
        index, self.running = self.running, None
        if self._timer is not None:
            self._timer.stop()
        self.screen.status_line.working("", None)
        if index is not None:
            self._refresh(index)
        self.screen.status(event.text)

    def _loaded(self, event: AnswersLoaded) -> None:
        fresh = [index for index in event.indexes if index.facet_name not in self.indexes]
        for index in fresh:
            self.indexes[index.facet_name] = index
            self.session.facets.add(index.facet())
        if fresh and self.current is None:
            self._column(fresh[-1])
        if fresh:
            self.screen.facets_changed()

    def _show(self, index: AskIndex) -> None:
        """A question being asked: its facet (answers before included) and its column."""
        self.indexes[index.facet_name] = index
        self._column(index)
        self._refresh(index)

    def _refresh(self, index: AskIndex) -> None:
        self._dirty = False
        self.session.facets.add(index.facet())
        self.screen.facets_changed()
        self.screen.trial_list.refresh()

    def _column(self, index: AskIndex) -> None:
        self.current = index
        self._revealed = None
        width = max(3, min(10, len(index.name)))

        def cell(trial: int, width: int) -> str:
            answer = index.of(trial)
            if answer is None:
                return ""
            return answer.value if len(answer.value) <= width else SHORT_VALUES[answer.value][:width]

        def style(trial: int) -> Style | None:
            answer = index.of(trial)
            return VALUE_STYLES[answer.value] if answer is not None else None

        title = index.name if len(index.name) <= width else index.name[: width - 1] + "…"
        self.screen.trial_list.set_column(Column(COLUMN, title, width, cell, give_way=((33, 3), (52, 0)), style=style))

    # --- @: the evidence of each answer ---------------------------------------------------------
    def next_answer(self) -> None:
        """`@`: the open trial's answer to the question asked last, then the next listed trial's."""
        index, screen = self.current, self.screen
        if index is None:
            screen.status("No question asked yet: A asks the listed trials one.")
            return
        trial = screen.trial
        if trial is not None and index.of(trial) is not None and self._revealed != trial:
            self._reveal(index, trial, "")
            return
        note = next_listed(screen, index.has(len(self.session)))
        if note is None or screen.trial is None:
            screen.status(f"No listed trial has an answer to ask:{index.name}.", about=screen.about_filters)
            return
        self._reveal(index, screen.trial, note)

    def _reveal(self, index: AskIndex, trial: int, note: str) -> None:
        answer = index.of(trial)
        assert answer is not None
        self._revealed = trial
        screen = self.screen
        said = f"“{answer.quote}” {answer.reason}".strip() if answer.quote else answer.reason
        head = f"ask:{index.name} = {answer.value}"
        from ...ask.verify import quote_pattern

        pattern = quote_pattern(answer.quote)
        if answer.in_verifier and pattern is not None:
            panel = screen.verifier
            panel.display = True
            panel.focus()
            if panel.find(pattern):
                panel.goto_match(1)
            screen.status(f"{head}, in the verifier's result: {said}{note}  (@ next answer)", about=screen.about_trial)
            return
        message = answer.message if answer.message is not None else answer.cited
        where = f"at message {message + 1}" if message is not None else "citing no message"
        if answer.message is None and answer.quote:
            where = f"unverified: the quote is not in the trial ({where})"
        if message is None:
            screen.show_main_conversation()
            screen.status(f"{head}, {where}: {said}{note}  (@ next answer)", about=screen.about_trial)
            return
        highlight = pattern if answer.message is not None else None
        _, found = reveal_message(screen, message, highlight)
        conversation = screen.conversation
        if highlight is not None and not found and not conversation.think_all:  # the quote is in folded reasoning
            conversation.toggle_thinking()
            reveal_message(screen, message, highlight)
        screen.status(f"{head} {where}: {said}{note}  (@ next answer)", about=screen.about_trial)
