"""Export the listed trials (`ctrl+e`): the path prompt, the question before a file is replaced, the
worker (group "export": Esc cancels it) and, in a browser, the file sent to the browser instead.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from textual.app import App
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ..evidence import FeatureHost
from ..format import counted
from ..widgets.bars import PromptBar, PromptMode
from ..work import WorkDone, WorkProgress, in_thread
from .browser import Download, deliveries, download_name, in_browser
from .labels import LabelBook
from .routes import WhenWhole

if TYPE_CHECKING:
    from ...ask.index import AskIndex

GROUP = "export"


class ExportHost(FeatureHost, Protocol):
    """What the export uses of the triage screen."""

    @property
    def app(self) -> App[Any]: ...
    @property
    def prompt(self) -> PromptBar: ...


class Export:
    def __init__(
        self, host: ExportHost, labels: LabelBook, answers: dict[str, AskIndex], when_whole: WhenWhole
    ) -> None:
        self.host = host
        self.labels = labels
        self.when_whole = when_whole
        self.answers = answers
        """The questions asked, by facet name: each an export column."""
        self._overwriting = ""
        """The export path the user is asked about (the file is there)."""

    def begin(self) -> None:
        name = f"tracetui-export-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        where = "download the listed trials as" if in_browser(self.host.app) else "export the listed trials to"
        self.host.prompt.ask(PromptMode.EXPORT, f"{where} (.jsonl / .parquet / .csv; Esc cancels)", name)

    def export_to(self, path: str) -> None:
        """The export prompt's answer: export, unless a file is there, which is replaced only once the
        user says so."""
        target = Path(path).expanduser()
        if target.is_dir():
            self.host.status(f"{path} is a folder: ctrl+e again, with a file name.")
        elif target.exists():
            self._overwriting = path
            self.host.prompt.ask(PromptMode.OVERWRITE, f"the file exists: y replaces it, Esc keeps it ({path})")
        else:
            self.run(path)

    def overwrite_answered(self, answer: str) -> None:
        path, self._overwriting = self._overwriting, ""
        if answer.strip().lower() in ("y", "yes"):
            self.run(path)
        else:
            self.host.status(f"Not exported: {path} is kept as it was.")

    def run(self, path: str) -> None:
        """Export the trials listed to `path` in a worker: now, or once a growing list is whole (its file
        asked about before, not when the list happens to end growing)."""
        self.when_whole.run(f"Export to {path}", partial(self._begin, path))

    def _begin(self, path: str) -> None:
        trials = np.asarray(self.host.trial_list.order)
        in_thread(self.host, partial(self._run, path, trials), GROUP, "Export")

    def _run(self, path: str, trials: np.ndarray) -> None:
        from ...ask.index import answer_columns
        from ...data.export import export_trials
        from ...store.trial_keys import session_records

        worker = get_current_worker()
        host, session, app = self.host, self.host.session, self.host.app
        records = session_records(session, self.labels.store)
        # in a browser, the file is written for the browser, not to a path on the server
        download = Download(download_name(path, "tracetui-export.jsonl")) if in_browser(app) else None
        rows = 0  # written

        def progress(fraction: float, rows: str) -> None:
            host.post_message(WorkProgress(f"Exporting {rows}… (Esc cancels)", fraction))

        try:
            rows = export_trials(
                session,
                trials,
                Path(path).expanduser() if download is None else download.path,
                {t: set(r.labels) for t, r in records.items()},
                {t: r.note for t, r in records.items()},
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
                columns=answer_columns(session, list(self.answers.values())),
            )
        except SourceError as exc:
            host.post_message(WorkDone(f"Export failed: {exc}"))
            return
        finally:
            if download is not None and not rows:
                download.discard()
        done = f"Exported {counted(len(trials), 'trial')} ({counted(rows, 'row')})"
        if not rows:
            host.post_message(WorkDone("Export cancelled."))
        elif download is None:
            host.post_message(WorkDone(f"{done} to {path}"))
        else:
            host.post_message(WorkDone(f"{done}: sending {download.name} to your browser…"))
            app.call_from_thread(deliveries(app).send, download.take(), download.name, done, host.status)
