"""Getting things out of the app: copy (OSC 52), `$PAGER`, `$EDITOR`, and export of the filtered trials.

Pager and editor run through `App.suspend()`; export runs in a worker with progress and Esc to cancel.
The modules behind them import on first use, off the start-up path.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from textual import work
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...trace.sanitize import sanitize
from ..work import WorkDone, WorkProgress


class ExternalActions:
    """Mixed into TriageScreen (needs `session`, `trial`, `conversation`, `trial_list`, `status`)."""

    def _write_terminal(self, data: bytes) -> None:
        driver = self.app._driver  # Textual has no public raw-write API; OSC 52 must reach the terminal
        if driver is None:
            raise OSError("no terminal")
        driver.write(data.decode("ascii"))
        driver.flush()

    def _copy(self, text: str, suffix: str = ".txt") -> None:
        from ...clipboard import copy

        self.status(copy(text, self._write_terminal, suffix=suffix))

    def action_copy(self) -> None:
        """`y`: the current message in the conversation, else the trial's id."""
        if self.trial is None:
            return
        message = self.conversation.current_message()
        if self.focused is self.conversation and message is not None:
            self._copy(sanitize(message.content))
        else:
            info = self.session.info(self.trial)
            self._copy(info.trial_name or f"{info.run_id}:{info.task}")

    def action_copy_trial(self) -> None:
        from ...data.export import trial_markdown

        if self.trial is not None:
            self._copy(trial_markdown(self.session, self.trial), suffix=".md")

    # --- pager and editor ----------------------------------------------------------------------
    def _open_external(self, command_env: str, fallback: str, text: str, suffix: str) -> None:
        command = os.environ.get(command_env) or fallback
        with tempfile.NamedTemporaryFile("w", suffix=suffix, prefix="tracetui-", delete=False, encoding="utf-8") as f:
            f.write(text)
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(command), f.name], check=False)
        except Exception as exc:  # no terminal to hand over (headless), or no such program
            self.status(f"Could not run {command!r}: {exc}. The text is in {f.name}")
            return
        finally:
            self.refresh()
        os.unlink(f.name)

    def _current_text(self) -> str | None:
        message = self.conversation.current_message()
        return sanitize(message.content) if message is not None else None

    def action_pager(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open_external("PAGER", "less -R", text, ".txt")

    def action_pager_trial(self) -> None:
        from ...data.export import trial_markdown

        if self.trial is not None:
            self._open_external("PAGER", "less -R", trial_markdown(self.session, self.trial), ".md")

    def action_editor(self) -> None:
        text = self._current_text()
        if text is not None:
            self._open_external("EDITOR", "vi", text, ".txt")

    # --- export --------------------------------------------------------------------------------
    def action_export(self) -> None:
        name = f"tracetui-export-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        self.prompt.ask("export", "export the listed trials to (.jsonl / .parquet / .csv; Esc cancels)", name)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False, description="Export")
    def run_export(self, path: str) -> None:
        from ...data.export import export_trials
        from ...store.labels import session_records

        worker = get_current_worker()
        trials = np.asarray(self.trial_list.order)
        records = session_records(self.session, self.store)
        progress = lambda f, rows: self.post_message(WorkProgress(f"Exporting {rows}… (Esc cancels)", f))  # noqa: E731
        try:
            rows = export_trials(
                self.session,
                trials,
                Path(path).expanduser(),
                {t: set(r.labels) for t, r in records.items()},
                {t: r.note for t, r in records.items()},
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
            )
        except SourceError as exc:
            message = f"Export failed: {exc}"
        else:
            message = f"Exported {len(trials):,} trials ({rows:,} rows) to {path}" if rows else "Export cancelled."
        self.post_message(WorkDone(message))
