"""The reading panes of the selected trial: the conversation (its main history or a sub-agent's, `u`), the
verifier and the position line, shown as the list's cursor moves (read from the hub first when need be),
brought up to date in place while a job runs on, and the keys that move through them (`H` / `L`,
`h` / `l`, `t`, `e`).

The list's cursor owns the selected trial (`host.trial`); this part only remembers which trial its
panes show, so that a trial is drawn once per selection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ...data.session import Applied
from ...render.block import Block
from ...trace.sanitize import sanitize
from ..evidence import FeatureHost
from ..findings import FindingsController
from ..widgets.bars import InfoBar, PromptBar, PromptMode
from ..widgets.verifier_panel import VerifierPanel
from .fetch import Fetched, FetchFailed, TrialFetch, loading
from .lines import position_versions
from .search import Search


class PanesHost(FeatureHost, Protocol):
    """What the reading panes use of the triage screen."""

    @property
    def verifier(self) -> VerifierPanel: ...
    @property
    def prompt(self) -> PromptBar: ...
    @property
    def position_line(self) -> InfoBar: ...
    def no_trial(self) -> None: ...
    def trial_drawn(self) -> None: ...
    def about_listed(self) -> object: ...


class TrialPanes:
    def __init__(self, host: PanesHost, fetch: TrialFetch, findings: FindingsController, search: Search) -> None:
        self.host = host
        self.session = host.session
        self.fetch = fetch
        self.findings = findings
        self.search = search
        self.shown: int | None = None
        """The trial the panes show (or are reading from the hub): the list's cursor's, once shown."""
        self.subagent: int | None = None
        """The sub-agent conversation shown (an index into history.subagents); None: the main history."""
        self.following = False
        """A filter change moved the list: the panes show its selected trial once the list is painted."""
        self.drawn: int | None = None
        """The trial whose text the panes drew last: not yet `shown` while that one's is read from the hub."""
        self._waiting: tuple[int, Callable[[], object]] | None = None
        """What a prompt's answer does once its trial's text, read from the hub, is drawn: (trial, act)."""

    # --- the selected trial --------------------------------------------------------------------
    def show_selected(self) -> None:
        """The panes show the selected trial (called as the cursor moves, in the same call): now if
        its text is at hand, else once it is read from the hub, its panes saying so meanwhile."""
        trial = self.host.trial
        if self.following or trial is None or trial == self.shown:
            return
        moved = self.shown is not None  # from a trial shown: the cursor may be paging on
        self.shown = trial
        self.subagent = None
        self._waiting = None  # an answer waits for its own trial's text only
        self.host.status_line.recheck()
        if self.fetch.ready((trial,)):
            self._display(trial)
            return
        conversation, verifier = self.host.conversation, self.host.verifier
        conversation.show((), None)
        conversation.set_blocks(loading())
        verifier.set_blocks([Block("loading…", style="marker")])
        self.fetch.fetch((trial,), lambda: self._display(trial) if self.shown == trial else None, settle=moved)

    def follow_list(self) -> None:
        """A filter change is about to set the list: the panes show its selected trial once the list is
        painted, so the list and the sidebar do not wait for that trial's rows (cold on disk, or asked of
        the hub). Keys wait for the panes meanwhile (`TriageScreen.holds_keys`); a click that moves the
        cursor is followed to where it stops."""
        if not self.following:
            self.following = True
            self.host.trial_list.after_painted(self._followed)

    @property
    def awaiting_text(self) -> bool:
        """The panes wait for the selected trial's text from the hub (being read, or read and not yet
        drawn)."""
        return self.shown is not None and self.drawn != self.shown

    def _followed(self) -> None:
        self.following = False
        self.show_selected()

    def _display(self, trial: int) -> None:
        host = self.host
        self.drawn = trial
        history = self.session.history(trial)
        host.conversation.show(history.messages, history)
        problem = self.session.problem(trial)
        if problem is not None:  # a harbor trial that could not be read: which file, and why
            line = sanitize(f"This trial could not be read: {problem}")
            if not history.messages:
                host.conversation.set_blocks([Block(line, style="warning")])
            host.status(line)
        info = self.session.info(trial)
        host.verifier.show(self.session.verifier_output(trial), info.outcome, info.result, self.session.usage_of(trial))
        self.findings.show_trial(trial)
        self.search.highlight()
        self.show_position()
        waiting, self._waiting = self._waiting, None
        if waiting is not None and waiting[0] == trial:
            waiting[1]()
        host.trial_drawn()

    def when_drawn(self, what: str, act: Callable[[], object]) -> None:
        """A prompt's answer that works on the conversation (find, go to an episode): now, or once the
        trial's text, read from the hub, is drawn (not "no match" in its "loading…"), saying `what` waits
        meanwhile; dropped if the cursor moves on first."""
        trial = self.shown
        if trial is None or not self.awaiting_text:
            act()
            return
        waiting = self._waiting = (trial, act)
        self.host.status(f"{what} once this trial is read from the hub…", about=lambda: self._waiting is waiting)

    def find(self, text: str) -> None:
        """The find prompt's answer."""
        self.when_drawn(f"Finding {text!r}", lambda: self.search.find_in_conversation(text))

    def show_none(self) -> None:
        """The list emptied: the panes empty too (the list's message line says so once)."""
        if self.shown is not None:
            self.host.status("No trials match these filters (x clears them).", about=self.host.about_listed)
        self.shown = None
        self.host.conversation.show((), None)
        self.host.verifier.clear()
        self.host.position_line.update("")  # it named the trial shown before

    def forget(self) -> None:
        """Show the selected trial afresh when it is next shown (its first search match, say)."""
        self.shown = None

    def update(self, trial: int, applied: Applied) -> None:
        """The shown trial changed (a harbor job runs on, a hub dataset's list grew): its panes up to date
        in place, once its text is at hand (a hub trial's new rows may be in row groups not read yet)."""
        host = self.host
        if trial not in applied.changed:
            return
        if not self.fetch.ready((trial,)):
            self.when_ready((trial,), lambda: self.update(trial, applied) if self.shown == trial else None)
            return
        history = self.session.history(trial)
        if self.subagent is None:
            host.conversation.grow(history.messages, history)
        info = self.session.info(trial)
        text, usage = self.session.verifier_output(trial), self.session.usage_of(trial)
        host.verifier.show_changed(text, info.outcome, info.result, usage)
        self.findings.show_trial(trial)
        if self.search.pattern is not None:
            host.conversation.find(self.search.pattern)
        self.show_position()

    def main_conversation(self) -> None:
        """The trial's main history in the conversation pane (`u` then starts again from the first
        sub-agent conversation)."""
        history = self.host.conversation.history
        if self.subagent is not None and history is not None:
            self.host.conversation.show(history.messages, history)
        self.subagent = None

    def show_position(self) -> None:
        self.host.status_line.recheck()
        trial = self.shown
        if trial is not None:
            model = self.host.trial_list.model_names.get(self.session.info(trial).model, "—")
            self.host.position_line.show_versions(
                *position_versions(self.session, trial, model, self.host.conversation)
            )

    # --- trials read from the hub --------------------------------------------------------------
    def when_ready(self, trials: tuple[int, ...], then: Callable[[], object]) -> None:
        """Call `then()` once the text of `trials` is at hand (reading it from the hub first if need be)."""
        if self.fetch.ready(trials):
            then()
            return
        self.host.status("Reading from the Hugging Face hub…", about=lambda: self.fetch.ready(trials))
        self.fetch.fetch(trials, then)

    def fetched(self, event: Fetched) -> None:
        self.host.status_line.recheck()  # "Reading from the hub…" goes
        event.then()

    def fetch_failed(self, event: FetchFailed) -> None:
        host = self.host
        if len(event.trials) > 1:  # the two sides of a comparison
            host.status(f"Cannot read from the hub: {event.message}")
            return
        if event.trials[0] != self.shown:  # the user moved on meanwhile
            return
        line = f"Cannot read this trial from the hub: {event.message}. The list, filters, stats and your labels still work."
        host.conversation.set_blocks([Block(sanitize(line), style="warning")])
        host.verifier.set_blocks([])
        host.status("The Hugging Face hub does not answer; trials read before stay readable.", about=host.about_trial)

    # --- moving through trials and messages ----------------------------------------------------
    def step_trial(self, step: int) -> None:
        host, trials = self.host, self.host.trial_list
        if host.trial is None:
            host.no_trial()
            return
        if not 0 <= trials.cursor + step < trials.row_count:
            host.status(
                "This is the first trial listed."
                if step < 0
                else f"This is the last trial listed ({trials.row_count:,}).",
                about=host.about_trial,
            )
            return
        trials.move_to(trials.cursor + step)

    def step_message(self, step: int) -> None:
        host, conversation = self.host, self.host.conversation
        if host.trial is None:
            host.no_trial()
            return
        if conversation.messages and not 0 <= conversation.current + step < len(conversation.messages):
            host.status(
                "This is the first message."
                if step < 0
                else f"This is the last message ({len(conversation.messages):,}).",
                about=host.about_trial,
            )
            return
        conversation.next_message(step)

    def toggle_thinking(self) -> None:
        conversation = self.host.conversation
        conversation.toggle_thinking()
        self.host.status("Reasoning " + ("unfolded." if conversation.think_all else "folded."))

    def subagents(self) -> None:
        """Cycle the conversation pane: main history → each sub-agent conversation → main."""
        host, conversation = self.host, self.host.conversation
        history = conversation.history
        if host.trial is None:
            host.no_trial()
            return
        if self.awaiting_text:  # not "no sub-agents" before its text is in
            host.status("This trial is being read from the Hugging Face hub…", about=lambda: self.awaiting_text)
            return
        if history is None or not history.subagents:
            host.status("This trial has no sub-agent conversations.", about=host.about_trial)
            return
        following = 0 if self.subagent is None else self.subagent + 1
        self.subagent = following if following < len(history.subagents) else None
        if self.subagent is None:
            conversation.show(history.messages, history)
        else:
            sub = history.subagents[self.subagent]
            conversation.show(sub.messages, history, title=sub.trace_source)
        self.show_position()

    def ask_episode(self) -> None:
        if self.host.trial is None:
            self.host.no_trial()
            return
        if self.awaiting_text:  # its episodes are not known yet
            self.host.prompt.ask(PromptMode.EPISODE, "go to episode (once this trial is read from the hub)")
            return
        episodes = self.host.conversation.episode_position()[1]
        self.host.prompt.ask(PromptMode.EPISODE, f"go to episode (0–{max(0, episodes - 1)})")

    def goto_episode(self, text: str) -> None:
        """The episode prompt's answer."""
        self.when_drawn(f"Going to episode {text}", lambda: self._goto_episode(text))

    def _goto_episode(self, text: str) -> None:
        try:
            episode = int(text)
        except ValueError:
            self.host.status(f"Not an episode number: {text!r}")
            return
        if not self.host.conversation.goto_episode(episode):
            self.host.status(f"No episode {episode} in this trial.", about=self.host.about_trial)
