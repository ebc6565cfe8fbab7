"""The triage screen: filter sidebar, trial list, conversation pane and verifier panel.

The screen owns the view state (filters, sort, selected trial) and turns it into data-layer calls;
the widgets only display what they are given.
"""

from __future__ import annotations

import gc

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar
from textual.worker import Worker, get_current_worker

from ...data.errors import SourceError
from ...data.facets import FilterState
from ...data.ordering import SORT_KEYS
from ...data.session import Session
from ...data.verifier_index import VerifierIndex, build_verifier_index
from ...render.highlight import warm_up as warm_up_highlighting
from .. import keymap
from ..actions.external import ExternalActions
from ..actions.failures import FailureActions
from ..actions.fetch import FetchActions
from ..actions.filters import FilterActions
from ..actions.labels import LabelActions
from ..actions.panes import PaneArrangement
from ..actions.search import SearchActions
from ..commands import SortCommands
from ..filter_commands import FilterValueCommands
from ..findings import FindingsController, FindingsIndexed, FindingsProgress
from ..format import human_size, result_text
from ..widgets.bars import InfoBar, PromptBar
from ..widgets.columns import Column
from ..widgets.conversation import ConversationView
from ..widgets.cursor_list import CursorList
from ..widgets.download_bar import DownloadBar
from ..widgets.facet_list import FacetList
from ..widgets.findings_panel import FindingsPanel
from ..widgets.trial_list import TrialList, TrialListHeader
from ..widgets.verifier_panel import VerifierPanel

ALWAYS_SHOWN = ("outcome", "result", "model", "task")
SHOWN_WHEN_VARIED = ("agent", "model_provider", "trace_source", "dataset")
SHOWN_FIRST = ("outcome", "finding")
"""What went wrong comes right after the outcome, once the findings are in."""
STATUS_HOLD = 6.0
"""Seconds a held message (a label or note change) stays against background messages."""


def tests_cell(summary: str, width: int) -> str:
    """The tests column: "2/3 tests" or "score 0.6", just the figure when narrow."""
    if width >= len(summary) or " " not in summary:
        return summary
    return summary.split(" ")[0] if summary.endswith(" tests") else summary.split(" ")[-1]


class TriageScreen(
    FilterActions, FailureActions, PaneArrangement, LabelActions, SearchActions, ExternalActions, FetchActions, Screen
):
    BINDINGS = keymap.APP
    COMMANDS = {SortCommands, FilterValueCommands}
    ALLOW_IN_MAXIMIZED_VIEW = "Footer, PromptBar, #position, #status-row"
    """A zoomed pane keeps the prompt (find, episode), the position and message lines and the keys."""

    def __init__(self, session: Session, state: FilterState | None = None, trial: int | None = None) -> None:
        super().__init__()
        self.session = session
        self._restore = state is None and trial is None
        self.state = state or FilterState()
        self.sort_key = "task"
        self.sort_reverse = False
        self.trial: int | None = None
        self._start_trial = trial
        self._subagent = -1  # -1: the main history; else an index into history.subagents
        self.findings = FindingsController(self)

    def compose(self) -> ComposeResult:
        yield InfoBar(id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Input(placeholder="task / trial name…", id="name-filter")
                yield FacetList(id="facets")
            with Vertical(id="main"):
                with Vertical(id="list-pane"):
                    trials = TrialList(self.session, id="trials")
                    yield TrialListHeader(trials, id="list-header")
                    yield trials
                yield ConversationView(id="conversation")
                yield FindingsPanel(id="findings")
                yield VerifierPanel(id="verifier")
        yield PromptBar(id="prompt")
        yield InfoBar(id="position")
        with Horizontal(id="status-row"):
            yield InfoBar(id="status")
            yield ProgressBar(total=1.0, show_eta=False, id="work")
            yield DownloadBar(self.session, id="download")
        yield Footer()

    # --- shortcuts -----------------------------------------------------------------------------
    @property
    def trial_list(self) -> TrialList:
        return self.query_one(TrialList)

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
    def prompt(self) -> PromptBar:
        return self.query_one(PromptBar)

    def on_mount(self) -> None:
        saved_state, saved_trial = self.open_labels(restore=self._restore)
        if saved_state is not None:
            self.state = saved_state
        if saved_trial is not None:
            self._start_trial = saved_trial
        self.conversation.border_title = "conversation"
        self.verifier.border_title = "verifier"
        self.facet_list.state = self.state
        self._show_facets()
        self.query_one("#name-filter", Input).value = self.state.text
        self.apply_filters(keep=self._start_trial)
        self.trial_list.focus()
        self.call_after_refresh(self._settle)

    def _settle(self) -> None:
        """After the first frame: keep the long-lived objects out of the garbage collector's scans
        (its pauses were most of the interaction p95), then start the background work."""
        gc.freeze()
        self.set_timer(0.3, self.index_verifiers)
        self.set_timer(0.5, warm_up_highlighting)

    def _show_facets(self) -> None:
        """The sidebar's facets: the core ones, the others when they vary, and any added later."""
        facets = self.session.facets
        totals = facets.apply(FilterState()).counts
        names = [*ALWAYS_SHOWN, *(n for n in SHOWN_WHEN_VARIED if int(np.count_nonzero(totals[n])) > 1)]
        names += [n for n in facets.facets if n not in ALWAYS_SHOWN + SHOWN_WHEN_VARIED and totals[n].any()]
        names.sort(key=lambda n: SHOWN_FIRST.index(n) if n in SHOWN_FIRST else len(SHOWN_FIRST))
        self.facet_list.set_facets([facets.facets[n] for n in names], totals, {"model": self.trial_list.model_names})

    @work(thread=True, exclusive=True, group="verifier-index")
    def index_verifiers(self) -> None:
        """Parse every trial's verifier log in the background: the tests column and failed-test facet."""
        worker = get_current_worker()
        progress = lambda f: self.app.call_from_thread(self._index_progress, f)  # noqa: E731
        waiting = lambda f: self.app.call_from_thread(self._index_progress, f, " after the download")  # noqa: E731
        try:
            index = build_verifier_index(self.session, progress, lambda: worker.is_cancelled, waiting)
        except InterruptedError:
            return
        except SourceError as exc:  # the hub stopped answering while the logs streamed from it
            self.app.call_from_thread(self.status, f"Verifier logs: {exc}")
            return
        self.app.call_from_thread(self._verifiers_indexed, index)

    def _index_progress(self, fraction: float, waiting: str = "") -> None:
        """Background progress shows only while the message line has nothing of the user's to say."""
        if not self.app.is_running:  # quitting: the panes may be gone already
            return
        if not self._status_text or self._status_text.startswith("Reading verifier logs"):
            self.status(f"Reading verifier logs{waiting}… {fraction:.0%}", background=True)

    def _verifiers_indexed(self, index: VerifierIndex) -> None:
        if not self.app.is_running:
            return
        self.verifier_index = index
        self.session.facets.add(index.facet())
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
        self._show_facets()
        self.apply_filters()
        gc.freeze()
        if self._status_text.startswith("Reading verifier logs"):
            self.status("", background=True)
        self.findings.start(index)

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

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.findings.worker_changed(event)

    def action_next_finding(self) -> None:
        self._show_trial(self.trial_list.current_trial)  # a list move still in the queue comes first
        self.findings.next_finding()

    # --- filtering and sorting -----------------------------------------------------------------
    def apply_filters(self, keep: int | None = None) -> None:
        result = self.session.facets.apply(self.state, self.search_mask)
        order = self.session.ordering.sort(result.visible, self.sort_key, self.sort_reverse)
        self.trial_list.set_order(order, keep=keep if keep is not None else self.trial)
        self.findings.listed(order)
        self.facet_list.update(result, self.state)
        self.trial_list.set_sort(self.sort_key, self.sort_reverse)
        self._update_header(order)
        self.schedule_save()
        if not len(order):
            if self.trial is not None:  # said once, when the list empties
                self.status("No trials match these filters (x clears them).")
            self.trial = None
            self.conversation.show((), None)
            self.verifier.show(None, "unknown", None)
        else:
            self._show_trial(self.trial_list.current_trial)

    def _update_header(self, order: np.ndarray) -> None:
        """Sources, counts, pass rate and filters; on narrow terminals it abbreviates before it drops,
        and the filters and pass rate stay."""
        session = self.session
        shown = len(order)
        outcome = session.trials.outcome[order]
        rated = np.count_nonzero(outcome != 4)
        passed = np.count_nonzero(outcome == 0)
        rate = f"{100 * passed / rated:.1f}%" if rated else "—"
        sources = ", ".join(
            (ds.source.display or ds.label) + (f"@{ds.source.revision[:8]}" if ds.source.revision else "")
            for ds in session.datasets
        )
        filters = self._filters_text()
        tail = (("  ·  ", ""), (filters, "yellow")) if filters else ()
        short_tail = ((" · ", ""), (filters, "yellow")) if filters else ()
        counts = f"{shown:,}/{len(session):,}"
        self.query_one("#header", InfoBar).show_versions(
            [
                ("tracetui ", "bold"),
                (sources, "cyan"),
                f"  ·  {counts} trials  ·  {session.num_rows:,} rows  ·  pass ",
                (rate, "bold green"),
                *tail,
            ],
            [(sources, "cyan"), f"  ·  {counts} trials  ·  pass ", (rate, "bold green"), *tail],
            [(sources, "cyan"), f" · {counts} · pass ", (rate, "bold green"), *short_tail],
            [f"{counts} trials · pass ", (rate, "bold green"), *short_tail],
            [f"{counts} · pass ", (rate, "bold green"), *short_tail],
        )

    @on(FacetList.Toggled)
    def _toggled(self, event: FacetList.Toggled) -> None:
        self.toggle_filter(event.facet, event.label)

    @on(Input.Changed, "#name-filter")
    def _name_changed(self, event: Input.Changed) -> None:
        self.state = FilterState(self.state.selected, event.value)
        self.apply_filters()

    def action_clear_filters(self) -> None:
        self.state = FilterState()
        self.query_one("#name-filter", Input).value = ""
        self.apply_filters()
        self.status("Filters cleared.")

    def action_cycle_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self.apply_filters()
        self.status(f"Sorted by {self.sort_key}{' (reversed)' if self.sort_reverse else ''}.")

    def action_sort_by(self, key: str) -> None:
        if key in SORT_KEYS:
            self.sort_key = key
            self.apply_filters()
            self.status(f"Sorted by {key}.")

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.apply_filters()
        self.status(f"Sorted by {self.sort_key}{' (reversed)' if self.sort_reverse else ''}.")

    # --- the selected trial --------------------------------------------------------------------
    @on(CursorList.CursorMoved, "#trials")
    def _trial_moved(self, event: CursorList.CursorMoved) -> None:
        self._show_trial(self.trial_list.current_trial)

    @on(TrialList.Opened)
    def _opened(self) -> None:
        self.conversation.focus()

    def _show_trial(self, trial: int | None) -> None:
        if trial is None or trial == self.trial:
            return
        self.trial = trial
        self._subagent = -1
        self.show_or_fetch(trial)  # a trial read from the hub is fetched first

    def display_trial(self, trial: int) -> None:
        history = self.session.history(trial)
        self.conversation.show(history.messages, history)
        info = self.session.info(trial)
        self.verifier.show(self.session.verifier_output(trial), info.outcome, info.result)
        self.findings.show_trial(trial)
        self.highlight_matches()
        self._status_position()

    def action_prev_trial(self) -> None:
        self._step_trial(-1)

    def action_next_trial(self) -> None:
        self._step_trial(+1)

    def _step_trial(self, step: int) -> None:
        """H / L show the trial at once, so keys typed right after act on it, not on the one before."""
        self.trial_list.move_to(self.trial_list.cursor + step)
        self._show_trial(self.trial_list.current_trial)

    # --- conversation --------------------------------------------------------------------------
    @on(ConversationView.Moved)
    def _conversation_moved(self) -> None:
        self._status_position()

    def _status_position(self) -> None:
        if self.trial is None:
            return
        info = self.session.info(self.trial)
        conv = self.conversation
        episode, episodes = conv.episode_position()
        model = self.trial_list.model_names.get(info.model, "—")
        name, result = (info.trial_name or info.task, "bold"), f"  {result_text(info.result, info.reward)}  "
        head = [name, f"  {model}", result]
        if conv.title != "main":
            head.append((f"[sub-agent: {conv.title}]  ", "magenta"))
        where, short_where = [], []
        if episode is not None:
            where.append(f"episode {episode}/{episodes}  ")
            short_where.append(f"ep {episode}/{episodes} ")
        if conv.messages:
            where.append(f"message {conv.current + 1}/{len(conv.messages)}  ")
            short_where.append(f"msg {conv.current + 1}/{len(conv.messages)}")
        subs = len(conv.history.subagents) if conv.history else 0
        more = [(f"  ·  {subs} sub-agent conversations (u)", "dim")] if subs else []
        self.query_one("#position", InfoBar).show_versions(
            [*head, *where, (human_size(info.size), "dim"), *more],
            [*head, *where, *([(f"· {subs} sub-agents (u)", "dim")] if subs else [])],
            [*head, *short_where],
            [name, result, *head[3:], *short_where],
        )

    _status_text = ""
    _status_held = None  # the timer that ends a held message

    def working(self, message: str, fraction: float | None) -> None:
        """Progress of long work (search, export) in the message line; None hides the bar."""
        bar = self.query_one("#work", ProgressBar)
        bar.display = fraction is not None
        if fraction is not None:
            bar.update(progress=fraction)
            self.status(message, background=True)

    def status(self, message: str, hold: bool = False, background: bool = False) -> None:
        """The message line: what the last action did (the position line above says where we are).

        A held message (a change to what the user wrote: labels, notes) stays at least STATUS_HOLD
        seconds against background messages (progress); the user's next action still replaces it."""
        if background and self._status_held is not None:
            return
        if self._status_held is not None:
            self._status_held.stop()
            self._status_held = None
        if hold:
            self._status_held = self.set_timer(STATUS_HOLD, self._release_status)
        self._status_text = message
        self.query_one("#status", InfoBar).show((message, "italic"))

    def _release_status(self) -> None:
        self._status_held = None

    def action_prev_message(self) -> None:
        self._show_trial(self.trial_list.current_trial)  # a cursor move still in the queue comes first
        self.conversation.next_message(-1)

    def action_next_message(self) -> None:
        self._show_trial(self.trial_list.current_trial)
        self.conversation.next_message(+1)

    def action_toggle_thinking(self) -> None:
        self.conversation.toggle_thinking()
        self.status("Reasoning " + ("unfolded." if self.conversation.think_all else "folded."))

    def action_subagents(self) -> None:
        """Cycle the conversation pane: main history → each sub-agent conversation → main."""
        history = self.conversation.history
        if history is None or not history.subagents:
            self.status("This trial has no sub-agent conversations.")
            return
        self._subagent += 1
        if self._subagent >= len(history.subagents):
            self._subagent = -1
            self.conversation.show(history.messages, history)
        else:
            sub = history.subagents[self._subagent]
            self.conversation.show(sub.messages, history, title=sub.trace_source)
        self._status_position()

    # --- prompts -------------------------------------------------------------------------------
    def action_goto_episode(self) -> None:
        episodes = self.conversation.episode_position()[1]
        self.prompt.ask("episode", f"go to episode (0–{max(0, episodes - 1)})")

    @on(PromptBar.Answered)
    def _prompted(self, event: PromptBar.Answered) -> None:
        if event.mode == "values":
            self._values_answered(event.value)
            return
        if self.maximized is not None and self.maximized is not self.conversation:
            self.maximize(self.conversation)  # what the answer acts on stays in view
        self.conversation.focus()
        if not event.value:
            return
        if event.mode == "find":
            self.find_in_conversation(event.value)
        elif event.mode == "search":
            self.start_search(event.value)
        elif event.mode == "export":
            self.run_export(event.value)
        elif event.mode == "episode":
            try:
                episode = int(event.value)
            except ValueError:
                self.status(f"Not an episode number: {event.value!r}")
                return
            if not self.conversation.goto_episode(episode):
                self.status(f"No episode {episode} in this trial.")

    def action_escape(self) -> None:
        """Esc: cancel running work, else clear the search, else leave the maximized pane."""
        running = [w for w in self.workers if w.group in ("search", "export") and w.is_running]
        if running:
            for worker in running:
                worker.cancel()
        elif self.search_result is not None:
            self.clear_search()
        elif self.maximized is not None:
            self.minimize()

    # --- layout --------------------------------------------------------------------------------
    def action_focus_filters(self) -> None:
        self.query_one("#sidebar").display = True
        self.facet_list.focus()

    def action_toggle_verifier(self) -> None:
        panel = self.verifier
        panel.display = not panel.display
        if not panel.display and panel.has_focus:
            self.conversation.focus()

    def action_maximize(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            target = self.focused
            if isinstance(target, Input):
                target = self.facet_list
            self.maximize(target)

    # --- other screens -------------------------------------------------------------------------
    def _visible(self):
        return self.session.facets.apply(self.state, self.search_mask).visible

    def _apply_picked(self, picked: FilterState | None) -> None:
        """A filter chosen on the stats or head-to-head screen narrows the current one."""
        if picked is not None:
            self.state = FilterState({**self.state.selected, **picked.selected}, self.state.text)
            self.facet_list.state = self.state
            self.apply_filters()

    # The other screens import on first use: they are not needed for the first frame.
    def action_stats(self) -> None:
        from .stats import StatsScreen

        self.app.push_screen(StatsScreen(self.session, self._visible()), self._apply_picked)

    def action_head_to_head(self) -> None:
        from .headtohead import HeadToHeadScreen

        self.app.push_screen(HeadToHeadScreen(self.session, self._visible()), self._apply_picked)

    def action_compare(self) -> None:
        """c: choose the other side in the picker, then compare side by side."""
        from ...data.compare import pick_counterpart
        from .compare import CompareScreen
        from .compare_picker import ComparePicker

        trial = self.trial
        if trial is None or pick_counterpart(self.session, trial) is None:
            self.status("No other attempt of this task to compare with.")
            return

        def chosen(other: int | None) -> None:
            if other is not None:
                self.when_ready((trial, other), lambda: self.app.push_screen(CompareScreen(self.session, trial, other)))

        self.app.push_screen(ComparePicker(self.session, trial, self.trial_list.model_names), chosen)

    def action_help(self) -> None:
        from .help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()

    def on_unmount(self) -> None:
        self.save_view()

    def action_no_quit(self) -> None:
        self.status("q quits (ctrl+c copies a selection).")
