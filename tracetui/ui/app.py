"""The Textual app: opens the session in a worker, then shows the triage screen.

A hub dataset that is not downloaded yet opens from its metadata, read over HTTP; a worker then
downloads and converts it (`data.download`) and swaps the local copy into the session, unless the user
said `--no-download` or it would not fit on the disk. Both workers post their news to the app as
messages (`ui/work.py`).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from textual import events, on, work
from textual.app import App
from textual.command import Provider
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from .. import collector
from ..data.errors import SourceError, one_line
from ..data.facets import FilterState
from ..data.session import Session, open_session
from ..data.sources import Progress, ResolvedSource
from . import frame_timer, strip_cycles
from .background import WorkerCancelled, detached
from .format import human_size
from .key_order import KeyDone, KeyOrder
from .screens.loading import LoadingScreen
from .screens.triage import TriageScreen
from .triage.browser import delivery_ended
from .user_keymap import apply_user_keymap
from .work import WorkProgress, failure_line

GROWN_RETRY = 0.5
"""Seconds between looks at a list still growing, for a local copy downloaded before it is whole."""


class Cancelled(Exception):
    """Raised from the progress callback to stop a conversion when the user leaves."""


@dataclass
class Opened(Message):
    """The session is open: the triage screen shows it."""

    session: Session


@dataclass
class OpenFailed(Message):
    """The sources cannot be opened: the app exits and the command line prints `error`."""

    error: SourceError


@dataclass
class LocalCopy(Message):
    """Remote dataset `index` is downloaded and converted: `dataset` replaces it in `session`."""

    session: Session
    index: int
    dataset: Any
    sizes: Any


@dataclass
class Notice(Message):
    """A notice of the data layer (`cache for X was damaged: rebuilding`), posted from any thread."""

    text: str


class Notices(logging.Handler):
    """The data layer's warnings (the "tracetui" logger), shown by the app while it runs."""

    def __init__(self, app: App) -> None:
        super().__init__(logging.WARNING)
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        self.app.post_message(Notice(one_line(record.getMessage())))


@dataclass
class DownloadStopped(Message):
    """The download failed (`reason`); reading from the hub goes on."""

    session: Session
    reason: str


@dataclass(slots=True)
class StartOptions:
    """What the command line asked for besides the sources."""

    filters: FilterState = field(default_factory=FilterState)
    trial: str | None = None
    download: bool = True
    """Download a dataset read from the hub in the background, then read the local copy (--no-download: never)."""
    cache_size: int | None = None
    """Bytes of fetched row groups kept on disk while reading from the hub (None: the default)."""
    opening: Callable[[Progress], Session] | None = None
    """The session already being opened (the command line starts as soon as the sources resolve): the
    opening worker passes it its progress and waits for it, instead of opening the sources itself."""


def _screen_commands() -> type[Provider]:
    """The palette's providers load when it first opens, not before the first frame (ui/commands.py
    brings the help screen's key table with it)."""
    from .commands import ScreenCommands

    return ScreenCommands


class TraceApp(App):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "tracetui"
    COMMANDS = App.COMMANDS | {_screen_commands}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self, sources: list[ResolvedSource], options: StartOptions | None = None, session: Session | None = None
    ) -> None:
        frame_timer.mend()  # before any screen starts its update timer
        strip_cycles.mend()
        super().__init__()
        self.sources = sources
        self.options = options or StartOptions()
        self.session: Session | None = session
        self.error: SourceError | None = None
        """Why the session could not open; the command line prints it after the terminal is restored."""
        self.user_keymap: dict[str, str] = {}
        """The config file's `[keymap]`: binding id → keys (the help screen and palette show them)."""
        self._notices = Notices(self)
        self.keys = KeyOrder(self, super().on_event)
        self._drawn_at = time.monotonic()
        self._rested_after: float | None = None
        """The frame after which the app last collected at rest: once a rest, not every second of it."""

    def on_unmount(self) -> None:
        logging.getLogger("tracetui").removeHandler(self._notices)
        self._heed_signals(False)

    STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name))
    """A terminal that hangs up (an SSH connection dropped) or a stop asked of the process."""

    def _heed_signals(self, on: bool) -> None:
        """STOP_SIGNALS quit the way `q` does, save for the prompt nobody can answer (`_stopped`); the
        default (the process ends at once, a note being written with it) once one came or the app is
        gone. A signal the process ignores (`nohup`) stays ignored. Not where the event loop takes no
        signals (Windows, a thread other than the main one)."""
        loop = asyncio.get_running_loop()
        for number in self.STOP_SIGNALS:
            try:
                if not on:
                    loop.remove_signal_handler(number)
                elif signal.getsignal(number) != signal.SIG_IGN:
                    loop.add_signal_handler(number, self.call_later, self._stopped, number)
            except (NotImplementedError, RuntimeError, ValueError):
                return

    def _stopped(self, number: int) -> None:
        """Ends with 128 + the signal's number, as a process the signal ended would (a script can tell);
        a second signal meanwhile ends it at once."""
        self._heed_signals(False)
        triage = self._triage()
        self.exit(triage.others.stopped_from_outside() if triage is not None else None, return_code=128 + number)

    def _triage(self) -> TriageScreen | None:
        return next((screen for screen in self.screen_stack if isinstance(screen, TriageScreen)), None)

    @on(Notice)
    def _notice(self, event: Notice) -> None:
        self.notify(event.text, severity="warning", markup=False, timeout=10)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run the app; a line it leaves as its result (what became of unsaved labels) is printed once
        the terminal is back, whole: Rich would cut or wrap it at the width, and it may hold a path."""
        result = super().run(*args, **kwargs)
        if isinstance(result, str):
            print(result, file=sys.stderr)
        return result

    async def action_quit(self) -> None:
        """Every way out (q, ctrl+q, the palette's Quit) asks first while labels or notes are unsaved."""
        triage = self._triage()
        if triage is None:
            self.exit()
        else:
            triage.others.request_quit()

    async def on_event(self, event: events.Event) -> None:
        """Keys go through `KeyOrder`: in order, each once the one before has done all it does."""
        if not await self.keys.take(event):
            await super().on_event(event)

    @on(KeyDone)
    def _key_done(self, marker: KeyDone) -> None:
        self.keys.done(marker)

    def on_mount(self) -> None:
        logging.getLogger("tracetui").addHandler(self._notices)
        self._heed_signals(True)
        self.user_keymap = apply_user_keymap(self)
        self.call_later(self._first_screen)
        self.set_interval(collector.REST_SECONDS, self._collect_at_rest)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        """Each frame Textual writes: the time of the last one tells when the app is at rest."""
        self._drawn_at = time.monotonic()
        super()._display(screen, renderable)

    def _collect_at_rest(self) -> None:
        """The full garbage collection put off while the app works (`collector`), made once it has
        drawn nothing for a while (whatever the user does next, a key or a scroll, draws a frame first),
        and not again until it has drawn: what an idle app allocates meanwhile is not worth a scan."""
        drawn = self._drawn_at
        if drawn != self._rested_after and time.monotonic() - drawn >= collector.REST_SECONDS:
            self._rested_after = drawn
            collector.collect_at_rest()

    def _first_screen(self) -> None:
        """The triage screen of a session opened before the app ran, else the loading screen. Pushed once
        the app's own mount is over: a screen pushed during it is composed and rendered inside Textual's
        batch of the app's start, whose frame is never written, so the terminal got the first screen
        only from a second render, after the callbacks that wait for the first frame (~50 ms later)."""
        if self.session is not None:
            self._loaded(self.session)
            return
        title = ", ".join(s.dataset_id for s in self.sources)
        if any(s.hub_files is not None and not s.downloaded for s in self.sources):
            title += " (its metadata, from the Hugging Face hub)"
        self.push_screen(LoadingScreen(title))
        self.load()

    @work(thread=True, exclusive=True, name="open-session", exit_on_error=False, description="Opening")
    def load(self) -> None:
        worker = get_current_worker()

        def progress(fraction: float, message: str) -> None:
            if worker.is_cancelled:
                raise Cancelled()
            self.post_message(WorkProgress(message, fraction))

        opening = self.options.opening or (
            lambda report: open_session(self.sources, report, self.options.cache_size, partial=True)
        )
        try:
            session = detached(lambda: opening(progress))
        except (Cancelled, WorkerCancelled):
            return
        except SourceError as exc:
            self.post_message(OpenFailed(exc))
            return
        self.post_message(Opened(session))

    @on(WorkProgress)
    def _progress(self, event: WorkProgress) -> None:
        loading = self._loading()
        if loading is not None:
            loading.progress(event.fraction, event.text)

    def _loading(self) -> LoadingScreen | None:
        """The loading screen while it shows; None after it, and once the app has closed its screens (the
        opening worker's last news can arrive then)."""
        top = self.screen_stack[-1] if self.screen_stack else None
        return top if isinstance(top, LoadingScreen) else None

    @on(OpenFailed)
    def _open_failed(self, event: OpenFailed) -> None:
        self.error = event.error
        self.exit(None, 2)

    @on(Opened)
    def _opened(self, event: Opened) -> None:
        self._loaded(event.session)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of the app that raised: opening ends in one line on the command line; a failed
        download is said in a notification, and reading from the hub goes on."""
        if event.state != WorkerState.ERROR:
            return
        if event.worker.name == "open-session":
            self.error = SourceError(failure_line(event.worker))
            self.exit(None, 2)
        elif self.session is not None:
            self.post_message(DownloadStopped(self.session, failure_line(event.worker)))

    def _loaded(self, session: Session) -> None:
        self.session = session
        trial, wanted = None, None
        if self.options.trial:
            trial = session.find_trial(self.options.trial)
            if trial is None and session.growing is not None:
                wanted = self.options.trial  # in a file not read yet, maybe: looked for once the list is whole
            elif trial is None:
                self.notify(f"No trial named {self.options.trial!r}", severity="warning", markup=False)
        filters = self.options.filters
        given = filters if (filters.selected or filters.text) else None  # none given: resume the last view
        screen = TriageScreen(session, given, trial, wanted)
        loading = self._loading()
        if loading is not None:
            self.switch_screen(screen)
            if loading.typed:  # typed ahead: handed over in order once the triage screen has drawn
                screen.call_after_refresh(self._type_ahead, loading.typed)
        else:
            self.push_screen(screen)
        self._start_download(session)

    async def _type_ahead(self, keys: list[events.Key]) -> None:
        for key in keys:
            await self.keys.take(key)

    # --- the background download of datasets read from the hub -------------------------------
    def _start_download(self, session: Session) -> None:
        if not session.remote or not self.options.download:
            return
        from ..data.download import Download, disk_shortfall, missing_bytes, remote_datasets

        remote = [dataset for _, dataset in remote_datasets(session)]
        for dataset in remote:
            shortfall = disk_shortfall(dataset)
            if shortfall is not None:
                needed, free = shortfall
                self.notify(
                    f"{dataset.label}: {human_size(needed)} to download and convert, {human_size(free)} free:"
                    " reading it from the hub (as with --no-download).",
                    markup=False,
                    timeout=10,
                )
                return
        session.download = Download(total=sum(missing_bytes(dataset) for dataset in remote))
        self.download_local(session)

    @work(thread=True, exclusive=True, group="download", exit_on_error=False, description="Download")
    def download_local(self, session: Session) -> None:
        """Download and convert each remote dataset, then swap its local copy into the session."""
        from ..data.download import Cancelled as DownloadCancelled
        from ..data.download import local_copy, remote_datasets

        worker = get_current_worker()
        state = session.download
        assert state is not None  # set by _start_download
        for index, remote in remote_datasets(session):
            cancelled = lambda: worker.is_cancelled  # noqa: E731
            try:
                dataset, sizes = detached(
                    partial(local_copy, remote, state, cancelled, self.options.cache_size), "tracetui-download"
                )
            except (WorkerCancelled, DownloadCancelled):
                return
            except SourceError as exc:
                self.post_message(DownloadStopped(session, str(exc)))
                return
            self.post_message(LocalCopy(session, index, dataset, sizes))

    @on(LocalCopy)
    def _use_local(self, event: LocalCopy) -> None:
        session = event.session
        if session.growing is not None:  # the local copy replaces the whole list: once it is whole
            self.set_timer(GROWN_RETRY, partial(self.post_message, event))
            return
        session.use_local(event.index, event.dataset, event.sizes)
        if not session.remote and session.download is not None:
            session.download.finished = True
            label = event.dataset.label
            self.notify(f"Downloaded: {label} is now read from the local copy.", markup=False, timeout=4)

    def on_delivery_complete(self, event: events.DeliveryComplete) -> None:
        delivery_ended(self, event)  # a file handed to the browser (`tracetui web`) was fetched

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        delivery_ended(self, event)

    @on(DownloadStopped)
    def _download_stopped(self, event: DownloadStopped) -> None:
        if event.session.download is not None:
            event.session.download.error = event.reason
        self.notify(
            f"Download stopped ({event.reason}); reading from the hub goes on, and the next start resumes it.",
            severity="warning",
            markup=False,
            timeout=10,
        )
