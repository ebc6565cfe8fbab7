"""Search every trial (`s`) and find in the conversation (`/`), then `n` / `N` through the matches.

The search runs in a worker (group "search": Esc cancels it) that posts its progress and `Searched`;
its matches become a filter (`mask`), and its pattern the find of every trial shown after it. A find
in the conversation only sets the pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Protocol

import numpy as np
from textual.message import Message
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ..evidence import FeatureHost
from ..format import counted
from ..widgets.bars import PromptBar, PromptMode
from ..work import WorkDone, WorkProgress, in_thread
from .query import compile_query, parse_query
from .routes import WhenWhole

if TYPE_CHECKING:
    from ...data.search import SearchResult

GROUP = "search"


@dataclass
class Searched(Message):
    """The session search is done: its matches become a filter."""

    text: str
    result: SearchResult


class SearchHost(FeatureHost, Protocol):
    """What the search uses of the triage screen."""

    @property
    def prompt(self) -> PromptBar: ...
    def apply_filters(self, keep: int | None = None) -> None: ...


class Search:
    def __init__(self, host: SearchHost, when_whole: WhenWhole) -> None:
        self.host = host
        self.when_whole = when_whole
        self.result: SearchResult | None = None
        self.pattern: re.Pattern[str] | None = None
        """What the conversation highlights: the last find's, or the search's."""

    @property
    def mask(self) -> np.ndarray | None:
        """The trials the search matched (None: no search)."""
        return self.result.trials if self.result is not None else None

    # --- s: search every trial -----------------------------------------------------------------
    def begin(self) -> None:
        current = self.result.pattern if self.result else ""
        self.host.prompt.ask(PromptMode.SEARCH, "search every trial (/regex/; Esc cancels)", current)

    def start(self, text: str) -> None:
        """The prompt's answer: search in a worker (once a growing list is whole), unless the query does
        not parse."""
        try:
            compile_query(text)
        except ValueError as exc:
            self.host.status(str(exc))
            return
        self.when_whole.run(f"Search for {text!r}", partial(self._begin, text))

    def _begin(self, text: str) -> None:
        self.host.status(f"Searching for {text!r}… (Esc cancels)")
        in_thread(self.host, partial(self._run, text), GROUP, "Search")

    def _run(self, text: str) -> None:
        worker = get_current_worker()
        post = self.host.post_message
        pattern, regex, ignore_case = parse_query(text)

        def progress(fraction: float) -> None:
            post(WorkProgress(f"Searching for {text!r}… (Esc cancels)", fraction))

        def waiting(fraction: float) -> None:
            post(WorkProgress("Search waits for the download… (Esc cancels)", fraction))

        from ...data.search import SearchCancelled, search  # the first search: off the start-up

        try:
            result = search(
                self.host.session,
                pattern,
                regex=regex,
                ignore_case=ignore_case,
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
                waiting=waiting,
            )
        except SearchCancelled:
            post(WorkDone("Search cancelled."))
            return
        except ValueError as exc:
            post(WorkDone(str(exc)))
            return
        except SourceError as exc:  # the hub stopped answering while the search streamed from it
            post(WorkDone(f"Search stopped: {exc}"))
            return
        post(Searched(text, result))

    def found(self, event: Searched) -> None:
        """The search is in: its matches filter the list (the screen shows its first trial afresh)."""
        host = self.host
        host.status_line.working("", None)
        self.result = result = event.result
        self.pattern = compile_query(event.text)
        host.apply_filters()
        gb = result.bytes_scanned / 1e9
        rate = f"{gb / result.seconds:.1f} GB/s" if result.seconds > 0 else ""
        host.status(
            f"matches: {counted(result.matched_trials, 'trial')} for {event.text!r} ({gb:.2f} GB, {rate}); n / N move, Esc clears",
            about=host.about_filters,
        )

    def clear(self) -> None:
        self.result = None
        self.pattern = None
        self.host.conversation.find(None)
        self.host.apply_filters()
        self.host.status("Search cleared.", about=self.host.about_filters)

    def grow(self, trials: int) -> None:
        """Trials joined the session (a job runs on): they were not searched, so they do not match."""
        if self.result is None:
            return
        grow = trials - len(self.result.trials)
        self.result = replace(
            self.result,
            trials=np.concatenate([self.result.trials, np.zeros(grow, dtype=bool)]),
            in_verifier=np.concatenate([self.result.in_verifier, np.zeros(grow, dtype=bool)]),
        )

    # --- /: find in the conversation; n / N ----------------------------------------------------
    def highlight(self) -> None:
        """After a trial is shown: highlight the active find/search and jump to its first match."""
        conversation = self.host.conversation
        if self.pattern is not None and conversation.find(self.pattern):
            conversation.goto_match(1)

    def find(self) -> None:
        self.host.prompt.ask(PromptMode.FIND, "find in this conversation (/regex/; Enter; Esc cancels)")

    def find_in_conversation(self, text: str) -> None:
        """The find prompt's answer."""
        host = self.host
        try:
            self.pattern = compile_query(text)
        except ValueError as exc:
            host.status(str(exc))
            return
        count = host.conversation.find(self.pattern)
        if count:
            position, total = host.conversation.goto_match(1)
            host.status(f"match {position}/{total} for {text!r} (n / N)", about=host.about_trial)
        else:
            host.status(f"No match for {text!r} in what is shown (t unfolds reasoning).", about=host.about_trial)

    def goto_match(self, step: int) -> None:
        conversation = self.host.conversation
        before = conversation.match_index
        position, total = conversation.goto_match(step)
        wrapped = before >= 0 and (position - 1 < before if step > 0 else position - 1 > before)
        where = ("; from the top" if step > 0 else "; from the bottom") if wrapped else ""
        self.host.status(
            f"match {position}/{total} (n / N{where})" if total else "No find active: / finds, s searches all.",
            about=self.host.about_trial,
        )
