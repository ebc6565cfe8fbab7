"""The label store (persistence, revisions, concurrency, broken and locked files), trial keys, the
label facet, resume state and the config file. Full disks, kill -9 and the unsaved-changes file:
test_store_faults.py."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tracetui.data.facets import FilterState
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.store.config import DEFAULT_LABELS, Config, config_path, load_config
from tracetui.store.facets import NOTED, label_facet
from tracetui.store.labels import Flushed, LabelStore, Written
from tracetui.store.records import TrialKey
from tracetui.store.sqlite import error_code
from tracetui.store.trial_keys import dataset_ids, session_records, trial_key
from tracetui.store.view import decode_view, encode_view

from .conftest import GOLDEN, trial_rows, write_parquet


def session_of(path: Path):
    return open_session(prepare([SourceSpec(str(path))]))


@pytest.fixture
def three_trials(tmp_path) -> Path:
    rows = trial_rows("alpha", "alpha__1", 2, "1.0") + trial_rows("beta", "beta__1", 3, "0.0")
    rows += trial_rows("gamma", "gamma__1", 1, None)
    return write_parquet(tmp_path / "ds" / "train.parquet", rows)


def trial_named(session, name: str) -> int:
    return next(t for t in range(len(session)) if session.info(t).trial_name == name)


def test_labels_and_notes_persist_across_reopen(three_trials, isolated_dirs):
    session = session_of(three_trials)
    beta = trial_named(session, "beta__1")
    key = trial_key(session, beta)
    assert key.named and key.trial == "beta__1" and key.task == "beta"
    store = LabelStore.open(writer=True)
    assert store.pop_warning() is None
    assert store.path == isolated_dirs / "data" / "tracetui" / "labels.db"
    assert store.toggle(key, "reward-hack").on is True
    assert store.toggle(key, "bad-task").on is True
    assert store.toggle(key, "bad-task").on is False
    store.set_note(key, "  passes by deleting the tests  ")
    store.close()

    again = LabelStore.open(writer=True)
    assert again.labels(key) == {"reward-hack"}
    assert again.note(key) == "passes by deleting the tests"
    assert list(session_records(session_of(three_trials), again)) == [beta]
    [record] = again.all_for_dataset(key.dataset_id)
    assert record.key == key and record.key.model == "m/x"


def test_data_dir_can_be_moved(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACETUI_DATA_DIR", str(tmp_path / "elsewhere"))
    store = LabelStore.open(writer=True)
    store.toggle(TrialKey("d", "r", "t", True), "x")
    assert (tmp_path / "elsewhere" / "labels.db").is_file()


def test_null_normalized_and_repeated_names_get_distinct_fallback_keys(tmp_path):
    golden = session_of(GOLDEN)  # three trials, all named NORMALIZED_TRIAL_NAME
    keys = [trial_key(golden, t) for t in range(len(golden))]
    assert not any(k.named for k in keys)
    assert len({k.trial for k in keys}) == 3
    assert all(k.trial.startswith("hello-world__NORMALIZED:hello-world#") for k in keys)

    rows = trial_rows("a", "dup", 1, "1.0") + trial_rows("b", "dup", 1, "0.0") + trial_rows("c", "solo", 1, "0.0")
    rows += [{**row, "trial_name": None} for row in trial_rows("d", "x", 2, "0.0")]
    session = session_of(write_parquet(tmp_path / "dups.parquet", rows))
    by_task = {session.info(t).task: trial_key(session, t) for t in range(len(session))}
    assert by_task["c"].named and by_task["c"].trial == "solo"
    assert [by_task[task].named for task in "abd"] == [False, False, False]
    assert by_task["a"].trial != by_task["b"].trial

    store = LabelStore.open(writer=True)
    for task in "abcd":
        store.toggle(by_task[task], f"label-{task}")
    records = session_records(session, store)
    assert {session.info(t).task: sorted(r.labels) for t, r in records.items()} == {
        task: [f"label-{task}"] for task in "abcd"
    }


def test_named_labels_follow_a_new_revision_and_say_where_they_came_from(tmp_path):
    path = tmp_path / "ds.parquet"
    rows = trial_rows("alpha", "alpha__1", 2, "1.0") + [
        {**row, "trial_name": None} for row in trial_rows("beta", "x", 1, "0.0")
    ]
    write_parquet(path, rows)
    old = session_of(path)
    store = LabelStore.open(writer=True)
    alpha_old = trial_key(old, trial_named(old, "alpha__1"))
    unnamed_old = trial_key(old, next(t for t in range(len(old)) if old.info(t).task == "beta"))
    store.toggle(alpha_old, "good-example")
    store.set_note(alpha_old, "clean run")
    store.toggle(unnamed_old, "env-issue")

    write_parquet(path, rows + trial_rows("gamma", "gamma__1", 1, "0.0"))  # re-exported: a new revision
    new = session_of(path)
    alpha = trial_key(new, trial_named(new, "alpha__1"))
    assert alpha.revision != alpha_old.revision
    record = store.record(alpha)
    assert record.labels == {"good-example"} and record.note == "clean run"
    assert record.key.revision == alpha_old.revision  # the UI says which revision this came from
    records = session_records(new, store)
    assert [new.info(t).trial_name for t in records] == ["alpha__1"]  # the row-based key does not carry over

    assert store.toggle(alpha, "bad-task").on is True  # a change on the new revision starts from the old labels
    assert store.record(alpha).labels == {"good-example", "bad-task"}
    assert store.record(alpha).key.revision == alpha.revision
    assert store.note(alpha) == "clean run"
    store.toggle(alpha, "good-example")
    assert store.labels(alpha) == {"bad-task"}
    assert store.labels(alpha_old) == {"good-example"}  # the old revision keeps its own


def test_label_facet_counts_and_filters(three_trials):
    session = session_of(three_trials)
    store = LabelStore.open(writer=True)
    alpha, beta, gamma = (trial_named(session, f"{n}__1") for n in ("alpha", "beta", "gamma"))
    store.toggle(trial_key(session, alpha), "reward-hack")
    store.toggle(trial_key(session, beta), "reward-hack")
    store.toggle(trial_key(session, beta), "zzz-custom")
    store.set_note(trial_key(session, gamma), "flaky verifier")
    facet = label_facet(session, store, order=DEFAULT_LABELS)
    assert facet.name == "label" and facet.labels == ["reward-hack", "zzz-custom", NOTED]
    session.facets.add(facet)
    result = session.facets.apply(FilterState({"label": frozenset({"reward-hack"})}))
    assert np.nonzero(result.visible)[0].tolist() == sorted([alpha, beta])
    assert result.counts["label"].tolist() == [2, 1, 1]
    noted = session.facets.apply(FilterState({"label": frozenset({NOTED})}))
    assert np.nonzero(noted.visible)[0].tolist() == [gamma]

    store.toggle(trial_key(session, alpha), "reward-hack")  # refresh after a change
    session.facets.add(label_facet(session, store))
    assert session.facets.apply(FilterState()).counts["label"].tolist() == [1, 1, 1]


def test_view_state_resumes_filters_and_the_selected_trial(three_trials):
    session = session_of(three_trials)
    store = LabelStore.open(writer=True)
    beta = trial_named(session, "beta__1")
    store.toggle(trial_key(session, beta), "bad-task")
    session.facets.add(label_facet(session, store))
    excluded = {"outcome": frozenset({"pass"})}
    filters = FilterState(
        {"label": frozenset({"bad-task"}), "model": frozenset({"m/x", "gone/model"})}, "bet", excluded
    )
    store.save_view_state(dataset_ids(session), encode_view(session, filters, beta))
    assert store.load_view_state(["somewhere/else"]) is None

    reopened = session_of(three_trials)
    reopened.facets.add(label_facet(reopened, LabelStore.open(writer=True)))
    state, trial = decode_view(reopened, LabelStore.open(writer=True).load_view_state(dataset_ids(reopened)))
    assert state == FilterState({"label": frozenset({"bad-task"}), "model": frozenset({"m/x"})}, "bet", excluded)
    assert trial == beta
    assert decode_view(reopened, "not json") == (FilterState(), None)


def test_concurrent_writers_lose_nothing(tmp_path):
    db = tmp_path / "labels.db"
    writer = """
        import sys
        from pathlib import Path
        from tracetui.store.labels import LabelStore, TrialKey
        store = LabelStore.open(Path(sys.argv[1]), writer=True)
        assert store.pop_warning() is None
        for i in range(40):
            key = TrialKey("ds", "rev", f"{sys.argv[2]}-{i}", True)
            store.toggle(key, "shared")
            store.set_note(key, sys.argv[2])
        store.toggle(TrialKey("ds", "rev", "common", True), sys.argv[2])
    """
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(writer), str(db), name]) for name in ("left", "right")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    store = LabelStore.open(db, writer=True)
    records = store.all_for_dataset("ds")
    assert len(records) == 81
    assert store.labels(TrialKey("ds", "rev", "common", True)) == {"left", "right"}
    assert all(
        store.labels(TrialKey("ds", "rev", f"{n}-{i}", True)) == {"shared"}
        for n in ("left", "right")
        for i in range(40)
    )


def test_a_corrupt_file_is_moved_aside_by_a_writer_only(tmp_path):
    db = tmp_path / "labels.db"
    junk = b"this is not an sqlite database" * 100
    db.write_bytes(junk)
    reader = LabelStore.open(db)
    warning = reader.pop_warning()
    assert "is damaged" in warning and "left as it is" in warning and "\n" not in warning
    assert not reader.on_disk and reader.all_for_dataset("ds") == []
    assert db.read_bytes() == junk and not list(tmp_path.glob("labels.db.*"))  # where it was, as it was

    store = LabelStore.open(db, writer=True)
    warning = store.pop_warning()
    [moved] = tmp_path.glob("labels.db.corrupt-*")
    assert f"was damaged (file is not a database): kept as {moved}" in warning and "\n" not in warning
    assert store.on_disk and store.pop_warning() is None  # said once
    assert moved.read_bytes() == junk
    assert store.toggle(TrialKey("ds", "r", "t", True), "x").saved
    store.close()
    assert LabelStore.open(db).labels(TrialKey("ds", "r", "t", True)) == {"x"}


def _sqlite_errors(tmp_path: Path) -> dict[str, sqlite3.Error]:
    """Real SQLite errors: a file that is no database, a damaged page, a database another connection holds."""
    errors: dict[str, sqlite3.Error] = {}
    (tmp_path / "junk.db").write_bytes(b"this is not an sqlite database" * 100)
    damaged = tmp_path / "damaged.db"
    conn = sqlite3.connect(damaged)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [("x" * 100,)] * 500)
    conn.commit()
    conn.close()
    with damaged.open("r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * 200)
    holder = sqlite3.connect(tmp_path / "held.db", isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    cases = {
        "notadb": ("junk.db", "PRAGMA quick_check"),
        "corrupt": ("damaged.db", "SELECT max(x) FROM t"),
        "busy": ("held.db", "SELECT * FROM t"),
    }
    try:
        for name, (file, sql) in cases.items():
            with pytest.raises(sqlite3.DatabaseError) as caught:
                sqlite3.connect(tmp_path / file, timeout=0).execute(sql).fetchall()
            errors[name] = caught.value
    finally:
        holder.close()
    return errors


def test_sqlite_error_codes_are_read_from_the_message_where_python_has_no_code(tmp_path):
    """Python 3.10's sqlite3 errors carry SQLite's message but not its code, which decides whether a
    corrupt file is moved aside: the code read from the message is the one 3.11+ reports."""
    expected = {"notadb": 26, "corrupt": 11, "busy": 5}
    for name, error in _sqlite_errors(tmp_path).items():
        assert error_code(error) == expected[name], name  # the code, or the message on 3.10
        assert error_code(sqlite3.DatabaseError(str(error))) == expected[name], name  # no code
        if sys.version_info >= (3, 11):
            assert error.sqlite_errorcode & 0xFF == expected[name], name
    assert error_code(sqlite3.OperationalError("no such table: t")) == 0


def test_an_unusable_data_dir_falls_back_to_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TRACETUI_DATA_DIR", str(blocker / "tracetui"))
    store = LabelStore.open(writer=True)
    assert not store.on_disk
    assert "memory" in store.pop_warning()
    key = TrialKey("ds", "r", "t", True)
    written = store.toggle(key, "x")
    assert written.on and not written.saved and store.labels(key) == {"x"} and store.held == 1
    store.save_view_state(["ds"], "{}")
    assert store.load_view_state(["ds"]) == "{}"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file permissions")
def test_a_read_only_data_dir_keeps_its_labels_readable(tmp_path):
    folder = tmp_path / "data"
    store = LabelStore.open(folder / "labels.db", writer=True)
    store.toggle(TrialKey("ds", "r", "t", True), "kept")
    store.close()
    os.chmod(folder / "labels.db", 0o444)
    os.chmod(folder, 0o555)
    try:
        store = LabelStore.open(folder / "labels.db", writer=True)
        assert not store.on_disk and "memory" in store.pop_warning()
        assert store.labels(TrialKey("ds", "r", "t", True)) == {"kept"}
        assert store.toggle(TrialKey("ds", "r", "u", True), "new") == Written(saved=False, on=True)
    finally:
        os.chmod(folder, 0o755)


def test_a_locked_database_falls_back_to_memory(tmp_path):
    db = tmp_path / "labels.db"
    LabelStore.open(db, writer=True).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # nobody else can even read
    try:
        locked = LabelStore.open(db, timeout=0.1, writer=True)
        assert not locked.on_disk and "memory" in locked.pop_warning()
        assert locked.toggle(TrialKey("ds", "r", "t", True), "x") == Written(saved=False, on=True)
    finally:
        holder.close()
    assert locked.retry() == Flushed(1, 0) and locked.on_disk
    assert LabelStore.open(db).labels(TrialKey("ds", "r", "t", True)) == {"x"}


def test_a_writer_that_never_lets_go_moves_the_store_to_memory(tmp_path):
    db = tmp_path / "labels.db"
    running = LabelStore.open(db, timeout=0.1, writer=True)
    running.toggle(TrialKey("ds", "r", "t", True), "before")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert running.toggle(TrialKey("ds", "r", "u", True), "later") == Written(saved=False, on=True)
        assert not running.on_disk and running.problem == "locked by another program" and running.held == 1
        assert running.labels(TrialKey("ds", "r", "t", True)) == {"before"}  # what it had is still there
        assert running.labels(TrialKey("ds", "r", "u", True)) == {"later"}
        assert running.retry() is None and running.held == 1  # still locked
    finally:
        holder.close()
    assert running.retry() == Flushed(1, 0) and running.on_disk and running.held == 0
    assert LabelStore.open(db).labels(TrialKey("ds", "r", "u", True)) == {"later"}


def test_config_defaults_custom_and_broken(isolated_dirs):
    path = config_path()
    assert path == isolated_dirs / "config" / "tracetui" / "config.toml"
    assert load_config() == (Config(DEFAULT_LABELS), None)
    assert Config().label_for_digit(1) == "reward-hack" and Config().label_for_digit(6) is None

    path.parent.mkdir(parents=True)
    path.write_text('labels = ["hack", "infra", "hack", "great"]\nunrelated = 1\n')
    config, warning = load_config()
    assert warning is None and config.labels == ("hack", "infra", "great")
    assert config.label_for_digit(3) == "great" and config.label_for_digit(0) is None

    many = Config(tuple(f"l{i}" for i in range(12)))
    assert many.label_for_digit(9) == "l8" and many.label_for_digit(10) is None

    for text in ('labels = ["unterminated', "labels = 3", 'labels = ["a;b"]', 'labels = [""]'):
        path.write_text(text)
        config, warning = load_config()
        assert config.labels == DEFAULT_LABELS
        assert warning and "\n" not in warning and "default labels" in warning
