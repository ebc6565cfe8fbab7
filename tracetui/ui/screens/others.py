"""The screens the triage screen opens, and what it does with their answers: stats and head-to-head (a
filter picked there narrows the list's), the comparison of two attempts (its picker first), the terminal
recording, help, the note editor, and the question before quitting with unsaved labels.

Each screen is imported on first use: none is needed for the first frame.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Protocol

import numpy as np
from textual.app import App

from ..evidence import FeatureHost
from ..findings import FindingsController
from ..triage.filters import Filters
from ..triage.labelling import Labelling
from ..triage.panes import TrialPanes
from ..triage.search import Search


class OthersHost(FeatureHost, Protocol):
    """What opening other screens uses of the triage screen."""

    @property
    def app(self) -> App[Any]: ...
    def no_trial(self) -> None: ...
    def call_after_refresh(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...


class OtherScreens:
    def __init__(
        self,
        host: OthersHost,
        filters: Filters,
        search: Search,
        findings: FindingsController,
        panes: TrialPanes,
        labelling: Labelling,
    ) -> None:
        self.host = host
        self.session = host.session
        self.filters, self.search, self.findings, self.panes, self.labelling = (
            filters,
            search,
            findings,
            panes,
            labelling,
        )
        self.labels = labelling.labels
        self._compared: dict[int, int] = {}
        """The attempt each trial was last compared with: `c` offers it first again."""

    def _visible(self) -> np.ndarray:
        return self.session.facets.apply(self.host.state, self.search.mask).visible

    def stats(self) -> None:
        from .stats import StatsScreen

        self.host.app.push_screen(StatsScreen(self.session, self._visible(), self.findings.hacked), self.filters.picked)

    def head_to_head(self) -> None:
        from .headtohead import HeadToHeadScreen

        screen = HeadToHeadScreen(self.session, self._visible(), self.findings.hacked)
        self.host.app.push_screen(screen, self.filters.picked)

    def compare(self) -> None:
        """c: choose the other side in the picker, then compare side by side."""
        from ...data.compare import pick_counterpart
        from .compare import CompareScreen
        from .compare_picker import ComparePicker

        host, app = self.host, self.host.app
        trial = host.trial
        if trial is None or pick_counterpart(self.session, trial) is None:
            host.status("No other attempt of this task to compare with.", about=host.about_trial)
            return

        def chosen(other: int | None) -> None:
            if other is not None:
                self._compared[trial] = other
                self.panes.when_ready(
                    (trial, other), lambda: app.push_screen(CompareScreen(self.session, trial, other))
                )

        names = host.trial_list.model_names
        app.push_screen(ComparePicker(self.session, trial, names, self._compared.get(trial)), chosen)

    def recording(self) -> None:
        """r: the trial's terminal recording, at the episode of the message being read."""
        from .recording import RecordingScreen

        trial = self.host.trial
        if trial is None:
            self.host.no_trial()
            return
        path = self.session.recording(trial)
        if path is None:
            self.host.status("No recording for this trial.", about=self.host.about_trial)
            return
        info = self.session.info(trial)
        episode = self.host.conversation.episode_position()[0]  # None in a sub-agent's conversation
        self.host.app.push_screen(RecordingScreen(path, info.trial_name or info.task, episode))

    def help(self) -> None:
        from .help import HelpScreen

        self.host.app.push_screen(HelpScreen())

    def annotate(self) -> None:
        """a: the note editor on the selected trial's note."""
        from .note import NoteScreen

        trial = self.host.trial
        if trial is None:
            self.host.no_trial()
            return
        base = self.labels.note(trial)  # what the note is written over: a newer one is kept beside it
        editor = NoteScreen(trial, self.labels.title(trial), base)
        self.host.app.push_screen(editor, partial(self.labelling.note_written, trial, base))

    def quitting(self) -> bool:
        """Whether the quit prompt is up (the store, tried again, may have left it nothing to ask)."""
        from .quit import QuitScreen

        return isinstance(self.host.app.screen, QuitScreen)

    def request_quit(self) -> None:
        """Quit, unless labels or notes are held in memory: then ask (write them to a file, quit
        anyway, stay), after one more try of the disk. A note being written is saved first."""
        from .note import NoteScreen
        from .quit import QuitScreen

        app = self.host.app
        if isinstance(app.screen, QuitScreen):
            return
        if isinstance(app.screen, NoteScreen):  # ctrl+q from the editor: save, then ask
            app.screen.action_save()
            self.host.call_after_refresh(self.request_quit)
            return
        if not self.labels.unsaved:
            app.exit()
            return
        line = self._tried_again()
        if line is None:
            app.push_screen(QuitScreen(self.labels), self._quit_answer)
        else:
            app.exit(line)

    def _tried_again(self) -> str | None:
        """One more try of the disk for what is held: the line to print when it took it, else None."""
        flushed = self.labels.retry()
        return None if flushed is None else f"tracetui: {self.labels.flushed_line(flushed)}"

    def stopped_from_outside(self) -> str | None:
        """The terminal hung up (an SSH connection dropped) or the process was told to stop: nobody is
        there to answer the quit prompt. The note being written is saved as it stands; what the disk
        still refuses after one more try is written to a file (`labels import` restores it). Returns the
        line to print on the way out."""
        from .note import NoteScreen

        editor = next((s for s in self.host.app.screen_stack if isinstance(s, NoteScreen)), None)
        if editor is not None:
            self.labelling.note_written(editor.trial, editor.text, editor.text_now())
        if not self.labels.unsaved:
            return None
        line = self._tried_again()
        if line is not None:
            return line
        try:
            return self.labels.write_unsaved(self.labels.default_unsaved_path())
        except OSError:
            return self.labels.lost_line()

    def _quit_answer(self, farewell: str | None) -> None:
        """The prompt's answer: the line to print after quitting (the app's result), or None to stay."""
        if farewell is not None:
            self.host.app.exit(farewell)
