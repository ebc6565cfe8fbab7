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
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...data.facets import FilterState
from ...data.ordering import SORT_KEYS
from ...data.session import Session
from ...data.verifier_index import VerifierIndex, build_verifier_index
from ...render.highlight import warm_up as warm_up_highlighting
from .. import keymap
from ..actions.external import ExternalActions
from ..actions.fetch import FetchActions
from ..actions.labels import LabelActions
from ..actions.search import SearchActions
from ..format import human_size, result_text, short_model
from ..widgets.bars import InfoBar, PromptBar
from ..widgets.conversation import ConversationView
from ..widgets.cursor_list import CursorList
from ..widgets.download_bar import DownloadBar
from ..widgets.facet_list import FacetList
from ..widgets.trial_list import TrialList
from ..widgets.verifier_panel import VerifierPanel

ALWAYS_SHOWN = ("outcome", "result", "model", "task")
SHOWN_WHEN_VARIED = ("agent", "model_provider", "trace_source", "dataset")


class TriageScreen(LabelActions, SearchActions, ExternalActions, FetchActions, Screen):
    BINDINGS = keymap.APP

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

    def compose(self) -> ComposeResult:
        yield InfoBar(id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Input(placeholder="task / trial name…", id="name-filter")
                yield FacetList(id="facets")
            with Vertical(id="main"):
                with Vertical(id="list-pane"):
                    yield InfoBar(id="list-header")
                    yield TrialList(self.session, id="trials")
                yield ConversationView(id="conversation")
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
        self.facet_list.set_facets([facets.facets[n] for n in names], totals)

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
        if not self._status_text or self._status_text.startswith("Reading verifier logs"):
            self.status(f"Reading verifier logs{waiting}… {fraction:.0%}")

    def _verifiers_indexed(self, index: VerifierIndex) -> None:
        self.session.facets.add(index.facet())
        self.trial_list.set_column("tests", 10, lambda trial: index.short[trial])
        self._show_facets()
        self.apply_filters()
        self._update_list_header()
        gc.freeze()
        if self._status_text.startswith("Reading verifier logs"):
            self.status("")

    # --- filtering and sorting -----------------------------------------------------------------
    def apply_filters(self, keep: int | None = None) -> None:
        result = self.session.facets.apply(self.state, self.search_mask)
        order = self.session.ordering.sort(result.visible, self.sort_key, self.sort_reverse)
        self.trial_list.set_order(order, keep=keep if keep is not None else self.trial)
        self.facet_list.update(result, self.state)
        self._update_list_header()
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
        session = self.session
        shown = len(order)
        outcome = session.trials.outcome[order]
        rated = np.count_nonzero(outcome != 4)
        rate = f"{100 * np.count_nonzero(outcome == 0) / rated:.1f}%" if rated else "—"
        sources = ", ".join(
            (ds.source.display or ds.label) + (f"@{ds.source.revision[:8]}" if ds.source.revision else "")
            for ds in session.datasets
        )
        filters = self.state.describe()
        if self.search_result is not None:
            filters = f"{filters} matches~{self.search_result.pattern}".strip()
        self.query_one("#header", InfoBar).show(
            ("tracetui ", "bold"),
            (sources, "cyan"),
            f"  ·  {shown:,}/{len(session):,} trials  ·  {session.num_rows:,} rows  ·  pass ",
            (rate, "bold green"),
            *((("  ·  ", ""), (filters, "yellow")) if filters else ()),
        )

    def _update_list_header(self) -> None:
        width = self.trial_list.scrollable_content_region.width or self.size.width
        self.query_one("#list-header", InfoBar).update(self.trial_list.header(width, self.sort_key, self.sort_reverse))

    def on_resize(self) -> None:
        self._update_list_header()

    @on(FacetList.Toggled)
    def _toggled(self, event: FacetList.Toggled) -> None:
        self.state = self.state.toggled(event.facet, event.label)
        self.apply_filters()

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
        parts = [
            (info.trial_name or info.task, "bold"),
            f"  {short_model(info.model)}  {result_text(info.result, info.reward)}  ",
        ]
        if conv.title != "main":
            parts.append((f"[sub-agent: {conv.title}]  ", "magenta"))
        if episode is not None:
            parts.append(f"episode {episode}/{episodes}  ")
        if conv.messages:
            parts.append(f"message {conv.current + 1}/{len(conv.messages)}  ")
        parts.append((human_size(info.size), "dim"))
        subs = len(conv.history.subagents) if conv.history else 0
        if subs:
            parts.append((f"  ·  {subs} sub-agent conversations (u)", "dim"))
        self.query_one("#position", InfoBar).show(*parts)

    _status_text = ""

    def working(self, message: str, fraction: float | None) -> None:
        """Progress of long work (search, export) in the message line; None hides the bar."""
        bar = self.query_one("#work", ProgressBar)
        bar.display = fraction is not None
        if fraction is not None:
            bar.update(progress=fraction)
            self.status(message)

    def status(self, message: str) -> None:
        """The message line: what the last action did (the position line above says where we are)."""
        self._status_text = message
        self.query_one("#status", InfoBar).show((message, "italic"))

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

    def resize_verifier(self, delta: int) -> None:
        """`+` / `-` in the verifier panel: grow or shrink it by whole lines."""
        height = self.verifier.outer_size.height + delta
        self.verifier.styles.height = max(3, min(self.size.height - 10, height))

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
        from ...data.compare import pick_counterpart
        from .compare import CompareScreen

        other = pick_counterpart(self.session, self.trial) if self.trial is not None else None
        if other is None:
            self.status("No other attempt of this task to compare with.")
            return
        trial = self.trial
        self.when_ready((trial, other), lambda: self.app.push_screen(CompareScreen(self.session, trial, other)))

    def action_help(self) -> None:
        from .help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()

    def on_unmount(self) -> None:
        self.save_view()

    def action_no_quit(self) -> None:
        self.status("q quits (ctrl+c copies a selection).")
