"""The label store when the disk lets it down: a disk that refuses writes at start and mid-session (the
change is held, said not saved, then flushed merged with what others wrote), a real full tmpfs, kill -9
during writes, the file of unsaved changes and `tracetui labels import`, damaged stores and notes
written over a newer one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.cli import main
from tracetui.data.facets import FilterState
from tracetui.store.labels import Flushed, LabelStore, Written
from tracetui.store.records import MERGE_MARKER, LabelChange, NoteChange, TrialKey
from tracetui.store.unsaved import BadChangesFile, read_changes, write_changes

from .conftest import trial_rows, write_parquet
from .disk_faults import refused_writes, small_tmpfs


@pytest.fixture
def three_trials(tmp_path) -> Path:
    rows = trial_rows("alpha", "alpha__1", 2, "1.0") + trial_rows("beta", "beta__1", 3, "0.0")
    return write_parquet(tmp_path / "ds" / "train.parquet", rows + trial_rows("gamma", "gamma__1", 1, None))


KEY = TrialKey("org/ds", "rev", "regex-log__aBc", True, "regex-log", "m/x")
OTHER = TrialKey("org/ds", "rev", "fix-git__XyZ", True, "fix-git", "m/y")


def test_a_disk_that_refuses_writes_at_start_holds_changes_until_it_takes_them(tmp_path):
    db = tmp_path / "data" / "labels.db"
    with refused_writes():
        store = LabelStore.open(db, writer=True)
        assert not store.on_disk and "held in memory" in store.pop_warning()
        assert store.toggle(KEY, "reward-hack") == Written(saved=False, on=True)
        assert store.set_note(KEY, "deletes the tests", base="") == Written(saved=False)
        assert store.labels(KEY) == {"reward-hack"} and store.note(KEY) == "deletes the tests"  # reads see them
        assert store.held == 2 and store.problem
        assert store.retry() is None and store.held == 2  # still refused
    assert LabelStore.open(db).all_for_dataset("org/ds") == []  # nothing reached the file: it said so
    assert store.retry() == Flushed(2, 0)
    assert store.on_disk and store.held == 0 and store.problem is None
    reopened = LabelStore.open(db)
    assert reopened.labels(KEY) == {"reward-hack"} and reopened.note(KEY) == "deletes the tests"


def test_writes_failing_mid_session_are_held_and_flushed_over_what_others_wrote(tmp_path):
    db = tmp_path / "labels.db"
    mine = LabelStore.open(db, writer=True)
    assert mine.toggle(KEY, "bad-task").saved
    with refused_writes():
        assert mine.toggle(KEY, "reward-hack") == Written(saved=False, on=True)
        assert mine.toggle(KEY, "bad-task") == Written(saved=False, on=False)  # the last word per label
        assert mine.set_note(KEY, "my note", base="") == Written(saved=False)
        assert mine.toggle(OTHER, "env-issue") == Written(saved=False, on=True)
        assert mine.held == 4 and not mine.on_disk
        mine.save_view_state(["org/ds"], '{"text": "regex"}')  # waits too, uncounted
        assert mine.held == 4
    # another instance writes meanwhile, to the same trial
    theirs = LabelStore.open(db, writer=True)
    assert theirs.toggle(KEY, "good-example").saved
    assert theirs.set_note(KEY, "their note", base="").saved

    assert mine.retry() == Flushed(4, 1)
    after = LabelStore.open(db)
    assert after.labels(KEY) == {"reward-hack", "good-example"}  # theirs kept, bad-task off as asked
    assert after.labels(OTHER) == {"env-issue"}
    note = after.note(KEY)
    assert note.startswith("my note\n\n--- a newer note saved elsewhere (") and note.endswith("kept ---\ntheir note")
    assert after.load_view_state(["org/ds"]) == '{"text": "regex"}'


def test_a_note_written_over_a_newer_one_keeps_both(tmp_path):
    db = tmp_path / "labels.db"
    a, b = LabelStore.open(db, writer=True), LabelStore.open(db, writer=True)
    base = b.note(KEY)  # both editors open on the same (empty) note
    assert a.set_note(KEY, "A-note", base=a.note(KEY)) == Written(saved=True)
    written = b.set_note(KEY, "B-note", base=base)
    assert written == Written(saved=True, merged=True)
    note = LabelStore.open(db).note(KEY)
    assert note.startswith("B-note\n\n") and note.endswith("\nA-note")
    assert MERGE_MARKER.split("(")[0] in note
    # written over the note it read: no merge; the same text again: no merge
    assert b.set_note(KEY, "B only", base=note) == Written(saved=True)
    assert a.set_note(KEY, "B only", base="stale") == Written(saved=True)
    # removing a note someone changed meanwhile keeps theirs
    assert a.set_note(KEY, "", base="B-note") == Written(saved=True, merged=True)
    assert b.note(KEY) == "B only"


def test_a_real_full_disk(tmp_path):
    """A 256 KB tmpfs, filled to the last byte: the store holds, says why, and flushes once there is room."""
    script = """
        import json, os
        from pathlib import Path
        from tracetui.store.labels import LabelStore
        from tracetui.store.records import TrialKey

        root = Path(os.environ["TRACETUI_TMPFS"])
        def fill():
            with open(root / "filler", "ab", buffering=0) as f:
                for size in (65536, 4096, 1):
                    try:
                        while True:
                            f.write(b"x" * size)
                    except OSError:
                        pass
        key = TrialKey("ds", "rev", "t", True)
        seen = {}
        fill()
        store = LabelStore.open(root / "data" / "labels.db", writer=True)
        seen["start"] = [store.on_disk, store.problem, store.toggle(key, "at-start").saved]
        os.remove(root / "filler")
        seen["room"] = [repr(store.retry()), store.on_disk]
        fill()
        writes = [store.toggle(key, f"mid-{i}").saved for i in range(8)]
        seen["mid"] = [writes, store.problem, store.held, repr(store.retry())]
        os.remove(root / "filler")
        seen["again"] = [repr(store.retry()), store.on_disk]
        store.close()
        seen["labels"] = sorted(LabelStore.open(root / "data" / "labels.db").labels(key))
        print(json.dumps(seen))
    """
    done = small_tmpfs(tmp_path / "disk", script)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["start"] == [False, "disk full", False]
    assert seen["room"] == ["Flushed(changes=1, merged=0)", True]
    writes, problem, held, retried = seen["mid"]
    assert False in writes and problem == "disk full" and retried == "None"
    assert held == writes.count(False) == len(writes) - writes.index(False)  # once refused, held until flushed
    assert seen["again"] == [f"Flushed(changes={held}, merged=0)", True]
    assert seen["labels"] == sorted(["at-start", *(f"mid-{i}" for i in range(8))])


# --- kill -9 during writes ------------------------------------------------------------------------

WRITERS = """
    import json, os, sys
    from pathlib import Path
    from tracetui.store.labels import LabelStore
    from tracetui.store.records import TrialKey

    def write(db, dataset, ops, report):
        store = LabelStore.open(Path(db), writer=True)
        out = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.write(out, b"ready\\n")
        step = 0
        while True:  # until killed: the ops over and over
            trial, label, note = ops[step % len(ops)]
            key = TrialKey(dataset, "rev", f"t{trial}", True)
            written = store.toggle(key, label) if note is None else store.set_note(key, note, store.note(key))
            if written.saved:  # what the app would report as saved
                os.write(out, f"{step}\\n".encode())
            step += 1

    for line in sys.stdin:  # one writer per line, forked from here: no interpreter start-up per round
        db, dataset, ops, report = json.loads(line)
        pid = os.fork()
        if pid == 0:
            write(db, dataset, ops, report)
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
"""
OPS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", "c"]), st.none() | st.sampled_from(["n1", "n2", ""])),
    min_size=1,
    max_size=12,
)


@pytest.fixture(scope="module")
def writers(tmp_path_factory):
    """A process that forks one label writer per request (the store's own code path) and reaps it, and
    the store they share (each round writes a dataset of its own)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITERS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    yield proc, tmp_path_factory.mktemp("killed") / "labels.db"
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def _model(ops: list, steps: int) -> dict[str, tuple[list[str], str]]:
    """What the store holds after the first `steps` ops (cycling), trial → (labels, note)."""
    state: dict[str, tuple[set[str], str]] = {}
    for step in range(steps):
        trial, label, note = ops[step % len(ops)]
        labels, text = state.get(f"t{trial}", (set(), ""))
        state[f"t{trial}"] = (labels ^ {label}, text) if note is None else (labels, note)
    return {t: (sorted(labels), text) for t, (labels, text) in state.items() if labels or text}


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(ops=OPS, delay=st.floats(0, 0.03))
def test_kill_9_during_writes_loses_nothing_reported_saved(writers, ops, delay):
    proc, db = writers
    dataset = f"ds-{time.monotonic_ns()}"
    report = db.with_name(f"{dataset}.saved")
    proc.stdin.write(json.dumps([str(db), dataset, ops, str(report)]) + "\n")
    proc.stdin.flush()
    pid = int(proc.stdout.readline())
    try:
        for _ in range(500):
            if report.exists() and report.read_text().startswith("ready"):
                break
            time.sleep(0.005)
        time.sleep(delay)  # somewhere in the middle of a write, or between two
    finally:
        os.kill(pid, signal.SIGKILL)
        assert proc.stdout.readline() == "reaped\n"
    reported = report.read_text().split()[1:]
    saved = len(reported)  # steps reported saved: 0 .. saved-1, in order
    assert reported == [str(step) for step in range(saved)]
    stored = {r.key.trial: (sorted(r.labels), r.note) for r in LabelStore.open(db).all_for_dataset(dataset)}
    # every step reported saved is there; the one being written when the kill came may be too
    assert stored in (_model(ops, saved), _model(ops, saved + 1))


# --- the file of unsaved changes, `tracetui labels import` ----------------------------------------


def test_the_unsaved_file_round_trips_and_refuses_what_it_did_not_write(tmp_path):
    changes = [LabelChange(KEY, "reward-hack", True), LabelChange(OTHER, "x", False), NoteChange(KEY, "n\né", "old")]
    changes.append(NoteChange(OTHER, "any", None))
    path = tmp_path / "unsaved.json"
    write_changes(path, changes)
    assert read_changes(path) == changes
    assert [c.key.task for c in read_changes(path)] == ["regex-log", "fix-git", "regex-log", "fix-git"]
    try:
        write_changes(path, changes)
        raise AssertionError("overwrote a file")
    except FileExistsError:
        pass
    data = json.loads(path.read_text())
    for broken, reason in (
        ("not json", "not JSON"),
        ('{"format": "other"}', "not a file of unsaved labels"),
        (json.dumps({**data, "version": 9}), "version 9"),
        (json.dumps({**data, "changes": [{"label": "x"}]}), "change 1: not a trial's key"),
        (json.dumps({**data, "changes": [{**data["changes"][0], "on": "yes"}]}), "change 1: neither"),
    ):
        (tmp_path / "broken.json").write_text(broken)
        try:
            read_changes(tmp_path / "broken.json")
            raise AssertionError(broken)
        except BadChangesFile as exc:
            assert reason in str(exc) and "\n" not in str(exc)


def test_labels_import_restores_the_changes_merged_and_twice_is_once(tmp_path, isolated_dirs, capsys):
    store = LabelStore.open(writer=True)
    assert store.toggle(KEY, "good-example").saved  # already there: stays
    path = tmp_path / "unsaved.json"
    write_changes(path, [LabelChange(KEY, "reward-hack", True), NoteChange(KEY, "imported note", "")])
    assert main(["labels", "import", str(path)]) == 0
    assert f"imported 2 changes from {path} into {store.path}" in capsys.readouterr().err
    assert store.labels(KEY) == {"good-example", "reward-hack"} and store.note(KEY) == "imported note"
    assert main(["labels", "import", str(path)]) == 0  # again: nothing changes, nothing doubles
    assert store.labels(KEY) == {"good-example", "reward-hack"} and store.note(KEY) == "imported note"

    (tmp_path / "bad.json").write_text("{}")
    capsys.readouterr()
    assert main(["labels", "import", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tracetui: {tmp_path / 'bad.json'}: not a file of unsaved labels") and err.count("\n") == 1
    assert main(["labels", "import", str(tmp_path / "missing.json")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_labels_import_on_a_disk_that_refuses_says_nothing_was_imported(tmp_path, isolated_dirs, capsys):
    path = tmp_path / "unsaved.json"
    write_changes(path, [LabelChange(KEY, "reward-hack", True)])
    LabelStore.open(writer=True).close()
    with refused_writes():
        code = main(["labels", "import", str(path)])
    assert code == 2
    assert "nothing imported" in capsys.readouterr().err
    assert LabelStore.open().labels(KEY) == frozenset()


# --- a damaged store ------------------------------------------------------------------------------


def test_tracetui_labels_reports_a_damaged_store_and_leaves_it(tmp_path, isolated_dirs, capsys, three_trials):
    store = LabelStore.open(writer=True)
    store.close()
    db = store.path
    junk = b"not a database at all" * 300
    db.write_bytes(junk)
    assert main(["labels", str(three_trials)]) == 2
    err = capsys.readouterr().err
    assert f"tracetui: {db} is damaged (file is not a database): left as it is" in err and err.count("\n") == 1
    assert db.read_bytes() == junk and not list(db.parent.glob("labels.db.*"))
    # a filter by label reads it the same way, and leaves it too
    assert main(["stats", str(three_trials), "--filter", "label=reward-hack"]) == 0
    assert db.read_bytes() == junk and not list(db.parent.glob("labels.db.*"))


def test_filter_state_json_keeps_every_field():
    """The saved view saves every field of FilterState: one not in `to_json` fails here."""
    from dataclasses import fields

    from tracetui.data.facets import SingleFacet

    facets = {name: SingleFacet(name, name, ["a", "b"], None) for name in ("model", "outcome", "task")}
    state = FilterState({"model": frozenset({"a"})}, "regex", {"outcome": frozenset({"b"})})
    assert all(getattr(state, f.name) != getattr(FilterState(), f.name) for f in fields(FilterState))
    assert FilterState.from_json(json.loads(json.dumps(state.to_json())), facets) == state
    gone = {**state.to_json(), "filters": {"model": ["a", "zzz"], "nope": ["a"]}}
    assert FilterState.from_json(gone, facets) == FilterState({"model": frozenset({"a"})}, "regex", state.excluded)
    assert FilterState.from_json("junk", facets) == FilterState()
