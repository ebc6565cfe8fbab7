"""The label store's SQLite file: the schema, opening it (WAL, `synchronous=FULL`), telling a damaged
file from a busy one, an in-memory copy, and the SQL that reads records and applies changes.
Standard library only; `labels.LabelStore` decides what to do when any of it fails.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .records import Change, LabelChange, Record, TrialKey, merged_note

ATTEMPTS = 3
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_CORRUPT, SQLITE_NOTADB = 5, 6, 11, 26
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 8, 10, 13, 14
SCHEMA = """
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
COLUMNS = "dataset_id, revision, trial, named, labels, note, task, model, updated"


class Damaged(Exception):
    """The file is not a usable SQLite database (SQLite said so, or its quick check did)."""


def connect_patiently(path: Path, timeout: float, create: bool = True) -> sqlite3.Connection:
    """`connect`, retried while another process holds the database: switching a new file to WAL can
    answer "locked" at once, without waiting, when two instances create it at the same moment."""
    for attempt in range(ATTEMPTS * 4):
        try:
            return connect(path, timeout, create)
        except sqlite3.OperationalError as exc:
            if error_code(exc) not in (SQLITE_BUSY, SQLITE_LOCKED) or attempt == ATTEMPTS * 4 - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def connect(path: Path, timeout: float, create: bool = True) -> sqlite3.Connection:
    """The database at `path`, checked (Damaged when it is not one); `create` false: FileNotFoundError
    rather than a new file."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_file():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")  # WAL + FULL: the commit is on disk before it returns
        conn.executescript(SCHEMA)
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise Damaged(check)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if error_code(exc) in (SQLITE_CORRUPT, SQLITE_NOTADB):
            raise Damaged(str(exc)) from None
        raise
    except Damaged:
        conn.close()
        raise
    return conn


def move_aside(path: Path) -> Path:
    """Rename a damaged file (and its journal) to `labels.db.corrupt-<time>`; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, moved)
    for suffix in ("-wal", "-shm"):  # the journal of a corrupt file is no use to the new one
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, moved.with_name(moved.name + suffix))
    return moved


def memory_copy(path: Path, timeout: float, live: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """An in-memory store holding what can still be read of `path` (a full disk or a read-only dir
    keeps its labels readable), through the `live` connection to it when there is one.

    Copied with SQL rather than the backup API, whose Python wrapper retries a busy file forever.
    """
    memory = sqlite3.connect("file::memory:", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    memory.executescript(SCHEMA)
    if live is not None:
        try:  # what the file holds, its journal included, as this connection sees it
            trials = live.execute(f"SELECT {COLUMNS} FROM trial").fetchall()
            views = live.execute("SELECT datasets, state, updated FROM view_state").fetchall()
        except sqlite3.Error:
            pass
        else:
            memory.executemany(f"INSERT INTO trial ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", trials)
            memory.executemany("INSERT INTO view_state VALUES (?, ?, ?)", views)
            return memory
    if not path.is_file():
        return memory
    # In a read-only dir a WAL file cannot be opened the normal way (no -shm can be made); the dir
    # being read-only, nobody writes it either, so it can be read as immutable.
    for query in ("mode=ro", "immutable=1"):
        try:
            memory.execute("ATTACH DATABASE ? AS disk", (f"{path.absolute().as_uri()}?{query}",))
            try:
                memory.execute(f"INSERT OR REPLACE INTO trial SELECT {COLUMNS} FROM disk.trial")
                memory.execute("INSERT OR REPLACE INTO view_state SELECT datasets, state, updated FROM disk.view_state")
                return memory
            finally:
                memory.execute("DETACH DATABASE disk")
        except sqlite3.Error as exc:
            if error_code(exc) in (SQLITE_BUSY, SQLITE_LOCKED):
                break  # someone holds it: reading it without locks could see a half-written state
    return memory  # what could be copied, maybe nothing


# SQLite's message for each result code acted on here: Python 3.10's errors carry only the message.
_CODE_BY_MESSAGE = (
    ("database is locked", SQLITE_BUSY),
    ("database table is locked", SQLITE_LOCKED),
    ("database schema is locked", SQLITE_LOCKED),
    ("database disk image is malformed", SQLITE_CORRUPT),
    ("malformed database schema", SQLITE_CORRUPT),
    ("file is not a database", SQLITE_NOTADB),
    ("file is encrypted or is not a database", SQLITE_NOTADB),
    ("attempt to write a readonly database", _SQLITE_READONLY),
    ("disk I/O error", _SQLITE_IOERR),
    ("database or disk is full", _SQLITE_FULL),
    ("unable to open database file", _SQLITE_CANTOPEN),
)
_REASONS = {
    _SQLITE_FULL: "disk full",
    _SQLITE_IOERR: "disk I/O error",
    _SQLITE_READONLY: "read-only",
    _SQLITE_CANTOPEN: "cannot open it",
    SQLITE_BUSY: "locked by another program",
    SQLITE_LOCKED: "locked by another program",
    SQLITE_CORRUPT: "damaged",
    SQLITE_NOTADB: "damaged",
}
"""What a failure means to the user, in a few words (the message line has 80 columns)."""


def error_code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of an error: Python 3.11+ carries it, else it is read from
    the message SQLite gave for it (0 when the message is not one of those)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    message = str(exc)
    return next((code for text, code in _CODE_BY_MESSAGE if message.startswith(text)), 0)


def reason(exc: BaseException) -> str:
    """A few words for why the file could not be used: "disk full", "read-only", …"""
    if isinstance(exc, sqlite3.Error):
        return _REASONS.get(error_code(exc)) or str(exc).splitlines()[0]
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


# --- records --------------------------------------------------------------------------------------


def _record(row: tuple[Any, ...]) -> Record:
    dataset_id, revision, trial, named, labels, note, task, model, updated = row
    key = TrialKey(dataset_id, revision, trial, bool(named), task, model)
    return Record(key, frozenset(json.loads(labels)), note, updated)


def effective(conn: sqlite3.Connection, dataset_id: str, revision: str, trial: str | None = None) -> list[Record]:
    """What applies to one revision: its own records, plus named ones inherited from other revisions."""
    sql = f"SELECT {COLUMNS} FROM trial WHERE dataset_id = ? AND (revision = ? OR named = 1)"
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


def current(conn: sqlite3.Connection, key: TrialKey) -> Record | None:
    """The trial's record: its own revision's, else (named trials) the newest of another revision."""
    found = [r for r in effective(conn, key.dataset_id, key.revision, key.trial) if r.key.named == key.named]
    return found[0] if found else None


def all_for_dataset(conn: sqlite3.Connection, dataset_id: str) -> list[Record]:
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM trial WHERE dataset_id = ? AND (labels != '[]' OR note != '') ORDER BY updated",
        (dataset_id,),
    )
    return [_record(row) for row in rows]


def apply(conn: sqlite3.Connection, change: Change) -> bool:
    """Apply one change to what `conn` holds now (inside the caller's transaction); True when a note
    saved elsewhere since the change's base was kept beside it."""
    record = current(conn, change.key)
    labels = set(record.labels) if record else set()
    note = record.note if record else ""
    if isinstance(change, LabelChange):
        labels = labels | {change.label} if change.on else labels - {change.label}
        _put(conn, change.key, labels, note)
        return False
    text = change.text.strip()
    newer = record is not None and change.base is not None and note not in ("", change.base.strip(), text)
    _put(conn, change.key, labels, merged_note(text, record) if record is not None and newer else text)
    return newer


def _put(conn: sqlite3.Connection, key: TrialKey, labels: Iterable[str], note: str) -> None:
    conn.execute(
        f"INSERT INTO trial ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
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


def put_view(conn: sqlite3.Connection, datasets: str, state_json: str) -> None:
    conn.execute("INSERT OR REPLACE INTO view_state VALUES (?, ?, ?)", (datasets, state_json, time.time()))


def view(conn: sqlite3.Connection, datasets: str) -> str | None:
    row = conn.execute("SELECT state FROM view_state WHERE datasets = ?", (datasets,)).fetchone()
    return row[0] if row else None
