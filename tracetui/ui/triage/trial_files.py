"""`T`: the open trial's other files (agent logs, verifier output, artifacts, config, lock, trial log,
exception: harbor view's tabs) in a small picker with their sizes; Enter opens one in the pager the app
already uses (`external.PAGER`). Only a trial of a harbor job folder has a folder; for the others the
message line says so.

The folder is listed and the file read in a worker (job folders often sit on network filesystems);
names and text are sanitized (`data.jobs.trial_files`); nothing is written into the folder.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...data.cache_folders import size_text
from ...data.jobs.trial_files import MAX_FILES, TrialFile, read_page, trial_files
from ...trace.sanitize import sanitize
from .. import keymap
from ..evidence import FeatureHost
from ..work import in_thread
from .external import PAGER, open_external

GROUP = "trial-files"
NO_FOLDER = "This trial comes from a dataset: only trials of harbor job folders have other files to open."
KIND_WIDTH = 10
SIZE_WIDTH = 9


class Files(OptionList):
    """The files to choose from: the list keys of the app (j / k, g / G, paging) move in it."""

    BINDINGS = [*keymap.MOVE]


class FilePicker(ModalScreen[TrialFile | None]):
    """Dismisses with the chosen file, or None (Esc)."""

    BINDINGS = [*keymap.TRIAL_FILES]

    def __init__(self, trial_name: str, files: list[TrialFile], more: bool) -> None:
        super().__init__()
        self.trial_name = trial_name
        self.files = files
        self.more = more

    def compose(self) -> ComposeResult:
        title = Text(f"{sanitize(self.trial_name)}: its files", style="bold")
        with Vertical(id="picker-body"):
            yield Static(title)
            yield Files(*(Option(self._line(f), id=str(n)) for n, f in enumerate(self.files)), id="picker-choices")
            hint = "j / k move · Enter opens in $PAGER · Esc closes"
            if self.more:
                hint = f"the first {MAX_FILES:,} files · {hint}"
            yield Static(Text(hint, style="dim"))

    @staticmethod
    def _line(file: TrialFile) -> Text:
        """Kind and size first, then the path (which wraps when long)."""
        line = Text(f"{file.kind:<{KIND_WIDTH}} ", style="cyan")
        line.append(f"{'link' if file.link else size_text(file.size):>{SIZE_WIDTH}}  ", style="dim")
        line.append(sanitize(file.path))
        return line

    def on_mount(self) -> None:
        self.query_one(Files).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(self.files[int(event.option.id)])

    def action_cancel(self) -> None:
        self.dismiss(None)


class TrialFilesHost(FeatureHost, Protocol):
    """What the other files of a trial use of the triage screen."""

    @property
    def app(self) -> App[Any]: ...
    def no_trial(self) -> None: ...


class TrialFiles:
    """`T` on the triage screen: list the trial's folder (in a worker), then the picker, then the pager."""

    def __init__(self, host: TrialFilesHost) -> None:
        self.host = host

    def pick(self) -> None:
        host = self.host
        trial = host.trial
        if trial is None:
            host.no_trial()
            return
        folder = host.session.trial_folder(trial)
        if folder is None:
            host.status(NO_FOLDER, about=host.about_trial)
            return
        name = host.session.info(trial).trial_name or folder.name
        self._in_worker(partial(self._list, folder, name))

    def _in_worker(self, work: Callable[[], None]) -> None:
        in_thread(self.host, work, GROUP, "Reading the trial's files")

    def _list(self, folder: Path, name: str) -> None:
        files, more = trial_files(folder)
        self.host.app.call_from_thread(self._offer, folder, name, files, more)

    def _offer(self, folder: Path, name: str, files: list[TrialFile], more: bool) -> None:
        host = self.host
        if isinstance(host.app.screen, FilePicker):  # T twice: the first listing's picker is up
            return
        if not files:
            host.status(f"No files in {sanitize(str(folder))} (or it cannot be read).", about=host.about_trial)
            return
        host.app.push_screen(FilePicker(name, files, more), partial(self._chosen, folder))

    def _chosen(self, folder: Path, file: TrialFile | None) -> None:
        if file is not None:
            self._in_worker(partial(self._read, folder, file))

    def _read(self, folder: Path, file: TrialFile) -> None:
        page = read_page(folder, file)
        self.host.app.call_from_thread(self._page, file, page.text, page.note)

    def _page(self, file: TrialFile, text: str | None, note: str | None) -> None:
        """On the UI thread: the pager on the text (the app suspended), or the line why not."""
        host = self.host
        problem = None if text is None else open_external(host.app, PAGER, text, _suffix(file.path))
        line = problem or note
        if line is not None:
            host.status(line, about=host.about_trial)


def _suffix(path: str) -> str:
    """The file's own suffix for the temporary copy (a pager may colour by it), if it is a plain one."""
    suffix = Path(path).suffix
    return suffix if suffix[1:].isalnum() and len(suffix) <= 8 else ".txt"
