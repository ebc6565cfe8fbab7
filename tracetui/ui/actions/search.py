"""Full-text search across the whole session (`s`, ctrl+f) and find in the open conversation (`/`).

Both read a query the same way: `/…/` is a regular expression, anything else a literal, and the match
ignores case unless the query has an upper-case letter (smart case, as in vim and ripgrep); `/…/i`
ignores case whatever the letters.
"""

from __future__ import annotations

import re

from textual import work
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...data.search import SearchCancelled, SearchResult, python_regex, search


def parse_query(text: str) -> tuple[str, bool, bool]:
    """(pattern, regex, ignore_case) of what the user typed."""
    flagged = len(text) > 3 and text.startswith("/") and text.endswith("/i")
    regex = flagged or (len(text) > 2 and text.startswith("/") and text.endswith("/"))
    pattern = text[1 : -2 if flagged else -1] if regex else text
    letters = re.sub(r"\\.", "", pattern) if regex else pattern
    return pattern, regex, flagged or not any(c.isupper() for c in letters)


def compile_query(text: str) -> re.Pattern[str]:
    """The Python pattern of a query; raises ValueError with a one-line message when invalid."""
    return python_regex(*parse_query(text))


class SearchActions:
    """Mixed into TriageScreen: the session search filter and the in-pane find."""

    search_result: SearchResult | None = None
    find_pattern: re.Pattern[str] | None = None

    def action_search(self) -> None:
        current = self.search_result.pattern if self.search_result else ""
        self.prompt.ask("search", "search every trial (/regex/; Esc cancels)", current)

    def start_search(self, text: str) -> None:
        try:
            compile_query(text)
        except ValueError as exc:
            self.status(str(exc))
            return
        self.status(f"Searching for {text!r}… (Esc cancels)")
        self.run_search(text)

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, text: str) -> None:
        worker = get_current_worker()
        pattern, regex, ignore_case = parse_query(text)
        progress = lambda f: self.app.call_from_thread(self.working, f"Searching for {text!r}… (Esc cancels)", f)  # noqa: E731
        waiting = lambda f: self.app.call_from_thread(self.working, "Search waits for the download… (Esc cancels)", f)  # noqa: E731
        try:
            result = search(
                self.session,
                pattern,
                regex=regex,
                ignore_case=ignore_case,
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
                waiting=waiting,
            )
        except SearchCancelled:
            self.app.call_from_thread(self._search_failed, "Search cancelled.")
            return
        except ValueError as exc:
            self.app.call_from_thread(self._search_failed, str(exc))
            return
        except SourceError as exc:  # the hub stopped answering while the search streamed from it
            self.app.call_from_thread(self._search_failed, f"Search stopped: {exc}")
            return
        self.app.call_from_thread(self._searched, text, result)

    def _search_failed(self, message: str) -> None:
        self.working("", None)
        self.status(message)

    def _searched(self, text: str, result: SearchResult) -> None:
        self.working("", None)
        self.search_result = result
        self.find_pattern = compile_query(text)
        self.trial = None  # show the first trial of the results afresh, jumping to its first match
        self.apply_filters()
        gb = result.bytes_scanned / 1e9
        rate = f"{gb / result.seconds:.1f} GB/s" if result.seconds > 0 else ""
        self.status(
            f"matches: {result.matched_trials:,} trials for {text!r} ({gb:.2f} GB, {rate}); n / N move, Esc clears"
        )

    def clear_search(self) -> None:
        self.search_result = None
        self.find_pattern = None
        self.conversation.find(None)
        self.apply_filters()
        self.status("Search cleared.")

    @property
    def search_mask(self):
        return self.search_result.trials if self.search_result is not None else None

    def highlight_matches(self) -> None:
        """After a trial is shown: highlight the active find/search and jump to its first match."""
        if self.find_pattern is None:
            return
        if self.conversation.find(self.find_pattern):
            self.conversation.goto_match(1)

    def action_find(self) -> None:
        self.prompt.ask("find", "find in this conversation (/regex/; Enter; Esc cancels)")

    def find_in_conversation(self, text: str) -> None:
        try:
            self.find_pattern = compile_query(text)
        except ValueError as exc:
            self.status(str(exc))
            return
        count = self.conversation.find(self.find_pattern)
        if count:
            position, total = self.conversation.goto_match(1)
            self.status(f"match {position}/{total} for {text!r} (n / N)")
        else:
            self.status(f"No match for {text!r} in what is shown (t unfolds reasoning).")

    def _goto_match(self, step: int) -> None:
        position, total = self.conversation.goto_match(step)
        self.status(f"match {position}/{total} (n / N)" if total else "No find active: / finds, s searches all.")

    def action_find_next(self) -> None:
        self._goto_match(+1)

    def action_find_prev(self) -> None:
        self._goto_match(-1)
