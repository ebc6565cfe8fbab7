"""Labels, notes and resume on the triage screen: keys 1–9, `a`, the label facet and column, and
the view (filters, selected trial) saved per dataset and restored on the next open."""

from __future__ import annotations

from ...data.facets import FilterState
from ...store.config import load_config
from ...store.facets import label_facet
from ...store.labels import (
    LabelStore,
    TrialKey,
    dataset_ids,
    decode_view,
    encode_view,
    session_records,
    trial_key,
)
from ..screens.note import NoteScreen
from ..widgets.columns import Column

LABELS_WIDTH = 16


class LabelActions:
    """Mixed into TriageScreen (needs `session`, `state`, `trial`, `trial_list`, `status`, `apply_filters`)."""

    def open_labels(self, restore: bool) -> tuple[FilterState | None, int | None]:
        """Open the store and config; with `restore`, return the view saved for these datasets."""
        self.config, warning = load_config()
        self.store = LabelStore.open()
        for problem in (warning, self.store.pop_warning()):
            if problem:
                self.app.notify(problem, severity="warning", timeout=8, markup=False)
        self._records = {}
        self._label_undo: list[tuple[TrialKey, int, frozenset[str]]] = []  # (trial, its labels before)
        self.refresh_labels()
        if not restore:
            return None, None
        state, trial = decode_view(self.session, self.store.load_view_state(dataset_ids(self.session)))
        return (state if state.selected or state.text else None), trial

    def refresh_labels(self) -> None:
        """Re-read the store (other instances' changes included) into the label facet and column."""
        self._records = session_records(self.session, self.store)
        self.session.facets.add(label_facet(self.session, self.store, self.config.labels, self._records))
        if not self._records:
            self.trial_list.remove_column("labels")
            return
        longest = max(len(self._label_cell(trial, LABELS_WIDTH)) for trial in self._records)
        width = max(len("labels"), min(LABELS_WIDTH, longest))
        self.trial_list.set_column(Column("labels", "labels", width, self._label_cell, give_way=((25, 2),)))

    def _label_cell(self, trial: int, width: int) -> str:
        """The trial's labels (and ✎ for a note); on a narrow list, a marker."""
        record = self._records.get(trial)
        if record is None:
            return ""
        if width < 4:
            return ("●" if record.labels else "") + ("✎" if record.note else "")
        return ",".join(sorted(record.labels)) + (" ✎" if record.note else "")

    _save_timer = None

    def schedule_save(self) -> None:
        """Save the view a moment after the last change: each save waits for the disk."""
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(1.0, self.save_view)

    def save_view(self) -> None:
        if getattr(self, "store", None) is not None:
            self.store.save_view_state(dataset_ids(self.session), encode_view(self.session, self.state, self.trial))
            self._report_store()

    def _report_store(self) -> None:
        warning = self.store.pop_warning()
        if warning:
            self.app.notify(warning, severity="warning", timeout=8, markup=False)

    def _after_label_change(self, message: str) -> None:
        self.refresh_labels()
        self._show_facets()
        self.apply_filters()
        self.status(message, hold=True)
        self._report_store()

    def _trial_title(self, trial: int) -> str:
        info = self.session.info(trial)
        return info.trial_name or info.task

    def action_label(self, number: int) -> None:
        label = self.config.label_for_digit(number)
        if self.trial is None:
            return
        if label is None:
            self.status(f"No label {number}: set `labels = [...]` in the config file.")
            return
        key = trial_key(self.session, self.trial)
        before = self.store.labels(key)
        on = self.store.toggle(key, label)
        self._label_undo.append((key, self.trial, before))
        change = "Added" if on else "Removed"
        self._after_label_change(f"{change} label {label!r} (saved; U undoes): {self._trial_title(self.trial)}")

    def action_undo_label(self) -> None:
        """U: the trial of the last label change gets back the labels it had before it."""
        if not self._label_undo:
            self.status("No label change to undo.")
            return
        key, trial, before = self._label_undo.pop()
        self.store.set_labels(key, before)
        shown = ", ".join(sorted(before)) or "none"
        self._after_label_change(f"Undone: {self._trial_title(trial)} has its labels back ({shown}; saved).")

    def action_annotate(self) -> None:
        if self.trial is None:
            return
        trial = self.trial
        key = trial_key(self.session, trial)
        title = self.session.info(trial).trial_name or self.session.info(trial).task

        def saved(text: str | None) -> None:
            if text is None or text == self.store.note(key):
                return
            self.store.set_note(key, text)
            self._after_label_change("Note saved." if text.strip() else "Note removed.")

        self.app.push_screen(NoteScreen(title, self.store.note(key)), saved)
