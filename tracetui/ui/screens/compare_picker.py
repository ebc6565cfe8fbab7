"""The compare picker (`c`): which attempt goes on the other side, from the other attempts of the
task: the same model's first, then the other models'. The right side shown now, when there is one,
is highlighted, else the likeliest counterpart (the opposite outcome, then the same model, then the
newest), so `c` Enter compares at once; j / k move as in every list."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...data.compare import compare_choices, pick_counterpart
from ...data.session import Session
from ...trace.sanitize import sanitize
from .. import keymap
from ..format import OUTCOME_BADGES, result_text


class Choices(OptionList):
    """The attempts to choose from: the list keys of the app (j / k, g / G, paging) move in it."""

    BINDINGS = [*keymap.MOVE]


class ComparePicker(ModalScreen[int | None]):
    """Dismisses with the chosen trial, or None (Esc)."""

    BINDINGS = [*keymap.COMPARE_PICKER]

    def __init__(self, session: Session, trial: int, model_names: dict[str, str], current: int | None = None) -> None:
        """`current`: the attempt on the right side now (highlighted when it is still a choice)."""
        super().__init__()
        self.session = session
        self.trial = trial
        self.names = model_names
        self.current = current
        self.same, self.others = compare_choices(session, trial)

    def compose(self) -> ComposeResult:
        info = self.session.info(self.trial)
        model = self.names.get(info.model, info.model)
        options: list[Option] = []
        for heading, trials, with_model in (
            (f"{model}, other attempts", self.same, False),
            ("other models", self.others, True),
        ):
            if trials:
                options.append(Option(Text(sanitize(heading), style="bold"), disabled=True))
                options.extend(Option(self._line(t, with_model), id=str(t)) for t in trials)
        title = Text(f"{sanitize(info.task or '')}: compare ", style="bold")
        title.append_text(self._line(self.trial, True))
        title.append(" with")
        with Vertical(id="picker-body"):
            yield Static(title)
            yield Choices(*options, id="picker-choices")
            yield Static(Text("j / k move · Enter compares · Esc cancels", style="dim"))

    def _line(self, trial: int, with_model: bool) -> Text:
        """Outcome, attempt id (the trial name's random part: the task is the same), model, result."""
        info = self.session.info(trial)
        symbol, style = OUTCOME_BADGES[info.outcome]
        name = info.trial_name or info.task
        line = Text()
        line.append(f"{symbol} ", style)
        line.append(sanitize(name.rsplit("__", 1)[-1]))
        if with_model:
            line.append(f"  {sanitize(self.names.get(info.model, info.model))}", "cyan")
        line.append(f"  {sanitize(result_text(info.result, info.reward))}  {info.episodes} ep  {info.date[:10]}", "dim")
        return line

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        offered = (*self.same, *self.others)
        highlight = self.current if self.current in offered else pick_counterpart(self.session, self.trial)
        choices.highlighted = choices.get_option_index(str(highlight))
        choices.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:  # the headings have none, and cannot be chosen
            self.dismiss(int(event.option.id))

    def action_cancel(self) -> None:
        self.dismiss(None)
