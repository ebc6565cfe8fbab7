"""The triage screen: filter sidebar, trial list, conversation pane and verifier panel.

The screen owns the view state (filters, sort, selected trial, search) and turns it into data-layer
calls; the widgets only display what they are given and post messages back. Its parts that are not
widgets (labels, the query syntax, the pager and clipboard) live in `ui/triage/`; background work
reports through messages (`ui/work.py`).
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState, get_current_worker

from ...data.errors import SourceError
from ...data.facets import ASK_PREFIX, FilterState
from ...data.ordering import SORT_KEYS
from ...data.search import SearchCancelled, SearchResult, search
from ...data.session import Applied, Session
from ...data.verifier_index import VerifierIndex, build_verifier_index
from ...render.block import Block
from ...render.highlight import warm_up as warm_up_highlighting
from ...store.labels import Flushed
from ...trace.sanitize import sanitize
from .. import keymap
from ..commands import SortCommands
from ..filter_commands import FilterValueCommands
from ..findings import FindingsController, FindingsIndexed, FindingsProgress
from ..format import counted
from ..task_health import show_task_health
from ..triage.ask import AskController, AskNews
from ..triage.browser import Download, deliveries, download_name, in_browser
from ..triage.external import EDITOR, PAGER, copy_text, open_external
from ..triage.fetch import Fetched, FetchFailed, TrialFetch
from ..triage.labels import RETRY_SECONDS, LabelBook
from ..triage.lines import filters_text, header_versions, position_versions
from ..triage.live import LiveJobs
from ..triage.query import compile_query, parse_query
from ..widgets.bars import InfoBar, PromptBar, PromptMode
from ..widgets.columns import Column
from ..widgets.conversation import ConversationView
from ..widgets.download_bar import DownloadBar
from ..widgets.facet_list import FacetList
from ..widgets.findings_panel import FindingsPanel
from ..widgets.line_view import Notice
from ..widgets.reading_panes import ReadingPanes
from ..widgets.sidebar import Sidebar
from ..widgets.status_line import StatusLine
from ..widgets.trial_list import TrialList, TrialListHeader
from ..widgets.verifier_panel import VerifierPanel
from ..work import WorkDone, WorkProgress, failure_line

ALWAYS_SHOWN = ("outcome", "result", "model", "task")
SHOWN_WHEN_VARIED = ("agent", "model_provider", "trace_source", "dataset")
SHOWN_FIRST = ("outcome", "finding", ASK_PREFIX)
"""What went wrong comes right after the outcome, once the findings are in; then the answers to the
questions asked (`ask:NAME`)."""
INDEXING = "Reading verifier logs"
UNINDEXED_SCAN = 2000
"""Trials F parses on the spot, looking for the next failure, before the background index is in."""
NAME_PLACEHOLDER = "& task, trial…"
"""The name filter's box says what it matches and its key (`&`; Enter or Esc goes back to the list)."""
SAVE_DELAY = 1.0
"""Seconds after the last change that the view is saved: each save waits for the disk."""


def tests_cell(summary: str, width: int) -> str:
    """The tests column: "2/3 tests" or "score 0.6", just the figure when narrow."""
    if width >= len(summary) or " " not in summary:
        return summary
    return summary.split(" ")[0] if summary.endswith(" tests") else summary.split(" ")[-1]


def _shown_order(name: str) -> int:
    kind = ASK_PREFIX if name.startswith(ASK_PREFIX) else name
    return SHOWN_FIRST.index(kind) if kind in SHOWN_FIRST else len(SHOWN_FIRST)


class VerifiersIndexed(Message):
    """The verifier index is in: the tests column, the failed-test facet, F over every trial."""

    def __init__(self, index: VerifierIndex) -> None:
        super().__init__()
        self.index = index


class Searched(Message):
    """The session search is done: its matches become a filter."""

    def __init__(self, text: str, result: SearchResult) -> None:
        super().__init__()
        self.text = text
        self.result = result


class StoreRetried(Message):
    """The label store was tried again while changes were held in memory (`flushed`: it took them)."""

    def __init__(self, flushed: Flushed | None) -> None:
        super().__init__()
        self.flushed = flushed


class TriageScreen(Screen[None]):
    BINDINGS = [*keymap.APP]
    COMMANDS = {SortCommands, FilterValueCommands}
    ALLOW_IN_MAXIMIZED_VIEW = "Footer, PromptBar, #position, #status-row"
    """A zoomed pane keeps the prompt (find, episode), the position and message lines and the keys."""

    state: var[FilterState] = var(FilterState, init=False)
    """The filters: the one copy, which the sidebar is bound to; a change applies them."""

    def __init__(self, session: Session, state: FilterState | None = None, trial: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.labels = LabelBook(session)
        if state is None and trial is None:  # nothing asked for: reopen where the user left these datasets
            state, trial = self.labels.saved_view()
        self.set_reactive(TriageScreen.state, state or FilterState())
        self.sort_key = "task"
        self.sort_reverse = False
        self._shown: int | None = None
        """The trial the panes show (or are reading from the hub): the list's cursor's, once shown."""
        self._start_trial = trial
        self._overwriting = ""
        """The export path the user is asked about (the file is there)."""
        self._compared: dict[int, int] = {}
        """The attempt each trial was last compared with: `c` offers it first again."""
        self._subagent: int | None = None
        """The sub-agent conversation shown (an index into history.subagents); None: the main history."""
        self.verifier_index: VerifierIndex | None = None
        self.search_result: SearchResult | None = None
        self.find_pattern: re.Pattern[str] | None = None
        self._save_timer: Timer | None = None
        self._answers: dict[PromptMode, Callable[[str], object]] = {
            PromptMode.FIND: self.find_in_conversation,
            PromptMode.SEARCH: self.start_search,
            PromptMode.EXPORT: self.export_to,
            PromptMode.OVERWRITE: self._overwrite_answered,
            PromptMode.EPISODE: self.goto_episode,
        }
        """What each prompt's answer does (the value filter's answer is the sidebar's)."""
        self._trial_list = TrialList(session, id="trials")
        self.fetch = TrialFetch(self, session)
        self.findings = FindingsController(self)
        self.live = LiveJobs(self)
        self.asks = AskController(self)
        self._answers[PromptMode.ASK] = self.asks.ask

    def compose(self) -> ComposeResult:
        yield InfoBar(id="header")
        with Horizontal(id="body"):
            with Sidebar(id="sidebar"):
                yield Input(self.state.text, placeholder=NAME_PLACEHOLDER, id="name-filter")
                yield FacetList(id="facets").data_bind(TriageScreen.state)
            with ReadingPanes(id="main"):
                with Vertical(id="list-pane"):
                    yield TrialListHeader(self.trial_list, id="list-header")
                    yield self.trial_list
                yield ConversationView(id="conversation")
                yield FindingsPanel(id="findings")
                yield VerifierPanel(id="verifier")
        yield PromptBar(id="prompt")
        yield InfoBar(id="position")
        yield StatusLine(DownloadBar(self.session, id="download"), id="status-row")
        yield Footer()

    # --- shortcuts -----------------------------------------------------------------------------
    @property
    def trial_list(self) -> TrialList:
        """The trial list, whose cursor is the selected trial (kept here: it answers after unmount too)."""
        return self._trial_list

    @property
    def conversation(self) -> ConversationView:
        return self.query_one(ConversationView)

    @property
    def verifier(self) -> VerifierPanel:
        return self.query_one(VerifierPanel)

    @property
    def facet_list(self) -> FacetList:
        return self.query_one(FacetList)

    @property
    def findings_panel(self) -> FindingsPanel:
        return self.query_one(FindingsPanel)

    @property
    def reading_panes(self) -> ReadingPanes:
        return self.query_one(ReadingPanes)

    @property
    def prompt(self) -> PromptBar:
        return self.query_one(PromptBar)

    @property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    def on_mount(self) -> None:
        self._report_store()
        self._labels_column()
        show_task_health(self.session, self.trial_list)
        self.conversation.border_title = "conversation"
        self.verifier.border_title = "verifier"
        self._show_facets()
        self.watch(self.trial_list, "cursor", self._show_selected, init=False)
        self.watch(self, "maximized", self.status_line.recheck, init=False)
        self.watch(self, "focused", self.status_line.recheck, init=False)  # the sidebar's width follows it
        self.apply_filters(keep=self._start_trial)
        self.trial_list.focus()
        if self.session.notes:  # what opening skipped (bad JSON Lines lines): said once
            self.status("; ".join(self.session.notes), hold=True)
        self.call_after_refresh(self._settle)
        self.set_interval(RETRY_SECONDS, self._retry_store)
        self.live.start()

    def _settle(self) -> None:
        """After the first frame: keep the long-lived objects out of the garbage collector's scans
        (its pauses were most of the interaction p95), then start the background work."""
        gc.freeze()
        self.set_timer(0.3, self.index_verifiers)
        self.asks.load()
        self.set_timer(0.5, warm_up_highlighting)

    def _show_facets(self) -> None:
        """The sidebar's facets: the core ones, the others when they vary, and any added later."""
        facets = self.session.facets
        totals = facets.apply(FilterState()).counts
        names = [*ALWAYS_SHOWN, *(n for n in SHOWN_WHEN_VARIED if int(np.count_nonzero(totals[n])) > 1)]
        names += [n for n in facets.facets if n not in ALWAYS_SHOWN + SHOWN_WHEN_VARIED and totals[n].any()]
        names.sort(key=_shown_order)
        self.facet_list.set_facets([facets.facets[n] for n in names], totals, {"model": self.trial_list.model_names})

    # --- background work -----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="verifier-index", exit_on_error=False, description=INDEXING)
    def index_verifiers(self) -> None:
        """Parse every trial's verifier log in the background: the tests column and failed-test facet."""
        worker = get_current_worker()

        def progress(fraction: float) -> None:
            self.post_message(WorkProgress(f"{INDEXING}…", fraction, background=True))

        def waiting(fraction: float) -> None:
            self.post_message(WorkProgress(f"{INDEXING} after the download…", fraction, background=True))

        try:
            index = build_verifier_index(self.session, progress, lambda: worker.is_cancelled, waiting)
        except InterruptedError:
            return
        except SourceError as exc:  # the hub stopped answering while the logs streamed from it
            self.post_message(WorkDone(f"Verifier logs: {exc}"))
            return
        self.post_message(VerifiersIndexed(index))

    @on(VerifiersIndexed)
    def _verifiers_indexed(self, event: VerifiersIndexed) -> None:
        self.use_verifier_index(event.index)
        self._show_facets()
        self.apply_filters()
        gc.freeze()
        self.status_line.news("")
        self.findings.start(event.index)

    def use_verifier_index(self, index: VerifierIndex) -> None:
        """The tests column and the failed-test facet from `index`."""
        self.verifier_index = index
        self.session.facets.add(index.facet())
        show_task_health(self.session, self.trial_list, index)
        self.trial_list.set_column(
            Column(
                "tests",
                "tests",
                9,
                lambda trial, width: tests_cell(index.short[trial], width),
                give_way=((35, 5), (55, 0)),
                right=True,
            )
        )

    # --- findings (see FindingsController) -----------------------------------------------------
    @on(FindingsProgress)
    def _findings_progress(self, event: FindingsProgress) -> None:
        self.findings.progress(event.fraction)

    @on(FindingsIndexed)
    def _findings_indexed(self, event: FindingsIndexed) -> None:
        self.findings.indexed(event.index)
        self._show_facets()
        self.apply_filters(keep=self._start_trial if self.trial is None else None)
        gc.freeze()

    @on(FindingsPanel.Chosen)
    def _finding_chosen(self, event: FindingsPanel.Chosen) -> None:
        self.findings.reveal(event.position)

    def action_next_finding(self) -> None:
        self.findings.next_finding()

    # --- questions asked of the listed trials (see AskController) ------------------------------
    @on(AskNews)
    def _ask_news(self, event: AskNews) -> None:
        self.asks.news(event)

    def action_ask(self) -> None:
        self.asks.begin()

    def action_next_answer(self) -> None:
        self.asks.next_answer()

    def facets_changed(self) -> None:
        """A feature registered or changed a facet: the sidebar and the list follow."""
        self._show_facets()
        self.apply_filters()

    def evidence_of(self, trial: int) -> list[int] | None:
        """The messages the trial's findings point at; None until the findings are in."""
        index = self.findings.index
        return None if index is None else [finding.message for finding in index.of(trial)]

    @on(WorkProgress)
    def _work_progress(self, event: WorkProgress) -> None:
        if not event.background:
            self.status_line.working(event.text, event.fraction)
        else:
            self.status_line.news(f"{event.text} {event.fraction:.0%}")

    @on(WorkDone)
    def _work_done(self, event: WorkDone) -> None:
        self.status_line.working("", None)
        self.status(event.text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that raised: one line in the message line, and the app goes on."""
        if event.state != WorkerState.ERROR:
            return
        if self.findings.failed(event.worker):
            return
        self.status_line.working("", None)
        self.status(failure_line(event.worker))

    def status(
        self, message: str, hold: bool = False, background: bool = False, about: Callable[[], object] | None = None
    ) -> None:
        """The message line: what the last action did (the position line above says where we are);
        `about` is the state the message describes (`about_filters`, `about_trial`…): it goes with it."""
        self.status_line.say(message, hold, background, about)

    # What messages describe: each goes from the message line once what it returns changes.
    def about_filters(self) -> object:
        return self.state, self.search_result, self.sort_key, self.sort_reverse

    def about_trial(self) -> object:
        return self._shown, self.conversation.title

    def about_message(self) -> object:
        return self._shown, self.conversation.title, self.conversation.current

    def about_listed(self) -> object:
        return bool(len(self.trial_list.order))

    # --- filtering and sorting -----------------------------------------------------------------
    def watch_state(self) -> None:
        self.apply_filters()

    def apply_filters(self, keep: int | None = None) -> None:
        result = self.session.facets.apply(self.state, self.search_mask)
        order = self.session.ordering.sort(result.visible, self.sort_key, self.sort_reverse)
        self.trial_list.set_order(order, keep=keep if keep is not None else self.trial)
        self.reading_panes.arrange_panes()  # a short list gives its rows to the conversation
        self.findings.listed(order)
        self.facet_list.update(result)
        self.trial_list.set_sort(self.sort_key, self.sort_reverse)
        self._update_header(order)
        self.schedule_save()
        if not len(order):
            if self._shown is not None:  # said once, when the list empties
                self.status("No trials match these filters (x clears them).", about=self.about_listed)
            self._shown = None
            self.conversation.show((), None)
            self.verifier.show(None, "unknown", None)
        else:
            self._show_selected()
        self.status_line.recheck()

    @property
    def search_mask(self) -> np.ndarray | None:
        return self.search_result.trials if self.search_result is not None else None

    def _update_header(self, order: np.ndarray) -> None:
        search = self.search_result.pattern if self.search_result is not None else None
        filters = filters_text(self.state, self.trial_list.model_names, search)
        versions = header_versions(self.session, order, filters, self.findings.hacked, unsaved=self.labels.unsaved)
        self.query_one("#header", InfoBar).show_versions(*versions)

    def toggle_filter(self, facet: str, label: str) -> None:
        """A filter value on or off (the sidebar, the command palette)."""
        self.state = self.state.toggled(facet, label)
        shown = f"{facet}={self.facet_list.shown_label(facet, label)}"
        on = label in self.state.selected.get(facet, ())
        self.status(
            f"Filter {shown} on: {counted(len(self.trial_list.order), 'trial')}." if on else f"Filter {shown} off.",
            about=self.about_filters,
        )

    @on(FacetList.Toggled)
    def _toggled(self, event: FacetList.Toggled) -> None:
        self.toggle_filter(event.facet, event.label)

    @on(Input.Changed, "#name-filter")
    def _name_changed(self, event: Input.Changed) -> None:
        self.state = replace(self.state, text=event.value)

    @property
    def name_filter(self) -> Input:
        return self.query_one("#name-filter", Input)

    def action_name_filter(self) -> None:
        """`&`: type in the name filter's box (Enter or Esc goes back to the trial list)."""
        self.query_one("#sidebar").display = True
        self.name_filter.focus()

    @on(Input.Submitted, "#name-filter")
    def _name_submitted(self) -> None:
        self.trial_list.focus()
        text = self.state.text
        self.status(
            f"Name filter {text!r}: {counted(len(self.trial_list.order), 'trial')}." if text else "No name filter.",
            about=self.about_filters,
        )

    @on(FacetList.FilterValues)
    def _filter_values(self) -> None:
        self.prompt.ask(PromptMode.VALUES, "show filter values containing… (↑ / ↓ move, Enter toggles, Esc)")

    @on(Input.Changed, "#prompt")
    def _prompt_changed(self, event: Input.Changed) -> None:
        if self.prompt.mode is PromptMode.VALUES:
            self.facet_list.narrow_to(event.value)

    @on(PromptBar.Stepped)
    def _prompt_stepped(self, event: PromptBar.Stepped) -> None:
        if event.mode is PromptMode.VALUES:
            self.facet_list.move_to(self.facet_list.cursor + event.step)

    def _values_answered(self, text: str) -> None:
        """Enter toggles the value under the sidebar's cursor; either way all values show again."""
        facets = self.facet_list
        if text and facets.current_value() is not None:
            facets.activate()
        facets.narrow_to("")
        facets.focus()

    def action_clear_filters(self) -> None:
        if self.state == FilterState():
            self.status("No filters to clear.", about=self.about_filters)
            return
        self.state = FilterState()
        self.name_filter.value = ""
        self.status("Filters cleared.", about=self.about_filters)

    def action_cycle_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self.apply_filters()
        self.status(f"Sorted by {self.sort_key}{' (reversed)' if self.sort_reverse else ''}.", about=self.about_filters)

    def action_sort_by(self, key: str) -> None:
        if key in SORT_KEYS:
            self.sort_key = key
            self.apply_filters()
            self.status(f"Sorted by {key}.", about=self.about_filters)

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.apply_filters()
        self.status(f"Sorted by {self.sort_key}{' (reversed)' if self.sort_reverse else ''}.", about=self.about_filters)

    # --- the selected trial --------------------------------------------------------------------
    @property
    def trial(self) -> int | None:
        """The selected trial: the one under the list's cursor, which is its only owner. Every action
        reads it here, so a key acts on the trial the key before it left selected."""
        return self.trial_list.current_trial

    @on(TrialList.Opened)
    def _opened(self) -> None:
        self.conversation.focus()

    def _show_selected(self) -> None:
        """The panes show the selected trial (called as the cursor moves, in the same call): now if
        its text is at hand, else once it is read from the hub, its panes saying so meanwhile."""
        trial = self.trial
        if trial is None or trial == self._shown:
            return
        self._shown = trial
        self._subagent = None
        self.status_line.recheck()
        if self.fetch.ready((trial,)):
            self._display_trial(trial)
            return
        self.conversation.show((), None)
        self.conversation.set_blocks([Block("loading… (reading this trial from the Hugging Face hub)", style="marker")])
        self.verifier.set_blocks([Block("loading…", style="marker")])
        self.fetch.fetch((trial,), lambda: self._display_trial(trial) if self._shown == trial else None, settle=True)

    def _display_trial(self, trial: int) -> None:
        history = self.session.history(trial)
        self.conversation.show(history.messages, history)
        problem = self.session.problem(trial)
        if problem is not None:  # a harbor trial that could not be read: which file, and why
            line = sanitize(f"This trial could not be read: {problem}")
            if not history.messages:
                self.conversation.set_blocks([Block(line, style="warning")])
            self.status(line)
        info = self.session.info(trial)
        self.verifier.show(self.session.verifier_output(trial), info.outcome, info.result)
        self.findings.show_trial(trial)
        self._highlight_matches()
        self._status_position()

    def refresh_after_change(self, applied: Applied) -> None:
        """Trials changed or joined (a harbor job runs on): the facets and the list again, the cursor on
        the same trial, and the open trial's panes brought up to date in place when it changed."""
        self._show_facets()
        current = self.trial
        self.apply_filters(keep=current)
        if current is not None and current == self.trial and current in applied.changed:
            history = self.session.history(current)
            if self._subagent is None:
                self.conversation.grow(history.messages, history)
            info = self.session.info(current)
            text = self.session.verifier_output(current)
            if (text, info.outcome, info.result) != (self.verifier.text, self.verifier.outcome, self.verifier.result):
                self.verifier.show(text, info.outcome, info.result)
            self.findings.show_trial(current)
            if self.find_pattern is not None:
                self.conversation.find(self.find_pattern)
            self._status_position()

    def show_main_conversation(self) -> None:
        """The trial's main history in the conversation pane (`u` then starts again from the first
        sub-agent conversation)."""
        history = self.conversation.history
        if self._subagent is not None and history is not None:
            self.conversation.show(history.messages, history)
        self._subagent = None

    def when_ready(self, trials: tuple[int, ...], then: Callable[[], object]) -> None:
        """Call `then()` once the text of `trials` is at hand (reading it from the hub first if need be)."""
        if self.fetch.ready(trials):
            then()
            return
        self.status("Reading from the Hugging Face hub…", about=lambda: self.fetch.ready(trials))
        self.fetch.fetch(trials, then)

    @on(Fetched)
    def _fetched(self, event: Fetched) -> None:
        self.status_line.recheck()  # "Reading from the hub…" goes
        event.then()

    @on(FetchFailed)
    def _fetch_failed(self, event: FetchFailed) -> None:
        if len(event.trials) > 1:  # the two sides of a comparison
            self.status(f"Cannot read from the hub: {event.message}")
            return
        if event.trials[0] != self._shown:  # the user moved on meanwhile
            return
        line = f"Cannot read this trial from the hub: {event.message}. The list, filters, stats and your labels still work."
        self.conversation.set_blocks([Block(sanitize(line), style="warning")])
        self.verifier.set_blocks([])
        self.status("The Hugging Face hub does not answer; trials read before stay readable.", about=self.about_trial)

    def action_prev_trial(self) -> None:
        self._step_trial(-1)

    def action_next_trial(self) -> None:
        self._step_trial(+1)

    def _step_trial(self, step: int) -> None:
        trials = self.trial_list
        if self.trial is None:
            self._no_trial()
            return
        if not 0 <= trials.cursor + step < trials.row_count:
            self.status(
                "This is the first trial listed."
                if step < 0
                else f"This is the last trial listed ({trials.row_count:,}).",
                about=self.about_trial,
            )
            return
        trials.move_to(trials.cursor + step)

    # --- conversation --------------------------------------------------------------------------
    @on(ConversationView.Moved)
    def _conversation_moved(self) -> None:
        self._status_position()

    def _status_position(self) -> None:
        self.status_line.recheck()
        trial = self._shown
        if trial is not None:
            model = self.trial_list.model_names.get(self.session.info(trial).model, "—")
            versions = position_versions(self.session, trial, model, self.conversation)
            self.query_one("#position", InfoBar).show_versions(*versions)

    def _no_trial(self) -> None:
        """What a key that acts on the selected trial says when the list is empty."""
        self.status("No trial listed (x clears the filters).", about=self.about_listed)

    def action_prev_message(self) -> None:
        self._step_message(-1)

    def action_next_message(self) -> None:
        self._step_message(+1)

    def _step_message(self, step: int) -> None:
        if self.trial is None:
            self._no_trial()
            return
        conversation = self.conversation
        if conversation.messages and not 0 <= conversation.current + step < len(conversation.messages):
            self.status(
                "This is the first message."
                if step < 0
                else f"This is the last message ({len(conversation.messages):,}).",
                about=self.about_trial,
            )
            return
        conversation.next_message(step)

    def action_toggle_thinking(self) -> None:
        self.conversation.toggle_thinking()
        self.status("Reasoning " + ("unfolded." if self.conversation.think_all else "folded."))

    def action_subagents(self) -> None:
        """Cycle the conversation pane: main history → each sub-agent conversation → main."""
        history = self.conversation.history
        if self.trial is None:
            self._no_trial()
            return
        if history is None or not history.subagents:
            self.status("This trial has no sub-agent conversations.", about=self.about_trial)
            return
        following = 0 if self._subagent is None else self._subagent + 1
        self._subagent = following if following < len(history.subagents) else None
        if self._subagent is None:
            self.conversation.show(history.messages, history)
        else:
            sub = history.subagents[self._subagent]
            self.conversation.show(sub.messages, history, title=sub.trace_source)
        self._status_position()

    # --- prompts -------------------------------------------------------------------------------
    def action_goto_episode(self) -> None:
        if self.trial is None:
            self._no_trial()
            return
        episodes = self.conversation.episode_position()[1]
        self.prompt.ask(PromptMode.EPISODE, f"go to episode (0–{max(0, episodes - 1)})")

    def goto_episode(self, text: str) -> None:
        try:
            episode = int(text)
        except ValueError:
            self.status(f"Not an episode number: {text!r}")
            return
        if not self.conversation.goto_episode(episode):
            self.status(f"No episode {episode} in this trial.", about=self.about_trial)

    @on(PromptBar.Answered)
    def _prompted(self, event: PromptBar.Answered) -> None:
        if event.mode is PromptMode.VALUES:
            self._values_answered(event.value)
            return
        if self.maximized is not None and self.maximized is not self.conversation:
            self.maximize(self.conversation)  # what the answer acts on stays in view
        self.conversation.focus()
        if event.value or event.mode is PromptMode.OVERWRITE:  # Esc there keeps the file, and says so
            self._answers[event.mode](event.value)

    def action_escape(self) -> None:
        """Esc: leave the name filter's box, else cancel running work, else clear the search, else leave
        the maximized pane."""
        if self.focused is self.name_filter:
            self.trial_list.focus()
            return
        running = [w for w in self.workers if w.group in ("search", "export", "ask") and w.is_running]
        if running:
            for worker in running:
                worker.cancel()
        elif self.search_result is not None:
            self.clear_search()
        elif self.maximized is not None:
            self.minimize()
        else:
            self.status("Nothing to cancel (Esc stops a search, an export or a question, or clears a search).")

    # --- search every trial (s) and find in the conversation (/) -------------------------------
    def action_search(self) -> None:
        current = self.search_result.pattern if self.search_result else ""
        self.prompt.ask(PromptMode.SEARCH, "search every trial (/regex/; Esc cancels)", current)

    def start_search(self, text: str) -> None:
        try:
            compile_query(text)
        except ValueError as exc:
            self.status(str(exc))
            return
        self.status(f"Searching for {text!r}… (Esc cancels)")
        self.run_search(text)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="Search")
    def run_search(self, text: str) -> None:
        worker = get_current_worker()
        pattern, regex, ignore_case = parse_query(text)

        def progress(fraction: float) -> None:
            self.post_message(WorkProgress(f"Searching for {text!r}… (Esc cancels)", fraction))

        def waiting(fraction: float) -> None:
            self.post_message(WorkProgress("Search waits for the download… (Esc cancels)", fraction))

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
            self.post_message(WorkDone("Search cancelled."))
            return
        except ValueError as exc:
            self.post_message(WorkDone(str(exc)))
            return
        except SourceError as exc:  # the hub stopped answering while the search streamed from it
            self.post_message(WorkDone(f"Search stopped: {exc}"))
            return
        self.post_message(Searched(text, result))

    @on(Searched)
    def _searched(self, event: Searched) -> None:
        self.status_line.working("", None)
        self.search_result = result = event.result
        self.find_pattern = compile_query(event.text)
        self._shown = None  # show the first trial of the results afresh, jumping to its first match
        self.apply_filters()
        gb = result.bytes_scanned / 1e9
        rate = f"{gb / result.seconds:.1f} GB/s" if result.seconds > 0 else ""
        self.status(
            f"matches: {counted(result.matched_trials, 'trial')} for {event.text!r} ({gb:.2f} GB, {rate}); n / N move, Esc clears",
            about=self.about_filters,
        )

    def clear_search(self) -> None:
        self.search_result = None
        self.find_pattern = None
        self.conversation.find(None)
        self.apply_filters()
        self.status("Search cleared.", about=self.about_filters)

    def _highlight_matches(self) -> None:
        """After a trial is shown: highlight the active find/search and jump to its first match."""
        if self.find_pattern is not None and self.conversation.find(self.find_pattern):
            self.conversation.goto_match(1)

    def action_find(self) -> None:
        self.prompt.ask(PromptMode.FIND, "find in this conversation (/regex/; Enter; Esc cancels)")

    def find_in_conversation(self, text: str) -> None:
        try:
            self.find_pattern = compile_query(text)
        except ValueError as exc:
            self.status(str(exc))
            return
        count = self.conversation.find(self.find_pattern)
        if count:
            position, total = self.conversation.goto_match(1)
            self.status(f"match {position}/{total} for {text!r} (n / N)", about=self.about_trial)
        else:
            self.status(f"No match for {text!r} in what is shown (t unfolds reasoning).", about=self.about_trial)

    def _goto_match(self, step: int) -> None:
        before = self.conversation.match_index
        position, total = self.conversation.goto_match(step)
        wrapped = before >= 0 and (position - 1 < before if step > 0 else position - 1 > before)
        where = ("; from the top" if step > 0 else "; from the bottom") if wrapped else ""
        self.status(
            f"match {position}/{total} (n / N{where})" if total else "No find active: / finds, s searches all.",
            about=self.about_trial,
        )

    def action_find_next(self) -> None:
        self._goto_match(+1)

    def action_find_prev(self) -> None:
        self._goto_match(-1)

    # --- F: failed tests -----------------------------------------------------------------------
    def action_next_failure(self) -> None:
        """F: the verifier, focused, at the traceback of the first failed test; again, at the next one,
        then at the first one of the next trial in the list that has any (wrapping at the end)."""
        panel = self.verifier
        panel.display = True
        following = panel.failure + 1 if panel.has_focus else 0
        if panel.goto_failure(following):
            return self._reached_failure("")
        order, start = self.trial_list.order, self.trial_list.cursor
        if not len(order):
            self._no_trial()
            return None
        scan = len(order) if self.verifier_index is not None else min(len(order), UNINDEXED_SCAN)
        for step in range(1, scan + 1):
            position = (start + step) % len(order)
            if self._may_have_failures(int(order[position])):
                self.trial_list.move_to(position)
                if panel.goto_failure(0):
                    return self._reached_failure(" (from the top of the list)" if position <= start else "")
        self.status(
            "No failed tests with a traceback in the listed trials."
            if scan == len(order)
            else "No failed tests in the next trials; the rest are still being read.",
            about=self.about_filters,
        )
        return None

    def _may_have_failures(self, trial: int) -> bool:
        if self.verifier_index is not None:
            return bool(self.verifier_index.failed[trial])
        from ...verifier import parse_verifier

        return bool(parse_verifier(self.session.verifier_output(trial)).failed_tests)

    def _reached_failure(self, note: str) -> None:
        panel = self.verifier
        panel.focus()
        failures = panel.failures()
        name = failures[panel.failure][0]
        self.status(
            f"Failed test {panel.failure + 1}/{len(failures)}: {name}{note}  (F: next failure)", about=self.about_trial
        )

    # --- labels and notes ----------------------------------------------------------------------
    def _labels_column(self) -> None:
        width = self.labels.column_width()
        if width is None:
            self.trial_list.remove_column("labels")
        else:
            self.trial_list.set_column(Column("labels", "labels", width, self.labels.cell, give_way=((25, 2),)))

    def _labels_changed(self, message: str | None) -> None:
        self.labels.refresh()
        self._labels_column()
        self._show_facets()
        self.apply_filters()
        if message is not None:
            self.status(message, hold=True)
        self._report_store()

    def _report_store(self) -> None:
        for warning in self.labels.warnings():
            self.app.notify(warning, severity="warning", timeout=8, markup=False)

    def action_label(self, number: int) -> None:
        label = self.labels.config.label_for_digit(number)
        if self.trial is None:
            self._no_trial()
            return
        if label is None:
            self.status(f"No label {number}: set `labels = [...]` in the config file.")
            return
        self._labels_changed(self.labels.toggle(self.trial, label))

    def action_undo_label(self) -> None:
        """U: the trial of the last label change gets back the labels it had before it."""
        message = self.labels.undo()
        if message is None:
            self.status("No label change to undo.")
        else:
            self._labels_changed(message)

    def action_annotate(self) -> None:
        from .note import NoteScreen

        if self.trial is None:
            self._no_trial()
            return
        trial = self.trial
        base = self.labels.note(trial)  # what the note is written over: a newer one is kept beside it

        def saved(text: str | None) -> None:
            message = None if text is None else self.labels.set_note(trial, text, base)
            if message is not None:
                self._labels_changed(message)

        self.app.push_screen(NoteScreen(self.labels.title(trial), base), saved)

    def _retry_store(self) -> None:
        """The timer: while the store is in memory, try the disk again (off the UI thread)."""
        if not self.labels.store.on_disk:
            self.retry_store()

    @work(thread=True, exclusive=True, group="label-store", exit_on_error=False, description="Saving labels")
    def retry_store(self) -> None:
        self.post_message(StoreRetried(self.labels.retry()))

    @on(StoreRetried)
    def _store_retried(self, event: StoreRetried) -> None:
        from .quit import QuitScreen

        if event.flushed is None:
            return
        line = self.labels.flushed_line(event.flushed)
        if isinstance(self.app.screen, QuitScreen):  # asked to quit, and nothing is left to ask about
            self.app.exit(f"tracetui: {line}" if line else None)
            return
        self._labels_changed(line)  # back on the disk: its labels, other instances' included

    def schedule_save(self) -> None:
        """Save the view a moment after the last change."""
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(SAVE_DELAY, self.save_view)

    def save_view(self) -> None:
        self.labels.save_view(self.state, self.trial)
        self._report_store()

    # --- getting things out: copy, pager, editor, export --------------------------------------
    def action_copy(self) -> None:
        """`y`: the current message in the conversation, else the trial's id."""
        if self.trial is None:
            self._no_trial()
            return
        message = self.conversation.current_message()
        if self.focused is self.conversation and message is not None:
            self.status(copy_text(self.app, sanitize(message.content), self.status))
        else:
            info = self.session.info(self.trial)
            self.status(copy_text(self.app, info.trial_name or f"{info.run_id}:{info.task}", self.status))

    def action_copy_trial(self) -> None:
        from ...data.export import trial_markdown

        trial = self.trial
        if trial is None:
            self._no_trial()
            return
        self.when_ready(
            (trial,),
            lambda: self.status(copy_text(self.app, trial_markdown(self.session, trial), self.status, suffix=".md")),
        )

    def _open_external(self, program: tuple[str, str], text: str, suffix: str = ".txt") -> None:
        problem = open_external(self.app, program, text, suffix)
        if problem is not None:
            self.status(problem)

    def _current_text(self) -> str | None:
        """The current message's text; None (and the message line says why) when there is none."""
        message = self.conversation.current_message()
        if message is None:
            self._no_trial() if self.trial is None else self.status("No message shown yet (the trial is loading).")
            return None
        return sanitize(message.content)

    def action_pager(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open_external(PAGER, text)

    def action_pager_trial(self) -> None:
        from ...data.export import trial_markdown

        trial = self.trial
        if trial is None:
            self._no_trial()
            return
        self.when_ready((trial,), lambda: self._open_external(PAGER, trial_markdown(self.session, trial), ".md"))

    def action_editor(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open_external(EDITOR, text)

    def action_export(self) -> None:
        name = f"tracetui-export-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        where = "download the listed trials as" if in_browser(self.app) else "export the listed trials to"
        self.prompt.ask(PromptMode.EXPORT, f"{where} (.jsonl / .parquet / .csv; Esc cancels)", name)

    def export_to(self, path: str) -> None:
        """The export prompt's answer: export, unless a file is there, which is replaced only once the
        user says so."""
        target = Path(path).expanduser()
        if target.is_dir():
            self.status(f"{path} is a folder: ctrl+e again, with a file name.")
        elif target.exists():
            self._overwriting = path
            self.prompt.ask(PromptMode.OVERWRITE, f"the file exists: y replaces it, Esc keeps it ({path})")
        else:
            self.run_export(path)

    def _overwrite_answered(self, answer: str) -> None:
        path, self._overwriting = self._overwriting, ""
        if answer.strip().lower() in ("y", "yes"):
            self.run_export(path)
        else:
            self.status(f"Not exported: {path} is kept as it was.")

    @work(thread=True, exclusive=True, group="export", exit_on_error=False, description="Export")
    def run_export(self, path: str) -> None:
        from ...ask.index import answer_columns
        from ...data.export import export_trials
        from ...store.trial_keys import session_records

        worker = get_current_worker()
        trials = np.asarray(self.trial_list.order)
        records = session_records(self.session, self.labels.store)
        # in a browser, the file is written for the browser, not to a path on the server
        download = Download(download_name(path, "tracetui-export.jsonl")) if in_browser(self.app) else None
        rows = 0  # written

        def progress(fraction: float, rows: str) -> None:
            self.post_message(WorkProgress(f"Exporting {rows}… (Esc cancels)", fraction))

        try:
            rows = export_trials(
                self.session,
                trials,
                Path(path).expanduser() if download is None else download.path,
                {t: set(r.labels) for t, r in records.items()},
                {t: r.note for t, r in records.items()},
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
                columns=answer_columns(self.session, list(self.asks.indexes.values())),
            )
        except SourceError as exc:
            self.post_message(WorkDone(f"Export failed: {exc}"))
            return
        finally:
            if download is not None and not rows:
                download.discard()
        done = f"Exported {counted(len(trials), 'trial')} ({counted(rows, 'row')})"
        if not rows:
            self.post_message(WorkDone("Export cancelled."))
        elif download is None:
            self.post_message(WorkDone(f"{done} to {path}"))
        else:
            self.post_message(WorkDone(f"{done}: sending {download.name} to your browser…"))
            self.app.call_from_thread(deliveries(self.app).send, download.take(), download.name, done, self.status)

    # --- layout --------------------------------------------------------------------------------
    def action_focus_filters(self) -> None:
        self.query_one("#sidebar").display = True
        self.facet_list.focus()

    def action_toggle_verifier(self) -> None:
        panel = self.verifier
        panel.display = not panel.display
        if not panel.display and panel.has_focus:
            self.conversation.focus()
        self.status_line.recheck()

    @on(Notice)
    def _notice(self, event: Notice) -> None:
        self.status(event.text, about=self.about_message if event.control is self.conversation else self.about_trial)

    @on(FacetList.Resized)
    def _sidebar_resized(self, event: FacetList.Resized) -> None:
        sidebar = self.query_one(Sidebar)
        width = sidebar.resize(event.delta)

        def about() -> object:
            return sidebar.styles.width, sidebar.display

        if width is not None:
            self.status(f"Sidebar: {width} columns (+ / -).", about=about)
        else:
            self.status(
                "The sidebar is as wide as it gets here."
                if event.delta > 0
                else "The sidebar is as narrow as it gets.",
                about=about,
            )

    @on(VerifierPanel.Resized)
    def _verifier_resized(self, event: VerifierPanel.Resized) -> None:
        """`+` / `-` in the verifier: it grows or shrinks, or the message line says why it cannot."""
        verifier = self.verifier
        height = None if self.maximized is verifier else self.reading_panes.resize_verifier(event.delta)

        def about() -> object:
            return verifier.styles.height, verifier.display, self.maximized

        if self.maximized is verifier:
            self.status("The verifier is zoomed (z goes back; then + / - resize it).", about=about)
        elif height is not None:
            self.status(f"Verifier: {height} lines (+ / -).", about=about)
        elif event.delta > 0:
            self.status(
                "The verifier is as tall as it gets here (the conversation keeps 5 lines); z zooms it.", about=about
            )
        else:
            self.status("The verifier is as short as it gets; v hides it.", about=about)

    def action_maximize(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            target = self.focused
            if isinstance(target, Input):
                target = self.facet_list
            self.maximize(target)

    # --- other screens -------------------------------------------------------------------------
    def _visible(self) -> np.ndarray:
        return self.session.facets.apply(self.state, self.search_mask).visible

    def _apply_picked(self, picked: FilterState | None) -> None:
        """A filter chosen on the stats or head-to-head screen narrows the current one."""
        if picked is not None:
            self.state = replace(self.state, selected={**self.state.selected, **picked.selected})
            if len(self.trial_list.order):
                shown = filters_text(picked, self.trial_list.model_names, None)
                self.status(
                    f"Filter {shown} on: {counted(len(self.trial_list.order), 'trial')}.", about=self.about_filters
                )

    # The other screens import on first use: they are not needed for the first frame.
    def action_stats(self) -> None:
        from .stats import StatsScreen

        self.app.push_screen(StatsScreen(self.session, self._visible(), self.findings.hacked), self._apply_picked)

    def action_head_to_head(self) -> None:
        from .headtohead import HeadToHeadScreen

        self.app.push_screen(HeadToHeadScreen(self.session, self._visible(), self.findings.hacked), self._apply_picked)

    def action_compare(self) -> None:
        """c: choose the other side in the picker, then compare side by side."""
        from ...data.compare import pick_counterpart
        from .compare import CompareScreen
        from .compare_picker import ComparePicker

        trial = self.trial
        if trial is None or pick_counterpart(self.session, trial) is None:
            self.status("No other attempt of this task to compare with.", about=self.about_trial)
            return

        def chosen(other: int | None) -> None:
            if other is not None:
                self._compared[trial] = other
                self.when_ready((trial, other), lambda: self.app.push_screen(CompareScreen(self.session, trial, other)))

        names = self.trial_list.model_names
        self.app.push_screen(ComparePicker(self.session, trial, names, self._compared.get(trial)), chosen)

    def action_recording(self) -> None:
        """r: the trial's terminal recording, at the episode of the message being read."""
        from .recording import RecordingScreen

        if self.trial is None:
            self._no_trial()
            return
        path = self.session.recording(self.trial)
        if path is None:
            self.status("No recording for this trial.")
            return
        info = self.session.info(self.trial)
        episode = self.conversation.episode_position()[0]  # None in a sub-agent's conversation
        self.app.push_screen(RecordingScreen(path, info.trial_name or info.task, episode))

    def action_help(self) -> None:
        from .help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.request_quit()

    def request_quit(self) -> None:
        """Quit, unless labels or notes are held in memory: then ask (write them to a file, quit
        anyway, stay), after one more try of the disk. A note being written is saved first."""
        from .note import NoteScreen
        from .quit import QuitScreen

        if isinstance(self.app.screen, QuitScreen):
            return
        if isinstance(self.app.screen, NoteScreen):  # ctrl+q from the editor: save, then ask
            self.app.screen.action_save()
            self.call_after_refresh(self.request_quit)
            return
        if not self.labels.unsaved:
            self.app.exit()
            return
        flushed = self.labels.retry()
        if flushed is None:
            self.app.push_screen(QuitScreen(self.labels), self._quit_answer)
        else:
            self.app.exit(f"tracetui: {self.labels.flushed_line(flushed)}")

    def _quit_answer(self, farewell: str | None) -> None:
        """The prompt's answer: the line to print after quitting (the app's result), or None to stay."""
        if farewell is not None:
            self.app.exit(farewell)

    def on_unmount(self) -> None:
        self.save_view()

    def action_no_quit(self) -> None:
        self.status("q quits (ctrl+c copies a selection).")
