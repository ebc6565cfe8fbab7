"""Labels and notes on trials, in SQLite under the XDG data dir, so they outlive the app and the dataset.

Every change is one committed transaction in WAL mode with `synchronous=FULL`: once a call returns, a
`kill -9` (or a power cut) loses nothing, and two app instances can write at once (busy timeout,
`BEGIN IMMEDIATE`, a few retries). A corrupt file is moved aside; a read-only dir or a lock that never
clears falls back to an in-memory store. Triage goes on in every case, with a warning to show.

A label belongs to (dataset id, revision, trial). Real trial names also match across revisions, so the
labels of a dataset still show after it is re-exported; null, normalized or repeated names fall back to
`run_id:task#first-row`, which only holds within one revision.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..data.dataset import Storage
from ..data.facets import FilterState
from ..data.session import Session
from ..data.trials import Trials
from ..paths import data_dir

NORMALIZED_TRIAL_NAME = "NORMALIZED_TRIAL_NAME"
"""What Harbor's golden exports put in `trial_name`: a placeholder, not a name."""
DB_NAME = "labels.db"
_ATTEMPTS = 3
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26
_SCHEMA = """
CREATE TABLE IF NOT EXISTS trial (
    dataset_id TEXT NOT NULL,
    revision TEXT NOT NULL,
    trial TEXT NOT NULL,
    named INTEGER NOT NULL,
    labels TEXT NOT NULL,
    note TEXT NOT NULL,
    task TEXT NOT NULL,
    model TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (dataset_id, revision, trial)
);
CREATE INDEX IF NOT EXISTS trial_by_name ON trial (dataset_id, trial);
CREATE TABLE IF NOT EXISTS view_state (datasets TEXT PRIMARY KEY, state TEXT NOT NULL, updated REAL NOT NULL);
"""
_COLUMNS = "dataset_id, revision, trial, named, labels, note, task, model, updated"
T = TypeVar("T")


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


class _Corrupt(Exception):
    pass


class LabelStore:
    """The label, note and view-state store. Safe to share between threads (one lock)."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None, timeout: float, warning: str | None = None) -> None:
        self._conn = conn
        self.path = path  # None: in memory, lost on exit
        self._timeout = timeout
        self._warning = warning
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | None = None, timeout: float = 2.0) -> LabelStore:
        """Open (or create) the store; never raises. Check `pop_warning()` afterwards."""
        path = Path(path) if path is not None else data_dir() / DB_NAME
        try:
            return cls(_connect_patiently(path, timeout), path, timeout)
        except _Corrupt as exc:
            try:
                moved = _move_aside(path)
                return cls(_connect(path, timeout), path, timeout, f"{path} was corrupt ({exc}): moved to {moved.name}")
            except (sqlite3.Error, OSError, _Corrupt) as again:
                problem = str(again)
        except (sqlite3.Error, OSError) as exc:
            problem = f"{exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
        return cls(
            _memory_copy(path, timeout), None, timeout, f"labels kept in memory only: cannot use {path} ({problem})"
        )

    @property
    def persistent(self) -> bool:
        return self.path is not None

    def pop_warning(self) -> str | None:
        """The one-line problem to show the user since the last call (corrupt file, fell back to memory)."""
        with self._lock:
            warning, self._warning = self._warning, None
        return warning

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- labels and notes ---------------------------------------------------------------------

    def record(self, key: TrialKey) -> Record | None:
        """The trial's record: its own revision's, else (named trials) the newest of another revision."""
        return self._run(lambda conn: _current(conn, key), write=False)

    def labels(self, key: TrialKey) -> frozenset[str]:
        record = self.record(key)
        return record.labels if record else frozenset()

    def note(self, key: TrialKey) -> str:
        record = self.record(key)
        return record.note if record else ""

    def toggle(self, key: TrialKey, label: str) -> bool:
        """Add or remove one label (committed); True when the trial has it now."""

        def work(conn: sqlite3.Connection) -> bool:
            current = _current(conn, key)
            labels = set(current.labels) if current else set()
            on = label not in labels
            labels = labels | {label} if on else labels - {label}
            _put(conn, key, labels, current.note if current else "")
            return on

        return self._run(work, write=True)

    def set_labels(self, key: TrialKey, labels: Iterable[str]) -> None:
        """Replace the trial's labels (committed), keeping its note: what an undo puts back."""

        def work(conn: sqlite3.Connection) -> None:
            current = _current(conn, key)
            _put(conn, key, labels, current.note if current else "")

        self._run(work, write=True)

    def set_note(self, key: TrialKey, text: str) -> None:
        """Replace the note (committed); blank text removes it."""

        def work(conn: sqlite3.Connection) -> None:
            current = _current(conn, key)
            _put(conn, key, current.labels if current else (), text.strip())

        self._run(work, write=True)

    def effective(self, dataset_id: str, revision: str) -> list[Record]:
        """What applies to one revision: its own records, plus named ones inherited from other revisions."""
        return self._run(lambda conn: _effective(conn, dataset_id, revision), write=False)

    def all_for_dataset(self, dataset_id: str) -> list[Record]:
        """Every non-empty record of a dataset, all revisions, oldest change first."""
        rows = self._run(
            lambda conn: conn.execute(
                f"SELECT {_COLUMNS} FROM trial WHERE dataset_id = ? AND (labels != '[]' OR note != '')"
                " ORDER BY updated",
                (dataset_id,),
            ).fetchall(),
            write=False,
        )
        return [_record(row) for row in rows]

    # --- resume -------------------------------------------------------------------------------

    def save_view_state(self, dataset_ids: Iterable[str], state_json: str) -> None:
        self._run(
            lambda conn: conn.execute(
                "INSERT OR REPLACE INTO view_state VALUES (?, ?, ?)", (_view_key(dataset_ids), state_json, time.time())
            ),
            write=True,
        )

    def load_view_state(self, dataset_ids: Iterable[str]) -> str | None:
        row = self._run(
            lambda conn: conn.execute(
                "SELECT state FROM view_state WHERE datasets = ?", (_view_key(dataset_ids),)
            ).fetchone(),
            write=False,
        )
        return row[0] if row else None

    # --- transactions -------------------------------------------------------------------------

    def _run(self, work: Callable[[sqlite3.Connection], T], write: bool) -> T:
        """Run `work` (in one IMMEDIATE transaction when it writes), retrying while another writer
        holds the lock; if the file stays unusable, carry on in memory with a warning."""
        with self._lock:
            problem: sqlite3.Error | None = None
            for attempt in range(_ATTEMPTS):
                try:
                    if not write:
                        return work(self._conn)
                    self._conn.execute("BEGIN IMMEDIATE")
                    result = work(self._conn)
                    self._conn.execute("COMMIT")
                    return result
                except sqlite3.Error as exc:
                    if self._conn.in_transaction:
                        self._conn.rollback()
                    problem = exc
                    if self.path is None or _error_code(exc) not in (_SQLITE_BUSY, _SQLITE_LOCKED):
                        break
                    time.sleep(0.05 * (attempt + 1))
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.rollback()
                    raise
            assert problem is not None  # every attempt returned or failed
            if self.path is None:
                raise problem
            self._to_memory(self.path, problem)
        return self._run(work, write)

    def _to_memory(self, path: Path, problem: sqlite3.Error) -> None:
        memory = _memory_copy(path, self._timeout)
        self._conn.close()
        self._conn = memory
        message = f"labels kept in memory only from now on: {path} failed ({problem})"
        self._warning = message if not self._warning else f"{self._warning}; {message}"
        self.path = None


def _connect_patiently(path: Path, timeout: float) -> sqlite3.Connection:
    """`_connect`, retried while another process holds the database: switching a new file to WAL can
    answer "locked" at once, without waiting, when two instances create it at the same moment."""
    for attempt in range(_ATTEMPTS * 4):
        try:
            return _connect(path, timeout)
        except sqlite3.OperationalError as exc:
            if _error_code(exc) not in (_SQLITE_BUSY, _SQLITE_LOCKED) or attempt == _ATTEMPTS * 4 - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _connect(path: Path, timeout: float) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")  # WAL + FULL: the commit is on disk before it returns
        conn.executescript(_SCHEMA)
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise _Corrupt(check)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if _error_code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            raise _Corrupt(str(exc)) from None
        raise
    except _Corrupt:
        conn.close()
        raise
    return conn


def _move_aside(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, moved)
    for suffix in ("-wal", "-shm"):  # the journal of a corrupt file is no use to the new one
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, moved.with_name(moved.name + suffix))
    return moved


def _memory_copy(path: Path, timeout: float) -> sqlite3.Connection:
    """An in-memory store holding what can still be read of `path` (a read-only dir keeps its labels).

    Copied with SQL rather than the backup API, whose Python wrapper retries a busy file forever.
    """
    memory = sqlite3.connect("file::memory:", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    memory.executescript(_SCHEMA)
    # In a read-only dir a WAL file cannot be opened the normal way (no -shm can be made); the dir
    # being read-only, nobody writes it either, so it can be read as immutable.
    for query in ("mode=ro", "immutable=1"):
        try:
            memory.execute("ATTACH DATABASE ? AS disk", (f"{path.absolute().as_uri()}?{query}",))
            try:
                memory.execute(f"INSERT OR REPLACE INTO trial SELECT {_COLUMNS} FROM disk.trial")
                memory.execute("INSERT OR REPLACE INTO view_state SELECT datasets, state, updated FROM disk.view_state")
                return memory
            finally:
                memory.execute("DETACH DATABASE disk")
        except sqlite3.Error as exc:
            if _error_code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED):
                break  # someone holds it: reading it without locks could see a half-written state
    return memory  # what could be copied, maybe nothing


# SQLite's message for each result code acted on here: Python 3.10's errors carry only the message.
_CODE_BY_MESSAGE = (
    ("database is locked", _SQLITE_BUSY),
    ("database table is locked", _SQLITE_LOCKED),
    ("database schema is locked", _SQLITE_LOCKED),
    ("database disk image is malformed", _SQLITE_CORRUPT),
    ("malformed database schema", _SQLITE_CORRUPT),
    ("file is not a database", _SQLITE_NOTADB),
    ("file is encrypted or is not a database", _SQLITE_NOTADB),
)


def _error_code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of an error: Python 3.11+ carries it, else it is read from
    the message SQLite gave for it (0 when the message is not one of those)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    message = str(exc)
    return next((code for text, code in _CODE_BY_MESSAGE if message.startswith(text)), 0)


def _record(row: tuple[Any, ...]) -> Record:
    dataset_id, revision, trial, named, labels, note, task, model, updated = row
    key = TrialKey(dataset_id, revision, trial, bool(named), task, model)
    return Record(key, frozenset(json.loads(labels)), note, updated)


def _effective(conn: sqlite3.Connection, dataset_id: str, revision: str, trial: str | None = None) -> list[Record]:
    sql = f"SELECT {_COLUMNS} FROM trial WHERE dataset_id = ? AND (revision = ? OR named = 1)"
    args: list[object] = [dataset_id, revision]
    if trial is not None:
        sql += " AND trial = ?"
        args.append(trial)
    # Other revisions first, oldest to newest, then this revision's own: the later one wins.
    found: dict[tuple[str, bool], Record] = {}
    for row in conn.execute(sql + " ORDER BY revision = ?, updated", [*args, revision]):
        record = _record(row)
        found[(record.key.trial, record.key.named)] = record
    return list(found.values())


def _current(conn: sqlite3.Connection, key: TrialKey) -> Record | None:
    found = [r for r in _effective(conn, key.dataset_id, key.revision, key.trial) if r.key.named == key.named]
    return found[0] if found else None


def _put(conn: sqlite3.Connection, key: TrialKey, labels: Iterable[str], note: str) -> None:
    conn.execute(
        f"INSERT INTO trial ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (dataset_id, revision, trial) DO UPDATE SET named = excluded.named,"
        " labels = excluded.labels, note = excluded.note, task = excluded.task, model = excluded.model,"
        " updated = excluded.updated",
        (
            key.dataset_id,
            key.revision,
            key.trial,
            int(key.named),
            json.dumps(sorted(labels)),
            note,
            key.task,
            key.model,
            time.time(),
        ),
    )


def _view_key(dataset_ids: Iterable[str]) -> str:
    return json.dumps(sorted(set(dataset_ids)))


# --- trial keys ---------------------------------------------------------------------------------


def dataset_revision(ds: Storage) -> str:
    """The hub commit; for local files their conversion's cache key (it changes when a file does)."""
    return ds.source.revision or f"local-{ds.folder.name}"


def trial_key(session: Session, trial: int) -> TrialKey:
    t = session.trials
    return _key(session, trial, _name_counts(t, int(t.dataset[trial])))


def _name_counts(t: Trials, dataset: int) -> np.ndarray:
    """How many trials of one dataset carry each trial_name code: a repeated name is no identity."""
    codes = t.codes["trial_name"][t.dataset == dataset]
    return np.bincount(codes[codes >= 0], minlength=len(t.labels["trial_name"]))


def _key(session: Session, trial: int, counts: np.ndarray) -> TrialKey:
    t = session.trials
    ds = session.datasets[int(t.dataset[trial])]
    code = int(t.codes["trial_name"][trial])
    name = t.labels["trial_name"][code] if code >= 0 else None
    task = t.label("task", trial) or ""
    named = bool(name and name.strip() and name != NORMALIZED_TRIAL_NAME and counts[code] == 1)
    if name is None or not named:
        rows = t.rows(trial)
        first = int(rows[0]) if len(rows) else t.sub_agent_rows(trial)[0][0]
        name = f"{t.label('run_id', trial) or '-'}:{task or '-'}#{first}"
    return TrialKey(ds.source.dataset_id, dataset_revision(ds), name, named, task, t.label("model", trial) or "")


def _match(session: Session, dataset: int, keys: list[TrialKey]) -> list[int | None]:
    """The trial of `dataset` each key names (None when it has none), ignoring the key's revision."""
    t = session.trials
    ids = np.nonzero(t.dataset == dataset)[0]
    if not len(ids):
        return [None] * len(keys)
    counts = _name_counts(t, dataset)
    codes = t.codes["trial_name"][ids]
    by_code = np.full(len(counts), -1, dtype=np.int64)
    by_code[codes[codes >= 0]] = ids[codes >= 0]
    code_of = {name: i for i, name in enumerate(t.labels["trial_name"]) if name is not None}
    rows, owners = t.rows_of_dataset(dataset)
    owner = np.full(session.datasets[dataset].num_rows, -1, dtype=np.int64)
    owner[rows] = owners
    found: list[int | None] = []
    for key in keys:
        if key.named:
            candidate = int(by_code[code_of[key.trial]]) if key.trial in code_of else -1
        else:
            row = key.trial.rpartition("#")[2]
            candidate = int(owner[int(row)]) if row.isdigit() and int(row) < len(owner) else -1
        if candidate >= 0:
            actual = _key(session, candidate, counts)
            candidate = candidate if (actual.trial, actual.named) == (key.trial, key.named) else -1
        found.append(candidate if candidate >= 0 else None)
    return found


def session_records(session: Session, store: LabelStore) -> dict[int, Record]:
    """Trial id → the record that applies to it, for every labelled or noted trial of the session."""
    out: dict[int, Record] = {}
    for index, ds in enumerate(session.datasets):
        records = store.effective(ds.source.dataset_id, dataset_revision(ds))
        if records:
            for record, trial in zip(records, _match(session, index, [r.key for r in records])):
                if trial is not None:
                    out[trial] = record
    return out


# --- resume -------------------------------------------------------------------------------------


def dataset_ids(session: Session) -> list[str]:
    """What `save_view_state` / `load_view_state` key a session's view on."""
    return [ds.source.dataset_id for ds in session.datasets]


def encode_view(session: Session, filters: FilterState, trial: int | None) -> str:
    """The view to resume: filter values by label and the selected trial by key (not by index)."""
    key = trial_key(session, trial) if trial is not None else None
    return json.dumps(
        {
            "filters": {name: sorted(values) for name, values in filters.selected.items()},
            "text": filters.text,
            "trial": None if key is None else [key.dataset_id, key.trial, key.named],
        }
    )


def decode_view(session: Session, state_json: str | None) -> tuple[FilterState, int | None]:
    """The saved view, keeping only filter values the session still has (add the label facet first)."""
    try:
        data = json.loads(state_json) if state_json else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    selected = {}
    filters = data.get("filters")
    for name, values in filters.items() if isinstance(filters, dict) else ():
        facet = session.facets.facets.get(name)
        if facet is not None and isinstance(values, list):
            kept = frozenset(v for v in values if isinstance(v, str) and facet.code_of(v) is not None)
            if kept:
                selected[name] = kept
    text = data.get("text")
    trial = None
    saved = data.get("trial")
    if isinstance(saved, list) and len(saved) == 3 and all(isinstance(v, str) for v in saved[:2]):
        key = TrialKey(saved[0], "", saved[1], bool(saved[2]))
        for index, ds in enumerate(session.datasets):
            if ds.source.dataset_id == key.dataset_id and trial is None:
                trial = _match(session, index, [key])[0]
    return FilterState(selected, text if isinstance(text, str) else ""), trial
