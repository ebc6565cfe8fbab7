"""What the label store holds and what changes it: a trial's key and record, and the two changes a
user makes (a label set on or off, a note written over the one they read). Standard library only.

A change says what the user did, not the state it left, so it can be applied to whatever the file
holds when it gets there: on the spot, when flushed after the disk refused it, or from the file the
quit prompt wrote. Labels other instances set meanwhile stay; a note someone else changed meanwhile
is kept beside the new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class TrialKey:
    """Whom a label belongs to. `trial` is the trial_name when `named`, else `run_id:task#first-row`.

    `task` and `model` ride along (not part of the identity) so `tracetui labels` can list them
    without opening the dataset.
    """

    dataset_id: str
    revision: str
    trial: str
    named: bool
    task: str = field(default="", compare=False)
    model: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Record:
    """A trial's labels and note as stored; `key.revision` is the revision they were made on."""

    key: TrialKey
    labels: frozenset[str]
    note: str
    updated: float

    @property
    def updated_text(self) -> str:
        return datetime.fromtimestamp(self.updated).isoformat(sep=" ", timespec="seconds")


@dataclass(frozen=True, slots=True)
class LabelChange:
    """`label` set on (`on`) or off; the trial's other labels are left as they are."""

    key: TrialKey
    label: str
    on: bool


@dataclass(frozen=True, slots=True)
class NoteChange:
    """The note `text` written over `base`, the note the user started from (None: over any note)."""

    key: TrialKey
    text: str
    base: str | None = None


Change = LabelChange | NoteChange

MERGE_MARKER = "--- a newer note saved elsewhere ({when}), kept ---"
"""The line between the note being saved and the one it would have overwritten."""


def merged_note(mine: str, theirs: Record) -> str:
    """Both notes: the one being saved, then the one saved elsewhere since it was started."""
    if not mine:
        return theirs.note
    return f"{mine}\n\n{MERGE_MARKER.format(when=theirs.updated_text)}\n{theirs.note}"
