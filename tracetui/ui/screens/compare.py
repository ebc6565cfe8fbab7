"""The compare screen (`c`): two trials side by side, scrolled together turn by turn.

Each side is a ConversationView under the trial's name and its verifier verdict. Whichever side has
focus leads: when its current message changes (h / l, or scrolling with j / k), the other side jumps
to the same message index, or to the start of the same episode (`s` switches, or turns sync off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from ...data.session import Session, TrialInfo
from ...render.block import Block
from ...trace.sanitize import sanitize
from ...verifier import VerifierReport, parse_verifier
from .. import keymap
from ..format import OUTCOME_BADGES, episode_of, fit, model_names, result_text
from ..triage.fetch import Fetched, FetchFailed, TrialFetch, loading
from ..widgets.bars import InfoBar, Part
from ..widgets.conversation import ConversationView

SYNC_MODES = ("message", "episode", "off")
MAX_FAILED_SHOWN = 6


def verdict_parts(info: TrialInfo, report: VerifierReport) -> list:
    """Outcome badge, result, test counts and failed tests, as InfoBar parts (data strings sanitized)."""
    symbol, style = OUTCOME_BADGES[info.outcome]
    parts: list = [(f"{symbol} {info.outcome}", style), f"  {sanitize(result_text(info.result, info.reward))}"]
    if report.short():
        parts.append(f"  ·  {report.short()}")
    failed = report.failed_tests
    if failed:
        shown = ", ".join(sanitize(name) for name in failed[:MAX_FAILED_SHOWN])
        more = f" +{len(failed) - MAX_FAILED_SHOWN}" if len(failed) > MAX_FAILED_SHOWN else ""
        parts += ["  ·  failed: ", (shown + more, "red")]
    return parts


class CompareScreen(Screen[None]):
    """Two trials side by side; Esc / q closes (no result)."""

    BINDINGS = [*keymap.COMPARE]

    def __init__(self, session: Session, left_trial: int, right_trial: int) -> None:
        super().__init__()
        self.session = session
        self.trials = (left_trial, right_trial)
        self.fetch = TrialFetch(self, session)
        self.sync = SYNC_MODES[0]
        self.model_names = model_names(session.facets.facets["model"].labels)

    def compose(self) -> ComposeResult:
        yield InfoBar(id="compare-header")
        with Horizontal(id="compare-body"):
            for side in ("left", "right"):
                with Vertical(classes="compare-side"):
                    yield InfoBar(id=f"{side}-title", classes="compare-title")
                    yield InfoBar(id=f"{side}-verdict", classes="compare-verdict")
                    yield ConversationView(id=f"{side}-conversation")
        yield Footer()

    @property
    def sides(self) -> tuple[ConversationView, ConversationView]:
        return self.query_one("#left-conversation", ConversationView), self.query_one(
            "#right-conversation", ConversationView
        )

    def on_mount(self) -> None:
        self.sides[0].focus()
        self._when_read(self.trials, self.sides, self._load_both)  # opened from head-to-head: maybe on the hub

    def _when_read(
        self, trials: tuple[int, ...], views: Sequence[ConversationView], then: Callable[[], object]
    ) -> None:
        """`then()` now if the text of `trials` is at hand, else once it is read from the hub (`views` say
        so meanwhile)."""
        if self.fetch.ready(trials):
            then()
            return
        for view in views:
            view.set_blocks(loading())
        self.fetch.fetch(trials, then)

    def _load_both(self) -> None:
        for side in ("left", "right"):
            self._load(side)

    @on(Fetched)
    def _fetched(self, event: Fetched) -> None:
        event.then()

    @on(FetchFailed)
    def _fetch_failed(self, event: FetchFailed) -> None:
        for view in self.sides:
            view.set_blocks([Block(sanitize(f"Cannot read from the hub: {event.message}"), style="warning")])

    def _load(self, side: str) -> None:
        trial = self.trials[0 if side == "left" else 1]
        view = self.query_one(f"#{side}-conversation", ConversationView)
        history = self.session.history(trial)
        view.show(history.messages, history)
        report = parse_verifier(self.session.verifier_output(trial))
        self.query_one(f"#{side}-verdict", InfoBar).show(*verdict_parts(self.session.info(trial), report))
        self._show_header()

    # --- what is shown -------------------------------------------------------------------------
    def _side_parts(self, trial: int, short: bool, model_width: int = 0) -> list[Part]:
        """Outcome badge, trial id and model of one side; `short` keeps the id's random suffix only
        (when both sides attempt the same task), `model_width` cuts the model name."""
        info = self.session.info(trial)
        symbol, style = OUTCOME_BADGES[info.outcome]
        name = info.trial_name or info.task
        if short and "__" in name:
            name = name.rsplit("__", 1)[1]
        model = sanitize(self.model_names.get(info.model, info.model))
        return [
            (f"{symbol} ", style),
            (sanitize(name), "bold"),
            f" {fit(model, model_width).rstrip() if model_width else model}",
        ]

    def _show_header(self) -> None:
        """Which trial and model is on each side; the task once when both attempt the same one."""
        left, right = (self.session.info(t) for t in self.trials)
        same = left.task == right.task
        task = sanitize(left.task) if same else f"{sanitize(left.task)} / {sanitize(right.task)}"
        sync = f"sync by {self.sync}" if self.sync != "off" else "sync off"

        def sides(short: bool, model_width: int = 0) -> list[Part]:
            return [
                *self._side_parts(self.trials[0], short, model_width),
                ("  vs  ", "dim"),
                *self._side_parts(self.trials[1], short, model_width),
            ]

        hint: Part = ("  ·  h / l: both sides move  ·  c: choose the right side", "dim")
        prefix: list[Part] = [("Compare ", "bold"), (task, "bold"), ":  "]
        self.query_one("#compare-header", InfoBar).show_versions(
            [*prefix, *sides(False), f"  ·  {sync}", hint],
            [*prefix, *sides(False), f"  ·  {sync}"],
            [*prefix, *sides(same), f"  ·  {sync}"],
            [*prefix, *sides(same, 16), f" · {sync}"],
            [*sides(same, 16), f" · {sync}"],
            [*sides(same, 10), f" · {sync}"],
        )

    def _show_titles(self) -> None:
        for side, trial, view in zip(("left", "right"), self.trials, self.sides):
            info = self.session.info(trial)
            episode, episodes = view.episode_position()
            parts: list[tuple[str, str] | str] = []
            if view.messages:  # first, so narrow terminals still show where each side is
                parts.append((f"#{view.current + 1}/{len(view.messages)}", "cyan"))
            if episode is not None:
                parts.append((f" {episode_of(episode, episodes, 'ep')}", "cyan"))
            dataset = [(f"  {sanitize(info.dataset)}", "dim")] if len(self.session.datasets) > 1 else []
            narrow = [[*parts, "  ", *self._side_parts(trial, True, width)[1:]] for width in (0, 16, 10)]
            self.query_one(f"#{side}-title", InfoBar).show_versions(  # the dataset goes before the model is cut
                [*parts, "  ", *self._side_parts(trial, False)[1:], *dataset],
                *([*version, *dataset] for version in narrow),
                *(narrow if dataset else ()),
            )

    # --- scrolling together --------------------------------------------------------------------
    @on(ConversationView.Moved)
    def _moved(self) -> None:
        self._show_titles()
        left, right = self.sides
        if self.sync == "off" or self.focused not in (left, right):
            return
        leader = self.focused
        follower = right if leader is left else left
        target = self._target(leader, follower)
        if target is not None and target != follower.current:  # the follower's own Moved then stops here
            follower.goto_message(target)

    def _target(self, leader: ConversationView, follower: ConversationView) -> int | None:
        """The follower's message matching the leader's current one (same index, or same episode's start)."""
        message = leader.current_message()
        if message is None or not follower.messages:
            return None
        if self.sync == "message":
            return min(leader.current, len(follower.messages) - 1)
        return next((m.index for m in follower.messages if m.episode >= message.episode), len(follower.messages) - 1)

    # --- actions -------------------------------------------------------------------------------
    def _leader(self) -> ConversationView:
        left, right = self.sides
        return right if self.focused is right else left

    def action_prev_message(self) -> None:
        self._leader().next_message(-1)

    def action_next_message(self) -> None:
        self._leader().next_message(+1)

    def on_descendant_focus(self) -> None:
        """The leading side's title lights up."""
        for side, view in zip(("left", "right"), self.sides):
            self.query_one(f"#{side}-title").set_class(view.has_focus, "-focused")

    def action_other_side(self) -> None:
        left, right = self.sides
        (left if self.focused is right else right).focus()

    def action_cycle_sync(self) -> None:
        self.sync = SYNC_MODES[(SYNC_MODES.index(self.sync) + 1) % len(SYNC_MODES)]
        self._show_header()
        self._moved()

    def action_toggle_thinking(self) -> None:
        for view in self.sides:
            view.toggle_thinking()

    def action_choose_other(self) -> None:
        """c: another attempt on the right side, from the picker."""
        from .compare_picker import ComparePicker

        def chosen(other: int | None) -> None:
            if other is None:
                return
            self.trials = (self.trials[0], other)

            def show() -> None:
                if self.trials[1] == other:  # not replaced meanwhile
                    self._load("right")
                    self._moved()

            self._when_read((other,), self.sides[1:], show)

        self.app.push_screen(ComparePicker(self.session, self.trials[0], self.model_names, self.trials[1]), chosen)

    def action_close(self) -> None:
        self.dismiss(None)
