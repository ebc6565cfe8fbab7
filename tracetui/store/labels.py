"""Labels and notes on trials, in SQLite under the XDG data dir, so they outlive the app and the dataset.
Standard library only: trial keys from a session are `trial_keys`' business.

Every change is one committed transaction in WAL mode with `synchronous=FULL`: once a write answers
`saved`, a `kill -9` (or a power cut) loses nothing, and two app instances can write at once (busy
timeout, `BEGIN IMMEDIATE`, a few retries). When the file refuses a write (a full disk, a read-only
dir, a lock that never clears), the change is *held*: applied to an in-memory copy, which reads then
come from, and kept; the write answers not saved, `held` counts what waits, and `retry()` (the app
calls it on a timer) applies the held changes to the file, merged with what other instances wrote
there meanwhile, and goes back to the file.

Only a writer (the app, `labels import`) creates the file or moves a damaged one aside, and says where
it went; a reader (`tracetui labels`, `--filter label=…`) reports a damaged file and leaves it.

A label belongs to (dataset id, revision, trial). Real trial names also match across revisions, so the
labels of a dataset still show after it is re-exported; null, normalized or repeated names fall back to
`run_id:task#first-row`, which only holds within one revision.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ..paths import data_dir
from .records import Change, LabelChange, NoteChange, Record, TrialKey
from .sqlite import (
    ATTEMPTS,
    SQLITE_BUSY,
    SQLITE_LOCKED,
    Damaged,
    all_for_dataset,
    apply,
    connect,
    connect_patiently,
    current,
    effective,
    error_code,
    memory_copy,
    move_aside,
    put_view,
    reason,
    view,
)

DB_NAME = "labels.db"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did. `saved`: committed to the file; else held in memory (see `LabelStore.held`)."""

    saved: bool
    on: bool = False
    """For a label: whether the trial has it now."""
    merged: bool = False
    """For a note: a newer note saved elsewhere since the editor opened was kept beside it."""


@dataclass(frozen=True, slots=True)
class Flushed:
    """What `retry` (or `labels import`) wrote to the file: `changes`, of which `merged` notes kept a
    newer note saved elsewhere beside them."""

    changes: int
    merged: int


class Unwritable(Exception):
    """The file refuses the changes (`labels import`): nothing was written."""


class LabelStore:
    """The label, note and view-state store. Safe to share between threads (one lock)."""

    def __init__(self, path: Path, timeout: float, writer: bool) -> None:
        self.path = path
        self._timeout = timeout
        self._writer = writer
        self._conn: sqlite3.Connection | None = None
        """The file; None while the store is in memory (`_memory`)."""
        self._memory: sqlite3.Connection | None = None
        self._held: dict[tuple[object, ...], Change] = {}
        self._held_views: dict[str, str] = {}
        self.problem: str | None = None
        """Why the file is not in use, in a few words ("disk full"); None while it is."""
        self._warnings: list[str] = []
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | None = None, timeout: float = 2.0, writer: bool = False) -> LabelStore:
        """Open the store; never raises: check `pop_warning()` afterwards. A `writer` (a command that
        writes) creates the file and moves a damaged one aside; a reader does neither."""
        store = cls(Path(path) if path is not None else data_dir() / DB_NAME, timeout, writer)
        with store._lock:
            try:
                store._conn = store._connect(connect_patiently)
            except Damaged as exc:  # a reader's: a writer moves it aside
                store._use_memory(exc)
                store._warnings.append(f"{store.path} is damaged ({exc}): left as it is (the app moves it aside)")
            except (sqlite3.Error, OSError) as exc:
                store._use_memory(exc)
                if writer:
                    store._warnings.append(f"cannot write {store.path} ({store.problem}): changes are held in memory")
                elif not isinstance(exc, FileNotFoundError):  # no file yet is no labels yet
                    store._warnings.append(f"cannot read {store.path} ({store.problem}): no labels shown")
        return store

    @property
    def on_disk(self) -> bool:
        """The file is in use: reads come from it, writes go to it."""
        return self._conn is not None

    @property
    def held(self) -> int:
        """Label and note changes held in memory, not saved."""
        return len(self._held)

    def held_changes(self) -> list[Change]:
        with self._lock:
            return list(self._held.values())

    def pop_warning(self) -> str | None:
        """The one-line problem to show the user since the last call (a damaged file, no file to use)."""
        with self._lock:
            warnings, self._warnings = self._warnings, []
        return "; ".join(warnings) or None

    def close(self) -> None:
        with self._lock:
            for conn in (self._conn, self._memory):
                if conn is not None:
                    conn.close()

    # --- labels and notes ---------------------------------------------------------------------

    def record(self, key: TrialKey) -> Record | None:
        """The trial's record: its own revision's, else (named trials) the newest of another revision."""
        return self._read(lambda conn: current(conn, key))

    def labels(self, key: TrialKey) -> frozenset[str]:
        record = self.record(key)
        return record.labels if record else frozenset()

    def note(self, key: TrialKey) -> str:
        record = self.record(key)
        return record.note if record else ""

    def toggle(self, key: TrialKey, label: str) -> Written:
        """Add or remove one label, whichever the trial needs."""

        def change(conn: sqlite3.Connection) -> Change:
            record = current(conn, key)
            return LabelChange(key, label, label not in (record.labels if record else ()))

        made, saved, _ = self._write(change)
        assert isinstance(made, LabelChange)
        return Written(saved, on=made.on)

    def set_label(self, key: TrialKey, label: str, on: bool) -> Written:
        """Set one label on or off, leaving the others (an undo)."""
        _, saved, _ = self._write(lambda conn: LabelChange(key, label, on))
        return Written(saved, on=on)

    def set_note(self, key: TrialKey, text: str, base: str | None = None) -> Written:
        """Write the note (blank text removes it) over `base`, the note the editor started from: when
        the trial has another note by now, both are kept (`merged`). `base` None: over any note."""
        _, saved, merged = self._write(lambda conn: NoteChange(key, text, base))
        return Written(saved, merged=merged)

    def effective(self, dataset_id: str, revision: str) -> list[Record]:
        """What applies to one revision: its own records, plus named ones inherited from other revisions."""
        return self._read(lambda conn: effective(conn, dataset_id, revision))

    def all_for_dataset(self, dataset_id: str) -> list[Record]:
        """Every non-empty record of a dataset, all revisions, oldest change first."""
        return self._read(lambda conn: all_for_dataset(conn, dataset_id))

    def import_changes(self, changes: Iterable[Change]) -> Flushed:
        """Apply `changes` (read back from the quit prompt's file) in one transaction, merged with what
        the file holds; Unwritable when it refuses them."""
        changes = list(changes)
        with self._lock:
            if self._conn is None:
                raise Unwritable(self.problem or "not open")
            try:
                merged = _transaction(self._conn, lambda conn: [apply(conn, change) for change in changes])
            except sqlite3.Error as exc:
                raise Unwritable(reason(exc)) from None
        return Flushed(len(changes), sum(merged))

    # --- resume -------------------------------------------------------------------------------

    def save_view_state(self, dataset_ids: Iterable[str], state_json: str) -> None:
        """Keep the view to resume; while the file refuses it, it waits in memory with the changes."""
        datasets = _view_key(dataset_ids)
        with self._lock:
            if self._conn is not None:
                try:
                    _transaction(self._conn, lambda conn: put_view(conn, datasets, state_json))
                    return
                except sqlite3.Error as exc:
                    self._use_memory(exc)
            assert self._memory is not None  # the file or memory, always one
            put_view(self._memory, datasets, state_json)
            self._held_views[datasets] = state_json

    def load_view_state(self, dataset_ids: Iterable[str]) -> str | None:
        return self._read(lambda conn: view(conn, _view_key(dataset_ids)))

    # --- the file, or memory ------------------------------------------------------------------

    def retry(self) -> Flushed | None:
        """Back to the file, if the store is in memory and the file takes what is held now (merged
        with what other instances wrote meanwhile, in one transaction). None while it still refuses,
        or when there was nothing to do. Blocks for up to the busy timeout: call it off the UI thread."""
        with self._lock:
            if self._conn is not None or not self._writer:
                return None
            held, views = list(self._held.values()), dict(self._held_views)

            def flush(conn: sqlite3.Connection) -> list[bool]:
                for datasets, state in views.items():
                    put_view(conn, datasets, state)
                return [apply(conn, change) for change in held]

            conn = None
            try:
                conn = self._connect(connect)
                merged = _transaction(conn, flush, attempts=1)
            except (sqlite3.Error, OSError, Damaged) as exc:
                if conn is not None:
                    conn.close()
                self.problem = reason(exc)
                return None
            assert self._memory is not None
            self._memory.close()
            self._conn, self._memory, self.problem = conn, None, None
            self._held.clear()
            self._held_views.clear()
            return Flushed(len(held), sum(merged))

    def _connect(self, how: Callable[[Path, float, bool], sqlite3.Connection]) -> sqlite3.Connection:
        """The file, through `how`; a writer moves a damaged one aside (saying where) and starts anew."""
        try:
            return how(self.path, self._timeout, self._writer)
        except Damaged as exc:
            if not self._writer:
                raise
            moved = move_aside(self.path)
            self._warnings.append(f"{self.path} was damaged ({exc}): kept as {moved}; a new one was started")
            return how(self.path, self._timeout, True)

    def _use_memory(self, problem: BaseException) -> None:
        """Carry on in memory, from what can still be read of the file."""
        self.problem = reason(problem)
        if self._memory is None:
            self._memory = memory_copy(self.path, self._timeout, self._conn)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            if self._conn is not None:
                conn = self._conn
                try:
                    return _patiently(lambda: work(conn))
                except sqlite3.Error as exc:
                    self._use_memory(exc)
            assert self._memory is not None
            return work(self._memory)

    def _write(self, make: Callable[[sqlite3.Connection], Change]) -> tuple[Change, bool, bool]:
        """The change `make` reads from the store, applied: (change, saved, merged). Committed to the
        file, or else applied in memory and held."""

        def made(conn: sqlite3.Connection) -> tuple[Change, bool]:
            change = make(conn)
            return change, apply(conn, change)

        with self._lock:
            if self._conn is not None:
                try:
                    change, merged = _transaction(self._conn, made)
                    return change, True, merged
                except sqlite3.Error as exc:
                    self._use_memory(exc)
            assert self._memory is not None
            change, merged = made(self._memory)
            self._hold(change)
            return change, False, merged

    def _hold(self, change: Change) -> None:
        """Keep `change` for the file: the last word per label and per note, a note over the base its
        first held version started from (what the file had)."""
        if isinstance(change, LabelChange):
            self._held[("label", change.key, change.label)] = change
            return
        first = self._held.get(("note", change.key))
        base = first.base if isinstance(first, NoteChange) else change.base
        self._held[("note", change.key)] = replace(change, base=base)


def _patiently(work: Callable[[], T], attempts: int = ATTEMPTS) -> T:
    """`work`, again while another writer holds the lock (after the busy timeout)."""
    for attempt in range(attempts):
        try:
            return work()
        except sqlite3.Error as exc:
            if error_code(exc) not in (SQLITE_BUSY, SQLITE_LOCKED) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T], attempts: int = ATTEMPTS) -> T:
    """`work` in one IMMEDIATE transaction, committed (raises the error that stopped it, rolled back)."""

    def once() -> T:
        try:
            conn.execute("BEGIN IMMEDIATE")
            result = work(conn)
            conn.execute("COMMIT")
            return result
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise

    return _patiently(once, attempts)


def _view_key(dataset_ids: Iterable[str]) -> str:
    return json.dumps(sorted(set(dataset_ids)))
