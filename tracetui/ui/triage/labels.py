"""The triage screen's labels and notes: the store, the label names of the config file, this session's
records (for the label facet and column) and the undo stack of `U`; and the view (filters, trial) saved
per dataset and restored on the next open.

No Textual here: the screen calls these and shows what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...data.facets import FilterState
from ...data.session import Session
from ...store.config import load_config
from ...store.facets import label_facet
from ...store.labels import (
    LabelStore,
    Record,
    TrialKey,
    dataset_ids,
    decode_view,
    encode_view,
    session_records,
    trial_key,
)

LABELS_WIDTH = 16
"""The labels column's widest: longer label lists are cut."""


@dataclass(frozen=True, slots=True)
class LabelUndo:
    """What `U` restores: the labels `trial` had before the last change."""

    key: TrialKey
    trial: int
    labels: frozenset[str]


class LabelBook:
    """Opens the store and the config once; every change is saved at once and returns the line to show."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.config, config_warning = load_config()
        self.store = LabelStore.open()
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
        before = self.store.labels(key)
        on = self.store.toggle(key, label)
        self.undo_stack.append(LabelUndo(key, trial, before))
        change = "Added" if on else "Removed"
        return f"{change} label {label!r} (saved; U undoes): {self.title(trial)}"

    def undo(self) -> str | None:
        """Give the trial of the last change back its labels; None when there is nothing to undo."""
        if not self.undo_stack:
            return None
        last = self.undo_stack.pop()
        self.store.set_labels(last.key, last.labels)
        shown = ", ".join(sorted(last.labels)) or "none"
        return f"Undone: {self.title(last.trial)} has its labels back ({shown}; saved)."

    def note(self, trial: int) -> str:
        return self.store.note(trial_key(self.session, trial))

    def set_note(self, trial: int, text: str) -> str | None:
        """Save the note; None when it did not change."""
        key = trial_key(self.session, trial)
        if text == self.store.note(key):
            return None
        self.store.set_note(key, text)
        return "Note saved." if text.strip() else "Note removed."

    def title(self, trial: int) -> str:
        info = self.session.info(trial)
        return info.trial_name or info.task

    # --- the saved view ------------------------------------------------------------------------
    def saved_view(self) -> tuple[FilterState | None, int | None]:
        """The filters (None when there were none) and trial saved for these datasets."""
        state, trial = decode_view(self.session, self.store.load_view_state(dataset_ids(self.session)))
        return (state if state.selected or state.text else None), trial

    def save_view(self, state: FilterState, trial: int | None) -> None:
        self.store.save_view_state(dataset_ids(self.session), encode_view(self.session, state, trial))
