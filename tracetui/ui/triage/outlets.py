"""Getting a message or a trial out of the triage screen: `y` / `Y` copy, `p` / `P` the pager, `E` the
editor, `T` a trial's other files (`external.py` does the copying and runs the programs; this part picks
the text; `trial_files.py` the file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.app import App

from ...trace.sanitize import sanitize
from ..evidence import FeatureHost
from .external import EDITOR, PAGER, copy_text, open_external
from .panes import TrialPanes
from .trial_files import TrialFiles


class OutletsHost(FeatureHost, Protocol):
    """What copying and the external programs use of the triage screen."""

    @property
    def app(self) -> App[Any]: ...
    @property
    def focused(self) -> object: ...
    def no_trial(self) -> None: ...


class Outlets:
    def __init__(self, host: OutletsHost, panes: TrialPanes) -> None:
        self.host = host
        self.panes = panes
        self.files = TrialFiles(host)

    def trial_files(self) -> None:
        """`T`: the trial's other files (a harbor trial folder's logs, artifacts, config…) in the pager."""
        self.files.pick()

    def copy(self) -> None:
        """`y`: the current message in the conversation, else the trial's id."""
        host = self.host
        if host.trial is None:
            host.no_trial()
            return
        message = host.conversation.current_message()
        if host.focused is host.conversation and message is not None:
            host.status(copy_text(host.app, sanitize(message.content), host.status))
        else:
            info = host.session.info(host.trial)
            host.status(copy_text(host.app, info.trial_name or f"{info.run_id}:{info.task}", host.status))

    def copy_trial(self) -> None:
        self._with_trial_markdown(
            lambda text: self.host.status(copy_text(self.host.app, text, self.host.status, suffix=".md"))
        )

    def pager(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open(PAGER, text)

    def pager_trial(self) -> None:
        self._with_trial_markdown(lambda text: self._open(PAGER, text, ".md"))

    def editor(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open(EDITOR, text)

    def _open(self, program: tuple[str, str], text: str, suffix: str = ".txt") -> None:
        problem = open_external(self.host.app, program, text, suffix)
        if problem is not None:
            self.host.status(problem)

    def _with_trial_markdown(self, then: Callable[[str], object]) -> None:
        """`then(the selected trial as Markdown)`, once its text is read (from the hub first if need be);
        the message line says why not when no trial is listed."""
        from ...data.export import trial_markdown

        trial = self.host.trial
        if trial is None:
            self.host.no_trial()
            return
        self.panes.when_ready((trial,), lambda: then(trial_markdown(self.host.session, trial)))

    def _current_text(self) -> str | None:
        """The current message's text; None (and the message line says why) when there is none."""
        host = self.host
        message = host.conversation.current_message()
        if message is None:
            host.no_trial() if host.trial is None else host.status(
                "No message shown yet (the trial is loading).", about=host.about_trial
            )
            return None
        return sanitize(message.content)
