"""The triage screen: filter sidebar, trial list, conversation pane and verifier panel.

The screen composes the panes and routes keys and messages to its parts (`ui/triage/`, `ui/findings.py`):
each part owns one concern (the filters, the reading panes, search, export, the verifier index, labels
and notes…), sees the screen only through a small host protocol, and reports background work in
messages (`ui/work.py`), which the screen hands back to it. The filters are the screen's one `state`;
the list's cursor is the one owner of the selected trial (`trial`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np
from textual import on
from textual.app import ComposeResult
from textual.command import Provider
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from ... import collector
from ...data.compute import load_soon as load_compute_kernels
from ...data.facets import FacetResult, FilterState
from ...data.session import Session
from ...render.highlight import warm_up as warm_up_highlighting
from .. import keymap
from ..filter_commands import FilterValueCommands
from ..findings import FindingsController, FindingsIndexed, FindingsProgress
from ..task_health import show_task_health
from ..triage.ask import AskController, AskNews
from ..triage.export import Export
from ..triage.fetch import Fetched, FetchFailed, TrialFetch
from ..triage.filters import NAME_PLACEHOLDER, Filters
from ..triage.labelling import Labelling, StoreRetried
from ..triage.labels import RETRY_SECONDS, LabelBook
from ..triage.layout import PaneLayout
from ..triage.lines import filters_text, header_versions
from ..triage.live import LiveJobs
from ..triage.outlets import Outlets
from ..triage.panes import TrialPanes
from ..triage.prompts import PromptAnswers
from ..triage.routes import Route, WhenWhole
from ..triage.search import Search, Searched
from ..triage.verifiers import GROUP as VERIFIER_GROUP
from ..triage.verifiers import VerifierIndexing, VerifiersIndexed
from ..widgets.bars import InfoBar, PromptBar, PromptMode
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
from .others import OtherScreens

CANCELLABLE = ("search", "export", "ask")  # the worker groups that Esc cancels


def _sort_commands() -> type[Provider]:
    """Loaded when the palette first opens (as the app's own providers are)."""
    from ..commands import SortCommands

    return SortCommands


class TriageScreen(Screen[None]):
    BINDINGS = [*keymap.APP]
    COMMANDS = {_sort_commands, FilterValueCommands}
    ALLOW_IN_MAXIMIZED_VIEW = "Footer, PromptBar, #position, #status-row"
    """A zoomed pane keeps the prompt (find, episode), the position and message lines and the keys."""
    AUTO_FOCUS = "#trials"
    """The list has the keys from the start: Textual's first focusable, the name filter's box, took the
    keys typed as the app started (`s` and a query went into it) until `on_mount` moved the focus."""

    state: var[FilterState] = var(FilterState, init=False)
    """The filters: the one copy, which the sidebar is bound to; a change applies them."""

    def __init__(
        self, session: Session, state: FilterState | None = None, trial: int | None = None, wanted: str | None = None
    ) -> None:
        """`wanted`: the name of the trial to open on (`--trial`) when it is not in the list yet, a hub
        dataset's list still growing: looked for again once the list is whole."""
        super().__init__()
        self.session = session
        self._wanted = wanted
        self.labels = LabelBook(session)
        resumed = state is None and trial is None
        if resumed:  # nothing asked for: reopen where the user left these datasets
            state, trial = self.labels.saved_view()
        self.set_reactive(TriageScreen.state, state or FilterState())
        self._start_trial = trial
        self._resumed = self.state if resumed and session.growing is not None else None
        """The view reopened while a hub dataset's list still grows: the values and trial of files not read
        yet were left out. Not saved over while the user leaves it as it is; reopened whole once the list
        is (`whole`)."""
        self._first_trial: int | None = None
        self.trial_list = TrialList(session, id="trials")  # its cursor is the selected trial (also unmounted)
        self.header = InfoBar(id="header")
        self.sidebar = Sidebar(id="sidebar")
        self.name_filter = Input(self.state.text, placeholder=NAME_PLACEHOLDER, id="name-filter")
        self.facet_list = FacetList(id="facets")
        self.reading_panes = ReadingPanes(id="main")
        self.conversation = ConversationView(id="conversation")
        self.findings_panel = FindingsPanel(id="findings")
        self.verifier = VerifierPanel(id="verifier")
        self.prompt = PromptBar(id="prompt")
        self.position_line = InfoBar(id="position")
        self.status_line = StatusLine(DownloadBar(session, id="download"), id="status-row")
        self.filters = Filters(self)
        self.labelling = Labelling(self, self.labels)
        self.findings = FindingsController(self)
        self.verifiers = VerifierIndexing(self)
        self.when_whole = WhenWhole(self)
        self.search = Search(self, self.when_whole)
        self.panes = TrialPanes(self, TrialFetch(self, session), self.findings, self.search)
        self.asks = AskController(self, self.findings.evidence_of, self.when_whole)
        self.export = Export(self, self.labels, self.asks.indexes, self.when_whole)
        self.outlets = Outlets(self, self.panes)
        self.pane_layout = PaneLayout(self)
        self.live = LiveJobs(self, self.labels, self.verifiers, self.findings, self.search, self.panes)
        self.others = OtherScreens(self, self.filters, self.search, self.findings, self.panes, self.labelling)
        self.answers = PromptAnswers(
            self.pane_layout,
            {
                PromptMode.FIND: self.panes.find,
                PromptMode.SEARCH: self.search.start,
                PromptMode.EXPORT: self.export.export_to,
                PromptMode.OVERWRITE: self.export.overwrite_answered,
                PromptMode.EPISODE: self.panes.goto_episode,
                PromptMode.ASK: self.asks.ask,
                PromptMode.VALUES: self.filters.values_answered,
            },
        )
        self._background_waits = False
        """The background work waits for the first conversation, which is being read from the hub."""
        self._background_started = False
        self._whole_waits = False
        """The background work waits for a hub dataset's list to be whole (its indexes and the answers
        given before cover every trial)."""
        if session.remote and not (self.state.selected or self.state.excluded or self.state.text):
            self._read_ahead()

    def _read_ahead(self) -> None:
        """A dataset read from the hub: the first trial listed starts downloading now, while the screen is
        built (its panes' fetch then waits for those row groups instead of asking after the first layout)."""
        order = self._listed()[1]
        if len(order):
            keep = self._start_trial
            self.panes.fetch.ahead(keep if keep is not None and bool((order == keep).any()) else int(order[0]))

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="body"):
            with self.sidebar:
                yield self.name_filter
                yield self.facet_list.data_bind(TriageScreen.state)
            with self.reading_panes:
                with Vertical(id="list-pane"):
                    yield TrialListHeader(self.trial_list, id="list-header")
                    yield self.trial_list
                yield self.conversation
                yield self.findings_panel
                yield self.verifier
        yield self.prompt
        yield self.position_line
        yield self.status_line
        yield Footer()

    def on_mount(self) -> None:
        self.labelling.report_store()
        self.labelling.column()
        show_task_health(self.session, self.trial_list)
        self.conversation.border_title = "conversation"
        self.verifier.border_title = "verifier"
        self.filters.show_facets()
        self.watch(self.trial_list, "cursor", self.panes.show_selected, init=False)
        self.watch(self, "maximized", self.status_line.recheck, init=False)
        self.watch(self, "focused", self.status_line.recheck, init=False)  # the sidebar's width follows it
        self.apply_filters(keep=self._start_trial)
        self._first_trial = self.trial
        self.trial_list.focus()
        if self.session.notes:  # what opening skipped (bad JSON Lines lines): said once
            self.status("; ".join(self.session.notes), hold=True)
        self.call_after_refresh(self._after_first_frame)
        self.set_interval(RETRY_SECONDS, self.labelling.retry_due)
        self.live.start()

    def _after_first_frame(self) -> None:
        """Keep the long-lived objects out of the garbage collector's scans (its pauses were most of the
        interaction p95) and collect again (`collector`), then start the background work, or once the
        first conversation is read from the hub (the verifier index streams from it and the answers
        import ~0.1 s: both would slow it)."""
        collector.resume()
        if self.panes.awaiting_text:
            self._background_waits = True
        else:
            self._start_background()

    def trial_drawn(self) -> None:
        """The panes drew a trial's text: the background work waiting for the first conversation starts
        after the frame that paints it."""
        if self._background_waits:
            self.call_after_refresh(self._start_background)

    def _start_background(self) -> None:
        if self._background_started:  # two fetches may end before the next frame
            return
        if self.session.growing is not None:
            self._background_waits, self._whole_waits = False, True
            return
        self._background_waits, self._background_started = False, True
        self.set_timer(0.3, self.verifiers.start)
        self.asks.load()
        self.set_timer(0.5, warm_up_highlighting)
        self.set_timer(0.5, load_compute_kernels)

    # --- the selected trial and the filters ------------------------------------------------------
    @property
    def trial(self) -> int | None:
        """The selected trial: the one under the list's cursor, which is its only owner. Every action
        reads it here, so a key acts on the trial the key before it left selected."""
        return self.trial_list.current_trial

    @property
    def holds_keys(self) -> bool:
        """Keys wait (`KeyOrder`) while the panes are about to show the trial a filter selected: a key
        typed meanwhile acts on that trial's conversation, not on the one shown before."""
        return self.panes.following

    def watch_state(self) -> None:
        self.apply_filters(panes_after_list=True)

    def _listed(self) -> tuple[FacetResult, np.ndarray]:
        """The filters' result, and the trials they list in the sort order."""
        result = self.session.facets.apply(self.state, self.search.mask)
        return result, self.session.ordering.sort(result.visible, self.filters.sort_key, self.filters.sort_reverse)

    def apply_filters(self, keep: int | None = None, panes_after_list: bool = False) -> None:
        """The list, sidebar and header follow the filters, search and sort, and the panes the trial
        selected; with `panes_after_list` (a filter toggled) the panes follow once the list is painted."""
        result, order = self._listed()
        if panes_after_list and len(order):
            self.panes.follow_list()
        self.trial_list.set_order(order, keep=keep if keep is not None else self.trial)
        self.reading_panes.arrange_panes()  # a short list gives its rows to the conversation
        self.findings.listed(order)
        self.facet_list.update(result)
        self.trial_list.set_sort(self.filters.sort_key, self.filters.sort_reverse)
        search = self.search.result.pattern if self.search.result is not None else None
        filters = filters_text(self.state, self.trial_list.model_names, search)
        versions = header_versions(self.session, order, filters, self.findings.hacked, unsaved=self.labels.unsaved)
        self.header.show_versions(*versions)
        self.labelling.schedule_save()
        if not len(order):
            self.panes.show_none()
        else:
            self.panes.show_selected()
        self.status_line.recheck()

    def whole(self) -> None:
        """A hub dataset's list is whole: a message that an action waits for it goes, the trial asked for
        that was not in it is looked for again, and the background work that waited for it starts."""
        keep = None
        if self._wanted is not None:
            name, self._wanted = self._wanted, None
            keep = self.session.find_trial(name)
            if keep is None:
                self.app.notify(f"No trial named {name!r}", severity="warning", markup=False)
        if self.keeps_saved_view():  # left as it reopened: the saved view, whole now
            state, trial = self.labels.saved_view()
            self.set_reactive(TriageScreen.state, state or FilterState())
            keep = trial if keep is None and self.trial == self._first_trial else keep
        self._resumed = None
        self.apply_filters(keep=keep)  # the header's counts, no longer "so far"
        self.when_whole.release()
        self.status_line.recheck()
        if self._whole_waits:
            self._whole_waits = False
            self._start_background()

    def keeps_saved_view(self) -> bool:
        """Whether the view saved for these datasets is not to be saved over: reopened on a list still
        growing, and left as it is (it lacks what the list has not read yet)."""
        return self._resumed is not None and self.state == self._resumed

    def facets_changed(self) -> None:
        """A part registered or changed a facet: the sidebar and the list follow."""
        self.filters.show_facets()
        self.apply_filters()

    def show_main_conversation(self) -> None:
        self.panes.main_conversation()

    # --- the message line ------------------------------------------------------------------------
    def status(
        self, message: str, hold: bool = False, background: bool = False, about: Callable[[], object] | None = None
    ) -> None:
        """The message line: what the last action did (the position line above says where we are);
        `about` is the state the message describes (`about_filters`, `about_trial`…): it goes with it."""
        self.status_line.say(message, hold, background, about)

    # What messages describe: each goes from the message line once what it returns changes.
    def about_filters(self) -> object:
        return self.state, self.search.result, self.filters.sort_key, self.filters.sort_reverse

    def about_trial(self) -> object:
        return self.panes.shown, self.conversation.title

    def about_message(self) -> object:
        return self.panes.shown, self.conversation.title, self.conversation.current

    def about_listed(self) -> object:
        return bool(len(self.trial_list.order))

    def no_trial(self) -> None:
        """What a key that acts on the selected trial says when the list is empty."""
        self.status("No trial listed (x clears the filters).", about=self.about_listed)

    # --- messages from the panes and the parts' workers ------------------------------------------
    @on(WorkProgress)
    def _work_progress(self, event: WorkProgress) -> None:
        if not event.background:
            self.status_line.working(event.text, event.fraction)
        else:
            self.status_line.news(f"{event.text} {event.fraction:.0%}")

    @on(WorkDone)
    def _work_done(self, event: WorkDone) -> None:
        self._ended(event.text, event.background)

    def _ended(self, text: str, background: bool) -> None:
        """Long work ended: the message line says `text`; of background work, only over nothing of the
        user's, and the bar of the user's work (a search running) stays."""
        if background:
            self.status_line.news(text)
            return
        self.status_line.working("", None)
        self.status(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that raised: one line in the message line, and the app goes on."""
        if event.state != WorkerState.ERROR or self.findings.failed(event.worker):
            return
        self._ended(failure_line(event.worker), background=event.worker.group == VERIFIER_GROUP)

    @on(VerifiersIndexed)
    def _verifiers_indexed(self, event: VerifiersIndexed) -> None:
        self.verifiers.use(event.index)
        self.facets_changed()
        gc.freeze()
        self.status_line.news("")
        self.findings.start(event.index)

    @on(FindingsProgress)
    def _findings_progress(self, event: FindingsProgress) -> None:
        self.findings.progress(event.fraction)

    @on(FindingsIndexed)
    def _findings_indexed(self, event: FindingsIndexed) -> None:
        self.findings.indexed(event.index)
        self.filters.show_facets()
        self.apply_filters(keep=self._start_trial if self.trial is None else None)
        gc.freeze()

    @on(Searched)
    def _searched(self, event: Searched) -> None:
        self.panes.forget()  # the first trial of the results shows afresh, at its first match
        self.search.found(event)

    @on(AskNews)
    def _ask_news(self, event: AskNews) -> None:
        self.asks.news(event)

    @on(StoreRetried)
    def _store_retried(self, event: StoreRetried) -> None:
        self.labelling.retried(event.flushed, quitting=self.others.quitting())

    @on(Fetched)
    def _fetched(self, event: Fetched) -> None:
        self.panes.fetched(event)

    @on(FetchFailed)
    def _fetch_failed(self, event: FetchFailed) -> None:
        self.panes.fetch_failed(event)
        if self._background_waits:  # the hub does not answer: the background work says so in turn
            self.call_after_refresh(self._start_background)

    @on(FindingsPanel.Chosen)
    def _finding_chosen(self, event: FindingsPanel.Chosen) -> None:
        self.findings.reveal(event.position)

    @on(TrialList.Opened)
    def _opened(self) -> None:
        self.conversation.focus()

    @on(ConversationView.Moved)
    def _conversation_moved(self) -> None:
        self.panes.show_position()

    @on(Notice)
    def _notice(self, event: Notice) -> None:
        self.status(event.text, about=self.about_message if event.control is self.conversation else self.about_trial)

    @on(FacetList.Toggled)
    def _toggled(self, event: FacetList.Toggled) -> None:
        self.filters.toggle(event.facet, event.label)

    @on(FacetList.FilterValues)
    def _filter_values(self) -> None:
        self.filters.ask_values()

    @on(FacetList.Resized)
    def _sidebar_resized(self, event: FacetList.Resized) -> None:
        self.pane_layout.sidebar_resized(event)

    @on(VerifierPanel.Resized)
    def _verifier_resized(self, event: VerifierPanel.Resized) -> None:
        self.pane_layout.verifier_resized(event)

    @on(Input.Changed, "#name-filter")
    def _name_changed(self, event: Input.Changed) -> None:
        self.filters.name_changed(event.value)

    @on(Input.Submitted, "#name-filter")
    def _name_submitted(self) -> None:
        self.filters.name_submitted()

    @on(Input.Changed, "#prompt")
    def _prompt_changed(self, event: Input.Changed) -> None:
        self.filters.values_typed(event.value)

    @on(PromptBar.Stepped)
    def _prompt_stepped(self, event: PromptBar.Stepped) -> None:
        self.filters.values_stepped(event)

    @on(PromptBar.Answered)
    def _prompted(self, event: PromptBar.Answered) -> None:
        self.answers.answered(event)

    # --- keys: each carried out by the part it concerns (keymap.APP) -----------------------------
    action_prev_trial = Route("panes", "step_trial", -1)
    action_next_trial = Route("panes", "step_trial", +1)
    action_prev_message = Route("panes", "step_message", -1)
    action_next_message = Route("panes", "step_message", +1)
    action_toggle_thinking = Route("panes", "toggle_thinking")
    action_subagents = Route("panes", "subagents")
    action_goto_episode = Route("panes", "ask_episode")
    action_focus_filters = Route("filters", "focus_sidebar")
    action_name_filter = Route("filters", "focus_name")
    action_clear_filters = Route("filters", "clear")
    action_cycle_sort = Route("filters", "cycle_sort")
    action_sort_by = Route("filters", "sort_by")
    action_reverse_sort = Route("filters", "reverse_sort")
    action_next_failure = Route("verifiers", "next_failure")
    action_next_finding = Route("findings", "next_finding")
    action_ask = Route("asks", "begin")  # what it starts waits for a growing list (`WhenWhole`)
    action_next_answer = Route("asks", "next_answer")
    action_search = Route("search", "begin")  # what it starts waits for a growing list (`WhenWhole`)
    action_find = Route("search", "find")
    action_find_next = Route("search", "goto_match", +1)
    action_find_prev = Route("search", "goto_match", -1)
    action_label = Route("labelling", "toggle")
    action_undo_label = Route("labelling", "undo")
    action_export = Route("export", "begin")  # what it starts waits for a growing list (`WhenWhole`)
    action_copy = Route("outlets", "copy")
    action_copy_trial = Route("outlets", "copy_trial")
    action_pager = Route("outlets", "pager")
    action_pager_trial = Route("outlets", "pager_trial")
    action_editor = Route("outlets", "editor")
    action_trial_files = Route("outlets", "trial_files")
    action_toggle_verifier = Route("pane_layout", "toggle_verifier")
    action_maximize = Route("pane_layout", "zoom")

    def action_escape(self) -> None:
        """Esc: leave the name filter's box, else drop a search, export or question waiting for the whole
        list, else cancel running work, else clear the search, else leave the maximized pane."""
        if self.focused is self.name_filter:
            self.trial_list.focus()
            return
        if self.when_whole.drop():
            return
        running = [w for w in self.workers if w.group in CANCELLABLE and w.is_running]
        if running:
            for worker in running:
                worker.cancel()
        elif self.search.result is not None:
            self.search.clear()
        elif self.maximized is not None:
            self.minimize()
        else:
            self.status("Nothing to cancel (Esc stops a search, an export or a question, or clears a search).")

    # --- other screens ---------------------------------------------------------------------------
    action_stats = Route("others", "stats", whole="Stats")
    action_head_to_head = Route("others", "head_to_head", whole="Head to head")
    action_compare = Route("others", "compare", whole="Compare")
    action_recording = Route("others", "recording")
    action_help = Route("others", "help")
    action_annotate = Route("others", "annotate")
    action_quit = Route("others", "request_quit")

    def action_no_quit(self) -> None:
        self.status("q quits (ctrl+c copies a selection).")

    def on_unmount(self) -> None:
        self.labelling.save_view()
