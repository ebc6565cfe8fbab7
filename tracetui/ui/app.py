"""The Textual app: opens the session in a worker, then shows the triage screen."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from textual import work
from textual.app import App
from textual.worker import get_current_worker

from ..data.errors import SourceError
from ..data.facets import FilterState
from ..data.session import Session, open_session
from ..data.sources import ResolvedSource
from .commands import ScreenCommands
from .screens.loading import LoadingScreen
from .screens.triage import TriageScreen
from .user_keymap import apply_user_keymap


class Cancelled(Exception):
    """Raised from the progress callback to stop a conversion when the user leaves."""


@dataclass(slots=True)
class StartOptions:
    """What the command line asked for besides the sources."""

    filters: FilterState = field(default_factory=FilterState)
    trial: str | None = None


class TraceApp(App):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "tracetui"
    COMMANDS = App.COMMANDS | {ScreenCommands}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self, sources: list[ResolvedSource], options: StartOptions | None = None, session: Session | None = None
    ) -> None:
        super().__init__()
        self.sources = sources
        self.options = options or StartOptions()
        self.session: Session | None = session
        self.error: SourceError | None = None
        """Why the session could not open; the command line prints it after the terminal is restored."""
        self.user_keymap: dict[str, str] = {}
        """The config file's `[keymap]`: binding id → keys (the help screen and palette show them)."""

    def on_mount(self) -> None:
        self.user_keymap = apply_user_keymap(self)
        if self.session is not None:
            self._loaded(self.session)
            return
        title = ", ".join(s.dataset_id for s in self.sources)
        self.push_screen(LoadingScreen(title))
        self.load()

    @work(thread=True, exclusive=True, name="open-session")
    def load(self) -> None:
        worker = get_current_worker()

        def progress(fraction: float, message: str) -> None:
            if worker.is_cancelled:
                raise Cancelled()
            self.call_from_thread(self._progress, fraction, message)

        try:
            session = open_session(self.sources, progress)
        except Cancelled:
            return
        except SourceError as exc:
            self.error = exc
            self.call_from_thread(self.exit, None, 2)
            return
        self.call_from_thread(self._loaded, session)

    def _progress(self, fraction: float, message: str) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.screen.progress(fraction, message)

    def _loaded(self, session: Session) -> None:
        self.session = session
        trial = None
        if self.options.trial:
            trial = session.find_trial(self.options.trial)
            if trial is None:
                self.notify(f"No trial named {self.options.trial!r}", severity="warning", markup=False)
        filters = self.options.filters
        given = filters if (filters.selected or filters.text) else None  # none given: resume the last view
        screen = TriageScreen(session, given, trial)
        if isinstance(self.screen, LoadingScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
