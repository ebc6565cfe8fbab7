"""The triage screen's labels and notes: the store, the label names of the config file, this session's
records (for the label facet and column), the undo stack of `U`, what is held in memory while the disk
refuses writes, and the view (filters, trial) saved per dataset and restored on the next open.

Every line it returns says the truth about the disk: "saved" only after a commit, else held in memory,
not saved. No Textual here: the screen calls these and shows what they return.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ...data.facets import FilterState
from ...data.session import Session
from ...store.config import load_config
from ...store.facets import label_facet
from ...store.labels import Flushed, LabelStore, Written
from ...store.records import LabelChange, Record, TrialKey
from ...store.trial_keys import dataset_ids, session_records, trial_key
from ...store.unsaved import write_changes
from ...store.view import decode_view, encode_view

LABELS_WIDTH = 16
"""The labels column's widest: longer label lists are cut."""
RETRY_SECONDS = 5.0
"""How often the screen tries the disk again while changes are held in memory."""


@dataclass(frozen=True, slots=True)
class LabelUndo:
    """What `U` restores: whether `trial` had `label` before the last change."""

    key: TrialKey
    trial: int
    label: str
    on: bool


class LabelBook:
    """Opens the store and the config once; every change goes to the store at once and returns the
    line to show."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.config, config_warning = load_config()
        self.store = LabelStore.open(writer=True)
        self._warnings = [w for w in (config_warning, self.store.pop_warning()) if w]
        self.records: dict[int, Record] = {}
        self.undo_stack: list[LabelUndo] = []
        self.refresh()

    def warnings(self) -> list[str]:
        """Problems with the config file or the store since the last call (each one line for the user)."""
        found, self._warnings = self._warnings, []
        store = self.store.pop_warning()
        return found + ([store] if store else [])

    def refresh(self) -> None:
        """Re-read the store (other instances' changes included) and register the label facet."""
        self.records = session_records(self.session, self.store)
        self.session.facets.add(label_facet(self.session, self.store, self.config.labels, self.records))

    def column_width(self) -> int | None:
        """The labels column's width, or None when no trial has a label or a note."""
        if not self.records:
            return None
        longest = max(len(self.cell(trial, LABELS_WIDTH)) for trial in self.records)
        return max(len("labels"), min(LABELS_WIDTH, longest))

    def cell(self, trial: int, width: int) -> str:
        """The trial's labels (and ✎ for a note); on a narrow list, a marker."""
        record = self.records.get(trial)
        if record is None:
            return ""
        if width < 4:
            return ("●" if record.labels else "") + ("✎" if record.note else "")
        return ",".join(sorted(record.labels)) + (" ✎" if record.note else "")

    # --- changes -------------------------------------------------------------------------------
    def toggle(self, trial: int, label: str) -> str:
        key = trial_key(self.session, trial)
        written = self.store.toggle(key, label)
        self.undo_stack.append(LabelUndo(key, trial, label, not written.on))
        change = "Added" if written.on else "Removed"
        if written.saved:
            return f"{change} label {label!r} (saved; U undoes): {self.title(trial)}"
        return f"{change} label {label!r}, {self._held()}; U undoes: {self.title(trial)}"

    def undo(self) -> str | None:
        """Give the trial of the last change back what it had; None when there is nothing to undo."""
        if not self.undo_stack:
            return None
        last = self.undo_stack.pop()
        written = self.store.set_label(last.key, last.label, last.on)
        shown = ", ".join(sorted(self.store.labels(last.key))) or "none"
        if written.saved:
            return f"Undone: {self.title(last.trial)} has its labels back ({shown}; saved)."
        return f"Undone, {self._held()}: {self.title(last.trial)} has its labels back ({shown})."

    def note(self, trial: int) -> str:
        return self.store.note(trial_key(self.session, trial))

    def set_note(self, trial: int, text: str, base: str) -> str | None:
        """Save the note written over `base` (what the editor opened with); None when it is unchanged.
        A newer note saved elsewhere meanwhile is kept below it, and the line says so."""
        if text.strip() == base.strip():
            return None
        written = self.store.set_note(trial_key(self.session, trial), text, base)
        return _note_line(written, bool(text.strip()), self._held())

    def title(self, trial: int) -> str:
        info = self.session.info(trial)
        return info.trial_name or info.task

    # --- held in memory ------------------------------------------------------------------------
    @property
    def unsaved(self) -> int:
        """Label and note changes held in memory, not saved."""
        return self.store.held

    def unsaved_text(self) -> str:
        """What is held, for the quit prompt: "3 label changes and 1 note"."""
        changes = self.store.held_changes()
        labels = sum(isinstance(change, LabelChange) for change in changes)
        notes = len(changes) - labels
        parts = [_count(labels, "label change"), _count(notes, "note")]
        return " and ".join(part for part in parts if part)

    def retry(self) -> Flushed | None:
        """Try the disk again (off the UI thread: it may wait for a lock); see `LabelStore.retry`."""
        return self.store.retry()

    def flushed_line(self, flushed: Flushed) -> str | None:
        """The one line to say when held changes reached the disk (None when none were held)."""
        if not flushed.changes:
            return None
        merged = f"; {_count(flushed.merged, 'note')} kept beside a newer one" if flushed.merged else ""
        return f"Saved {_count(flushed.changes, 'held change')} to {self.store.path.name}{merged}."

    def default_unsaved_path(self) -> Path:
        return Path.cwd() / f"tracetui-unsaved-{time.strftime('%Y%m%d-%H%M%S')}.json"

    def write_unsaved(self, path: Path) -> str:
        """Write what is held to a new file at `path` (OSError when that fails); the line to print."""
        what = self.unsaved_text()
        write_changes(path, self.store.held_changes())
        return f"tracetui: {what} written to {path}; `tracetui labels import {path}` restores them"

    def lost_line(self) -> str:
        return f"tracetui: {self.unsaved_text()} not saved ({self.store.problem}): lost"

    def _held(self) -> str:
        return f"held in memory, NOT saved ({self.store.problem})"

    # --- the saved view ------------------------------------------------------------------------
    def saved_view(self) -> tuple[FilterState | None, int | None]:
        """The filters (None when there were none) and trial saved for these datasets."""
        state, trial = decode_view(self.session, self.store.load_view_state(dataset_ids(self.session)))
        return (state if state != FilterState() else None), trial

    def save_view(self, state: FilterState, trial: int | None) -> None:
        self.store.save_view_state(dataset_ids(self.session), encode_view(self.session, state, trial))


def _note_line(written: Written, kept_text: bool, held: str) -> str:
    if not written.saved:
        return f"Note {held}."
    if written.merged:
        return (
            "Note saved; a newer note saved elsewhere is kept below yours."
            if kept_text
            else "Note not removed: a newer one was saved elsewhere meanwhile."
        )
    return "Note saved." if kept_text else "Note removed."


def _count(n: int, thing: str) -> str:
    return "" if not n else f"{n} {thing}" + ("s" if n > 1 else "")
