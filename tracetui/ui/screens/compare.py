"""The compare screen (`c`): two trials side by side, scrolled together turn by turn.

Each side is a ConversationView under the trial's name and its verifier verdict. Whichever side has
focus leads: when its current message changes (h / l, or scrolling with j / k), the other side jumps
to the same message index, or to the start of the same episode (`s` switches, or turns sync off).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from ...data.session import Session, TrialInfo
from ...trace.sanitize import sanitize
from ...verifier import VerifierReport, parse_verifier
from .. import keymap
from ..format import OUTCOME_BADGES, result_text, short_model
from ..widgets.bars import InfoBar
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

    BINDINGS = keymap.COMPARE

    def __init__(self, session: Session, left_trial: int, right_trial: int) -> None:
        super().__init__()
        self.session = session
        self.trials = (left_trial, right_trial)
        self.sync = SYNC_MODES[0]

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
        for side, trial, view in zip(("left", "right"), self.trials, self.sides):
            history = self.session.history(trial)
            view.show(history.messages, history)
            report = parse_verifier(self.session.verifier_output(trial))
            self.query_one(f"#{side}-verdict", InfoBar).show(*verdict_parts(self.session.info(trial), report))
        self._show_header()
        self.sides[0].focus()

    # --- what is shown -------------------------------------------------------------------------
    def _show_header(self) -> None:
        left, right = (self.session.info(t) for t in self.trials)
        task = left.task if left.task == right.task else f"{left.task} / {right.task}"
        self.query_one("#compare-header", InfoBar).show(
            ("Compare ", "bold"),
            (sanitize(task), "bold"),
            f"  ·  sync by {self.sync}" if self.sync != "off" else "  ·  sync off",
            ("  ·  h / l: previous / next message on both sides", "dim"),
        )

    def _show_titles(self) -> None:
        for side, trial, view in zip(("left", "right"), self.trials, self.sides):
            info = self.session.info(trial)
            episode, episodes = view.episode_position()
            parts: list[tuple[str, str] | str] = []
            if view.messages:  # first, so narrow terminals still show where each side is
                parts.append((f"#{view.current + 1}/{len(view.messages)}", "cyan"))
            if episode is not None:
                parts.append((f" ep {episode}/{episodes}", "cyan"))
            name = sanitize(info.trial_name or info.task)
            parts += ["  " if parts else "", (name, "bold"), f"  {sanitize(short_model(info.model))}"]
            if len(self.session.datasets) > 1:
                parts.append((f"  {sanitize(info.dataset)}", "dim"))
            self.query_one(f"#{side}-title", InfoBar).show(*parts)

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

    def action_close(self) -> None:
        self.dismiss(None)
